//! Review text → sentences → adjacent windows of `window_sentences` sentences.
//!
//! Real reviews are markdown-ish: headings ("## Strengths", "Weaknesses:"), bullets, numbered
//! lists, hard-wrapped lines, abbreviations ("e.g.", "et al.", "Fig. 3") and decimals. The rules:
//! - a blank line, a heading line or a list item always starts a new sentence;
//! - heading lines (markdown `#`, or a short line without final punctuation ending a block or
//!   followed by a colon) are dropped: they carry no facts and would waste window capacity;
//! - inside a block, a sentence ends at `.`, `!` or `?` (plus closing quotes/brackets) followed by
//!   whitespace and then an uppercase letter, a digit, an opening quote/bracket or a markup char,
//!   unless the token ending in `.` is a known abbreviation or a single-letter initial;
//! - windows are adjacent sentence runs with stride 1 (sentences 1–2, 2–3, …), so a fact stated in
//!   one sentence is seen with both neighbours; a review with a single sentence gets one window.
//!   Only the first `max_windows` windows are kept (the paper's cap of 128): the review layout puts
//!   the slots (Summary, Strengths, Weaknesses) first, so the cap drops the tail.
//!
//! Spans are byte offsets into the original text, so a UI can highlight the evidence.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sentence {
    /// Whitespace-normalised sentence text (markup such as bullets and `**` removed).
    pub text: String,
    /// Byte range in the original review.
    pub start: usize,
    pub end: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Window {
    pub index: usize,
    /// The window's premise text: its sentences joined by one space.
    pub text: String,
    /// Byte range in the original review (first sentence start .. last sentence end).
    pub start: usize,
    pub end: usize,
    /// Index of the window's first sentence.
    pub first_sentence: usize,
}

/// Tokens that end in '.' without ending a sentence (compared lowercase, without the dot).
const ABBREVIATIONS: &[&str] = &[
    "e.g", "i.e", "et al", "al", "etc", "cf", "vs", "fig", "figs", "eq", "eqs", "sec", "secs",
    "tab", "tbl", "app", "appx", "ref", "refs", "no", "nos", "vol", "pp", "p", "dr", "mr", "mrs",
    "ms", "prof", "approx", "resp", "w.r.t", "wrt", "a.k.a", "aka", "ch", "chap", "thm", "lem",
    "def", "prop", "cor", "alg", "ex", "viz", "st", "jr", "sr", "inc", "ltd", "co", "corp", "u.s",
    "e.x", "c.f", "incl", "avg", "std", "max", "min", "est", "ca",
];

/// Split a review into sentences.
pub fn sentences(text: &str) -> Vec<Sentence> {
    let mut out = Vec::new();
    for block in blocks(text) {
        split_block(text, &block, &mut out);
    }
    out
}

/// The window texts of a review at the detector's frozen settings (`params::WINDOW_SENTENCES`
/// sentences, at most `params::MAX_WINDOWS`): what priors and gates score a text by.
pub fn detector_window_texts(text: &str) -> Vec<String> {
    let sents = sentences(text);
    windows(
        &sents,
        crate::params::WINDOW_SENTENCES,
        crate::params::MAX_WINDOWS,
    )
    .0
    .into_iter()
    .map(|w| w.text)
    .collect()
}

/// Adjacent windows of `size` sentences (stride 1), at most `max_windows`. Also returns how many
/// windows there were before the cap.
pub fn windows(sentences: &[Sentence], size: usize, max_windows: usize) -> (Vec<Window>, usize) {
    let size = size.max(1);
    if sentences.is_empty() {
        return (Vec::new(), 0);
    }
    let total = if sentences.len() <= size {
        1
    } else {
        sentences.len() - size + 1
    };
    let kept = total.min(max_windows);
    let ws = (0..kept)
        .map(|i| {
            let run = &sentences[i..(i + size).min(sentences.len())];
            let text = run
                .iter()
                .map(|s| s.text.as_str())
                .collect::<Vec<_>>()
                .join(" ");
            Window {
                index: i,
                text,
                start: run[0].start,
                end: run[run.len() - 1].end,
                first_sentence: i,
            }
        })
        .collect();
    (ws, total)
}

