//! SemTrace build pipeline: candidates → gates (→ refill) → priors → MMR selection → code-aware
//! assignment → bundle and report ([`stages`], sequenced by [`run`]). Synchronous; LLM calls reach
//! it through the candidate list and the refill callback and control reviews arrive as text, so it
//! touches neither the network nor the file system (the CLI does, and re-exports this crate as
//! `semtrace::pipeline`).

pub mod candidate;
pub mod fact_quality;
pub mod gates;
pub mod offline;
pub mod priors;
pub mod report;
pub mod reviewer_facts;
pub mod scoring;
pub mod stages;
pub mod voice;

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};

use anyhow::Result;
use semtrace_build::assign;
use semtrace_build::mention::{self, MentionModel};
use semtrace_build::select::utility;
use semtrace_core::bundle::{
    Bundle, DecodingParams, Document, ModelIdentity, BUNDLE_FORMAT, BUNDLE_VERSION,
};
use semtrace_core::nli::{NliPair, NliScorer};
use semtrace_core::params::{self, TAU_MIN};

use candidate::Candidate;
use gates::{Approved, Embed, Gate, GateRecord};
use report::{
    AssignmentInfo, BuildMode, BuildReport, BuildStatus, CandidateEntry, DocumentInfo, Failure,
    GateCount, Objective, Priors, SelectionEntry,
};
use stages::{PriorSource, Stopwatch};

use semtrace_source::{EvidenceUnit, SourceDoc};

/// Memoises entailment by (premise, hypothesis) so refill rounds and the pair matrix never
/// re-score a pair.
pub struct MemoScorer<'a> {
    inner: &'a dyn NliScorer,
    memo: RefCell<HashMap<(String, String), f32>>,
}

impl<'a> MemoScorer<'a> {
    pub fn new(inner: &'a dyn NliScorer) -> Self {
        MemoScorer {
            inner,
            memo: RefCell::new(HashMap::new()),
        }
    }
}

impl NliScorer for MemoScorer<'_> {
    fn entailment(&self, pairs: &[NliPair<'_>]) -> semtrace_core::Result<Vec<f32>> {
        let missing: Vec<NliPair<'_>> = {
            let memo = self.memo.borrow();
            let mut seen = HashSet::new();
            pairs
                .iter()
                .filter(|p| {
                    let key = (p.premise.to_string(), p.hypothesis.to_string());
                    !memo.contains_key(&key) && seen.insert(key)
                })
                .copied()
                .collect()
        };
        if !missing.is_empty() {
            let probs = self.inner.entailment(&missing)?;
            let mut memo = self.memo.borrow_mut();
            for (p, v) in missing.iter().zip(probs) {
                memo.insert((p.premise.to_string(), p.hypothesis.to_string()), v);
            }
        }
        let memo = self.memo.borrow();
        Ok(pairs
            .iter()
            .map(|p| memo[&(p.premise.to_string(), p.hypothesis.to_string())])
            .collect())
    }

    fn chunk_size(&self) -> usize {
        self.inner.chunk_size()
    }
}

/// Everything the pipeline needs besides the document.
pub struct BuildInput<'a> {
    pub doc: &'a SourceDoc,
    pub path: String,
    pub k: usize,
    pub nli: &'a dyn NliScorer,
    pub model: ModelIdentity,
    pub model_sha256: String,
    pub embed: &'a mut Embed<'a>,
    pub embedder: String,
    pub mode: BuildMode,
    pub llm_info: Option<serde_json::Value>,
    /// Initial candidates (ids are (re)assigned by the pipeline).
    pub candidates: Vec<Candidate>,
    /// Targeted refill: given the units no approved fact covers, more candidates.
    pub refill: &'a mut dyn FnMut(&[EvidenceUnit]) -> Result<Vec<Candidate>>,
    /// (source, controls as (name, text)); None → learned r_f or 1/2 (`learned_priors`).
    pub controls: Option<(String, Vec<(String, String)>)>,
    /// Without controls: r_f from the embedded learned mention model (else 1/2).
    pub learned_priors: bool,
    /// Score only control windows sharing two content words with the fact (labelling at scale).
    pub controls_prefilter: bool,
    /// Windows of the generic-mention gate (empty: gate off).
    pub generic_windows: Vec<String>,
    pub codeword_key: Vec<u8>,
    pub codeword_source: String,
    /// Seed of the deterministic annealing.
    pub seed: u64,
    pub progress: &'a mut dyn FnMut(&str, usize, usize),
}

