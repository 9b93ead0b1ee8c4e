#!/usr/bin/env python3
"""Collect reviewer outputs into training/data/decoding/ with provenance, and write the manifest.

Reviewer workspaces are FROM/<paper>-a (compliant: read the text with the carrier) and FROM/<paper>-b
(null: read the original), each with review.txt once written. Reviews already collected are kept.

usage: python3 training/decoding_reviews.py [--from /tmp/rv] [--reviewer NAME] [--reviewer-map FILE]
                                           [--request VERSION] [--date YYYY-MM-DD]
--reviewer-map: JSON {"<paper>-a": "helper-NN", ...} naming the reviewer of each workspace (falls back to
--reviewer). Request versions are defined in training/data/decoding/README.md.
"""
import argparse
import datetime
import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "training/data/decoding"
KINDS = {"a": ("positive-compliant", 1), "b": ("null-original", 0)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--from", dest="src", default="/tmp/rv")
    ap.add_argument("--reviewer", default="helper-llm-agent (capable safety-trained LLM, development session)")
    ap.add_argument("--reviewer-map", default=None)
    ap.add_argument("--request", default="reviewer-request/1")
    ap.add_argument("--date", default=datetime.date.today().isoformat())
    a = ap.parse_args()
    who = json.loads(Path(a.reviewer_map).read_text()) if a.reviewer_map else {}
    papers = {json.loads(l)["paper"]: json.loads(l) for l in (DATA / "papers.jsonl").open()}
    prov_path = DATA / "reviews.jsonl"
    prov = {}
    if prov_path.exists():
        for l in prov_path.open():
            r = json.loads(l)
            prov[r["review"]] = r
    (DATA / "reviews").mkdir(parents=True, exist_ok=True)
    for d in sorted(Path(a.src).glob("*-[ab]")):
        pid, tag = d.name.rsplit("-", 1)
        src = d / "review.txt"
        if pid not in papers or not src.exists() or src.stat().st_size < 200:
            continue
        kind, label = KINDS[tag]
        rel = f"reviews/{pid}.{kind}.txt"
        if rel not in prov:
            shutil.copyfile(src, DATA / rel)
            prov[rel] = {"review": rel, "paper": pid, "kind": kind, "label": label,
                         "split": papers[pid]["split"], "reviewer": who.get(d.name, a.reviewer),
                         "request": a.request, "date": a.date,
                         "words": len(src.read_text().split())}
    with prov_path.open("w") as f:
        for r in sorted(prov.values(), key=lambda r: r["review"]):
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    with (DATA / "manifest.jsonl").open("w") as f:
        for r in sorted(prov.values(), key=lambda r: r["review"]):
            f.write(json.dumps({"review": r["review"], "bundle": f"bundles/{r['paper']}.json",
                                "paper": r["paper"], "kind": r["kind"], "label": r["label"],
                                "split": r["split"]}) + "\n")
    print(f"{len(prov)} reviews collected", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
