//! Reliable, non-redundant fact selection by greedy maximal marginal relevance (paper,
//! "Selecting Reliable and Nonredundant Facts"; Exact-12 coefficients).
//!
//! Utility B(f) = 1.2e + 0.8i + 0.5v + 0.5n + 1.0(1 − r) rewards support and rarity under
//! controls; redundancy R(f, g) = 0.6·max(0, corr(q_f, q_g)) + 0.4·J_lex(f, g) discourages
//! facts that are mentioned together (behavioural) or worded alike (lexical).

use serde::{Deserialize, Serialize};

use super::facts::FactAttrs;
use super::lexical::jaccard_lex;
use super::mention::{co_mention, phi};
use semtrace_core::error::{Error, Result};
use semtrace_core::params::{ALPHA_E, ALPHA_I, ALPHA_N, ALPHA_R, ALPHA_V, BETA_CORR, BETA_LEX};

/// B(f).
pub fn utility(f: &FactAttrs) -> f64 {
    ALPHA_E * f.e + ALPHA_I * f.i + ALPHA_V * f.v + ALPHA_N * f.n + ALPHA_R * (1.0 - f.r)
}

/// Pearson correlation; 0 when the vectors are empty, of different lengths, or either is
/// (numerically) constant, since then co-variation says nothing.
pub fn pearson(x: &[f64], y: &[f64]) -> f64 {
    if x.len() != y.len() || x.len() < 2 {
        return 0.0;
    }
    let n = x.len() as f64;
    let mx = x.iter().sum::<f64>() / n;
    let my = y.iter().sum::<f64>() / n;
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in x.iter().zip(y) {
        sxy += (a - mx) * (b - my);
        sxx += (a - mx) * (a - mx);
        syy += (b - my) * (b - my);
    }
    if sxx <= 1e-18 || syy <= 1e-18 {
        return 0.0;
    }
    (sxy / (sxx * syy).sqrt()).clamp(-1.0, 1.0)
}

/// R(f, g) = 0.6·max(0, corr(q_f, q_g)) + 0.4·J_lex(text_f, text_g). Without controls but
/// with learned priors, corr is the φ of the two predicted mention indicators
/// ([`super::mention`]).
pub fn redundancy(f: &FactAttrs, g: &FactAttrs) -> f64 {
    let corr = match (f.co_gamma, g.co_gamma) {
        (Some(gamma), Some(_)) if f.q.is_empty() && g.q.is_empty() => {
            phi(f.r, g.r, co_mention(f.r, g.r, &f.text, &g.text, gamma))
        }
        _ => pearson(&f.q, &g.q),
    };
    BETA_CORR * corr.max(0.0) + BETA_LEX * jaccard_lex(&f.text, &g.text)
}

/// One greedy MMR step, kept for the build report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MmrPick {
    /// Index into the candidate slice.
    pub index: usize,
    pub utility: f64,
    /// max_{g ∈ S} R(f, g) over the facts picked before (0 for the first pick).
    pub max_redundancy: f64,
    /// The already-picked candidate reaching `max_redundancy` (None for the first pick).
    pub most_redundant_with: Option<usize>,
    /// utility − λ·max_redundancy: the score that won this step.
    pub score: f64,
}