pub enum Outcome {
    Built {
        bundle: Box<Bundle>,
        report: Box<BuildReport>,
    },
    Failed {
        report: Box<BuildReport>,
    },
}

fn thresholds() -> serde_json::Value {
    serde_json::json!({
        "reviewer_fact_rules": reviewer_facts::Rule::ALL.map(reviewer_facts::Rule::name),
        "words": [params::MIN_WORDS, params::MAX_WORDS],
        "min_quote_words": params::MIN_QUOTE_WORDS,
        "tau_source": params::TAU_SOURCE,
        "max_sentiment": params::MAX_SENTIMENT,
        "max_rating_impact": params::MAX_RATING_IMPACT,
        "near_duplicate_cosine": params::TAU_NEAR_DUP_COSINE,
        "equivalence_entailment": params::TAU_EQUIV_ENTAILMENT,
        "equivalence_jaccard": params::TAU_EQUIV_JACCARD,
        "tau_generic_mention": TAU_MIN,
        "tau_mention": TAU_MIN,
        "mmr_lambda": params::LAMBDA_MMR,
        "implication_activation": TAU_MIN,
        "objective": "8A + P + H",
    })
}

fn gate_counts(recs: &[GateRecord]) -> Vec<GateCount> {
    let mut entered = recs.len();
    Gate::ALL
        .iter()
        .map(|&g| {
            let dropped = recs.iter().filter(|r| r.dropped_by == Some(g)).count();
            let c = GateCount {
                gate: g,
                entered,
                dropped,
            };
            entered -= dropped;
            c
        })
        .collect()
}

