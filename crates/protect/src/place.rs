//! Where the carrier goes on the final page: a horizontal band that no visible text line
//! touches, so that no extractor can interleave carrier lines with the page's own lines.
//! Preference: below all text (the carrier then comes last in every reading order), then above
//! all text, then the tallest gap between lines. The font size is the largest (up to 6 pt) at
//! which the word-wrapped carrier fits the band, and never below 1 pt.

/// A visible text line of the page, as laid out by the project's extractor.
#[derive(Debug, Clone, Copy)]
pub struct Occupied {
    pub x0: f64,
    pub x1: f64,
    /// Baseline and font size.
    pub y: f64,
    pub size: f64,
}

#[derive(Debug, Clone)]
pub struct Placement {
    pub x: f64,
    /// Baseline of the first line.
    pub y: f64,
    pub font_size: f64,
    pub leading: f64,
    pub lines: Vec<String>,
    /// Which band was used, for the report.
    pub band: &'static str,
}

pub const MAX_SIZE: f64 = 6.0;
pub const MIN_SIZE: f64 = 1.0;
/// Leading as a multiple of the font size.
const LEAD: f64 = 1.25;
/// Kept free around visible lines and the page edge (points).
const PAD: f64 = 3.0;

/// Word-wrap `text` (lines separated by '\n') into lines no wider than `width` points at font
/// size `size`, breaking only at spaces and never after a word ending in '-' (extractors join
/// such line ends as hyphenation). `None` when a single word is wider than the line.
pub fn wrap(
    text: &str,
    width: f64,
    size: f64,
    measure: &dyn Fn(&str) -> f64,
) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let space = measure(" ") * size;
    // One flowing paragraph: a short line (a paragraph's last) would be read as part of a
    // column by column-aware extractors, splitting the carrier.
    let flowing = text.replace('\n', " ");
    for para in [flowing.as_str()] {
        let mut line = String::new();
        let mut w = 0.0;
        for word in para.split(' ').filter(|w| !w.is_empty()) {
            let ww = measure(word) * size;
            if ww > width {
                return None;
            }
            let can_break = !line.ends_with('-');
            if !line.is_empty() && w + space + ww > width && can_break {
                out.push(std::mem::take(&mut line));
                w = 0.0;
            }
            if !line.is_empty() {
                line.push(' ');
                w += space;
            }
            line.push_str(word);
            w += ww;
        }
        if !line.is_empty() {
            out.push(line);
        }
    }
    Some(out)
}

/// Balanced wrapping: the narrowest width that keeps the same number of lines, so the last line
/// is nearly as long as the others (every line then spans the middle of the band, where a
/// column gutter would be).
fn balance(
    text: &str,
    width: f64,
    size: f64,
    lines: Vec<String>,
    measure: &dyn Fn(&str) -> f64,
) -> Vec<String> {
    let n = lines.len();
    let (mut lo, mut hi) = (0.0, width);
    let mut best = lines;
    for _ in 0..30 {
        let mid = 0.5 * (lo + hi);
        match wrap(text, mid, size, measure) {
            Some(l) if l.len() == n => {
                hi = mid;
                best = l;
            }
            _ => lo = mid,
        }
    }
    best
}

/// [`place_sized`] at one fixed font size.
pub fn place_fixed(
    text: &str,
    page: (f64, f64, f64, f64),
    occupied: &[Occupied],
    measure: &dyn Fn(&str) -> f64,
    size: f64,
) -> Option<Placement> {
    place_sized(text, page, occupied, measure, size, size)
}

