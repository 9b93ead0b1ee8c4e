//! Text normalisation shared by the PDF and text loaders: ligatures, odd spaces, hyphenation at
//! line ends, and the word tokens used to measure extraction coverage.

/// Expand typographic ligatures and normalise characters that PDF fonts emit for ordinary text
/// (no-break and thin spaces, soft hyphens, control characters).
pub fn expand_ligatures(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if let Some(letters) = semtrace_build::quote::ligature(c) {
            out.push_str(letters);
            continue;
        }
        match c {
            '\u{A0}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' | '\t' => {
                out.push(' ')
            }
            '\u{AD}' | '\u{200B}' | '\u{200C}' | '\u{200D}' | '\u{FEFF}' => {}
            c if c.is_control() && c != '\n' => {}
            c => out.push(c),
        }
    }
    out
}

/// True when `c` is a hyphen that may mark a word broken across lines.
fn is_break_hyphen(c: char) -> bool {
    matches!(c, '-' | '\u{2010}' | '\u{2011}' | '\u{AD}')
}

/// Join lines into one paragraph: a line ending in a hyphen directly after a lowercase letter,
/// followed by a line starting with a lowercase letter, is joined without the hyphen
/// ("exam-" + "ple" → "example"); other lines are joined with one space.
pub fn join_lines<S: AsRef<str>>(lines: &[S]) -> String {
    let mut out = String::new();
    for line in lines {
        let line = line.as_ref().trim();
        if line.is_empty() {
            continue;
        }
        if out.is_empty() {
            out.push_str(line);
            continue;
        }
        let next_lower = line.chars().next().is_some_and(|c| c.is_lowercase());
        let mut tail = out.chars().rev();
        let last = tail.next();
        let before = tail.next();
        if next_lower
            && last.is_some_and(is_break_hyphen)
            && before.is_some_and(|c| c.is_alphabetic())
        {
            // A compound broken at its hyphen ("English-" + "to-German", "state-of-the-" + "art")
            // keeps the hyphen; a plain word ("exam-" + "ple") loses it.
            let next_word = line.split_whitespace().next().unwrap_or("");
            let prev_word = out.rsplit(char::is_whitespace).next().unwrap_or("");
            let compound = next_word
                .trim_end_matches(|c: char| !c.is_alphanumeric())
                .contains('-')
                || prev_word.trim_end_matches(is_break_hyphen).contains('-');
            if !compound {
                out.pop();
            }
            out.push_str(line);
        } else {
            out.push(' ');
            out.push_str(line);
        }
    }
    out
}

/// Collapse runs of whitespace to single spaces and trim.
pub fn squash_spaces(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Lowercase alphanumeric word tokens of a text (ligatures expanded, line-end hyphenation undone),
/// the measure used to compare our extraction with poppler's (the e2e test has its own copy).
#[cfg(test)]
pub fn word_tokens(text: &str) -> Vec<String> {
    let expanded = expand_ligatures(text);
    let lines: Vec<&str> = expanded.lines().collect();
    let joined = join_lines(&lines);
    joined
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| w.to_lowercase())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ligatures_expand() {
        assert_eq!(
            expand_ligatures("\u{FB01}nd \u{FB02}ow e\u{FB00}ort o\u{FB03}ce ba\u{FB04}e"),
            "find flow effort office baffle"
        );
        assert_eq!(expand_ligatures("a\u{A0}b\u{AD}c"), "a bc");
    }

    #[test]
    fn hyphenation_is_undone_only_at_line_ends_before_lowercase() {
        assert_eq!(join_lines(&["an exam-", "ple of it"]), "an example of it");
        assert_eq!(join_lines(&["state-of-the-", "Art"]), "state-of-the- Art");
        assert_eq!(
            join_lines(&["state-of-the-", "art model"]),
            "state-of-the-art model"
        );
        assert_eq!(
            join_lines(&["WMT English-", "to-German task"]),
            "WMT English-to-German task"
        );
        assert_eq!(join_lines(&["x - ", "y"]), "x - y");
        assert_eq!(join_lines(&["well-known", "words"]), "well-known words");
        assert_eq!(join_lines(&["one", "", "two"]), "one two");
    }

    #[test]
    fn tokens_are_lowercase_alphanumeric() {
        assert_eq!(
            word_tokens("The \u{FB01}rst exam-\nple, 3.5%"),
            vec!["the", "first", "example", "3", "5"]
        );
    }
}
