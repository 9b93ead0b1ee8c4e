//! `semtrace eval`: the paper's evaluation protocol over a labelled set of reviews.
//!
//! `--reviews MANIFEST.jsonl` scores existing reviews (human reviews as a null set, reviews
//! produced elsewhere). `--papers MANIFEST.jsonl` generates them with an OpenAI-compatible reviewer
//! (module [`generate`]): D paired draws per paper, the positive from the protected copy's text, the
//! null from the original's, same seed; optionally paraphrase attacks of both. Every scored review is appended to `OUT/reviews.jsonl` as soon as it is
//! done, so an interrupted run resumes where it stopped; then `report.json`, `report.md` and one
//! SVG ROC curve per condition are written from those lines alone.

use std::collections::{BTreeMap, HashSet};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use semtrace_core::bundle::Bundle;
use semtrace_core::detect::{check_model, detect, detect_fast, review_text, FastOptions};
use semtrace_eval::icw::IcwSecret;
use semtrace_eval::report::{markdown, roc_file_name, roc_svg};
use semtrace_eval::{summarize, Label, ReviewRecord, SummaryOptions};
use serde::Deserialize;

use crate::atomic::{finished_lines, reopen_log, write_atomic};
use crate::cli::EvalArgs;
use crate::commands::detect::read_bundle;
use crate::exit::{self, InputError};
use crate::model_store;

mod generate;

/// One line of a `--reviews` manifest.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ManifestLine {
    paper: String,
    label: Label,
    #[serde(default)]
    draw: u32,
    #[serde(default = "clean")]
    condition: String,
    /// A review file, relative to the manifest's directory...
    file: Option<PathBuf>,
    /// ... or the review text itself.
    text: Option<String>,
}

fn clean() -> String {
    "clean".into()
}

/// One review of the run: its identity, and its text when it still has to be scored.
pub(crate) struct Job {
    pub id: String,
    /// "semtrace" (NLI decoding against the paper's bundle) or an ICW baseline with its secret.
    pub method: String,
    pub icw: Option<IcwSecret>,
    pub paper: String,
    pub label: Label,
    pub draw: u32,
    pub condition: String,
    pub text: Option<String>,
    pub source: String,
}

/// The manifest's reviews, each with its line number (1-based).
fn read_manifest(path: &Path) -> Result<Vec<(usize, Job)>> {
    let body = fs::read_to_string(path)
        .map_err(|e| InputError(format!("cannot read manifest {}: {e}", path.display())))?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut jobs = Vec::new();
    let mut seen = HashSet::new();
    for (n, raw) in body.lines().enumerate() {
        if raw.trim().is_empty() {
            continue;
        }
        let at = || format!("{} line {}", path.display(), n + 1);
        let line: ManifestLine =
            serde_json::from_str(raw).map_err(|e| InputError(format!("{}: {e}", at())))?;
        if line.paper.is_empty() || line.paper.contains('/') {
            return Err(
                InputError(format!("{}: paper id must be non-empty, without '/'", at())).into(),
            );
        }
        let (text, source) = match (&line.file, &line.text) {
            (Some(f), None) => {
                let p = dir.join(f);
                let bytes = fs::read(&p).map_err(|e| {
                    InputError(format!("{}: cannot read {}: {e}", at(), p.display()))
                })?;
                let t =
                    review_text(&bytes).with_context(|| format!("{}: {}", at(), p.display()))?;
                (t.to_string(), p.display().to_string())
            }
            (None, Some(t)) => (t.clone(), format!("{}:{}", path.display(), n + 1)),
            _ => {
                return Err(InputError(format!(
                    "{}: give exactly one of \"file\" and \"text\"",
                    at()
                ))
                .into())
            }
        };
        let id = ReviewRecord::make_id(
            "semtrace",
            &line.condition,
            &line.paper,
            line.label,
            line.draw,
        );
        if !seen.insert(id.clone()) {
            return Err(InputError(format!("{}: duplicate review {id}", at())).into());
        }
        jobs.push((
            n + 1,
            Job {
                id,
                method: "semtrace".into(),
                icw: None,
                paper: line.paper,
                label: line.label,
                draw: line.draw,
                condition: line.condition,
                text: Some(text),
                source,
            },
        ));
    }
    if jobs.is_empty() {
        return Err(InputError(format!("manifest {} lists no reviews", path.display())).into());
    }
    Ok(jobs)
}

