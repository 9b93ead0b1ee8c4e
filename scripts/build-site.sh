#!/usr/bin/env bash
# Build the browser detector into a directory ready to publish as static files (GitHub Pages or any
# static server, under any sub-path): the page, the wasm detector and its JS glue, and the default
# model with a manifest of SHA-256 hashes the page checks. Usage: scripts/build-site.sh [OUT]
# (default target/site). Tools: rustup's wasm32 target, wasm-bindgen-cli at the version Cargo.lock
# pins (installed by cargo under target/tools on first use), wasm-opt from Debian's binaryen if present.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-target/site}
MODEL_DIR=${SEMTRACE_SITE_MODEL:-models/semtrace-nli-minilm}
MODEL_NAME=${SEMTRACE_SITE_MODEL_NAME:-semtrace-nli-minilm}

say() { echo "[build-site] $*" >&2; }

rustup target list --installed 2>/dev/null | grep -q wasm32-unknown-unknown || rustup target add wasm32-unknown-unknown

# wasm-bindgen-cli must be exactly the wasm-bindgen version the crate links.
WB_VERSION=$(awk '/^name = "wasm-bindgen"$/{getline; gsub(/version = |"/, ""); print; exit}' Cargo.lock)
[ -n "$WB_VERSION" ] || { say "wasm-bindgen not found in Cargo.lock"; exit 1; }
TOOLS=target/tools
WB="$TOOLS/bin/wasm-bindgen"
if ! { [ -x "$WB" ] && "$WB" --version | grep -q " $WB_VERSION\$"; }; then
  say "installing wasm-bindgen-cli $WB_VERSION under $TOOLS (once; a few minutes)"
  cargo install -q wasm-bindgen-cli --version "$WB_VERSION" --root "$TOOLS" --force
fi

say "compiling the detector for wasm32 (release)"
cargo build -q -p semtrace-detector-wasm --target wasm32-unknown-unknown --release
WASM=target/wasm32-unknown-unknown/release/semtrace_detector_wasm.wasm

STAGE="$OUT.tmp"
rm -rf "$STAGE"
mkdir -p "$STAGE/pkg" "$STAGE/model"
"$WB" --target web --no-typescript --out-dir "$STAGE/pkg" "$WASM"

BG="$STAGE/pkg/semtrace_detector_wasm_bg.wasm"
GLUE="$STAGE/pkg/semtrace_detector_wasm.js"
node scripts/wasm-smoke.mjs "$GLUE" "$BG" >/dev/null || { say "the wasm-bindgen output does not instantiate"; exit 1; }
# wasm-opt before binaryen 116 (Debian bookworm ships 108) corrupts wasm-bindgen's externref table,
# so older versions are skipped; whatever runs, the result must pass the smoke test or is discarded.
WO_VERSION=$(command -v wasm-opt >/dev/null && wasm-opt --version | grep -o '[0-9]\+' | head -1 || echo 0)
if [ "${SEMTRACE_NO_WASM_OPT:-0}" = 1 ]; then
  say "wasm-opt skipped (SEMTRACE_NO_WASM_OPT=1)"
elif [ "$WO_VERSION" -lt 116 ]; then
  say "wasm-opt ${WO_VERSION/#0/not found} is older than binaryen 116 or missing: the module is not post-optimised"
elif wasm-opt -O3 --all-features "$BG" -o "$BG.opt" 2>"$STAGE/wasm-opt.log" && node scripts/wasm-smoke.mjs "$GLUE" "$BG.opt" >/dev/null 2>&1; then
  say "wasm-opt -O3 (binaryen $WO_VERSION): $(stat -c %s "$BG") -> $(stat -c %s "$BG.opt") bytes"
  mv "$BG.opt" "$BG"
else
  say "wasm-opt failed or broke the module: kept the unoptimised one"
fi
rm -f "$BG.opt" "$STAGE/wasm-opt.log"

cp web/index.html web/style.css web/app.js web/worker.js "$STAGE/"
touch "$STAGE/.nojekyll" # serve pkg/ files verbatim on GitHub Pages
for f in model.onnx tokenizer.json config.json; do
  [ -f "$MODEL_DIR/$f" ] || { say "missing $MODEL_DIR/$f"; exit 1; }
  cp "$MODEL_DIR/$f" "$STAGE/model/$f"
done
entry() { # name file
  printf '"%s": {"path": "%s", "sha256": "%s", "bytes": %s}' "$1" "$2" \
    "$(sha256sum "$STAGE/model/$2" | cut -d' ' -f1)" "$(stat -c %s "$STAGE/model/$2")"
}
cat > "$STAGE/model/manifest.json" <<JSON
{
  "name": "$MODEL_NAME",
  "files": {
    $(entry onnx model.onnx),
    $(entry tokenizer tokenizer.json),
    $(entry config config.json)
  }
}
JSON

rm -rf "$OUT"
mv "$STAGE" "$OUT"
say "site ready in $OUT ($(du -sh "$OUT" | cut -f1)); serve it with any static server, e.g."
say "  python3 -m http.server -d $OUT 8000   then open http://127.0.0.1:8000/"
