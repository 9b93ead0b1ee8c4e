//! `semtrace detect`: reviews against a bundle, with a table or JSON Lines.

use semtrace_core::params::MAX_REVIEW_BYTES;
use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use semtrace_core::bundle::Bundle;
use semtrace_core::decode::Verdict;
use semtrace_core::detect::{check_model, check_review_len, review_text, DetectionPlan};
use semtrace_core::report::Report;

use crate::cli::DetectArgs;
use crate::exit::{self, InputError};
use crate::{model_store, progress};

/// Read and validate a bundle file.
pub fn read_bundle(path: &Path) -> Result<Bundle> {
    let text = fs::read(path)
        .map_err(|e| InputError(format!("cannot read bundle {}: {e}", path.display())))?;
    let text = String::from_utf8(text).map_err(|_| {
        semtrace_core::Error::bundle(format!("{} is not UTF-8 text", path.display()))
    })?;
    Bundle::from_json(&text).with_context(|| format!("bundle {}", path.display()))
}

/// Expand the review arguments: files, directories (their .txt/.md files, sorted), "-".
fn review_sources(args: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for a in args {
        if a.as_os_str() == "-" {
            out.push(a.clone());
        } else if a.is_dir() {
            let files = crate::review_files::in_dir(a)
                .with_context(|| format!("reading directory {}", a.display()))?;
            if files.is_empty() {
                return Err(InputError(format!(
                    "directory {} has no .txt or .md reviews",
                    a.display()
                ))
                .into());
            }
            out.extend(files);
        } else {
            out.push(a.clone());
        }
    }
    Ok(out)
}

pub fn read_review(src: &Path) -> Result<String> {
    let mut bytes = Vec::new();
    if src.as_os_str() == "-" {
        // Read one byte past the limit so an oversized stdin is reported rather than truncated.
        std::io::stdin()
            .take(MAX_REVIEW_BYTES as u64 + 1)
            .read_to_end(&mut bytes)
            .context("reading standard input")?;
    } else {
        // Callers name the file (detect prefixes each review's errors with it): the message
        // itself does not repeat it.
        let meta =
            fs::metadata(src).map_err(|e| InputError(format!("cannot read the file: {e}")))?;
        // Refuse a giant file by its size, without reading it.
        check_review_len(meta.len())?;
        bytes = fs::read(src).map_err(|e| InputError(format!("cannot read the file: {e}")))?;
    }
    Ok(review_text(&bytes)?.to_string())
}

pub fn run(args: DetectArgs) -> Result<i32> {
    if let Some(manifest) = &args.manifest {
        return crate::commands::venue::run(&args, manifest);
    }
    let bundle_path = args
        .bundle
        .as_deref()
        .ok_or_else(|| InputError("give --bundle FILE (or --manifest for a venue batch)".into()))?;
    let mut bundle = read_bundle(bundle_path)?;
    let key = match &args.secret_file {
        Some(p) => Some(crate::commands::recipients::read_secret(p)?),
        None => None,
    };
    let mut names = std::collections::HashMap::new();
    if let (Some(list), Some(key)) = (&args.recipients, &key) {
        if bundle.recipients.is_empty() {
            return Err(InputError(format!(
                "--recipients given, but bundle {} lists no recipients",
                bundle_path.display()
            ))
            .into());
        }
        let given = crate::commands::recipients::read_names(list)?;
        names = crate::commands::recipients::names_by_digest(&bundle, key, &given)?;
    }
    if let (Some(name), Some(key)) = (&args.recipient, &key) {
        bundle = crate::commands::recipients::only_recipient(&bundle, key, name)?;
    }
    if let Some(alpha) = args.alpha {
        if !(alpha > 0.0 && alpha <= 1.0) {
            return Err(InputError(format!("--alpha {alpha} is outside (0, 1]")).into());
        }
        bundle.decoding.alpha = alpha;
    }
    let sources = review_sources(&args.reviews)?;
    if args.decoder == crate::cli::DecoderArg::Exhaustive
        && args.fast.options() != semtrace_core::detect::FastOptions::default()
    {
        // The exhaustive decoder has no budget: say so rather than silently ignore the flags.
        eprintln!("warning: the --fast-* flags only apply to --decoder fast; they are ignored");
    }
    let engine = model_store::load(&args.model)?;
    let check = check_model(
        &bundle,
        &engine.spec().name,
        engine.sha256(),
        args.allow_model_mismatch,
    )?;
    if check.mismatch_overridden {
        eprintln!(
            "warning: model {} (sha256 {}) is not the bundle's model {} (sha256 {}); results are not calibrated",
            check.name, check.sha256, bundle.model.name, bundle.model.sha256
        );
    }

    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let (mut any_exposed, mut any_error) = (false, false);
    for src in &sources {
        let name = src.display().to_string();
        let result = read_review(src).and_then(|text| {
            let pb = progress::bar(0, &name, args.quiet);
            let mut tick = |done: usize, total: usize| {
                pb.set_length(total as u64);
                pb.set_position(done as u64);
            };
            let decoding = if args.decoder == crate::cli::DecoderArg::Exhaustive {
                DetectionPlan::exhaustive(&text, bundle.clone())
            } else {
                DetectionPlan::fast(&text, bundle.clone(), args.fast.options())
            };
            let r = decoding
                .with_safeguard(args.safeguard)
                .run(&engine, check.clone(), &mut tick);
            pb.finish_and_clear();
            Ok(r?)
        });
        match result {
            Ok(mut report) => {
                report.review = Some(name);
                any_exposed |= report.verdict == Verdict::Exposed;
                if args.json {
                    let mut v = serde_json::to_value(&report)?;
                    if let Some(n) = report.recipient.as_ref().and_then(|d| names.get(d)) {
                        v["recipient_name"] = serde_json::json!(n);
                    }
                    if let Some(list) = v.get_mut("recipients").and_then(|x| x.as_array_mut()) {
                        for r in list {
                            if let Some(n) = r["digest"].as_str().and_then(|d| names.get(d)) {
                                r["name"] = serde_json::json!(n);
                            }
                        }
                    }
                    writeln!(out, "{v}")?;
                } else {
                    write!(out, "{}", render(&report, &bundle, &names))?;
                }
            }
            Err(e) => {
                any_error = true;
                eprintln!("error: {name}: {e:#}");
                if args.json {
                    writeln!(
                        out,
                        "{}",
                        serde_json::json!({"review": name, "error": format!("{e:#}")})
                    )?;
                }
            }
        }
    }
    Ok(if any_error {
        exit::BAD_INPUT
    } else if any_exposed {
        exit::EXPOSED
    } else {
        exit::OK
    })
}

