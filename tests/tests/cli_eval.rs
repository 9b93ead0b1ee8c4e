//! `semtrace eval --reviews`: real reviews through the real default model, the report's numbers
//! recomputed here from reviews.jsonl, resume after an interrupted run, and bad manifests.

use std::fs;
use std::path::Path;

use semtrace_e2e::*;
use serde_json::Value;

const BUNDLE: &str = "tests/fixtures/sample-bundle.json";

/// Real human reviews (of other papers) from the corpus JSONL: a null set.
fn corpus_reviews(n: usize) -> Vec<String> {
    corpus_review_texts()
        .into_iter()
        .filter(|t| t.split_whitespace().count() < 450)
        .take(n)
        .collect()
}

/// `semtrace eval --reviews DIR/manifest.jsonl --bundle BUNDLE --out DIR/out --fast --resamples 300
/// EXTRA…`.
fn eval_cmd(dir: &Path, extra: &[&str]) -> std::process::Command {
    let mut args = vec![
        "eval",
        "--reviews",
        "manifest.jsonl",
        "--bundle",
        BUNDLE,
        "--out",
        "out",
        "--fast",
        "--resamples",
        "300",
    ];
    args.extend_from_slice(extra);
    // Paths in the manifest are relative to it; the bundle path is relative to the repository.
    let bundle = root().join(BUNDLE);
    let args: Vec<String> = args
        .iter()
        .map(|a| {
            if *a == BUNDLE {
                bundle.display().to_string()
            } else if *a == "manifest.jsonl" || *a == "out" {
                dir.join(a).display().to_string()
            } else {
                a.to_string()
            }
        })
        .collect();
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    semtrace_cmd(&refs, dir)
}

fn eval(dir: &Path, extra: &[&str]) -> std::process::Output {
    eval_cmd(dir, extra).output().expect("run semtrace")
}

