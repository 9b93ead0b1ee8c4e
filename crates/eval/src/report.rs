//! Per-condition summaries of scored reviews, the Markdown report in the paper's table layout and
//! SVG ROC curves.

use std::collections::BTreeMap;
use std::fmt::Write;

use serde::{Deserialize, Serialize};

use super::metrics::{
    cluster_bootstrap_auc, fpr_point, operating_point, roc_auc, roc_curve, zero_fpr_point,
    BootstrapCi, OperatingPoint, Scored,
};
use super::{Label, ReviewRecord};

/// The clean (unattacked) condition; attacks are evaluated at its frozen threshold.
pub const CLEAN: &str = "clean";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SummaryOptions {
    /// Bootstrap resamples (B).
    pub resamples: usize,
    /// Confidence level of the bootstrap interval.
    pub level: f64,
    pub seed: u64,
    /// The second operating point's FPR budget (the paper's 5%).
    pub fpr_budget: f64,
}

impl Default for SummaryOptions {
    fn default() -> Self {
        SummaryOptions {
            resamples: 2000,
            level: 0.95,
            seed: 1,
            fpr_budget: 0.05,
        }
    }
}

/// Everything reported for one (method, condition).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConditionSummary {
    pub method: String,
    pub condition: String,
    pub papers: usize,
    pub positives: usize,
    pub nulls: usize,
    /// The condition whose null reviews were used: its own, or the clean ones when it has none
    /// (an attack applied to positive reviews only).
    pub nulls_from: String,
    pub roc_auc: Option<f64>,
    pub roc_auc_ci: Option<BootstrapCi>,
    pub zero_fpr: Option<OperatingPoint>,
    pub fpr_budget: f64,
    pub at_fpr_budget: Option<OperatingPoint>,
    /// The method's clean zero-FPR threshold, frozen, applied to this condition.
    pub at_clean_threshold: Option<OperatingPoint>,
    pub mean_observed_positive: Option<f64>,
    pub mean_observed_null: Option<f64>,
    /// ΣM / ΣO over positive reviews: agreement of non-erased bits with the assigned codeword.
    pub bit_accuracy_positive: Option<f64>,
    /// Mean of S⁺ − S⁻ over draws that have both members.
    pub mean_paired_difference: Option<f64>,
    pub pairs: usize,
    /// ROC corners (FPR, TPR).
    pub roc: Vec<(f64, f64)>,
    /// Ids of the review lines these numbers come from (positives, then nulls).
    pub reviews: Vec<String>,
}

fn mean(xs: impl Iterator<Item = f64>) -> Option<f64> {
    let (mut s, mut n) = (0.0, 0usize);
    for x in xs {
        s += x;
        n += 1;
    }
    (n > 0).then(|| s / n as f64)
}

/// Methods in order of first appearance with "semtrace" first; per method, "clean" first.
fn keys(records: &[ReviewRecord]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for r in records {
        let k = (r.method.clone(), r.condition.clone());
        if !out.contains(&k) {
            out.push(k);
        }
    }
    let first_seen: Vec<String> = out.iter().map(|k| k.0.clone()).collect();
    let rank = |m: &str| {
        (
            m != "semtrace",
            first_seen.iter().position(|x| x == m).unwrap_or(0),
        )
    };
    out.sort_by_key(|(m, c)| (rank(m), c != CLEAN));
    out
}

