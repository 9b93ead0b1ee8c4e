//! `semtrace protect`: original PDF + its bundle → protected PDF + bundle with a carrier record.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use semtrace_core::bundle::Bundle;

use crate::atomic::write_atomic;
use crate::cli::{CarrierArgs, ProtectArgs};
use crate::exit::{self, InputError};
use crate::protect::{self, ProtectError, Protected};

/// Read the original and protect it with `bundle`'s carrier (no files written).
pub fn protect_file(paper: &Path, bundle: &Bundle, carrier: &CarrierArgs) -> Result<Protected> {
    let original =
        std::fs::read(paper).with_context(|| format!("cannot read {}", paper.display()))?;
    if !original.starts_with(b"%PDF-") {
        return Err(InputError(format!(
            "{} is not a PDF (no %PDF- header); only PDFs can be protected",
            paper.display()
        ))
        .into());
    }
    let opts = protect::Options {
        mode: carrier.carrier_mode.into(),
        font: carrier.font.as_deref(),
    };
    protect::protect(&original, bundle, &opts).map_err(|e| match e {
        // A PDF that cannot be read: say which file (the other errors are about the bundle, the
        // font or the carrier, and name what they are about).
        ProtectError::Source(_) => anyhow::Error::new(e).context(paper.display().to_string()),
        e => e.into(),
    })
}

fn default_bundle_out(out: &Path) -> PathBuf {
    let stem = out
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "protected".into());
    out.with_file_name(format!("{stem}.bundle.json"))
}

