#!/usr/bin/env python3
"""Stage 3 of the decoding-distribution data: merge annotators' labels into
training/data/decoding/labels.jsonl (with the pair's provenance).

Each shard training/work/decoding/shards/shard-NNN.jsonl gets an answer file
shard-NNN.labels.jsonl: one line per pair, {"pair_id", "label"} with label entailment / neutral /
contradiction. Pairs already in labels.jsonl are kept (resumable); answers with an unknown pair id or
label are reported and skipped.

usage: python3 training/decoding_labels.py [--annotator NAME] [--annotator-map FILE] [--brief VERSION]
--annotator-map: JSON {"shard-000.labels.jsonl": "helper-NN", ...} naming each shard's annotator (falls
back to --annotator). Request versions: training/data/decoding/requests/.
"""
import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "training/data/decoding"
WORK = ROOT / "training/work/decoding"
LABELS = {"entailment", "neutral", "contradiction"}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--annotator", default="helper-llm-agent (capable LLM, development session)")
    ap.add_argument("--brief", default="../shared/data/nli/indomain/BRIEF.md labels, strict; decoding-annotation/1")
    ap.add_argument("--annotator-map", default=None)
    a = ap.parse_args()
    who = json.loads(Path(a.annotator_map).read_text()) if a.annotator_map else {}
    pairs = {}
    for l in (WORK / "pairs.jsonl").open():
        p = json.loads(l)
        pairs[p["pair_id"]] = p
    out_path = DATA / "labels.jsonl"
    done = {}
    if out_path.exists():
        for l in out_path.open():
            r = json.loads(l)
            done[r["pair_id"]] = r
    bad = 0
    for ans in sorted((WORK / "shards").glob("shard-*.labels.jsonl")):
        for n, l in enumerate(ans.open(), 1):
            if not l.strip():
                continue
            try:
                r = json.loads(l)
            except json.JSONDecodeError:
                print(f"{ans.name}:{n}: not JSON", file=sys.stderr)
                bad += 1
                continue
            pid, label = r.get("pair_id"), str(r.get("label", "")).strip().lower()
            if pid not in pairs or label not in LABELS:
                print(f"{ans.name}:{n}: unknown pair or label {pid!r} {label!r}", file=sys.stderr)
                bad += 1
                continue
            if pid in done:
                continue
            p = pairs[pid]
            done[pid] = {"pair_id": pid, "paper": p["paper"], "split": p["split"],
                         "review_kind": p["review_kind"], "fact": p["fact"], "window": p["window"],
                         "label": label, "why": p["why"], "model_p": p["model_p"],
                         "model": p["model"], "annotator": who.get(ans.name, a.annotator), "brief": a.brief,
                         "shard": ans.name}
    with out_path.open("w") as f:
        for r in sorted(done.values(), key=lambda r: r["pair_id"]):
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    counts = {}
    for r in done.values():
        counts[(r["why"], r["label"])] = counts.get((r["why"], r["label"]), 0) + 1
    print(f"{len(done)} labelled pairs ({bad} answers skipped)", file=sys.stderr)
    for k in sorted(counts):
        print(f"  {k[0]:<16} {k[1]:<14} {counts[k]}", file=sys.stderr)
    # How the current model's scores relate to the labels (MODEL_CARD.md, "Dense LLM-written reviews").
    rows = list(done.values())
    for lo, hi in [(0.9, 1.01), (0.52, 0.9), (0.3, 0.52), (0.0, 0.3)]:
        s = [r for r in rows if lo <= r["model_p"] < hi]
        e = sum(r["label"] == "entailment" for r in s)
        print(f"  model P in [{lo}, {min(hi, 1.0)}): {len(s)} pairs, {e} entailment", file=sys.stderr)
    tp = sum(r["model_p"] >= 0.52 and r["label"] == "entailment" for r in rows)
    fp = sum(r["model_p"] >= 0.52 and r["label"] != "entailment" for r in rows)
    fn = sum(r["model_p"] < 0.52 and r["label"] == "entailment" for r in rows)
    if tp:
        print(f"  at tau_min 0.52: precision {tp / (tp + fp):.3f}, recall {tp / (tp + fn):.3f}",
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
