#!/usr/bin/env bash
# Full reproduction of models/semtrace-nli-minilm from the repository root:
#   bash training/run.sh
# Needs Python 3.11 and the shared data at ../shared/data/nli (read in place, never copied).
# Resumable: re-running continues from training/checkpoints/last.pt.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=training/.venv/bin/python
if [ ! -x "$PY" ]; then
  python3 -m venv training/.venv
  training/.venv/bin/pip install --upgrade pip
  training/.venv/bin/pip install -r training/requirements.txt
fi
OUT=models/semtrace-nli-minilm
mkdir -p "$OUT" training/work

mkdir -p training/checkpoints/stage2-generic
# 1a. stage 1: 2 epochs over in-domain train + RTE train (~45 min on 2 busy CPU cores); best.pt on in-domain dev
$PY training/train_nli.py --epochs 2 --bs 32 --lr 5e-5 --freeze-word-emb --bf16 --eval-every 319 --save-every 40 \
  --log-every 10 2>&1 | tee -a training/checkpoints/train.log
cp training/checkpoints/best.pt training/checkpoints/stage1_best.pt
# 1b. stage 2: 2 more epochs on in-domain train + verbatim-statement entailments (alone and framed by generic reviewer
#     sentences) + one neutral pair per proposition with a generic review window of another paper (mined first with
#     the stage-1 model, ~3 min), lr 3e-5 (~32 min on 2 idle cores); best.pt on in-domain dev
$PY training/train_nli.py --init training/checkpoints/stage1_best.pt --ckpt-dir training/checkpoints/stage2-generic \
  --no-rte --identity-aug --identity-frames --generic-neg 1 --epochs 2 --bs 32 --lr 3e-5 --warmup 0.05 \
  --freeze-word-emb --bf16 --eval-every 125 --save-every 40 --log-every 20 \
  2>&1 | tee -a training/checkpoints/stage2-generic/train.log
# 2. export fp32 ONNX (opset 14, dynamic batch/seq) and weight-only int8 (quantize_weights.py)
$PY training/export_onnx.py --ckpt training/checkpoints/stage2-generic/best.pt --out-dir training/work

# 3. evaluate both with onnxruntime
$PY training/evaluate.py --model fp32=training/work/model.fp32.onnx --model int8=training/work/model.int8.onnx \
  --out "$OUT/metrics.json"
# (the per-tensor int8 comparison in MODEL_CARD.md was made on the previous model: export_onnx.py --per-tensor into
#  training/work/stage2 + evaluate.py --out training/work/stage2/metrics.json)

# 4. package (int8 is shipped if within 1 point of fp32 on in-domain dev accuracy; see package.py)
$PY training/package.py --work training/work --out "$OUT"

# 5. run the shipped graph in tract 0.23 and compare with onnxruntime (random shapes + in-domain dev accuracy)
$PY training/check_tract.py "$OUT/model.onnx" --dev
sha256sum "$OUT/model.onnx"

