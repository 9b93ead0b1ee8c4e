//! Natural mention priors from selection-only controls (paper, "Estimating Natural Mention
//! Priors"): how often a fact shows up in reviews written without the carrier.

/// r_f = (#{k : q_k ≥ τ} + 1) / (N + 2): add-one smoothing, so no fact is ever judged certain
/// to be (or never to be) mentioned from a handful of controls; N = 0 gives ½.
pub fn mention_rate(q: &[f64], tau_mention: f64) -> f64 {
    let hits = q.iter().filter(|&&x| x >= tau_mention).count();
    (hits as f64 + 1.0) / (q.len() as f64 + 2.0)
}

/// C_co(f, g): fraction of controls in which both facts are covered (q ≥ τ). Controls are
/// matched by index; if the vectors differ in length only the common prefix counts. 0 when
/// there are no controls (no evidence of co-occurrence).
pub fn co_coverage(qf: &[f64], qg: &[f64], tau: f64) -> f64 {
    let n = qf.len().min(qg.len());
    if n == 0 {
        return 0.0;
    }
    let both = qf
        .iter()
        .zip(qg)
        .filter(|&(&a, &b)| a >= tau && b >= tau)
        .count();
    both as f64 / n as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use semtrace_core::params::TAU_MIN;

    #[test]
    fn mention_rate_add_one_smoothing() {
        assert_eq!(mention_rate(&[], TAU_MIN), 0.5);
        let q = [0.9, 0.1, 0.52, 0.51, 0.0, 0.0, 0.0, 0.0];
        assert!((mention_rate(&q, TAU_MIN) - 3.0 / 10.0).abs() < 1e-15);
        assert!((mention_rate(&[0.0; 8], TAU_MIN) - 0.1).abs() < 1e-15);
        assert!((mention_rate(&[1.0; 8], TAU_MIN) - 0.9).abs() < 1e-15);
    }

    #[test]
    fn co_coverage_counts_joint_hits() {
        assert_eq!(co_coverage(&[], &[], TAU_MIN), 0.0);
        let a = [0.9, 0.9, 0.1, 0.6];
        let b = [0.9, 0.1, 0.9, 0.52];
        assert!((co_coverage(&a, &b, TAU_MIN) - 0.5).abs() < 1e-15);
    }
}
