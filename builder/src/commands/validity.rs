//! `semtrace bench --validity`: detection on labelled reviews, each against its own frozen bundle
//! (`../shared/corpus/llm-reviews/manifest.jsonl`, or a manifest of human reviews), the figure the
//! project optimises first. Every (window, fact) pair is scored once (exhaustive), cached, and then
//! read through each requested safeguard, so rules are compared on the same probabilities.

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};
use semtrace_core::bundle::Bundle;
use semtrace_core::calibration::{stated_sides, NullCalibration, ALPHAS};
use semtrace_core::decode::{Erasure, Verdict};
use semtrace_core::detect::{check_model, fact_texts, finish, DetectionPlan};
use semtrace_core::nli::{NliPair, NliScorer};
use semtrace_core::report::Decoder;
use semtrace_core::report::Report;
use semtrace_core::safeguard::Safeguard;
use semtrace_core::segment::{sentences, windows};
use semtrace_infer::TractNli;

use crate::cli::BenchArgs;
use crate::commands::bench::{cache_key, reviews_by_paper};
use crate::commands::detect::read_bundle;
use crate::exit::{self, InputError};

/// One labelled review and the bundle it must be scored against.
struct Case {
    name: String,
    kind: String,
    label: u8,
    text: String,
    bundle: Bundle,
}

/// Manifest lines: `review` (a text file) or `corpus` + `paper` (every review of that paper in a
/// corpus JSONL, read in place), with `bundle`, `kind`, `label`; paths relative to the manifest.
fn read_manifest(path: &Path) -> Result<Vec<Case>> {
    let text = fs::read_to_string(path)
        .map_err(|e| InputError(format!("cannot read manifest {}: {e}", path.display())))?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut bundles: HashMap<PathBuf, Bundle> = HashMap::new();
    let mut corpora: HashMap<PathBuf, HashMap<String, Vec<String>>> = HashMap::new();
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = || format!("{} line {}", path.display(), n + 1);
        let v: serde_json::Value =
            serde_json::from_str(line).map_err(|e| InputError(format!("{}: {e}", at())))?;
        let field = |k: &str| {
            v.get(k)
                .and_then(|x| x.as_str())
                .map(str::to_string)
                .ok_or_else(|| InputError(format!("{}: no \"{k}\" string", at())))
        };
        let kind = field("kind")?;
        let label = match v.get("label").and_then(|l| l.as_u64()) {
            Some(l @ (0 | 1)) => l as u8,
            _ => return Err(InputError(format!("{}: \"label\" must be 0 or 1", at())).into()),
        };
        let bpath = dir.join(field("bundle")?);
        if !bundles.contains_key(&bpath) {
            let b = read_bundle(&bpath).with_context(at)?;
            bundles.insert(bpath.clone(), b);
        }
        let bundle = &bundles[&bpath];
        if let Some(review) = v.get("review").and_then(|r| r.as_str()) {
            let rp = dir.join(review);
            let text = fs::read_to_string(&rp).map_err(|e| {
                InputError(format!(
                    "{}: cannot read review {}: {e}",
                    at(),
                    rp.display()
                ))
            })?;
            out.push(Case {
                name: review.to_string(),
                kind,
                label,
                text,
                bundle: bundle.clone(),
            });
        } else {
            let cp = dir.join(field("corpus")?);
            let paper = field("paper")?;
            if !corpora.contains_key(&cp) {
                corpora.insert(cp.clone(), corpus_reviews(&cp).with_context(at)?);
            }
            let reviews = corpora[&cp].get(&paper).ok_or_else(|| {
                InputError(format!("{}: paper {paper} not in {}", at(), cp.display()))
            })?;
            for (i, r) in reviews.iter().enumerate() {
                out.push(Case {
                    name: format!("{paper}#{i}"),
                    kind: kind.clone(),
                    label,
                    text: r.clone(),
                    bundle: bundle.clone(),
                });
            }
        }
    }
    if out.is_empty() {
        return Err(InputError(format!("no reviews in manifest {}", path.display())).into());
    }
    Ok(out)
}

