//! The wasm shim itself, compiled for wasm32 and run in Node by wasm-bindgen-test (the browser test
//! drives it through the page; this checks the bindings alone): the embedded default model loads,
//! a detection returns the report object whose fields are exactly the `Report` interface of the
//! TypeScript section, the fast and exhaustive decoders agree on the sample review, and bad inputs
//! come back as errors with the core's message, not traps.
//!
//! `scripts/test.sh` runs it: `cargo test -p semtrace-detector-wasm --target wasm32-unknown-unknown
//! --release --test node` with wasm-bindgen-test-runner as the target runner (release, so the
//! site build's compiled dependencies are reused).
#![cfg(target_arch = "wasm32")]

use std::collections::BTreeSet;

use semtrace_detector_wasm::{adjust_p_values, inspect_bundle, sha256_hex, Detector};
use wasm_bindgen::{JsError, JsValue};
use wasm_bindgen_test::wasm_bindgen_test;

const BUNDLE: &str = include_str!("../../tests/fixtures/sample-bundle.json");
const REVIEW: &str = include_str!("../../tests/fixtures/sample-review.md");
const ONNX: &[u8] = include_bytes!("../../models/semtrace-nli-minilm/model.onnx");
const TOKENIZER: &[u8] = include_bytes!("../../models/semtrace-nli-minilm/tokenizer.json");
const CONFIG: &str = include_str!("../../models/semtrace-nli-minilm/config.json");
/// The module's source: its TypeScript section is a `typescript_custom_section` const, which the
/// macro moves into the wasm custom section instead of keeping it as a Rust item.
const LIB: &str = include_str!("../src/lib.rs");

fn ts_types() -> &'static str {
    let open = "const TS_TYPES: &str = r#\"";
    let start = LIB.find(open).expect("the TypeScript section") + open.len();
    &LIB[start..start + LIB[start..].find("\"#;").unwrap()]
}

fn json(v: JsValue) -> serde_json::Value {
    serde_wasm_bindgen::from_value(v).expect("a plain object")
}

fn message(e: JsError) -> String {
    let v = JsValue::from(e);
    js_sys::Reflect::get(&v, &JsValue::from_str("message"))
        .unwrap()
        .as_string()
        .unwrap()
}

/// The field names of `export interface NAME { ... }` in the TypeScript section.
fn interface_fields(name: &str) -> BTreeSet<String> {
    let ts = ts_types();
    let start = ts
        .find(&format!("export interface {name} {{"))
        .unwrap_or_else(|| panic!("no interface {name}"));
    let body = &ts[start..];
    let body = &body[body.find('{').unwrap() + 1..body.find('}').unwrap()];
    body.split(';')
        .filter_map(|f| f.split(':').next())
        .map(|f| f.trim().trim_end_matches('?').to_string())
        .filter(|f| !f.is_empty())
        .collect()
}

