//! Content-stream rewriting before extraction, where pdf-extract would misplace text or panic:
//! form XObjects inlined, malformed operations dropped, GBK-coded composite fonts re-encoded, and
//! ligature glyphs missing from a font's ToUnicode CMap added to it.

use pdf_extract::content::{Content, Operation};
use pdf_extract::{Dictionary, Document, Object, ObjectId, Stream};

use super::quietly;
use super::structure::{deref, dict_get, page_resources};

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
pub(super) fn patch_ligature_to_unicode(doc: &mut Document) {
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
pub(super) fn flatten_pages(doc: &mut Document) {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
