//! `semtrace eval --papers` against a REAL llama.cpp server (xllamacpp, SmolLM2-135M-Instruct, 1
//! thread): paired positive/null generation with shared seeds, a neutral paraphrase attack, scoring
//! and the report; a second run regenerates and rescores nothing (server token counters unchanged).
//! SmolLM2 is far too small to follow a carrier: this tests plumbing, not detection quality.

use std::fs;
use std::process::Command;

use semtrace_e2e::llm::LlamaServer;
use semtrace_e2e::{bin, root, shared, stderr, temp_dir};
use serde_json::Value;

/// A papers manifest with the attention paper (../shared) and the sample bundle; no protected copy,
/// so the positive reads the original's text followed by the bundle's carrier.
fn attention_manifest(dir: &std::path::Path) -> std::path::PathBuf {
    let manifest = dir.join("papers.jsonl");
    let line = serde_json::json!({
        "paper": "attention",
        "original": shared().join("corpus/papers-with-reviews/attention.pdf"),
        "bundle": root().join("tests/fixtures/sample-bundle.json"),
    });
    fs::write(&manifest, format!("{line}\n")).unwrap();
    manifest
}

#[test]
fn paired_generation_attack_and_resume_with_a_real_llama_server() {
    let srv = LlamaServer::start("eval");
    let dir = temp_dir("llm-eval");
    let manifest = attention_manifest(&dir);
    let out = dir.join("out");
    fs::write(dir.join("icw.key"), "venue secret\n").unwrap();
    let run = || {
        Command::new(bin())
            .current_dir(&dir)
            .args(["eval", "--papers"])
            .arg(&manifest)
            .arg("--out")
            .arg(&out)
            .args(["--llm-url", &srv.url(), "--llm-model", "smollm2"])
            .args([
                "--draws",
                "1",
                "--attacks",
                "neutral",
                "--max-paper-chars",
                "2500",
            ])
            .args(["--review-max-tokens", "160", "--fast", "--resamples", "200"])
            .args(["--baselines", "unicode", "--icw-key-file", "icw.key"])
            .output()
            .unwrap()
    };
    let o = run();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let recs: Vec<Value> = fs::read_to_string(out.join("reviews.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let ids: Vec<&str> = recs.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        [
            "semtrace/clean/attention/positive/0",
            "semtrace/neutral/attention/positive/0",
            "semtrace/clean/attention/null/0",
            "semtrace/neutral/attention/null/0",
            "icw-unicode/clean/attention/positive/0",
            "icw-unicode/neutral/attention/positive/0",
            "icw-unicode/clean/attention/null/0",
            "icw-unicode/neutral/attention/null/0",
        ]
    );
    // The baseline's score is its detector's statistic (zero-width characters counted).
    for r in &recs[4..] {
        assert!(
            r["observed"].is_null() && r["score"].as_f64().unwrap() >= 0.0,
            "{r}"
        );
    }
    for r in &recs {
        let src = r["source"].as_str().unwrap();
        // Positive and null of the draw share seed 0; the positive read the carrier.
        assert!(src.contains("seed 0"), "{src}");
        let expect = if r["label"] == "positive" {
            "carrier text"
        } else {
            "the original"
        };
        assert!(src.contains(expect), "{src}");
        assert!(r["words"].as_u64().unwrap() > 20, "{r}");
    }
    let text = |id: &str| {
        fs::read_to_string(
            out.join("texts")
                .join(format!("{}.md", id.replace('/', "__"))),
        )
        .unwrap()
    };
    // What the server was asked (the LLM cache keeps every request): three reviewer requests with
    // the protocol's sampling and the same seed (SemTrace's positive, the baseline's positive, and
    // the one null both share), the positives being the null's paper text followed by their own
    // carrier; three attack requests, each on its clean review.
    let bundle = semtrace_core::bundle::Bundle::from_json(
        &fs::read_to_string(root().join("tests/fixtures/sample-bundle.json")).unwrap(),
    )
    .unwrap();
    let carrier = semtrace_core::carrier::carrier_text(&bundle).unwrap();
    let mut requests: Vec<Value> = Vec::new();
    for sub in fs::read_dir(out.join(".llm-cache")).unwrap() {
        for f in fs::read_dir(sub.unwrap().path()).unwrap() {
            let e: Value = serde_json::from_slice(&fs::read(f.unwrap().path()).unwrap()).unwrap();
            requests.push(e["request"].clone());
        }
    }
    assert_eq!(requests.len(), 6);
    let user = |r: &Value| {
        r["messages"].as_array().unwrap().last().unwrap()["content"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let (reviewer, attack): (Vec<&Value>, Vec<&Value>) = requests
        .iter()
        .partition(|r| r["messages"].as_array().unwrap().len() == 2);
    assert_eq!((reviewer.len(), attack.len()), (3, 3));
    for r in &requests {
        assert_eq!(
            (
                r["seed"].as_u64(),
                r["temperature"].as_f64(),
                r["top_p"].as_f64()
            ),
            (Some(0), Some(0.35), Some(0.9))
        );
        assert_eq!(r["max_tokens"], 160);
    }
    let icw = semtrace_eval::icw::IcwSecret::derive(
        semtrace_eval::icw::IcwKind::Unicode,
        b"venue secret",
        &bundle.document.sha256,
    )
    .unwrap()
    .carrier_text();
    let prompts: Vec<String> = reviewer.iter().map(|r| user(r)).collect();
    let null = prompts
        .iter()
        .find(|u| !u.contains(&carrier) && !u.contains(&icw))
        .expect("the null prompt");
    for c in [&carrier, &icw] {
        let pos: Vec<&String> = prompts.iter().filter(|u| u.contains(c.as_str())).collect();
        assert_eq!(pos.len(), 1);
        let paper = null.trim_end();
        assert!(
            pos[0].starts_with(paper),
            "a positive reads the null's paper text, then its carrier"
        );
    }
    for (id, clean) in [(ids[1], ids[0]), (ids[3], ids[2])] {
        assert!(
            attack.iter().any(|r| user(r).contains(text(clean).trim())),
            "{id}: attack of its clean review"
        );
    }

    let report: Value =
        serde_json::from_slice(&fs::read(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(
        report["generation"]["prompt_version"],
        "semtrace-eval-prompts/1"
    );
    assert_eq!(report["generation"]["temperature"], 0.35);
    let conds = report["conditions"].as_array().unwrap();
    assert_eq!(conds.len(), 4);
    assert_eq!(conds[1]["condition"], "neutral");
    assert_eq!(conds[1]["nulls_from"], "neutral");
    assert_eq!(conds[0]["pairs"], 1);
    let md = fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("| semtrace | neutral |"));
    assert!(
        md.contains("Reviewer LLM: `smollm2` at http://127.0.0.1:"),
        "{md}"
    );

    // Resume: nothing regenerated (the server sees no new tokens), nothing rescored.
    let tokens = srv.metric("llamacpp:prompt_tokens_total");
    let o = run();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("resuming: 8 of 8"), "{}", stderr(&o));
    assert_eq!(srv.metric("llamacpp:prompt_tokens_total"), tokens);
}

#[test]
fn evaluation_seeds_may_not_reach_the_control_seed_space() {
    let dir = temp_dir("llm-eval-seeds");
    let manifest = attention_manifest(&dir);
    let o = Command::new(bin())
        .args(["eval", "--papers"])
        .arg(&manifest)
        .arg("--out")
        .arg(dir.join("out"))
        .args(["--llm-url", "http://127.0.0.1:9", "--llm-model", "m"])
        .args(["--draws", "5", "--eval-seed-base", "999998"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("control-review seed space"),
        "{}",
        stderr(&o)
    );
    assert!(!dir.join("out").exists());
}
