//! The file's object structure: loading it through lopdf with small repairs (junk after the final
//! %%EOF cut off, "xref " keywords fixed) and the object helpers (inherited attributes, page
//! boxes, references followed) shared with `protect` and `inspect`.

use pdf_extract::{Dictionary, Document, Object, ObjectId};

use super::{open_document, quietly};
use crate::SourceError;

/// Every cross-reference keyword written as "xref " (space instead of end of line) at the start
/// of a line and followed by a digit, made "xref\n". Same length, so no offset moves; covers the
/// sections of earlier revisions too (an incremental update keeps the original's table).
pub fn fix_xref_keywords(bytes: &[u8]) -> Vec<u8> {
    let mut fixed = bytes.to_vec();
    for i in 1..bytes.len().saturating_sub(5) {
        if matches!(bytes[i - 1], b'\n' | b'\r')
            && &bytes[i..i + 5] == b"xref "
            && bytes[i + 5].is_ascii_digit()
        {
            fixed[i + 4] = b'\n';
        }
    }
    fixed
}

/// Whether the file has any cross-reference section: a `startxref`, an /XRef stream, or an
/// "xref" keyword at the start of a line followed by white space (not the word in running text).
pub(super) fn has_xref_section(bytes: &[u8]) -> bool {
    find(bytes, b"startxref")
        || find(bytes, b"/XRef")
        || bytes.windows(6).any(|w| {
            matches!(w[0], b'\n' | b'\r') && &w[1..5] == b"xref" && w[5].is_ascii_whitespace()
        })
}

/// `bytes` up to and including the last %%EOF (junk a downloader appended is cut off).
pub(super) fn trim_after_eof(bytes: &[u8]) -> &[u8] {
    bytes
        .windows(5)
        .rposition(|w| w == b"%%EOF")
        .map(|i| &bytes[..i + 5])
        .unwrap_or(bytes)
}

/// A page attribute, inherited through /Parent when the page itself lacks it; references followed.
pub fn inherited<'a>(doc: &'a Document, page: &'a Dictionary, key: &[u8]) -> Option<&'a Object> {
    let mut d = page;
    for _ in 0..64 {
        if let Some(v) = dict_get(doc, d, key) {
            return Some(v);
        }
        match dict_get(doc, d, b"Parent") {
            Some(Object::Dictionary(p)) => d = p,
            _ => return None,
        }
    }
    None
}

fn rect(doc: &Document, o: Option<&Object>) -> Option<(f64, f64, f64, f64)> {
    let Object::Array(a) = o? else { return None };
    let v: Vec<f64> = a
        .iter()
        .filter_map(|x| match deref(doc, x)? {
            Object::Integer(i) => Some(*i as f64),
            Object::Real(r) => Some(f64::from(*r)),
            _ => None,
        })
        .collect();
    (v.len() == 4).then(|| {
        (
            v[0].min(v[2]),
            v[1].min(v[3]),
            v[0].max(v[2]),
            v[1].max(v[3]),
        )
    })
}

/// The visible page box (x0, y0, x1, y1): the MediaBox, intersected with the CropBox if any.
pub fn visible_box(doc: &Document, page: &Dictionary) -> Option<(f64, f64, f64, f64)> {
    let media = rect(doc, inherited(doc, page, b"MediaBox"))?;
    Some(match rect(doc, inherited(doc, page, b"CropBox")) {
        Some(c) => (
            media.0.max(c.0),
            media.1.max(c.1),
            media.2.min(c.2),
            media.3.min(c.3),
        ),
        None => media,
    })
}

/// The document's object structure through lopdf, with the extractor's small repairs (junk
/// after the final %%EOF ignored, "xref " keywords fixed); offsets stay those of `bytes`.
/// For callers that need objects rather than text (protect, inspect).
pub fn load_structure(bytes: &[u8]) -> Result<Document, SourceError> {
    let trimmed = trim_after_eof(bytes);
    for candidate in [bytes, trimmed, &fix_xref_keywords(trimmed)] {
        if let Some(Ok(d)) = quietly(|| Document::load_mem(candidate)) {
            if d.is_encrypted() || d.trailer.get(b"Encrypt").is_ok() {
                return Err(SourceError::Encrypted);
            }
            return Ok(d);
        }
    }
    // Name the problem (encrypted, truncated, malformed) as the extractor would, without
    // extracting any page.
    open_document(bytes)?;
    Err(SourceError::Malformed(
        "the PDF parser cannot read its object structure; re-save it first (e.g. qpdf in.pdf out.pdf)"
            .into(),
    ))
}

/// The byte offset after the last `startxref`.
pub fn startxref(bytes: &[u8]) -> Option<usize> {
    let i = bytes.windows(9).rposition(|w| w == b"startxref")?;
    let digits: String = bytes[i + 9..]
        .iter()
        .skip_while(|b| b.is_ascii_whitespace())
        .take_while(|b| b.is_ascii_digit())
        .map(|&b| b as char)
        .collect();
    digits.parse().ok()
}

pub(super) fn find(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// Resolve a reference (or return the object itself).
pub(super) fn deref<'a>(doc: &'a Document, o: &'a Object) -> Option<&'a Object> {
    doc.dereference(o).ok().map(|(_, o)| o)
}

/// A dictionary entry, references followed.
pub(super) fn dict_get<'a>(doc: &'a Document, d: &'a Dictionary, key: &[u8]) -> Option<&'a Object> {
    d.get(key).ok().and_then(|o| deref(doc, o))
}

/// The page's resources, inherited from the page tree when the page has none of its own.
pub(super) fn page_resources(doc: &Document, page_id: ObjectId) -> Dictionary {
    let mut id = Some(page_id);
    for _ in 0..32 {
        let Some(d) = id.and_then(|i| doc.get_dictionary(i).ok()) else {
            break;
        };
        if let Some(r) = dict_get(doc, d, b"Resources").and_then(|r| r.as_dict().ok()) {
            return r.clone();
        }
        id = d.get(b"Parent").ok().and_then(|p| p.as_reference().ok());
    }
    Dictionary::new()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SourceError;

    #[test]
    fn a_file_without_xref_is_not_called_truncated() {
        // "xref" in running text is no cross-reference section.
        let junk = b"%PDF-1.7\n1 0 obj << /Type /Catalog >> garbage without xref";
        assert!(!has_xref_section(junk));
        match load_structure(junk) {
            Err(SourceError::Malformed(m)) => {
                assert!(m.contains("no cross-reference table"), "{m}")
            }
            other => panic!("{other:?}"),
        }
        // A table but no %%EOF after it: cut short.
        let cut = b"%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\nxref\n0 2\n";
        assert!(has_xref_section(cut));
        assert!(matches!(
            load_structure(cut),
            Err(SourceError::Truncated(_))
        ));
        assert!(has_xref_section(b"%PDF-1.5\n...\nstartxref\n116\n"));
    }
}
