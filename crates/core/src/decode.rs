//! Semantic bit decoding with explicit erasures, the assigned-code score and its p-value
//! (paper, section "Semantic Bit Decoding with NLI"; appendix "Detection Details").

use serde::{Deserialize, Serialize};

use crate::bundle::DecodingParams;

/// Why a position was erased. Checked in the paper's order: both, absent, ambiguous.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Erasure {
    /// s0 ≥ τ_both and s1 ≥ τ_both: evidence for both alternatives.
    Both,
    /// max(s0, s1) < τ_min: no evidence.
    Absent,
    /// |s1 − s0| ≤ margin: insufficient separation.
    Ambiguous,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Decision {
    Bit(u8),
    Erased(Erasure),
}

impl Decision {
    pub fn bit(self) -> Option<u8> {
        match self {
            Decision::Bit(b) => Some(b),
            Decision::Erased(_) => None,
        }
    }
    pub fn erasure(self) -> Option<Erasure> {
        match self {
            Decision::Bit(_) => None,
            Decision::Erased(e) => Some(e),
        }
    }
}

/// Decode one position from its two side scores s_{j,0}, s_{j,1}.
pub fn decide(s0: f64, s1: f64, p: &DecodingParams) -> Decision {
    if s0 >= p.tau_both && s1 >= p.tau_both {
        Decision::Erased(Erasure::Both)
    } else if s0.max(s1) < p.tau_min {
        Decision::Erased(Erasure::Absent)
    } else if (s1 - s0).abs() <= p.margin {
        Decision::Erased(Erasure::Ambiguous)
    } else {
        Decision::Bit(u8::from(s1 > s0))
    }
}

/// Summary of the decisions against the assigned codeword.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Score {
    /// O: non-erased positions.
    pub observed: usize,
    /// M: observed positions that match the codeword.
    pub matched: usize,
    /// U = O − M.
    pub mismatched: usize,
    /// O ≥ O_min.
    pub eligible: bool,
    /// S = 2M − O when eligible, else the bundle's ineligible score.
    pub score: i64,
    /// P(X ≥ M) for X ~ Binomial(O, 1/2): the chance of at least M matches if every observed
    /// bit agreed with the codeword by a fair coin (H0). 1 when O = 0.
    pub p_value: f64,
}

pub fn score(decisions: &[Decision], codeword: &[u8], p: &DecodingParams) -> Score {
    let mut observed = 0;
    let mut matched = 0;
    for (d, &c) in decisions.iter().zip(codeword) {
        if let Some(b) = d.bit() {
            observed += 1;
            if b == c {
                matched += 1;
            }
        }
    }
    let eligible = observed >= p.o_min;
    let score = if eligible {
        2 * matched as i64 - observed as i64
    } else {
        p.ineligible_score
    };
    Score {
        observed,
        matched,
        mismatched: observed - matched,
        eligible,
        score,
        p_value: binomial_upper_tail(observed, matched),
    }
}

/// P(X ≥ m) for X ~ Binomial(n, 1/2), exact for the small n used here (n ≤ a few hundred).
pub fn binomial_upper_tail(n: usize, m: usize) -> f64 {
    if m == 0 {
        return 1.0;
    }
    if m > n {
        return 0.0;
    }
    // Sum C(n, i) / 2^n in log space to stay finite for large n.
    let ln_half_n = -(n as f64) * std::f64::consts::LN_2;
    let mut ln_c = ln_choose(n, m);
    let mut total = 0.0;
    for i in m..=n {
        total += (ln_c + ln_half_n).exp();
        // C(n, i+1) = C(n, i) · (n − i) / (i + 1)
        if i < n {
            ln_c += ((n - i) as f64).ln() - ((i + 1) as f64).ln();
        }
    }
    total.min(1.0)
}

