//! A candidate fact as every gate sees it, whatever produced it (LLM or offline extraction).

use std::fmt;

use serde::{Deserialize, Serialize};

/// Attributes scored per fact: by the LLM in LLM mode, by documented heuristics offline. The one
/// attribute type of a candidate, whatever produced it (the optimiser's `FactAttrs` adds what the
/// gates and priors measured).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
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
    /// Which pass produced it.
    pub origin: Origin,
    /// What in the source produced it. The report counts candidates per source.
    pub source: CandidateSource,
    pub attributes: Attributes,
}

/// The pass that produced a candidate (the build report's "origin" column).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Origin {
    /// Offline extraction from the evidence units.
    Offline,
    /// Offline extraction kept in reserve for units no approved fact covers.
    OfflineRefill,
    /// The LLM's first pass over every chunk.
    LlmInitial,
    /// The LLM's second pass over chunks that gave too few.
    LlmSupplemental,
    /// The LLM's targeted refill over uncovered units.
    LlmRefill,
}

impl Origin {
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::Offline => "offline",
            Origin::OfflineRefill => "offline-refill",
            Origin::LlmInitial => "llm-initial",
            Origin::LlmSupplemental => "llm-supplemental",
            Origin::LlmRefill => "llm-refill",
        }
    }

    /// Produced by a targeted refill (the report's "refill" pass).
    pub fn is_refill(self) -> bool {
        matches!(self, Origin::OfflineRefill | Origin::LlmRefill)
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What in the source a candidate states; the order is the build report's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CandidateSource {
    /// A sentence of an evidence unit (offline).
    Sentence,
    /// A self-contained clause of a long sentence (offline).
    Clause,
    /// A figure caption's statement (offline).
    Caption,
    /// A table caption's statement (offline).
    Table,
    /// Written by the LLM in LLM mode.
    Llm,
}

impl CandidateSource {
    pub fn as_str(self) -> &'static str {
        match self {
            CandidateSource::Sentence => "sentence",
            CandidateSource::Clause => "clause",
            CandidateSource::Caption => "caption",
            CandidateSource::Table => "table",
            CandidateSource::Llm => "llm",
        }
    }
}

impl fmt::Display for CandidateSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enums_serialise_as_the_report_names() {
        for o in [
            Origin::Offline,
            Origin::OfflineRefill,
            Origin::LlmInitial,
            Origin::LlmSupplemental,
            Origin::LlmRefill,
        ] {
            assert_eq!(serde_json::json!(o), o.as_str());
        }
        let mut sources = [
            CandidateSource::Llm,
            CandidateSource::Table,
            CandidateSource::Sentence,
            CandidateSource::Caption,
            CandidateSource::Clause,
        ];
        sources.sort();
        let names: Vec<_> = sources.iter().map(|s| serde_json::json!(s)).collect();
        assert_eq!(names, ["sentence", "clause", "caption", "table", "llm"]);
        assert!(Origin::LlmRefill.is_refill() && !Origin::LlmSupplemental.is_refill());
    }
}
