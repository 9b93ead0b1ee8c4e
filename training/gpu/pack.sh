#!/usr/bin/env bash
# Makes target/gpu-payload/, what a device run of training/gpu/sweep.sh needs beyond the working tree
# (64 MiB travel in all, the tracked tree ~40 MB of it): the in-domain NLI train/dev split, gzipped
# (read from ../shared/data/nli, never committed: target/ is ignored), the backbone's config.json and
# tokenizer.json (no weights: they come from the checkpoint) and the stages-1-2 int8 graph from git
# history (commit 53006e0, SHA-256 checked), which stage 3c started from, and the initializer maps of it and
# of the default's graph (onnx_to_ckpt.py --write-map). Run from the repository root:
#   bash training/gpu/pack.sh
# then call the device tool with carry ["target/gpu-payload"] and the command `bash training/gpu/sweep.sh`.
set -euo pipefail
cd "$(dirname "$0")/../.."
P=target/gpu-payload
PY=training/.venv/bin/python
rm -rf "$P" && mkdir -p "$P/backbone"
for f in train dev; do gzip -9 -c "../shared/data/nli/indomain/$f.jsonl" > "$P/$f.jsonl.gz"; done
B=$($PY -c 'import sys; sys.path.insert(0, "training"); from common import backbone_dir; print(backbone_dir())')
cp "$B/config.json" "$B/tokenizer.json" "$P/backbone/"
git show 53006e0:models/semtrace-nli-minilm/model.onnx > "$P/stage12.int8.onnx"
echo "e2f6f6371261e586b7d81c0760ec77a3ed30768e16712b8cc6dc4efd740b846c  $P/stage12.int8.onnx" | sha256sum -c --quiet
# Initializer -> parameter maps made with this machine's exporter (the device's torch may number a probe
# export differently): onnx_to_ckpt.py --map there.
$PY training/onnx_to_ckpt.py "$P/stage12.int8.onnx" /tmp/semtrace-pack.pt --write-map "$P/stage12.map.json" >/dev/null
$PY training/onnx_to_ckpt.py models/semtrace-nli-minilm/model.onnx /tmp/semtrace-pack.pt --write-map "$P/default.map.json" >/dev/null
rm -f /tmp/semtrace-pack.pt
# What travels: tracked files and untracked ones git does not ignore, plus the payload.
tree=$(git ls-files -z --cached --others --exclude-standard | xargs -0 du -cb | tail -1 | cut -f1)
pay=$(du -cb "$P" | tail -1 | cut -f1)
echo "payload $((pay / 1000000)) MB + working tree $((tree / 1000000)) MB = $(((pay + tree) / 1000000)) MB (device limit 67 MB)"
[ $((pay + tree)) -lt 67108864 ] || { echo "pack.sh: over the device's 64 MiB" >&2; exit 1; }
