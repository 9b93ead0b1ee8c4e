//! Offline `semtrace build --protect` over every corpus PDF (papers/ and papers-with-reviews/):
//! every PDF with a text layer must produce a bundle (015, the Chinese CNKI file, is the one
//! allowed failure: no gate is relaxed for it, and its report must name the gate that starved it),
//! every report must count the candidates per source (sentence, clause, caption, table) and how
//! many of each passed the gates, and every protected copy must pass the third-party reader checks
//! (pdftotext and pdf.js read the carrier exactly, pdftoppm renders every page pixel-identical,
//! qpdf reports nothing new, `inspect` finds the carrier and none in the original). A PDF that
//! does not build is still protected, with a test-only bundle (another paper's positions under
//! this PDF's SHA-256), so the embedding is checked on every file. Prints two tables. The suite
//! runs four representative PDFs; the whole corpus is an ignored test (a benchmark's cost).

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use semtrace_core::bundle::Bundle;
use semtrace_core::carrier::carrier_text;
use semtrace_e2e::pdfcheck::{check, ReaderCheck};
use semtrace_e2e::*;

fn pdfs_in(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "pdf"))
        .collect();
    v.sort();
    v
}

fn sha256_file(p: &Path) -> String {
    semtrace_core::sha256_hex(&fs::read(p).unwrap())
}

/// Reader checks plus the bundle's carrier record and `inspect` on both files.
fn verify_protected(
    original: &Path,
    protected: &Path,
    bundle: &Path,
    scratch: &Path,
) -> ReaderCheck {
    let b = Bundle::from_json(&fs::read_to_string(bundle).unwrap()).unwrap();
    let rec = b.carrier.as_ref().expect("bundle records the carrier");
    let text = carrier_text(&b).unwrap();
    assert_eq!(
        rec.template_version,
        semtrace_core::carrier::TEMPLATE_VERSION
    );
    assert_eq!(rec.text_sha256, semtrace_core::sha256_hex(text.as_bytes()));
    assert_eq!(rec.original_sha256, sha256_file(original));
    assert_eq!(b.document.sha256, sha256_file(original));
    assert_eq!(rec.protected_sha256, sha256_file(protected));
    let home = scratch.join("home");
    let o = semtrace(
        &["inspect", "--json", protected.to_str().unwrap()],
        &home,
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["carrier"]["template_version"], rec.template_version);
    assert_eq!(v["carrier"]["page"], rec.page);
    let o = semtrace(
        &["inspect", "--json", original.to_str().unwrap()],
        &home,
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(v["carrier"].is_null(), "no carrier in the original");
    check(original, protected, &text, scratch)
}

/// Protects `pdf` (its own bundle, or the donor's positions for a PDF that did not build) and
/// runs the reader checks; returns the table line and the failure, if any.
fn protect_and_check(
    pdf: &Path,
    name: &str,
    code: Option<i32>,
    dir: &Path,
    donor: &Path,
) -> (String, Option<String>) {
    let out = dir.join(name);
    let (protected, bundle, kind) = if code == Some(0) {
        (out.join("protected.pdf"), out.join("bundle.json"), "own")
    } else {
        // Test-only bundle: the donor's positions under this PDF's SHA-256.
        let mut b: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(donor).unwrap()).unwrap();
        b["document"]["sha256"] = sha256_file(pdf).into();
        b.as_object_mut().unwrap().remove("carrier");
        let tb = out.join("test-bundle.json");
        fs::create_dir_all(&out).unwrap();
        fs::write(&tb, b.to_string()).unwrap();
        let protected = out.join("protected.pdf");
        let o = semtrace(
            &[
                "protect",
                pdf.to_str().unwrap(),
                "--bundle",
                tb.to_str().unwrap(),
                "--out",
                protected.to_str().unwrap(),
            ],
            &dir.join("home"),
            None,
        );
        assert_eq!(o.status.code(), Some(0), "{name}: {}", stderr(&o));
        (protected, out.join("protected.bundle.json"), "donor")
    };
    let scratch = out.join("check");
    let c = verify_protected(pdf, &protected, &bundle, &scratch);
    let page = Bundle::from_json(&fs::read_to_string(&bundle).unwrap())
        .unwrap()
        .carrier
        .map(|c| c.page)
        .unwrap_or(0);
    let line = format!(
        "{name:<42} {kind:<7} {:>9} {:>7} {:>5} {:>10} {:>8}  page {page}",
        format!("{}/{}", c.pdftotext.0, c.pdftotext.1),
        format!("{}/{}", c.pdfjs.0, c.pdfjs.1),
        c.pages,
        c.differing_pixels,
        c.new_qpdf.len(),
    );
    let failed = !c.exact() || c.differing_pixels != 0 || !c.new_qpdf.is_empty();
    let _ = fs::remove_dir_all(&scratch);
    (line, failed.then(|| format!("{name}: {c:?}")))
}

