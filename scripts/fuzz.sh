#!/usr/bin/env bash
# Fuzz the parsers that take outside input (cargo fuzz / libFuzzer; docs/fuzzing.md).
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
# Installs a nightly toolchain and cargo-fuzz (this script only: the project builds on stable),
# seeds each target's corpus from ../shared/corpus and the test fixtures, then runs each target
# for SECONDS_PER_TARGET (default 600). Logs: target/fuzz-logs/<target>.log; a crash leaves its
# input in fuzz/artifacts/<target>/ and makes the script exit 1 (turn it into a regression test).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-600}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(bundle_json review_detect manifest pdf_load carrier_roundtrip)
shared=${SEMTRACE_SHARED:-../shared}

rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
command -v cargo-fuzz >/dev/null || cargo install --locked cargo-fuzz

corpus=fuzz/corpus
mkdir -p "$corpus"/{bundle_json,review_detect,manifest,pdf_load,carrier_roundtrip} target/fuzz-logs
seed() { # seed DIR FILE...: copy files in, named by content hash (libFuzzer's own naming)
  local dir=$1; shift
  for f in "$@"; do
    [ -f "$f" ] || continue
    cp "$f" "$dir/$(sha1sum "$f" | cut -c1-40)"
  done
}
seed "$corpus/bundle_json" tests/fixtures/sample-bundle.json "$shared"/corpus/llm-reviews/bundles/*.json
seed "$corpus/review_detect" tests/fixtures/sample-review.md
if [ -d "$shared/corpus/llm-reviews/reviews" ]; then
  mapfile -t reviews < <(find "$shared/corpus/llm-reviews/reviews" -type f | sort | head -40)
  seed "$corpus/review_detect" "${reviews[@]}"
fi
seed "$corpus/pdf_load" tests/fixtures/lineno/*.pdf tests/fixtures/lineno/paper.txt
# Real papers are large (libFuzzer mutates better on small inputs): the five smallest.
if [ -d "$shared/corpus/papers" ]; then
  mapfile -t pdfs < <(ls -S "$shared"/corpus/papers/*.pdf | tail -5)
  seed "$corpus/pdf_load" "${pdfs[@]}"
fi
printf '{"review": "a.md", "bundle": "b.json"}\n{"review": "c.md", "bundle": "b.json", "recipient": "reviewer-2"}\n' \
  > "$corpus/manifest/seed-two-lines"
[ -f "$shared/corpus/llm-reviews/manifest.jsonl" ] && seed "$corpus/manifest" "$shared/corpus/llm-reviews/manifest.jsonl"
python3 - "$corpus/carrier_roundtrip" tests/fixtures/sample-bundle.json "$shared"/corpus/llm-reviews/bundles/*.json <<'PY'
import json, sys, hashlib, pathlib
out = pathlib.Path(sys.argv[1])
for i, path in enumerate(sys.argv[2:12]):
    try:
        b = json.load(open(path))
    except (OSError, ValueError):
        continue
    facts = [f["text"] for p in b["positions"] for f in p["facts"]]
    data = bytes([i % 3]) + "\n".join(facts).encode()
    (out / hashlib.sha1(data).hexdigest()).write_bytes(data)
PY

max_len() {
  case $1 in
    pdf_load) echo 1048576 ;;
    bundle_json) echo 131072 ;;
    review_detect) echo 65536 ;;
    *) echo 16384 ;;
  esac
}
cargo +nightly fuzz build -O
status=0
for t in "${targets[@]}"; do
  echo "== $t: ${secs}s"
  mkdir -p "fuzz/artifacts/$t"
  if cargo +nightly fuzz run -O "$t" "$corpus/$t" -- \
      -max_total_time="$secs" -max_len="$(max_len "$t")" -timeout=60 -rss_limit_mb=4096 \
      -print_final_stats=1 >"target/fuzz-logs/$t.log" 2>&1; then
    echo "   no crash; $(grep -E '^stat::number_of_executed_units' "target/fuzz-logs/$t.log" | awk '{print $2}') runs, corpus $(ls "$corpus/$t" | wc -l) inputs"
  else
    status=1
    echo "   FOUND a failure: see target/fuzz-logs/$t.log and fuzz/artifacts/$t/"
    grep -E 'panicked at|ERROR: libFuzzer|SUMMARY' "target/fuzz-logs/$t.log" | head -5 || true
  fi
done
exit $status
