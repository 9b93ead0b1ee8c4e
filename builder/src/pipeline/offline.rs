//! Offline candidate facts (no LLM): extractive sentences and clauses of the evidence units.
//!
//! A candidate is a declarative sentence (or a `;`-separated clause) of the body that can stand
//! alone: ending in a full stop (its length is the structure gate's business), not opening with a word that needs the previous
//! sentence ("This", "They", "However", ...), and free of figure/table/equation references,
//! citations, URLs and heavy mathematics. The authors' voice is rewritten into a reviewer's
//! ("We propose" → "The paper proposes", "our model" → "the proposed model"; `voice`), and the
//! opener is judged on the rewrite, so "In this paper, we propose X" becomes a candidate; the
//! supporting quotation stays the verbatim source sentence, and the source-NLI gate checks the
//! rewrite. The `reviewer_facts` rules are applied by the first gate (so the report shows what
//! they dropped); candidates they exclude do not count towards the initial pass.
//!
//! Heuristic attributes (documented so the report can be audited):
//! - importance i: by section — abstract/introduction/conclusion 0.7, method/approach/model 0.6,
//!   experiments/results 0.55, background/related work 0.25, other 0.45 — plus 0.2 when the
//!   sentence states a contribution ("we propose/introduce/present/show"), capped at 1;
//! - verifiability v: 0.4, + 0.25 with a number, + 0.2 with a named entity or acronym (a
//!   capitalised token that does not start the sentence), − 0.2 with a hedge (may, might, could,
//!   likely, possibly), clipped to [0, 1];
//! - natural expressibility n: 1 − 0.1 per symbol-heavy token (digits mixed with letters,
//!   brackets, math symbols) − 0.03 per word beyond 28, clipped to [0, 1];
//! - sentiment: +0.2 per positive evaluative word (outperforms, superior, state-of-the-art,
//!   effective, significantly, novel, better, best, improves, ...), −0.2 per negative one (fails,
//!   worse, poor, limitation, unfortunately, ...), clipped to [−1, 1];
//! - rating impact: +0.2 per claim-of-superiority word (outperforms, state-of-the-art, best,
//!   significantly, first, superior, novel), −0.2 per admission (fails, limitation, worse,
//!   cannot, unable), clipped;
//! - category: the first matching keyword rule among limitation, comparison, result, data,
//!   setup, method, problem; "other" otherwise.
//!
//! Candidates are ranked by a pre-score 0.8i + 0.5v + 0.5n (the attribute part of B(f)); the
//! initial pass takes the best `initial` of them, round-robin over units so that no unit floods
//! the pool; the refill pass takes the rest, from units not yet covered.

use semtrace_core::segment;

use super::candidate::{Attributes, Candidate};
use super::{reviewer_facts, voice};
use crate::source::EvidenceUnit;

/// Sentence openings that point back to earlier text.
const DEPENDENT_OPENERS: &[&str] = &[
    "note",
    "notice",
    "recall",
    "next",
    "first",
    "second",
    "third",
    "lastly",
    "specifically",
    "namely",
    "importantly",
    "this",
    "these",
    "those",
    "that",
    "it",
    "its",
    "they",
    "their",
    "them",
    "such",
    "however",
    "moreover",
    "furthermore",
    "therefore",
    "thus",
    "hence",
    "also",
    "additionally",
    "similarly",
    "finally",
    "then",
    "here",
    "there",
    "he",
    "she",
    "both",
    "another",
    "other",
    "in",
    "on",
    "instead",
    "meanwhile",
    "again",
    "and",
    "but",
    "or",
    "so",
    "as",
    "for",
    "unlike",
    "consequently",
    "nevertheless",
    "nonetheless",
    "accordingly",
    "besides",
    "likewise",
    "otherwise",
    "still",
];

