//! Decoder-side safeguards, beyond the paper: which (window, fact) probabilities count as support
//! before the per-fact maximum over windows.
//!
//! A 2-sentence window can state only a few atomic facts. The NLI model nevertheless reads some
//! dense, LLM-written windows ("The baselines and ablations are well chosen. DIVISION, ESMM-NS and
//! ESMM all model CVR …") as entailing facts of many positions at once, which the paper's decoder
//! turns into `both` erasures (and, in nulls, into observed positions). Such a window is a *hub*,
//! not evidence. A safeguard discounts hub support; the paper's decoder ([`Safeguard::NONE`]) stays
//! the default, and the fast decoder's agreement is measured against it.

use std::collections::HashSet;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::rank::terms;

/// Which window support counts, and how `both` is resolved (docs/evaluation.md).
/// Written `none`, or rules joined by `+`: `top-N`, `hub-N`, `exclusive` (e.g. `top-2+exclusive`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub struct Safeguard {
    /// `top-N`: a window supports at most the facts of its N most probable positions (ties by
    /// position order); its probability for any other fact counts as 0.
    pub top: Option<usize>,
    /// `hub-N`: a window that reaches τ_min for facts of at least N different positions is a hub;
    /// a hub supports a fact only if the two share a content term (the fast decoder's terms).
    pub hub: Option<usize>,
    /// `exclusive`: a position whose two sides both reach τ_both is decided for a side, instead of
    /// erased, when only that side has *exclusive evidence*: a window where it reaches τ_both,
    /// beats the other side, and the position is the window's most probable one. A window that
    /// states the selected fact in its slot is about that fact; the other side's support then
    /// comes from windows mainly about something else.
    pub exclusive: bool,
}

impl Safeguard {
    /// The paper's decoder.
    pub const NONE: Safeguard = Safeguard {
        top: None,
        hub: None,
        exclusive: false,
    };

    pub fn is_none(&self) -> bool {
        *self == Safeguard::NONE
    }
}

impl fmt::Display for Safeguard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if let Some(n) = self.top {
            parts.push(format!("top-{n}"));
        }
        if let Some(n) = self.hub {
            parts.push(format!("hub-{n}"));
        }
        if self.exclusive {
            parts.push("exclusive".to_string());
        }
        if parts.is_empty() {
            write!(f, "none")
        } else {
            write!(f, "{}", parts.join("+"))
        }
    }
}

impl FromStr for Safeguard {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || {
            format!(
                "unknown safeguard {s:?}: expected none, or top-N, hub-N (N ≥ 1) and exclusive \
                 joined by '+'"
            )
        };
        let mut g = Safeguard::NONE;
        if s == "none" {
            return Ok(g);
        }
        for part in s.split('+') {
            if part == "exclusive" && !g.exclusive {
                g.exclusive = true;
                continue;
            }
            let (rule, n) = part.split_once('-').ok_or_else(bad)?;
            let n: usize = n.parse().map_err(|_| bad())?;
            let slot = match rule {
                "top" => &mut g.top,
                "hub" => &mut g.hub,
                _ => return Err(bad()),
            };
            if n == 0 || slot.is_some() {
                return Err(bad());
            }
            *slot = Some(n);
        }
        Ok(g)
    }
}

impl From<Safeguard> for String {
    fn from(g: Safeguard) -> String {
        g.to_string()
    }
}

