//! Where models live and how a `--model` argument becomes a loaded engine.
//!
//! A model directory holds the ONNX graph, `tokenizer.json`, and either a SemTrace manifest
//! (`semtrace-model.json`, written by `model import`/`model fetch`) or a HuggingFace
//! `config.json` whose `id2label` names the labels. Registered models live in
//! `$SEMTRACE_HOME/models/NAME` (default: the user cache dir, e.g. `~/.cache/semtrace`).
//!
//! Two kinds share the store, told apart by the manifest's `kind`: "nli" (the default, so
//! manifests written before kinds existed keep working) and "embedder" (a BERT sentence encoder as
//! `model.safetensors` + `tokenizer.json` + `config.json`, see [`EmbedderManifest`]).

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use semtrace_core::nli::ModelSpec;
use semtrace_infer::embed::TractEmbedder;
use semtrace_infer::TractNli;
use serde::{Deserialize, Serialize};

use crate::exit::InputError;

pub const MANIFEST: &str = "semtrace-model.json";

/// Manifest `kind` of NLI cross-encoders (also what a manifest without `kind` is).
pub const KIND_NLI: &str = "nli";
/// Manifest `kind` of sentence embedders.
pub const KIND_EMBEDDER: &str = "embedder";
/// The embedder [`load_embedder`] uses when none is named.
pub const DEFAULT_EMBEDDER: &str = "all-minilm-l6-v2";

fn default_kind() -> String {
    KIND_NLI.into()
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Manifest {
    #[serde(default = "default_kind")]
    pub kind: String,
    pub spec: ModelSpec,
    /// ONNX file name inside the directory.
    pub onnx: String,
    pub tokenizer: String,
    /// SHA-256 of the ONNX file when registered; checked on every load.
    pub sha256: String,
    /// Where it came from (hub URL + revision, or the imported path).
    #[serde(default)]
    pub source: String,
}

/// Raw model material, ready for [`TractNli::load`].
pub struct ModelBytes {
    pub onnx: Vec<u8>,
    pub tokenizer: Vec<u8>,
    pub spec: ModelSpec,
    /// SHA-256 the manifest promises (None for unregistered directories and the embedded model).
    pub expected_sha256: Option<String>,
}

pub fn home() -> Result<PathBuf> {
    if let Some(h) = std::env::var_os("SEMTRACE_HOME") {
        return Ok(PathBuf::from(h));
    }
    let base = dirs::cache_dir().context("no cache directory on this system: set SEMTRACE_HOME")?;
    Ok(base.join("semtrace"))
}

pub fn models_dir() -> Result<PathBuf> {
    Ok(home()?.join("models"))
}

/// Resolve `--model`: "default", a directory, or a registered name.
pub fn resolve(arg: &str) -> Result<ModelBytes> {
    if arg == "default" {
        return crate::embedded::embedded();
    }
    let path = Path::new(arg);
    if path.is_dir() {
        return read_dir(path);
    }
    let registered = models_dir()?.join(arg);
    if registered.is_dir() {
        return read_dir(&registered);
    }
    Err(InputError(format!(
        "model {arg:?} is neither a directory nor a registered model (registered: {}); \
         use `semtrace model import DIR` or `semtrace model fetch`",
        list_names().unwrap_or_default().join(", ")
    ))
    .into())
}

pub fn load(args: &crate::cli::ModelArgs) -> Result<TractNli> {
    let threads = match args.threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    };
    let mut engine = load_model(&args.model, args.batch_size)?;
    engine.set_threads(threads);
    Ok(engine)
}

/// Load an NLI model (one inference thread).
pub fn load_model(arg: &str, batch_size: usize) -> Result<TractNli> {
    let m = resolve(arg)?;
    let mut engine = TractNli::load(&m.onnx, &m.tokenizer, m.spec)?;
    if let Some(expected) = m.expected_sha256 {
        if !expected.eq_ignore_ascii_case(engine.sha256()) {
            bail!(semtrace_core::Error::model(format!(
                "model {arg:?} changed since it was registered: sha256 {} but the manifest says {expected}",
                engine.sha256()
            )));
        }
    }
    engine.set_batch_size(batch_size);
    Ok(engine)
}

