"""Fit the fact-quality model (issue 23, item 3): P(an approved offline fact passes the rubric of
training/data/fact-judgments/RUBRIC.md), which offline builds use as the naturalness n_f.

Data: training/data/fact-quality/pool.jsonl (approved facts of train-pool papers with the builder's
mention features; training/quality_pool.py) and the judges' verdicts judge-*.jsonl beside it (one
judge per fact). Features: the 22 mention features, then the lexical features of
crates/pipeline/src/fact_quality.rs, computed by the builder's own code (the `quality_features`
example), so fitting and building see the same numbers. Model: L2 logistic regression on the
standardised features, strength by 5-fold cross-validation grouped by paper; the report's figures
are those out-of-fold predictions, and the shipped model is fitted on every judged paper.

Writes crates/pipeline/src/fact_quality_model.json and training/data/fact-quality/calibration.md.
usage: training/.venv/bin/python training/fit_quality.py   (needs numpy and cargo)
"""

import glob
import json
import os
import subprocess
import sys
from datetime import date

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fit_priors import auc, fit, nll, sigmoid  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "training", "data", "fact-quality")
MODEL = os.path.join(ROOT, "crates", "pipeline", "src", "fact_quality_model.json")
REPORT = os.path.join(DATA, "calibration.md")
MENTION = os.path.join(ROOT, "crates", "build", "src", "mention_model.json")
ALPHA_N = 0.5  # crates/core/src/params.rs
SHORTLIST = 36  # ceil(QUALITY_SHORTLIST * 2K), crates/core/src/params.rs, K = 12
QUESTIONS = ("self_contained", "true_to_quote", "reviewer_like", "not_boilerplate")


def lexical_names():
    src = open(os.path.join(ROOT, "crates", "pipeline", "src", "fact_quality.rs")).read()
    block = src.split("pub const LEXICAL: &[&str] = &[", 1)[1].split("];", 1)[0]
    return [s.strip().strip('",') for s in block.split("\n") if s.strip().strip('",')]


def lexical_features(rows):
    inp = "".join(json.dumps({k: r[k] for k in ("text", "quote", "source")}) + "\n" for r in rows)
    out = subprocess.run(
        ["cargo", "run", "--quiet", "--release", "-p", "semtrace-pipeline", "--example",
         "quality_features"], input=inp, capture_output=True, text=True, cwd=ROOT, check=True)
    return [json.loads(l) for l in out.stdout.splitlines()]