/// Every line of a JSON Lines file.
fn json_lines_file(path: &Path) -> Vec<Value> {
    fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// AUC by counting every (positive, null) pair: wins 1, ties ½.
fn brute_auc(pos: &[f64], neg: &[f64]) -> f64 {
    let mut s = 0.0;
    for p in pos {
        for n in neg {
            s += if p > n {
                1.0
            } else if p == n {
                0.5
            } else {
                0.0
            };
        }
    }
    s / (pos.len() * neg.len()) as f64
}

#[test]
fn reviews_mode_reports_traceable_numbers_and_resumes() {
    let dir = temp_dir("eval");
    fs::write(
        dir.join("positive.md"),
        fs::read_to_string(root().join("tests/fixtures/sample-review.md")).unwrap(),
    )
    .unwrap();
    fs::write(dir.join("human.md"), attention_human_review()).unwrap();
    let mut lines = vec![
        serde_json::json!({"paper": "attention", "label": "positive", "draw": 0, "file": "positive.md"}),
        serde_json::json!({"paper": "attention", "label": "null", "draw": 0, "file": "human.md"}),
    ];
    for (i, t) in corpus_reviews(2).into_iter().enumerate() {
        lines.push(
            serde_json::json!({"paper": "attention", "label": "null", "draw": i + 1, "text": t}),
        );
    }
    // An "attack" condition (positives only): the sample review cut to its first half.
    let half: String = {
        let t = fs::read_to_string(dir.join("positive.md")).unwrap();
        t[..t.len() / 2].to_string()
    };
    lines.push(serde_json::json!({"paper": "attention", "label": "positive", "draw": 0, "condition": "truncated", "text": half}));
    let manifest: String = lines.iter().map(|l| format!("{l}\n")).collect();
    fs::write(dir.join("manifest.jsonl"), &manifest).unwrap();

    let o = eval(&dir, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = dir.join("out");
    let recs = json_lines_file(&out.join("reviews.jsonl"));
    assert_eq!(recs.len(), 5);
    let report: Value =
        serde_json::from_slice(&fs::read(out.join("report.json")).unwrap()).unwrap();
    let conds = report["conditions"].as_array().unwrap();
    assert_eq!(conds.len(), 2);

    // Clean: recompute every number from the lines.
    let score = |r: &Value| r["score"].as_f64().unwrap();
    let pick = |cond: &str, label: &str| -> Vec<&Value> {
        recs.iter()
            .filter(|r| r["condition"] == cond && r["label"] == label)
            .collect()
    };
    let pos: Vec<f64> = pick("clean", "positive").into_iter().map(score).collect();
    let neg: Vec<f64> = pick("clean", "null").into_iter().map(score).collect();
    let clean = &conds[0];
    assert_eq!(clean["condition"], "clean");
    assert_eq!(
        (clean["positives"].as_u64(), clean["nulls"].as_u64()),
        (Some(1), Some(3))
    );
    assert_eq!(clean["roc_auc"].as_f64().unwrap(), brute_auc(&pos, &neg));
    let max_null = neg.iter().copied().fold(f64::MIN, f64::max);
    assert_eq!(clean["zero_fpr"]["threshold"].as_f64().unwrap(), max_null);
    let tpr0 = pos.iter().filter(|&&p| p > max_null).count() as f64 / pos.len() as f64;
    assert_eq!(clean["zero_fpr"]["tpr"].as_f64().unwrap(), tpr0);
    let draw0_null = score(
        pick("clean", "null")
            .iter()
            .find(|r| r["draw"] == 0)
            .unwrap(),
    );
    assert_eq!(
        clean["mean_paired_difference"].as_f64().unwrap(),
        pos[0] - draw0_null
    );
    let p0 = pick("clean", "positive")[0];
    assert_eq!(
        clean["bit_accuracy_positive"].as_f64(),
        (p0["observed"].as_u64().unwrap() > 0)
            .then(|| p0["matched"].as_f64().unwrap() / p0["observed"].as_f64().unwrap())
    );
    // One paper: the cluster bootstrap can only redraw it, so the interval is the point.
    let ci = &clean["roc_auc_ci"];
    assert_eq!(ci["lo"], clean["roc_auc"]);
    assert_eq!(ci["hi"], clean["roc_auc"]);
    assert_eq!(clean["reviews"].as_array().unwrap().len(), 4);
    // The sample review carries the codeword: it beats every human review.
    assert!(pos[0] > max_null, "positive {pos:?} vs nulls {neg:?}");

    // The attacked condition uses the clean nulls and the frozen clean threshold.
    let t = &conds[1];
    assert_eq!(
        (t["condition"].as_str(), t["nulls_from"].as_str()),
        (Some("truncated"), Some("clean"))
    );
    let tp = score(pick("truncated", "positive")[0]);
    assert_eq!(
        t["at_clean_threshold"]["threshold"].as_f64().unwrap(),
        max_null
    );
    assert_eq!(
        t["at_clean_threshold"]["tpr"].as_f64().unwrap(),
        if tp > max_null { 1.0 } else { 0.0 }
    );

    let md = fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        md.contains("## Clean detection") && md.contains("## Robustness (frozen clean threshold)")
    );
    assert!(
        md.contains("Reviewer LLM: not known to the harness"),
        "{md}"
    );
    assert!(
        md.contains(&format!("| ROC-AUC | {:.3} |", brute_auc(&pos, &neg))),
        "{md}"
    );
    for f in ["roc-semtrace-clean.svg", "roc-semtrace-truncated.svg"] {
        let svg = fs::read_to_string(out.join(f)).unwrap();
        assert!(
            svg.starts_with("<svg")
                && svg.contains("<polyline")
                && svg.trim_end().ends_with("</svg>")
        );
    }

    // Resume: nothing is rescored; a torn last line (a kill mid-write) is redone, same result.
    let before = fs::read_to_string(out.join("reviews.jsonl")).unwrap();
    let o = eval(&dir, &[]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stderr(&o).contains("resuming: 5 of 5"), "{}", stderr(&o));
    assert_eq!(
        fs::read_to_string(out.join("reviews.jsonl")).unwrap(),
        before
    );
    fs::write(out.join("reviews.jsonl"), &before[..before.len() - 20]).unwrap();
    let o = eval(&dir, &[]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stderr(&o).contains("resuming: 4 of 5"), "{}", stderr(&o));
    assert_eq!(
        fs::read_to_string(out.join("reviews.jsonl")).unwrap(),
        before
    );
    // Same seed, same interval.
    let again: Value = serde_json::from_slice(&fs::read(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(again["conditions"], report["conditions"]);
}

#[test]
fn bad_manifests_are_refused_with_exit_3_and_nothing_written() {
    let dir = temp_dir("eval-bad");
    let cases: [(&str, &str); 5] = [
        ("empty", ""),
        ("bad_label", "{\"paper\": \"a\", \"label\": \"maybe\", \"text\": \"x\"}\n"),
        ("neither_text_nor_file", "{\"paper\": \"a\", \"label\": \"null\"}\n"),
        ("missing_file", "{\"paper\": \"a\", \"label\": \"null\", \"file\": \"missing.md\"}\n"),
        (
            "duplicate_review",
            "{\"paper\": \"a\", \"label\": \"null\", \"text\": \"x\"}\n{\"paper\": \"a\", \"label\": \"null\", \"text\": \"y\"}\n",
        ),
    ];
    for (name, manifest) in cases {
        fs::write(dir.join("manifest.jsonl"), manifest).unwrap();
        assert_cli_snapshot!(format!("bad_manifest_{name}"), eval_cmd(&dir, &[]));
        assert!(!dir.join("out").exists(), "{name}: nothing written");
    }
    // A bundle that does not exist.
    fs::write(
        dir.join("manifest.jsonl"),
        "{\"paper\": \"a\", \"label\": \"null\", \"text\": \"x\"}\n",
    )
    .unwrap();
    assert_cli_snapshot!(
        "bad_manifest_bundle_missing",
        semtrace_cmd(
            &[
                "eval",
                "--reviews",
                dir.join("manifest.jsonl").to_str().unwrap(),
                "--bundles",
                dir.to_str().unwrap(),
                "--out",
                dir.join("out").to_str().unwrap(),
            ],
            &dir,
        )
    );
    assert!(!dir.join("out").exists(), "nothing written");
}

#[test]
fn papers_mode_reads_protected_pdfs_and_embeds_each_baseline_carrier_the_same_way() {
    use semtrace_core::carrier::occurrences;
    use semtrace_e2e::llm::FakeLlm;
    use semtrace_e2e::pdfcheck::pdftotext_pages;
    use semtrace_eval::icw::{IcwKind, IcwSecret};

    // A fixed-answer OpenAI-compatible endpoint: this test is about what the reviewer is shown.
    let llm = FakeLlm::start("ok");
    let dir = temp_dir("eval-pdf");
    let original = shared().join("corpus/papers-with-reviews/attention.pdf");
    let bundle = root().join(BUNDLE);
    let prot = dir.join("protected.pdf");
    let o = semtrace(
        &[
            "protect",
            original.to_str().unwrap(),
            "--bundle",
            bundle.to_str().unwrap(),
            "--out",
            prot.to_str().unwrap(),
        ],
        &dir,
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    fs::write(dir.join("icw.key"), "venue secret\n").unwrap();
    let manifest = |protected: &Path| {
        let line = serde_json::json!({"paper": "attention", "original": original, "bundle": bundle, "protected": protected});
        fs::write(dir.join("papers.jsonl"), format!("{line}\n")).unwrap();
    };
    let run_cmd = |out: &str| {
        semtrace_cmd(
            &[
                "eval",
                "--papers",
                dir.join("papers.jsonl").to_str().unwrap(),
                "--out",
                dir.join(out).to_str().unwrap(),
                "--llm-url",
                &llm.url(),
                "--llm-model",
                "fake",
                "--draws",
                "1",
                "--fast",
                "--resamples",
                "50",
                "--baselines",
                "unicode,acrostic",
                "--icw-key-file",
                dir.join("icw.key").to_str().unwrap(),
            ],
            &dir,
        )
    };
    let run = |out: &str| run_cmd(out).output().expect("run semtrace");
    manifest(&prot);
    let o = run("out");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = dir.join("out");
    let recs = json_lines_file(&out.join("reviews.jsonl"));
    assert_eq!(recs.len(), 6, "3 methods × (positive, null)");
    let src = |id: &str| {
        recs.iter().find(|r| r["id"] == id).unwrap()["source"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(src("semtrace/clean/attention/positive/0").contains("protected copy"));
    // Each baseline's carrier sits in its own protected copy, which poppler reads back exactly once.
    let doc_sha = semtrace_core::bundle::Bundle::from_json(&fs::read_to_string(&bundle).unwrap())
        .unwrap()
        .document
        .sha256;
    for (kind, name) in [
        (IcwKind::Unicode, "icw-unicode"),
        (IcwKind::Acrostic, "icw-acrostic"),
    ] {
        let carrier = IcwSecret::derive(kind, b"venue secret", &doc_sha)
            .unwrap()
            .carrier_text();
        let copy = out.join("protected").join(format!("attention-{name}.pdf"));
        let text = pdftotext_pages(&copy).join("\n");
        assert_eq!(
            occurrences(&text, &carrier),
            1,
            "{name}: carrier in {}",
            copy.display()
        );
        assert!(src(&format!("{name}/clean/attention/positive/0")).contains(copy.to_str().unwrap()));
    }
    let report: Value =
        serde_json::from_slice(&fs::read(out.join("report.json")).unwrap()).unwrap();
    let methods: Vec<&str> = report["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["method"].as_str().unwrap())
        .collect();
    assert_eq!(methods, ["semtrace", "icw-unicode", "icw-acrostic"]);

    // A "protected" copy without the carrier is refused before any generation.
    manifest(&original);
    assert_cli_snapshot!("protected_copy_without_carrier", run_cmd("out-bad"));
}
