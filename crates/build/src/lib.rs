//! SemTrace builder core: the builder's pure optimisation, from scored candidate facts to a
//! K-position layout, on top of `semtrace-core` (whose codeword, slots and PRNG the detector
//! shares).
//!
//! Pipeline (paper, Method §§ "Estimating Natural Mention Priors" to "Code-Aware Pairing";
//! Exact-12 constants in [`semtrace_core::params`]): [`priors`] turns control coverage into
//! mention rates r_f, or [`mention`]'s learned model does offline; [`select`] picks 2K facts by
//! greedy MMR (using [`lexical`] overlap); [`assign`] pairs, orients and places the facts into
//! the review slots using the exact blossom [`matching`] as its start; [`quote`] checks that a
//! fact is an exact quotation of its source. Everything is deterministic and I/O-free.

pub mod assign;
pub mod facts;
pub mod lexical;
pub mod matching;
pub mod mention;
pub mod priors;
pub mod quote;
pub mod select;
