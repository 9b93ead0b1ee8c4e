//! `semtrace build`: paper → signature bundle + build report (JSON and Markdown).
//!
//! Outputs are written atomically (temporary file, then rename) and only after the whole build
//! succeeded; a failed build writes its report (so the starving gate is on record) but no bundle.

use semtrace_core::params::MAX_K;
use std::fs;
use std::path::{Path, PathBuf};

use crate::atomic::write_atomic;
use anyhow::{Context, Result};
use semtrace_core::bundle::{Bundle, ModelIdentity};
use semtrace_infer::embed::TractEmbedder;
use semtrace_infer::TractNli;

use super::llm_args;
use crate::candidates::llm::{generate, refill as llm_refill, GenOptions, RawCandidate};
use crate::cli::BuildArgs;
use crate::controls::{control_seed, generate_controls, generic_review_windows, ControlOptions};
use crate::exit::{self, InputError};
use crate::llm::LlmClient;
use crate::pipeline::candidate::{Candidate, CandidateSource, Origin};
use crate::pipeline::report::{BuildMode, BuildReport};
use crate::pipeline::{self, offline, Outcome};
use crate::protect::Protected;
use crate::{model_store, progress, source};

pub const BUNDLE_FILE: &str = "bundle.json";
pub const REPORT_FILE: &str = "report.json";
pub const REPORT_MD_FILE: &str = "report.md";
pub const PROTECTED_FILE: &str = "protected.pdf";

fn is_pdf(path: &Path) -> bool {
    use std::io::Read as _;
    let mut head = [0u8; 5];
    fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok()
        && &head == b"%PDF-"
}

fn codeword_key(secret: Option<&PathBuf>) -> Result<(Vec<u8>, String)> {
    match secret {
        Some(p) => Ok((
            crate::commands::recipients::read_secret(p)?,
            "HMAC-SHA256(venue secret, document SHA-256)".into(),
        )),
        None => {
            let mut key = vec![0u8; 32];
            getrandom::getrandom(&mut key)
                .map_err(|e| anyhow::anyhow!("reading OS randomness for the codeword: {e}"))?;
            Ok((key, "random (no --secret-file): not reproducible".into()))
        }
    }
}

