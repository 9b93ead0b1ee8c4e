"""Would a stronger fact-quality model raise the rubric pass rate? (issue 23, item 3; a measurement,
nothing here ships.)

The shipped fact-quality model (fit_quality.py) is a logistic model over the builder's hand features.
This probe fits two text models on the same train-pool judgments (training/data/fact-quality/, b3
included: 1,839 facts) and asks whether they select better facts on the corpus:
  1. the sentence embedder's mean-pooled embedding (all-MiniLM-L6-v2) as extra logistic features;
  2. that encoder fine-tuned as a pass/fail classifier on the fact's text (3 epochs, lr 4e-5), alone
     and stacked with the hand features (its out-of-fold logit as one more feature);
all out of fold, 5 folds grouped by paper. Then, on the corpus (BUILDS: the reports of
training/judge_builds.sh), the AUC over every approved fact with a rubric verdict from rounds 2-14
(latest verdict per fact text), and a selection replay: the builder's rule (shortlist of the 36 of
highest P(pass)·(1 - r_f), then the 24 of highest utility with n_f swapped) with the shipped P(pass)
and with the stacked one, counting the verdicts of the facts each selects.

usage: training/.venv/bin/python training/quality_probe.py BUILDS EMBEDDER_DIR   (six fine-tunings; 48 min on 2 shared cores)
  e.g. training/work/judge/builds-s35 target/test-env/models/all-minilm-l6-v2
"""
import glob
import json
import os
import sys

import numpy as np
import torch
from sklearn.metrics import roc_auc_score
from transformers import AutoModel, AutoTokenizer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fit_quality as fq  # noqa: E402
from fit_priors import fit, sigmoid  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "training", "data", "fact-quality")
JUDGED = os.path.join(ROOT, "training", "data", "fact-judgments")
ALPHA_N, SHORTLIST, K2 = 0.5, 36, 24


def passed(j):
    return all(j[q] is True for q in fq.QUESTIONS) and j["flag"] == "none"


class Classifier(torch.nn.Module):
    def __init__(self, d):
        super().__init__()
        self.b = AutoModel.from_pretrained(d)
        self.h = torch.nn.Linear(self.b.config.hidden_size, 1)

    def forward(self, ids, mask):
        h = self.b(input_ids=ids, attention_mask=mask).last_hidden_state
        m = mask.unsqueeze(-1).float()
        return self.h((h * m).sum(1) / m.sum(1)).squeeze(-1)


