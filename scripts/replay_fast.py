#!/usr/bin/env python3
"""Replay window-pruning strategies offline against exhaustive decisions.

`semtrace bench --agreement --cache DIR` stores, beside each exhaustive report, every
(window, fact) probability of that run (`*.probs.json`). A pruning strategy only chooses which
pairs the fast decoder scores, and a decision is a function of the per-fact maxima over the
scored pairs, so any strategy can be evaluated here without running the model: this script
reports, per strategy, the pairs it would score and its agreement with the exhaustive decoder.

Usage: scripts/replay_fast.py CACHE_DIR [--explain] [--jobs AGREEMENT_JSON] [--only LIST | --except LIST]

--jobs AGREEMENT_JSON: only the runs of that `semtrace bench --agreement --json` output (its rows'
`cached_probs`), so that the replay covers exactly the runs the Rust decoder was measured on.

--only / --except LIST: replay only the runs named (or all but those named) in LIST, one
`*.probs.json` file name per line: e.g. the runs a budget was chosen on, to report it on the others.

--explain also splits the fast decoder's (BM25 3 + 3) disagreements into those no lexical ranking can
fix (the exhaustive maximum that decides the position lies in a window sharing no content term with the
fact) and those a larger budget would fix, and lists the windows behind the first kind.
"""
import glob
import json
import math
import os
import sys

TAU_BOTH, TAU_MIN, MARGIN = 0.90, 0.52, 0.20

STOP = set("""the and for are but not with that this these those from into than then they their them its was
were been being has have had can could would should will may might also such which while where when what who how
why all any each both more most other some only over under between about through using used use paper authors
author work method approach proposed propose show shows shown results result""".split())


def terms(text):
    out, cur = [], []
    for ch in text + " ":
        if ch.isalnum():
            cur.append(ch)
        elif cur:
            out.append("".join(cur))
            cur = []
    res = []
    for w in (w.lower() for w in out):
        if (len(w) >= 3 or any(c in "0123456789" for c in w)) and w not in STOP:
            if len(w.encode()) > 3 and w.endswith("s") and not w.endswith("ss"):
                w = w[:-1]
            res.append(w)
    return res


class Bm25:
    def __init__(self, docs):
        self.tf, self.lens, self.df = [], [], {}
        for d in docs:
            t = terms(d)
            self.lens.append(len(t))
            m = {}
            for w in t:
                m[w] = m.get(w, 0) + 1
            for w in m:
                self.df[w] = self.df.get(w, 0) + 1
            self.tf.append(m)
        self.avg = max(1.0, sum(self.lens) / max(1, len(self.lens)))

    def scores(self, q):
        k1, b, n = 1.2, 0.75, len(self.tf)
        qs = sorted(set(terms(q)))
        out = []
        for m, ln in zip(self.tf, self.lens):
            s = 0.0
            for w in qs:
                f = m.get(w)
                if f:
                    df = self.df.get(w, 0)
                    idf = math.log((n - df + 0.5) / (df + 0.5) + 1.0)
                    s += idf * f * (k1 + 1) / (f + k1 * (1 - b + b * ln / self.avg))
            out.append(s)
        return out

    def ranked(self, q):
        s = self.scores(q)
        return sorted([i for i in range(len(s)) if s[i] > 0], key=lambda i: (-s[i], i))


def decide(s0, s1):
    if s0 >= TAU_BOTH and s1 >= TAU_BOTH:
        return "?both"
    if max(s0, s1) < TAU_MIN:
        return "?absent"
    if abs(s1 - s0) <= MARGIN:
        return "?ambiguous"
    return str(int(s1 > s0))


