//! Layout of a page's glyphs: margin line numbers set aside, glyphs grouped into rows by
//! baseline, two-column pages detected from a vertical gutter and read column by column.

use super::collect::RawPage;
use super::{guarded, quietly, Column, Glyph, Line, Page};
use crate::line_numbers;

/// Drop margin line numbers from every page's glyphs (keeping them as [`Page::numbers`]), then
/// lay the rest out into lines.
pub(super) fn lay_out_pages(raw: Vec<RawPage>) -> Vec<Page> {
    let found = quietly(|| {
        let inputs: Vec<(&[Glyph], f64, f64)> = raw
            .iter()
            .map(|p| (p.glyphs.as_slice(), p.left(), p.width()))
            .collect();
        line_numbers::find_in_pdf(&inputs)
    })
    .unwrap_or_else(|| vec![Vec::new(); raw.len()]);
    raw.into_iter()
        .zip(found)
        .map(|(p, numbers)| {
            let (left, width) = (p.left(), p.width());
            let (_, lly, _, ury) = p.media;
            let mut drop = vec![false; p.glyphs.len()];
            for n in &numbers {
                for &i in &n.glyphs {
                    if let Some(d) = drop.get_mut(i) {
                        *d = true;
                    }
                }
            }
            let glyphs: Vec<Glyph> = p
                .glyphs
                .into_iter()
                .zip(drop)
                .filter(|(_, d)| !d)
                .map(|(g, _)| g)
                .collect();
            Page {
                height: (ury - lly).abs(),
                bottom: lly.min(ury),
                // Layout used to run inside the page's guarded extraction: a panic there still
                // costs only this page's lines.
                lines: guarded(|| layout(glyphs, width, left)).unwrap_or_default(),
                rotated: p.rotated,
                blanks: p.blanks,
                numbers: numbers
                    .into_iter()
                    .map(|n| Line {
                        text: n.text,
                        x0: n.x0,
                        x1: n.x1,
                        y: n.y,
                        size: n.size,
                        column: Column::Full,
                    })
                    .collect(),
            }
        })
        .collect()
}

/// Group glyphs into rows by baseline (greedy, in y order). Each row's baseline is that of its
/// largest glyphs, so super/subscripts join the line they belong to.
fn rows(glyphs: Vec<Glyph>) -> Vec<Vec<Glyph>> {
    let rows = row_indices(&glyphs);
    let mut slots: Vec<Option<Glyph>> = glyphs.into_iter().map(Some).collect();
    rows.into_iter()
        .map(|r| r.into_iter().filter_map(|i| slots[i].take()).collect())
        .collect()
}

/// [`rows`] as indices into `glyphs`.
pub fn row_indices(glyphs: &[Glyph]) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..glyphs.len()).collect();
    order.sort_by(|&a, &b| glyphs[b].y.total_cmp(&glyphs[a].y));
    let mut rows: Vec<(f64, f64, Vec<usize>)> = Vec::new(); // (baseline, size, glyphs)
    for i in order {
        let g = &glyphs[i];
        if let Some((y, size, row)) = rows.last_mut() {
            let tol = 0.45 * size.max(g.size);
            if (*y - g.y).abs() <= tol {
                if g.size > *size + 0.1 && !g.text.trim().is_empty() {
                    *y = g.y;
                    *size = g.size;
                }
                row.push(i);
                continue;
            }
        }
        rows.push((g.y, g.size, vec![i]));
    }
    rows.into_iter().map(|(_, _, r)| r).collect()
}

/// The text of one row of glyphs (sorted by x): spaces where the gap is wide, duplicates of
/// overprinted glyphs (fake bold) removed.
fn row_line(mut row: Vec<Glyph>, column: Column) -> Option<Line> {
    row.sort_by(|a, b| a.x.total_cmp(&b.x));
    let mut text = String::new();
    let mut prev: Option<&Glyph> = None;
    let mut x0 = f64::INFINITY;
    let mut x1 = f64::NEG_INFINITY;
    let mut sizes: Vec<f64> = Vec::new();
    let mut ys: Vec<(f64, f64)> = Vec::new();
    for g in &row {
        if g.text.is_empty() {
            continue;
        }
        let is_space = g.text.trim().is_empty();
        if let Some(p) = prev {
            let p_end = p.x + p.w;
            let size = p.size.min(g.size).max(1.0);
            if g.text == p.text
                && (g.x - p.x).abs() < 0.15 * size
                && (g.y - p.y).abs() < 0.15 * size
            {
                continue; // the same glyph drawn twice
            }
            let gap = g.x - p_end;
            if (gap > 0.13 * size || gap < -1.5 * size) && !text.ends_with(' ') && !is_space {
                text.push(' ');
            }
        }
        if is_space {
            if !text.is_empty() && !text.ends_with(' ') {
                text.push(' ');
            }
        } else {
            text.push_str(&g.text);
            x0 = x0.min(g.x);
            x1 = x1.max(g.x + g.w);
            sizes.push(g.size);
            ys.push((g.size, g.y));
        }
        prev = Some(g);
    }
    let text = text.trim().to_string();
    if text.is_empty() {
        return None;
    }
    sizes.sort_by(|a, b| a.total_cmp(b));
    let size = sizes[sizes.len() / 2];
    // Baseline: that of the glyphs at the row's median size.
    let y = ys
        .iter()
        .min_by(|a, b| (a.0 - size).abs().total_cmp(&(b.0 - size).abs()))
        .map(|p| p.1)
        .unwrap_or(0.0);
    Some(Line {
        text,
        x0,
        x1,
        y,
        size,
        column,
    })
}

