//! Browser bindings over `semtrace-core`: conversions only, no decoding logic of its own.
//!
//! The page's Web Worker loads one [`Detector`] (model + tokenizer, once) and runs
//! [`Detector::detect`] per (bundle, review); the report is the same structure
//! `semtrace detect --json` prints. With several workers, the lead one drives a
//! [`DetectionPlan`] (the core's step-wise `detect::DetectionPlan`, wrapped) and shares each
//! round's pairs with the others, which score them with [`Detector::score_pairs`]. Every failure is a `JsError` with the
//! core's message.

use std::cell::RefCell;

use semtrace_core::bundle::Bundle;
use semtrace_core::detect::{self, check_model, review_text, FastOptions};
use semtrace_core::nli::{ModelSpec, NliPair, NliScorer};
use semtrace_core::report::{Decoder, ModelCheck};
use semtrace_infer::TractNli;
use serde::{Deserialize, Serialize};
use wasm_bindgen::prelude::*;

/// The shapes of the plain objects this module takes and returns, for TypeScript users and for the
/// JSDoc of the generated glue (the functions below name them with `unchecked_*_type`). `Report`
/// is `semtrace_core::report::Report` as `semtrace detect --json` prints it; a test in
/// `tests/node.mjs` checks a real report against these field lists.
#[wasm_bindgen(typescript_custom_section)]
const TS_TYPES: &str = r#"
export type Verdict = "exposed" | "not_exposed" | "ineligible";
export type Erasure = "both" | "absent" | "ambiguous";
export interface PositionReport {
  index: number; slot: string; assigned: 0 | 1; s0: number; s1: number;
  decision: "0" | "1" | "?"; erasure: Erasure | null; matches: boolean | null;
  evidence_window: number | null; best_windows: [number | null, number | null];
}
export interface ReviewWindow {
  index: number; text: string; start: number; end: number; first_sentence: number;
}
export interface ModelCheck {
  name: string; sha256: string; bundle_sha256: string; hash_matches: boolean;
  mismatch_overridden: boolean;
}
export interface RecipientResult { digest: string; matched: number; p_value: number; holm_p: number; }
export interface Report {
  review?: string; verdict: Verdict; score: number; observed: number; matched: number;
  mismatched: number; eligible: boolean; p_value: number; p_value_exact: boolean;
  min_p_value: number; matches_needed: number | null; alpha: number; k: number;
  positions: PositionReport[]; windows_total: number; windows: ReviewWindow[];
  pairs_scored: number; decoder: "exhaustive" | "fast"; safeguard?: string; model: ModelCheck;
  recipients?: RecipientResult[]; recipient?: string;
}
export interface BundleSummary {
  title: string; formatVersion: string; k: number; modelName: string; modelSha256: string;
  slots: string[]; windowSentences: number; maxWindows: number; alpha: number;
}
export interface DetectOptions {
  decoder?: "exhaustive" | "fast"; safeguard?: string; allowModelMismatch?: boolean;
  reviewName?: string;
}
export interface AdjustedPValues { holm: number[]; bh: number[]; }
export interface PendingPairs { premises: string[]; hypotheses: string[]; }
"#;

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

/// A venue's corrections over many reviews' p-values, the CLI's `detect --manifest` figures:
/// `{holm, bh}`, each in the input order (Holm's adjusted p-values for the family-wise error
/// rate, Benjamini–Hochberg q-values for the false discovery rate).
#[derive(Serialize)]
struct Adjusted {
    holm: Vec<f64>,
    bh: Vec<f64>,
}

#[wasm_bindgen(js_name = adjustPValues, unchecked_return_type = "AdjustedPValues")]
pub fn adjust_p_values(p: Vec<f64>) -> Result<JsValue, JsError> {
    if let Some(x) = p.iter().find(|x| !(0.0..=1.0).contains(*x)) {
        return Err(js_err(format!("not a p-value: {x}")));
    }
    let a = Adjusted {
        holm: semtrace_core::venue::holm(&p),
        bh: semtrace_core::venue::benjamini_hochberg(&p),
    };
    serde_wasm_bindgen::to_value(&a).map_err(js_err)
}

