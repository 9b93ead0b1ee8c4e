//! The real NLI engine: a HuggingFace `tokenizer.json` (tokenizers crate) feeding an ONNX
//! cross-encoder run by tract. Same code natively and in wasm32.
//!
//! Shapes: graphs come either fully dynamic (`[batch, seq]`) or with a fixed sequence length
//! (e.g. `[batch, 160]`). Dynamic graphs are padded to the longest pair of each batch; fixed ones
//! to the graph's length. Plans: one per batch size ([`crate::plans`]).

use tokenizers::{Tokenizer, TruncationDirection, TruncationParams, TruncationStrategy};
use tract_onnx::prelude::*;

use crate::parallel::par_map;
use crate::plans::PlanCache;
use crate::split::{Hypothesis, Segment, SplitGraphs};
use semtrace_core::error::{Error, Result};
use semtrace_core::nli::{softmax, ModelSpec, NliPair, NliScorer};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Ids,
    Mask,
    TypeIds,
}

/// Sequence lengths of dynamic graphs are rounded up to a multiple of this. Measured on real
/// reviews (scripts/bench.sh): 8 beats 32 (less padding); with a symbolic length in the plan, 1 and
/// 8 run at the same speed, and 8 keeps the batches the onnxruntime benchmark replays unchanged.
pub const SEQ_BUCKET: usize = 8;

/// Pairs per inference batch unless [`TractNli::set_batch_size`] says otherwise. One pair per run
/// was the fastest on the default model (`scripts/bench.sh`'s batch sweep,
/// docs/performance/2026-11-25-engine-batch-sweep.md: 80.8 pairs/s on one thread and 156.7 on
/// two, against 70.8 and 135.4 for batches of 8): a pair's
/// activations (the FFN's 1,536-wide rows) fit in the core's cache, and no pair is padded to a
/// longer one. Results do not depend on the batching.
pub const DEFAULT_BATCH: usize = 1;

/// Largest constant [`fold_constants`] materialises (the f32 word-embedding table is 47 MB).
const FOLD_LIMIT: usize = 256 << 20;

pub struct TractNli {
    spec: ModelSpec,
    sha256: String,
    tokenizer: Tokenizer,
    graph: Graph,
    batch_size: usize,
    threads: usize,
    folded: usize,
    mask_adds: usize,
}

/// A plain cross-encoder (one graph per pair) or a split one ([`crate::split`]).
enum Graph {
    Plain(Box<PlainGraph>),
    Split(Box<SplitGraphs>),
}

struct PlainGraph {
    model: TypedModel,
    roles: Vec<Role>,
    fixed_len: Option<usize>,
    plans: PlanCache,
}

/// Token tensors for one batch, exactly as fed to the graph (row-major, `rows × seq`).
#[derive(Debug, Clone, PartialEq)]
pub struct EncodedBatch {
    pub rows: usize,
    pub seq: usize,
    pub input_ids: Vec<i64>,
    pub attention_mask: Vec<i64>,
    pub token_type_ids: Vec<i64>,
}

fn tract_err(context: &str) -> impl Fn(TractError) -> Error + '_ {
    move |e| Error::model(format!("{context}: {e:#}"))
}