/// `semtrace build`: check the arguments, load the source and the models, produce the first
/// candidates (LLM or offline), run the pipeline, protect the copy if asked, then write and print.
pub fn run(args: BuildArgs) -> Result<i32> {
    check_args(&args)?;
    let out = &args.out;
    let (key, key_source) = codeword_key(args.secret_file.as_ref())?;
    let mut stages = progress::Stages::new(args.quiet);
    stages.set("loading source", 0, 1);
    let doc = llm_args::load_source(&args.paper)?;
    let controls = match &args.controls {
        Some(dir) => Some((
            "controls-dir".to_string(),
            crate::review_files::read_controls_dir(dir)?,
        )),
        None => None,
    };
    let models = load_models(&args, &mut stages)?;
    let mut embed = |texts: &[&str]| -> Result<Vec<Vec<f32>>> { Ok(models.embedder.embed(texts)?) };

    let llm = match &args.llm.llm_url {
        Some(_) => Some((
            llm_args::client(&args.llm, &out.join(BUNDLE_FILE))?,
            llm_args::runtime()?,
        )),
        None => None,
    };
    let gen_opts = GenOptions {
        max_facts_per_pass: args.max_facts.max(1),
        ..Default::default()
    };
    let mut controls = controls;
    let (initial, reserve) = match &llm {
        Some((client, rt)) => {
            if controls.is_none() && args.n_controls > 0 {
                stages.set("control reviews (LLM)", 0, args.n_controls);
                controls = Some(llm_controls(client, rt, &doc, &args)?);
            }
            stages.set("candidates (LLM)", 0, 1);
            let g = rt.block_on(generate(client, &doc.units, &gen_opts))?;
            (g.candidates.into_iter().map(from_llm).collect(), Vec::new())
        }
        None => offline::extract(&doc.units, args.initial_candidates),
    };
    let mut reserve = Some(reserve);
    let mut refill = |uncovered: &[source::EvidenceUnit]| -> Result<Vec<Candidate>> {
        match &llm {
            Some(_) if uncovered.is_empty() => Ok(Vec::new()),
            Some((client, rt)) => {
                let g = rt.block_on(llm_refill(client, uncovered, &gen_opts))?;
                Ok(g.candidates.into_iter().map(from_llm).collect())
            }
            None => Ok(offline_refill(
                reserve.take().unwrap_or_default(),
                uncovered,
            )),
        }
    };
    let mut tick = |stage: &str, done: usize, total: usize| stages.set(stage, done, total);
    let mut outcome = pipeline::run(pipeline::BuildInput {
        doc: &doc,
        path: args.paper.display().to_string(),
        k: args.k,
        nli: &models.engine,
        model: models.identity.clone(),
        model_sha256: models.engine.sha256().to_string(),
        embed: &mut embed,
        embedder: models.embedder_name.clone(),
        mode: if llm.is_some() {
            BuildMode::Llm
        } else {
            BuildMode::Offline
        },
        llm_info: None,
        candidates: initial,
        refill: &mut refill,
        controls,
        learned_priors: args.priors == crate::cli::PriorsMode::Learned,
        controls_prefilter: args.controls_prefilter,
        // Offline candidates are raw sentences of the paper (captions, fragments after headings),
        // the kind the model most often reads as generically entailed; LLM facts are propositions.
        generic_windows: if llm.is_none() && !args.no_generic_gate {
            generic_review_windows()
        } else {
            Vec::new()
        },
        codeword_key: key,
        codeword_source: key_source,
        seed: args.seed,
        progress: &mut tick,
    })?;
    stages.finish();
    if let Some((client, _)) = &llm {
        let info = serde_json::json!({
            "endpoint": client.config().endpoint(),
            "model": client.config().model,
            "stats": client.stats(),
        });
        match &mut outcome {
            Outcome::Built { report, .. } | Outcome::Failed { report } => report.llm = Some(info),
        }
    }

    let (report, mut bundle) = match outcome {
        Outcome::Built { bundle, report } => (report, Some(bundle)),
        Outcome::Failed { report } => (report, None),
    };
    // The carrier is embedded and verified before anything is written: a failure leaves no files.
    let protected = match (&mut bundle, args.protect) {
        (Some(b), true) => {
            stages.set("protected copy (carrier)", 0, 1);
            let p = super::protect::protect_file(&args.paper, b, &args.carrier)?;
            stages.finish();
            b.carrier = Some(p.record.clone());
            Some(p)
        }
        _ => None,
    };
    write_outputs(out, &report, bundle.as_deref(), protected.as_ref())?;
    print_result(&args, &report, bundle.is_some(), protected.as_ref())?;
    Ok(if bundle.is_some() {
        exit::OK
    } else {
        exit::BUILD_FAILED
    })
}

/// Refuse what cannot work before any model loads: a bad K, an existing bundle without
/// `--force`, `--protect` on a non-PDF.
fn check_args(args: &BuildArgs) -> Result<()> {
    if args.k < 2 || !args.k.is_multiple_of(2) || args.k > MAX_K {
        return Err(InputError(format!(
            "--k {}: K must be even, at least 2 and at most {MAX_K}",
            args.k
        ))
        .into());
    }
    if args.out.join(BUNDLE_FILE).exists() && !args.force {
        return Err(InputError(format!(
            "{} already holds a bundle; pass --force to replace it",
            args.out.display()
        ))
        .into());
    }
    if args.protect && !is_pdf(&args.paper) {
        return Err(InputError(format!(
            "--protect needs a PDF; {} is not one (no %PDF- header)",
            args.paper.display()
        ))
        .into());
    }
    Ok(())
}

