//! Lines → blocks (headings and paragraph-like units) in reading order; running headers/footers.

use std::collections::{HashMap, HashSet};

use super::normalize::{join_lines, squash_spaces};
use super::pdf::{Column, Line, Page};

/// A heading or a unit of text, before ids are assigned and the scope is cut.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    Heading { page: u32, text: String },
    Unit { page: u32, text: String },
}

const NAMED_HEADINGS: &[&str] = &[
    "abstract",
    "introduction",
    "related work",
    "related works",
    "background",
    "preliminaries",
    "method",
    "methods",
    "methodology",
    "approach",
    "experiments",
    "experiment",
    "experimental setup",
    "experimental results",
    "evaluation",
    "results",
    "discussion",
    "analysis",
    "conclusion",
    "conclusions",
    "conclusion and future work",
    "conclusions and future work",
    "future work",
    "limitations",
    "broader impact",
    "broader impacts",
    "ethics statement",
    "acknowledgments",
    "acknowledgements",
    "acknowledgment",
    "acknowledgement",
    "appendix",
    "appendices",
    "supplementary material",
    "neurips paper checklist",
];

/// Split a leading section number ("3", "3.1", "A.2", "IV.", "3.") from a heading candidate.
fn split_number(s: &str) -> Option<(&str, &str)> {
    let (num, rest) = s.split_once(' ')?;
    let n = num.trim_end_matches('.');
    if n.is_empty() || n.len() > 8 {
        return None;
    }
    let arabic = n
        .split('.')
        .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
        && n.split('.').next().is_some_and(|p| p.len() <= 2);
    let appendix = {
        let mut parts = n.split('.');
        parts
            .next()
            .is_some_and(|p| p.len() == 1 && p.chars().all(|c| c.is_ascii_uppercase()))
            && parts.all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
            && n.contains('.')
    };
    let roman = num.ends_with('.') && n.chars().all(|c| matches!(c, 'I' | 'V' | 'X'));
    (arabic || appendix || roman).then_some((num, rest.trim()))
}

/// The heading name without its number, lowercased, without trailing punctuation.
pub fn heading_key(s: &str) -> String {
    let s = s.trim();
    let rest = split_number(s).map(|(_, r)| r).unwrap_or(s);
    rest.trim_end_matches([':', '.']).trim().to_lowercase()
}

/// Is this line (on its own) a section heading? Named headings ("Introduction", "REFERENCES",
/// "5 Conclusion") or numbered ones ("3.1 Training Data") that read like a title, not like a
/// sentence or a table row.
pub fn is_heading_text(s: &str) -> bool {
    let s = s.trim();
    if s.is_empty() || s.chars().count() > 80 {
        return false;
    }
    let key = heading_key(s);
    if NAMED_HEADINGS.contains(&key.as_str())
        || super::scope::REFERENCE_HEADINGS.contains(&key.as_str())
    {
        return true;
    }
    if let Some(k) = key.strip_prefix("appendix") {
        if k.is_empty() || k.starts_with(' ') || k.starts_with(':') {
            return k.chars().count() < 60;
        }
    }
    let Some((_, rest)) = split_number(s) else {
        return false;
    };
    let first = rest.chars().next();
    if !first.is_some_and(|c| c.is_uppercase()) {
        return false;
    }
    if rest.ends_with(['.', ',', ';']) || rest.split_whitespace().count() > 12 {
        return false;
    }
    let letters = rest.chars().filter(|c| c.is_alphabetic()).count();
    let digits = rest.chars().filter(|c| c.is_ascii_digit()).count();
    let visible = rest.chars().filter(|c| !c.is_whitespace()).count();
    letters * 10 >= visible * 7 && digits * 10 <= visible && letters >= 3
}

/// Normalised key for running header/footer detection: digits folded, case and spaces ignored.
fn running_key(s: &str) -> String {
    s.chars()
        .filter(|c| !c.is_whitespace())
        .map(|c| {
            if c.is_ascii_digit() {
                '#'
            } else {
                c.to_ascii_lowercase()
            }
        })
        .collect()
}

