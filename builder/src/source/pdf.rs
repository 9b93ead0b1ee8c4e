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

use std::panic::{catch_unwind, AssertUnwindSafe};

use pdf_extract::content::{Content, Operation};
use pdf_extract::{
    Dictionary, Document, MediaBox, Object, ObjectId, OutputDev, OutputError, Stream, Transform,
};

use super::line_numbers;
use super::normalize::expand_ligatures;
use super::SourceError;

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

/// A page as drawn, before layout: layout waits until every page is read, because margin line
/// numbers are recognised across the document (a sparse page has too few of its own).
#[derive(Debug, Clone, Default)]
struct RawPage {
    glyphs: Vec<Glyph>,
    rotated: String,
    blanks: Vec<(f64, f64, f64)>,
    /// Media box (llx, lly, urx, ury).
    media: (f64, f64, f64, f64),
}

impl RawPage {
    fn left(&self) -> f64 {
        self.media.0
    }
    fn width(&self) -> f64 {
        (self.media.2 - self.media.0).abs().max(1.0)
    }
}

#[derive(Default)]
struct Collector {
    pages: Vec<RawPage>,
    glyphs: Vec<Glyph>,
    rotated: Vec<Glyph>,
    media: (f64, f64, f64, f64),
    /// A page was begun and not yet ended.
    open: bool,
}

impl OutputDev for Collector {
    fn begin_page(
        &mut self,
        _page_num: u32,
        media_box: &MediaBox,
        _art_box: Option<(f64, f64, f64, f64)>,
    ) -> Result<(), OutputError> {
        self.glyphs.clear();
        self.rotated.clear();
        self.open = true;
        self.media = (media_box.llx, media_box.lly, media_box.urx, media_box.ury);
        Ok(())
    }

    fn end_page(&mut self) -> Result<(), OutputError> {
        self.open = false;
        let glyphs = std::mem::take(&mut self.glyphs);
        let mut rotated = std::mem::take(&mut self.rotated);
        // Rotated text, kept in drawing order, words split on explicit spaces and jumps.
        let mut rot = String::new();
        let mut last: Option<(f64, f64)> = None;
        for g in rotated.drain(..) {
            if let Some((lx, ly)) = last {
                let d = ((g.x - lx).powi(2) + (g.y - ly).powi(2)).sqrt();
                if d > g.size * 1.5 && !rot.ends_with(' ') {
                    rot.push(' ');
                }
            }
            last = Some((g.x, g.y));
            rot.push_str(&g.text);
        }
        let blanks = glyphs
            .iter()
            .filter(|g| g.text.trim().is_empty())
            .map(|g| (g.x, g.y, g.size))
            .collect();
        self.pages.push(RawPage {
            glyphs,
            rotated: rot,
            blanks,
            media: self.media,
        });
        Ok(())
    }

    fn output_character(
        &mut self,
        trm: &Transform,
        width: f64,
        spacing: f64,
        font_size: f64,
        char: &str,
    ) -> Result<(), OutputError> {
        let _ = spacing;
        let text = expand_ligatures(char);
        // Horizontal scale of the text rendering matrix and its rotation/shear part.
        let sx = (trm.m11 * trm.m11 + trm.m12 * trm.m12).sqrt();
        let sy = (trm.m21 * trm.m21 + trm.m22 * trm.m22).sqrt();
        let size = (font_size * sy).abs();
        if !size.is_finite() || size < 0.5 || !trm.m31.is_finite() || !trm.m32.is_finite() {
            return Ok(());
        }
        let g = Glyph {
            x: trm.m31,
            y: trm.m32,
            w: (width * font_size * sx).abs(),
            size,
            text,
        };
        let horizontal = trm.m11 > 0.0 && trm.m12.abs() <= 0.1 * trm.m11.abs();
        if horizontal {
            self.glyphs.push(g);
        } else {
            self.rotated.push(g);
        }
        Ok(())
    }

