//! Decisions over a venue's many reviews: multiplicity corrections of the per-review p-values
//! and a histogram of them. Pure functions; the batch runner (`semtrace detect --manifest`)
//! does the I/O.

/// Holm's step-down adjusted p-values (family-wise error control): with p sorted ascending,
/// adj_(i) = max_{j ≤ i} min(1, (m − j + 1) · p_(j)), returned in the input order. A review is
/// flagged at family-wise level α when its adjusted p-value is ≤ α.
pub fn holm(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]).then(a.cmp(&b)));
    let mut out = vec![1.0; m];
    let mut running = 0.0f64;
    for (rank, &i) in order.iter().enumerate() {
        let adj = ((m - rank) as f64 * p[i]).min(1.0);
        running = running.max(adj);
        out[i] = running;
    }
    out
}

/// Benjamini–Hochberg q-values (false discovery rate): with p sorted ascending,
/// q_(i) = min_{j ≥ i} min(1, m · p_(j) / j), returned in the input order. Flag at FDR level q
/// when the q-value is ≤ q.
pub fn benjamini_hochberg(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]).then(a.cmp(&b)));
    let mut out = vec![1.0; m];
    let mut running = 1.0f64;
    for (rank, &i) in order.iter().enumerate().rev() {
        let q = (m as f64 * p[i] / (rank + 1) as f64).min(1.0);
        running = running.min(q);
        out[i] = running;
    }
    out
}

/// An SVG histogram of p-values in `bins` equal bins over [0, 1], with the count a uniform
/// (null) distribution would give as a dashed line.
pub fn p_value_histogram_svg(p: &[f64], bins: usize) -> String {
    use std::fmt::Write as _;
    let bins = bins.max(1);
    let mut counts = vec![0usize; bins];
    for &x in p {
        let b = ((x.clamp(0.0, 1.0) * bins as f64) as usize).min(bins - 1);
        counts[b] += 1;
    }
    let expected = p.len() as f64 / bins as f64;
    let top = (*counts.iter().max().unwrap_or(&0) as f64)
        .max(expected)
        .max(1.0);
    let (w, h, left, bottom, pad) = (480.0, 240.0, 40.0, 30.0, 10.0);
    let (plot_w, plot_h) = (w - left - pad, h - bottom - pad);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(
        s,
        r#"<title>p-values of {} reviews ({bins} bins)</title>"#,
        p.len()
    );
    let bw = plot_w / bins as f64;
    for (i, &c) in counts.iter().enumerate() {
        let bh = plot_h * c as f64 / top;
        let _ = writeln!(
            s,
            r##"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="#4a78b0"><title>[{:.2}, {:.2}): {c}</title></rect>"##,
            left + i as f64 * bw + 0.5,
            pad + plot_h - bh,
            (bw - 1.0).max(0.5),
            bh,
            i as f64 / bins as f64,
            (i + 1) as f64 / bins as f64
        );
    }
    let ey = pad + plot_h - plot_h * expected / top;
    let _ = writeln!(
        s,
        r##"<line x1="{left}" y1="{ey:.1}" x2="{:.1}" y2="{ey:.1}" stroke="#c0392b" stroke-dasharray="4 3"><title>uniform: {expected:.1} per bin</title></line>"##,
        left + plot_w
    );
    let _ = writeln!(
        s,
        r##"<line x1="{left}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#333"/>"##,
        pad + plot_h,
        left + plot_w,
        pad + plot_h
    );
    for t in [0.0, 0.25, 0.5, 0.75, 1.0] {
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{t}</text>"#,
            left + t * plot_w,
            h - bottom + 15.0
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">p-value</text>"#,
        left + plot_w / 2.0,
        h - 3.0
    );
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
        left - 4.0,
        pad + 9.0,
        top as usize
    );
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: &[f64], b: &[f64]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-12)
    }

    #[test]
    fn holm_matches_a_hand_computed_example() {
        // Sorted 0.01, 0.02, 0.03, 0.5 with m = 4: 0.04, 0.06, 0.06 (monotone), 0.5.
        let p = [0.03, 0.5, 0.01, 0.02];
        assert!(close(&holm(&p), &[0.06, 0.5, 0.04, 0.06]), "{:?}", holm(&p));
        assert!(close(&holm(&[0.9, 0.8]), &[1.0, 1.0]));
        assert!(holm(&[]).is_empty());
    }

    #[test]
    fn bh_matches_a_hand_computed_example() {
        // Sorted 0.01, 0.02, 0.03, 0.5 with m = 4: 4·0.01/1 = 0.04, 4·0.02/2 = 0.04,
        // 4·0.03/3 = 0.04, 4·0.5/4 = 0.5.
        let p = [0.03, 0.5, 0.01, 0.02];
        assert!(close(&benjamini_hochberg(&p), &[0.04, 0.5, 0.04, 0.04]));
        // Step-up: a larger p can lift a smaller one's q down to its own.
        assert!(close(&benjamini_hochberg(&[0.04, 0.05]), &[0.05, 0.05]));
    }

    #[test]
    fn corrections_are_never_below_the_raw_p_and_bh_never_above_holm() {
        let p: Vec<f64> = (0..50)
            .map(|i| ((i * 37 % 50) as f64 + 0.5) / 60.0)
            .collect();
        let (h, q) = (holm(&p), benjamini_hochberg(&p));
        for i in 0..p.len() {
            assert!(h[i] >= p[i] && q[i] >= p[i] && q[i] <= h[i] + 1e-12);
            assert!(h[i] <= 1.0 && q[i] <= 1.0);
        }
    }

    #[test]
    fn histogram_counts_every_value() {
        let svg = p_value_histogram_svg(&[0.0, 0.01, 0.5, 1.0, 0.99], 10);
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert_eq!(svg.matches("<rect").count(), 10);
        assert!(svg.contains("[0.00, 0.10): 2"), "{svg}");
        assert!(svg.contains("[0.90, 1.00): 2"));
        assert!(svg.contains("[0.50, 0.60): 1"));
    }
}
