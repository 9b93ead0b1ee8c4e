//! Margin line numbers of review copies (lineno in NeurIPS/ICLR submissions, the rulers of ACL and
//! ICML): recognised and taken out of the text, so that "001 Title … 051" reads "Title …".
//!
//! Both detectors ask for the same evidence: a long run of consecutive (or evenly spaced)
//! increasing integers that stand apart from the text. A single number, a short numbered list or
//! a table column inside the text block is never touched.
//!
//! - PDF ([`find_in_pdf`]): isolated digit words, aligned on one x (right- or left-aligned), that
//!   count up from top to bottom, one step per line of text, and lie wholly outside the text
//!   block: left of its left edge, right of its right edge, or in the gutter of a two-column
//!   page. Such a column must hold at least [`PDF_MIN_TOTAL`] numbers in the document and
//!   [`PDF_MIN_GROUP`] on one page; then a sparse page's few numbers at the same x go too.
//! - Text ([`strip_text`]): Docling-style text of a numbered PDF carries the numbers on lines of
//!   their own or at line ends ("… increasingly im19" for "im-"); a run of at least
//!   [`TEXT_MIN_RUN`] of them in document order is removed, with the numbers that landed
//!   mid-line where the run expects them.

use super::pdf::{detect_gutter, row_indices, row_spans, Glyph};

/// Most digits a line number has (zero-padded "001" included).
const MAX_DIGITS: usize = 4;

// ---------------------------------------------------------------------------------------------
// PDF

/// Free space on both sides of a number, in its own em (and at least half an em of the
/// neighbour's font): a number in running text sits one word space from its neighbours, a margin
/// number much further.
const ISOLATION: f64 = 0.8;
/// Numbers of one margin column share their right (or left) edge within this (points).
const ALIGN_TOL: f64 = 1.5;
/// The same column on different pages: anchors within this (points).
const COLUMN_TOL: f64 = 2.0;
/// A number may touch the text block edge by this much (points).
const EDGE_TOL: f64 = 1.0;
/// Numbers of one column on one page needed before the column counts.
const PDF_MIN_GROUP: usize = 5;
/// Numbers of one column in the whole document needed before the column counts.
const PDF_MIN_TOTAL: usize = 10;
/// Largest step between successive numbers of a column on a page (every line, every 5th, …).
const PDF_MAX_STEP: u32 = 20;

