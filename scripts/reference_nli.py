#!/usr/bin/env python3
"""Reference side of the engine tests: Python `tokenizers` ids and onnxruntime logits.

Reads a JSON request (argv[1]) written by the Rust tests:
  {"onnx": path, "tokenizer": path, "max_length": n, "pairs": [[premise, hypothesis], ...],
   "batches": [{"rows": r, "seq": s, "input_ids": [...], "attention_mask": [...], "token_type_ids": [...]}]}
and writes (argv[2]) {"token_ids": [[...], ...], "logits": [[[...], ...], ...], "logits_unoptimised": ...}.
Batches are fed exactly as given, so batch composition (which matters for dynamically quantised
graphs) is identical on both sides. onnxruntime runs with one thread, as tract does."""
import json
import sys

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

req = json.load(open(sys.argv[1]))
tok = Tokenizer.from_file(req["tokenizer"])
tok.no_padding()
tok.enable_truncation(req["max_length"], strategy="longest_first", direction="right")
ids = [tok.encode(p, h).ids for p, h in req["pairs"]]


def run(level):
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.graph_optimization_level = level
    sess = ort.InferenceSession(req["onnx"], so, providers=["CPUExecutionProvider"])
    logits = []
    for b in req.get("batches", []):
        shape = (b["rows"], b["seq"])
        feed = {}
        for i in sess.get_inputs():
            n = i.name.lower()
            key = "input_ids" if "input_ids" in n else "attention_mask" if "attention_mask" in n else "token_type_ids"
            feed[i.name] = np.asarray(b[key], dtype=np.int64).reshape(shape)
        logits.append(sess.run(None, feed)[0].astype(float).tolist())
    return logits


# Default optimisations (what users run), and none: the spread between the two shows how
# sensitive a graph is to operator order (dynamically quantised graphs are, a lot).
json.dump({"token_ids": ids,
           "logits": run(ort.GraphOptimizationLevel.ORT_ENABLE_ALL),
           "logits_unoptimised": run(ort.GraphOptimizationLevel.ORT_DISABLE_ALL)},
          open(sys.argv[2], "w"))
