//! Joint pairing, 0/1 orientation and slot assignment (paper, "Code-Aware Pairing,
//! Orientation, and Slot Assignment" and appendix "Exact-12 Construction Details").
//!
//! The paper fixes the weights but leaves some definitions implicit; these are our frozen
//! choices. Position j carries codeword bit c_j and holds an ordered pair (f⁰_j, f¹_j) and a
//! slot; the *selected* fact is f^{c_j} (the one the carrier asks for), the other is
//! *unselected*.
//! - C_pair(f, g) = 3(|r_f − r_g| + |i_f − i_g| + |n_f − n_g|) + 2·C_co(f, g) + 2·R(f, g) +
//!   0.2·1[cat_f ≠ cat_g], with C_co from [`super::priors::co_coverage`] at τ_mention and R
//!   from [`super::select::redundancy`]: alternatives of one bit should be equally likely to
//!   be mentioned spontaneously and should not travel together.
//! - ρ(a → b) = max(0, E(a → b) − 0.52) / (1 − 0.52), E = NLI P(premise a ⊨ hypothesis b):
//!   a selected fact that entails its unselected partner makes the detector see both.
//! - A = Σ_j ρ(selected_j → unselected_j); P = Σ_j C_pair(f⁰_j, f¹_j);
//!   H = Σ_j slot_cost(slot_j, selected_j) with
//!   Summary: 0.5(1 − i) + 0.5·1[cat ∉ {problem, method, data, setup, result}];
//!   Strength: max(0, −sentiment) + 0.5·1[cat ∉ {method, data, result, comparison}];
//!   Weakness: max(0, sentiment) + 0.5·1[cat ∉ {setup, limitation, comparison, data}].
//! - L = 8A + P + H.
//!
//! Search: pairs = exact min-cost perfect matching on C_pair ([`super::matching`]), in the
//! matching's order (sorted by smaller fact index); each pair oriented to minimise its A term
//! (tie: lower fact index on side 0); position j takes slot j. Then deterministic simulated
//! annealing ([`AssignParams`], default 20,000 iterations, geometric cooling 2.0 → 0.01;
//! moves chosen uniformly: swap two facts between two positions, flip one position's
//! orientation, swap the slots of two positions; Metropolis acceptance) keeping the best
//! state seen, then best-improvement descent over all such moves until none improves by more
//! than 1e-12.

use serde::{Deserialize, Serialize};

use super::facts::FactAttrs;
use super::matching::min_weight_perfect_matching;
use super::priors::{co_coverage, TAU_MENTION};
use super::rng::Xoshiro256;
use super::select::redundancy;
use super::slots::{Section, Slot};
use crate::error::{Error, Result};

/// Entailment at which implication risk starts.
pub const RHO_THRESHOLD: f64 = 0.52;
/// Objective weights λ_A, λ_P, λ_H.
pub const LAMBDA_A: f64 = 8.0;
pub const LAMBDA_P: f64 = 1.0;
pub const LAMBDA_H: f64 = 1.0;
/// Pair-cost weights.
pub const PAIR_W_PRIOR: f64 = 3.0;
pub const PAIR_W_CO: f64 = 2.0;
pub const PAIR_W_R: f64 = 2.0;
pub const PAIR_W_CAT: f64 = 0.2;
/// Smallest objective decrease that counts as an improvement (guards float noise).
pub const IMPROVE_EPS: f64 = 1e-12;

/// C_pair(f, g).
pub fn pair_cost(f: &FactAttrs, g: &FactAttrs) -> f64 {
    PAIR_W_PRIOR * ((f.r - g.r).abs() + (f.i - g.i).abs() + (f.n - g.n).abs())
        + PAIR_W_CO * co_coverage(&f.q, &g.q, TAU_MENTION)
        + PAIR_W_R * redundancy(f, g)
        + PAIR_W_CAT * f64::from(u8::from(f.category != g.category))
}

/// ρ for an entailment probability.
pub fn implication_risk(entailment: f64) -> f64 {
    (entailment - RHO_THRESHOLD).max(0.0) / (1.0 - RHO_THRESHOLD)
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
    /// Final positions; position j carries codeword bit c_j.
    pub positions: Vec<AssignedPosition>,
    pub objective: Objective,
    /// Objective of the matching initialisation.
    pub initial: Objective,
    pub annealing: AnnealStats,
}