impl TractNli {
    /// Load a model from the ONNX bytes and the `tokenizer.json` text.
    pub fn load(onnx: &[u8], tokenizer_json: &[u8], spec: ModelSpec) -> Result<TractNli> {
        let sha256 = semtrace_core::sha256_hex(onnx);
        let mut tokenizer = Tokenizer::from_bytes(tokenizer_json)
            .map_err(|e| Error::model(format!("tokenizer.json cannot be read: {e}")))?;
        let mut reader = onnx;
        let inference = tract_onnx::onnx()
            .model_for_read(&mut reader)
            .map_err(tract_err("the ONNX file cannot be parsed"))?;
        let mut model = inference
            .into_typed()
            .and_then(|m| m.into_decluttered())
            .map_err(tract_err("the ONNX graph cannot be typed"))?;
        let folded =
            fold_constants(&mut model).map_err(tract_err("folding the graph's constants"))?;
        if let Some(layout) = crate::split::layout(&model).map_err(tract_err("inputs"))? {
            set_truncation(&mut tokenizer, spec.max_length)?;
            let (split, mask_adds) = SplitGraphs::new(&model, layout, spec.max_length)?;
            return Ok(TractNli {
                spec,
                sha256,
                tokenizer,
                graph: Graph::Split(Box::new(split)),
                batch_size: DEFAULT_BATCH,
                threads: 1,
                folded,
                mask_adds,
            });
        }

        let mut roles = Vec::new();
        let mut batch_sym = None;
        let mut seq_sym = None;
        let mut fixed_len = None;
        for (ix, outlet) in model
            .input_outlets()
            .map_err(tract_err("inputs"))?
            .iter()
            .enumerate()
        {
            let name = model.node(outlet.node).name.to_ascii_lowercase();
            let role = if name.contains("input_ids") {
                Role::Ids
            } else if name.contains("attention_mask") {
                Role::Mask
            } else if name.contains("token_type") {
                Role::TypeIds
            } else {
                return Err(Error::model(format!(
                    "unexpected graph input {name:?}: a cross-encoder takes input_ids, attention_mask and optionally token_type_ids"
                )));
            };
            roles.push(role);
            let fact = model.input_fact(ix).map_err(tract_err("input fact"))?;
            let dims = fact.shape.dims();
            if dims.len() != 2 {
                return Err(Error::model(format!(
                    "graph input {name:?} has rank {}, expected 2",
                    dims.len()
                )));
            }
            match &dims[0] {
                TDim::Sym(s) => batch_sym = Some(s.clone()),
                TDim::Val(_) => {}
                other => return Err(Error::model(format!("unsupported batch dimension {other}"))),
            }
            match &dims[1] {
                TDim::Sym(s) => seq_sym = Some(s.clone()),
                TDim::Val(v) => fixed_len = Some(*v as usize),
                other => {
                    return Err(Error::model(format!(
                        "unsupported sequence dimension {other}"
                    )))
                }
            }
        }
        if !roles.contains(&Role::Ids) || !roles.contains(&Role::Mask) {
            return Err(Error::model(
                "the graph lacks input_ids or attention_mask inputs",
            ));
        }
        let mask_adds = crate::plans::prepare(&mut model, seq_sym.as_ref())
            .map_err(tract_err("preparing the graph for its plans"))?;
        let outputs = model.output_outlets().map_err(tract_err("outputs"))?;
        if outputs.is_empty() {
            return Err(Error::model("the graph has no output"));
        }
        // A fixed-length graph caps the pair length whatever the config says.
        let max_length = fixed_len.map_or(spec.max_length, |f| f.min(spec.max_length));
        set_truncation(&mut tokenizer, max_length)?;
        let spec = ModelSpec { max_length, ..spec };
        Ok(TractNli {
            spec,
            sha256,
            tokenizer,
            graph: Graph::Plain(Box::new(PlainGraph {
                model,
                roles,
                fixed_len,
                plans: PlanCache::new(batch_sym),
            })),
            batch_size: DEFAULT_BATCH,
            threads: 1,
            folded,
            mask_adds,
        })
    }

    pub fn spec(&self) -> &ModelSpec {
        &self.spec
    }

    /// SHA-256 of the ONNX bytes this engine was loaded from.
    pub fn sha256(&self) -> &str {
        &self.sha256
    }

    /// How many constant subgraphs were folded at load beyond tract's own budget
    /// (see [`fold_constants`]).
    pub fn folded_constants(&self) -> usize {
        self.folded
    }

    /// How many attention-mask adds run as `MaskRowAdd` ([`crate::plans::prepare`]) (see there).
    pub fn mask_adds(&self) -> usize {
        self.mask_adds
    }

