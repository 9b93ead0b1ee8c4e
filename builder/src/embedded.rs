//! The embedded default model: the project's own MiniLM cross-encoder (models/semtrace-nli-minilm),
//! compiled into the binary so detection works offline out of the box.

use semtrace_core::nli::ModelSpec;

use crate::model_store::ModelBytes;

/// Name recorded in bundles built with the default model.
pub const DEFAULT_MODEL_NAME: &str = "semtrace-nli-minilm";

#[cfg(has_default_model)]
pub fn embedded() -> anyhow::Result<ModelBytes> {
    const ONNX: &[u8] = include_bytes!(concat!(env!("SEMTRACE_DEFAULT_MODEL_DIR"), "/model.onnx"));
    const TOKENIZER: &[u8] = include_bytes!(concat!(
        env!("SEMTRACE_DEFAULT_MODEL_DIR"),
        "/tokenizer.json"
    ));
    const CONFIG: &str = include_str!(concat!(env!("SEMTRACE_DEFAULT_MODEL_DIR"), "/config.json"));
    let spec = ModelSpec::from_hf_config(DEFAULT_MODEL_NAME, CONFIG)?;
    Ok(ModelBytes {
        onnx: ONNX.to_vec(),
        tokenizer: TOKENIZER.to_vec(),
        spec,
        expected_sha256: None,
    })
}

#[cfg(not(has_default_model))]
pub fn embedded() -> anyhow::Result<ModelBytes> {
    let _ = ModelSpec::from_hf_config;
    Err(semtrace_core::Error::model(
        "this build has no embedded default model (models/semtrace-nli-minilm was missing at build time): pass --model",
    )
    .into())
}
