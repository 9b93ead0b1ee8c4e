"""Per-rubric counts of the fact judgments (rubric v1): round 1 in
training/data/fact-judgments/judge-*.jsonl, later rounds in training/data/fact-judgments/<round>/.
usage: python3 training/judge_summary.py [ROUND] [--against OTHER]   (e.g. round2)
With --against, also the two rounds' verdicts on the facts both judged word for word (same paper,
fact id and text in their facts.jsonl): how much of a change between rounds is the judges'."""
import collections
import glob
import json
import os
import sys

args = sys.argv[1:]
against = None
if "--against" in args:
    i = args.index("--against")
    if i + 1 >= len(args):
        sys.exit("judge_summary.py: --against needs a round name")
    against = args[i + 1]
    del args[i:i + 2]
base = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "fact-judgments")
d = os.path.join(base, *args[:1])
rows = [json.loads(l) for f in sorted(glob.glob(os.path.join(d, "judge-*.jsonl"))) for l in open(f)]
qs = ["self_contained", "true_to_quote", "reviewer_like", "not_boilerplate"]


def verdicts(rnd):
    """(paper, fact, text) -> pass, for one round's judgments."""
    rd = os.path.join(base, rnd)
    text = {(r["paper"], r["fact"]): r.get("text") for r in map(json.loads, open(os.path.join(rd, "facts.jsonl")))}
    return {(r["paper"], r["fact"], text.get((r["paper"], r["fact"]))): all(r[q] for q in qs) and r["flag"] == "none"
            for f in sorted(glob.glob(os.path.join(rd, "judge-*.jsonl"))) for r in map(json.loads, open(f))}


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
if against:
    a, b = verdicts(against), verdicts(args[0])
    both = [k for k in b if k in a and k[2] is not None]
    c = collections.Counter((a[k], b[k]) for k in both)
    print(f"against {against}: {len(both)} facts judged in both; agree on {c[True, True] + c[False, False]} "
          f"(pass {c[True, True]}, fail {c[False, False]}); pass in {against} only {c[True, False]}, "
          f"in {args[0]} only {c[False, True]}")
