//! An incremental update (PDF 32000-1 §7.5.6): the original bytes stay untouched as a prefix of
//! the protected file, followed by the new and changed objects, a cross-reference section for
//! them and a trailer whose /Prev points at the original's last cross-reference section.
//!
//! Why incremental rather than a rewrite through lopdf: every byte of every original object is
//! kept, so nothing the carrier does not touch can change (fonts, images, object streams, broken
//! but tolerated structures), and the original's SHA-256 can be re-checked from the prefix.

use std::fmt::Write as _;

use lopdf::{Dictionary, Object, ObjectId, StringFormat};

/// A number the way PDF wants it: no exponent, at most four decimals, no trailing zeros.
pub fn real(v: f64) -> String {
    if !v.is_finite() {
        return "0".into();
    }
    let s = format!("{v:.4}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s.is_empty() || s == "-" || s == "-0" {
        "0".into()
    } else {
        s.into()
    }
}

fn name(out: &mut Vec<u8>, n: &[u8]) {
    out.push(b'/');
    for &b in n {
        // Delimiters, whitespace, '#' and non-printables are written as #xx (§7.3.5).
        if b.is_ascii_graphic() && !b"()<>[]{}/%#".contains(&b) {
            out.push(b);
        } else {
            out.extend_from_slice(format!("#{b:02X}").as_bytes());
        }
    }
}

/// Serialise a direct object (streams are written by [`Update::add_stream`]).
pub fn object(out: &mut Vec<u8>, o: &Object) {
    match o {
        Object::Null => out.extend_from_slice(b"null"),
        Object::Boolean(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Object::Integer(i) => out.extend_from_slice(i.to_string().as_bytes()),
        Object::Real(r) => out.extend_from_slice(real(f64::from(*r)).as_bytes()),
        Object::Name(n) => name(out, n),
        Object::String(s, fmt) => match fmt {
            // Hex is always safe; literal strings keep their bytes, escaped.
            StringFormat::Hexadecimal => {
                out.push(b'<');
                out.extend_from_slice(hex::encode_upper(s).as_bytes());
                out.push(b'>');
            }
            StringFormat::Literal => {
                out.push(b'(');
                for &b in s {
                    match b {
                        b'(' | b')' | b'\\' => {
                            out.push(b'\\');
                            out.push(b);
                        }
                        b'\r' => out.extend_from_slice(b"\\r"),
                        b'\n' => out.extend_from_slice(b"\\n"),
                        _ => out.push(b),
                    }
                }
                out.push(b')');
            }
        },
        Object::Array(a) => {
            out.push(b'[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(b' ');
                }
                object(out, x);
            }
            out.push(b']');
        }
        Object::Dictionary(d) => dictionary(out, d),
        // A stream can only be an indirect object; the caller never nests one.
        Object::Stream(s) => dictionary(out, &s.dict),
        Object::Reference((n, g)) => out.extend_from_slice(format!("{n} {g} R").as_bytes()),
    }
}

pub fn dictionary(out: &mut Vec<u8>, d: &Dictionary) {
    out.extend_from_slice(b"<<");
    for (k, v) in d.iter() {
        name(out, k);
        out.push(b' ');
        object(out, v);
        out.push(b' ');
    }
    out.extend_from_slice(b">>");
}

/// The objects of one incremental update.
pub struct Update {
    next_id: u32,
    /// (id, serialised "n g obj ... endobj" body).
    objects: Vec<(ObjectId, Vec<u8>)>,
}

impl Update {
    /// New objects are numbered from `size` (the original trailer's /Size).
    pub fn new(size: u32) -> Update {
        Update {
            next_id: size.max(1),
            objects: Vec::new(),
        }
    }

    pub fn reserve(&mut self) -> ObjectId {
        let id = (self.next_id, 0);
        self.next_id += 1;
        id
    }

    /// Add (or replace, for an id of the original) a non-stream object given as PDF source.
    pub fn set_raw(&mut self, id: ObjectId, body: &[u8]) {
        let mut out = format!("{} {} obj\n", id.0, id.1).into_bytes();
        out.extend_from_slice(body);
        out.extend_from_slice(b"\nendobj\n");
        self.objects.push((id, out));
    }

    pub fn set(&mut self, id: ObjectId, o: &Object) {
        let mut body = Vec::new();
        object(&mut body, o);
        self.set_raw(id, &body);
    }