const POSITIVE: &[&str] = &[
    "outperform",
    "outperforms",
    "outperformed",
    "superior",
    "state-of-the-art",
    "effective",
    "effectively",
    "significantly",
    "significant",
    "novel",
    "better",
    "best",
    "improves",
    "improved",
    "improvement",
    "improvements",
    "impressive",
    "excellent",
    "strong",
    "robust",
    "efficient",
    "successful",
    "successfully",
    "remarkable",
    "substantially",
    "promising",
];
const NEGATIVE: &[&str] = &[
    "fail",
    "fails",
    "failed",
    "worse",
    "worst",
    "poor",
    "poorly",
    "limitation",
    "limitations",
    "unfortunately",
    "weak",
    "weakness",
    "drawback",
    "drawbacks",
    "inferior",
    "degrade",
    "degrades",
    "unable",
    "cannot",
    "problematic",
    "costly",
    "expensive",
];
const SUPERIORITY: &[&str] = &[
    "outperform",
    "outperforms",
    "outperformed",
    "state-of-the-art",
    "best",
    "significantly",
    "first",
    "superior",
    "novel",
    "substantially",
];
const ADMISSION: &[&str] = &[
    "fail",
    "fails",
    "failed",
    "limitation",
    "limitations",
    "worse",
    "cannot",
    "unable",
    "drawback",
];
const HEDGES: &[&str] = &[
    "may",
    "might",
    "could",
    "likely",
    "possibly",
    "perhaps",
    "presumably",
];

/// Keyword rules for the category, tried in this order (word prefixes, lowercase).
const CATEGORY_RULES: &[(&str, &[&str])] = &[
    (
        "limitation",
        &[
            "limitation",
            "fail",
            "cannot",
            "unable",
            "restricted",
            "drawback",
        ],
    ),
    (
        "comparison",
        &[
            "outperform",
            "compared",
            "comparison",
            "baseline",
            "than",
            "versus",
            "relative to",
        ],
    ),
    (
        "result",
        &[
            "accuracy",
            "achiev",
            "result",
            "improv",
            "score",
            "error rate",
            "perplexity",
            "bleu",
            "f1",
            "%",
            "percent",
            "reduc",
            "increas",
        ],
    ),
    (
        "data",
        &[
            "dataset",
            "corpus",
            "corpora",
            "benchmark",
            "collected",
            "annotat",
            "samples",
            "examples",
        ],
    ),
    (
        "setup",
        &[
            "train",
            "hyperparameter",
            "learning rate",
            "batch",
            "epoch",
            "gpu",
            "optimiz",
            "implement",
            "initializ",
            "setting",
        ],
    ),
    (
        "method",
        &[
            "propose",
            "model",
            "architecture",
            "algorithm",
            "method",
            "layer",
            "network",
            "approach",
            "objective",
            "loss",
            "encoder",
            "decoder",
            "framework",
        ],
    ),
    (
        "problem",
        &["problem", "challenge", "task", "goal", "aim", "question"],
    ),
];

