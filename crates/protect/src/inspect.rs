//! `semtrace inspect`: is a SemTrace carrier in this PDF, and what other hidden text is there?
//!
//! A small content-stream interpreter over every page: it follows the graphics state (`q`/`Q`,
//! `cm`), the text state (font, size, render mode, text matrix) and the fill colour, and reports
//! text shown in render mode 3/7 (invisible), in white fill, at under 1.5 pt, or with its origin
//! outside the page box, e.g. the hidden prompts other tools put into papers. The SemTrace
//! carrier is recognised by its marked-content tag and template version. Text inside form
//! XObjects and annotations is not examined.

use lopdf::{content::Operation, Dictionary, Document, Object};
use serde::Serialize;

use semtrace_source::pdf::{load_structure, visible_box};
use semtrace_source::SourceError;

use crate::MARKER_TAG;

#[derive(Debug, Clone, Serialize)]
pub struct CarrierFound {
    pub page: u32,
    pub template_version: String,
    pub mode: String,
    pub chars: usize,
    /// Decoded text of the carrier (one line per text line).
    pub text: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum HiddenKind {
    /// Render mode 3 (neither fill nor stroke) or 7 (clip only).
    Invisible,
    /// Filled in white.
    White,
    /// Drawn at under 1.5 pt.
    Tiny,
    /// Drawn with its origin outside the page box.
    OffPage,
}

#[derive(Debug, Clone, Serialize)]
pub struct HiddenText {
    pub page: u32,
    pub kind: HiddenKind,
    pub chars: usize,
    pub text: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct InspectReport {
    pub pages: u32,
    /// The SemTrace carrier, when present.
    pub carrier: Option<CarrierFound>,
    /// Other hidden text, merged into runs per page and kind.
    pub hidden: Vec<HiddenText>,
}

type Matrix = [f64; 6];

fn mul(a: &Matrix, b: &Matrix) -> Matrix {
    [
        a[0] * b[0] + a[1] * b[2],
        a[0] * b[1] + a[1] * b[3],
        a[2] * b[0] + a[3] * b[2],
        a[2] * b[1] + a[3] * b[3],
        a[4] * b[0] + a[5] * b[2] + b[4],
        a[4] * b[1] + a[5] * b[3] + b[5],
    ]
}

const IDENTITY: Matrix = [1.0, 0.0, 0.0, 1.0, 0.0, 0.0];

#[derive(Clone)]
struct GState {
    ctm: Matrix,
    white: bool,
    render: i64,
    font: Vec<u8>,
    size: f64,
    leading: f64,
}

fn num(o: &Object) -> Option<f64> {
    match o {
        Object::Integer(i) => Some(*i as f64),
        Object::Real(r) => Some(f64::from(*r)),
        _ => None,
    }
}

fn nums(ops: &[Object]) -> Vec<f64> {
    ops.iter().filter_map(num).collect()
}

struct PageScan<'a> {
    doc: &'a Document,
    fonts: std::collections::BTreeMap<Vec<u8>, &'a Dictionary>,
    page: u32,
    bbox: Option<(f64, f64, f64, f64)>,
    carrier: Option<CarrierFound>,
    hidden: Vec<HiddenText>,
}

impl PageScan<'_> {
    fn decode(&self, font: &[u8], bytes: &[u8]) -> String {
        let Some(f) = self.fonts.get(font) else {
            return String::from_utf8_lossy(bytes).into_owned();
        };
        match f.get_font_encoding(self.doc) {
            Ok(enc) => Document::decode_text(&enc, bytes)
                .unwrap_or_else(|_| format!("[{} undecodable bytes]", bytes.len())),
            Err(_) => format!("[{} undecodable bytes]", bytes.len()),
        }
    }

    fn record(&mut self, kind: HiddenKind, text: &str) {
        let text = text.trim();
        if text.is_empty() {
            return;
        }
        match self.hidden.last_mut() {
            Some(h) if h.page == self.page && h.kind == kind => {
                h.text.push(' ');
                h.text.push_str(text);
                h.chars = h.text.chars().count();
            }
            _ => self.hidden.push(HiddenText {
                page: self.page,
                kind,
                chars: text.chars().count(),
                text: text.to_string(),
            }),
        }
    }