/// A margin line number found on a PDF page.
#[derive(Debug, Clone, PartialEq)]
pub struct PdfNumber {
    /// Indices of its glyphs in the page's glyph list (overprinted copies included).
    pub glyphs: Vec<usize>,
    pub text: String,
    pub value: u32,
    pub x0: f64,
    pub x1: f64,
    /// Baseline (PDF user space, y up).
    pub y: f64,
    pub size: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Align {
    Right,
    Left,
}

/// One page's run of aligned numbers that count up and sit outside the text block.
struct Chain {
    page: usize,
    align: Align,
    anchor: f64,
    /// Indices into the page's candidates.
    members: Vec<usize>,
}

/// The page's text block, line numbers left out.
#[derive(Debug, Default)]
struct Edges {
    left: Option<f64>,
    right: Option<f64>,
    /// Right edge of the left column and left edge of the right column, on a two-column page.
    gutter: Option<(f64, f64)>,
    /// Baselines of the text rows, and their median font size.
    baselines: Vec<f64>,
    body: f64,
}

impl Edges {
    /// Is there a text row level with this baseline? (A page number in the foot is not.)
    fn beside_text(&self, y: f64) -> bool {
        self.baselines
            .iter()
            .any(|&b| (b - y).abs() <= 1.5 * self.body)
    }
}

/// For each page (glyphs, left edge and width of its media box), the margin line numbers on it,
/// top to bottom.
pub fn find_in_pdf(pages: &[(&[Glyph], f64, f64)]) -> Vec<Vec<PdfNumber>> {
    let mut cands: Vec<Vec<PdfNumber>> = Vec::with_capacity(pages.len());
    let mut chains: Vec<Chain> = Vec::new();
    let debug = std::env::var_os("SEMTRACE_DEBUG_LAYOUT").is_some();
    for (pi, &(glyphs, left, width)) in pages.iter().enumerate() {
        let rows = row_indices(glyphs);
        let c = candidates(glyphs, &rows);
        if !c.is_empty() {
            let edges = text_edges(glyphs, &rows, &c, left, width);
            if debug {
                eprintln!("line numbers p{}: {edges:?}", pi + 1);
                for n in &c {
                    eprintln!(
                        "  cand {:>5} x {:.1}..{:.1} y {:.1} size {:.1}",
                        n.text, n.x0, n.x1, n.y, n.size
                    );
                }
            }
            for align in [Align::Right, Align::Left] {
                for group in aligned_groups(&c, align) {
                    if let Some(chain) = counting_chain(&c, group, edges.body) {
                        if debug {
                            let v: Vec<&str> = chain.iter().map(|&i| c[i].text.as_str()).collect();
                            eprintln!(
                                "  chain {align:?} {v:?} outside={}",
                                outside_text(&c, &chain, &edges)
                            );
                        }
                        // A short chain is only taken on the column's word (below), and
                        // only beside text lines.
                        let beside = chain.len() >= PDF_MIN_GROUP
                            || chain.iter().all(|&i| edges.beside_text(c[i].y));
                        if beside && outside_text(&c, &chain, &edges) {
                            let anchor = mean(chain.iter().map(|&i| edge_of(&c[i], align)));
                            chains.push(Chain {
                                page: pi,
                                align,
                                anchor,
                                members: chain,
                            });
                        }
                    }
                }
            }
        }
        cands.push(c);
    }
    // Columns across the document: chains at the same anchor on any page.
    chains.sort_by(|a, b| a.align.cmp(&b.align).then(a.anchor.total_cmp(&b.anchor)));
    let mut keep = vec![Vec::<bool>::new(); pages.len()];
    for (k, c) in cands.iter().enumerate() {
        keep[k] = vec![false; c.len()];
    }
    let mut start = 0;
    while start < chains.len() {
        let mut end = start + 1;
        while end < chains.len()
            && chains[end].align == chains[start].align
            && chains[end].anchor - chains[end - 1].anchor <= COLUMN_TOL
        {
            end += 1;
        }
        // One chain per page and column, the longest: any other number at that x on the page
        // did not fit the count.
        let mut column: Vec<&Chain> = Vec::new();
        for c in &chains[start..end] {
            match column.iter_mut().find(|k| k.page == c.page) {
                Some(k) if k.members.len() < c.members.len() => *k = c,
                Some(_) => {}
                None => column.push(c),
            }
        }
        let total: usize = column.iter().map(|c| c.members.len()).sum();
        let best = column.iter().map(|c| c.members.len()).max().unwrap_or(0);
        if total >= PDF_MIN_TOTAL && best >= PDF_MIN_GROUP {
            for c in column {
                for &m in &c.members {
                    keep[c.page][m] = true;
                }
            }
        }
        start = end;
    }
    if debug {
        for (pi, k) in keep.iter().enumerate() {
            let v: Vec<&str> = k
                .iter()
                .zip(&cands[pi])
                .filter(|(k, _)| **k)
                .map(|(_, c)| c.text.as_str())
                .collect();
            eprintln!("line numbers p{}: dropped {v:?}", pi + 1);
        }
    }
    cands
        .into_iter()
        .zip(keep)
        .map(|(c, k)| {
            let mut v: Vec<PdfNumber> = c
                .into_iter()
                .zip(k)
                .filter(|(_, k)| *k)
                .map(|(n, _)| n)
                .collect();
            v.sort_by(|a, b| b.y.total_cmp(&a.y).then(a.x0.total_cmp(&b.x0)));
            v
        })
        .collect()
}

fn mean(v: impl Iterator<Item = f64>) -> f64 {
    let (s, n) = v.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    if n == 0 {
        0.0
    } else {
        s / n as f64
    }
}

fn edge_of(n: &PdfNumber, align: Align) -> f64 {
    match align {
        Align::Right => n.x1,
        Align::Left => n.x0,
    }
}

/// Digit-only words (1 to 4 digits) with wide free space on both sides.
fn candidates(glyphs: &[Glyph], rows: &[Vec<usize>]) -> Vec<PdfNumber> {
    let mut out = Vec::new();
    for row in rows {
        let mut r: Vec<usize> = row
            .iter()
            .copied()
            .filter(|&i| !glyphs[i].text.trim().is_empty())
            .collect();
        r.sort_by(|&a, &b| glyphs[a].x.total_cmp(&glyphs[b].x));
        // Words, split where row_line would put a space.
        let mut words: Vec<Vec<usize>> = Vec::new();
        for &i in &r {
            let g = &glyphs[i];
            if let Some(w) = words.last_mut() {
                let p = &glyphs[*w.last().unwrap_or(&i)];
                let size = p.size.min(g.size).max(1.0);
                let gap = g.x - (p.x + p.w);
                if gap <= 0.13 * size && gap >= -1.5 * size {
                    w.push(i);
                    continue;
                }
            }
            words.push(vec![i]);
        }
        let extent = |w: &[usize]| {
            w.iter().fold(
                (f64::INFINITY, f64::NEG_INFINITY, 0.0f64),
                |(a, b, s), &i| {
                    let g = &glyphs[i];
                    (a.min(g.x), b.max(g.x + g.w), s.max(g.size))
                },
            )
        };
        for (wi, w) in words.iter().enumerate() {
            let mut text = String::new();
            let mut prev: Option<&Glyph> = None;
            for &i in w {
                let g = &glyphs[i];
                // The same glyph drawn twice (fake bold) is one character.
                let dup = prev.is_some_and(|p| {
                    p.text == g.text
                        && (g.x - p.x).abs() < 0.15 * g.size.max(1.0)
                        && (g.y - p.y).abs() < 0.15 * g.size.max(1.0)
                });
                if !dup {
                    text.push_str(&g.text);
                }
                prev = Some(g);
            }
            if text.is_empty()
                || text.len() > MAX_DIGITS
                || !text.bytes().all(|b| b.is_ascii_digit())
            {
                continue;
            }
            let (x0, x1, size) = extent(w);
            // Measured in the number's own em (margin numbers are small, and sit no further
            // from a large heading than from body text), and at least a wide space of the
            // neighbour's font.
            let isolated = |other: Option<&Vec<usize>>, before: bool| {
                other.is_none_or(|o| {
                    let (a, b, s) = extent(o);
                    let gap = if before { x0 - b } else { a - x1 };
                    gap >= ISOLATION * size && gap >= 0.5 * s
                })
            };
            let before = wi.checked_sub(1).and_then(|j| words.get(j));
            if !isolated(before, true) || !isolated(words.get(wi + 1), false) {
                continue;
            }
            let Ok(value) = text.parse::<u32>() else {
                continue;
            };
            out.push(PdfNumber {
                glyphs: w.clone(),
                text,
                value,
                x0,
                x1,
                y: glyphs[w[0]].y,
                size,
            });
        }
    }
    out
}

/// Among `xs`, the smallest (or largest) value shared, within one point, by at least `need`
/// values: the edge that many lines start (or end) at. Falls back to the extreme value.
fn supported(xs: &[f64], need: usize, smallest: bool) -> Option<f64> {
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(|a, b| a.total_cmp(b));
    let near = |x: f64| v.partition_point(|&y| y <= x + 1.0) - v.partition_point(|&y| y < x - 1.0);
    let shared = |x: &&f64| near(**x) >= need;
    let found = if smallest {
        v.iter().find(shared).or(v.first())
    } else {
        v.iter().rev().find(shared).or(v.last())
    };
    found.copied()
}

/// The text block of the page with the candidate numbers left out. Rows in much smaller type
/// (fine print, a hidden carrier) do not count.
fn text_edges(
    glyphs: &[Glyph],
    rows: &[Vec<usize>],
    cands: &[PdfNumber],
    left: f64,
    width: f64,
) -> Edges {
    let mut is_cand = vec![false; glyphs.len()];
    for c in cands {
        for &i in &c.glyphs {
            is_cand[i] = true;
        }
    }
    /// A row of text: median glyph size, baseline, x extents of its runs.
    struct TextRow {
        size: f64,
        y: f64,
        spans: Vec<(f64, f64)>,
    }
    let mut text_rows: Vec<TextRow> = rows
        .iter()
        .map(|r| {
            let kept: Vec<&Glyph> = r
                .iter()
                .filter(|&&i| !is_cand[i] && !glyphs[i].text.trim().is_empty())
                .map(|&i| &glyphs[i])
                .collect();
            let mut sizes: Vec<f64> = kept.iter().map(|g| g.size).collect();
            sizes.sort_by(|a, b| a.total_cmp(b));
            TextRow {
                size: sizes.get(sizes.len() / 2).copied().unwrap_or(0.0),
                y: kept.first().map_or(0.0, |g| g.y),
                spans: row_spans(kept.into_iter()),
            }
        })
        .filter(|r| !r.spans.is_empty())
        .collect();
    let mut sizes: Vec<f64> = text_rows.iter().map(|r| r.size).collect();
    sizes.sort_by(|a, b| a.total_cmp(b));
    let median = sizes.get(sizes.len() / 2).copied().unwrap_or(0.0);
    text_rows.retain(|r| r.size >= 0.7 * median);
    let baselines: Vec<f64> = text_rows.iter().map(|r| r.y).collect();
    let spans: Vec<Vec<(f64, f64)>> = text_rows.into_iter().map(|r| r.spans).collect();
    if spans.is_empty() {
        return Edges::default();
    }
    let need = 3.max(spans.len() / 20);
    let firsts: Vec<f64> = spans.iter().map(|s| s[0].0).collect();
    let lasts: Vec<f64> = spans.iter().map(|s| s[s.len() - 1].1).collect();
    let gutter = detect_gutter(&spans, left, width).and_then(|g| {
        let ends: Vec<f64> = spans
            .iter()
            .filter_map(|s| {
                s.iter()
                    .filter(|&&(_, b)| b <= g)
                    .map(|&(_, b)| b)
                    .reduce(f64::max)
            })
            .collect();
        let starts: Vec<f64> = spans
            .iter()
            .filter_map(|s| s.iter().find(|&&(a, _)| a >= g).map(|&(a, _)| a))
            .collect();
        Some((
            supported(&ends, need, false)?,
            supported(&starts, need, true)?,
        ))
    });
    Edges {
        left: supported(&firsts, need, true),
        right: supported(&lasts, need, false),
        gutter,
        baselines,
        body: median,
    }
}

/// Candidates whose right (or left) edges line up, each group in x order of that edge.
fn aligned_groups(cands: &[PdfNumber], align: Align) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..cands.len()).collect();
    order.sort_by(|&a, &b| edge_of(&cands[a], align).total_cmp(&edge_of(&cands[b], align)));
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut last = f64::NEG_INFINITY;
    for i in order {
        let x = edge_of(&cands[i], align);
        match groups.last_mut() {
            Some(g) if x - last <= ALIGN_TOL => g.push(i),
            _ => groups.push(vec![i]),
        }
        last = x;
    }
    groups
}