/// Extract offline candidates. `initial` bounds the first pass (not counting candidates the
/// `reviewer_facts` rules exclude: they enter it so the report records them, but take no place
/// of a fact); the rest is returned as the refill reserve, in rank order.
pub fn extract(units: &[EvidenceUnit], initial: usize) -> (Vec<Candidate>, Vec<Candidate>) {
    let mut per_unit: Vec<Vec<(f64, Candidate)>> = Vec::new();
    for unit in units {
        let mut mine = Vec::new();
        for sentence in segment::sentences(&unit.text) {
            for clause in clauses(&sentence.text) {
                if let Some(c) = candidate_from(&clause, unit) {
                    let a = &c.attributes;
                    let pre = 0.8 * a.importance + 0.5 * a.verifiability + 0.5 * a.naturalness;
                    mine.push((pre, c));
                }
            }
        }
        mine.sort_by(|a, b| b.0.total_cmp(&a.0));
        per_unit.push(mine);
    }
    // Round-robin by rank within each unit, units ordered by their best candidate: the initial pass
    // covers many units before it takes a unit's second sentence.
    let mut order: Vec<usize> = (0..per_unit.len())
        .filter(|&u| !per_unit[u].is_empty())
        .collect();
    order.sort_by(|&a, &b| {
        per_unit[b][0]
            .0
            .total_cmp(&per_unit[a][0].0)
            .then(a.cmp(&b))
    });
    let mut ranked = Vec::new();
    let depth = per_unit.iter().map(Vec::len).max().unwrap_or(0);
    for round in 0..depth {
        let mut tier: Vec<&(f64, Candidate)> = order
            .iter()
            .filter_map(|&u| per_unit[u].get(round))
            .collect();
        tier.sort_by(|a, b| b.0.total_cmp(&a.0));
        ranked.extend(tier.into_iter().map(|(_, c)| c.clone()));
    }
    let sections: std::collections::HashMap<&str, Option<&str>> = units
        .iter()
        .map(|u| (u.id.as_str(), u.section.as_deref()))
        .collect();
    let mut eligible = 0;
    let cut = ranked
        .iter()
        .position(|c| {
            let section = sections.get(c.unit.as_str()).copied().flatten();
            if reviewer_facts::check(&c.text, &c.quote, section).is_none() {
                eligible += 1;
            }
            eligible > initial
        })
        .unwrap_or(ranked.len());
    let rest = ranked.split_off(cut);
    (ranked, rest)
}

/// A sentence, or its `;`-separated clauses when each could stand alone.
fn clauses(sentence: &str) -> Vec<String> {
    let s = sentence.trim();
    if !s.contains("; ") {
        return vec![s.to_string()];
    }
    let parts: Vec<&str> = s.split("; ").collect();
    let mut out = vec![s.to_string()];
    for (i, p) in parts.iter().enumerate() {
        let mut c = p.trim().to_string();
        if c.is_empty() {
            continue;
        }
        if i + 1 < parts.len() {
            c.push('.');
        }
        out.push(c);
    }
    out
}

fn words_lower(text: &str) -> Vec<String> {
    text.split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric() && c != '-' && c != '%')
                .to_lowercase()
        })
        .filter(|w| !w.is_empty())
        .collect()
}

fn has_any(words: &[String], list: &[&str]) -> usize {
    words.iter().filter(|w| list.contains(&w.as_str())).count()
}

fn unwanted(text: &str, lower: &str) -> bool {
    const MARKERS: &[&str] = &[
        "figure",
        "fig.",
        "table",
        "tab.",
        "eq.",
        "equation",
        "section",
        "sec.",
        "appendix",
        "http",
        "www.",
        "et al",
        "[",
        "]",
        "algorithm ",
        "theorem",
        "lemma",
        "proof",
        "corollary",
        "e.g.",
        "i.e.",
        "see ",
        "footnote",
        "arxiv",
        "doi",
        "@",
        "below",
        "above",
        "following",
        "as follows",
        "in this section",
    ];
    if MARKERS.iter().any(|m| lower.contains(m)) {
        return true;
    }
    // Mathematics and layout debris: too many non-alphanumeric symbols or one-letter tokens.
    let symbols = text
        .chars()
        .filter(|c| "=+*/^_{}|<>∑∏∫√≤≥≈∈∀∃→←∂∇λαβγδεθμσπφψω".contains(*c))
        .count();
    let single = text
        .split_whitespace()
        .filter(|w| {
            w.chars().filter(|c| c.is_alphabetic()).count() == 1 && !matches!(*w, "a" | "A")
        })
        .count();
    symbols > 0 || single > 2 || text.contains("  ")
}

