//! The build pipeline: candidates → gates (→ refill) → priors → MMR selection → code-aware
//! assignment → bundle and report. Synchronous; LLM calls reach it through the candidate list and
//! the refill callback, so this module never touches the network.

pub mod candidate;
pub mod gates;
pub mod offline;
pub mod priors;
pub mod report;
pub mod reviewer_facts;
pub mod scoring;
pub mod voice;

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::time::Instant;

use anyhow::Result;
use semtrace_build::assign::{self, AssignParams};
use semtrace_build::facts::FactAttrs;
use semtrace_build::mention::{self, FactInput, Features, MentionModel, PaperContext};
use semtrace_build::priors::mention_rate;
use semtrace_build::select::{mmr_select, utility};
use semtrace_core::bundle::{
    Bundle, DecodingParams, Document, Fact, ModelIdentity, Position, BUNDLE_FORMAT, BUNDLE_VERSION,
};
use semtrace_core::codeword::{balanced_codeword, selection_bits};
use semtrace_core::nli::{NliPair, NliScorer};
use semtrace_core::params::{self, TAU_MIN};
use semtrace_core::slots::default_slots;

use candidate::Candidate;
use gates::{Approved, Embed, Gate, GateRecord, Source};
use report::{
    AssignmentInfo, BuildMode, BuildReport, BuildStatus, CandidateEntry, DocumentInfo, Failure,
    GateCount, Objective, PositionEntry, Priors, SelectionEntry, Timing,
};

