//! Detection: windows × facts through an NLI scorer, then decoding and scoring.

use crate::bundle::Bundle;
use crate::decode::{
    decide, reachable, score, settled_verdict, verdict, Decision, Erasure, Verdict,
};
use crate::error::{Error, Result};
use crate::nli::{NliPair, NliScorer};
use crate::params::MAX_REVIEW_BYTES;
use crate::rank::Bm25;
use crate::report::{Decoder, ModelCheck, PositionReport, RecipientResult, Report};
use crate::safeguard::{self, Safeguard};
use crate::segment::{sentences, windows, Window};

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

/// The fast decoder's budget: which (fact, window) pairs reach the cross-encoder, in up to five
/// rounds. Each round is planned from the scores of the rounds before it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FastOptions {
    /// Round 1: windows per fact scored first, the best by lexical rank (BM25 over the review's
    /// windows).
    pub top: usize,
    /// Round 2: further windows per fact for positions that round 1 did not find absent.
    pub extend: usize,
    /// Round 1: facts each window is probed with, chosen among those it shares no content term
    /// with. Some windows (a typo list, a bare procedural remark) are read as entailing unrelated
    /// facts; no lexical ranking reaches them, yet the exhaustive decoder's maximum is theirs. A
    /// probe finds them for one pair per window.
    pub probes: usize,
    /// Round 2: a window whose probe reaches this P(entailment) is scored against every fact.
    pub hub_threshold: f32,
    /// Round 3: a position whose best P(entailment) after round 2 reaches this has both facts
    /// scored against every window that shares a content term with them. A faint signal in the
    /// top windows is the commonest sign of a stronger one further down the ranking.
    pub escalate_from: f32,
    /// Rounds 4–5: once at least `o_min − verdict_margin` positions are observed, every pair
    /// that could still change a position's decision is scored, so that every decision, and so a
    /// verdict near the eligibility bound (every `exposed` one), is the exhaustive decoder's own.
    /// `None`: never.
    pub verdict_margin: Option<usize>,
}

impl Default for FastOptions {
    fn default() -> Self {
        // Chosen by replaying budgets on the cached exhaustive runs of the first 19 corpus
        // papers' reviews, and checked on the other papers' (docs/performance/); escalation
        // lowered 0.02 → 0.01 with the stage-3b model, which put 5 of 636 human-review positions
        // just under 0.02, then to 0.005 with top 4 for ≥ 99.5% position agreement on all 182
        // human reviews against their own papers' bundles
        // (docs/performance/2026-11-27-fast-decoder-budget.md). Hub threshold 0.003 → 0.002 with
        // the stage-3c model, which left two positions of LLM-written null reviews `absent` (99.2%):
        // the cheapest budget ≥ 99.5% of positions on both the 185 human reviews and llm-reviews
        // (docs/performance/2026-11-29-fast-decoder-budget-stage3c.md).
        FastOptions {
            top: 4,
            extend: 1,
            probes: 1,
            hub_threshold: 0.002,
            escalate_from: 0.005,
            verdict_margin: Some(3),
        }
    }
}

impl FastOptions {
    /// The budget before rounds 3 and 4 existed (hub threshold 0.005): fewer pairs, lower
    /// agreement (docs/performance/2026-11-26-fast-decoder-rounds-3-4.md).
    pub fn lean() -> Self {
        FastOptions {
            hub_threshold: 0.005,
            escalate_from: f32::INFINITY,
            verdict_margin: None,
            ..FastOptions::default()
        }
    }
}

/// A detection in steps: the pairs to score next, then their scores, until nothing is pending.
/// [`detect`] and [`detect_fast`] drive it with one scorer; a caller that scores pairs elsewhere
/// (several browser workers, each with its own model) drives it the same way and gets the same
/// decisions, because the plan — which pairs, in which rounds — lives here and nowhere else.
pub struct DetectionPlan {
    bundle: Bundle,
    wins: Vec<Window>,
    windows_total: usize,
    /// Per fact, windows by lexical rank (fast decoder); `None` for the exhaustive decoder.
    ranked: Option<Vec<Vec<usize>>>,
    /// Per window, the facts it is probed with (fast decoder).
    probe_facts: Vec<Vec<usize>>,
    opts: FastOptions,
    probs: Vec<Option<f32>>,
    /// (fact, window) pairs of the current round, shortest first.
    pending: Vec<(usize, usize)>,
    round: u8,
    scored: usize,
    safeguard: Safeguard,
    /// Round 4 fired: later rounds settle every position ([`DetectionPlan::settle`]).
    settling: bool,
}

impl DetectionPlan {
    /// Every fact against every retained window, in one round.
    pub fn exhaustive(review: &str, bundle: Bundle) -> DetectionPlan {
        let mut d = DetectionPlan::new(review, bundle, None, FastOptions::default());
        let nw = d.wins.len();
        let all = (0..d.fact_count())
            .flat_map(|f| (0..nw).map(move |w| (f, w)))
            .collect();
        d.set_pending(all);
        d
    }

    /// Per fact, only the windows that share the most rare terms with it (BM25) reach the
    /// cross-encoder — `top` per fact, then `extend` more for the facts of positions not found
    /// absent — plus each window probed with `probes` facts it shares no term with, and every
    /// fact against a window whose probe reached `hub_threshold`. Positions with a faint signal
    /// then get every term-sharing window, and a review whose observed positions come near
    /// eligibility gets every pair that could change a decision ([`FastOptions`]). A fact that no
    /// window shares a content term with is scored only against hub windows (or in rounds 4–5). Its agreement with the exhaustive
    /// decoder is measured by `semtrace bench`, not assumed.
    pub fn fast(review: &str, bundle: Bundle, opts: FastOptions) -> DetectionPlan {
        let mut d = DetectionPlan::new(review, bundle, Some(Vec::new()), opts);
        let index = Bm25::new(&d.wins.iter().map(|w| w.text.as_str()).collect::<Vec<_>>());
        let ranked: Vec<Vec<usize>> = fact_texts(&d.bundle)
            .iter()
            .map(|f| index.ranked(f))
            .collect();
        let mut first: Vec<(usize, usize)> = ranked
            .iter()
            .enumerate()
            .flat_map(|(f, r)| r.iter().take(opts.top).map(move |&w| (f, w)))
            .collect();
        let nw = d.wins.len();
        let mut related = vec![false; ranked.len() * nw];
        for (f, r) in ranked.iter().enumerate() {
            for &w in r {
                related[f * nw + w] = true;
            }
        }
        d.probe_facts = (0..nw)
            .map(|w| {
                let unrelated: Vec<usize> = (0..ranked.len())
                    .filter(|&f| !related[f * nw + w])
                    .collect();
                // Consecutive unrelated facts from the window's index: probes spread over facts.
                (0..opts.probes.min(unrelated.len()))
                    .map(|i| unrelated[(w + i) % unrelated.len()])
                    .collect()
            })
            .collect();
        for (w, fs) in d.probe_facts.iter().enumerate() {
            first.extend(fs.iter().map(|&f| (f, w)));
        }
        d.ranked = Some(ranked);
        d.set_pending(first);
        d.advance();
        d
    }

