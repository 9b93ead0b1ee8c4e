#!/usr/bin/env python3
"""Precision / recall / F1 at tau_min of ONNX models on the heldout split of the labelled decoding pairs.

Each model scores every heldout pair of training/data/decoding/labels.jsonl through onnxruntime
(evaluate.py's runner; weight-only graphs are batch-independent), so int8, fp16 and fp32 graphs of
one checkpoint are compared on the same footing (MODEL_CARD.md, "Stage 3c"). The metric is the one
train_nli.py selects checkpoints with (common.decoding_metrics).

usage: training/.venv/bin/python training/decoding_heldout.py NAME=MODEL.onnx [NAME=MODEL.onnx ...] [--tau 0.52]
"""
import argparse
import os
import sys
from pathlib import Path

import onnxruntime as ort

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import decoding_metrics, encode_all, load_tokenizer, read_decoding  # noqa: E402
from evaluate import encode_for, run_model  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
# The second batch's pairs carry this brief version (training/data/decoding/README.md).
BATCHES = {"all": lambda e: True,
           "batch 1": lambda e: "decoding-annotation/2" not in (e["brief"] or ""),
           "batch 2": lambda e: "decoding-annotation/2" in (e["brief"] or "")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="+", help="NAME=path/to/model.onnx")
    ap.add_argument("--tau", type=float, default=0.52)
    ap.add_argument("--labels", default=str(ROOT / "training/data/decoding/labels.jsonl"))
    a = ap.parse_args()
    tok = load_tokenizer(str(ROOT / "models/semtrace-nli-minilm/tokenizer.json"))
    exs = encode_all(tok, read_decoding(a.labels, "heldout"))
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    # f32 arithmetic as tract and the browser run it (evaluate.py: ENABLE_ALL fuses int8 weights into
    # integer kernels that also quantise activations).
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    for spec in a.models:
        name, sep, path = spec.partition("=")
        if not sep:
            ap.error(f"expected NAME=MODEL.onnx, got {spec!r}")
        sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        probs = run_model(sess, encode_for(sess, tok, exs))
        for sub, keep in BATCHES.items():
            idx = [i for i, e in enumerate(exs) if keep(e)]
            m = decoding_metrics([exs[i] for i in idx], probs[idx], a.tau)
            print(f"{name:<12} {sub:<8} {len(idx):>4} pairs  P {m['dec_prec']:.3f}  R {m['dec_rec']:.3f}  "
                  f"F1 {m['dec_f1']:.3f}", flush=True)


if __name__ == "__main__":
    main()
