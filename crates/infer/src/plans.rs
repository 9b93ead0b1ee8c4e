//! Optimised tract plans, one per batch size, built on first use and cached. Shared by the NLI
//! engine and the sentence embedder.
//!
//! The batch size is made concrete (symbolic batches ran ~3× slower); the sequence length, when the
//! graph has one, stays symbolic. Measured on the default model (scripts/bench.sh): a plan with a
//! symbolic length runs as fast as one per concrete length, and a review no longer pays an
//! optimisation for every new padded length it brings.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tract_onnx::prelude::*;

pub type Plan = Arc<TypedRunnableModel>;

/// Most plans kept at once (one per batch size in practice); beyond this the cache is cleared.
const MAX_PLANS: usize = 24;

/// Ready a decluttered BERT-style graph for its plans; returns how many attention-mask adds now run
/// as [`crate::mask_add::MaskRowAdd`]. Two things tract would otherwise leave on its generic
/// per-element path (~12% of a pair's time together):
/// - a symbolic sequence length is declared ≥ 1, without which tract cannot prove that
///   `batch·seq·hidden` exceeds its vectorisation threshold (the residual adds);
/// - the mask add `scores[B,H,S,T] + mask[B,1,1,T]` becomes one vectorised op.
pub fn prepare(model: &mut TypedModel, seq: Option<&Symbol>) -> TractResult<usize> {
    if let Some(sym) = seq {
        model.symbols.add_assertion(format!("{sym}>=1"))?;
    }
    crate::mask_add::rewrite_mask_adds(model)
}

pub struct PlanCache {
    batch_sym: Option<Symbol>,
    plans: Mutex<HashMap<usize, Plan>>,
}

impl PlanCache {
    /// `batch_sym`: the graph's batch symbol, or `None` for a graph with a fixed batch size.
    pub fn new(batch_sym: Option<Symbol>) -> PlanCache {
        PlanCache {
            batch_sym,
            plans: Mutex::new(HashMap::new()),
        }
    }

    /// The plan of `model` for batches of `rows`.
    pub fn get(&self, model: &TypedModel, rows: usize) -> TractResult<Plan> {
        if let Some(p) = self.plans.lock().expect("plan cache lock").get(&rows) {
            return Ok(p.clone());
        }
        let mut subs = HashMap::new();
        if let Some(s) = &self.batch_sym {
            subs.insert(s.clone(), TDim::Val(rows as i64));
        }
        let plan = model
            .set_symbols(&subs)
            .and_then(|m| m.into_optimized())
            .and_then(|m| m.into_runnable())?;
        let mut cache = self.plans.lock().expect("plan cache lock");
        if cache.len() >= MAX_PLANS {
            cache.clear();
        }
        cache.insert(rows, plan.clone());
        Ok(plan)
    }

    /// How many plans are cached.
    pub fn len(&self) -> usize {
        self.plans.lock().expect("plan cache lock").len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
