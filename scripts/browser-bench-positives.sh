#!/usr/bin/env bash
# Per-review detection time of *exposed* reviews: the N compliant positives of
# ../shared/corpus/llm-reviews closest to 1,000 words, each against its frozen bundle, through
# scripts/browser-bench.sh (native 1 thread and all cores, headless chromium with the page's workers).
# The frozen bundles record the model they were built with; for timing only, each is copied with the
# current default model's name and SHA-256 (the page refuses a mismatched bundle), thresholds kept as
# `semtrace bench --validity` keeps them. Verdicts are those of the validity benchmark, not new ones.
# Usage: scripts/browser-bench-positives.sh [N (default 3)]   DECODERS/WORKERS as for browser-bench.sh
#        (default here: DECODERS=fast WORKERS=2, the issue's setting).
# Prints one browser-bench table per review; raw figures in target/bench/browser-positives/NAME/.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-3}
LLM=../shared/corpus/llm-reviews
OUT=target/bench/browser-positives
MODEL=models/semtrace-nli-minilm
mkdir -p "$OUT"
export DECODERS=${DECODERS:-fast} WORKERS=${WORKERS:-2}

names=$(python3 - "$LLM" "$N" <<'PY'
import json, sys
llm, n = sys.argv[1], int(sys.argv[2])
rows = [json.loads(l) for l in open(f"{llm}/manifest.jsonl") if l.strip()]
pos = [r for r in rows if r["kind"] == "positive-compliant"]
pos.sort(key=lambda r: (abs(len(open(f"{llm}/{r['review']}").read().split()) - 1000), r["paper"]))
print(" ".join(r["paper"] for r in pos[:n]))
PY
)
sha=$(sha256sum "$MODEL/model.onnx" | cut -d' ' -f1)
for name in $names; do
  d="$OUT/$name"
  mkdir -p "$d"
  python3 - "$LLM" "$name" "$d" "$sha" <<'PY'
import json, sys
llm, name, d, sha = sys.argv[1:]
row = next(json.loads(l) for l in open(f"{llm}/manifest.jsonl")
           if l.strip() and json.loads(l)["paper"] == name and json.loads(l)["kind"] == "positive-compliant")
b = json.load(open(f"{llm}/{row['bundle']}"))
b["model"]["sha256"] = sha  # timing copy only (see the header)
json.dump(b, open(f"{d}/bundle.json", "w"))
text = open(f"{llm}/{row['review']}").read()
open(f"{d}/reviews.jsonl", "w").write(json.dumps({"reviews": [{"review_text": text}]}) + "\n")
PY
  echo "== $name" >&2
  echo "== $name"
  BUNDLE="$d/bundle.json" REVIEWS="$d/reviews.jsonl" scripts/browser-bench.sh 1
  cp target/bench/browser/native-1.json target/bench/browser/native-all.json target/bench/browser/browser.json "$d/"
done
