//! `semtrace extract` on every real corpus PDF (word coverage against poppler's pdftotext), the
//! scope cut, bad PDFs, and text input from a corpus review file.

use std::path::PathBuf;
use std::process::Command;

use semtrace_e2e::coverage::{chars, coverage, is_cjk, poppler_text, tokens};
use semtrace_e2e::*;

fn corpus_pdfs() -> Vec<PathBuf> {
    let mut v = Vec::new();
    for dir in ["corpus/papers", "corpus/papers-with-reviews"] {
        for e in std::fs::read_dir(shared().join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "pdf") {
                v.push(p);
            }
        }
    }
    v.sort();
    assert!(v.len() >= 23, "{} corpus PDFs", v.len());
    v
}

#[test]
fn every_corpus_pdf_covers_poppler_words() {
    let home = temp_dir("pdf-coverage");
    let mut failures = Vec::new();
    eprintln!(
        "{:<42} {:>5} {:>8} {:>8} {:>8} {:>8}  cut",
        "file", "pages", "poppler", "ours", "coverage", "chars"
    );
    for pdf in corpus_pdfs() {
        let v = extract_json(&pdf, &home);
        let ours_text: Vec<&str> = v["page_text"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_str().unwrap())
            .collect();
        let ours = tokens(&ours_text.join("\n"));
        let popplers_text = poppler_text(&pdf);
        let poppler = tokens(&popplers_text);
        let cov = coverage(&ours, &poppler);
        let poppler_text = popplers_text;
        let cjk = poppler_text.chars().filter(|&c| is_cjk(c)).count();
        let alnum = poppler_text.chars().filter(|c| c.is_alphanumeric()).count();
        let char_cov = coverage(&chars(&ours_text.join("\n")), &chars(&poppler_text));
        // CJK-dominant text is measured on characters (see `chars`), everything else on words.
        let cjk_dominant = cjk * 10 >= alnum * 3;
        let measured = if cjk_dominant { char_cov } else { cov };
        let cut = match &v["cut"] {
            serde_json::Value::Null => "-".to_string(),
            c => format!("p{} {}", c["page"], c["heading"].as_str().unwrap_or("")),
        };
        let name = pdf.file_name().unwrap().to_string_lossy().into_owned();
        eprintln!(
            "{:<42} {:>5} {:>8} {:>8} {:>8.4} {:>8.4}  {cut}{}",
            name,
            v["pages"],
            poppler.len(),
            ours.len(),
            cov,
            char_cov,
            if cjk_dominant {
                "  (CJK: measured on characters)"
            } else {
                ""
            }
        );
        assert!(
            !v["units"].as_array().unwrap().is_empty(),
            "{name}: no units"
        );
        if measured < 0.95 {
            failures.push(format!("{name}: {measured:.4}"));
        }
    }
    assert!(failures.is_empty(), "coverage below 0.95: {failures:?}");
}

fn units(v: &serde_json::Value) -> Vec<&serde_json::Value> {
    v["units"].as_array().unwrap().iter().collect()
}

fn all_unit_text(v: &serde_json::Value) -> String {
    units(v)
        .iter()
        .map(|u| u["text"].as_str().unwrap())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn scope_cut_at_references_on_corpus_papers() {
    let home = temp_dir("pdf-cut");
    let attention = extract_json(
        &shared().join("corpus/papers-with-reviews/attention.pdf"),
        &home,
    );
    let cut = &attention["cut"];
    assert_eq!(cut["heading"], "References", "{cut}");
    assert_eq!(cut["page"], 10, "{cut}");
    assert!(attention["excluded_units"].as_u64().unwrap() >= 10);
    let body = all_unit_text(&attention);
    // Body text is kept, reference titles are not.
    assert!(body.contains("Scaled Dot-Product Attention"));
    assert!(body.contains("multi-head attention"));
    assert!(
        !body.contains("Layer normalization"),
        "reference list leaked"
    );
    assert!(!body.contains("Adam: A method for stochastic optimization"));
    // Ids are p{page}.u{n}, unique, in page order; sections come from headings.
    let us = units(&attention);
    let mut seen = std::collections::HashSet::new();
    let mut last_page = 0;
    for u in &us {
        let id = u["id"].as_str().unwrap();
        let page = u["page"].as_u64().unwrap();
        assert!(id.starts_with(&format!("p{page}.u")), "{id}");
        assert!(seen.insert(id.to_string()), "duplicate id {id}");
        assert!(page >= last_page);
        last_page = page;
        assert!(u["page"].as_u64().unwrap() <= 10);
    }
    assert!(us.iter().any(|u| u["section"]
        .as_str()
        .is_some_and(|s| s.contains("Introduction"))));
    assert!(attention["title"]
        .as_str()
        .is_some_and(|t| t.contains("Attention Is All You Need")));

    // More papers checked by hand: (file, page of the References heading).
    for (file, page) in [
        ("corpus/papers/001-word2vec-efficient-estimation.pdf", 11),
        ("corpus/papers/037-patches-iclr21.pdf", 9),
        ("corpus/papers-with-reviews/2_carpe_diem.pdf", 9),
    ] {
        let v = extract_json(&shared().join(file), &home);
        assert_eq!(v["cut"]["page"], page, "{file}: {}", v["cut"]);
        assert!(v["excluded_units"].as_u64().unwrap() > 0, "{file}");
        assert!(units(&v)
            .iter()
            .all(|u| u["page"].as_u64().unwrap() <= page));
    }
}

/// A one-page PDF whose only content is an image XObject (no text layer).
fn image_only_pdf() -> Vec<u8> {
    let pixels = "00ff00ff".repeat(8);
    let content = "q 200 0 0 200 100 400 cm /Im1 Do Q";
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>".to_string(),
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_string(),
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /XObject << /Im1 5 0 R >> >> /Contents 4 0 R >>".to_string(),
        format!("<< /Length {} >>\nstream\n{content}\nendstream", content.len()),
        format!(
            "<< /Type /XObject /Subtype /Image /Width 4 /Height 4 /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /ASCIIHexDecode /Length {} >>\nstream\n{pixels}>\nendstream",
            pixels.len() + 1
        ),
    ];
    pdf_from_objects(&objects)
}

