//! Word coverage of our extraction against poppler's `pdftotext`: the check that the builder's
//! text is what the PDF says (the same token rule on both sides).

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

/// Ligatures expanded, hyphenation at line ends undone, lowercase alphanumeric tokens (the same
/// rule on both sides).
pub fn tokens(text: &str) -> Vec<String> {
    let mut s = String::new();
    for c in text.chars() {
        match c {
            '\u{FB00}' => s.push_str("ff"),
            '\u{FB01}' => s.push_str("fi"),
            '\u{FB02}' => s.push_str("fl"),
            '\u{FB03}' => s.push_str("ffi"),
            '\u{FB04}' => s.push_str("ffl"),
            '\u{AD}' => {}
            c => s.push(c),
        }
    }
    let mut joined = String::new();
    for line in s.lines() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let hyphen = joined.ends_with('-')
            && joined[..joined.len() - 1]
                .chars()
                .last()
                .is_some_and(char::is_alphabetic)
            && line.chars().next().is_some_and(char::is_lowercase);
        if hyphen {
            joined.pop();
        } else if !joined.is_empty() {
            joined.push(' ');
        }
        joined.push_str(line);
    }
    // Fullwidth ASCII folded; each CJK ideograph/kana/hangul is a word of its own (those
    // scripts put no spaces between words).
    let mut spaced = String::new();
    for c in fold_fullwidth(&joined).chars() {
        if is_cjk(c) {
            spaced.push(' ');
            spaced.push(c);
            spaced.push(' ');
        } else {
            spaced.push(c);
        }
    }
    spaced
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

pub fn fold_fullwidth(s: &str) -> String {
    s.chars()
        .map(|c| match c as u32 {
            0xFF01..=0xFF5E => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
            _ => c,
        })
        .collect()
}

pub fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x3040..=0x30FF | 0x3400..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF)
}

/// Lowercase alphanumeric characters (fullwidth folded): the measure for CJK text, where
/// poppler's own word boundaries are unreliable (it splits fullwidth Latin words mid-word).
pub fn chars(text: &str) -> Vec<String> {
    fold_fullwidth(text)
        .chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .map(String::from)
        .collect()
}

pub fn multiset(tokens: &[String]) -> HashMap<&str, usize> {
    let mut m = HashMap::new();
    for t in tokens {
        *m.entry(t.as_str()).or_insert(0) += 1;
    }
    m
}

/// |ours ∩ poppler| / |poppler| over multisets.
pub fn coverage(ours: &[String], poppler: &[String]) -> f64 {
    let o = multiset(ours);
    let p = multiset(poppler);
    let common: usize = p
        .iter()
        .map(|(w, n)| (*n).min(o.get(w).copied().unwrap_or(0)))
        .sum();
    common as f64 / poppler.len().max(1) as f64
}

/// The whole document's text by `pdftotext -enc UTF-8`.
pub fn poppler_text(path: &Path) -> String {
    let o = Command::new("pdftotext")
        .args(["-enc", "UTF-8"])
        .arg(path)
        .arg("-")
        .output()
        .expect("pdftotext (poppler-utils) must be installed");
    assert!(o.status.success(), "pdftotext failed on {}", path.display());
    String::from_utf8_lossy(&o.stdout).into_owned()
}
