//! Third-party checks of a protected PDF against its original: poppler's `pdftotext` and
//! `pdftoppm`, pdf.js (npm `pdfjs-dist`, run by node) and `qpdf --check`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use semtrace_core::carrier::occurrences;

use crate::test_env;

/// Per-page text by `pdftotext -enc UTF-8` (pages split at form feeds).
pub fn pdftotext_pages(pdf: &Path) -> Vec<String> {
    let o = Command::new("pdftotext")
        .args(["-enc", "UTF-8"])
        .arg(pdf)
        .arg("-")
        .output()
        .expect("pdftotext (poppler-utils) must be installed");
    assert!(o.status.success(), "pdftotext failed on {}", pdf.display());
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    let mut pages: Vec<String> = text.split('\u{c}').map(str::to_string).collect();
    if pages.last().is_some_and(|p| p.trim().is_empty()) {
        pages.pop();
    }
    pages
}

/// The pdfjs-dist package installed by scripts/setup-test-env.sh.
pub fn pdfjs_dir() -> PathBuf {
    let p = test_env().join("node/node_modules/pdfjs-dist");
    assert!(
        p.join("legacy/build/pdf.mjs").is_file(),
        "pdfjs-dist missing: run scripts/setup-test-env.sh"
    );
    p
}

/// Per-page text by pdf.js (`getTextContent`), via tests/js/pdfjs-text.mjs.
pub fn pdfjs_pages(pdf: &Path) -> Vec<String> {
    let o = Command::new("node")
        .arg(crate::root().join("tests/js/pdfjs-text.mjs"))
        .arg(pdf)
        .env("PDFJS_DIR", pdfjs_dir())
        .output()
        .expect("node must be installed");
    assert!(
        o.status.success(),
        "pdf.js failed on {}: {}",
        pdf.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).expect("pdfjs-text.mjs prints a JSON array")
}

/// Every page (or only `page`) rendered by `pdftoppm` at `dpi` as raw PPM bytes, in page order.
pub fn render(pdf: &Path, dpi: u32, page: Option<usize>, dir: &Path) -> Vec<Vec<u8>> {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    let mut cmd = Command::new("pdftoppm");
    cmd.args(["-r", &dpi.to_string()]);
    if let Some(n) = page {
        cmd.args(["-f", &n.to_string(), "-l", &n.to_string()]);
    }
    let o = cmd
        .arg(pdf)
        .arg(dir.join("p"))
        .output()
        .expect("pdftoppm (poppler-utils) must be installed");
    assert!(o.status.success(), "pdftoppm failed on {}", pdf.display());
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files.iter().map(|f| std::fs::read(f).unwrap()).collect()
}

/// Pixels that differ between two PPM images (all of them when the sizes differ).
pub fn differing_pixels(a: &[u8], b: &[u8]) -> u64 {
    // pdftoppm writes "P6\n<w> <h>\n255\n" and then RGB triples.
    let data = |x: &[u8]| -> (Vec<u8>, usize) {
        let mut nl = x
            .iter()
            .enumerate()
            .filter(|(_, &c)| c == b'\n')
            .map(|(i, _)| i);
        let start = nl.nth(2).map(|i| i + 1).unwrap_or(x.len());
        (x[..start].to_vec(), start)
    };
    let ((ha, sa), (hb, sb)) = (data(a), data(b));
    if ha != hb || a.len() != b.len() {
        return ((a.len() - sa).max(b.len() - sb) / 3).max(1) as u64;
    }
    a[sa..]
        .chunks(3)
        .zip(b[sb..].chunks(3))
        .filter(|(x, y)| x != y)
        .count() as u64
}

/// Warning and error lines of `qpdf --check`, with the file name taken out.
pub fn qpdf_issues(pdf: &Path) -> BTreeSet<String> {
    let o = Command::new("qpdf")
        .arg("--check")
        .arg(pdf)
        .output()
        .expect("qpdf must be installed");
    let name = pdf.display().to_string();
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .chain(String::from_utf8_lossy(&o.stderr).lines())
        .filter(|l| l.contains("WARNING") || l.contains("ERROR") || l.starts_with("qpdf:"))
        .filter(|l| !l.contains("operation succeeded with warnings"))
        .map(|l| l.replace(&name, "FILE"))
        .collect()
}

/// What the third-party readers make of a protected file.
#[derive(Debug)]
pub struct ReaderCheck {
    /// Times each reader finds the carrier in the whole document, and on the final page.
    pub pdftotext: (usize, usize),
    pub pdfjs: (usize, usize),
    pub pages: usize,
    /// Pixels that differ, summed over all pages.
    pub differing_pixels: u64,
    /// qpdf warnings/errors the original did not have.
    pub new_qpdf: Vec<String>,
}

impl ReaderCheck {
    pub fn exact(&self) -> bool {
        self.pdftotext == (1, 1) && self.pdfjs == (1, 1)
    }
}

pub fn check(original: &Path, protected: &Path, carrier: &str, scratch: &Path) -> ReaderCheck {
    let count = |pages: &[String]| {
        (
            occurrences(&pages.join("\n"), carrier),
            pages.last().map(|p| occurrences(p, carrier)).unwrap_or(0),
        )
    };
    // Every page at 72 dpi, and the final page (the carrier's) again at 150 dpi.
    let a = render(original, 72, None, &scratch.join("render-a"));
    let b = render(protected, 72, None, &scratch.join("render-b"));
    let mut diff: u64 = a.iter().zip(&b).map(|(x, y)| differing_pixels(x, y)).sum();
    if a.len() != b.len() {
        diff += u64::MAX / 2;
    }
    let fa = render(original, 150, Some(a.len()), &scratch.join("render-a"));
    let fb = render(protected, 150, Some(a.len()), &scratch.join("render-b"));
    diff += fa
        .iter()
        .zip(&fb)
        .map(|(x, y)| differing_pixels(x, y))
        .sum::<u64>();
    let new_qpdf = qpdf_issues(protected)
        .difference(&qpdf_issues(original))
        .cloned()
        .collect();
    ReaderCheck {
        pdftotext: count(&pdftotext_pages(protected)),
        pdfjs: count(&pdfjs_pages(protected)),
        pages: b.len(),
        differing_pixels: diff,
        new_qpdf,
    }
}
