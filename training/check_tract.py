#!/usr/bin/env python3
"""Sanity check: run an exported ONNX model with tract 0.23 (Python bindings of the same engine the Rust
side uses) with symbolic batch/seq dims, and compare the logits with onnxruntime on several shapes.

    training/.venv/bin/python training/check_tract.py models/semtrace-nli-minilm/model.onnx
"""
import os
import sys

import numpy as np
import onnxruntime as ort
import tract

path = sys.argv[1]
print("tract", tract.version())
im = tract.onnx().load(path)
for i in range(3):
    im.set_input_fact(i, "batch,seq,i64")
model = im.into_model()
run = model.into_runnable()
so = ort.SessionOptions()
# ENABLE_ALL would run the int8 weights through integer kernels (see evaluate.py); tract computes in f32.
so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
rng = np.random.default_rng(0)
worst = 0.0
for b, s in [(1, 5), (2, 17), (4, 64), (3, 256)]:
    ids = rng.integers(1000, 30000, size=(b, s)).astype(np.int64)
    ids[:, 0] = 101
    ids[:, -1] = 102
    am = np.ones((b, s), dtype=np.int64)
    tt = np.zeros((b, s), dtype=np.int64)
    tt[:, s // 2:] = 1
    if b > 1:  # padding on the last row
        am[-1, s - s // 3:] = 0
        ids[-1, s - s // 3:] = 0
        tt[-1, s - s // 3:] = 0
    t = run.run([ids, am, tt])[0].to_numpy()
    o = sess.run(["logits"], {"input_ids": ids, "attention_mask": am, "token_type_ids": tt})[0]
    d = float(np.abs(t - o).max())
    worst = max(worst, d)
    print(f"batch {b} seq {s}: tract shape {t.shape}, max|tract-ort| {d:.4g}, argmax equal {bool((t.argmax(1) == o.argmax(1)).all())}")
print("worst", worst)

if "--dev" in sys.argv:
    # in-domain dev through tract, tokenized with the packaged tokenizer.json next to the model
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from common import MAX_LEN, encode_all, load_tokenizer, read_indomain
    from evaluate import indomain_metrics

    tok = load_tokenizer(os.path.join(os.path.dirname(os.path.abspath(path)), "tokenizer.json"), MAX_LEN)
    dev = encode_all(tok, read_indomain("../shared/data/nli/indomain/dev.jsonl"))

    class TractSess:
        def run(self, _names, feed):
            return [run.run([feed["input_ids"], feed["attention_mask"], feed["token_type_ids"]])[0].to_numpy()]

    from evaluate import run_model
    pt = run_model(TractSess(), dev, bs=16)
    po = run_model(sess, dev, bs=16)
    mt = indomain_metrics(dev, pt)
    mo = indomain_metrics(dev, po)
    agree = float((pt.argmax(1) == po.argmax(1)).mean())
    print(f"in-domain dev via tract: acc {mt['acc']:.4f} entF1 {mt['entailment_f1']:.4f} "
          f"triple {mt['triple_check']['para_gt_alter_and_near']:.4f} | onnxruntime: acc {mo['acc']:.4f} "
          f"entF1 {mo['entailment_f1']:.4f} triple {mo['triple_check']['para_gt_alter_and_near']:.4f} | "
          f"argmax agreement {agree:.4f}, max |dP(ent)| {np.abs(pt[:, 0] - po[:, 0]).max():.4f}")
