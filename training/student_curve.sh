#!/usr/bin/env bash
# The size / speed / detection curve of the default model and its students (MODEL_CARD.md,
# "Students distilled from the default", "Split cross-encoders"): for each model directory, the engine's
# pairs/s on the same 128 real pairs (one window per pair) and on 480 (20 windows x every fact: the
# pairs the decoder scores), 1 thread and 2 threads, one run after the other on this machine, then detection
# validity on ../shared/corpus/llm-reviews/ (frozen bundles; every (window, fact) probability cached
# under target/bench/validity, so a rerun only decodes).
#   bash training/student_curve.sh models/semtrace-nli-minilm training/work/s3/model training/work/s2/model
#   SPEED_ONLY=1 bash training/student_curve.sh ...   (skip the validity runs: ~5-15 min per model)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p semtrace
S=./target/release/semtrace
[ $# -gt 0 ] || set -- models/semtrace-nli-minilm
for m in "$@"; do
  echo "== $m ($(stat -c %s "$m/model.onnx") bytes)"
  $S bench --model "$m" --bundle tests/fixtures/sample-bundle.json \
    --reviews ../shared/corpus/reviews/neurips2025-dev.jsonl --limit 1 --pairs 128 2>/dev/null | grep -E "^engine"
  # The decoder's own pairs, each window against every fact: what a split model's cache is for.
  $S bench --model "$m" --bundle tests/fixtures/sample-bundle.json --all-facts \
    --reviews ../shared/corpus/reviews/neurips2025-dev.jsonl --limit 0 --pairs 480 2>/dev/null | grep -E "^engine"
done
[ "${SPEED_ONLY:-0}" = 1 ] && exit 0
for m in "$@"; do
  echo "== $m: detection validity (llm-reviews)"
  $S bench --validity --model "$m" --reviews ../shared/corpus/llm-reviews/manifest.jsonl \
    --cache target/bench/validity --safeguard none,top-2+exclusive --secrets 0
done