    fn new(
        review: &str,
        bundle: Bundle,
        ranked: Option<Vec<Vec<usize>>>,
        opts: FastOptions,
    ) -> DetectionPlan {
        let params = &bundle.decoding;
        let (wins, windows_total) = windows(
            &sentences(review),
            params.window_sentences,
            params.max_windows,
        );
        let probs = vec![None; 2 * bundle.positions.len() * wins.len()];
        DetectionPlan {
            bundle,
            wins,
            windows_total,
            ranked,
            probe_facts: Vec::new(),
            opts,
            probs,
            pending: Vec::new(),
            round: 0,
            scored: 0,
            safeguard: Safeguard::NONE,
            settling: false,
        }
    }

    /// Decode with a safeguard (beyond the paper) instead of the paper's rule. It changes how the
    /// scores are read, and for the fast decoder that rounds 4–5 score every remaining pair.
    pub fn with_safeguard(mut self, safeguard: Safeguard) -> DetectionPlan {
        self.safeguard = safeguard;
        self
    }

    fn fact_count(&self) -> usize {
        2 * self.bundle.positions.len()
    }

    fn fact(&self, f: usize) -> &str {
        let p = &self.bundle.positions[f / 2];
        p.facts[f % 2].text.as_str()
    }

    /// Pairs go out shortest first, so that consecutive pairs batch with little padding.
    fn set_pending(&mut self, mut todo: Vec<(usize, usize)>) {
        todo.sort_by_key(|&(f, w)| (self.wins[w].text.len() + self.fact(f).len(), f, w));
        self.pending = todo;
        self.round += 1;
    }

