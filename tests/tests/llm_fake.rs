//! The LLM client against a misbehaving OpenAI-compatible endpoint (tests/fixtures/fake_llm_server.py),
//! through `semtrace candidates`: retries, Retry-After, timeouts, malformed answers, clear errors,
//! no partial output, and kill-and-resume through the on-disk cache.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use semtrace_e2e::llm::FakeLlm;
use semtrace_e2e::{bin, root, stderr, stdout, temp_dir};

const DOC: &str = "# Results\n\n\
The Transformer achieves 28.4 BLEU on the WMT 2014 English-to-German translation task, improving over the best previously reported results.\n\n\
Training took 3.5 days on eight P100 GPUs for the big model, a small fraction of the training costs of the best models from the literature.\n\n\
We used the Adam optimizer with beta1 = 0.9, beta2 = 0.98 and epsilon = 1e-9, varying the learning rate over the course of training.\n\n\
We apply dropout to the output of each sub-layer before it is added to the sub-layer input and normalized, with a rate of 0.1 for the base model.\n";

fn write_doc(dir: &Path, text: &str) -> PathBuf {
    let p = dir.join("paper.md");
    std::fs::write(&p, text).unwrap();
    p
}

fn candidates(url: &str, doc: &Path, out: &Path, extra: &[&str]) -> (Output, Duration) {
    let t0 = Instant::now();
    let o = Command::new(bin())
        .arg("candidates")
        .arg(doc)
        .arg("--out")
        .arg(out)
        .args(["--llm-url", url, "--llm-model", "fake", "--json"])
        .args(["--llm-backoff-ms", "20"])
        .args(extra)
        .env_remove("SEMTRACE_LLM_API_KEY")
        .current_dir(root())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (o, t0.elapsed())
}

fn summary(o: &Output) -> serde_json::Value {
    serde_json::from_str(stdout(o).trim()).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}\nstderr: {}",
            stdout(o),
            stderr(o)
        )
    })
}