    fn begin_word(&mut self) -> Result<(), OutputError> {
        Ok(())
    }
    fn end_word(&mut self) -> Result<(), OutputError> {
        Ok(())
    }
    fn end_line(&mut self) -> Result<(), OutputError> {
        Ok(())
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

/// The byte offset after the last `startxref`.
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

/// `bytes` up to and including the last %%EOF (junk a downloader appended is cut off).
fn trim_after_eof(bytes: &[u8]) -> &[u8] {
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
    // Let the extractor name the problem (encrypted, truncated, malformed).
    extract_pages(bytes)?;
    Err(SourceError::Malformed(
        "the PDF parser cannot read its object structure; re-save it first (e.g. qpdf in.pdf out.pdf)"
            .into(),
    ))
}

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

fn find(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// Resolve a reference (or return the object itself).
fn deref<'a>(doc: &'a Document, o: &'a Object) -> Option<&'a Object> {
    doc.dereference(o).ok().map(|(_, o)| o)
}

/// A dictionary entry, references followed.
fn dict_get<'a>(doc: &'a Document, d: &'a Dictionary, key: &[u8]) -> Option<&'a Object> {
    d.get(key).ok().and_then(|o| deref(doc, o))
}

/// The page's resources, inherited from the page tree when the page has none of its own.
fn page_resources(doc: &Document, page_id: ObjectId) -> Dictionary {
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

/// Does an operation have the operands pdf-extract asserts on? (A malformed number in a content
/// stream otherwise aborts the rest of the page.)
fn valid_operands(op: &Operation) -> bool {
    let num = |i: usize| op.operands.get(i).is_some_and(|o| o.as_float().is_ok());
    let nums = |n: usize| op.operands.len() == n && (0..n).all(num);
    match op.operator.as_str() {
        "cm" | "Tm" => nums(6),
        "Td" | "TD" => nums(2),
        "Tc" | "Tw" | "Tz" | "TL" | "Ts" => nums(1),
        "Tf" => op.operands.len() == 2 && op.operands[0].as_name().is_ok() && num(1),
        "TJ" => op.operands.len() == 1 && op.operands[0].as_array().is_ok(),
        "Tj" | "'" => op.operands.len() == 1 && op.operands[0].as_str().is_ok(),
        "\"" => op.operands.len() == 3 && num(0) && num(1) && op.operands[2].as_str().is_ok(),
        _ => true,
    }
}

/// Replace `Do` of form XObjects by their content (inside q/cm/Q, fonts renamed into the page's
/// font dictionary) and drop `Do` of images. pdf-extract draws a form with a fresh graphics
/// state (its text lands at the wrong place) and parses an image's bytes as a content stream
/// (it panics); flattening first avoids both, so figure text is extracted where it is drawn.
#[allow(clippy::too_many_arguments)]
fn inline_forms(
    doc: &Document,
    ops: Vec<Operation>,
    res: &Dictionary,
    fonts: &mut Dictionary,
    rename: &std::collections::HashMap<Vec<u8>, Vec<u8>>,
    depth: usize,
    counter: &mut usize,
    out: &mut Vec<Operation>,
) {
    for mut op in ops {
        if !valid_operands(&op) {
            continue;
        }
        match op.operator.as_str() {
            "Tf" if depth > 0 => {
                if let Some(new) = op
                    .operands
                    .first()
                    .and_then(|o| o.as_name().ok())
                    .and_then(|n| rename.get(n))
                {
                    op.operands[0] = Object::Name(new.clone());
                    out.push(op);
                }
            }
            // Named resources of the form (graphics states, colour spaces, shadings) are not
            // carried over; none of them matters for text.
            "gs" | "cs" | "CS" | "sc" | "scn" | "SC" | "SCN" | "sh" if depth > 0 => {}
            "Do" => {
                let form = op
                    .operands
                    .first()
                    .and_then(|o| o.as_name().ok())
                    .and_then(|name| {
                        let xobjects = dict_get(doc, res, b"XObject")?.as_dict().ok()?;
                        dict_get(doc, xobjects, name)?.as_stream().ok()
                    })
                    .filter(|s| {
                        s.dict.get(b"Subtype").ok().and_then(|t| t.as_name().ok()) == Some(b"Form")
                    });
                let Some(form) = form else { continue };
                if depth >= 8 {
                    continue;
                }
                let bytes = form
                    .decompressed_content()
                    .unwrap_or_else(|_| form.content.clone());
                let Ok(content) = Content::decode(&bytes) else {
                    continue;
                };
                let form_res = dict_get(doc, &form.dict, b"Resources")
                    .and_then(|r| r.as_dict().ok())
                    .unwrap_or(res);
                let mut names = std::collections::HashMap::new();
                if let Some(f) = dict_get(doc, form_res, b"Font").and_then(|f| f.as_dict().ok()) {
                    for (k, v) in f.iter() {
                        *counter += 1;
                        let new = format!("SemTraceF{counter}").into_bytes();
                        fonts.set(new.clone(), v.clone());
                        names.insert(k.clone(), new);
                    }
                }
                let matrix: Vec<Object> = dict_get(doc, &form.dict, b"Matrix")
                    .and_then(|m| m.as_array().ok())
                    .filter(|m| m.len() == 6 && m.iter().all(|x| x.as_float().is_ok()))
                    .cloned()
                    .unwrap_or_else(|| {
                        [1, 0, 0, 1, 0, 0]
                            .into_iter()
                            .map(Object::Integer)
                            .collect()
                    });
                out.push(Operation::new("q", vec![]));
                out.push(Operation::new("cm", matrix));
                inline_forms(
                    doc,
                    content.operations,
                    form_res,
                    fonts,
                    &names,
                    depth + 1,
                    counter,
                    out,
                );
                out.push(Operation::new("Q", vec![]));
            }
            // Inline images: irrelevant to text, and lopdf does not re-encode them faithfully.
            "BI" | "ID" | "EI" => {}
            _ => out.push(op),
        }
    }
}

/// Is this a composite font whose predefined CMap pdf-extract cannot read but whose codes are GBK
/// (GBK-EUC-H/V, GB-EUC-H/V, GBKp-EUC, GBK2K)? pdf-extract panics on them.
fn gbk_font(doc: &Document, fonts: &Dictionary, name: &[u8]) -> Option<Dictionary> {
    let font = dict_get(doc, fonts, name)?.as_dict().ok()?;
    if font.get(b"Subtype").ok()?.as_name().ok()? != b"Type0" {
        return None;
    }
    let enc = font.get(b"Encoding").ok()?.as_name().ok()?;
    (enc.starts_with(b"GBK") || enc.starts_with(b"GB-EUC")).then(|| font.clone())
}

/// A ToUnicode CMap mapping every 2-byte code to the same UTF-16 code unit.
fn identity_to_unicode() -> Vec<u8> {
    let mut s = String::from(
        "/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n\
         /CMapName /SemTrace-UCS2 def\n/CMapType 2 def\n\
         1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n",
    );
    for block in 0..3 {
        let hi: Vec<u32> = (block * 100..((block + 1) * 100).min(256)).collect();
        s.push_str(&format!("{} beginbfrange\n", hi.len()));
        for h in hi {
            s.push_str(&format!("<{h:02X}00> <{h:02X}FF> <{h:02X}00>\n"));
        }
        s.push_str("endbfrange\n");
    }
    s.push_str("endcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n");
    s.into_bytes()
}

/// GBK bytes → 2-byte UTF-16BE codes for the replacement Identity-H font.
fn gbk_to_ucs2(bytes: &[u8]) -> Vec<u8> {
    let (text, _, _) = encoding_rs::GBK.decode(bytes);
    text.encode_utf16().flat_map(|u| u.to_be_bytes()).collect()
}

/// Re-encode text shown in GBK-coded composite fonts as Identity-H codes with a ToUnicode map
/// (a replacement font is added under a new name). Returns whether anything changed.
fn convert_gbk(
    doc: &mut Document,
    ops: &mut [Operation],
    fonts: &mut Dictionary,
    cache: &mut std::collections::HashMap<ObjectId, (Vec<u8>, ObjectId)>,
) -> bool {
    let mut current = false;
    let mut changed = false;
    for op in ops.iter_mut() {
        match op.operator.as_str() {
            "Tf" => {
                let Ok(name) = op.operands[0].as_name().map(|n| n.to_vec()) else {
                    continue;
                };
                current = false;
                let key = fonts.get(&name).ok().and_then(|o| o.as_reference().ok());
                if let Some((new, id)) = key.and_then(|k| cache.get(&k)) {
                    fonts.set(new.clone(), Object::Reference(*id));
                    op.operands[0] = Object::Name(new.clone());
                    current = true;
                    changed = true;
                    continue;
                }
                let Some(mut font) = gbk_font(doc, fonts, &name) else {
                    continue;
                };
                let cmap = doc.add_object(Stream::new(Dictionary::new(), identity_to_unicode()));
                font.set("Encoding", Object::Name(b"Identity-H".to_vec()));
                font.set("ToUnicode", Object::Reference(cmap));
                let descendant = font
                    .get(b"DescendantFonts")
                    .ok()
                    .and_then(|d| deref(doc, d))
                    .and_then(|d| d.as_array().ok())
                    .and_then(|a| a.first())
                    .and_then(|d| deref(doc, d))
                    .and_then(|d| d.as_dict().ok())
                    .cloned();
                if let Some(mut d) = descendant {
                    d.remove(b"W");
                    d.set("DW", Object::Integer(1000));
                    let id = doc.add_object(Object::Dictionary(d));
                    font.set(
                        "DescendantFonts",
                        Object::Array(vec![Object::Reference(id)]),
                    );
                }
                let id = doc.add_object(Object::Dictionary(font));
                let new = format!("SemTraceGBK{}", cache.len() + 1).into_bytes();
                fonts.set(new.clone(), Object::Reference(id));
                if let Some(k) = key {
                    cache.insert(k, (new.clone(), id));
                }
                op.operands[0] = Object::Name(new);
                current = true;
                changed = true;
            }
            "Tj" | "'" | "\"" | "TJ" if current => {
                for o in op.operands.iter_mut() {
                    match o {
                        Object::String(b, _) => *b = gbk_to_ucs2(b),
                        Object::Array(a) => {
                            for x in a.iter_mut() {
                                if let Object::String(b, _) = x {
                                    *b = gbk_to_ucs2(b);
                                }
                            }
                        }
                        _ => {}
                    }
                }
                changed = true;
            }
            _ => {}
        }
    }
    changed
}

/// Glyph names of ligatures made of plain letters ("T_h", "f_t", "f_f_i") → their text.
fn ligature_name_text(name: &[u8]) -> Option<String> {
    let name = std::str::from_utf8(name).ok()?;
    let parts: Vec<&str> = name.split('_').collect();
    (parts.len() >= 2
        && parts
            .iter()
            .all(|p| p.len() == 1 && p.as_bytes()[0].is_ascii_alphabetic()))
    .then(|| parts.concat())
}

/// Simple fonts whose /Differences name ligature glyphs (T_h, f_t, ...) that their ToUnicode
/// CMap leaves out get the missing entries, so "The" is not read as the base encoding's "Œe".
fn patch_ligature_to_unicode(doc: &mut Document) {
    let mut patches: Vec<(ObjectId, Vec<u8>)> = Vec::new();
    for (_, obj) in doc.objects.iter() {
        let Ok(font) = obj.as_dict() else { continue };
        if font.get(b"Type").ok().and_then(|t| t.as_name().ok()) != Some(b"Font") {
            continue;
        }
        let Some(tu) = font
            .get(b"ToUnicode")
            .ok()
            .and_then(|t| t.as_reference().ok())
        else {
            continue;
        };
        let Some(diffs) = font
            .get(b"Encoding")
            .ok()
            .and_then(|e| deref(doc, e))
            .and_then(|e| e.as_dict().ok())
            .and_then(|e| dict_get(doc, e, b"Differences"))
            .and_then(|d| d.as_array().ok())
        else {
            continue;
        };
        let mut code = 0i64;
        let mut entries = Vec::new();
        for d in diffs {
            match d {
                Object::Integer(n) => code = *n,
                Object::Name(name) => {
                    if let Some(text) = ligature_name_text(name) {
                        if (0..256).contains(&code) {
                            let hex: String =
                                text.encode_utf16().map(|u| format!("{u:04X}")).collect();
                            entries.push(format!("<{code:02X}> <{hex}>"));
                        }
                    }
                    code += 1;
                }
                _ => {}
            }
        }
        if entries.is_empty() {
            continue;
        }
        let Some(stream) = doc.get_object(tu).ok().and_then(|o| o.as_stream().ok()) else {
            continue;
        };
        let Ok(cmap) = stream.decompressed_content().or_else(|_| {
            if stream.dict.get(b"Filter").is_err() {
                Ok(stream.content.clone())
            } else {
                Err(())
            }
        }) else {
            continue;
        };
        let text = String::from_utf8_lossy(&cmap);
        let Some(at) = text.rfind("endcmap") else {
            continue;
        };
        // Existing single-code entries win: add only codes the CMap does not mention.
        let entries: Vec<String> = entries
            .into_iter()
            .filter(|e| {
                !text
                    .to_lowercase()
                    .contains(&format!("{}<", &e[..4]).to_lowercase())
                    && !text.to_lowercase().contains(&e[..4].to_lowercase())
            })
            .collect();
        if entries.is_empty() {
            continue;
        }
        let patched = format!(
            "{}{} beginbfchar\n{}\nendbfchar\n{}",
            &text[..at],
            entries.len(),
            entries.join("\n"),
            &text[at..]
        );
        patches.push((tu, patched.into_bytes()));
    }
    for (id, content) in patches {
        doc.set_object(id, Object::Stream(Stream::new(Dictionary::new(), content)));
    }
}

/// Flatten the forms of every page (see [`inline_forms`]); pages that fail are left as they are.
fn flatten_pages(doc: &mut Document) {
    let pages: Vec<ObjectId> = doc.get_pages().values().copied().collect();
    let mut counter = 0usize;
    let mut gbk_cache = std::collections::HashMap::new();
    for page_id in pages {
        let Some((ops, resources, fonts)) = quietly(|| {
            let content = Content::decode(&doc.get_page_content(page_id).ok()?).ok()?;
            let resources = page_resources(doc, page_id);
            let fonts = dict_get(doc, &resources, b"Font")
                .and_then(|f| f.as_dict().ok())
                .cloned()
                .unwrap_or_default();
            if !content.operations.iter().any(|o| {
                o.operator == "Do"
                    || !valid_operands(o)
                    || (o.operator == "Tf"
                        && o.operands
                            .first()
                            .and_then(|n| n.as_name().ok())
                            .is_some_and(|n| gbk_font(doc, &fonts, n).is_some()))
            }) {
                return None;
            }
            let mut fonts = fonts;
            let mut ops = Vec::new();
            inline_forms(
                doc,
                content.operations,
                &resources,
                &mut fonts,
                &Default::default(),
                0,
                &mut counter,
                &mut ops,
            );
            Some((ops, resources, fonts))
        })
        .flatten() else {
            continue;
        };
        let mut ops = ops;
        let mut fonts = fonts;
        let _ = quietly(|| convert_gbk(doc, &mut ops, &mut fonts, &mut gbk_cache));
        let n_ops = ops.len();
        let Ok(bytes) = (Content { operations: ops }).encode() else {
            continue;
        };
        // Only use the rewritten content if it reads back as what was written.
        if quietly(|| Content::decode(&bytes).map(|c| c.operations.len())).and_then(|r| r.ok())
            != Some(n_ops)
        {
            continue;
        }
        let mut resources = resources;
        resources.set("Font", Object::Dictionary(fonts));
        let stream = doc.add_object(Stream::new(Dictionary::new(), bytes));
        if let Ok(page) = doc.get_dictionary_mut(page_id) {
            page.set("Resources", Object::Dictionary(resources));
            page.set("Contents", Object::Reference(stream));
        }
    }
}

/// Load and lay out every page. Errors name the problem (encrypted, truncated, malformed).
pub fn extract_pages(bytes: &[u8]) -> Result<Vec<Page>, SourceError> {
    // A complete PDF ends with %%EOF (possibly followed by whitespace or a little junk).
    let tail = &bytes[bytes.len().saturating_sub(4096)..];
    if !find(tail, b"%%EOF") {
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

/// Drop margin line numbers from every page's glyphs (keeping them as [`Page::numbers`]), then
/// lay the rest out into lines.
fn lay_out_pages(raw: Vec<RawPage>) -> Vec<Page> {
    let found = quietly(|| {
        let inputs: Vec<(&[Glyph], f64, f64)> = raw
            .iter()
            .map(|p| (p.glyphs.as_slice(), p.left(), p.width()))
            .collect();
        line_numbers::find_in_pdf(&inputs)
    })
    .unwrap_or_else(|| vec![Vec::new(); raw.len()]);
    raw.into_iter()
        .zip(found)
        .map(|(p, numbers)| {
            let (left, width) = (p.left(), p.width());
            let (_, lly, _, ury) = p.media;
            let mut drop = vec![false; p.glyphs.len()];
            for n in &numbers {
                for &i in &n.glyphs {
                    if let Some(d) = drop.get_mut(i) {
                        *d = true;
                    }
                }
            }
            let glyphs: Vec<Glyph> = p
                .glyphs
                .into_iter()
                .zip(drop)
                .filter(|(_, d)| !d)
                .map(|(g, _)| g)
                .collect();
            Page {
                height: (ury - lly).abs(),
                bottom: lly.min(ury),
                // Layout used to run inside the page's guarded extraction: a panic there still
                // costs only this page's lines.
                lines: guarded(|| layout(glyphs, width, left)).unwrap_or_default(),
                rotated: p.rotated,
                blanks: p.blanks,
                numbers: numbers
                    .into_iter()
                    .map(|n| Line {
                        text: n.text,
                        x0: n.x0,
                        x1: n.x1,
                        y: n.y,
                        size: n.size,
                        column: Column::Full,
                    })
                    .collect(),
            }
        })
        .collect()
}

/// Group glyphs into rows by baseline (greedy, in y order). Each row's baseline is that of its
/// largest glyphs, so super/subscripts join the line they belong to.
fn rows(glyphs: Vec<Glyph>) -> Vec<Vec<Glyph>> {
    let rows = row_indices(&glyphs);
    let mut slots: Vec<Option<Glyph>> = glyphs.into_iter().map(Some).collect();
    rows.into_iter()
        .map(|r| r.into_iter().filter_map(|i| slots[i].take()).collect())
        .collect()
}

/// [`rows`] as indices into `glyphs`.
pub fn row_indices(glyphs: &[Glyph]) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..glyphs.len()).collect();
    order.sort_by(|&a, &b| glyphs[b].y.total_cmp(&glyphs[a].y));
    let mut rows: Vec<(f64, f64, Vec<usize>)> = Vec::new(); // (baseline, size, glyphs)
    for i in order {
        let g = &glyphs[i];
        if let Some((y, size, row)) = rows.last_mut() {
            let tol = 0.45 * size.max(g.size);
            if (*y - g.y).abs() <= tol {
                if g.size > *size + 0.1 && !g.text.trim().is_empty() {
                    *y = g.y;
                    *size = g.size;
                }
                row.push(i);
                continue;
            }
        }
        rows.push((g.y, g.size, vec![i]));
    }
    rows.into_iter().map(|(_, _, r)| r).collect()
}

/// The text of one row of glyphs (sorted by x): spaces where the gap is wide, duplicates of
/// overprinted glyphs (fake bold) removed.
fn row_line(mut row: Vec<Glyph>, column: Column) -> Option<Line> {
    row.sort_by(|a, b| a.x.total_cmp(&b.x));
    let mut text = String::new();
    let mut prev: Option<&Glyph> = None;
    let mut x0 = f64::INFINITY;
    let mut x1 = f64::NEG_INFINITY;
    let mut sizes: Vec<f64> = Vec::new();
    let mut ys: Vec<(f64, f64)> = Vec::new();
    for g in &row {
        if g.text.is_empty() {
            continue;
        }
        let is_space = g.text.trim().is_empty();
        if let Some(p) = prev {
            let p_end = p.x + p.w;
            let size = p.size.min(g.size).max(1.0);
            if g.text == p.text
                && (g.x - p.x).abs() < 0.15 * size
                && (g.y - p.y).abs() < 0.15 * size
            {
                continue; // the same glyph drawn twice
            }
            let gap = g.x - p_end;
            if (gap > 0.13 * size || gap < -1.5 * size) && !text.ends_with(' ') && !is_space {
                text.push(' ');
            }
        }
        if is_space {
            if !text.is_empty() && !text.ends_with(' ') {
                text.push(' ');
            }
        } else {
            text.push_str(&g.text);
            x0 = x0.min(g.x);
            x1 = x1.max(g.x + g.w);
            sizes.push(g.size);
            ys.push((g.size, g.y));
        }
        prev = Some(g);
    }
    let text = text.trim().to_string();
    if text.is_empty() {
        return None;
    }
    sizes.sort_by(|a, b| a.total_cmp(b));
    let size = sizes[sizes.len() / 2];
    // Baseline: that of the glyphs at the row's median size.
    let y = ys
        .iter()
        .min_by(|a, b| (a.0 - size).abs().total_cmp(&(b.0 - size).abs()))
        .map(|p| p.1)
        .unwrap_or(0.0);
    Some(Line {
        text,
        x0,
        x1,
        y,
        size,
        column,
    })
}

/// Find the gutter of a two-column page: an x in the middle band that (almost) no row crosses,
/// with many rows having text on both sides of it. Returns its x, or None for one column.
pub fn detect_gutter(rows: &[Vec<(f64, f64)>], page_left: f64, width: f64) -> Option<f64> {
    let nrows = rows.iter().filter(|r| !r.is_empty()).count();
    if nrows < 10 {
        return None;
    }
    let lo = page_left + 0.3 * width;
    let hi = page_left + 0.7 * width;
    let steps = ((hi - lo) / 1.0).ceil().max(1.0) as usize;
    let mut best: Option<(usize, usize, f64)> = None; // (crossings, -both, x)
    let mut best_run: Vec<f64> = Vec::new();
    for i in 0..=steps {
        let x = lo + i as f64;
        let mut cross = 0usize;
        for r in rows {
            if r.iter().any(|&(a, b)| a < x && x < b) {
                cross += 1;
            }
        }
        match best {
            Some((c, _, _)) if cross > c => {}
            Some((c, _, _)) if cross == c => best_run.push(x),
            _ => {
                best = Some((cross, 0, x));
                best_run = vec![x];
            }
        }
    }
    let (cross, _, _) = best?;
    // Middle of the (first) widest run of best x positions.
    let x = best_run[best_run.len() / 2];
    let both = rows
        .iter()
        .filter(|r| r.iter().any(|&(_, b)| b <= x) && r.iter().any(|&(a, _)| a >= x))
        .count();
    let left = rows
        .iter()
        .filter(|r| !r.is_empty() && r.iter().all(|&(_, b)| b <= x + 0.5))
        .count();
    let right = rows
        .iter()
        .filter(|r| !r.is_empty() && r.iter().all(|&(a, _)| a >= x - 0.5))
        .count();
    if std::env::var_os("SEMTRACE_DEBUG_LAYOUT").is_some() {
        eprintln!(
            "gutter x={x:.1} rows={nrows} cross={cross} both={both} left={left} right={right}"
        );
    }
    // Full-width rows (title, wide figures and tables) may cross; most text rows must not.
    let two = cross * 2 <= nrows
        && both >= 5
        && (both * 10 >= nrows * 3 || (left * 5 >= nrows && right * 5 >= nrows && both >= 3));
    two.then_some(x)
}

/// The x extents of a row's runs of text: glyph boxes merged across word gaps (under 0.8 em),
/// in x order.
pub fn row_spans<'a>(row: impl Iterator<Item = &'a Glyph>) -> Vec<(f64, f64)> {
    let mut boxes: Vec<(f64, f64, f64)> = row
        .filter(|g| !g.text.trim().is_empty())
        .map(|g| (g.x, g.x + g.w.max(0.1), g.size))
        .collect();
    boxes.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut merged: Vec<(f64, f64)> = Vec::new();
    for (a, b, size) in boxes {
        match merged.last_mut() {
            Some(last) if a - last.1 < 0.8 * size => last.1 = last.1.max(b),
            _ => merged.push((a, b)),
        }
    }
    merged
}

/// Lay a page's glyphs out into lines in reading order.
pub fn layout(glyphs: Vec<Glyph>, width: f64, page_left: f64) -> Vec<Line> {
    let prelim = rows(glyphs);
    // Per row, the x extents of its runs of text: glyph boxes merged across word gaps (under
    // 0.8 em), so a full-width line crosses the gutter and two columns stay apart.
    let spans: Vec<Vec<(f64, f64)>> = prelim.iter().map(|r| row_spans(r.iter())).collect();
    // Rows in much smaller type than the page's text (a hidden carrier, fine print) take no part
    // in finding the gutter: a block of them spanning the page must not undo two columns.
    let row_size = |r: &Vec<Glyph>| {
        let mut v: Vec<f64> = r
            .iter()
            .filter(|g| !g.text.trim().is_empty())
            .map(|g| g.size)
            .collect();
        v.sort_by(|a, b| a.total_cmp(b));
        v.get(v.len() / 2).copied().unwrap_or(0.0)
    };
    let sizes: Vec<f64> = prelim.iter().map(row_size).collect();
    let mut sorted: Vec<f64> = sizes.iter().copied().filter(|&s| s > 0.0).collect();
    sorted.sort_by(|a, b| a.total_cmp(b));
    let median = sorted.get(sorted.len() / 2).copied().unwrap_or(0.0);
    let voting: Vec<Vec<(f64, f64)>> = spans
        .iter()
        .zip(&sizes)
        .map(|(sp, &sz)| {
            if sz >= 0.6 * median {
                sp.clone()
            } else {
                Vec::new()
            }
        })
        .collect();
    let Some(gutter) = detect_gutter(&voting, page_left, width) else {
        return prelim
            .into_iter()
            .filter_map(|r| row_line(r, Column::Full))
            .collect();
    };
    let mut out = Vec::new();
    let mut left: Vec<Glyph> = Vec::new();
    let mut right: Vec<Glyph> = Vec::new();
    let flush = |left: &mut Vec<Glyph>, right: &mut Vec<Glyph>, out: &mut Vec<Line>| {
        for r in rows(std::mem::take(left)) {
            out.extend(row_line(r, Column::Left));
        }
        for r in rows(std::mem::take(right)) {
            out.extend(row_line(r, Column::Right));
        }
    };
    for (row, span) in prelim.into_iter().zip(spans) {
        let crosses = span.iter().any(|&(a, b)| a < gutter && gutter < b);
        if crosses {
            flush(&mut left, &mut right, &mut out);
            out.extend(row_line(row, Column::Full));
        } else {
            for g in row {
                if g.x < gutter {
                    left.push(g);
                } else {
                    right.push(g);
                }
            }
        }
    }
    flush(&mut left, &mut right, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word(x: f64, y: f64, s: &str) -> Vec<Glyph> {
        s.chars()
            .enumerate()
            .map(|(i, c)| Glyph {
                x: x + 5.0 * i as f64,
                y,
                w: 5.0,
                size: 10.0,
                text: c.to_string(),
            })
            .collect()
    }

    #[test]
    fn spaces_from_gaps_and_rows_from_baselines() {
        let mut g = word(100.0, 700.0, "hello");
        g.extend(word(128.0, 700.0, "world"));
        g.extend(word(100.0, 688.0, "next"));
        // A superscript slightly above the first row.
        g.extend(word(155.0, 703.5, "2"));
        let lines = layout(g, 600.0, 0.0);
        let texts: Vec<_> = lines.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(texts, vec!["hello world 2", "next"]);
    }

    #[test]
    fn two_columns_are_read_column_by_column() {
        let mut g = word(
            100.0,
            760.0,
            "A title that spans the whole page width here and more",
        );
        for i in 0..20 {
            let y = 700.0 - 12.0 * i as f64;
            g.extend(word(60.0, y, &format!("left{i:02} text of the column")));
            g.extend(word(320.0, y, &format!("right{i:02} text of the column")));
        }
        let lines = layout(g, 600.0, 0.0);
        assert_eq!(lines[0].column, Column::Full);
        assert!(lines[1].text.starts_with("left00"));
        assert!(lines[20].text.starts_with("left19"));
        assert!(lines[21].text.starts_with("right00"));
        assert_eq!(lines[21].column, Column::Right);
    }

    #[test]
    fn ligature_glyph_names_and_gbk() {
        assert_eq!(ligature_name_text(b"T_h").as_deref(), Some("Th"));
        assert_eq!(ligature_name_text(b"f_f_i").as_deref(), Some("ffi"));
        assert_eq!(ligature_name_text(b"fi"), None);
        assert_eq!(ligature_name_text(b"uni0041_x"), None);
        // "中文" in GBK → UTF-16BE code units.
        assert_eq!(
            gbk_to_ucs2(&[0xD6, 0xD0, 0xCE, 0xC4]),
            vec![0x4E, 0x2D, 0x65, 0x87]
        );
    }

    #[test]
    fn malformed_operands_are_caught() {
        let op = |name: &str, n: usize| Operation::new(name, vec![Object::Integer(1); n]);
        assert!(valid_operands(&op("cm", 6)));
        assert!(!valid_operands(&op("cm", 5)));
        assert!(!valid_operands(&op("Td", 1)));
        assert!(valid_operands(&op("re", 4)));
    }

    #[test]
    fn one_column_page_is_not_split() {
        let mut g = Vec::new();
        for i in 0..20 {
            g.extend(word(
                60.0 + (i % 3) as f64 * 7.0,
                700.0 - 12.0 * i as f64,
                "a long line of running text that crosses the middle of the page width",
            ));
        }
        let lines = layout(g, 600.0, 0.0);
        assert!(lines.iter().all(|l| l.column == Column::Full));
        assert_eq!(lines.len(), 20);
    }
}
