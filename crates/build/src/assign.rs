//! Joint pairing and slot assignment, blind to which side of a pair is selected, then the
//! keyed selection and labelling (paper, "Code-Aware Pairing, Orientation, and Slot
//! Assignment" and appendix "Exact-12 Construction Details", with one change: the optimiser
//! never sees the selection, so the p-value is exact; see [`semtrace_core::codeword`]).
//!
//! The paper fixes the weights but leaves some definitions implicit; these are our frozen
//! choices. Position j holds an unordered pair {a, b} and a slot; after the search, the keyed
//! selection bit s_j picks the side the carrier asks for (the *selected* fact) and the codeword
//! bit c_j is its label ([`orient`]).
//! - C_pair(f, g) = 3(|r_f − r_g| + |i_f − i_g| + |n_f − n_g|) + 2·C_co(f, g) + 2·R(f, g) +
//!   0.2·1[cat_f ≠ cat_g], with C_co from [`super::priors::co_coverage`] at τ_mention (offline: the learned
//!   [`super::mention::co_mention`]) and R
//!   from [`super::select::redundancy`]: alternatives of one bit should be equally likely to
//!   be mentioned spontaneously and should not travel together.
//! - ρ(a → b) = max(0, E(a → b) − 0.52) / (1 − 0.52), E = NLI P(premise a ⊨ hypothesis b):
//!   a selected fact that entails its unselected partner makes the detector see both.
//! - Either side may be selected, each with probability ½, so the terms are expectations over
//!   the selection: A = Σ_j ½(ρ(a_j → b_j) + ρ(b_j → a_j)); P = Σ_j C_pair(a_j, b_j);
//!   H = Σ_j ½(slot_cost(slot_j, a_j) + slot_cost(slot_j, b_j)) with
//!   Summary: 0.5(1 − i) + 0.5·1[cat ∉ {problem, method, data, setup, result}];
//!   Strength: max(0, −sentiment) + 0.5·1[cat ∉ {method, data, result, comparison}];
//!   Weakness: max(0, sentiment) + 0.5·1[cat ∉ {setup, limitation, comparison, data}].
//! - L = 8A + P + H.
//!
//! Search: pairs = exact min-cost perfect matching on C_pair ([`super::matching`]), in the
//! matching's order; position j takes slot j. Then deterministic simulated annealing
//! ([`AssignParams`], default 20,000 iterations, geometric cooling 2.0 → 0.01; moves chosen
//! uniformly: swap two facts between two positions, swap the slots of two positions;
//! Metropolis acceptance) keeping the best state seen, then best-improvement descent over all
//! such moves until none improves by more than 1e-12. Every pair is returned with the lower
//! fact index on side 0.

use serde::{Deserialize, Serialize};

use super::facts::FactAttrs;
use super::matching::min_weight_perfect_matching;
use super::mention::co_mention;
use super::priors::co_coverage;
use super::select::redundancy;
use semtrace_core::error::{Error, Result};
use semtrace_core::params::{
    LAMBDA_A, LAMBDA_H, LAMBDA_P, PAIR_W_CAT, PAIR_W_CO, PAIR_W_PRIOR, PAIR_W_R, TAU_MIN,
};
use semtrace_core::rng::Xoshiro256;
use semtrace_core::slots::{Section, Slot};

/// Smallest objective decrease that counts as an improvement (guards float noise).
pub const IMPROVE_EPS: f64 = 1e-12;

/// C_pair(f, g).
pub fn pair_cost(f: &FactAttrs, g: &FactAttrs) -> f64 {
    PAIR_W_PRIOR * ((f.r - g.r).abs() + (f.i - g.i).abs() + (f.n - g.n).abs())
        + PAIR_W_CO * co_rate(f, g)
        + PAIR_W_R * redundancy(f, g)
        + PAIR_W_CAT * f64::from(u8::from(f.category != g.category))
}