fn candidate_from(sentence: &str, unit: &EvidenceUnit) -> Option<Candidate> {
    let s = sentence.trim();
    // Length is left to the structure gate (12–35 words), so the report shows what it dropped.
    if !s.ends_with('.') && !s.ends_with('。') || s.ends_with("..") {
        return None;
    }
    let first = s.chars().next()?;
    if !first.is_uppercase() {
        return None;
    }
    let lower = s.to_lowercase();
    // The opener is judged after the voice rewrite: "In this paper, we propose" opens with "The".
    let text = voice::rewrite(s);
    let opener = text
        .to_lowercase()
        .split_whitespace()
        .next()
        .unwrap_or("")
        .trim_matches(|c: char| !c.is_alphanumeric())
        .to_string();
    if DEPENDENT_OPENERS.contains(&opener.as_str()) || unwanted(s, &lower) {
        return None;
    }
    // Captions and list labels ("Setup: ...") are not statements.
    if s.split_whitespace().take(4).any(|w| w.ends_with(':')) {
        return None;
    }
    let words = words_lower(s);
    Some(Candidate {
        id: String::new(),
        text,
        quote: s.trim_end_matches('.').to_string(),
        unit: unit.id.clone(),
        origin: "offline".into(),
        attributes: attributes(s, &words, unit.section.as_deref()),
    })
}