/// Read a model directory (with a manifest, or a HuggingFace layout).
pub fn read_dir(dir: &Path) -> Result<ModelBytes> {
    let manifest_path = dir.join(MANIFEST);
    if manifest_path.is_file() {
        let text = fs::read_to_string(&manifest_path)
            .with_context(|| format!("reading {}", manifest_path.display()))?;
        if manifest_kind(&text) != KIND_NLI {
            return Err(semtrace_core::Error::model(format!(
                "{} is a {} model, not an NLI cross-encoder",
                dir.display(),
                manifest_kind(&text)
            ))
            .into());
        }
        let m: Manifest = serde_json::from_str(&text).map_err(|e| {
            semtrace_core::Error::model(format!("{} is malformed: {e}", manifest_path.display()))
        })?;
        return Ok(ModelBytes {
            onnx: read(&dir.join(&m.onnx))?,
            tokenizer: read(&dir.join(&m.tokenizer))?,
            spec: m.spec,
            expected_sha256: Some(m.sha256),
        });
    }
    let onnx = find_onnx(dir, None)?;
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "model".into());
    let config = dir.join("config.json");
    let config_text = fs::read_to_string(&config).map_err(|_| {
        semtrace_core::Error::model(format!(
            "{} has neither {MANIFEST} nor config.json: cannot tell which output is entailment \
             (register it with `semtrace model import {} --labels ...`)",
            dir.display(),
            dir.display()
        ))
    })?;
    let spec = ModelSpec::from_hf_config(&name, &config_text)?;
    Ok(ModelBytes {
        onnx: read(&onnx)?,
        tokenizer: read(&dir.join("tokenizer.json"))?,
        spec,
        expected_sha256: None,
    })
}

pub fn find_onnx(dir: &Path, explicit: Option<&str>) -> Result<PathBuf> {
    if let Some(name) = explicit {
        return Ok(dir.join(name));
    }
    let default = dir.join("model.onnx");
    if default.is_file() {
        return Ok(default);
    }
    let mut found: Vec<PathBuf> = fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "onnx"))
        .collect();
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => Err(semtrace_core::Error::model(format!("no .onnx file in {}", dir.display())).into()),
        _ => Err(InputError(format!(
            "several .onnx files in {}: choose one with --onnx",
            dir.display()
        ))
        .into()),
    }
}

fn read(p: &Path) -> Result<Vec<u8>> {
    fs::read(p).map_err(|e| {
        semtrace_core::Error::model(format!("cannot read {}: {e}", p.display())).into()
    })
}

/// The `kind` a manifest declares ("nli" when absent or unreadable).
pub fn manifest_kind(text: &str) -> String {
    serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .and_then(|v| v.get("kind").and_then(|k| k.as_str()).map(str::to_string))
        .unwrap_or_else(default_kind)
}

/// Manifest of a registered sentence embedder.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EmbedderManifest {
    /// Always [`KIND_EMBEDDER`].
    pub kind: String,
    pub name: String,
    /// File names inside the directory.
    pub weights: String,
    pub tokenizer: String,
    pub config: String,
    /// SHA-256 of the weights file when registered; checked on every load.
    pub sha256: String,
    #[serde(default)]
    pub source: String,
}

/// File names of an embedder directory (a HuggingFace sentence-transformers layout).
pub const EMBEDDER_FILES: [&str; 3] = ["model.safetensors", "tokenizer.json", "config.json"];

/// Build an embedder from the three files' bytes (the only place the graph gets built).
pub fn embedder_from_bytes(
    weights: &[u8],
    tokenizer: &[u8],
    config: &[u8],
) -> Result<TractEmbedder> {
    Ok(TractEmbedder::load(weights, tokenizer, config)?)
}

