//! The scope cut: the retained body ends at the heading that begins the reference list.

use super::units::{heading_key, Block};
use super::ScopeCut;

/// Headings that begin a reference list (also named headings for `units::is_heading`: one list).
pub(super) const REFERENCE_HEADINGS: &[&str] = &[
    "references",
    "reference",
    "bibliography",
    "references and notes",
    "literature cited",
    "works cited",
    "cited literature",
];

/// Does a unit read like a bibliography entry (a year, "et al.", "[12]", "In Proceedings")?
fn looks_like_reference(text: &str) -> bool {
    let t = text.trim_start();
    let numbered = t.starts_with('[')
        && t[1..].split_once(']').is_some_and(|(n, _)| {
            !n.is_empty() && n.len() <= 4 && n.chars().all(|c| c.is_ascii_digit())
        });
    let year = t.as_bytes().windows(4).any(|w| {
        (w.starts_with(b"19") || w.starts_with(b"20")) && w.iter().all(|b| b.is_ascii_digit())
    });
    numbered
        || t.contains("et al")
        || t.contains("Proceedings")
        || t.contains("arXiv")
        || t.contains("Journal")
        || year
}

/// Find the cut: the first heading named References/Bibliography (a standalone heading line,
/// never a mention in running text) whose next units read like bibliography entries, or that
/// ends the document. Returns the index of the heading block and the cut description.
pub fn find_cut(blocks: &[Block]) -> Option<(usize, ScopeCut)> {
    for (i, b) in blocks.iter().enumerate() {
        let Block::Heading { page, text } = b else {
            continue;
        };
        if !REFERENCE_HEADINGS.contains(&heading_key(text).as_str()) {
            continue;
        }
        let next: Vec<&str> = blocks[i + 1..]
            .iter()
            .filter_map(|b| match b {
                Block::Unit { text, .. } => Some(text.as_str()),
                Block::Heading { .. } => None,
            })
            .take(3)
            .collect();
        if next.is_empty() || next.iter().any(|t| looks_like_reference(t)) {
            return Some((
                i,
                ScopeCut {
                    page: *page,
                    heading: text.clone(),
                    reason: format!(
                        "the reference list begins at the heading \"{text}\" on page {page}; \
                         it and everything after it (appendices, checklists) are outside the body"
                    ),
                },
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(t: &str) -> Block {
        Block::Heading {
            page: 3,
            text: t.into(),
        }
    }
    fn u(t: &str) -> Block {
        Block::Unit {
            page: 3,
            text: t.into(),
        }
    }

    #[test]
    fn cut_at_the_reference_heading_not_at_mentions() {
        let blocks = vec![
            h("1 Introduction"),
            u("We follow the references in [3]. References are useful."),
            h("References"),
            u("[1] A. Vaswani et al. Attention is all you need. In NeurIPS, 2017."),
            h("A Appendix"),
            u("More."),
        ];
        let (i, cut) = find_cut(&blocks).unwrap();
        assert_eq!(i, 2);
        assert_eq!(cut.heading, "References");
        assert_eq!(cut.page, 3);
        assert!(find_cut(&blocks[..2]).is_none());
        // A "References" heading followed by prose is not a reference list.
        let prose = vec![
            h("References"),
            u("This section is about something else entirely."),
        ];
        assert!(find_cut(&prose).is_none());
    }
}