/// A run of content: a list item, a paragraph line group, etc. Byte spans of its pieces are kept
/// so sentence offsets map back to the original text.
struct Block {
    /// (byte offset in the original, the piece's text) for each line of the block, markup stripped.
    lines: Vec<(usize, String)>,
}

fn blocks(text: &str) -> Vec<Block> {
    let mut blocks: Vec<Block> = Vec::new();
    let mut current: Option<Block> = None;
    let mut offset = 0;
    let raw_lines: Vec<(usize, &str)> = text
        .split_inclusive('\n')
        .map(|l| {
            let o = offset;
            offset += l.len();
            (o, l.trim_end_matches(['\n', '\r']))
        })
        .collect();
    for (idx, &(start, line)) in raw_lines.iter().enumerate() {
        let trimmed = line.trim();
        if trimmed.is_empty() {
            if let Some(b) = current.take() {
                blocks.push(b);
            }
            continue;
        }
        let next_blank = raw_lines
            .get(idx + 1)
            .is_none_or(|(_, l)| l.trim().is_empty());
        let (marker_len, is_item) = list_marker(trimmed);
        if !is_item && is_heading(trimmed, next_blank) {
            if let Some(b) = current.take() {
                blocks.push(b);
            }
            continue;
        }
        let lead = line.len() - line.trim_start().len();
        let content = &trimmed[marker_len..];
        let content_start = start + lead + marker_len;
        if is_item {
            if let Some(b) = current.take() {
                blocks.push(b);
            }
        }
        let piece = (content_start, content.to_string());
        match current.as_mut() {
            Some(b) => b.lines.push(piece),
            None => current = Some(Block { lines: vec![piece] }),
        }
    }
    if let Some(b) = current.take() {
        blocks.push(b);
    }
    blocks
}

/// Length of a leading list marker ("- ", "* ", "• ", "1. ", "2) ", "(a) ") and whether one was found.
fn list_marker(line: &str) -> (usize, bool) {
    for m in ["- ", "* ", "+ ", "• ", "– ", "— "] {
        if let Some(rest) = line.strip_prefix(m) {
            return (line.len() - rest.trim_start().len(), true);
        }
    }
    let bytes = line.as_bytes();
    let mut i = 0;
    let paren = bytes.first() == Some(&b'(');
    if paren {
        i = 1;
    }
    let digits_start = i;
    while i < bytes.len()
        && (bytes[i].is_ascii_digit()
            || (i - digits_start < 1 && bytes[i].is_ascii_lowercase() && paren))
    {
        i += 1;
        if i - digits_start > 3 {
            return (0, false);
        }
    }
    if i > digits_start
        && i + 1 < bytes.len()
        && matches!(bytes[i], b'.' | b')')
        && bytes[i + 1] == b' '
    {
        let rest = &line[i + 2..];
        return (line.len() - rest.trim_start().len(), true);
    }
    (0, false)
}

fn is_heading(line: &str, next_blank: bool) -> bool {
    if line.starts_with('#') {
        return true;
    }
    let stripped = line.trim_matches(|c| c == '*' || c == '_' || c == ' ');
    let words = stripped.split_whitespace().count();
    if words == 0 {
        return true; // a rule such as "---" or "***"
    }
    if stripped.chars().all(|c| matches!(c, '-' | '=' | '_' | '*')) {
        return true;
    }
    let last = stripped.chars().last().unwrap_or(' ');
    // "Strengths:" / "**Weaknesses**" / "Summary" on a line of its own.
    words <= 5
        && (last == ':'
            || (!matches!(last, '.' | '!' | '?' | ')' | '"')
                && (next_blank || line.starts_with("**") || words <= 3)))
}

