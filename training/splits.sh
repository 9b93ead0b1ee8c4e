#!/usr/bin/env bash
# Split cross-encoders distilled from the shipped model (issue "Detection that survives real LLM reviews",
# item 3: "a split one (lower layers run once per window and once per fact, upper layers per pair)"),
# one command per stage, seeded and resumable (re-running a stage continues from its last.pt):
#
#   bash training/students.sh teacher              # shipped model.onnx -> training/checkpoints/shipped.pt
#   bash training/splits.sh train memory5 5 memory  # split below layer 5, premise as memory (~35 min, 2 cores)
#   bash training/splits.sh export memory5          # fp32 + int8 (--group 32) graph, heldout, dev/RTE, model dir
#
# Modes (split_model.py): `memory`, below the split the premise does not read the hypothesis (the
# hypothesis reads the premise); `segments`, neither reads the other below the split; `hybridJ` (J = 1..4),
# the memory layout with its first J layers segment-alone, so a fact's states after them are cached too
# (`bash training/splits.sh train hybrid2 5 hybrid2`). The model starts
# from the shipped weights and trains 0.6 epoch on stage 3c's data (in-domain train, verbatim-statement
# entailments, the decoding train split x4, rule-made decoding pairs) with 0.3 x hard labels + 0.7 x KL to
# the shipped model at T = 2 (decoding pairs: hard labels only), lr 1e-4, selected on the heldout decoding
# pairs (--select decoding). The model directory (training/work/<name>/model) is what
# `semtrace bench --model` and `training/student_curve.sh` take.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=training/.venv/bin/python
[ -x "$PY" ] || { echo "training/.venv missing: run the first lines of training/run.sh" >&2; exit 2; }
stage=${1:?usage: splits.sh train NAME SPLIT_LAYER [memory|segments|hybridJ] | export NAME}
case "$stage" in
  train)
    name=${2:?name}; layer=${3:?split layer}; mode=${4:-memory}
    [ -f training/checkpoints/shipped.pt ] || bash training/students.sh teacher
    $PY training/train_nli.py --init training/checkpoints/shipped.pt --teacher training/checkpoints/shipped.pt \
      --split-layer "$layer" --split-mode "$mode" --ckpt-dir "training/checkpoints/$name" --no-rte --identity-aug \
      --decoding training/data/decoding/labels.jsonl --decoding-repeat 4 --decoding-rules --epochs 0.6 --bs 32 \
      --lr 1e-4 --warmup 0.05 --freeze-word-emb --select decoding --eval-every 114 --save-every 25 --log-every 25 \
      2>&1 | tee -a "training/checkpoints/$name.log" ;;
  export)
    name=${2:?name}; W=training/work/$name
    mkdir -p "$W/model"
    $PY training/export_onnx.py --ckpt "training/checkpoints/$name/best.pt" --out-dir "$W"
    $PY training/quantize_weights.py "$W/model.fp32.onnx" "$W/model/model.onnx" --group 32
    $PY training/decoding_heldout.py "shipped=models/semtrace-nli-minilm/model.onnx" "$name=$W/model/model.onnx"
    $PY training/evaluate.py --model "int8=$W/model/model.onnx" --skip-sick --bs 8 --out "$W/metrics.json"
    cp models/semtrace-nli-minilm/tokenizer.json "$W/model/"
    $PY - "$W/model" "$name" "training/checkpoints/$name/best.pt" <<'PY'
import json, os, sys
import torch
out, name, ckpt = sys.argv[1], sys.argv[2], sys.argv[3]
ck = torch.load(ckpt, map_location="cpu", weights_only=False)
layers = ck.get("n_layers") or 6
cfg = json.load(open("models/semtrace-nli-minilm/config.json"))
cfg["name"] = f"semtrace-nli-{name}"
cfg["architecture"] = (f"split BertModel ({layers} layers, hidden 384, {ck.get('split_mode')} split below layer "
                       f"{ck.get('split')}; training/split_model.py) + tanh pooler on [CLS] + Linear(384, 3)")
json.dump(cfg, open(os.path.join(out, "config.json"), "w"), indent=2)
print(f"{out}: {os.path.getsize(os.path.join(out, 'model.onnx'))} bytes")
PY
    ;;
  *) echo "unknown stage $stage" >&2; exit 2 ;;
esac