#[test]
fn bad_documents_exit_3_with_a_named_problem() {
    let dir = temp_dir("pdf-bad");
    let attention = shared().join("corpus/papers-with-reviews/attention.pdf");
    let real = std::fs::read(&attention).unwrap();

    let encrypted = dir.join("encrypted.pdf");
    let st = Command::new("qpdf")
        .args(["--encrypt", "u", "o", "256", "--"])
        .arg(&attention)
        .arg(&encrypted)
        .status()
        .expect("qpdf must be installed");
    assert!(st.success());

    let image = dir.join("image-only.pdf");
    std::fs::write(&image, image_only_pdf()).unwrap();
    // Cut just before its final %%EOF: the cross-reference table is there, the end is not.
    let truncated = dir.join("truncated.pdf");
    let eof = real.windows(5).rposition(|w| w == b"%%EOF").unwrap();
    std::fs::write(&truncated, &real[..eof]).unwrap();
    // Cut in half: no cross-reference table at all.
    let half = dir.join("half.pdf");
    std::fs::write(&half, &real[..real.len() / 2]).unwrap();
    // Deterministic pseudo-random bytes after a PDF header.
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut junk = Vec::new();
    for _ in 0..20_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        junk.push((x >> 24) as u8);
    }
    let malformed = dir.join("malformed.pdf");
    let mut m = b"%PDF-1.7\n".to_vec();
    m.extend(&junk);
    m.extend(b"\n%%EOF\n");
    std::fs::write(&malformed, m).unwrap();
    let binary = dir.join("junk.bin");
    std::fs::write(&binary, &junk).unwrap();
    let empty = dir.join("empty.txt");
    std::fs::write(&empty, "\n\n   \n").unwrap();

    for (file, needle) in [
        (&encrypted, "encrypted"),
        (&image, "no text layer"),
        (&truncated, "truncated"),
        (&half, "no cross-reference table (xref) found"),
        (&malformed, "malformed"),
        (&binary, "not a PDF"),
        (&empty, "empty"),
    ] {
        let out = dir.join("out.json");
        let o = semtrace(
            &[
                "extract",
                "--json",
                "--out",
                out.to_str().unwrap(),
                file.to_str().unwrap(),
            ],
            &dir,
            None,
        );
        let err = stderr(&o);
        eprintln!("{}: {}", file.display(), err.trim());
        assert_eq!(o.status.code(), Some(3), "{}: {err}", file.display());
        assert!(err.contains(needle), "{}: {err}", file.display());
        assert!(!err.contains("panicked"), "{err}");
        assert!(!out.exists(), "--out must not be created on error");
    }
}

#[test]
fn text_input_from_a_corpus_review_file() {
    let dir = temp_dir("pdf-text");
    let papers = corpus_papers(3);
    let p = &papers[1];
    let path = dir.join("paper.md");
    std::fs::write(&path, &p.paper_text).unwrap();
    let out = dir.join("units.json");
    let o = semtrace(
        &[
            "extract",
            "--json",
            "--out",
            out.to_str().unwrap(),
            path.to_str().unwrap(),
        ],
        &dir,
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(v["kind"], "text");
    assert_eq!(v["pages"], 1);
    let us = units(&v);
    assert!(us.len() > 30, "{} units", us.len());
    assert!(us.iter().all(|u| u["page"] == 1));
    for (i, u) in us.iter().enumerate() {
        assert_eq!(u["id"], format!("p1.u{}", i + 1));
    }
    assert!(us
        .iter()
        .any(|u| u["section"].as_str() == Some("1 Introduction")));
    assert_eq!(v["cut"]["heading"], "References", "{}", v["cut"]);
    assert!(v["excluded_units"].as_u64().unwrap() > 10);
    // Headings are not units.
    assert!(us.iter().all(|u| u["text"] != "1 Introduction"));
    // The readable form lists the cut.
    let o = semtrace(&["extract", path.to_str().unwrap()], &dir, None);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("cut:      page 1 at \"References\""));
}
