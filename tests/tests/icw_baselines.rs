//! The in-context watermark baselines' detectors on real reviews (../shared/corpus/reviews): each
//! must separate text carrying its own watermark from the unmarked originals.
//!
//! The marked texts are made deterministically from the same real reviews, the way a compliant
//! LLM would carry each watermark (no LLM here): zero-width marks after sentences; real review
//! sentences whose initials spell the acrostic put first; red-initial words thinned; red
//! vocabulary words swapped for green ones plus one sentence of green words.

use semtrace_core::segment::sentences;
use semtrace_e2e::corpus_review_texts;
use semtrace_eval::icw::{IcwKind, IcwSecret, LEXICAL_VOCABULARY};
use semtrace_eval::metrics::{roc_auc, zero_fpr_point};

const DOC: &str = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";

fn real_reviews(n: usize) -> Vec<String> {
    corpus_review_texts()
        .into_iter()
        .filter(|t| t.split_whitespace().count() >= 250)
        .take(n)
        .collect()
}

fn mark(secret: &IcwSecret, review: &str, pool: &[String]) -> String {
    match secret {
        IcwSecret::Unicode { mark } => {
            let mut out = String::new();
            let mut at = 0;
            for s in sentences(review) {
                out.push_str(&review[at..s.end]);
                out.push(*mark);
                at = s.end;
            }
            out.push_str(&review[at..]);
            out
        }
        IcwSecret::Acrostic { sequence } => {
            // For each letter, the first real sentence (from other reviews) starting with it.
            let mut lead = Vec::new();
            for c in sequence.chars() {
                let s = pool
                    .iter()
                    .flat_map(|r| sentences(r))
                    .map(|s| s.text)
                    .find(|t| {
                        t.starts_with(c) && t.split_whitespace().count() > 4 && !lead.contains(t)
                    })
                    .unwrap_or_else(|| format!("{c}lso, the evaluation is adequate."));
                lead.push(s);
            }
            format!("{}\n\n{review}", lead.join(" "))
        }
        IcwSecret::Initials { green } => {
            // Drop every other word whose initial letter is red.
            let mut red_seen = 0;
            review
                .split_whitespace()
                .filter(|w| {
                    let first = w
                        .chars()
                        .find(|c| c.is_alphabetic())
                        .map(|c| c.to_ascii_lowercase());
                    match first {
                        Some(c) if c.is_ascii_lowercase() && !green.contains(&c) => {
                            red_seen += 1;
                            red_seen % 2 == 0
                        }
                        _ => true,
                    }
                })
                .collect::<Vec<_>>()
                .join(" ")
        }
        IcwSecret::Lexical { green } => {
            let mut i = 0;
            let swapped: Vec<String> = review
                .split_whitespace()
                .map(|w| {
                    let bare = w
                        .trim_matches(|c: char| !c.is_alphanumeric())
                        .to_lowercase();
                    if LEXICAL_VOCABULARY.contains(&bare.as_str()) && !green.contains(&bare) {
                        i += 1;
                        w.to_lowercase().replace(&bare, &green[i % green.len()])
                    } else {
                        w.to_string()
                    }
                })
                .collect();
            format!(
                "{} Overall, the work is {}, {} and {}.",
                swapped.join(" "),
                green[0],
                green[1],
                green[2]
            )
        }
    }
}

#[test]
fn each_baseline_detector_separates_its_watermark_from_real_unmarked_reviews() {
    let reviews = real_reviews(40);
    assert_eq!(reviews.len(), 40);
    let (used, pool) = reviews.split_at(30);
    for kind in IcwKind::ALL {
        let secret = IcwSecret::derive(kind, b"venue secret", DOC).unwrap();
        let unmarked: Vec<f64> = used.iter().map(|r| secret.score(r)).collect();
        let marked: Vec<f64> = used
            .iter()
            .map(|r| secret.score(&mark(&secret, r, pool)))
            .collect();
        let auc = roc_auc(&marked, &unmarked).unwrap();
        let zero = zero_fpr_point(&marked, &unmarked).unwrap();
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        eprintln!(
            "{}: AUC {auc:.3}, TPR at zero FPR {:.2}, mean unmarked {:.2}, marked {:.2}",
            kind.method(),
            zero.tpr,
            mean(&unmarked),
            mean(&marked)
        );
        assert!(auc >= 0.95, "{}: AUC {auc}", kind.method());
        assert!(
            zero.tpr >= 0.8,
            "{}: TPR at zero FPR {}",
            kind.method(),
            zero.tpr
        );
        // The z-tests are calibrated on natural text: unmarked reviews stay near 0 on average.
        if matches!(kind, IcwKind::Lexical | IcwKind::Initials) {
            assert!(
                mean(&unmarked).abs() < 1.5,
                "{}: mean unmarked z {}",
                kind.method(),
                mean(&unmarked)
            );
        }
    }
}
