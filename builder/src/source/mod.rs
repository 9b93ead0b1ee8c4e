//! The source document: PDF or plain text/Markdown → page-numbered evidence units in the retained
//! body scope (references and the checklist after them are cut off, and the cut is reported).

use serde::Serialize;

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
}
