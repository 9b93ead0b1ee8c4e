#!/usr/bin/env python3
"""A tiny split cross-encoder with random weights, for the engine's tests only (a stand-in, not a model:
its scores mean nothing). It has the real vocabulary and the exact graph layout of a trained split model
(split_model.py, export_onnx.SplitGraph: two entry points, weight-only int8 per group of 32 rows), so
tests can check the engine's split path against onnxruntime and its segment cache against uncached runs
without a 24 MB file. Seeded: the same bytes on every run with the pinned torch.

    training/.venv/bin/python training/make_tiny_split.py tests/fixtures/split-standin segments
    training/.venv/bin/python training/make_tiny_split.py tests/fixtures/memory-standin memory
    training/.venv/bin/python training/make_tiny_split.py tests/fixtures/hybrid-standin hybrid
"""
import json
import os
import sys
import tempfile

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_onnx import export_hybrid, export_memory, export_split  # noqa: E402
from quantize_weights import main as quantize_weights  # noqa: E402
from split_model import HybridCrossEncoder, MemoryCrossEncoder, SplitCrossEncoder  # noqa: E402
from train_nli import CrossEncoder  # noqa: E402


def main():
    if len(sys.argv) != 3 or sys.argv[2] not in ("segments", "memory", "hybrid"):
        sys.exit("usage: make_tiny_split.py OUT_DIR segments|memory|hybrid")
    out, mode = sys.argv[1], sys.argv[2]
    from transformers import BertConfig, BertModel

    torch.manual_seed(7)
    # The hybrid layout needs a segment-alone layer, a memory layer and a pair layer: 3 layers.
    layers = 3 if mode == "hybrid" else 2
    cfg = BertConfig(vocab_size=30522, hidden_size=16, num_hidden_layers=layers, num_attention_heads=2,
                     intermediate_size=32, max_position_embeddings=512, type_vocab_size=2,
                     attn_implementation="eager")
    ce = CrossEncoder(BertModel(cfg, add_pooling_layer=True))
    if mode == "hybrid":
        sce = HybridCrossEncoder(ce, 2, 1).eval()
    else:
        sce = (SplitCrossEncoder if mode == "segments" else MemoryCrossEncoder)(ce, 1).eval()
    os.makedirs(out, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        fp32 = os.path.join(tmp, "model.fp32.onnx")
        {"segments": export_split, "memory": export_memory, "hybrid": export_hybrid}[mode](sce, fp32)
        quantize_weights(fp32, os.path.join(out, "model.onnx"), group=32)
    config = {"name": f"semtrace-{mode}-standin",
              "architecture": (f"random {layers}-layer split BERT ({mode} layout, "
                               + ("1 segment-alone layer, split at 2" if mode == "hybrid" else "split at 1")
                               + ", hidden 16), a test stand-in"),
              "id2label": {"0": "entailment", "1": "neutral", "2": "contradiction"},
              "label2id": {"entailment": 0, "neutral": 1, "contradiction": 2}, "max_length": 256}
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")
    print(f"{out}/model.onnx: {os.path.getsize(os.path.join(out, 'model.onnx'))} bytes")


if __name__ == "__main__":
    main()
