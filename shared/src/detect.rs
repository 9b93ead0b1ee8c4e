//! Detection: windows × facts through an NLI scorer, then decoding and scoring.

use crate::bundle::Bundle;
use crate::decode::{decide, score, verdict, Decision, Erasure};
use crate::error::{Error, Result};
use crate::nli::{NliPair, NliScorer};
use crate::rank::Bm25;
use crate::report::{ModelCheck, PositionReport, Report};
use crate::segment::{sentences, windows, Window};

/// Reviews larger than this are refused: real reviews are a few kB, and the 128-window cap would
/// ignore almost all of such a text anyway, so it is almost certainly the wrong file.
pub const MAX_REVIEW_BYTES: usize = 1 << 20;

/// Refuse a review of `len` bytes if it is over [`MAX_REVIEW_BYTES`] (callers that can see a file's
/// size check it before reading the file).
pub fn check_review_len(len: u64) -> Result<()> {
    if len > MAX_REVIEW_BYTES as u64 {
        return Err(Error::review(format!(
            "{len} bytes is more than the {MAX_REVIEW_BYTES} byte limit for one review (is this the right file?)"
        )));
    }
    Ok(())
}

/// Turn raw bytes into review text, refusing binaries, non-UTF-8 and giant inputs with a clear error.
pub fn review_text(bytes: &[u8]) -> Result<&str> {
    check_review_len(bytes.len() as u64)?;
    if bytes.contains(&0) {
        return Err(Error::review(
            "it contains NUL bytes: a binary file, not review text",
        ));
    }
    std::str::from_utf8(bytes).map_err(|e| {
        Error::review(format!(
            "not UTF-8 text (invalid byte at offset {})",
            e.valid_up_to()
        ))
    })
}

/// Compare the engine's model with the bundle's. A mismatch is an error unless `allow_mismatch`.
pub fn check_model(
    bundle: &Bundle,
    name: &str,
    sha256: &str,
    allow_mismatch: bool,
) -> Result<ModelCheck> {
    let hash_matches = bundle.model.sha256.eq_ignore_ascii_case(sha256);
    if !hash_matches && !allow_mismatch {
        return Err(Error::model(format!(
            "the model in use ({name}, sha256 {sha256}) is not the one this bundle was built for \
             ({}, sha256 {}); its thresholds would not apply. Use that model, or pass \
             --allow-model-mismatch to proceed anyway (the report then says so)",
            bundle.model.name, bundle.model.sha256
        )));
    }
    Ok(ModelCheck {
        name: name.to_string(),
        sha256: sha256.to_string(),
        bundle_sha256: bundle.model.sha256.clone(),
        hash_matches,
        mismatch_overridden: !hash_matches,
    })
}

/// Progress of a detection: pairs scored so far, out of the total.
pub type Progress<'a> = &'a mut dyn FnMut(usize, usize);

/// Which decoder produced a report.
pub const EXHAUSTIVE: &str = "exhaustive";
pub const FAST: &str = "fast";

/// The fast decoder's budget: how many windows per fact reach the cross-encoder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FastOptions {
    /// Windows per fact scored first: the best by lexical rank (BM25 over the review's windows).
    pub top: usize,
    /// Further windows per fact for positions the first round did not find absent.
    pub extend: usize,
}

impl Default for FastOptions {
    fn default() -> Self {
        FastOptions { top: 3, extend: 3 }
    }
}

/// Run the exhaustive decoder: every fact against every retained window.
pub fn detect(
    review: &str,
    bundle: &Bundle,
    scorer: &dyn NliScorer,
    model: ModelCheck,
    progress: Progress<'_>,
) -> Result<Report> {
    let params = &bundle.decoding;
    let sents = sentences(review);
    let (wins, windows_total) = windows(&sents, params.window_sentences, params.max_windows);
    let facts = fact_texts(bundle);
    let all: Vec<(usize, usize)> = (0..facts.len())
        .flat_map(|f| (0..wins.len()).map(move |w| (f, w)))
        .collect();
    let mut probs = vec![None; facts.len() * wins.len()];
    score_pairs(
        &all,
        &facts,
        &wins,
        scorer,
        &mut probs,
        0,
        all.len(),
        progress,
    )?;
    Ok(finish(
        bundle,
        wins,
        windows_total,
        &probs,
        all.len(),
        model,
        EXHAUSTIVE,
    ))
}