/// C_co(f, g): from controls when there are any, else from the learned mention model when
/// the priors are learned, else 0 (nothing known).
fn co_rate(f: &FactAttrs, g: &FactAttrs) -> f64 {
    match (f.co_gamma, g.co_gamma) {
        (Some(gamma), Some(_)) if f.q.is_empty() && g.q.is_empty() => {
            co_mention(f.r, g.r, &f.text, &g.text, gamma)
        }
        _ => co_coverage(&f.q, &g.q, TAU_MIN),
    }
}

/// ρ for an entailment probability.
pub fn implication_risk(entailment: f64) -> f64 {
    (entailment - TAU_MIN).max(0.0) / (1.0 - TAU_MIN)
}

/// Cost of asking for fact `f` in a slot of `section`.
pub fn slot_cost(section: Section, f: &FactAttrs) -> f64 {
    let not_in = |cats: &[&str]| f64::from(u8::from(!cats.contains(&f.category.as_str())));
    match section {
        Section::Summary => {
            0.5 * (1.0 - f.i) + 0.5 * not_in(&["problem", "method", "data", "setup", "result"])
        }
        Section::Strength => {
            (-f.sentiment).max(0.0) + 0.5 * not_in(&["method", "data", "result", "comparison"])
        }
        Section::Weakness => {
            f.sentiment.max(0.0) + 0.5 * not_in(&["setup", "limitation", "comparison", "data"])
        }
    }
}

/// Search settings; [`Default`] is the frozen Exact-12 setting.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AssignParams {
    pub seed: u64,
    pub iterations: usize,
    pub t_start: f64,
    pub t_end: f64,
}

