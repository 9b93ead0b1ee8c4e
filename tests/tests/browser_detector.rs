//! The browser detector end to end: the site built by `scripts/build-site.sh` (target/site) is
//! served under a sub-path and driven in Debian's headless chromium by playwright-core
//! (tests/js/browser-detect.mjs). The page's report must equal `semtrace detect --json` for the
//! same bundle and review, no request may leave the page's origin or carry review text, and bad
//! inputs must show a clear message in the page; cancel works and the model comes back from the cache.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use semtrace_e2e::*;
use serde_json::Value;

const BUNDLE: &str = "tests/fixtures/sample-bundle.json";

/// One browser run at a time: the stall test times a wedged helper against the lead's own pace,
/// which a second chromium on the same cores would distort.
static BROWSER: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_browser() -> std::sync::MutexGuard<'static, ()> {
    BROWSER.lock().unwrap_or_else(|e| e.into_inner())
}

fn site() -> PathBuf {
    let p = root().join("target/site");
    assert!(
        p.join("pkg/semtrace_detector_wasm_bg.wasm").is_file() && p.join("index.html").is_file(),
        "the site is not built: run scripts/build-site.sh (scripts/test.sh does)"
    );
    p
}

fn chromium() -> PathBuf {
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
        .expect("Debian's chromium is missing: apt-get install chromium (.ci/run does)")
}

fn playwright() -> PathBuf {
    let p = test_env().join("node/node_modules/playwright-core");
    assert!(
        p.join("index.mjs").is_file(),
        "playwright-core missing: run scripts/setup-test-env.sh"
    );
    p
}

fn artifacts() -> PathBuf {
    let p = root().join("target/test-artifacts/browser");
    fs::create_dir_all(&p).unwrap();
    p
}

