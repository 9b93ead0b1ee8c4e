//! The frozen candidate gates, in order, each recording why a candidate was kept or dropped.
//!
//! 0. reviewer fact: not something a reviewer would state (acknowledgement, front matter, author
//!    contributions, citation fragment, figure debris, authorial directive, question, needs the
//!    previous sentence); rules and reasons in `reviewer_facts`;
//! 1. structure: 12–35 words, a quotation of at least 5 words, a known unit;
//! 2. quote: the quotation occurs in the retained source (whitespace, line-end hyphenation and
//!    ligatures normalised, nothing else);
//! 3. neutrality: |sentiment| ≤ 0.35 and |rating impact| ≤ 0.35;
//! 4. source NLI: entailment ≥ 0.68 with the local source window (the sentences holding the
//!    quotation plus one on each side, put in the reviewer's voice by `voice::rewrite` as facts
//!    are) as premise;
//! 5. near-duplicate: sentence-embedding cosine ≥ 0.99 with a better-ranked survivor;
//! 6. semantic duplicate: bidirectional NLI entailment ≥ 0.75 together with lexical
//!    Jaccard ≥ 0.35 with a better-ranked survivor;
//! 7. generic mention (beyond the paper; offline candidates only): entailment ≥ τ_mention = 0.52
//!    from any window of the built-in generic reviews (`builder/assets/generic-controls/`, about no
//!    paper). A fact the model finds in "The figures are clear." is one it would also find in
//!    reviews that never mention it: a false observation in every null review.
//!
//! Thresholds are constants: a build never relaxes them. Survivors are ranked by
//! 1.2e + 0.8i + 0.5v + 0.5n (the mention-free part of B(f)) before deduplication, so the
//! better-ranked member of a duplicate pair is the one kept.

use std::collections::HashMap;

use anyhow::Result;
use semtrace_build::lexical::jaccard_lex;
use semtrace_core::nli::{NliPair, NliScorer};
// The frozen thresholds; the generic-mention gate uses τ_min.
use semtrace_build::quote;
use semtrace_core::params::{
    ALPHA_E, ALPHA_I, ALPHA_N, ALPHA_V, MAX_RATING_IMPACT, MAX_SENTIMENT, MAX_WORDS,
    MIN_QUOTE_WORDS, MIN_WORDS, TAU_EQUIV_ENTAILMENT, TAU_EQUIV_JACCARD, TAU_MIN,
    TAU_NEAR_DUP_COSINE, TAU_SOURCE,
};
use semtrace_core::segment;
use serde::Serialize;

use super::candidate::Candidate;
use super::{reviewer_facts, scoring, voice};
use semtrace_source::EvidenceUnit;

#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[serde(rename_all = "kebab-case")]
pub enum Gate {
    ReviewerFact,
    Structure,
    Quote,
    Neutrality,
    SourceNli,
    NearDuplicate,
    SemanticDuplicate,
    GenericMention,
}

impl Gate {
    pub const ALL: [Gate; 8] = [
        Gate::ReviewerFact,
        Gate::Structure,
        Gate::Quote,
        Gate::Neutrality,
        Gate::SourceNli,
        Gate::NearDuplicate,
        Gate::SemanticDuplicate,
        Gate::GenericMention,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Gate::ReviewerFact => "reviewer-fact",
            Gate::Structure => "structure",
            Gate::Quote => "quote",
            Gate::Neutrality => "neutrality",
            Gate::SourceNli => "source-nli",
            Gate::NearDuplicate => "near-duplicate",
            Gate::SemanticDuplicate => "semantic-duplicate",
            Gate::GenericMention => "generic-mention",
        }
    }
}

/// What happened to one candidate.
#[derive(Debug, Clone, Serialize)]
pub struct GateRecord {
    pub id: String,
    /// Unit where the quotation was found (may differ from the one cited).
    pub unit: String,
    pub page: u32,
    pub kept: bool,
    /// The gate that dropped it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dropped_by: Option<Gate>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Source entailment e_f, when the NLI gate ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_entailment: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duplicate_of: Option<String>,
}

