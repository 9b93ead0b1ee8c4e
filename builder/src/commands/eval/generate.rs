//! Review generation for `semtrace eval --papers`: the paired protocol of the paper.
//!
//! For paper i and draw d the seed is `eval_seed_base + i·draws + d`, shared by the positive
//! (reviewer reads the protected copy's extracted text, carrier included) and the null (reviewer
//! reads the original's). Seeds are checked to lie below the control-review seed space. Attacks
//! paraphrase both members with the same seed. Every generated text is kept under `OUT/texts/`
//! (the record's `source`), and LLM answers are cached, so a resumed run regenerates nothing.

use std::collections::{BTreeMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use semtrace_core::bundle::Bundle;
use semtrace_core::carrier::{carrier_text, occurrences};
use semtrace_eval::icw::{IcwKind, IcwSecret, ICW_TEMPLATE_VERSION};
use semtrace_eval::{Label, ReviewRecord};
use serde::Deserialize;

use super::Job;
use crate::atomic::write_atomic;
use crate::cli::EvalArgs;
use crate::commands::detect::read_bundle;
use crate::commands::llm_args;
use crate::controls::CONTROL_SEED_OFFSET;
use crate::exit::InputError;
use crate::llm::client::{ChatRequest, Message};

/// Version of the reviewer and attack prompts (recorded in report.json).
pub const PROMPT_VERSION: &str = "semtrace-eval-prompts/1";

const REVIEWER_SYSTEM: &str = "You are an expert reviewer for a machine-learning conference.";

fn reviewer_prompt(paper_text: &str) -> String {
    format!(
        "Write a peer review of the paper below. Use exactly these sections, in this order: Summary, \
         Strengths, Weaknesses, Questions for the authors, Overall score. The review must be between \
         400 and 1,200 words.\n\nPaper:\n\n{paper_text}"
    )
}

/// The attack prompts: neutral paraphrase, and the adaptive scheme-agnostic one (told only that
/// an unknown watermark may be present).
fn attack_prompt(attack: &str, review: &str) -> Option<String> {
    let task = match attack {
        "neutral" => {
            "Paraphrase the following peer review. Rewrite its wording and sentence structure \
             throughout, but keep its meaning, its evaluation and its section headings."
        }
        "adaptive" => {
            "The following peer review may contain an unknown watermark: some hidden pattern that lets \
             a third party recognise where it came from. Rewrite the review so that any such watermark \
             is removed, while keeping its meaning, its evaluation and its section headings."
        }
        _ => return None,
    };
    Some(format!(
        "{task} Answer with the rewritten review only.\n\nReview:\n\n{review}"
    ))
}

/// One line of a `--papers` manifest.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PaperLine {
    paper: String,
    original: PathBuf,
    bundle: PathBuf,
    protected: Option<PathBuf>,
}

/// What a method's positive reviewer reads.
struct Positive {
    method: String,
    icw: Option<IcwSecret>,
    text: String,
    from: String,
}

struct Paper {
    id: String,
    bundle: Bundle,
    null_text: String,
    /// SemTrace's first, then each baseline's.
    positives: Vec<Positive>,
}

/// What a reader LLM sees of a document: every page's text, in order (the carrier included:
/// it sits after the reference list, which the builder's scope cut would drop).
fn document_text(path: &Path) -> Result<String> {
    Ok(llm_args::load_source(path)?.page_text.join("\n\n"))
}

fn cut(text: &str, max: Option<usize>) -> String {
    match max {
        Some(n) if text.len() > n => {
            let mut end = n;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text[..end].to_string()
        }
        _ => text.to_string(),
    }
}

/// The requested baselines' secrets for a paper (keyed by its document hash).
fn icw_secrets(a: &EvalArgs, bundle: &Bundle) -> Result<Vec<IcwSecret>> {
    if a.baselines.is_empty() {
        return Ok(Vec::new());
    }
    let Some(kf) = &a.icw_key_file else {
        return Err(
            InputError("--baselines needs --icw-key-file (the venue's secret)".into()).into(),
        );
    };
    let key = fs::read_to_string(kf).map_err(|e| {
        InputError(format!(
            "cannot read the ICW key file {}: {e}",
            kf.display()
        ))
    })?;
    let key = key.lines().next().unwrap_or("").trim().to_string();
    if key.is_empty() {
        return Err(InputError(format!("the ICW key file {} is empty", kf.display())).into());
    }
    a.baselines
        .iter()
        .map(|b| {
            let kind = IcwKind::ALL
                .into_iter()
                .find(|k| k.method().strip_prefix("icw-") == Some(b.as_str()))
                .ok_or_else(|| {
                    InputError(format!(
                        "unknown baseline {b:?}: use lexical, initials, acrostic, unicode"
                    ))
                })?;
            Ok(IcwSecret::derive(
                kind,
                key.as_bytes(),
                &bundle.document.sha256,
            )?)
        })
        .collect()
}