/// The NLI engine the bundle is frozen for, and the sentence embedder of the gates.
struct Models {
    engine: TractNli,
    identity: ModelIdentity,
    embedder: TractEmbedder,
    /// The embedder's file name and hash, for the report (no directory: bundles do not depend
    /// on where files lie).
    embedder_name: String,
}

fn load_models(args: &BuildArgs, stages: &mut progress::Stages) -> Result<Models> {
    if args.embedder.is_none() {
        // Before the models load, so the messages do not cut through a progress bar.
        stages.finish();
        crate::commands::model::ensure_default_embedder(&args.embedder_index_url, args.quiet)?;
    }
    stages.set("loading models", 0, 1);
    let engine = model_store::load(&args.model)?;
    let identity = ModelIdentity {
        name: engine.spec().name.clone(),
        sha256: engine.sha256().to_string(),
        entailment_index: engine.spec().entailment_index,
        max_length: engine.spec().max_length,
    };
    let embedder = model_store::load_embedder(args.embedder.as_deref())?;
    let label = args
        .embedder
        .as_deref()
        .unwrap_or(model_store::DEFAULT_EMBEDDER);
    let label = Path::new(label)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| label.to_string());
    let embedder_name = format!("{label} (sha256 {})", embedder.sha256());
    Ok(Models {
        engine,
        identity,
        embedder,
        embedder_name,
    })
}

/// Selection-only control reviews of the paper, written by the LLM (`--n-controls`).
fn llm_controls(
    client: &LlmClient,
    rt: &tokio::runtime::Runtime,
    doc: &source::SourceDoc,
    args: &BuildArgs,
) -> Result<(String, Vec<(String, String)>)> {
    let text = llm_args::body_text(doc);
    let opts = ControlOptions {
        max_tokens: args.control_max_tokens,
        ..Default::default()
    };
    let list = rt.block_on(generate_controls(client, &text, args.n_controls, 0, &opts))?;
    Ok((
        "llm".to_string(),
        list.into_iter()
            .enumerate()
            .map(|(k, t)| (format!("control-{k} (seed {})", control_seed(0, k)), t))
            .collect(),
    ))
}

/// Offline refill: the reserve's candidates from the uncovered units (the reserve is used once).
fn offline_refill(reserve: Vec<Candidate>, uncovered: &[source::EvidenceUnit]) -> Vec<Candidate> {
    let ids: std::collections::HashSet<&str> = uncovered.iter().map(|u| u.id.as_str()).collect();
    reserve
        .into_iter()
        .filter(|c| ids.contains(c.unit.as_str()))
        .map(|mut c| {
            c.origin = Origin::OfflineRefill;
            c
        })
        .collect()
}

/// The report (JSON and Markdown), the protected copy and the bundle, each written atomically;
/// a failed build removes a stale bundle so that it is not mistaken for this build's.
fn write_outputs(
    out: &Path,
    report: &BuildReport,
    bundle: Option<&Bundle>,
    protected: Option<&Protected>,
) -> Result<()> {
    fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    write_atomic(
        &out.join(REPORT_FILE),
        serde_json::to_string_pretty(report)?.as_bytes(),
    )?;
    write_atomic(
        &out.join(REPORT_MD_FILE),
        pipeline::report::markdown(report).as_bytes(),
    )?;
    if let Some(p) = protected {
        write_atomic(&out.join(PROTECTED_FILE), &p.bytes)?;
    }
    match bundle {
        Some(b) => write_atomic(&out.join(BUNDLE_FILE), b.to_json_pretty().as_bytes())?,
        None => {
            let stale = out.join(BUNDLE_FILE);
            if stale.exists() {
                fs::remove_file(&stale)
                    .with_context(|| format!("removing stale {}", stale.display()))?;
            }
        }
    }
    Ok(())
}