#[test]
fn retries_after_500_then_succeeds() {
    let srv = FakeLlm::start("500-then-ok");
    let dir = temp_dir("llm-500-then-ok");
    let doc = write_doc(&dir, DOC);
    let out = dir.join("cands.json");
    let (o, _) = candidates(
        &srv.url(),
        &doc,
        &out,
        &["--llm-concurrency", "1", "--llm-retries", "3"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let s = summary(&o);
    // One chunk, initial + supplemental: 2 calls, 2 failed attempts before the first success.
    assert_eq!(s["llm"]["stats"]["calls"], 2);
    assert_eq!(s["llm"]["stats"]["retries"], 2);
    assert_eq!(s["llm"]["stats"]["http_requests"], 4);
    assert_eq!(srv.requests(), 4);
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let c = doc["candidates"].as_array().unwrap();
    assert_eq!(c.len(), 2);
    assert_eq!(c[0]["origin"], "llm-initial");
    assert_eq!(c[1]["origin"], "llm-supplemental");
    assert_eq!(c[0]["unit"], "p1.u1");
}

#[test]
fn persistent_500_fails_after_the_retry_budget_with_a_clear_error() {
    let srv = FakeLlm::start("500");
    let dir = temp_dir("llm-500");
    let doc = write_doc(&dir, DOC);
    let out = dir.join("cands.json");
    let (o, _) = candidates(&srv.url(), &doc, &out, &["--llm-retries", "2"]);
    assert_eq!(o.status.code(), Some(5), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains(&format!("{}/v1/chat/completions", srv.url())),
        "{e}"
    );
    assert!(
        e.contains("3 attempt(s)") && e.contains("HTTP status 500"),
        "{e}"
    );
    assert!(e.contains("internal error (fake)"), "{e}");
    assert_eq!(srv.requests(), 3);
    assert!(!out.exists(), "no output file on failure");
    assert!(std::fs::read_dir(&dir).unwrap().all(|e| {
        let n = e.unwrap().file_name();
        let n = n.to_string_lossy();
        !n.starts_with(".tmp")
    }));
}

#[test]
fn retry_after_of_429_is_honoured_and_capped() {
    let srv = FakeLlm::start("429");
    let dir = temp_dir("llm-429");
    let doc = write_doc(&dir, DOC);
    let out = dir.join("cands.json");
    // Retry-After: 1 → one retry waits ~1 s although the backoff is 20 ms.
    let (o, t) = candidates(
        &srv.url(),
        &doc,
        &out,
        &["--llm-retries", "1", "--no-supplemental"],
    );
    assert_eq!(o.status.code(), Some(5), "{}", stderr(&o));
    assert!(stderr(&o).contains("HTTP status 429"), "{}", stderr(&o));
    assert!(t >= Duration::from_millis(1000), "waited only {t:?}");
    assert_eq!(srv.requests(), 2);
    // Capped by --llm-max-wait.
    let (o, t) = candidates(
        &srv.url(),
        &doc,
        &out,
        &[
            "--llm-retries",
            "2",
            "--no-supplemental",
            "--llm-max-wait",
            "0.1",
        ],
    );
    assert_eq!(o.status.code(), Some(5));
    assert!(
        t < Duration::from_millis(1000),
        "the cap was ignored: {t:?}"
    );
    assert_eq!(srv.requests(), 5);
}

#[test]
fn hanging_server_times_out() {
    let srv = FakeLlm::start("hang");
    let dir = temp_dir("llm-hang");
    let doc = write_doc(&dir, DOC);
    let out = dir.join("cands.json");
    let (o, t) = candidates(
        &srv.url(),
        &doc,
        &out,
        &[
            "--llm-retries",
            "1",
            "--llm-timeout",
            "1",
            "--no-supplemental",
        ],
    );
    assert_eq!(o.status.code(), Some(5), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("2 attempt(s)") && e.contains("timeout"), "{e}");
    assert!(
        t >= Duration::from_secs(2) && t < Duration::from_secs(15),
        "{t:?}"
    );
    assert!(!out.exists());
}

#[test]
fn malformed_answers_are_retried_then_reported() {
    let srv = FakeLlm::start("malformed");
    let dir = temp_dir("llm-malformed");
    let doc = write_doc(&dir, DOC);
    let out = dir.join("cands.json");
    let (o, _) = candidates(&srv.url(), &doc, &out, &["--llm-retries", "2"]);
    assert_eq!(o.status.code(), Some(5), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("3 attempt(s)") && e.contains("not the expected JSON"),
        "{e}"
    );
    assert!(e.contains("this is {not json"), "{e}");
    assert_eq!(srv.requests(), 3);
    // Nothing invalid was cached.
    let cached = walk_json(&dir.join(".llm-cache"));
    assert!(cached.is_empty(), "{cached:?}");
}

#[test]
fn unreachable_endpoint_is_a_network_error() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = temp_dir("llm-refused");
    let doc = write_doc(&dir, DOC);
    let (o, _) = candidates(
        &format!("http://127.0.0.1:{port}"),
        &doc,
        &dir.join("c.json"),
        &["--llm-retries", "1"],
    );
    assert_eq!(o.status.code(), Some(5), "{}", stderr(&o));
    assert!(stderr(&o).contains("cannot connect"), "{}", stderr(&o));
}

#[test]
fn missing_endpoint_is_a_usage_error() {
    let dir = temp_dir("llm-usage");
    let doc = write_doc(&dir, DOC);
    let o = Command::new(bin())
        .args(["candidates", "--out"])
        .arg(dir.join("c.json"))
        .arg(&doc)
        .env_remove("SEMTRACE_LLM_URL")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--llm-url"));
}

fn walk_json(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![];
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk_json(&p));
            } else if p.extension().is_some_and(|x| x == "json") {
                out.push(p);
            }
        }
    }
    out
}

