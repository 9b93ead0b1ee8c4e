"""Fit the natural-mention model (issue 23, item 4) on training/data/priors/labels.jsonl and write
the coefficients the builder embeds (crates/build/src/mention_model.json) plus a calibration
report on the held-out papers (training/data/priors/calibration.md).

Model: P(review mentions fact) = sigmoid(b + w . z), z the standardised features; every
(fact, review) is one Bernoulli observation; L2 strength chosen by 5-fold cross-validation over
*train* papers (grouped by paper). Co-mention: P(both f and g) = min(r_f, r_g, r_f r_g exp(gamma J_lex)),
gamma by maximum likelihood on the train papers' fact pairs. Held-out papers are used once, for
the report. Deterministic.

usage: training/.venv/bin/python training/fit_priors.py
"""

import json
import math
import os
import re
import sys
from datetime import date

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LABELS = os.path.join(ROOT, "training", "data", "priors", "labels.jsonl")
MODEL = os.path.join(ROOT, "crates", "build", "src", "mention_model.json")
REPORT = os.path.join(ROOT, "training", "data", "priors", "calibration.md")
TAU = 0.52
STOP = set("a an and are as at be been but by for from has have in into is it its of on or that the "
           "their these this to was were which with".split())


def tokens(text):
    # Same as the core's lexical::tokens: split on non-alphanumerics, lowercase, drop stop words.
    return {t.lower() for t in re.split(r"[^\w]|_", text) if t and t.lower() not in STOP}


def jaccard(a, b):
    ta, tb = tokens(a), tokens(b)
    if not ta or not tb:
        return 0.0
    return len(ta & tb) / len(ta | tb)


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def fit(X, h, n, lam):
    """Newton's method on the binomial log-likelihood with L2 (not on the bias)."""
    d = X.shape[1]
    w = np.zeros(d + 1)
    A = np.hstack([X, np.ones((X.shape[0], 1))])
    reg = np.full(d + 1, lam)
    reg[-1] = 0.0
    for _ in range(50):
        p = sigmoid(A @ w)
        g = A.T @ (n * p - h) + reg * w
        H = (A * (n * p * (1 - p))[:, None]).T @ A + np.diag(reg) + 1e-9 * np.eye(d + 1)
        step = np.linalg.solve(H, g)
        w -= step
        if np.max(np.abs(step)) < 1e-10:
            break
    return w[:-1], w[-1]


def nll(p, h, n):
    p = np.clip(p, 1e-9, 1 - 1e-9)
    return float(-(h * np.log(p) + (n - h) * np.log(1 - p)).sum() / n.sum())


def brier(p, h, n):
    # Mean over (fact, review) observations of (p - y)^2.
    return float(((n - h) * p**2 + h * (1 - p) ** 2).sum() / n.sum())


def auc(p, h, n):
    # Over (fact, review) observations: positives h per fact, negatives n - h, all at score p.
    order = np.argsort(p)
    p, h, n = p[order], h[order], n[order]
    neg = n - h
    # Rank-sum with ties handled by grouping equal scores.
    total_pos, total_neg = h.sum(), neg.sum()
    if total_pos == 0 or total_neg == 0:
        return float("nan")
    s, cum_neg, i = 0.0, 0.0, 0
    while i < len(p):
        j = i
        while j < len(p) and p[j] == p[i]:
            j += 1
        hp, hn = h[i:j].sum(), neg[i:j].sum()
        s += hp * (cum_neg + 0.5 * hn)
        cum_neg += hn
        i = j
    return float(s / (total_pos * total_neg))