/// Precomputed costs of one instance.
struct Problem<'a> {
    bits: &'a [u8],
    cpair: Vec<Vec<f64>>,
    rho: Vec<Vec<f64>>,
    /// hcost[slot][fact].
    hcost: Vec<Vec<f64>>,
}

impl Problem<'_> {
    /// (A, P, H) terms of position j holding `pair` in `slot`.
    fn terms(&self, j: usize, pair: [usize; 2], slot: usize) -> (f64, f64, f64) {
        let c = usize::from(self.bits[j]);
        let (sel, uns) = (pair[c], pair[1 - c]);
        (
            self.rho[sel][uns],
            self.cpair[pair[0]][pair[1]],
            self.hcost[slot][sel],
        )
    }

    fn cost(&self, j: usize, pair: [usize; 2], slot: usize) -> f64 {
        let (a, p, h) = self.terms(j, pair, slot);
        LAMBDA_A * a + LAMBDA_P * p + LAMBDA_H * h
    }

    fn objective(&self, pos: &[AssignedPosition]) -> Objective {
        let (mut a, mut p, mut h) = (0.0, 0.0, 0.0);
        for (j, x) in pos.iter().enumerate() {
            let t = self.terms(j, x.facts, x.slot);
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
        self.cost(j, pos[j].facts, pos[j].slot)
    }
}

/// A local move; applying it twice restores the state.
#[derive(Debug, Clone, Copy)]
enum Move {
    /// Swap fact `pos[j].facts[s]` with `pos[l].facts[t]`.
    SwapFacts(usize, usize, usize, usize),
    Flip(usize),
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
            Move::Flip(j) => pos[j].facts.swap(0, 1),
            Move::SwapSlots(j, l) => {
                let tmp = pos[j].slot;
                pos[j].slot = pos[l].slot;
                pos[l].slot = tmp;
            }
        }
    }

    /// Objective change of the move (applies and reverts it; only touched positions count).
    fn delta(self, prob: &Problem, pos: &mut [AssignedPosition]) -> f64 {
        let touched = |m: Move| match m {
            Move::SwapFacts(j, _, l, _) | Move::SwapSlots(j, l) => (j, Some(l)),
            Move::Flip(j) => (j, None),
        };
        let (j, l) = touched(self);
        let cost = |pos: &[AssignedPosition]| {
            prob.pos_cost(pos, j) + l.map_or(0.0, |l| prob.pos_cost(pos, l))
        };
        let before = cost(pos);
        self.apply(pos);
        let after = cost(pos);
        self.apply(pos);
        after - before
    }
}

