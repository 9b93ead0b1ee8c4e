"""Fact-quality pool (issue 23, item 3): the approved offline candidates of train-pool papers, for
rubric judges and the fact-quality model (training/fit_quality.py).

For N papers of ../shared/corpus/train-pool/neurips2025-train.jsonl (never the dev set, never the
corpus papers the rubric is measured on), in a seeded order: the release builder runs offline on
"# title\\n\\n" + paper_text (secret "quality secret"), and every candidate its gates approve (the
pool selection draws from; not only the selected 24) is appended to
training/data/fact-quality/pool.jsonl with the paper id, a split by paper (sha256 of the id), its
quotation (a sentence of the paper, <= 35 words), source, section and the builder's features.
Resumable: a paper whose report exists under training/work/quality is not built again; the pool
file is rewritten from the reports each run.

usage: python3 training/quality_pool.py --papers 30 [--binary target/release/semtrace]
"""

import argparse
import hashlib
import json
import os
import random
import subprocess
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
POOL = os.path.join(ROOT, "..", "shared", "corpus", "train-pool", "neurips2025-train.jsonl")
WORK = os.path.join(ROOT, "training", "work", "quality")
OUT = os.path.join(ROOT, "training", "data", "fact-quality", "pool.jsonl")
SEED = 2303


def short_quote(quote):
    """Only short quotations of papers enter the repository: a source sentence longer than 35
    words (the source of a clause candidate) keeps its first 35, marked with "…"."""
    words = quote.split()
    return quote if len(words) <= 35 else " ".join(words[:35]) + " …"


def split_of(paper_id):
    h = int(hashlib.sha256(paper_id.encode()).hexdigest()[:8], 16)
    return "heldout" if h % 5 == 0 else "train"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--papers", type=int, default=30)
    ap.add_argument("--binary", default=os.path.join(ROOT, "target", "release", "semtrace"))
    ap.add_argument("--embedder", default=os.path.join(ROOT, "target", "test-env", "models", "all-minilm-l6-v2"))
    args = ap.parse_args()
    rows = [json.loads(l) for l in open(POOL)]
    rows = [r for r in rows if "\x00" not in r["paper_text"]]
    random.Random(SEED).shuffle(rows)
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    os.makedirs(WORK, exist_ok=True)
    failed_log = os.path.join(WORK, "failed.txt")
    failed = set(open(failed_log).read().split()) if os.path.exists(failed_log) else set()
    secret = os.path.join(WORK, "secret")
    with open(secret, "w") as f:
        f.write("quality secret")
    pool = []
    for r in rows[: args.papers]:
        pid = r["id"]
        if pid in failed:
            continue
        t0 = time.time()
        pdir = os.path.join(WORK, pid)
        os.makedirs(pdir, exist_ok=True)
        md = os.path.join(pdir, "paper.md")
        with open(md, "w") as f:
            f.write("# " + r["title"] + "\n\n" + r["paper_text"])
        out = os.path.join(pdir, "build")
        if os.path.exists(os.path.join(out, "report.json")):
            pool.append((r, json.load(open(os.path.join(out, "report.json")))))
            continue
        cmd = [args.binary, "build", md, "--out", out, "--secret-file", secret, "--quiet",
               "--force", "--embedder", args.embedder]
        res = subprocess.run(cmd, capture_output=True, text=True)
        try:
            rep = json.load(open(os.path.join(out, "report.json")))
        except (OSError, ValueError):
            print(f"{pid}: no report (exit {res.returncode}): {res.stderr.strip()[-200:]}", flush=True)
            with open(failed_log, "a") as f:
                f.write(pid + "\n")
            continue
        pool.append((r, rep))
        kept = sum(1 for c in rep["candidates"] if c.get("kept"))
        print(f"{pid}: exit {res.returncode}, {kept} approved, {time.time() - t0:.0f}s", flush=True)
    with open(OUT, "w") as f:
        for r, rep in pool:
            for c in rep["candidates"]:
                if not c.get("kept"):
                    continue
                f.write(json.dumps({
                    "paper": r["id"], "split": split_of(r["id"]), "title": r["title"],
                    "fact": c["id"], "text": c["text"], "quote": short_quote(c["quote"]),
                    "source": c.get("source", ""), "unit": c["unit"],
                    "selected": bool(c.get("selected_rank")), "features": c.get("features"),
                    # B(f) at pool time and the n_f in it (for fit_quality.py's selection replay).
                    "utility": c.get("utility"), "r": c.get("r"),
                    "n": c.get("quality", c["attributes"]["naturalness"]),
                    "provenance": {"source": "train-pool paper_text", "builder": rep.get("builder")},
                }, ensure_ascii=False) + "\n")
    print(len(pool), "papers in", OUT)


if __name__ == "__main__":
    main()