pub fn run(a: EvalArgs) -> Result<i32> {
    let lines_path = a.out.join("reviews.jsonl");
    let (jobs, bundles) = match (&a.reviews, &a.papers) {
        (Some(m), None) => {
            let lines = read_manifest(m)?;
            let mut bundles: BTreeMap<String, Bundle> = BTreeMap::new();
            for (n, j) in &lines {
                if !bundles.contains_key(&j.paper) {
                    let bundle = match (&a.bundle, &a.bundles) {
                        (Some(b), None) => read_bundle(b)?,
                        // The paper's bundle is named by the first manifest line of that paper.
                        (None, Some(dir)) => read_bundle(&dir.join(format!("{}.json", j.paper)))
                            .with_context(|| format!("{} line {n}", m.display()))?,
                        _ => return Err(InputError("give --bundle FILE or --bundles DIR".into()).into()),
                    };
                    bundles.insert(j.paper.clone(), bundle);
                }
            }
            let jobs: Vec<Job> = lines.into_iter().map(|(_, j)| j).collect();
            fs::create_dir_all(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
            (jobs, bundles)
        }
        (None, Some(m)) => {
            let done: HashSet<String> = finished_lines::<ReviewRecord>(&lines_path).into_iter().map(|r| r.id).collect();
            generate::jobs(&a, m, &done)?
        }
        _ => {
            return Err(InputError("give either --reviews MANIFEST (score existing reviews) or --papers MANIFEST (generate them)".into()).into())
        }
    };
    let mut records = finished_lines::<ReviewRecord>(&lines_path);
    let done: HashSet<String> = records.iter().map(|r| r.id.clone()).collect();
    let todo: Vec<&Job> = jobs.iter().filter(|j| !done.contains(&j.id)).collect();
    if !done.is_empty() && !a.quiet {
        eprintln!(
            "resuming: {} of {} reviews already scored in {}",
            jobs.len() - todo.len(),
            jobs.len(),
            lines_path.display()
        );
    }
    // Rewrite the finished lines (dropping a torn one) before appending.
    let mut out = reopen_log(&lines_path, &records)?;
    if !todo.is_empty() {
        // The NLI model only when a SemTrace review is left to score.
        let engine = if todo.iter().any(|j| j.icw.is_none()) {
            Some(model_store::load(&a.model)?)
        } else {
            None
        };
        for (n, j) in todo.iter().enumerate() {
            let text = j.text.as_deref().expect("every job to score has its text");
            let mut rec = ReviewRecord {
                id: j.id.clone(),
                method: j.method.clone(),
                condition: j.condition.clone(),
                paper: j.paper.clone(),
                label: j.label,
                draw: j.draw,
                score: 0.0,
                observed: None,
                matched: None,
                verdict: None,
                source: j.source.clone(),
                words: text.split_whitespace().count(),
            };
            match (&j.icw, &engine) {
                (Some(secret), _) => rec.score = secret.score(text),
                (None, Some(engine)) => {
                    let bundle = &bundles[&j.paper];
                    let check = check_model(
                        bundle,
                        &engine.spec().name,
                        engine.sha256(),
                        a.allow_model_mismatch,
                    )?;
                    let report = if a.fast {
                        detect_fast(
                            text,
                            bundle,
                            engine,
                            check,
                            FastOptions::default(),
                            &mut |_, _| {},
                        )?
                    } else {
                        detect(text, bundle, engine, check, &mut |_, _| {})?
                    };
                    rec.score = report.score as f64;
                    rec.observed = Some(report.observed);
                    rec.matched = Some(report.matched);
                    rec.verdict = Some(
                        serde_json::to_value(report.verdict)?
                            .as_str()
                            .unwrap_or("")
                            .to_string(),
                    );
                }
                (None, None) => unreachable!("the engine is loaded when a SemTrace job is left"),
            }
            writeln!(out, "{}", serde_json::to_string(&rec)?)?;
            out.flush()?;
            if !a.quiet {
                eprintln!("[{}/{}] {} score {}", n + 1, todo.len(), rec.id, rec.score);
            }
            records.push(rec);
        }
    }
    // Report in manifest order, from the lines alone.
    let order: BTreeMap<&str, usize> = jobs
        .iter()
        .enumerate()
        .map(|(i, j)| (j.id.as_str(), i))
        .collect();
    records.retain(|r| order.contains_key(r.id.as_str()));
    records.sort_by_key(|r| order[r.id.as_str()]);
    let opts = SummaryOptions {
        resamples: a.resamples,
        seed: a.bootstrap_seed,
        ..Default::default()
    };
    let summaries = summarize(&records, &opts);
    let report = serde_json::json!({
        "format": "semtrace-eval-report",
        "format_version": "1",
        "options": opts,
        "inputs": {"reviews": a.reviews, "papers": a.papers, "out_lines": "reviews.jsonl", "decoder": if a.fast { "fast" } else { "exhaustive" }},
        "generation": a.papers.as_ref().map(|_| generate::settings(&a)),
        "conditions": summaries,
    });
    write_atomic(
        &a.out.join("report.json"),
        serde_json::to_string_pretty(&report)?.as_bytes(),
    )?;
    let input = a
        .reviews
        .as_ref()
        .or(a.papers.as_ref())
        .expect("one input manifest");
    let title = a
        .title
        .clone()
        .unwrap_or_else(|| format!("SemTrace evaluation: {}", input.display()));
    let mut md = markdown(&title, &summaries, &opts);
    // A detection rate is a property of the reviewer's LLM: say which one was measured.
    let who = if a.papers.is_some() {
        format!(
            "Reviewer LLM: `{}` at {} (reviews generated by this run).\n\n",
            a.llm.llm_model.as_deref().unwrap_or("?"),
            a.llm.llm_url.as_deref().unwrap_or("?")
        )
    } else {
        "Reviewer LLM: not known to the harness (reviews read from the manifest); a detection \
         rate is a property of the LLM that wrote them.\n\n"
            .to_string()
    };
    if let Some(at) = md.find("\n\n") {
        md.insert_str(at + 2, &who);
    }
    write_atomic(&a.out.join("report.md"), md.as_bytes())?;
    for s in &summaries {
        write_atomic(&a.out.join(roc_file_name(s)), roc_svg(s).as_bytes())?;
    }
    if !a.quiet {
        print!("{md}");
        eprintln!(
            "wrote {}/report.json, report.md and {} ROC curve(s)",
            a.out.display(),
            summaries.len()
        );
    }
    Ok(exit::OK)
}
