//! The carrier's font: an openly licensed TrueType font (DejaVu Sans from Debian's
//! `fonts-dejavu-core` by default), subset to the glyphs the carrier uses and embedded as a
//! Type0 / CIDFontType2 font with Identity-H encoding and a ToUnicode CMap, so every extractor
//! maps the glyphs back to exactly the carrier's characters.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::ProtectError;

/// Where the default font is looked for, in order (Debian/Ubuntu, Fedora, Arch, Homebrew).
pub const DEFAULT_FONT_PATHS: &[&str] = &[
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu-sans-fonts/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/opt/homebrew/share/fonts/DejaVuSans.ttf",
    "/usr/local/share/fonts/DejaVuSans.ttf",
];

/// Find the font file: `--font` if given, else the first default path that exists.
pub fn locate(explicit: Option<&Path>) -> Result<PathBuf, ProtectError> {
    if let Some(p) = explicit {
        return if p.is_file() {
            Ok(p.to_path_buf())
        } else {
            Err(ProtectError::Font(format!(
                "--font {}: no such file",
                p.display()
            )))
        };
    }
    DEFAULT_FONT_PATHS
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
        .ok_or_else(|| {
            ProtectError::Font(
                "no carrier font found: install DejaVu Sans (Debian/Ubuntu: apt install \
                 fonts-dejavu-core) or pass --font PATH to a TrueType font with the carrier's \
                 characters"
                    .into(),
            )
        })
}

/// A loaded font and the glyphs of one carrier text.
pub struct CarrierFont {
    data: Vec<u8>,
    /// PostScript name (e.g. "DejaVuSans").
    pub ps_name: String,
    units_per_em: f64,
    ascent: f64,
    descent: f64,
    cap_height: f64,
    bbox: [f64; 4],
    /// char → original glyph id.
    cmap: BTreeMap<char, u16>,
    /// original glyph id → advance (font units).
    advances: BTreeMap<u16, u16>,
}

impl CarrierFont {
    /// Parse `data` and look up every character of `text` (line breaks excluded). A character
    /// the font cannot draw is an error naming it: a carrier must never lose a character.
    pub fn load(data: Vec<u8>, text: &str) -> Result<CarrierFont, ProtectError> {
        let face = ttf_parser::Face::parse(&data, 0)
            .map_err(|e| ProtectError::Font(format!("not a usable TrueType/OpenType font: {e}")))?;
        if face.tables().glyf.is_none() {
            return Err(ProtectError::Font(
                "the font has no TrueType outlines (glyf table); use a .ttf font".into(),
            ));
        }
        let ps_name = face
            .names()
            .into_iter()
            .filter(|n| n.name_id == ttf_parser::name_id::POST_SCRIPT_NAME)
            // Only Unicode-encoded records decode; Macintosh ones are skipped.
            .find_map(|n| n.to_string())
            .unwrap_or_else(|| "CarrierFont".into())
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect::<String>();
        let upem = f64::from(face.units_per_em());
        let mut cmap = BTreeMap::new();
        let mut advances = BTreeMap::new();
        let mut by_glyph: BTreeMap<u16, char> = BTreeMap::new();
        for c in text.chars().filter(|&c| c != '\n') {
            if cmap.contains_key(&c) {
                continue;
            }
            let gid = face.glyph_index(c).map(|g| g.0).filter(|&g| g != 0);
            let Some(gid) = gid else {
                return Err(ProtectError::Carrier(format!(
                    "the carrier font ({ps_name}) has no glyph for {c:?} (U+{:04X}); pass --font \
                     with a font that covers it",
                    c as u32
                )));
            };
            // Two characters drawn by one glyph could not both be mapped back by ToUnicode.
            if let Some(other) = by_glyph.insert(gid, c) {
                return Err(ProtectError::Carrier(format!(
                    "the carrier font draws {other:?} and {c:?} with the same glyph, so a reader \
                     could not tell them apart"
                )));
            }
            cmap.insert(c, gid);
            advances.insert(
                gid,
                face.glyph_hor_advance(ttf_parser::GlyphId(gid))
                    .unwrap_or(0),
            );
        }
        let bb = face.global_bounding_box();
        Ok(CarrierFont {
            ps_name,
            units_per_em: upem,
            ascent: f64::from(face.ascender()),
            descent: f64::from(face.descender()),
            cap_height: f64::from(face.capital_height().unwrap_or(face.ascender())),
            bbox: [
                f64::from(bb.x_min),
                f64::from(bb.y_min),
                f64::from(bb.x_max),
                f64::from(bb.y_max),
            ],
            cmap,
            advances,
            data,
        })
    }

