#!/usr/bin/env bash
# Full reproduction of the default model, models/semtrace-nli-minilm (stage 3c), from the repository root:
#   bash training/run.sh                  # the shipped model: stage12-graph stage3c package check sample
#   bash training/run.sh stage3c package  # only the named stages (each needs the ones before it to have run)
# Stages: stage12-graph (the stages-1-2 model's int8 graph as it shipped, e2f6f6371261, taken from git history and
# checked by SHA-256, turned back into a checkpoint: stage 3c started from it), stage3c (trained on the
# decoding-distribution pairs of training/data/decoding/, exported, int8 per 32 input rows), package (evaluate, then
# models/semtrace-nli-minilm/), check (tract = onnxruntime, SHA-256), sample (tests/fixtures/sample-bundle.json
# records the model). The stages-1-2 model itself from scratch: stage1 stage2 stage12-export (the last compares its
# export with e2f6f6371261; bf16 autocast makes a bit-exact match unlikely on another CPU). One command per stage;
# all seeded (train_nli.py --seed 13 by default) and resumable: a training stage re-run continues from the last.pt
# of its --ckpt-dir, the others are minutes and simply re-run.
# Needs Python 3.11, ../shared/data/nli (read in place, never copied) and training/data/decoding/.
# Times on 2 CPU cores: stage1 ~45 min, stage2 ~32 min, stage3c ~28 min (456 steps), the rest minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=training/.venv/bin/python
if [ ! -x "$PY" ]; then
  python3 -m venv training/.venv
  training/.venv/bin/pip install --upgrade pip
  training/.venv/bin/pip install -r training/requirements.txt
fi
OUT=models/semtrace-nli-minilm
CK=training/checkpoints
mkdir -p "$OUT" training/work "$CK/stage2-generic"
STAGES=("$@")
[ ${#STAGES[@]} -gt 0 ] || STAGES=(stage12-graph stage3c package check sample)
# The stages-1-2 int8 graph (default 2026-11-25 to 11-26) and stage 3b (the default before stage 3c) in git history.
STAGE12_COMMIT=53006e0
STAGE12_SHA=e2f6f6371261e586b7d81c0760ec77a3ed30768e16712b8cc6dc4efd740b846c
STAGE3B_COMMIT=6d354fb

# config.json's "training" text of the shipped stage 3c (package.py writes it).
TRAINING_TEXT="stage 3c of the stages-1-2 model (e2f6f6371261; see training/README.md): its int8 graph turned back \
into a checkpoint (training/onnx_to_ckpt.py), then 0.6 epoch (456 steps, batch 32, AdamW lr 5e-5, 5% warm-up, fp32, \
word embeddings frozen) over the in-domain train split, verbatim-statement entailments, the train split of \
training/data/decoding/labels.jsonl (both batches: LLM-written reviews of the 23 train-split papers of 29 train-pool \
papers against their bundles' facts, helper-annotated) x4 and pairs made by rule from it (detail swaps -> \
contradiction, generic windows x every fact -> neutral); evaluated once at the end. Quantised with one int8 scale \
per 32 input rows (quantize_weights.py --group 32). See MODEL_CARD.md, 'Stage 3c'."

run_stage() {
  case "$1" in
  stage1)
    # 2 epochs over in-domain train + RTE train; best.pt on in-domain dev
    $PY training/train_nli.py --epochs 2 --bs 32 --lr 5e-5 --freeze-word-emb --bf16 --eval-every 319 --save-every 40 \
      --log-every 10 2>&1 | tee -a "$CK/train.log"
    cp "$CK/best.pt" "$CK/stage1_best.pt" ;;
  stage2)
    # 2 more epochs on in-domain train + verbatim-statement entailments (alone and framed by generic reviewer
    # sentences) + one neutral pair per proposition with a generic review window of another paper (mined first
    # with the stage-1 model, ~3 min), lr 3e-5; best.pt on in-domain dev
    $PY training/train_nli.py --init "$CK/stage1_best.pt" --ckpt-dir "$CK/stage2-generic" \
      --no-rte --identity-aug --identity-frames --generic-neg 1 --epochs 2 --bs 32 --lr 3e-5 --warmup 0.05 \
      --freeze-word-emb --bf16 --eval-every 125 --save-every 40 --log-every 20 \
      2>&1 | tee -a "$CK/stage2-generic/train.log" ;;
  stage12-graph)
    # The stages-1-2 model as it shipped (per-channel weight-only int8), from git history, then back into a
    # checkpoint: stage 3c started from the shipped weights, not the torch ones.
    mkdir -p training/work/stage12
    git show "$STAGE12_COMMIT:models/semtrace-nli-minilm/model.onnx" > training/work/stage12/shipped.int8.onnx
    echo "$STAGE12_SHA  training/work/stage12/shipped.int8.onnx" | sha256sum -c
    $PY training/onnx_to_ckpt.py training/work/stage12/shipped.int8.onnx "$CK/stage12.pt" ;;
  stage12-export)
    # After stage1 and stage2: their export, compared with the shipped stages-1-2 graph.
    $PY training/export_onnx.py --ckpt "$CK/stage2-generic/best.pt" --out-dir training/work/stage12
    if echo "$STAGE12_SHA  training/work/stage12/model.int8.onnx" | sha256sum -c --quiet; then
      echo "stage12-export: identical to the shipped stages-1-2 graph"
    else
      echo "stage12-export: differs from the shipped stages-1-2 graph (stage12-graph uses the shipped one)"
    fi ;;
  stage3c)
    $PY training/train_nli.py --init "$CK/stage12.pt" --ckpt-dir "$CK/stage3c" \
      --no-rte --identity-aug --decoding training/data/decoding/labels.jsonl --decoding-repeat 4 --decoding-rules \
      --epochs 0.6 --bs 32 --lr 5e-5 --warmup 0.05 --freeze-word-emb --eval-every 1000 --save-every 40 --log-every 25 \
      2>&1 | tee -a training/work/stage3c-train.log
    $PY training/export_onnx.py --ckpt "$CK/stage3c/best.pt" --out-dir training/work/stage3c
    # The shipped int8: one scale per 32 input rows of each MatMul weight column (MODEL_CARD.md, "Stage 3c")
    $PY training/quantize_weights.py training/work/stage3c/model.fp32.onnx training/work/stage3c/model.int8.onnx \
      --group 32 ;;
  package)
    # onnxruntime on both graphs (in-domain dev, RTE, SICK), then int8 is shipped if within 1 point of fp32 on
    # in-domain dev accuracy (package.py), with the training histories of the three stages in metrics.json
    $PY training/evaluate.py --model fp32=training/work/stage3c/model.fp32.onnx \
      --model int8=training/work/stage3c/model.int8.onnx --bs 8 --out "$OUT/metrics.json"
    # metrics.json keeps the previous defaults' training histories and stage 3b's figures, as committed
    git show "$STAGE3B_COMMIT:models/semtrace-nli-minilm/metrics.json" > training/work/stage3b-metrics.json
    $PY training/package.py --work training/work/stage3c --out "$OUT" --ckpts stage3c="$CK/stage3c/best.pt" \
      --history-from training/work/stage3b-metrics.json --extra previous_default_stage3b=training/work/stage3b-metrics.json \
      --training "$TRAINING_TEXT" ;;
  check)
    # the shipped graph in tract 0.23 against onnxruntime (random shapes + in-domain dev accuracy)
    $PY training/check_tract.py "$OUT/model.onnx" --dev
    sha256sum "$OUT/model.onnx" ;;
  sample)
    # the sample bundle records the default model's SHA-256
    python3 tests/fixtures/make_sample_bundle.py ;;
  *)
    echo "run.sh: unknown stage '$1' (stage12-graph stage3c package check sample; stage1 stage2 stage12-export)" >&2
    exit 2 ;;
  esac
}
for st in "${STAGES[@]}"; do
  echo "== training/run.sh: $st"
  run_stage "$st"