/// A candidate that passed every gate, with its source entailment.
#[derive(Debug, Clone)]
pub struct Approved {
    pub candidate: Candidate,
    pub page: u32,
    pub e: f64,
}

/// Sentence embeddings (L2-normalised), injected so the gate logic is testable on its own.
pub type Embed<'a> = dyn FnMut(&[&str]) -> Result<Vec<Vec<f32>>> + 'a;

pub struct Source<'a> {
    units: &'a [EvidenceUnit],
    by_id: HashMap<&'a str, usize>,
    normalized: Vec<String>,
}

impl<'a> Source<'a> {
    pub fn new(units: &'a [EvidenceUnit]) -> Self {
        Source {
            units,
            by_id: units
                .iter()
                .enumerate()
                .map(|(i, u)| (u.id.as_str(), i))
                .collect(),
            normalized: units.iter().map(|u| quote::normalize(&u.text)).collect(),
        }
    }

    /// The unit holding the quotation: the cited one first, then any other.
    fn locate(&self, cited: &str, q: &str) -> Option<(usize, (usize, usize))> {
        let first = self.by_id.get(cited).copied();
        first
            .into_iter()
            .chain((0..self.units.len()).filter(|&i| Some(i) != first))
            .find_map(|i| quote::find(&self.normalized[i], q).map(|r| (i, r)))
    }

    /// Section heading of the cited unit, if it is known.
    fn section(&self, cited: &str) -> Option<&str> {
        let u = *self.by_id.get(cited)?;
        self.units[u].section.as_deref()
    }