/// Paper id → its reviews' texts, from a corpus JSONL (`id`, `reviews[].review_text`).
fn corpus_reviews(path: &Path) -> Result<HashMap<String, Vec<String>>> {
    let mut out: HashMap<String, Vec<String>> = HashMap::new();
    for (id, text) in reviews_by_paper(path)? {
        out.entry(id).or_default().push(text);
    }
    Ok(out)
}

/// Remembers every probability the engine gives, by (premise, hypothesis).
struct Recording<'a> {
    inner: &'a TractNli,
    seen: std::cell::RefCell<HashMap<(String, String), f32>>,
}

impl NliScorer for Recording<'_> {
    fn entailment(&self, pairs: &[NliPair<'_>]) -> semtrace_core::Result<Vec<f32>> {
        let p = self.inner.entailment(pairs)?;
        let mut seen = self.seen.borrow_mut();
        for (q, &v) in pairs.iter().zip(&p) {
            seen.insert((q.premise.to_string(), q.hypothesis.to_string()), v);
        }
        Ok(p)
    }
    fn chunk_size(&self) -> usize {
        self.inner.chunk_size()
    }
}

/// Answers from a review's full matrix: the fast decoder replayed on the exhaustive decoder's
/// scores (the model is exact per pair, batch-independent, so this is what it would compute).
struct Lookup(HashMap<(String, String), f32>);