/// Runs the stages of [`stages`] in order, recording each in the report; a pool the gates
/// starve ends the build with a report that names the starving gate.
pub fn run(input: BuildInput<'_>) -> Result<Outcome> {
    let BuildInput {
        doc,
        path,
        k,
        nli,
        model,
        model_sha256,
        embed,
        embedder,
        mode,
        llm_info,
        candidates,
        refill,
        controls,
        learned_priors,
        controls_prefilter,
        generic_windows,
        codeword_key,
        codeword_source,
        seed,
        progress,
    } = input;
    if k < 2 || k % 2 != 0 {
        return Err(anyhow::anyhow!("K = {k}: must be even and at least 2"));
    }
    let need = 2 * k;
    let nli = MemoScorer::new(nli);
    let mut watch = Stopwatch::start();
    let title = doc.title.clone().unwrap_or_else(|| {
        std::path::Path::new(&path)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "untitled".into())
    });
    let mention_model = MentionModel::embedded();
    let prior_source = match &controls {
        Some((name, reviews)) => PriorSource::Controls {
            name,
            reviews,
            prefilter: controls_prefilter,
        },
        None if learned_priors => PriorSource::Learned(mention_model),
        None => PriorSource::Uniform,
    };
    let mut report = BuildReport {
        format: report::REPORT_FORMAT.into(),
        format_version: "1.0".into(),
        status: BuildStatus::Failed,
        failure: None,
        builder: format!("semtrace {}", env!("CARGO_PKG_VERSION")),
        document: DocumentInfo {
            path: path.clone(),
            kind: format!("{:?}", doc.kind).to_lowercase(),
            sha256: doc.sha256.clone(),
            title: title.clone(),
            pages: doc.pages,
            units: doc.units.len(),
            excluded_units: doc.excluded_units,
            cut: doc.cut.clone(),
        },
        mode,
        llm: llm_info,
        model: model.name.clone(),
        model_sha256: model_sha256.clone(),
        embedder,
        k,
        thresholds: thresholds(),
        gate_counts: Vec::new(),
        source_counts: Vec::new(),
        refill: None,
        // Recorded up front so a failed build's report still says which controls it had.
        priors: Some(priors_record(&prior_source)),
        selection: Vec::new(),
        codeword: Vec::new(),
        codeword_source: codeword_source.clone(),
        assignment: None,
        evidence: None,
        candidates: Vec::new(),
        timings: Vec::new(),
    };

    // Candidates and gates, with targeted refill over uncovered units when short.
    let gate_inputs = stages::GateInputs {
        nli: &nli,
        embed,
        generic_windows: &generic_windows,
        progress: &mut *progress,
    };
    let pool = stages::gated_pool(doc, candidates, refill, need, gate_inputs, &mut watch)?;
    report.refill = pool.refill_note.clone();
    report.gate_counts = gate_counts(&pool.records);
    let mut entries: Vec<CandidateEntry> = pool
        .all
        .iter()
        .zip(&pool.records)
        .map(|(c, g)| CandidateEntry {
            candidate: c.clone(),
            gates: g.clone(),
            r: None,
            q: None,
            features: None,
            quality: None,
            fill_only: None,
            utility: None,
            selected_rank: None,
        })
        .collect();
    let approved = &pool.approved;
    if approved.len() < need {
        report.failure = Some(starved(&report.gate_counts, &pool, need, &doc.units));
        report.source_counts = report::source_counts(&entries);
        report.candidates = entries;
        report.timings = watch.laps;
        return Ok(Outcome::Failed {
            report: Box::new(report),
        });
    }

    // Natural-mention priors.
    let prioritised = stages::mention_priors(doc, &title, approved, prior_source, &nli, progress)?;
    watch.lap("priors");

    // Selection.
    let fill_only: Vec<bool> = prioritised.fill_only.iter().map(Option::is_some).collect();
    let selection = stages::select(&prioritised.attrs, &prioritised.quality, &fill_only, need)?;
    let index_of: HashMap<&str, usize> = pool
        .all
        .iter()
        .enumerate()
        .map(|(i, c)| (c.id.as_str(), i))
        .collect();
    for ((((a, f), x), n), fill) in approved
        .iter()
        .zip(&prioritised.attrs)
        .zip(&prioritised.features)
        .zip(&prioritised.quality)
        .zip(&prioritised.fill_only)
    {
        let e = &mut entries[index_of[a.candidate.id.as_str()]];
        e.r = Some(f.r);
        e.features = Some(x.values.clone());
        e.quality = *n;
        e.fill_only.clone_from(fill);
        e.utility = Some(utility(f));
        if !f.q.is_empty() {
            e.q = Some(f.q.clone());
        }
    }
    for (rank, p) in selection.picks.iter().enumerate() {
        let id = &prioritised.attrs[p.index].id;
        entries[index_of[id.as_str()]].selected_rank = Some(rank + 1);
        report.selection.push(SelectionEntry {
            rank: rank + 1,
            id: id.clone(),
            utility: p.utility,
            max_redundancy: p.max_redundancy,
            mmr_score: p.score,
        });
    }
    let chosen_approved: Vec<&Approved> =
        selection.picks.iter().map(|p| &approved[p.index]).collect();
    watch.lap("selection");

    let entail = stages::pair_entailment(&nli, &selection.chosen, progress)?;
    watch.lap("pair entailment");

    let layout = stages::assignment(
        &selection.chosen,
        &entail,
        k,
        &codeword_key,
        &doc.sha256,
        seed,
    )?;
    watch.lap("assignment");

    let unit_of = |id: &str| entries[index_of[id]].gates.unit.clone();
    let (positions, pos_entries) = stages::positions(
        &layout,
        &selection.chosen,
        &chosen_approved,
        &entail,
        &unit_of,
    );
    let obj = |o: &assign::Objective| Objective {
        total: o.total,
        a: o.a,
        p: o.p,
        h: o.h,
    };
    report.assignment = Some(AssignmentInfo {
        objective: obj(&layout.assigned.objective),
        initial: obj(&layout.assigned.initial),
        seed,
        positions: pos_entries,
    });
    report.codeword = layout.codeword.clone();
    let mut decoding = DecodingParams::exact12();
    decoding.o_min = (2 * k).div_ceil(3);
    decoding.ineligible_score = -(k as i64) - 1;
    report.evidence = Some(report::Evidence::new(k, decoding.o_min, decoding.alpha));
    let bundle = Bundle {
        format: BUNDLE_FORMAT.into(),
        format_version: BUNDLE_VERSION.into(),
        document: Document {
            title,
            sha256: doc.sha256.clone(),
            pages: doc.pages,
        },
        k,
        positions,
        codeword: layout.codeword,
        decoding,
        model,
        carrier: None,
        selection: Some(semtrace_core::bundle::SELECTION_KEYED.into()),
        recipients: Vec::new(),
        provenance: Some(serde_json::json!({
            "builder": format!("semtrace {}", env!("CARGO_PKG_VERSION")),
            "mode": report.mode,
            "codeword": codeword_source,
            "embedder": report.embedder,
            "priors": report.priors.as_ref().map(|p| p.source.clone()),
            "candidates": pool.all.len(),
            "approved": approved.len(),
        })),
    };
    bundle.validate()?;
    report.status = BuildStatus::Ok;
    report.source_counts = report::source_counts(&entries);
    report.candidates = entries;
    report.timings = watch.laps;
    Ok(Outcome::Built {
        bundle: Box::new(bundle),
        report: Box::new(report),
    })
}

