//! `semtrace bench`: the figures it prints come from real runs of the default model. Timings are
//! only checked to be present and positive (speed goals are read from the benchmark, not tested);
//! what is asserted is the bookkeeping: pair counts, budgets, the agreement count and the cache.

use std::fs;

use semtrace_e2e::*;

const BUNDLE: &str = "tests/fixtures/sample-bundle.json";

fn bench_json(args: &[&str], home: &std::path::Path) -> serde_json::Value {
    let mut all = vec!["bench", "--bundle", BUNDLE, "--json"];
    all.extend_from_slice(args);
    let o = semtrace(&all, home, None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    serde_json::from_str(stdout(&o).trim()).expect("one JSON summary")
}

fn agreement_figures(v: &serde_json::Value) -> (u64, u64, u64, u64) {
    let n = |k: &str| v[k].as_u64().unwrap_or_else(|| panic!("{k} in {v}"));
    (
        n("positions"),
        n("positions_agree"),
        n("pairs_fast"),
        n("pairs_exhaustive"),
    )
}

/// The cached exhaustive reports (not their `.probs.json` companions).
fn cached_reports(cache: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = fs::read_dir(cache)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| !p.to_string_lossy().ends_with(".probs.json"))
        .collect();
    v.sort();
    v
}

#[test]
fn agreement_budgets_and_the_exhaustive_cache() {
    let home = temp_dir("bench-agreement");
    let reviews = home.join("reviews");
    fs::create_dir_all(&reviews).unwrap();
    fs::copy(
        root().join("tests/fixtures/sample-review.md"),
        reviews.join("a.md"),
    )
    .unwrap();
    let cache = home.join("cache");
    let cache_s = cache.to_str().unwrap();
    let reviews_s = reviews.to_str().unwrap();
    let agreement = |budget: &[&str]| {
        let mut args = vec![
            "--agreement",
            "--reviews",
            reviews_s,
            "--limit",
            "1",
            "--cache",
            cache_s,
        ];
        args.extend_from_slice(budget);
        bench_json(&args, &home)
    };
    // Rounds 1 and 2 only (rounds 3 and 4 off): the budget flags decide the pairs.
    let run = |top: &str, extend: &str, probes: &str| {
        agreement(&[
            "--fast-top",
            top,
            "--fast-extend",
            extend,
            "--fast-probes",
            probes,
            "--fast-escalate",
            "off",
            "--fast-verdict-margin",
            "off",
        ])
    };

    let small = run("1", "0", "0");
    assert_eq!(small["fast_top"], 1);
    assert_eq!(small["fast_extend"], 0);
    assert_eq!(small["fast_probes"], 0);
    assert!(small["fast_escalate"].is_null() && small["fast_verdict_margin"].is_null());
    assert_eq!(small["jobs"], 1);
    let (positions, agree, fast, exhaustive) = agreement_figures(&small);
    assert_eq!(positions, 12, "K = 12 positions of the sample bundle");
    assert!(agree <= positions);
    // Budget 1 + 0, no probes: at most one window per fact reaches the cross-encoder.
    assert!(fast <= 24, "{fast} pairs for 24 facts at one window each");
    assert!(fast < exhaustive, "fast {fast} vs exhaustive {exhaustive}");
    assert!(
        small["exhaustive_mean_s"].as_f64().unwrap() > 0.0,
        "first run decodes exhaustively"
    );
    let reports = cached_reports(&cache);
    assert_eq!(reports.len(), 1, "one cached exhaustive report");
    // Beside it, every probability of that run, for offline replay (scripts/replay_fast.py).
    let probs: serde_json::Value =
        serde_json::from_slice(&fs::read(reports[0].with_extension("probs.json")).unwrap())
            .unwrap();
    assert_eq!(probs["facts"].as_array().unwrap().len(), 24);
    assert_eq!(probs["pairs"].as_array().unwrap().len() as u64, exhaustive);
    let windows = probs["windows"].as_array().unwrap().len() as u64;
    assert_eq!(windows * 24, exhaustive, "every window x every fact");
    // The row names that file, so a replay can be restricted to a run's own jobs.
    assert_eq!(
        cache.join(small["rows"][0]["cached_probs"].as_str().unwrap()),
        reports[0].with_extension("probs.json")
    );

    // Second run: the exhaustive report comes from the cache (no timing), the fast side uses the
    // larger budget and a probe per window, scores more pairs and agrees at least as well on
    // this review written from the facts' own words.
    let large = run("3", "3", "1");
    assert_eq!(large["fast_probes"], 1);
    assert!(
        large["exhaustive_mean_s"].is_null(),
        "cached: {}",
        large["exhaustive_mean_s"]
    );
    let (positions2, agree2, fast2, exhaustive2) = agreement_figures(&large);
    assert_eq!((positions2, exhaustive2), (positions, exhaustive));
    assert!(
        fast2 > fast && fast2 <= exhaustive,
        "budget 3+3 and probes score more pairs: {fast2} vs {fast} (exhaustive {exhaustive})"
    );
    assert_eq!(agree2, 12, "{large}");
    assert_eq!(large["verdicts_agree"], 1);
    let row = &large["rows"][0];
    assert_eq!(row["positions_same"], 12);
    assert!(row["differences"].as_array().unwrap().is_empty());

    // The default budget: this review observes every position, within the verdict margin of
    // o_min, so rounds 4–5 score every pair that could change a decision: every decision is the
    // exhaustive decoder's, for fewer pairs than every pair.
    let default = agreement(&[]);
    assert_eq!(default["fast_verdict_margin"], 3);
    assert!((default["fast_escalate"].as_f64().unwrap() - 0.005).abs() < 1e-6);
    let (positions3, agree3, fast3, exhaustive3) = agreement_figures(&default);
    assert_eq!((positions3, agree3, exhaustive3), (12, 12, exhaustive));
    assert!(
        fast3 < exhaustive,
        "rounds 4-5: {fast3} pairs (budget 3+3: {fast2}, exhaustive {exhaustive})"
    );

    // A cache entry that is not a report is ignored and recomputed, not trusted.
    let entry = &cached_reports(&cache)[0];
    fs::write(entry, b"{ not a report").unwrap();
    let again = run("3", "3", "1");
    assert!(again["exhaustive_mean_s"].as_f64().unwrap() > 0.0);
    assert_eq!(agreement_figures(&again), agreement_figures(&large));
}

