//! Offline naturalness n_f from a learned model of "a reviewer would state this fact" (issue 23,
//! item 3).
//!
//! The rules of `reviewer_facts` drop what must never be asked of a reviewer; among the facts they
//! keep, LLM judges under `training/data/fact-judgments/RUBRIC.md` still fail about a third
//! (background stated as the paper's, a result without its task, a referent no word marks). No
//! rule sees these, but their surface does: a small logistic model of P(pass the rubric) over the
//! fact's mention features (section, position, overlaps, numbers, category, …) and the lexical
//! features below. Offline builds use it as n_f (the paper's naturalness attribute: how natural it
//! is for a reviewer to state f) in B(f) at selection; LLM candidates keep the LLM's own rating.
//!
//! The coefficients are data, fitted by `training/fit_quality.py` on rubric judgments of approved
//! facts of train-pool papers (never the corpus papers the rubric is measured on) and embedded
//! from `fact_quality_model.json`; nothing is fitted at run time.

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use crate::candidate::CandidateSource;
use semtrace_build::mention;

/// Names of the lexical features, in the order of [`lexical`]; the model's input is the mention
/// features ([`mention::FEATURES`]) followed by these.
pub const LEXICAL: &[&str] = &[
    "opens_authorial",
    "authorial_quote",
    "opens_bare_the",
    "named_share",
    "acronyms",
    "symbols",
    "commas",
    "parentheses",
    "percent",
    "background_cue",
    "result_cue",
    "hedge",
    "past_setup",
    "rewritten",
    "src_clause",
    "src_caption",
];

/// Openings by which a fact names the paper's own work as its subject.
const AUTHORIAL_OPENINGS: &[&str] = &[
    "the authors",
    "the paper",
    "the proposed",
    "this paper",
    "this work",
    "the study",
];

/// Words by which the source sentence speaks of the authors' own work (the quote keeps "we").
const AUTHORIAL_WORDS: &[&str] = &["we", "our", "ours", "us", "propose", "proposed"];

/// Words that mark surveyed or textbook material rather than the paper's contribution.
const BACKGROUND: &[&str] = &[
    "recently",
    "recent",
    "existing",
    "previous",
    "prior",
    "traditional",
    "traditionally",
    "typically",
    "commonly",
    "widely",
    "popular",
    "conventional",
    "al",
    "literature",
    "usually",
    "often",
];

/// Words that mark a result or comparison.
const RESULT: &[&str] = &[
    "outperforms",
    "outperform",
    "achieves",
    "achieve",
    "improves",
    "improve",
    "improvement",
    "accuracy",
    "state-of-the-art",
    "reduces",
    "surpasses",
    "gains",
    "better",
];

const HEDGES: &[&str] = &["may", "might", "could", "can", "likely", "possibly"];

fn words_lower(text: &str) -> Vec<String> {
    text.split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric() && c != '-')
                .to_lowercase()
        })
        .filter(|w| !w.is_empty())
        .collect()
}

fn count(words: &[String], list: &[&str]) -> f64 {
    words.iter().filter(|w| list.contains(&w.as_str())).count() as f64
}

/// The lexical features of one fact (see [`LEXICAL`]): surface cues of context, background and
/// debris that the mention features do not see.
pub fn lexical(text: &str, quote: &str, source: CandidateSource) -> Vec<f64> {
    let lower = text.to_lowercase();
    let words = words_lower(text);
    let n = words.len().max(1) as f64;
    let raw: Vec<&str> = text.split_whitespace().collect();
    let opens_authorial = AUTHORIAL_OPENINGS.iter().any(|o| lower.starts_with(o));
    let opens_bare_the = !opens_authorial
        && [
            "the ", "a ", "an ", "this ", "these ", "such ", "it ", "they ",
        ]
        .iter()
        .any(|o| lower.starts_with(o));
    let named = raw
        .iter()
        .skip(1)
        .filter(|w| w.chars().next().is_some_and(char::is_uppercase))
        .count() as f64;
    let core = |w: &&str| -> String { w.trim_matches(|c: char| !c.is_alphanumeric()).to_string() };
    let acronyms = raw
        .iter()
        .map(core)
        .filter(|w| w.chars().count() >= 2 && w.chars().filter(|c| c.is_uppercase()).count() >= 2)
        .count() as f64;
    // A one-letter token other than "a"/"I", or letters and digits fused ("x1", "W2"): a symbol.
    let symbols = raw
        .iter()
        .skip(1)
        .map(core)
        .filter(|w| {
            let letters = w.chars().filter(|c| c.is_alphabetic()).count();
            let digits = w.chars().any(|c| c.is_ascii_digit());
            (w.chars().count() == 1 && letters == 1 && w != "a" && w != "A" && w != "I")
                || (letters > 0 && digits && w.chars().count() <= 4)
        })
        .count() as f64;
    let quote_words = words_lower(quote);
    vec![
        f64::from(u8::from(opens_authorial)),
        f64::from(u8::from(count(&quote_words, AUTHORIAL_WORDS) > 0.0)),
        f64::from(u8::from(opens_bare_the)),
        named / n,
        acronyms.min(4.0),
        symbols.min(3.0),
        text.matches(',').count() as f64 / n * 10.0,
        f64::from(u8::from(text.contains('('))),
        f64::from(u8::from(text.contains('%'))),
        count(&words, BACKGROUND).min(2.0),
        count(&words, RESULT).min(2.0),
        count(&words, HEDGES).min(2.0),
        f64::from(u8::from(words.iter().any(|w| w == "were" || w == "was"))),
        f64::from(u8::from(
            text.trim_end_matches('.') != quote.trim_end_matches('.'),
        )),
        f64::from(u8::from(source == CandidateSource::Clause)),
        f64::from(u8::from(matches!(
            source,
            CandidateSource::Caption | CandidateSource::Table
        ))),
    ]
}

