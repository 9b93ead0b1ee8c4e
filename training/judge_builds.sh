#!/usr/bin/env bash
# Builds every corpus PDF offline as the build_corpus test does (secret "corpus secret", learned
# priors, release binary) into training/work/judge/builds/<name>/, for the fact-rubric judges
# (issue 23, item 3): then `python3 training/judge_prep.py training/work/judge/builds 3`.
# usage: bash training/judge_builds.sh [EMBEDDER_DIR]   (default: target/test-env/models/all-minilm-l6-v2)
#   env: OUT (default training/work/judge/builds), BIN (a prebuilt binary, e.g. an older builder
#   for training/judge_ab.py; default: the release build of this checkout)
set -uo pipefail
cd "$(dirname "$0")/.."
EMB=${1:-target/test-env/models/all-minilm-l6-v2}
OUT=${OUT:-training/work/judge/builds}
mkdir -p "$OUT"
printf 'corpus secret' > "$OUT/secret"
if [ -z "${BIN:-}" ]; then
  cargo build --release -q -p semtrace || exit 1
  BIN=./target/release/semtrace
fi
for pdf in ../shared/corpus/papers/*.pdf ../shared/corpus/papers-with-reviews/*.pdf; do
  name=$(basename "$pdf" .pdf)
  "$BIN" build "$pdf" --out "$OUT/$name" --embedder "$EMB" \
    --secret-file "$OUT/secret" --quiet --force >/dev/null 2>"$OUT/$name.err"
  python3 - "$OUT/$name/report.json" "$name" $? <<'PY'
import json, sys
path, name, code = sys.argv[1], sys.argv[2], sys.argv[3]
try:
    r = json.load(open(path))
    sel = sum(1 for c in r["candidates"] if c.get("selected_rank"))
    appr = sum(1 for c in r["candidates"] if c.get("kept"))
    print(f"{name:<44} exit {code}  candidates {len(r['candidates']):>4}  approved {appr:>4}  selected {sel:>3}  {r.get('status')}")
except Exception as e:
    print(f"{name:<44} exit {code}  no report ({e.__class__.__name__})")
PY
done
