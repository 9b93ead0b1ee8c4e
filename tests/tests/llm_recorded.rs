//! LLM mode against a capable model, replayed from a recording: `tests/fixtures/llm-cache/<paper>/`
//! holds, in the builder's own cache format, every answer of `semtrace build --llm-url` on two
//! corpus papers (candidate facts with quotations, control reviews), written by a capable LLM (see
//! the fixture's README). The builds here point at an endpoint that fails and counts every request,
//! so a pass proves the whole build came from the recording: zero requests, every call a cache hit.
//! They then check what SmolLM2 (`llm_real.rs`) cannot show: most candidates survive the quote
//! gate, K = 12 positions are filled, and the priors come from the control reviews (r_f spread
//! over (h + 1)/(N + 2), not ½ everywhere).
//!
//! A changed prompt, schema, sampling setting, model name or PDF extraction changes the request
//! keys: the build then misses the cache, the endpoint refuses, and the test says to re-record.

use std::path::{Path, PathBuf};
use std::process::Command;

use semtrace_e2e::llm::FakeLlm;
use semtrace_e2e::{bin, embedder_dir, root, shared, stderr, temp_dir};

/// The model name and build flags of the recording (they are part of every request key).
const MODEL: &str = "claude-helper-recorded";
const N_CONTROLS: usize = 4;
const RECORDED_FLAGS: [&str; 4] = ["--n-controls", "4", "--max-facts", "8"];

fn fixture(paper: &str) -> PathBuf {
    root().join("tests/fixtures/llm-cache").join(paper)
}

fn cache_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(cache_files(&p));
        } else if p.extension().is_some_and(|x| x == "json") {
            out.push(p);
        }
    }
    out.sort();
    out
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let dest = to.join(p.file_name().unwrap());
        if p.is_dir() {
            copy_dir(&p, &dest);
        } else {
            std::fs::copy(&p, &dest).unwrap();
        }
    }
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Replays the recorded build of `paper` and checks it.
fn replay(paper: &str) {
    let recorded = cache_files(&fixture(paper));
    assert!(!recorded.is_empty(), "no recorded answers for {paper}");
    // The builder's cache may write; the committed fixture must not change.
    let dir = temp_dir(&format!("llm-recorded-{paper}"));
    let cache = dir.join("cache");
    copy_dir(&fixture(paper), &cache);
    let srv = FakeLlm::start("500");
    let pdf = shared().join(format!("corpus/papers/{paper}.pdf"));
    let out = dir.join("out");
    let o = Command::new(bin())
        .arg("build")
        .arg(&pdf)
        .arg("--out")
        .arg(&out)
        .arg("--embedder")
        .arg(embedder_dir())
        .args(["--llm-url", &srv.url(), "--llm-model", MODEL])
        .arg("--llm-cache")
        .arg(&cache)
        .args(["--llm-retries", "0"])
        .args(RECORDED_FLAGS)
        .args(["--json", "--quiet"])
        .env("SEMTRACE_HOME", dir.join("home"))
        .env_remove("SEMTRACE_MODEL")
        .env_remove("SEMTRACE_LLM_API_KEY")
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(
        srv.requests(),
        0,
        "{paper}: the build asked the endpoint instead of replaying the recording; the request \
         keys changed (prompt, schema, sampling, model name or PDF extraction): re-record as \
         tests/fixtures/llm-cache/README.md says\n{}",
        stderr(&o)
    );
    assert_eq!(o.status.code(), Some(0), "{paper}: {}", stderr(&o));

    let report = json(&out.join("report.json"));
    assert_eq!(report["status"], "ok");
    assert_eq!(report["mode"], "llm");
    let stats = &report["llm"]["stats"];
    eprintln!("{paper}: llm stats {stats}");
    assert_eq!(stats["http_requests"], 0, "{stats}");
    assert_eq!(stats["cache"]["misses"], 0, "{stats}");
    // Every recorded answer is used, and nothing else is asked (no refill round).
    assert_eq!(
        stats["calls"].as_u64(),
        Some(recorded.len() as u64),
        "{stats}"
    );
    assert_eq!(stats["cache"]["hits"], stats["calls"], "{stats}");

    // The quote gate: most of the capable model's quotations are found verbatim in the source.
    let cands = report["candidates"].as_array().unwrap();
    assert!(cands.len() >= 24, "{paper}: {} candidates", cands.len());
    assert!(cands
        .iter()
        .all(|c| c["origin"].as_str().unwrap().starts_with("llm-")));
    let gate = |name: &str| {
        report["gate_counts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["gate"] == name)
            .unwrap_or_else(|| panic!("no gate {name}: {}", report["gate_counts"]))
            .clone()
    };
    let (structure, quote) = (gate("structure"), gate("quote"));
    let entered = structure["entered"].as_u64().unwrap();
    let passed_quote = quote["entered"].as_u64().unwrap() - quote["dropped"].as_u64().unwrap();
    eprintln!(
        "{paper}: {passed_quote} of {entered} LLM candidates pass the structure and quote gates; \
         gates {}",
        report["gate_counts"]
    );
    // Every candidate enters the first gate (reviewer-fact), which runs before structure.
    let first = &report["gate_counts"].as_array().unwrap()[0];
    assert_eq!(first["gate"], "reviewer-fact", "{}", report["gate_counts"]);
    assert_eq!(first["entered"].as_u64().unwrap(), cands.len() as u64);
    assert_eq!(
        entered,
        cands.len() as u64 - first["dropped"].as_u64().unwrap()
    );
    assert!(
        passed_quote * 10 >= entered * 8,
        "{paper}: only {passed_quote} of {entered} candidates pass the quote gate"
    );
    // The gate is not vacuous: every quotation it let through is in the extracted body.
    let ex = Command::new(bin())
        .args(["extract", "--json"])
        .arg(&pdf)
        .output()
        .unwrap();
    assert_eq!(ex.status.code(), Some(0), "{}", stderr(&ex));
    let doc: serde_json::Value = serde_json::from_slice(&ex.stdout).unwrap();
    let body: Vec<&str> = doc["units"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["text"].as_str().unwrap())
        .collect();
    for c in cands {
        if !matches!(c["dropped_by"].as_str(), Some("structure" | "quote")) {
            let q = c["quote"].as_str().unwrap();
            assert!(
                body.iter().any(|u| semtrace_build::quote::contains(u, q)),
                "{paper}: a quotation passed the quote gate but is not in the source: {c}"
            );
        }
    }

    // K = 12 positions.
    let bundle = json(&out.join("bundle.json"));
    assert_eq!(bundle["k"], 12);
    assert_eq!(bundle["positions"].as_array().unwrap().len(), 12);

    // Real priors: r_f from the recorded control reviews, spread over (h + 1)/(N + 2).
    assert_eq!(report["priors"]["source"], "llm", "{}", report["priors"]);
    assert_eq!(
        report["priors"]["controls"].as_array().unwrap().len(),
        N_CONTROLS
    );
    let mut rs: Vec<f64> = Vec::new();
    for c in cands.iter().filter(|c| c["kept"] == true) {
        let r = c["r"].as_f64().expect("an approved fact has r");
        let q = c["q"].as_array().expect("an approved fact has q");
        assert_eq!(q.len(), N_CONTROLS);
        let hits = q.iter().filter(|x| x.as_f64().unwrap() >= 0.52).count();
        let want = (hits as f64 + 1.0) / (N_CONTROLS as f64 + 2.0);
        assert!((r - want).abs() < 1e-9, "{paper}: r {r} vs {want}: {c}");
        rs.push(r);
    }
    let mut distinct: Vec<i64> = rs.iter().map(|r| (r * 6.0).round() as i64).collect();
    distinct.sort();
    distinct.dedup();
    eprintln!(
        "{paper}: r_f over {} approved facts takes {} values (in sixths: {distinct:?})",
        rs.len(),
        distinct.len()
    );
    assert!(
        distinct.len() >= 3,
        "{paper}: the control reviews barely inform the priors: {distinct:?}"
    );
    // Real priors are not the offline ½ everywhere. (Since the stage-3c model, word2vec's controls
    // mention no fact in more than 3 of 6 reviews, so "some above ½" no longer holds there.)
    assert!(
        rs.iter().any(|&r| r < 0.5),
        "{paper}: no fact is below the uninformed prior ½: {distinct:?}"
    );
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        md.contains("priors: llm — r_f from 4 selection-only controls"),
        "{md}"
    );
}