/// Optimise pairing, orientation and slots for `facts` (2K), `codeword` (K bits) and `slots`
/// (K). `entail[a][b]` = P(fact a entails fact b); the diagonal is ignored.
pub fn assign(
    facts: &[FactAttrs],
    entail: &[Vec<f64>],
    codeword: &[u8],
    slots: &[Slot],
    params: &AssignParams,
) -> Result<Assignment> {
    let k = codeword.len();
    let n = facts.len();
    if k == 0 || n != 2 * k {
        return Err(Error::bundle(format!(
            "assignment needs 2K facts for a K-bit codeword (K = {k}, facts = {n})"
        )));
    }
    if codeword.iter().any(|&b| b > 1) {
        return Err(Error::bundle("codeword bits must be 0 or 1"));
    }
    if slots.len() != k {
        return Err(Error::bundle(format!(
            "assignment needs K = {k} slots, got {}",
            slots.len()
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
    let prob = Problem {
        bits: codeword,
        rho: entail
            .iter()
            .map(|row| row.iter().map(|&e| implication_risk(e)).collect())
            .collect(),
        hcost: slots
            .iter()
            .map(|s| facts.iter().map(|f| slot_cost(s.section, f)).collect())
            .collect(),
        cpair,
    };

    // Initialisation: matching, A-minimising orientation, slots in order.
    let mut pos: Vec<AssignedPosition> = min_weight_perfect_matching(n, &prob.cpair)
        .into_iter()
        .enumerate()
        .map(|(j, (a, b))| {
            let c = usize::from(codeword[j]);
            let straight = [a, b];
            let flipped = [b, a];
            let risk = |p: [usize; 2]| prob.rho[p[c]][p[1 - c]];
            let facts = if risk(flipped) < risk(straight) {
                flipped
            } else {
                straight
            };
            AssignedPosition { facts, slot: j }
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
        let kind = if k >= 2 { rng.below(3) } else { 1 };
        let two = |rng: &mut Xoshiro256| {
            let j = rng.below(k as u64) as usize;
            let mut l = rng.below(k as u64 - 1) as usize;
            if l >= j {
                l += 1;
            }
            (j, l)
        };
        let mv = match kind {
            0 => {
                let (j, l) = two(&mut rng);
                let s = rng.below(2) as usize;
                let t = rng.below(2) as usize;
                Move::SwapFacts(j, s, l, t)
            }
            1 => Move::Flip(rng.below(k as u64) as usize),
            _ => {
                let (j, l) = two(&mut rng);
                Move::SwapSlots(j, l)
            }
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
            consider(Move::Flip(j), &mut pos);
        }
        match best_move {
            Some((mv, _)) => {
                mv.apply(&mut pos);
                stats.greedy_moves += 1;
            }
            None => break,
        }
    }
    let objective = prob.objective(&pos);
    Ok(Assignment {
        positions: pos,
        objective,
        initial,
        annealing: stats,
    })
}

/// Objective of an arbitrary layout (for reports and checks), same definitions as [`assign`].
/// Panics if indices are out of range.
pub fn evaluate(
    facts: &[FactAttrs],
    entail: &[Vec<f64>],
    codeword: &[u8],
    slots: &[Slot],
    positions: &[AssignedPosition],
) -> Objective {
    let (mut a, mut p, mut h) = (0.0, 0.0, 0.0);
    for (j, x) in positions.iter().enumerate() {
        let c = usize::from(codeword[j]);
        let (sel, uns) = (x.facts[c], x.facts[1 - c]);
        a += implication_risk(entail[sel][uns]);
        p += pair_cost(&facts[x.facts[0]], &facts[x.facts[1]]);
        h += slot_cost(slots[x.slot].section, &facts[sel]);
    }
    Objective {
        total: LAMBDA_A * a + LAMBDA_P * p + LAMBDA_H * h,
        a,
        p,
        h,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::facts::CATEGORIES;
    use crate::build::slots::default_slots;

    struct Instance {
        facts: Vec<FactAttrs>,
        entail: Vec<Vec<f64>>,
        codeword: Vec<u8>,
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
        let codeword = (0..k).map(|_| rng.below(2) as u8).collect();
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
            codeword,
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

    /// Minimum of the objective over all pairings × pair-to-position maps × orientations ×
    /// slot permutations, computed from the public definitions only.
    fn brute_force(inst: &Instance) -> f64 {
        let k = inst.codeword.len();
        let n = 2 * k;
        // table[a][b][j][s]: objective of position j holding (a, b) in slot s, via `evaluate`
        // on a one-position layout (positions are independent terms of the objective).
        let mut table = vec![vec![vec![vec![0.0; k]; k]; n]; n];
        for (a, row) in table.iter_mut().enumerate() {
            for (b, per_pos) in row.iter_mut().enumerate() {
                if a == b {
                    continue;
                }
                for (j, per_slot) in per_pos.iter_mut().enumerate() {
                    for (s, v) in per_slot.iter_mut().enumerate() {
                        let pos = [AssignedPosition {
                            facts: [a, b],
                            slot: s,
                        }];
                        let bit = [inst.codeword[j]];
                        *v = evaluate(&inst.facts, &inst.entail, &bit, &inst.slots, &pos).total;
                    }
                }
            }
        }
        let perms = permutations(k);
        let mut best = f64::INFINITY;
        for m in matchings(&(0..n).collect::<Vec<_>>()) {
            for order in &perms {
                for orient in 0..(1u32 << k) {
                    for slot_perm in &perms {
                        let total: f64 = (0..k)
                            .map(|j| {
                                let (a, b) = m[order[j]];
                                let (x, y) = if orient >> j & 1 == 1 { (b, a) } else { (a, b) };
                                table[x][y][j][slot_perm[j]]
                            })
                            .sum();
                        best = best.min(total);
                    }
                }
            }
        }
        best
    }

    fn run(inst: &Instance, seed: u64) -> Assignment {
        let params = AssignParams {
            seed,
            ..AssignParams::default()
        };
        assign(
            &inst.facts,
            &inst.entail,
            &inst.codeword,
            &inst.slots,
            &params,
        )
        .unwrap()
    }

    fn check_valid(inst: &Instance, a: &Assignment) {
        let k = inst.codeword.len();
        assert_eq!(a.positions.len(), k);
        let mut facts: Vec<usize> = a.positions.iter().flat_map(|p| p.facts).collect();
        facts.sort_unstable();
        assert_eq!(facts, (0..2 * k).collect::<Vec<_>>());
        let mut slots: Vec<usize> = a.positions.iter().map(|p| p.slot).collect();
        slots.sort_unstable();
        assert_eq!(slots, (0..k).collect::<Vec<_>>());
        let o = evaluate(
            &inst.facts,
            &inst.entail,
            &inst.codeword,
            &inst.slots,
            &a.positions,
        );
        assert!((o.total - a.objective.total).abs() < 1e-9);
        assert!(a.objective.total <= a.initial.total + 1e-12);
    }

    #[test]
    fn reaches_brute_force_optimum_on_small_instances() {
        for k in [2, 3, 4] {
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
        }
    }

    #[test]
    fn one_way_entailment_is_oriented_away() {
        // Facts 0 and 1 are the cheapest pair; fact 0 entails fact 1 but not conversely, so
        // the selected side must be fact 1 whatever the bit.
        let mut facts = vec![
            plain("x0", "method"),
            plain("x1", "method"),
            plain("y0", "result"),
            plain("y1", "result"),
        ];
        facts[2].r = 0.9;
        facts[3].r = 0.9;
        let mut entail = vec![vec![0.0; 4]; 4];
        entail[0][1] = 0.99;
        let slots = default_slots(2);
        for codeword in [vec![0u8, 1], vec![1, 0], vec![1, 1], vec![0, 0]] {
            let a = assign(&facts, &entail, &codeword, &slots, &AssignParams::default()).unwrap();
            assert_eq!(a.objective.a, 0.0);
            let (j, p) = a
                .positions
                .iter()
                .enumerate()
                .find(|(_, p)| p.facts.contains(&0))
                .unwrap();
            if p.facts.contains(&1) {
                assert_eq!(p.facts[usize::from(codeword[j])], 1);
            }
        }
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
        let a = assign(
            &facts,
            &entail,
            &[0, 1],
            &default_slots(2),
            &AssignParams::default(),
        )
        .unwrap();
        assert!(a.initial.a > 0.9, "matching alone pairs the twins");
        assert_eq!(a.objective.a, 0.0);
        assert!(a
            .positions
            .iter()
            .all(|p| !(p.facts.contains(&0) && p.facts.contains(&1))));
        assert!(a.objective.total < a.initial.total);
    }

    #[test]
    fn k12_default_layout_runs_quickly() {
        let inst = random_instance(12, 4242);
        let inst = Instance {
            slots: default_slots(12),
            ..inst
        };
        let a = run(&inst, 0);
        check_valid(&inst, &a);
    }

    #[test]
    fn rejects_malformed_input() {
        let inst = random_instance(2, 1);
        let p = AssignParams::default();
        assert!(assign(
            &inst.facts[..3],
            &inst.entail,
            &inst.codeword,
            &inst.slots,
            &p
        )
        .is_err());
        assert!(assign(&inst.facts, &inst.entail, &[0, 2], &inst.slots, &p).is_err());
        assert!(assign(
            &inst.facts,
            &inst.entail,
            &inst.codeword,
            &inst.slots[..1],
            &p
        )
        .is_err());
        assert!(assign(
            &inst.facts,
            &inst.entail[..3],
            &inst.codeword,
            &inst.slots,
            &p
        )
        .is_err());
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
