"""Inputs for the fact-rubric judges (issue 23, item 3): every selected fact of every corpus paper
that builds offline, with its source quotation and the paper's title, split into N shares by paper.

usage: python3 training/judge_prep.py BUILD_DIR N [ROUND]   (BUILD_DIR/<paper>/report.json, e.g.
training/work/judge/builds from training/judge_builds.sh). With ROUND, the inputs go to
training/work/judge/ROUND/ and the judged facts (no quotations) to
training/data/fact-judgments/ROUND/facts.jsonl.
"""
import glob
import json
import os
import sys

build_dir, n = sys.argv[1], int(sys.argv[2])
rnd = sys.argv[3:4]
papers = []
for rp in sorted(glob.glob(os.path.join(build_dir, "*", "report.json"))):
    r = json.load(open(rp))
    if r.get("status") != "ok":
        continue
    name = os.path.basename(os.path.dirname(rp))
    facts = [c for c in r["candidates"] if c.get("selected_rank")]
    papers.append((name, r["document"].get("title") or name, facts))
here = os.path.dirname(os.path.abspath(__file__))
out = os.path.join(here, "work", "judge", *rnd)
os.makedirs(out, exist_ok=True)
shares = [[] for _ in range(n)]
sizes = [0] * n
for name, title, facts in papers:
    k = sizes.index(min(sizes))
    sizes[k] += len(facts)
    for c in facts:
        shares[k].append({"paper": name, "title": title, "fact": c["id"], "text": c["text"],
                          "quote": c["quote"], "source": c.get("source", "")})
for k, rows in enumerate(shares):
    with open(os.path.join(out, f"in-{k + 1}.jsonl"), "w") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
print(len(papers), "papers", sizes)
if rnd:
    data = os.path.join(here, "data", "fact-judgments", rnd[0])
    os.makedirs(data, exist_ok=True)
    with open(os.path.join(data, "facts.jsonl"), "w") as f:
        for rows in shares:
            for r in rows:
                f.write(json.dumps({k: r[k] for k in ("paper", "fact", "text", "source")},
                                   ensure_ascii=False) + "\n")