fn attributes(s: &str, words: &[String], section: Option<&str>) -> Attributes {
    let sec = section.unwrap_or("").to_lowercase();
    let mut importance: f64 = if [
        "abstract",
        "introduction",
        "conclusion",
        "summary",
        "discussion",
    ]
    .iter()
    .any(|k| sec.contains(k))
    {
        0.7
    } else if [
        "method",
        "approach",
        "model",
        "architecture",
        "framework",
        "algorithm",
    ]
    .iter()
    .any(|k| sec.contains(k))
    {
        0.6
    } else if ["experiment", "result", "evaluation", "analysis", "ablation"]
        .iter()
        .any(|k| sec.contains(k))
    {
        0.55
    } else if ["related", "background", "prior work", "preliminar"]
        .iter()
        .any(|k| sec.contains(k))
    {
        0.25
    } else {
        0.45
    };
    let lower = s.to_lowercase();
    if [
        "we propose",
        "we introduce",
        "we present",
        "we show",
        "we demonstrate",
        "we find",
    ]
    .iter()
    .any(|k| lower.contains(k))
    {
        importance += 0.2;
    }
    let has_number = s.chars().any(|c| c.is_ascii_digit());
    let named = s
        .split_whitespace()
        .skip(1)
        .any(|w| w.chars().next().is_some_and(char::is_uppercase));
    let hedged = has_any(words, HEDGES) > 0;
    let verifiability: f64 =
        0.4 + if has_number { 0.25 } else { 0.0 } + if named { 0.2 } else { 0.0 }
            - if hedged { 0.2 } else { 0.0 };
    let heavy = s
        .split_whitespace()
        .filter(|w| {
            let digits = w.chars().any(|c| c.is_ascii_digit());
            let letters = w.chars().any(char::is_alphabetic);
            (digits && letters) || w.contains('(') || w.contains(')')
        })
        .count();
    let n_words = words.len();
    let naturalness = 1.0 - 0.1 * heavy as f64 - 0.03 * n_words.saturating_sub(28) as f64;
    let pos = has_any(words, POSITIVE) as f64;
    let neg = has_any(words, NEGATIVE) as f64;
    let sup = has_any(words, SUPERIORITY) as f64;
    let adm = has_any(words, ADMISSION) as f64;
    let category = CATEGORY_RULES
        .iter()
        .find(|(_, keys)| keys.iter().any(|k| lower.contains(k)))
        .map(|(c, _)| *c)
        .unwrap_or("other");
    Attributes {
        importance: importance.clamp(0.0, 1.0),
        verifiability: verifiability.clamp(0.0, 1.0),
        naturalness: naturalness.clamp(0.0, 1.0),
        sentiment: (0.2 * (pos - neg)).clamp(-1.0, 1.0),
        rating_impact: (0.2 * (sup - adm)).clamp(-1.0, 1.0),
        category: category.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(text: &str, section: &str) -> EvidenceUnit {
        EvidenceUnit {
            id: "p1.u1".into(),
            page: 1,
            section: Some(section.into()),
            text: text.into(),
        }
    }

    #[test]
    fn keeps_self_contained_declaratives_and_rewrites_first_person() {
        let u = unit(
            "We propose a new network architecture, the Transformer, based solely on attention \
             mechanisms and dispensing with recurrence entirely. This makes it fast. \
             It is trained on eight GPUs for twelve hours using the standard WMT 2014 English-German data.",
            "Introduction",
        );
        let (c, rest) = extract(&[u], 10);
        assert!(rest.is_empty());
        assert_eq!(c.len(), 1, "{c:?}");
        assert!(c[0]
            .text
            .starts_with("The paper proposes a new network architecture"));
        assert!(c[0].quote.starts_with("We propose a new network"));
        assert!(!c[0].quote.ends_with('.'));
        assert_eq!(c[0].attributes.category, "method");
        assert!(c[0].attributes.importance > 0.85);
    }

    #[test]
    fn drops_references_to_figures_citations_and_math() {
        let u = unit(
            "Figure 3 shows the attention weights of the encoder layers on a long validation sentence. \
             The loss is computed as L = sum_i x_i + y_i over all the positions of the decoder sequence. \
             Prior approaches [12] relied on recurrent networks to model long range dependencies in text.",
            "Method",
        );
        assert!(extract(&[u], 10).0.is_empty());
    }

    #[test]
    fn evaluative_words_move_sentiment_and_rating_impact() {
        let u = unit(
            "The proposed model significantly outperforms the best previously reported ensembles on the WMT 2014 English-to-German task.",
            "Results",
        );
        let (c, _) = extract(&[u], 10);
        assert_eq!(c.len(), 1);
        assert!(c[0].attributes.sentiment >= 0.4, "{:?}", c[0].attributes);
        assert!(c[0].attributes.rating_impact > 0.35);
        assert_eq!(c[0].attributes.category, "comparison");
    }

    #[test]
    fn initial_pass_spreads_over_units() {
        let s = "The encoder maps an input sequence of symbol representations to a sequence of continuous representations.";
        let units: Vec<EvidenceUnit> = (0..3)
            .map(|i| EvidenceUnit {
                id: format!("p1.u{i}"),
                page: 1,
                section: Some("Method".into()),
                text: format!("{s} {s}"),
            })
            .collect();
        let (first, rest) = extract(&units, 3);
        let mut ids: Vec<&str> = first.iter().map(|c| c.unit.as_str()).collect();
        ids.sort();
        assert_eq!(ids, ["p1.u0", "p1.u1", "p1.u2"]);
        assert_eq!(rest.len(), 3);
    }

    #[test]
    fn self_reference_frames_become_the_paper_and_exclusions_take_no_initial_place() {
        let good = "In this paper, we propose a retrieval model that ranks passages with a learned sparse index of terms.";
        // Excluded by the reviewer-fact rules (an acknowledgement): it still enters the first pass,
        // so the report shows why it was dropped, but it does not use up the one place there.
        let thanks = "We thank the anonymous reviewers of the conference for their insightful comments on an earlier draft.";
        let u = unit(&format!("{thanks} {good}"), "Introduction");
        let (first, rest) = extract(&[u], 1);
        assert!(rest.is_empty(), "{rest:?}");
        let texts: Vec<&str> = first.iter().map(|c| c.text.as_str()).collect();
        assert!(texts.contains(
            &"The paper proposes a retrieval model that ranks passages with a learned sparse index of terms."
        ), "{texts:?}");
        assert!(
            texts.iter().any(|t| t.starts_with("The authors thank")),
            "{texts:?}"
        );
        let quotes: Vec<&str> = first.iter().map(|c| c.quote.as_str()).collect();
        assert!(quotes
            .iter()
            .any(|q| q.starts_with("In this paper, we propose")));
    }
}