def main():
    pool = [json.loads(l) for l in open(os.path.join(DATA, "pool.jsonl"))]
    verdict, judges = {}, {}
    for path in sorted(glob.glob(os.path.join(DATA, "judge-*.jsonl"))):
        for l in open(path):
            j = json.loads(l)
            verdict[(j["paper"], j["fact"])] = all(j[q] is True for q in QUESTIONS) and j["flag"] == "none"
            judges[(j["paper"], j["fact"])] = os.path.basename(path)
    rows = [r for r in pool if (r["paper"], r["fact"]) in verdict and r.get("features")]
    if not rows:
        sys.exit("no judged facts with features: run training/quality_pool.py and the judges first")
    mention_names = json.load(open(MENTION))["features"]
    names = mention_names + lexical_names()
    lex = lexical_features(rows)
    X = np.array([r["features"] + x for r, x in zip(rows, lex)], dtype=float)
    assert X.shape[1] == len(names), (X.shape, len(names))
    y = np.array([float(verdict[(r["paper"], r["fact"])]) for r in rows])
    one = np.ones_like(y)
    papers = [r["paper"] for r in rows]
    mean = X.mean(axis=0)
    scale = X.std(axis=0)
    scale[scale < 1e-9] = 1.0
    Z = (X - mean) / scale

    # Out-of-fold predictions, 5 folds grouped by paper: every judged paper is held out once.
    uniq = sorted(set(papers))
    fold = {p: k % 5 for k, p in enumerate(uniq)}
    fid = np.array([fold[p] for p in papers])
    cv, oof = {}, {}
    for lam in [1.0, 3.0, 10.0, 30.0, 100.0, 300.0]:
        pr = np.zeros(len(y))
        for k in range(5):
            w, b = fit(Z[fid != k], y[fid != k], one[fid != k], lam)
            pr[fid == k] = sigmoid(Z[fid == k] @ w + b)
        cv[lam], oof[lam] = nll(pr, y, one), pr
    best = min(cv, key=cv.get)
    p = oof[best]
    w, b = fit(Z, y, one, best)
    base = y.mean()
    const = nll(np.full(len(y), base), y, one)

    lines = [
        "# Fact-quality model: cross-validated figures",
        "",
        f"Made by `training/.venv/bin/python training/fit_quality.py` on {date.today()}.",
        f"Judged approved facts: {len(rows)} of {len(uniq)} train-pool papers; judges: "
        f"{', '.join(sorted(set(judges.values())))} (one per fact). Every figure below is out of fold: "
        f"5 folds grouped by paper, each paper predicted by a model fitted without it. L2 strength "
        f"{best} (log loss per strength: " + ", ".join(f"{k:g}: {v:.4f}" for k, v in cv.items()) +
        "). The shipped model is fitted on all of them with that strength.",
        "",
        f"| facts | pass rate | log loss | log loss, constant | AUC |",
        "|---|---|---|---|---|",
        f"| {len(y)} | {base:.3f} | {cv[best]:.4f} | {const:.4f} | {auc(p, y, one):.3f} |",
        "",
        "Calibration (quintiles of the prediction):",
        "",
        "| predicted | facts | mean predicted | passed |",
        "|---|---|---|---|",
    ]
    edges = np.quantile(p, np.linspace(0, 1, 6))
    for k in range(5):
        m = (p >= edges[k]) & ((p < edges[k + 1]) if k < 4 else (p <= edges[k + 1]))
        if m.sum():
            lines.append(f"| {edges[k]:.2f}–{edges[k + 1]:.2f} | {int(m.sum())} | {p[m].mean():.3f} | {y[m].mean():.3f} |")
    # Selection replay, per paper with >= 24 judged facts: the 24 of highest B(f) with n_f the
    # pool-time value (what the builder selected then, up to MMR's redundancy term) against B(f)
    # with n_f = the out-of-fold P(pass), and the model's own top 24.
    old_sel, new_sel, top, by_p, shortlisted, r_old, r_new = [], [], [], [], [], [], []
    for q in uniq:
        idx = [i for i, r in enumerate(rows)
               if r["paper"] == q and r.get("utility") is not None and r.get("r") is not None]
        if len(idx) < 24:
            continue
        u_old = {i: rows[i]["utility"] for i in idx}
        u_new = {i: rows[i]["utility"] - ALPHA_N * rows[i]["n"] + ALPHA_N * p[i] for i in idx}
        old_sel += [y[i] for i in sorted(idx, key=lambda i: -u_old[i])[:24]]
        new_sel += [y[i] for i in sorted(idx, key=lambda i: -u_new[i])[:24]]
        top += [y[i] for i in sorted(idx, key=lambda i: -p[i])[:24]]
        short = sorted(idx, key=lambda i: -p[i])[:SHORTLIST]
        by_p += [y[i] for i in sorted(short, key=lambda i: -u_new[i])[:24]]
        short = sorted(idx, key=lambda i: -p[i] * (1 - rows[i]["r"]))[:SHORTLIST]
        picked = sorted(short, key=lambda i: -u_new[i])[:24]
        shortlisted += [y[i] for i in picked]
        r_new += [rows[i]["r"] for i in picked]
        r_old += [rows[i]["r"] for i in sorted(idx, key=lambda i: -u_old[i])[:24]]
    if top:
        lines += ["", f"Selection replay on the {len(top) // 24} papers with ≥ 24 judged facts "
                  f"(top 24 by B(f), MMR's redundancy term left out): n_f as at pool time "
                  f"{np.mean(old_sel):.3f} pass; n_f = P(pass) {np.mean(new_sel):.3f}; the same from a "
                  f"shortlist of the {SHORTLIST} of highest P(pass) {np.mean(by_p):.3f}; from the "
                  f"shortlist of the {SHORTLIST} of highest P(pass)·(1 − r_f) (the builder's rule, "
                  f"QUALITY_SHORTLIST · 2K) {np.mean(shortlisted):.3f}; the model's own top 24 "
                  f"{np.mean(top):.3f}. Mean r_f of the 24: {np.mean(r_old):.3f} as at pool time, "
                  f"{np.mean(r_new):.3f} with the builder's rule."]
    lines += ["", "Weights (standardised features), largest first:", "",
              ", ".join(f"{n} {v:+.2f}" for n, v in sorted(zip(names, w), key=lambda t: -abs(t[1])))]
    model = {
        "version": "quality-v1",
        "features": names,
        "mean": [float(x) for x in mean],
        "scale": [float(x) for x in scale],
        "weights": [float(x) for x in w],
        "bias": float(b),
        "provenance": (
            f"fitted by training/fit_quality.py on rubric judgments (RUBRIC.md v1, Claude-based helper "
            f"agents) of {len(y)} approved facts of {len(uniq)} train-pool papers; out of fold "
            f"(5 folds by paper): AUC {auc(p, y, one):.3f}, log loss {cv[best]:.4f} vs {const:.4f} constant"
        ),
    }
    with open(MODEL, "w") as f:
        json.dump(model, f, indent=1)
        f.write("\n")
    with open(REPORT, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