def load(cache, keep=lambda name: True):
    runs = []
    for pf in sorted(glob.glob(os.path.join(cache, "*.probs.json"))):
        if not keep(os.path.basename(pf)):
            continue
        d = json.load(open(pf))
        rep = json.load(open(pf.replace(".probs.json", ".json")))
        wins, facts = d["windows"], d["facts"]
        wi = {w: i for i, w in enumerate(wins)}
        fi = {f: i for i, f in enumerate(facts)}
        P = [[0.0] * len(wins) for _ in facts]
        for prem, hyp, p in d["pairs"]:
            P[fi[hyp]][wi[prem]] = p
        exh = [decide(max(P[2 * j], default=0.0), max(P[2 * j + 1], default=0.0))
               for j in range(len(facts) // 2)]
        # The replayed exhaustive decisions must be the report's own.
        assert exh == [p["decision"] if p["erasure"] is None else "?" + p["erasure"]
                       for p in rep["positions"]], pf
        runs.append(dict(name=os.path.basename(pf), wins=wins, facts=facts, P=P, exh=exh,
                         codeword=[p["assigned"] for p in rep["positions"]]))
    return runs


def verdict(dec, codeword, o_min=8, alpha=0.01):
    obs = [(d, c) for d, c in zip(dec, codeword) if not d.startswith("?")]
    o, m = len(obs), sum(int(d) == c for d, c in obs)
    if o < o_min:
        return "ineligible"
    p = sum(math.comb(o, k) for k in range(m, o + 1)) / 2 ** o
    return "exposed" if p <= alpha else "not_exposed"


def simulate(run, choose):
    """choose(run) -> set of (fact, window) pairs to score; returns (decisions, pairs scored)."""
    scored = choose(run)
    best = [0.0] * len(run["facts"])
    for f, w in scored:
        best[f] = max(best[f], run["P"][f][w])
    dec = [decide(best[2 * j], best[2 * j + 1]) for j in range(len(run["facts"]) // 2)]
    return dec, len(scored)


def bm25_rounds(top, extend, extend_if=lambda s0, s1: decide(s0, s1) != "?absent"):
    """The fast decoder: the `top` best windows per fact by BM25, then `extend` more for both facts
    of every position whose first-round maxima satisfy `extend_if` (by default, as in Rust: the
    position is not found absent)."""
    def choose(run):
        idx = Bm25(run["wins"])
        ranked = [idx.ranked(f) for f in run["facts"]]
        first = {(f, w) for f, r in enumerate(ranked) for w in r[:top]}
        best = [0.0] * len(run["facts"])
        for f, w in first:
            best[f] = max(best[f], run["P"][f][w])
        second = set()
        for j in range(len(run["facts"]) // 2):
            if extend_if(best[2 * j], best[2 * j + 1]):
                for f in (2 * j, 2 * j + 1):
                    second |= {(f, w) for w in ranked[f][top:top + extend]}
        return first | second
    return choose


def with_hub_probes(top, extend, probes, threshold):
    """The fast decoder with hub probes, as `Decoding::fast` runs it. Round 1: the `top` BM25 windows
    per fact, and each window against `probes` facts it shares no content term with (consecutive
    ones among those, starting at the window's index modulo their count). Round 2: `extend` more
    BM25 windows for both facts of every position round 1 did not find absent, and every fact
    against each window whose probe reached `threshold` (a window the model reads as entailing an
    unrelated fact may entail any). Pairs already scored are not scored again."""
    def choose(run):
        F, nw = len(run["facts"]), len(run["wins"])
        idx = Bm25(run["wins"])
        ranked = [idx.ranked(f) for f in run["facts"]]
        related = [set(r) for r in ranked]
        first = {(f, w) for f, r in enumerate(ranked) for w in r[:top]}
        probe_of = {}
        for w in range(nw):
            cands = [f for f in range(F) if w not in related[f]]
            for i in range(min(probes, len(cands))):
                f = cands[(w + i) % len(cands)]
                first.add((f, w))
                probe_of.setdefault(w, []).append(f)
        best = [0.0] * F
        for f, w in first:
            best[f] = max(best[f], run["P"][f][w])
        second = set()
        for j in range(F // 2):
            if decide(best[2 * j], best[2 * j + 1]) != "?absent":
                for f in (2 * j, 2 * j + 1):
                    second |= {(f, w) for w in ranked[f][top:top + extend]}
        for w, fs in probe_of.items():
            if max(run["P"][f][w] for f in fs) >= threshold:
                second |= {(f, w) for f in range(F)}
        return first | second
    return choose


def with_escalation(top, extend, probes, threshold, escalate_from, verdict_margin, o_min=8):
    """The fast decoder's rounds 1-4 as `Decoding::fast` ran them until 2026-11-29: rounds 1 and 2
    of `with_hub_probes`; round 3, both facts of every position whose best score so far reaches
    `escalate_from` against every window sharing a content term with them; round 4, every pair
    once the positions observed come within `verdict_margin` (None: never) of `o_min`. Since then
    rounds 4-5 score only the pairs that can change a decision (crates/core/src/detect.rs,
    `settle`): the decisions are the same, the pair counts here overstate reviews where round 4
    fires; `semtrace bench --validity --cache` replays the current decoder itself."""
    rounds12 = with_hub_probes(top, extend, probes, threshold)

    def choose(run):
        F, nw = len(run["facts"]), len(run["wins"])
        scored = rounds12(run)
        best = [0.0] * F
        for f, w in scored:
            best[f] = max(best[f], run["P"][f][w])
        idx = Bm25(run["wins"])
        for j in range(F // 2):
            if max(best[2 * j], best[2 * j + 1]) >= escalate_from:
                for f in (2 * j, 2 * j + 1):
                    scored |= {(f, w) for w in idx.ranked(run["facts"][f])}
        if verdict_margin is not None:
            dec, _ = simulate(run, lambda r: scored)
            if sum(not d.startswith("?") for d in dec) + verdict_margin >= o_min:
                scored = {(f, w) for f in range(F) for w in range(nw)}
        return scored
    return choose


def every_shared_term(run):
    """Every window that shares a content term with the fact: the ceiling of lexical pruning."""
    idx = Bm25(run["wins"])
    return {(f, w) for f, fact in enumerate(run["facts"]) for w in idx.ranked(fact)}


def explain(runs):
    """Where the fast decoder's disagreements come from (see the module docstring)."""
    fast, ceiling = bm25_rounds(3, 3), every_shared_term
    unreachable = budget = 0
    lone = {}  # window -> pairs with p >= TAU_MIN whose fact shares no content term with it
    hi = lone_hi = total = 0
    for r in runs:
        dec, _ = simulate(r, fast)
        top, _ = simulate(r, ceiling)
        for d, t, e in zip(dec, top, r["exh"]):
            if d != e:
                if t != e:
                    unreachable += 1
                else:
                    budget += 1
        idx = Bm25(r["wins"])
        for f, fact in enumerate(r["facts"]):
            related = set(idx.ranked(fact))
            for w, p in enumerate(r["P"][f]):
                total += 1
                if p >= TAU_MIN:
                    hi += 1
                    if w not in related:
                        lone_hi += 1
                        lone[r["wins"][w]] = lone.get(r["wins"][w], 0) + 1
    print(f"disagreements of bm25 3+3: {unreachable + budget}; {unreachable} decided by a window sharing no "
          f"content term with the fact (no lexical ranking reaches it), {budget} by a window ranked past the budget")
    print(f"pairs with p >= {TAU_MIN}: {hi} of {total}; {lone_hi} of them share no content term, "
          f"from {len(lone)} distinct windows; the most frequent:")
    for w, c in sorted(lone.items(), key=lambda kv: -kv[1])[:8]:
        print(f"  {c:>3}  {w[:110]!r}")


def main():
    cache, args = sys.argv[1], sys.argv[2:]
    keep = lambda name: True
    if "--jobs" in args:
        rows = json.load(open(args[args.index("--jobs") + 1]))["rows"]
        jobs = {r["cached_probs"] for r in rows}
        keep = lambda name, jobs=jobs: name in jobs
    for flag, wanted in (("--only", True), ("--except", False)):
        if flag in args:
            listed = set(open(args[args.index(flag) + 1]).read().split())
            keep = lambda name, listed=listed, wanted=wanted, prev=keep: prev(name) and (name in listed) == wanted
    runs = load(cache, keep)
    print(f"{len(runs)} exhaustive runs, {sum(len(r['wins']) * len(r['facts']) for r in runs)} pairs")
    strategies = {f"bm25 {t}+{e}": bm25_rounds(t, e) for t, e in [(1, 1), (2, 2), (3, 3), (5, 5), (8, 8)]}
    strategies["bm25 3+3, extend from 0.2"] = bm25_rounds(3, 3, lambda s0, s1: max(s0, s1) >= 0.2)
    strategies["every shared term"] = every_shared_term
    # (3, 1, 1, 0.005) is FastOptions::lean(), the default before rounds 3 and 4.
    for t, e, k, thr in [(2, 1, 1, 0.005), (3, 1, 1, 0.005), (3, 3, 1, 0.02), (3, 1, 1, 0.003), (3, 3, 2, 0.005)]:
        strategies[f"bm25 {t}+{e}, {k} probe >= {thr}"] = with_hub_probes(t, e, k, thr)
    # (3, 1, 1, 0.003, 0.02, 3) was the Rust default until 2026-11-27; FastOptions::default() is now top 4,
    # hub 0.002, escalate 0.005, margin 3 (docs/performance/2026-11-29-fast-decoder-budget-stage3c.md).
    for thr, esc, margin in [(0.005, 0.1, None), (0.005, 0.02, None), (0.003, 0.02, None),
                             (0.003, 0.02, 3), (0.003, 0.01, 3), (0.002, 0.02, 3)]:
        strategies[f"3+1 >= {thr}, escalate >= {esc}, margin {margin}"] = \
            with_escalation(3, 1, 1, thr, esc, margin)
    for name, ch in strategies.items():
        same = tot = pairs = vsame = 0
        for r in runs:
            dec, n = simulate(r, ch)
            same += sum(a == b for a, b in zip(dec, r["exh"]))
            vsame += verdict(dec, r["codeword"]) == verdict(r["exh"], r["codeword"])
            tot += len(dec)
            pairs += n
        print(f"{name:<44} pairs {pairs:>7}  positions {same}/{tot} ({100 * same / max(1, tot):.2f}%)  verdicts {vsame}/{len(runs)}")
    if "--explain" in args:
        explain(runs)


if __name__ == "__main__":
    main()
