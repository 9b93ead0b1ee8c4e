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