/// The fitted model, as `training/fit_quality.py` writes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QualityModel {
    pub version: String,
    /// Must equal [`mention::FEATURES`] followed by [`LEXICAL`].
    pub features: Vec<String>,
    /// Per-feature standardisation used in fitting: z = (x − mean) / scale.
    pub mean: Vec<f64>,
    pub scale: Vec<f64>,
    pub weights: Vec<f64>,
    pub bias: f64,
    /// Where it was fitted: judges, papers, held-out figures, command.
    pub provenance: String,
}

impl QualityModel {
    pub fn from_json(text: &str) -> Result<Self, String> {
        let m: QualityModel =
            serde_json::from_str(text).map_err(|e| format!("fact-quality model: {e}"))?;
        let names = mention::FEATURES.iter().chain(LEXICAL).copied();
        let n = mention::FEATURES.len() + LEXICAL.len();
        if m.features.iter().map(String::as_str).ne(names)
            || m.mean.len() != n
            || m.scale.len() != n
            || m.weights.len() != n
        {
            return Err("fact-quality model: its features are not this builder's".into());
        }
        if m.scale.iter().any(|s| !s.is_finite() || *s <= 0.0)
            || m.weights.iter().chain(&m.mean).any(|w| !w.is_finite())
            || !m.bias.is_finite()
        {
            return Err("fact-quality model: bad coefficients".into());
        }
        Ok(m)
    }

    /// The model shipped with this build.
    pub fn embedded() -> &'static QualityModel {
        static M: OnceLock<QualityModel> = OnceLock::new();
        M.get_or_init(|| {
            QualityModel::from_json(include_str!("fact_quality_model.json"))
                .expect("embedded fact-quality model is checked by its unit test")
        })
    }

    /// P(pass) = σ(b + Σ w·z) over the mention features then the lexical ones.
    pub fn pass_probability(&self, mention_features: &[f64], lexical: &[f64]) -> f64 {
        mention::standardised_logistic(
            mention_features.iter().chain(lexical),
            &self.mean,
            &self.scale,
            &self.weights,
            self.bias,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_model_matches_the_features() {
        let m = QualityModel::embedded();
        assert_eq!(m.weights.len(), mention::FEATURES.len() + LEXICAL.len());
    }

    #[test]
    fn lexical_features_see_anchors_symbols_and_background() {
        let f = |t: &str, q: &str| lexical(t, q, CandidateSource::Sentence);
        let anchored = f(
            "The authors propose a retrieval model that outperforms BM25 by 4% on MS MARCO.",
            "We propose a retrieval model that outperforms BM25 by 4% on MS MARCO.",
        );
        let at = |name: &str| LEXICAL.iter().position(|n| *n == name).unwrap();
        assert_eq!(anchored[at("opens_authorial")], 1.0);
        assert_eq!(anchored[at("authorial_quote")], 1.0);
        assert_eq!(anchored[at("rewritten")], 1.0);
        assert_eq!(anchored[at("percent")], 1.0);
        assert!(anchored[at("result_cue")] >= 1.0);
        assert!(anchored[at("acronyms")] >= 2.0);
        let bare = f(
            "The matrix W is typically initialised from prior work by Smith et al. with k layers.",
            "The matrix W is typically initialised from prior work by Smith et al. with k layers.",
        );
        assert_eq!(bare[at("opens_authorial")], 0.0);
        assert_eq!(bare[at("opens_bare_the")], 1.0);
        assert_eq!(bare[at("rewritten")], 0.0);
        assert!(bare[at("symbols")] >= 2.0);
        assert!(bare[at("background_cue")] >= 2.0);
        assert_eq!(
            lexical("x", "x", CandidateSource::Table)[at("src_caption")],
            1.0
        );
    }

    #[test]
    fn broken_models_are_refused() {
        let good = include_str!("fact_quality_model.json");
        assert!(QualityModel::from_json(good).is_ok());
        assert!(QualityModel::from_json("{}").is_err());
        let mut v: serde_json::Value = serde_json::from_str(good).unwrap();
        v["features"][0] = "other".into();
        assert!(QualityModel::from_json(&v.to_string()).is_err());
        let mut v: serde_json::Value = serde_json::from_str(good).unwrap();
        v["scale"][0] = 0.0.into();
        assert!(QualityModel::from_json(&v.to_string()).is_err());
    }
}
