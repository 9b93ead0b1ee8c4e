"""Inputs for the rubric judges of the fact-quality pool (issue 23, item 3): the approved facts of
training/data/fact-quality/pool.jsonl (training/quality_pool.py) with their quotation and the
paper's title, split into N shares by paper, written to training/work/judge/quality/in-K.jsonl.
Facts already judged (training/data/fact-quality/judge-*.jsonl) are left out.

usage: python3 training/quality_judge_prep.py N [MAX_PAPERS]
"""
import glob
import json
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
n = int(sys.argv[1])
max_papers = int(sys.argv[2]) if len(sys.argv) > 2 else 10**9
pool = [json.loads(l) for l in open(os.path.join(here, "data", "fact-quality", "pool.jsonl"))]
judged = set()
for p in glob.glob(os.path.join(here, "data", "fact-quality", "judge-*.jsonl")):
    for l in open(p):
        j = json.loads(l)
        judged.add((j["paper"], j["fact"]))
papers = []
for row in pool:
    if (row["paper"], row["fact"]) in judged:
        continue
    if not papers or papers[-1][0] != row["paper"]:
        papers.append((row["paper"], []))
    papers[-1][1].append(row)
papers = papers[:max_papers]
shares = [[] for _ in range(n)]
for pid, rows in papers:
    k = min(range(n), key=lambda i: len(shares[i]))
    shares[k].extend({key: r[key] for key in ("paper", "title", "fact", "text", "quote", "source")}
                     for r in rows)
out = os.path.join(here, "work", "judge", "quality")
os.makedirs(out, exist_ok=True)
for k, rows in enumerate(shares):
    with open(os.path.join(out, f"in-{k + 1}.jsonl"), "w") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
print(len(papers), "papers", [len(s) for s in shares])
