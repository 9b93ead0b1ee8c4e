#!/usr/bin/env python3
"""Replay window-pruning strategies offline against exhaustive decisions.

`semtrace bench --agreement --cache DIR` stores, beside each exhaustive report, every
(window, fact) probability of that run (`*.probs.json`). A pruning strategy only chooses which
pairs the fast decoder scores, and a decision is a function of the per-fact maxima over the
scored pairs, so any strategy can be evaluated here without running the model: this script
reports, per strategy, the pairs it would score and its agreement with the exhaustive decoder.

Usage: scripts/replay_fast.py CACHE_DIR [--bundles-json AGREEMENT_JSON]
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


def load(cache):
    runs = []
    for pf in sorted(glob.glob(os.path.join(cache, "*.probs.json"))):
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


def every_shared_term(run):
    """Every window that shares a content term with the fact: the ceiling of lexical pruning."""
    idx = Bm25(run["wins"])
    return {(f, w) for f, fact in enumerate(run["facts"]) for w in idx.ranked(fact)}


def main():
    cache = sys.argv[1]
    runs = load(cache)
    print(f"{len(runs)} exhaustive runs, {sum(len(r['wins']) * len(r['facts']) for r in runs)} pairs")
    strategies = {f"bm25 {t}+{e}": bm25_rounds(t, e) for t, e in [(1, 1), (2, 2), (3, 3), (5, 5), (8, 8)]}
    strategies["bm25 3+3, extend from 0.2"] = bm25_rounds(3, 3, lambda s0, s1: max(s0, s1) >= 0.2)
    strategies["every shared term"] = every_shared_term
    for name, ch in strategies.items():
        same = tot = pairs = vsame = 0
        for r in runs:
            dec, n = simulate(r, ch)
            same += sum(a == b for a, b in zip(dec, r["exh"]))
            vsame += verdict(dec, r["codeword"]) == verdict(r["exh"], r["codeword"])
            tot += len(dec)
            pairs += n
        print(f"{name:<26} pairs {pairs:>7}  positions {same}/{tot} ({100 * same / max(1, tot):.2f}%)  verdicts {vsame}/{len(runs)}")


if __name__ == "__main__":
    main()
