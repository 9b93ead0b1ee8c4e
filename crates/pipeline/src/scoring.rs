//! Batch NLI scoring for the builder: many (premise, hypothesis) pairs with a progress callback.
//!
//! Pairs are scored in order of length so a batch pads little, then returned in input order.
//! The scorer is deterministic for a fixed batch composition, and the composition depends only
//! on the pairs, so a rebuild scores identically.

use anyhow::Result;
use semtrace_core::nli::{NliPair, NliScorer};

pub fn entailment(
    scorer: &dyn NliScorer,
    pairs: &[NliPair<'_>],
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Vec<f64>> {
    let mut order: Vec<usize> = (0..pairs.len()).collect();
    order.sort_by_key(|&i| (pairs[i].premise.len() + pairs[i].hypothesis.len(), i));
    let batch = scorer.chunk_size().max(1);
    let mut out = vec![0.0f64; pairs.len()];
    let mut done = 0;
    progress(0, pairs.len());
    for chunk in order.chunks(batch) {
        let sub: Vec<NliPair<'_>> = chunk.iter().map(|&i| pairs[i]).collect();
        let probs = scorer.entailment(&sub)?;
        for (&i, p) in chunk.iter().zip(probs) {
            out[i] = f64::from(p);
        }
        done += chunk.len();
        progress(done, pairs.len());
    }
    Ok(out)
}
