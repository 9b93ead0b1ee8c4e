//! SemTrace inference: the ML engines behind `semtrace-core`'s traits, run by tract-onnx with
//! Hugging Face tokenizers. No I/O: callers hand in the bytes of model and tokenizer files, so
//! it builds for wasm32 (the browser detector uses [`nli`]; only the builder uses [`embed`]).
//! - [`nli`]: the ONNX cross-encoder ([`nli::TractNli`]) that implements
//!   [`semtrace_core::nli::NliScorer`];
//! - [`embed`]: a BERT sentence embedder (safetensors → ONNX graph built in Rust → tract);
//! - [`nli`] also runs split cross-encoders (`split`: lower layers once per segment, cached);
//! - [`plans`]: the shared plan cache and the graph rewrites both engines apply before optimising.

pub mod embed;
mod mask_add;
pub mod nli;
mod parallel;
pub mod plans;
mod split;

pub use nli::{EncodedBatch, OpTime, TractNli, DEFAULT_BATCH};