use crate::source::{EvidenceUnit, SourceDoc};

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
        return Err(
            crate::exit::InputError(format!("K = {k}: must be even and at least 2")).into(),
        );
    }
    let need = 2 * k;
    let nli = MemoScorer::new(nli);
    let mut timings = Vec::new();
    let mut clock = Instant::now();
    let mut lap = |stage: &str, timings: &mut Vec<Timing>| {
        timings.push(Timing {
            stage: stage.into(),
            seconds: clock.elapsed().as_secs_f64(),
        });
        clock = Instant::now();
    };
    let title = doc.title.clone().unwrap_or_else(|| {
        std::path::Path::new(&path)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "untitled".into())
    });
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
        priors: None,
        selection: Vec::new(),
        codeword: Vec::new(),
        codeword_source: codeword_source.clone(),
        assignment: None,
        evidence: None,
        candidates: Vec::new(),
        timings: Vec::new(),
    };

    let mention_model = MentionModel::embedded();
    // Recorded up front so a failed build's report still says which controls it had.
    report.priors = Some(match &controls {
        Some((src, list)) => Priors {
            source: src.clone(),
            controls: list.iter().map(|(n, _)| n.clone()).collect(),
            tau_mention: TAU_MIN,
            features: mention::FEATURES.iter().map(|f| f.to_string()).collect(),
            note: format!("r_f from {} selection-only controls, add-one smoothing", list.len()),
        },
        None if learned_priors => Priors {
            source: "learned".into(),
            controls: Vec::new(),
            tau_mention: TAU_MIN,
            features: mention::FEATURES.iter().map(|f| f.to_string()).collect(),
            note: format!(
                "no controls: r_f from the embedded mention model {} ({}); C_co and the behavioural redundancy from the same model",
                mention_model.version, mention_model.provenance
            ),
        },
        None => Priors {
            source: "none".into(),
            controls: Vec::new(),
            tau_mention: TAU_MIN,
            features: mention::FEATURES.iter().map(|f| f.to_string()).collect(),
            note: "no controls and no LLM, --priors uniform: r_f = 1/2 for every fact, so rarity does not inform selection or pairing".into(),
        },
    });
    // Candidates and gates, with targeted refill over uncovered units when short.
    let source = Source::new(&doc.units);
    let mut all: Vec<Candidate> = Vec::new();
    let add = |all: &mut Vec<Candidate>, batch: Vec<Candidate>| {
        for mut c in batch {
            c.id = format!("c{:04}", all.len() + 1);
            all.push(c);
        }
    };
    add(&mut all, candidates);
    lap("candidates", &mut timings);
    // The same gates for the first pass and for the refill.
    let mut run_gates = |all: &[Candidate]| {
        gates::run(
            all,
            &source,
            &nli,
            embed,
            &generic_windows,
            &mut |s, d, t| progress(s, d, t),
        )
    };
    let (mut recs, mut approved) = run_gates(&all)?;
    lap("gates", &mut timings);
    if approved.len() < need {
        let before = approved.len();
        let covered: HashSet<&str> = approved.iter().map(|a| a.candidate.unit.as_str()).collect();
        let covered_by_record: HashSet<String> = recs
            .iter()
            .filter(|r| r.kept)
            .map(|r| r.unit.clone())
            .collect();
        let uncovered: Vec<EvidenceUnit> = doc
            .units
            .iter()
            .filter(|u| !covered.contains(u.id.as_str()) && !covered_by_record.contains(&u.id))
            .cloned()
            .collect();
        let more = refill(&uncovered)?;
        let n_more = more.len();
        add(&mut all, more);
        (recs, approved) = run_gates(&all)?;
        report.refill = Some(format!(
            "{} approved < 2K = {need}: {} more candidates from {} uncovered units; {} approved after refill",
            before,
            n_more,
            uncovered.len(),
            approved.len()
        ));
        lap("refill", &mut timings);
    }
    report.gate_counts = gate_counts(&recs);
    let mut entries: Vec<CandidateEntry> = all
        .iter()
        .zip(&recs)
        .map(|(c, g)| CandidateEntry {
            candidate: c.clone(),
            gates: g.clone(),
            r: None,
            q: None,
            features: None,
            utility: None,
            selected_rank: None,
        })
        .collect();
    if approved.len() < need {
        let starving = report
            .gate_counts
            .iter()
            .filter(|g| g.dropped > 0)
            .max_by_key(|g| (g.dropped, std::cmp::Reverse(g.gate)))
            .map(|g| g.gate);
        report.failure = Some(Failure {
            stage: "gates".into(),
            starving_gate: starving,
            message: format!(
                "only {} of {} candidates passed the gates after refill; {need} (2K) are needed{}{}",
                approved.len(),
                all.len(),
                starving
                    .map(|g| format!("; the gate that removed the most was `{}`", g.name()))
                    .unwrap_or_default(),
                cjk_note(&doc.units)
            ),
        });
        report.source_counts = report::source_counts(&entries);
        report.candidates = entries;
        report.timings = timings;
        return Ok(Outcome::Failed {
            report: Box::new(report),
        });
    }

    // Natural-mention priors.
    let facts_text: Vec<&str> = approved.iter().map(|a| a.candidate.text.as_str()).collect();
    let q: Vec<Vec<f64>> = match &controls {
        Some((_, list)) => {
            let texts: Vec<String> = list.iter().map(|(_, t)| t.clone()).collect();
            priors::coverage(
                &nli,
                &facts_text,
                &texts,
                controls_prefilter,
                &mut |d, t| progress("priors", d, t),
            )?
        }
        None => vec![Vec::new(); approved.len()],
    };
    // Mention features of every approved fact: the learned priors' input, and in the report
    // so that real reviews used as controls become the model's training labels.
    let unit_index: HashMap<&str, usize> = doc
        .units
        .iter()
        .enumerate()
        .map(|(i, u)| (u.id.as_str(), i))
        .collect();
    let paper_units: Vec<(Option<&str>, &str)> = doc
        .units
        .iter()
        .map(|u| (u.section.as_deref(), u.text.as_str()))
        .collect();
    let paper = PaperContext::new(&title, &paper_units);
    let feats: Vec<Features> = approved
        .iter()
        .map(|a| {
            let at = &a.candidate.attributes;
            mention::features(
                &paper,
                &FactInput {
                    text: &a.candidate.text,
                    unit: unit_index
                        .get(a.candidate.unit.as_str())
                        .copied()
                        .unwrap_or(0),
                    category: &at.category,
                    importance: at.importance,
                    naturalness: at.naturalness,
                },
            )
        })
        .collect();
    lap("priors", &mut timings);
    let learned = controls.is_none() && learned_priors;
    let attrs: Vec<FactAttrs> = approved
        .iter()
        .zip(&q)
        .zip(&feats)
        .map(|((a, q), x)| {
            if learned {
                fact_attrs(a, q, mention_model.rate(x), Some(mention_model.gamma))
            } else {
                fact_attrs(a, q, mention_rate(q, TAU_MIN), None)
            }
        })
        .collect();

    // Selection.
    let picks = mmr_select(&attrs, need, params::LAMBDA_MMR)?;
    let index_of: HashMap<&str, usize> = all
        .iter()
        .enumerate()
        .map(|(i, c)| (c.id.as_str(), i))
        .collect();
    for ((a, f), x) in approved.iter().zip(&attrs).zip(&feats) {
        let e = &mut entries[index_of[a.candidate.id.as_str()]];
        e.r = Some(f.r);
        e.features = Some(x.values.clone());
        e.utility = Some(utility(f));
        if !f.q.is_empty() {
            e.q = Some(f.q.clone());
        }
    }
    for (rank, p) in picks.iter().enumerate() {
        entries[index_of[attrs[p.index].id.as_str()]].selected_rank = Some(rank + 1);
        report.selection.push(SelectionEntry {
            rank: rank + 1,
            id: attrs[p.index].id.clone(),
            utility: p.utility,
            max_redundancy: p.max_redundancy,
            mmr_score: p.score,
        });
    }
    let chosen: Vec<FactAttrs> = picks.iter().map(|p| attrs[p.index].clone()).collect();
    let chosen_approved: Vec<&Approved> = picks.iter().map(|p| &approved[p.index]).collect();
    lap("selection", &mut timings);

    // Directed entailment among the 2K chosen facts.
    let mut pairs = Vec::new();
    for a in &chosen {
        for b in &chosen {
            if a.id != b.id {
                pairs.push(NliPair {
                    premise: &a.text,
                    hypothesis: &b.text,
                });
            }
        }
    }
    let e = scoring::entailment(&nli, &pairs, &mut |d, t| progress("pair entailment", d, t))?;
    let mut entail = vec![vec![0.0; need]; need];
    let mut it = e.into_iter();
    for (a, row) in entail.iter_mut().enumerate() {
        for (b, cell) in row.iter_mut().enumerate() {
            if a != b {
                *cell = it.next().unwrap_or(0.0);
            }
        }
    }
    lap("pair entailment", &mut timings);

    // Pairing and slots blind to the selection, then the keyed selection and the codeword
    // labels: the optimiser never sees which side is asked for, so the p-value is exact.
    let slots = default_slots(k);
    let params = AssignParams {
        seed,
        ..AssignParams::default()
    };
    let result = assign::assign(&chosen, &entail, &slots, &params)?;
    let codeword = balanced_codeword(k, &codeword_key, &doc.sha256)?;
    let selection = selection_bits(k, &codeword_key, &doc.sha256)?;
    let oriented = assign::orient(&result.positions, &selection, &codeword)?;
    lap("assignment", &mut timings);

    let mut positions = Vec::new();
    let mut pos_entries = Vec::new();
    for (j, ap) in oriented.iter().enumerate() {
        let bit = codeword[j];
        let [f0, f1] = ap.facts;
        let to_fact = |i: usize| {
            let a = chosen_approved[i];
            Fact {
                id: a.candidate.id.clone(),
                text: a.candidate.text.clone(),
                quote: a.candidate.quote.clone(),
                page: Some(a.page),
                unit: entries[index_of[a.candidate.id.as_str()]]
                    .gates
                    .unit
                    .clone(),
            }
        };
        let slot = &slots[ap.slot];
        positions.push(Position {
            index: j,
            slot: slot.id.clone(),
            facts: [to_fact(f0), to_fact(f1)],
        });
        let (sel, other) = if bit == 0 { (f0, f1) } else { (f1, f0) };
        pos_entries.push(PositionEntry {
            index: j,
            slot: slot.id.clone(),
            slot_label: slot.label.clone(),
            facts: [chosen[f0].id.clone(), chosen[f1].id.clone()],
            bit,
            selected: chosen[sel].id.clone(),
            selected_text: chosen[sel].text.clone(),
            pair_cost: assign::pair_cost(&chosen[f0], &chosen[f1]),
            implication: entail[sel][other],
        });
    }
    let obj = |o: &assign::Objective| Objective {
        total: o.total,
        a: o.a,
        p: o.p,
        h: o.h,
    };
    report.assignment = Some(AssignmentInfo {
        objective: obj(&result.objective),
        initial: obj(&result.initial),
        seed,
        positions: pos_entries,
    });
    report.codeword = codeword.clone();
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
        codeword,
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
            "candidates": all.len(),
            "approved": approved.len(),
        })),
    };
    bundle.validate()?;
    report.status = BuildStatus::Ok;
    report.source_counts = report::source_counts(&entries);
    report.candidates = entries;
    report.timings = timings;
    Ok(Outcome::Built {
        bundle: Box::new(bundle),
        report: Box::new(report),
    })
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

fn fact_attrs(a: &Approved, q: &[f64], r: f64, co_gamma: Option<f64>) -> FactAttrs {
    let at = &a.candidate.attributes;
    FactAttrs {
        id: a.candidate.id.clone(),
        text: a.candidate.text.clone(),
        e: a.e,
        i: at.importance,
        v: at.verifiability,
        n: at.naturalness,
        r,
        q: q.to_vec(),
        category: at.category.clone(),
        sentiment: at.sentiment,
        rating_impact: at.rating_impact,
        co_gamma,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::SourceKind;
    use semtrace_core::nli::LexicalStandIn;

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
    fn doc() -> SourceDoc {
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
    fn bag(texts: &[&str]) -> Result<Vec<Vec<f32>>> {
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
