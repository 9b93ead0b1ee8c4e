//! Review slot layout: where in the review the selected fact of each position is asked to
//! appear.
//!
//! K = 12 gives the paper's layout: 4 Summary sentences; Strength 1 with two facts, Strengths
//! 2–3 with one each; Weakness 1 with two facts, Weaknesses 2–3 with one each. Other even K
//! generalise it: summary = min(⌊K/3⌋, 6) sentences, the rest split into strengths = ⌈rest/2⌉
//! and weaknesses = ⌊rest/2⌋ facts. A section of n ≤ 4 facts has item 1 with two facts when
//! n ≥ 3 and one fact per other item (so K ≤ 12 keeps the paper's shape); a larger section
//! has ⌈n/2⌉ items, the first n − ⌈n/2⌉ of them with two facts, so K = 24 asks for 6 Summary
//! sentences and 5 Strength and 5 Weakness items instead of 8 of each. Slots are listed
//! Summary, Strength, Weakness.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Section {
    Summary,
    Strength,
    Weakness,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Slot {
    /// Machine id written into the bundle, e.g. "summary-1", "strength-1a", "weakness-2".
    pub id: String,
    pub section: Section,
    /// 1-based item (sentence for Summary, bullet for Strength/Weakness) within the section.
    pub item: u32,
    /// Human words for the carrier text, e.g. "Strength 1 (first fact)".
    pub label: String,
}

/// A longer Summary reads oddly; larger K goes into two-fact items instead.
pub const MAX_SUMMARY_SENTENCES: usize = 6;

/// The default layout for K positions (see the module docs).
pub fn default_slots(k: usize) -> Vec<Slot> {
    let summary = (k / 3).min(MAX_SUMMARY_SENTENCES);
    let rest = k - summary;
    let strengths = rest.div_ceil(2);
    let weaknesses = rest / 2;
    let mut out = Vec::with_capacity(k);
    for s in 1..=summary {
        out.push(Slot {
            id: format!("summary-{s}"),
            section: Section::Summary,
            item: s as u32,
            label: format!("Summary sentence {s}"),
        });
    }
    for (section, n, key, word) in [
        (Section::Strength, strengths, "strength", "Strength"),
        (Section::Weakness, weaknesses, "weakness", "Weakness"),
    ] {
        // Items with two facts first, then single items.
        let (items, doubles) = if n > 4 {
            (n.div_ceil(2), n - n.div_ceil(2))
        } else if n >= 3 {
            (n - 1, 1)
        } else {
            (n, 0)
        };
        for item in 1..=items {
            if item <= doubles {
                for (sub, which) in [("a", "first"), ("b", "second")] {
                    out.push(Slot {
                        id: format!("{key}-{item}{sub}"),
                        section,
                        item: item as u32,
                        label: format!("{word} {item} ({which} fact)"),
                    });
                }
            } else {
                out.push(single(section, key, word, item));
            }
        }
    }
    out
}

fn single(section: Section, key: &str, word: &str, item: usize) -> Slot {
    Slot {
        id: format!("{key}-{item}"),
        section,
        item: item as u32,
        label: format!("{word} {item}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact12_layout_matches_paper() {
        let ids: Vec<String> = default_slots(12).into_iter().map(|s| s.id).collect();
        assert_eq!(
            ids,
            [
                "summary-1",
                "summary-2",
                "summary-3",
                "summary-4",
                "strength-1a",
                "strength-1b",
                "strength-2",
                "strength-3",
                "weakness-1a",
                "weakness-1b",
                "weakness-2",
                "weakness-3"
            ]
        );
        let s = default_slots(12);
        assert_eq!(s[5].label, "Strength 1 (second fact)");
        assert_eq!(s[5].item, 1);
        assert_eq!(s[7].item, 3);
    }

    #[test]
    fn other_k_generalise() {
        for k in (2..=40).step_by(2) {
            let s = default_slots(k);
            assert_eq!(s.len(), k);
            let mut ids: Vec<&str> = s.iter().map(|x| x.id.as_str()).collect();
            ids.sort_unstable();
            ids.dedup();
            assert_eq!(ids.len(), k, "ids unique for k={k}");
        }
        // Larger K: Summary capped at 6 sentences, two-fact items, at most 5 items a section.
        for (k, sum, str_items, weak_items) in
            [(16, 5, 3, 3), (20, 6, 4, 4), (24, 6, 5, 5), (40, 6, 9, 9)]
        {
            let s = default_slots(k);
            let items = |sec: Section| {
                let mut v: Vec<u32> = s
                    .iter()
                    .filter(|x| x.section == sec)
                    .map(|x| x.item)
                    .collect();
                v.dedup();
                v.len()
            };
            assert_eq!(
                (
                    items(Section::Summary),
                    items(Section::Strength),
                    items(Section::Weakness)
                ),
                (sum, str_items, weak_items),
                "k={k}"
            );
        }
        let ids: Vec<String> = default_slots(24).into_iter().map(|s| s.id).collect();
        assert_eq!(ids[6..15].join(" "), "strength-1a strength-1b strength-2a strength-2b strength-3a strength-3b strength-4a strength-4b strength-5");
        let ids: Vec<String> = default_slots(8).into_iter().map(|s| s.id).collect();
        assert_eq!(ids.join(" "), "summary-1 summary-2 strength-1a strength-1b strength-2 weakness-1a weakness-1b weakness-2");
        let ids: Vec<String> = default_slots(2).into_iter().map(|s| s.id).collect();
        assert_eq!(ids, ["strength-1", "weakness-1"]);
        let ids: Vec<String> = default_slots(6).into_iter().map(|s| s.id).collect();
        assert_eq!(
            ids,
            [
                "summary-1",
                "summary-2",
                "strength-1",
                "strength-2",
                "weakness-1",
                "weakness-2"
            ]
        );
    }
}
