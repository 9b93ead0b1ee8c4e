//! `semtrace bench`: engine throughput and exhaustive-decoder latency on real reviews.
//!
//! The onnxruntime side runs the same pairs (dumped with --dump-pairs) in `scripts/ort_bench.py`;
//! `scripts/bench.sh` runs both and prints them side by side.

use std::fs;
use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result};
use semtrace_core::bundle::Bundle;
use semtrace_core::detect::{check_model, detect};
use semtrace_core::nli::{NliPair, NliScorer};
use semtrace_core::segment::{sentences, windows};

use crate::cli::BenchArgs;
use crate::commands::detect::read_bundle;
use crate::exit::{self, InputError};
use crate::model_store;

/// Review texts from a corpus JSONL (`reviews[].review_text`), a text file, or a directory of
/// review files ([`crate::review_files`]).
pub fn load_reviews(path: &Path) -> Result<Vec<String>> {
    if path.is_dir() {
        let files = crate::review_files::in_dir(path)
            .with_context(|| format!("reading directory {}", path.display()))?;
        return files
            .iter()
            .map(|f| fs::read_to_string(f).with_context(|| f.display().to_string()))
            .collect();
    }
    if path.extension().is_some_and(|x| x == "jsonl") {
        return Ok(reviews_by_paper(path)?
            .into_iter()
            .map(|(_, t)| t)
            .collect());
    }
    let text = fs::read_to_string(path)
        .map_err(|e| InputError(format!("cannot read {}: {e}", path.display())))?;
    Ok(vec![text])
}

/// Reviews of a corpus JSONL with their paper ids.
pub(crate) fn reviews_by_paper(path: &Path) -> Result<Vec<(String, String)>> {
    let text = fs::read_to_string(path)
        .map_err(|e| InputError(format!("cannot read {}: {e}", path.display())))?;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: serde_json::Value = serde_json::from_str(line)
            .map_err(|e| InputError(format!("{} line {}: {e}", path.display(), n + 1)))?;
        let id = v["id"].as_str().unwrap_or_default().to_string();
        for r in v["reviews"].as_array().into_iter().flatten() {
            if let Some(t) = r["review_text"].as_str() {
                out.push((id.clone(), t.to_string()));
            }
        }
    }
    Ok(out)
}

/// Part of the exhaustive cache's key besides model, bundle and review: bump it whenever the
/// engine or the exhaustive decoder changes what they compute, so stale reports are not reused.
const EXHAUSTIVE_CACHE_REVISION: &str = "engine-2";

/// The name (without extension) of a run's exhaustive report in the cache: the model, the bundle
/// and the review decide it.
pub(crate) fn cache_key(
    review: &str,
    bundle: &Bundle,
    engine: &semtrace_infer::TractNli,
) -> String {
    semtrace_core::sha256_hex(
        format!(
            "{EXHAUSTIVE_CACHE_REVISION}\n{}\n{}\n{review}",
            engine.sha256(),
            bundle.to_json_pretty()
        )
        .as_bytes(),
    )
}

fn exhaustive_cached(
    cache: Option<&Path>,
    key: &str,
    review: &str,
    bundle: &Bundle,
    engine: &semtrace_infer::TractNli,
    check: &semtrace_core::report::ModelCheck,
) -> Result<(semtrace_core::report::Report, Option<f64>)> {
    let file = cache.map(|c| c.join(format!("{key}.json")));
    if let Some(f) = &file {
        if let Ok(t) = fs::read_to_string(f) {
            if let Ok(r) = serde_json::from_str(&t) {
                return Ok((r, None));
            }
        }
    }
    let t = Instant::now();
    let rec = Recording {
        inner: engine,
        seen: Default::default(),
    };
    let r = detect(review, bundle, &rec, check.clone(), &mut |_, _| {})?;
    let secs = t.elapsed().as_secs_f64();
    if let Some(f) = &file {
        fs::create_dir_all(f.parent().unwrap())?;
        crate::atomic::write_atomic(f, serde_json::to_string(&r)?.as_bytes())?;
        // Every (window, fact) probability beside the report, so that pruning strategies can be
        // replayed offline against the exhaustive decisions without running the model again.
        let probs = serde_json::json!({
            "windows": r.windows.iter().map(|w| &w.text).collect::<Vec<_>>(),
            "facts": bundle.positions.iter().flat_map(|p| p.facts.iter().map(|f| &f.text)).collect::<Vec<_>>(),
            "pairs": rec.seen.into_inner(),
        });
        crate::atomic::write_atomic(
            &f.with_extension("probs.json"),
            serde_json::to_string(&probs)?.as_bytes(),
        )?;
    }
    Ok((r, Some(secs)))
}