#[test]
fn recorded_llm_word2vec_build_replays_with_real_priors() {
    replay("001-word2vec-efficient-estimation");
}

#[test]
fn recorded_llm_wide_and_deep_build_replays_with_real_priors() {
    replay("019-wide-and-deep-dlrs16");
}

/// The committed recording holds the answers and the request keys, not the paper: message texts
/// and schemas are stored as hashes; the answers' quotations are short.
#[test]
fn recorded_llm_cache_holds_no_paper_text() {
    let dir = root().join("tests/fixtures/llm-cache");
    let files = cache_files(&dir);
    assert_eq!(files.len(), 18, "10 + 8 recorded answers");
    for f in files {
        let e = json(&f);
        let key = e["key"].as_str().unwrap();
        assert_eq!(f.file_stem().unwrap().to_str(), Some(key));
        assert_eq!(
            f.parent().unwrap().file_name().unwrap().to_str(),
            Some(&key[..2])
        );
        let req = &e["request"];
        assert_eq!(req["model"], MODEL);
        for m in req["messages"].as_array().unwrap() {
            assert!(
                m.get("content").is_none(),
                "{}: message text stored",
                f.display()
            );
            assert_eq!(m["content_sha256"].as_str().unwrap().len(), 64);
        }
        if let Some(rf) = req.get("response_format") {
            assert!(rf["json_schema"].get("schema").is_none(), "{}", f.display());
            let answer: serde_json::Value =
                serde_json::from_str(e["content"].as_str().unwrap()).unwrap();
            for fact in answer["facts"].as_array().unwrap() {
                let q = fact["quote"].as_str().unwrap();
                assert!(
                    q.split_whitespace().count() <= 40,
                    "{}: long quote {q:?}",
                    f.display()
                );
            }
        }
    }
}