pub fn run(args: ProtectArgs) -> Result<i32> {
    let text = std::fs::read_to_string(&args.bundle)
        .map_err(|e| InputError(format!("cannot read bundle {}: {e}", args.bundle.display())))?;
    let mut bundle =
        Bundle::from_json(&text).with_context(|| format!("bundle {}", args.bundle.display()))?;
    if let Some(list) = &args.recipients {
        return protect_recipients(&args, bundle, list);
    }
    let bundle_out = args
        .bundle_out
        .clone()
        .unwrap_or_else(|| default_bundle_out(&args.out));
    let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    };
    if same(&args.out, &args.paper) {
        return Err(InputError("--out must not be the original PDF".into()).into());
    }
    for p in [&args.out, &bundle_out] {
        if p.exists() && !args.force {
            return Err(InputError(format!(
                "{} exists; pass --force to replace it",
                p.display()
            ))
            .into());
        }
    }
    let original = std::fs::read(&args.paper)
        .with_context(|| format!("cannot read {}", args.paper.display()))?;
    if !original.starts_with(b"%PDF-") {
        return protect_text(&args, &bundle, original);
    }
    let protected = protect_file(&args.paper, &bundle, &args.carrier)?;
    bundle.carrier = Some(protected.record.clone());
    bundle.format_version = semtrace_core::bundle::BUNDLE_VERSION.into();
    write_atomic(&args.out, &protected.bytes)?;
    write_atomic(&bundle_out, bundle.to_json_pretty().as_bytes())?;
    if args.json {
        let v = serde_json::json!({
            "protected": args.out,
            "bundle": bundle_out,
            "carrier": protected.record,
            "placement": protected.placement,
            "carrier_words": protected.text.split_whitespace().count(),
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        print_summary(&protected, &args.out, &bundle_out);
    }
    Ok(exit::OK)
}

/// One protected copy per recipient into the directory --out, plus OUT/bundle.json listing
/// the recipients by digest. Everything is built and verified in memory first, so a failure
/// writes nothing.
fn protect_recipients(args: &ProtectArgs, mut bundle: Bundle, list: &Path) -> Result<i32> {
    use crate::commands::recipients::{as_copy, file_stem, read_names, read_secret, recipient_for};
    let secret = args
        .secret_file
        .as_deref()
        .ok_or_else(|| InputError("--recipients needs --secret-file".into()))?;
    let key = read_secret(secret)?;
    let names = read_names(list)?;
    if !bundle.recipients.is_empty() {
        return Err(InputError(format!(
            "bundle {} already lists {} recipients; protect from the bundle that `build` wrote",
            args.bundle.display(),
            bundle.recipients.len()
        ))
        .into());
    }
    let out_dir = &args.out;
    let bundle_out = out_dir.join("bundle.json");
    let mut files = Vec::new();
    for name in &names {
        let file = out_dir.join(format!("{}.pdf", file_stem(name)));
        if files.iter().any(|(f, _)| f == &file) {
            return Err(InputError(format!(
                "two recipients map to the file name {}; make the names differ in letters or digits",
                file.display()
            ))
            .into());
        }
        files.push((file, name.clone()));
    }
    for p in files.iter().map(|(f, _)| f).chain([&bundle_out]) {
        if p.exists() && !args.force {
            return Err(InputError(format!(
                "{} exists; pass --force to replace it",
                p.display()
            ))
            .into());
        }
    }
    let mut copies = Vec::new();
    for (file, name) in &files {
        let mut r = recipient_for(&bundle, &key, name)?;
        let copy = as_copy(&bundle, &r.codeword);
        let protected = protect_file(&args.paper, &copy, &args.carrier)
            .with_context(|| format!("recipient {name}"))?;
        r.carrier = Some(protected.record.clone());
        bundle.recipients.push(r);
        copies.push((file.clone(), name.clone(), protected));
    }
    bundle.format_version = semtrace_core::bundle::BUNDLE_VERSION.into();
    bundle.validate()?;
    std::fs::create_dir_all(out_dir).with_context(|| format!("creating {}", out_dir.display()))?;
    for (file, _, p) in &copies {
        write_atomic(file, &p.bytes)?;
    }
    write_atomic(&bundle_out, bundle.to_json_pretty().as_bytes())?;
    if args.json {
        let v = serde_json::json!({
            "bundle": bundle_out,
            "copies": copies.iter().zip(&bundle.recipients).map(|((f, n, p), r)| serde_json::json!({
                "recipient": n, "digest": r.digest, "protected": f, "carrier": p.record,
            })).collect::<Vec<_>>(),
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        for ((f, n, p), r) in copies.iter().zip(&bundle.recipients) {
            println!(
                "{n}: {} (digest {}, {} carrier words)",
                f.display(),
                r.digest,
                p.text.split_whitespace().count()
            );
        }
        println!(
            "wrote {} copies and {} (recipients listed by keyed digest, not by name)",
            copies.len(),
            bundle_out.display()
        );
    }
    Ok(exit::OK)
}

/// Text input: the carrier appended after a blank line, as the evaluation harness does in text
/// mode. There is no invisible layer in plain text, so this is for experiments (LLM reviewers
/// given a paper's text), not for distribution; the bundle is unchanged and not rewritten.
fn protect_text(args: &ProtectArgs, bundle: &Bundle, original: Vec<u8>) -> Result<i32> {
    let text = String::from_utf8(original).map_err(|_| {
        InputError(format!(
            "{} is neither a PDF (no %PDF- header) nor UTF-8 text",
            args.paper.display()
        ))
    })?;
    let sha = semtrace_core::sha256_hex(text.as_bytes());
    if !sha.eq_ignore_ascii_case(&bundle.document.sha256) {
        return Err(InputError(format!(
            "{} is not a PDF, and as text it is not what the bundle was built from: the bundle was \
             built from a different document (bundle document SHA-256 {}, this text {sha})",
            args.paper.display(),
            bundle.document.sha256
        ))
        .into());
    }
    let carrier = semtrace_core::carrier::carrier_text(bundle)?;
    let out = format!("{}\n\n{carrier}\n", text.trim_end());
    write_atomic(&args.out, out.as_bytes())?;
    if args.json {
        let v = serde_json::json!({"protected": args.out, "mode": "text",
            "carrier_words": carrier.split_whitespace().count()});
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        println!(
            "text mode: carrier ({} words) appended; wrote {} (bundle unchanged)",
            carrier.split_whitespace().count(),
            args.out.display()
        );
    }
    Ok(exit::OK)
}

pub fn print_summary(p: &Protected, out: &Path, bundle_out: &Path) {
    let r = &p.record;
    println!(
        "carrier:  {} ({} mode, {} words) on {}; font {}",
        r.template_version,
        r.mode.name(),
        p.text.split_whitespace().count(),
        p.placement,
        r.font
    );
    println!("verified: re-extracted exactly; original kept as an untouched prefix");
    println!("sha256:   original {}", r.original_sha256);
    println!("          carrier  {}", r.text_sha256);
    println!("          protected {}", r.protected_sha256);
    println!("wrote {} and {}", out.display(), bundle_out.display());
}