/// The longest top-to-bottom chain of the group whose values go up by 1 to [`PDF_MAX_STEP`] at
/// each step, if it holds at least 80% of the group, counts evenly (three steps in four equal
/// the smallest) and one line per step.
fn counting_chain(cands: &[PdfNumber], mut group: Vec<usize>, body: f64) -> Option<Vec<usize>> {
    // No page has a thousand lines; a bigger group is some table of digits (and the search
    // below is quadratic).
    if group.len() > 1000 {
        return None;
    }
    group.sort_by(|&a, &b| cands[b].y.total_cmp(&cands[a].y));
    let n = group.len();
    // Longest chain ending at each member (quadratic; a page holds at most a few hundred).
    let mut len = vec![1usize; n];
    let mut prev = vec![usize::MAX; n];
    for j in 0..n {
        for i in 0..j {
            let (a, b) = (cands[group[i]].value, cands[group[j]].value);
            let stacked = (cands[group[i]].y - cands[group[j]].y).abs() < 0.5;
            if b > a && b - a <= PDF_MAX_STEP && !stacked && len[i] + 1 > len[j] {
                len[j] = len[i] + 1;
                prev[j] = i;
            }
        }
    }
    let (mut j, _) = len.iter().enumerate().max_by_key(|&(i, l)| (*l, n - i))?;
    let mut chain = vec![group[j]];
    while prev[j] != usize::MAX {
        j = prev[j];
        chain.push(group[j]);
    }
    chain.reverse();
    // Nearly every aligned number belongs to the count: a table of contents has page numbers
    // that repeat (4, 4, 5, 5, 5, 6, …), whose increasing subsequence is not the column.
    if chain.len() * 5 < n * 4 {
        return None;
    }
    let steps: Vec<u32> = chain
        .windows(2)
        .map(|w| cands[w[1]].value - cands[w[0]].value)
        .collect();
    if let Some(&step) = steps.iter().min() {
        let even = steps.iter().filter(|&&s| s == step).count();
        if even * 4 < steps.len() * 3 {
            return None;
        }
    }
    // One step of the count is one line of text: the typical drop per step is a line pitch
    // (1 to 3 em of the body font, double spacing included). Chapter numbers of a table of
    // contents count entries several lines apart.
    let mut pitch: Vec<f64> = chain
        .windows(2)
        .map(|w| (cands[w[0]].y - cands[w[1]].y) / f64::from(cands[w[1]].value - cands[w[0]].value))
        .collect();
    if !pitch.is_empty() {
        pitch.sort_by(|a, b| a.total_cmp(b));
        let median = pitch[pitch.len() / 2];
        if !(0.8 * body..=3.0 * body).contains(&median) {
            return None;
        }
    }
    Some(chain)
}

