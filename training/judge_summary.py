"""Per-rubric counts of the fact judgments (rubric v1): round 1 in
training/data/fact-judgments/judge-*.jsonl, later rounds in training/data/fact-judgments/<round>/.
usage: python3 training/judge_summary.py [ROUND]   (e.g. round2)"""
import collections
import glob
import json
import os
import sys

d = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "fact-judgments", *sys.argv[1:2])
rows = [json.loads(l) for f in sorted(glob.glob(os.path.join(d, "judge-*.jsonl"))) for l in open(f)]
qs = ["self_contained", "true_to_quote", "reviewer_like", "not_boilerplate"]
n = len(rows)
print(f"{n} selected facts of {len({r['paper'] for r in rows})} papers")
print("| question | true |\n|---|---|")
for q in qs:
    print(f"| {q} | {sum(bool(r[q]) for r in rows)} / {n} |")
flags = collections.Counter(r["flag"] for r in rows)
print("| flag | count |\n|---|---|")
for k, v in flags.most_common():
    print(f"| {k} | {v} |")
ok = sum(all(r[q] for q in qs) and r["flag"] == "none" for r in rows)
print(f"pass: {ok} / {n} ({100 * ok / n:.1f}%)")
