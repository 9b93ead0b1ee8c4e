//! Lexical overlap J_lex, used by the semantic-equivalence gate and by redundancy R(f, g).
//!
//! Tokenisation: split on every character that is not alphanumeric (Unicode
//! `char::is_alphanumeric`), lowercase, keep numbers as tokens ("3.5" → "3", "5"; they often
//! are what distinguishes two facts), drop the fixed [`STOP_WORDS`] list. J_lex is the Jaccard
//! index of the two token *sets*; it is 0 when either set is empty.

use std::collections::BTreeSet;

/// Function words that carry no content; frozen, since changing it changes every J_lex.
pub const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "been", "but", "by", "for", "from", "has", "have",
    "in", "into", "is", "it", "its", "of", "on", "or", "that", "the", "their", "these", "this",
    "to", "was", "were", "which", "with",
];

/// The token set of `text` (see the module docs).
pub fn tokens(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
        .map(str::to_lowercase)
        .filter(|t| !STOP_WORDS.contains(&t.as_str()))
        .collect()
}

/// |T(a) ∩ T(b)| / |T(a) ∪ T(b)|, 0 if either token set is empty.
pub fn jaccard_lex(a: &str, b: &str) -> f64 {
    let ta = tokens(a);
    let tb = tokens(b);
    if ta.is_empty() || tb.is_empty() {
        return 0.0;
    }
    let inter = ta.intersection(&tb).count();
    let union = ta.len() + tb.len() - inter;
    inter as f64 / union as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokenisation_lowercases_keeps_numbers_drops_stop_words() {
        let t = tokens("The model reaches 28.4 BLEU on WMT-2014, and the BLEU is high.");
        let want: BTreeSet<String> = ["model", "reaches", "28", "4", "bleu", "wmt", "2014", "high"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(t, want);
    }

    #[test]
    fn jaccard_values() {
        assert_eq!(jaccard_lex("", "anything"), 0.0);
        assert_eq!(jaccard_lex("the of", "the of"), 0.0);
        assert!((jaccard_lex("Attention heads", "attention, HEADS!") - 1.0).abs() < 1e-15);
        // {a1, b, c} vs {b, c, d}: 2 / 4.
        assert!((jaccard_lex("a1 b c", "b c d") - 0.5).abs() < 1e-15);
    }
}