/// `--all-facts`: the throughput pairs are what the exhaustive decoder scores, each window against
/// every fact of the bundle in turn (the fair load for a split model, whose lower states are per
/// window and per fact), where the default pairs one window with one fact.
#[test]
fn all_facts_pairs_each_window_with_every_fact() {
    let home = temp_dir("bench-all-facts");
    let dump = home.join("pairs.json");
    let bundle: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(root().join(BUNDLE)).unwrap()).unwrap();
    let n_facts = bundle["positions"].as_array().unwrap().len() * 2;
    let v = bench_json(
        &[
            "--reviews",
            "tests/fixtures/sample-review.md",
            "--limit",
            "0",
            "--pairs",
            &(n_facts + 3).to_string(),
            "--all-facts",
            "--dump-pairs",
            dump.to_str().unwrap(),
        ],
        &home,
    );
    assert_eq!(v["engine_pairs"], n_facts + 3);
    let d: serde_json::Value = serde_json::from_slice(&fs::read(&dump).unwrap()).unwrap();
    let pairs = d["pairs"].as_array().unwrap();
    let text = |i: usize, k: &str| pairs[i][k].as_str().unwrap().to_string();
    let facts: std::collections::BTreeSet<String> =
        (0..n_facts).map(|i| text(i, "hypothesis")).collect();
    assert_eq!(
        facts.len(),
        n_facts,
        "the first window meets every fact once"
    );
    assert!((0..n_facts).all(|i| text(i, "premise") == text(0, "premise")));
    assert_ne!(
        text(n_facts, "premise"),
        text(0, "premise"),
        "then the next window"
    );
    assert_eq!(text(n_facts, "hypothesis"), text(0, "hypothesis"));
}

