//! SemTrace core: the detector's data and logic, with no ML runtime and no I/O.
//!
//! The bottom layer of the workspace (tract layers its crates the same way: each depends only
//! downward): `semtrace-infer` (tract + tokenizers engines), `semtrace-build` (the builder's
//! optimisation) and `semtrace-eval` (the evaluation protocol) sit on it, the CLI and the
//! wasm detector on those. Callers hand in bytes and strings, so it builds for wasm32.
//! - [`params`]: every frozen constant, with its source;
//! - [`bundle`]: the signature bundle v1 (what a venue keeps) and its validation;
//! - [`slots`], [`codeword`], [`rng`]: the review slots, the balanced codeword and its keyed PRNG
//!   (the builder draws them, the detector re-derives them);
//! - [`carrier`]: the carrier instruction text of a protected copy and its round-trip normalisation;
//! - [`segment`]: review text → sentences → adjacent 2-sentence windows;
//! - [`nli`]: the NLI scorer trait (engines live in `semtrace-infer`) and a lexical stand-in;
//! - [`rank`]: BM25 ranking of review windows for a fact (the fast decoder's pair selection);
//! - [`decode`]: per-position 0/1/erasure decisions, the assigned-code score and p-value;
//! - [`safeguard`]: optional decoder-side rules that discount hub windows (beyond the paper);
//! - [`detect`]: glue that runs a scorer over windows × facts and produces a [`report::Report`];
//! - [`calibration`], [`venue`]: null calibration and venue-level multiple testing.

pub mod bundle;
pub mod calibration;
pub mod carrier;
pub mod codeword;
pub mod decode;
pub mod detect;
pub mod error;
pub mod nli;
pub mod params;
pub mod rank;
pub mod report;
pub mod rng;
pub mod safeguard;
pub mod segment;
pub mod slots;
pub mod venue;

pub use error::{Error, Result};

/// SHA-256 of a byte slice as lowercase hex (model files, PDFs, carrier text).
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(Sha256::digest(bytes))
}