    /// How many optimised plans are cached (one per batch size seen; a split model's two parts
    /// count apart).
    pub fn plans_cached(&self) -> usize {
        match &self.graph {
            Graph::Plain(g) => g.plans.len(),
            Graph::Split(s) => s.plans_cached(),
        }
    }

    /// The graph's fixed sequence length, if it has one.
    pub fn fixed_len(&self) -> Option<usize> {
        match &self.graph {
            Graph::Plain(g) => g.fixed_len,
            Graph::Split(_) => None,
        }
    }

    /// Whether this is a split cross-encoder ([`crate::split`]): lower layers once per segment,
    /// cached, upper layers per pair.
    pub fn is_split(&self) -> bool {
        matches!(self.graph, Graph::Split(_))
    }

    /// Forget a split model's cached segment states (results do not change: a state is recomputed
    /// as it was); benchmarks call it so that a timed run pays for every state it uses.
    pub fn clear_cache(&self) {
        if let Graph::Split(s) = &self.graph {
            s.clear_states();
        }
    }

    pub fn set_batch_size(&mut self, n: usize) {
        self.batch_size = n.max(1);
    }

    /// Token ids of one pair (truncated, special tokens added, unpadded).
    pub fn token_ids(&self, pair: NliPair<'_>) -> Result<Vec<u32>> {
        if let Graph::Split(s) = &self.graph {
            return Ok(s
                .pair_ids(&self.tokenizer, pair.premise, pair.hypothesis)?
                .0);
        }
        let enc = self
            .tokenizer
            .encode((pair.premise, pair.hypothesis), true)
            .map_err(|e| Error::model(format!("tokenization failed: {e}")))?;
        Ok(enc.get_ids().to_vec())
    }