/// The report's record of where r_f came from.
fn priors_record(from: &PriorSource<'_>) -> Priors {
    let features = mention::FEATURES.iter().map(|f| f.to_string()).collect();
    match from {
        PriorSource::Controls { name, reviews, .. } => Priors {
            source: name.to_string(),
            controls: reviews.iter().map(|(n, _)| n.clone()).collect(),
            tau_mention: TAU_MIN,
            features,
            note: format!(
                "r_f from {} selection-only controls, add-one smoothing",
                reviews.len()
            ),
        },
        PriorSource::Learned(m) => Priors {
            source: "learned".into(),
            controls: Vec::new(),
            tau_mention: TAU_MIN,
            features,
            note: format!(
                "no controls: r_f from the embedded mention model {} ({}); C_co and the behavioural redundancy from the same model",
                m.version, m.provenance
            ),
        },
        PriorSource::Uniform => Priors {
            source: "none".into(),
            controls: Vec::new(),
            tau_mention: TAU_MIN,
            features,
            note: "no controls and no LLM, --priors uniform: r_f = 1/2 for every fact, so rarity does not inform selection or pairing".into(),
        },
    }
}

/// Why a build with too few approved facts failed: the gate that removed the most.
fn starved(
    counts: &[GateCount],
    pool: &stages::GatedPool,
    need: usize,
    units: &[EvidenceUnit],
) -> Failure {
    let starving = counts
        .iter()
        .filter(|g| g.dropped > 0)
        .max_by_key(|g| (g.dropped, std::cmp::Reverse(g.gate)))
        .map(|g| g.gate);
    Failure {
        stage: "gates".into(),
        starving_gate: starving,
        message: format!(
            "only {} of {} candidates passed the gates after refill; {need} (2K) are needed{}{}",
            pool.approved.len(),
            pool.all.len(),
            starving
                .map(|g| format!("; the gate that removed the most was `{}`", g.name()))
                .unwrap_or_default(),
            cjk_note(units)
        ),
    }
}