#[test]
fn engine_throughput_and_dumped_pairs() {
    let home = temp_dir("bench-engine");
    let dump = home.join("pairs.json");
    let v = bench_json(
        &[
            "--reviews",
            "tests/fixtures/sample-review.md",
            "--limit",
            "1",
            "--pairs",
            "8",
            "--dump-pairs",
            dump.to_str().unwrap(),
            "--profile-ops",
        ],
        &home,
    );
    assert_eq!(v["engine_pairs"], 8);
    assert!(v["engine_pairs_per_s"].as_f64().unwrap() > 0.0);
    // The op profile covers the real plan: the BERT graph's matmuls, softmax and the project's own
    // mask add, each layer's copies folded into one row (6 layers: 6 softmax evaluations per batch).
    let prof = &v["op_profile"];
    let ops = prof["ops"].as_array().unwrap();
    let total: f64 = ops.iter().map(|o| o["seconds"].as_f64().unwrap()).sum();
    assert!(
        (total - prof["seconds"].as_f64().unwrap()).abs() < 1e-9 && total > 0.0,
        "{prof}"
    );
    let row = |op: &str| {
        ops.iter()
            .find(|o| o["op"] == op)
            .unwrap_or_else(|| panic!("no {op} in {prof}"))
    };
    assert!(row("OptMatMul")["seconds"].as_f64().unwrap() > 0.0);
    assert!(row("MaskRowAdd")["calls"].as_u64().unwrap() >= 6);
    assert_eq!(row("Softmax")["calls"].as_u64().unwrap() % 6, 0, "{prof}");
    assert!(
        ops.iter()
            .all(|o| !o["role"].as_str().unwrap().contains("_1")),
        "{prof}"
    );
    // --profile-nodes keeps each layer's nodes apart: the 6 softmax nodes are 6 rows of one call each.
    let v = bench_json(
        &[
            "--reviews",
            "tests/fixtures/sample-review.md",
            "--limit",
            "0",
            "--pairs",
            "1",
            "--profile-ops",
            "--profile-nodes",
        ],
        &home,
    );
    let nodes = v["op_profile"]["ops"].as_array().unwrap();
    let softmax: Vec<_> = nodes.iter().filter(|o| o["op"] == "Softmax").collect();
    assert_eq!(softmax.len(), 6, "{nodes:?}");
    assert!(softmax.iter().all(|o| o["calls"] == 1), "{softmax:?}");
    let d: serde_json::Value = serde_json::from_slice(&fs::read(&dump).unwrap()).unwrap();
    let pairs = d["pairs"].as_array().unwrap();
    assert_eq!(pairs.len(), 8);
    let review = fs::read_to_string(root().join("tests/fixtures/sample-review.md")).unwrap();
    let bundle = fs::read_to_string(root().join(BUNDLE)).unwrap();
    for p in pairs {
        // Real pairs: the premise is review text, the hypothesis a fact of the bundle.
        let first_word = p["premise"].as_str().unwrap().split_whitespace().next();
        assert!(review.contains(first_word.unwrap()));
        assert!(bundle.contains(p["hypothesis"].as_str().unwrap()));
    }
}

#[test]
fn bad_inputs_are_refused_with_exit_3() {
    let home = temp_dir("bench-bad");
    let empty = home.join("empty.md");
    fs::write(&empty, "").unwrap();
    let missing = home.join("missing.jsonl");
    for (name, reviews) in [("empty_review", &empty), ("missing_reviews", &missing)] {
        let args = [
            "bench",
            "--bundle",
            BUNDLE,
            "--reviews",
            reviews.to_str().unwrap(),
        ];
        assert_cli_snapshot!(name, semtrace_cmd(&args, &home));
        let o = semtrace(&args, &home, None);
        assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
    }
    // Refused at the command line (exit 2, naming the flag and why): a zero-pair throughput figure,
    // an empty batch, and a hub threshold that is not a probability in [0, 1] (or not a number).
    let review = root().join("tests/fixtures/sample-review.md");
    for (name, arg) in [
        ("zero_pairs", "--pairs=0"),
        ("zero_batch_size", "--batch-size=0"),
        ("hub_threshold_above_1", "--fast-hub-threshold=2"),
        ("hub_threshold_negative", "--fast-hub-threshold=-0.1"),
        ("hub_threshold_not_a_number", "--fast-hub-threshold=x"),
    ] {
        let reviews = review.to_str().unwrap();
        assert_cli_snapshot!(
            name,
            semtrace_cmd(
                &["bench", "--bundle", BUNDLE, "--reviews", reviews, arg],
                &home
            )
        );
    }
}