/// The fast decoder: per fact, only the windows that share the most rare terms with it (BM25)
/// reach the cross-encoder — `top` per fact, then `extend` more for the facts of positions not
/// found absent. A fact no window shares a content term with is taken as absent unscored. Its
/// agreement with [`detect`] is measured by `semtrace bench`, not assumed.
pub fn detect_fast(
    review: &str,
    bundle: &Bundle,
    scorer: &dyn NliScorer,
    model: ModelCheck,
    opts: FastOptions,
    progress: Progress<'_>,
) -> Result<Report> {
    let params = &bundle.decoding;
    let sents = sentences(review);
    let (wins, windows_total) = windows(&sents, params.window_sentences, params.max_windows);
    let facts = fact_texts(bundle);
    let index = Bm25::new(&wins.iter().map(|w| w.text.as_str()).collect::<Vec<_>>());
    let ranked: Vec<Vec<usize>> = facts.iter().map(|f| index.ranked(f)).collect();
    let nw = wins.len();
    let mut probs = vec![None; facts.len() * nw];
    let first: Vec<(usize, usize)> = ranked
        .iter()
        .enumerate()
        .flat_map(|(f, r)| r.iter().take(opts.top).map(move |&w| (f, w)))
        .collect();
    // The total is not known until round 1 is decoded: report round 1 against its own size, then
    // both rounds against their sum.
    score_pairs(
        &first,
        &facts,
        &wins,
        scorer,
        &mut probs,
        0,
        first.len(),
        progress,
    )?;
    let mut second = Vec::new();
    for j in 0..bundle.k {
        let (s0, _) = best_of(&probs, 2 * j, nw);
        let (s1, _) = best_of(&probs, 2 * j + 1, nw);
        if !matches!(decide(s0, s1, params), Decision::Erased(Erasure::Absent)) {
            for f in [2 * j, 2 * j + 1] {
                second.extend(
                    ranked[f]
                        .iter()
                        .skip(opts.top)
                        .take(opts.extend)
                        .map(|&w| (f, w)),
                );
            }
        }
    }
    let total = first.len() + second.len();
    score_pairs(
        &second,
        &facts,
        &wins,
        scorer,
        &mut probs,
        first.len(),
        total,
        progress,
    )?;
    Ok(finish(
        bundle,
        wins,
        windows_total,
        &probs,
        total,
        model,
        FAST,
    ))
}

fn fact_texts(bundle: &Bundle) -> Vec<&str> {
    bundle
        .positions
        .iter()
        .flat_map(|p| p.facts.iter().map(|f| f.text.as_str()))
        .collect()
}

/// Score (fact, window) pairs into `probs[f * nw + w]`. Pairs go to the scorer in order of
/// length (similar lengths batch with little padding), in chunks of its preferred size.
#[allow(clippy::too_many_arguments)]
fn score_pairs(
    todo: &[(usize, usize)],
    facts: &[&str],
    wins: &[Window],
    scorer: &dyn NliScorer,
    probs: &mut [Option<f32>],
    done_before: usize,
    total: usize,
    progress: Progress<'_>,
) -> Result<()> {
    let nw = wins.len();
    let mut order: Vec<(usize, usize)> = todo.to_vec();
    order.sort_by_key(|&(f, w)| (wins[w].text.len() + facts[f].len(), f, w));
    progress(done_before, total);
    let mut done = done_before;
    for chunk in order.chunks(scorer.preferred_batch().max(1)) {
        let pairs: Vec<NliPair<'_>> = chunk
            .iter()
            .map(|&(f, w)| NliPair {
                premise: wins[w].text.as_str(),
                hypothesis: facts[f],
            })
            .collect();
        let p = scorer.entailment(&pairs)?;
        if p.len() != chunk.len() {
            return Err(Error::model(format!(
                "scorer returned {} scores for {} pairs",
                p.len(),
                chunk.len()
            )));
        }
        for (&(f, w), v) in chunk.iter().zip(p) {
            probs[f * nw + w] = Some(v);
        }
        done += chunk.len();
        progress(done, total);
    }
    Ok(())
}

