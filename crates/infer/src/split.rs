//! Split cross-encoders (`training/split_model.py`): in the lower encoder layers the premise does
//! not read the hypothesis, so its lower states depend on the premise alone. One ONNX file holds
//! both parts as two entry points; two layouts, told apart by the upper part's inputs:
//! - *segments* (`SplitCrossEncoder`): neither segment reads the other below the split.
//!   `input_ids`/`attention_mask`/`token_type_ids` of one segment → `lower_hidden`, and
//!   `hidden`/`pair_mask` of the two segments' states concatenated → `logits`;
//! - *memory* (`MemoryCrossEncoder`): the hypothesis reads the premise in every layer. A premise →
//!   `lower_hidden` `[1, 2·split + 1, s, hidden]` (each lower layer's keys and values, then its
//!   states), and `memory`/`memory_mask`/`hyp_ids`/`hyp_mask` → `logits`;
//! - *hybrid* (`HybridCrossEncoder`): the memory layout above a few layers in which each segment
//!   reads only itself. A third entry point, `hyp_input_ids`/`hyp_attention_mask` →
//!   `hyp_lower_hidden`, gives a fact's states after those layers (cached like a premise's), and
//!   the upper part takes them as `hyp_hidden` in place of `hyp_ids`.
//!
//! Why: a review's windows are scored against the same facts, so each premise's lower states (and
//! a fact's, in the segments layout) are computed once and cached, and per pair only the upper
//! layers run (with the hypothesis's own lower layers, in the memory layout). Exact: cached states
//! depend on their own tokens alone (that is how the model was trained), so a cached state is the
//! one a fresh run would give, and a pair's logits do not depend on what was scored before.
//!
//! Tokenisation, as in training: the premise alone as `[CLS] premise [SEP]`, at most ¾ of the
//! model's `max_length` tokens, the hypothesis alone as `hypothesis [SEP]`, at most ¼, each cut on
//! its own (a joint longest-first cut would make a segment depend on the other one).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokenizers::Tokenizer;
use tract_onnx::prelude::*;

use crate::plans::{prepare, PlanCache};
use semtrace_core::error::{Error, Result};

/// Graph inputs of the two parts, by name (the exporter's names).
const LOWER_INPUTS: [&str; 3] = ["input_ids", "attention_mask", "token_type_ids"];
const SEGMENTS_INPUTS: [&str; 2] = ["hidden", "pair_mask"];
const MEMORY_INPUTS: [&str; 4] = ["memory", "memory_mask", "hyp_ids", "hyp_mask"];
const HYBRID_INPUTS: [&str; 4] = ["memory", "memory_mask", "hyp_hidden", "hyp_mask"];
const HYBRID_HYP_INPUTS: [&str; 2] = ["hyp_input_ids", "hyp_attention_mask"];
const HYBRID_HYP_OUTPUT: &str = "hyp_lower_hidden";
const LOWER_OUTPUT: &str = "lower_hidden";
const UPPER_OUTPUT: &str = "logits";

/// Most floats of segment states kept (64 Mi floats, 256 MiB): a segments-layout state of a
/// 100-token window is 38 k floats, a memory-layout one of a 5-layer split 11 times that, so a long
/// review's windows fit either way; beyond this the cache starts over.
const MAX_STATE_FLOATS: usize = 64 << 20;

