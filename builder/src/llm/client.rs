//! Async client for OpenAI-compatible chat completions.
//!
//! * `POST {url}/v1/chat/completions` (a `url` already ending in `/v1` is accepted too).
//! * Constrained answers: `response_format: {"type": "json_schema", "json_schema": {"name", "schema",
//!   "strict": true}}`; `choices[0].message.content` is then parsed as JSON and validated by the caller.
//! * At most `concurrency` requests in flight (a tokio semaphore), each bounded by `timeout`.
//! * Retries (at most `retries` after the first attempt) on HTTP 429, 5xx, timeouts, connection errors,
//!   unreadable response bodies and answers that fail validation. Delays are deterministic:
//!   `backoff * 2^attempt`, capped at `max_wait`; a 429's `Retry-After` (seconds) is honoured, also
//!   capped at `max_wait`. Other 4xx statuses (bad request, unauthorised, ...) fail at once.
//!   A retry after an invalid answer uses `seed + attempt`, so a deterministic server can answer
//!   differently; the cache key stays the original request's.
//! * Every validated answer goes through the on-disk cache ([`LlmCache`]).
//! * The API key is sent as `Authorization: Bearer ...` and never stored in the cache.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};
use tokio::sync::Semaphore;

use super::cache::{request_key, CacheStats, LlmCache};
use crate::http::error_chain;

/// Environment variable holding the API key (never pass keys on the command line).
pub const API_KEY_ENV: &str = "SEMTRACE_LLM_API_KEY";

#[derive(Debug, Clone)]
pub struct LlmConfig {
    /// Server base URL, e.g. `http://127.0.0.1:8080` (or `.../v1`).
    pub url: String,
    /// Model name sent in every request (llama.cpp ignores it; vLLM/Ollama route by it).
    pub model: String,
    pub api_key: Option<String>,
    /// Requests in flight at most.
    pub concurrency: usize,
    /// Per-request time limit (connect + answer).
    pub timeout: Duration,
    /// Retries after the first attempt.
    pub retries: u32,
    /// Default sampling temperature (requests may override).
    pub temperature: f64,
    /// Default sampling seed (requests may override).
    pub seed: u64,
    /// First retry delay; doubled for every further attempt.
    pub backoff: Duration,
    /// Cap on any single wait (backoff or Retry-After).
    pub max_wait: Duration,
}

impl LlmConfig {
    pub fn new(url: impl Into<String>, model: impl Into<String>) -> Self {
        LlmConfig {
            url: url.into(),
            model: model.into(),
            api_key: None,
            concurrency: 4,
            timeout: Duration::from_secs(120),
            retries: 4,
            temperature: 0.0,
            seed: 0,
            backoff: Duration::from_secs(1),
            max_wait: Duration::from_secs(60),
        }
    }

    /// The chat-completions endpoint.
    pub fn endpoint(&self) -> String {
        let base = self.url.trim_end_matches('/');
        if base.ends_with("/v1") {
            format!("{base}/chat/completions")
        } else {
            format!("{base}/v1/chat/completions")
        }
    }

    /// Deterministic delay before retry number `attempt + 1` (attempt counts from 0).
    pub fn backoff_delay(&self, attempt: u32) -> Duration {
        let factor = 1u32.checked_shl(attempt.min(20)).unwrap_or(u32::MAX);
        self.backoff.saturating_mul(factor).min(self.max_wait)
    }
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Message {
    pub role: String,
    pub content: String,
}

impl Message {
    pub fn system(s: impl Into<String>) -> Self {
        Message {
            role: "system".into(),
            content: s.into(),
        }
    }
    pub fn user(s: impl Into<String>) -> Self {
        Message {
            role: "user".into(),
            content: s.into(),
        }
    }
}

/// One chat request. Unset sampling fields fall back to the client's configuration.
#[derive(Debug, Clone, Default)]
pub struct ChatRequest {
    pub messages: Vec<Message>,
    /// `(name, JSON schema)` for a constrained JSON answer.
    pub schema: Option<(String, Value)>,
    pub temperature: Option<f64>,
    pub top_p: Option<f64>,
    pub max_tokens: Option<u32>,
    pub seed: Option<u64>,
}

/// Why a request finally failed (after the retry budget, or at once for a non-retryable status).
#[derive(Debug)]
pub struct LlmError {
    pub endpoint: String,
    pub attempts: u32,
    /// HTTP status of the last attempt, when one was received.
    pub status: Option<u16>,
    pub last_problem: String,
}

impl std::fmt::Display for LlmError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "LLM request to {} failed after {} attempt(s)",
            self.endpoint, self.attempts
        )?;
        if let Some(s) = self.status {
            write!(f, " (last HTTP status {s})")?;
        }
        write!(f, ": {}", self.last_problem)
    }
}