/// Run the browser driver with a config; returns its JSON result.
fn drive(dir: &Path, config: Value) -> Value {
    let cfg = dir.join("browser-config.json");
    fs::write(&cfg, serde_json::to_vec_pretty(&config).unwrap()).unwrap();
    let o = Command::new("node")
        .arg(root().join("tests/js/browser-detect.mjs"))
        .arg(&cfg)
        .output()
        .expect("node (Debian nodejs) must be installed");
    assert!(
        o.status.success(),
        "browser driver failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "driver output is not JSON ({e}); stderr: {}",
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

/// Same bits, same score, same windows; probabilities within 1e-4 (wasm and native kernels round
/// differently, and batches are composed differently when native runs on several threads).
fn assert_same_report(native: &Value, page: &Value, what: &str) {
    for key in [
        "verdict",
        "score",
        "observed",
        "matched",
        "mismatched",
        "eligible",
        "alpha",
        "k",
        "windows_total",
        "windows",
        "pairs_scored",
        "decoder",
    ] {
        assert_eq!(native[key], page[key], "{what}: field {key} differs");
    }
    let (pn, pp) = (
        native["p_value"].as_f64().unwrap(),
        page["p_value"].as_f64().unwrap(),
    );
    assert!((pn - pp).abs() <= 1e-12 * pn.max(1e-300), "{what}: p-value");
    assert_eq!(native["model"]["sha256"], page["model"]["sha256"]);
    assert_eq!(native["model"]["name"], page["model"]["name"]);
    let (np, pg) = (
        native["positions"].as_array().unwrap(),
        page["positions"].as_array().unwrap(),
    );
    assert_eq!(np.len(), pg.len());
    for (a, b) in np.iter().zip(pg) {
        for key in [
            "index",
            "slot",
            "assigned",
            "decision",
            "erasure",
            "matches",
            "evidence_window",
            "best_windows",
        ] {
            assert_eq!(
                a[key], b[key],
                "{what}: position {} field {key}",
                a["index"]
            );
        }
        for key in ["s0", "s1"] {
            let (x, y) = (a[key].as_f64().unwrap(), b[key].as_f64().unwrap());
            assert!(
                (x - y).abs() <= 1e-4,
                "{what}: position {} {key}: native {x}, page {y}",
                a["index"]
            );
        }
    }
}

#[test]
fn page_equals_native_detect_nothing_leaves_the_origin_and_bad_inputs_are_explained() {
    let _browser = one_browser();
    let site = site();
    let dir = temp_dir("browser");
    let review_text = attention_human_review();
    let review = dir.join("attention-review.md");
    fs::write(&review, &review_text).unwrap();
    let native_exhaustive = detect_report(BUNDLE, &review, "exhaustive", &dir);
    let native_fast = detect_report(BUNDLE, &review, "fast", &dir);

    let bundle_text = fs::read_to_string(root().join(BUNDLE)).unwrap();
    let corrupt = dir.join("corrupt-bundle.json");
    fs::write(&corrupt, &bundle_text[..bundle_text.len() / 2]).unwrap();
    let mut other: Value = serde_json::from_str(&bundle_text).unwrap();
    other["model"]["name"] = "some-other-model".into();
    other["model"]["sha256"] = "ab".repeat(32).into();
    let other_path = dir.join("other-model-bundle.json");
    fs::write(&other_path, serde_json::to_vec_pretty(&other).unwrap()).unwrap();

    let out = drive(
        &dir,
        serde_json::json!({
            "site": site,
            "chromium": chromium(),
            "playwright": playwright(),
            "base": "/semtrace/",
            "artifacts": artifacts(),
            "axe": test_env().join("node/node_modules/axe-core/axe.min.js"),
            "detect": [
                // Two workers share the exhaustive run's pairs; the fast run has one worker.
                {"name": "exhaustive", "bundle": root().join(BUNDLE), "review": review, "decoder": "exhaustive",
                 "query": "?workers=2"},
                {"name": "fast", "bundle": root().join(BUNDLE), "review": review, "decoder": "fast",
                 "query": "?workers=1"},
            ],
            "bad": {"corruptBundle": corrupt, "bundle": root().join(BUNDLE), "otherModelBundle": other_path,
                    "cancelReview": review},
            "stall": {"bundle": root().join(BUNDLE), "review": review},
        }),
    );

    // A helper wedged mid-page (a busy loop in its scope, so no error event): the lead takes its
    // share back after the stall deadline and the report is still the native one.
    let stall = &out["stall"];
    assert_eq!(
        stall["found"], true,
        "no helper worker on a ?workers=2 page: {stall}"
    );
    assert!(
        stall["message"].as_str().unwrap_or("").is_empty(),
        "stalled run: {}",
        stall["message"]
    );
    assert_same_report(&native_fast, &stall["report"], "stalled helper");
    assert_eq!(stall["workers"], 1, "the wedged helper is dropped: {stall}");
    assert_eq!(stall["workersReady"], 1, "{stall}");
    eprintln!(
        "stalled helper: the run finished alone in {} ms",
        stall["ms"]
    );

    // The page's reports equal the CLI's.
    let runs = out["detect"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "{out}");
    for (run, native) in runs.iter().zip([&native_exhaustive, &native_fast]) {
        let name = run["name"].as_str().unwrap();
        assert!(
            run["error"].is_null(),
            "{name}: page error {}",
            run["error"]
        );
        assert_same_report(native, &run["report"], name);
        let workers = if name == "exhaustive" { 2 } else { 1 };
        assert_eq!(
            run["workers"], workers,
            "{name}: workers that scored the pairs"
        );
        // Each worker holds its own copy of the model: the reported linear memory must cover
        // the model bytes once per worker.
        let model_bytes = fs::metadata(root().join("models/semtrace-nli-minilm/model.onnx"))
            .unwrap()
            .len();
        let memory = run["wasmMemory"].as_u64().unwrap_or(0);
        assert!(
            memory > workers * model_bytes,
            "{name}: {memory} bytes of wasm memory for {workers} worker(s)"
        );
        // The verdict announced as settled is the report's; with every pair scored (exhaustive)
        // nothing is left open, so it is always announced.
        let settled = &run["settled"];
        if name == "exhaustive" || !settled["verdict"].is_null() {
            assert_eq!(
                settled["verdict"], native["verdict"],
                "{name}: settled verdict"
            );
            assert!(
                settled["pairs"].as_u64().unwrap() <= native["pairs_scored"].as_u64().unwrap(),
                "{name}: {settled}"
            );
        }
        eprintln!(
            "{name}: verdict settled after {} of {} pairs",
            settled["pairs"], native["pairs_scored"]
        );
        // The result view shows every position and highlights the decided ones' windows.
        assert_eq!(
            run["rows"], native["k"],
            "{name}: one table row per position"
        );
        let decided = native["positions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| !p["evidence_window"].is_null())
            .count();
        assert!(
            decided == 0 || run["marks"].as_u64().unwrap() > 0,
            "{name}: {decided} decided positions but no highlighted window"
        );
        let shot = PathBuf::from(run["screenshot"].as_str().unwrap());
        let png = fs::read(&shot).unwrap();
        assert!(
            png.starts_with(b"\x89PNG") && png.len() > 10_000,
            "screenshot {}",
            shot.display()
        );
        eprintln!(
            "{name}: verdict {} score {} in {:?} s (model load {} ms); screenshot {}",
            native["verdict"],
            native["score"],
            run["times"],
            run["loadMs"],
            shot.display()
        );
    }
    assert!(
        native_exhaustive["pairs_scored"].as_u64().unwrap()
            > native_fast["pairs_scored"].as_u64().unwrap()
    );

    // Accessibility: no WCAG 2.1 A/AA violation by axe-core on the result view; keyboard order.
    let axe = &out["axe"];
    assert_eq!(axe["violations"], serde_json::json!([]), "{axe}");
    let tab: Vec<&str> = axe["tabOrder"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap_or(""))
        .collect();
    let at = |id: &str| {
        tab.iter()
            .position(|t| *t == id)
            .unwrap_or_else(|| panic!("{id} not reached by Tab: {tab:?}"))
    };
    assert!(
        at("bundle-file") < at("review-text") && at("review-text") < at("run"),
        "{tab:?}"
    );
    // The page's own CSP refuses a fetch to another origin.
    assert_eq!(axe["csp"]["directive"], "connect-src", "{axe}");
    assert_eq!(axe["csp"]["fetched"], false);

    // Nothing leaves the machine: every request goes to the page's own origin, and none carries
    // review text (in its URL or body), as the browser saw them and as the server received them.
    let origin = out["origin"].as_str().unwrap();
    let requests = out["requests"].as_array().unwrap();
    assert!(
        requests.len() >= 8,
        "expected the page's requests: {requests:?}"
    );
    let probes: Vec<&str> = review_text
        .lines()
        .filter(|l| l.len() > 60)
        .map(|l| &l.trim_start_matches("- ")[..30])
        .collect();
    assert!(probes.len() >= 3);
    for r in requests {
        let url = r["url"].as_str().unwrap();
        assert!(
            url.starts_with(&format!("{origin}/"))
                || url.starts_with("blob:")
                || url.starts_with("data:"),
            "request to another origin: {url}"
        );
        for p in &probes {
            assert!(!url.contains(p) && !r["postData"].as_str().unwrap().contains(p));
        }
    }
    for s in out["served"].as_array().unwrap() {
        assert_eq!(s["method"], "GET", "the page only reads from its site: {s}");
        assert_eq!(s["body"], "");
        assert!(s["url"].as_str().unwrap().starts_with("/semtrace/"));
    }
    assert!(
        out["consoleErrors"].as_array().unwrap().iter().all(|e| {
            let e = e.as_str().unwrap();
            // Only the CSP probe (refused, as asserted above) may log errors.
            e.contains("csp-probe")
        }),
        "console errors: {}",
        out["consoleErrors"]
    );

    // Bad inputs: clear messages in the page.
    let bad = &out["bad"];
    let msg = bad["corruptBundle"].as_str().unwrap();
    assert!(
        msg.contains("not a SemTrace bundle") && msg.contains("JSON"),
        "{msg}"
    );
    assert_eq!(bad["corruptBundleRunDisabled"], true);
    let msg = bad["otherModelBundle"].as_str().unwrap();
    assert!(
        msg.contains("built for the model \"some-other-model\"") && msg.contains(&"ab".repeat(32)),
        "{msg}"
    );
    assert_eq!(bad["otherModelRunDisabled"], true);
    let msg = bad["emptyReview"].as_str().unwrap();
    assert!(msg.contains("The review is empty"), "{msg}");
    assert_eq!(bad["emptyReviewShowsResult"], false);
    // Cancel stops the run, the model is reloaded from this browser's cache, and the page works on.
    let cancel = &bad["cancel"];
    assert!(
        cancel["cancelled"]
            .as_str()
            .unwrap()
            .starts_with("Cancelled"),
        "{cancel}"
    );
    assert!(
        cancel["status"]
            .as_str()
            .unwrap()
            .contains("from this browser's cache"),
        "{cancel}"
    );
    assert_eq!(cancel["after"], "fast");
    let wrong = &bad["wrongModel"];
    assert_eq!(wrong["ready"], "false", "{wrong}");
    let msg = wrong["message"].as_str().unwrap();
    assert!(
        msg.contains("could not be loaded")
            && msg.contains("does not match")
            && msg.contains("SHA-256"),
        "{msg}"
    );
}

/// The chair's page (web/chair.html): a folder chosen at once is paired by name and by folder,
/// a bundle for another model is refused on its row, the checked rows equal the venue batch
/// (`semtrace detect --manifest`) for the same reviews — verdicts, exact p-values, Holm and BH —
/// each position shows its fact beside the review passage that stated it, and loose files with a
/// manifest follow the manifest, naming the line that points to nothing.
#[test]
fn chair_page_checks_a_folder_as_the_venue_batch_does() {
    let _browser = one_browser();
    let site = site();
    let dir = temp_dir("browser-chair");
    let venue = dir.join("venue");
    fs::create_dir_all(venue.join("old")).unwrap();
    let fx = root().join("tests/fixtures");
    fs::copy(fx.join("sample-bundle.json"), venue.join("sample.json")).unwrap();
    // sample-1: the fixture review that states the copy's facts; sample-2: a real human review
    // of the same paper written without the copy.
    fs::copy(fx.join("sample-review.md"), venue.join("sample-1.md")).unwrap();
    fs::write(venue.join("sample-2.md"), attention_human_review()).unwrap();
    // A frozen bundle of another model (llm-reviews), paired by its folder, refused on its row.
    let llm = shared().join("corpus/llm-reviews");
    fs::copy(
        llm.join("bundles/001-word2vec-efficient-estimation.json"),
        venue.join("old/bundle.json"),
    )
    .unwrap();
    let null =
        fs::read_to_string(llm.join("reviews/001-word2vec-efficient-estimation.null.txt")).unwrap();
    let short: Vec<&str> = null.split_whitespace().take(200).collect();
    fs::write(venue.join("old/review.txt"), short.join(" ")).unwrap();
    fs::write(venue.join("notes.pdf"), b"%PDF-1.4 not a review").unwrap();

    // The venue batch on the same two reviews, fast decoder as the page's default.
    let manifest = dir.join("cli.jsonl");
    fs::write(
        &manifest,
        "{\"review\": \"venue/sample-1.md\", \"bundle\": \"venue/sample.json\"}\n\
         {\"review\": \"venue/sample-2.md\", \"bundle\": \"venue/sample.json\"}\n",
    )
    .unwrap();
    let cli_out = dir.join("cli-out");
    let o = semtrace(
        &[
            "detect",
            "--manifest",
            manifest.to_str().unwrap(),
            "--out",
            cli_out.to_str().unwrap(),
            "--decoder",
            "fast",
        ],
        &dir,
        None,
    );
    assert!(
        o.status.code() == Some(1),
        "the venue batch flags the sample review (exit 1): {}",
        stderr(&o)
    );
    let cli: Vec<Value> = fs::read_to_string(cli_out.join("venue.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let native_first = detect_report(BUNDLE, &venue.join("sample-1.md"), "fast", &dir);

    // Loose files with a manifest whose second line names a missing review.
    let loose = dir.join("loose");
    fs::create_dir_all(&loose).unwrap();
    fs::copy(venue.join("sample-1.md"), loose.join("sample-1.md")).unwrap();
    fs::copy(venue.join("sample.json"), loose.join("sample.json")).unwrap();
    fs::write(
        loose.join("venue.jsonl"),
        "{\"review\": \"sample-1.md\", \"bundle\": \"sample.json\"}\n\
         {\"review\": \"missing.md\", \"bundle\": \"sample.json\"}\n",
    )
    .unwrap();

    let out = drive(
        &dir,
        serde_json::json!({
            "site": site,
            "chromium": chromium(),
            "playwright": playwright(),
            "base": "/semtrace/",
            "artifacts": artifacts(),
            "axe": test_env().join("node/node_modules/axe-core/axe.min.js"),
            "chair": {
                "folder": venue,
                "files": [loose.join("venue.jsonl"), loose.join("sample-1.md"), loose.join("sample.json")],
            },
        }),
    );
    let chair = &out["chair"];
    assert_eq!(chair["model"]["ready"], "true", "{chair}");

    // Pairing: two reviews by name, one by folder; the PDF ignored with a note.
    let folder = &chair["folder"];
    assert_eq!(folder["paired"]["rows"], 3, "{folder}");
    assert_eq!(folder["paired"]["problems"], 0, "{folder}");
    let text = folder["paired"]["text"].as_str().unwrap();
    assert!(
        text.contains("2 by name") && text.contains("1 by folder"),
        "{text}"
    );
    assert!(text.contains("notes.pdf"), "{text}");
    let rows = folder["rows"].as_array().unwrap();
    let row = |name: &str| {
        rows.iter()
            .find(|r| r["review"].as_str().unwrap().ends_with(name))
            .unwrap_or_else(|| panic!("no row for {name}: {folder}"))
    };
    let old = row("old/review.txt");
    assert_eq!(old["status"], "error", "{old}");
    assert!(
        old["cells"].to_string().contains("built for the model"),
        "{old}"
    );
    assert!(
        folder["summary"]
            .as_str()
            .unwrap()
            .contains("2 review(s) checked, 1 could not be"),
        "{folder}"
    );

    // The checked rows equal the CLI's venue batch.
    let page: Vec<Value> = chair["jsonl"]
        .as_str()
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(page.len(), 2, "{page:?}");
    for c in &cli {
        let name = Path::new(c["review"].as_str().unwrap())
            .file_name()
            .unwrap()
            .to_str()
            .unwrap();
        let p = page
            .iter()
            .find(|p| p["review"].as_str().unwrap().ends_with(name))
            .unwrap_or_else(|| panic!("page lacks {name}: {page:?}"));
        for key in [
            "verdict",
            "k",
            "observed",
            "matched",
            "eligible",
            "p_value_exact",
            "decoder",
            "flag_fwer",
            "flag_fdr",
        ] {
            assert_eq!(p[key], c[key], "{name}: {key}");
        }
        for key in ["p_value", "holm_p", "bh_q"] {
            let (x, y) = (p[key].as_f64().unwrap(), c[key].as_f64().unwrap());
            assert!(
                (x - y).abs() <= 1e-12 * y.max(1e-300),
                "{name} {key}: page {x}, CLI {y}"
            );
        }
        assert_eq!(row(name)["verdict"], c["verdict"]);
    }
    assert_eq!(row("sample-1.md")["verdict"], "exposed", "{folder}");

    // Evidence of the first checked row (sample-1): each decided position shows the fact it was
    // read as stating, beside the window the CLI names as its evidence.
    let evidence = chair["evidence"].as_array().expect("evidence table");
    let bundle: Value =
        serde_json::from_str(&fs::read_to_string(venue.join("sample.json")).unwrap()).unwrap();
    assert_eq!(evidence.len(), 12, "{evidence:?}");
    let mut checked = 0;
    for p in native_first["positions"].as_array().unwrap() {
        let Some(d) = p["decision"].as_str().and_then(|d| d.parse::<usize>().ok()) else {
            continue;
        };
        let i = p["index"].as_u64().unwrap() as usize;
        let cells: Vec<&str> = evidence[i]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap())
            .collect();
        let fact = bundle["positions"][i]["facts"][d]["text"].as_str().unwrap();
        let w = p["evidence_window"].as_u64().unwrap() as usize;
        let window = native_first["windows"][w]["text"].as_str().unwrap();
        assert!(
            cells[4].starts_with(fact),
            "position {i}: fact cell {:?}, bundle fact {fact:?}",
            cells[4]
        );
        assert_eq!(cells[5], format!("“{window}”"), "position {i}");
        checked += 1;
    }
    assert!(
        checked >= 6,
        "only {checked} decided positions in the sample review"
    );
    assert_eq!(chair["violations"], serde_json::json!([]), "{chair}");

    // Loose files and a manifest: its one good line runs, the missing review is named.
    let m = &chair["manifest"];
    assert_eq!(m["paired"]["rows"], 1, "{m}");
    assert_eq!(m["paired"]["problems"], 1, "{m}");
    assert!(
        m["paired"]["text"]
            .as_str()
            .unwrap()
            .contains("venue.jsonl line 2: review \"missing.md\" points to no dropped file"),
        "{m}"
    );
    assert_eq!(m["rows"][0]["verdict"], "exposed", "{m}");

    // Nothing but the page's own files was requested.
    let origin = out["origin"].as_str().unwrap();
    for r in out["requests"].as_array().unwrap() {
        let url = r["url"].as_str().unwrap();
        assert!(
            url.starts_with(&format!("{origin}/"))
                || url.starts_with("blob:")
                || url.starts_with("data:"),
            "request to another origin: {url}"
        );
        assert!(
            r["postData"].as_str().unwrap().is_empty(),
            "a request carried a body: {url}"
        );
    }
}
