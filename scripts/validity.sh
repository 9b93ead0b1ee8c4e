#!/usr/bin/env bash
# Detection validity, the figure the project optimises first (docs/evaluation.md).
#   1. LLM-written reviews of protected copies (compliant positives) and of the originals (nulls),
#      each against its own frozen bundle: ../shared/corpus/llm-reviews/manifest.jsonl;
#   2. real human reviews of ../shared/corpus/reviews/neurips2025-dev.jsonl against bundles built
#      offline from their own papers' text (the first N_OWN_PAPERS papers; built once under
#      target/bench/own, shared with scripts/bench.sh).
# Every (window, fact) probability is cached under target/bench/validity (keyed by model, bundle and
# review), so each safeguard and each rerun reads the same scores.
#
# usage: scripts/validity.sh [MODEL ...]   (default: the embedded model)
#   SAFEGUARDS=none,top-2,hub-3 N_OWN_PAPERS=50 HUMAN=0|1 scripts/validity.sh
#   OWN=own-uniform BUILD_FLAGS="--priors uniform" scripts/validity.sh   (bundles in target/bench/$OWN)
#   OWN=own-old SEMTRACE_BIN=/path/to/older/semtrace scripts/validity.sh   (another builder)
set -euo pipefail
cd "$(dirname "$0")/.."
SAFEGUARDS=${SAFEGUARDS:-none,top-1,top-2,top-3,hub-2,hub-3,hub-4}
NOWN=${N_OWN_PAPERS:-50}
HUMAN=${HUMAN:-1}
OWN=${OWN:-own}
read -r -a BUILD_FLAGS <<< "${BUILD_FLAGS:-}"
MANIFEST=target/bench/human-manifest.jsonl
[ "$OWN" = own ] || MANIFEST=target/bench/human-manifest-$OWN.jsonl
MODELS=("$@"); [ ${#MODELS[@]} -eq 0 ] && MODELS=(default)
# SEMTRACE_BIN: another builder's binary (e.g. to compare two builders' bundles); default: this
# checkout's release build.
if [ -z "${SEMTRACE_BIN:-}" ]; then cargo build --release -q -p semtrace; fi
S=${SEMTRACE_BIN:-./target/release/semtrace}
export SEMTRACE_BIN=$S
OUT=target/bench; mkdir -p $OUT/$OWN $OUT/validity
REVIEWS=../shared/corpus/reviews/neurips2025-dev.jsonl

if [ "$HUMAN" = 1 ]; then
  scripts/own-bundles.sh "$REVIEWS" "$NOWN" $OUT/$OWN ${BUILD_FLAGS[@]+"${BUILD_FLAGS[@]}"}
  # One manifest line per built paper: all its reviews, read in place from the corpus.
  python3 - "$REVIEWS" "$NOWN" $OUT/$OWN > "$MANIFEST" <<'PY'
import json, os, sys
path, n, own = sys.argv[1], int(sys.argv[2]), sys.argv[3]
for line in list(open(path))[:n]:
    pid = json.loads(line)["id"]
    if os.path.exists(os.path.join(own, pid + ".json")):
        print(json.dumps({"corpus": os.path.abspath(path), "paper": pid, "kind": "null-human",
                          "label": 0, "bundle": os.path.abspath(os.path.join(own, pid + ".json"))}))
PY
fi

for M in "${MODELS[@]}"; do
  echo "== $M: ../shared/corpus/llm-reviews"
  $S bench --validity --model "$M" --reviews ../shared/corpus/llm-reviews/manifest.jsonl \
    --cache $OUT/validity --safeguard "$SAFEGUARDS"
  if [ "$HUMAN" = 1 ]; then
    echo "== $M: human reviews of neurips2025-dev against their own papers' bundles"
    $S bench --validity --model "$M" --reviews "$MANIFEST" \
      --cache $OUT/validity --safeguard "$SAFEGUARDS"
  fi
done
