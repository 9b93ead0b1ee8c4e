//! `semtrace detect` end to end: real model, real reviews, and every kind of bad input.

use std::fs;

use semtrace_e2e::*;

const BUNDLE: &str = "tests/fixtures/sample-bundle.json";

/// `semtrace detect --bundle BUNDLE --json -q ARGS…`: its exit status and its JSON lines.
fn detect_json(
    args: &[&str],
    dir: &std::path::Path,
) -> (std::process::Output, Vec<serde_json::Value>) {
    let mut all = vec!["detect", "--bundle", BUNDLE, "--json", "-q"];
    all.extend_from_slice(args);
    let o = semtrace(&all, dir, None);
    let lines = json_lines(&stdout(&o));
    (o, lines)
}

fn json_lines(out: &str) -> Vec<serde_json::Value> {
    out.lines()
        .map(|l| serde_json::from_str(l).expect("each stdout line is JSON"))
        .collect()
}

#[test]
fn json_lines_report_for_a_real_human_review_and_the_sample_review() {
    let dir = temp_dir("detect-json");
    let human = dir.join("human.md");
    fs::write(&human, attention_human_review()).unwrap();
    let (o, lines) = detect_json(
        &["tests/fixtures/sample-review.md", human.to_str().unwrap()],
        &dir,
    );
    assert_eq!(lines.len(), 2, "{}", stderr(&o));
    for r in &lines {
        for field in [
            "verdict",
            "score",
            "observed",
            "matched",
            "p_value",
            "eligible",
            "positions",
            "windows",
            "model",
        ] {
            assert!(r.get(field).is_some(), "missing {field} in {r}");
        }
        let (o_, m) = (
            r["observed"].as_i64().unwrap(),
            r["matched"].as_i64().unwrap(),
        );
        if r["eligible"].as_bool().unwrap() {
            assert_eq!(r["score"].as_i64().unwrap(), 2 * m - o_);
        } else {
            assert_eq!(r["score"].as_i64().unwrap(), -13);
        }
        let positions = r["positions"].as_array().unwrap();
        assert_eq!(positions.len(), 12);
        let nw = r["windows"].as_array().unwrap().len();
        for p in positions {
            for s in ["s0", "s1"] {
                let v = p[s].as_f64().unwrap();
                assert!((0.0..=1.0).contains(&v));
            }
            let d = p["decision"].as_str().unwrap();
            assert!(["0", "1", "?"].contains(&d));
            assert_eq!(d == "?", !p["erasure"].is_null());
            if let Some(w) = p["evidence_window"].as_u64() {
                assert!((w as usize) < nw);
            }
        }
        assert_eq!(r["model"]["hash_matches"], true);
    }
    // The real human review was written without the carrier: it must not be called exposed.
    assert_ne!(lines[1]["verdict"], "exposed", "{}", lines[1]);
    // The sample review expresses the codeword-selected facts in their slots.
    assert_eq!(lines[0]["verdict"], "exposed", "{}", lines[0]);
    assert_eq!(o.status.code(), Some(1), "exit 1 when a review is exposed");
}

#[test]
fn table_output_stdin_and_directories() {
    let dir = temp_dir("detect-table");
    let reviews = dir.join("reviews");
    fs::create_dir_all(&reviews).unwrap();
    fs::write(
        reviews.join("a.txt"),
        "The paper is about translation. It is well written.",
    )
    .unwrap();
    fs::write(reviews.join("ignored.pdf"), "x").unwrap();
    let o = semtrace(
        &["detect", "-b", BUNDLE, "-q", reviews.to_str().unwrap(), "-"],
        &dir,
        Some(b"Short review from stdin. Nothing else."),
    );
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(out.contains("a.txt") && out.contains("review:  -"), "{out}");
    assert!(!out.contains("ignored.pdf"));
    assert!(out.contains("ineligible"), "{out}");
    assert!(out.contains("summary-1") && out.contains("weakness-3"));
}

