"""Labels for the natural-mention priors (issue 23, item 4): which approved facts of a train-pool
paper each of its real reviews mentions.

For each paper of ../shared/corpus/train-pool/neurips2025-train.jsonl (never the dev set), in a
fixed seeded order: the builder runs offline on "# title\\n\\n" + paper_text with the paper's real
reviews as --controls, so its report lists every approved candidate with its mention features and
q_{f,k} = max NLI entailment over the review's 2-sentence windows (the default model; windows that
share fewer than two content words with the fact are not scored: --controls-prefilter). A review
mentions a fact when q >= tau_mention (0.52).

Review text is written only under training/work/priors (ignored) and read from ../shared; the
committed labels hold the facts (short quotations of the paper, <= 35 words), features and q.
Resumable: papers already labelled are skipped.

usage: python3 training/priors_label.py --papers 60 [--binary target/release/semtrace]
"""

import argparse
import hashlib
import json
import os
import random
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
POOL = os.path.join(ROOT, "..", "shared", "corpus", "train-pool", "neurips2025-train.jsonl")
WORK = os.path.join(ROOT, "training", "work", "priors")
OUT = os.path.join(ROOT, "training", "data", "priors", "labels.jsonl")
SEED = 23


def split_of(paper_id):
    # Split by paper: a stable hash puts ~20% of papers in the held-out calibration set.
    h = int(hashlib.sha256(paper_id.encode()).hexdigest()[:8], 16)
    return "heldout" if h % 5 == 0 else "train"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--papers", type=int, default=60)
    ap.add_argument("--binary", default=os.path.join(ROOT, "target", "release", "semtrace"))
    ap.add_argument("--pool", default=POOL)
    args = ap.parse_args()

    rows = [json.loads(l) for l in open(args.pool)]
    # Papers whose text has NUL bytes (a few extraction failures) or fewer than 3 reviews are skipped.
    rows = [r for r in rows if "\x00" not in r["paper_text"] and len(r["reviews"]) >= 3]
    random.Random(SEED).shuffle(rows)
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    done = set()
    if os.path.exists(OUT):
        for l in open(OUT):
            done.add(json.loads(l)["paper"])
    failed_log = os.path.join(WORK, "failed.txt")
    os.makedirs(WORK, exist_ok=True)
    failed = set(open(failed_log).read().split()) if os.path.exists(failed_log) else set()
    n = 0
    for r in rows:
        if n >= args.papers:
            break
        pid = r["id"]
        n += 1
        if pid in done or pid in failed:
            continue
        t0 = time.time()
        pdir = os.path.join(WORK, pid)
        rdir = os.path.join(pdir, "reviews")
        os.makedirs(rdir, exist_ok=True)
        md = os.path.join(pdir, "paper.md")
        with open(md, "w") as f:
            f.write("# " + r["title"] + "\n\n" + r["paper_text"])
        names = []
        for k, rev in enumerate(r["reviews"]):
            name = f"r{k:02d}.txt"
            with open(os.path.join(rdir, name), "w") as f:
                f.write(rev["review_text"])
            names.append(name)
        out = os.path.join(pdir, "build")
        cmd = [args.binary, "build", md, "--out", out, "--controls", rdir, "--controls-prefilter",
               "--quiet", "--force"]
        p = subprocess.run(cmd, capture_output=True, text=True)
        report_path = os.path.join(out, "report.json")
        if p.returncode != 0 or not os.path.exists(report_path):
            print(f"[{n}/{args.papers}] {pid}: build failed (exit {p.returncode}); skipped",
                  file=sys.stderr)
            with open(failed_log, "a") as f:
                f.write(pid + "\n")
            continue
        rep = json.load(open(report_path))
        feats = rep["priors"]["features"]
        controls = rep["priors"]["controls"]
        assert controls == sorted(names), (controls, names)
        lines = []
        for c in rep["candidates"]:
            if c.get("features") is None or c.get("q") is None:
                continue
            lines.append(json.dumps({
                "paper": pid,
                "split": split_of(pid),
                "fact": c["id"],
                "text": c["text"],
                "unit": c["unit"],
                "features": dict(zip(feats, c["features"])),
                "q": [round(x, 4) for x in c["q"]],
                "selected": c.get("selected_rank") is not None,
                "provenance": {
                    "source": "train-pool paper_text; real reviews of ../shared/corpus/train-pool "
                              "(text not stored)",
                    "annotator": "NLI " + rep["model"] + " sha256:" + rep["model_sha256"][:12]
                                 + ", max over 2-sentence windows, lexical prefilter",
                    "builder": rep["builder"],
                },
            }))
        with open(OUT, "a") as f:
            for l in lines:
                f.write(l + "\n")
        print(f"[{n}/{args.papers}] {pid}: {len(lines)} facts x {len(names)} reviews "
              f"({time.time() - t0:.0f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
