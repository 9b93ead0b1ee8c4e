//! Which files of a directory are review texts, one rule for every command that takes a folder
//! of reviews (`detect`, `bench`, `build --controls`): regular files ending in .txt, .md or
//! .markdown, sorted by name (so runs and reports are reproducible).

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::exit::InputError;

/// Extensions of review files.
pub const EXTENSIONS: [&str; 3] = ["txt", "md", "markdown"];

/// The review files of `dir`, sorted; empty when it has none (callers word that error).
pub fn in_dir(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.is_file()
                && p.extension()
                    .and_then(|x| x.to_str())
                    .is_some_and(|x| EXTENSIONS.contains(&x))
        })
        .collect();
    files.sort();
    Ok(files)
}

/// Control reviews from a directory: its review files ([`in_dir`]), sorted by name.
pub fn read_controls_dir(dir: &Path) -> Result<Vec<(String, String)>> {
    let files = in_dir(dir)
        .map_err(|e| InputError(format!("cannot read --controls {}: {e}", dir.display())))?;
    if files.is_empty() {
        return Err(InputError(format!(
            "--controls {} has no .txt or .md files",
            dir.display()
        ))
        .into());
    }
    let mut out = Vec::new();
    for f in files {
        let bytes = fs::read(&f).with_context(|| format!("reading {}", f.display()))?;
        let text = String::from_utf8(bytes)
            .map_err(|_| InputError(format!("control {} is not UTF-8 text", f.display())))?;
        if text.trim().is_empty() {
            return Err(InputError(format!("control {} is empty", f.display())).into());
        }
        let name = f
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        out.push((name, text));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_text_and_markdown_files_sorted_by_name() {
        let dir =
            std::env::temp_dir().join(format!("semtrace-review-files-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("sub.md")).unwrap();
        for f in [
            "b.md",
            "a.txt",
            "c.markdown",
            "d.pdf",
            "e.json",
            "f.TXT.bak",
        ] {
            fs::write(dir.join(f), "x").unwrap();
        }
        let names: Vec<String> = in_dir(&dir)
            .unwrap()
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["a.txt", "b.md", "c.markdown"]);
        assert!(in_dir(&dir.join("missing")).is_err());
        fs::remove_dir_all(&dir).unwrap();
    }
}
