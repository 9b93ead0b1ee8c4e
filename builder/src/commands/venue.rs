//! Venue batch: `semtrace detect --manifest venue.jsonl --out DIR [--shard I/N]` and
//! `semtrace merge`. Every review is decoded once against its bundle; raw results are appended
//! to a JSON Lines file as they finish (a killed run resumes), and the venue-wide corrections
//! (Holm for the family-wise error rate, Benjamini–Hochberg for the false discovery rate) are
//! computed once every review of the manifest has its exact p-value.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use semtrace_core::bundle::Bundle;
use semtrace_core::decode::Verdict;
use semtrace_core::detect::{check_model, review_text, DetectionPlan};
use semtrace_core::report::Decoder;
use semtrace_core::venue::{benjamini_hochberg, holm, p_value_histogram_svg};
use serde::{Deserialize, Serialize};

use crate::atomic::{finished_lines, reopen_log, write_atomic};
use crate::cli::{DecoderArg, DetectArgs, MergeArgs};
use crate::commands::detect::{read_bundle, read_review};
use crate::exit::{self, InputError};
use crate::{model_store, progress};

pub const RESULTS_FILE: &str = "results.jsonl";
pub const VENUE_FILE: &str = "venue.jsonl";
pub const SUMMARY_FILE: &str = "summary.md";
pub const HISTOGRAM_FILE: &str = "p-values.svg";

/// One review's result; the correction fields are filled when the whole venue is known.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// 1-based line of the manifest.
    pub line: usize,
    pub review: String,
    pub bundle: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recipient: Option<String>,
    pub document: String,
    /// With per-reviewer copies and no recipient given: the digest of the copy whose codeword
    /// fits best (its p-value is Holm-adjusted over the bundle's recipients).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copy: Option<String>,
    /// SHA-256 of the manifest and its number of reviews: shards of one venue must agree.
    pub manifest_sha256: String,
    pub manifest_reviews: usize,
    pub verdict: Verdict,
    pub k: usize,
    pub observed: usize,
    pub matched: usize,
    pub eligible: bool,
    pub p_value: f64,
    pub p_value_exact: bool,
    pub decoder: Decoder,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub holm_p: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bh_q: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flag_fwer: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flag_fdr: Option<bool>,
}

struct Job {
    line: usize,
    review: PathBuf,
    bundle: PathBuf,
    recipient: Option<String>,
    /// The bundle seen as that recipient's copy.
    copy: Option<Bundle>,
}

/// One line of a manifest, as written (paths not yet joined to the manifest's folder).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestLine {
    /// 1-based line number.
    pub line: usize,
    pub review: String,
    pub bundle: String,
    pub recipient: Option<String>,
}

/// Parses a manifest's text (no file is opened): one JSON object per non-blank line with string
/// fields `review` and `bundle` and an optional `recipient`. `name` prefixes the messages.
pub fn parse_manifest(text: &str, name: &str) -> Result<Vec<ManifestLine>, InputError> {
    let mut lines = Vec::new();
    for (n, raw) in text.lines().enumerate() {
        if raw.trim().is_empty() {
            continue;
        }
        let at = format!("{name} line {}", n + 1);
        let v: serde_json::Value =
            serde_json::from_str(raw).map_err(|e| InputError(format!("{at}: {e}")))?;
        if !v.is_object() {
            return Err(InputError(format!("{at}: not a JSON object")));
        }
        let field = |k: &str| -> Result<Option<String>, InputError> {
            match v.get(k) {
                None | Some(serde_json::Value::Null) => Ok(None),
                Some(serde_json::Value::String(s)) => Ok(Some(s.clone())),
                Some(_) => Err(InputError(format!("{at}: \"{k}\" is not a string"))),
            }
        };
        let review =
            field("review")?.ok_or_else(|| InputError(format!("{at}: no \"review\" string")))?;
        let bundle =
            field("bundle")?.ok_or_else(|| InputError(format!("{at}: no \"bundle\" string")))?;
        for (k, path) in [("review", &review), ("bundle", &bundle)] {
            if path.trim().is_empty() || path.contains('\0') {
                return Err(InputError(format!("{at}: \"{k}\" is not a usable path")));
            }
        }
        lines.push(ManifestLine {
            line: n + 1,
            review,
            bundle,
            recipient: field("recipient")?,
        });
    }
    if lines.is_empty() {
        return Err(InputError(format!("manifest {name} lists no reviews")));
    }
    Ok(lines)
}