/// The venue summary's SVG histogram of p-values (the CLI's `p-values.svg`).
#[wasm_bindgen(js_name = pValueHistogramSvg)]
pub fn p_value_histogram_svg(p: Vec<f64>, bins: usize) -> String {
    semtrace_core::venue::p_value_histogram_svg(&p, bins)
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
#[wasm_bindgen(js_name = inspectBundle, unchecked_return_type = "BundleSummary")]
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
    /// Decoder safeguard beyond the paper, as the CLI's --safeguard ("none", "top-2+exclusive", …).
    safeguard: Option<String>,
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

    /// Pairs per engine call; a caller that shares pairs between workers splits them on these
    /// boundaries so that every batch, and so every score, is what one worker would compute.
    #[wasm_bindgen(getter, js_name = chunkSize)]
    pub fn chunk_size(&self) -> usize {
        self.engine.chunk_size()
    }

    /// P(entailment) of each (premise, hypothesis) pair, in order, scored in batches of
    /// `chunkSize`; `progress(done, total)` after each batch.
    #[wasm_bindgen(js_name = scorePairs)]
    pub fn score_pairs(
        &self,
        premises: Vec<String>,
        hypotheses: Vec<String>,
        progress: Option<js_sys::Function>,
    ) -> Result<Vec<f32>, JsError> {
        if premises.len() != hypotheses.len() {
            return Err(js_err(format!(
                "{} premises but {} hypotheses",
                premises.len(),
                hypotheses.len()
            )));
        }
        let pairs: Vec<NliPair<'_>> = premises
            .iter()
            .zip(&hypotheses)
            .map(|(p, h)| NliPair {
                premise: p,
                hypothesis: h,
            })
            .collect();
        let mut out = Vec::with_capacity(pairs.len());
        for chunk in pairs.chunks(self.engine.chunk_size().max(1)) {
            out.extend(self.engine.entailment(chunk).map_err(js_err)?);
            call_progress(&progress, out.len(), pairs.len());
        }
        Ok(out)
    }

    /// Start a step-wise detection of one review against a bundle (same checks as `detect`).
    pub fn plan(
        &self,
        bundle_json: &str,
        review: &[u8],
        #[wasm_bindgen(unchecked_param_type = "DetectOptions | undefined")] options: JsValue,
    ) -> Result<DetectionPlan, JsError> {
        let opts = detect_options(options)?;
        let bundle = Bundle::from_json(bundle_json).map_err(js_err)?;
        let text = review_text(review).map_err(js_err)?;
        let check = check_model(
            &bundle,
            &self.engine.spec().name,
            self.engine.sha256(),
            opts.allow_model_mismatch,
        )
        .map_err(js_err)?;
        // JS hands in strings; the core's enums parse them (and name the accepted values).
        let decoder: Decoder = match opts.decoder.as_deref() {
            None => Decoder::default(),
            Some(name) => name.parse().map_err(js_err)?,
        };
        let core_plan = match decoder {
            Decoder::Exhaustive => detect::DetectionPlan::exhaustive(text, bundle),
            Decoder::Fast => detect::DetectionPlan::fast(text, bundle, FastOptions::default()),
        };
        let safeguard: semtrace_core::safeguard::Safeguard = opts
            .safeguard
            .as_deref()
            .unwrap_or("none")
            .parse()
            .map_err(|e: String| JsError::new(&e))?;
        Ok(DetectionPlan {
            plan: Some(core_plan.with_safeguard(safeguard)),
            check,
            review_name: opts.review_name,
        })
    }

    /// Detect one review (raw bytes, UTF-8) against a bundle; returns the report object of
    /// `semtrace detect --json`. `progress(done, total)` is called after each batch of pairs.
    #[wasm_bindgen(unchecked_return_type = "Report")]
    pub fn detect(
        &self,
        bundle_json: &str,
        review: &[u8],
        #[wasm_bindgen(unchecked_param_type = "DetectOptions | undefined")] options: JsValue,
        progress: Option<js_sys::Function>,
    ) -> Result<JsValue, JsError> {
        let mut plan = self.plan(bundle_json, review, options)?;
        let core_plan = plan
            .plan
            .take()
            .ok_or_else(|| js_err("internal error: a new plan without its core plan"))?;
        let mut tick = |done: usize, total: usize| call_progress(&progress, done, total);
        let mut report = core_plan
            .run(&self.engine, plan.check.clone(), &mut tick)
            .map_err(js_err)?;
        report.review = plan.review_name.take();
        report_value(&report)
    }
}