def train_classifier(d, enc, y, idx, epochs=3, bs=16, lr=4e-5):
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    m = Classifier(d)
    opt = torch.optim.AdamW(m.parameters(), lr=lr, weight_decay=0.01)
    steps = epochs * ((len(idx) + bs - 1) // bs)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1, (s + 1) / (0.1 * steps)) * max(0, 1 - s / steps))
    m.train()
    for _ in range(epochs):
        perm = rng.permutation(idx)
        for i in range(0, len(perm), bs):
            b = perm[i:i + bs]
            loss = torch.nn.functional.binary_cross_entropy_with_logits(
                m(enc["input_ids"][b], enc["attention_mask"][b]), torch.tensor(y[b], dtype=torch.float32))
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
    return m.eval()


def predict(m, enc, idx):
    out = []
    with torch.no_grad():
        for i in range(0, len(idx), 64):
            b = idx[i:i + 64]
            out += torch.sigmoid(m(enc["input_ids"][b], enc["attention_mask"][b])).tolist()
    return np.array(out)


def embed(m, enc):
    out = []
    with torch.no_grad():
        for i in range(0, enc["input_ids"].shape[0], 64):
            ids, mask = enc["input_ids"][i:i + 64], enc["attention_mask"][i:i + 64]
            h = m.b(input_ids=ids, attention_mask=mask).last_hidden_state
            mk = mask.unsqueeze(-1).float()
            out.append(torch.nn.functional.normalize((h * mk).sum(1) / mk.sum(1), dim=1).numpy())
    return np.concatenate(out)


def standardise(a, ref=None):
    ref = a if ref is None else ref
    mu, s = ref.mean(0), ref.std(0)
    s[s < 1e-9] = 1.0
    return (a - mu) / s


def main():
    builds, d = sys.argv[1], sys.argv[2]
    torch.set_num_threads(2)
    verdict = {}
    for path in sorted(glob.glob(os.path.join(DATA, "judge-*.jsonl")) + glob.glob(os.path.join(DATA, "b3", "judge-*.jsonl"))):
        for line in open(path):
            j = json.loads(line)
            verdict[(j["paper"], j["fact"])] = passed(j)
    rows = [r for r in map(json.loads, open(os.path.join(DATA, "pool.jsonl")))
            if (r["paper"], r["fact"]) in verdict and r.get("features")]
    X = np.array([r["features"] + x for r, x in zip(rows, fq.lexical_features(rows))], float)
    y = np.array([float(verdict[(r["paper"], r["fact"])]) for r in rows])
    one = np.ones_like(y)
    papers = sorted({r["paper"] for r in rows})
    fid = np.array([{p: k % 5 for k, p in enumerate(papers)}[r["paper"]] for r in rows])
    tok = AutoTokenizer.from_pretrained(d)
    enc = tok([r["text"] for r in rows], padding="max_length", truncation=True, max_length=64, return_tensors="pt")

    def oof_logistic(Z, lam=100.0):
        p = np.zeros(len(y))
        for k in range(5):
            w, b = fit(Z[fid != k], y[fid != k], one[fid != k], lam)
            p[fid == k] = sigmoid(Z[fid == k] @ w + b)
        return p

    E = embed(Classifier(d).eval(), enc)
    ft = np.zeros(len(y))
    for k in range(5):
        m = train_classifier(d, enc, y, np.where(fid != k)[0])
        ft[fid == k] = predict(m, enc, np.where(fid == k)[0])
        print(f"fold {k + 1}/5 fine-tuned", flush=True)
    ftl = np.log(ft / (1 - ft))
    print(f"train pool: {len(y)} judged facts of {len(papers)} papers, pass {y.mean():.3f}; out-of-fold AUC:")
    print(f"  hand features (the shipped model's)   {roc_auc_score(y, oof_logistic(standardise(X))):.3f}")
    print(f"  hand + embedding (x0.3)               {roc_auc_score(y, oof_logistic(np.hstack([standardise(X), 0.3 * standardise(E)]))):.3f}")
    print(f"  fine-tuned text classifier            {roc_auc_score(y, ft):.3f}")
    A = np.hstack([X, ftl[:, None]])
    print(f"  hand + classifier logit (stacked)     {roc_auc_score(y, oof_logistic(standardise(A))):.3f}")

    # The stacked model fitted on every judged train-pool fact, applied to the corpus's approved facts.
    w, b = fit(standardise(A), y, one, 100.0)
    final = train_classifier(d, enc, y, np.arange(len(y)))
    ver = {}
    for rnd in sorted(glob.glob(os.path.join(JUDGED, "round*")), key=lambda p: int("".join(c for c in os.path.basename(p) if c.isdigit()) or 0)):
        facts = os.path.join(rnd, "facts.jsonl")
        if not os.path.exists(facts):
            continue
        text = {(j["paper"], j["fact"]): j["text"] for j in map(json.loads, open(facts))}
        for path in glob.glob(os.path.join(rnd, "judge-*.jsonl")):
            for j in map(json.loads, open(path)):
                if (j["paper"], j["fact"]) in text:
                    ver[(j["paper"], text[(j["paper"], j["fact"])])] = passed(j)
    cands = []
    for rp in sorted(glob.glob(os.path.join(builds, "*", "report.json"))):
        name = os.path.basename(os.path.dirname(rp))
        cands += [(name, c) for c in json.load(open(rp))["candidates"] if c.get("kept")]
    Xc = np.array([c["features"] + x for (_, c), x in zip(cands, fq.lexical_features(
        [{k: c[k] for k in ("text", "quote", "source")} for _, c in cands]))], float)
    cenc = tok([c["text"] for _, c in cands], padding="max_length", truncation=True, max_length=64, return_tensors="pt")
    fc = predict(final, cenc, np.arange(len(cands)))
    new = sigmoid(standardise(np.hstack([Xc, np.log(fc / (1 - fc))[:, None]]), A) @ w + b)
    old = np.array([c["quality"] for _, c in cands])
    known = [i for i, (n, c) in enumerate(cands) if (n, c["text"]) in ver]
    yk = np.array([ver[(cands[i][0], cands[i][1]["text"])] for i in known], float)
    print(f"corpus: {len(cands)} approved facts, {len(known)} with a verdict (pass {yk.mean():.3f}); AUC: "
          f"shipped {roc_auc_score(yk, old[known]):.3f}, classifier {roc_auc_score(yk, fc[known]):.3f}, "
          f"stacked {roc_auc_score(yk, new[known]):.3f}")

    def replay(q, short):
        passed_, judged, unknown = 0, 0, 0
        by = {}
        for i, (n, _) in enumerate(cands):
            by.setdefault(n, []).append(i)
        for idx in by.values():
            pool = sorted(idx, key=lambda i: -q[i] * (1 - cands[i][1]["r"]))[:short]
            for i in sorted(pool, key=lambda i: -(cands[i][1]["utility"] - ALPHA_N * old[i] + ALPHA_N * q[i]))[:K2]:
                key = (cands[i][0], cands[i][1]["text"])
                if key in ver:
                    passed_ += ver[key]
                    judged += 1
                else:
                    unknown += 1
        return f"{passed_}/{judged} judged pass ({unknown} never judged)"

    for short in (28, SHORTLIST, 48):
        print(f"replay, shortlist {short}: shipped P(pass) {replay(old, short)}; stacked {replay(new, short)}")


if __name__ == "__main__":
    main()