/// Does the chain lie wholly outside the text block (left of it, right of it, or in the gutter)?
fn outside_text(cands: &[PdfNumber], chain: &[usize], edges: &Edges) -> bool {
    let a = chain
        .iter()
        .map(|&i| cands[i].x0)
        .fold(f64::INFINITY, f64::min);
    let b = chain
        .iter()
        .map(|&i| cands[i].x1)
        .fold(f64::NEG_INFINITY, f64::max);
    edges.left.is_some_and(|l| b <= l + EDGE_TOL)
        || edges.right.is_some_and(|r| a >= r - EDGE_TOL)
        || edges
            .gutter
            .is_some_and(|(r1, l2)| a >= r1 - EDGE_TOL && b <= l2 + EDGE_TOL)
}

// ---------------------------------------------------------------------------------------------
// Text

/// Numbers of one run needed before it is taken for line numbering.
const TEXT_MIN_RUN: usize = 20;
/// Largest step between successive numbers of a run (lines Docling dropped, every 5th line).
const TEXT_MAX_STEP: u32 = 12;
/// How many candidates back a run may be continued from (stray numbers in between).
const TEXT_LOOKBACK: usize = 6;
/// Largest gap in a run searched for numbers that landed mid-line.
const TEXT_MAX_FILL: u32 = 10;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// The whole line is the number.
    Alone,
    /// At the end of the line after a space.
    End,
    /// Glued to the last word, which the number broke ("im19" for "im-" + "portant").
    Glued,
}