/// One review's detection in rounds: `pending()` gives the pairs to score (split them between
/// workers on `chunkSize` boundaries), `supply()` takes their scores in the same order, and
/// when `pending()` is empty `report()` gives what `Detector.detect` would have returned.
#[wasm_bindgen]
pub struct DetectionPlan {
    /// The core's plan this JS class wraps (None once `report()` took it).
    plan: Option<detect::DetectionPlan>,
    check: ModelCheck,
    review_name: Option<String>,
}

/// The pairs of one round, as two parallel arrays (cheap to post to other workers).
#[derive(Serialize)]
struct PendingPairs {
    premises: Vec<String>,
    hypotheses: Vec<String>,
}

#[wasm_bindgen]
impl DetectionPlan {
    /// `{premises: string[], hypotheses: string[]}`: empty when the detection is complete.
    #[wasm_bindgen(unchecked_return_type = "PendingPairs")]
    pub fn pending(&self) -> Result<JsValue, JsError> {
        let d = self.core_plan()?;
        let pairs = d.pending();
        let p = PendingPairs {
            premises: pairs.iter().map(|p| p.premise.to_string()).collect(),
            hypotheses: pairs.iter().map(|p| p.hypothesis.to_string()).collect(),
        };
        serde_wasm_bindgen::to_value(&p).map_err(js_err)
    }

    /// P(entailment) for every pending pair, in `pending()`'s order.
    pub fn supply(&mut self, probs: &[f32]) -> Result<(), JsError> {
        self.plan
            .as_mut()
            .ok_or_else(|| js_err("this detection plan already gave its report"))?
            .supply(probs)
            .map_err(js_err)
    }

    /// The verdict that the pairs not scored yet can no longer change, or `undefined` while they
    /// still can: the page can show it before the remaining rounds settle the evidence. Only for
    /// the paper's rule and a bundle with one codeword (else always `undefined`).
    #[wasm_bindgen(js_name = settledVerdict, unchecked_return_type = "Verdict | undefined")]
    pub fn settled_verdict(&self) -> Result<JsValue, JsError> {
        let v = self.core_plan()?.settled_verdict();
        serde_wasm_bindgen::to_value(&v).map_err(js_err)
    }

    /// The report (as `Detector.detect` returns it); the plan cannot be used afterwards.
    #[wasm_bindgen(unchecked_return_type = "Report")]
    pub fn report(&mut self) -> Result<JsValue, JsError> {
        let d = self
            .plan
            .take()
            .ok_or_else(|| js_err("this detection plan already gave its report"))?;
        let mut report = d.report(self.check.clone());
        report.review = self.review_name.take();
        report_value(&report)
    }
}

impl DetectionPlan {
    fn core_plan(&self) -> Result<&detect::DetectionPlan, JsError> {
        self.plan
            .as_ref()
            .ok_or_else(|| js_err("this detection plan already gave its report"))
    }
}

fn detect_options(options: JsValue) -> Result<DetectOptions, JsError> {
    if options.is_undefined() || options.is_null() {
        Ok(DetectOptions::default())
    } else {
        serde_wasm_bindgen::from_value(options).map_err(|e| js_err(format!("detect options: {e}")))
    }
}

fn call_progress(progress: &Option<js_sys::Function>, done: usize, total: usize) {
    if let Some(f) = progress {
        // A throwing callback must not abort detection; its error is dropped.
        let _ = f.call2(
            &JsValue::NULL,
            &JsValue::from(done as u32),
            &JsValue::from(total as u32),
        );
    }
}

/// Plain objects (not Maps) so the page and JSON.stringify see the CLI's JSON shape.
fn report_value(report: &semtrace_core::report::Report) -> Result<JsValue, JsError> {
    let ser = serde_wasm_bindgen::Serializer::json_compatible();
    report.serialize(&ser).map_err(js_err)
}
