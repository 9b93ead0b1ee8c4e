//! PDF → positioned glyphs → text lines in reading order, per page.
//!
//! Crate choice: `pdf-extract` 0.12 (on lopdf 0.42, which it re-exports). It already implements
//! the font side of text extraction — ToUnicode CMaps, the standard/WinAnsi/MacRoman/PDFDoc
//! encodings with `/Differences` (glyph names such as `fi`, `fl` via the Adobe glyph list), Type0
//! fonts with Identity-H CIDs, embedded Type1/CFF encodings, glyph widths, TJ offsets and the text
//! matrix — and reports every glyph with its text rendering matrix through the `OutputDev` trait.
//! Its own plain-text writer only looks at one glyph after another, so we do the layout ourselves
//! here: glyphs are grouped into rows by baseline, two-column pages are detected from the x
//! positions of all glyphs (a vertical gutter that almost no row crosses) and read column by
//! column, words are separated where the gap between glyphs exceeds a fraction of the font size.
//! Using raw lopdf would mean re-implementing all of the font decoding above for no gain.
//!
//! Everything that touches the parser runs under `catch_unwind`: lopdf and pdf-extract `unwrap`
//! on odd input, and a panic becomes [`SourceError::Malformed`].
//!
//! The work is split by concern:
//! - `structure`: loading the file's object structure, its small repairs (junk after %%EOF,
//!   "xref " keywords) and the object helpers that `protect` and `inspect` use too;
//! - `content`: rewriting page content streams before extraction (forms inlined, malformed
//!   operations dropped, GBK-coded fonts re-encoded, ligature ToUnicode entries patched);
//! - `collect`: the pdf-extract `OutputDev` that records every glyph as drawn, page by page;
//! - `layout`: glyphs → rows → lines in reading order, column (gutter) detection.
//!
//! This module holds the page types, the entry point [`extract_pages`] and the panic
//! containment ([`quietly`], [`guarded`]) the others run under.

mod collect;
mod content;
mod layout;
mod structure;

pub use layout::{detect_gutter, layout, row_indices, row_spans};
pub use structure::{fix_xref_keywords, inherited, load_structure, startxref, visible_box};

use std::panic::{catch_unwind, AssertUnwindSafe};

use pdf_extract::{Document, OutputDev};

use super::SourceError;
use collect::{Collector, RawPage};
use content::{flatten_pages, patch_ligature_to_unicode};
use layout::lay_out_pages;
use structure::{find, has_xref_section, trim_after_eof};

/// One glyph as drawn: origin (PDF user space, y up), advance width, effective font size.
#[derive(Debug, Clone)]
pub struct Glyph {
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub size: f64,
    pub text: String,
}

/// Which part of the page a line belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Column {
    /// Single-column page, or a line that spans the gutter of a two-column page.
    Full,
    Left,
    Right,
}

/// A text line in reading order.
#[derive(Debug, Clone)]
pub struct Line {
    pub text: String,
    pub x0: f64,
    pub x1: f64,
    /// Baseline (PDF user space, y up).
    pub y: f64,
    pub size: f64,
    pub column: Column,
}

/// A laid-out page.
#[derive(Debug, Clone, Default)]
pub struct Page {
    pub height: f64,
    /// Bottom of the media box (y of the page's lower edge).
    pub bottom: f64,
    pub lines: Vec<Line>,
    /// Text drawn rotated (e.g. an arXiv stamp in the margin): kept for the page text only.
    pub rotated: String,
    /// Whitespace glyphs (x, baseline, size): invisible, yet they join a row with any text later
    /// drawn at their height, so the carrier's placement keeps clear of them too.
    pub blanks: Vec<(f64, f64, f64)>,
    /// Margin line numbers of a review copy (top to bottom), kept out of `lines` so that they do
    /// not run into the text; still drawn text, so placement keeps clear of them.
    pub numbers: Vec<Line>,
}

impl Page {
    /// The page's full text: lines in reading order, then margin line numbers, then rotated text.
    pub fn text(&self) -> String {
        let mut s: String = self
            .lines
            .iter()
            .chain(&self.numbers)
            .map(|l| l.text.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        if !self.rotated.trim().is_empty() {
            s.push('\n');
            s.push_str(self.rotated.trim());
        }
        s
    }
}

thread_local! {
    static QUIET_PANICS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Run `f`, turning a panic into `None`; the panic message is not printed (only on this thread,
/// and only while `f` runs: other panics still reach the previous hook). Set
/// `SEMTRACE_DEBUG_PANICS` to see them (and per-page extraction errors) when debugging.
pub fn quietly<T>(f: impl FnOnce() -> T) -> Option<T> {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET_PANICS.with(|q| q.get()) {
                previous(info);
            }
        }));
    });
    QUIET_PANICS.with(|q| q.set(std::env::var_os("SEMTRACE_DEBUG_PANICS").is_none()));
    let r = catch_unwind(AssertUnwindSafe(f));
    QUIET_PANICS.with(|q| q.set(false));
    r.ok()
}

