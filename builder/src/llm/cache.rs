//! On-disk cache of LLM answers: one JSON file per request, keyed by the SHA-256 of the canonical
//! request JSON (model, messages, response schema, sampling parameters, seed — everything that is
//! sent except the endpoint URL and the API key). Files are written atomically (temp file + rename)
//! and only for answers that passed validation, so a cached success is never requested again and a
//! killed run resumes where it stopped.
//!
//! Layout: `DIR/<first two hex digits>/<key>.json` holding `{"key", "request", "content"}`.

pub use crate::atomic::write_atomic;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// Hit/miss counters, for reports.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq, Eq)]
pub struct CacheStats {
    pub hits: u64,
    pub misses: u64,
    pub writes: u64,
}

#[derive(Debug)]
pub struct LlmCache {
    dir: PathBuf,
    hits: AtomicU64,
    misses: AtomicU64,
    writes: AtomicU64,
}

#[derive(Serialize, Deserialize)]
struct Entry {
    key: String,
    request: Value,
    content: String,
}

/// SHA-256 (hex) of the canonical serialisation of `request`. serde_json's default map is ordered
/// by key, so equal requests serialise identically whatever order their fields were built in.
pub fn request_key(request: &Value) -> String {
    let canonical = serde_json::to_vec(&canonicalize(request)).expect("JSON value serialises");
    hex::encode(Sha256::digest(&canonical))
}

fn canonicalize(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| (k.clone(), canonicalize(v)))
                .collect::<serde_json::Map<_, _>>(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(canonicalize).collect()),
        other => other.clone(),
    }
}

impl LlmCache {
    pub fn open(dir: &Path) -> Result<Self> {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create the LLM cache directory {}", dir.display()))?;
        Ok(LlmCache {
            dir: dir.to_path_buf(),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            writes: AtomicU64::new(0),
        })
    }

    fn path(&self, key: &str) -> PathBuf {
        self.dir.join(&key[..2]).join(format!("{key}.json"))
    }

    /// The cached answer for `key`, counting a hit or a miss. An unreadable or corrupt entry is a miss.
    pub fn get(&self, key: &str) -> Option<String> {
        let found = std::fs::read(self.path(key))
            .ok()
            .and_then(|b| serde_json::from_slice::<Entry>(&b).ok())
            .filter(|e| e.key == key)
            .map(|e| e.content);
        if found.is_some() {
            self.hits.fetch_add(1, Ordering::Relaxed);
        } else {
            self.misses.fetch_add(1, Ordering::Relaxed);
        }
        found
    }

    /// Store a validated answer atomically (temp file in the same directory, then rename).
    pub fn put(&self, key: &str, request: &Value, content: &str) -> Result<()> {
        let path = self.path(key);
        let parent = path.parent().expect("cache path has a parent");
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
        let entry = Entry {
            key: key.to_string(),
            request: request.clone(),
            content: content.to_string(),
        };
        write_atomic(&path, &serde_json::to_vec_pretty(&entry)?)?;
        self.writes.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    pub fn stats(&self) -> CacheStats {
        CacheStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            writes: self.writes.load(Ordering::Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn key_ignores_field_order_and_sees_every_field() {
        let a = json!({"model": "m", "seed": 1, "messages": [{"role": "user", "content": "x"}]});
        let b = json!({"messages": [{"content": "x", "role": "user"}], "seed": 1, "model": "m"});
        assert_eq!(request_key(&a), request_key(&b));
        let c = json!({"model": "m", "seed": 2, "messages": [{"role": "user", "content": "x"}]});
        assert_ne!(request_key(&a), request_key(&c));
    }

    #[test]
    fn put_then_get_counts_and_survives_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let req = json!({"model": "m"});
        let key = request_key(&req);
        let cache = LlmCache::open(dir.path()).unwrap();
        assert_eq!(cache.get(&key), None);
        cache.put(&key, &req, "{\"a\":1}").unwrap();
        let again = LlmCache::open(dir.path()).unwrap();
        assert_eq!(again.get(&key).as_deref(), Some("{\"a\":1}"));
        assert_eq!(cache.stats().misses, 1);
        assert_eq!(again.stats().hits, 1);
        // No temporary files are left behind.
        let n: usize = std::fs::read_dir(dir.path().join(&key[..2]))
            .unwrap()
            .count();
        assert_eq!(n, 1);
    }

    #[test]
    fn corrupt_entry_is_a_miss() {
        let dir = tempfile::tempdir().unwrap();
        let req = json!({"model": "m"});
        let key = request_key(&req);
        let cache = LlmCache::open(dir.path()).unwrap();
        std::fs::create_dir_all(dir.path().join(&key[..2])).unwrap();
        std::fs::write(cache.path(&key), b"{truncated").unwrap();
        assert_eq!(cache.get(&key), None);
    }
}
