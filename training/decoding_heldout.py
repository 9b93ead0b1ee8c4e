#!/usr/bin/env python3
"""Precision / recall / F1 at tau_min of ONNX models on the heldout split of the labelled decoding pairs.

Each model scores every heldout pair of training/data/decoding/labels.jsonl through onnxruntime, one
pair per call (premise = window, hypothesis = fact, the shipped tokenizer), so int8, fp16 and fp32
graphs of one checkpoint are compared on the same footing (MODEL_CARD.md, "Stage 3c").

usage: training/.venv/bin/python training/decoding_heldout.py NAME=MODEL.onnx [NAME=MODEL.onnx ...] [--tau 0.52]
"""
import argparse
import json
from pathlib import Path

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="+", help="NAME=path/to/model.onnx")
    ap.add_argument("--tau", type=float, default=0.52)
    ap.add_argument("--labels", default=str(ROOT / "training/data/decoding/labels.jsonl"))
    a = ap.parse_args()
    rows = [r for r in map(json.loads, open(a.labels)) if r["split"] == "heldout"]
    tok = Tokenizer.from_file(str(ROOT / "models/semtrace-nli-minilm/tokenizer.json"))
    enc = [tok.encode(r["window"], r["fact"]) for r in rows]
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    batches = {"all": lambda r: True,
               "batch 1": lambda r: "decoding-annotation/2" not in r["brief"],
               "batch 2": lambda r: "decoding-annotation/2" in r["brief"]}
    for spec in a.models:
        name, path = spec.split("=", 1)
        sess = ort.InferenceSession(path, so)
        ps = []
        for e in enc:
            feed = {k: np.array([v], dtype=np.int64) for k, v in
                    (("input_ids", e.ids), ("attention_mask", e.attention_mask), ("token_type_ids", e.type_ids))}
            logits = sess.run(None, feed)[0][0]
            p = np.exp(logits - logits.max())
            ps.append(float(p[0] / p.sum()))
        for sub, keep in batches.items():
            idx = [i for i, r in enumerate(rows) if keep(r)]
            ent = [rows[i]["label"] == "entailment" for i in idx]
            pos = [ps[i] >= a.tau for i in idx]
            tp = sum(e and p for e, p in zip(ent, pos))
            fp = sum(p and not e for e, p in zip(ent, pos))
            fn = sum(e and not p for e, p in zip(ent, pos))
            prec, rec = tp / max(tp + fp, 1), tp / max(tp + fn, 1)
            f1 = 2 * prec * rec / max(prec + rec, 1e-9)
            print(f"{name:<12} {sub:<8} {len(idx):>4} pairs  P {prec:.3f}  R {rec:.3f}  F1 {f1:.3f}", flush=True)


if __name__ == "__main__":
    main()
