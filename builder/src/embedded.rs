//! The embedded default model: the project's own MiniLM cross-encoder (models/semtrace-nli-minilm),
//! compiled into the binary so detection works offline out of the box.

use semtrace_core::nli::ModelSpec;

use crate::model_store::ModelBytes;

/// Name recorded in bundles built with the default model.
pub const DEFAULT_MODEL_NAME: &str = "semtrace-nli-minilm";

const ONNX: &[u8] = include_bytes!("../../models/semtrace-nli-minilm/model.onnx");
const TOKENIZER: &[u8] = include_bytes!("../../models/semtrace-nli-minilm/tokenizer.json");
const CONFIG: &str = include_str!("../../models/semtrace-nli-minilm/config.json");

pub fn embedded() -> anyhow::Result<ModelBytes> {
    let spec = ModelSpec::from_hf_config(DEFAULT_MODEL_NAME, CONFIG)?;
    Ok(ModelBytes {
        onnx: ONNX.to_vec(),
        tokenizer: TOKENIZER.to_vec(),
        spec,
        expected_sha256: None,
    })
}
