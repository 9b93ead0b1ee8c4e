//! Sentence embeddings: a BERT encoder (e.g. all-MiniLM-L6-v2) read from `model.safetensors`,
//! turned into an ONNX graph in Rust ([`graph::bert_encoder`]) and run by tract; mean pooling over
//! the attention mask, then L2 normalisation, as sentence-transformers does. No I/O: callers hand
//! in the bytes of `model.safetensors`, `tokenizer.json` and `config.json`.

pub mod graph;
pub mod safetensors;

use tokenizers::{Tokenizer, TruncationDirection, TruncationParams, TruncationStrategy};
use tract_onnx::prelude::*;

use crate::plans::PlanCache;
use graph::BertConfig;
use safetensors::SafeTensors;
use semtrace_core::error::{Error, Result};

/// Tokens per text at most (sentence-transformers' `max_seq_length` for all-MiniLM-L6-v2).
pub const MAX_TOKENS: usize = 256;
/// Texts per inference batch.
pub const BATCH: usize = 16;
/// Sequence lengths are rounded up to a multiple of this (few shapes, hence few plans).
const SEQ_BUCKET: usize = 8;

fn tract_err(context: &str) -> impl Fn(TractError) -> Error + '_ {
    move |e| Error::model(format!("{context}: {e:#}"))
}

/// A sentence embedder run by tract. Vectors are unit-length, so [`cosine`] is a dot product.
pub struct TractEmbedder {
    tokenizer: Tokenizer,
    model: TypedModel,
    hidden: usize,
    max_tokens: usize,
    sha256: String,
    plans: PlanCache,
}

/// Token ids and mask of one batch, padded to `seq`.
struct Encoded {
    rows: usize,
    seq: usize,
    ids: Vec<i64>,
    mask: Vec<i64>,
}

