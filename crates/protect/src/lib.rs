//! semtrace-protect: the protected copy of a paper and the hidden-text scanner, the two things
//! the `semtrace protect` and `semtrace inspect` commands (and `build --protect`) do to a PDF. The
//! CLI re-exports this crate as `semtrace::protect` and its scanner as `semtrace::inspect`.
//!
//! Layer: semtrace-core (bundle, carrier template, SHA-256) and semtrace-source (the PDF
//! structure helpers and the text extractor the round trip is verified with), plus lopdf, a
//! TrueType parser and subsetter, and flate2. No argument parsing, no network, no async runtime.
//! Bytes in, bytes out, with two exceptions: the carrier font is read from a file ([`font::locate`]:
//! `Options::font`, else the usual system locations of DejaVu Sans), and when the environment
//! variable `SEMTRACE_DEBUG_FAILED_CARRIER` names a file, a copy whose round trip failed is written
//! there for diagnosis. The caller reads the original PDF and writes the protected one.
//!
//! Modules: [`font`] (subset, Type0/Identity-H, ToUnicode), [`place`] (the band and the line
//! breaks), [`pdfwrite`] (the incremental update), [`inspect`] (carrier and hidden text scanner);
//! this file embeds and verifies.
//!
//! The protected copy: the bundle's carrier text (semtrace-core's template) written into the
//! final page of the original PDF as a hidden text layer, by an incremental update, then
//! verified by re-extracting it with the project's own extractor. Any failure aborts: no
//! protected file is produced from a carrier that does not round-trip.
//!
//! Page content: the page's content streams become `[q-stream, original streams…, carrier]`;
//! the carrier stream first closes every graphics state the original left open (so it draws in
//! default user space whatever the original did), then draws inside `q … Q`, wrapped in a
//! marked-content sequence `/SemTraceCarrier <</Template (…) /Mode /…>> BDC … EMC` that
//! `semtrace inspect` recognises and text extractors ignore.

pub mod font;
pub mod inspect;
pub mod pdfwrite;
pub mod place;

use std::fmt::Write as _;
use std::path::Path;

use lopdf::{content::Content, Dictionary, Document, Object, ObjectId};
use semtrace_core::bundle::Bundle;
use semtrace_core::carrier::{self, CarrierMode, CarrierRecord, TEMPLATE_VERSION};
use semtrace_core::sha256_hex;

use semtrace_source::pdf::{
    extract_pages, inherited, load_structure, startxref, visible_box, Page,
};
use semtrace_source::SourceError;

/// Marked-content tag around the carrier (what `inspect` looks for).
pub const MARKER_TAG: &str = "SemTraceCarrier";

#[derive(Debug)]
pub enum ProtectError {
    /// The original PDF cannot be used (encrypted, malformed, ...).
    Source(SourceError),
    /// The bundle does not belong to this PDF, or cannot produce a carrier.
    Bundle(String),
    /// No usable font, or the font cannot draw a carrier character.
    Font(String),
    /// The carrier cannot be placed or did not survive the round trip.
    Carrier(String),
}

impl std::fmt::Display for ProtectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProtectError::Source(e) => e.fmt(f),
            ProtectError::Bundle(m) => write!(f, "bundle: {m}"),
            ProtectError::Font(m) => write!(f, "carrier font: {m}"),
            ProtectError::Carrier(m) => write!(f, "carrier: {m}"),
        }
    }
}

impl std::error::Error for ProtectError {}

pub struct Options<'a> {
    pub mode: CarrierMode,
    /// A TrueType font; None = DejaVu Sans from the usual system locations.
    pub font: Option<&'a Path>,
}

/// A verified protected copy.
pub struct Protected {
    pub bytes: Vec<u8>,
    pub record: CarrierRecord,
    pub text: String,
    /// Band, font size and line count, for the report.
    pub placement: String,
}

fn pdf_err(m: impl Into<String>) -> ProtectError {
    ProtectError::Source(SourceError::Malformed(m.into()))
}