/// Human-readable report.
pub fn render(
    r: &Report,
    bundle: &Bundle,
    names: &std::collections::HashMap<String, String>,
) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let verdict = match r.verdict {
        Verdict::Exposed => "EXPOSED",
        Verdict::NotExposed => "not exposed",
        Verdict::Ineligible => "ineligible (too few observed positions)",
    };
    let _ = writeln!(s, "review:  {}", r.review.as_deref().unwrap_or("-"));
    let _ = writeln!(s, "bundle:  {} (K = {})", bundle.document.title, r.k);
    let _ = writeln!(
        s,
        "verdict: {verdict}\n         S = {}, O = {}/{} observed (eligible from {}), M = {} matched, p = {} (alpha {})",
        r.score,
        r.observed,
        r.k,
        bundle.decoding.o_min,
        r.matched,
        if r.p_value >= 1e-3 { format!("{:.4}", r.p_value) } else { format!("{:.2e}", r.p_value) },
        r.alpha
    );
    let _ = writeln!(
        s,
        "         exposed needs {} at alpha {}; smallest attainable p for this bundle: {:.2e} (all {} matching)",
        match r.matches_needed {
            Some(m) => format!("M >= {m} of O = {}", r.observed),
            None => format!("more than O = {} observed positions", r.observed),
        },
        r.alpha,
        r.min_p_value,
        r.k
    );
    if !r.recipients.is_empty() {
        let who = |d: &str| {
            names
                .get(d)
                .cloned()
                .unwrap_or_else(|| format!("digest {d}"))
        };
        let best = r.recipient.as_deref().unwrap_or("");
        let _ = writeln!(
            s,
            "copies:  {} recipients tested on the same decisions (Holm); the figures above are {}'s (p Holm-adjusted){}",
            r.recipients.len(),
            who(best),
            if r.verdict == Verdict::Exposed {
                format!(": the copy that leaked is {}", who(best))
            } else {
                String::new()
            }
        );
        for x in &r.recipients {
            let _ = writeln!(
                s,
                "         {:<40} M = {:>2}, p = {:.2e}, Holm p = {:.2e}",
                who(&x.digest),
                x.matched,
                x.p_value,
                x.holm_p
            );
        }
    }
    if !r.p_value_exact {
        // Older bundles let the optimiser pick the selected side; say what p then rests on.
        let _ = writeln!(
            s,
            "         (p assumes a fair coin per position: this bundle predates keyed selection, format 1.2)"
        );
    }
    let _ = writeln!(
        s,
        "windows: {} scored{}; model {}{}",
        r.windows.len(),
        if r.windows_total > r.windows.len() {
            format!(" (of {}, capped)", r.windows_total)
        } else {
            String::new()
        },
        r.model.name,
        if r.model.mismatch_overridden {
            " [NOT the bundle's model: --allow-model-mismatch]"
        } else {
            ""
        }
    );
    let _ = writeln!(
        s,
        "{:>4}  {:<14} {:>8} {:>7} {:>7}  {:<8} {:<10} {:>8}",
        "pos", "slot", "assigned", "s0", "s1", "decision", "erasure", "evidence"
    );
    for p in &r.positions {
        let mark = match p.matches {
            Some(true) => " ✓",
            Some(false) => " ✗",
            None => "",
        };
        let erasure = p
            .erasure
            .map(|e| format!("{e:?}").to_lowercase())
            .unwrap_or_default();
        let ev = p
            .evidence_window
            .map(|w| format!("w{w}"))
            .unwrap_or_default();
        let _ = writeln!(
            s,
            "{:>4}  {:<14} {:>8} {:>7.3} {:>7.3}  {:<8} {:<10} {:>8}",
            p.index,
            p.slot,
            p.assigned,
            p.s0,
            p.s1,
            format!("{}{mark}", p.decision),
            erasure,
            ev
        );
    }
    s.push('\n');
    s
}
