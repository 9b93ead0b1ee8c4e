//! Selection-only control reviews (paper, appendix "Exact-12 Construction Details"): reviews of the
//! ORIGINAL paper, generated only to estimate how often each candidate fact is mentioned naturally.
//! They are never used as negatives in detector evaluation.
//!
//! Seeds: control k of a document uses `CONTROL_SEED_OFFSET + seed_base + k`. Evaluation (positive /
//! null review) seeds must stay below `CONTROL_SEED_OFFSET` = 1,000,000, so the two seed spaces are
//! disjoint as long as `seed_base` is chosen below that too (the builder uses 0).
//!
//! Generation settings follow the paper's review generation: temperature 0.35, top-p 0.9, at most
//! 1,800 output tokens, 400–1,200 words with the sections Summary, Strengths, Weaknesses, Questions
//! for the authors, Overall score.
//!
//! Long papers: the prompt carries at most `max_paper_chars` characters of the paper (default 60,000,
//! roughly 15k tokens): the beginning of the text, cut at the last paragraph break (else line break,
//! else space) before the limit, followed by a marker saying how much was left out. The front of a
//! paper (abstract, method, main results) is what reviews discuss; the tail is mostly references and
//! appendices.

use anyhow::Result;
use futures_util::future::try_join_all;

use crate::llm::{ChatRequest, LlmClient, Message};

pub const CONTROL_SEED_OFFSET: u64 = 1_000_000;

#[derive(Debug, Clone)]
pub struct ControlOptions {
    pub temperature: f64,
    pub top_p: f64,
    pub max_tokens: u32,
    pub max_paper_chars: usize,
}

impl Default for ControlOptions {
    fn default() -> Self {
        ControlOptions {
            temperature: 0.35,
            top_p: 0.9,
            max_tokens: 1800,
            max_paper_chars: 60_000,
        }
    }
}

/// The 2-sentence windows (the detector's windowing) of the built-in generic reviews
/// (`builder/assets/generic-controls/`, project-written, about no paper), for the generic-mention
/// gate of offline builds.
pub fn generic_review_windows() -> Vec<String> {
    const TEXTS: [&str; 6] = [
        include_str!("../assets/generic-controls/1.md"),
        include_str!("../assets/generic-controls/2.md"),
        include_str!("../assets/generic-controls/3.md"),
        include_str!("../assets/generic-controls/4.md"),
        include_str!("../assets/generic-controls/5.md"),
        include_str!("../assets/generic-controls/6.md"),
    ];
    TEXTS
        .iter()
        .flat_map(|t| semtrace_core::segment::detector_window_texts(t))
        .collect()
}

/// Seed of control `k`.
pub fn control_seed(seed_base: u64, k: usize) -> u64 {
    CONTROL_SEED_OFFSET + seed_base + k as u64
}

/// The paper text as placed in the prompt (see the module docs).
pub fn truncate_paper(text: &str, max_chars: usize) -> String {
    let total = text.chars().count();
    if total <= max_chars {
        return text.to_string();
    }
    let byte_end = text
        .char_indices()
        .nth(max_chars)
        .map(|(b, _)| b)
        .unwrap_or(text.len());
    let head = &text[..byte_end];
    let cut = head
        .rfind("\n\n")
        .filter(|&i| i >= byte_end / 2)
        .or_else(|| head.rfind('\n').filter(|&i| i >= byte_end / 2))
        .or_else(|| head.rfind(' ').filter(|&i| i >= byte_end / 2))
        .unwrap_or(byte_end);
    let kept = &text[..cut];
    let left = total - kept.chars().count();
    format!(
        "{}\n\n[... the remaining {left} characters of the paper are omitted ...]",
        kept.trim_end()
    )
}

const REVIEW_SYSTEM: &str = "You are an expert reviewer for a machine-learning conference.";

pub fn review_prompt(paper: &str) -> String {
    format!(
        "Write a peer review of the following paper for a machine-learning conference.\n\
The review must be 400 to 1,200 words and contain exactly these sections, in this order, each \
starting with its heading on its own line:\n\
Summary\nStrengths\nWeaknesses\nQuestions for the authors\nOverall score\n\
Under \"Overall score\" give a score from 1 (strong reject) to 10 (strong accept) and one sentence \
of justification. Base the review only on the paper.\n\n\
Paper:\n<<<\n{paper}\n>>>"
    )
}

/// `n` control reviews of the paper (the paper uses 8), with seeds `control_seed(seed_base, k)`.
pub async fn generate_controls(
    client: &LlmClient,
    paper_text: &str,
    n: usize,
    seed_base: u64,
    opts: &ControlOptions,
) -> Result<Vec<String>> {
    let prompt = review_prompt(&truncate_paper(paper_text, opts.max_paper_chars));
    let reqs: Vec<ChatRequest> = (0..n)
        .map(|k| ChatRequest {
            messages: vec![
                Message::system(REVIEW_SYSTEM),
                Message::user(prompt.clone()),
            ],
            schema: None,
            temperature: Some(opts.temperature),
            top_p: Some(opts.top_p),
            max_tokens: Some(opts.max_tokens),
            seed: Some(control_seed(seed_base, k)),
        })
        .collect();
    let out = try_join_all(reqs.iter().map(|r| client.chat_text(r))).await?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_are_disjoint_from_evaluation_seeds() {
        assert_eq!(control_seed(0, 0), 1_000_000);
        assert_eq!(control_seed(0, 7), 1_000_007);
        assert!((0..8).all(|k| control_seed(0, k) >= CONTROL_SEED_OFFSET));
    }

    #[test]
    fn truncation_cuts_at_a_paragraph_and_says_so() {
        let text = format!(
            "{}\n\n{}\n\n{}",
            "a".repeat(60),
            "b".repeat(30),
            "c".repeat(50)
        );
        let t = truncate_paper(&text, 100);
        assert!(t.starts_with(&"a".repeat(60)));
        assert!(t.contains(&"b".repeat(30)));
        assert!(!t.contains("ccc"));
        assert!(t.contains("remaining 52 characters"), "{t}");
        assert_eq!(truncate_paper("short", 100), "short");
        // Multi-byte text is cut on a character boundary.
        let u = "é".repeat(300);
        assert!(truncate_paper(&u, 100).starts_with(&"é".repeat(100)));
    }
}