    /// Advance of `c` in 1/1000 em (PDF glyph space).
    pub fn width(&self, c: char) -> f64 {
        self.cmap
            .get(&c)
            .and_then(|g| self.advances.get(g))
            .map(|&a| f64::from(a) * 1000.0 / self.units_per_em)
            .unwrap_or(0.0)
    }

    /// Width of `s` at font size 1 (points per point of size).
    pub fn text_width(&self, s: &str) -> f64 {
        s.chars().map(|c| self.width(c)).sum::<f64>() / 1000.0
    }

    /// Subset the font to the carrier's glyphs; returns what the PDF objects need.
    pub fn subset(&self) -> Result<EmbeddedFont, ProtectError> {
        let mut remapper = subsetter::GlyphRemapper::new();
        let mut new_gid: BTreeMap<char, u16> = BTreeMap::new();
        for (&c, &g) in &self.cmap {
            new_gid.insert(c, remapper.remap(g));
        }
        let file = subsetter::subset(&self.data, 0, &remapper)
            .map_err(|e| ProtectError::Font(format!("cannot subset the font: {e:?}")))?;
        // Subset tag: six capitals derived from the glyph set (PDF 32000-1 §9.6.4).
        let digest = semtrace_core::sha256_hex(new_gid.keys().collect::<String>().as_bytes());
        let tag: String = digest
            .bytes()
            .take(6)
            .map(|b| (b'A' + (b % 26)) as char)
            .collect();
        let scale = 1000.0 / self.units_per_em;
        let mut widths: BTreeMap<u16, f64> = BTreeMap::new();
        for (&c, &gid) in &new_gid {
            widths.insert(gid, self.width(c));
        }
        Ok(EmbeddedFont {
            base_font: format!("{tag}+{}", self.ps_name),
            file,
            cid: new_gid,
            widths,
            ascent: self.ascent * scale,
            descent: self.descent * scale,
            cap_height: self.cap_height * scale,
            bbox: self.bbox.map(|v| v * scale),
        })
    }
}

/// A subset font ready to be written as PDF objects.
pub struct EmbeddedFont {
    pub base_font: String,
    /// The subset TrueType file (FontFile2).
    pub file: Vec<u8>,
    /// char → CID (= new glyph id; CIDToGIDMap /Identity).
    pub cid: BTreeMap<char, u16>,
    /// CID → advance in 1/1000 em.
    pub widths: BTreeMap<u16, f64>,
    pub ascent: f64,
    pub descent: f64,
    pub cap_height: f64,
    pub bbox: [f64; 4],
}

impl EmbeddedFont {
    /// `s` as a hex string of 2-byte CIDs (for `Tj`).
    pub fn encode(&self, s: &str) -> String {
        let mut out = String::with_capacity(s.len() * 4 + 2);
        out.push('<');
        for c in s.chars() {
            let _ = write!(out, "{:04X}", self.cid.get(&c).copied().unwrap_or(0));
        }
        out.push('>');
        out
    }

    /// The ToUnicode CMap: every CID back to its character (UTF-16BE, surrogate pairs allowed).
    pub fn to_unicode_cmap(&self) -> String {
        let mut s = String::from(
            "/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n\
             /CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n\
             /CMapName /Adobe-Identity-UCS def\n/CMapType 2 def\n\
             1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n",
        );
        let entries: Vec<(u16, char)> = self.cid.iter().map(|(&c, &g)| (g, c)).collect();
        // At most 100 entries per bfchar block (PDF 32000-1 §9.10.3 / Adobe TN 5411).
        for chunk in entries.chunks(100) {
            let _ = writeln!(s, "{} beginbfchar", chunk.len());
            for (gid, c) in chunk {
                let mut units = [0u16; 2];
                let hex: String = c
                    .encode_utf16(&mut units)
                    .iter()
                    .map(|u| format!("{u:04X}"))
                    .collect();
                let _ = writeln!(s, "<{gid:04X}> <{hex}>");
            }
            s.push_str("endbfchar\n");
        }
        s.push_str("endcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n");
        s
    }

    /// The /W array (individual widths, one run per CID).
    pub fn w_array(&self) -> String {
        let mut s = String::from("[");
        for (gid, w) in &self.widths {
            let _ = write!(s, " {gid} [{}]", super::pdfwrite::real(*w));
        }
        s.push_str(" ]");
        s
    }
}