impl std::error::Error for LlmError {}

/// Request counters, for reports.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq, Eq)]
pub struct LlmStats {
    /// Logical requests (one per call, whether cached or not).
    pub calls: u64,
    /// HTTP attempts actually sent.
    pub http_requests: u64,
    pub retries: u64,
    pub cache: CacheStats,
}

pub struct LlmClient {
    cfg: LlmConfig,
    endpoint: String,
    http: reqwest::Client,
    permits: Arc<Semaphore>,
    cache: Option<LlmCache>,
    calls: AtomicU64,
    http_requests: AtomicU64,
    retries: AtomicU64,
}

enum Attempt {
    /// Retry after the given delay (None: the usual backoff).
    Retry {
        status: Option<u16>,
        problem: String,
        wait: Option<Duration>,
    },
    Fatal {
        status: Option<u16>,
        problem: String,
    },
}

impl LlmClient {
    pub fn new(cfg: LlmConfig, cache: Option<LlmCache>) -> anyhow::Result<Self> {
        // The shared constructor, so an https endpoint behind a TLS-inspecting proxy is trusted
        // the same way as model downloads (SSL_CERT_FILE, system store, HTTPS_PROXY).
        let http = crate::http::client(cfg.timeout.min(Duration::from_secs(30)), None)?;
        Ok(LlmClient {
            endpoint: cfg.endpoint(),
            permits: Arc::new(Semaphore::new(cfg.concurrency.max(1))),
            cfg,
            http,
            cache,
            calls: AtomicU64::new(0),
            http_requests: AtomicU64::new(0),
            retries: AtomicU64::new(0),
        })
    }

    pub fn config(&self) -> &LlmConfig {
        &self.cfg
    }

    pub fn stats(&self) -> LlmStats {
        LlmStats {
            calls: self.calls.load(Ordering::Relaxed),
            http_requests: self.http_requests.load(Ordering::Relaxed),
            retries: self.retries.load(Ordering::Relaxed),
            cache: self.cache.as_ref().map(|c| c.stats()).unwrap_or_default(),
        }
    }

    /// The request body exactly as sent (and as hashed for the cache), for a given seed.
    pub fn body(&self, req: &ChatRequest, seed: u64) -> Value {
        let mut body = json!({
            "model": self.cfg.model,
            "messages": req.messages,
            "temperature": req.temperature.unwrap_or(self.cfg.temperature),
            "seed": seed,
            "stream": false,
        });
        if let Some(p) = req.top_p {
            body["top_p"] = json!(p);
        }
        if let Some(n) = req.max_tokens {
            body["max_tokens"] = json!(n);
        }
        if let Some((name, schema)) = &req.schema {
            body["response_format"] = json!({
                "type": "json_schema",
                "json_schema": {"name": name, "schema": schema, "strict": true}
            });
        }
        body
    }

    /// Free-text answer (`choices[0].message.content`, non-empty).
    pub async fn chat_text(&self, req: &ChatRequest) -> Result<String, LlmError> {
        self.chat_validated(req, |content| {
            if content.trim().is_empty() {
                Err("the answer is empty".to_string())
            } else {
                Ok(content.to_string())
            }
        })
        .await
    }

