//! The builder's pure optimisation core: from scored candidate facts to a K-position layout.
//!
//! Pipeline (paper, Method §§ "Estimating Natural Mention Priors" to "Code-Aware Pairing";
//! Exact-12 constants): [`priors`] turns control coverage into mention rates r_f;
//! [`select`] picks 2K facts by greedy MMR (using [`lexical`] overlap); [`codeword`] draws the
//! copy's balanced code; [`assign`] pairs, orients and places the facts into [`slots`] using
//! the exact blossom [`matching`] as its start. Everything is deterministic and I/O-free, so it
//! also builds for wasm32.

pub mod assign;
pub mod codeword;
pub mod facts;
pub mod lexical;
pub mod matching;
pub mod mention;
pub mod priors;
pub mod rng;
pub mod select;
pub mod slots;