/// Passes pairs to the engine and keeps (premise, hypothesis, P(entailment)) of each.
struct Recording<'a> {
    inner: &'a semtrace_infer::TractNli,
    seen: std::cell::RefCell<Vec<(String, String, f32)>>,
}

impl NliScorer for Recording<'_> {
    fn entailment(&self, pairs: &[NliPair<'_>]) -> semtrace_core::Result<Vec<f32>> {
        let p = self.inner.entailment(pairs)?;
        self.seen.borrow_mut().extend(
            pairs
                .iter()
                .zip(&p)
                .map(|(q, &v)| (q.premise.to_string(), q.hypothesis.to_string(), v)),
        );
        Ok(p)
    }

    fn chunk_size(&self) -> usize {
        self.inner.chunk_size()
    }
}

fn agreement(a: &BenchArgs, engine: &semtrace_infer::TractNli) -> Result<i32> {
    let bundles: Vec<(String, Bundle)> = a
        .bundle
        .iter()
        .map(|p| Ok((p.display().to_string(), read_bundle(p)?)))
        .collect::<Result<_>>()?;
    let reviews: Vec<(String, String)> = if a.reviews.extension().is_some_and(|x| x == "jsonl") {
        reviews_by_paper(&a.reviews)?
    } else {
        load_reviews(&a.reviews)?
            .into_iter()
            .map(|r| (String::new(), r))
            .collect()
    };
    // Papers with a built bundle, in file order (each read once).
    let mut built: Vec<(String, String, Bundle)> = Vec::new();
    if let Some(dir) = &a.own_bundles {
        for (paper, _) in &reviews {
            let p = dir.join(format!("{paper}.json"));
            if !built.iter().any(|(id, _, _)| id == paper) && p.is_file() {
                built.push((paper.clone(), p.display().to_string(), read_bundle(&p)?));
            }
        }
    }
    let mut jobs: Vec<(usize, String, Bundle)> = Vec::new();
    for (i, (paper, _)) in reviews.iter().enumerate().take(a.limit) {
        let own = built.iter().position(|(id, _, _)| id == paper);
        if let Some(k) = own {
            jobs.push((i, format!("own {}", built[k].1), built[k].2.clone()));
        }
        if a.other_bundles && built.len() > 1 {
            // The next built paper after this one (after the first, if the review's paper has none).
            let k = own.map_or(0, |k| (k + 1) % built.len());
            jobs.push((i, format!("other {}", built[k].1), built[k].2.clone()));
        }
        for (name, b) in &bundles {
            jobs.push((i, name.clone(), b.clone()));
        }
    }
    if jobs.is_empty() {
        return Err(InputError(format!(
            "no review x bundle runs: no reviews in {}, or no bundle for them",
            a.reviews.display()
        ))
        .into());
    }
    let (mut pos_same, mut pos_total, mut verdict_same) = (0usize, 0usize, 0usize);
    let (mut t_fast, mut t_exh, mut n_exh_timed) = (Vec::new(), 0.0f64, 0usize);
    let (mut pairs_fast, mut pairs_exh) = (0usize, 0usize);
    let mut present = 0usize;
    let mut rows = Vec::new();
    // Per bundle kind ("own", "other", or the given bundles): (runs, positions, agree, verdicts agree).
    let mut by_kind: std::collections::BTreeMap<&str, [usize; 4]> = Default::default();
    for (n, (i, bname, bundle)) in jobs.iter().enumerate() {
        let review = &reviews[*i].1;
        let check = check_model(bundle, &engine.spec().name, engine.sha256(), true)?;
        let key = cache_key(review, bundle, engine);
        let (exh, secs) =
            exhaustive_cached(a.cache.as_deref(), &key, review, bundle, engine, &check)?;
        if let Some(s) = secs {
            t_exh += s;
            n_exh_timed += 1;
        }
        let t = Instant::now();
        let fast = semtrace_core::detect::detect_fast(
            review,
            bundle,
            engine,
            check.clone(),
            a.fast.options(),
            &mut |_, _| {},
        )?;
        let fast_secs = t.elapsed().as_secs_f64();
        t_fast.push(fast_secs);
        let same = exh
            .positions
            .iter()
            .zip(&fast.positions)
            .filter(|(x, y)| x.decision == y.decision && x.erasure == y.erasure)
            .count();
        present += exh.positions.iter().filter(|p| p.erasure.is_none()).count();
        pos_same += same;
        pos_total += exh.positions.len();
        verdict_same += usize::from(exh.verdict == fast.verdict);
        let kind = match bname.split_once(' ') {
            Some((k @ ("own" | "other"), _)) => k,
            _ => "given",
        };
        let e = by_kind.entry(kind).or_default();
        e[0] += 1;
        e[1] += exh.positions.len();
        e[2] += same;
        e[3] += usize::from(exh.verdict == fast.verdict);
        pairs_fast += fast.pairs_scored;
        pairs_exh += exh.pairs_scored;
        let diffs: Vec<_> = exh
            .positions
            .iter()
            .zip(&fast.positions)
            .filter(|(x, y)| x.decision != y.decision || x.erasure != y.erasure)
            .map(|(x, y)| {
                serde_json::json!({"position": x.index,
                    "exhaustive": [x.s0, x.s1, &x.decision, x.erasure, x.best_windows],
                    "fast": [y.s0, y.s1, &y.decision, y.erasure, y.best_windows]})
            })
            .collect();
        rows.push(serde_json::json!({
            "differences": diffs,
            "review": i, "bundle": bname, "words": review.split_whitespace().count(),
            "positions_same": same, "k": exh.k, "verdict_exhaustive": exh.verdict,
            "verdict_fast": fast.verdict, "pairs_exhaustive": exh.pairs_scored,
            "pairs_fast": fast.pairs_scored,
            "secs_exhaustive": secs, "secs_fast": fast_secs,
            // The run's per-pair probabilities, for scripts/replay_fast.py --only.
            "cached_probs": a.cache.as_ref().map(|_| format!("{key}.probs.json")),
        }));
        if !a.json {
            eprint!("\r{}/{} review-bundle pairs", n + 1, jobs.len());
        }
    }
    if !a.json {
        eprintln!();
    }
    t_fast.sort_by(f64::total_cmp);
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let summary = serde_json::json!({
        "model": engine.spec().name, "threads": engine.threads(), "jobs": jobs.len(),
        "fast_top": a.fast.top, "fast_extend": a.fast.extend,
        "fast_probes": a.fast.probes, "fast_hub_threshold": a.fast.hub_threshold,
        "fast_escalate": a.fast.escalate.is_finite().then_some(a.fast.escalate),
        "fast_verdict_margin": a.fast.verdict_margin,
        "positions": pos_total, "positions_agree": pos_same,
        "position_agreement": pos_same as f64 / pos_total.max(1) as f64,
        "decided_positions_exhaustive": present,
        "verdicts_agree": verdict_same, "verdict_agreement": verdict_same as f64 / jobs.len().max(1) as f64,
        "fast_mean_s": mean(&t_fast), "fast_median_s": t_fast.get(t_fast.len() / 2),
        "fast_max_s": t_fast.last(), "exhaustive_mean_s": (n_exh_timed > 0).then(|| t_exh / n_exh_timed as f64),
        "pairs_fast": pairs_fast, "pairs_exhaustive": pairs_exh,
        "by_bundle_kind": by_kind.iter().map(|(k, v)| (k.to_string(), serde_json::json!({
            "runs": v[0], "positions": v[1], "positions_agree": v[2], "verdicts_agree": v[3]})))
            .collect::<serde_json::Map<_, _>>(),
        "rows": rows,
    });
    if a.json {
        println!("{summary}");
    } else {
        println!(
            "agreement        {pos_same}/{pos_total} positions ({:.2}%), {verdict_same}/{} verdicts, {present} positions decided (exhaustive)",
            100.0 * pos_same as f64 / pos_total.max(1) as f64,
            jobs.len()
        );
        for (k, v) in &by_kind {
            println!(
                "  {k:<14} {}/{} positions, {}/{} verdicts",
                v[2], v[1], v[3], v[0]
            );
        }
        println!(
            "fast decoder     mean {:.3} s, median {:.3} s, max {:.3} s per review; {pairs_fast} pairs vs {pairs_exh} exhaustive",
            mean(&t_fast),
            t_fast.get(t_fast.len() / 2).copied().unwrap_or(0.0),
            t_fast.last().copied().unwrap_or(0.0)
        );
        if n_exh_timed > 0 {
            println!(
                "exhaustive       mean {:.2} s per review ({n_exh_timed} timed, the rest cached), {} threads",
                t_exh / n_exh_timed as f64,
                engine.threads()
            );
        }
    }
    Ok(exit::OK)
}