#[test]
fn empty_review_is_ineligible_not_an_error() {
    let dir = temp_dir("detect-empty");
    let f = dir.join("empty.md");
    fs::write(&f, "").unwrap();
    let o = semtrace(
        &["detect", "-b", BUNDLE, "--json", "-q", f.to_str().unwrap()],
        &dir,
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = &json_lines(&stdout(&o))[0];
    assert_eq!(r["verdict"], "ineligible");
    assert_eq!(r["observed"], 0);
    assert_eq!(r["pairs_scored"], 0);
}

#[test]
fn bad_reviews_get_clear_errors_and_exit_3() {
    let dir = temp_dir("detect-bad-review");
    let bin = dir.join("binary.txt");
    fs::write(&bin, [0x7f, b'E', b'L', b'F', 0, 0, 1]).unwrap();
    let latin1 = dir.join("latin1.txt");
    fs::write(&latin1, b"caf\xe9 au lait").unwrap();
    let giant = dir.join("giant.txt");
    fs::write(&giant, "This is a sentence. ".repeat(10 * 1024 * 1024 / 20)).unwrap();
    for (name, file) in [
        ("binary", &bin),
        ("latin1", &latin1),
        ("giant", &giant),
        ("missing", &dir.join("missing.txt")),
    ] {
        let args = [
            "detect",
            "-b",
            BUNDLE,
            "--json",
            "-q",
            file.to_str().unwrap(),
        ];
        assert_cli_snapshot!(format!("bad_review_{name}"), semtrace_cmd(&args, &dir));
        // The JSON line on stdout carries the error that stderr shows; no panic.
        let o = semtrace(&args, &dir, None);
        assert!(!stderr(&o).contains("panicked"), "{name}: {}", stderr(&o));
        let line = &json_lines(&stdout(&o))[0];
        let error = line["error"].as_str().expect("an error field");
        assert!(
            stderr(&o).contains(error),
            "{name}: {line} vs {}",
            stderr(&o)
        );
    }
    // The giant file is refused by its real size, in the text output too.
    assert_cli_snapshot!(
        "bad_review_giant_text",
        semtrace_cmd(
            &["detect", "-b", BUNDLE, "-q", giant.to_str().unwrap()],
            &dir
        )
    );
    // Oversized standard input (one byte over the limit, all of it read) is refused too. It comes
    // from a file: bytes given with `stdin =` would be recorded in the snapshot's header.
    let big = dir.join("big-stdin.txt");
    fs::write(
        &big,
        vec![b'a'; semtrace_core::params::MAX_REVIEW_BYTES + 1],
    )
    .unwrap();
    let mut cmd = semtrace_cmd(&["detect", "-b", BUNDLE, "-q", "-"], &dir);
    cmd.stdin(fs::File::open(&big).unwrap());
    assert_cli_snapshot!("bad_review_stdin_too_big", cmd);
}

#[test]
fn bad_bundles_get_clear_errors_and_exit_3() {
    let dir = temp_dir("detect-bad-bundle");
    let good: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(root().join(BUNDLE)).unwrap()).unwrap();
    let text = good.to_string();
    let mut v2 = good.clone();
    v2["format_version"] = "2.0".into();
    let mut unbalanced = good.clone();
    unbalanced["codeword"] = serde_json::json!([1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0]);
    let cases: Vec<(&str, String)> = vec![
        ("truncated", text[..text.len() / 2].to_string()),
        ("v2", v2.to_string()),
        ("unbalanced", unbalanced.to_string()),
        ("not-a-bundle", "{\"hello\": 1}".into()),
    ];
    let review = root().join("tests/fixtures/sample-review.md");
    for (name, body) in cases {
        let f = dir.join(format!("{name}.json"));
        fs::write(&f, body).unwrap();
        let args = [
            "detect",
            "-b",
            f.to_str().unwrap(),
            review.to_str().unwrap(),
        ];
        assert_cli_snapshot!(format!("bad_bundle_{name}"), semtrace_cmd(&args, &dir));
    }
}

