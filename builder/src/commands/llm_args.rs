//! From `LlmArgs` to a ready client; the minimal text loader used until the real source loader lands.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};

use crate::cli::LlmArgs;
use crate::exit::InputError;
use crate::llm::client::API_KEY_ENV;
use crate::llm::{LlmCache, LlmClient, LlmConfig};
use crate::source::SourceDoc;

fn usage(msg: &str) -> ! {
    clap::Error::raw(
        clap::error::ErrorKind::MissingRequiredArgument,
        format!("{msg}\n"),
    )
    .exit()
}

/// The API key: `--llm-api-key-file` (first line) if given, else `$SEMTRACE_LLM_API_KEY`, else none.
fn api_key(args: &LlmArgs) -> Result<Option<String>> {
    if let Some(f) = &args.llm_api_key_file {
        let s = std::fs::read_to_string(f)
            .with_context(|| format!("cannot read the API key file {}", f.display()))?;
        let key = s.lines().next().unwrap_or("").trim().to_string();
        if key.is_empty() {
            return Err(InputError(format!("the API key file {} is empty", f.display())).into());
        }
        return Ok(Some(key));
    }
    Ok(std::env::var(API_KEY_ENV)
        .ok()
        .map(|k| k.trim().to_string())
        .filter(|k| !k.is_empty()))
}

pub fn config(args: &LlmArgs) -> Result<LlmConfig> {
    let Some(url) = args.llm_url.clone() else {
        usage("the LLM endpoint is required: --llm-url URL (or SEMTRACE_LLM_URL)")
    };
    let Some(model) = args.llm_model.clone() else {
        usage("the LLM model name is required: --llm-model NAME (or SEMTRACE_LLM_MODEL)")
    };
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(InputError(format!("--llm-url must be an http(s) URL, got {url:?}")).into());
    }
    let secs = |x: f64, what: &str| -> Result<Duration> {
        Duration::try_from_secs_f64(x).map_err(|_| {
            InputError(format!("{what} must be a non-negative number of seconds")).into()
        })
    };
    let mut c = LlmConfig::new(url, model);
    c.api_key = api_key(args)?;
    c.concurrency = args.llm_concurrency.max(1);
    c.timeout = secs(args.llm_timeout, "--llm-timeout")?;
    c.retries = args.llm_retries;
    c.temperature = args.llm_temperature;
    c.seed = args.llm_seed;
    c.backoff = Duration::from_millis(args.llm_backoff_ms);
    c.max_wait = secs(args.llm_max_wait, "--llm-max-wait")?;
    Ok(c)
}

/// Cache directory: `--llm-cache`, else `.llm-cache` in the output's directory.
pub fn cache_dir(args: &LlmArgs, out: &Path) -> PathBuf {
    args.llm_cache.clone().unwrap_or_else(|| {
        out.parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .join(".llm-cache")
    })
}

pub fn client(args: &LlmArgs, out: &Path) -> Result<LlmClient> {
    let cfg = config(args)?;
    let cache = LlmCache::open(&cache_dir(args, out))?;
    LlmClient::new(cfg, Some(cache))
}

pub fn runtime() -> Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?)
}

/// Load a source document (PDF or text/Markdown) with the real loader; bad documents are input errors.
pub fn load_source(path: &Path) -> Result<SourceDoc> {
    crate::source::load(path).map_err(|e| InputError(format!("{}: {e}", path.display())).into())
}

/// The retained body as one text: units separated by blank lines.
pub fn body_text(doc: &SourceDoc) -> String {
    doc.units
        .iter()
        .map(|u| u.text.as_str())
        .collect::<Vec<_>>()
        .join("\n\n")
}