fn split_block(text: &str, block: &Block, out: &mut Vec<Sentence>) {
    // Concatenate the block's lines with single spaces, remembering each char's original offset.
    let mut chars: Vec<(usize, char)> = Vec::new();
    for (n, (start, line)) in block.lines.iter().enumerate() {
        if n > 0 {
            chars.push((*start, ' '));
        }
        for (i, c) in line.char_indices() {
            chars.push((start + i, c));
        }
    }
    let mut sent_start = 0;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i].1;
        if matches!(c, '.' | '!' | '?') {
            // Extend over repeated terminators and closing quotes/brackets.
            let mut j = i + 1;
            while j < chars.len()
                && matches!(
                    chars[j].1,
                    '.' | '!' | '?' | '"' | '\'' | ')' | ']' | '”' | '’' | '*' | '_'
                )
            {
                j += 1;
            }
            if j >= chars.len() {
                break;
            }
            if chars[j].1.is_whitespace() {
                let mut k = j;
                while k < chars.len() && chars[k].1.is_whitespace() {
                    k += 1;
                }
                let next = chars.get(k).map(|&(_, c)| c);
                let starts_sentence = next.is_some_and(|n| {
                    n.is_uppercase()
                        || n.is_ascii_digit()
                        || matches!(n, '"' | '(' | '[' | '“' | '*' | '`' | '$')
                });
                if starts_sentence && !(c == '.' && is_abbreviation(&chars[sent_start..i])) {
                    push_sentence(text, &chars[sent_start..j], out);
                    sent_start = k;
                    i = k;
                    continue;
                }
            }
            i = j;
            continue;
        }
        i += 1;
    }
    if sent_start < chars.len() {
        push_sentence(text, &chars[sent_start..], out);
    }
}

/// Is the token before a '.' (the end of `before`) an abbreviation or an initial?
fn is_abbreviation(before: &[(usize, char)]) -> bool {
    let token: String = before
        .iter()
        .rev()
        .take_while(|(_, c)| !c.is_whitespace() && *c != '(')
        .map(|(_, c)| *c)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let token = token
        .trim_start_matches(|c: char| !c.is_alphanumeric())
        .to_lowercase();
    if token.is_empty() {
        return false;
    }
    // Single letters are not treated as initials: "model X. It ..." and "Section A. We ..." are far
    // more common in reviews than author initials.
    // "et al." spans two tokens; "al" alone is listed too.
    ABBREVIATIONS.contains(&token.as_str())
}

fn push_sentence(_text: &str, span: &[(usize, char)], out: &mut Vec<Sentence>) {
    let raw: String = span.iter().map(|(_, c)| *c).collect();
    let cleaned = clean_markup(&raw);
    if cleaned.is_empty() || !cleaned.chars().any(char::is_alphanumeric) || is_enumerator(&cleaned)
    {
        return;
    }
    let first = span.iter().find(|(_, c)| !c.is_whitespace());
    let last = span.iter().rev().find(|(_, c)| !c.is_whitespace());
    if let (Some(&(s, _)), Some(&(e, c))) = (first, last) {
        out.push(Sentence {
            text: cleaned,
            start: s,
            end: e + c.len_utf8(),
        });
    }
}

/// An inline list label such as "1.", "Q2.", "W1:" or "b)" left alone between two boundaries.
fn is_enumerator(s: &str) -> bool {
    let core = s.trim_end_matches(['.', ')', ':']).trim_start_matches('(');
    core.len() < s.len()
        && (1..=3).contains(&core.chars().count())
        && core.chars().all(|c| c.is_ascii_alphanumeric())
        && (core.chars().any(|c| c.is_ascii_digit()) || core.chars().count() == 1)
}

