//! What the engine needs to know about a model beyond its graph: label order and length.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelSpec {
    /// Human-readable identity recorded in bundles (e.g. "semtrace-nli-minilm-v1").
    pub name: String,
    /// Label names in logit order.
    pub labels: Vec<String>,
    /// Index of the entailment logit.
    pub entailment_index: usize,
    /// Maximum tokens per pair (pairs are truncated longest-first to this).
    pub max_length: usize,
}

impl ModelSpec {
    /// Read label order from a HuggingFace `config.json` (`id2label`), never from a constant.
    /// `max_length` falls back to `max_length`/`semtrace.max_length` in the config, then 512.
    pub fn from_hf_config(name: &str, config_json: &str) -> Result<ModelSpec> {
        let v: serde_json::Value = serde_json::from_str(config_json)
            .map_err(|e| Error::model(format!("model config.json is not valid JSON: {e}")))?;
        let id2label = v
            .get("id2label")
            .and_then(|m| m.as_object())
            .ok_or_else(|| Error::model("model config.json has no id2label map"))?;
        let mut labels = vec![String::new(); id2label.len()];
        for (k, l) in id2label {
            let i: usize = k
                .parse()
                .map_err(|_| Error::model(format!("id2label key {k:?} is not an integer")))?;
            let slot = labels
                .get_mut(i)
                .ok_or_else(|| Error::model(format!("id2label index {i} is out of range")))?;
            *slot = l.as_str().unwrap_or_default().to_string();
        }
        let entailment_index = labels
            .iter()
            .position(|l| l.to_ascii_lowercase().starts_with("entail"))
            .ok_or_else(|| Error::model(format!("no entailment label among {labels:?}")))?;
        let max_length = v
            .pointer("/semtrace/max_length")
            .or_else(|| v.get("max_length"))
            .and_then(|x| x.as_u64())
            .map(|x| x as usize)
            .unwrap_or(512);
        Ok(ModelSpec {
            name: name.to_string(),
            labels,
            entailment_index,
            max_length,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entailment_index_comes_from_id2label() {
        let cfg = r#"{"id2label": {"0": "contradiction", "1": "entailment", "2": "neutral"}}"#;
        let s = ModelSpec::from_hf_config("x", cfg).unwrap();
        assert_eq!(s.entailment_index, 1);
        assert_eq!(s.labels, vec!["contradiction", "entailment", "neutral"]);
        let cfg = r#"{"id2label": {"2": "ENTAILMENT", "0": "neutral", "1": "contradiction"}, "max_length": 256}"#;
        let s = ModelSpec::from_hf_config("x", cfg).unwrap();
        assert_eq!((s.entailment_index, s.max_length), (2, 256));
    }

    #[test]
    fn missing_or_bad_labels_are_errors() {
        assert!(ModelSpec::from_hf_config("x", "{}").is_err());
        assert!(ModelSpec::from_hf_config("x", r#"{"id2label": {"0": "a", "1": "b"}}"#).is_err());
        assert!(ModelSpec::from_hf_config("x", r#"{"id2label": {"7": "entailment"}}"#).is_err());
        assert!(ModelSpec::from_hf_config("x", "not json").is_err());
    }
}
