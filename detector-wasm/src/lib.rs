//! Browser bindings over `semtrace-core`: conversions only, no decoding logic of its own.
//!
//! The page's Web Worker loads one [`Detector`] (model + tokenizer, once) and runs
//! [`Detector::detect`] per (bundle, review); the report is the same structure
//! `semtrace detect --json` prints. Every failure is a `JsError` with the core's message.

use std::cell::RefCell;

use semtrace_core::bundle::Bundle;
use semtrace_core::detect::{check_model, detect, detect_fast, review_text, FastOptions};
use semtrace_core::nli::{ModelSpec, TractNli};
use serde::{Deserialize, Serialize};
use wasm_bindgen::prelude::*;

fn js_err(e: impl std::fmt::Display) -> JsError {
    JsError::new(&e.to_string())
}

thread_local! {
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Panics in wasm are traps; keep the message so the worker can report what went wrong
/// instead of "unreachable executed".
#[wasm_bindgen(start)]
pub fn start() {
    std::panic::set_hook(Box::new(|info| {
        let msg = info.to_string();
        web_sys::console::error_1(&JsValue::from_str(&msg));
        LAST_PANIC.with(|p| *p.borrow_mut() = Some(msg));
    }));
}

/// The message of the last panic (if any), taken once.
#[wasm_bindgen(js_name = takePanicMessage)]
pub fn take_panic_message() -> Option<String> {
    LAST_PANIC.with(|p| p.borrow_mut().take())
}

/// Version of the detector (the workspace version).
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}

/// Lowercase hex SHA-256, the way bundles record model hashes (works outside secure contexts,
/// unlike `crypto.subtle`).
#[wasm_bindgen(js_name = sha256Hex)]
pub fn sha256_hex(bytes: &[u8]) -> String {
    semtrace_core::sha256_hex(bytes)
}

/// What the page shows about a bundle before any detection.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct BundleSummary {
    title: String,
    format_version: String,
    k: usize,
    model_name: String,
    model_sha256: String,
    slots: Vec<String>,
    window_sentences: usize,
    max_windows: usize,
    alpha: f64,
}

/// Validate a bundle (the same checks as the CLI) and summarise it; throws with the reason if
/// the bundle is malformed.
#[wasm_bindgen(js_name = inspectBundle)]
pub fn inspect_bundle(bundle_json: &str) -> Result<JsValue, JsError> {
    let b = Bundle::from_json(bundle_json).map_err(js_err)?;
    let summary = BundleSummary {
        title: b.document.title.clone(),
        format_version: b.format_version.clone(),
        k: b.k,
        model_name: b.model.name.clone(),
        model_sha256: b.model.sha256.clone(),
        slots: b.positions.iter().map(|p| p.slot.clone()).collect(),
        window_sentences: b.decoding.window_sentences,
        max_windows: b.decoding.max_windows,
        alpha: b.decoding.alpha,
    };
    serde_wasm_bindgen::to_value(&summary).map_err(js_err)
}

/// Per-call options, from a plain JS object (all optional).
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
struct DetectOptions {
    /// "exhaustive" (default, as the CLI) or "fast".
    decoder: Option<String>,
    allow_model_mismatch: bool,
    /// Recorded as the report's `review` field (e.g. a file name).
    review_name: Option<String>,
}

/// A loaded model: load once, detect many.
#[wasm_bindgen]
pub struct Detector {
    engine: TractNli,
}

#[wasm_bindgen]
impl Detector {
    /// `config_json` is the model's HuggingFace-style config (its `id2label` gives the
    /// entailment index).
    #[wasm_bindgen(constructor)]
    pub fn new(
        model_name: &str,
        onnx: &[u8],
        tokenizer_json: &[u8],
        config_json: &str,
    ) -> Result<Detector, JsError> {
        let spec = ModelSpec::from_hf_config(model_name, config_json).map_err(js_err)?;
        let engine = TractNli::load(onnx, tokenizer_json, spec).map_err(js_err)?;
        Ok(Detector { engine })
    }

    /// SHA-256 of the loaded ONNX graph (what bundles record).
    #[wasm_bindgen(getter)]
    pub fn sha256(&self) -> String {
        self.engine.sha256().to_string()
    }

    #[wasm_bindgen(getter, js_name = modelName)]
    pub fn model_name(&self) -> String {
        self.engine.spec().name.clone()
    }

    /// Detect one review (raw bytes, UTF-8) against a bundle; returns the report object of
    /// `semtrace detect --json`. `progress(done, total)` is called after each batch of pairs.
    pub fn detect(
        &self,
        bundle_json: &str,
        review: &[u8],
        options: JsValue,
        progress: Option<js_sys::Function>,
    ) -> Result<JsValue, JsError> {
        let opts: DetectOptions = if options.is_undefined() || options.is_null() {
            DetectOptions::default()
        } else {
            serde_wasm_bindgen::from_value(options)
                .map_err(|e| js_err(format!("detect options: {e}")))?
        };
        let bundle = Bundle::from_json(bundle_json).map_err(js_err)?;
        let text = review_text(review).map_err(js_err)?;
        let check = check_model(
            &bundle,
            &self.engine.spec().name,
            self.engine.sha256(),
            opts.allow_model_mismatch,
        )
        .map_err(js_err)?;
        let mut tick = |done: usize, total: usize| {
            if let Some(f) = &progress {
                // A throwing callback must not abort detection; its error is dropped.
                let _ = f.call2(
                    &JsValue::NULL,
                    &JsValue::from(done as u32),
                    &JsValue::from(total as u32),
                );
            }
        };
        let mut report = match opts.decoder.as_deref().unwrap_or("exhaustive") {
            "exhaustive" => detect(text, &bundle, &self.engine, check, &mut tick),
            "fast" => detect_fast(
                text,
                &bundle,
                &self.engine,
                check,
                FastOptions::default(),
                &mut tick,
            ),
            other => {
                return Err(js_err(format!(
                    "unknown decoder {other:?}: use \"exhaustive\" or \"fast\""
                )))
            }
        }
        .map_err(js_err)?;
        report.review = opts.review_name;
        // Plain objects (not Maps) so the page and JSON.stringify see the CLI's JSON shape.
        let ser = serde_wasm_bindgen::Serializer::json_compatible();
        report.serialize(&ser).map_err(js_err)
    }
}
