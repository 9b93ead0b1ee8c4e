#!/usr/bin/env bash
# Build the browser detector into a directory ready to publish as static files (GitHub Pages or any
# static server, under any sub-path): the page, the wasm detector and its JS glue, and the default
# model with a manifest of SHA-256 hashes the page checks. Usage: scripts/build-site.sh [OUT]
# (default target/site). Tools: rustup's wasm32 target, wasm-bindgen-cli at the version Cargo.lock
# pins (installed by cargo under target/tools on first use).
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
  # Only the wasm-bindgen binary, lightly optimised to build fast: it post-processes one module per
  # build, in seconds either way, and CI builds it from scratch on every run.
  CARGO_PROFILE_RELEASE_OPT_LEVEL=1 CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
    cargo install -q wasm-bindgen-cli --version "$WB_VERSION" --root "$TOOLS" --force --bin wasm-bindgen
fi

say "compiling the detector for wasm32 (release)"
cargo build -q -p semtrace-detector-wasm --target wasm32-unknown-unknown --release
WASM=target/wasm32-unknown-unknown/release/semtrace_detector_wasm.wasm

STAGE="$OUT.tmp"
rm -rf "$STAGE"
mkdir -p "$STAGE/pkg" "$STAGE/model"
# The name section (2.1 MB of function names, only for devtools stack traces; panics reach the page
# through the panic hook) and the producers section are dropped: 19.7 -> 17.6 MB, 4.9 -> 4.4 MB gzipped.
"$WB" --target web --no-typescript --remove-name-section --remove-producers-section --out-dir "$STAGE/pkg" "$WASM"

BG="$STAGE/pkg/semtrace_detector_wasm_bg.wasm"
GLUE="$STAGE/pkg/semtrace_detector_wasm.js"
node scripts/wasm-smoke.mjs "$GLUE" "$BG" >/dev/null || { say "the wasm-bindgen output does not instantiate"; exit 1; }
# No wasm-opt: binaryen 132's -O3 (npm) shrinks the module to 15.7 MB but made detection 1.5x
# slower in chromium (a fast run of three ~1,000-word reviews: 10.7 s -> 16.5 s, same machine and
# hour), and before binaryen 116 (Debian bookworm ships 108) it corrupts wasm-bindgen's externref table.

cp web/index.html web/chair.html web/style.css web/app.js web/chair.js web/team.js web/pairing.js web/worker.js "$STAGE/"
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