/// Find the gutter of a two-column page: an x in the middle band that (almost) no row crosses,
/// with many rows having text on both sides of it. Returns its x, or None for one column.
pub fn detect_gutter(rows: &[Vec<(f64, f64)>], page_left: f64, width: f64) -> Option<f64> {
    let nrows = rows.iter().filter(|r| !r.is_empty()).count();
    if nrows < 10 {
        return None;
    }
    let lo = page_left + 0.3 * width;
    let hi = page_left + 0.7 * width;
    let steps = ((hi - lo) / 1.0).ceil().max(1.0) as usize;
    let mut best: Option<(usize, usize, f64)> = None; // (crossings, -both, x)
    let mut best_run: Vec<f64> = Vec::new();
    for i in 0..=steps {
        let x = lo + i as f64;
        let mut cross = 0usize;
        for r in rows {
            if r.iter().any(|&(a, b)| a < x && x < b) {
                cross += 1;
            }
        }
        match best {
            Some((c, _, _)) if cross > c => {}
            Some((c, _, _)) if cross == c => best_run.push(x),
            _ => {
                best = Some((cross, 0, x));
                best_run = vec![x];
            }
        }
    }
    let (cross, _, _) = best?;
    // Middle of the (first) widest run of best x positions.
    let x = best_run[best_run.len() / 2];
    let both = rows
        .iter()
        .filter(|r| r.iter().any(|&(_, b)| b <= x) && r.iter().any(|&(a, _)| a >= x))
        .count();
    let left = rows
        .iter()
        .filter(|r| !r.is_empty() && r.iter().all(|&(_, b)| b <= x + 0.5))
        .count();
    let right = rows
        .iter()
        .filter(|r| !r.is_empty() && r.iter().all(|&(a, _)| a >= x - 0.5))
        .count();
    if std::env::var_os("SEMTRACE_DEBUG_LAYOUT").is_some() {
        eprintln!(
            "gutter x={x:.1} rows={nrows} cross={cross} both={both} left={left} right={right}"
        );
    }
    // Full-width rows (title, wide figures and tables) may cross; most text rows must not. A
    // first page whose right column starts below a figure has few right-only rows, but many rows
    // with text on both sides and few crossing ones (item2vec, corpus 025, read interleaved).
    let two = cross * 2 <= nrows
        && both >= 5
        && (both * 10 >= nrows * 3
            || (left * 5 >= nrows && right * 5 >= nrows && both >= 3)
            || (both >= 10 && cross * 3 <= both));
    two.then_some(x)
}

/// The x extents of a row's runs of text: glyph boxes merged across word gaps (under 0.8 em),
/// in x order.
pub fn row_spans<'a>(row: impl Iterator<Item = &'a Glyph>) -> Vec<(f64, f64)> {
    let mut boxes: Vec<(f64, f64, f64)> = row
        .filter(|g| !g.text.trim().is_empty())
        .map(|g| (g.x, g.x + g.w.max(0.1), g.size))
        .collect();
    boxes.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut merged: Vec<(f64, f64)> = Vec::new();
    for (a, b, size) in boxes {
        match merged.last_mut() {
            Some(last) if a - last.1 < 0.8 * size => last.1 = last.1.max(b),
            _ => merged.push((a, b)),
        }
    }
    merged
}

