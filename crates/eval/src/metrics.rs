//! Detection metrics of the paper's protocol: ROC-AUC (ties count one half), empirical operating
//! points, and a cluster bootstrap over papers that keeps every draw of a sampled paper.
//!
//! Convention everywhere: a review is flagged when its score is strictly above the threshold.

use serde::{Deserialize, Serialize};

use semtrace_core::rng::Xoshiro256;

/// ROC-AUC = P(S⁺ > S⁻) + ½ P(S⁺ = S⁻) over all (positive, null) pairs (Mann–Whitney with
/// mid-ranks). `None` when either side is empty.
pub fn roc_auc(pos: &[f64], neg: &[f64]) -> Option<f64> {
    if pos.is_empty() || neg.is_empty() {
        return None;
    }
    let mut all: Vec<(f64, bool)> = pos
        .iter()
        .map(|&s| (s, true))
        .chain(neg.iter().map(|&s| (s, false)))
        .collect();
    all.sort_by(|a, b| a.0.total_cmp(&b.0));
    // Sum of the positives' mid-ranks (1-based).
    let mut rank_sum = 0.0;
    let mut i = 0;
    while i < all.len() {
        let mut j = i;
        while j < all.len() && all[j].0 == all[i].0 {
            j += 1;
        }
        let mid = (i + 1 + j) as f64 / 2.0;
        rank_sum += mid * all[i..j].iter().filter(|x| x.1).count() as f64;
        i = j;
    }
    let (np, nn) = (pos.len() as f64, neg.len() as f64);
    Some((rank_sum - np * (np + 1.0) / 2.0) / (np * nn))
}

/// The ROC curve's corners, from (0,0) to (1,1): one point per distinct threshold, ties moving
/// diagonally (so the area under the polyline equals [`roc_auc`]).
pub fn roc_curve(pos: &[f64], neg: &[f64]) -> Vec<(f64, f64)> {
    let mut thresholds: Vec<f64> = pos.iter().chain(neg).copied().collect();
    thresholds.sort_by(|a, b| b.total_cmp(a));
    thresholds.dedup();
    let mut pts = vec![(0.0, 0.0)];
    for t in thresholds {
        // Flagging S ≥ t: the point just below threshold t.
        pts.push((frac(neg, |s| s >= t), frac(pos, |s| s >= t)));
    }
    if pts.last() != Some(&(1.0, 1.0)) {
        pts.push((1.0, 1.0));
    }
    pts
}

fn frac(xs: &[f64], f: impl Fn(f64) -> bool) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    xs.iter().filter(|&&x| f(x)).count() as f64 / xs.len() as f64
}

/// TPR and FPR when reviews scoring strictly above `threshold` are flagged.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct OperatingPoint {
    pub threshold: f64,
    pub tpr: f64,
    pub fpr: f64,
}

pub fn operating_point(pos: &[f64], neg: &[f64], threshold: f64) -> OperatingPoint {
    OperatingPoint {
        threshold,
        tpr: frac(pos, |s| s > threshold),
        fpr: frac(neg, |s| s > threshold),
    }
}

/// The empirical zero-FPR point: threshold = the highest null score. `None` without nulls.
pub fn zero_fpr_point(pos: &[f64], neg: &[f64]) -> Option<OperatingPoint> {
    let t = neg.iter().copied().max_by(f64::total_cmp)?;
    Some(operating_point(pos, neg, t))
}

/// The lowest threshold (among null scores) whose FPR is at most `max_fpr`: the empirical point at
/// that FPR budget. `None` without nulls.
pub fn fpr_point(pos: &[f64], neg: &[f64], max_fpr: f64) -> Option<OperatingPoint> {
    let mut ts: Vec<f64> = neg.to_vec();
    ts.sort_by(f64::total_cmp);
    ts.dedup();
    ts.into_iter()
        .map(|t| operating_point(pos, neg, t))
        .find(|p| p.fpr <= max_fpr + 1e-12)
}

/// A percentile interval from the bootstrap distribution.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BootstrapCi {
    pub lo: f64,
    pub hi: f64,
    pub level: f64,
    /// Resamples drawn.
    pub resamples: usize,
    /// Resamples without a positive or without a null review (no AUC; left out of the interval).
    pub degenerate: usize,
    pub seed: u64,
}

/// One scored review for the bootstrap: its paper (the cluster), its label and its score.
#[derive(Debug, Clone, PartialEq)]
pub struct Scored<'a> {
    pub paper: &'a str,
    pub positive: bool,
    pub score: f64,
}