    fn run(&mut self, ops: &[Operation]) {
        let mut gs = GState {
            ctm: IDENTITY,
            white: false,
            render: 0,
            font: Vec::new(),
            size: 0.0,
            leading: 0.0,
        };
        let mut stack: Vec<GState> = Vec::new();
        let (mut tm, mut tlm) = (IDENTITY, IDENTITY);
        // Marked-content stack: Some((template, mode)) for our carrier's sequence.
        let mut marks: Vec<Option<(String, String)>> = Vec::new();
        let mut carrier_lines: Vec<String> = Vec::new();
        for op in ops {
            let o = &op.operands;
            let mut shown: Option<Vec<u8>> = None;
            match op.operator.as_str() {
                "q" => stack.push(gs.clone()),
                "Q" => {
                    if let Some(s) = stack.pop() {
                        gs = s;
                    }
                }
                "cm" => {
                    let v = nums(o);
                    if v.len() == 6 {
                        gs.ctm = mul(&[v[0], v[1], v[2], v[3], v[4], v[5]], &gs.ctm);
                    }
                }
                "BT" => {
                    tm = IDENTITY;
                    tlm = IDENTITY;
                }
                "Tf" => {
                    if let (Some(Object::Name(n)), Some(s)) = (o.first(), o.get(1).and_then(num)) {
                        gs.font = n.clone();
                        gs.size = s;
                    }
                }
                "Tr" => gs.render = o.first().and_then(num).unwrap_or(0.0) as i64,
                "TL" => gs.leading = o.first().and_then(num).unwrap_or(0.0),
                "Tm" => {
                    let v = nums(o);
                    if v.len() == 6 {
                        tm = [v[0], v[1], v[2], v[3], v[4], v[5]];
                        tlm = tm;
                    }
                }
                "Td" | "TD" => {
                    let v = nums(o);
                    if v.len() == 2 {
                        if op.operator == "TD" {
                            gs.leading = -v[1];
                        }
                        tlm = mul(&[1.0, 0.0, 0.0, 1.0, v[0], v[1]], &tlm);
                        tm = tlm;
                    }
                }
                "T*" => {
                    tlm = mul(&[1.0, 0.0, 0.0, 1.0, 0.0, -gs.leading], &tlm);
                    tm = tlm;
                }
                "g" => gs.white = o.first().and_then(num).is_some_and(|v| v >= 0.99),
                "rg" => {
                    let v = nums(o);
                    gs.white = v.len() == 3 && v.iter().all(|&x| x >= 0.99);
                }
                "k" => {
                    let v = nums(o);
                    gs.white = v.len() == 4 && v.iter().all(|&x| x <= 0.01);
                }
                "sc" | "scn" => {
                    let v = nums(o);
                    let pattern = matches!(o.last(), Some(Object::Name(_)));
                    gs.white = !pattern
                        && match v.len() {
                            1 | 3 => v.iter().all(|&x| x >= 0.99),
                            4 => v.iter().all(|&x| x <= 0.01),
                            _ => false,
                        };
                }
                "cs" => gs.white = false,
                "BMC" => marks.push(None),
                "BDC" => {
                    let ours =
                        matches!(o.first(), Some(Object::Name(n)) if n == MARKER_TAG.as_bytes());
                    let props = match o.get(1) {
                        Some(Object::Dictionary(d)) => Some(d),
                        _ => None,
                    };
                    let get = |k: &[u8]| -> String {
                        match props.and_then(|d| d.get(k).ok()) {
                            Some(Object::String(s, _)) => String::from_utf8_lossy(s).into_owned(),
                            Some(Object::Name(n)) => String::from_utf8_lossy(n).into_owned(),
                            _ => String::new(),
                        }
                    };
                    marks.push(ours.then(|| (get(b"Template"), get(b"Mode"))));
                }
                "EMC" => {
                    if let Some(Some((template, mode))) = marks.pop() {
                        let text = std::mem::take(&mut carrier_lines).join("\n");
                        if self.carrier.is_none() {
                            self.carrier = Some(CarrierFound {
                                page: self.page,
                                template_version: template,
                                mode,
                                chars: text.chars().count(),
                                text,
                            });
                        }
                    }
                }
                "Tj" => {
                    if let Some(Object::String(s, _)) = o.first() {
                        shown = Some(s.clone());
                    }
                }
                "'" | "\"" => {
                    tlm = mul(&[1.0, 0.0, 0.0, 1.0, 0.0, -gs.leading], &tlm);
                    tm = tlm;
                    if let Some(Object::String(s, _)) = o.last() {
                        shown = Some(s.clone());
                    }
                }
                "TJ" => {
                    if let Some(Object::Array(a)) = o.first() {
                        let mut bytes = Vec::new();
                        for x in a {
                            if let Object::String(s, _) = x {
                                bytes.extend_from_slice(s);
                            }
                        }
                        shown = Some(bytes);
                    }
                }
                _ => {}
            }
            let Some(bytes) = shown else { continue };
            let text = self.decode(&gs.font, &bytes);
            if marks.iter().any(Option::is_some) {
                carrier_lines.push(text);
                continue;
            }
            let m = mul(&tm, &gs.ctm);
            let scale = (m[0] * m[3] - m[1] * m[2]).abs().sqrt();
            let size = gs.size.abs() * scale;
            let off_page = self.bbox.is_some_and(|(x0, y0, x1, y1)| {
                m[4] < x0 - 1.0 || m[4] > x1 + 1.0 || m[5] < y0 - 1.0 || m[5] > y1 + 1.0
            });
            let kind = if gs.render == 3 || gs.render == 7 {
                Some(HiddenKind::Invisible)
            } else if gs.white && matches!(gs.render, 0 | 2 | 4 | 6) {
                Some(HiddenKind::White)
            } else if off_page {
                Some(HiddenKind::OffPage)
            } else if size > 0.0 && size < 1.5 {
                Some(HiddenKind::Tiny)
            } else {
                None
            };
            if let Some(kind) = kind {
                self.record(kind, &text);
            }
        }
    }
}

/// Inspect a PDF given as bytes.
pub fn inspect_bytes(bytes: &[u8]) -> Result<InspectReport, SourceError> {
    let doc = load_structure(bytes)?;
    let pages = doc.get_pages();
    let mut carrier = None;
    let mut hidden = Vec::new();
    for (&no, &id) in &pages {
        let ops = match doc.get_and_decode_page_content(id) {
            Ok(c) => c.operations,
            Err(_) => continue,
        };
        let mut scan = PageScan {
            doc: &doc,
            fonts: doc.get_page_fonts(id).unwrap_or_default(),
            page: no,
            bbox: doc
                .get_dictionary(id)
                .ok()
                .and_then(|page| visible_box(&doc, page)),
            carrier: None,
            hidden: Vec::new(),
        };
        scan.run(&ops);
        if carrier.is_none() {
            carrier = scan.carrier;
        }
        hidden.extend(scan.hidden);
    }
    Ok(InspectReport {
        pages: pages.len() as u32,
        carrier,
        hidden,
    })
}