/// Summaries of every (method, condition) present, in report order.
pub fn summarize(records: &[ReviewRecord], opts: &SummaryOptions) -> Vec<ConditionSummary> {
    let pick = |m: &str, c: &str, l: Label| -> Vec<&ReviewRecord> {
        records
            .iter()
            .filter(|r| r.method == m && r.condition == c && r.label == l)
            .collect()
    };
    let mut clean_threshold: BTreeMap<String, f64> = BTreeMap::new();
    let mut out = Vec::new();
    for (method, condition) in keys(records) {
        let pos = pick(&method, &condition, Label::Positive);
        let mut nulls_from = condition.clone();
        let mut neg = pick(&method, &condition, Label::Null);
        if neg.is_empty() && condition != CLEAN {
            neg = pick(&method, CLEAN, Label::Null);
            nulls_from = CLEAN.to_string();
        }
        let ps: Vec<f64> = pos.iter().map(|r| r.score).collect();
        let ns: Vec<f64> = neg.iter().map(|r| r.score).collect();
        let zero = zero_fpr_point(&ps, &ns);
        if condition == CLEAN {
            if let Some(z) = zero {
                clean_threshold.insert(method.clone(), z.threshold);
            }
        }
        let scored: Vec<Scored> = pos
            .iter()
            .chain(&neg)
            .map(|r| Scored {
                paper: &r.paper,
                positive: r.label == Label::Positive,
                score: r.score,
            })
            .collect();
        let mut papers: Vec<&str> = scored.iter().map(|s| s.paper).collect();
        papers.sort_unstable();
        papers.dedup();
        let (sum_m, sum_o) = pos.iter().fold((0usize, 0usize), |(m, o), r| {
            (m + r.matched.unwrap_or(0), o + r.observed.unwrap_or(0))
        });
        let has_bits = pos.iter().any(|r| r.observed.is_some());
        let diffs: Vec<f64> = pos
            .iter()
            .filter_map(|p| {
                neg.iter()
                    .find(|n| n.paper == p.paper && n.draw == p.draw && n.condition == p.condition)
                    .map(|n| p.score - n.score)
            })
            .collect();
        out.push(ConditionSummary {
            papers: papers.len(),
            positives: ps.len(),
            nulls: ns.len(),
            nulls_from,
            roc_auc: roc_auc(&ps, &ns),
            roc_auc_ci: cluster_bootstrap_auc(&scored, opts.resamples, opts.level, opts.seed),
            zero_fpr: zero,
            fpr_budget: opts.fpr_budget,
            at_fpr_budget: fpr_point(&ps, &ns, opts.fpr_budget),
            at_clean_threshold: clean_threshold
                .get(&method)
                .map(|&t| operating_point(&ps, &ns, t)),
            mean_observed_positive: mean(pos.iter().filter_map(|r| r.observed.map(|o| o as f64))),
            mean_observed_null: mean(neg.iter().filter_map(|r| r.observed.map(|o| o as f64))),
            bit_accuracy_positive: (has_bits && sum_o > 0).then(|| sum_m as f64 / sum_o as f64),
            mean_paired_difference: mean(diffs.iter().copied()),
            pairs: diffs.len(),
            roc: if ps.is_empty() || ns.is_empty() {
                Vec::new()
            } else {
                roc_curve(&ps, &ns)
            },
            reviews: pos.iter().chain(&neg).map(|r| r.id.clone()).collect(),
            method,
            condition,
        });
    }
    out
}

fn f3(x: Option<f64>) -> String {
    x.map_or("–".into(), |v| format!("{v:.3}"))
}
fn f2(x: Option<f64>) -> String {
    x.map_or("–".into(), |v| format!("{v:.2}"))
}
fn signed(x: Option<f64>) -> String {
    x.map_or("–".into(), |v| format!("{v:+.2}"))
}

/// File name of a condition's ROC curve.
pub fn roc_file_name(s: &ConditionSummary) -> String {
    let clean = |x: &str| {
        x.chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect::<String>()
    };
    format!("roc-{}-{}.svg", clean(&s.method), clean(&s.condition))
}