/// The summary on stdout: JSON with `--json`, else the human-readable text.
fn print_result(
    args: &BuildArgs,
    report: &BuildReport,
    built: bool,
    protected: Option<&Protected>,
) -> Result<()> {
    let out = &args.out;
    if args.json {
        let summary = serde_json::json!({
            "status": report.status,
            "failure": report.failure,
            "bundle": built.then(|| out.join(BUNDLE_FILE)),
            "report": out.join(REPORT_FILE),
            "report_markdown": out.join(REPORT_MD_FILE),
            "document": report.document,
            "k": report.k,
            "codeword": report.codeword,
            "gate_counts": report.gate_counts,
            "assignment": report.assignment,
            "timings": report.timings,
            "protected": protected.map(|_| out.join(PROTECTED_FILE)),
            "carrier": protected.map(|p| &p.record),
        });
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        print!("{}", summary_text(report, out, built));
        if let Some(p) = protected {
            super::protect::print_summary(p, &out.join(PROTECTED_FILE), &out.join(BUNDLE_FILE));
        }
    }
    Ok(())
}

fn summary_text(r: &BuildReport, out: &Path, built: bool) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let d = &r.document;
    let _ = writeln!(
        s,
        "document: {} ({} pages, {} units kept, {} excluded)",
        d.title, d.pages, d.units, d.excluded_units
    );
    if let Some(c) = &d.cut {
        let _ = writeln!(s, "scope:    cut at \"{}\" on page {}", c.heading, c.page);
    }
    let gates: Vec<String> = r
        .gate_counts
        .iter()
        .map(|g| format!("{} −{}", g.gate.name(), g.dropped))
        .collect();
    let n = r.gate_counts.first().map(|g| g.entered).unwrap_or(0);
    let _ = writeln!(s, "gates:    {n} candidates; {}", gates.join(", "));
    let sources: Vec<String> = r
        .source_counts
        .iter()
        .map(|c| {
            let pass = if c.pass == "initial" { "" } else { " (refill)" };
            format!("{}{pass} {}/{}", c.source, c.passed, c.candidates)
        })
        .collect();
    let _ = writeln!(s, "sources:  passed/candidates: {}", sources.join(", "));
    if let Some(p) = &r.priors {
        let _ = writeln!(s, "priors:   {}", p.note);
    }
    if built {
        let _ = writeln!(
            s,
            "codeword: {} ({})",
            r.codeword.iter().map(u8::to_string).collect::<String>(),
            r.codeword_source
        );
        if let Some(a) = &r.assignment {
            let _ = writeln!(
                s,
                "objective 8A+P+H = {:.3} (from {:.3})",
                a.objective.total, a.initial.total
            );
            for p in &a.positions {
                let _ = writeln!(
                    s,
                    "  {:>2} {:<12} bit {} {}",
                    p.index, p.slot, p.bit, p.selected_text
                );
            }
        }
        let _ = writeln!(
            s,
            "wrote {}, {}, {}",
            out.join(BUNDLE_FILE).display(),
            out.join(REPORT_FILE).display(),
            out.join(REPORT_MD_FILE).display()
        );
    } else if let Some(f) = &r.failure {
        let _ = writeln!(s, "BUILD FAILED: {}", f.message);
        let _ = writeln!(
            s,
            "wrote {} and {} (no bundle)",
            out.join(REPORT_FILE).display(),
            out.join(REPORT_MD_FILE).display()
        );
    }
    let total: f64 = r.timings.iter().map(|t| t.seconds).sum();
    let _ = writeln!(
        s,
        "time:     {total:.1} s ({})",
        r.timings
            .iter()
            .map(|t| format!("{} {:.1}", t.stage, t.seconds))
            .collect::<Vec<_>>()
            .join(", ")
    );
    s
}

fn from_llm(c: RawCandidate) -> Candidate {
    Candidate {
        id: String::new(),
        // An LLM may still write "we"/"our"; the source-NLI premise gets the same rewrite.
        text: pipeline::voice::rewrite(&c.text),
        quote: c.quote,
        unit: c.unit,
        origin: c.origin,
        source: CandidateSource::Llm,
        attributes: c.attributes,
    }
}