/// Load a sentence embedder: a registered name (default [`DEFAULT_EMBEDDER`]) or a directory
/// holding model.safetensors + tokenizer.json + config.json. A missing one is a model error
/// (exit 4) naming the command that installs it.
pub fn load_embedder(name: Option<&str>) -> Result<TractEmbedder> {
    let name = name.unwrap_or(DEFAULT_EMBEDDER);
    let path = Path::new(name);
    // An unregistered directory: use its files as they are.
    if path.is_dir() && !path.join(MANIFEST).is_file() {
        let files: Vec<Vec<u8>> = EMBEDDER_FILES
            .iter()
            .map(|f| read(&path.join(f)))
            .collect::<Result<_>>()?;
        return embedder_from_bytes(&files[0], &files[1], &files[2]);
    }
    let dir = if path.is_dir() {
        path.to_path_buf()
    } else {
        models_dir()?.join(name)
    };
    let manifest_path = dir.join(MANIFEST);
    let Ok(text) = fs::read_to_string(&manifest_path) else {
        return Err(semtrace_core::Error::model(format!(
            "no sentence embedder {name:?} is registered in {}: run `semtrace model fetch {DEFAULT_EMBEDDER}` \
             (needs internet) or `semtrace model import-embedder DIR --name {name}` \
             (DIR with model.safetensors, tokenizer.json, config.json)",
            models_dir()?.display()
        ))
        .into());
    };
    if manifest_kind(&text) != KIND_EMBEDDER {
        return Err(semtrace_core::Error::model(format!(
            "model {name:?} is a {} model, not a sentence embedder",
            manifest_kind(&text)
        ))
        .into());
    }
    let m: EmbedderManifest = serde_json::from_str(&text).map_err(|e| {
        semtrace_core::Error::model(format!("{} is malformed: {e}", manifest_path.display()))
    })?;
    let weights = read(&dir.join(&m.weights))?;
    let sha = semtrace_core::sha256_hex(&weights);
    if !sha.eq_ignore_ascii_case(&m.sha256) {
        bail!(semtrace_core::Error::model(format!(
            "embedder {name:?} changed since it was registered: sha256 {sha} but the manifest says {}",
            m.sha256
        )));
    }
    let tokenizer = read(&dir.join(&m.tokenizer))?;
    let config = read(&dir.join(&m.config))?;
    embedder_from_bytes(&weights, &tokenizer, &config)
}

pub fn list_names() -> Result<Vec<String>> {
    let dir = models_dir()?;
    let mut names: Vec<String> = match fs::read_dir(&dir) {
        Ok(rd) => rd
            .filter_map(|e| e.ok())
            .filter(|e| e.path().join(MANIFEST).is_file())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect(),
        Err(_) => Vec::new(),
    };
    names.sort();
    Ok(names)
}

/// Write a registered model atomically: files go to a temporary sibling directory that is
/// renamed into place only when complete, so an interrupted import leaves nothing half-written.
pub fn register(
    name: &str,
    files: &[(&str, &[u8])],
    manifest: &impl Serialize,
    force: bool,
) -> Result<PathBuf> {
    if name.is_empty() || name.contains(['/', '\\']) || name.starts_with('.') || name == "default" {
        return Err(InputError(format!("{name:?} is not a usable model name")).into());
    }
    let root = models_dir()?;
    fs::create_dir_all(&root).with_context(|| format!("creating {}", root.display()))?;
    let target = root.join(name);
    if target.exists() && !force {
        return Err(InputError(format!(
            "a model named {name:?} is already registered at {} (use --force or another --name)",
            target.display()
        ))
        .into());
    }
    let tmp = tempfile::Builder::new()
        .prefix(".import-")
        .tempdir_in(&root)?;
    for (file, bytes) in files {
        fs::write(tmp.path().join(file), bytes)?;
    }
    fs::write(
        tmp.path().join(MANIFEST),
        serde_json::to_string_pretty(manifest)?,
    )?;
    if target.exists() {
        fs::remove_dir_all(&target)?;
    }
    let kept = tmp.keep();
    if let Err(e) = fs::rename(&kept, &target) {
        // No stray copy either (another process may have registered the name meanwhile).
        let _ = fs::remove_dir_all(&kept);
        return Err(
            anyhow::Error::new(e).context(format!("moving the model into {}", target.display()))
        );
    }
    Ok(target)
}