/// Rows of `--profile-ops` printed as text (JSON has them all).
const PROFILE_ROWS: usize = 25;

pub fn run(a: BenchArgs) -> Result<i32> {
    if a.agreement {
        let engine = model_store::load(&a.model)?;
        return agreement(&a, &engine);
    }
    if a.validity {
        let engine = model_store::load(&a.model)?;
        return crate::commands::validity::run(&a, &engine);
    }
    let Some(first) = a.bundle.first() else {
        return Err(InputError("--bundle is required for the engine benchmark".into()).into());
    };
    let bundle = read_bundle(first)?;
    let reviews = load_reviews(&a.reviews)?;
    if reviews.is_empty() {
        return Err(InputError(format!("no reviews in {}", a.reviews.display())).into());
    }
    let t = Instant::now();
    let engine = model_store::load(&a.model)?;
    let load_s = t.elapsed().as_secs_f64();

    // Engine throughput on real (window, fact) pairs.
    let facts = semtrace_core::detect::fact_texts(&bundle);
    let mut premises = Vec::new();
    for r in &reviews {
        let (ws, _) = windows(
            &sentences(r),
            bundle.decoding.window_sentences,
            bundle.decoding.max_windows,
        );
        premises.extend(ws.into_iter().map(|w| w.text));
        let per_window = if a.all_facts { facts.len() } else { 1 };
        if premises.len() * per_window >= a.pairs {
            break;
        }
    }
    let pairs: Vec<NliPair<'_>> = if a.all_facts {
        premises
            .iter()
            .flat_map(|p| {
                facts.iter().map(move |f| NliPair {
                    premise: p,
                    hypothesis: f,
                })
            })
            .take(a.pairs)
            .collect()
    } else {
        premises
            .iter()
            .enumerate()
            .take(a.pairs)
            .map(|(i, p)| NliPair {
                premise: p,
                hypothesis: facts[i % facts.len()],
            })
            .collect()
    };
    if pairs.is_empty() {
        // A throughput of 0 pairs/s would read as a measurement; it is an input without text.
        return Err(InputError(format!(
            "no review windows to pair with facts in {} (empty reviews?)",
            a.reviews.display()
        ))
        .into());
    }
    if let Some(path) = &a.dump_pairs {
        let dump: Vec<_> = pairs
            .iter()
            .map(|p| serde_json::json!({"premise": p.premise, "hypothesis": p.hypothesis}))
            .collect();
        fs::write(
            path,
            serde_json::to_string(
                &serde_json::json!({"batch_size": a.model.batch_size, "max_length": engine.spec().max_length, "fixed_len": engine.fixed_len(), "pairs": dump}),
            )?,
        )?;
    }
    // Warm-up builds the plans for the shapes used (excluded from the timing, as a loaded page would
    // be); then one thread and all threads.
    let threads = engine.threads();
    let mut engine = engine;
    let mut per_s = Vec::new();
    for t in [1, threads] {
        engine.set_threads(t);
        engine.entailment(&pairs)?;
        // A split model would otherwise find every segment state of the warm-up in its cache.
        engine.clear_cache();
        let start = Instant::now();
        engine.entailment(&pairs)?;
        per_s.push(pairs.len() as f64 / start.elapsed().as_secs_f64());
    }
    let pairs_per_s = per_s[0];
    let pairs_per_s_threads = per_s[1];
    let profile = if a.profile_ops {
        engine.op_profile(&pairs, a.profile_nodes)?
    } else {
        Vec::new()
    };
    let profile_total: f64 = profile.iter().map(|o| o.seconds).sum();

    // Exhaustive decoder per review.
    let check = check_model(&bundle, &engine.spec().name, engine.sha256(), true)?;
    let mut per_review = Vec::new();
    for r in reviews.iter().take(a.limit) {
        let words = r.split_whitespace().count();
        // Each review pays for its own segment states, the bundle's facts included.
        engine.clear_cache();
        let t = Instant::now();
        let rep = detect(r, &bundle, &engine, check.clone(), &mut |_, _| {})?;
        per_review.push((
            words,
            rep.windows.len(),
            rep.pairs_scored,
            t.elapsed().as_secs_f64(),
        ));
    }
    let mean_s = per_review.iter().map(|x| x.3).sum::<f64>() / per_review.len().max(1) as f64;
    if a.json {
        println!(
            "{}",
            serde_json::json!({
                "model": engine.spec().name, "sha256": engine.sha256(), "load_s": load_s,
                "batch_size": a.model.batch_size, "threads": threads, "engine_pairs": pairs.len(),
                "engine_pairs_per_s": pairs_per_s, "engine_pairs_per_s_threads": pairs_per_s_threads,
                "reviews": per_review.iter().map(|(w, n, p, s)| serde_json::json!({"words": w, "windows": n, "pairs": p, "seconds": s})).collect::<Vec<_>>(),
                "mean_review_s": mean_s,
                "op_profile": a.profile_ops.then(|| serde_json::json!({
                    "seconds": profile_total,
                    "ops": profile.iter().map(|o| serde_json::json!({"op": o.op, "role": o.role, "seconds": o.seconds, "calls": o.calls})).collect::<Vec<_>>(),
                })),
            })
        );
    } else {
        println!(
            "model            {} ({})",
            engine.spec().name,
            &engine.sha256()[..12]
        );
        println!("load + plan      {load_s:.2} s");
        println!(
            "engine (tract)   {pairs_per_s:.1} pairs/s over {} pairs, batch {}, 1 thread; {pairs_per_s_threads:.1} pairs/s, {threads} threads",
            pairs.len(),
            a.model.batch_size
        );
        for (w, n, p, s) in &per_review {
            println!("review           {w} words, {n} windows, {p} pairs: {s:.2} s (exhaustive, {threads} threads)");
        }
        if !per_review.is_empty() {
            println!(
                "mean per review  {mean_s:.2} s (exhaustive, {} reviews)",
                per_review.len()
            );
        }
        if a.profile_ops {
            println!(
                "op profile       {profile_total:.3} s over {} pairs, 1 thread; top node kinds:",
                pairs.len()
            );
            for o in profile.iter().take(PROFILE_ROWS) {
                println!(
                    "  {:5.1}%  {:8.4} s  {:4} calls  {:<18} {}",
                    100.0 * o.seconds / profile_total.max(f64::MIN_POSITIVE),
                    o.seconds,
                    o.calls,
                    o.op,
                    o.role
                );
            }
        }
    }
    Ok(exit::OK)
}