#[derive(Debug, Clone, Copy)]
struct TextCand {
    line: usize,
    value: u32,
    place: Place,
    /// Byte offset of the number in the (untrimmed) line.
    at: usize,
}

/// The ASCII digits at the end of `s` (1 to [`MAX_DIGITS`]), with their byte offset.
fn trailing_digits(s: &str) -> Option<(usize, u32)> {
    let digits = s.bytes().rev().take_while(u8::is_ascii_digit).count();
    if digits == 0 || digits > MAX_DIGITS {
        return None;
    }
    let at = s.len() - digits;
    Some((at, s[at..].parse().ok()?))
}

fn text_candidate(i: usize, line: &str) -> Option<TextCand> {
    let t = line.trim_end();
    let lead = t.len() - t.trim_start().len();
    let (at, value) = trailing_digits(t)?;
    if at == lead {
        return Some(TextCand {
            line: i,
            value,
            place: Place::Alone,
            at,
        });
    }
    let before = &t[lead..at];
    let last = before.chars().next_back()?;
    // A line number ends a line of prose, not a label ("L1") or a short cell.
    let words = before.split_whitespace().count();
    if last.is_whitespace() && words >= 2 {
        return Some(TextCand {
            line: i,
            value,
            place: Place::End,
            at,
        });
    }
    if last.is_alphabetic() && words >= 3 {
        return Some(TextCand {
            line: i,
            value,
            place: Place::Glued,
            at,
        });
    }
    None
}

/// Runs of candidates that count up, in document order; a run may skip a few stray numbers.
fn text_runs(cands: &[TextCand]) -> Vec<Vec<usize>> {
    let mut runs: Vec<Vec<usize>> = Vec::new();
    let mut open: Vec<usize> = Vec::new(); // indices into runs that can still grow
    for (k, c) in cands.iter().enumerate() {
        open.retain(|&r| runs[r].last().is_some_and(|&l| k - l <= TEXT_LOOKBACK));
        let best = open
            .iter()
            .copied()
            .filter_map(|r| {
                let step = c.value.checked_sub(cands[*runs[r].last()?].value)?;
                (1..=TEXT_MAX_STEP).contains(&step).then_some((step, r))
            })
            .min();
        match best {
            Some((_, r)) => runs[r].push(k),
            None => {
                runs.push(vec![k]);
                open.push(runs.len() - 1);
            }
        }
    }
    runs.retain(|r| {
        if r.len() < TEXT_MIN_RUN {
            return false;
        }
        let steps: Vec<u32> = r
            .windows(2)
            .map(|w| cands[w[1]].value - cands[w[0]].value)
            .collect();
        let step = steps.iter().copied().min().unwrap_or(1);
        steps.iter().filter(|&&s| s == step).count() * 2 >= steps.len()
    });
    runs
}

/// An edit to one line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cut {
    /// Drop the line.
    Line,
    /// The number at the end of the line (from byte `at`), after a space: drop it.
    End(usize),
    /// The number glued to the last word (from byte `at`): it stands for a hyphen.
    Glued(usize),
    /// A number inside the line, bytes `start..end` (a whole token, or digits glued to a word
    /// that the next token continues).
    Inside(usize, usize, bool),
}

