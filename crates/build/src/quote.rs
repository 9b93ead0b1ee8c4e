//! Exact-quotation support: is a fact's supporting quotation really in the source?
//!
//! The gate is frozen and strict. Normalisation is limited to what text extraction itself
//! changes — whitespace, hyphenation at line ends and typographic ligatures — so a quotation
//! with a changed word, number or punctuation mark is rejected.

/// The letters of a Unicode ligature PDF text layers use (ﬁ → "fi", ...); the one table for the
/// quotation gate and the source loaders.
pub fn ligature(c: char) -> Option<&'static str> {
    match c {
        '\u{FB00}' => Some("ff"),
        '\u{FB01}' => Some("fi"),
        '\u{FB02}' => Some("fl"),
        '\u{FB03}' => Some("ffi"),
        '\u{FB04}' => Some("ffl"),
        '\u{FB05}' | '\u{FB06}' => Some("st"),
        _ => None,
    }
}

fn push_expanded(c: char, out: &mut String) {
    match (c, ligature(c)) {
        (_, Some(letters)) => out.push_str(letters),
        // Soft hyphens only ever mark a possible break.
        ('\u{00AD}', None) => {}
        _ => out.push(c),
    }
}

/// The normal form both sides are compared in: ligatures expanded, a hyphen followed by
/// whitespace between two letters removed with the whitespace ("exam- ple" → "example"), every
/// run of whitespace collapsed to one space, trimmed, and dropped before closing punctuation or
/// after an opening bracket (text layers differ there: "dk , the" vs "dk, the").
pub fn normalize(text: &str) -> String {
    let mut expanded = String::with_capacity(text.len());
    for c in text.chars() {
        push_expanded(c, &mut expanded);
    }
    let chars: Vec<char> = expanded.chars().collect();
    let mut out = String::with_capacity(expanded.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '-' && i > 0 && chars[i - 1].is_alphabetic() {
            // A line-end hyphen: '-', whitespace containing a newline or a single space, then a
            // lowercase letter (a hyphenated word continues in lowercase).
            let mut j = i + 1;
            while j < chars.len() && chars[j].is_whitespace() {
                j += 1;
            }
            if j > i + 1 && j < chars.len() && chars[j].is_lowercase() {
                // A compound broken at its own hyphen keeps it ("English-\nto-German",
                // "state-of-the-\nart"); the builder's line joiner does the same.
                let next_word: String = chars[j..]
                    .iter()
                    .take_while(|c| !c.is_whitespace())
                    .collect();
                let prev_start = chars[..i]
                    .iter()
                    .rposition(|c| c.is_whitespace())
                    .map_or(0, |p| p + 1);
                let prev_word: String = chars[prev_start..i].iter().collect();
                let compound = next_word
                    .trim_end_matches(|c: char| !c.is_alphanumeric())
                    .contains('-')
                    || prev_word.contains('-');
                if compound {
                    out.push('-');
                }
                i = j;
                continue;
            }
        }
        if c.is_whitespace() {
            // Space before closing or after opening punctuation is layout, not text ("dk ," → "dk,").
            let next = chars[i + 1..].iter().find(|c| !c.is_whitespace());
            let glue_next =
                next.is_some_and(|n| matches!(n, ',' | '.' | ';' | ':' | ')' | ']' | '!' | '?'));
            let glue_prev = out.ends_with(['(', '[']);
            if !out.is_empty() && !out.ends_with(' ') && !glue_next && !glue_prev {
                out.push(' ');
            }
        } else {
            out.push(c);
        }
        i += 1;
    }
    if out.ends_with(' ') {
        out.pop();
    }
    out
}

/// Number of whitespace-separated words.
pub fn word_count(text: &str) -> usize {
    text.split_whitespace().count()
}

/// Does `quote` occur in `source` after normalising both? Empty quotes never match.
pub fn contains(source: &str, quote: &str) -> bool {
    let q = normalize(quote);
    !q.is_empty() && normalize(source).contains(&q)
}

/// Byte range of the normalised quote inside the normalised source, if found.
pub fn find(normalized_source: &str, quote: &str) -> Option<(usize, usize)> {
    let q = normalize(quote);
    if q.is_empty() {
        return None;
    }
    normalized_source.find(&q).map(|s| (s, s + q.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whitespace_hyphenation_and_ligatures_are_normalised() {
        let src = "The model is trained on the ﬁve largest bench-\nmark  datasets\nin two days.";
        assert!(contains(
            src,
            "trained on the five largest benchmark datasets"
        ));
        assert!(contains(src, "the ﬁve largest bench- mark datasets in two"));
        assert_eq!(normalize("  a\t b\n\nc "), "a b c");
        assert_eq!(
            normalize("values of dk , the ( big ) model ."),
            "values of dk, the (big) model."
        );
    }

    #[test]
    fn changed_words_numbers_or_punctuation_are_rejected() {
        let src = "BLEU improves by 2.0 points on WMT 2014, at a fraction of the cost.";
        assert!(contains(src, "improves by 2.0 points on WMT 2014"));
        assert!(!contains(src, "improves by 2.1 points on WMT 2014"));
        assert!(!contains(src, "improves by 2.0 points on WMT 2014."));
        assert!(!contains(src, "Improves by 2.0 points on WMT 2014"));
        assert!(!contains(src, ""));
        assert!(!contains(src, "   "));
    }

    #[test]
    fn real_hyphenated_compounds_survive() {
        // Not a line-end hyphen: followed by a letter directly, or by an uppercase word.
        assert_eq!(normalize("state-of-the-art"), "state-of-the-art");
        assert_eq!(normalize("pre- Transformer"), "pre- Transformer");
        assert!(contains(
            "a state-of-the-art model",
            "state-of-the-art model"
        ));
        assert_eq!(
            normalize("WMT English-\nto-German task"),
            "WMT English-to-German task"
        );
        assert_eq!(normalize("state-of-the-\nart"), "state-of-the-art");
        assert_eq!(normalize("exam-\nple"), "example");
    }
}
