#!/usr/bin/env python3
"""Audit of the `both` erasures of compliant positives in ../shared/corpus/llm-reviews (measurement only).

For every position a model erases as `both` under the paper's rule, each side's best window is paired with
its fact; helper LLM annotators labelled those pairs under the in-domain brief (strict entailment), stored
by id only in training/data/audits/llm-reviews-both.labels.jsonl (no review text is copied: it is rebuilt
here from ../shared). A position is a genuine `both` when both sides are entailed, a false one otherwise.

    semtrace bench --validity --json --reviews ../shared/corpus/llm-reviews/manifest.jsonl \
        --cache target/bench/validity > BASE.json           # the labelled model (default e2f6f6371261)
    python3 scripts/both_audit.py BASE.json [OTHER.json ...]  # OTHER: the same run with --model M

  --pairs OUT.jsonl writes the (id, window, fact) pairs of BASE for labelling instead.
Prints genuine/false counts for BASE and, per OTHER model, how many of each stay `both` and the other
model's P(entailment) on the unentailed sides. Never train on these labels: they describe the test set."""
import argparse
import json
import os
import statistics

LLM = "../shared/corpus/llm-reviews"
LABELS = "training/data/audits/llm-reviews-both.labels.jsonl"


def rows_of(path):
    """review file name -> row under the paper's rule (safeguard none), with its matrix and facts."""
    v = json.load(open(path))
    man = {}
    for line in open(os.path.join(LLM, "manifest.jsonl")):
        m = json.loads(line)
        man[os.path.basename(m["review"])] = m
    out = {}
    for r in v["rows"]:
        if r["kind"] != "positive-compliant" or r["safeguard"] != "none":
            continue
        name = os.path.basename(r["review"])
        bundle = json.load(open(os.path.join(LLM, man[name]["bundle"])))
        facts = [f["text"] for p in bundle["positions"] for f in p["facts"]]
        mat = json.load(open(os.path.join("target/bench/validity", r["matrix"])))
        out[name] = dict(row=r, facts=facts, mat=mat, W=len(r["windows"]))
    return out


def best(entry, fact_index):
    w = entry["W"]
    row = entry["mat"][fact_index * w:(fact_index + 1) * w]
    j = max(range(w), key=lambda k: row[k])
    return entry["row"]["windows"][j], row[j]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("base")
    ap.add_argument("others", nargs="*")
    ap.add_argument("--pairs")
    a = ap.parse_args()
    base = rows_of(a.base)
    pairs = []
    for name, e in sorted(base.items()):
        for pi, er in enumerate(e["row"]["erasures"]):
            if er == "both":
                for side in (0, 1):
                    win, p = best(e, 2 * pi + side)
                    pairs.append(dict(id=f"{name}|p{pi}|s{side}", window=win, fact=e["facts"][2 * pi + side], p=p))
    if a.pairs:
        with open(a.pairs, "w") as f:
            for q in pairs:
                f.write(json.dumps({k: q[k] for k in ("id", "window", "fact")}) + "\n")
        print(f"{len(pairs)} pairs -> {a.pairs}")
        return
    lab = {json.loads(l)["id"]: json.loads(l)["label"] for l in open(LABELS)}
    missing = [q["id"] for q in pairs if q["id"] not in lab]
    if missing:
        raise SystemExit(f"{len(missing)} pairs have no label (another base model?): {missing[:3]}")
    positions = {}
    for q in pairs:
        positions.setdefault(q["id"].rsplit("|", 1)[0], []).append(q)
    genuine = {k for k, v in positions.items() if all(lab[q["id"]] == "entailment" for q in v)}
    print(f"base: {len(positions)} `both` positions of compliant positives; genuine (both sides entailed) "
          f"{len(genuine)}, false {len(positions) - len(genuine)}; "
          f"{sum(lab[q['id']] == 'entailment' for q in pairs)}/{len(pairs)} sides entailed")
    for path in a.others:
        other = rows_of(path)
        stay = {"genuine": 0, "false": 0}
        ps = []
        for k, v in positions.items():
            name, pi = k.split("|")
            pi = int(pi[1:])
            if other[name]["row"]["erasures"][pi] == "both":
                stay["genuine" if k in genuine else "false"] += 1
            for q in v:
                if lab[q["id"]] != "entailment":
                    side = int(q["id"][-1])
                    ps.append(best(other[name], 2 * pi + side)[1])
        print(f"{path}: stay `both`: {stay['genuine']}/{len(genuine)} genuine, "
              f"{stay['false']}/{len(positions) - len(genuine)} false; unentailed sides' best P(entailment): "
              f"median {statistics.median(ps):.3f}, {sum(p >= 0.9 for p in ps)}/{len(ps)} >= 0.9")


if __name__ == "__main__":
    main()