    /// The pairs the next call to [`DetectionPlan::supply`] expects scores for, in order; empty when
    /// the decoding is complete.
    pub fn pending(&self) -> Vec<NliPair<'_>> {
        self.pending
            .iter()
            .map(|&(f, w)| NliPair {
                premise: self.wins[w].text.as_str(),
                hypothesis: self.fact(f),
            })
            .collect()
    }

    /// Pairs scored so far.
    pub fn scored(&self) -> usize {
        self.scored
    }

    /// P(entailment) for every pending pair, in [`DetectionPlan::pending`]'s order. Then the next round
    /// (if any) becomes pending. Every score must be a probability: the fast decoder's exactness rests
    /// on maxima over scores in [0, 1] (a side not yet scored counts as 0), which NaN or out-of-range
    /// values from a broken scorer would silently break. A rejected call leaves the plan unchanged.
    pub fn supply(&mut self, probs: &[f32]) -> Result<()> {
        if probs.len() != self.pending.len() {
            return Err(Error::model(format!(
                "{} scores for {} pending pairs",
                probs.len(),
                self.pending.len()
            )));
        }
        if let Some((i, v)) = probs
            .iter()
            .enumerate()
            .find(|(_, v)| !(0.0..=1.0).contains(*v))
        {
            return Err(Error::model(format!(
                "score {v} for pending pair {i} is not a probability in [0, 1]"
            )));
        }
        let nw = self.wins.len();
        for (&(f, w), &v) in self.pending.iter().zip(probs) {
            self.probs[f * nw + w] = Some(v);
        }
        self.scored += probs.len();
        self.pending.clear();
        self.advance();
        Ok(())
    }

    /// Plan the fast decoder's next non-empty round, if any is left.
    fn advance(&mut self) {
        if self.ranked.is_none() {
            return;
        }
        while self.pending.is_empty() && self.round < 5 {
            let next = match self.round {
                1 => self.extension(),
                2 => self.escalation(),
                3 => self.verdict_check(),
                _ if self.settling => self.settle(),
                _ => Vec::new(),
            };
            self.set_pending(next);
        }
    }

    /// Position `j`'s side scores (s0, s1) over the pairs scored so far.
    fn sides(&self, j: usize) -> (f64, f64) {
        sides_of(&self.probs, j, self.wins.len())
    }

    /// The verdict the review gets whatever the pairs not scored yet turn out to be, once the
    /// scores so far fix it (`None` until then): the exhaustive decoder's verdict, and so the fast
    /// decoder's, known early ([`settled_verdict`]). A page can show it while the remaining pairs
    /// settle the evidence. Only for the paper's rule with one codeword: a safeguard reads across
    /// positions, and per-reviewer copies are tested with Holm.
    pub fn settled_verdict(&self) -> Option<Verdict> {
        self.settled_over(&self.probs)
    }

    /// [`DetectionPlan::settled_verdict`] as if the first `scores.len()` pending pairs had these
    /// scores: a caller part-way through a round (its own share scored) can ask without
    /// supplying. Scores beyond the pending pairs are ignored.
    pub fn settled_verdict_with(&self, scores: &[f32]) -> Option<Verdict> {
        let nw = self.wins.len();
        let mut probs = self.probs.clone();
        for (&(f, w), &v) in self.pending.iter().zip(scores) {
            probs[f * nw + w] = Some(v.clamp(0.0, 1.0));
        }
        self.settled_over(&probs)
    }

    fn settled_over(&self, probs: &[Option<f32>]) -> Option<Verdict> {
        if !self.safeguard.is_none() || !self.bundle.recipients.is_empty() {
            return None;
        }
        let nw = self.wins.len();
        let open = |f: usize| probs[f * nw..(f + 1) * nw].iter().any(Option::is_none);
        let reach: Vec<_> = (0..self.bundle.positions.len())
            .map(|j| {
                let (s0, s1) = sides_of(probs, j, nw);
                reachable(s0, s1, open(2 * j), open(2 * j + 1), &self.bundle.decoding)
            })
            .collect();
        settled_verdict(&reach, &self.bundle.codeword, &self.bundle.decoding)
    }

    /// `pairs` without those already scored, sorted and without repeats.
    fn unscored(&self, mut pairs: Vec<(usize, usize)>) -> Vec<(usize, usize)> {
        let nw = self.wins.len();
        pairs.retain(|&(f, w)| self.probs[f * nw + w].is_none());
        pairs.sort_unstable();
        pairs.dedup();
        pairs
    }

    /// The fast decoder's second round: `extend` more windows per fact, for the positions that
    /// round 1 did not find absent, and every fact against the windows whose probe reached the
    /// hub threshold. Pairs already scored are not scored again.
    fn extension(&self) -> Vec<(usize, usize)> {
        let nw = self.wins.len();
        let Some(ranked) = &self.ranked else {
            return Vec::new();
        };
        let mut second = Vec::new();
        for j in 0..self.bundle.positions.len() {
            let (s0, s1) = self.sides(j);
            if !matches!(
                decide(s0, s1, &self.bundle.decoding),
                Decision::Erased(Erasure::Absent)
            ) {
                for f in [2 * j, 2 * j + 1] {
                    second.extend(
                        ranked[f]
                            .iter()
                            .skip(self.opts.top)
                            .take(self.opts.extend)
                            .map(|&w| (f, w)),
                    );
                }
            }
        }
        for (w, fs) in self.probe_facts.iter().enumerate() {
            let hub = fs
                .iter()
                .any(|&f| self.probs[f * nw + w].is_some_and(|p| p >= self.opts.hub_threshold));
            if hub {
                second.extend((0..ranked.len()).map(|f| (f, w)));
            }
        }
        self.unscored(second)
    }

    /// The fast decoder's third round: both facts of every position whose best score so far
    /// reaches `escalate_from`, against every window sharing a content term with them.
    fn escalation(&self) -> Vec<(usize, usize)> {
        let Some(ranked) = &self.ranked else {
            return Vec::new();
        };
        let from = f64::from(self.opts.escalate_from);
        let mut third = Vec::new();
        for j in 0..self.bundle.positions.len() {
            let (s0, s1) = self.sides(j);
            if s0.max(s1) >= from {
                for f in [2 * j, 2 * j + 1] {
                    third.extend(ranked[f].iter().map(|&w| (f, w)));
                }
            }
        }
        self.unscored(third)
    }

    /// The fast decoder's round 4: when the positions observed so far come within
    /// `verdict_margin` of the eligibility bound `o_min`, settle every position.
    fn verdict_check(&mut self) -> Vec<(usize, usize)> {
        let Some(margin) = self.opts.verdict_margin else {
            return Vec::new();
        };
        let observed = (0..self.bundle.positions.len())
            .filter(|&j| {
                let (s0, s1) = self.sides(j);
                decide(s0, s1, &self.bundle.decoding).bit().is_some()
            })
            .count();
        if observed + margin < self.bundle.decoding.o_min {
            return Vec::new();
        }
        self.settling = true;
        self.settle()
    }

    /// The unscored pairs that could still change a position's decision; none left means every
    /// decision is the exhaustive decoder's. A side's score is the maximum over its pairs, so
    /// scoring more can only raise it, and raising a bit's own side never changes the bit: it is
    /// already the larger side by more than the margin, and its other side is under τ_both (or
    /// the position would be `both`). So a bit whose other side is fully scored is settled, and
    /// so is `both`; a bit needs its other side, any other position both sides. After that round
    /// a position can only have turned `both` (settled), stayed a bit (settled) or become
    /// ambiguous or the other bit (both sides then, round 5). With a safeguard, which reads across
    /// positions, every pair.
    fn settle(&self) -> Vec<(usize, usize)> {
        let nw = self.wins.len();
        let facts: Vec<usize> = if self.safeguard.is_none() {
            (0..self.bundle.positions.len())
                .flat_map(|j| {
                    let (s0, s1) = self.sides(j);
                    match decide(s0, s1, &self.bundle.decoding) {
                        Decision::Erased(Erasure::Both) => vec![],
                        Decision::Bit(b) => vec![2 * j + 1 - usize::from(b)],
                        Decision::Erased(_) => vec![2 * j, 2 * j + 1],
                    }
                })
                .collect()
        } else {
            (0..self.fact_count()).collect()
        };
        facts
            .into_iter()
            .flat_map(|f| (0..nw).map(move |w| (f, w)))
            .filter(|&(f, w)| self.probs[f * nw + w].is_none())
            .collect()
    }

    /// Score every round with `scorer`, in chunks of its `chunk_size`, then report. A
    /// round's size is not known until the previous one is decoded: progress counts against the
    /// pairs known so far.
    pub fn run(
        mut self,
        scorer: &dyn NliScorer,
        model: ModelCheck,
        progress: Progress<'_>,
    ) -> Result<Report> {
        loop {
            let pairs = self.pending();
            let total = self.scored() + pairs.len();
            let mut done = self.scored();
            progress(done, total);
            if pairs.is_empty() {
                break;
            }
            let mut probs = Vec::with_capacity(pairs.len());
            for chunk in pairs.chunks(scorer.chunk_size().max(1)) {
                let p = scorer.entailment(chunk)?;
                if p.len() != chunk.len() {
                    return Err(Error::model(format!(
                        "scorer returned {} scores for {} pairs",
                        p.len(),
                        chunk.len()
                    )));
                }
                probs.extend(p);
                done += chunk.len();
                progress(done, total);
            }
            self.supply(&probs)?;
        }
        Ok(self.report(model))
    }

    /// Decode and score what was scored. Pending pairs, if any, count as unscored.
    pub fn report(self, model: ModelCheck) -> Report {
        let decoder = if self.ranked.is_some() {
            Decoder::Fast
        } else {
            Decoder::Exhaustive
        };
        finish(
            &self.bundle,
            self.wins,
            self.windows_total,
            self.probs,
            self.scored,
            model,
            decoder,
            self.safeguard,
        )
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
    DetectionPlan::exhaustive(review, bundle.clone()).run(scorer, model, progress)
}