/// Reads and checks the whole manifest before anything is decoded or written: every review
/// readable text, every bundle valid, no review twice, no recipient a bundle cannot name.
fn read_manifest(
    path: &Path,
    key: Option<&[u8]>,
) -> Result<(Vec<Job>, HashMap<PathBuf, Bundle>, String)> {
    let bytes = fs::read(path)
        .map_err(|e| InputError(format!("cannot read manifest {}: {e}", path.display())))?;
    let text = String::from_utf8(bytes.clone())
        .map_err(|_| InputError(format!("manifest {} is not UTF-8 text", path.display())))?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut jobs = Vec::new();
    let mut bundles: HashMap<PathBuf, Bundle> = HashMap::new();
    let mut seen: HashMap<PathBuf, (usize, PathBuf)> = HashMap::new();
    for entry in parse_manifest(&text, &path.display().to_string())? {
        let at = format!("{} line {}", path.display(), entry.line);
        let review = dir.join(&entry.review);
        let bundle = dir.join(&entry.bundle);
        let recipient = entry.recipient;
        if let Some((first, other)) = seen.get(&review) {
            return Err(InputError(if other == &bundle {
                format!("{at}: review {} is listed twice (line {first} too)", review.display())
            } else {
                format!(
                    "{at}: review {} has two bundles ({} on line {first}, {} here); a review is tested against one copy",
                    review.display(),
                    other.display(),
                    bundle.display()
                )
            })
            .into());
        }
        seen.insert(review.clone(), (entry.line, bundle.clone()));
        read_review(&review).with_context(|| format!("{at}: review {}", review.display()))?;
        if !bundles.contains_key(&bundle) {
            let b = read_bundle(&bundle).with_context(|| at.clone())?;
            bundles.insert(bundle.clone(), b);
        }
        let copy = match &recipient {
            None => None,
            Some(r) => {
                let b = &bundles[&bundle];
                if b.recipients.is_empty() {
                    return Err(InputError(format!(
                        "{at}: recipient \"{r}\" asked for, but bundle {} lists no recipients",
                        bundle.display()
                    ))
                    .into());
                }
                let key = key.ok_or_else(|| {
                    InputError(format!(
                        "{at}: recipient \"{r}\" needs the venue secret (--secret-file)"
                    ))
                })?;
                Some(
                    crate::commands::recipients::only_recipient(b, key, r)
                        .with_context(|| at.clone())?,
                )
            }
        };
        jobs.push(Job {
            line: entry.line,
            review,
            bundle,
            recipient,
            copy,
        });
    }
    Ok((jobs, bundles, semtrace_core::sha256_hex(&bytes)))
}