    /// The local source window: the sentences overlapping the quotation, plus one either side,
    /// each in the reviewer's voice as facts are ("we propose" → "the paper proposes"), so the NLI
    /// model judges content rather than the change of voice.
    fn window(&self, unit: usize, range: (usize, usize)) -> String {
        let text = &self.normalized[unit];
        let sents = segment::sentences(text);
        let hit: Vec<usize> = sents
            .iter()
            .enumerate()
            .filter(|(_, s)| s.start < range.1 && s.end > range.0)
            .map(|(i, _)| i)
            .collect();
        let (Some(&a), Some(&b)) = (hit.first(), hit.last()) else {
            return voice::rewrite_text(text);
        };
        let lo = a.saturating_sub(1);
        let hi = (b + 1).min(sents.len() - 1);
        sents[lo..=hi]
            .iter()
            .map(|s| voice::rewrite(&s.text))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

fn drop(rec: &mut GateRecord, gate: Gate, reason: String) {
    rec.kept = false;
    rec.dropped_by = Some(gate);
    rec.reason = Some(reason);
}

/// Run every gate over `cands`. Returns the records (one per candidate, input order) and the
/// approved candidates in rank order. `generic` holds the generic-review windows of gate 7 (empty:
/// the gate is off).
pub fn run(
    cands: &[Candidate],
    source: &Source<'_>,
    nli: &dyn NliScorer,
    embed: &mut Embed<'_>,
    generic: &[String],
    progress: &mut dyn FnMut(&str, usize, usize),
) -> Result<(Vec<GateRecord>, Vec<Approved>)> {
    let mut recs: Vec<GateRecord> = cands
        .iter()
        .map(|c| GateRecord {
            id: c.id.clone(),
            unit: c.unit.clone(),
            page: 0,
            kept: true,
            dropped_by: None,
            reason: None,
            source_entailment: None,
            duplicate_of: None,
        })
        .collect();
    // 0–3: cheap gates.
    let mut windows: Vec<Option<String>> = vec![None; cands.len()];
    for (i, c) in cands.iter().enumerate() {
        let rec = &mut recs[i];
        if let Some(x) = reviewer_facts::check(&c.text, &c.quote, source.section(&c.unit)) {
            drop(rec, Gate::ReviewerFact, x.reason());
            continue;
        }
        let words = quote::word_count(&c.text);
        let qwords = quote::word_count(&c.quote);
        if !(MIN_WORDS..=MAX_WORDS).contains(&words) {
            drop(
                rec,
                Gate::Structure,
                format!("{words} words (needs {MIN_WORDS}–{MAX_WORDS})"),
            );
            continue;
        }
        if qwords < MIN_QUOTE_WORDS {
            drop(
                rec,
                Gate::Structure,
                format!("quotation has {qwords} words (needs ≥ {MIN_QUOTE_WORDS})"),
            );
            continue;
        }
        let Some((u, range)) = source.locate(&c.unit, &c.quote) else {
            drop(
                rec,
                Gate::Quote,
                "quotation not found in the retained source".into(),
            );
            continue;
        };
        rec.unit = source.units[u].id.clone();
        rec.page = source.units[u].page;
        let a = &c.attributes;
        if a.sentiment.abs() > MAX_SENTIMENT || a.rating_impact.abs() > MAX_RATING_IMPACT {
            drop(
                rec,
                Gate::Neutrality,
                format!(
                    "sentiment {:+.2}, rating impact {:+.2} (limit ±0.35)",
                    a.sentiment, a.rating_impact
                ),
            );
            continue;
        }
        windows[i] = Some(source.window(u, range));
    }
    // 4: source NLI.
    let idx: Vec<usize> = (0..cands.len()).filter(|&i| windows[i].is_some()).collect();
    let pairs: Vec<NliPair<'_>> = idx
        .iter()
        .map(|&i| NliPair {
            premise: windows[i].as_deref().unwrap_or_default(),
            hypothesis: &cands[i].text,
        })
        .collect();
    let e = scoring::entailment(nli, &pairs, &mut |d, t| progress("source NLI", d, t))?;
    let mut survivors = Vec::new();
    for (&i, &e) in idx.iter().zip(&e) {
        recs[i].source_entailment = Some(e);
        if e < TAU_SOURCE {
            drop(
                &mut recs[i],
                Gate::SourceNli,
                format!("entailment {e:.3} < {TAU_SOURCE}"),
            );
        } else {
            survivors.push((i, e));
        }
    }
    // Rank survivors by the mention-free part of B(f).
    let pre = |i: usize, e: f64| {
        let a = &cands[i].attributes;
        ALPHA_E * e + ALPHA_I * a.importance + ALPHA_V * a.verifiability + ALPHA_N * a.naturalness
    };
    survivors.sort_by(|x, y| pre(y.0, y.1).total_cmp(&pre(x.0, x.1)).then(x.0.cmp(&y.0)));

    // 5: near-duplicates by embedding cosine.
    let texts: Vec<&str> = survivors
        .iter()
        .map(|&(i, _)| cands[i].text.as_str())
        .collect();
    progress("embeddings", 0, texts.len());
    let vecs = if texts.is_empty() {
        Vec::new()
    } else {
        embed(&texts)?
    };
    progress("embeddings", texts.len(), texts.len());
    let mut kept: Vec<usize> = Vec::new(); // positions in `survivors`
    for s in 0..survivors.len() {
        let hit = kept
            .iter()
            .map(|&k| (k, cosine(&vecs[s], &vecs[k])))
            .find(|&(_, c)| c >= TAU_NEAR_DUP_COSINE);
        if let Some((k, c)) = hit {
            let i = survivors[s].0;
            recs[i].duplicate_of = Some(cands[survivors[k].0].id.clone());
            drop(
                &mut recs[i],
                Gate::NearDuplicate,
                format!("embedding cosine {c:.4} ≥ {TAU_NEAR_DUP_COSINE}"),
            );
        } else {
            kept.push(s);
        }
    }
    // 6: semantic equivalence, tested only where the lexical condition already holds (both are
    // required, so this skips no pair that could be dropped).
    let mut lex_pairs = Vec::new();
    for (a, &sa) in kept.iter().enumerate() {
        for &sb in &kept[a + 1..] {
            let (ia, ib) = (survivors[sa].0, survivors[sb].0);
            if jaccard_lex(&cands[ia].text, &cands[ib].text) >= TAU_EQUIV_JACCARD {
                lex_pairs.push((sa, sb));
            }
        }
    }
    let mut nli_pairs = Vec::new();
    for &(sa, sb) in &lex_pairs {
        let (ia, ib) = (survivors[sa].0, survivors[sb].0);
        nli_pairs.push(NliPair {
            premise: &cands[ia].text,
            hypothesis: &cands[ib].text,
        });
        nli_pairs.push(NliPair {
            premise: &cands[ib].text,
            hypothesis: &cands[ia].text,
        });
    }
    let both = scoring::entailment(nli, &nli_pairs, &mut |d, t| {
        progress("equivalence NLI", d, t)
    })?;
    let mut dropped = vec![false; survivors.len()];
    for (n, &(sa, sb)) in lex_pairs.iter().enumerate() {
        if dropped[sa] || dropped[sb] {
            continue;
        }
        let (ab, ba) = (both[2 * n], both[2 * n + 1]);
        if ab >= TAU_EQUIV_ENTAILMENT && ba >= TAU_EQUIV_ENTAILMENT {
            dropped[sb] = true;
            let (ia, ib) = (survivors[sa].0, survivors[sb].0);
            recs[ib].duplicate_of = Some(cands[ia].id.clone());
            drop(
                &mut recs[ib],
                Gate::SemanticDuplicate,
                format!("entailment {ab:.2}/{ba:.2} both ways ≥ {TAU_EQUIV_ENTAILMENT}, Jaccard ≥ {TAU_EQUIV_JACCARD}"),
            );
        }
    }
    // 7: generic mention, on the survivors only (the costliest gate: facts × generic windows).
    let left: Vec<usize> = kept.iter().copied().filter(|&s| !dropped[s]).collect();
    let mut pairs = Vec::new();
    for &s in &left {
        for w in generic {
            pairs.push(NliPair {
                premise: w,
                hypothesis: &cands[survivors[s].0].text,
            });
        }
    }
    let p = scoring::entailment(nli, &pairs, &mut |d, t| progress("generic mention", d, t))?;
    for (n, &s) in left.iter().enumerate() {
        let row = &p[n * generic.len()..(n + 1) * generic.len()];
        let best = row
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(b.1))
            .filter(|(_, &v)| v >= TAU_MIN);
        if let Some((w, &v)) = best {
            dropped[s] = true;
            drop(
                &mut recs[survivors[s].0],
                Gate::GenericMention,
                format!(
                    "entailment {v:.2} ≥ {TAU_MIN} from a generic review window: \"{}\"",
                    generic[w]
                ),
            );
        }
    }
    let approved = kept
        .into_iter()
        .filter(|&s| !dropped[s])
        .map(|s| {
            let (i, e) = survivors[s];
            Approved {
                candidate: cands[i].clone(),
                page: recs[i].page,
                e,
            }
        })
        .collect();
    Ok((recs, approved))
}

fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na: f32 = a.iter().map(|x| x * x).sum::<f32>().sqrt();
    let nb: f32 = b.iter().map(|x| x * x).sum::<f32>().sqrt();
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        f64::from(dot / (na * nb))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::candidate::{Attributes, CandidateSource, Origin};
    use semtrace_core::nli::LexicalStandIn;