/// The fast decoder ([`DetectionPlan::fast`]) with one scorer.
pub fn detect_fast(
    review: &str,
    bundle: &Bundle,
    scorer: &dyn NliScorer,
    model: ModelCheck,
    opts: FastOptions,
    progress: Progress<'_>,
) -> Result<Report> {
    DetectionPlan::fast(review, bundle.clone(), opts).run(scorer, model, progress)
}

/// Every fact of the bundle, position by position (pairs' two sides in order): the fact order of
/// the score matrix.
pub fn fact_texts(bundle: &Bundle) -> Vec<&str> {
    bundle
        .positions
        .iter()
        .flat_map(|p| p.facts.iter().map(|f| f.text.as_str()))
        .collect()
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

/// Position `j`'s side scores (s0, s1) over the scored pairs of `probs`.
fn sides_of(probs: &[Option<f32>], j: usize, nw: usize) -> (f64, f64) {
    (best_of(probs, 2 * j, nw).0, best_of(probs, 2 * j + 1, nw).0)
}

/// Decode every position from a fact-major matrix of P(entailment) (`f * windows + w`; `None`:
/// not scored), read through `safeguard`.
#[allow(clippy::too_many_arguments)]
pub fn finish(
    bundle: &Bundle,
    wins: Vec<Window>,
    windows_total: usize,
    mut probs: Vec<Option<f32>>,
    pairs_scored: usize,
    model: ModelCheck,
    decoder: Decoder,
    safeguard: Safeguard,
) -> Report {
    let params = &bundle.decoding;
    let nw = wins.len();
    if !safeguard.is_none() {
        let texts: Vec<&str> = wins.iter().map(|w| w.text.as_str()).collect();
        safeguard::apply(
            safeguard,
            &mut probs,
            &fact_texts(bundle),
            &texts,
            params.tau_min,
        );
    }
    let probs = &probs[..];
    let mut decisions = Vec::with_capacity(bundle.k);
    let mut positions = Vec::with_capacity(bundle.k);
    for (j, pos) in bundle.positions.iter().enumerate() {
        let (s0, w0) = best_of(probs, 2 * j, nw);
        let (s1, w1) = best_of(probs, 2 * j + 1, nw);
        let mut d = decide(s0, s1, params);
        if safeguard.exclusive && d == Decision::Erased(Erasure::Both) {
            match safeguard::exclusive_sides(probs, j, nw, params.tau_both) {
                [true, false] => d = Decision::Bit(0),
                [false, true] => d = Decision::Bit(1),
                _ => {}
            }
        }
        decisions.push(d);
        // `assigned` and `matches` are set below, once the codeword tested is known.
        positions.push(PositionReport {
            index: j,
            slot: pos.slot.clone(),
            assigned: 0,
            s0,
            s1,
            decision: d.into(),
            erasure: d.erasure(),
            matches: None,
            evidence_window: d.bit().and_then(|b| if b == 0 { w0 } else { w1 }),
            best_windows: [w0, w1],
        });
    }
    // Per-reviewer copies: the decisions do not depend on the codeword, so every recipient's
    // codeword is scored on them; Holm over the recipients keeps the family-wise level, and
    // the top-level figures are those of the recipient with the smallest adjusted p-value.
    let (codeword, s, recipients, recipient) = if bundle.recipients.is_empty() {
        let s = score(&decisions, &bundle.codeword, params);
        (&bundle.codeword, s, Vec::new(), None)
    } else {
        let scores: Vec<_> = bundle
            .recipients
            .iter()
            .map(|r| score(&decisions, &r.codeword, params))
            .collect();
        let p: Vec<f64> = scores.iter().map(|s| s.p_value).collect();
        let holm = crate::venue::holm(&p);
        let best = (0..scores.len())
            .min_by(|&a, &b| holm[a].total_cmp(&holm[b]).then(a.cmp(&b)))
            .expect("recipients is not empty");
        let results = bundle
            .recipients
            .iter()
            .zip(&scores)
            .zip(&holm)
            .map(|((r, s), &h)| RecipientResult {
                digest: r.digest.clone(),
                matched: s.matched,
                p_value: s.p_value,
                holm_p: h,
            })
            .collect();
        let mut s = scores[best];
        s.p_value = holm[best];
        let r = &bundle.recipients[best];
        (&r.codeword, s, results, Some(r.digest.clone()))
    };
    for (pos, &c) in positions.iter_mut().zip(codeword) {
        pos.assigned = c;
        pos.matches = pos.decision.bit().map(|b| b == c);
    }
    Report {
        review: None,
        verdict: verdict(&s, params.alpha),
        score: s.score,
        observed: s.observed,
        matched: s.matched,
        mismatched: s.mismatched,
        eligible: s.eligible,
        p_value: s.p_value,
        p_value_exact: bundle.p_value_exact(),
        min_p_value: crate::decode::binomial_upper_tail(bundle.k, bundle.k),
        // With R recipients, Holm's first step tests the best copy at alpha / R.
        matches_needed: crate::decode::matches_needed(
            s.observed,
            params.alpha / bundle.recipients.len().max(1) as f64,
        ),
        alpha: params.alpha,
        k: bundle.k,
        positions,
        windows_total,
        windows: wins,
        pairs_scored,
        decoder,
        safeguard,
        model,
        recipients,
        recipient,
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
    use crate::report::PositionDecision;

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
            selection: None,
            recipients: Vec::new(),
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
    fn per_recipient_copies_are_tested_with_holm_and_the_leak_is_named() {
        use crate::bundle::Recipient;
        use crate::codeword::{recipient_digest, recipient_selection_bits};
        let mut b = bundle();
        let doc = "0".repeat(64);
        for name in ["alice", "bob", "carol"] {
            let sel = recipient_selection_bits(12, b"venue", &doc, name).unwrap();
            b.recipients.push(Recipient {
                digest: recipient_digest(b"venue", &doc, name).unwrap(),
                codeword: b.labels_for_selection(&sel),
                carrier: None,
            });
        }
        b.validate().unwrap();
        // Bob's copy leaked: the review states bob's selected facts.
        let bob = b.recipients[1].clone();
        let review: Vec<String> = (0..12)
            .map(|j| sentence(&b, j, bob.codeword[j] as usize))
            .collect();
        let r = run(&review.join(" "), &b);
        assert_eq!(r.recipients.len(), 3);
        assert_eq!(r.recipient.as_deref(), Some(bob.digest.as_str()));
        assert_eq!(r.recipients[1].matched, 12);
        // 2^-12 for bob, times 3 by Holm.
        assert!((r.recipients[1].holm_p - 3.0 / 4096.0).abs() < 1e-12);
        assert!((r.p_value - 3.0 / 4096.0).abs() < 1e-12);
        assert_eq!(r.verdict, Verdict::Exposed);
        assert!(r.p_value_exact);
        for (x, p) in r.positions.iter().zip(&bob.codeword) {
            assert_eq!((x.assigned, x.matches), (*p, Some(true)));
        }
        // The other recipients match only where their coin agrees with bob's.
        for (i, rr) in r.recipients.iter().enumerate() {
            let agree = (0..12)
                .filter(|&j| b.recipients[i].codeword[j] == bob.codeword[j])
                .count();
            assert_eq!(rr.matched, agree);
            assert!(rr.holm_p >= rr.p_value);
        }
        // A bad recipient record is a bundle error.
        let mut bad = b.clone();
        bad.recipients[2].digest = bad.recipients[0].digest.to_uppercase();
        assert!(bad.validate().unwrap_err().message.contains("twice"));
        bad.recipients[2].digest = "xyz".into();
        assert!(bad.validate().is_err());
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

    /// The codeword's facts, each followed by an unrelated filler sentence.
    fn codeword_among_filler(b: &Bundle) -> String {
        let mut review = Vec::new();
        for j in 0..12 {
            review.push(sentence(b, j, b.codeword[j] as usize));
            review.push(format!(
                "Filler sentence number {j} says nothing in particular."
            ));
        }
        review.join(" ")
    }

    #[test]
    fn fast_decoder_finds_lexically_matching_windows_with_few_pairs() {
        let b = bundle();
        let text = codeword_among_filler(&b);
        let exhaustive = run(&text, &b);
        let fast = run_fast(&text, &b, FastOptions::lean());
        assert_eq!(fast.decoder, Decoder::Fast);
        assert_eq!(exhaustive.decoder, Decoder::Exhaustive);
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

    /// The codeword's facts for the first `n` positions, among filler.
    fn first_positions_among_filler(b: &Bundle, n: usize) -> String {
        let mut review = Vec::new();
        for j in 0..12 {
            if j < n {
                review.push(sentence(b, j, b.codeword[j] as usize));
            }
            review.push(format!(
                "Filler sentence number {j} says nothing in particular."
            ));
        }
        review.join(" ")
    }

    #[test]
    fn fast_decoder_settles_every_decision_when_the_verdict_is_near_eligibility() {
        let b = bundle();
        assert_eq!(
            (b.decoding.o_min, FastOptions::default().verdict_margin),
            (8, Some(3))
        );
        for n in [4, 5, 12] {
            let text = first_positions_among_filler(&b, n);
            let exhaustive = run(&text, &b);
            let fast = run_fast(&text, &b, FastOptions::default());
            assert_eq!(fast.observed, n);
            if n + 3 < 8 {
                assert!(fast.pairs_scored * 3 < exhaustive.pairs_scored, "n = {n}");
            } else {
                // Rounds 4–5: every decision, and so the verdict, is the exhaustive decoder's,
                // without the pairs of a bit's own side that could only raise it.
                assert_same_decisions(&fast, &exhaustive, &format!("n = {n}"));
                assert!(fast.pairs_scored < exhaustive.pairs_scored, "n = {n}");
            }
            let off = FastOptions {
                verdict_margin: None,
                ..FastOptions::default()
            };
            assert!(run_fast(&text, &b, off).pairs_scored * 3 < exhaustive.pairs_scored);
        }
    }

    /// The fast decoder run round by round with `scorer`: the finished plan and the rounds that
    /// had pairs to score.
    fn fast_rounds(text: &str, b: &Bundle, scorer: &dyn NliScorer) -> (DetectionPlan, Vec<u8>) {
        let mut plan = DetectionPlan::fast(text, b.clone(), FastOptions::default());
        let mut rounds = Vec::new();
        loop {
            let pairs = plan.pending();
            if pairs.is_empty() {
                return (plan, rounds);
            }
            rounds.push(plan.round);
            let probs = scorer.entailment(&pairs).unwrap();
            plan.supply(&probs).unwrap();
        }
    }

    /// Decisions, score and verdict equal; side scores and windows may differ.
    fn assert_same_decisions(fast: &Report, exhaustive: &Report, what: &str) {
        let decisions = |r: &Report| -> Vec<(PositionDecision, Option<Erasure>)> {
            r.positions
                .iter()
                .map(|p| (p.decision, p.erasure))
                .collect()
        };
        assert_eq!(decisions(fast), decisions(exhaustive), "{what}");
        assert_eq!(
            (fast.verdict, fast.score, fast.observed, fast.matched),
            (
                exhaustive.verdict,
                exhaustive.score,
                exhaustive.observed,
                exhaustive.matched
            ),
            "{what}"
        );
        assert_eq!(
            fast.p_value.to_bits(),
            exhaustive.p_value.to_bits(),
            "{what}"
        );
    }

    /// A deterministic stand-in for decoding logic only (not a model): a hash of the seed and
    /// the pair, mostly under τ_min, one pair in 25 between 0.45 and 1, so that positions of every
    /// kind (bits, `both`, ambiguous, absent) occur and a side's maximum often sits in a window
    /// the lexical ranking never reaches.
    struct HashStandIn(u64);

    impl NliScorer for HashStandIn {
        fn entailment(&self, pairs: &[NliPair<'_>]) -> Result<Vec<f32>> {
            // FNV-1a over the seed and both texts, then a splitmix64 finaliser: fixed across
            // toolchains, unlike std's hasher.
            let hash = |p: &NliPair<'_>| {
                let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ self.0;
                for b in p.premise.bytes().chain([0]).chain(p.hypothesis.bytes()) {
                    h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
                }
                h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                h ^ (h >> 31)
            };
            Ok(pairs
                .iter()
                .map(|p| {
                    let u = (hash(p) >> 11) as f64 / (1u64 << 53) as f64;
                    let v = if u < 0.96 {
                        u / 0.96 * 0.3
                    } else {
                        0.45 + (u - 0.96) / 0.04 * 0.55
                    };
                    v as f32
                })
                .collect())
        }
    }

    #[test]
    fn fast_decoder_decides_every_position_as_the_exhaustive_one_once_round_4_fires() {
        let b = bundle();
        let check = || check_model(&b, "stand-in", &"a".repeat(64), false).unwrap();
        let text = codeword_among_filler(&b);
        let (mut fired, mut fifth, mut saved) = (0, 0, 0);
        for seed in 0..300 {
            let scorer = HashStandIn(seed);
            let exhaustive = DetectionPlan::exhaustive(&text, b.clone())
                .run(&scorer, check(), &mut |_, _| {})
                .unwrap();
            let (plan, rounds) = fast_rounds(&text, &b, &scorer);
            let (settling, round_5) = (plan.settling, rounds.contains(&5));
            let fast = plan.report(check());
            if !settling {
                continue;
            }
            fired += 1;
            fifth += usize::from(round_5);
            saved += usize::from(fast.pairs_scored < exhaustive.pairs_scored);
            assert_same_decisions(&fast, &exhaustive, &format!("seed {seed}"));
            // With a safeguard, which reads across positions: every pair, the same report.
            let guard: Safeguard = "top-2+exclusive".parse().unwrap();
            let g_ex = DetectionPlan::exhaustive(&text, b.clone())
                .with_safeguard(guard)
                .run(&scorer, check(), &mut |_, _| {})
                .unwrap();
            let g_fast = DetectionPlan::fast(&text, b.clone(), FastOptions::default())
                .with_safeguard(guard)
                .run(&scorer, check(), &mut |_, _| {})
                .unwrap();
            assert_eq!(
                g_fast.pairs_scored, g_ex.pairs_scored,
                "seed {seed}, safeguard"
            );
            let mut same = g_fast.clone();
            same.decoder = Decoder::Exhaustive;
            assert_eq!(
                serde_json::to_value(&same).unwrap(),
                serde_json::to_value(&g_ex).unwrap(),
                "seed {seed}, safeguard"
            );
        }
        // Not vacuous: round 4 fired, round 5 was needed, and pairs were saved.
        assert!(
            fired > 50 && fifth > 0 && saved > 0,
            "{fired} {fifth} {saved}"
        );
    }

    /// Round by round until nothing is pending: the verdict the plan first called settled, with
    /// the pairs scored then, and the finished plan. Every settled verdict met must be `expect`.
    fn settle_rounds(
        mut plan: DetectionPlan,
        scorer: &dyn NliScorer,
        expect: Verdict,
        what: &str,
    ) -> (Option<(Verdict, usize)>, DetectionPlan) {
        let mut first = None;
        loop {
            if let Some(v) = plan.settled_verdict() {
                assert_eq!(v, expect, "{what}, after {} pairs", plan.scored());
                first.get_or_insert((v, plan.scored()));
            }
            let probs = {
                let pairs = plan.pending();
                if pairs.is_empty() {
                    return (first, plan);
                }
                scorer.entailment(&pairs).unwrap()
            };
            // Part-way through the round, every 7 pairs.
            for n in (7..probs.len()).step_by(7) {
                if let Some(v) = plan.settled_verdict_with(&probs[..n]) {
                    assert_eq!(v, expect, "{what}, {n} pairs into round {}", plan.round);
                    first.get_or_insert((v, plan.scored() + n));
                }
            }
            plan.supply(&probs).unwrap();
        }
    }

    #[test]
    fn a_settled_verdict_is_the_exhaustive_decoders_and_often_comes_early() {
        /// The lexical stand-in (codeword sentences in the review) with the hash stand-in's noise
        /// on top: decoding logic only, not a model.
        struct Noisy(u64);
        impl NliScorer for Noisy {
            fn entailment(&self, pairs: &[NliPair<'_>]) -> Result<Vec<f32>> {
                let a = LexicalStandIn.entailment(pairs)?;
                let h = HashStandIn(self.0).entailment(pairs)?;
                Ok(a.iter().zip(&h).map(|(x, y)| x.max(*y)).collect())
            }
        }
        let b = bundle();
        let check = || check_model(&b, "stand-in", &"a".repeat(64), false).unwrap();
        let texts = [
            codeword_among_filler(&b),
            first_positions_among_filler(&b, 9),
            first_positions_among_filler(&b, 5),
        ];
        // Per verdict: settled before the fast decoder's last pair, and reviews seen.
        let (mut early, mut seen) = ([0usize; 3], [0usize; 3]);
        for seed in 0..120 {
            let scorer = Noisy(seed);
            for (t, text) in texts.iter().enumerate() {
                let what = format!("seed {seed}, text {t}");
                let exhaustive = DetectionPlan::exhaustive(text, b.clone())
                    .run(&scorer, check(), &mut |_, _| {})
                    .unwrap();
                let v = exhaustive.verdict;
                seen[v as usize] += 1;
                // Every pair scored: nothing is open, so the verdict is settled and is the verdict.
                let (_, full) = settle_rounds(
                    DetectionPlan::exhaustive(text, b.clone()),
                    &scorer,
                    v,
                    &what,
                );
                assert_eq!(full.settled_verdict(), Some(v), "{what}");
                let (first, plan) = settle_rounds(
                    DetectionPlan::fast(text, b.clone(), FastOptions::default()),
                    &scorer,
                    v,
                    &what,
                );
                let fast = plan.report(check());
                if let Some((got, at)) = first {
                    assert_eq!(fast.verdict, got, "{what}");
                    early[v as usize] += usize::from(at < fast.pairs_scored);
                }
            }
        }
        // Not vacuous: every verdict occurred, and each was settled early in some reviews.
        assert!(
            seen.iter().all(|&n| n > 10) && early.iter().all(|&n| n > 0),
            "seen {seen:?}, settled early {early:?}"
        );
    }

    #[test]
    fn fast_decoder_round_5_settles_a_position_that_round_4_made_ambiguous() {
        let b = bundle();
        assert_eq!(b.codeword[0], 0);
        // Position 0's assigned side is read at 0.75 in a window that shares terms with it, and
        // at 0.85 in one that shares none (rounds 1–3 never score it); its other side at 0.6 in
        // another window that shares none. Round 4 scores the other side: 0.75 against 0.6 is
        // ambiguous, so round 5 scores the assigned side too and finds 0.85: a bit, as the
        // exhaustive decoder decides. Stand-in scores, for the decoding logic only.
        let scorer = QuirkStandIn(|p| {
            let on = |side: &str| p.hypothesis.contains(side);
            if p.premise.contains("Partial") && on("alpha0x0") {
                Some(0.75)
            } else if p.premise.contains("Zorblat") && on("alpha0x0") {
                Some(0.85)
            } else if p.premise.contains("Quuxly") && on("alpha0x1") {
                Some(0.6)
            } else {
                None
            }
        });
        let mut review = vec!["Partial alpha0x0 bravo0x0 note.".to_string()];
        for j in 1..12 {
            review.push(sentence(&b, j, b.codeword[j] as usize));
            review.push(format!(
                "Filler sentence number {j} says nothing in particular."
            ));
        }
        review.extend(
            [
                "Quuxly remark here.",
                "Nothing else to add.",
                "Still nothing new.",
                "Zorblat remark there.",
            ]
            .map(String::from),
        );
        let text = review.join(" ");
        let check = || check_model(&b, "stand-in", &"a".repeat(64), false).unwrap();
        let exhaustive = DetectionPlan::exhaustive(&text, b.clone())
            .run(&scorer, check(), &mut |_, _| {})
            .unwrap();
        assert_eq!(exhaustive.positions[0].decision, PositionDecision::Zero);
        let (plan, rounds) = fast_rounds(&text, &b, &scorer);
        assert_eq!(rounds.last(), Some(&5), "rounds {rounds:?}");
        let fast = plan.report(check());
        assert_same_decisions(&fast, &exhaustive, "round 5");
        assert!(fast.pairs_scored < exhaustive.pairs_scored);
    }

    #[test]
    fn fast_decoder_escalates_positions_with_a_faint_signal() {
        let b = bundle();
        // Every window shares one term with f00 (a stand-in score of 0.2); the last one entails it.
        let text =
            "Note alpha0x0 one. Note alpha0x0 two. Note alpha0x0 three. Note alpha0x0 four. \
                    Final alpha0x0 Zyxq.";
        let check = || check_model(&b, "stand-in", &"a".repeat(64), false).unwrap();
        // The marker window entails f00, which it shares one term with.
        let marker = QuirkStandIn(|p| {
            (p.premise.contains("Zyxq") && p.hypothesis.starts_with("Topic0side0")).then_some(0.9)
        });
        let decode = |d: DetectionPlan| d.run(&marker, check(), &mut |_, _| {}).unwrap();
        let exhaustive = decode(DetectionPlan::exhaustive(text, b.clone()));
        assert_eq!(
            (
                exhaustive.positions[0].decision.as_str(),
                exhaustive.positions[0].s0
            ),
            ("0", f64::from(0.9f32))
        );
        let opts = |escalate_from| FastOptions {
            top: 1,
            extend: 0,
            escalate_from,
            ..FastOptions::default()
        };
        // Round 1 finds 0.2 in the top window: absent, so round 2 does not extend it.
        let without = decode(DetectionPlan::fast(text, b.clone(), opts(f32::INFINITY)));
        assert_eq!(without.positions[0].erasure, Some(Erasure::Absent));
        assert!((without.positions[0].s0 - 0.2).abs() < 1e-6);
        // Round 3 scores f00 (and f01) against every window sharing a term: the last one is found.
        let with = decode(DetectionPlan::fast(text, b.clone(), opts(0.1)));
        assert_eq!(
            (with.positions[0].decision.as_str(), with.positions[0].s0),
            ("0", f64::from(0.9f32))
        );
        assert!(with.pairs_scored < exhaustive.pairs_scored);
        // A threshold above the faint signal leaves it alone.
        let high = decode(DetectionPlan::fast(text, b.clone(), opts(0.3)));
        assert_eq!(high.pairs_scored, without.pairs_scored);
    }

    #[test]
    fn fast_decoder_extends_only_positions_not_found_absent() {
        let b = bundle();
        // The fact twice, in different windows: round 1 scores one, the extension the other.
        let review = format!(
            "{f} One filler here. Two filler there. Three filler again. {f}",
            f = sentence(&b, 0, 0)
        );
        let opts = |extend| FastOptions {
            top: 1,
            extend,
            probes: 0,
            ..FastOptions::lean()
        };
        let one = run_fast(&review, &b, opts(0));
        let more = run_fast(&review, &b, opts(5));
        // Only position 0 (found) gets the extension; its two facts share the window's terms.
        assert!(more.pairs_scored > one.pairs_scored);
        assert!(more.pairs_scored <= one.pairs_scored + 2 * 5);
        assert_eq!(one.positions[0].decision, PositionDecision::Zero);
        assert_eq!(one.positions[5].erasure, Some(Erasure::Absent));
        // Empty reviews score nothing and stay defined.
        let empty = run_fast("", &b, FastOptions::default());
        assert_eq!((empty.pairs_scored, empty.score), (0, -13));
    }

    /// The lexical stand-in, except for the pairs `rule` scores itself (model quirks: a window
    /// read as entailing unrelated facts, or a fact it shares one term with).
    struct QuirkStandIn(fn(&NliPair<'_>) -> Option<f32>);

    impl NliScorer for QuirkStandIn {
        fn entailment(&self, pairs: &[NliPair<'_>]) -> Result<Vec<f32>> {
            let lexical = LexicalStandIn.entailment(pairs)?;
            Ok(pairs
                .iter()
                .zip(lexical)
                .map(|(p, v)| (self.0)(p).unwrap_or(v))
                .collect())
        }
    }

    /// The model's "hub" windows: a premise with the marker word entails every hypothesis.
    const HUB: QuirkStandIn = QuirkStandIn(|p| p.premise.contains("Qwxz").then_some(0.95));

    #[test]
    fn fast_decoder_probes_find_windows_that_entail_unrelated_facts() {
        let b = bundle();
        let text = format!(
            "{} Qwxz. Qwxz again. {}",
            codeword_among_filler(&b),
            codeword_among_filler(&b)
        );
        let check = || check_model(&b, "stand-in", &"a".repeat(64), false).unwrap();
        let decode = |d: DetectionPlan| d.run(&HUB, check(), &mut |_, _| {}).unwrap();
        let exhaustive = decode(DetectionPlan::exhaustive(&text, b.clone()));
        // The marker windows share no content term with any fact, so BM25 never ranks them, yet
        // they push every fact to 0.95: every position is erased as "both".
        assert!(exhaustive
            .positions
            .iter()
            .all(|p| p.erasure == Some(Erasure::Both)));
        let blind = FastOptions {
            probes: 0,
            ..FastOptions::lean()
        };
        let without = decode(DetectionPlan::fast(&text, b.clone(), blind));
        assert!(without.positions.iter().all(|p| p.erasure.is_none()));
        let with = decode(DetectionPlan::fast(
            &text,
            b.clone(),
            FastOptions::default(),
        ));
        let decisions = |r: &Report| -> Vec<_> {
            r.positions
                .iter()
                .map(|p| (p.decision, p.erasure, p.s0, p.s1))
                .collect()
        };
        assert_eq!(decisions(&with), decisions(&exhaustive));
        assert_eq!(with.verdict, exhaustive.verdict);
        assert!(with.pairs_scored < exhaustive.pairs_scored / 2);
    }

    /// A caller that splits each round between two scorers (as the browser's worker pool does)
    /// gets the report of the single-scorer decoders.
    #[test]
    fn stepwise_decoding_with_split_rounds_equals_the_one_scorer_decoders() {
        let b = bundle();
        let text = codeword_among_filler(&b);
        let check = || check_model(&b, "stand-in", &"a".repeat(64), false).unwrap();
        // One window per fact first, so that the extension round is not empty.
        let opts = FastOptions {
            top: 1,
            ..FastOptions::default()
        };
        for fast in [false, true] {
            let mut d = if fast {
                DetectionPlan::fast(&text, b.clone(), opts)
            } else {
                DetectionPlan::exhaustive(&text, b.clone())
            };
            let mut rounds = 0;
            loop {
                let pairs = d.pending();
                if pairs.is_empty() {
                    break;
                }
                let (a, z) = pairs.split_at(pairs.len() / 2);
                let mut probs = LexicalStandIn.entailment(a).unwrap();
                probs.extend(LexicalStandIn.entailment(z).unwrap());
                d.supply(&probs).unwrap();
                rounds += 1;
            }
            let stepwise = d.report(check());
            let whole = if fast {
                run_fast(&text, &b, opts)
            } else {
                run(&text, &b)
            };
            assert!(
                if fast { rounds >= 2 } else { rounds == 1 },
                "{rounds} rounds"
            );
            assert_eq!(
                serde_json::to_value(&stepwise).unwrap(),
                serde_json::to_value(&whole).unwrap()
            );
        }
        // Scores for the wrong number of pairs are refused, not misassigned.
        let mut d = DetectionPlan::exhaustive(&text, b.clone());
        let e = d.supply(&[0.5]).unwrap_err();
        assert!(e.message.contains("pending"), "{e}");
        // Scores that are not probabilities are refused too, and the plan keeps its pending round.
        let n = d.pending().len();
        for bad in [f32::NAN, -0.01, 1.01, f32::INFINITY] {
            let mut probs = vec![0.5; n];
            probs[n - 1] = bad;
            let e = d.supply(&probs).unwrap_err();
            assert!(e.message.contains("not a probability"), "{bad}: {e}");
            assert_eq!((d.pending().len(), d.scored()), (n, 0), "{bad}");
        }
        d.supply(&vec![0.0; n]).unwrap();
        assert!(d.pending().is_empty());
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

    /// `finish` on a hand-made probability matrix (no model): two windows, position 0 "entailed"
    /// on both sides, side 1 in its own window, side 0 only in a window mainly about position 1.
    #[test]
    fn exclusive_safeguard_decides_a_both_position_by_its_own_window() {
        let b = bundle();
        let wins: Vec<Window> = ["first window", "second window"]
            .iter()
            .enumerate()
            .map(|(i, t)| Window {
                index: i,
                text: t.to_string(),
                start: 0,
                end: t.len(),
                first_sentence: i,
            })
            .collect();
        let nw = wins.len();
        let mut probs = vec![Some(0.0f32); 24 * nw];
        let mut set = |f: usize, w: usize, p: f32| probs[f * nw + w] = Some(p);
        set(1, 0, 0.97); // position 0, side 1, window 0 (its own)
        set(0, 1, 0.95); // position 0, side 0, window 1 ...
        set(2, 1, 0.99); // ... which is mainly about position 1
        let check = || ModelCheck {
            name: "stand-in".into(),
            sha256: "a".repeat(64),
            bundle_sha256: "a".repeat(64),
            hash_matches: true,
            mismatch_overridden: false,
        };
        let run = |g: &str| {
            finish(
                &b,
                wins.clone(),
                nw,
                probs.clone(),
                0,
                check(),
                Decoder::Exhaustive,
                g.parse().unwrap(),
            )
        };
        let paper = run("none");
        assert_eq!(paper.positions[0].erasure, Some(Erasure::Both));
        assert_eq!(paper.positions[1].decision, PositionDecision::Zero);
        let g = run("exclusive");
        assert_eq!(g.positions[0].decision, PositionDecision::One);
        assert_eq!(g.positions[0].erasure, None);
        assert_eq!(g.safeguard.to_string(), "exclusive");
        // Position 1 is untouched, and the report says which rule read the scores.
        assert_eq!(g.positions[1].decision, PositionDecision::Zero);
        assert_eq!(g.observed, paper.observed + 1);
        let json = serde_json::to_value(&g).unwrap();
        assert_eq!(json["safeguard"], "exclusive");
        assert!(serde_json::to_value(&paper)
            .unwrap()
            .get("safeguard")
            .is_none());
        // top-1: window 1 supports only position 1, so position 0's side 0 loses its support and
        // side 1 is decided without any tie-break.
        let t = run("top-1");
        assert_eq!(t.positions[0].decision, PositionDecision::One);
        assert_eq!(t.positions[0].s0, 0.0);
    }
}
