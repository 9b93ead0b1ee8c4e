//! Attributes of one candidate fact, as the optimisation stages see them.
//!
//! Producing these numbers (NLI support, LLM ratings, control coverage) is the builder's
//! I/O-heavy job; everything downstream of this struct is pure and deterministic.

use serde::{Deserialize, Serialize};

/// Fact categories the slot preferences know about; any other string counts as "other".
pub const CATEGORIES: &[&str] = &[
    "problem",
    "method",
    "data",
    "setup",
    "result",
    "comparison",
    "limitation",
    "other",
];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FactAttrs {
    /// Stable fact id (carried into the bundle).
    pub id: String,
    /// The atomic proposition.
    pub text: String,
    /// Source entailment: NLI P(source quote ⊨ fact).
    pub e: f64,
    /// Importance in [0, 1].
    pub i: f64,
    /// Verifiability in [0, 1].
    pub v: f64,
    /// Natural expressibility in [0, 1].
    pub n: f64,
    /// Natural-mention rate r_f (see [`super::priors::mention_rate`]).
    pub r: f64,
    /// q_{f,k}: max entailment of the fact over the windows of selection control k (len N_sel;
    /// empty when no controls were generated).
    #[serde(default)]
    pub q: Vec<f64>,
    /// One of [`CATEGORIES`].
    pub category: String,
    /// Sentiment in [−1, 1] (negative = critical of the paper).
    pub sentiment: f64,
    /// Rating impact in [−1, 1].
    pub rating_impact: f64,
    /// Some(γ) when r comes from the learned mention model (no controls): the co-mention and
    /// behavioural-redundancy terms then come from it too ([`super::mention`]).
    #[serde(default)]
    pub co_gamma: Option<f64>,
}