/// The split layout of a graph, if it is a split cross-encoder: it has an input named `hidden`
/// (segments), `hyp_hidden` (hybrid) or `memory`.
pub(crate) fn layout(model: &TypedModel) -> TractResult<Option<Layout>> {
    let has = |name: &str| -> TractResult<bool> {
        Ok(model
            .input_outlets()?
            .iter()
            .any(|o| model.node(o.node).name == name))
    };
    Ok(if has(SEGMENTS_INPUTS[0])? {
        Some(Layout::Segments)
    } else if has(HYBRID_INPUTS[2])? {
        Some(Layout::Hybrid)
    } else if has(MEMORY_INPUTS[0])? {
        Some(Layout::Memory)
    } else {
        None
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    Segments,
    Memory,
    Hybrid,
}

/// What the upper part takes of a hypothesis: its cached lower states (segments, hybrid) or its
/// token ids, which it runs through the lower layers itself (memory).
pub(crate) enum Hypothesis {
    State(Arc<State>),
    Ids(Vec<u32>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Segment {
    Premise,
    Hypothesis,
}

/// One segment's lower states, `planes × rows × hidden`, row-major (segments: 1 plane; memory:
/// each lower layer's keys and values, then the states).
pub(crate) struct State {
    planes: usize,
    rows: usize,
    /// The lower part's output as it came (`[1, rows, hidden]` or `[1, planes, rows, hidden]`):
    /// the memory layout feeds it back without a copy.
    value: TValue,
}

impl State {
    fn data(&self) -> Result<&[f32]> {
        self.value
            .to_plain_array_view::<f32>()
            .map_err(|e| Error::model(format!("lower states: {e:#}")))?
            .to_slice()
            .ok_or_else(|| Error::model("lower states are not contiguous"))
    }
}

pub(crate) struct SplitGraphs {
    layout: Layout,
    lower: TypedModel,
    lower_plans: PlanCache,
    upper: TypedModel,
    upper_plans: PlanCache,
    /// The hybrid layout's hypothesis part and its plans.
    hyp_lower: Option<(TypedModel, PlanCache)>,
    hidden: usize,
    premise_cap: usize,
    hypothesis_cap: usize,
    states: Mutex<HashMap<(Segment, String), Arc<State>>>,
}

fn symbols(model: &TypedModel) -> TractResult<(Option<Symbol>, Option<Symbol>)> {
    let fact = model.input_fact(0)?;
    let dims = fact.shape.dims();
    let sym = |d: Option<&TDim>| match d {
        Some(TDim::Sym(s)) => Some(s.clone()),
        _ => None,
    };
    Ok((sym(dims.first()), sym(dims.get(1))))
}

fn part(model: &TypedModel, inputs: &[&str], output: &str) -> TractResult<TypedModel> {
    let mut m = model.clone();
    m.select_inputs_by_name(inputs)?;
    m.select_outputs_by_name([output])?;
    // Decluttering prunes the other part's nodes and its now dangling inputs.
    m.into_decluttered()
}

fn err(context: &str) -> impl Fn(TractError) -> Error + '_ {
    move |e| Error::model(format!("{context}: {e:#}"))
}

impl SplitGraphs {
    /// The two parts of a split graph of `layout` (see [`layout`]); returns them and how many mask adds
    /// [`prepare`] rewrote.
    pub(crate) fn new(
        model: &TypedModel,
        layout: Layout,
        max_length: usize,
    ) -> Result<(SplitGraphs, usize)> {
        let mut lower = part(model, &LOWER_INPUTS, LOWER_OUTPUT).map_err(err(
            "a split model needs inputs input_ids, attention_mask, token_type_ids and output lower_hidden",
        ))?;
        let (upper_inputs, width_axis): (&[&str], usize) = match layout {
            Layout::Segments => (&SEGMENTS_INPUTS, 2),
            Layout::Memory => (&MEMORY_INPUTS, 3),
            Layout::Hybrid => (&HYBRID_INPUTS, 3),
        };
        let mut upper = part(model, upper_inputs, UPPER_OUTPUT).map_err(err(
            "a split model's upper part needs inputs hidden, pair_mask (or memory, memory_mask, hyp_ids or hyp_hidden, hyp_mask) and output logits",
        ))?;
        let mut hyp_lower = match layout {
            Layout::Hybrid => Some(part(model, &HYBRID_HYP_INPUTS, HYBRID_HYP_OUTPUT).map_err(err(
                "a hybrid split model needs inputs hyp_input_ids, hyp_attention_mask and output hyp_lower_hidden",
            ))?),
            _ => None,
        };
        let (lower_batch, lower_seq) = symbols(&lower).map_err(err("lower part inputs"))?;
        let (upper_batch, _) = symbols(&upper).map_err(err("upper part inputs"))?;
        // The upper part's sequence length is its inputs' last-but-one axis (the memory's third).
        let upper_seq = match upper
            .input_fact(0)
            .map_err(err("upper part inputs"))?
            .shape
            .dims()
            .get(width_axis - 1)
        {
            Some(TDim::Sym(s)) => Some(s.clone()),
            _ => None,
        };
        let hidden = match upper
            .input_fact(0)
            .map_err(err("upper part inputs"))?
            .shape
            .dims()
            .get(width_axis)
        {
            Some(TDim::Val(h)) if *h > 0 => *h as usize,
            other => {
                return Err(Error::model(format!(
                    "the split model's `{}` input needs a fixed width, found {other:?}",
                    upper_inputs[0]
                )))
            }
        };
        let mut adds = prepare(&mut lower, lower_seq.as_ref()).map_err(err("preparing lower"))?;
        adds += prepare(&mut upper, upper_seq.as_ref()).map_err(err("preparing upper"))?;
        let hyp_lower = match hyp_lower.take() {
            Some(mut m) => {
                let (batch, seq) = symbols(&m).map_err(err("hypothesis part inputs"))?;
                adds +=
                    prepare(&mut m, seq.as_ref()).map_err(err("preparing the hypothesis part"))?;
                Some((m, PlanCache::new(batch)))
            }
            None => None,
        };
        let premise_cap = max_length * 3 / 4;
        Ok((
            SplitGraphs {
                layout,
                lower,
                lower_plans: PlanCache::new(lower_batch),
                upper,
                upper_plans: PlanCache::new(upper_batch),
                hyp_lower,
                hidden,
                premise_cap,
                hypothesis_cap: max_length - premise_cap,
                states: Mutex::new(HashMap::new()),
            },
            adds,
        ))
    }

    pub(crate) fn clear_states(&self) {
        self.states.lock().expect("state cache lock").clear();
    }

    pub(crate) fn plans_cached(&self) -> usize {
        self.lower_plans.len()
            + self.upper_plans.len()
            + self.hyp_lower.as_ref().map_or(0, |(_, p)| p.len())
    }

    /// A segment's token ids: `[CLS] premise [SEP]` or `hypothesis [SEP]`, each cut to its cap
    /// with its closing `[SEP]` kept.
    pub(crate) fn segment_ids(
        &self,
        tok: &Tokenizer,
        text: &str,
        seg: Segment,
    ) -> Result<Vec<u32>> {
        let enc = tok
            .encode(text, true)
            .map_err(|e| Error::model(format!("tokenization failed: {e}")))?;
        let mut ids = enc.get_ids().to_vec();
        let cap = match seg {
            Segment::Premise => self.premise_cap,
            Segment::Hypothesis => {
                if !ids.is_empty() {
                    ids.remove(0);
                }
                self.hypothesis_cap
            }
        };
        if ids.len() > cap && cap > 0 {
            let last = ids[ids.len() - 1];
            ids.truncate(cap - 1);
            ids.push(last);
        }
        Ok(ids)
    }

    /// Token ids of a pair as the model reads it, packed (`premise ++ hypothesis`) with its type
    /// ids (0, then 1).
    pub(crate) fn pair_ids(
        &self,
        tok: &Tokenizer,
        premise: &str,
        hypothesis: &str,
    ) -> Result<(Vec<u32>, Vec<u32>)> {
        let p = self.segment_ids(tok, premise, Segment::Premise)?;
        let h = self.segment_ids(tok, hypothesis, Segment::Hypothesis)?;
        let types = std::iter::repeat_n(0, p.len())
            .chain(std::iter::repeat_n(1, h.len()))
            .collect();
        Ok(([p, h].concat(), types))
    }

    /// Lower states of one segment's tokens (run, not cached).
    pub(crate) fn lower_state(&self, ids: &[u32], seg: Segment) -> Result<State> {
        let s = ids.len();
        if s == 0 {
            return Err(Error::model("an empty segment has no lower states"));
        }
        let tt = i64::from(seg == Segment::Hypothesis);
        let arr = |v: Vec<i64>| -> Result<TValue> {
            Ok(tract_ndarray::Array2::from_shape_vec((1, s), v)
                .map_err(|e| Error::model(format!("input shape: {e}")))?
                .into_tensor()
                .into())
        };
        let ids_in = arr(ids.iter().map(|&i| i as i64).collect())?;
        // The hybrid layout's hypothesis has its own part (type 1 is built in), one plane out.
        if let (Some((model, plans)), Segment::Hypothesis) = (&self.hyp_lower, seg) {
            let plan = plans
                .get(model, 1)
                .map_err(err("optimising the hypothesis part"))?;
            let out = plan
                .run(tvec![ids_in, arr(vec![1; s])?])
                .map_err(err("running the hypothesis part"))?;
            return self.state_of(out[0].clone(), s, false);
        }
        let inputs = tvec![ids_in, arr(vec![1; s])?, arr(vec![tt; s])?];
        let plan = self
            .lower_plans
            .get(&self.lower, 1)
            .map_err(err("optimising the lower part"))?;
        let out = plan.run(inputs).map_err(err("running the lower part"))?;
        self.state_of(out[0].clone(), s, self.layout != Layout::Segments)
    }

    /// A lower part's output as a [`State`] of `s` rows, its shape checked: `[1, s, hidden]`, or
    /// `[1, 2·k + 1, s, hidden]` for a memory (keys and values of k layers, then the states).
    fn state_of(&self, value: TValue, s: usize, memory: bool) -> Result<State> {
        if value.datum_type() != f32::datum_type() {
            return Err(Error::model("lower states are not f32"));
        }
        let shape = value.shape().to_vec();
        let planes = match (memory, &shape[..]) {
            (false, [1, rows, h]) if *rows == s && *h == self.hidden => 1,
            (true, [1, planes, rows, h]) if *planes % 2 == 1 && *rows == s && *h == self.hidden => {
                *planes
            }
            _ => {
                return Err(Error::model(format!(
                    "lower states have shape {shape:?}, expected [1, {s}, {h}] or [1, 2·split + 1, {s}, {h}]",
                    h = self.hidden
                )))
            }
        };
        Ok(State {
            planes,
            rows: s,
            value,
        })
    }

    /// What the upper part needs of a hypothesis (see [`Hypothesis`]): cached states in the
    /// segments layout, token ids in the memory layout.
    pub(crate) fn hypothesis(&self, tok: &Tokenizer, text: &str) -> Result<Hypothesis> {
        Ok(match self.layout {
            Layout::Segments | Layout::Hybrid => {
                Hypothesis::State(self.cached_state(tok, text, Segment::Hypothesis)?)
            }
            Layout::Memory => Hypothesis::Ids(self.segment_ids(tok, text, Segment::Hypothesis)?),
        })
    }

    /// [`SplitGraphs::hypothesis`] from token ids, uncached.
    pub(crate) fn hypothesis_from_ids(&self, ids: &[u32]) -> Result<Hypothesis> {
        Ok(match self.layout {
            Layout::Segments | Layout::Hybrid => {
                Hypothesis::State(Arc::new(self.lower_state(ids, Segment::Hypothesis)?))
            }
            Layout::Memory => Hypothesis::Ids(ids.to_vec()),
        })
    }

    /// The cached lower states of a segment's text, computing them on a miss.
    pub(crate) fn cached_state(
        &self,
        tok: &Tokenizer,
        text: &str,
        seg: Segment,
    ) -> Result<Arc<State>> {
        let key = (seg, text.to_string());
        if let Some(s) = self.states.lock().expect("state cache lock").get(&key) {
            return Ok(s.clone());
        }
        let state = Arc::new(self.lower_state(&self.segment_ids(tok, text, seg)?, seg)?);
        let mut cache = self.states.lock().expect("state cache lock");
        let held: usize = cache.values().map(|s| s.value.len()).sum();
        if held + state.value.len() > MAX_STATE_FLOATS {
            cache.clear();
        }
        cache.insert(key, state.clone());
        Ok(state)
    }

    /// Raw logits of one pair from its premise's lower states and its hypothesis.
    pub(crate) fn pair_logits(&self, premise: &State, hypothesis: &Hypothesis) -> Result<Vec<f32>> {
        let shape_err = |e: tract_ndarray::ShapeError| Error::model(format!("input shape: {e}"));
        let ones = |n: usize| -> Result<TValue> {
            Ok(tract_ndarray::Array2::from_shape_vec((1, n), vec![1i64; n])
                .map_err(shape_err)?
                .into_tensor()
                .into())
        };
        let inputs: TVec<TValue> = match hypothesis {
            Hypothesis::State(h) if self.layout == Layout::Hybrid => {
                if premise.planes < 3 || h.planes != 1 {
                    return Err(Error::model(
                        "a hybrid-layout pair needs a premise memory and a hypothesis's states",
                    ));
                }
                tvec![
                    premise.value.clone(),
                    ones(premise.rows)?,
                    h.value.clone(),
                    ones(h.rows)?
                ]
            }
            Hypothesis::State(h) => {
                let n = premise.rows + h.rows;
                let mut data = Vec::with_capacity(n * self.hidden);
                data.extend_from_slice(premise.data()?);
                data.extend_from_slice(h.data()?);
                let hidden = tract_ndarray::Array3::from_shape_vec((1, n, self.hidden), data)
                    .map_err(shape_err)?;
                tvec![hidden.into_tensor().into(), ones(n)?]
            }
            Hypothesis::Ids(ids) => {
                if ids.is_empty() {
                    return Err(Error::model("an empty hypothesis segment"));
                }
                if premise.planes < 3 {
                    return Err(Error::model(
                        "a memory-layout premise needs keys, values and states",
                    ));
                }
                let hyp = tract_ndarray::Array2::from_shape_vec(
                    (1, ids.len()),
                    ids.iter().map(|&i| i as i64).collect(),
                )
                .map_err(shape_err)?;
                tvec![
                    premise.value.clone(),
                    ones(premise.rows)?,
                    hyp.into_tensor().into(),
                    ones(ids.len())?
                ]
            }
        };
        let plan = self
            .upper_plans
            .get(&self.upper, 1)
            .map_err(err("optimising the upper part"))?;
        let out = plan.run(inputs).map_err(err("running the upper part"))?;
        let view = out[0]
            .to_plain_array_view::<f32>()
            .map_err(err("reading logits"))?;
        if view.ndim() != 2 || view.shape()[0] != 1 {
            return Err(Error::model(format!(
                "logits have shape {:?}, expected [1, labels]",
                view.shape()
            )));
        }
        Ok(view.iter().copied().collect())
    }
}