pub fn run(args: &DetectArgs, manifest: &Path) -> Result<i32> {
    let out = args
        .out
        .as_deref()
        .ok_or_else(|| InputError("--manifest needs --out DIR".into()))?;
    let key = match &args.secret_file {
        Some(p) => Some(crate::commands::recipients::read_secret(p)?),
        None => None,
    };
    let (jobs, bundles, manifest_sha) = read_manifest(manifest, key.as_deref())?;
    let total = jobs.len();
    let (mine, lines_path): (Vec<&Job>, PathBuf) = match args.shard {
        Some((i, n)) => (
            jobs.iter()
                .enumerate()
                .filter(|(idx, _)| idx % n == i - 1)
                .map(|(_, j)| j)
                .collect(),
            out.join(format!("shard-{i}-of-{n}.jsonl")),
        ),
        None => (jobs.iter().collect(), out.join(RESULTS_FILE)),
    };
    let engine = model_store::load(&args.model)?;
    // Check every bundle's model before decoding anything.
    let mut checks = HashMap::new();
    for (path, b) in &bundles {
        let check = check_model(
            b,
            &engine.spec().name,
            engine.sha256(),
            args.allow_model_mismatch,
        )
        .with_context(|| format!("bundle {}", path.display()))?;
        if check.mismatch_overridden && !args.quiet {
            eprintln!(
                "warning: bundle {} was built for model {} (sha256 {}), not this one; its results are not calibrated",
                path.display(),
                b.model.name,
                b.model.sha256
            );
        }
        checks.insert(path.clone(), check);
    }
    fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let mut rows: Vec<Row> = finished_lines(&lines_path);
    if let Some(r) = rows.iter().find(|r| r.manifest_sha256 != manifest_sha) {
        return Err(InputError(format!(
            "{} holds results of another manifest (line {}: {}); use a new --out",
            lines_path.display(),
            r.line,
            r.review
        ))
        .into());
    }
    let done: std::collections::HashSet<usize> = rows.iter().map(|r| r.line).collect();
    let todo: Vec<&Job> = mine
        .into_iter()
        .filter(|j| !done.contains(&j.line))
        .collect();
    if !done.is_empty() && !args.quiet {
        eprintln!(
            "resuming: {} of {} reviews already decoded in {}",
            done.len(),
            done.len() + todo.len(),
            lines_path.display()
        );
    }
    let mut file = reopen_log(&lines_path, &rows)?;
    let pb = progress::bar(todo.len() as u64, "reviews", args.quiet);
    for job in todo {
        pb.set_message(job.review.display().to_string());
        let bundle = job.copy.as_ref().unwrap_or(&bundles[&job.bundle]);
        let bytes = fs::read(&job.review)
            .with_context(|| format!("cannot read {}", job.review.display()))?;
        let text = review_text(&bytes)?.to_string();
        let decoding = if args.decoder == DecoderArg::Exhaustive {
            DetectionPlan::exhaustive(&text, bundle.clone())
        } else {
            DetectionPlan::fast(&text, bundle.clone(), args.fast.options())
        };
        let r = decoding.with_safeguard(args.safeguard).run(
            &engine,
            checks[&job.bundle].clone(),
            &mut |_, _| {},
        )?;
        let row = Row {
            line: job.line,
            review: job.review.display().to_string(),
            bundle: job.bundle.display().to_string(),
            recipient: job.recipient.clone(),
            document: bundle.document.title.clone(),
            copy: r.recipient.clone(),
            manifest_sha256: manifest_sha.clone(),
            manifest_reviews: total,
            verdict: r.verdict,
            k: r.k,
            observed: r.observed,
            matched: r.matched,
            eligible: r.eligible,
            p_value: r.p_value,
            p_value_exact: r.p_value_exact,
            decoder: r.decoder,
            holm_p: None,
            bh_q: None,
            flag_fwer: None,
            flag_fdr: None,
        };
        writeln!(file, "{}", serde_json::to_string(&row)?)?;
        file.flush()?;
        rows.push(row);
        pb.inc(1);
    }
    pb.finish_and_clear();
    match args.shard {
        Some((i, n)) => {
            if !args.quiet {
                eprintln!(
                    "shard {i}/{n}: {} reviews in {}; when every shard is done: semtrace merge {}/shard-*-of-{n}.jsonl --out DIR",
                    rows.len(),
                    lines_path.display(),
                    out.display()
                );
            }
            Ok(exit::OK)
        }
        None => finalize(rows, out, args.fwer, args.fdr, args.quiet),
    }
}

pub fn merge(a: MergeArgs) -> Result<i32> {
    let mut rows: Vec<Row> = Vec::new();
    for path in &a.shards {
        let body = fs::read_to_string(path)
            .map_err(|e| InputError(format!("cannot read shard {}: {e}", path.display())))?;
        for (n, l) in body.lines().enumerate() {
            if l.trim().is_empty() {
                continue;
            }
            let row: Row = serde_json::from_str(l).map_err(|e| {
                InputError(format!(
                    "{} line {}: not a result line ({e}); was that shard killed? rerun it to finish",
                    path.display(),
                    n + 1
                ))
            })?;
            rows.push(row);
        }
    }
    finalize(rows, &a.out, a.fwer, a.fdr, false)
}