/// Our own layout code run on parser output: guarded like the third-party calls in normal builds
/// (one odd page must not take a whole build down), but unguarded under the fuzzer (`cfg(fuzzing)`,
/// set by `cargo fuzz`) so that its panics are findings, not a swallowed "layout failed".
pub fn guarded<T>(f: impl FnOnce() -> T) -> Option<T> {
    #[cfg(fuzzing)]
    {
        Some(f())
    }
    #[cfg(not(fuzzing))]
    {
        quietly(f)
    }
}

/// The document and its page count, repairing what can be repaired (junk after %%EOF, a bent
/// "xref" keyword), or the reason it cannot be read: encrypted, truncated, malformed, no pages.
pub(super) fn open_document(bytes: &[u8]) -> Result<(Document, usize), SourceError> {
    // A complete PDF ends with %%EOF (possibly followed by whitespace or a little junk).
    let tail = &bytes[bytes.len().saturating_sub(4096)..];
    if !find(tail, b"%%EOF") {
        // No cross-reference section either: whether it was cut short or never written whole,
        // say what is missing.
        if !has_xref_section(bytes) {
            return Err(SourceError::Malformed(
                "no cross-reference table (xref) found; the file is not a complete PDF".into(),
            ));
        }
        return Err(SourceError::Truncated(
            "no %%EOF marker at the end of the file (incomplete download or copy?)".into(),
        ));
    }
    // Repairs tried in turn when lopdf refuses the file: junk after %%EOF cut off; a cross-
    // reference table whose "xref" keyword is followed by a space instead of an end of line.
    let trimmed: Vec<u8> = trim_after_eof(bytes).to_vec();
    let mut loaded = quietly(|| Document::load_mem(bytes));
    if !matches!(loaded, Some(Ok(_))) {
        let fixed = fix_xref_keywords(&trimmed);
        for candidate in [&trimmed, &fixed] {
            if candidate.as_slice() != bytes {
                if let Some(Ok(d)) = quietly(|| Document::load_mem(candidate)) {
                    loaded = Some(Ok(d));
                    break;
                }
            }
        }
    }
    let doc = match loaded {
        None => {
            return Err(SourceError::Malformed(
                "the PDF parser failed on its structure".into(),
            ))
        }
        Some(Err(e)) => {
            let msg = e.to_string();
            let lower = msg.to_lowercase();
            if lower.contains("decrypt")
                || lower.contains("password")
                || lower.contains("encrypt")
                || lower.contains("security handler")
            {
                return Err(SourceError::Encrypted);
            }
            if !find(bytes, b"startxref") || (!find(bytes, b"trailer") && !find(bytes, b"/XRef")) {
                return Err(SourceError::Malformed(format!(
                    "no usable cross-reference table or trailer ({msg})"
                )));
            }
            return Err(SourceError::Malformed(msg));
        }
        Some(Ok(doc)) => doc,
    };
    let mut doc = doc;
    if doc.is_encrypted() && quietly(|| doc.decrypt("")).is_none_or(|r| r.is_err()) {
        return Err(SourceError::Encrypted);
    }
    if doc.is_encrypted() || doc.trailer.get(b"Encrypt").is_ok() {
        // lopdf keeps the dictionary after decrypting with the empty password; check content.
        if quietly(|| doc.get_pages().is_empty()).unwrap_or(true) {
            return Err(SourceError::Encrypted);
        }
    }
    let page_count = quietly(|| doc.get_pages().len()).unwrap_or(0);
    if page_count == 0 {
        return Err(SourceError::Malformed(
            "no pages could be read from the page tree".into(),
        ));
    }
    Ok((doc, page_count))
}

/// Load and lay out every page. Errors name the problem (encrypted, truncated, malformed, no
/// cross-reference table).
pub fn extract_pages(bytes: &[u8]) -> Result<Vec<Page>, SourceError> {
    let (mut doc, page_count) = open_document(bytes)?;
    flatten_pages(&mut doc);
    let _ = quietly(|| patch_ligature_to_unicode(&mut doc));
    let mut collector = Collector::default();
    let mut failed_pages = 0usize;
    for n in 1..=page_count as u32 {
        let before = collector.pages.len();
        let r = quietly(|| pdf_extract::output_doc_page(&doc, &mut collector, n));
        if std::env::var_os("SEMTRACE_DEBUG_PANICS").is_some() {
            if let Some(Err(e)) = &r {
                eprintln!("page {n}: {e}");
            }
        }
        let ok = r.is_some_and(|r| r.is_ok());
        if !ok {
            failed_pages += 1;
            // Keep what was drawn before the failure.
            if collector.open {
                let _ = quietly(|| collector.end_page());
            }
        }
        // Keep page numbering aligned even when a page failed half-way.
        if collector.pages.len() == before {
            collector.pages.push(RawPage::default());
        }
    }
    if failed_pages == page_count {
        return Err(SourceError::Malformed(format!(
            "none of the {page_count} pages could be read (unreadable objects or content streams)"
        )));
    }
    Ok(lay_out_pages(collector.pages))
}
