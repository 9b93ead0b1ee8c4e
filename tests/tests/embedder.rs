//! The sentence embedder (all-MiniLM-L6-v2 from PyPI, BERT graph built in Rust, run by tract)
//! against an independent numpy float64 forward pass (tests/embed_reference.py) on real review
//! sentences, plus semantic sanity and the missing-embedder error.

use std::io::Write;
use std::process::{Command, Stdio};

use semtrace_e2e::*;

fn sentences() -> Vec<String> {
    let mut out = Vec::new();
    for p in corpus_papers(3) {
        for r in p.reviews.iter().take(2) {
            for s in semtrace_core::segment::sentences(r).into_iter().take(4) {
                out.push(s.text);
            }
        }
    }
    out.truncate(20);
    // Awkward ones too: very short, non-ASCII, over the 256-token limit.
    out.push("Yes.".into());
    out.push("Die Ergebnisse auf ImageNet sind überzeugend — 76.3% top-1.".into());
    out.push("token ".repeat(400));
    out
}

fn semtrace_embed(texts: &[String]) -> serde_json::Value {
    let emb = embedder_dir();
    let mut args = vec!["embed", "--vectors", "-m", emb.to_str().unwrap()];
    args.extend(texts.iter().map(String::as_str));
    let o = semtrace(&args, &temp_dir("embed-home"), None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    serde_json::from_str(&stdout(&o)).unwrap()
}

#[test]
fn tract_embeddings_match_an_independent_numpy_forward_pass() {
    let texts = sentences();
    let ours = semtrace_embed(&texts);
    let mut child = Command::new(python())
        .arg(root().join("tests/embed_reference.py"))
        .arg(embedder_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(serde_json::to_string(&texts).unwrap().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let reference: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut worst = 0f64;
    // An empty or short reference reply must fail, not compare nothing.
    let (na, nb) = (
        ours["vectors"].as_array().unwrap().len(),
        reference["vectors"].as_array().unwrap().len(),
    );
    assert!(
        na > 0 && na == nb,
        "vector counts differ or are zero: {na} vs {nb}"
    );
    for (i, (a, b)) in ours["vectors"]
        .as_array()
        .unwrap()
        .iter()
        .zip(reference["vectors"].as_array().unwrap())
        .enumerate()
    {
        let (a, b) = (a.as_array().unwrap(), b.as_array().unwrap());
        assert_eq!(a.len(), 384);
        assert_eq!(a.len(), b.len(), "text {i}");
        for (x, y) in a.iter().zip(b) {
            worst = worst.max((x.as_f64().unwrap() - y.as_f64().unwrap()).abs());
        }
    }
    println!(
        "max |tract - numpy| over {} texts: {worst:.2e}",
        texts.len()
    );
    assert!(worst <= 1e-4, "embeddings differ by {worst}");
}

#[test]
fn paraphrases_are_closer_than_unrelated_text_and_identity_is_one() {
    let texts: Vec<String> = [
        "The model is trained on the WMT 2014 English-German dataset.",
        "Training uses the English-German data of WMT 2014.",
        "The authors thank the anonymous reviewers for their comments.",
        "The model is trained on the WMT 2014 English-German dataset.",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let v = semtrace_embed(&texts);
    let c = |i: usize, j: usize| v["cosine"][i][j].as_f64().unwrap();
    assert!(
        c(0, 1) > c(0, 2) + 0.3,
        "paraphrase {} vs unrelated {}",
        c(0, 1),
        c(0, 2)
    );
    assert!(c(0, 3) >= 0.9999, "identical texts: {}", c(0, 3));
}

#[test]
fn a_missing_embedder_is_a_model_error_naming_the_fix() {
    let o = semtrace(&["embed", "some text"], &temp_dir("embed-missing"), None);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("semtrace model fetch all-minilm-l6-v2"),
        "{}",
        stderr(&o)
    );
}