impl Default for AssignParams {
    fn default() -> Self {
        AssignParams {
            seed: 0,
            iterations: 20_000,
            t_start: 2.0,
            t_end: 0.01,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Objective {
    /// 8A + P + H.
    pub total: f64,
    pub a: f64,
    pub p: f64,
    pub h: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct AssignedPosition {
    /// Indices into the input facts: `facts[b]` stands for bit b.
    pub facts: [usize; 2],
    /// Index into the input slots.
    pub slot: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnnealStats {
    pub seed: u64,
    pub iterations: usize,
    pub t_start: f64,
    pub t_end: f64,
    /// Moves accepted by the Metropolis rule.
    pub accepted: usize,
    /// Iteration at which the best annealing state was last improved (None: the initial one).
    pub best_at: Option<usize>,
    /// Improving moves applied by the final descent.
    pub greedy_moves: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Assignment {
    /// Final positions, selection-blind: each pair with the lower fact index on side 0.
    pub positions: Vec<AssignedPosition>,
    pub objective: Objective,
    /// Objective of the matching initialisation.
    pub initial: Objective,
    pub annealing: AnnealStats,
}

/// Precomputed costs of one instance.
struct Problem {
    cpair: Vec<Vec<f64>>,
    /// Symmetric expected risk ½(ρ(a → b) + ρ(b → a)).
    risk: Vec<Vec<f64>>,
    /// hcost[slot][fact].
    hcost: Vec<Vec<f64>>,
}

impl Problem {
    /// (A, P, H) terms of a position holding `pair` in `slot`; symmetric in the pair.
    fn terms(&self, pair: [usize; 2], slot: usize) -> (f64, f64, f64) {
        let [a, b] = pair;
        (
            self.risk[a][b],
            self.cpair[a][b],
            0.5 * (self.hcost[slot][a] + self.hcost[slot][b]),
        )
    }

    fn cost(&self, pair: [usize; 2], slot: usize) -> f64 {
        let (a, p, h) = self.terms(pair, slot);
        LAMBDA_A * a + LAMBDA_P * p + LAMBDA_H * h
    }

    fn objective(&self, pos: &[AssignedPosition]) -> Objective {
        let (mut a, mut p, mut h) = (0.0, 0.0, 0.0);
        for x in pos {
            let t = self.terms(x.facts, x.slot);
            a += t.0;
            p += t.1;
            h += t.2;
        }
        Objective {
            total: LAMBDA_A * a + LAMBDA_P * p + LAMBDA_H * h,
            a,
            p,
            h,
        }
    }

    fn pos_cost(&self, pos: &[AssignedPosition], j: usize) -> f64 {
        self.cost(pos[j].facts, pos[j].slot)
    }
}

/// A local move; applying it twice restores the state.
#[derive(Debug, Clone, Copy)]
enum Move {
    /// Swap fact `pos[j].facts[s]` with `pos[l].facts[t]`.
    SwapFacts(usize, usize, usize, usize),
    SwapSlots(usize, usize),
}

impl Move {
    fn apply(self, pos: &mut [AssignedPosition]) {
        match self {
            Move::SwapFacts(j, s, l, t) => {
                let tmp = pos[j].facts[s];
                pos[j].facts[s] = pos[l].facts[t];
                pos[l].facts[t] = tmp;
            }
            Move::SwapSlots(j, l) => {
                let tmp = pos[j].slot;
                pos[j].slot = pos[l].slot;
                pos[l].slot = tmp;
            }
        }
    }

    /// Objective change of the move (applies and reverts it; only touched positions count).
    fn delta(self, prob: &Problem, pos: &mut [AssignedPosition]) -> f64 {
        let (Move::SwapFacts(j, _, l, _) | Move::SwapSlots(j, l)) = self;
        let cost = |pos: &[AssignedPosition]| prob.pos_cost(pos, j) + prob.pos_cost(pos, l);
        let before = cost(pos);
        self.apply(pos);
        let after = cost(pos);
        self.apply(pos);
        after - before
    }
}

/// Optimise pairing and slots for `facts` (2K) and `slots` (K), blind to the selection.
/// `entail[a][b]` = P(fact a entails fact b); the diagonal is ignored. Each returned pair has
/// the lower fact index on side 0; [`orient`] then applies the selection and the labels.
pub fn assign(
    facts: &[FactAttrs],
    entail: &[Vec<f64>],
    slots: &[Slot],
    params: &AssignParams,
) -> Result<Assignment> {
    let k = slots.len();
    let n = facts.len();
    if k == 0 || n != 2 * k {
        return Err(Error::bundle(format!(
            "assignment needs 2K facts for K slots (K = {k}, facts = {n})"
        )));
    }
    if entail.len() != n || entail.iter().any(|row| row.len() != n) {
        return Err(Error::bundle("entailment matrix must be 2K × 2K"));
    }
    if entail.iter().flatten().any(|x| !x.is_finite()) {
        return Err(Error::bundle("entailment matrix must be finite"));
    }
    let cpair: Vec<Vec<f64>> = facts
        .iter()
        .map(|f| facts.iter().map(|g| pair_cost(f, g)).collect())
        .collect();
    if cpair.iter().flatten().any(|x| !x.is_finite()) {
        return Err(Error::bundle("fact attributes must be finite"));
    }
    let rho = |a: usize, b: usize| implication_risk(entail[a][b]);
    let prob = Problem {
        risk: (0..n)
            .map(|a| (0..n).map(|b| 0.5 * (rho(a, b) + rho(b, a))).collect())
            .collect(),
        hcost: slots
            .iter()
            .map(|s| facts.iter().map(|f| slot_cost(s.section, f)).collect())
            .collect(),
        cpair,
    };

    // Initialisation: matching, slots in order.
    let mut pos: Vec<AssignedPosition> = min_weight_perfect_matching(n, &prob.cpair)
        .into_iter()
        .enumerate()
        .map(|(j, (a, b))| AssignedPosition {
            facts: [a, b],
            slot: j,
        })
        .collect();
    let initial = prob.objective(&pos);

    // Simulated annealing.
    let mut rng = Xoshiro256::seed_from_u64(params.seed);
    let mut cur = initial.total;
    let mut best = pos.clone();
    let mut best_cost = cur;
    let mut stats = AnnealStats {
        seed: params.seed,
        iterations: params.iterations,
        t_start: params.t_start,
        t_end: params.t_end,
        accepted: 0,
        best_at: None,
        greedy_moves: 0,
    };
    let ratio = params.t_end / params.t_start;
    let denom = params.iterations.saturating_sub(1).max(1) as f64;
    for it in 0..params.iterations {
        let temp = params.t_start * ratio.powf(it as f64 / denom);
        if k < 2 {
            break; // one position: nothing to move
        }
        let two = |rng: &mut Xoshiro256| {
            let j = rng.below(k as u64) as usize;
            let mut l = rng.below(k as u64 - 1) as usize;
            if l >= j {
                l += 1;
            }
            (j, l)
        };
        let mv = if rng.below(2) == 0 {
            let (j, l) = two(&mut rng);
            let s = rng.below(2) as usize;
            let t = rng.below(2) as usize;
            Move::SwapFacts(j, s, l, t)
        } else {
            let (j, l) = two(&mut rng);
            Move::SwapSlots(j, l)
        };
        let d = mv.delta(&prob, &mut pos);
        // Draw the uniform variate only for uphill moves: the stream stays a pure function
        // of the seed and the instance either way.
        if d <= 0.0 || rng.next_f64() < (-d / temp).exp() {
            mv.apply(&mut pos);
            cur += d;
            stats.accepted += 1;
            if cur < best_cost - IMPROVE_EPS {
                // Re-evaluate exactly so accumulated float drift never misleads the comparison.
                cur = prob.objective(&pos).total;
                if cur < best_cost - IMPROVE_EPS {
                    best_cost = cur;
                    best.clone_from(&pos);
                    stats.best_at = Some(it);
                }
            }
        }
    }

    // Best-improvement descent from the best annealing state.
    let mut pos = best;
    loop {
        let mut best_move: Option<(Move, f64)> = None;
        let mut consider = |mv: Move, pos: &mut Vec<AssignedPosition>| {
            let d = mv.delta(&prob, pos);
            if d < -IMPROVE_EPS && best_move.is_none_or(|(_, bd)| d < bd) {
                best_move = Some((mv, d));
            }
        };
        for j in 0..k {
            for l in j + 1..k {
                for s in 0..2 {
                    for t in 0..2 {
                        consider(Move::SwapFacts(j, s, l, t), &mut pos);
                    }
                }
                consider(Move::SwapSlots(j, l), &mut pos);
            }
        }
        match best_move {
            Some((mv, _)) => {
                mv.apply(&mut pos);
                stats.greedy_moves += 1;
            }
            None => break,
        }
    }
    for p in &mut pos {
        p.facts.sort_unstable();
    }
    let objective = prob.objective(&pos);
    Ok(Assignment {
        positions: pos,
        objective,
        initial,
        annealing: stats,
    })
}

/// Objective of an arbitrary layout (for reports and checks), same definitions as [`assign`];
/// the order within each pair does not matter. Panics if indices are out of range.
pub fn evaluate(
    facts: &[FactAttrs],
    entail: &[Vec<f64>],
    slots: &[Slot],
    positions: &[AssignedPosition],
) -> Objective {
    let (mut a, mut p, mut h) = (0.0, 0.0, 0.0);
    for x in positions {
        let [f, g] = x.facts;
        a += 0.5 * (implication_risk(entail[f][g]) + implication_risk(entail[g][f]));
        p += pair_cost(&facts[f], &facts[g]);
        h += 0.5
            * (slot_cost(slots[x.slot].section, &facts[f])
                + slot_cost(slots[x.slot].section, &facts[g]));
    }
    Objective {
        total: LAMBDA_A * a + LAMBDA_P * p + LAMBDA_H * h,
        a,
        p,
        h,
    }
}

/// Apply the keyed selection and the codeword labels to a selection-blind layout: position j
/// asks for `positions[j].facts[selection[j]]`, and that fact is stored as `facts[codeword[j]]`
/// (the label is only a name; see [`semtrace_core::codeword`]).
pub fn orient(
    positions: &[AssignedPosition],
    selection: &[u8],
    codeword: &[u8],
) -> Result<Vec<AssignedPosition>> {
    let k = positions.len();
    if selection.len() != k || codeword.len() != k {
        return Err(Error::bundle(format!(
            "orientation needs K = {k} selection bits and codeword bits (got {} and {})",
            selection.len(),
            codeword.len()
        )));
    }
    if selection.iter().chain(codeword).any(|&b| b > 1) {
        return Err(Error::bundle("selection and codeword bits must be 0 or 1"));
    }
    Ok(positions
        .iter()
        .zip(selection.iter().zip(codeword))
        .map(|(p, (&s, &c))| {
            let (sel, other) = (p.facts[usize::from(s)], p.facts[1 - usize::from(s)]);
            let mut facts = [other, other];
            facts[usize::from(c)] = sel;
            AssignedPosition {
                facts,
                slot: p.slot,
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::CATEGORIES;
    use semtrace_core::slots::default_slots;

    struct Instance {
        facts: Vec<FactAttrs>,
        entail: Vec<Vec<f64>>,
        slots: Vec<Slot>,
    }

    fn random_instance(k: usize, seed: u64) -> Instance {
        let mut rng = Xoshiro256::seed_from_u64(seed);
        let n = 2 * k;
        let words = [
            "encoder",
            "decoder",
            "attention",
            "bleu",
            "layers",
            "heads",
            "training",
            "gpu",
        ];
        let facts: Vec<FactAttrs> = (0..n)
            .map(|f| {
                let text: Vec<&str> = (0..4).map(|_| words[rng.below(8) as usize]).collect();
                FactAttrs {
                    id: format!("f{f}"),
                    text: text.join(" "),
                    e: rng.next_f64(),
                    i: rng.next_f64(),
                    v: rng.next_f64(),
                    n: rng.next_f64(),
                    r: rng.next_f64(),
                    q: (0..4)
                        .map(|_| [0.1, 0.6, 0.9][rng.below(3) as usize])
                        .collect(),
                    category: CATEGORIES[rng.below(CATEGORIES.len() as u64) as usize].into(),
                    sentiment: rng.next_f64() * 2.0 - 1.0,
                    rating_impact: 0.0,
                    co_gamma: None,
                }
            })
            .collect();
        let entail = (0..n)
            .map(|_| {
                (0..n)
                    .map(|_| {
                        if rng.below(3) == 0 {
                            0.5 + 0.5 * rng.next_f64()
                        } else {
                            0.5 * rng.next_f64()
                        }
                    })
                    .collect()
            })
            .collect();
        let sections = [Section::Summary, Section::Strength, Section::Weakness];
        let slots = (0..k)
            .map(|s| Slot {
                id: format!("s{s}"),
                section: sections[rng.below(3) as usize],
                item: s as u32 + 1,
                label: format!("slot {s}"),
            })
            .collect();
        Instance {
            facts,
            entail,
            slots,
        }
    }

    fn permutations(k: usize) -> Vec<Vec<usize>> {
        if k == 0 {
            return vec![vec![]];
        }
        let mut out = Vec::new();
        for p in permutations(k - 1) {
            for at in 0..=p.len() {
                let mut q = p.clone();
                q.insert(at, k - 1);
                out.push(q);
            }
        }
        out
    }

    fn matchings(free: &[usize]) -> Vec<Vec<(usize, usize)>> {
        if free.is_empty() {
            return vec![vec![]];
        }
        let mut out = Vec::new();
        for idx in 1..free.len() {
            let rest: Vec<usize> = free[1..]
                .iter()
                .copied()
                .filter(|&x| x != free[idx])
                .collect();
            for mut m in matchings(&rest) {
                m.push((free[0], free[idx]));
                out.push(m);
            }
        }
        out
    }

    /// Minimum of the objective over all pairings × pair-to-slot maps, computed from the
    /// public definitions only ([`evaluate`] on one-position layouts: positions are
    /// independent terms, and the order inside a pair does not matter).
    fn brute_force(inst: &Instance) -> f64 {
        let k = inst.slots.len();
        let perms = permutations(k);
        let one = |a: usize, b: usize, s: usize| {
            let pos = [AssignedPosition {
                facts: [a, b],
                slot: s,
            }];
            evaluate(&inst.facts, &inst.entail, &inst.slots, &pos).total
        };
        let mut best = f64::INFINITY;
        for m in matchings(&(0..2 * k).collect::<Vec<_>>()) {
            for slot_perm in &perms {
                let total: f64 = (0..k).map(|j| one(m[j].0, m[j].1, slot_perm[j])).sum();
                best = best.min(total);
            }
        }
        best
    }

    fn run(inst: &Instance, seed: u64) -> Assignment {
        let params = AssignParams {
            seed,
            ..AssignParams::default()
        };
        assign(&inst.facts, &inst.entail, &inst.slots, &params).unwrap()
    }

    fn check_valid(inst: &Instance, a: &Assignment) {
        let k = inst.slots.len();
        assert_eq!(a.positions.len(), k);
        assert!(a.positions.iter().all(|p| p.facts[0] < p.facts[1]));
        let mut facts: Vec<usize> = a.positions.iter().flat_map(|p| p.facts).collect();
        facts.sort_unstable();
        assert_eq!(facts, (0..2 * k).collect::<Vec<_>>());
        let mut slots: Vec<usize> = a.positions.iter().map(|p| p.slot).collect();
        slots.sort_unstable();
        assert_eq!(slots, (0..k).collect::<Vec<_>>());
        let o = evaluate(&inst.facts, &inst.entail, &inst.slots, &a.positions);
        assert!((o.total - a.objective.total).abs() < 1e-9);
        assert!(a.objective.total <= a.initial.total + 1e-12);
    }

    #[test]
    fn reaches_brute_force_optimum_on_small_instances() {
        for k in [1, 2, 3, 4] {
            let cases = if k == 4 { 20 } else { 40 };
            for case in 0..cases {
                let inst = random_instance(k, 1000 * k as u64 + case);
                let got = run(&inst, case);
                check_valid(&inst, &got);
                let want = brute_force(&inst);
                assert!(
                    (got.objective.total - want).abs() < 1e-9,
                    "k={k} case={case}: got {}, brute force {want}",
                    got.objective.total
                );
            }
        }
    }

    #[test]
    fn deterministic_and_never_worse_than_initialisation() {
        let inst = random_instance(12, 77);
        let slots = default_slots(12);
        let inst = Instance { slots, ..inst };
        let a = run(&inst, 1);
        let b = run(&inst, 1);
        assert_eq!(a, b);
        check_valid(&inst, &a);
        for seed in 2..6 {
            let c = run(&inst, seed);
            check_valid(&inst, &c);
            assert_eq!(c.initial, a.initial);
        }
        assert_eq!(a.annealing.iterations, 20_000);
    }

    fn plain(id: &str, category: &str) -> FactAttrs {
        FactAttrs {
            id: id.into(),
            text: id.into(),
            e: 0.9,
            i: 0.5,
            v: 0.5,
            n: 0.5,
            r: 0.3,
            q: vec![],
            category: category.into(),
            sentiment: 0.0,
            rating_impact: 0.0,
            co_gamma: None,
        }
    }

    #[test]
    fn one_way_entailment_is_split_too() {
        // 0 and 1 are the cheapest pair and 0 entails 1 but not conversely. The orientation
        // is no longer chosen, so with probability ½ the entailing side would be selected:
        // expected risk 8·½·ρ ≈ 3.9 outweighs the pair-cost gap (2.2), and the optimum splits them.
        let mut facts = vec![
            plain("x0", "method"),
            plain("x1", "method"),
            plain("y0", "result"),
            plain("y1", "result"),
        ];
        facts[2].r = 0.6;
        facts[3].r = 0.6;
        let mut entail = vec![vec![0.0; 4]; 4];
        entail[0][1] = 0.99;
        let a = assign(&facts, &entail, &default_slots(2), &AssignParams::default()).unwrap();
        assert!((a.initial.a - 0.5 * implication_risk(0.99)).abs() < 1e-12);
        assert_eq!(a.objective.a, 0.0);
        assert!(a
            .positions
            .iter()
            .all(|p| !(p.facts.contains(&0) && p.facts.contains(&1))));
    }

    #[test]
    fn orient_selects_by_bit_and_labels_by_codeword() {
        let layout = vec![
            AssignedPosition {
                facts: [0, 3],
                slot: 1,
            },
            AssignedPosition {
                facts: [1, 2],
                slot: 0,
            },
        ];
        for s in 0..4u8 {
            for c in 0..4u8 {
                let sel = [s & 1, s >> 1];
                let code = [c & 1, c >> 1];
                let o = orient(&layout, &sel, &code).unwrap();
                for j in 0..2 {
                    let selected = layout[j].facts[usize::from(sel[j])];
                    assert_eq!(o[j].facts[usize::from(code[j])], selected);
                    let mut both = o[j].facts;
                    both.sort_unstable();
                    assert_eq!(both, layout[j].facts);
                    assert_eq!(o[j].slot, layout[j].slot);
                }
            }
        }
        assert!(orient(&layout, &[0], &[0, 1]).is_err());
        assert!(orient(&layout, &[0, 2], &[0, 1]).is_err());
    }

    #[test]
    fn mutual_entailment_splits_the_cheapest_pair() {
        // 0 and 1 are identical (cheapest pair) but entail each other: pairing them costs
        // 8·ρ ≈ 8, far more than the pair-cost gap, so the optimum splits them.
        let mut facts = vec![
            plain("x0", "method"),
            plain("x1", "method"),
            plain("y0", "result"),
            plain("y1", "result"),
        ];
        facts[2].r = 0.6;
        facts[3].r = 0.6;
        let mut entail = vec![vec![0.0; 4]; 4];
        entail[0][1] = 0.99;
        entail[1][0] = 0.99;
        let a = assign(&facts, &entail, &default_slots(2), &AssignParams::default()).unwrap();
        assert!(a.initial.a > 0.9, "matching alone pairs the twins");
        assert_eq!(a.objective.a, 0.0);
        assert!(a
            .positions
            .iter()
            .all(|p| !(p.facts.contains(&0) && p.facts.contains(&1))));
        assert!(a.objective.total < a.initial.total);
    }

    #[test]
    /// The paper's layout (K = 12, default slots): a valid assignment that local search does not
    /// make worse than its start. (Its speed is `scripts/bench.sh`'s business, not a unit test's.)
    fn k12_default_layout_is_valid_and_no_worse_than_its_start() {
        let inst = random_instance(12, 4242);
        let inst = Instance {
            slots: default_slots(12),
            ..inst
        };
        let a = run(&inst, 0);
        check_valid(&inst, &a);
        assert_eq!(a.positions.len(), 12);
        assert!(a.objective.total <= a.initial.total + 1e-12);
    }

    #[test]
    fn rejects_malformed_input() {
        let inst = random_instance(2, 1);
        let p = AssignParams::default();
        assert!(assign(&inst.facts[..3], &inst.entail, &inst.slots, &p).is_err());
        assert!(assign(&inst.facts, &inst.entail, &inst.slots[..1], &p).is_err());
        assert!(assign(&inst.facts, &inst.entail[..3], &inst.slots, &p).is_err());
        let mut nan = inst.entail.clone();
        nan[0][1] = f64::NAN;
        assert!(assign(&inst.facts, &nan, &inst.slots, &p).is_err());
        assert!(assign(&[], &[], &[], &p).is_err());
    }

    #[test]
    fn frozen_cost_definitions() {
        assert_eq!(implication_risk(0.52), 0.0);
        assert!((implication_risk(1.0) - 1.0).abs() < 1e-15);
        assert!((implication_risk(0.76) - 0.5).abs() < 1e-12);
        let mut f = plain("a", "limitation");
        f.sentiment = -0.4;
        f.i = 0.2;
        assert!((slot_cost(Section::Summary, &f) - (0.4 + 0.5)).abs() < 1e-12);
        assert!((slot_cost(Section::Strength, &f) - (0.4 + 0.5)).abs() < 1e-12);
        assert!((slot_cost(Section::Weakness, &f) - 0.0).abs() < 1e-12);
        let mut g = plain("b", "method");
        g.r = 0.5;
        // 3·(|0.3−0.5| + |0.2−0.5| + 0) + 2·C_co (no controls: 0) + 2·R (texts "a", "b": 0)
        // + 0.2 (categories differ).
        assert!((pair_cost(&f, &g) - (1.5 + 0.2)).abs() < 1e-12);
    }
}
