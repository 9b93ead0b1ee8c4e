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

impl Candidate {
    /// Natural expressibility n as selection uses it: an offline candidate without an authorial
    /// anchor loses `UNANCHORED_SELECTION_PENALTY` more. Rubric rounds 1–3 (docs/evaluation.md,
    /// "Facts a reviewer would state"): 84% of the kept facts that speak of the paper's work ("the
    /// authors", "the paper", "the proposed ...") passed, 66% of the others, which are more often
    /// background, textbook statements or results whose task is named elsewhere. The mention model
    /// keeps the attribute value it was fitted on; only B(f)'s n sees this. LLM candidates are
    /// phrased by the LLM and keep their own n.
    pub fn selection_naturalness(&self) -> f64 {
        let offline = self.origin.starts_with("offline");
        if offline && !super::reviewer_facts::anchored(&self.text) {
            (self.attributes.naturalness - semtrace_core::params::UNANCHORED_SELECTION_PENALTY)
                .max(0.0)
        } else {
            self.attributes.naturalness
        }
    }
}