#[test]
fn killed_run_resumes_without_repeating_finished_calls() {
    let srv = FakeLlm::start("slow"); // 0.5 s per answer
    let dir = temp_dir("llm-resume");
    // 12 paragraphs, ~130 characters each; 300-character chunks → one or two units per chunk.
    let paras: Vec<String> = (1..=12)
        .map(|i| {
            format!(
                "Paragraph {i} reports that configuration number {i} of the system reached an accuracy of {}.{} percent on the held-out benchmark split.",
                60 + i,
                i % 10
            )
        })
        .collect();
    let doc = write_doc(&dir, &paras.join("\n\n"));
    let out = dir.join("cands.json");
    let cache = dir.join("cache");
    let args = |c: &Path| -> Vec<String> {
        vec![
            "candidates".into(),
            doc.display().to_string(),
            "--out".into(),
            out.display().to_string(),
            "--llm-url".into(),
            srv.url(),
            "--llm-model".into(),
            "fake".into(),
            "--llm-concurrency".into(),
            "1".into(),
            "--chunk-chars".into(),
            "300".into(),
            "--llm-cache".into(),
            c.display().to_string(),
            "--json".into(),
        ]
    };
    let mut child = Command::new(bin())
        .args(args(&cache))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while walk_json(&cache).len() < 4 {
        assert!(t0.elapsed() < Duration::from_secs(30), "no progress");
        assert!(
            child.try_wait().unwrap().is_none(),
            "finished before the kill"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let done = walk_json(&cache).len() as u64;
    let sent_before = srv.requests();
    assert!(!out.exists(), "a killed run leaves no output");

    let o = Command::new(bin()).args(args(&cache)).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let s = summary(&o);
    let calls = s["llm"]["stats"]["calls"].as_u64().unwrap();
    assert_eq!(calls, 2 * s["chunks"].as_u64().unwrap());
    assert!(calls > done, "the kill came too late to test anything");
    assert_eq!(s["llm"]["stats"]["cache"]["hits"], done);
    assert_eq!(
        s["llm"]["stats"]["http_requests"].as_u64().unwrap(),
        calls - done
    );
    assert_eq!(srv.requests() - sent_before, calls - done);
    assert_eq!(
        s["kept"].as_u64().unwrap(),
        calls,
        "one candidate per answer: complete"
    );
    let first = std::fs::read(&out).unwrap();

    // A third run is served entirely from the cache and gives the same candidates.
    let before = srv.requests();
    let o = Command::new(bin()).args(args(&cache)).output().unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(summary(&o)["llm"]["stats"]["http_requests"], 0);
    assert_eq!(srv.requests(), before);
    let a: serde_json::Value = serde_json::from_slice(&first).unwrap();
    let b: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(a["candidates"], b["candidates"]);
}

#[test]
fn api_key_comes_from_a_file_or_the_environment_and_is_never_cached() {
    let srv = FakeLlm::start("auth");
    let dir = temp_dir("llm-auth");
    let doc = write_doc(&dir, DOC);
    let out = dir.join("cands.json");
    // No key: 401 is not retried.
    let (o, _) = candidates(&srv.url(), &doc, &out, &["--llm-retries", "3"]);
    assert_eq!(o.status.code(), Some(5), "{}", stderr(&o));
    assert!(stderr(&o).contains("1 attempt(s)") && stderr(&o).contains("HTTP status 401"));
    assert_eq!(srv.requests(), 1);
    // From a file.
    let key = dir.join("key.txt");
    std::fs::write(&key, "fake-secret-key\n").unwrap();
    let key_arg = key.display().to_string();
    let (o, _) = candidates(&srv.url(), &doc, &out, &["--llm-api-key-file", &key_arg]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    for f in walk_json(&dir.join(".llm-cache")) {
        let text = std::fs::read_to_string(f).unwrap();
        assert!(!text.contains("fake-secret-key"));
    }
    // From the environment (a fresh cache, so the request is really sent).
    let o = Command::new(bin())
        .arg("candidates")
        .arg(&doc)
        .arg("--out")
        .arg(&out)
        .args(["--llm-url", &srv.url(), "--llm-model", "fake", "--json"])
        .arg("--llm-cache")
        .arg(dir.join("cache2"))
        .env("SEMTRACE_LLM_API_KEY", "fake-secret-key")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(summary(&o)["llm"]["stats"]["http_requests"], 2);
}

/// `semtrace build` against an endpoint that keeps failing: it retries, then fails clearly with
/// the network exit code, and leaves no bundle (nor report) behind.
#[test]
fn build_against_a_failing_endpoint_fails_clearly_without_a_bundle() {
    for mode in ["500", "malformed"] {
        let srv = FakeLlm::start(mode);
        let dir = temp_dir(&format!("llm-build-{mode}"));
        let doc = write_doc(&dir, DOC);
        let out = dir.join("out");
        let emb = semtrace_e2e::embedder_dir();
        // Supplied controls: the candidate requests are the ones that fail.
        std::fs::create_dir_all(dir.join("controls")).unwrap();
        std::fs::write(
            dir.join("controls/c1.md"),
            "The paper trains a Transformer.",
        )
        .unwrap();
        let o = Command::new(bin())
            .arg("build")
            .arg(&doc)
            .arg("--out")
            .arg(&out)
            .args(["--embedder", emb.to_str().unwrap(), "--controls"])
            .arg(dir.join("controls"))
            .args(["--llm-url", &srv.url(), "--llm-model", "fake", "--quiet"])
            .args(["--llm-backoff-ms", "20", "--llm-retries", "2"])
            .env("SEMTRACE_HOME", dir.join("home"))
            .env_remove("SEMTRACE_LLM_API_KEY")
            .current_dir(root())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(5), "{mode}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(err.contains("failed after 3 attempt"), "{mode}: {err}");
        assert!(
            !out.join("bundle.json").exists() && !out.join("report.json").exists(),
            "{mode}"
        );
        assert!(srv.requests() >= 3, "{mode}: retried");
    }
}