    /// JSON answer parsed into `T` (shape validated by serde); a malformed answer is retried.
    pub async fn chat_json<T: DeserializeOwned>(&self, req: &ChatRequest) -> Result<T, LlmError> {
        self.chat_validated(req, |content| {
            serde_json::from_str::<T>(strip_fences(content)).map_err(|e| {
                format!(
                    "the answer is not the expected JSON ({e}); it began {:?}",
                    content.chars().take(120).collect::<String>()
                )
            })
        })
        .await
    }

    /// The core: cache lookup, bounded and retried requests, validation, cache store.
    pub async fn chat_validated<T>(
        &self,
        req: &ChatRequest,
        validate: impl Fn(&str) -> Result<T, String>,
    ) -> Result<T, LlmError> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        let seed = req.seed.unwrap_or(self.cfg.seed);
        let body = self.body(req, seed);
        let key = request_key(&body);
        if let Some(cache) = &self.cache {
            if let Some(content) = cache.get(&key) {
                if let Ok(v) = validate(&content) {
                    return Ok(v);
                }
            }
        }
        let mut last = (None, String::from("no attempt made"));
        let mut invalid_answers = 0u64;
        for attempt in 0..=self.cfg.retries {
            if attempt > 0 {
                self.retries.fetch_add(1, Ordering::Relaxed);
            }
            let sent = if invalid_answers == 0 {
                body.clone()
            } else {
                self.body(req, seed.wrapping_add(invalid_answers))
            };
            let outcome = match self.attempt(&sent).await {
                Ok(content) => match validate(&content) {
                    Ok(v) => {
                        if let Some(cache) = &self.cache {
                            if let Err(e) = cache.put(&key, &body, &content) {
                                eprintln!("warning: LLM cache not written: {e:#}");
                            }
                        }
                        return Ok(v);
                    }
                    Err(problem) => {
                        invalid_answers += 1;
                        Attempt::Retry {
                            status: Some(200),
                            problem,
                            wait: None,
                        }
                    }
                },
                Err(a) => a,
            };
            match outcome {
                Attempt::Fatal { status, problem } => {
                    return Err(LlmError {
                        endpoint: self.endpoint.clone(),
                        attempts: attempt + 1,
                        status,
                        last_problem: problem,
                    })
                }
                Attempt::Retry {
                    status,
                    problem,
                    wait,
                } => {
                    last = (status, problem);
                    if attempt < self.cfg.retries {
                        let d = wait
                            .map(|w| w.min(self.cfg.max_wait))
                            .unwrap_or_else(|| self.cfg.backoff_delay(attempt));
                        tokio::time::sleep(d).await;
                    }
                }
            }
        }
        Err(LlmError {
            endpoint: self.endpoint.clone(),
            attempts: self.cfg.retries + 1,
            status: last.0,
            last_problem: last.1,
        })
    }

    /// One HTTP attempt under a concurrency permit; Ok is the message content.
    async fn attempt(&self, body: &Value) -> Result<String, Attempt> {
        let _permit = self
            .permits
            .acquire()
            .await
            .expect("semaphore never closed");
        self.http_requests.fetch_add(1, Ordering::Relaxed);
        let mut rb = self
            .http
            .post(&self.endpoint)
            .timeout(self.cfg.timeout)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(serde_json::to_vec(body).expect("JSON body serialises"));
        if let Some(k) = &self.cfg.api_key {
            rb = rb.bearer_auth(k);
        }
        let resp = match rb.send().await {
            Ok(r) => r,
            Err(e) => return Err(transport_problem(&e, self.cfg.timeout)),
        };
        let status = resp.status();
        let retry_after = resp
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|s| s.trim().parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s >= 0.0)
            .map(Duration::from_secs_f64);
        let bytes = match resp.bytes().await {
            Ok(b) => b,
            Err(e) => return Err(transport_problem(&e, self.cfg.timeout)),
        };
        let code = status.as_u16();
        if !status.is_success() {
            let snippet: String = String::from_utf8_lossy(&bytes).chars().take(200).collect();
            let problem = format!("HTTP {status}: {}", snippet.trim());
            return Err(if code == 429 {
                Attempt::Retry {
                    status: Some(code),
                    problem,
                    wait: retry_after,
                }
            } else if status.is_server_error() || code == 408 {
                Attempt::Retry {
                    status: Some(code),
                    problem,
                    wait: None,
                }
            } else {
                Attempt::Fatal {
                    status: Some(code),
                    problem,
                }
            });
        }
        let retry = |problem: String| Attempt::Retry {
            status: Some(code),
            problem,
            wait: None,
        };
        let v: Value = serde_json::from_slice(&bytes)
            .map_err(|e| retry(format!("the response body is not JSON ({e})")))?;
        if let Some(err) = v.get("error") {
            return Err(retry(format!("the server reported an error: {err}")));
        }
        let choice = &v["choices"][0];
        match choice["message"]["content"].as_str() {
            Some(c) => {
                if choice["finish_reason"] == "length" {
                    // A truncated constrained answer is malformed JSON; say why when it is.
                    if serde_json::from_str::<Value>(strip_fences(c)).is_err()
                        && body.get("response_format").is_some()
                    {
                        return Err(retry(
                            "the answer was cut off at max_tokens (finish_reason \"length\")"
                                .to_string(),
                        ));
                    }
                }
                Ok(c.to_string())
            }
            None => Err(retry(
                "the response has no choices[0].message.content string".to_string(),
            )),
        }
    }
}