/// Checks that the rows are one whole manifest, corrects over them and writes venue.jsonl,
/// summary.md and p-values.svg.
fn finalize(mut rows: Vec<Row>, out: &Path, fwer: f64, fdr: f64, quiet: bool) -> Result<i32> {
    let Some(first) = rows.first() else {
        return Err(InputError("no results to merge".into()).into());
    };
    let (sha, total) = (first.manifest_sha256.clone(), first.manifest_reviews);
    if let Some(r) = rows.iter().find(|r| r.manifest_sha256 != sha) {
        return Err(InputError(format!(
            "results of two manifests (line {} {} has manifest {}…, others {}…)",
            r.line,
            r.review,
            &r.manifest_sha256[..12.min(r.manifest_sha256.len())],
            &sha[..12.min(sha.len())]
        ))
        .into());
    }
    rows.sort_by_key(|r| r.line);
    if let Some(w) = rows.windows(2).find(|w| w[0].line == w[1].line) {
        return Err(InputError(format!(
            "manifest line {} ({}) appears twice: were two shards given the same I/N?",
            w[0].line, w[0].review
        ))
        .into());
    }
    if rows.len() != total {
        return Err(InputError(format!(
            "{} of the manifest's {total} reviews have results; {} missing (a shard not run or not finished?)",
            rows.len(),
            total - rows.len()
        ))
        .into());
    }
    let p: Vec<f64> = rows.iter().map(|r| r.p_value).collect();
    let (h, q) = (holm(&p), benjamini_hochberg(&p));
    for (i, r) in rows.iter_mut().enumerate() {
        r.holm_p = Some(h[i]);
        r.bh_q = Some(q[i]);
        r.flag_fwer = Some(h[i] <= fwer);
        r.flag_fdr = Some(q[i] <= fdr);
    }
    fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let mut lines = String::new();
    for r in &rows {
        lines.push_str(&serde_json::to_string(r)?);
        lines.push('\n');
    }
    write_atomic(&out.join(VENUE_FILE), lines.as_bytes())?;
    write_atomic(
        &out.join(SUMMARY_FILE),
        summary(&rows, fwer, fdr).as_bytes(),
    )?;
    write_atomic(
        &out.join(HISTOGRAM_FILE),
        p_value_histogram_svg(&p, 20).as_bytes(),
    )?;
    let flagged = rows.iter().filter(|r| r.flag_fwer == Some(true)).count();
    if !quiet {
        eprintln!(
            "{} reviews: {flagged} flagged at family-wise {fwer} (Holm), {} at FDR {fdr} (Benjamini–Hochberg); wrote {}, {}, {} in {}",
            rows.len(),
            rows.iter().filter(|r| r.flag_fdr == Some(true)).count(),
            VENUE_FILE,
            SUMMARY_FILE,
            HISTOGRAM_FILE,
            out.display()
        );
    }
    Ok(if flagged > 0 { exit::EXPOSED } else { exit::OK })
}

fn fmt_p(p: f64) -> String {
    if p >= 1e-3 {
        format!("{p:.4}")
    } else {
        format!("{p:.2e}")
    }
}