#[test]
fn own_and_other_paper_bundles_for_corpus_reviews() {
    let home = temp_dir("bench-own-other");
    let review = fs::read_to_string(root().join("tests/fixtures/sample-review.md")).unwrap();
    // Two papers of a corpus-format JSONL, one review each; paper "b" has no bundle of its own.
    let jsonl = home.join("reviews.jsonl");
    let line = |id: &str, text: &str| {
        serde_json::json!({"id": id, "reviews": [{"review_text": text}]}).to_string()
    };
    fs::write(
        &jsonl,
        format!(
            "{}\n{}\n{}\n",
            line("a", &review),
            line("b", "The paper is clear. The experiments are thin."),
            line("c", &review)
        ),
    )
    .unwrap();
    let own = home.join("own");
    fs::create_dir_all(&own).unwrap();
    for id in ["a", "c"] {
        fs::copy(root().join(BUNDLE), own.join(format!("{id}.json"))).unwrap();
    }
    let o = semtrace(
        &[
            "bench",
            "--agreement",
            "--json",
            "--reviews",
            jsonl.to_str().unwrap(),
            "--limit",
            "10",
            "--own-bundles",
            own.to_str().unwrap(),
            "--other-bundles",
            "--cache",
            home.join("cache").to_str().unwrap(),
        ],
        &home,
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    // a: own a + other c; b: other a (no own bundle); c: own c + other a.
    let bundles: Vec<(u64, String)> = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let name = r["bundle"].as_str().unwrap();
            let file = std::path::Path::new(name.split_once(' ').unwrap().1);
            let kind = name.split_once(' ').unwrap().0;
            (
                r["review"].as_u64().unwrap(),
                format!("{kind} {}", file.file_stem().unwrap().to_str().unwrap()),
            )
        })
        .collect();
    let expected = [
        (0, "own a"),
        (0, "other c"),
        (1, "other a"),
        (2, "own c"),
        (2, "other a"),
    ];
    assert_eq!(
        bundles,
        expected.map(|(i, s)| (i, s.to_string())).to_vec(),
        "{v}"
    );
    let kinds = &v["by_bundle_kind"];
    assert_eq!(kinds["own"]["runs"], 2);
    assert_eq!(kinds["other"]["runs"], 3);
    assert_eq!(kinds["own"]["positions"], 24);
    assert_eq!(kinds["other"]["positions"], 36);
    let sum = kinds["own"]["positions_agree"].as_u64().unwrap()
        + kinds["other"]["positions_agree"].as_u64().unwrap();
    assert_eq!(sum, v["positions_agree"].as_u64().unwrap());

    // Without any bundle for the reviews there is nothing to measure: exit 3, not an empty table.
    assert_cli_snapshot!(
        "no_bundle_for_any_review",
        semtrace_cmd(
            &[
                "bench",
                "--agreement",
                "--reviews",
                jsonl.to_str().unwrap(),
                "--own-bundles",
                home.join("none").to_str().unwrap(),
            ],
            &home,
        )
    );
}