# The with-SICK comparison variant (not shipped; MODEL_CARD.md "SICK variant"), when wanted:
#   $PY training/train_nli.py --sick --ckpt-dir training/checkpoints/sick --epochs 2 --bs 32 --lr 5e-5 \
#     --freeze-word-emb --bf16 --save-every 40 --log-every 10 --threads 1
#   $PY training/train_nli.py --init training/checkpoints/sick/best.pt --ckpt-dir training/checkpoints/sick/stage2 \
#     --no-rte --identity-aug --sick --epochs 1 --bs 32 --lr 2e-5 --warmup 0.05 --freeze-word-emb --bf16 \
#     --eval-every 140 --save-every 40 --threads 1
#   $PY training/export_onnx.py --ckpt training/checkpoints/sick/stage2/best.pt --out-dir training/work/sick
#   $PY training/evaluate.py --model int8=training/work/sick/model.int8.onnx --bs 8 --out training/work/sick/metrics.json
#
# Tried, not shipped (MODEL_CARD.md "Detail-swap contradictions", "Longer stage 2", "Previous models"):
#   The previous shipped stage 2 (2 epochs with framed verbatim statements, no generic-window negatives):
#   $PY training/train_nli.py --init training/checkpoints/stage1_best.pt --ckpt-dir training/checkpoints/stage2-frames \
#     --no-rte --identity-aug --identity-frames --epochs 2 --bs 32 --lr 3e-5 --warmup 0.05 --freeze-word-emb --bf16 \
#     --eval-every 125 --save-every 40 --log-every 20
#   $PY training/train_nli.py --init training/checkpoints/stage1_best.pt --ckpt-dir training/checkpoints/stage2-swap \
#     --no-rte --identity-aug --swap-aug --epochs 1 --bs 32 --lr 2e-5 --warmup 0.05 --freeze-word-emb --bf16 \
#     --eval-every 105 --save-every 40 --log-every 20
#   $PY training/train_nli.py --init training/checkpoints/stage1_best.pt --ckpt-dir training/checkpoints/stage2-e2 \
#     --no-rte --identity-aug --epochs 2 --bs 32 --lr 3e-5 --warmup 0.05 --freeze-word-emb --bf16 \
#     --eval-every 125 --save-every 40 --log-every 20
#   The previous shipped stage 2 (1 epoch, lr 2e-5, no frames; MODEL_CARD "Previous model"):
#   $PY training/train_nli.py --init training/checkpoints/stage1_best.pt --ckpt-dir training/checkpoints/stage2 --no-rte \
#     --identity-aug --epochs 1 --bs 32 --lr 2e-5 --warmup 0.05 --freeze-word-emb --bf16 --eval-every 140 --save-every 40
#
# A third stage from the shipped weights (tried 2026-11-25, not shipped; MODEL_CARD.md "A third stage"):
#   $PY training/onnx_to_ckpt.py models/semtrace-nli-minilm/model.onnx training/checkpoints/shipped.pt
#   $PY training/train_nli.py --init training/checkpoints/shipped.pt --ckpt-dir training/checkpoints/s3b \
#     --no-rte --identity-aug --identity-frames --generic-neg 1 --natural-ent-repeat 3 --epochs 1 --bs 32 \
#     --lr 1e-5 --warmup 0.05 --bf16 --eval-every 75 --save-every 25 --log-every 25 --threads 1
#   (the same without --natural-ent-repeat 3 into training/checkpoints/s3a, concurrently)
#   $PY training/soup.py training/checkpoints/soup.pt training/checkpoints/s3a/best.pt training/checkpoints/s3b/best.pt
#
# Stage 3 on the decoding distribution (tried 2026-11-26, not shipped; MODEL_CARD.md "Stage 3 on the decoding
# distribution", where the export and validity commands are):
#   $PY training/onnx_to_ckpt.py models/semtrace-nli-minilm/model.onnx training/checkpoints/shipped.pt
#   $PY training/train_nli.py --init training/checkpoints/shipped.pt --ckpt-dir training/checkpoints/stage3 \
#     --no-rte --identity-aug --decoding training/data/decoding/labels.jsonl --decoding-repeat 3 --epochs 0.7 --bs 32 \
#     --lr 3e-5 --warmup 0.05 --freeze-word-emb --eval-init --eval-every 175 --save-every 40 --log-every 25
# Stage 3b, the candidate committed as training/candidates/stage3b (not yet the default; same card section):
#   $PY training/train_nli.py --init training/checkpoints/shipped.pt --ckpt-dir training/checkpoints/stage3b \
#     --no-rte --identity-aug --decoding training/data/decoding/labels.jsonl --decoding-repeat 8 --decoding-rules \
#     --epochs 0.6 --bs 32 --lr 5e-5 --warmup 0.05 --freeze-word-emb --eval-every 500 --save-every 40 --log-every 25
#   $PY training/export_onnx.py --ckpt training/checkpoints/stage3b/best.pt --out-dir training/work/stage3b