/// The Markdown report: clean detection (paper Table 1, one column per method), robustness at the
/// frozen clean threshold (paper Table 2), and where every number comes from.
pub fn markdown(title: &str, summaries: &[ConditionSummary], opts: &SummaryOptions) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "# {title}\n");
    let clean: Vec<&ConditionSummary> = summaries.iter().filter(|s| s.condition == CLEAN).collect();
    if !clean.is_empty() {
        let _ = writeln!(md, "## Clean detection\n");
        let _ = write!(md, "| |");
        for s in &clean {
            let _ = write!(md, " {} |", s.method);
        }
        let _ = write!(md, "\n|---|");
        for _ in &clean {
            let _ = write!(md, "---|");
        }
        md.push('\n');
        let ci = |s: &ConditionSummary| {
            s.roc_auc_ci
                .as_ref()
                .map_or("–".into(), |c| format!("[{:.3}, {:.3}]", c.lo, c.hi))
        };
        let tpr = |p: &Option<OperatingPoint>| f2(p.map(|p| p.tpr));
        type Row<'a> = (&'a str, Box<dyn Fn(&ConditionSummary) -> String>);
        let rows: Vec<Row> = vec![
            ("ROC-AUC", Box::new(|s| f3(s.roc_auc))),
            ("95% cluster CI", Box::new(ci)),
            ("Zero-FPR TPR", Box::new(move |s| tpr(&s.zero_fpr))),
            (
                "TPR at 5% FPR",
                Box::new(move |s| f2(s.at_fpr_budget.map(|p| p.tpr))),
            ),
            (
                "Positive observed bits",
                Box::new(|s| f2(s.mean_observed_positive)),
            ),
            (
                "Control observed bits",
                Box::new(|s| f2(s.mean_observed_null)),
            ),
            (
                "Positive bit accuracy",
                Box::new(|s| {
                    s.bit_accuracy_positive
                        .map_or("–".into(), |v| format!("{v:.4}"))
                }),
            ),
            (
                "Paired score difference",
                Box::new(|s| signed(s.mean_paired_difference)),
            ),
            (
                "Reviews (positive / null)",
                Box::new(|s| format!("{} / {}", s.positives, s.nulls)),
            ),
            ("Papers", Box::new(|s| s.papers.to_string())),
        ];
        for (name, f) in rows {
            let _ = write!(md, "| {name} |");
            for s in &clean {
                let _ = write!(md, " {} |", f(s));
            }
            md.push('\n');
        }
        md.push('\n');
    }
    let attacked: Vec<&ConditionSummary> =
        summaries.iter().filter(|s| s.condition != CLEAN).collect();
    if !attacked.is_empty() {
        let _ = writeln!(md, "## Robustness (frozen clean threshold)\n");
        let _ = writeln!(
            md,
            "| Method | Attack | ROC-AUC | TPR@clean thr. | FPR@clean thr. | Obs. bits | Nulls from |"
        );
        let _ = writeln!(md, "|---|---|---|---|---|---|---|");
        for s in attacked {
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {} | {} | {} |",
                s.method,
                s.condition,
                f3(s.roc_auc),
                f2(s.at_clean_threshold.map(|p| p.tpr)),
                f2(s.at_clean_threshold.map(|p| p.fpr)),
                f2(s.mean_observed_positive),
                s.nulls_from
            );
        }
        md.push('\n');
    }
    let _ = writeln!(md, "## Where the numbers come from\n");
    let _ = writeln!(
        md,
        "Every figure above is computed from the lines of `reviews.jsonl` with the same `method` and \
         `condition` (their ids are listed per condition in `report.json`). A review is flagged when its \
         score is strictly above the threshold; ROC-AUC counts ties as one half; the interval is a \
         percentile cluster bootstrap over papers (B = {}, seed {}, all draws of a sampled paper kept). \
         Zero-FPR and {:.0}%-FPR points are empirical, on the evaluation data itself.\n",
        opts.resamples,
        opts.seed,
        opts.fpr_budget * 100.0
    );
    for s in summaries {
        let _ = writeln!(
            md,
            "- {} / {}: {} positive and {} null reviews from {} papers; ROC curve `{}`",
            s.method,
            s.condition,
            s.positives,
            s.nulls,
            s.papers,
            roc_file_name(s)
        );
    }
    md
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A standalone SVG of one condition's ROC curve (axes, chance diagonal, AUC in the title).
pub fn roc_svg(s: &ConditionSummary) -> String {
    let (w, h, m) = (420.0, 420.0, 50.0);
    let (pw, ph) = (w - 1.5 * m, h - 2.0 * m);
    let x = |f: f64| m + f * pw;
    let y = |t: f64| h - m - t * ph;
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(svg, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
    let title = format!(
        "{} — {}: ROC-AUC {} ({} pos / {} null)",
        s.method,
        s.condition,
        f3(s.roc_auc),
        s.positives,
        s.nulls
    );
    let _ = writeln!(
        svg,
        r#"<text x="{}" y="24" text-anchor="middle" font-size="13">{}</text>"#,
        w / 2.0,
        esc(&title)
    );
    let _ = writeln!(
        svg,
        r#"<rect x="{m}" y="{}" width="{pw}" height="{ph}" fill="none" stroke="black"/>"#,
        y(1.0)
    );
    for t in [0.0, 0.25, 0.5, 0.75, 1.0] {
        let _ = writeln!(
            svg,
            r##"<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="#ccc"/><text x="{0}" y="{3}" text-anchor="middle">{t}</text>"##,
            x(t),
            y(0.0),
            y(1.0),
            y(0.0) + 16.0
        );
        let _ = writeln!(
            svg,
            r##"<line x1="{1}" y1="{0}" x2="{2}" y2="{0}" stroke="#ccc"/><text x="{3}" y="{4}" text-anchor="end">{t}</text>"##,
            y(t),
            x(0.0),
            x(1.0),
            x(0.0) - 6.0,
            y(t) + 4.0
        );
    }
    let _ = writeln!(
        svg,
        r##"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#888" stroke-dasharray="4 4"/>"##,
        x(0.0),
        y(0.0),
        x(1.0),
        y(1.0)
    );
    if !s.roc.is_empty() {
        let pts: Vec<String> = s
            .roc
            .iter()
            .map(|&(f, t)| format!("{:.2},{:.2}", x(f), y(t)))
            .collect();
        let _ = writeln!(
            svg,
            r##"<polyline points="{}" fill="none" stroke="#0b5cad" stroke-width="2.5"/>"##,
            pts.join(" ")
        );
    }
    let _ = writeln!(
        svg,
        r#"<text x="{}" y="{}" text-anchor="middle">False positive rate</text>"#,
        x(0.5),
        h - 12.0
    );
    let _ = writeln!(
        svg,
        r#"<text x="14" y="{}" text-anchor="middle" transform="rotate(-90 14 {})">True positive rate</text>"#,
        y(0.5),
        y(0.5)
    );
    svg.push_str("</svg>\n");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(
        method: &str,
        cond: &str,
        paper: &str,
        label: Label,
        draw: u32,
        score: f64,
    ) -> ReviewRecord {
        let (observed, matched) = match label {
            Label::Positive => (Some(10), Some(9)),
            Label::Null => (Some(2), Some(1)),
        };
        ReviewRecord {
            id: ReviewRecord::make_id(method, cond, paper, label, draw),
            method: method.into(),
            condition: cond.into(),
            paper: paper.into(),
            label,
            draw,
            score,
            observed,
            matched,
            verdict: None,
            source: "test".into(),
            words: 500,
        }
    }

    #[test]
    fn clean_and_attacked_summaries_by_hand() {
        use Label::*;
        let r = vec![
            rec("semtrace", "clean", "a", Positive, 0, 8.0),
            rec("semtrace", "clean", "a", Null, 0, -13.0),
            rec("semtrace", "clean", "b", Positive, 0, 2.0),
            rec("semtrace", "clean", "b", Null, 0, 2.0),
            // Neutral paraphrase of the positives only: nulls come from clean.
            rec("semtrace", "neutral", "a", Positive, 0, 4.0),
            rec("semtrace", "neutral", "b", Positive, 0, -13.0),
            rec("icw-unicode", "clean", "a", Positive, 0, 5.0),
            rec("icw-unicode", "clean", "a", Null, 0, 0.0),
        ];
        let opts = SummaryOptions {
            resamples: 500,
            ..Default::default()
        };
        let s = summarize(&r, &opts);
        let names: Vec<_> = s
            .iter()
            .map(|x| format!("{}/{}", x.method, x.condition))
            .collect();
        assert_eq!(
            names,
            ["semtrace/clean", "semtrace/neutral", "icw-unicode/clean"]
        );
        let c = &s[0];
        // Pairs (8,-13) win, (8,2) win, (2,-13) win, (2,2) tie: 3.5 / 4.
        assert_eq!(c.roc_auc, Some(0.875));
        assert_eq!(c.zero_fpr.unwrap().threshold, 2.0);
        assert_eq!(c.zero_fpr.unwrap().tpr, 0.5);
        assert_eq!(c.mean_paired_difference, Some((21.0 + 0.0) / 2.0));
        assert_eq!(c.bit_accuracy_positive, Some(0.9));
        assert_eq!(c.mean_observed_null, Some(2.0));
        assert_eq!(c.reviews.len(), 4);
        let n = &s[1];
        assert_eq!(n.nulls_from, "clean");
        assert_eq!(n.nulls, 2);
        // Frozen clean threshold 2: 4 is flagged, −13 not.
        let at = n.at_clean_threshold.unwrap();
        assert_eq!((at.threshold, at.tpr, at.fpr), (2.0, 0.5, 0.0));
        // (4,-13) win, (4,2) win, (-13,-13) tie, (-13,2) loss: 2.5 / 4.
        assert_eq!(n.roc_auc, Some(0.625));
        assert_eq!(n.pairs, 0);
        let md = markdown("Test", &s, &opts);
        assert!(md.contains("| ROC-AUC | 0.875 | 1.000 |"), "{md}");
        assert!(
            md.contains("| semtrace | neutral | 0.625 | 0.50 | 0.00 | 10.00 | clean |"),
            "{md}"
        );
        let svg = roc_svg(c);
        assert!(
            svg.starts_with("<svg") && svg.contains("<polyline") && svg.contains("ROC-AUC 0.875")
        );
        assert_eq!(roc_file_name(n), "roc-semtrace-neutral.svg");
    }

    #[test]
    fn all_ineligible_set_is_chance_and_flags_nothing() {
        use Label::*;
        let r: Vec<ReviewRecord> = (0..3)
            .flat_map(|d| {
                [
                    rec("semtrace", "clean", "p", Positive, d, -13.0),
                    rec("semtrace", "clean", "p", Null, d, -13.0),
                ]
            })
            .collect();
        let s = &summarize(&r, &SummaryOptions::default())[0];
        assert_eq!(s.roc_auc, Some(0.5));
        assert_eq!(s.zero_fpr.unwrap().tpr, 0.0);
        let ci = s.roc_auc_ci.as_ref().unwrap();
        assert_eq!((ci.lo, ci.hi), (0.5, 0.5));
        assert_eq!(s.mean_paired_difference, Some(0.0));
        assert_eq!(s.papers, 1);
    }
}