/// Cluster bootstrap of ROC-AUC over papers: each resample draws as many papers as there are,
/// with replacement, keeping all reviews of each drawn paper. Percentile interval at `level`
/// (linear interpolation between order statistics). Deterministic for a seed.
pub fn cluster_bootstrap_auc(
    items: &[Scored<'_>],
    resamples: usize,
    level: f64,
    seed: u64,
) -> Option<BootstrapCi> {
    let mut papers: Vec<&str> = items.iter().map(|s| s.paper).collect();
    papers.sort_unstable();
    papers.dedup();
    if papers.is_empty() || resamples == 0 {
        return None;
    }
    let by_paper: Vec<(Vec<f64>, Vec<f64>)> = papers
        .iter()
        .map(|p| {
            let of = |positive: bool| {
                items
                    .iter()
                    .filter(|s| s.paper == *p && s.positive == positive)
                    .map(|s| s.score)
                    .collect::<Vec<_>>()
            };
            (of(true), of(false))
        })
        .collect();
    let mut rng = Xoshiro256::seed_from_u64(seed);
    let mut aucs = Vec::with_capacity(resamples);
    let mut degenerate = 0;
    let (mut pos, mut neg) = (Vec::new(), Vec::new());
    for _ in 0..resamples {
        pos.clear();
        neg.clear();
        for _ in 0..papers.len() {
            let (p, n) = &by_paper[rng.below(papers.len() as u64) as usize];
            pos.extend_from_slice(p);
            neg.extend_from_slice(n);
        }
        match roc_auc(&pos, &neg) {
            Some(a) => aucs.push(a),
            None => degenerate += 1,
        }
    }
    if aucs.is_empty() {
        return None;
    }
    aucs.sort_by(f64::total_cmp);
    let tail = (1.0 - level) / 2.0;
    Some(BootstrapCi {
        lo: percentile(&aucs, tail),
        hi: percentile(&aucs, 1.0 - tail),
        level,
        resamples,
        degenerate,
        seed,
    })
}

/// Percentile `q` ∈ [0, 1] of sorted values, linear between order statistics (R's type 7).
pub fn percentile(sorted: &[f64], q: f64) -> f64 {
    let h = (sorted.len() - 1) as f64 * q.clamp(0.0, 1.0);
    let (i, frac) = (h.floor() as usize, h - h.floor());
    match sorted.get(i + 1) {
        Some(next) => sorted[i] + frac * (next - sorted[i]),
        None => sorted[i],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auc_counts_ties_as_one_half() {
        assert_eq!(roc_auc(&[3.0, 4.0], &[1.0, 2.0]), Some(1.0));
        assert_eq!(roc_auc(&[1.0, 2.0], &[3.0, 4.0]), Some(0.0));
        // Pairs: (2,1) win, (2,2) tie, (2,3) loss, (5,·) three wins: (3 + 1 + 0.5) / 6.
        assert_eq!(roc_auc(&[2.0, 5.0], &[1.0, 2.0, 3.0]), Some(4.5 / 6.0));
        // Every score equal (e.g. all ineligible at −13): exactly one half.
        assert_eq!(roc_auc(&[-13.0; 4], &[-13.0; 3]), Some(0.5));
        assert_eq!(roc_auc(&[], &[1.0]), None);
        assert_eq!(roc_auc(&[1.0], &[]), None);
    }

    #[test]
    fn curve_area_equals_auc() {
        let (pos, neg) = ([2.0, 5.0, 5.0, -1.0], [1.0, 2.0, 3.0, 5.0, -13.0]);
        let pts = roc_curve(&pos, &neg);
        assert_eq!(pts.first(), Some(&(0.0, 0.0)));
        assert_eq!(pts.last(), Some(&(1.0, 1.0)));
        let area: f64 = pts
            .windows(2)
            .map(|w| (w[1].0 - w[0].0) * (w[1].1 + w[0].1) / 2.0)
            .sum();
        assert!((area - roc_auc(&pos, &neg).unwrap()).abs() < 1e-12);
    }

    #[test]
    fn operating_points_flag_scores_strictly_above_the_threshold() {
        let pos = [10.0, 8.0, 4.0, 2.0];
        let neg = [4.0, 0.0, -2.0, -13.0];
        let z = zero_fpr_point(&pos, &neg).unwrap();
        assert_eq!((z.threshold, z.tpr, z.fpr), (4.0, 0.5, 0.0));
        // 25% budget: threshold 0 flags the null at 4 (FPR 1/4) and positives 10, 8, 4, 2.
        let p = fpr_point(&pos, &neg, 0.25).unwrap();
        assert_eq!((p.threshold, p.tpr, p.fpr), (0.0, 1.0, 0.25));
        let p = fpr_point(&pos, &neg, 0.05).unwrap();
        assert_eq!(p.threshold, 4.0);
        assert!(zero_fpr_point(&pos, &[]).is_none());
    }

    #[test]
    fn bootstrap_is_deterministic_and_a_single_paper_has_a_point_interval() {
        let s = |paper, positive, score| Scored {
            paper,
            positive,
            score,
        };
        let one = [s("a", true, 5.0), s("a", false, 1.0), s("a", true, 0.0)];
        let ci = cluster_bootstrap_auc(&one, 200, 0.95, 7).unwrap();
        let auc = roc_auc(&[5.0, 0.0], &[1.0]).unwrap();
        assert_eq!((ci.lo, ci.hi, ci.degenerate), (auc, auc, 0));

        let many: Vec<Scored> = (0..6)
            .flat_map(|i| {
                let p = ["p0", "p1", "p2", "p3", "p4", "p5"][i];
                [s(p, true, i as f64), s(p, false, 2.5)]
            })
            .collect();
        let a = cluster_bootstrap_auc(&many, 2000, 0.95, 42).unwrap();
        let b = cluster_bootstrap_auc(&many, 2000, 0.95, 42).unwrap();
        assert_eq!(a, b);
        let c = cluster_bootstrap_auc(&many, 2000, 0.95, 43).unwrap();
        assert!(a.lo <= c.hi && c.lo <= a.hi);
        let full = roc_auc(&[0.0, 1.0, 2.0, 3.0, 4.0, 5.0], &[2.5; 6]).unwrap();
        assert!(a.lo <= full && full <= a.hi && a.lo < a.hi);
    }

    #[test]
    fn bootstrap_without_nulls_has_no_interval() {
        let only = [Scored {
            paper: "a",
            positive: true,
            score: 1.0,
        }];
        assert!(cluster_bootstrap_auc(&only, 10, 0.95, 1).is_none());
    }

    #[test]
    fn percentile_interpolates_linearly() {
        let v = [1.0, 2.0, 3.0, 4.0, 5.0];
        assert_eq!(percentile(&v, 0.0), 1.0);
        assert_eq!(percentile(&v, 0.5), 3.0);
        assert_eq!(percentile(&v, 0.125), 1.5);
        assert_eq!(percentile(&v, 1.0), 5.0);
    }
}