def main():
    rows = [json.loads(l) for l in open(LABELS)]
    names = list(rows[0]["features"].keys())
    X = np.array([[r["features"][k] for k in names] for r in rows], dtype=float)
    q = [np.array(r["q"]) for r in rows]
    h = np.array([float((x >= TAU).sum()) for x in q])
    n = np.array([float(len(x)) for x in q])
    papers = [r["paper"] for r in rows]
    tr = np.array([r["split"] == "train" for r in rows])
    te = ~tr

    mean = X[tr].mean(0)
    scale = X[tr].std(0)
    scale[scale < 1e-9] = 1.0
    Z = (X - mean) / scale

    # L2 by grouped 5-fold CV over train papers.
    train_papers = sorted({p for p, t in zip(papers, tr) if t})
    fold = {p: i % 5 for i, p in enumerate(train_papers)}
    best = None
    cv = {}
    for lam in [1.0, 10.0, 30.0, 100.0, 300.0, 1000.0]:
        loss, cnt = 0.0, 0.0
        for k in range(5):
            fit_m = np.array([t and fold[p] != k for p, t in zip(papers, tr)])
            val_m = np.array([t and fold[p] == k for p, t in zip(papers, tr)])
            w, b = fit(Z[fit_m], h[fit_m], n[fit_m], lam)
            pv = sigmoid(Z[val_m] @ w + b)
            loss += nll(pv, h[val_m], n[val_m]) * n[val_m].sum()
            cnt += n[val_m].sum()
        cv[lam] = loss / cnt
        if best is None or cv[lam] < cv[best]:
            best = lam
    w, b = fit(Z[tr], h[tr], n[tr], best)
    p_all = sigmoid(Z @ w + b)

    # gamma: co-mention of fact pairs within a paper, on train papers.
    by_paper = {}
    for i, r in enumerate(rows):
        if tr[i]:
            by_paper.setdefault(r["paper"], []).append(i)
    obs = []  # (rf, rg, J, both, n)
    for idx in by_paper.values():
        for a in range(len(idx)):
            for c in range(a + 1, len(idx)):
                i, j = idx[a], idx[c]
                both = float(((q[i] >= TAU) & (q[j] >= TAU)).sum())
                obs.append((p_all[i], p_all[j], jaccard(rows[i]["text"], rows[j]["text"]), both, n[i]))
    O = np.array(obs)
    gammas = np.arange(0.0, 20.01, 0.25)
    ll = []
    for g in gammas:
        pb = np.minimum(np.minimum(O[:, 0], O[:, 1]), O[:, 0] * O[:, 1] * np.exp(g * O[:, 2]))
        pb = np.clip(pb, 1e-9, 1 - 1e-9)
        ll.append(float((O[:, 3] * np.log(pb) + (O[:, 4] - O[:, 3]) * np.log(1 - pb)).sum()))
    gamma = float(gammas[int(np.argmax(ll))])

    # Held-out report.
    base = h[tr].sum() / n[tr].sum()
    pt, ht, nt = p_all[te], h[te], n[te]
    const = np.full_like(pt, base)
    n_te_papers = len({p for p, t in zip(papers, te) if t})
    n_tr_papers = len(train_papers)
    lines = [
        "# Natural-mention model: held-out calibration",
        "",
        f"Made by `bash training/priors.sh` on {date.today().isoformat()}. Labels: "
        f"{len(rows)} approved facts of {n_tr_papers + n_te_papers} train-pool papers x their real "
        f"reviews ({int(n.sum())} fact-review observations; a review mentions a fact when the default "
        f"NLI model gives q >= {TAU} on one of its windows). Split by paper: {n_tr_papers} train, "
        f"{n_te_papers} held out.",
        "",
        f"L2 by grouped 5-fold CV on train papers: " + ", ".join(f"{k:g}: {v:.4f}" for k, v in cv.items())
        + f" (chosen {best:g}). Co-mention gamma = {gamma:g} (max likelihood on train pairs).",
        "",
        "| held-out | model | constant rate |",
        "|---|---|---|",
        f"| log loss | {nll(pt, ht, nt):.4f} | {nll(const, ht, nt):.4f} |",
        f"| Brier | {brier(pt, ht, nt):.4f} | {brier(const, ht, nt):.4f} |",
        f"| ROC-AUC | {auc(pt, ht, nt):.3f} | 0.500 |",
        f"| mean predicted / observed rate | {float((pt * nt).sum() / nt.sum()):.4f} / "
        f"{float(ht.sum() / nt.sum()):.4f} | {base:.4f} |",
        "",
        "Reliability on held-out facts (deciles of predicted r_f):",
        "",
        "| bin | facts | mean predicted | observed rate |",
        "|---|---|---|---|",
    ]
    edges = np.quantile(pt, np.linspace(0, 1, 11))
    for k in range(10):
        m = (pt >= edges[k]) & ((pt <= edges[k + 1]) if k == 9 else (pt < edges[k + 1]))
        if m.sum() == 0:
            continue
        lines.append(f"| {k + 1} | {int(m.sum())} | {float((pt[m] * nt[m]).sum() / nt[m].sum()):.3f} | "
                     f"{float(ht[m].sum() / nt[m].sum()):.3f} |")
    lines += ["", "Coefficients (standardised features):", "", "| feature | weight |", "|---|---|"]
    for k, v in sorted(zip(names, w), key=lambda t: -abs(t[1])):
        lines.append(f"| {k} | {v:+.3f} |")
    lines.append(f"| (bias) | {b:+.3f} |")
    os.makedirs(os.path.dirname(REPORT), exist_ok=True)
    open(REPORT, "w").write("\n".join(lines) + "\n")

    model = {
        "version": "mention-v1",
        "features": names,
        "mean": [float(x) for x in mean],
        "scale": [float(x) for x in scale],
        "weights": [float(x) for x in w],
        "bias": float(b),
        "gamma": gamma,
        "tau_mention": TAU,
        "provenance": (f"fitted on real reviews of {n_tr_papers} train-pool papers "
                       f"({int(n[tr].sum())} fact-review observations) by training/fit_priors.py; "
                       f"held-out {n_te_papers} papers: log loss {nll(pt, ht, nt):.4f} vs "
                       f"{nll(const, ht, nt):.4f} constant, AUC {auc(pt, ht, nt):.3f}"),
    }
    with open(MODEL, "w") as f:
        json.dump(model, f, indent=1)
        f.write("\n")
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