/// Whitespace-separated tokens of `s` with their byte ranges.
fn tokens(s: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in s.char_indices() {
        match (c.is_whitespace(), start) {
            (true, Some(a)) => {
                out.push((a, i));
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    if let Some(a) = start {
        out.push((a, s.len()));
    }
    out
}

/// Text with its line numbers removed, or `None` when it has none. Docling reads numbered lines
/// as list items: a line that ended in a removed number, or follows one, loses a leading "- ",
/// so "im19" + "- portant" becomes "im-" + "portant" for the hyphenation rule (a real bullet
/// there loses its marker too; the two cannot be told apart).
pub fn strip_text(text: &str) -> Option<String> {
    let lines: Vec<&str> = text.split('\n').collect();
    let cands: Vec<TextCand> = lines
        .iter()
        .enumerate()
        .filter_map(|(i, l)| text_candidate(i, l))
        .collect();
    let runs = text_runs(&cands);
    if std::env::var_os("SEMTRACE_DEBUG_LAYOUT").is_some() {
        let lens: Vec<usize> = runs.iter().map(Vec::len).collect();
        eprintln!(
            "line numbers (text): {} candidates, runs {lens:?}",
            cands.len()
        );
    }
    if runs.is_empty() {
        return None;
    }
    let mut cuts: Vec<Vec<Cut>> = vec![Vec::new(); lines.len()];
    for run in &runs {
        for &k in run {
            let c = cands[k];
            cuts[c.line].push(match c.place {
                Place::Alone => Cut::Line,
                Place::End => Cut::End(c.at),
                Place::Glued => Cut::Glued(c.at),
            });
        }
        // Numbers Docling put mid-line (two visual lines merged into one) where the run skips.
        for w in run.windows(2) {
            let (a, b) = (cands[w[0]], cands[w[1]]);
            if b.value - a.value < 2 || b.value - a.value > TEXT_MAX_FILL {
                continue;
            }
            let mut want = a.value + 1;
            'lines: for (li, line) in lines.iter().enumerate().take(b.line + 1).skip(a.line + 1) {
                let limit = if li == b.line { b.at } else { line.len() };
                for (s, e) in tokens(&line[..limit]) {
                    let tok = &line[s..e];
                    let Some((at, v)) = trailing_digits(tok) else {
                        continue;
                    };
                    if v != want {
                        continue;
                    }
                    let glued = at > 0;
                    if glued
                        && !tok[..at]
                            .chars()
                            .next_back()
                            .is_some_and(char::is_alphabetic)
                    {
                        continue;
                    }
                    cuts[li].push(Cut::Inside(s + at, e, glued));
                    want += 1;
                    if want >= b.value {
                        break 'lines;
                    }
                }
            }
        }
    }
    let mut out: Vec<String> = Vec::with_capacity(lines.len());
    let mut ended_by_number = false;
    // Docling sets a number it could not place as a paragraph of its own, splitting the
    // paragraph around it ("… we need a more 24" / "25" / "nuanced understanding …"): blank
    // lines around dropped numbers, between a line that ended in a number and one that goes on
    // in lowercase, are dropped too.
    let mut last_text_numbered = false;
    let mut blanks: Vec<usize> = Vec::new();
    let mut dropped_since_text = false;
    let mut unsplit: Vec<usize> = Vec::new();
    for (line, mut cut) in lines.iter().zip(cuts) {
        if cut.contains(&Cut::Line) {
            ended_by_number = false;
            dropped_since_text = true;
            continue;
        }
        if line.trim().is_empty() {
            blanks.push(out.len());
            ended_by_number = false;
            out.push(String::new());
            continue;
        }
        if last_text_numbered
            && dropped_since_text
            && line
                .trim_start()
                .chars()
                .next()
                .is_some_and(char::is_lowercase)
        {
            unsplit.append(&mut blanks);
        }
        blanks.clear();
        dropped_since_text = false;
        let mut s = line.to_string();
        let numbered = cut.iter().any(|c| matches!(c, Cut::End(_) | Cut::Glued(_)));
        if numbered || ended_by_number {
            if let Some(rest) = s.trim_start().strip_prefix("- ") {
                s = rest.to_string();
            }
        }
        ended_by_number = false;
        // Right to left, so earlier offsets stay valid.
        cut.sort_by_key(|c| {
            std::cmp::Reverse(match *c {
                Cut::End(a) | Cut::Glued(a) | Cut::Inside(a, _, _) => a,
                Cut::Line => 0,
            })
        });
        let shift = line.len() - s.len();
        for c in cut {
            match c {
                Cut::End(a) if a >= shift => {
                    s.truncate(a - shift);
                    s.truncate(s.trim_end().len());
                    ended_by_number = true;
                }
                Cut::Glued(a) if a >= shift => {
                    s.truncate(a - shift);
                    s.push('-');
                    ended_by_number = true;
                }
                Cut::Inside(a, e, glued) if a >= shift => {
                    let (a, e) = (a - shift, e - shift);
                    let tail = &s[e..];
                    // A glued number broke the word: the next token continues it.
                    let tail = if glued { tail.trim_start() } else { tail };
                    let head = if glued { &s[..a] } else { s[..a].trim_end() };
                    let joined = if glued || head.is_empty() || tail.starts_with(' ') {
                        format!("{head}{tail}")
                    } else {
                        format!("{head} {tail}")
                    };
                    s = joined;
                }
                _ => {}
            }
        }
        last_text_numbered = ended_by_number;
        out.push(s);
    }
    let out: Vec<String> = out
        .into_iter()
        .enumerate()
        .filter(|(i, _)| unsplit.binary_search(i).is_err())
        .map(|(_, s)| s)
        .collect();
    Some(out.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    // ---- PDF

    fn glyphs(x: f64, y: f64, s: &str, size: f64) -> Vec<Glyph> {
        s.chars()
            .enumerate()
            .map(|(i, c)| Glyph {
                x: x + 0.5 * size * i as f64,
                y,
                w: 0.5 * size,
                size,
                text: c.to_string(),
            })
            .collect()
    }

    /// A one-column page of `n` lines of body text at x 100..460, 12 pt apart; `number` gives
    /// each line's margin number (text, x) if any.
    fn page(n: usize, number: impl Fn(usize) -> Option<(String, f64)>) -> Vec<Glyph> {
        let mut g = Vec::new();
        for i in 0..n {
            let y = 700.0 - 12.0 * i as f64;
            g.extend(glyphs(
                100.0,
                y,
                "running text of the body that fills the whole line width here ok",
                10.0,
            ));
            if let Some((t, x)) = number(i) {
                g.extend(glyphs(x, y, &t, 6.0));
            }
        }
        g
    }

    fn found(pages: &[Vec<Glyph>]) -> Vec<Vec<String>> {
        let input: Vec<(&[Glyph], f64, f64)> =
            pages.iter().map(|p| (p.as_slice(), 0.0, 612.0)).collect();
        find_in_pdf(&input)
            .into_iter()
            .map(|p| p.into_iter().map(|n| n.text).collect())
            .collect()
    }

    #[test]
    fn left_margin_numbers_every_line_are_found() {
        // Right-aligned at x 90: "9" and "10" end at the same x.
        let p = page(30, |i| {
            let t = (i + 1).to_string();
            Some((t.clone(), 90.0 - 3.0 * t.len() as f64))
        });
        let f = found(&[p]);
        assert_eq!(f[0].len(), 30);
        assert_eq!(f[0][0], "1");
        assert_eq!(f[0][29], "30");
    }

    #[test]
    fn zero_padded_right_margin_and_every_fifth_line() {
        let right = page(30, |i| Some((format!("{:03}", i + 51), 475.0)));
        let fifth = page(60, |i| {
            let n = i + 31;
            (n % 5 == 0).then(|| {
                let t = n.to_string();
                (t.clone(), 90.0 - 3.0 * t.len() as f64)
            })
        });
        let f = found(&[right, fifth]);
        assert_eq!(f[0].len(), 30);
        assert_eq!(f[0][0], "051");
        let want: Vec<String> = (7..=18).map(|k| (5 * k).to_string()).collect();
        assert_eq!(f[1], want);
    }

    #[test]
    fn a_sparse_page_follows_the_documents_column() {
        let num = |first: usize| {
            move |i: usize| {
                let t = (first + i).to_string();
                Some((t.clone(), 90.0 - 3.0 * t.len() as f64))
            }
        };
        let full = page(40, num(1));
        let sparse = page(3, num(41));
        let f = found(&[full.clone(), sparse.clone()]);
        assert_eq!(f[1], vec!["41", "42", "43"]);
        // Alone, three numbers are not evidence enough.
        assert!(found(&[sparse])[0].is_empty());
    }

    #[test]
    fn numbers_inside_the_text_block_are_kept() {
        // A table whose first column counts 1..12, inside the text block (paragraph lines above
        // and below start at x 100, the index column at 110).
        let mut g = page(6, |_| None);
        for i in 0..12 {
            let y = 600.0 - 12.0 * i as f64;
            g.extend(glyphs(110.0, y, &(i + 1).to_string(), 10.0));
            g.extend(glyphs(160.0, y, "species name", 10.0));
            g.extend(glyphs(300.0, y, "-2.7", 10.0));
        }
        for i in 0..6 {
            g.extend(glyphs(
                100.0,
                420.0 - 12.0 * i as f64,
                "running text of the body that fills the whole line width here ok",
                10.0,
            ));
        }
        assert!(found(&[g])[0].is_empty());
        // Numbers in running text are one space from their neighbours, not isolated.
        let mut g = Vec::new();
        for i in 0..20 {
            let y = 700.0 - 12.0 * i as f64;
            let line = format!("{} items were counted in the survey line", i + 1);
            g.extend(glyphs(100.0, y, &line, 10.0));
        }
        assert!(found(&[g])[0].is_empty());
    }

    #[test]
    fn margin_numbers_that_do_not_count_up_are_kept() {
        let p = page(30, |i| Some((((i * 7) % 30 + 1).to_string(), 80.0)));
        assert!(found(&[p])[0].is_empty());
    }

    #[test]
    fn a_table_of_contents_is_not_line_numbering() {
        // Chapter numbers left of the entries, one every five lines, over two pages; page
        // numbers right of them that repeat (3, 3, 3, 4, …).
        let toc = |first: usize| {
            page(60, move |i| {
                let chapter = (first + i) / 5 + 1;
                (first + i)
                    .is_multiple_of(5)
                    .then(|| (chapter.to_string(), 75.0))
            })
        };
        let mut pages = vec![toc(0), toc(60)];
        for (k, p) in pages.iter_mut().enumerate() {
            for i in 0..60 {
                let page_no = (3 + (k * 60 + i) / 3).to_string();
                p.extend(glyphs(480.0, 700.0 - 12.0 * i as f64, &page_no, 10.0));
            }
        }
        assert_eq!(found(&pages), vec![Vec::<String>::new(); 2]);
    }

    #[test]
    fn gutter_numbers_of_a_two_column_page() {
        let mut g = Vec::new();
        for i in 0..30 {
            let y = 700.0 - 12.0 * i as f64;
            g.extend(glyphs(60.0, y, "left column text that runs along", 10.0));
            g.extend(glyphs(330.0, y, "right column text that runs along", 10.0));
            g.extend(glyphs(40.0, y, &format!("{:03}", i + 1), 6.0));
            g.extend(glyphs(310.0, y, &format!("{:03}", i + 31), 6.0));
        }
        let f = found(&[g]);
        assert_eq!(f[0].len(), 60);
    }

    #[test]
    fn odd_input_does_not_panic() {
        assert!(find_in_pdf(&[]).is_empty());
        let nan = vec![Glyph {
            x: f64::NAN,
            y: f64::INFINITY,
            w: -1.0,
            size: 0.0,
            text: "7".into(),
        }];
        let _ = find_in_pdf(&[(nan.as_slice(), 0.0, 0.0)]);
    }

    // ---- Text

    /// `body` lines each get the next line number, Docling style (" 12" at the end).
    fn numbered(body: &[&str], first: u32) -> String {
        body.iter()
            .enumerate()
            .map(|(i, l)| {
                if l.is_empty() {
                    String::new()
                } else {
                    format!("{l} {}", first + i as u32)
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn prose(n: usize) -> Vec<String> {
        (0..n)
            .map(|i| format!("line {i} of some running prose with a few words in it"))
            .collect()
    }

    #[test]
    fn trailing_and_standalone_numbers_are_removed() {
        let body = prose(30);
        let refs: Vec<&str> = body.iter().map(String::as_str).collect();
        let mut text = numbered(&refs, 18);
        text.push_str("\n\n48\n\n49\n\n50\n\nAfter the run.");
        // The number lines go, the blank lines around them stay.
        let plain = refs.join("\n") + "\n\n\n\n\nAfter the run.";
        assert_eq!(strip_text(&text).as_deref(), Some(plain.as_str()));
    }

    #[test]
    fn glued_and_mid_line_numbers_and_list_markers() {
        let mut lines: Vec<String> = prose(25)
            .into_iter()
            .enumerate()
            .map(|(i, l)| format!("{l} {}", i + 1))
            .collect();
        lines.push("- As large platforms grow, groups find it increasingly im26".into());
        lines.push("- portant to act in a knowl27 edge setting. 28".into());
        lines.push("- more prose after the merged line goes on here 29".into());
        let text = lines.join("\n");
        let out = strip_text(&text).unwrap();
        let last: Vec<&str> = out.lines().skip(25).collect();
        assert_eq!(
            last,
            vec![
                "As large platforms grow, groups find it increasingly im-",
                "portant to act in a knowledge setting.",
                "more prose after the merged line goes on here",
            ]
        );
        assert_eq!(
            crate::normalize::join_lines(&last),
            "As large platforms grow, groups find it increasingly important to act in a \
             knowledge setting. more prose after the merged line goes on here"
        );
    }

    #[test]
    fn a_paragraph_split_around_a_number_is_joined_again() {
        let mut lines: Vec<String> = prose(24)
            .into_iter()
            .enumerate()
            .map(|(i, l)| format!("{l} {}", i + 1))
            .collect();
        lines.push("as the incentive grows, we need a more 25".into());
        lines.extend(
            [
                "",
                "26",
                "",
                "nuanced view of it 27",
                "",
                "28",
                "",
                "Next one. 29",
            ]
            .map(String::from),
        );
        let out = strip_text(&lines.join("\n")).unwrap();
        let tail: Vec<&str> = out.lines().skip(24).collect();
        assert_eq!(
            tail,
            vec![
                "as the incentive grows, we need a more",
                "nuanced view of it",
                "",
                "",
                "Next one."
            ]
        );
    }

    #[test]
    fn lists_tables_and_labels_are_kept() {
        let mut t = String::from("Steps:\n");
        for i in 1..=12 {
            t.push_str(&format!("{i}. do step number {i} of the method\n"));
        }
        t.push_str("\nRank Species Count\n");
        for i in 1..=15 {
            t.push_str(&format!("{i} House sparrow {}\n", 100 + i));
        }
        t.push('\n');
        for i in 1..=15 {
            t.push_str(&format!("{i}\n"));
        }
        for i in 1..=24 {
            t.push_str(&format!("L{i}\nL{i}\n"));
        }
        t.push_str("We ran it in 2019 and again in 2020\nand in 2021.\n");
        assert_eq!(strip_text(&t), None);
    }

    #[test]
    fn text_odd_input() {
        for s in [
            "",
            "\n\n",
            "1",
            "12345678901234567890",
            "é 1\n\u{0}2",
            "  7  ",
        ] {
            let _ = strip_text(s);
        }
    }
}