/// The report's per-source counts: present, one row per (source, pass), adding up to the
/// candidate list and its approvals, each candidate naming its source. Returns the table cell.
fn check_source_counts(name: &str, r: &serde_json::Value) -> String {
    let rows = r["source_counts"]
        .as_array()
        .unwrap_or_else(|| panic!("{name}: report.json has no source_counts"));
    let cands = r["candidates"].as_array().unwrap();
    let sum = |f: &str| rows.iter().map(|x| x[f].as_u64().unwrap()).sum::<u64>();
    assert_eq!(sum("candidates"), cands.len() as u64, "{name}: {rows:?}");
    let kept = cands.iter().filter(|c| c["kept"] == true).count() as u64;
    assert_eq!(sum("passed"), kept, "{name}: {rows:?}");
    for c in cands {
        let s = c["source"].as_str().unwrap_or_default();
        assert!(
            ["sentence", "clause", "caption", "table"].contains(&s),
            "{name}: offline candidate {} has source {s:?}",
            c["id"]
        );
    }
    for x in rows {
        let (s, pass) = (x["source"].as_str().unwrap(), x["pass"].as_str().unwrap());
        assert!(["initial", "refill"].contains(&pass), "{name}: {x}");
        let n = cands
            .iter()
            .filter(|c| c["source"] == s && (c["origin"] == "offline-refill") == (pass == "refill"))
            .count() as u64;
        assert_eq!(x["candidates"].as_u64(), Some(n), "{name}: {x}");
    }
    rows.iter()
        .map(|x| {
            let refill = if x["pass"] == "refill" { "+r" } else { "" };
            format!(
                "{}{refill} {}/{}",
                x["source"].as_str().unwrap(),
                x["passed"],
                x["candidates"]
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The suite's share of the corpus: the Chinese CNKI file that must fail with its gate named, the
/// shortest paper (reaches 2K only through clause, caption and table candidates), a 2-column
/// conference paper and a paper of papers-with-reviews/. The whole corpus is the ignored test below.
const SAMPLE: [&str; 4] = [
    "papers/015-cn-mutual-info-ir-2013.pdf",
    "papers/025-item2vec-16.pdf",
    "papers/033-dcn-adkdd17.pdf",
    "papers-with-reviews/attention.pdf",
];

#[test]
fn offline_build_and_protect_a_sample_of_the_corpus() {
    let all: Vec<PathBuf> = SAMPLE
        .iter()
        .map(|p| shared().join("corpus").join(p))
        .collect();
    for p in &all {
        assert!(p.is_file(), "missing corpus PDF {}", p.display());
    }
    build_and_protect(&all, "build-corpus-sample");
}

/// Every corpus PDF (about 15 min in a test build on 2 cores: a benchmark, not part of the suite):
/// `cargo test -p semtrace-e2e --test build_corpus -- --ignored --nocapture`.
#[test]
#[ignore = "whole corpus (~15 min): cargo test -p semtrace-e2e --test build_corpus -- --ignored"]
fn offline_build_and_protect_every_corpus_pdf() {
    let pdfs = pdfs_in(&shared().join("corpus/papers"));
    assert_eq!(pdfs.len(), 20, "the corpus has 20 paper PDFs");
    let with_reviews = pdfs_in(&shared().join("corpus/papers-with-reviews"));
    assert!(!with_reviews.is_empty());
    let all: Vec<PathBuf> = pdfs.iter().chain(&with_reviews).cloned().collect();
    let ok = build_and_protect(&all, "build-corpus");
    assert_eq!(ok, 19, "only {ok} of 20 corpus papers built offline");
}

/// Builds and protects each PDF (two at a time), prints the two tables, checks every protected
/// copy with the third-party readers; returns how many papers/ PDFs built.
fn build_and_protect(all: &[PathBuf], tmp: &str) -> usize {
    let pdfs: Vec<&PathBuf> = all
        .iter()
        .filter(|p| p.parent().is_some_and(|d| d.ends_with("papers")))
        .collect();
    let dir = temp_dir(tmp);
    let secret = dir.join("secret");
    fs::write(&secret, b"corpus secret").unwrap();
    let queue = Arc::new(Mutex::new(all.to_vec()));
    let rows = Arc::new(Mutex::new(Vec::new()));
    // Two builds at a time: each runs the engine on one thread.
    let workers: Vec<_> = (0..2)
        .map(|_| {
            let (queue, rows, dir, secret) =
                (queue.clone(), rows.clone(), dir.clone(), secret.clone());
            std::thread::spawn(move || loop {
                let Some(pdf) = queue.lock().unwrap().pop() else {
                    break;
                };
                let name = pdf.file_stem().unwrap().to_string_lossy().into_owned();
                let out = dir.join(&name);
                let emb = embedder_dir();
                let t = std::time::Instant::now();
                let o = semtrace(
                    &[
                        "build",
                        pdf.to_str().unwrap(),
                        "--out",
                        out.to_str().unwrap(),
                        "--embedder",
                        emb.to_str().unwrap(),
                        "--secret-file",
                        secret.to_str().unwrap(),
                        "--protect",
                        "--quiet",
                    ],
                    &dir.join("home"),
                    None,
                );
                let secs = t.elapsed().as_secs_f64();
                let report: Option<serde_json::Value> = fs::read_to_string(out.join("report.json"))
                    .ok()
                    .and_then(|s| serde_json::from_str(&s).ok());
                rows.lock()
                    .unwrap()
                    .push((pdf, name, o.status.code(), report, secs, stderr(&o)));
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    let mut rows = Arc::try_unwrap(rows).unwrap().into_inner().unwrap();
    rows.sort_by(|a, b| a.1.cmp(&b.1));
    println!(
        "\n{:<42} {:>4} {:>6} {:>6} {:>6}  {:<10} {:>6}  {:<44} note",
        "paper",
        "exit",
        "cands",
        "appr",
        "units",
        "cut page",
        "secs",
        "passed/candidates per source"
    );
    let mut ok = 0;
    for (_, name, code, report, secs, err) in &rows {
        let r = report.as_ref();
        let get = |f: &dyn Fn(&serde_json::Value) -> Option<String>| {
            r.and_then(f).unwrap_or_else(|| "-".into())
        };
        let cands = get(&|r| r["candidates"].as_array().map(|a| a.len().to_string()));
        let appr = get(&|r| {
            r["candidates"]
                .as_array()
                .map(|a| a.iter().filter(|c| c["kept"] == true).count().to_string())
        });
        let units = get(&|r| r["document"]["units"].as_u64().map(|u| u.to_string()));
        let cut = get(&|r| r["document"]["cut"]["page"].as_u64().map(|p| p.to_string()));
        let sources = r.map(|r| check_source_counts(name, r)).unwrap_or_default();
        let note = match code {
            Some(0) => {
                if pdfs
                    .iter()
                    .any(|p| p.file_stem().unwrap().to_string_lossy() == *name)
                {
                    ok += 1;
                }
                assert!(dir.join(name).join("bundle.json").is_file());
                assert!(dir.join(name).join("protected.pdf").is_file());
                String::new()
            }
            Some(6) => {
                let gate = r
                    .and_then(|r| r["failure"]["starving_gate"].as_str())
                    .unwrap_or_default()
                    .to_string();
                assert!(
                    !gate.is_empty(),
                    "{name}: a failed build's report must name the starving gate"
                );
                assert!(!dir.join(name).join("bundle.json").exists());
                assert!(!dir.join(name).join("protected.pdf").exists());
                format!("failed, starving gate {gate}")
            }
            other => format!("exit {other:?}: {}", err.lines().last().unwrap_or_default()),
        };
        println!(
            "{name:<42} {:>4} {cands:>6} {appr:>6} {units:>6}  {cut:<10} {secs:>6.1}  {sources:<44} {note}",
            code.unwrap_or(-1)
        );
    }
    println!("{ok}/{} papers/ PDFs built", pdfs.len());
    for (_, name, code, ..) in &rows {
        assert!(
            matches!(code, Some(0) | Some(6)),
            "{name}: unexpected exit {code:?}"
        );
    }
    // Every text-layer PDF builds: 19 of the 20 papers/ PDFs (015, the Chinese CNKI file, fails
    // with its starving gate named above) and every papers-with-reviews/ PDF. Short papers (025
    // item2vec, 037 patches) reach 2K through clause, caption and table candidates (issue 23),
    // with no gate relaxed.
    let failed: Vec<&str> = rows
        .iter()
        .filter(|r| r.2 != Some(0))
        .map(|r| r.1.as_str())
        .collect();
    assert_eq!(
        failed,
        ["015-cn-mutual-info-ir-2013"],
        "only 015 (Chinese) may fail to build offline"
    );

    // The protected copies, checked by third-party readers.
    let donor = rows
        .iter()
        .find(|r| r.2 == Some(0))
        .map(|r| dir.join(&r.1).join("bundle.json"))
        .expect("at least one bundle");
    println!(
        "\n{:<42} {:<7} {:>9} {:>7} {:>5} {:>10} {:>8}  carrier",
        "protected copy", "bundle", "pdftotext", "pdf.js", "pages", "diff px", "new qpdf"
    );
    // Two copies checked at a time (the readers are single-threaded); lines print in paper order.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let checked: Mutex<Vec<(usize, String, Option<String>)>> = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let Some((pdf, name, code, ..)) = rows.get(i) else {
                    break;
                };
                let (line, failure) = protect_and_check(pdf, name, *code, &dir, &donor);
                checked.lock().unwrap().push((i, line, failure));
            });
        }
    });
    let mut checked = checked.into_inner().unwrap();
    checked.sort_by_key(|c| c.0);
    let mut failures = Vec::new();
    for (_, line, failure) in checked {
        println!("{line}");
        failures.extend(failure);
    }
    assert!(
        failures.is_empty(),
        "protected copies failing reader checks: {failures:#?}"
    );
    ok
}