    /// Tokenise a batch and pad it the way the graph wants it.
    pub fn encode(&self, pairs: &[NliPair<'_>]) -> Result<EncodedBatch> {
        if let Graph::Split(s) = &self.graph {
            let rows = pairs
                .iter()
                .map(|p| s.pair_ids(&self.tokenizer, p.premise, p.hypothesis))
                .collect::<Result<Vec<_>>>()?;
            let ones: Vec<Vec<u32>> = rows.iter().map(|(ids, _)| vec![1; ids.len()]).collect();
            let refs: Vec<Row<'_>> = rows
                .iter()
                .zip(&ones)
                .map(|((ids, types), mask)| (&ids[..], &mask[..], &types[..]))
                .collect();
            return Ok(self.assemble_rows(&refs));
        }
        let encs = self.tokenize(pairs)?;
        let refs: Vec<&tokenizers::Encoding> = encs.iter().collect();
        Ok(self.assemble(&refs))
    }

    fn tokenize(&self, pairs: &[NliPair<'_>]) -> Result<Vec<tokenizers::Encoding>> {
        pairs
            .iter()
            .map(|p| {
                self.tokenizer
                    .encode((p.premise, p.hypothesis), true)
                    .map_err(|e| Error::model(format!("tokenization failed: {e}")))
            })
            .collect()
    }

    /// Pad already-tokenised pairs into one batch (to the longest, rounded up to [`SEQ_BUCKET`]).
    fn assemble(&self, encs: &[&tokenizers::Encoding]) -> EncodedBatch {
        let rows: Vec<Row<'_>> = encs
            .iter()
            .map(|e| (e.get_ids(), e.get_attention_mask(), e.get_type_ids()))
            .collect();
        self.assemble_rows(&rows)
    }

    /// Pad rows of (ids, attention mask, type ids) into one batch.
    fn assemble_rows(&self, encs: &[Row<'_>]) -> EncodedBatch {
        let longest = encs.iter().map(|e| e.0.len()).max().unwrap_or(1);
        let seq = self
            .fixed_len()
            .unwrap_or_else(|| longest.div_ceil(SEQ_BUCKET) * SEQ_BUCKET);
        let rows = encs.len();
        let mut b = EncodedBatch {
            rows,
            seq,
            input_ids: vec![0; rows * seq],
            attention_mask: vec![0; rows * seq],
            token_type_ids: vec![0; rows * seq],
        };
        let pad_id = self.tokenizer.get_padding().map(|p| p.pad_id).unwrap_or(0) as i64;
        for (r, e) in encs.iter().enumerate() {
            let row = r * seq;
            b.input_ids[row..row + seq].fill(pad_id);
            for (c, ((&id, &m), &t)) in e.0.iter().zip(e.1).zip(e.2).enumerate().take(seq) {
                b.input_ids[row + c] = id as i64;
                b.attention_mask[row + c] = m as i64;
                b.token_type_ids[row + c] = t as i64;
            }
        }
        b
    }

    /// Pair indices grouped into batches of [`TractNli::set_batch_size`] pairs, shortest first, so
    /// that each batch pads only to its own longest pair.
    fn length_sorted_batches(&self, encs: &[tokenizers::Encoding]) -> Vec<Vec<usize>> {
        let mut order: Vec<usize> = (0..encs.len()).collect();
        order.sort_by_key(|&i| (encs[i].get_ids().len(), i));
        order
            .chunks(self.batch_size)
            .map(<[usize]>::to_vec)
            .collect()
    }

    /// Worker threads for [`NliScorer::entailment`] (native only; wasm32 always uses one).
    pub fn set_threads(&mut self, n: usize) {
        self.threads = n.max(1);
    }

    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Entailment probabilities of the pairs of `batches` (indices into `encs`), stored by index.
    fn run_batches(
        &self,
        encs: &[tokenizers::Encoding],
        batches: &[Vec<usize>],
        out: &mut [f32],
    ) -> Result<()> {
        let probs = par_map(self.threads, batches.len(), |b| {
            let refs: Vec<&tokenizers::Encoding> = batches[b].iter().map(|&i| &encs[i]).collect();
            Ok(self
                .logits(&self.assemble(&refs))?
                .iter()
                .map(|row| softmax(row)[self.spec.entailment_index])
                .collect::<Vec<f32>>())
        })?;
        for (idx, p) in batches.iter().zip(probs) {
            for (&i, p) in idx.iter().zip(p) {
                out[i] = p;
            }
        }
        Ok(())
    }

    /// A split model's entailment probabilities: every distinct segment's lower states first
    /// (cached across calls), then the upper part per pair.
    fn split_entailment(&self, s: &SplitGraphs, pairs: &[NliPair<'_>]) -> Result<Vec<f32>> {
        let mut index = std::collections::HashMap::new();
        let mut segments = Vec::new();
        for p in pairs {
            for key in [
                (Segment::Premise, p.premise),
                (Segment::Hypothesis, p.hypothesis),
            ] {
                index.entry(key).or_insert_with(|| {
                    segments.push(key);
                    segments.len() - 1
                });
            }
        }
        // Premises as cached states; hypotheses as the layout wants them (split::Hypothesis).
        let inputs = par_map(self.threads, segments.len(), |i| match segments[i] {
            (Segment::Premise, text) => Ok(Hypothesis::State(s.cached_state(
                &self.tokenizer,
                text,
                Segment::Premise,
            )?)),
            (Segment::Hypothesis, text) => s.hypothesis(&self.tokenizer, text),
        })?;
        par_map(self.threads, pairs.len(), |i| {
            let p = &pairs[i];
            let Hypothesis::State(premise) = &inputs[index[&(Segment::Premise, p.premise)]] else {
                return Err(Error::model("a premise without lower states"));
            };
            let hypothesis = &inputs[index[&(Segment::Hypothesis, p.hypothesis)]];
            let logits = s.pair_logits(premise, hypothesis)?;
            self.check_labels(logits.len())?;
            Ok(softmax(&logits)[self.spec.entailment_index])
        })
    }

    fn check_labels(&self, n: usize) -> Result<()> {
        if n != self.spec.labels.len() || self.spec.entailment_index >= n {
            return Err(Error::model(format!(
                "the model outputs {n} labels but its config names {} (entailment index {}): wrong model or config",
                self.spec.labels.len(),
                self.spec.entailment_index
            )));
        }
        Ok(())
    }

    /// The graph's input tensors for one batch, in the graph's input order.
    fn inputs(g: &PlainGraph, batch: &EncodedBatch) -> Result<TVec<TValue>> {
        let shape = (batch.rows, batch.seq);
        let mut inputs: TVec<TValue> = tvec![];
        for role in &g.roles {
            let data = match role {
                Role::Ids => &batch.input_ids,
                Role::Mask => &batch.attention_mask,
                Role::TypeIds => &batch.token_type_ids,
            };
            let arr = tract_ndarray::Array2::from_shape_vec(shape, data.clone())
                .map_err(|e| Error::model(format!("input shape: {e}")))?;
            inputs.push(arr.into_tensor().into());
        }
        Ok(inputs)
    }

    /// Where one thread's time goes, per kind of node of the optimised plan: the pairs are
    /// batched exactly as [`NliScorer::entailment`] batches them, each batch runs once to build its
    /// plan and once timed, node by node. For `semtrace bench --profile-ops` (native only: wasm32
    /// has no clock in `std`). `per_node`: one row per plan node (its full name) instead of per
    /// kind of node with the layers folded together.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn op_profile(&self, pairs: &[NliPair<'_>], per_node: bool) -> Result<Vec<OpTime>> {
        use std::collections::HashMap;
        use std::time::Instant;
        use tract_onnx::tract_core::plan::{eval, SimpleState};
        let Graph::Plain(g) = &self.graph else {
            return Err(Error::model(
                "per-op profiles are for plain cross-encoders; this is a split model",
            ));
        };
        let encs = self.tokenize(pairs)?;
        let mut by_kind: HashMap<(String, String), OpTime> = HashMap::new();
        for idx in self.length_sorted_batches(&encs) {
            let refs: Vec<&tokenizers::Encoding> = idx.iter().map(|&i| &encs[i]).collect();
            let batch = self.assemble(&refs);
            let plan = g
                .plans
                .get(&g.model, batch.rows)
                .map_err(tract_err("optimising the graph"))?;
            let mut state = SimpleState::new(&plan).map_err(tract_err("plan state"))?;
            state
                .run(Self::inputs(g, &batch)?)
                .map_err(tract_err("running the model"))?;
            state
                .run_plan_with_eval(Self::inputs(g, &batch)?, |ctx, st, node, inputs| {
                    let start = Instant::now();
                    let out = eval(ctx, st, node, inputs);
                    let secs = start.elapsed().as_secs_f64();
                    let op = node.op().name().to_string();
                    let role = if per_node {
                        node.name.clone()
                    } else {
                        op_role(&node.name)
                    };
                    let e = by_kind.entry((op.clone(), role.clone())).or_insert(OpTime {
                        op,
                        role,
                        seconds: 0.0,
                        calls: 0,
                    });
                    e.seconds += secs;
                    e.calls += 1;
                    out
                })
                .map_err(tract_err("running the model"))?;
        }
        let mut out: Vec<OpTime> = by_kind.into_values().collect();
        out.sort_by(|a, b| b.seconds.total_cmp(&a.seconds));
        Ok(out)
    }

    /// Run the graph on already-encoded tensors; returns one row of raw logits per pair.
    pub fn logits(&self, batch: &EncodedBatch) -> Result<Vec<Vec<f32>>> {
        if batch.rows == 0 {
            return Ok(Vec::new());
        }
        let g = match &self.graph {
            Graph::Plain(g) => g,
            Graph::Split(s) => return self.split_logits(s, batch),
        };
        let plan = g
            .plans
            .get(&g.model, batch.rows)
            .map_err(tract_err("optimising the graph"))?;
        let out = plan
            .run(Self::inputs(g, batch)?)
            .map_err(tract_err("running the model"))?;
        let view = out[0]
            .to_plain_array_view::<f32>()
            .map_err(tract_err("reading logits"))?;
        let dims = view.shape().to_vec();
        if dims.len() != 2 || dims[0] != batch.rows {
            return Err(Error::model(format!(
                "logits have shape {dims:?}, expected [{}, labels]",
                batch.rows
            )));
        }
        self.check_labels(dims[1])?;
        Ok(view
            .rows()
            .into_iter()
            .map(|r| r.iter().copied().collect())
            .collect())
    }

    /// A split model's logits of packed rows (as [`TractNli::encode`] makes them): each row's
    /// type-0 and type-1 tokens are its two segments, run through the lower part (uncached), then
    /// the upper part.
    fn split_logits(&self, s: &SplitGraphs, batch: &EncodedBatch) -> Result<Vec<Vec<f32>>> {
        (0..batch.rows)
            .map(|r| {
                let row = r * batch.seq..(r + 1) * batch.seq;
                let mut premise = Vec::new();
                let mut hypothesis = Vec::new();
                for ((&id, &m), &t) in batch.input_ids[row.clone()]
                    .iter()
                    .zip(&batch.attention_mask[row.clone()])
                    .zip(&batch.token_type_ids[row])
                {
                    if m == 1 {
                        let id = u32::try_from(id)
                            .map_err(|_| Error::model(format!("token id {id} out of range")))?;
                        if t == 0 {
                            &mut premise
                        } else {
                            &mut hypothesis
                        }
                        .push(id);
                    }
                }
                let logits = s.pair_logits(
                    &s.lower_state(&premise, Segment::Premise)?,
                    &s.hypothesis_from_ids(&hypothesis)?,
                )?;
                self.check_labels(logits.len())?;
                Ok(logits)
            })
            .collect()
    }
}

/// One tokenised pair: ids, attention mask, type ids.
type Row<'a> = (&'a [u32], &'a [u32], &'a [u32]);

fn set_truncation(tokenizer: &mut Tokenizer, max_length: usize) -> Result<()> {
    tokenizer
        .with_truncation(Some(TruncationParams {
            max_length,
            strategy: TruncationStrategy::LongestFirst,
            stride: 0,
            direction: TruncationDirection::Right,
        }))
        .map_err(|e| Error::model(format!("tokenizer truncation: {e}")))?;
    tokenizer.with_padding(None);
    Ok(())
}

/// Time spent in one kind of plan node (see [`TractNli::op_profile`]).
#[derive(Debug, Clone, PartialEq)]
pub struct OpTime {
    /// tract's op name, e.g. `OptMatMul`.
    pub op: String,
    /// The node's name with its layer copy numbers and tract's suffixes folded away, so that the
    /// same node of every layer lands in one row (`/dense_3/Add` → `/dense/Add`); the full node name
    /// with `per_node`.
    pub role: String,
    pub seconds: f64,
    /// Node evaluations summed into this row.
    pub calls: usize,
}

/// A node name with its copy numbers folded away, so that the same node of every layer lands in
/// one row: the exporter names the first layer's nodes `/dense/Add`, `/Softmax` and later ones
/// `/dense_3/Add`, `/Softmax_4`, and tract appends `.suffix` decorations to nodes it splits.
#[cfg(not(target_arch = "wasm32"))]
fn op_role(name: &str) -> String {
    let last_slash = name.rfind('/').map_or(0, |i| i + 1);
    let base = match name[last_slash..].find('.') {
        Some(dot) => &name[..last_slash + dot],
        None => name,
    };
    let mut out = String::with_capacity(base.len());
    let mut chars = base.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '_' && chars.peek().is_some_and(char::is_ascii_digit) {
            while chars.peek().is_some_and(char::is_ascii_digit) {
                chars.next();
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod op_role_tests {
    #[test]
    fn layer_copies_and_tract_suffixes_fold_together() {
        for (name, role) in [
            ("/dense_3/Add", "/dense/Add"),
            ("/dense/Add", "/dense/Add"),
            ("/Softmax_11", "/Softmax"),
            ("/LayerNorm_2/ReduceMean.sum", "/LayerNorm/ReduceMean"),
            ("/bert/layer.0/query/MatMul", "/bert/layer.0/query/MatMul"),
            ("logits", "logits"),
        ] {
            assert_eq!(super::op_role(name), role, "{name}");
        }
    }
}

/// Replace every node whose inputs are all constants by its value, once, at load. tract's own
/// folding stops at 4 MiB, so a weight stored as int8 and dequantised by the graph (the default
/// model's 30k-row embedding table) was cast to f32 — 47 MB allocated and filled — on every run.
/// Exact: the node computes the same value, only earlier. Returns how many nodes were folded.
fn fold_constants(model: &mut TypedModel) -> TractResult<usize> {
    use tract_onnx::tract_core::internal::TypedModelPatch;
    use tract_onnx::tract_core::ops::konst::Const;
    use tract_onnx::tract_core::ops::source::TypedSource;
    let mut folded = 0;
    // Nodes already tried and left in place (node ids survive patching), so none is evaluated twice.
    let mut kept = std::collections::HashSet::new();
    loop {
        let mut patch = None;
        for id in model.eval_order()? {
            let node = model.node(id);
            if node.inputs.is_empty()
                || node.op_is::<Const>()
                || node.op_is::<TypedSource>()
                || kept.contains(&id)
            {
                continue;
            }
            let facts = model.node_input_facts(id)?;
            let Some(inputs) = facts
                .iter()
                .map(|f| f.konst.clone().map(|k| k.into_tvalue()))
                .collect::<Option<TVec<TValue>>>()
            else {
                continue;
            };
            // An op that cannot run outside a plan (or not yet) is simply left in place.
            let Ok(Some(outputs)) = node.op.eval_out_of_plan(inputs) else {
                kept.insert(id);
                continue;
            };
            let bytes: usize = outputs
                .iter()
                .map(|t| t.len() * t.datum_type().size_of())
                .sum();
            if bytes > FOLD_LIMIT {
                kept.insert(id);
                continue;
            }
            let mut p = TypedModelPatch::default();
            for (ix, value) in outputs.into_iter().enumerate() {
                let wire = p.add_const(
                    format!("{}.folded{ix}", node.name),
                    value.into_tensor().into_arc_tensor(),
                )?;
                p.shunt_outside(model, OutletId::new(id, ix), wire)?;
            }
            patch = Some(p);
            break;
        }
        let Some(patch) = patch else {
            return Ok(folded);
        };
        patch.apply(model)?;
        folded += 1;
    }
}

impl NliScorer for TractNli {
    /// Every pair is tokenised once; pairs are sorted by token length so that each batch pads only
    /// to its own longest pair (exact: a pair's result does not depend on its batch), batches run
    /// on [`TractNli::set_threads`] threads natively, and results come back in input order.
    fn entailment(&self, pairs: &[NliPair<'_>]) -> Result<Vec<f32>> {
        if let Graph::Split(s) = &self.graph {
            return self.split_entailment(s, pairs);
        }
        let encs = self.tokenize(pairs)?;
        let batches = self.length_sorted_batches(&encs);
        let mut out = vec![0.0f32; pairs.len()];
        self.run_batches(&encs, &batches, &mut out)?;
        Ok(out)
    }

    /// Enough pairs per call for length sorting and every thread to pay off.
    fn chunk_size(&self) -> usize {
        self.batch_size * self.threads * 4
    }
}