/// A bare page number: "7", "- 7 -", "vii", "Page 7", "7 of 12".
pub fn is_page_number(s: &str) -> bool {
    let t = s
        .trim()
        .trim_matches(|c: char| c == '-' || c == '–' || c.is_whitespace());
    let t = t
        .strip_prefix("Page ")
        .or_else(|| t.strip_prefix("page "))
        .unwrap_or(t);
    if !t.is_empty() && t.len() <= 4 && t.chars().all(|c| c.is_ascii_digit()) {
        return true;
    }
    if let Some((a, b)) = t.split_once(" of ") {
        return a.trim().chars().all(|c| c.is_ascii_digit())
            && b.trim().chars().all(|c| c.is_ascii_digit())
            && !a.trim().is_empty();
    }
    !t.is_empty()
        && t.len() <= 5
        && t.chars()
            .all(|c| matches!(c, 'i' | 'v' | 'x' | 'I' | 'V' | 'X'))
}

/// Which lines of which pages are running headers or footers: lines in the top or bottom margin
/// (or the first/last two lines of a page) whose text, digits folded, recurs on at least
/// max(3, 30% of) pages, and bare page numbers there.
pub fn running_lines(pages: &[Page]) -> HashSet<(usize, usize)> {
    let margin_lines = |p: &Page| -> Vec<usize> {
        let n = p.lines.len();
        (0..n)
            .filter(|&i| {
                let l = &p.lines[i];
                let rel = if p.height > 0.0 {
                    (l.y - p.bottom) / p.height
                } else {
                    0.5
                };
                i < 2 || i + 2 >= n || !(0.08..=0.92).contains(&rel)
            })
            .collect()
    };
    let mut counts: HashMap<String, HashSet<usize>> = HashMap::new();
    for (pi, p) in pages.iter().enumerate() {
        for i in margin_lines(p) {
            counts
                .entry(running_key(&p.lines[i].text))
                .or_default()
                .insert(pi);
        }
    }
    let need = 3.max(pages.len() * 3 / 10);
    let mut out = HashSet::new();
    for (pi, p) in pages.iter().enumerate() {
        for i in margin_lines(p) {
            let l = &p.lines[i];
            let rel = if p.height > 0.0 {
                (l.y - p.bottom) / p.height
            } else {
                0.5
            };
            let in_margin = !(0.1..=0.9).contains(&rel) || i == 0 || i + 1 == p.lines.len();
            let key = running_key(&l.text);
            let repeated = counts.get(&key).is_some_and(|s| s.len() >= need) && !key.is_empty();
            if repeated || (in_margin && is_page_number(&l.text)) {
                out.insert((pi, i));
            }
        }
    }
    out
}

/// The body font size: the most common line size (weighted by characters).
fn body_size(pages: &[Page]) -> f64 {
    let mut hist: HashMap<i64, usize> = HashMap::new();
    for l in pages.iter().flat_map(|p| &p.lines) {
        *hist.entry((l.size * 2.0).round() as i64).or_default() += l.text.len();
    }
    hist.into_iter()
        .max_by_key(|&(k, n)| (n, -k))
        .map(|(k, _)| k as f64 / 2.0)
        .unwrap_or(10.0)
}

/// Title: the largest-font lines at the top of page 1 when clearly larger than the body text,
/// else the first line of page 1 when it looks like a title. Returns the text and how many lines.
fn find_title(page: &Page, skip: &HashSet<usize>, body: f64) -> Option<(String, Vec<usize>)> {
    let idx: Vec<usize> = (0..page.lines.len())
        .filter(|i| !skip.contains(i))
        .take(12)
        .collect();
    let max = idx
        .iter()
        .map(|&i| page.lines[i].size)
        .fold(0.0f64, f64::max);
    if max >= body * 1.2 {
        let start = idx
            .iter()
            .position(|&i| (page.lines[i].size - max).abs() < 0.5)?;
        let mut used = Vec::new();
        let mut parts = Vec::new();
        for &i in &idx[start..] {
            let l = &page.lines[i];
            if (l.size - max).abs() >= 0.5 || parts.len() >= 4 {
                break;
            }
            parts.push(l.text.clone());
            used.push(i);
        }
        let t = squash_spaces(&join_lines(&parts));
        if t.chars().filter(|c| c.is_alphabetic()).count() >= 4 && t.len() <= 300 {
            return Some((t, used));
        }
    }
    let &i = idx.first()?;
    let t = page.lines[i].text.trim();
    let words = t.split_whitespace().count();
    (words >= 3 && t.len() <= 200 && !is_heading_text(t) && !t.ends_with('.'))
        .then(|| (t.to_string(), vec![i]))
}