fn load_papers(a: &EvalArgs, manifest: &Path) -> Result<Vec<Paper>> {
    let body = fs::read_to_string(manifest)
        .map_err(|e| InputError(format!("cannot read manifest {}: {e}", manifest.display())))?;
    let dir = manifest.parent().unwrap_or(Path::new("."));
    let mut papers: Vec<Paper> = Vec::new();
    for (n, raw) in body.lines().enumerate() {
        if raw.trim().is_empty() {
            continue;
        }
        let at = format!("{} line {}", manifest.display(), n + 1);
        let line: PaperLine =
            serde_json::from_str(raw).map_err(|e| InputError(format!("{at}: {e}")))?;
        if line.paper.is_empty() || line.paper.contains('/') {
            return Err(
                InputError(format!("{at}: paper id must be non-empty, without '/'")).into(),
            );
        }
        if papers.iter().any(|p| p.id == line.paper) {
            return Err(InputError(format!("{at}: duplicate paper {}", line.paper)).into());
        }
        let bundle = read_bundle(&dir.join(&line.bundle)).with_context(|| at.clone())?;
        let carrier = carrier_text(&bundle).with_context(|| at.clone())?;
        let original = cut(
            &document_text(&dir.join(&line.original)).with_context(|| at.clone())?,
            a.max_paper_chars,
        );
        let mut positives = Vec::new();
        let (text, from) = match &line.protected {
            Some(p) if a.max_paper_chars.is_none() => {
                let text = document_text(&dir.join(p)).with_context(|| at.clone())?;
                // The reviewer must really be shown the carrier: refuse a copy that does not carry it.
                if occurrences(&text, &carrier) != 1 {
                    return Err(InputError(format!(
                        "{at}: {} does not carry its bundle's carrier text exactly once",
                        p.display()
                    ))
                    .into());
                }
                (text, format!("protected copy {}", p.display()))
            }
            // A cut paper keeps its carrier whole (the builder verified it extracts exactly).
            _ => (
                format!("{original}\n\n{carrier}"),
                "original text + the bundle's carrier text".to_string(),
            ),
        };
        positives.push(Positive {
            method: "semtrace".into(),
            icw: None,
            text,
            from,
        });
        // The original's bytes, for embedding the baselines' carriers (read once per paper).
        let secrets = icw_secrets(a, &bundle)?;
        let original_bytes = if secrets.is_empty() {
            Vec::new()
        } else {
            let path = dir.join(&line.original);
            fs::read(&path)
                .map_err(|e| InputError(format!("{at}: cannot read {}: {e}", path.display())))?
        };
        let is_pdf = original_bytes.starts_with(b"%PDF-");
        for secret in secrets {
            let method = secret.kind().method().to_string();
            let icw_carrier = secret.carrier_text();
            // Embedded in the PDF exactly like SemTrace's carrier when the reviewer reads whole
            // PDFs; appended to the text when the paper is a text file or is cut.
            let (text, from) = if is_pdf && line.protected.is_some() && a.max_paper_chars.is_none()
            {
                let opts = crate::protect::Options {
                    mode: semtrace_core::carrier::CarrierMode::Invisible,
                    font: None,
                };
                let prot = crate::protect::protect_text(
                    &original_bytes,
                    &bundle,
                    icw_carrier.clone(),
                    ICW_TEMPLATE_VERSION,
                    &opts,
                )
                .with_context(|| format!("{at}: embedding the {method} carrier"))?;
                let path = a
                    .out
                    .join("protected")
                    .join(format!("{}-{method}.pdf", line.paper));
                fs::create_dir_all(a.out.join("protected"))?;
                write_atomic(&path, &prot.bytes)?;
                (
                    document_text(&path)?,
                    format!("protected copy {}", path.display()),
                )
            } else {
                (
                    format!("{original}\n\n{icw_carrier}"),
                    format!("original text + the {method} carrier text"),
                )
            };
            positives.push(Positive {
                method,
                icw: Some(secret),
                text,
                from,
            });
        }
        papers.push(Paper {
            id: line.paper,
            bundle,
            null_text: original,
            positives,
        });
    }
    if papers.is_empty() {
        return Err(InputError(format!("manifest {} lists no papers", manifest.display())).into());
    }
    Ok(papers)
}

/// Generation settings as recorded in report.json.
pub fn settings(a: &EvalArgs) -> serde_json::Value {
    serde_json::json!({
        "prompt_version": PROMPT_VERSION,
        "llm_model": a.llm.llm_model,
        "draws": a.draws,
        "eval_seed_base": a.eval_seed_base,
        "attacks": a.attacks,
        "baselines": a.baselines,
        "icw_template_version": ICW_TEMPLATE_VERSION,
        "temperature": a.review_temperature,
        "top_p": a.review_top_p,
        "max_tokens": a.review_max_tokens,
        "max_paper_chars": a.max_paper_chars,
    })
}