/// Net graphics-state depth the page content leaves open (unmatched `q`).
fn open_depth(doc: &Document, page_id: ObjectId) -> usize {
    let Ok(bytes) = doc.get_page_content(page_id) else {
        return 0;
    };
    let Ok(content) = Content::decode(&bytes) else {
        return 0;
    };
    let mut depth: usize = 0;
    for op in &content.operations {
        match op.operator.as_str() {
            "q" => depth += 1,
            "Q" => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    depth
}

/// Protect `original` with the carrier of `bundle`.
pub fn protect(
    original: &[u8],
    bundle: &Bundle,
    opts: &Options,
) -> Result<Protected, ProtectError> {
    let text = carrier::carrier_text(bundle).map_err(|e| ProtectError::Bundle(e.to_string()))?;
    protect_text(original, bundle, text, TEMPLATE_VERSION, opts)
}

/// Protect `original` with any carrier `text` (e.g. an in-context-watermark baseline's), embedded
/// and verified exactly like SemTrace's; `template` is recorded in the marker and the record.
pub fn protect_text(
    original: &[u8],
    bundle: &Bundle,
    text: String,
    template: &str,
    opts: &Options,
) -> Result<Protected, ProtectError> {
    // Where a carrier's words happen to fall can change how an extractor groups the final
    // page's own lines (seen on a figure page: its labels came out in another order). A smaller
    // size wraps the carrier differently: a few tries, each verified in full.
    let mut max_size = place::MAX_SIZE;
    let mut tries = 0;
    loop {
        let mut moved_at = None;
        match protect_sized(
            original,
            bundle,
            &text,
            template,
            opts,
            max_size,
            &mut moved_at,
        ) {
            Err(_) if tries < 3 && moved_at.is_some_and(|s| s * 0.93 >= place::MIN_SIZE) => {
                tries += 1;
                max_size = (moved_at.unwrap_or(place::MIN_SIZE) * 0.93 * 100.0).floor() / 100.0;
            }
            done => return done,
        }
    }
}

/// One attempt of [`protect_text`] at a font size of at most `max_size`. When the round trip
/// fails only because the page's own text moved, `moved_at` gets the size used.
fn protect_sized(
    original: &[u8],
    bundle: &Bundle,
    text: &str,
    template: &str,
    opts: &Options,
    max_size: f64,
    moved_at: &mut Option<f64>,
) -> Result<Protected, ProtectError> {
    let text = text.to_string();
    // Our extractor first: it names encrypted/truncated/malformed input, and gives the layout of
    // the final page.
    let pages = extract_pages(original).map_err(ProtectError::Source)?;
    let last_layout = pages
        .last()
        .ok_or_else(|| pdf_err("the document has no pages"))?;
    // Junk after the final %%EOF or an "xref " keyword (which poppler, pdf.js and qpdf accept)
    // is repaired in the copy lopdf parses; offsets do not move, the update goes after the whole
    // original, and its /Prev points at the original table, which readers handle as before.
    let original_sha = sha256_hex(original);
    if bundle.document.sha256 != original_sha {
        return Err(ProtectError::Bundle(format!(
            "the bundle was built from a different document (bundle document SHA-256 {}, this \
             PDF {original_sha}); protect the PDF the bundle was built from",
            bundle.document.sha256
        )));
    }
    let doc = load_structure(original).map_err(ProtectError::Source)?;
    let page_map = doc.get_pages();
    let (&page_no, &page_id) = page_map
        .iter()
        .next_back()
        .ok_or_else(|| pdf_err("the page tree has no pages"))?;
    if page_no as usize != pages.len() {
        return Err(pdf_err(format!(
            "the page tree lists {page_no} pages but {} were laid out",
            pages.len()
        )));
    }
    let page = doc
        .get_object(page_id)
        .and_then(Object::as_dict)
        .map_err(|e| pdf_err(format!("final page object: {e}")))?
        .clone();
    let bbox = visible_box(&doc, &page)
        .ok_or_else(|| pdf_err("the final page has no usable /MediaBox"))?;
    if bbox.2 - bbox.0 < 72.0 || bbox.3 - bbox.1 < 72.0 {
        return Err(ProtectError::Carrier(format!(
            "the final page's visible box {bbox:?} is too small for a carrier"
        )));
    }

    // Font and placement.
    let font_path = font::locate(opts.font)?;
    let data = std::fs::read(&font_path)
        .map_err(|e| ProtectError::Font(format!("cannot read {}: {e}", font_path.display())))?;
    let cfont = font::CarrierFont::load(data, &text)?;
    let mut occupied: Vec<place::Occupied> = last_layout
        .lines
        .iter()
        .map(|l| place::Occupied {
            x0: l.x0,
            x1: l.x1,
            y: l.y,
            size: l.size,
        })
        .collect();
    // Stray spaces and margin line numbers count as taken (vertically only: their x does not
    // widen the band, so the carrier stays within the text block and line numbers are found
    // the same way on the protected copy).
    let (lx0, lx1) = occupied
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), o| {
            (a.min(o.x0), b.max(o.x1))
        });
    let numbers = last_layout.numbers.iter().map(|l| (l.x0, l.y, l.size));
    occupied.extend(
        last_layout
            .blanks
            .iter()
            .copied()
            .chain(numbers)
            .map(|(x, y, size)| place::Occupied {
                x0: if lx0.is_finite() { lx0 } else { x },
                x1: if lx1.is_finite() { lx1 } else { x },
                y,
                size,
            }),
    );
    let measure = |s: &str| cfont.text_width(s);
    let placement = match opts.mode {
        // Tiny text is drawn, so it is always the smallest size.
        CarrierMode::Tiny => place::place_fixed(&text, bbox, &occupied, &measure, place::MIN_SIZE),
        _ => place::place_sized(&text, bbox, &occupied, &measure, max_size, place::MIN_SIZE),
    }
    .ok_or_else(|| {
        ProtectError::Carrier(format!(
            "no free band on the final page (page {page_no}) holds the carrier ({} characters) \
             even at {} pt without touching the page's text",
            text.chars().count(),
            place::MIN_SIZE
        ))
    })?;
    let embedded = cfont.subset()?;

    // Objects of the update.
    let size = doc
        .trailer
        .get(b"Size")
        .and_then(Object::as_i64)
        .unwrap_or(0)
        .max(i64::from(doc.max_id) + 1) as u32;
    let mut up = pdfwrite::Update::new(size);
    let type0 = up.reserve();
    let cidfont = up.reserve();
    let descriptor = up.reserve();
    let file = up.reserve();
    let tounicode = up.reserve();
    let pre = up.reserve();
    let carrier_stream = up.reserve();

    up.add_stream(
        file,
        &format!("/Length1 {}", embedded.file.len()),
        &embedded.file,
        true,
    );
    up.add_stream(tounicode, "", embedded.to_unicode_cmap().as_bytes(), true);
    let [bx0, by0, bx1, by1] = embedded.bbox.map(pdfwrite::real);
    up.set_raw(
        descriptor,
        format!(
            "<< /Type /FontDescriptor /FontName /{bf} /Flags 4 /FontBBox [{bx0} {by0} {bx1} {by1}] \
             /ItalicAngle 0 /Ascent {a} /Descent {d} /CapHeight {c} /StemV 80 /FontFile2 {f} 0 R >>",
            bf = embedded.base_font,
            a = pdfwrite::real(embedded.ascent),
            d = pdfwrite::real(embedded.descent),
            c = pdfwrite::real(embedded.cap_height),
            f = file.0
        )
        .as_bytes(),
    );
    up.set_raw(
        cidfont,
        format!(
            "<< /Type /Font /Subtype /CIDFontType2 /BaseFont /{bf} /CIDSystemInfo << /Registry \
             (Adobe) /Ordering (Identity) /Supplement 0 >> /FontDescriptor {d} 0 R /CIDToGIDMap \
             /Identity /DW 1000 /W {w} >>",
            bf = embedded.base_font,
            d = descriptor.0,
            w = embedded.w_array()
        )
        .as_bytes(),
    );
    up.set_raw(
        type0,
        format!(
            "<< /Type /Font /Subtype /Type0 /BaseFont /{bf} /Encoding /Identity-H \
             /DescendantFonts [{c} 0 R] /ToUnicode {t} 0 R >>",
            bf = embedded.base_font,
            c = cidfont.0,
            t = tounicode.0
        )
        .as_bytes(),
    );

    // Resources: the page's effective resources, copied, plus the carrier font.
    let mut resources = match inherited(&doc, &page, b"Resources") {
        Some(Object::Dictionary(d)) => d.clone(),
        _ => Dictionary::new(),
    };
    let mut fonts = match resources
        .get(b"Font")
        .ok()
        .and_then(|f| doc.dereference(f).ok())
    {
        Some((_, Object::Dictionary(d))) => d.clone(),
        _ => Dictionary::new(),
    };
    let mut font_name = MARKER_TAG.to_string();
    let mut n = 1;
    while fonts.has(font_name.as_bytes()) {
        n += 1;
        font_name = format!("{MARKER_TAG}{n}");
    }
    fonts.set(font_name.as_bytes().to_vec(), Object::Reference(type0));
    resources.set("Font", Object::Dictionary(fonts));

    // Contents: [q, original…, carrier].
    let mut contents = vec![Object::Reference(pre)];
    match page.get(b"Contents") {
        Ok(Object::Reference(id)) => match doc.get_object(*id) {
            Ok(Object::Array(a)) => contents.extend(a.iter().cloned()),
            _ => contents.push(Object::Reference(*id)),
        },
        Ok(Object::Array(a)) => contents.extend(a.iter().cloned()),
        _ => {}
    }
    contents.push(Object::Reference(carrier_stream));
    up.add_stream(pre, "", b"q\n", false);

    let depth = open_depth(&doc, page_id) + 1;
    let mut cs = String::new();
    for _ in 0..depth {
        cs.push_str("Q ");
    }
    let (render, fill) = match opts.mode {
        CarrierMode::Invisible => ("3 Tr", "0 g"),
        CarrierMode::White => ("0 Tr", "1 g"),
        CarrierMode::Tiny => ("0 Tr", "0 g"),
    };
    let r = pdfwrite::real;
    let _ = write!(
        cs,
        "\nq\n/{MARKER_TAG} <</Template ({template}) /Mode /{mode}>> BDC\nBT\n/{font_name} \
         {fs} Tf\n{fill}\n{render}\n0 Tc 0 Tw 100 Tz 0 Ts\n{lead} TL\n1 0 0 1 {x} {y} Tm\n",
        mode = opts.mode.name(),
        fs = r(placement.font_size),
        lead = r(placement.leading),
        x = r(placement.x),
        y = r(placement.y),
    );
    for (i, line) in placement.lines.iter().enumerate() {
        if i > 0 {
            cs.push_str("T* ");
        }
        cs.push_str(&embedded.encode(line));
        cs.push_str(" Tj\n");
    }
    cs.push_str("ET\nEMC\nQ\n");
    up.add_stream(carrier_stream, "", cs.as_bytes(), true);

    let mut new_page = page.clone();
    new_page.set("Contents", Object::Array(contents));
    new_page.set("Resources", Object::Dictionary(resources));
    up.set(page_id, &Object::Dictionary(new_page));

    let prev =
        startxref(original).ok_or_else(|| pdf_err("no startxref offset at the end of the file"))?;
    let bytes = up.write(original, &doc.trailer, prev);

    let placement_note = format!(
        "{} band of page {page_no}, {} lines at {} pt",
        placement.band,
        placement.lines.len(),
        r(placement.font_size)
    );
    let record = CarrierRecord {
        template_version: template.into(),
        mode: opts.mode,
        text_sha256: sha256_hex(text.as_bytes()),
        original_sha256: original_sha,
        protected_sha256: sha256_hex(&bytes),
        page: page_no,
        font: embedded.base_font.clone(),
    };
    if let Err(e) = verify(original, &pages, &bytes, &text, &record) {
        if e.to_string().contains(PAGE_TEXT_MOVED) {
            *moved_at = Some(placement.font_size);
        }
        // For diagnosing a failed round trip only: never the normal output path.
        if let Some(p) = std::env::var_os("SEMTRACE_DEBUG_FAILED_CARRIER") {
            let _ = std::fs::write(p, &bytes);
        }
        return Err(e);
    }
    Ok(Protected {
        bytes,
        record,
        text,
        placement: placement_note,
    })
}