#[test]
fn a_model_other_than_the_bundles_is_refused_unless_allowed() {
    let dir = temp_dir("detect-mismatch");
    let review = root().join("tests/fixtures/sample-review.md");
    let other = standin_model();
    let args = [
        "detect",
        "-b",
        BUNDLE,
        "--model",
        other.to_str().unwrap(),
        review.to_str().unwrap(),
    ];
    assert_cli_snapshot!("model_mismatch_refused", semtrace_cmd(&args, &dir));

    // Allowed: the stand-in is slow (fixed 160-token graph), so give it a two-sentence review.
    let short = dir.join("short.md");
    fs::write(
        &short,
        "The encoder stacks six identical layers. Training used eight P100 GPUs.",
    )
    .unwrap();
    let o = semtrace(
        &[
            "detect",
            "-b",
            BUNDLE,
            "--model",
            other.to_str().unwrap(),
            "--allow-model-mismatch",
            "--json",
            "-q",
            short.to_str().unwrap(),
        ],
        &dir,
        None,
    );
    assert!(
        o.status.success() || o.status.code() == Some(1),
        "{}",
        stderr(&o)
    );
    let r = &json_lines(&stdout(&o))[0];
    assert_eq!(r["model"]["hash_matches"], false);
    assert_eq!(r["model"]["mismatch_overridden"], true);
    assert!(stderr(&o).contains("warning"), "{}", stderr(&o));
}

#[test]
fn help_explains_exit_codes() {
    let dir = temp_dir("detect-help");
    assert_cli_snapshot!("help", semtrace_cmd(&["--help"], &dir));
    assert_cli_snapshot!("detect_help", semtrace_cmd(&["detect", "--help"], &dir));
    assert_cli_snapshot!("detect_without_arguments", semtrace_cmd(&["detect"], &dir));
}

