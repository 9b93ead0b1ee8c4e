#!/usr/bin/env bash
# The device command (training/gpu/README.md): from the repository root on the device machine,
#   bash training/gpu/sweep.sh            # needs target/gpu-payload (training/gpu/pack.sh), carried
# Its python3 holds torch, transformers, tokenizers and onnx; results go to $OUT.
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?OUT (the folder that comes back) is not set}"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader || true
PYTHONUNBUFFERED=1 python3 training/gpu/sweep.py --payload target/gpu-payload --out "$OUT" --deadline-s "${DEADLINE_S:-540}" "$@" 2>&1 \
  | tee "$OUT/sweep.log"
