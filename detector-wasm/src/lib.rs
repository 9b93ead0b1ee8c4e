//! Browser bindings over `semtrace-core`: no decoding logic of its own, only conversions.
//! (The full web detector — worker, progress, caching — is a later step; this is the shell.)

use semtrace_core::bundle::Bundle;
use semtrace_core::detect::{check_model, detect, review_text};
use semtrace_core::nli::{ModelSpec, TractNli};
use wasm_bindgen::prelude::*;

fn js_err(e: impl std::fmt::Display) -> JsError {
    JsError::new(&e.to_string())
}

/// A loaded model plus one bundle.
#[wasm_bindgen]
pub struct Detector {
    engine: TractNli,
    bundle: Bundle,
}

#[wasm_bindgen]
impl Detector {
    /// `config_json` is the model's HuggingFace config (its id2label gives the entailment index).
    #[wasm_bindgen(constructor)]
    pub fn new(
        model_name: &str,
        onnx: &[u8],
        tokenizer_json: &[u8],
        config_json: &str,
        bundle_json: &str,
    ) -> Result<Detector, JsError> {
        let bundle = Bundle::from_json(bundle_json).map_err(js_err)?;
        let spec = ModelSpec::from_hf_config(model_name, config_json).map_err(js_err)?;
        let engine = TractNli::load(onnx, tokenizer_json, spec).map_err(js_err)?;
        Ok(Detector { engine, bundle })
    }

    /// Detect one review; returns the same report object as `semtrace detect --json`.
    /// `progress(done, total)` is called after each batch of pairs.
    pub fn detect(
        &self,
        review: &[u8],
        allow_model_mismatch: bool,
        progress: Option<js_sys::Function>,
    ) -> Result<JsValue, JsError> {
        let text = review_text(review).map_err(js_err)?;
        let check = check_model(
            &self.bundle,
            &self.engine.spec().name,
            self.engine.sha256(),
            allow_model_mismatch,
        )
        .map_err(js_err)?;
        let mut tick = |done: usize, total: usize| {
            if let Some(f) = &progress {
                let _ = f.call2(
                    &JsValue::NULL,
                    &JsValue::from(done as u32),
                    &JsValue::from(total as u32),
                );
            }
        };
        let report = detect(text, &self.bundle, &self.engine, check, &mut tick).map_err(js_err)?;
        serde_wasm_bindgen::to_value(&report).map_err(js_err)
    }
}
