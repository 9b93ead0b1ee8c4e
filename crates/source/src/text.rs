//! Plain text / Markdown → blocks: paragraphs split on blank lines; Markdown headings (`#`) and
//! standalone numbered or named headings ("3 Method", "References") set the section.

use super::line_numbers::strip_text;
use super::normalize::{expand_ligatures, join_lines, squash_spaces};
use super::units::{is_heading_text, is_page_number, Block};

/// A heading line with a trailing line number (Docling text of line-numbered submissions,
/// "1 Introduction 18") loses that number.
fn strip_line_number(s: &str) -> &str {
    match s.rsplit_once(' ') {
        Some((head, n)) if n.len() <= 3 && n.chars().all(|c| c.is_ascii_digit()) => {
            if is_heading_text(head) {
                head
            } else {
                s
            }
        }
        _ => s,
    }
}

/// Split text into blocks (page 1).
pub fn blocks(text: &str) -> (Option<String>, Vec<Block>) {
    let text = expand_ligatures(&text.replace("\r\n", "\n"));
    let text = strip_text(&text).unwrap_or(text);
    let mut out = Vec::new();
    let mut title = None;
    let mut para: Vec<&str> = Vec::new();
    let flush = |para: &mut Vec<&str>, out: &mut Vec<Block>, title: &mut Option<String>| {
        if para.is_empty() {
            return;
        }
        let joined = squash_spaces(&join_lines(para));
        para.clear();
        if joined.is_empty() || is_page_number(&joined) {
            return;
        }
        let head = strip_line_number(&joined);
        if is_heading_text(head) {
            out.push(Block::Heading {
                page: 1,
                text: head.to_string(),
            });
            return;
        }
        if title.is_none() && out.is_empty() && joined.len() <= 200 && !joined.ends_with('.') {
            *title = Some(joined.clone());
        }
        if joined.chars().any(|c| c.is_alphanumeric()) {
            out.push(Block::Unit {
                page: 1,
                text: joined,
            });
        }
    };
    for line in text.lines() {
        let t = line.trim();
        if t.is_empty() {
            flush(&mut para, &mut out, &mut title);
            continue;
        }
        let hashes = t.chars().take_while(|&c| c == '#').count();
        if (1..=6).contains(&hashes) && t[hashes..].starts_with(' ') {
            flush(&mut para, &mut out, &mut title);
            let h = squash_spaces(t[hashes..].trim());
            if !h.is_empty() {
                if title.is_none() && hashes == 1 && out.is_empty() {
                    title = Some(h.clone());
                }
                out.push(Block::Heading { page: 1, text: h });
            }
            continue;
        }
        para.push(t);
    }
    flush(&mut para, &mut out, &mut title);
    (title, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_and_numbered_headings_set_sections() {
        let (title, b) = blocks(
            "# A Paper Title\n\nAbstract\n\nWe study exam-\nple things.\n\n1 Introduction 18\n\n\
             Text here.\n\n25\n\n## 2.1 Setup\n\nMore text.",
        );
        assert_eq!(title.as_deref(), Some("A Paper Title"));
        assert_eq!(
            b,
            vec![
                Block::Heading {
                    page: 1,
                    text: "A Paper Title".into()
                },
                Block::Heading {
                    page: 1,
                    text: "Abstract".into()
                },
                Block::Unit {
                    page: 1,
                    text: "We study example things.".into()
                },
                Block::Heading {
                    page: 1,
                    text: "1 Introduction".into()
                },
                Block::Unit {
                    page: 1,
                    text: "Text here.".into()
                },
                Block::Heading {
                    page: 1,
                    text: "2.1 Setup".into()
                },
                Block::Unit {
                    page: 1,
                    text: "More text.".into()
                },
            ]
        );
    }
}