fn transport_problem(e: &reqwest::Error, timeout: Duration) -> Attempt {
    // A refused certificate stays refused: say what to do instead of retrying.
    if crate::http::is_certificate_problem(e) {
        return Attempt::Fatal {
            status: None,
            problem: format!(
                "cannot connect ({}): {}",
                error_chain(e),
                crate::http::CERTIFICATE_HINT
            ),
        };
    }
    let problem = if e.is_timeout() {
        format!("no answer within the {} s timeout", timeout.as_secs_f64())
    } else if e.is_connect() {
        format!("cannot connect ({})", error_chain(e))
    } else {
        format!("transport error ({})", error_chain(e))
    };
    Attempt::Retry {
        status: None,
        problem,
        wait: None,
    }
}

/// Some servers wrap JSON answers in Markdown code fences even under a schema; accept that.
fn strip_fences(s: &str) -> &str {
    let t = s.trim();
    if let Some(rest) = t.strip_prefix("```") {
        let rest = rest.strip_prefix("json").unwrap_or(rest);
        if let Some(inner) = rest.trim_end().strip_suffix("```") {
            return inner.trim();
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_and_backoff() {
        let mut c = LlmConfig::new("http://h:1/", "m");
        assert_eq!(c.endpoint(), "http://h:1/v1/chat/completions");
        c.url = "http://h:1/v1".into();
        assert_eq!(c.endpoint(), "http://h:1/v1/chat/completions");
        c.backoff = Duration::from_millis(100);
        c.max_wait = Duration::from_millis(500);
        assert_eq!(c.backoff_delay(0), Duration::from_millis(100));
        assert_eq!(c.backoff_delay(2), Duration::from_millis(400));
        assert_eq!(c.backoff_delay(3), Duration::from_millis(500));
        assert_eq!(c.backoff_delay(40), Duration::from_millis(500));
    }

    #[test]
    fn fences_are_stripped() {
        assert_eq!(strip_fences("```json\n{\"a\":1}\n```"), "{\"a\":1}");
        assert_eq!(strip_fences(" {\"a\":1} "), "{\"a\":1}");
    }

    #[test]
    fn body_carries_schema_and_sampling() {
        let client = LlmClient::new(LlmConfig::new("http://127.0.0.1:9", "m"), None).unwrap();
        let req = ChatRequest {
            messages: vec![Message::user("hi")],
            schema: Some(("s".into(), json!({"type": "object"}))),
            top_p: Some(0.9),
            max_tokens: Some(10),
            ..Default::default()
        };
        let b = client.body(&req, 7);
        assert_eq!(b["seed"], 7);
        assert_eq!(b["response_format"]["json_schema"]["strict"], true);
        assert_eq!(b["top_p"], 0.9);
        assert_eq!(b["max_tokens"], 10);
    }
}
