//! Natural-mention priors without an LLM: a small logistic model of P(a real review mentions
//! fact f) from features the builder has for any paper (issue 23, item 4; beyond the paper,
//! which estimates r_f from LLM-written controls only).
//!
//! The coefficients are data, fitted by `training/fit_priors.py` on real reviews of the
//! train-pool papers and embedded from `mention_model.json`; nothing here is fitted at run
//! time. Offline builds use the model for r_f and, since one model predicts every fact of a
//! paper, for the co-mention terms: C_co(f, g) = min(r_f, r_g, r_f·r_g·exp(γ·J_lex(f, g)))
//! (facts worded alike travel together, γ fitted on the same reviews), and the behavioural
//! redundancy corr(q_f, q_g) becomes the φ coefficient of the two mention indicators under
//! that joint rate. Controls, when given, override all of it.

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use super::facts::CATEGORIES;
use super::lexical::{jaccard_lex, tokens};
use semtrace_core::error::{Error, Result};

/// Feature names, in the order of [`Features::values`] and of the model's weights.
pub const FEATURES: &[&str] = &[
    "sec_abstract",
    "sec_intro",
    "sec_related",
    "sec_method",
    "sec_experiments",
    "sec_conclusion",
    "position",
    "title_overlap",
    "abstract_overlap",
    "conclusion_overlap",
    "repetition",
    "has_number",
    "log_words",
    "cat_problem",
    "cat_method",
    "cat_data",
    "cat_setup",
    "cat_result",
    "cat_comparison",
    "cat_limitation",
    "importance",
    "naturalness",
];

/// Coarse section class of an evidence unit, from its nearest heading.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SectionClass {
    Abstract,
    Intro,
    Related,
    Method,
    Experiments,
    Conclusion,
    Other,
}

fn classify_heading(h: &str) -> Option<SectionClass> {
    let l = h.to_lowercase();
    let has = |ws: &[&str]| ws.iter().any(|w| l.contains(w));
    // Order matters: "related work" before "work", "experimental setup" is experiments.
    if has(&["abstract"]) {
        Some(SectionClass::Abstract)
    } else if has(&["introduction", "motivation"]) {
        Some(SectionClass::Intro)
    } else if has(&["related work", "background", "prior work", "literature"]) {
        Some(SectionClass::Related)
    } else if has(&[
        "experiment",
        "result",
        "evaluation",
        "ablation",
        "benchmark",
        "empirical",
        "analysis",
    ]) {
        Some(SectionClass::Experiments)
    } else if has(&[
        "conclusion",
        "discussion",
        "limitation",
        "future work",
        "summary",
    ]) {
        Some(SectionClass::Conclusion)
    } else if has(&[
        "method",
        "approach",
        "model",
        "framework",
        "preliminar",
        "problem",
        "algorithm",
        "theor",
        "formulation",
        "architecture",
        "our ",
        "proposed",
    ]) {
        Some(SectionClass::Method)
    } else {
        None
    }
}

/// Whether a heading is a subsection ("3.2 …", "A.1 …"), which inherits its parent's class
/// when its own words say nothing.
fn is_subsection(h: &str) -> bool {
    let first = h.split_whitespace().next().unwrap_or("");
    let parts: Vec<&str> = first.trim_end_matches('.').split('.').collect();
    parts.len() >= 2 && parts.iter().all(|p| !p.is_empty())
}

/// The section class of every unit, in reading order: a heading's own words decide; a
/// numbered subsection without telling words inherits the class of the section above it.
pub fn section_classes(sections: &[Option<&str>]) -> Vec<SectionClass> {
    let mut current = SectionClass::Other;
    let mut last_heading: Option<&str> = None;
    let mut out = Vec::with_capacity(sections.len());
    for s in sections {
        if *s != last_heading {
            last_heading = *s;
            current = match s {
                None => SectionClass::Other,
                Some(h) => match classify_heading(h) {
                    Some(c) => c,
                    None if is_subsection(h) => current,
                    None => SectionClass::Other,
                },
            };
        }
        out.push(current);
    }
    out
}

/// What the features need to know about the paper, computed once per build.
pub struct PaperContext {
    title: std::collections::BTreeSet<String>,
    abstract_: std::collections::BTreeSet<String>,
    conclusion: std::collections::BTreeSet<String>,
    units: Vec<std::collections::BTreeSet<String>>,
    classes: Vec<SectionClass>,
}

