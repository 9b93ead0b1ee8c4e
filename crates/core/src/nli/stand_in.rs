//! A deterministic stand-in scorer for unit tests of the decoding logic. It is NOT an NLI model:
//! its "probability" is the share of the hypothesis's content words found in the premise.

use std::collections::HashSet;

use super::{NliPair, NliScorer};
use crate::error::Result;

pub struct LexicalStandIn;

fn words(s: &str) -> impl Iterator<Item = String> + '_ {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() > 3)
        .map(str::to_lowercase)
}

impl NliScorer for LexicalStandIn {
    fn entailment(&self, pairs: &[NliPair<'_>]) -> Result<Vec<f32>> {
        Ok(pairs
            .iter()
            .map(|p| {
                let premise: HashSet<String> = words(p.premise).collect();
                let hyp: Vec<String> = words(p.hypothesis).collect();
                if hyp.is_empty() {
                    return 0.0;
                }
                hyp.iter().filter(|w| premise.contains(*w)).count() as f32 / hyp.len() as f32
            })
            .collect())
    }
}
