//! Natural-language inference: the scorer abstraction (the tract-onnx engine is `semtrace_infer::nli`).

mod spec;
mod stand_in;

pub use spec::ModelSpec;
pub use stand_in::LexicalStandIn;

use crate::error::Result;

/// One (premise, hypothesis) pair: does the premise (a review window) entail the hypothesis (a fact)?
#[derive(Debug, Clone, Copy)]
pub struct NliPair<'a> {
    pub premise: &'a str,
    pub hypothesis: &'a str,
}

/// Anything that turns pairs into entailment probabilities.
///
/// Implementations must be deterministic for a given sequence of calls with the same pairs, and
/// must return exactly one probability in [0, 1] per pair, in order.
pub trait NliScorer {
    fn entailment(&self, pairs: &[NliPair<'_>]) -> Result<Vec<f32>>;

    /// How many pairs one `entailment` call should carry: callers split their work into chunks of
    /// this size and report progress after each. (The engine batches within a chunk on its own.)
    ///
    /// Length sorting happens at two levels, on purpose: callers (`detect`, the builder's
    /// `scoring`) order pairs by character length before chunking, so each chunk holds pairs of
    /// similar length and progress moves evenly; the engine then sorts a chunk by *token* length
    /// into padded batches, which only it can count. Neither sort changes any probability: a
    /// pair's score does not depend on its chunk or batch.
    fn chunk_size(&self) -> usize {
        8
    }
}

/// Numerically stable softmax over one row of logits.
pub fn softmax(logits: &[f32]) -> Vec<f32> {
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let exps: Vec<f32> = logits.iter().map(|&l| (l - max).exp()).collect();
    let sum: f32 = exps.iter().sum();
    exps.into_iter().map(|e| e / sum).collect()
}

#[cfg(test)]
mod tests {
    use super::softmax;

    #[test]
    fn softmax_is_stable_and_normalised() {
        let p = softmax(&[1000.0, 1000.0, -1000.0]);
        assert!((p[0] - 0.5).abs() < 1e-6 && (p[1] - 0.5).abs() < 1e-6 && p[2] < 1e-6);
        let p = softmax(&[0.0, 2.0f32.ln()]);
        assert!((p[1] - 2.0 / 3.0).abs() < 1e-6);
    }
}
