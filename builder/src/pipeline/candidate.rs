//! A candidate fact as every gate sees it, whatever produced it (LLM or offline extraction).

use serde::Serialize;

/// Attributes scored per fact: by the LLM in LLM mode, by documented heuristics offline.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Attributes {
    /// Importance i in [0, 1].
    pub importance: f64,
    /// Verifiability v in [0, 1].
    pub verifiability: f64,
    /// Natural expressibility n in [0, 1]: how naturally a reviewer would state it.
    pub naturalness: f64,
    /// Sentiment in [-1, 1].
    pub sentiment: f64,
    /// Rating impact in [-1, 1]: how much stating it would push a score.
    pub rating_impact: f64,
    pub category: String,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Candidate {
    /// `c0001`, ... in the order candidates were produced.
    pub id: String,
    pub text: String,
    /// Exact supporting quotation from the source.
    pub quote: String,
    /// Evidence unit the candidate cites.
    pub unit: String,
    /// "offline", "offline-refill", "llm-initial", "llm-supplemental", "llm-refill".
    pub origin: String,
    /// What in the source produced it: "sentence", "clause" (a self-contained clause of a long
    /// sentence), "caption" (a figure caption's statement), "table" (a table caption's
    /// statement) offline, "llm" in LLM mode. The report counts candidates per source.
    pub source: String,
    pub attributes: Attributes,
}