done

# Earlier recipes, kept for the MODEL_CARD.md comparisons:
# The stages-1-2 default (2026-11-25 to 11-26) was packaged from training/work after stage2 above:
#   $PY training/export_onnx.py --ckpt training/checkpoints/stage2-generic/best.pt --out-dir training/work
#   $PY training/evaluate.py --model fp32=training/work/model.fp32.onnx --model int8=training/work/model.int8.onnx \
#     --out models/semtrace-nli-minilm/metrics.json
#   $PY training/package.py --work training/work --out models/semtrace-nli-minilm
#
# The with-SICK comparison variant (not shipped; MODEL_CARD.md "SICK variant"), when wanted:
#   $PY training/train_nli.py --sick --ckpt-dir training/checkpoints/sick --epochs 2 --bs 32 --lr 5e-5 \
#     --freeze-word-emb --bf16 --save-every 40 --log-every 10 --threads 1
#   $PY training/train_nli.py --init training/checkpoints/sick/best.pt --ckpt-dir training/checkpoints/sick/stage2 \
#     --no-rte --identity-aug --sick --epochs 1 --bs 32 --lr 2e-5 --warmup 0.05 --freeze-word-emb --bf16 \
#     --eval-every 140 --save-every 40 --threads 1
#   $PY training/export_onnx.py --ckpt training/checkpoints/sick/stage2/best.pt --out-dir training/work/sick
#   $PY training/evaluate.py --model int8=training/work/sick/model.int8.onnx --bs 8 --out training/work/sick/metrics.json
#
# Long premises, stages 3d and 3e (tried 2026-11-29, not shipped): the stage3c command above with
#   --decoding-long training/data/decoding/reviews.jsonl [--decoding-long-verbatim] (MODEL_CARD.md "Long premises").
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
# Stage 3b, the candidate committed as training/candidates/stage3b (then not yet the default; same card section;
# git checkout 0fea7a5 -- training/candidates/stage3b restores that folder):
#   $PY training/train_nli.py --init training/checkpoints/shipped.pt --ckpt-dir training/checkpoints/stage3b \
#     --no-rte --identity-aug --decoding training/data/decoding/labels.jsonl --decoding-repeat 8 --decoding-rules \
#     --epochs 0.6 --bs 32 --lr 5e-5 --warmup 0.05 --freeze-word-emb --eval-every 500 --save-every 40 --log-every 25
#   $PY training/export_onnx.py --ckpt training/checkpoints/stage3b/best.pt --out-dir training/work/stage3b