impl TractEmbedder {
    /// Build the encoder graph from the weights and config, and load the tokenizer.
    pub fn load(
        safetensors: &[u8],
        tokenizer_json: &[u8],
        config_json: &[u8],
    ) -> Result<TractEmbedder> {
        let config = BertConfig::from_json(config_json)?;
        let sha256 = semtrace_core::sha256_hex(safetensors);
        let proto = {
            let st = SafeTensors::parse(safetensors)?;
            graph::bert_encoder(&st, &config)?
        };
        let inference = tract_onnx::onnx()
            .model_for_proto_model(&proto)
            .map_err(tract_err("the encoder graph cannot be loaded"))?;
        drop(proto);
        let mut model = inference
            .into_typed()
            .and_then(|m| m.into_decluttered())
            .map_err(tract_err("the encoder graph cannot be typed"))?;
        let fact = model.input_fact(0).map_err(tract_err("input fact"))?;
        let dims = fact.shape.dims();
        let (Some(TDim::Sym(batch_sym)), Some(TDim::Sym(seq_sym))) = (dims.first(), dims.get(1))
        else {
            return Err(Error::model(
                "the encoder graph lost its symbolic input shape",
            ));
        };
        let (batch_sym, seq_sym) = (batch_sym.clone(), seq_sym.clone());
        crate::plans::prepare(&mut model, Some(&seq_sym))
            .map_err(tract_err("preparing the encoder graph for its plans"))?;
        let mut tokenizer = Tokenizer::from_bytes(tokenizer_json)
            .map_err(|e| Error::model(format!("tokenizer.json cannot be read: {e}")))?;
        let max_tokens = MAX_TOKENS.min(config.max_position_embeddings);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: max_tokens,
                strategy: TruncationStrategy::LongestFirst,
                stride: 0,
                direction: TruncationDirection::Right,
            }))
            .map_err(|e| Error::model(format!("tokenizer truncation: {e}")))?;
        tokenizer.with_padding(None);
        Ok(TractEmbedder {
            tokenizer,
            model,
            plans: PlanCache::new(Some(batch_sym)),
            hidden: config.hidden_size,
            max_tokens,
            sha256,
        })
    }

    /// SHA-256 of the safetensors bytes this embedder was built from.
    pub fn sha256(&self) -> &str {
        &self.sha256
    }

    /// Embedding width (384 for all-MiniLM-L6-v2).
    pub fn dim(&self) -> usize {
        self.hidden
    }

    pub fn max_tokens(&self) -> usize {
        self.max_tokens
    }

    /// Token ids of one text as the model sees it (special tokens added, truncated).
    pub fn token_ids(&self, text: &str) -> Result<Vec<u32>> {
        let e = self
            .tokenizer
            .encode(text, true)
            .map_err(|e| Error::model(format!("tokenization failed: {e}")))?;
        Ok(e.get_ids().to_vec())
    }

    fn encode(&self, ids: &[&Vec<u32>]) -> Encoded {
        let longest = ids.iter().map(|v| v.len()).max().unwrap_or(1).max(1);
        let seq = longest.div_ceil(SEQ_BUCKET) * SEQ_BUCKET;
        let rows = ids.len();
        let mut e = Encoded {
            rows,
            seq,
            ids: vec![0; rows * seq],
            mask: vec![0; rows * seq],
        };
        for (r, v) in ids.iter().enumerate() {
            for (c, &id) in v.iter().enumerate() {
                e.ids[r * seq + c] = id as i64;
                e.mask[r * seq + c] = 1;
            }
        }
        e
    }

    fn run(&self, e: &Encoded) -> Result<Vec<Vec<f32>>> {
        let plan = self
            .plans
            .get(&self.model, e.rows)
            .map_err(tract_err("optimising the encoder graph"))?;
        let shape = (e.rows, e.seq);
        let ids = tract_ndarray::Array2::from_shape_vec(shape, e.ids.clone())
            .map_err(|x| Error::model(format!("input shape: {x}")))?;
        let mask = tract_ndarray::Array2::from_shape_vec(shape, e.mask.clone())
            .map_err(|x| Error::model(format!("input shape: {x}")))?;
        let out = plan
            .run(tvec![ids.into_tensor().into(), mask.into_tensor().into()])
            .map_err(tract_err("running the encoder"))?;
        let view = out[0]
            .to_plain_array_view::<f32>()
            .map_err(tract_err("reading the hidden states"))?;
        if view.shape() != [e.rows, e.seq, self.hidden] {
            return Err(Error::model(format!(
                "hidden states have shape {:?}, expected [{}, {}, {}]",
                view.shape(),
                e.rows,
                e.seq,
                self.hidden
            )));
        }
        let mut vecs = Vec::with_capacity(e.rows);
        for r in 0..e.rows {
            let mut acc = vec![0f64; self.hidden];
            let mut n = 0f64;
            for s in 0..e.seq {
                if e.mask[r * e.seq + s] == 0 {
                    continue;
                }
                n += 1.0;
                for (a, &x) in acc.iter_mut().zip(view.slice(tract_ndarray::s![r, s, ..])) {
                    *a += x as f64;
                }
            }
            let n = n.max(1e-9);
            let mean: Vec<f64> = acc.iter().map(|a| a / n).collect();
            let norm = mean.iter().map(|x| x * x).sum::<f64>().sqrt().max(1e-12);
            vecs.push(mean.iter().map(|x| (x / norm) as f32).collect());
        }
        Ok(vecs)
    }

    /// One unit-length vector per text (mean of the token states over the attention mask, then
    /// L2-normalised). Texts are batched by token length to limit padding; order is preserved.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let ids: Vec<Vec<u32>> = texts
            .iter()
            .map(|t| self.token_ids(t))
            .collect::<Result<_>>()?;
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| ids[i].len());
        let mut out = vec![Vec::new(); texts.len()];
        for chunk in order.chunks(BATCH) {
            let batch: Vec<&Vec<u32>> = chunk.iter().map(|&i| &ids[i]).collect();
            let vecs = self.run(&self.encode(&batch))?;
            for (&i, v) in chunk.iter().zip(vecs) {
                out[i] = v;
            }
        }
        Ok(out)
    }
}

/// Cosine similarity of two vectors (0 when either is zero).
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let (mut dot, mut na, mut nb) = (0f64, 0f64, 0f64);
    for (&x, &y) in a.iter().zip(b) {
        dot += x as f64 * y as f64;
        na += x as f64 * x as f64;
        nb += y as f64 * y as f64;
    }
    if na == 0.0 || nb == 0.0 {
        return 0.0;
    }
    (dot / (na.sqrt() * nb.sqrt())) as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cosine_basics() {
        assert!((cosine(&[1.0, 0.0], &[2.0, 0.0]) - 1.0).abs() < 1e-6);
        assert!(cosine(&[1.0, 0.0], &[0.0, 3.0]).abs() < 1e-6);
        assert_eq!(cosine(&[0.0, 0.0], &[1.0, 0.0]), 0.0);
    }

    #[test]
    fn config_must_be_bert_with_gelu() {
        assert!(BertConfig::from_json(br#"{"hidden_size":8,"num_attention_heads":2,"num_hidden_layers":1,"intermediate_size":16}"#).is_ok());
        assert!(BertConfig::from_json(br#"{"hidden_size":8,"num_attention_heads":3,"num_hidden_layers":1,"intermediate_size":16}"#).is_err());
        assert!(BertConfig::from_json(br#"{"hidden_size":8,"num_attention_heads":2,"num_hidden_layers":1,"intermediate_size":16,"hidden_act":"relu"}"#).is_err());
        assert!(BertConfig::from_json(b"not json").is_err());
    }
}