#[wasm_bindgen_test]
fn sha256_matches_the_fips_vector() {
    assert_eq!(
        sha256_hex(b"abc"),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
}

#[wasm_bindgen_test]
fn bundle_summary_has_the_declared_fields() {
    let s = json(inspect_bundle(BUNDLE).unwrap());
    let keys: BTreeSet<String> = s.as_object().unwrap().keys().cloned().collect();
    assert_eq!(keys, interface_fields("BundleSummary"));
    assert_eq!(s["k"], 12);
    assert_eq!(s["slots"].as_array().unwrap().len(), 12);
    assert_eq!(s["windowSentences"], 2);
}

#[wasm_bindgen_test]
fn bad_inputs_are_errors_with_the_core_message() {
    let e = inspect_bundle("{\"format\": \"semtrace-bundle\"")
        .err()
        .unwrap();
    assert!(message(e).contains("bundle"), "not a bundle error");
    let e = adjust_p_values(vec![0.5, 1.5]).err().unwrap();
    assert_eq!(message(e), "not a p-value: 1.5");
    let e = Detector::new("semtrace-nli-minilm", b"not a model", TOKENIZER, CONFIG)
        .err()
        .unwrap();
    assert!(!message(e).is_empty());
}

#[wasm_bindgen_test]
fn holm_and_bh_adjust_a_known_vector() {
    let a = json(adjust_p_values(vec![0.01, 0.04, 0.03]).unwrap());
    let holm: Vec<f64> = serde_json::from_value(a["holm"].clone()).unwrap();
    let bh: Vec<f64> = serde_json::from_value(a["bh"].clone()).unwrap();
    // Holm: 0.01·3, max(0.03·2, 0.03), max(0.04·1, 0.06); BH: min over ranks of p·m/rank.
    for (got, want) in holm.iter().zip([0.03, 0.06, 0.06]) {
        assert!((got - want).abs() < 1e-12, "holm {holm:?}");
    }
    for (got, want) in bh.iter().zip([0.03, 0.04, 0.04]) {
        assert!((got - want).abs() < 1e-12, "bh {bh:?}");
    }
    assert_eq!((holm.len(), bh.len()), (3, 3));
}

#[wasm_bindgen_test]
fn the_default_model_detects_the_sample_review() {
    let d = Detector::new("semtrace-nli-minilm", ONNX, TOKENIZER, CONFIG).unwrap();
    let bundle: serde_json::Value = serde_json::from_str(BUNDLE).unwrap();
    assert_eq!(d.sha256(), bundle["model"]["sha256"].as_str().unwrap());
    // Plain objects, as the page passes them (serde_wasm_bindgen would make a Map by default).
    let opts = |decoder: &str| {
        use serde::Serialize;
        serde_json::json!({ "decoder": decoder, "reviewName": "r.md" })
            .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
            .unwrap()
    };
    let full = json(
        d.detect(BUNDLE, REVIEW.as_bytes(), opts("exhaustive"), None)
            .unwrap(),
    );
    let keys: BTreeSet<String> = full.as_object().unwrap().keys().cloned().collect();
    let declared = interface_fields("Report");
    // Optional fields (recipients, recipient, safeguard) are absent when unused; nothing
    // undeclared is present.
    assert!(
        keys.is_subset(&declared),
        "undeclared: {:?}",
        keys.difference(&declared)
    );
    for required in [
        "verdict",
        "p_value",
        "positions",
        "windows",
        "model",
        "decoder",
    ] {
        assert!(keys.contains(required), "{required}");
    }
    assert_eq!(full["review"], "r.md");
    assert_eq!(full["decoder"], "exhaustive");
    let windows = full["windows"].as_array().unwrap().len() as u64;
    assert!(windows > 0);
    assert_eq!(full["pairs_scored"].as_u64().unwrap(), 24 * windows);
    let positions = full["positions"].as_array().unwrap();
    assert_eq!(positions.len(), 12);
    assert_eq!(
        interface_fields("PositionReport"),
        positions[0].as_object().unwrap().keys().cloned().collect()
    );
    let fast = json(
        d.detect(BUNDLE, REVIEW.as_bytes(), opts("fast"), None)
            .unwrap(),
    );
    let decisions = |r: &serde_json::Value| -> Vec<String> {
        r["positions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["decision"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(decisions(&fast), decisions(&full));
    assert_eq!(fast["verdict"], full["verdict"]);
    // A binary file is an error with the core's message, not a trap.
    let e = d
        .detect(BUNDLE, b"review\0text", opts("exhaustive"), None)
        .err()
        .unwrap();
    assert!(message(e).contains("NUL bytes"), "{}", "message");
    // An unknown decoder name is refused by the core's enum, which names the accepted values.
    let e = d
        .detect(BUNDLE, REVIEW.as_bytes(), opts("slow"), None)
        .err()
        .unwrap();
    assert_eq!(message(e), "unknown decoder \"slow\" (exhaustive or fast)");
}