impl NliScorer for Lookup {
    fn entailment(&self, pairs: &[NliPair<'_>]) -> semtrace_core::Result<Vec<f32>> {
        pairs
            .iter()
            .map(|q| {
                self.0
                    .get(&(q.premise.to_string(), q.hypothesis.to_string()))
                    .copied()
                    .ok_or_else(|| {
                        semtrace_core::Error::model(
                            "the fast decoder asked for a pair outside the review's matrix",
                        )
                    })
            })
            .collect()
    }
}

/// Every (fact, window) probability of a review, fact-major, from the cache or the engine.
fn matrix(
    case: &Case,
    engine: &TractNli,
    cache: Option<&Path>,
) -> Result<(Vec<Option<f32>>, Option<f64>)> {
    let b = &case.bundle;
    let (wins, _) = windows(
        &sentences(&case.text),
        b.decoding.window_sentences,
        b.decoding.max_windows,
    );
    let facts = fact_texts(b);
    let want = facts.len() * wins.len();
    let file = cache.map(|c| {
        c.join(format!(
            "{}.matrix.json",
            cache_key(&case.text, &case.bundle, engine)
        ))
    });
    if let Some(f) = &file {
        if let Ok(t) = fs::read_to_string(f) {
            if let Ok(v) = serde_json::from_str::<Vec<f32>>(&t) {
                if v.len() == want {
                    return Ok((v.into_iter().map(Some).collect(), None));
                }
            }
        }
    }
    let t = Instant::now();
    let rec = Recording {
        inner: engine,
        seen: Default::default(),
    };
    let check = check_model(b, &engine.spec().name, engine.sha256(), true)?;
    DetectionPlan::exhaustive(&case.text, b.clone()).run(&rec, check, &mut |_, _| {})?;
    let seen = rec.seen.into_inner();
    let mut probs = Vec::with_capacity(want);
    for f in &facts {
        for w in &wins {
            let p = seen
                .get(&(w.text.clone(), f.to_string()))
                .copied()
                .ok_or_else(|| anyhow::anyhow!("the exhaustive decoder left a pair unscored"))?;
            probs.push(p);
        }
    }
    let secs = t.elapsed().as_secs_f64();
    if let Some(f) = &file {
        fs::create_dir_all(f.parent().unwrap_or(Path::new(".")))?;
        crate::atomic::write_atomic(f, serde_json::to_string(&probs)?.as_bytes())?;
    }
    Ok((probs.into_iter().map(Some).collect(), Some(secs)))
}

/// Sums over the reviews of one kind under one safeguard.
#[derive(Default, Clone, serde::Serialize)]
struct Tally {
    reviews: usize,
    exposed: usize,
    eligible: usize,
    positions: usize,
    both: usize,
    absent: usize,
    ambiguous: usize,
    observed: usize,
    matched: usize,
    /// Fast decoder replayed on the same scores (paper's rule only): positions and verdicts that
    /// agree with the exhaustive decoder, and pairs it scored.
    fast_positions_agree: usize,
    fast_verdicts_agree: usize,
    fast_pairs: usize,
    pairs: usize,
    /// Pairs the fast decoder had scored when its verdict was settled (`settled_verdict`), the
    /// fast decoder's pairs otherwise, and settled verdicts that were not the exhaustive one's.
    settled_pairs: usize,
    settled_wrong: usize,
    settled: usize,
    /// The same, checked only between rounds (as the page does).
    settled_round_pairs: usize,
}

/// Pairs between two settled-verdict checks within a round in `bench --validity`: one engine batch.
const SETTLE_STEP: usize = 32;

impl Tally {
    fn add(&mut self, r: &Report) {
        self.reviews += 1;
        self.exposed += usize::from(r.verdict == Verdict::Exposed);
        self.eligible += usize::from(r.eligible);
        self.positions += r.positions.len();
        for p in &r.positions {
            match p.erasure {
                Some(Erasure::Both) => self.both += 1,
                Some(Erasure::Absent) => self.absent += 1,
                Some(Erasure::Ambiguous) => self.ambiguous += 1,
                None => {}
            }
        }
        self.observed += r.observed;
        self.matched += r.matched;
    }
    fn share(&self, n: usize) -> f64 {
        n as f64 / self.positions.max(1) as f64
    }
    fn mean_observed(&self) -> f64 {
        self.observed as f64 / self.reviews.max(1) as f64
    }
    fn bit_accuracy(&self) -> f64 {
        self.matched as f64 / self.observed.max(1) as f64
    }
}

pub fn run(a: &BenchArgs, engine: &TractNli) -> Result<i32> {
    let cases = read_manifest(&a.reviews)?;
    let safeguards: Vec<Safeguard> = if a.safeguard.is_empty() {
        vec![Safeguard::NONE]
    } else {
        a.safeguard.clone()
    };
    let hash_matches = cases
        .iter()
        .all(|c| c.bundle.model.sha256.eq_ignore_ascii_case(engine.sha256()));
    // (safeguard, kind) → tally; rows keep every review's figures for --json.
    let mut tallies: BTreeMap<(usize, String), Tally> = BTreeMap::new();
    let mut rows = Vec::new();
    let mut calibration: BTreeMap<String, NullCalibration> = BTreeMap::new();
    let (mut timed, mut secs_total) = (0usize, 0.0f64);
    for (n, case) in cases.iter().enumerate() {
        if !a.json {
            eprint!("\r{}/{} reviews", n + 1, cases.len());
        }
        let (probs, secs) = matrix(case, engine, a.cache.as_deref())?;
        if let Some(s) = secs {
            timed += 1;
            secs_total += s;
        }
        let check = check_model(&case.bundle, &engine.spec().name, engine.sha256(), true)?;
        let (wins, total) = windows(
            &sentences(&case.text),
            case.bundle.decoding.window_sentences,
            case.bundle.decoding.max_windows,
        );
        let pairs = probs.len();
        let facts = fact_texts(&case.bundle);
        let lookup = Lookup(
            facts
                .iter()
                .flat_map(|f| wins.iter().map(move |w| (w.text.clone(), f.to_string())))
                .zip(probs.iter().map(|p| p.unwrap_or(0.0)))
                .collect(),
        );
        // Round by round, as the page drives it, noting when the verdict became settled.
        let mut plan = DetectionPlan::fast(&case.text, case.bundle.clone(), a.fast.options());
        let (mut settled, mut settled_round) = (None, None);
        loop {
            if settled_round.is_none() {
                settled_round = plan.settled_verdict().map(|v| (v, plan.scored()));
                settled = settled.or(settled_round);
            }
            let probs = {
                let pending = plan.pending();
                if pending.is_empty() {
                    break;
                }
                lookup.entailment(&pending)?
            };
            // Within the round too, batch by batch (the engine's batches of SETTLE_STEP pairs).
            if settled.is_none() {
                settled = (SETTLE_STEP..probs.len())
                    .step_by(SETTLE_STEP)
                    .find_map(|n| {
                        plan.settled_verdict_with(&probs[..n])
                            .map(|v| (v, plan.scored() + n))
                    });
            }
            plan.supply(&probs)?;
        }
        let fast = plan.report(check.clone());
        for (i, &sg) in safeguards.iter().enumerate() {
            let r = finish(
                &case.bundle,
                wins.clone(),
                total,
                probs.clone(),
                pairs,
                check.clone(),
                Decoder::Exhaustive,
                sg,
            );
            let t = tallies.entry((i, case.kind.clone())).or_default();
            t.add(&r);
            if sg == Safeguard::NONE && case.label == 0 && a.secrets > 0 {
                let decisions: Vec<Option<u8>> =
                    r.positions.iter().map(|p| p.decision.bit()).collect();
                let stated = stated_sides(&case.bundle, &decisions)?;
                calibration.entry(case.kind.clone()).or_default().add(
                    &case.bundle,
                    &stated,
                    a.secrets,
                )?;
            }
            if sg == Safeguard::NONE {
                t.fast_positions_agree += r
                    .positions
                    .iter()
                    .zip(&fast.positions)
                    .filter(|(x, y)| x.decision == y.decision && x.erasure == y.erasure)
                    .count();
                t.fast_verdicts_agree += usize::from(r.verdict == fast.verdict);
                t.fast_pairs += fast.pairs_scored;
                t.pairs += pairs;
                t.settled_pairs += settled.map_or(fast.pairs_scored, |(_, n)| n);
                t.settled_wrong += [settled, settled_round]
                    .iter()
                    .filter(|x| x.is_some_and(|(v, _)| v != r.verdict))
                    .count();
                t.settled += usize::from(settled.is_some());
                t.settled_round_pairs += settled_round.map_or(fast.pairs_scored, |(_, n)| n);
            }
            let mut row = serde_json::json!({
                "review": case.name, "kind": case.kind, "label": case.label,
                "safeguard": sg.to_string(), "verdict": r.verdict, "observed": r.observed,
                "matched": r.matched, "p_value": r.p_value, "score": r.score,
                "erasures": r.positions.iter().map(|p| p.erasure).collect::<Vec<_>>(),
            });
            if sg == Safeguard::NONE {
                row["fast_verdict"] = serde_json::json!(fast.verdict);
                row["fast_erasures"] =
                    serde_json::json!(fast.positions.iter().map(|p| p.erasure).collect::<Vec<_>>());
                row["fast_pairs"] = serde_json::json!(fast.pairs_scored);
                row["settled_pairs"] = serde_json::json!(settled.map(|(_, n)| n));
            }
            if i == 0 {
                // The windows in matrix order, with the cached matrix's file name, so that scripts
                // (training/decoding_pairs.py) can read every (window, fact) probability.
                row["windows"] =
                    serde_json::json!(wins.iter().map(|w| &w.text).collect::<Vec<_>>());
                row["matrix"] = serde_json::json!(format!(
                    "{}.matrix.json",
                    cache_key(&case.text, &case.bundle, engine)
                ));
            }
            rows.push(row);
        }
    }
    if !a.json {
        eprintln!();
    }
    let labels: HashMap<&str, u8> = cases.iter().map(|c| (c.kind.as_str(), c.label)).collect();
    if a.json {
        let summary: Vec<_> = tallies
            .iter()
            .map(|((i, kind), t)| {
                serde_json::json!({"safeguard": safeguards[*i].to_string(), "kind": kind,
                    "label": labels[kind.as_str()], "tally": t,
                    "exposed_rate": t.exposed as f64 / t.reviews.max(1) as f64,
                    "both_share": t.share(t.both), "mean_observed": t.mean_observed(),
                    "bit_accuracy": t.bit_accuracy()})
            })
            .collect();
        println!(
            "{}",
            serde_json::json!({"model": engine.spec().name, "sha256": engine.sha256(),
                "bundles_frozen_for_this_model": hash_matches, "decoder": Decoder::Exhaustive,
                "summary": summary, "null_calibration": {"alphas": ALPHAS, "secrets": a.secrets,
                    "kinds": calibration}, "rows": rows})
        );
        return Ok(exit::OK);
    }
    println!(
        "model {} ({}), exhaustive decoder, {} reviews; bundles frozen for {}",
        engine.spec().name,
        &engine.sha256()[..12],
        cases.len(),
        if hash_matches {
            "this model"
        } else {
            "another model (thresholds kept)"
        }
    );
    println!(
        "{:<16} {:<20} {:>4} {:>9} {:>8} {:>8} {:>8} {:>9} {:>8} {:>8}",
        "safeguard",
        "kind",
        "n",
        "exposed",
        "both",
        "absent",
        "ambig.",
        "mean obs",
        "bit acc",
        "eligible"
    );
    for ((i, kind), t) in &tallies {
        println!(
            "{:<16} {:<20} {:>4} {:>9} {:>7.1}% {:>7.1}% {:>7.1}% {:>9.2} {:>8.3} {:>8}",
            safeguards[*i].to_string(),
            kind,
            t.reviews,
            format!("{}/{}", t.exposed, t.reviews),
            100.0 * t.share(t.both),
            100.0 * t.share(t.absent),
            100.0 * t.share(t.ambiguous),
            t.mean_observed(),
            t.bit_accuracy(),
            t.eligible
        );
    }
    println!("(erasure shares are of all positions of that kind; bit accuracy is over observed positions)");
    for ((i, kind), t) in &tallies {
        if safeguards[*i] == Safeguard::NONE {
            println!(
                "fast decoder vs exhaustive, {kind}: positions {}/{} ({:.2}%), verdicts {}/{}, pairs scored {:.1}%",
                t.fast_positions_agree,
                t.positions,
                100.0 * t.share(t.fast_positions_agree),
                t.fast_verdicts_agree,
                t.reviews,
                100.0 * t.fast_pairs as f64 / t.pairs.max(1) as f64
            );
            println!(
                "verdict settled (the exhaustive decoder's, whatever the unscored pairs), {kind}: {}/{} reviews, after {:.1}% of pairs checked between rounds (the page), {:.1}% checked every {SETTLE_STEP} (unsettled: the fast decoder's pairs); {} settled verdicts differ",
                t.settled,
                t.reviews,
                100.0 * t.settled_round_pairs as f64 / t.pairs.max(1) as f64,
                100.0 * t.settled_pairs as f64 / t.pairs.max(1) as f64,
                t.settled_wrong
            );
        }
    }
    if !calibration.is_empty() {
        println!(
            "null calibration, {} simulated secrets per review (keyed selection; decisions decoded once):",
            a.secrets
        );
        println!(
            "{:<20} {:>7} {:>9} {:>7} {:>12} {:>12}",
            "kind", "reviews", "draws", "alpha", "P(p <= a)", "P(exposed)"
        );
        for (kind, c) in &calibration {
            for (i, alpha) in ALPHAS.iter().enumerate() {
                println!(
                    "{:<20} {:>7} {:>9} {:>7} {:>12.5} {:>12.5}",
                    kind,
                    c.reviews,
                    c.draws,
                    alpha,
                    c.rate(c.p_at_most[i]),
                    c.rate(c.exposed[i])
                );
            }
        }
        println!("(a valid p-value has P(p <= a) <= a; exposed also needs O >= o_min)");
    }
    if timed > 0 {
        println!(
            "exhaustive scoring: mean {:.2} s per review ({timed} scored, the rest cached), {} threads",
            secs_total / timed as f64,
            engine.threads()
        );
    }
    Ok(exit::OK)
}
