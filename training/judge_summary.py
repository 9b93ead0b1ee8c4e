"""Per-rubric counts of the fact judgments (rubric v1): round 1 in
training/data/fact-judgments/judge-*.jsonl, later rounds in training/data/fact-judgments/<round>/.
usage: python3 training/judge_summary.py [ROUND] [--against OTHER]   (e.g. round2)
With --against, also the two rounds' verdicts on the facts both judged word for word (same paper,
fact id and text in their facts.jsonl): how much of a change between rounds is the judges'."""
import argparse
import collections
import glob
import json
import os

ap = argparse.ArgumentParser(description="Per-rubric counts of the fact judgments.")
ap.add_argument("round", nargs="?", default="", help="e.g. round2; none: round 1")
ap.add_argument("--against", default=None, metavar="OTHER", help="also compare with this round's verdicts")
args = ap.parse_args()
base = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "fact-judgments")
d = os.path.join(base, args.round)
rows = [json.loads(l) for f in sorted(glob.glob(os.path.join(d, "judge-*.jsonl"))) for l in open(f)]
if not rows:
    ap.error(f"no judge-*.jsonl in {d}")
for rnd in [args.against] if args.against else []:
    if not os.path.exists(os.path.join(base, rnd, "facts.jsonl")):
        ap.error(f"--against {rnd}: no facts.jsonl in {os.path.join(base, rnd)}")
qs = ["self_contained", "true_to_quote", "reviewer_like", "not_boilerplate"]


def passed(r):
    """A fact passes when all four answers are true and the flag is none (RUBRIC.md)."""
    return all(r[q] for q in qs) and r["flag"] == "none"


def verdicts(rnd):
    """(paper, fact, text) -> pass, for one round's judgments."""
    rd = os.path.join(base, rnd)
    text = {(r["paper"], r["fact"]): r.get("text") for r in map(json.loads, open(os.path.join(rd, "facts.jsonl")))}
    return {(r["paper"], r["fact"], text.get((r["paper"], r["fact"]))): passed(r)
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
ok = sum(passed(r) for r in rows)
print(f"pass: {ok} / {n} ({100 * ok / n:.1f}%)")
if args.against:
    against = args.against
    a, b = verdicts(against), verdicts(args.round)
    both = [k for k in b if k in a and k[2] is not None]
    c = collections.Counter((a[k], b[k]) for k in both)
    print(f"against {against}: {len(both)} facts judged in both; agree on {c[True, True] + c[False, False]} "
          f"(pass {c[True, True]}, fail {c[False, False]}); pass in {against} only {c[True, False]}, "
          f"in {args.round} only {c[False, True]}")
