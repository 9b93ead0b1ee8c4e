//! Null calibration of the p-value over keyed selections.
//!
//! With keyed selection (bundle format 1.2) pairs and slots do not depend on the secret; only
//! which side of each pair is asked for does, through an independent fair bit per position
//! ([`crate::codeword::selection_bits`]). A review written without the protected copy
//! (H0) has decoded decisions that do not depend on the secret either, so one decoding of it
//! can be scored against any number of secrets: for each secret the matches are the positions
//! whose decoded fact is the one that secret selects. The empirical rate of p ≤ α over reviews ×
//! secrets must then be at most α (super-uniform p-values); this module counts it.

use serde::Serialize;

use crate::bundle::Bundle;
use crate::codeword::selection_bits;
use crate::decode::binomial_upper_tail;
use crate::error::{Error, Result};

/// The levels the calibration table reports.
pub const ALPHAS: [f64; 3] = [0.05, 0.01, 0.001];

/// Key of the `i`-th simulated venue secret.
pub fn simulated_secret(i: usize) -> Vec<u8> {
    format!("semtrace-calibration-secret-{i}").into_bytes()
}

/// For each position, the side of the decoded fact in a secret-free order of the pair (fact
/// ids sorted; side 0 first on a tie), or None when erased. `decisions[j]` is the decoded label
/// bit of position j (the report's "0" / "1"), which names a fact through the bundle.
pub fn stated_sides(bundle: &Bundle, decisions: &[Option<u8>]) -> Result<Vec<Option<u8>>> {
    if decisions.len() != bundle.positions.len() {
        return Err(Error::bundle(format!(
            "{} decisions for {} positions",
            decisions.len(),
            bundle.positions.len()
        )));
    }
    Ok(bundle
        .positions
        .iter()
        .zip(decisions)
        .map(|(p, d)| d.map(|b| p.flip_secret_free_order(b)))
        .collect())
}

/// Counts over (review, secret) draws.
#[derive(Debug, Default, Clone, PartialEq, Serialize)]
pub struct NullCalibration {
    pub reviews: usize,
    pub draws: usize,
    /// Draws with p ≤ α, per [`ALPHAS`].
    pub p_at_most: [usize; 3],
    /// Draws that the verdict would call exposed at α: eligible (O ≥ o_min) and p ≤ α.
    pub exposed: [usize; 3],
}

impl NullCalibration {
    /// Scores one review's stated sides ([`stated_sides`]) against `secrets` simulated secrets.
    pub fn add(&mut self, bundle: &Bundle, stated: &[Option<u8>], secrets: usize) -> Result<()> {
        let k = stated.len();
        let observed = stated.iter().flatten().count();
        let eligible = observed >= bundle.decoding.o_min;
        let tail: Vec<f64> = (0..=observed)
            .map(|m| binomial_upper_tail(observed, m))
            .collect();
        for i in 0..secrets {
            let sel = selection_bits(k, &simulated_secret(i), &bundle.document.sha256)?;
            let matched = stated
                .iter()
                .zip(&sel)
                .filter(|(s, &bit)| **s == Some(bit))
                .count();
            let p = tail[matched];
            for (a, &alpha) in ALPHAS.iter().enumerate() {
                if p <= alpha {
                    self.p_at_most[a] += 1;
                    self.exposed[a] += usize::from(eligible);
                }
            }
        }
        self.reviews += 1;
        self.draws += secrets;
        Ok(())
    }

    pub fn rate(&self, count: usize) -> f64 {
        count as f64 / self.draws.max(1) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::tests_support::bundle_with_slots;
    use crate::slots::default_slots;

    #[test]
    fn stated_sides_name_facts_not_labels() {
        let mut b = bundle_with_slots(&default_slots(2), &[0, 1]);
        // Position 1's facts stored in reverse id order: label 0 is the larger id.
        b.positions[1].facts.swap(0, 1);
        let s = stated_sides(&b, &[Some(1), Some(1)]).unwrap();
        assert_eq!(s, vec![Some(1), Some(0)]);
        assert_eq!(
            stated_sides(&b, &[None, Some(0)]).unwrap(),
            vec![None, Some(1)]
        );
        assert!(stated_sides(&b, &[None]).is_err());
    }

    #[test]
    fn fully_observed_null_rejects_at_the_binomial_rate() {
        // O = 12 observed on every draw: P(p ≤ 0.05) = P(M ≥ 10) = 79/4096 = 0.0193,
        // P(p ≤ 0.01) = P(M ≥ 11) = 13/4096, P(p ≤ 0.001) = P(M = 12) = 1/4096.
        let b = bundle_with_slots(&default_slots(12), &[0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1]);
        let mut c = NullCalibration::default();
        c.add(&b, &[Some(0); 12], 20_000).unwrap();
        let want: [f64; 3] = [79.0 / 4096.0, 13.0 / 4096.0, 1.0 / 4096.0];
        for (a, w) in want.iter().enumerate() {
            let sd = (w * (1.0 - w) / 20_000.0).sqrt();
            let got = c.rate(c.p_at_most[a]);
            assert!(
                (got - w).abs() < 5.0 * sd + 1e-4,
                "alpha {}: {got} vs {w}",
                ALPHAS[a]
            );
            assert!(got <= ALPHAS[a]);
        }
        // o_min of the test bundle is 1, so every draw is eligible.
        assert_eq!(c.exposed, c.p_at_most);
        assert_eq!((c.reviews, c.draws), (1, 20_000));
    }

    #[test]
    fn ineligible_reviews_are_never_exposed() {
        let mut b = bundle_with_slots(&default_slots(12), &[0; 12]);
        b.decoding.o_min = 8;
        let mut stated = vec![None; 12];
        stated[..4].fill(Some(1));
        let mut c = NullCalibration::default();
        c.add(&b, &stated, 500).unwrap();
        // O = 4 < o_min; and 4 of 4 matching gives p = 1/16 > 0.05 anyway.
        assert_eq!(c.exposed, [0, 0, 0]);
        assert_eq!(c.p_at_most, [0, 0, 0]);
    }
}
