#!/usr/bin/env bash
# Students distilled from the shipped model (issue "Detection that survives real LLM reviews", item 3),
# one command per stage, seeded and resumable (re-running a stage continues from its last.pt):
#
#   bash training/students.sh teacher           # shipped model.onnx -> training/checkpoints/shipped.pt
#   bash training/students.sh train s3 0,2,5    # keep encoder layers 0,2,5, distil (~45 min on 2 busy cores)
#   bash training/students.sh export s3         # fp32 + weight-only int8 ONNX, in-domain dev/RTE, model dir
#
# The student keeps the shipped model's embeddings, pooler, head and the listed encoder layers, then
# trains 0.6 epoch on in-domain train + verbatim-statement entailments + the decoding-distribution
# labels (train split, twice) with loss 0.3 x hard labels + 0.7 x KL to the teacher's soft labels at
# T = 2; decoding pairs keep their hard labels only (they exist because the teacher over-reads those
# windows). Selection: in-domain dev and the decoding heldout split (train_nli.py's score).
# The model directory (training/work/<name>/model: model.onnx, tokenizer.json, config.json) is what
# `semtrace bench --model` and `scripts/validity.sh` take.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=training/.venv/bin/python
[ -x "$PY" ] || { echo "training/.venv missing: run the first lines of training/run.sh" >&2; exit 2; }
stage=${1:?usage: students.sh teacher | train NAME LAYERS | export NAME}
case "$stage" in
  teacher)
    mkdir -p training/checkpoints
    $PY training/onnx_to_ckpt.py models/semtrace-nli-minilm/model.onnx training/checkpoints/shipped.pt ;;
  train)
    name=${2:?name}; layers=${3:?comma-separated encoder layers to keep}
    $PY training/train_nli.py --init training/checkpoints/shipped.pt --teacher training/checkpoints/shipped.pt \
      --student-layers "$layers" --ckpt-dir "training/checkpoints/$name" --no-rte --identity-aug --identity-frames \
      --decoding training/data/decoding/labels.jsonl --decoding-repeat 2 --epochs 0.6 --bs 32 --lr 5e-5 \
      --warmup 0.05 --freeze-word-emb --eval-every 150 --save-every 25 --log-every 25 \
      2>&1 | tee -a "training/checkpoints/$name.log" ;;
  export)
    name=${2:?name}; W=training/work/$name
    mkdir -p "$W/model"
    $PY training/export_onnx.py --ckpt "training/checkpoints/$name/best.pt" --out-dir "$W"
    $PY training/evaluate.py --model "int8=$W/model.int8.onnx" --skip-sick --out "$W/metrics.json"
    cp "$W/model.int8.onnx" "$W/model/model.onnx"
    cp models/semtrace-nli-minilm/tokenizer.json "$W/model/"
    $PY - "$W/model" "$name" <<'PY'
import json, os, sys, onnx
out, name = sys.argv[1], sys.argv[2]
cfg = json.load(open("models/semtrace-nli-minilm/config.json"))
layers = sum(1 for n in onnx.load(os.path.join(out, "model.onnx")).graph.node if n.op_type == "Softmax")
cfg["name"] = f"semtrace-nli-{name}"
cfg["architecture"] = f"BertModel ({layers} layers, hidden 384, 12 heads, vocab 30522) + tanh pooler on [CLS] + Linear(384, 3)"
json.dump(cfg, open(os.path.join(out, "config.json"), "w"), indent=2)
print(f"{out}: {layers} attention layers, {os.path.getsize(os.path.join(out, 'model.onnx'))} bytes")
PY
    ;;
  *) echo "unknown stage $stage" >&2; exit 2 ;;
esac
