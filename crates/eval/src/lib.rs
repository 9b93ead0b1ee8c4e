//! The evaluation protocol of the paper (section "Experiments", appendix "Detection Details"):
//! scored reviews in, per-condition metrics out. No I/O: the `semtrace eval` command generates or
//! reads the reviews, scores them and writes what [`summarize`] and [`report`] return.
//!
//! - [`metrics`]: ROC-AUC, operating points, cluster bootstrap over papers;
//! - [`icw`]: the in-context watermark baselines (keyed secrets, carrier texts, detectors);
//! - [`report`]: the per-condition summary, the Markdown tables in the paper's layout, SVG ROC curves.

pub mod icw;
pub mod metrics;
pub mod report;

use serde::{Deserialize, Serialize};

/// Which member of a paired draw a review is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum Label {
    /// Written after reading the protected (carrier-bearing) copy.
    Positive,
    /// Written from the original, or a human review: the null.
    Null,
}

/// One scored review: a line of the run's `reviews.jsonl`, which every reported number traces
/// back to (by `id`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReviewRecord {
    /// Unique within a run: `{method}/{condition}/{paper}/{label}/{draw}`.
    pub id: String,
    /// The detection method: "semtrace" or an in-context-watermark baseline.
    pub method: String,
    /// "clean", or the attack applied ("neutral", "adaptive").
    pub condition: String,
    pub paper: String,
    pub label: Label,
    /// Draw number within the paper (positive and null of a draw share the sampling seed).
    pub draw: u32,
    /// The assigned-code score S (SemTrace) or the baseline's detection statistic.
    pub score: f64,
    /// SemTrace only: observed positions O and matches M.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matched: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<String>,
    /// Where the review text came from (a file, or the generation that produced it).
    pub source: String,
    pub words: usize,
}

impl ReviewRecord {
    pub fn make_id(method: &str, condition: &str, paper: &str, label: Label, draw: u32) -> String {
        let l = match label {
            Label::Positive => "positive",
            Label::Null => "null",
        };
        format!("{method}/{condition}/{paper}/{l}/{draw}")
    }
}

pub use report::{summarize, ConditionSummary, SummaryOptions};
