#!/usr/bin/env bash
# Benchmark (prints the performance tables of docs/performance/):
#  - engine pairs/s, tract vs onnxruntime: same graph, same pairs, same length-sorted batches,
#    1 thread and all cores, at batches of 1 (the engine's default), 8 and 16, and each engine at its best;
#  - the exhaustive decoder's wall time per real review (24 facts x all windows, all cores);
#  - fast vs exhaustive decoder: per-position and verdict agreement over real reviews, each against
#    the bundle built offline from its own paper and against the bundle of another paper (so both
#    present and absent facts occur), and the fast decoder's latency. Exhaustive reports are cached
#    under target/bench/cache, built bundles under target/bench/own (delete both when the model
#    changes: the cache key has the model's SHA, the bundles do not).
# Usage: scripts/bench.sh [MODEL_DIR] [BUNDLE] [REVIEWS.jsonl] [N_REVIEWS] [N_AGREEMENT] [N_OWN_PAPERS]
#   BUNDLE: the engine-throughput bundle; N_REVIEWS: reviews timed exhaustively; N_AGREEMENT: reviews
#   in the agreement run (default all); N_OWN_PAPERS: papers built into bundles (default all).
set -euo pipefail
cd "$(dirname "$0")/.."
MODEL=${1:-models/semtrace-nli-minilm}
BUNDLE=${2:-tests/fixtures/sample-bundle.json}
REVIEWS=${3:-../shared/corpus/reviews/neurips2025-dev.jsonl}
N=${4:-5}
NA=${5:-100000}
NOWN=${6:-100000}
THREADS=$(nproc)
scripts/setup-test-env.sh >/dev/null
cargo build --release -q -p semtrace
S=./target/release/semtrace
OUT=target/bench; mkdir -p $OUT/own $OUT/cache
# The engine default (one pair per batch) with the exhaustive reviews; then a batch sweep, since
# the engines differ in what suits them (onnxruntime dequantises the int8 weights on every run, so it
# wants large batches; tract folds them once and runs fastest on single pairs).
$S bench --model "$MODEL" --bundle "$BUNDLE" --reviews "$REVIEWS" --limit "$N" \
  --pairs 256 --dump-pairs $OUT/pairs.json --json > $OUT/tract.json
target/test-env/venv/bin/python scripts/ort_bench.py "$MODEL" $OUT/pairs.json 1 > $OUT/ort1.json
target/test-env/venv/bin/python scripts/ort_bench.py "$MODEL" $OUT/pairs.json "$THREADS" > $OUT/ortN.json
for B in 8 16; do
  $S bench --model "$MODEL" --bundle "$BUNDLE" --reviews "$REVIEWS" --limit 0 --batch-size $B \
    --pairs 256 --dump-pairs $OUT/pairs-b$B.json --json > $OUT/tract-b$B.json
  target/test-env/venv/bin/python scripts/ort_bench.py "$MODEL" $OUT/pairs-b$B.json 1 > $OUT/ort1-b$B.json
  target/test-env/venv/bin/python scripts/ort_bench.py "$MODEL" $OUT/pairs-b$B.json "$THREADS" > $OUT/ortN-b$B.json
done

# Bundles of the first N_OWN_PAPERS papers, built offline from their text (reused when present).
scripts/own-bundles.sh "$REVIEWS" "$NOWN" $OUT/own --model "$MODEL" \
  --embedder target/test-env/models/all-minilm-l6-v2
$S bench --agreement --model "$MODEL" --reviews "$REVIEWS" --limit "$NA" \
  --own-bundles $OUT/own --other-bundles --cache $OUT/cache --json > $OUT/agreement.json

target/test-env/venv/bin/python - $OUT/tract.json $OUT/ort1.json $OUT/ortN.json $OUT/agreement.json <<'PY'
import json, sys
t, o1, on, a = (json.load(open(p)) for p in sys.argv[1:5])
print(f"| figure | value |\n|---|---|")
print(f"| model | {t['model']} ({t['sha256'][:12]}) |")
print(f"| engine, tract 0.23.9, 1 thread | {t['engine_pairs_per_s']:.1f} pairs/s ({t['engine_pairs']} real pairs, batch {t['batch_size']}) |")
print(f"| engine, {o1['engine']}, 1 thread | {o1['pairs_per_s']:.1f} pairs/s (same pairs and batches) |")
print(f"| engine, tract, {t['threads']} threads | {t['engine_pairs_per_s_threads']:.1f} pairs/s |")
print(f"| engine, onnxruntime, {on['threads']} threads | {on['pairs_per_s']:.1f} pairs/s |")
sweep = {t["batch_size"]: (t, o1, on)}
for b in (8, 16):
    sweep[b] = tuple(json.load(open(f"target/bench/{n}-b{b}.json")) for n in ("tract", "ort1", "ortN"))
for b, (tb, ob1, obn) in sweep.items():
    print(f"| batch {b}: tract / onnxruntime, 1 thread; {tb['threads']} threads | {tb['engine_pairs_per_s']:.1f} / {ob1['pairs_per_s']:.1f}; {tb['engine_pairs_per_s_threads']:.1f} / {obn['pairs_per_s']:.1f} pairs/s |")
best = lambda i, k: max((v[i][k], b) for b, v in sweep.items())
for label, ti, tk, oi in (("1 thread", 0, "engine_pairs_per_s", 1), (f"{t['threads']} threads", 0, "engine_pairs_per_s_threads", 2)):
    (tv, tb), (ov, ob) = best(ti, tk), best(oi, "pairs_per_s")
    print(f"| each engine at its best batch, {label} | tract {tv:.1f} (batch {tb}) vs onnxruntime {ov:.1f} (batch {ob}): {tv / ov:.2f}x |")
for r in t["reviews"]:
    print(f"| exhaustive decoder, review of {r['words']} words | {r['seconds']:.2f} s ({r['windows']} windows, {r['pairs']} pairs, {t['threads']} threads) |")
print(f"| exhaustive decoder, mean of {len(t['reviews'])} reviews | {t['mean_review_s']:.2f} s |")
print(f"| fast decoder, {a['jobs']} review x bundle runs | mean {a['fast_mean_s']:.2f} s, median {a['fast_median_s']:.2f} s, max {a['fast_max_s']:.2f} s; {a['pairs_fast']} pairs vs {a['pairs_exhaustive']} |")
print(f"| fast vs exhaustive, positions | {a['positions_agree']}/{a['positions']} agree ({100 * a['position_agreement']:.2f}%; {a['decided_positions_exhaustive']} decided by exhaustive) |")
print(f"| fast vs exhaustive, verdicts | {a['verdicts_agree']}/{a['jobs']} agree |")
for k, v in a["by_bundle_kind"].items():
    print(f"| … against {k} papers' bundles | {v['positions_agree']}/{v['positions']} positions, {v['verdicts_agree']}/{v['runs']} verdicts |")
PY
