//! Cheap lexical ranking of review windows for a fact (Okapi BM25 over the review's own windows),
//! used by the fast decoder to choose which (window, fact) pairs reach the cross-encoder.

use std::collections::HashMap;

const STOP: &[&str] = &[
    "the", "and", "for", "are", "but", "not", "with", "that", "this", "these", "those", "from",
    "into", "than", "then", "they", "their", "them", "its", "was", "were", "been", "being", "has",
    "have", "had", "can", "could", "would", "should", "will", "may", "might", "also", "such",
    "which", "while", "where", "when", "what", "who", "how", "why", "all", "any", "each", "both",
    "more", "most", "other", "some", "only", "over", "under", "between", "about", "through",
    "using", "used", "use", "paper", "authors", "author", "work", "method", "approach", "proposed",
    "propose", "show", "shows", "shown", "results", "result",
];

/// Content terms of a text: lower-case alphanumeric runs of 3+ characters (or any with a digit),
/// stop words dropped, a plural 's' removed.
pub fn terms(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .filter(|w| {
            (w.chars().count() >= 3 || w.chars().any(|c| c.is_ascii_digit()))
                && !STOP.contains(&w.as_str())
        })
        .map(|w| {
            if w.len() > 3 && w.ends_with('s') && !w.ends_with("ss") {
                w[..w.len() - 1].to_string()
            } else {
                w
            }
        })
        .collect()
}

/// BM25 index over a set of documents (the review's windows).
pub struct Bm25 {
    docs: Vec<HashMap<String, f64>>,
    lens: Vec<f64>,
    avg_len: f64,
    df: HashMap<String, usize>,
}

impl Bm25 {
    pub fn new<S: AsRef<str>>(docs: &[S]) -> Bm25 {
        let mut df: HashMap<String, usize> = HashMap::new();
        let mut tf = Vec::with_capacity(docs.len());
        let mut lens = Vec::with_capacity(docs.len());
        for d in docs {
            let t = terms(d.as_ref());
            lens.push(t.len() as f64);
            let mut m: HashMap<String, f64> = HashMap::new();
            for w in t {
                *m.entry(w).or_default() += 1.0;
            }
            for w in m.keys() {
                *df.entry(w.clone()).or_default() += 1;
            }
            tf.push(m);
        }
        let avg_len = lens.iter().sum::<f64>() / lens.len().max(1) as f64;
        Bm25 {
            docs: tf,
            lens,
            avg_len: avg_len.max(1.0),
            df,
        }
    }

    /// BM25 score of every document for `query` (k1 = 1.2, b = 0.75).
    pub fn scores(&self, query: &str) -> Vec<f64> {
        let (k1, b) = (1.2, 0.75);
        let n = self.docs.len() as f64;
        let mut q = terms(query);
        q.sort();
        q.dedup();
        self.docs
            .iter()
            .zip(&self.lens)
            .map(|(d, &len)| {
                q.iter()
                    .filter_map(|w| d.get(w).map(|&f| (w, f)))
                    .map(|(w, f)| {
                        let df = *self.df.get(w).unwrap_or(&0) as f64;
                        let idf = ((n - df + 0.5) / (df + 0.5) + 1.0).ln();
                        idf * f * (k1 + 1.0) / (f + k1 * (1.0 - b + b * len / self.avg_len))
                    })
                    .sum()
            })
            .collect()
    }

    /// Documents with a positive score, best first (ties by index).
    pub fn ranked(&self, query: &str) -> Vec<usize> {
        let s = self.scores(query);
        let mut idx: Vec<usize> = (0..s.len()).filter(|&i| s[i] > 0.0).collect();
        idx.sort_by(|&a, &b| s[b].total_cmp(&s[a]).then(a.cmp(&b)));
        idx
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_drop_stop_words_and_plurals() {
        assert_eq!(
            terms("The authors train Transformers on 8 GPUs, and the BLEU is 28.4."),
            ["train", "transformer", "8", "gpu", "bleu", "28", "4"]
        );
    }

    #[test]
    fn ranking_prefers_the_window_sharing_rare_terms() {
        let docs = [
            "The model is trained on WMT 2014 English-German with 4.5 million sentence pairs.",
            "The writing is clear and the model is easy to follow.",
            "Nothing related here at all.",
        ];
        let idx = Bm25::new(&docs);
        let r =
            idx.ranked("Training used the WMT 2014 English-German dataset of 4.5 million pairs.");
        assert_eq!(r.first(), Some(&0));
        assert!(!r.contains(&2), "no shared term, no rank");
    }
}