/// Remove emphasis markup and collapse whitespace.
fn clean_markup(s: &str) -> String {
    let s = s.replace("**", "").replace("__", "");
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(t: &str) -> Vec<String> {
        sentences(t).into_iter().map(|s| s.text).collect()
    }

    #[test]
    fn abbreviations_and_decimals_do_not_split() {
        let t = "The model, e.g. the base one, reaches 28.4 BLEU. Vaswani et al. (2017) show this in Fig. 3 of Sec. 5. It is fast.";
        assert_eq!(
            texts(t),
            vec![
                "The model, e.g. the base one, reaches 28.4 BLEU.",
                "Vaswani et al. (2017) show this in Fig. 3 of Sec. 5.",
                "It is fast."
            ]
        );
    }

    #[test]
    fn markdown_headings_bullets_and_numbered_lists() {
        let t = "## Summary\nThe paper proposes X. It uses Y.\n\n**Strengths:**\n- Clear writing\n- Strong results on WMT 2014.\n\nWeaknesses\n\n1. The ablation is small. More seeds would help.\n2) Limited datasets\n";
        assert_eq!(
            texts(t),
            vec![
                "The paper proposes X.",
                "It uses Y.",
                "Clear writing",
                "Strong results on WMT 2014.",
                "The ablation is small.",
                "More seeds would help.",
                "Limited datasets"
            ]
        );
    }

    #[test]
    fn hard_wrapped_lines_join_and_offsets_point_into_the_original() {
        let t = "The encoder has six\nlayers with residual connections. Training took\n3.5 days on eight GPUs.";
        let s = sentences(t);
        assert_eq!(s.len(), 2);
        assert_eq!(
            s[0].text,
            "The encoder has six layers with residual connections."
        );
        assert_eq!(
            &t[s[0].start..s[0].end],
            "The encoder has six\nlayers with residual connections."
        );
        assert_eq!(s[1].text, "Training took 3.5 days on eight GPUs.");
        assert_eq!(
            &t[s[1].start..s[1].end],
            "Training took\n3.5 days on eight GPUs."
        );
    }

    #[test]
    fn question_and_exclamation_marks_and_quotes() {
        let t = "Why does it work? The authors say \"it is simple.\" I agree! (See the appendix.) Fine.";
        assert_eq!(
            texts(t),
            vec![
                "Why does it work?",
                "The authors say \"it is simple.\"",
                "I agree!",
                "(See the appendix.)",
                "Fine."
            ]
        );
    }

    #[test]
    fn lowercase_continuation_does_not_split() {
        assert_eq!(
            texts("We use approx. ten runs, i.e. many. Then stop."),
            vec!["We use approx. ten runs, i.e. many.", "Then stop."]
        );
        assert_eq!(
            texts("Accuracy is 0.9 vs. 0.8 for the baseline."),
            vec!["Accuracy is 0.9 vs. 0.8 for the baseline."]
        );
    }

    #[test]
    fn windows_are_adjacent_pairs_with_stride_one_and_capped() {
        let s = sentences("A one. B two. C three. D four.");
        let (w, total) = windows(&s, 2, 128);
        assert_eq!(total, 3);
        assert_eq!(
            w.iter().map(|w| w.text.as_str()).collect::<Vec<_>>(),
            vec!["A one. B two.", "B two. C three.", "C three. D four."]
        );
        let (w, total) = windows(&s, 2, 2);
        assert_eq!((w.len(), total), (2, 3));
        let (w, _) = windows(&s[..1], 2, 128);
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].text, "A one.");
        assert_eq!(windows(&[], 2, 128).0.len(), 0);
    }

    #[test]
    fn inline_enumerators_are_not_sentences() {
        assert_eq!(
            texts("Questions: 1. Why X? 2. How Y? Q3. What about Z?"),
            vec!["Questions: 1.", "Why X?", "How Y?", "What about Z?"]
        );
    }

    #[test]
    fn empty_and_markup_only_text_gives_no_sentences() {
        assert!(sentences("").is_empty());
        assert!(sentences("\n\n  \n# Title\n---\n").is_empty());
    }

    #[test]
    fn crlf_and_unicode_are_handled() {
        let t = "Le modèle est rapide.\r\nIl utilise 8 GPU — très bien. 日本語の文です。";
        let s = sentences(t);
        assert_eq!(s[0].text, "Le modèle est rapide.");
        assert!(s
            .iter()
            .all(|x| t.is_char_boundary(x.start) && t.is_char_boundary(x.end)));
    }
}