/// Lay a page's glyphs out into lines in reading order.
pub fn layout(glyphs: Vec<Glyph>, width: f64, page_left: f64) -> Vec<Line> {
    let prelim = rows(glyphs);
    // Per row, the x extents of its runs of text: glyph boxes merged across word gaps (under
    // 0.8 em), so a full-width line crosses the gutter and two columns stay apart.
    let spans: Vec<Vec<(f64, f64)>> = prelim.iter().map(|r| row_spans(r.iter())).collect();
    // Rows in much smaller type than the page's text (a hidden carrier, fine print) take no part
    // in finding the gutter: a block of them spanning the page must not undo two columns.
    let row_size = |r: &Vec<Glyph>| {
        let mut v: Vec<f64> = r
            .iter()
            .filter(|g| !g.text.trim().is_empty())
            .map(|g| g.size)
            .collect();
        v.sort_by(|a, b| a.total_cmp(b));
        v.get(v.len() / 2).copied().unwrap_or(0.0)
    };
    let sizes: Vec<f64> = prelim.iter().map(row_size).collect();
    let mut sorted: Vec<f64> = sizes.iter().copied().filter(|&s| s > 0.0).collect();
    sorted.sort_by(|a, b| a.total_cmp(b));
    let median = sorted.get(sorted.len() / 2).copied().unwrap_or(0.0);
    let voting: Vec<Vec<(f64, f64)>> = spans
        .iter()
        .zip(&sizes)
        .map(|(sp, &sz)| {
            if sz >= 0.6 * median {
                sp.clone()
            } else {
                Vec::new()
            }
        })
        .collect();
    let Some(gutter) = detect_gutter(&voting, page_left, width) else {
        return prelim
            .into_iter()
            .filter_map(|r| row_line(r, Column::Full))
            .collect();
    };
    let mut out = Vec::new();
    let mut left: Vec<Glyph> = Vec::new();
    let mut right: Vec<Glyph> = Vec::new();
    let flush = |left: &mut Vec<Glyph>, right: &mut Vec<Glyph>, out: &mut Vec<Line>| {
        for r in rows(std::mem::take(left)) {
            out.extend(row_line(r, Column::Left));
        }
        for r in rows(std::mem::take(right)) {
            out.extend(row_line(r, Column::Right));
        }
    };
    for (row, span) in prelim.into_iter().zip(spans) {
        let crosses = span.iter().any(|&(a, b)| a < gutter && gutter < b);
        if crosses {
            if std::env::var_os("SEMTRACE_DEBUG_LAYOUT").is_some() {
                let t: String = row.iter().map(|g| g.text.as_str()).collect();
                eprintln!(
                    "  crossing row {span:?}: {}",
                    t.chars().take(90).collect::<String>()
                );
            }
            flush(&mut left, &mut right, &mut out);
            out.extend(row_line(row, Column::Full));
        } else {
            for g in row {
                if g.x < gutter {
                    left.push(g);
                } else {
                    right.push(g);
                }
            }
        }
    }
    flush(&mut left, &mut right, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word(x: f64, y: f64, s: &str) -> Vec<Glyph> {
        s.chars()
            .enumerate()
            .map(|(i, c)| Glyph {
                x: x + 5.0 * i as f64,
                y,
                w: 5.0,
                size: 10.0,
                text: c.to_string(),
            })
            .collect()
    }

    #[test]
    fn spaces_from_gaps_and_rows_from_baselines() {
        let mut g = word(100.0, 700.0, "hello");
        g.extend(word(128.0, 700.0, "world"));
        g.extend(word(100.0, 688.0, "next"));
        // A superscript slightly above the first row.
        g.extend(word(155.0, 703.5, "2"));
        let lines = layout(g, 600.0, 0.0);
        let texts: Vec<_> = lines.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(texts, vec!["hello world 2", "next"]);
    }

    #[test]
    fn two_columns_are_read_column_by_column() {
        let mut g = word(
            100.0,
            760.0,
            "A title that spans the whole page width here and more",
        );
        for i in 0..20 {
            let y = 700.0 - 12.0 * i as f64;
            g.extend(word(60.0, y, &format!("left{i:02} text of the column")));
            g.extend(word(320.0, y, &format!("right{i:02} text of the column")));
        }
        let lines = layout(g, 600.0, 0.0);
        assert_eq!(lines[0].column, Column::Full);
        assert!(lines[1].text.starts_with("left00"));
        assert!(lines[20].text.starts_with("left19"));
        assert!(lines[21].text.starts_with("right00"));
        assert_eq!(lines[21].column, Column::Right);
    }

    #[test]
    fn a_first_page_with_a_short_right_column_is_still_two_columns() {
        // Title rows across the page, then the left column runs on below where the right one
        // ends (a figure above it): 12 rows with both columns, 25 left-only, none right-only.
        let mut g = Vec::new();
        for i in 0..4 {
            let y = 780.0 - 12.0 * i as f64;
            g.extend(word(
                100.0,
                y,
                "Title and authors spanning the page width fully",
            ));
        }
        for i in 0..37 {
            let y = 700.0 - 12.0 * i as f64;
            g.extend(word(60.0, y, &format!("left{i:02} text of the column")));
            if i < 12 {
                g.extend(word(320.0, y, &format!("right{i:02} text of the column")));
            }
        }
        let lines = layout(g, 600.0, 0.0);
        let texts: Vec<&str> = lines.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(lines.len(), 4 + 37 + 12, "{texts:?}");
        assert!(texts[4].starts_with("left00") && texts[40].starts_with("left36"));
        assert!(texts[41].starts_with("right00"), "{texts:?}");
        assert!(texts
            .iter()
            .all(|t| !(t.contains("left") && t.contains("right"))));
    }

    #[test]
    fn one_column_page_is_not_split() {
        let mut g = Vec::new();
        for i in 0..20 {
            g.extend(word(
                60.0 + (i % 3) as f64 * 7.0,
                700.0 - 12.0 * i as f64,
                "a long line of running text that crosses the middle of the page width",
            ));
        }
        let lines = layout(g, 600.0, 0.0);
        assert!(lines.iter().all(|l| l.column == Column::Full));
        assert_eq!(lines.len(), 20);
    }
}
