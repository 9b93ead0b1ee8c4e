#!/usr/bin/env bash
# Bundles of the first N papers of a corpus JSONL, built offline from their text into OUT/<id>.json
# (reused when present; a paper whose build fails, too few facts, just has none). Shared by
# scripts/bench.sh and scripts/validity.sh.
# usage: scripts/own-bundles.sh REVIEWS.jsonl N OUT [extra `semtrace build` flags...]
set -euo pipefail
cd "$(dirname "$0")/.."
REVIEWS=$1; N=$2; OUT=$3; shift 3
S=${SEMTRACE_BIN:-./target/release/semtrace}
mkdir -p "$OUT"
python3 - "$REVIEWS" "$N" "$OUT" <<'PY'
import json, sys, os
path, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
for line in list(open(path))[:n]:
    d = json.loads(line)
    with open(os.path.join(out, d["id"] + ".md"), "w") as f:
        f.write("# " + d["title"] + "\n\n" + d["paper_text"])
PY
n=0; total=$(ls "$OUT"/*.md | wc -l)
for md in "$OUT"/*.md; do
  id=$(basename "$md" .md); n=$((n + 1))
  [ -f "$OUT/$id.json" ] && continue
  echo "building bundle $n/$total ($id)" >&2
  $S build "$md" --out "$OUT/$id" "$@" --quiet --force >/dev/null 2>&1 \
    && cp "$OUT/$id/bundle.json" "$OUT/$id.json" || true
done