impl PaperContext {
    /// `units` are (section heading, text) in reading order.
    pub fn new(title: &str, units: &[(Option<&str>, &str)]) -> Self {
        let sections: Vec<Option<&str>> = units.iter().map(|(s, _)| *s).collect();
        let classes = section_classes(&sections);
        let mut abstract_ = std::collections::BTreeSet::new();
        let mut conclusion = std::collections::BTreeSet::new();
        for ((_, text), c) in units.iter().zip(&classes) {
            match c {
                SectionClass::Abstract => abstract_.extend(tokens(text)),
                SectionClass::Conclusion => conclusion.extend(tokens(text)),
                _ => {}
            }
        }
        // Text input often has no "Abstract" heading: the first paragraphs stand in.
        if abstract_.is_empty() {
            for (_, text) in units.iter().take(3) {
                abstract_.extend(tokens(text));
            }
        }
        PaperContext {
            title: tokens(title),
            abstract_,
            conclusion,
            units: units.iter().map(|(_, t)| tokens(t)).collect(),
            classes,
        }
    }

    pub fn class_of(&self, unit: usize) -> SectionClass {
        self.classes
            .get(unit)
            .copied()
            .unwrap_or(SectionClass::Other)
    }
}

/// One fact's feature vector (see [`FEATURES`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Features {
    pub values: Vec<f64>,
}

/// The fact as the features see it.
pub struct FactInput<'a> {
    pub text: &'a str,
    /// Index of the fact's evidence unit in reading order.
    pub unit: usize,
    pub category: &'a str,
    pub importance: f64,
    pub naturalness: f64,
}

fn share(
    fact: &std::collections::BTreeSet<String>,
    of: &std::collections::BTreeSet<String>,
) -> f64 {
    if fact.is_empty() {
        return 0.0;
    }
    fact.iter().filter(|t| of.contains(*t)).count() as f64 / fact.len() as f64
}

/// The features of one fact in its paper.
pub fn features(ctx: &PaperContext, f: &FactInput) -> Features {
    let toks = tokens(f.text);
    let class = ctx.class_of(f.unit);
    let n_units = ctx.units.len().max(1);
    // Repetition: other units that hold at least 60% of the fact's content words.
    let repeated = ctx
        .units
        .iter()
        .enumerate()
        .filter(|(i, u)| *i != f.unit && share(&toks, u) >= 0.6)
        .count();
    let words = f.text.split_whitespace().count().max(1);
    let mut v = Vec::with_capacity(FEATURES.len());
    for c in [
        SectionClass::Abstract,
        SectionClass::Intro,
        SectionClass::Related,
        SectionClass::Method,
        SectionClass::Experiments,
        SectionClass::Conclusion,
    ] {
        v.push(f64::from(u8::from(class == c)));
    }
    v.push(f.unit as f64 / n_units as f64);
    v.push(share(&toks, &ctx.title));
    v.push(share(&toks, &ctx.abstract_));
    v.push(share(&toks, &ctx.conclusion));
    v.push((1.0 + repeated as f64).ln());
    v.push(f64::from(u8::from(
        f.text.chars().any(|c| c.is_ascii_digit()),
    )));
    v.push((words as f64).ln());
    // One indicator per known category; "other" is the baseline.
    for cat in CATEGORIES.iter().filter(|c| **c != "other") {
        v.push(f64::from(u8::from(f.category == *cat)));
    }
    v.push(f.importance);
    v.push(f.naturalness);
    debug_assert_eq!(v.len(), FEATURES.len());
    Features { values: v }
}

/// The fitted model, as `training/fit_priors.py` writes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MentionModel {
    pub version: String,
    /// Must equal [`FEATURES`].
    pub features: Vec<String>,
    /// Per-feature standardisation used in fitting: z = (x − mean) / scale.
    pub mean: Vec<f64>,
    pub scale: Vec<f64>,
    pub weights: Vec<f64>,
    pub bias: f64,
    /// Co-mention lift exponent γ on J_lex (see the module docs).
    pub gamma: f64,
    /// Mention threshold the labels used (τ_mention).
    pub tau_mention: f64,
    /// Where it was fitted: papers, reviews, held-out calibration, command.
    pub provenance: String,
}

impl MentionModel {
    pub fn from_json(text: &str) -> Result<Self> {
        let m: MentionModel =
            serde_json::from_str(text).map_err(|e| Error::bundle(format!("mention model: {e}")))?;
        let n = FEATURES.len();
        if m.features
            .iter()
            .map(String::as_str)
            .ne(FEATURES.iter().copied())
            || m.mean.len() != n
            || m.scale.len() != n
            || m.weights.len() != n
        {
            return Err(Error::bundle(
                "mention model: its features are not this builder's".to_string(),
            ));
        }
        if m.scale.iter().any(|s| !s.is_finite() || *s <= 0.0)
            || !m.bias.is_finite()
            || !m.gamma.is_finite()
        {
            return Err(Error::bundle("mention model: bad coefficients".to_string()));
        }
        Ok(m)
    }