/// For a failed build: a note when the body is mostly Chinese, Japanese or Korean, which the
/// offline extractor (English sentences) and the English NLI model cannot read.
fn cjk_note(units: &[EvidenceUnit]) -> String {
    let (mut cjk, mut letters) = (0usize, 0usize);
    for c in units.iter().flat_map(|u| u.text.chars()) {
        if c.is_alphabetic() {
            letters += 1;
            let cp = u32::from(c);
            if (0x3040..=0x30ff).contains(&cp)
                || (0x3400..=0x9fff).contains(&cp)
                || (0xac00..=0xd7af).contains(&cp)
                || (0xf900..=0xfaff).contains(&cp)
            {
                cjk += 1;
            }
        }
    }
    if letters > 0 && cjk * 100 >= letters * 30 {
        format!(
            "; the text is mostly Chinese, Japanese or Korean ({}% of its letters), and offline \
             extraction and the NLI model read English only",
            cjk * 100 / letters
        )
    } else {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use semtrace_build::mention::Features;
    use semtrace_core::codeword::selection_bits;
    use semtrace_core::nli::LexicalStandIn;
    use semtrace_source::SourceKind;

    const VOCAB: &[&str] = &[
        "encoder",
        "decoder",
        "attention",
        "dropout",
        "optimizer",
        "tokenizer",
        "benchmark",
        "corpus",
        "ablation",
        "baseline",
        "embedding",
        "regularizer",
        "scheduler",
        "vocabulary",
        "checkpoint",
        "ensemble",
        "pipeline",
        "annotator",
        "validation",
        "inference",
        "gradient",
        "kernel",
        "sampler",
        "lexicon",
        "parser",
        "retriever",
        "ranker",
        "planner",
        "critic",
        "reward",
        "policy",
        "memory",
        "adapter",
        "router",
        "expert",
        "teacher",
        "student",
        "codebook",
        "quantizer",
        "filter",
        "graph",
        "lattice",
        "cache",
        "buffer",
        "index",
    ];

    /// Units whose sentences share few content words, so they are not duplicates of each other.
    pub(super) fn doc() -> SourceDoc {
        let w = |i: usize| VOCAB[i % VOCAB.len()];
        let units = (0..20)
            .map(|i| EvidenceUnit {
                id: format!("p{}.u1", i + 1),
                page: i as u32 + 1,
                section: Some("Method".into()),
                text: format!(
                    "The {} {} reaches {} points with the {} {} across {} {} settings in the main study.",
                    w(2 * i),
                    w(2 * i + 1),
                    i + 3,
                    w(3 * i + 7),
                    w(5 * i + 11),
                    w(7 * i + 13),
                    w(11 * i + 17),
                ),
            })
            .collect();
        SourceDoc {
            kind: SourceKind::Text,
            sha256: "ab".repeat(32),
            title: Some("Synthetic".into()),
            pages: 20,
            units,
            excluded_units: 0,
            cut: None,
            page_text: Vec::new(),
        }
    }

    /// Stand-in embedding for pipeline plumbing (not a model): hashed bag of words.
    pub(super) fn bag(texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        Ok(texts
            .iter()
            .map(|t| {
                let mut v = vec![0f32; 128];
                for w in t.split_whitespace() {
                    let h = w
                        .bytes()
                        .fold(5u32, |h, b| h.wrapping_mul(33) ^ u32::from(b));
                    v[(h % 128) as usize] += 1.0;
                }
                v
            })
            .collect())
    }

    fn build_once(k: usize) -> Outcome {
        build_with_key(k, b"key")
    }

    fn build_with_key(k: usize, key: &[u8]) -> Outcome {
        build_full(k, key, false)
    }

    fn build_full(k: usize, key: &[u8], learned_priors: bool) -> Outcome {
        let d = doc();
        let (initial, _) = offline::extract(&d.units, 100);
        let mut embed = bag;
        let mut refill = |_: &[EvidenceUnit]| -> Result<Vec<Candidate>> { Ok(Vec::new()) };
        run(BuildInput {
            doc: &d,
            path: "synthetic.md".into(),
            k,
            nli: &LexicalStandIn,
            model: ModelIdentity {
                name: "lexical-stand-in".into(),
                sha256: "00".repeat(32),
                entailment_index: 0,
                max_length: 256,
            },
            model_sha256: "00".repeat(32),
            embed: &mut embed,
            embedder: "bag".into(),
            mode: BuildMode::Offline,
            llm_info: None,
            candidates: initial,
            refill: &mut refill,
            controls: None,
            learned_priors,
            controls_prefilter: false,
            generic_windows: Vec::new(),
            codeword_key: key.to_vec(),
            codeword_source: "test".into(),
            seed: 7,
            progress: &mut |_, _, _| {},
        })
        .unwrap()
    }

    #[test]
    fn pipeline_builds_a_valid_deterministic_bundle() {
        let (bundle, report) = match build_once(6) {
            Outcome::Built { bundle, report } => (bundle, report),
            Outcome::Failed { report } => panic!("{:?} {:?}", report.failure, report.gate_counts),
        };
        bundle.validate().unwrap();
        assert_eq!(bundle.positions.len(), 6);
        assert_eq!(report.selection.len(), 12);
        assert_eq!(report.priors.as_ref().unwrap().source, "none");
        // K = 6 can never reach alpha = 0.01 (2^-6 = 0.0156), and the report says so.
        let e = report.evidence.as_ref().unwrap();
        assert_eq!((e.needed_all_observed, e.needed_at_o_min), (None, None));
        assert!((e.min_p_value - 1.0 / 64.0).abs() < 1e-15);
        assert_eq!(bundle.decoding.ineligible_score, -7);
        let Outcome::Built { bundle: again, .. } = build_once(6) else {
            panic!()
        };
        assert_eq!(bundle.to_json_pretty(), again.to_json_pretty());
    }

    #[test]
    fn learned_priors_set_rates_from_the_embedded_model() {
        let Outcome::Built { report, .. } = build_full(6, b"key", true) else {
            panic!("expected a bundle")
        };
        let priors = report.priors.as_ref().unwrap();
        assert_eq!(priors.source, "learned");
        assert_eq!(priors.features.len(), mention::FEATURES.len());
        let model = MentionModel::embedded();
        let approved: Vec<_> = report.candidates.iter().filter(|c| c.r.is_some()).collect();
        assert!(approved.len() >= 12);
        for c in &approved {
            let x = Features {
                values: c
                    .features
                    .clone()
                    .expect("approved candidates carry features"),
            };
            // r_f is exactly the shipped model's prediction for the recorded features.
            assert_eq!(c.r, Some(model.rate(&x)));
        }
        let distinct: std::collections::BTreeSet<u64> =
            approved.iter().map(|c| c.r.unwrap().to_bits()).collect();
        assert!(distinct.len() > 1, "the model should tell facts apart");
    }

    #[test]
    fn uniform_priors_give_every_fact_one_half() {
        // What `--priors uniform` asks for: no controls, no learned model.
        let Outcome::Built { report, .. } = build_full(6, b"key", false) else {
            panic!("expected a bundle")
        };
        assert_eq!(report.priors.as_ref().unwrap().source, "none");
        let approved: Vec<_> = report.candidates.iter().filter(|c| c.r.is_some()).collect();
        assert!(approved.len() >= 12);
        assert!(
            approved.iter().all(|c| c.r == Some(0.5)),
            "{:?}",
            approved[0].r
        );
    }

    #[test]
    fn pairs_and_slots_do_not_depend_on_the_secret() {
        // The optimiser must never see the selection: two secrets give the same pairs in the
        // same slots, and the selected side differs exactly where the keyed bits differ.
        let built = |key: &[u8]| match build_with_key(6, key) {
            Outcome::Built { bundle, .. } => bundle,
            Outcome::Failed { report } => panic!("{:?}", report.failure),
        };
        let (a, b) = (built(b"secret-a"), built(b"secret-b"));
        assert!(a.p_value_exact() && b.p_value_exact());
        let sel_a = selection_bits(6, b"secret-a", &a.document.sha256).unwrap();
        let sel_b = selection_bits(6, b"secret-b", &a.document.sha256).unwrap();
        assert_ne!(sel_a, sel_b, "the two keys should differ somewhere");
        let selected =
            |x: &Bundle, j: usize| x.positions[j].facts[usize::from(x.codeword[j])].id.clone();
        let pair = |x: &Bundle, j: usize| {
            let mut ids = x.positions[j].facts.clone().map(|f| f.id);
            ids.sort();
            ids
        };
        for j in 0..6 {
            assert_eq!(a.positions[j].slot, b.positions[j].slot);
            assert_eq!(pair(&a, j), pair(&b, j));
            assert_eq!(
                selected(&a, j) == selected(&b, j),
                sel_a[j] == sel_b[j],
                "position {j}"
            );
        }
    }

    #[test]
    fn starved_pipeline_reports_the_gate() {
        // 20 units give at most 20 candidates; K = 12 needs 24.
        let Outcome::Failed { report } = build_once(12) else {
            panic!("expected a failure")
        };
        let f = report.failure.unwrap();
        assert!(f.message.contains("24"), "{}", f.message);
        assert!(report.refill.is_some());
    }
}