const PAGE_TEXT_MOVED: &str = "the final page's own text changed around the carrier";

/// The round trip: the original is an untouched prefix, the page count is unchanged, the
/// project's extractor reads the carrier exactly once on the final page (under the core's
/// narrow normalisation) and nowhere else, and `inspect` finds the marker with the template.
pub fn verify(
    original: &[u8],
    before: &[Page],
    protected: &[u8],
    text: &str,
    record: &CarrierRecord,
) -> Result<(), ProtectError> {
    let fail = |m: String| {
        Err(ProtectError::Carrier(format!(
            "round-trip check failed: {m}"
        )))
    };
    if !protected.starts_with(original) || sha256_hex(original) != record.original_sha256 {
        return fail("the original bytes are not an untouched prefix of the protected file".into());
    }
    if sha256_hex(text.as_bytes()) != record.text_sha256 {
        return fail("carrier text hash mismatch".into());
    }
    let after = extract_pages(protected)
        .map_err(|e| ProtectError::Carrier(format!("the protected file does not re-load: {e}")))?;
    if before.len() != after.len() {
        return fail(format!(
            "{} pages before, {} after",
            before.len(),
            after.len()
        ));
    }
    let last = after.len() - 1;
    for (i, p) in after.iter().enumerate() {
        let n = carrier::occurrences(&p.text(), text);
        let want = usize::from(i == last);
        if n != want {
            return fail(format!(
                "the extractor reads the carrier {n} times on page {} (expected {want})",
                i + 1
            ));
        }
    }
    // Visible text of the final page is unchanged: removing the carrier gives the old text.
    let old = carrier::normalize_for_match(&before[last].text());
    let new = carrier::normalize_for_match(&after[last].text());
    let without = new.replacen(&carrier::normalize_for_match(text), "", 1);
    if carrier::normalize_for_match(&without) != old {
        return fail(PAGE_TEXT_MOVED.into());
    }
    let report = crate::inspect::inspect_bytes(protected)
        .map_err(|e| ProtectError::Carrier(format!("inspect failed on the protected file: {e}")))?;
    match report.carrier {
        Some(c) if c.template_version == record.template_version && c.page == record.page => {}
        other => {
            return fail(format!(
                "inspect does not find the carrier marker as written (found {other:?})"
            ))
        }
    }
    Ok(())
}
