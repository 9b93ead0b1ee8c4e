//! The pdf-extract `OutputDev` that records every glyph as drawn (position, advance, size, text),
//! page by page, keeping rotated text and whitespace glyphs apart; layout comes later.

use pdf_extract::{MediaBox, OutputDev, OutputError, Transform};

use super::Glyph;
use crate::normalize::expand_ligatures;

/// A page as drawn, before layout: layout waits until every page is read, because margin line
/// numbers are recognised across the document (a sparse page has too few of its own).
#[derive(Debug, Clone, Default)]
pub(super) struct RawPage {
    pub(super) glyphs: Vec<Glyph>,
    pub(super) rotated: String,
    pub(super) blanks: Vec<(f64, f64, f64)>,
    /// Media box (llx, lly, urx, ury).
    pub(super) media: (f64, f64, f64, f64),
}

impl RawPage {
    pub(super) fn left(&self) -> f64 {
        self.media.0
    }
    pub(super) fn width(&self) -> f64 {
        (self.media.2 - self.media.0).abs().max(1.0)
    }
}

#[derive(Default)]
pub(super) struct Collector {
    pub(super) pages: Vec<RawPage>,
    glyphs: Vec<Glyph>,
    rotated: Vec<Glyph>,
    media: (f64, f64, f64, f64),
    /// A page was begun and not yet ended.
    pub(super) open: bool,
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