/// The fewest matches out of `observed` whose p-value is ≤ `alpha` (None: not even all of
/// them). With `observed` = K this is what an `exposed` verdict needs at best; the smallest
/// attainable p-value of a bundle is `binomial_upper_tail(K, K)` = 2^−K.
pub fn matches_needed(observed: usize, alpha: f64) -> Option<usize> {
    (0..=observed).find(|&m| binomial_upper_tail(observed, m) <= alpha)
}

fn ln_choose(n: usize, k: usize) -> f64 {
    let k = k.min(n - k);
    (0..k)
        .map(|i| ((n - i) as f64).ln() - ((i + 1) as f64).ln())
        .sum()
}

/// The verdict a person reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Eligible, and the matches are unlikely under H0 (p ≤ α).
    Exposed,
    /// Eligible, but the matches are compatible with chance.
    NotExposed,
    /// Fewer than O_min positions observed: no assigned-code decision is made.
    Ineligible,
}

pub fn verdict(s: &Score, alpha: f64) -> Verdict {
    if !s.eligible {
        Verdict::Ineligible
    } else if s.p_value <= alpha {
        Verdict::Exposed
    } else {
        Verdict::NotExposed
    }
}

/// What a position can still be decoded as once more of its pairs are scored. A side's score is
/// the maximum over its pairs, so it can only rise: from `s` up to 1 while the side has unscored
/// pairs (`open`), nowhere otherwise. Exact for [`decide`]'s regions, not a bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reachable {
    pub bit0: bool,
    pub bit1: bool,
    /// `both`, `absent` or `ambiguous`.
    pub erasure: bool,
}

pub fn reachable(s0: f64, s1: f64, open0: bool, open1: bool, p: &DecodingParams) -> Reachable {
    let hi0 = if open0 { 1.0 } else { s0 };
    let hi1 = if open1 { 1.0 } else { s1 };
    // A bit needs its side above the other by more than the margin and over τ_min, and the other
    // side under τ_both (else `both`); the other side at its lowest and its own at its highest is
    // the best attempt.
    let bit1 = s0 < p.tau_both && hi1 >= p.tau_min && hi1 - s0 > p.margin;
    let bit0 = s1 < p.tau_both && hi0 >= p.tau_min && hi0 - s1 > p.margin;
    let erasure = (hi0 >= p.tau_both && hi1 >= p.tau_both)
        || (s0 < p.tau_min && s1 < p.tau_min)
        // The two ranges come within the margin: a point there is ambiguous, absent or both.
        || (s0 - hi1 <= p.margin && s1 - hi0 <= p.margin);
    Reachable {
        bit0,
        bit1,
        erasure,
    }
}