    fn cand(id: &str, text: &str, quote: &str, sentiment: f64) -> Candidate {
        Candidate {
            id: id.into(),
            text: text.into(),
            quote: quote.into(),
            unit: "p1.u1".into(),
            origin: Origin::Offline,
            source: CandidateSource::Sentence,
            attributes: Attributes {
                importance: 0.5,
                verifiability: 0.5,
                naturalness: 0.5,
                sentiment,
                rating_impact: 0.0,
                category: "method".into(),
            },
        }
    }

    /// Deterministic stand-in embedding (bag of lowercase words hashed into 64 buckets): for
    /// testing the gate logic only, not a model.
    fn bag_embed(texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        Ok(texts
            .iter()
            .map(|t| {
                let mut v = vec![0f32; 64];
                for w in t.split_whitespace() {
                    let h = w
                        .to_lowercase()
                        .bytes()
                        .fold(7u32, |h, b| h.wrapping_mul(31).wrapping_add(b.into()));
                    v[(h % 64) as usize] += 1.0;
                }
                v
            })
            .collect())
    }

    #[test]
    fn every_gate_records_its_reason() {
        let units = vec![
            EvidenceUnit {
                id: "p1.u1".into(),
                page: 1,
                section: None,
                text: "The encoder is composed of a stack of six identical layers with residual con-\nnections around each of its two sub-layers.".into(),
            },
            EvidenceUnit {
                id: "p2.u1".into(),
                page: 2,
                section: None,
                text: "Training took three and a half days on eight P100 GPUs for the big model configuration.".into(),
            },
        ];
        let src = Source::new(&units);
        let long = "the encoder is composed of a stack of six identical layers with residual connections around each of its two sub-layers";
        let cands = vec![
            cand("c1", "The encoder is composed of a stack of six identical layers with residual connections around each sub-layer.", "stack of six identical layers with residual connections", 0.0),
            cand("c2", "Too short to be a fact.", "stack of six identical layers", 0.0),
            cand("c3", "The encoder is composed of a stack of eight identical layers with residual connections around each sub-layer.", "stack of eight identical layers with residual connections", 0.0),
            cand("c4", "The big model configuration was trained for three and a half days on eight P100 GPUs by the authors.", "three and a half days on eight P100 GPUs", 0.6),
            cand("c5", "The big model configuration was trained for three and a half days on eight P100 GPUs by the authors.", "three and a half days on eight P100 GPUs", 0.0),
            cand("c6", "The big model configuration was trained for three and a half days on eight P100 GPUs by the authors.", "three and a half days on eight P100 GPUs", 0.0),
            cand("c7", long, "composed of a stack of six", 0.0),
        ];
        let mut embed = bag_embed;
        let (recs, approved) = run(
            &cands,
            &src,
            &LexicalStandIn,
            &mut embed,
            &[],
            &mut |_, _, _| {},
        )
        .unwrap();
        let by: HashMap<&str, &GateRecord> = recs.iter().map(|r| (r.id.as_str(), r)).collect();
        // c7 states c1 and more (higher source entailment, so better ranked): c1 is its duplicate.
        assert!(by["c7"].kept, "{:?}", by["c7"]);
        assert_eq!(
            by["c1"].dropped_by,
            Some(Gate::SemanticDuplicate),
            "{:?}",
            by["c1"]
        );
        assert_eq!(by["c1"].duplicate_of.as_deref(), Some("c7"));
        assert_eq!(by["c2"].dropped_by, Some(Gate::Structure));
        assert_eq!(by["c3"].dropped_by, Some(Gate::Quote));
        assert_eq!(by["c4"].dropped_by, Some(Gate::Neutrality));
        // The quotation was found in another unit than the one cited.
        assert_eq!(by["c5"].unit, "p2.u1");
        assert_eq!(by["c5"].page, 2);
        assert_eq!(by["c6"].dropped_by, Some(Gate::NearDuplicate));
        assert_eq!(by["c6"].duplicate_of.as_deref(), Some("c5"));
        assert!(by["c1"].source_entailment.unwrap() >= TAU_SOURCE);
        let ids: Vec<&str> = approved.iter().map(|a| a.candidate.id.as_str()).collect();
        assert_eq!(ids.len(), 2);
        assert!(ids.contains(&"c7") && ids.contains(&"c5"), "{ids:?}");

        // Gate 7 with a generic window that shares most of c5's words (the stand-in scorer reads
        // that as entailment ≥ 0.52) and none of c7's: c5 is dropped and the window quoted.
        let generic = vec![
            "Nothing here is specific. The model configuration was trained for days on GPUs by the authors, big and eight.".to_string(),
            "The writing is clear.".to_string(),
        ];
        let (recs, approved) = run(
            &cands,
            &src,
            &LexicalStandIn,
            &mut embed,
            &generic,
            &mut |_, _, _| {},
        )
        .unwrap();
        let c5 = recs.iter().find(|r| r.id == "c5").unwrap();
        assert_eq!(c5.dropped_by, Some(Gate::GenericMention), "{c5:?}");
        assert!(c5
            .reason
            .as_deref()
            .unwrap()
            .contains("Nothing here is specific."));
        let ids: Vec<&str> = approved.iter().map(|a| a.candidate.id.as_str()).collect();
        assert_eq!(ids, ["c7"]);
    }
}