impl TryFrom<String> for Safeguard {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

/// Position j's best probability in window w (either side; unscored counts as 0).
fn position_best(probs: &[Option<f32>], j: usize, w: usize, nw: usize) -> f32 {
    let a = probs[2 * j * nw + w].unwrap_or(0.0);
    let b = probs[(2 * j + 1) * nw + w].unwrap_or(0.0);
    a.max(b)
}

/// For `exclusive`: which sides of position j have exclusive evidence (see [`Safeguard`]).
pub fn exclusive_sides(probs: &[Option<f32>], j: usize, nw: usize, tau_both: f64) -> [bool; 2] {
    let k = probs.len() / nw.max(1) / 2;
    let mut out = [false; 2];
    for w in 0..nw {
        let mine = position_best(probs, j, w, nw);
        if (0..k).any(|i| i != j && position_best(probs, i, w, nw) > mine) {
            continue;
        }
        for (b, o) in out.iter_mut().enumerate() {
            let p = probs[(2 * j + b) * nw + w].unwrap_or(0.0);
            let other = probs[(2 * j + 1 - b) * nw + w].unwrap_or(0.0);
            if f64::from(p) >= tau_both && p > other {
                *o = true;
            }
        }
    }
    out
}

/// Zero out the support the safeguard does not count (`top`, then `hub`; `exclusive` acts at
/// decision time, [`exclusive_sides`]). `probs` is fact-major (`f * nw + w`), with
/// `None` for pairs not scored; facts `2j` and `2j + 1` are position j's two sides.
pub fn apply(
    safeguard: Safeguard,
    probs: &mut [Option<f32>],
    facts: &[&str],
    windows: &[&str],
    tau_min: f64,
) {
    let nw = windows.len();
    let nf = facts.len();
    debug_assert_eq!(probs.len(), nf * nw);
    if let Some(n) = safeguard.top {
        for w in 0..nw {
            // Each position's best side in this window, best positions first.
            let mut by_pos: Vec<(usize, f32)> = (0..nf / 2)
                .filter(|&j| {
                    probs[2 * j * nw + w].is_some() || probs[(2 * j + 1) * nw + w].is_some()
                })
                .map(|j| (j, position_best(probs, j, w, nw)))
                .collect();
            by_pos.sort_by(|x, y| y.1.total_cmp(&x.1).then(x.0.cmp(&y.0)));
            for &(j, _) in by_pos.iter().skip(n) {
                for f in [2 * j, 2 * j + 1] {
                    if let Some(p) = probs[f * nw + w].as_mut() {
                        *p = 0.0;
                    }
                }
            }
        }
    }
    if let Some(n) = safeguard.hub {
        let fact_terms: Vec<HashSet<String>> = facts
            .iter()
            .map(|f| terms(f).into_iter().collect())
            .collect();
        for (w, text) in windows.iter().enumerate() {
            let reached: HashSet<usize> = (0..nf)
                .filter(|&f| probs[f * nw + w].is_some_and(|p| f64::from(p) >= tau_min))
                .map(|f| f / 2)
                .collect();
            if reached.len() < n {
                continue;
            }
            let wt: HashSet<String> = terms(text).into_iter().collect();
            for (f, ft) in fact_terms.iter().enumerate() {
                if ft.is_disjoint(&wt) {
                    if let Some(p) = probs[f * nw + w].as_mut() {
                        *p = 0.0;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FACTS: [&str; 6] = [
        "ESMM models conversion rate over the entire space.",
        "DIVISION divides click and conversion estimates.",
        "The network reaches 0.846 AUC on Rat 2.",
        "LSTM beats every ensemble variant on clean data.",
        "Training uses eight GPUs for two days.",
        "The corpus holds six billion tokens.",
    ];

    fn top(n: usize) -> Safeguard {
        Safeguard {
            top: Some(n),
            ..Safeguard::NONE
        }
    }

    fn hub(n: usize) -> Safeguard {
        Safeguard {
            hub: Some(n),
            ..Safeguard::NONE
        }
    }

    fn matrix(rows: &[[f32; 2]]) -> Vec<Option<f32>> {
        // rows[f] = [P(window 0), P(window 1)]
        rows.iter()
            .flat_map(|r| r.iter().map(|&p| Some(p)))
            .collect()
    }

    #[test]
    fn parses_and_prints_every_rule() {
        for s in [
            "none",
            "top-2",
            "hub-3",
            "exclusive",
            "top-2+exclusive",
            "top-1+hub-3+exclusive",
        ] {
            assert_eq!(s.parse::<Safeguard>().unwrap().to_string(), s);
        }
        // Any order in, canonical order out; serde uses the same text.
        let g: Safeguard = "exclusive+top-2".parse().unwrap();
        assert_eq!(g.to_string(), "top-2+exclusive");
        assert_eq!(serde_json::to_string(&g).unwrap(), "\"top-2+exclusive\"");
        assert_eq!(
            serde_json::from_str::<Safeguard>("\"hub-3\"").unwrap().hub,
            Some(3)
        );
        for bad in [
            "top",
            "top-0",
            "hub-x",
            "cap-2",
            "",
            "top-1+top-2",
            "exclusive+exclusive",
            "none+top-1",
        ] {
            assert!(bad.parse::<Safeguard>().is_err(), "{bad}");
        }
    }

    #[test]
    fn none_changes_nothing() {
        let mut p = matrix(&[[0.95, 0.1]; 6]);
        let before = p.clone();
        let w = ["a b", "c d"];
        apply(Safeguard::NONE, &mut p, &FACTS, &w, 0.52);
        assert_eq!(p, before);
    }

    #[test]
    fn top_keeps_a_windows_best_positions_only() {
        // Window 0 "entails" facts of all three positions; window 1 only position 2's.
        let mut p = matrix(&[
            [0.99, 0.0],
            [0.10, 0.0],
            [0.93, 0.0],
            [0.20, 0.0],
            [0.91, 0.97],
            [0.05, 0.0],
        ]);
        let w = ["dense window", "another window"];
        apply(top(2), &mut p, &FACTS, &w, 0.52);
        // Positions 0 and 1 keep window 0 (both sides of a kept position stay); position 2 loses it.
        assert_eq!(p[0], Some(0.99));
        assert_eq!(p[2], Some(0.10));
        assert_eq!(p[4], Some(0.93));
        assert_eq!(p[8], Some(0.0));
        assert_eq!(p[10], Some(0.0));
        // Window 1 supports one position: nothing it supports is cut.
        assert_eq!(p[9], Some(0.97));
    }

    #[test]
    fn hub_support_counts_only_with_a_shared_term() {
        let w = [
            "The baselines are well chosen. DIVISION and ESMM both model the entire space.",
            "Training is cheap.",
        ];
        let mut p = matrix(&[
            [0.97, 0.0],
            [0.95, 0.0],
            [0.92, 0.0],
            [0.0, 0.0],
            [0.91, 0.0],
            [0.0, 0.0],
        ]);
        let mut q = p.clone();
        apply(hub(3), &mut p, &FACTS, &w, 0.52);
        // Facts sharing a term with the hub (ESMM, DIVISION, ... "entire space") keep their support.
        assert_eq!(p[0], Some(0.97));
        assert_eq!(p[2], Some(0.95));
        // "0.846 AUC on Rat 2" and "eight GPUs" share nothing with it: cut.
        assert_eq!(p[4], Some(0.0));
        assert_eq!(p[8], Some(0.0));
        // Three positions reached is a hub at n = 3, not at n = 4.
        apply(hub(4), &mut q, &FACTS, &w, 0.52);
        assert_eq!(q[4], Some(0.92));
    }

    #[test]
    fn unscored_pairs_stay_unscored() {
        let mut p = vec![None; 12];
        p[0] = Some(0.9);
        apply(top(1), &mut p, &FACTS, &["x", "y"], 0.52);
        apply(hub(1), &mut p, &FACTS, &["x", "y"], 0.52);
        assert_eq!(p.iter().filter(|v| v.is_some()).count(), 1);
    }

    #[test]
    fn exclusive_evidence_is_a_window_about_that_position() {
        // Position 0: side 1 is stated in window 0 (the window's best position); side 0 only
        // "reaches" 0.95 in window 1, which is mainly about position 1.
        let p = matrix(&[
            [0.10, 0.95],
            [0.97, 0.05],
            [0.02, 0.99],
            [0.01, 0.02],
            [0.0, 0.0],
            [0.0, 0.0],
        ]);
        assert_eq!(exclusive_sides(&p, 0, 2, 0.90), [false, true]);
        // Position 1's window 1 is its own (0.99 is that window's maximum).
        assert_eq!(exclusive_sides(&p, 1, 2, 0.90), [true, false]);
        // Under τ_both nothing is exclusive evidence.
        assert_eq!(exclusive_sides(&p, 0, 2, 0.98), [false, false]);
    }
}