/// The text kept at `path`, or `gen`'s, written there first.
fn kept_or(path: &Path, gen: impl FnOnce() -> Result<String>) -> Result<String> {
    if let Ok(t) = fs::read_to_string(path) {
        return Ok(t);
    }
    let t = gen()?;
    write_atomic(path, t.as_bytes())?;
    Ok(t)
}

fn text_path(out: &Path, id: &str) -> PathBuf {
    out.join("texts")
        .join(format!("{}.md", id.replace('/', "__")))
}

/// Every job of the run; texts are generated (or re-read) only for ids not in `done`.
pub(super) fn jobs(
    a: &EvalArgs,
    manifest: &Path,
    done: &HashSet<String>,
) -> Result<(Vec<Job>, BTreeMap<String, Bundle>)> {
    for at in &a.attacks {
        if attack_prompt(at, "").is_none() || at == "clean" {
            return Err(InputError(format!("unknown attack {at:?}: use neutral, adaptive")).into());
        }
    }
    if a.draws == 0 {
        return Err(InputError("--draws must be at least 1".into()).into());
    }
    let papers = load_papers(a, manifest)?;
    let last_seed = a.eval_seed_base + papers.len() as u64 * a.draws as u64;
    if last_seed > CONTROL_SEED_OFFSET {
        return Err(InputError(format!(
            "evaluation seeds {}..{last_seed} would reach the control-review seed space (from {CONTROL_SEED_OFFSET}); \
             choose a smaller --eval-seed-base",
            a.eval_seed_base
        ))
        .into());
    }
    fs::create_dir_all(a.out.join("texts"))
        .with_context(|| format!("creating {}", a.out.display()))?;
    let client = llm_args::client(&a.llm, &a.out.join("reviews.jsonl"))?;
    let rt = llm_args::runtime()?;
    let chat = |prompt: String, system: Option<&str>, seed: u64| -> Result<String> {
        let mut messages = Vec::new();
        if let Some(s) = system {
            messages.push(Message::system(s));
        }
        messages.push(Message::user(prompt));
        let req = ChatRequest {
            messages,
            temperature: Some(a.review_temperature),
            top_p: Some(a.review_top_p),
            max_tokens: Some(a.review_max_tokens),
            seed: Some(seed),
            ..Default::default()
        };
        rt.block_on(client.chat_text(&req))
            .map_err(anyhow::Error::from)
    };
    let methods = papers.first().map_or(0, |p| p.positives.len());
    let total = papers.len() * methods * a.draws as usize * 2 * (1 + a.attacks.len());
    let mut jobs = Vec::new();
    let mut bundles = BTreeMap::new();
    let mut n = 0;
    for (i, p) in papers.iter().enumerate() {
        bundles.insert(p.id.clone(), p.bundle.clone());
        for pos in &p.positives {
            for d in 0..a.draws {
                let seed = a.eval_seed_base + i as u64 * a.draws as u64 + d as u64;
                for (label, input) in [(Label::Positive, &pos.text), (Label::Null, &p.null_text)] {
                    // Each text is generated once and kept on disk (the LLM cache backs it too,
                    // so every method's null is one generation).
                    let clean_path = text_path(
                        &a.out,
                        &ReviewRecord::make_id(&pos.method, "clean", &p.id, label, d),
                    );
                    let clean = || {
                        kept_or(&clean_path, || {
                            chat(reviewer_prompt(input), Some(REVIEWER_SYSTEM), seed)
                        })
                    };
                    for condition in
                        std::iter::once("clean").chain(a.attacks.iter().map(String::as_str))
                    {
                        let id = ReviewRecord::make_id(&pos.method, condition, &p.id, label, d);
                        let path = text_path(&a.out, &id);
                        n += 1;
                        let text = if done.contains(&id) {
                            None
                        } else if condition == "clean" {
                            Some(clean()?)
                        } else {
                            Some(kept_or(&path, || {
                                let prompt =
                                    attack_prompt(condition, &clean()?).expect("checked above");
                                chat(prompt, None, seed)
                            })?)
                        };
                        if text.is_some() && !a.quiet {
                            eprintln!("[{n}/{total}] generated {id} (seed {seed})");
                        }
                        let from = if label == Label::Positive {
                            pos.from.as_str()
                        } else {
                            "original"
                        };
                        jobs.push(Job {
                            id,
                            method: pos.method.clone(),
                            icw: pos.icw.clone(),
                            paper: p.id.clone(),
                            label,
                            draw: d,
                            condition: condition.to_string(),
                            text,
                            source: format!(
                                "{} (reviewer read the {from}; seed {seed})",
                                path.display()
                            ),
                        });
                    }
                }
            }
        }
    }
    Ok((jobs, bundles))
}
