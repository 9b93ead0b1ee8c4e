#!/usr/bin/env python3
"""Stage 2 of the decoding-distribution data: which (window, fact) pairs the annotators label.

Reads the output of
  semtrace bench --validity --json --reviews training/data/decoding/manifest.jsonl \
      --cache training/work/decoding/cache > training/work/decoding/validity.json
(every window of every review scored against every fact of its bundle by the current default
model) and writes annotation shards under training/work/decoding/shards/ with
  every pair the model scores >= 0.3 (the pairs that decide `both` erasures and observed bits),
  for every position, the selected fact's best window against its pair partner,
  a seeded random sample of the remaining pairs (--sample per review).
The model's probability is kept in training/work/decoding/pairs.jsonl, never shown to annotators.

usage: python3 training/decoding_pairs.py [--sample 12] [--shard-size 60] [--seed 5]
"""
import argparse
import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "training/data/decoding"
WORK = ROOT / "training/work/decoding"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--validity", default=str(WORK / "validity.json"))
    ap.add_argument("--cache", default=str(WORK / "cache"))
    ap.add_argument("--threshold", type=float, default=0.3)
    ap.add_argument("--sample", type=int, default=12)
    ap.add_argument("--shard-size", type=int, default=60)
    ap.add_argument("--seed", type=int, default=5)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    v = json.loads(Path(a.validity).read_text())
    manifest = {json.loads(l)["review"]: json.loads(l) for l in (DATA / "manifest.jsonl").open()}
    pairs = []
    for row in v["rows"]:
        if "matrix" not in row:
            continue
        m = manifest[row["review"]]
        bundle = json.loads((DATA / m["bundle"]).read_text())
        facts = [f["text"] for p in bundle["positions"] for f in p["facts"]]
        wins = row["windows"]
        probs = json.loads((Path(a.cache) / row["matrix"]).read_text())
        assert len(probs) == len(facts) * len(wins), row["review"]
        chosen = {}
        for f in range(len(facts)):
            for w in range(len(wins)):
                p = probs[f * len(wins) + w]
                if p >= a.threshold:
                    chosen[(f, w)] = "model>=0.3"
        # The selected side's best window against the partner fact (does the review state both?).
        for j, pos in enumerate(bundle["positions"]):
            for side in (0, 1):
                f = 2 * j + side
                best = max(range(len(wins)), key=lambda w: probs[f * len(wins) + w], default=None)
                if best is not None:
                    chosen.setdefault((2 * j + 1 - side, best), "partner-of-best")
        rest = [(f, w) for f in range(len(facts)) for w in range(len(wins)) if (f, w) not in chosen]
        # Seeded per review, so adding reviews later does not change earlier reviews' samples.
        per_review = random.Random(f"{a.seed}:{row['review']}")
        for fw in per_review.sample(rest, min(a.sample, len(rest))):
            chosen[fw] = "random"
        for (f, w), why in sorted(chosen.items()):
            pairs.append({
                "pair_id": f"{m['paper']}.{m['kind']}.f{f:02d}.w{w:03d}",
                "paper": m["paper"], "split": m["split"], "review_kind": m["kind"],
                "fact": facts[f], "window": wins[w], "why": why,
                "model_p": round(probs[f * len(wins) + w], 4),
                "model": v["sha256"][:12],
            })
    WORK.mkdir(parents=True, exist_ok=True)
    with (WORK / "pairs.jsonl").open("w") as f:
        for p in pairs:
            f.write(json.dumps(p, ensure_ascii=False) + "\n")
    shards = WORK / "shards"
    shards.mkdir(exist_ok=True)
    # Only pairs of reviews not labelled yet go to new shards, numbered after the existing ones (resumable).
    # A review with any labelled pair is done (its sample was drawn when it was labelled).
    done = set()
    if (DATA / "labels.jsonl").exists():
        for l in (DATA / "labels.jsonl").open():
            r = json.loads(l)
            done.add((r["paper"], r["review_kind"]))
    order = [p for p in pairs if (p["paper"], p["review_kind"]) not in done]
    rng.shuffle(order)  # mixes papers and reasons within a shard
    n = len(list(shards.glob("shard-[0-9][0-9][0-9].jsonl")))
    for i in range(0, len(order), a.shard_size):
        with (shards / f"shard-{n:03d}.jsonl").open("w") as f:
            for p in order[i : i + a.shard_size]:
                f.write(json.dumps({k: p[k] for k in ("pair_id", "fact", "window")},
                                   ensure_ascii=False) + "\n")
        n += 1
    by = {}
    for p in pairs:
        by[p["why"]] = by.get(p["why"], 0) + 1
    print(f"{len(pairs)} pairs ({by}); {len(order)} not yet labelled, in shards up to {n - 1} under {shards}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
