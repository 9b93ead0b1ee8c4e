//! `semtrace inspect FILE.pdf`: carrier present? other hidden text?

use anyhow::{Context, Result};

use crate::cli::InspectArgs;
use crate::exit;
use crate::inspect::inspect_bytes;

fn preview(s: &str, n: usize) -> String {
    let flat: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= n {
        flat
    } else {
        format!("{}…", flat.chars().take(n).collect::<String>())
    }
}

pub fn run(args: InspectArgs) -> Result<i32> {
    let bytes =
        std::fs::read(&args.pdf).with_context(|| format!("cannot read {}", args.pdf.display()))?;
    if !bytes.starts_with(b"%PDF-") {
        return Err(crate::exit::InputError(format!(
            "{} is not a PDF (no %PDF- header)",
            args.pdf.display()
        ))
        .into());
    }
    let report = inspect_bytes(&bytes).with_context(|| args.pdf.display().to_string())?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(exit::OK);
    }
    println!("file:     {} ({} pages)", args.pdf.display(), report.pages);
    match &report.carrier {
        Some(c) => println!(
            "carrier:  SemTrace carrier present on page {} (template {}, mode {}, {} characters)",
            c.page, c.template_version, c.mode, c.chars
        ),
        None => println!("carrier:  no SemTrace carrier"),
    }
    if report.hidden.is_empty() {
        println!("hidden:   no other hidden text found");
    } else {
        println!(
            "hidden:   {} run(s) of other hidden text",
            report.hidden.len()
        );
        for h in &report.hidden {
            println!(
                "  page {:>3}  {:<9} {:>6} chars  \"{}\"",
                h.page,
                serde_json::to_value(h.kind)?.as_str().unwrap_or(""),
                h.chars,
                preview(&h.text, 90)
            );
        }
    }
    Ok(exit::OK)
}