/// (max probability, argmax window) of fact `f` over its scored windows; (0, None) if none.
fn best_of(probs: &[Option<f32>], f: usize, nw: usize) -> (f64, Option<usize>) {
    probs[f * nw..(f + 1) * nw]
        .iter()
        .enumerate()
        .filter_map(|(i, v)| v.map(|v| (i, f64::from(v))))
        .fold((0.0f64, None), |(bv, bi), (i, v)| {
            if bi.is_none() || v > bv {
                (v, Some(i))
            } else {
                (bv, bi)
            }
        })
}

fn finish(
    bundle: &Bundle,
    wins: Vec<Window>,
    windows_total: usize,
    probs: &[Option<f32>],
    pairs_scored: usize,
    model: ModelCheck,
    decoder: &str,
) -> Report {
    let params = &bundle.decoding;
    let nw = wins.len();
    let mut decisions = Vec::with_capacity(bundle.k);
    let mut positions = Vec::with_capacity(bundle.k);
    for (j, pos) in bundle.positions.iter().enumerate() {
        let (s0, w0) = best_of(probs, 2 * j, nw);
        let (s1, w1) = best_of(probs, 2 * j + 1, nw);
        let d = decide(s0, s1, params);
        decisions.push(d);
        let assigned = bundle.codeword[j];
        positions.push(PositionReport {
            index: j,
            slot: pos.slot.clone(),
            assigned,
            s0,
            s1,
            decision: match d {
                Decision::Bit(b) => b.to_string(),
                Decision::Erased(_) => "?".to_string(),
            },
            erasure: d.erasure(),
            matches: d.bit().map(|b| b == assigned),
            evidence_window: d.bit().and_then(|b| if b == 0 { w0 } else { w1 }),
            best_windows: [w0, w1],
        });
    }
    let s = score(&decisions, &bundle.codeword, params);
    Report {
        review: None,
        verdict: verdict(&s, params.alpha),
        score: s.score,
        observed: s.observed,
        matched: s.matched,
        mismatched: s.mismatched,
        eligible: s.eligible,
        p_value: s.p_value,
        alpha: params.alpha,
        k: bundle.k,
        positions,
        windows_total,
        windows: wins,
        pairs_scored,
        decoder: decoder.to_string(),
        model,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::{
        Bundle, DecodingParams, Document, Fact, ModelIdentity, Position, BUNDLE_FORMAT,
        BUNDLE_VERSION,
    };
    use crate::decode::{Erasure, Verdict};
    use crate::nli::LexicalStandIn;

    /// Twelve positions whose two sides use disjoint vocabularies, so the stand-in scorer gives
    /// 1.0 to a side whose sentence is in the review and ~0 otherwise.
    fn bundle() -> Bundle {
        let fact = |j: usize, b: usize| {
            let text =
                format!("Topic{j}side{b} alpha{j}x{b} bravo{j}x{b} charlie{j}x{b} delta{j}x{b}.");
            Fact {
                id: format!("f{j}{b}"),
                text: text.clone(),
                quote: text,
                page: Some(1),
                unit: "u1".into(),
            }
        };
        Bundle {
            format: BUNDLE_FORMAT.into(),
            format_version: BUNDLE_VERSION.into(),
            document: Document {
                title: "t".into(),
                sha256: "0".repeat(64),
                pages: 1,
            },
            k: 12,
            positions: (0..12)
                .map(|j| Position {
                    index: j,
                    slot: format!("s{j}"),
                    facts: [fact(j, 0), fact(j, 1)],
                })
                .collect(),
            codeword: vec![0, 1, 1, 0, 1, 0, 0, 1, 0, 1, 1, 0],
            decoding: DecodingParams::exact12(),
            model: ModelIdentity {
                name: "stand-in".into(),
                sha256: "a".repeat(64),
                entailment_index: 0,
                max_length: 64,
            },
            carrier: None,
            provenance: None,
        }
    }

    fn run(review: &str, b: &Bundle) -> Report {
        let check = check_model(b, "stand-in", &"a".repeat(64), false).unwrap();
        let mut calls = Vec::new();
        let r = detect(review, b, &LexicalStandIn, check, &mut |d, t| {
            calls.push((d, t))
        })
        .unwrap();
        assert_eq!(
            calls.last().map(|c| c.0),
            calls.last().map(|c| c.1),
            "progress ends at the total"
        );
        r
    }

    fn sentence(b: &Bundle, j: usize, side: usize) -> String {
        b.positions[j].facts[side].text.clone()
    }

    #[test]
    fn review_expressing_the_codeword_is_exposed() {
        let b = bundle();
        let review: Vec<String> = (0..12)
            .map(|j| sentence(&b, j, b.codeword[j] as usize))
            .collect();
        let r = run(&review.join(" "), &b);
        assert_eq!(
            (r.observed, r.matched, r.score, r.eligible),
            (12, 12, 12, true)
        );
        assert_eq!(r.verdict, Verdict::Exposed);
        // Evidence points at a window that contains the decided fact.
        for p in &r.positions {
            let w = &r.windows[p.evidence_window.unwrap()];
            assert!(w
                .text
                .contains(&format!("Topic{}side{}", p.index, p.assigned)));
        }
    }

    #[test]
    fn review_expressing_the_complement_scores_minus_k() {
        let b = bundle();
        let review: Vec<String> = (0..12)
            .map(|j| sentence(&b, j, 1 - b.codeword[j] as usize))
            .collect();
        let r = run(&review.join(" "), &b);
        assert_eq!((r.observed, r.matched, r.score), (12, 0, -12));
        assert_eq!(r.verdict, Verdict::NotExposed);
    }

    #[test]
    fn erasures_both_and_absent_and_ineligibility() {
        let b = bundle();
        // Positions 0..7 clean; position 7 both sides; 8..11 absent → O = 7 < 8: ineligible.
        let mut review: Vec<String> = (0..7)
            .map(|j| sentence(&b, j, b.codeword[j] as usize))
            .collect();
        review.push(sentence(&b, 7, 0));
        review.push(sentence(&b, 7, 1));
        let r = run(&review.join(" "), &b);
        assert_eq!(r.positions[7].erasure, Some(Erasure::Both));
        assert_eq!(r.positions[9].erasure, Some(Erasure::Absent));
        assert_eq!(r.positions[9].evidence_window, None);
        assert_eq!((r.observed, r.eligible, r.score), (7, false, -13));
        assert_eq!(r.verdict, Verdict::Ineligible);
    }

    #[test]
    fn empty_review_is_a_defined_ineligible_result() {
        let b = bundle();
        let r = run("", &b);
        assert_eq!(
            (r.observed, r.score, r.windows.len(), r.pairs_scored),
            (0, -13, 0, 0)
        );
        assert!(r
            .positions
            .iter()
            .all(|p| p.erasure == Some(Erasure::Absent)));
        assert_eq!(r.p_value, 1.0);
    }

    #[test]
    fn window_cap_limits_pairs() {
        let mut b = bundle();
        b.decoding.max_windows = 3;
        let review = "One a. Two b. Three c. Four d. Five e. Six f.";
        let r = run(review, &b);
        assert_eq!(
            (r.windows.len(), r.windows_total, r.pairs_scored),
            (3, 5, 3 * 24)
        );
    }

    fn run_fast(review: &str, b: &Bundle, opts: FastOptions) -> Report {
        let check = check_model(b, "stand-in", &"a".repeat(64), false).unwrap();
        let mut last = (0, 0);
        let r = detect_fast(review, b, &LexicalStandIn, check, opts, &mut |d, t| {
            last = (d, t)
        })
        .unwrap();
        assert_eq!(last.0, last.1, "progress ends at the total");
        assert_eq!(last.1, r.pairs_scored);
        r
    }

    #[test]
    fn fast_decoder_finds_lexically_matching_windows_with_few_pairs() {
        let b = bundle();
        // Codeword facts among unrelated filler sentences.
        let mut review = Vec::new();
        for j in 0..12 {
            review.push(sentence(&b, j, b.codeword[j] as usize));
            review.push(format!(
                "Filler sentence number {j} says nothing in particular."
            ));
        }
        let text = review.join(" ");
        let exhaustive = run(&text, &b);
        let fast = run_fast(&text, &b, FastOptions::default());
        assert_eq!(fast.decoder, FAST);
        assert_eq!(exhaustive.decoder, EXHAUSTIVE);
        for (x, y) in exhaustive.positions.iter().zip(&fast.positions) {
            assert_eq!(
                (&x.decision, x.erasure, x.s0, x.s1),
                (&y.decision, y.erasure, y.s0, y.s1)
            );
        }
        assert_eq!((fast.score, fast.verdict), (12, Verdict::Exposed));
        assert!(
            fast.pairs_scored * 3 < exhaustive.pairs_scored,
            "{} vs {}",
            fast.pairs_scored,
            exhaustive.pairs_scored
        );
    }

    #[test]
    fn fast_decoder_extends_only_positions_not_found_absent() {
        let b = bundle();
        // The fact twice, in different windows: round 1 scores one, the extension the other.
        let review = format!(
            "{f} One filler here. Two filler there. Three filler again. {f}",
            f = sentence(&b, 0, 0)
        );
        let one = run_fast(&review, &b, FastOptions { top: 1, extend: 0 });
        let more = run_fast(&review, &b, FastOptions { top: 1, extend: 5 });
        // Only position 0 (found) gets the extension; its two facts share the window's terms.
        assert!(more.pairs_scored > one.pairs_scored);
        assert!(more.pairs_scored <= one.pairs_scored + 2 * 5);
        assert_eq!(one.positions[0].decision, "0");
        assert_eq!(one.positions[5].erasure, Some(Erasure::Absent));
        // Empty reviews score nothing and stay defined.
        let empty = run_fast("", &b, FastOptions::default());
        assert_eq!((empty.pairs_scored, empty.score), (0, -13));
    }

    #[test]
    fn model_mismatch_is_an_error_unless_allowed() {
        let b = bundle();
        let e = check_model(&b, "other", &"b".repeat(64), false).unwrap_err();
        assert!(e.message.contains("--allow-model-mismatch"), "{e}");
        let c = check_model(&b, "other", &"b".repeat(64), true).unwrap();
        assert!(!c.hash_matches && c.mismatch_overridden);
        let c = check_model(&b, "same", &"A".repeat(64), false).unwrap();
        assert!(c.hash_matches && !c.mismatch_overridden);
    }

    #[test]
    fn review_bytes_are_checked() {
        assert_eq!(review_text(b"fine").unwrap(), "fine");
        assert!(review_text(b"a\0b").unwrap_err().message.contains("binary"));
        assert!(review_text(&[0x66, 0xff, 0x66])
            .unwrap_err()
            .message
            .contains("offset 1"));
        let big = vec![b'a'; MAX_REVIEW_BYTES + 1];
        assert!(review_text(&big).unwrap_err().message.contains("limit"));
    }
}
