//! The per-review detection report: what `semtrace detect --json` prints (one per line), what the
//! web page renders and what the evaluation harness reads.

use serde::{Deserialize, Serialize};

use std::fmt;
use std::str::FromStr;

use crate::decode::{Decision, Erasure, Verdict};
use crate::safeguard::Safeguard;
use crate::segment::Window;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Where the review came from (a path, "-" for stdin); set by the caller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review: Option<String>,
    pub verdict: Verdict,
    /// S = 2M − O when eligible, else the bundle's ineligible score.
    pub score: i64,
    pub observed: usize,
    pub matched: usize,
    pub mismatched: usize,
    pub eligible: bool,
    /// One-sided binomial p-value of M matches out of O under H0 (fair coin per observed bit).
    pub p_value: f64,
    /// True when the bundle's selection is keyed (format 1.2), which makes the fair coin, and
    /// so `p_value`, exact; false for older bundles, whose p-value rests on that assumption.
    #[serde(default)]
    pub p_value_exact: bool,
    /// The smallest p-value this bundle can give: all K positions observed and matching, 2^−K.
    #[serde(default)]
    pub min_p_value: f64,
    /// Matches out of this review's O that `exposed` needs at `alpha` (None: even O of O would
    /// not reach it).
    #[serde(default)]
    pub matches_needed: Option<usize>,
    /// The α the verdict used.
    pub alpha: f64,
    pub k: usize,
    pub positions: Vec<PositionReport>,
    /// Windows before the cap.
    pub windows_total: usize,
    /// The windows scored (at most the bundle's max_windows).
    pub windows: Vec<Window>,
    pub pairs_scored: usize,
    /// Which decoder scored the pairs (reports written before the field existed: exhaustive).
    #[serde(default)]
    pub decoder: Decoder,
    /// Decoder-side safeguard (beyond the paper); absent for the paper's rule.
    #[serde(default, skip_serializing_if = "Safeguard::is_none")]
    pub safeguard: Safeguard,
    pub model: ModelCheck,
    /// Bundles with per-reviewer copies: every recipient's codeword scored on the same
    /// decisions, with Holm-adjusted p-values over the recipients.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub recipients: Vec<RecipientResult>,
    /// The recipient whose codeword the figures above are for (the smallest adjusted p-value;
    /// then `p_value` is that Holm-adjusted p-value, and an `exposed` verdict names the copy
    /// that leaked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recipient: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecipientResult {
    pub digest: String,
    pub matched: usize,
    pub p_value: f64,
    pub holm_p: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PositionReport {
    pub index: usize,
    pub slot: String,
    /// The codeword bit assigned to this copy.
    pub assigned: u8,
    /// s_{j,0}, s_{j,1}: max entailment probability of each side over the windows scored (the fast
    /// decoder may leave pairs unscored that cannot change the decision: a decided bit's own side,
    /// both sides of a `both` erasure; then a lower bound).
    pub s0: f64,
    pub s1: f64,
    /// "0", "1" or "?" (erased; the kind is in `erasure`).
    pub decision: PositionDecision,
    pub erasure: Option<Erasure>,
    /// Whether the decoded bit equals the assigned one (None when erased).
    pub matches: Option<bool>,
    /// Window with the highest entailment for the decided side among those scored (None when
    /// erased or no windows).
    pub evidence_window: Option<usize>,
    /// Best scored window for each side, for auditing erasures too.
    pub best_windows: [Option<usize>; 2],
}

/// How the engine's model relates to the one the bundle was frozen for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelCheck {
    pub name: String,
    /// SHA-256 of the model actually used.
    pub sha256: String,
    /// SHA-256 the bundle records.
    pub bundle_sha256: String,
    pub hash_matches: bool,
    /// True when a mismatch was explicitly allowed by the user (results are then not comparable).
    pub mismatch_overridden: bool,
}

/// Which decoder produced a report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decoder {
    /// Every fact against every retained window (the paper's decoder).
    #[default]
    Exhaustive,
    /// Lexically ranked windows first, escalating to every pair that could change a decision near
    /// a verdict.
    Fast,
}

impl Decoder {
    pub const ALL: [Decoder; 2] = [Decoder::Exhaustive, Decoder::Fast];

    pub fn as_str(self) -> &'static str {
        match self {
            Decoder::Exhaustive => "exhaustive",
            Decoder::Fast => "fast",
        }
    }
}

impl fmt::Display for Decoder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Bindings hand in strings (JS options, JSON Lines); the error names the accepted values.
impl FromStr for Decoder {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Decoder::ALL
            .into_iter()
            .find(|d| d.as_str() == s)
            .ok_or_else(|| format!("unknown decoder \"{s}\" (exhaustive or fast)"))
    }
}

/// A position's decision as a report shows it: the bit, or "?" when erased.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum PositionDecision {
    #[serde(rename = "0")]
    Zero,
    #[serde(rename = "1")]
    One,
    #[serde(rename = "?")]
    Erased,
}

impl PositionDecision {
    pub fn bit(self) -> Option<u8> {
        match self {
            PositionDecision::Zero => Some(0),
            PositionDecision::One => Some(1),
            PositionDecision::Erased => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            PositionDecision::Zero => "0",
            PositionDecision::One => "1",
            PositionDecision::Erased => "?",
        }
    }
}

impl From<Decision> for PositionDecision {
    fn from(d: Decision) -> Self {
        match d.bit() {
            Some(0) => PositionDecision::Zero,
            Some(_) => PositionDecision::One,
            None => PositionDecision::Erased,
        }
    }
}

impl fmt::Display for PositionDecision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enums_keep_the_report_format_and_parse_their_names() {
        let json = |v: serde_json::Value| v.to_string();
        assert_eq!(json(serde_json::json!(Decoder::Fast)), "\"fast\"");
        assert_eq!(
            json(serde_json::json!(Decoder::Exhaustive)),
            "\"exhaustive\""
        );
        assert_eq!(json(serde_json::json!(PositionDecision::Erased)), "\"?\"");
        assert_eq!(json(serde_json::json!(PositionDecision::One)), "\"1\"");
        assert_eq!("fast".parse::<Decoder>(), Ok(Decoder::Fast));
        assert!("Fast"
            .parse::<Decoder>()
            .unwrap_err()
            .contains("exhaustive or fast"));
        assert_eq!(PositionDecision::from(Decision::Bit(0)).bit(), Some(0));
        assert_eq!(
            PositionDecision::from(Decision::Erased(Erasure::Both)),
            PositionDecision::Erased
        );
        // A report from before `decoder` existed reads as exhaustive.
        assert_eq!(Decoder::default(), Decoder::Exhaustive);
    }
}