#[test]
fn fast_decoder_agrees_on_the_sample_review_and_checks_its_verdict_exhaustively() {
    let dir = temp_dir("detect-fast");
    let review = std::path::Path::new("tests/fixtures/sample-review.md");
    let run = |decoder: &str| detect_report(BUNDLE, review, decoder, &dir);
    let fast = run("fast");
    let exhaustive = run("exhaustive");
    assert_eq!(fast["decoder"], "fast");
    assert_eq!(exhaustive["decoder"], "exhaustive");
    // The sample review expresses the codeword: its observed positions reach the verdict margin
    // of eligibility, so the fast decoder's last rounds score every pair that could change a
    // decision, and its decisions and verdict are the exhaustive decoder's by construction,
    // without the pairs that could only raise a decided bit's own side.
    assert!(fast["observed"].as_u64().unwrap() + 3 >= 8, "{fast}");
    assert!(
        fast["pairs_scored"].as_u64().unwrap() < exhaustive["pairs_scored"].as_u64().unwrap(),
        "{} {}",
        fast["pairs_scored"],
        exhaustive["pairs_scored"]
    );
    for key in ["verdict", "score", "observed", "matched"] {
        assert_eq!(fast[key], exhaustive[key], "{key}");
    }
    let decisions = |r: &serde_json::Value| -> Vec<String> {
        r["positions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["decision"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(decisions(&fast), decisions(&exhaustive));

    // The leaner budget (rounds 3 and 4 off) finds the same windows for far fewer pairs here.
    let (_, lean) = detect_json(
        &[
            "--decoder",
            "fast",
            "--fast-hub-threshold",
            "0.005",
            "--fast-escalate",
            "off",
            "--fast-verdict-margin",
            "off",
            review.to_str().unwrap(),
        ],
        &dir,
    );
    let lean = &lean[0];
    assert!(
        lean["pairs_scored"].as_u64().unwrap() * 2 < exhaustive["pairs_scored"].as_u64().unwrap(),
        "lean {} vs exhaustive {} pairs",
        lean["pairs_scored"],
        exhaustive["pairs_scored"]
    );
    assert_eq!(decisions(lean), decisions(&exhaustive));
    assert_eq!(lean["verdict"], exhaustive["verdict"]);
    let args = [
        "detect",
        "--bundle",
        BUNDLE,
        "--fast-escalate",
        "2",
        review.to_str().unwrap(),
    ];
    assert_cli_snapshot!("fast_escalate_not_a_probability", semtrace_cmd(&args, &dir));
    // With the exhaustive decoder the budget flags are ignored, with a warning; the report is
    // the exhaustive one.
    let (o, ignored) = detect_json(&["--fast-top", "1", review.to_str().unwrap()], &dir);
    assert!(
        stderr(&o).contains("only apply to --decoder fast"),
        "{}",
        stderr(&o)
    );
    assert_eq!(ignored[0]["pairs_scored"], exhaustive["pairs_scored"]);

    // A real human review of the bundle's own paper (written without the protected copy) observes
    // few positions: no round 4, far fewer pairs,
    // the same decisions.
    let human = dir.join("human.md");
    fs::write(&human, attention_human_review()).unwrap();
    let fast = detect_report(BUNDLE, &human, "fast", &dir);
    let exhaustive = detect_report(BUNDLE, &human, "exhaustive", &dir);
    let windows = fast["windows"].as_array().unwrap().len() as u64;
    assert_eq!(exhaustive["pairs_scored"].as_u64().unwrap(), 24 * windows);
    assert!(
        fast["pairs_scored"].as_u64().unwrap() * 2 < 24 * windows,
        "fast {} pairs over {windows} windows",
        fast["pairs_scored"]
    );
    assert_eq!(decisions(&fast), decisions(&exhaustive));
    assert_eq!(fast["verdict"], exhaustive["verdict"]);
}

/// `--safeguard` (beyond the paper) reads the same scores: the same pairs are scored, a side's
/// support can only go down, the report names the rule; a malformed rule is a usage error.
#[test]
fn safeguard_reads_the_same_scores_and_is_named_in_the_report() {
    let home = temp_dir("detect-safeguard");
    let review = root().join("tests/fixtures/sample-review.md");
    let run = |extra: &[&str]| {
        let mut a = vec![
            "detect",
            "--bundle",
            BUNDLE,
            "--json",
            "-q",
            review.to_str().unwrap(),
        ];
        a.extend_from_slice(extra);
        semtrace(&a, &home, None)
    };
    let parse = |o: &std::process::Output| -> serde_json::Value {
        assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(o));
        serde_json::from_str(stdout(o).lines().next().unwrap()).unwrap()
    };
    let paper = parse(&run(&[]));
    assert!(paper.get("safeguard").is_none());
    let g = parse(&run(&["--safeguard", "top-2+exclusive"]));
    assert_eq!(g["safeguard"], "top-2+exclusive");
    assert_eq!(g["pairs_scored"], paper["pairs_scored"]);
    assert_eq!(
        g["positions"].as_array().unwrap().len(),
        paper["positions"].as_array().unwrap().len()
    );
    for (a, b) in g["positions"]
        .as_array()
        .unwrap()
        .iter()
        .zip(paper["positions"].as_array().unwrap())
    {
        for s in ["s0", "s1"] {
            assert!(
                a[s].as_f64().unwrap() <= b[s].as_f64().unwrap(),
                "{a} vs {b}"
            );
        }
    }
    let args = [
        "detect",
        "--bundle",
        BUNDLE,
        review.to_str().unwrap(),
        "--safeguard",
        "top-0",
    ];
    assert_cli_snapshot!("safeguard_unknown", semtrace_cmd(&args, &home));
}