/// Choose the band and size, searching from `max_size` down to `min_size`. `page` is
/// (x0, y0, x1, y1) of the visible page box.
pub fn place_sized(
    text: &str,
    page: (f64, f64, f64, f64),
    occupied: &[Occupied],
    measure: &dyn Fn(&str) -> f64,
    max_size: f64,
    min_size: f64,
) -> Option<Placement> {
    let (px0, py0, px1, py1) = page;
    let lines: Vec<&Occupied> = occupied
        .iter()
        .filter(|o| o.size > 0.0 && o.y.is_finite())
        .collect();
    // Horizontal extent: that of the page's text (so margin notes stay clear), else the page
    // less 10% on each side.
    let (mut x0, mut x1) = if lines.is_empty() {
        (px0 + 0.1 * (px1 - px0), px1 - 0.1 * (px1 - px0))
    } else {
        (
            lines.iter().map(|o| o.x0).fold(f64::INFINITY, f64::min),
            lines.iter().map(|o| o.x1).fold(f64::NEG_INFINITY, f64::max),
        )
    };
    x0 = x0.max(px0 + PAD);
    x1 = x1.min(px1 - PAD);
    if x1 - x0 < 72.0 {
        x0 = px0 + 0.1 * (px1 - px0);
        x1 = px1 - 0.1 * (px1 - px0);
    }
    // Vertical intervals taken by text (descent below, ascent above the baseline).
    let mut taken: Vec<(f64, f64)> = lines
        .iter()
        .map(|o| (o.y - 0.35 * o.size - PAD, o.y + 1.05 * o.size + PAD))
        .collect();
    taken.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut free: Vec<(f64, f64, &'static str)> = Vec::new();
    let mut cursor = py0 + PAD;
    for (lo, hi) in &taken {
        if *lo > cursor {
            let label = if free.is_empty() { "bottom" } else { "gap" };
            free.push((cursor, lo.min(py1 - PAD), label));
        }
        cursor = cursor.max(*hi);
    }
    if py1 - PAD > cursor {
        free.push((
            cursor,
            py1 - PAD,
            if taken.is_empty() { "bottom" } else { "top" },
        ));
    }
    let fit = |lo: f64, hi: f64| -> Option<(f64, Vec<String>)> {
        let mut size = max_size;
        while size >= min_size - 1e-9 {
            if let Some(l) = wrap(text, x1 - x0, size, measure) {
                let height = (l.len().max(1) as f64 - 1.0) * LEAD * size + 1.3 * size;
                if height <= hi - lo {
                    return Some((size, balance(text, x1 - x0, size, l, measure)));
                }
            }
            size = (size * 0.93 * 100.0).floor() / 100.0;
        }
        None
    };
    let mut best: Option<Placement> = None;
    let mut order: Vec<&(f64, f64, &'static str)> = free.iter().collect();
    // bottom, top, then gaps by height.
    order.sort_by(|a, b| {
        let rank = |f: &(f64, f64, &str)| match f.2 {
            "bottom" => 0,
            "top" => 1,
            _ => 2,
        };
        rank(a)
            .cmp(&rank(b))
            .then((b.1 - b.0).total_cmp(&(a.1 - a.0)))
    });
    for &&(lo, hi, label) in &order {
        if let Some((size, l)) = fit(lo, hi) {
            let p = Placement {
                x: x0,
                // First baseline one ascent below the band's top.
                y: hi - 1.0 * size,
                font_size: size,
                leading: LEAD * size,
                lines: l,
                band: label,
            };
            // Bottom or top at 2 pt or more is preferred over a larger size in a gap.
            if size >= 2.0 {
                return Some(p);
            }
            if best.as_ref().is_none_or(|b| b.font_size < p.font_size) {
                best = Some(p);
            }
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mono(s: &str) -> f64 {
        0.5 * s.chars().count() as f64
    }

    #[test]
    fn wrap_breaks_at_spaces_but_not_after_hyphens() {
        let l = wrap("aaaa bbbb cccc", 5.0, 1.0, &mono).unwrap();
        assert_eq!(l, ["aaaa bbbb", "cccc"]);
        let l = wrap("pre- and post", 3.0, 1.0, &mono).unwrap();
        assert_eq!(l, ["pre- and", "post"]);
        assert!(wrap("abcdefghijkl", 5.0, 1.0, &mono).is_none());
        // Paragraph breaks flow: the carrier is one block of full lines.
        let l = wrap("a b\nc", 100.0, 1.0, &mono).unwrap();
        assert_eq!(l, ["a b c"]);
        let text = "aaaa bbbb cccc dddd e";
        let l = wrap(text, 10.0, 1.0, &mono).unwrap();
        assert_eq!(l, ["aaaa bbbb cccc dddd", "e"]);
        let b = balance(text, 10.0, 1.0, l, &mono);
        assert_eq!(b, ["aaaa bbbb", "cccc dddd e"]);
    }

    #[test]
    fn goes_below_the_text_when_room_and_never_touches_a_line() {
        let occ: Vec<Occupied> = (0..40)
            .map(|i| Occupied {
                x0: 72.0,
                x1: 540.0,
                y: 700.0 - 14.0 * i as f64,
                size: 10.0,
            })
            .collect();
        let text = "word ".repeat(600);
        let p = place_sized(
            &text,
            (0.0, 0.0, 612.0, 792.0),
            &occ,
            &mono,
            MAX_SIZE,
            MIN_SIZE,
        )
        .unwrap();
        assert_eq!(p.band, "bottom");
        let last = p.y - (p.lines.len() - 1) as f64 * p.leading;
        assert!(p.y + p.font_size < 700.0 - 14.0 * 39.0 - 3.5, "{p:?}");
        assert!(last - 0.3 * p.font_size > 0.0);
        assert!(p.font_size >= 2.0);
        assert_eq!(p.x, 72.0);
    }

    #[test]
    fn full_page_without_room_fails_cleanly() {
        let occ: Vec<Occupied> = (0..80)
            .map(|i| Occupied {
                x0: 10.0,
                x1: 600.0,
                y: 785.0 - 10.0 * i as f64,
                size: 9.0,
            })
            .collect();
        let text = "word ".repeat(3000);
        assert!(place_sized(
            &text,
            (0.0, 0.0, 612.0, 792.0),
            &occ,
            &mono,
            MAX_SIZE,
            MIN_SIZE
        )
        .is_none());
    }
}
