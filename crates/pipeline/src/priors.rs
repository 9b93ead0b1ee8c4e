//! Natural-mention priors from selection-only control reviews.
//!
//! q_{f,k} is the largest NLI entailment of fact f over the 2-sentence windows of control k
//! (the detector's own windowing, at most 128 windows); r_f = (#{k: q_{f,k} ≥ 0.52} + 1)/(N + 2).

use std::collections::BTreeSet;

use anyhow::Result;
use semtrace_build::lexical::tokens;
use semtrace_core::nli::{NliPair, NliScorer};
use semtrace_core::segment;

use super::scoring;

/// q[f][k] for every fact and control.
pub fn coverage(
    nli: &dyn NliScorer,
    facts: &[&str],
    controls: &[String],
    prefilter: bool,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Vec<Vec<f64>>> {
    let windows: Vec<Vec<String>> = controls
        .iter()
        .map(|c| segment::detector_window_texts(c))
        .collect();
    let mut pairs = Vec::new();
    let mut owner = Vec::new(); // (fact, control)
    let window_tokens: Vec<Vec<BTreeSet<String>>> = if prefilter {
        windows
            .iter()
            .map(|ws| ws.iter().map(|w| tokens(w)).collect())
            .collect()
    } else {
        Vec::new()
    };
    for (f, fact) in facts.iter().enumerate() {
        let ft = tokens(fact);
        for (k, ws) in windows.iter().enumerate() {
            for (i, w) in ws.iter().enumerate() {
                if prefilter && window_tokens[k][i].intersection(&ft).take(2).count() < 2 {
                    continue;
                }
                pairs.push(NliPair {
                    premise: w,
                    hypothesis: fact,
                });
                owner.push((f, k));
            }
        }
    }
    let probs = scoring::entailment(nli, &pairs, progress)?;
    let mut q = vec![vec![0.0; controls.len()]; facts.len()];
    for (&(f, k), p) in owner.iter().zip(probs) {
        q[f][k] = f64::max(q[f][k], p);
    }
    Ok(q)
}

#[cfg(test)]
mod tests {
    use super::*;
    use semtrace_core::nli::LexicalStandIn;

    #[test]
    fn prefilter_skips_only_windows_sharing_under_two_content_words() {
        // Deterministic stand-in (word overlap), not the model: this checks which pairs are scored.
        let facts = ["sparse routing halves the inference cost"];
        let one = vec!["Routing is discussed at length here.".to_string()];
        let two = vec!["Sparse routing appears to help a lot.".to_string()];
        let q = |controls: &[String], pre: bool| {
            coverage(&LexicalStandIn, &facts, controls, pre, &mut |_, _| {}).unwrap()[0][0]
        };
        assert!(q(&one, false) > 0.0);
        assert_eq!(q(&one, true), 0.0);
        assert_eq!(q(&two, true), q(&two, false));
        assert!(q(&two, true) > 0.0);
    }
}
