#!/usr/bin/env python3
"""Window length vs the detector's 2-sentence windows on ../shared/corpus/llm-reviews (measurement only).

LLM-written reviews have long sentences, and the model's P(entailment) falls on long premises (a fact
stated verbatim in the first of two 60-word sentences: 0.98 alone, 0.29 in the window). This replays
the paper's decision rule on window policies built from the cached 2-sentence-window scores plus every
sentence scored alone (onnxruntime, the shipped graph; ~15 min for the 42 reviews on 2 cores):

    semtrace bench --validity --json --reviews ../shared/corpus/llm-reviews/manifest.jsonl \
        --cache target/bench/validity --safeguard none --secrets 0 > BENCH.json
    training/.venv/bin/python scripts/window_policy.py BENCH.json [--singles target/bench/singles.json]

Policies: `pairs` (the paper), `union` (pairs and every sentence alone), `cap L` (the window at each
sentence is the sentence with its successor if the two have at most L words, else the sentence alone:
as many windows as the paper's), `addlong L` (pairs plus every sentence of at least L words alone).
Prints per policy and kind what `bench --validity` prints, and with --diff L the positions `cap L`
changes. Never train on these reviews."""
import argparse
import json
import math
import os

LLM = "../shared/corpus/llm-reviews"
MODEL = "models/semtrace-nli-minilm"


def sentences_of(windows):
    """The sentences of stride-1 two-sentence windows: window i is sentence i, a space, sentence i+1."""
    if len(windows) == 1:
        return [windows[0]]
    shared = []
    for a, b in zip(windows, windows[1:]):
        k = next(k for k in range(len(b), 0, -1)
                 if a.endswith(b[:k]) and (k == len(b) or b[k] == " ") and (len(a) == k or a[-k - 1] == " "))
        shared.append(b[:k])
    out = [windows[0][: len(windows[0]) - len(shared[0]) - 1], *shared, windows[-1][len(shared[-1]) + 1:]]
    assert all(out[i] + " " + out[i + 1] == windows[i] for i in range(len(windows)))
    return out


def score_singles(rows, path):
    import numpy as np
    import onnxruntime as ort
    from tokenizers import Tokenizer
    tok = Tokenizer.from_file(os.path.join(MODEL, "tokenizer.json"))
    tok.enable_truncation(256)
    so = ort.SessionOptions()
    so.intra_op_num_threads = 2
    sess = ort.InferenceSession(os.path.join(MODEL, "model.onnx"), so)

    def p_ent(premise, hyp):
        e = tok.encode(premise, hyp)
        feed = {"input_ids": np.array([e.ids]), "attention_mask": np.array([e.attention_mask]),
                "token_type_ids": np.array([e.type_ids])}
        logits = sess.run(None, feed)[0][0]
        x = np.exp(logits - logits.max())
        return float(x[0] / x.sum())

    out = {}
    for r in rows:
        facts = facts_of(r)
        out[r["review"]] = [[p_ent(s, f) for f in facts] for s in sentences_of(r["windows"])]
        print(r["review"], flush=True)
    json.dump(out, open(path, "w"))
    return out


def bundle_of(r):
    man = {json.loads(l)["review"]: json.loads(l) for l in open(os.path.join(LLM, "manifest.jsonl"))}
    return json.load(open(os.path.join(LLM, man[r["review"]]["bundle"])))


def facts_of(r):
    return [f["text"] for p in bundle_of(r)["positions"] for f in p["facts"]]


def classify(s0, s1, dp):
    if s0 >= dp["tau_both"] and s1 >= dp["tau_both"]:
        return "both"
    if max(s0, s1) < dp["tau_min"]:
        return "absent"
    if abs(s1 - s0) <= dp["margin"]:
        return "ambiguous"
    return int(s1 > s0)


