//! Which files of a directory are review texts, one rule for every command that takes a folder
//! of reviews (`detect`, `bench`, `build --controls`): regular files ending in .txt, .md or
//! .markdown, sorted by name (so runs and reports are reproducible).

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

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