/// `--validity` on real LLM-written reviews of ../shared/corpus/llm-reviews (their first ~250 words,
/// to keep the real model's run short), each against its own frozen bundle.
#[test]
fn validity_on_llm_reviews_per_safeguard_and_from_the_cache() {
    let home = temp_dir("bench-validity");
    let llm = shared().join("corpus/llm-reviews");
    let paper = "001-word2vec-efficient-estimation";
    let mut manifest = String::new();
    for (kind, label, file) in [
        ("positive-compliant", 1, "positive"),
        ("null-original", 0, "null"),
    ] {
        let text = fs::read_to_string(llm.join(format!("reviews/{paper}.{file}.txt"))).unwrap();
        let short: Vec<&str> = text.split_whitespace().take(250).collect();
        fs::write(home.join(format!("{file}.txt")), short.join(" ")).unwrap();
        manifest +=
            &serde_json::json!({"review": format!("{file}.txt"), "kind": kind, "label": label,
            "bundle": llm.join(format!("bundles/{paper}.json"))})
            .to_string();
        manifest.push('\n');
    }
    // A real human review (of "Attention Is All You Need") against the sample bundle built from
    // that paper: a null for the calibration (read from ../shared at run time, never committed).
    let human: Vec<String> = attention_human_review()
        .split_whitespace()
        .take(250)
        .map(str::to_string)
        .collect();
    fs::write(home.join("human.txt"), human.join(" ")).unwrap();
    manifest += &serde_json::json!({"review": "human.txt", "kind": "null-human", "label": 0,
        "bundle": root().join("tests/fixtures/sample-bundle.json")})
    .to_string();
    manifest.push('\n');
    let m = home.join("manifest.jsonl");
    fs::write(&m, manifest).unwrap();
    let cache = home.join("cache");
    let run = || {
        let o = semtrace(
            &[
                "bench",
                "--validity",
                "--json",
                "--reviews",
                m.to_str().unwrap(),
                "--cache",
                cache.to_str().unwrap(),
                "--safeguard",
                "none,top-2,hub-3",
            ],
            &home,
            None,
        );
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        serde_json::from_str::<serde_json::Value>(stdout(&o).trim()).unwrap()
    };
    let v = run();
    let summary = v["summary"].as_array().unwrap();
    assert_eq!(summary.len(), 9, "3 safeguards x 3 kinds: {v}");
    let tally = |sg: &str, kind: &str| {
        summary
            .iter()
            .find(|s| s["safeguard"] == sg && s["kind"] == kind)
            .unwrap_or_else(|| panic!("{sg} {kind} in {v}"))["tally"]
            .clone()
    };
    for s in summary {
        let t = &s["tally"];
        let n = |k: &str| t[k].as_u64().unwrap();
        assert_eq!(n("reviews"), 1);
        assert_eq!(n("positions"), 12);
        // Every position is either observed or erased for exactly one reason.
        assert_eq!(
            n("both") + n("absent") + n("ambiguous") + n("observed"),
            12,
            "{t}"
        );
        assert!(n("matched") <= n("observed"));
    }
    // A safeguard only removes support, so it can never add a `both` erasure.
    for kind in ["positive-compliant", "null-original", "null-human"] {
        let none = tally("none", kind)["both"].as_u64().unwrap();
        for sg in ["top-2", "hub-3"] {
            assert!(
                tally(sg, kind)["both"].as_u64().unwrap() <= none,
                "{sg} {kind}"
            );
        }
    }
    // The fast decoder replayed on the cached scores is the fast decoder: same erasures, verdict
    // and pairs as `detect --decoder fast` running the model on the same review.
    for row in v["rows"].as_array().unwrap() {
        if row["safeguard"] != "none" {
            continue;
        }
        let (file, bundle) = match row["kind"].as_str().unwrap() {
            "positive-compliant" => ("positive", llm.join(format!("bundles/{paper}.json"))),
            "null-original" => ("null", llm.join(format!("bundles/{paper}.json"))),
            _ => ("human", root().join("tests/fixtures/sample-bundle.json")),
        };
        let review = home.join(format!("{file}.txt"));
        let o = semtrace(
            &[
                "detect",
                "--bundle",
                bundle.to_str().unwrap(),
                "--json",
                "-q",
                "--decoder",
                "fast",
                // The frozen bundles record the model they were built with, maybe not this one.
                "--allow-model-mismatch",
                review.to_str().unwrap(),
            ],
            &home,
            None,
        );
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let fast: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
        let erasures: Vec<&serde_json::Value> = fast["positions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| &p["erasure"])
            .collect();
        assert_eq!(
            serde_json::json!(erasures),
            row["fast_erasures"],
            "{file}: {row}"
        );
        assert_eq!(fast["verdict"], row["fast_verdict"], "{file}");
        assert_eq!(fast["pairs_scored"], row["fast_pairs"], "{file}");
    }
    let t = tally("none", "positive-compliant");
    let n = |k: &str| t[k].as_u64().unwrap();
    assert!(n("fast_positions_agree") <= 12 && n("fast_verdicts_agree") <= 1);
    assert!(n("fast_pairs") > 0 && n("fast_pairs") <= n("pairs"), "{t}");
    // A settled verdict is exact: never another verdict than the exhaustive decoder's, and known
    // by the fast decoder's last pair at the latest.
    assert_eq!(n("settled_wrong"), 0, "{t}");
    assert!(
        n("settled_pairs") <= n("fast_pairs") && n("settled") <= 1,
        "{t}"
    );
    // Whether the bundles were frozen for this model is reported from their records, and every
    // pair was cached once.
    let recorded: serde_json::Value = serde_json::from_str(
        &fs::read_to_string(llm.join(format!("bundles/{paper}.json"))).unwrap(),
    )
    .unwrap();
    assert_eq!(
        v["bundles_frozen_for_this_model"],
        recorded["model"]["sha256"] == v["sha256"]
    );
    // Null calibration: each null review (LLM-written of the original; human), decoded once,
    // scored against 1,000 simulated secrets' keyed selections; a valid p-value rejects at most
    // at rate alpha (plus sampling noise).
    for kind in ["null-original", "null-human"] {
        let cal = &v["null_calibration"]["kinds"][kind];
        assert_eq!(cal["reviews"], 1, "{kind}: {v}");
        assert_eq!(cal["draws"], 1000);
        for (i, alpha) in [0.05, 0.01, 0.001].iter().enumerate() {
            let p = cal["p_at_most"][i].as_u64().unwrap() as f64 / 1000.0;
            let e = cal["exposed"][i].as_u64().unwrap() as f64 / 1000.0;
            assert!(
                e <= p && p <= alpha + 4.0 * (alpha / 1000.0f64).sqrt(),
                "{kind}: {cal}"
            );
        }
    }
    assert!(v["null_calibration"]["kinds"]
        .get("positive-compliant")
        .is_none());
    let cached = fs::read_dir(&cache).unwrap().count();
    assert_eq!(cached, 3);
    // A second run reads the cache and gives the same figures.
    assert_eq!(run()["summary"], v["summary"]);
    // Text output: one row per safeguard and kind.
    let o = semtrace(
        &[
            "bench",
            "--validity",
            "--reviews",
            m.to_str().unwrap(),
            "--cache",
            cache.to_str().unwrap(),
        ],
        &home,
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("positive-compliant") && out.contains("null-original"),
        "{out}"
    );
    assert!(
        out.contains("fast decoder vs exhaustive, positive-compliant: positions "),
        "{out}"
    );
    assert!(
        out.contains("null calibration, 1000 simulated secrets"),
        "{out}"
    );
    // Broken manifests: a missing bundle, a bad label, a review that is not there.
    for (name, line) in [
        (
            "validity_bundle_missing",
            r#"{"review": "positive.txt", "kind": "k", "label": 1, "bundle": "nope.json"}"#,
        ),
        (
            "validity_bad_label",
            r#"{"review": "positive.txt", "kind": "k", "label": 2, "bundle": "x.json"}"#,
        ),
        (
            "validity_review_missing",
            r#"{"review": "gone.txt", "kind": "k", "label": 1, "bundle": "../../../shared/corpus/llm-reviews/bundles/001-word2vec-efficient-estimation.json"}"#,
        ),
    ] {
        let bad = home.join("bad.jsonl");
        fs::write(
            &bad,
            line.replace("../../../shared", shared().to_str().unwrap()),
        )
        .unwrap();
        assert_cli_snapshot!(
            name,
            semtrace_cmd(
                &["bench", "--validity", "--reviews", bad.to_str().unwrap()],
                &home,
            )
        );
    }
}