/// Does this line start a list item?
fn is_bullet(s: &str) -> bool {
    let t = s.trim_start();
    t.starts_with(['•', '◦', '▪', '‣', '∙', '●', '■', '□', '–', '—'])
        || (t.starts_with('(')
            && t[1..].split_once(')').is_some_and(|(n, _)| {
                !n.is_empty() && n.len() <= 3 && n.chars().all(|c| c.is_alphanumeric())
            }))
}

/// Result of segmenting a document's pages.
pub struct Segmented {
    pub title: Option<String>,
    pub blocks: Vec<Block>,
}

/// Segment laid-out pages into blocks: headings and paragraph-like units, running headers,
/// footers and page numbers dropped.
pub fn segment(pages: &[Page]) -> Segmented {
    let running = running_lines(pages);
    let body = body_size(pages);
    let mut title = None;
    let mut title_lines: HashSet<usize> = HashSet::new();
    if let Some(p) = pages.first() {
        let skip: HashSet<usize> = running
            .iter()
            .filter(|(pi, _)| *pi == 0)
            .map(|&(_, i)| i)
            .collect();
        if let Some((t, used)) = find_title(p, &skip, body) {
            title = Some(t);
            title_lines = used.into_iter().collect();
        }
    }
    let mut blocks = Vec::new();
    for (pi, p) in pages.iter().enumerate() {
        let page_no = pi as u32 + 1;
        let numbered: Vec<(usize, &Line)> = p
            .lines
            .iter()
            .enumerate()
            .filter(|(i, _)| !running.contains(&(pi, *i)))
            .collect();
        let lines: Vec<&Line> = numbered.iter().map(|&(_, l)| l).collect();
        // Column edges and typical line spacing on this page.
        let edges = |col: Column| -> (f64, f64) {
            let mut xs: Vec<f64> = lines
                .iter()
                .filter(|l| l.column == col)
                .map(|l| l.x0)
                .collect();
            let mut ends: Vec<f64> = lines
                .iter()
                .filter(|l| l.column == col)
                .map(|l| l.x1)
                .collect();
            xs.sort_by(|a, b| a.total_cmp(b));
            ends.sort_by(|a, b| a.total_cmp(b));
            let left = xs.get(xs.len() / 10).copied().unwrap_or(0.0);
            let right = ends.get(ends.len() * 9 / 10).copied().unwrap_or(0.0);
            (left, right)
        };
        let col_edges: HashMap<u8, (f64, f64)> = [Column::Full, Column::Left, Column::Right]
            .into_iter()
            .map(|c| (c as u8, edges(c)))
            .collect();
        let mut gaps: Vec<f64> = lines
            .windows(2)
            .filter(|w| w[0].column == w[1].column)
            .map(|w| (w[0].y - w[1].y) / w[1].size.max(1.0))
            .filter(|g| (0.8..3.0).contains(g))
            .collect();
        gaps.sort_by(|a, b| a.total_cmp(b));
        let leading = gaps.get(gaps.len() / 2).copied().unwrap_or(1.2);

        let mut current: Vec<String> = Vec::new();
        let flush = |current: &mut Vec<String>, blocks: &mut Vec<Block>| {
            if !current.is_empty() {
                let text = squash_spaces(&join_lines(current));
                current.clear();
                if text.chars().any(|c| c.is_alphanumeric()) {
                    blocks.push(Block::Unit {
                        page: page_no,
                        text,
                    });
                }
            }
        };
        let mut prev: Option<&Line> = None;
        let mut in_title = false;
        for &(oi, l) in &numbered {
            if pi == 0 && title_lines.contains(&oi) {
                // The title is reported separately, and also kept as a unit of its own.
                if !in_title {
                    flush(&mut current, &mut blocks);
                    in_title = true;
                }
                current.push(l.text.clone());
                prev = Some(l);
                continue;
            }
            if in_title {
                flush(&mut current, &mut blocks);
                in_title = false;
            }
            let (cl, cr) = col_edges[&(l.column as u8)];
            let larger = l.size >= body * 1.12;
            let short = l.x1 < cr - 2.0 * l.size || larger;
            let heading = (is_heading_text(&l.text) && short)
                || (larger
                    && l.text.chars().count() <= 100
                    && l.text.chars().filter(|c| c.is_alphabetic()).count() >= 3
                    && !l.text.trim_end().ends_with([',', ';']));
            if heading {
                flush(&mut current, &mut blocks);
                // A heading wrapped over two large-font lines.
                if let Some(Block::Heading { text, page }) = blocks.last_mut() {
                    if *page == page_no
                        && larger
                        && prev.is_some_and(|p| {
                            p.size >= body * 1.12
                                && (p.y - l.y) < 1.6 * l.size
                                && p.column == l.column
                        })
                        && !is_heading_text(&l.text)
                    {
                        text.push(' ');
                        text.push_str(l.text.trim());
                        prev = Some(l);
                        continue;
                    }
                }
                blocks.push(Block::Heading {
                    page: page_no,
                    text: squash_spaces(&l.text),
                });
                prev = Some(l);
                continue;
            }
            let new_para = match prev {
                None => true,
                Some(p) => {
                    let gap = (p.y - l.y) / l.size.max(1.0);
                    let indent = l.x0 - cl;
                    let p_indent = p.x0 - cl;
                    p.column != l.column
                        || gap > leading * 1.45
                        || gap < -0.5
                        || (p.size - l.size).abs() > 0.15 * l.size.max(p.size)
                        || (indent > 0.7 * l.size
                            && indent < 4.0 * l.size
                            && p_indent < 0.5 * l.size)
                        || (p.x1 < cr - 3.0 * p.size
                            && p.text.trim_end().ends_with(['.', ':', '?', '!']))
                        || is_bullet(&l.text)
                }
            };
            if new_para {
                flush(&mut current, &mut blocks);
            }
            current.push(l.text.clone());
            prev = Some(l);
        }
        flush(&mut current, &mut blocks);
    }
    Segmented { title, blocks }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_are_recognised() {
        for h in [
            "3 Method",
            "3.1 Training Data and Batching",
            "Introduction",
            "REFERENCES",
            "References",
            "5 Conclusion",
            "A.2 Proofs",
            "IV. EXPERIMENTS",
            "Appendix A: Extra results",
            "Acknowledgements",
        ] {
            assert!(is_heading_text(h), "{h}");
        }
        for t in [
            "3 of the models were trained on 8 GPUs for 12 hours.",
            "1 Transformer 28.4 41.0",
            "in the introduction we say",
            "2019. Attention is all you need",
            "100 Hz",
        ] {
            assert!(!is_heading_text(t), "{t}");
        }
        assert_eq!(heading_key("7 References"), "references");
        assert_eq!(heading_key("REFERENCES:"), "references");
    }

    #[test]
    fn page_numbers() {
        for s in ["7", "- 12 -", "iv", "Page 3", "3 of 10"] {
            assert!(is_page_number(s), "{s}");
        }
        for s in ["Table 3", "12345", "Introduction"] {
            assert!(!is_page_number(s), "{s}");
        }
    }

    fn line(text: &str, y: f64) -> Line {
        Line {
            text: text.into(),
            x0: 72.0,
            x1: 72.0 + 5.0 * text.len() as f64,
            y,
            size: 10.0,
            column: Column::Full,
        }
    }

    #[test]
    fn running_headers_and_footers_are_detected() {
        let pages: Vec<Page> = (1..=6)
            .map(|n| Page {
                height: 792.0,
                bottom: 0.0,
                lines: vec![
                    line("Published as a conference paper at ICLR 2021", 760.0),
                    line(
                        &format!(
                            "Body text {} goes here.",
                            ["alpha", "beta", "gamma", "delta", "eps", "zeta"][n - 1]
                        ),
                        600.0,
                    ),
                    line("More body text that differs on each page", 588.0 - n as f64),
                    line(
                        &format!(
                            "and the {} paragraph continues.",
                            ["one", "two", "three", "four", "five", "six"][n - 1]
                        ),
                        400.0,
                    ),
                    line(&n.to_string(), 30.0),
                ],
                rotated: String::new(),
                blanks: Vec::new(),
                numbers: Vec::new(),
            })
            .collect();
        let r = running_lines(&pages);
        for pi in 0..6 {
            assert!(r.contains(&(pi, 0)), "header on page {pi}");
            assert!(r.contains(&(pi, 4)), "page number on page {pi}");
            assert!(!r.contains(&(pi, 1)));
            assert!(!r.contains(&(pi, 3)));
        }
    }
}
