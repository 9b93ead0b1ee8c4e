//! Output files appear whole or not at all: a temporary file in the same directory, synced,
//! then renamed into place.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// Write `bytes` to `path` atomically: a temporary file beside it, flushed, then renamed over it.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut tmp = tempfile::NamedTempFile::new_in(&parent)
        .with_context(|| format!("cannot create a temporary file in {}", parent.display()))?;
    tmp.write_all(bytes)
        .and_then(|_| tmp.as_file().sync_all())
        .with_context(|| format!("cannot write {}", path.display()))?;
    tmp.persist(path)
        .map_err(|e| e.error)
        .with_context(|| format!("cannot move the finished file to {}", path.display()))?;
    Ok(())
}

/// Records of a resumable JSON Lines log (`eval`'s reviews.jsonl, a venue batch's results):
/// the lines that parse; a torn last line from a kill does not, and is redone.
pub fn finished_lines<T: serde::de::DeserializeOwned>(path: &Path) -> Vec<T> {
    std::fs::read_to_string(path)
        .map(|body| {
            body.lines()
                .filter_map(|l| serde_json::from_str::<T>(l).ok())
                .collect()
        })
        .unwrap_or_default()
}

/// Rewrites the log with only `kept` (dropping a torn line), then opens it for appending.
pub fn reopen_log<T: serde::Serialize>(path: &Path, kept: &[T]) -> Result<std::fs::File> {
    let mut body = String::new();
    for r in kept {
        body.push_str(&serde_json::to_string(r)?);
        body.push('\n');
    }
    write_atomic(path, body.as_bytes())?;
    std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .with_context(|| format!("opening {}", path.display()))
}
