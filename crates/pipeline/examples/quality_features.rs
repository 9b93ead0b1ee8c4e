//! The fact-quality model's lexical features for `training/fit_quality.py`, computed by the
//! builder's own code so that fitting and building see the same numbers.
//!
//! stdin: JSON lines with `text`, `quote` and `source` ("sentence", "clause", ...);
//! stdout: one JSON array of the lexical features per line (names: `fact_quality::LEXICAL`).
//! usage: cargo run --release -p semtrace-pipeline --example quality_features < in.jsonl

use std::io::{BufRead, Write};

use semtrace_pipeline::candidate::CandidateSource;
use semtrace_pipeline::fact_quality;

fn main() {
    let stdin = std::io::stdin();
    let mut out = std::io::BufWriter::new(std::io::stdout());
    for (n, line) in stdin.lock().lines().enumerate() {
        let line = line.unwrap_or_else(|e| fail(n, &e.to_string()));
        let v: serde_json::Value =
            serde_json::from_str(&line).unwrap_or_else(|e| fail(n, &e.to_string()));
        let field = |k: &str| {
            v[k].as_str()
                .unwrap_or_else(|| fail(n, &format!("no string \"{k}\"")))
        };
        let source: CandidateSource = serde_json::from_value(v["source"].clone())
            .unwrap_or_else(|e| fail(n, &format!("source: {e}")));
        let x = fact_quality::lexical(field("text"), field("quote"), source);
        writeln!(
            out,
            "{}",
            serde_json::to_string(&x).expect("numbers serialise")
        )
        .expect("stdout");
    }
}

fn fail(n: usize, msg: &str) -> ! {
    eprintln!("stdin line {}: {msg}", n + 1);
    std::process::exit(2);
}