    /// The model shipped with this build.
    pub fn embedded() -> &'static MentionModel {
        static M: OnceLock<MentionModel> = OnceLock::new();
        M.get_or_init(|| {
            MentionModel::from_json(include_str!("mention_model.json"))
                .expect("embedded mention model is checked by its unit test")
        })
    }

    /// r_f = σ(b + Σ w·z).
    pub fn rate(&self, x: &Features) -> f64 {
        standardised_logistic(&x.values, &self.mean, &self.scale, &self.weights, self.bias)
    }
}

/// σ(b + Σ w·(x − mean)/scale): how the fitted logistic models (this one, the builder's
/// fact-quality model) score a feature vector.
pub fn standardised_logistic<'a>(
    x: impl IntoIterator<Item = &'a f64>,
    mean: &[f64],
    scale: &[f64],
    weights: &[f64],
    bias: f64,
) -> f64 {
    let z: f64 = x
        .into_iter()
        .zip(mean)
        .zip(scale)
        .zip(weights)
        .map(|(((x, m), s), w)| w * (x - m) / s)
        .sum::<f64>()
        + bias;
    1.0 / (1.0 + (-z).exp())
}

/// Learned co-mention rate of two facts of one paper (see the module docs).
pub fn co_mention(rf: f64, rg: f64, f_text: &str, g_text: &str, gamma: f64) -> f64 {
    (rf * rg * (gamma * jaccard_lex(f_text, g_text)).exp()).min(rf.min(rg))
}

/// φ coefficient of two Bernoulli indicators with rates rf, rg and joint rate `both`.
pub fn phi(rf: f64, rg: f64, both: f64) -> f64 {
    let d = (rf * (1.0 - rf) * rg * (1.0 - rg)).sqrt();
    if d <= 1e-12 {
        return 0.0;
    }
    ((both - rf * rg) / d).clamp(-1.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_model_matches_the_features() {
        let m = MentionModel::embedded();
        assert_eq!(m.weights.len(), FEATURES.len());
        assert!(m.provenance.contains("train"));
    }

    #[test]
    fn subsections_inherit_and_headings_decide() {
        let s = [
            None,
            Some("Abstract"),
            Some("1 Introduction"),
            Some("3 Our Method: Motion4D"),
            Some("3.2 Iterative Motion Refinement"),
            Some("4 Experiments"),
            Some("4.1 Segmentation"),
            Some("5 Conclusion"),
            Some("Acknowledgment"),
        ];
        use SectionClass::*;
        assert_eq!(
            section_classes(&s),
            vec![
                Other,
                Abstract,
                Intro,
                Method,
                Method,
                Experiments,
                Experiments,
                Conclusion,
                Other
            ]
        );
    }

    #[test]
    fn features_see_title_abstract_and_repetition() {
        let units = [
            (
                Some("Abstract"),
                "We propose sparse mixture routing for fast inference.",
            ),
            (
                Some("1 Introduction"),
                "Sparse mixture routing cuts inference cost by half.",
            ),
            (
                Some("4 Experiments"),
                "Routing cuts inference cost by half on ImageNet.",
            ),
            (Some("5 Conclusion"), "Sparse routing is fast."),
        ];
        let ctx = PaperContext::new("Sparse Mixture Routing", &units);
        let f = features(
            &ctx,
            &FactInput {
                text: "Sparse mixture routing cuts inference cost by half.",
                unit: 1,
                category: "result",
                importance: 0.7,
                naturalness: 0.6,
            },
        );
        let get = |n: &str| f.values[FEATURES.iter().position(|x| *x == n).unwrap()];
        assert_eq!(get("sec_intro"), 1.0);
        assert_eq!(get("cat_result"), 1.0);
        assert!((get("title_overlap") - 3.0 / 7.0).abs() < 1e-12);
        assert_eq!(get("repetition"), 2f64.ln()); // unit 2 holds 5 of 7 content words
        assert_eq!(get("has_number"), 0.0);
    }

    #[test]
    fn co_mention_is_a_joint_rate() {
        assert!((co_mention(0.2, 0.3, "alpha beta", "gamma delta", 2.0) - 0.06).abs() < 1e-12);
        // Identical wording: lifted, never above the rarer fact's rate.
        assert_eq!(co_mention(0.2, 0.3, "alpha beta", "alpha beta", 5.0), 0.2);
        assert_eq!(phi(0.2, 0.3, 0.06), 0.0);
        assert!(phi(0.2, 0.3, 0.2) > 0.5);
    }

    #[test]
    fn rejects_a_model_for_other_features() {
        let mut m = MentionModel::embedded().clone();
        m.features.pop();
        let text = serde_json::to_string(&m).unwrap();
        assert!(MentionModel::from_json(&text).is_err());
    }
}