fn summary(rows: &[Row], fwer: f64, fdr: f64) -> String {
    let mut s = String::new();
    let n = rows.len();
    let count = |f: &dyn Fn(&Row) -> bool| rows.iter().filter(|r| f(r)).count();
    let _ = writeln!(s, "# SemTrace venue batch\n");
    let _ = writeln!(
        s,
        "- reviews: {n} (manifest sha256 `{}`)",
        rows[0].manifest_sha256
    );
    let mut decoders: BTreeMap<&str, usize> = BTreeMap::new();
    for r in rows {
        *decoders.entry(r.decoder.as_str()).or_default() += 1;
    }
    let _ = writeln!(
        s,
        "- decoder: {}",
        decoders
            .iter()
            .map(|(d, c)| format!("{d} ({c})"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let _ = writeln!(
        s,
        "- flagged at family-wise error rate {fwer} (Holm): **{}**",
        count(&|r| r.flag_fwer == Some(true))
    );
    let _ = writeln!(
        s,
        "- flagged at false discovery rate {fdr} (Benjamini–Hochberg): **{}**",
        count(&|r| r.flag_fdr == Some(true))
    );
    let _ = writeln!(
        s,
        "- per-review `exposed` at each bundle's own alpha (no correction): {}",
        count(&|r| r.verdict == Verdict::Exposed)
    );
    let exact = count(&|r| r.p_value_exact);
    let _ = writeln!(
        s,
        "- exact p-values: {exact} of {n}{}",
        if exact < n {
            " (the others come from bundles older than format 1.2, whose p-value assumes a fair coin per position)"
        } else {
            ""
        }
    );
    let _ = writeln!(s, "- eligible (O ≥ O_min): {}", count(&|r| r.eligible));
    let _ = writeln!(
        s,
        "\nA flag says the review's decoded facts match this copy's secret selection more often than \
         chance allows; a person should read the review beside the facts (`semtrace detect --bundle B \
         REVIEW`) before acting. Histogram of all p-values: [{HISTOGRAM_FILE}]({HISTOGRAM_FILE}).\n"
    );
    let mut flagged: Vec<&Row> = rows
        .iter()
        .filter(|r| r.flag_fdr == Some(true) || r.flag_fwer == Some(true))
        .collect();
    flagged.sort_by(|a, b| a.p_value.total_cmp(&b.p_value));
    let _ = writeln!(s, "## Flagged\n");
    if flagged.is_empty() {
        let _ = writeln!(s, "None.");
    } else {
        let _ = writeln!(
            s,
            "| line | review | document | O | M | p | Holm p | BH q | FWER | FDR |\n|---:|---|---|---:|---:|---:|---:|---:|:-:|:-:|"
        );
        for r in flagged {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                r.line,
                r.review.replace('|', "\\|"),
                r.document.replace('|', "\\|"),
                r.observed,
                r.matched,
                fmt_p(r.p_value),
                fmt_p(r.holm_p.unwrap_or(1.0)),
                fmt_p(r.bh_q.unwrap_or(1.0)),
                if r.flag_fwer == Some(true) { "✔" } else { "" },
                if r.flag_fdr == Some(true) { "✔" } else { "" }
            );
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::parse_manifest;

    #[test]
    fn manifest_lines_parse_with_numbers_and_optional_recipient() {
        let text = "{\"review\": \"a.md\", \"bundle\": \"b.json\"}\n\n  \n{\"review\": \"c.md\", \"bundle\": \"b.json\", \"recipient\": \"r-2\", \"note\": 1}\n";
        let lines = parse_manifest(text, "m.jsonl").unwrap();
        assert_eq!(lines.len(), 2);
        assert_eq!((lines[0].line, lines[0].review.as_str()), (1, "a.md"));
        assert_eq!(lines[0].recipient, None);
        assert_eq!(
            (lines[1].line, lines[1].recipient.as_deref()),
            (4, Some("r-2"))
        );
    }

    #[test]
    fn bad_manifest_lines_name_the_line_and_the_field() {
        for (text, why) in [
            ("", "lists no reviews"),
            ("\n \n", "lists no reviews"),
            ("[1, 2]", "m.jsonl line 1: not a JSON object"),
            (
                "{\"review\": 5, \"bundle\": \"b\"}",
                "\"review\" is not a string",
            ),
            ("{\"review\": \"a\"}", "no \"bundle\" string"),
            (
                "{\"review\": \"a\", \"bundle\": \" \"}",
                "\"bundle\" is not a usable path",
            ),
            (
                "{\"review\": \"a\", \"bundle\": \"b\", \"recipient\": []}",
                "\"recipient\" is not a string",
            ),
            (
                "{\"review\": \"a\", \"bundle\": \"b\"}\n{\"review\":",
                "m.jsonl line 2:",
            ),
        ] {
            let e = parse_manifest(text, "m.jsonl").unwrap_err();
            assert!(e.0.contains(why), "{text:?}: {}", e.0);
        }
    }
}