def policy(name, L, sents, single, pair):
    n = len(sents)
    words = [len(s.split()) for s in sents]
    if name == "pairs" or n == 1:
        ws = pair
    elif name == "union":
        ws = pair + single
    elif name == "cap":
        ws = [pair[i] if words[i] + words[i + 1] <= L else single[i] for i in range(n - 1)]
        if words[n - 2] + words[n - 1] > L:
            ws.append(single[n - 1])
    else:  # addlong
        ws = pair + [single[i] for i in range(n) if words[i] >= L]
    return [max(w[f] for w in ws) for f in range(len(pair[0]))], len(ws)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bench")
    ap.add_argument("--cache", default="target/bench/validity")
    ap.add_argument("--singles", default="target/bench/singles.json")
    ap.add_argument("--diff", type=int)
    a = ap.parse_args()
    rows = [r for r in json.load(open(a.bench))["rows"] if r["safeguard"] == "none"]
    singles = json.load(open(a.singles)) if os.path.exists(a.singles) else score_singles(rows, a.singles)
    data = []
    for r in rows:
        b = bundle_of(r)
        m = json.load(open(os.path.join(a.cache, r["matrix"])))
        W, F = len(r["windows"]), 2 * len(b["positions"])
        pair = [[m[f * W + w] for f in range(F)] for w in range(W)]  # the cache is fact-major
        data.append((r, b, pair, sentences_of(r["windows"]), singles[r["review"]]))
    configs = [("pairs", 0), ("union", 0)] + [("cap", L) for L in (40, 50, 60, 70, 80)] + \
        [("addlong", L) for L in (25, 30, 40)]
    for name, L in configs:
        tot = {}
        for r, b, pair, sents, single in data:
            dp = b["decoding"]
            sc, nw = policy(name, L, sents, single, pair)
            cl = [classify(sc[2 * i], sc[2 * i + 1], dp) for i in range(len(b["positions"]))]
            O = sum(isinstance(c, int) for c in cl)
            M = sum(isinstance(c, int) and c == b["codeword"][i] for i, c in enumerate(cl))
            p = sum(math.comb(O, k) for k in range(M, O + 1)) / 2 ** O
            t = tot.setdefault(r["kind"], {"n": 0, "exp": 0, "O": 0, "both": 0, "absent": 0, "ambiguous": 0,
                                           "wrong": 0, "windows": 0, "pos": 0})
            t["n"] += 1
            t["exp"] += O >= dp["o_min"] and p <= dp["alpha"]
            t["O"] += O
            t["wrong"] += O - M
            t["windows"] += nw
            t["pos"] += len(cl)
            for k in ("both", "absent", "ambiguous"):
                t[k] += cl.count(k)
        for k, t in sorted(tot.items()):
            sh = {x: 100 * t[x] / t["pos"] for x in ("both", "absent", "ambiguous")}
            print(f"{name:8} {L or '':>3} {k:19} exposed {t['exp']:2}/{t['n']}  mean obs {t['O'] / t['n']:5.2f}  "
                  f"both {sh['both']:4.1f}%  absent {sh['absent']:4.1f}%  ambig. {sh['ambiguous']:4.1f}%  "
                  f"wrong bits {t['wrong']:2}  windows/review {t['windows'] / t['n']:5.1f}")
    if a.diff:
        for r, b, pair, sents, single in data:
            x, _ = policy("pairs", 0, sents, single, pair)
            y, _ = policy("cap", a.diff, sents, single, pair)
            for i in range(len(b["positions"])):
                cx = classify(x[2 * i], x[2 * i + 1], b["decoding"])
                cy = classify(y[2 * i], y[2 * i + 1], b["decoding"])
                if cx != cy:
                    print(f"{os.path.basename(r['review'])[:3]} {r['kind'][:8]} pos {i:2} codeword bit "
                          f"{b['codeword'][i]}: {cx} -> {cy}  ({x[2*i]:.2f}, {x[2*i+1]:.2f}) -> "
                          f"({y[2*i]:.2f}, {y[2*i+1]:.2f})")


if __name__ == "__main__":
    main()