/// The verdict that every way of scoring the remaining pairs leads to, when they all lead to the
/// same one (`None` otherwise). The p-value only rises from a match to an erasure to a mismatch,
/// position by position, so the worst case for `exposed` takes each position's worst reachable
/// outcome and the best case its best: exact, not a bound. Per-reviewer copies (Holm across
/// codewords) are not covered: callers pass a single codeword.
pub fn settled_verdict(
    reach: &[Reachable],
    codeword: &[u8],
    p: &DecodingParams,
) -> Option<Verdict> {
    let (mut fewest, mut most) = (0, 0);
    let (mut worst_o, mut worst_m, mut best_o, mut best_m) = (0, 0, 0, 0);
    for (r, &c) in reach.iter().zip(codeword) {
        let (hit, miss) = if c == 0 {
            (r.bit0, r.bit1)
        } else {
            (r.bit1, r.bit0)
        };
        fewest += usize::from(!r.erasure);
        most += usize::from(hit || miss);
        if miss {
            worst_o += 1;
        } else if !r.erasure {
            worst_o += 1;
            worst_m += 1;
        }
        if hit {
            best_o += 1;
            best_m += 1;
        } else if !r.erasure {
            best_o += 1;
        }
    }
    if most < p.o_min {
        return Some(Verdict::Ineligible);
    }
    if fewest < p.o_min {
        return None;
    }
    if binomial_upper_tail(worst_o, worst_m) <= p.alpha {
        Some(Verdict::Exposed)
    } else if binomial_upper_tail(best_o, best_m) > p.alpha {
        Some(Verdict::NotExposed)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p() -> DecodingParams {
        DecodingParams::exact12()
    }

    const E: f64 = 1e-9;

    /// Reproducible draws in [0, 1) for the brute-force checks below: the crate's own PRNG.
    fn draws(seed: u64) -> impl FnMut() -> f64 {
        let mut rng = crate::rng::Xoshiro256::seed_from_u64(seed);
        move || rng.next_f64()
    }

    #[test]
    fn reachable_is_exactly_what_rising_side_scores_can_decide() {
        let p = p();
        let mut u = draws(7);
        // Scores on and beside the thresholds, and anywhere.
        let edges = [
            0.0, 0.3, 0.32, 0.52, 0.5199, 0.7, 0.72, 0.7201, 0.9, 0.8999, 1.0,
        ];
        let mut pick = || {
            if u() < 0.5 {
                edges[(u() * edges.len() as f64) as usize % edges.len()]
            } else {
                u()
            }
        };
        let mut seen = [0usize; 3];
        for case in 0..3000 {
            let (s0, s1) = (pick(), pick());
            let (open0, open1) = ((case % 4) & 1 == 1, (case % 4) & 2 == 2);
            let r = reachable(s0, s1, open0, open1, &p);
            let range = |s: f64, open: bool| -> Vec<f64> {
                if !open {
                    return vec![s];
                }
                // A grid, the thresholds and the other side's margin points, inside [s, 1].
                let mut v: Vec<f64> = (0..=400).map(|i| i as f64 / 400.0).collect();
                for t in [
                    p.tau_min,
                    p.tau_both,
                    s0 + p.margin,
                    s1 + p.margin,
                    s0 - p.margin,
                    s1 - p.margin,
                ] {
                    v.extend([t - 1e-9, t, t + 1e-9]);
                }
                v.push(s);
                v.into_iter().filter(|&x| x >= s && x <= 1.0).collect()
            };
            let (xs, ys) = (range(s0, open0), range(s1, open1));
            let mut found = Reachable {
                bit0: false,
                bit1: false,
                erasure: false,
            };
            for &x in &xs {
                // Each y, and the x nearest to it: where the ambiguous band is reached first.
                for &y in ys
                    .iter()
                    .chain([x.clamp(s1, if open1 { 1.0 } else { s1 })].iter())
                {
                    match decide(x, y, &p) {
                        Decision::Bit(0) => found.bit0 = true,
                        Decision::Bit(_) => found.bit1 = true,
                        Decision::Erased(_) => found.erasure = true,
                    }
                }
            }
            assert_eq!(r, found, "s0 {s0} s1 {s1} open {open0} {open1}");
            seen[0] += usize::from(r.bit0 && r.bit1);
            seen[1] += usize::from(r.erasure && (r.bit0 || r.bit1));
            seen[2] += usize::from(!r.erasure);
        }
        assert!(seen.iter().all(|&n| n > 50), "{seen:?}");
    }

    #[test]
    fn a_settled_verdict_is_the_one_every_completion_gives() {
        let mut u = draws(11);
        let (mut settled, mut open) = ([0usize; 3], 0);
        for _ in 0..1500 {
            let k = 7;
            let p = DecodingParams {
                o_min: 2 + (u() * 5.0) as usize,
                alpha: [0.01, 0.05, 0.2][(u() * 3.0) as usize % 3],
                ..DecodingParams::exact12()
            };
            let codeword: Vec<u8> = (0..k).map(|_| u8::from(u() < 0.5)).collect();
            // Each position's reachable outcomes: one to three of bit 0, bit 1, erasure.
            // Mostly the codeword's bit, so that `exposed` occurs too.
            let reach: Vec<Reachable> = (0..k)
                .map(|j| loop {
                    let (hit, miss) = (u() < 0.8, u() < 0.2);
                    let r = Reachable {
                        bit0: if codeword[j] == 0 { hit } else { miss },
                        bit1: if codeword[j] == 1 { hit } else { miss },
                        erasure: u() < 0.4,
                    };
                    if r.bit0 || r.bit1 || r.erasure {
                        break r;
                    }
                })
                .collect();
            let mut verdicts = std::collections::BTreeSet::new();
            let mut choice = vec![0usize; k];
            'all: loop {
                let decisions: Option<Vec<Decision>> = reach
                    .iter()
                    .zip(&choice)
                    .map(|(r, &c)| {
                        [
                            r.bit0.then_some(Decision::Bit(0)),
                            r.bit1.then_some(Decision::Bit(1)),
                            r.erasure.then_some(Decision::Erased(Erasure::Absent)),
                        ][c]
                    })
                    .collect();
                if let Some(d) = decisions {
                    verdicts.insert(format!("{:?}", verdict(&score(&d, &codeword, &p), p.alpha)));
                }
                for c in choice.iter_mut() {
                    *c += 1;
                    if *c < 3 {
                        continue 'all;
                    }
                    *c = 0;
                }
                break;
            }
            let got = settled_verdict(&reach, &codeword, &p);
            match got {
                Some(v) => {
                    assert_eq!(verdicts.len(), 1, "{reach:?} {codeword:?}");
                    assert_eq!(verdicts.first(), Some(&format!("{v:?}")));
                    settled[v as usize] += 1;
                }
                None => {
                    assert!(verdicts.len() > 1, "{reach:?} {codeword:?} {verdicts:?}");
                    open += 1;
                }
            }
        }
        assert!(
            settled.iter().all(|&n| n > 20) && open > 20,
            "{settled:?} {open}"
        );
    }

    #[test]
    fn both_rule_at_and_around_tau_both() {
        let p = p();
        assert_eq!(decide(0.90, 0.90, &p), Decision::Erased(Erasure::Both));
        assert_eq!(decide(0.95, 0.99, &p), Decision::Erased(Erasure::Both));
        // Just below τ_both on one side: not "both"; then margin decides (0.04 ≤ 0.20 → ambiguous).
        assert_eq!(
            decide(0.90 - E, 0.94, &p),
            Decision::Erased(Erasure::Ambiguous)
        );
        assert_eq!(
            decide(0.99, 0.90 - E, &p),
            Decision::Erased(Erasure::Ambiguous)
        );
    }

    #[test]
    fn absent_rule_at_and_around_tau_min() {
        let p = p();
        assert_eq!(decide(0.0, 0.52 - E, &p), Decision::Erased(Erasure::Absent));
        assert_eq!(decide(0.51, 0.10, &p), Decision::Erased(Erasure::Absent));
        // Exactly τ_min is not absent (rule is max < τ_min); with margin 0.42 it decodes.
        assert_eq!(decide(0.10, 0.52, &p), Decision::Bit(1));
        assert_eq!(decide(0.52, 0.10, &p), Decision::Bit(0));
    }

    #[test]
    fn margin_rule_at_and_around_the_margin() {
        let p = p();
        // |s1 − s0| = 0.20 exactly (representable comparison with a tiny slack) → ambiguous.
        assert_eq!(decide(0.40, 0.60, &p), Decision::Erased(Erasure::Ambiguous));
        assert_eq!(
            decide(0.60 + 0.25, 0.60 + 0.05, &p),
            Decision::Erased(Erasure::Ambiguous)
        );
        assert_eq!(decide(0.39, 0.60, &p), Decision::Bit(1));
        assert_eq!(decide(0.80, 0.59, &p), Decision::Bit(0));
        assert_eq!(decide(0.60, 0.40 - 1e-6, &p), Decision::Bit(0));
    }

    #[test]
    fn rule_order_both_before_absent_before_margin() {
        let p = DecodingParams {
            tau_both: 0.3,
            ..p()
        };
        // Both ≥ 0.3 and max < τ_min: "both" wins because it is checked first.
        assert_eq!(decide(0.4, 0.45, &p), Decision::Erased(Erasure::Both));
    }

    #[test]
    fn clear_decisions() {
        let p = p();
        assert_eq!(decide(0.05, 0.97, &p), Decision::Bit(1));
        assert_eq!(decide(0.97, 0.05, &p), Decision::Bit(0));
        assert_eq!(decide(0.89, 0.10, &p), Decision::Bit(0));
    }

    #[test]
    fn score_eligible_and_ineligible() {
        let p = p();
        let cw = [0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1];
        // 8 observed, 7 matching → S = 2·7 − 8 = 6.
        let mut ds: Vec<Decision> = cw.iter().map(|&b| Decision::Bit(b)).collect();
        for d in ds.iter_mut().skip(8) {
            *d = Decision::Erased(Erasure::Absent);
        }
        ds[0] = Decision::Bit(1);
        let s = score(&ds, &cw, &p);
        assert_eq!(
            (s.observed, s.matched, s.mismatched, s.eligible, s.score),
            (8, 7, 1, true, 6)
        );
        assert!((s.p_value - 9.0 / 256.0).abs() < 1e-12);
        // 7 observed → ineligible, score −13, whatever matches.
        ds[7] = Decision::Erased(Erasure::Ambiguous);
        let s = score(&ds, &cw, &p);
        assert_eq!((s.observed, s.eligible, s.score), (7, false, -13));
        assert_eq!(verdict(&s, 0.01), Verdict::Ineligible);
    }

    #[test]
    fn all_match_and_all_mismatch() {
        let p = p();
        let cw = [1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0];
        let good: Vec<_> = cw.iter().map(|&b| Decision::Bit(b)).collect();
        let s = score(&good, &cw, &p);
        assert_eq!((s.score, s.observed, s.matched), (12, 12, 12));
        assert!((s.p_value - 1.0 / 4096.0).abs() < 1e-15);
        assert_eq!(verdict(&s, 0.01), Verdict::Exposed);
        let bad: Vec<_> = cw.iter().map(|&b| Decision::Bit(1 - b)).collect();
        let s = score(&bad, &cw, &p);
        assert_eq!((s.score, s.matched), (-12, 0));
        assert_eq!(s.p_value, 1.0);
        // K = 12 at α = 0.01: 8/8, 10/11 or 11/12 (docs/method.md); K = 24: 19/24; 6/6 never.
        assert_eq!(matches_needed(8, 0.01), Some(8));
        assert_eq!(matches_needed(11, 0.01), Some(10));
        assert_eq!(matches_needed(12, 0.01), Some(11));
        assert_eq!(matches_needed(24, 0.01), Some(19));
        assert_eq!(matches_needed(6, 0.01), None);
        assert_eq!(matches_needed(0, 0.01), None);
        assert_eq!(verdict(&s, 0.01), Verdict::NotExposed);
    }

    #[test]
    fn binomial_tail_values() {
        assert_eq!(binomial_upper_tail(0, 0), 1.0);
        assert!((binomial_upper_tail(12, 11) - 13.0 / 4096.0).abs() < 1e-15);
        assert!((binomial_upper_tail(10, 5) - 638.0 / 1024.0).abs() < 1e-12);
        assert_eq!(binomial_upper_tail(3, 4), 0.0);
        // Large n stays finite and sane: P(X ≥ 500 | n = 1000) ≈ 0.5126.
        let v = binomial_upper_tail(1000, 500);
        assert!((v - 0.51261).abs() < 1e-4, "{v}");
    }
}