/// Greedy MMR: repeatedly pick the candidate maximising B(f) − λ·max_{g∈S} R(f, g); ties go
/// to the lower index. Returns the `m` picks in pick order. Errors if `m` exceeds the pool.
pub fn mmr_select(cands: &[FactAttrs], m: usize, lambda: f64) -> Result<Vec<MmrPick>> {
    if m > cands.len() {
        return Err(Error::bundle(format!(
            "cannot select {m} facts from {} candidates",
            cands.len()
        )));
    }
    let util: Vec<f64> = cands.iter().map(utility).collect();
    let mut max_red = vec![0.0f64; cands.len()];
    let mut red_with: Vec<Option<usize>> = vec![None; cands.len()];
    let mut taken = vec![false; cands.len()];
    let mut picks = Vec::with_capacity(m);
    for _ in 0..m {
        let mut best: Option<(usize, f64)> = None;
        for (f, &u) in util.iter().enumerate() {
            if taken[f] {
                continue;
            }
            let score = u - lambda * max_red[f];
            if best.is_none_or(|(_, s)| score > s) {
                best = Some((f, score));
            }
        }
        let (f, score) = best.expect("m <= number of candidates");
        taken[f] = true;
        picks.push(MmrPick {
            index: f,
            utility: util[f],
            max_redundancy: max_red[f],
            most_redundant_with: red_with[f],
            score,
        });
        for g in 0..cands.len() {
            if !taken[g] {
                let r = redundancy(&cands[g], &cands[f]);
                if red_with[g].is_none() || r > max_red[g] {
                    max_red[g] = r;
                    red_with[g] = Some(f);
                }
            }
        }
    }
    Ok(picks)
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn fact(id: &str, text: &str, e: f64, r: f64, q: Vec<f64>) -> FactAttrs {
        FactAttrs {
            id: id.into(),
            text: text.into(),
            e,
            i: 0.5,
            v: 0.5,
            n: 0.5,
            r,
            q,
            category: "method".into(),
            sentiment: 0.0,
            rating_impact: 0.0,
            co_gamma: None,
        }
    }

    #[test]
    fn utility_uses_frozen_weights() {
        let f = FactAttrs {
            i: 0.25,
            v: 1.0,
            n: 0.0,
            ..fact("a", "x", 0.5, 0.2, vec![])
        };
        let want = 1.2 * 0.5 + 0.8 * 0.25 + 0.5 * 1.0 + 0.5 * 0.0 + 1.0 * 0.8;
        assert!((utility(&f) - want).abs() < 1e-15);
    }

    #[test]
    fn pearson_edge_cases() {
        assert_eq!(pearson(&[], &[]), 0.0);
        assert_eq!(pearson(&[0.3; 5], &[0.1, 0.2, 0.3, 0.4, 0.5]), 0.0);
        assert!((pearson(&[1.0, 2.0, 3.0], &[2.0, 4.0, 6.0]) - 1.0).abs() < 1e-12);
        assert!((pearson(&[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0]) + 1.0).abs() < 1e-12);
    }

    #[test]
    fn learned_priors_make_alike_facts_redundant() {
        let learned = |id: &str, text: &str| FactAttrs {
            co_gamma: Some(3.0),
            ..fact(id, text, 0.9, 0.3, vec![])
        };
        let a = learned("a", "sparse routing halves inference cost");
        let b = learned("b", "sparse routing halves inference cost on ImageNet");
        let c = learned("c", "the dataset has ten thousand images");
        // Alike wording: lifted co-mention, positive φ on top of J_lex.
        let lex = BETA_LEX * jaccard_lex(&a.text, &b.text);
        assert!(redundancy(&a, &b) > lex + 0.1);
        // Unrelated wording: independence, φ = 0, R is J_lex alone (0 here).
        assert_eq!(redundancy(&a, &c), 0.0);
        // Without the learned model nothing behavioural is known.
        let plain = fact("b", &b.text, 0.9, 0.3, vec![]);
        assert!((redundancy(&fact("a", &a.text, 0.9, 0.3, vec![]), &plain) - lex).abs() < 1e-15);
    }

    #[test]
    fn redundancy_ignores_negative_correlation() {
        let f = fact("a", "alpha beta", 1.0, 0.1, vec![0.1, 0.9, 0.5]);
        let g = fact("b", "gamma delta", 1.0, 0.1, vec![0.9, 0.1, 0.5]);
        assert_eq!(redundancy(&f, &g), 0.0);
        let h = fact("c", "alpha beta", 1.0, 0.1, vec![0.1, 0.9, 0.5]);
        assert!((redundancy(&f, &h) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn mmr_prefers_utility_then_penalises_redundancy() {
        let c = vec![
            fact("a", "encoder stacks six identical layers", 0.9, 0.1, vec![]),
            fact("b", "encoder stacks six identical layers", 0.9, 0.1, vec![]),
            fact("c", "training used eight gpus for days", 0.8, 0.1, vec![]),
            fact("d", "dropout rate equals point one", 0.8, 0.1, vec![]),
        ];
        let picks = mmr_select(&c, 3, semtrace_core::params::LAMBDA_MMR).unwrap();
        let idx: Vec<usize> = picks.iter().map(|p| p.index).collect();
        // a first (tie with b broken by index), then c, then d beats the duplicate b.
        assert_eq!(idx, vec![0, 2, 3]);
        assert_eq!(picks[0].max_redundancy, 0.0);
        assert_eq!(picks[0].most_redundant_with, None);
        assert!(
            (picks[1].score - (picks[1].utility - 1.2 * picks[1].max_redundancy)).abs() < 1e-15
        );
        assert!(mmr_select(&c, 5, semtrace_core::params::LAMBDA_MMR).is_err());
        assert!(mmr_select(&c, 0, semtrace_core::params::LAMBDA_MMR)
            .unwrap()
            .is_empty());
    }
}
