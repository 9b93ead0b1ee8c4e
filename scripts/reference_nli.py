#!/usr/bin/env python3
"""Reference side of the engine tests: Python `tokenizers` ids and onnxruntime logits.

Reads a JSON request (argv[1]) written by the Rust tests:
  {"onnx": path, "tokenizer": path, "max_length": n, "pairs": [[premise, hypothesis], ...],
   "batches": [{"rows": r, "seq": s, "input_ids": [...], "attention_mask": [...], "token_type_ids": [...]}]}
and writes (argv[2]) {"token_ids": [[...], ...], "logits": [[[...], ...], ...], "logits_unoptimised": ...}.
Batches are fed exactly as given, so batch composition (which matters for dynamically quantised
graphs) is identical on both sides. onnxruntime runs with one thread, as tract does.

A split cross-encoder (a graph with a `hidden` input; training/split_model.py) is tokenised segment by
segment (premise alone, at most 3/4 of max_length; hypothesis alone without [CLS], at most 1/4) and each
batch row runs as the engine runs it: its type-0 and type-1 tokens through the lower part apart, their
states concatenated through the upper part."""
import json
import sys

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

req = json.load(open(sys.argv[1]))
tok = Tokenizer.from_file(req["tokenizer"])
tok.no_padding()
tok.enable_truncation(req["max_length"], strategy="longest_first", direction="right")
probe = ort.InferenceSession(req["onnx"], providers=["CPUExecutionProvider"])
SPLIT = any(i.name in ("hidden", "memory") for i in probe.get_inputs())


def cap(ids, n):
    return ids[:n - 1] + [ids[-1]] if len(ids) > n else ids


def split_ids(p, h):
    prem_cap = req["max_length"] * 3 // 4
    return cap(tok.encode(p).ids, prem_cap) + cap(tok.encode(h).ids[1:], req["max_length"] - prem_cap)


ids = [split_ids(p, h) if SPLIT else tok.encode(p, h).ids for p, h in req["pairs"]]


def run_split(sess, b):
    """Rows of one batch through the two parts (the unused part's inputs get a one-element dummy).
    Segments layout: both segments through the lower part, their states concatenated into the upper;
    memory layout: the premise through the lower part, its memory and the hypothesis ids into the upper."""
    shape = (b["rows"], b["seq"])
    arrs = {k: np.asarray(b[k], dtype=np.int64).reshape(shape) for k in ("input_ids", "attention_mask", "token_type_ids")}
    inputs = {i.name: i for i in sess.get_inputs()}
    one = np.ones((1, 1), np.int64)
    memory = "memory" in inputs
    hybrid = "hyp_hidden" in inputs  # HybridGraph: the hypothesis has a lower part of its own
    if hybrid:
        planes, width = inputs["memory"].shape[1], inputs["memory"].shape[3]
        dummy = {"memory": np.zeros((1, planes, 1, width), np.float32), "memory_mask": one,
                 "hyp_hidden": np.zeros((1, 1, width), np.float32), "hyp_mask": one,
                 "hyp_input_ids": one, "hyp_attention_mask": one}
    elif memory:
        planes, width = inputs["memory"].shape[1], inputs["memory"].shape[3]
        dummy = {"memory": np.zeros((1, planes, 1, width), np.float32), "memory_mask": one, "hyp_ids": one, "hyp_mask": one}
    else:
        dummy = {"hidden": np.zeros((1, 1, inputs["hidden"].shape[2]), np.float32), "pair_mask": one}
    no_lower = dict(input_ids=one, attention_mask=one, token_type_ids=0 * one)
    out = []
    for r in range(b["rows"]):
        live = arrs["attention_mask"][r] == 1
        segs = [arrs["input_ids"][r][live & (arrs["token_type_ids"][r] == t)][None, :] for t in (0, 1)]

        def lower(seg, t):
            feed = dict(dummy, input_ids=seg, attention_mask=np.ones_like(seg), token_type_ids=np.full_like(seg, t))
            return sess.run(["lower_hidden"], feed)[0]
        if hybrid:
            hh = sess.run(["hyp_lower_hidden"], dict(dummy, **no_lower, hyp_input_ids=segs[1],
                                                     hyp_attention_mask=np.ones_like(segs[1])))[0]
            feed = dict(dummy, **no_lower, memory=lower(segs[0], 0), memory_mask=np.ones_like(segs[0]),
                        hyp_hidden=hh, hyp_mask=np.ones_like(segs[1]))
        elif memory:
            feed = dict(no_lower, memory=lower(segs[0], 0), memory_mask=np.ones_like(segs[0]), hyp_ids=segs[1],
                        hyp_mask=np.ones_like(segs[1]))
        else:
            hid = np.concatenate([lower(segs[0], 0), lower(segs[1], 1)], axis=1)
            feed = dict(no_lower, hidden=hid, pair_mask=np.ones(hid.shape[:2], np.int64))
        out.append(sess.run(["logits"], feed)[0][0].astype(float).tolist())
    return out


def run(level):
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.graph_optimization_level = level
    sess = ort.InferenceSession(req["onnx"], so, providers=["CPUExecutionProvider"])
    logits = []
    for b in req.get("batches", []):
        if SPLIT:
            logits.append(run_split(sess, b))
            continue
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
