//! Venue batch end to end with the real default model: `detect --manifest` (Holm, BH, outputs),
//! two shard processes at once + `merge` giving the same venue file, resume after a torn line,
//! and the manifest errors a venue meets (nothing written for them).

use std::fs;
use std::path::Path;
use std::process::Command;

use semtrace_e2e::{assert_cli_snapshot, root, semtrace, semtrace_cmd, shared, stderr, temp_dir};

fn venue_rows(dir: &Path) -> Vec<serde_json::Value> {
    fs::read_to_string(dir.join("venue.jsonl"))
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Three reviews: the sample review of the sample bundle (it states 9 of the copy's facts) and
/// the first ~250 words of two LLM-written reviews of originals against their frozen bundles.
fn manifest(home: &Path) -> std::path::PathBuf {
    let fx = root().join("tests/fixtures");
    fs::copy(fx.join("sample-review.md"), home.join("sample.md")).unwrap();
    fs::copy(fx.join("sample-bundle.json"), home.join("sample.json")).unwrap();
    let llm = shared().join("corpus/llm-reviews");
    let mut lines = vec![r#"{"review": "sample.md", "bundle": "sample.json"}"#.to_string()];
    for paper in [
        "001-word2vec-efficient-estimation",
        "003-faruqui-dyer-multilingual-eacl14",
    ] {
        let text = fs::read_to_string(llm.join(format!("reviews/{paper}.null.txt"))).unwrap();
        let short: Vec<&str> = text.split_whitespace().take(250).collect();
        fs::write(home.join(format!("{paper}.txt")), short.join(" ")).unwrap();
        lines.push(
            serde_json::json!({"review": format!("{paper}.txt"),
                "bundle": llm.join(format!("bundles/{paper}.json"))})
            .to_string(),
        );
    }
    let m = home.join("venue.jsonl");
    fs::write(&m, lines.join("\n") + "\n").unwrap();
    m
}

/// `semtrace detect --manifest M --out OUT --allow-model-mismatch EXTRA…`.
fn batch_cmd(m: &Path, out: &Path, extra: &[&str], home: &Path) -> Command {
    let mut args = vec![
        "detect",
        "--manifest",
        m.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        // The frozen llm-reviews bundles record the model they were built with.
        "--allow-model-mismatch",
    ];
    args.extend_from_slice(extra);
    semtrace_cmd(&args, home)
}

fn batch(m: &Path, out: &Path, extra: &[&str], home: &Path) -> std::process::Output {
    batch_cmd(m, out, extra, home)
        .output()
        .expect("run semtrace")
}

#[test]
fn venue_batch_shards_merge_and_resume() {
    let home = temp_dir("venue-batch");
    let m = manifest(&home);
    let whole = home.join("whole");
    let o = batch(&m, &whole, &["-q"], &home);
    // The sample review is flagged at FWER 0.01, so the exit code is 1.
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let rows = venue_rows(&whole);
    assert_eq!(rows.len(), 3);
    let p: Vec<f64> = rows
        .iter()
        .map(|r| r["p_value"].as_f64().unwrap())
        .collect();
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r["line"], i + 1);
        let (h, q) = (r["holm_p"].as_f64().unwrap(), r["bh_q"].as_f64().unwrap());
        assert!(p[i] <= q && q <= h && h <= 1.0, "{r}");
        assert_eq!(r["flag_fwer"], h <= 0.01);
        assert_eq!(r["flag_fdr"], q <= 0.05);
        assert_eq!(r["manifest_reviews"], 3);
    }
    // Holm with m = 3: the smallest p is multiplied by 3 (nothing smaller before it).
    let min = p.iter().cloned().fold(1.0, f64::min);
    let at = p.iter().position(|&x| x == min).unwrap();
    assert!((rows[at]["holm_p"].as_f64().unwrap() - (3.0 * min).min(1.0)).abs() < 1e-12);
    assert_eq!(rows[0]["verdict"], "exposed", "{}", rows[0]);
    assert_eq!(rows[0]["flag_fwer"], true);
    let summary = fs::read_to_string(whole.join("summary.md")).unwrap();
    assert!(
        summary.contains("flagged at family-wise error rate 0.01 (Holm): **1**"),
        "{summary}"
    );
    assert!(summary.contains("sample.md"));
    let svg = fs::read_to_string(whole.join("p-values.svg")).unwrap();
    assert_eq!(svg.matches("<rect").count(), 20);

    // Two shard processes at once, then merge: the same venue file.
    let sharded = home.join("sharded");
    std::thread::scope(|s| {
        for shard in ["1/2", "2/2"] {
            let (m, sharded, home) = (&m, &sharded, &home);
            s.spawn(move || {
                let o = batch(m, sharded, &["--shard", shard, "-q"], home);
                assert_eq!(o.status.code(), Some(0), "{shard}: {}", stderr(&o));
            });
        }
    });
    let s1 = sharded.join("shard-1-of-2.jsonl");
    let s2 = sharded.join("shard-2-of-2.jsonl");
    assert_eq!(fs::read_to_string(&s1).unwrap().lines().count(), 2);
    assert_eq!(fs::read_to_string(&s2).unwrap().lines().count(), 1);
    let merged = home.join("merged");
    let o = semtrace(
        &[
            "merge",
            s1.to_str().unwrap(),
            s2.to_str().unwrap(),
            "--out",
            merged.to_str().unwrap(),
        ],
        &home,
        None,
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(venue_rows(&merged), rows);
    // A missing shard, or one given twice, is refused and nothing is written.
    for (name, shards) in [
        ("merge_shard_missing", vec![&s1]),
        ("merge_shard_twice", vec![&s1, &s2, &s2]),
    ] {
        let out = home.join("bad-merge");
        let mut args = vec!["merge"];
        args.extend(shards.iter().map(|p| p.to_str().unwrap()));
        args.extend(["--out", out.to_str().unwrap()]);
        assert_cli_snapshot!(name, semtrace_cmd(&args, &home));
        assert!(!out.exists(), "{name}: nothing written");
    }

    // Resume: the first finished line plus a torn one, as a kill leaves them.
    let resumed = home.join("resumed");
    fs::create_dir_all(&resumed).unwrap();
    let first = fs::read_to_string(whole.join("results.jsonl")).unwrap();
    let first = first.lines().next().unwrap();
    fs::write(
        resumed.join("results.jsonl"),
        format!("{first}\n{}", &first[..first.len() / 2]),
    )
    .unwrap();
    let o = batch(&m, &resumed, &[], &home);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("resuming: 1 of 3 reviews already decoded"),
        "{}",
        stderr(&o)
    );
    assert_eq!(venue_rows(&resumed), rows);
}

#[test]
fn manifest_errors_are_refused_before_anything_is_written() {
    let home = temp_dir("venue-errors");
    let m = manifest(&home);
    let good = fs::read_to_string(&m).unwrap();
    let first = good.lines().next().unwrap().to_string();
    let other_bundle = good
        .lines()
        .nth(1)
        .unwrap()
        .replace("001-word2vec-efficient-estimation.txt", "sample.md");
    for (name, body) in [
        (
            "manifest_review_missing",
            r#"{"review": "gone.txt", "bundle": "sample.json"}"#.to_string(),
        ),
        (
            "manifest_bundle_missing",
            r#"{"review": "sample.md", "bundle": "nope.json"}"#.to_string(),
        ),
        (
            "manifest_review_with_two_bundles",
            format!("{first}\n{other_bundle}"),
        ),
        ("manifest_review_twice", format!("{first}\n{first}")),
        (
            "manifest_recipient_without_recipients",
            r#"{"review": "sample.md", "bundle": "sample.json", "recipient": "reviewer-2"}"#
                .to_string(),
        ),
        (
            "manifest_line_without_review",
            r#"{"bundle": "sample.json"}"#.to_string(),
        ),
        ("manifest_empty", String::new()),
    ] {
        let bad = home.join("bad.jsonl");
        fs::write(&bad, body).unwrap();
        let out = home.join("out");
        assert_cli_snapshot!(name, batch_cmd(&bad, &out, &["-q"], &home));
        assert!(!out.exists(), "{name}: nothing written");
    }
    // Usage errors: --manifest without --out, a bad shard.
    assert_cli_snapshot!(
        "manifest_without_out",
        semtrace_cmd(&["detect", "--manifest", m.to_str().unwrap()], &home)
    );
    assert_cli_snapshot!(
        "manifest_bad_shard",
        semtrace_cmd(
            &[
                "detect",
                "--manifest",
                m.to_str().unwrap(),
                "--out",
                "x",
                "--shard",
                "3/2",
            ],
            &home,
        )
    );
}
