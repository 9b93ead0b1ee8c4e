#!/usr/bin/env python3
"""Stage 1 of the decoding-distribution data (issue: NLI model on real LLM reviews).

Picks papers of ../shared/corpus/train-pool/neurips2025-train.jsonl (seeded), splits them by paper,
builds each one's bundle offline from `paper_text` with the project's own builder, and writes the
reviewer inputs under training/work/decoding/<id>/:
  paper.md       the original text (null reviewers read this)
  protected.md   the text with the carrier appended (compliant reviewers read this; text mode of
                 the evaluation harness: `semtrace protect paper.md --bundle ...`)
  out/bundle.json
The bundles go to training/data/decoding/bundles/<id>.json and the selection with its split to
training/data/decoding/papers.jsonl. Re-running skips papers already built (resumable).

usage: python3 training/decoding_inputs.py [--n 24] [--seed 21] [--semtrace target/release/semtrace]
"""
import argparse
import hashlib
import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
POOL = ROOT.parent / "shared/corpus/train-pool/neurips2025-train.jsonl"
WORK = ROOT / "training/work/decoding"
DATA = ROOT / "training/data/decoding"
# A fixed venue key for the training bundles only (not a real venue's secret): reruns reproduce them.
SECRET = b"semtrace-training-decoding-v1\n"


def split_of(paper_id: str) -> str:
    """Split by paper: one in five papers is held out for model selection."""
    return "heldout" if hashlib.sha256(paper_id.encode()).digest()[0] % 5 == 0 else "train"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=24)
    ap.add_argument("--seed", type=int, default=21)
    ap.add_argument("--semtrace", default=str(ROOT / "target/release/semtrace"))
    ap.add_argument("--min-chars", type=int, default=40_000)
    ap.add_argument("--max-chars", type=int, default=110_000)
    a = ap.parse_args()

    papers = [json.loads(l) for l in POOL.open() if l.strip()]
    fit = [p for p in papers if a.min_chars <= len(p["paper_text"]) <= a.max_chars]
    random.Random(a.seed).shuffle(fit)
    chosen = fit[: a.n]
    (DATA / "bundles").mkdir(parents=True, exist_ok=True)
    WORK.mkdir(parents=True, exist_ok=True)
    key = WORK / "venue.key"
    key.write_bytes(SECRET)
    # Papers already chosen keep their committed bundle and provenance: labelled pairs refer to it,
    # and the builder may have changed since (a fresh checkout has no training/work/).
    before = {}
    if (DATA / "papers.jsonl").exists():
        for l in (DATA / "papers.jsonl").open():
            r = json.loads(l)
            before[r["paper"]] = r
    builder = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                             capture_output=True, text=True).stdout.strip() or None
    rows = []
    for i, p in enumerate(chosen):
        pid = p["id"]
        d = WORK / pid
        d.mkdir(exist_ok=True)
        (d / "paper.md").write_text(p["paper_text"], encoding="utf-8")
        bundle = d / "out/bundle.json"
        status = "built"
        old = before.get(pid)
        if old and not old.get("bundle"):
            rows.append(old)  # failed before: keep the record, do not retry with another builder
            continue
        if old and not bundle.exists():
            bundle.parent.mkdir(exist_ok=True)
            shutil.copyfile(DATA / old["bundle"], bundle)
        if not bundle.exists():
            print(f"[{i + 1}/{len(chosen)}] build {pid}", file=sys.stderr, flush=True)
            r = subprocess.run(
                [a.semtrace, "build", str(d / "paper.md"), "--out", str(d / "out"),
                 "--secret-file", str(key), "--force"],
                capture_output=True, text=True,
            )
            if r.returncode != 0:
                status = f"build failed (exit {r.returncode}): {r.stderr.strip().splitlines()[-1:]}"
                print(f"  {status}", file=sys.stderr)
        if bundle.exists():
            prot = d / "protected.md"
            if not prot.exists():
                subprocess.run(
                    [a.semtrace, "protect", str(d / "paper.md"), "--bundle", str(bundle),
                     "--out", str(prot), "--force"],
                    check=True, capture_output=True,
                )
            if not old:
                shutil.copyfile(bundle, DATA / "bundles" / f"{pid}.json")
        rows.append(old or {"paper": pid, "title": p["title"], "split": split_of(pid),
                            "source": "../shared/corpus/train-pool/neurips2025-train.jsonl",
                            "seed": a.seed, "bundle": f"bundles/{pid}.json" if bundle.exists() else None,
                            "status": status, "builder": builder})
    with (DATA / "papers.jsonl").open("w") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    built = sum(r["bundle"] is not None for r in rows)
    print(f"{built}/{len(rows)} bundles; inputs under {WORK}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
