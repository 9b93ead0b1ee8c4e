//! `semtrace bench`: engine throughput and exhaustive-decoder latency on real reviews.
//!
//! The onnxruntime side runs the same pairs (dumped with --dump-pairs) in `scripts/ort_bench.py`;
//! `scripts/bench.sh` runs both and prints them side by side.

use std::fs;
use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result};
use semtrace_core::detect::{check_model, detect};
use semtrace_core::nli::{NliPair, NliScorer};
use semtrace_core::segment::{sentences, windows};

use crate::cli::BenchArgs;
use crate::commands::detect::read_bundle;
use crate::exit::{self, InputError};
use crate::model_store;

/// Review texts from a corpus JSONL (`reviews[].review_text`), a text file, or a directory of them.
pub fn load_reviews(path: &Path) -> Result<Vec<String>> {
    if path.is_dir() {
        let mut files: Vec<_> = fs::read_dir(path)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file())
            .collect();
        files.sort();
        return files
            .iter()
            .map(|f| fs::read_to_string(f).with_context(|| f.display().to_string()))
            .collect();
    }
    let text = fs::read_to_string(path)
        .map_err(|e| InputError(format!("cannot read {}: {e}", path.display())))?;
    if path.extension().is_some_and(|x| x == "jsonl") {
        let mut out = Vec::new();
        for (n, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            let v: serde_json::Value = serde_json::from_str(line)
                .map_err(|e| InputError(format!("{} line {}: {e}", path.display(), n + 1)))?;
            for r in v
                .get("reviews")
                .and_then(|r| r.as_array())
                .into_iter()
                .flatten()
            {
                if let Some(t) = r.get("review_text").and_then(|t| t.as_str()) {
                    out.push(t.to_string());
                }
            }
        }
        return Ok(out);
    }
    Ok(vec![text])
}

pub fn run(a: BenchArgs) -> Result<i32> {
    let bundle = read_bundle(&a.bundle)?;
    let reviews = load_reviews(&a.reviews)?;
    if reviews.is_empty() {
        return Err(InputError(format!("no reviews in {}", a.reviews.display())).into());
    }
    let t = Instant::now();
    let engine = model_store::load(&a.model.model, a.model.batch_size)?;
    let load_s = t.elapsed().as_secs_f64();

    // Engine throughput on real (window, fact) pairs.
    let facts: Vec<&str> = bundle
        .positions
        .iter()
        .flat_map(|p| p.facts.iter().map(|f| f.text.as_str()))
        .collect();
    let mut premises = Vec::new();
    for r in &reviews {
        let (ws, _) = windows(
            &sentences(r),
            bundle.decoding.window_sentences,
            bundle.decoding.max_windows,
        );
        premises.extend(ws.into_iter().map(|w| w.text));
        if premises.len() >= a.pairs {
            break;
        }
    }
    let pairs: Vec<NliPair<'_>> = premises
        .iter()
        .enumerate()
        .take(a.pairs)
        .map(|(i, p)| NliPair {
            premise: p,
            hypothesis: facts[i % facts.len()],
        })
        .collect();
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
    // Warm-up builds the plans for the shapes used (excluded from the timing, as a loaded page would be).
    engine.entailment(&pairs)?;
    let t = Instant::now();
    engine.entailment(&pairs)?;
    let engine_s = t.elapsed().as_secs_f64();
    let pairs_per_s = pairs.len() as f64 / engine_s;

    // Exhaustive decoder per review.
    let check = check_model(&bundle, &engine.spec().name, engine.sha256(), true)?;
    let mut per_review = Vec::new();
    for r in reviews.iter().take(a.limit) {
        let words = r.split_whitespace().count();
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
                "batch_size": a.model.batch_size, "threads": 1, "engine_pairs": pairs.len(),
                "engine_pairs_per_s": pairs_per_s,
                "reviews": per_review.iter().map(|(w, n, p, s)| serde_json::json!({"words": w, "windows": n, "pairs": p, "seconds": s})).collect::<Vec<_>>(),
                "mean_review_s": mean_s,
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
            "engine (tract)   {pairs_per_s:.1} pairs/s over {} pairs, batch {}, 1 thread",
            pairs.len(),
            a.model.batch_size
        );
        for (w, n, p, s) in &per_review {
            println!("review           {w} words, {n} windows, {p} pairs: {s:.2} s (exhaustive)");
        }
        println!(
            "mean per review  {mean_s:.2} s (exhaustive, {} reviews)",
            per_review.len()
        );
    }
    Ok(exit::OK)
}
