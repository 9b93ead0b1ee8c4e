//! SemTrace source loading: a PDF or plain text/Markdown → page-numbered evidence units in the
//! retained body scope (references and the checklist after them are cut off, and the cut is
//! reported). Bytes in, units out; only [`load`] touches the file system. The CLI re-exports this
//! crate as `semtrace::source`.

mod line_numbers;
mod normalize;
pub mod pdf;
mod scope;
mod text;
mod units;

use std::path::Path;

use serde::Serialize;
use sha2::{Digest, Sha256};

use units::Block;

/// A paragraph-like unit of the document body, the smallest thing a fact can cite.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct EvidenceUnit {
    /// Stable id, `p{page}.u{n}` (n counts units from 1 within the page, in reading order).
    pub id: String,
    /// 1-based page (1 for text input).
    pub page: u32,
    /// Nearest section heading above the unit, when one was recognised.
    pub section: Option<String>,
    /// Unit text: one line per paragraph, hyphenation at line ends undone, ligatures expanded.
    pub text: String,
}

/// Where the retained body ends.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ScopeCut {
    pub page: u32,
    /// The heading (or line) at which the cut was made, e.g. "References".
    pub heading: String,
    /// Why, in words.
    pub reason: String,
}

#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum SourceKind {
    Pdf,
    Text,
}

/// A loaded source document.
#[derive(Debug, Clone, Serialize)]
pub struct SourceDoc {
    pub kind: SourceKind,
    /// SHA-256 of the input bytes (what the bundle records).
    pub sha256: String,
    pub title: Option<String>,
    pub pages: u32,
    /// Units of the retained body, in reading order.
    pub units: Vec<EvidenceUnit>,
    /// Units dropped after the cut.
    pub excluded_units: usize,
    pub cut: Option<ScopeCut>,
    /// Raw text of every page (all lines in reading order, running headers included), before
    /// unit segmentation and the scope cut: what extraction coverage is measured on.
    pub page_text: Vec<String>,
}

/// Why a source document cannot be used.
#[derive(Debug)]
pub enum SourceError {
    /// The file could not be read.
    Io(String),
    /// The PDF is encrypted with a password we don't have.
    Encrypted,
    /// The PDF has pages but no text on any of them.
    NoTextLayer { pages: u32 },
    /// The PDF is cut short: it has a cross-reference section but no %%EOF at the end.
    Truncated(String),
    /// The PDF is damaged: the parser failed on it.
    Malformed(String),
    /// Neither a PDF nor UTF-8 text.
    NotADocument(String),
    /// The document holds no text units.
    Empty,
}

impl std::fmt::Display for SourceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SourceError::Io(m) => write!(f, "cannot read the source document: {m}"),
            SourceError::Encrypted => f.write_str(
                "the PDF is encrypted; decrypt it first (e.g. qpdf --decrypt --password=PW in.pdf out.pdf)",
            ),
            SourceError::NoTextLayer { pages } => write!(
                f,
                "no text layer on any page: scanned image PDF? ({pages} page(s) without text; run OCR first)"
            ),
            SourceError::Truncated(m) => write!(f, "the PDF is truncated: {m}"),
            SourceError::Malformed(m) => write!(f, "the PDF is malformed: {m}"),
            SourceError::NotADocument(m) => write!(f, "not a PDF or text document: {m}"),
            SourceError::Empty => f.write_str("the document is empty: no text units were found"),
        }
    }
}

impl std::error::Error for SourceError {}

fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Load a source document, PDF (by its `%PDF-` magic) or UTF-8 text/Markdown.
pub fn load(path: &Path) -> Result<SourceDoc, SourceError> {
    let bytes =
        std::fs::read(path).map_err(|e| SourceError::Io(format!("{}: {e}", path.display())))?;
    load_bytes(&bytes)
}

/// Dispatch on content: `%PDF-` within the first 1 KiB → PDF; valid UTF-8 without NUL bytes →
/// text; anything else is refused.
pub fn load_bytes(bytes: &[u8]) -> Result<SourceDoc, SourceError> {
    let head = &bytes[..bytes.len().min(1024)];
    if head.windows(5).any(|w| w == b"%PDF-") {
        return load_pdf_bytes(bytes);
    }
    match std::str::from_utf8(bytes) {
        Ok(s) if !s.contains('\0') => {
            let mut doc = load_text(s)?;
            doc.sha256 = sha256_hex(bytes);
            Ok(doc)
        }
        _ => Err(SourceError::NotADocument(
            "no %PDF- header and not UTF-8 text (binary data?)".into(),
        )),
    }
}

/// Load a PDF from memory.
pub fn load_pdf_bytes(bytes: &[u8]) -> Result<SourceDoc, SourceError> {
    let pages = pdf::extract_pages(bytes)?;
    let page_text: Vec<String> = pages.iter().map(|p| p.text()).collect();
    if page_text
        .iter()
        .all(|t| !t.chars().any(|c| c.is_alphanumeric()))
    {
        return Err(SourceError::NoTextLayer {
            pages: pages.len() as u32,
        });
    }
    let seg = pdf::guarded(|| units::segment(&pages))
        .ok_or_else(|| SourceError::Malformed("page layout failed".into()))?;
    assemble(
        SourceKind::Pdf,
        sha256_hex(bytes),
        seg.title,
        pages.len() as u32,
        seg.blocks,
        page_text,
    )
}

/// Load plain text or Markdown (one page).
pub fn load_text(text: &str) -> Result<SourceDoc, SourceError> {
    let (title, blocks) = text::blocks(text);
    assemble(
        SourceKind::Text,
        sha256_hex(text.as_bytes()),
        title,
        1,
        blocks,
        vec![text.to_string()],
    )
}

/// Number units per page, attach sections, cut at the reference list.
fn assemble(
    kind: SourceKind,
    sha256: String,
    title: Option<String>,
    pages: u32,
    blocks: Vec<Block>,
    page_text: Vec<String>,
) -> Result<SourceDoc, SourceError> {
    let cut = scope::find_cut(&blocks);
    let cut_at = cut.as_ref().map(|(i, _)| *i).unwrap_or(usize::MAX);
    let mut section: Option<String> = None;
    let mut per_page: std::collections::HashMap<u32, u32> = Default::default();
    let mut units = Vec::new();
    let mut excluded_units = 0;
    for (i, b) in blocks.into_iter().enumerate() {
        match b {
            Block::Heading { text, .. } => section = Some(text),
            Block::Unit { page, text } => {
                let n = per_page.entry(page).or_insert(0);
                *n += 1;
                if i > cut_at {
                    excluded_units += 1;
                    continue;
                }
                units.push(EvidenceUnit {
                    id: format!("p{page}.u{n}"),
                    page,
                    section: section.clone(),
                    text,
                });
            }
        }
    }
    if units.is_empty() {
        return Err(SourceError::Empty);
    }
    Ok(SourceDoc {
        kind,
        sha256,
        title,
        pages,
        units,
        excluded_units,
        cut: cut.map(|(_, c)| c),
        page_text,
    })
}
