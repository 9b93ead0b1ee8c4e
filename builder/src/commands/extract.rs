//! `semtrace extract`: a source document → evidence units and the scope cut.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

use crate::atomic::write_atomic;
use anyhow::{Context, Result};

use crate::cli::ExtractArgs;
use crate::exit;
use crate::source::{self, SourceDoc};

/// Readable listing: header, cut, then one block per unit.
fn render_text(doc: &SourceDoc, path: &Path) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "source:   {}", path.display());
    let kind = match doc.kind {
        source::SourceKind::Pdf => "pdf",
        source::SourceKind::Text => "text",
    };
    let _ = writeln!(s, "kind:     {kind}");
    let _ = writeln!(s, "sha256:   {}", doc.sha256);
    let _ = writeln!(s, "title:    {}", doc.title.as_deref().unwrap_or("(none)"));
    let _ = writeln!(s, "pages:    {}", doc.pages);
    let _ = writeln!(
        s,
        "units:    {} retained, {} excluded",
        doc.units.len(),
        doc.excluded_units
    );
    match &doc.cut {
        Some(c) => {
            let _ = writeln!(
                s,
                "cut:      page {} at \"{}\" ({})",
                c.page, c.heading, c.reason
            );
        }
        None => {
            let _ = writeln!(
                s,
                "cut:      none (no References/Bibliography heading found)"
            );
        }
    }
    let mut section: Option<&str> = None;
    for u in &doc.units {
        if u.section.as_deref() != section {
            section = u.section.as_deref();
            let _ = writeln!(s, "\n## {}", section.unwrap_or("(no section)"));
        }
        let _ = writeln!(s, "\n[{}] (page {})\n{}", u.id, u.page, u.text);
    }
    s
}

pub fn run(a: ExtractArgs) -> Result<i32> {
    let doc = source::load(&a.paper).with_context(|| a.paper.display().to_string())?;
    let out = if a.json {
        let mut j = serde_json::to_string_pretty(&doc)?;
        j.push('\n');
        j
    } else {
        render_text(&doc, &a.paper)
    };
    match &a.out {
        Some(p) => write_atomic(p, out.as_bytes())?,
        None => {
            let mut stdout = std::io::stdout().lock();
            if let Err(e) = stdout.write_all(out.as_bytes()) {
                if e.kind() != std::io::ErrorKind::BrokenPipe {
                    return Err(e).context("cannot write to standard output");
                }
            }
        }
    }
    Ok(exit::OK)
}