    /// Add a stream with `extra` dictionary entries (PDF source, e.g. "/Length1 123"); the data
    /// is Flate-compressed when `compress`.
    pub fn add_stream(&mut self, id: ObjectId, extra: &str, data: &[u8], compress: bool) {
        use std::io::Write as _;
        let (bytes, filter) = if compress {
            let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
            z.write_all(data).expect("writing to memory");
            (
                z.finish().expect("writing to memory"),
                " /Filter /FlateDecode",
            )
        } else {
            (data.to_vec(), "")
        };
        let mut out = format!(
            "{} {} obj\n<< /Length {}{filter} {extra} >>\nstream\n",
            id.0,
            id.1,
            bytes.len()
        )
        .into_bytes();
        out.extend_from_slice(&bytes);
        out.extend_from_slice(b"\nendstream\nendobj\n");
        self.objects.push((id, out));
    }

    /// Append the update to `original`: objects, a classic cross-reference section and a
    /// trailer (/Size, /Prev, /Root, /Info and /ID carried over from the original trailer).
    /// A classic section may follow an original cross-reference *stream*: readers resolve
    /// each /Prev link by what they find at its offset (poppler, pdf.js and qpdf all do).
    pub fn write(mut self, original: &[u8], trailer: &Dictionary, prev_xref: usize) -> Vec<u8> {
        let mut out = original.to_vec();
        if !out.ends_with(b"\n") && !out.ends_with(b"\r") {
            out.push(b'\n');
        }
        self.objects.sort_by_key(|(id, _)| *id);
        let mut offsets: Vec<(ObjectId, usize)> = Vec::new();
        for (id, body) in &self.objects {
            offsets.push((*id, out.len()));
            out.extend_from_slice(body);
        }
        let xref_at = out.len();
        let mut x = String::from("xref\n");
        // Subsections of consecutive object numbers.
        let mut i = 0;
        while i < offsets.len() {
            let mut j = i + 1;
            while j < offsets.len() && offsets[j].0 .0 == offsets[j - 1].0 .0 + 1 {
                j += 1;
            }
            let _ = writeln!(x, "{} {}", offsets[i].0 .0, j - i);
            for (id, off) in &offsets[i..j] {
                let _ = write!(x, "{off:010} {:05} n\r\n", id.1);
            }
            i = j;
        }
        out.extend_from_slice(x.as_bytes());
        let size = offsets
            .iter()
            .map(|(id, _)| id.0 + 1)
            .max()
            .unwrap_or(0)
            .max(self.next_id);
        let mut t = Dictionary::new();
        t.set("Size", Object::Integer(i64::from(size)));
        t.set("Prev", Object::Integer(prev_xref as i64));
        for key in [&b"Root"[..], b"Info", b"ID"] {
            if let Ok(v) = trailer.get(key) {
                t.set(key.to_vec(), v.clone());
            }
        }
        out.extend_from_slice(b"trailer\n");
        dictionary(&mut out, &t);
        out.extend_from_slice(format!("\nstartxref\n{xref_at}\n%%EOF\n").as_bytes());
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_names_are_pdf_syntax() {
        assert_eq!(real(1.0), "1");
        assert_eq!(real(-0.00001), "0");
        assert_eq!(real(12.34567), "12.3457");
        assert_eq!(real(f64::NAN), "0");
        let mut out = Vec::new();
        object(&mut out, &Object::Name(b"A B#(".to_vec()));
        assert_eq!(out, b"/A#20B#23#28");
        let mut out = Vec::new();
        object(
            &mut out,
            &Object::String(b"a(b)\\".to_vec(), StringFormat::Literal),
        );
        assert_eq!(out, b"(a\\(b\\)\\\\)");
    }

    #[test]
    fn xref_offsets_point_at_objects() {
        let original = b"%PDF-1.4\n1 0 obj\n<< >>\nendobj\n%%EOF".to_vec();
        let mut u = Update::new(5);
        let a = u.reserve();
        let b = u.reserve();
        u.set_raw(b, b"<< /B 1 >>");
        u.set_raw(a, b"<< /A 1 >>");
        u.set_raw((1, 0), b"<< /Changed true >>");
        let mut trailer = Dictionary::new();
        trailer.set("Root", Object::Reference((1, 0)));
        let out = u.write(&original, &trailer, 9);
        assert!(out.starts_with(&original));
        let text = String::from_utf8_lossy(&out).into_owned();
        let xref = text.rfind("\nxref\n").unwrap() + 1;
        let table = &text[xref..];
        assert!(
            table.contains("1 1\n") && table.contains("5 2\n"),
            "{table}"
        );
        for (num, line) in [(1, 2), (5, 4), (6, 5)] {
            let entry = table.lines().nth(line).unwrap();
            let off: usize = entry[..10].parse().unwrap();
            assert!(text[off..].starts_with(&format!("{num} 0 obj")), "{entry}");
        }
        assert!(text.contains("/Size 7") && text.contains("/Prev 9"));
        assert!(text.ends_with(&format!("startxref\n{xref}\n%%EOF\n")));
    }
}
