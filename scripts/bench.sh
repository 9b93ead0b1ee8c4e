#!/usr/bin/env bash
# Benchmark: engine pairs/s (tract vs onnxruntime, same pairs, batches and 1 thread) and the
# exhaustive decoder's wall time per real review (24 facts x all windows).
# Usage: scripts/bench.sh [MODEL_DIR] [BUNDLE] [REVIEWS.jsonl] [N_REVIEWS]
set -euo pipefail
cd "$(dirname "$0")/.."
MODEL=${1:-models/semtrace-nli-minilm}
BUNDLE=${2:-tests/fixtures/sample-bundle.json}
REVIEWS=${3:-../shared/corpus/reviews/neurips2025-dev.jsonl}
N=${4:-5}
scripts/setup-test-env.sh >/dev/null
cargo build --release -q -p semtrace
OUT=target/bench; mkdir -p $OUT
./target/release/semtrace bench --model "$MODEL" --bundle "$BUNDLE" --reviews "$REVIEWS" --limit "$N" \
  --pairs 128 --dump-pairs $OUT/pairs.json --json > $OUT/tract.json
target/test-env/venv/bin/python scripts/ort_bench.py "$MODEL" $OUT/pairs.json > $OUT/ort.json
target/test-env/venv/bin/python - $OUT/tract.json $OUT/ort.json <<'PY'
import json, sys
t = json.load(open(sys.argv[1])); o = json.load(open(sys.argv[2]))
print(f"| figure | value |\n|---|---|")
print(f"| model | {t['model']} ({t['sha256'][:12]}) |")
print(f"| engine, tract 0.23.9 | {t['engine_pairs_per_s']:.1f} pairs/s ({t['engine_pairs']} real pairs, batch {t['batch_size']}, 1 thread) |")
print(f"| engine, {o['engine']} | {o['pairs_per_s']:.1f} pairs/s (same pairs and batches, 1 thread) |")
for r in t["reviews"]:
    print(f"| exhaustive decoder, review of {r['words']} words | {r['seconds']:.2f} s ({r['windows']} windows, {r['pairs']} pairs) |")
print(f"| exhaustive decoder, mean of {len(t['reviews'])} reviews | {t['mean_review_s']:.2f} s |")
PY
