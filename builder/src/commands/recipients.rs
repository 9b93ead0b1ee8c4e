//! Per-reviewer copies: reading the venue secret and a recipients file, deriving each
//! recipient's codeword, and mapping names to the bundle's keyed digests.

use std::collections::HashMap;
use std::fs;
use std::path::Path;

use anyhow::Result;
use semtrace_core::bundle::{Bundle, Recipient};
use semtrace_core::codeword::{recipient_digest, recipient_selection_bits};

use crate::exit::InputError;

/// The venue secret from --secret-file (non-empty).
pub fn read_secret(path: &Path) -> Result<Vec<u8>> {
    let key = fs::read(path)
        .map_err(|e| InputError(format!("cannot read --secret-file {}: {e}", path.display())))?;
    if key.is_empty() {
        return Err(InputError(format!("--secret-file {} is empty", path.display())).into());
    }
    Ok(key)
}

/// Recipient names, one per line (trimmed; blank lines skipped); refuses none and duplicates.
pub fn read_names(path: &Path) -> Result<Vec<String>> {
    let text = fs::read_to_string(path).map_err(|e| {
        InputError(format!(
            "cannot read recipients file {}: {e}",
            path.display()
        ))
    })?;
    let mut names: Vec<String> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let name = line.trim();
        if name.is_empty() {
            continue;
        }
        if names.iter().any(|x| x == name) {
            return Err(InputError(format!(
                "{} line {}: recipient \"{name}\" is listed twice",
                path.display(),
                n + 1
            ))
            .into());
        }
        names.push(name.to_string());
    }
    if names.is_empty() {
        return Err(
            InputError(format!("recipients file {} lists no names", path.display())).into(),
        );
    }
    Ok(names)
}

/// The recipient record (without carrier) of `name` for `bundle`'s pairs.
pub fn recipient_for(bundle: &Bundle, key: &[u8], name: &str) -> Result<Recipient> {
    let doc = &bundle.document.sha256;
    let sel = recipient_selection_bits(bundle.k, key, doc, name)?;
    Ok(Recipient {
        digest: recipient_digest(key, doc, name)?,
        codeword: bundle.labels_for_selection(&sel),
        carrier: None,
    })
}

/// A file name for a recipient's copy: letters, digits, '.', '-', '_' kept, the rest '_'.
pub fn file_stem(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let s = s.trim_matches('.').to_string();
    if s.is_empty() {
        "recipient".into()
    } else {
        s
    }
}

/// Digest → name for the names given that the bundle lists.
pub fn names_by_digest(
    bundle: &Bundle,
    key: &[u8],
    names: &[String],
) -> Result<HashMap<String, String>> {
    let mut out = HashMap::new();
    for n in names {
        let d = recipient_digest(key, &bundle.document.sha256, n)?;
        if bundle.recipient(&d).is_some() {
            out.insert(d, n.clone());
        }
    }
    Ok(out)
}

/// `bundle` reduced to one recipient's copy: its codeword, no recipient list.
pub fn only_recipient(bundle: &Bundle, key: &[u8], name: &str) -> Result<Bundle> {
    if bundle.recipients.is_empty() {
        return Err(InputError(format!(
            "recipient \"{name}\" asked for, but the bundle lists no recipients (it has one copy)"
        ))
        .into());
    }
    let d = recipient_digest(key, &bundle.document.sha256, name)?;
    let r = bundle.recipient(&d).ok_or_else(|| {
        InputError(format!(
            "\"{name}\" is not a recipient of this bundle (or the secret is not the one it was protected with)"
        ))
    })?;
    Ok(as_copy(bundle, &r.codeword))
}

/// `bundle` seen as the copy whose selected facts are `facts[labels[j]]`: the two facts of a
/// position are swapped where the labels differ from the codeword, so the balanced codeword
/// still names the selected side (labels are names) and the bundle stays valid.
pub fn as_copy(bundle: &Bundle, labels: &[u8]) -> Bundle {
    let mut b = bundle.clone();
    for (p, (&l, &c)) in b
        .positions
        .iter_mut()
        .zip(labels.iter().zip(&bundle.codeword))
    {
        if l != c {
            p.facts.swap(0, 1);
        }
    }
    b.recipients.clear();
    // The recipient's selection is keyed, so its p-value is exact.
    b.selection = Some(semtrace_core::bundle::SELECTION_KEYED.into());
    b
}
