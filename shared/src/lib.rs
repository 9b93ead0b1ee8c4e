//! SemTrace core: everything the builder CLI and the browser detector share.
//!
//! No file or network I/O lives here, so the crate builds for `wasm32-unknown-unknown`;
//! callers hand in bytes and strings. Layers, bottom-up:
//! - [`bundle`]: the signature bundle v1 (what a venue keeps) and its validation;
//! - [`segment`]: review text → sentences → adjacent 2-sentence windows;
//! - [`nli`]: the NLI scorer trait and the tract-onnx cross-encoder engine;
//! - [`decode`]: per-position 0/1/erasure decisions, the assigned-code score and p-value;
//! - [`embed`]: a BERT sentence embedder (safetensors → ONNX graph built in Rust → tract);
//! - [`quote`]: exact-quotation matching under the builder's frozen normalisation;
//! - [`rank`]: BM25 ranking of review windows for a fact (the fast decoder's pair selection);
//! - [`safeguard`]: optional decoder-side rules that discount hub windows (beyond the paper);
//! - [`detect`]: glue that runs a scorer over windows × facts (all, or the best-ranked) and
//!   produces a [`report::Report`];
//! - [`eval`]: the evaluation protocol's metrics (ROC-AUC, cluster bootstrap, operating points)
//!   and its report (Markdown tables, SVG ROC curves);
//! - [`carrier`]: the carrier instruction text of a protected copy and its round-trip normalisation;
//! - [`build`]: the builder's deterministic optimisation core (mention priors, MMR fact selection,
//!   balanced codeword, blossom matching, pairing/orientation/slot assignment).

pub mod build;
pub mod bundle;
pub mod calibration;
pub mod carrier;
pub mod decode;
pub mod detect;
pub mod embed;
pub mod error;
pub mod eval;
mod mask_add;
pub mod nli;
pub mod params;
pub mod plans;
pub mod quote;
pub mod rank;
pub mod report;
pub mod safeguard;
pub mod segment;
pub mod venue;

pub use error::{Error, Result};

/// SHA-256 of a byte slice as lowercase hex (model files, PDFs, carrier text).
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(Sha256::digest(bytes))
}
