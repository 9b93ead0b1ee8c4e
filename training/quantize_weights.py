#!/usr/bin/env python3
"""Weight-only int8 quantisation of an fp32 ONNX cross-encoder.

Every large float initializer that feeds a MatMul (as its weight) or a Gather (an embedding table)
is stored as int8 with one symmetric scale per output channel (per column for MatMul weights, per
row for embedding tables) and turned back into float by a DequantizeLinear node at the graph's start.

Why not onnxruntime's quantize_dynamic: it also quantises *activations* at run time with one scale
per tensor (DynamicQuantizeLinear). That makes a pair's logits depend on the other pairs in its
batch and on each engine's operator order (onnxruntime differs from itself by ~0.2 logits between
optimisation levels on such graphs), so tract, onnxruntime and the browser could never agree to
1e-3. Weight-only int8 keeps the file at ~1/4 of fp32 while every engine computes in f32.

Usage: quantize_weights.py IN.onnx OUT.onnx [--fp16 REGEX] [--group N]
--fp16 REGEX: weights whose initializer name matches are stored as float16 (a Cast back to f32 at the
graph's start) instead of int8: the mixed graphs of MODEL_CARD.md, "Stage 3c"."""
import argparse
import re

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

MIN_ELEMENTS = 4096  # small tensors (biases, LayerNorm, the 3-way head) stay f32


def group_nodes(name, w, group):
    """int8 with one scale per (group of `group` input rows, output column) for a MatMul weight
    [in, out]: Cast, Reshape to [in/group, group, out], Mul by the scales, Reshape back. Plain
    operators (no DequantizeLinear block_size, which needs opset 21), all constant: semtrace-infer's
    fold_constants turns them into one f32 weight at load (check_tract.py: tract = onnxruntime). A weight's outlying input rows then get their own scale instead of the column's."""
    rows, cols = w.shape
    g = w.reshape(rows // group, group, cols)
    amax = np.abs(g).max(axis=1, keepdims=True)
    scale = np.where(amax > 0, amax / 127.0, 1.0).astype(np.float32)
    q = np.clip(np.rint(g / scale), -127, 127).astype(np.int8).reshape(rows, cols)
    inits = [numpy_helper.from_array(q, f"{name}__q"), numpy_helper.from_array(scale, f"{name}__gscale"),
             numpy_helper.from_array(np.array([rows // group, group, cols], dtype=np.int64), f"{name}__gshape"),
             numpy_helper.from_array(np.array([rows, cols], dtype=np.int64), f"{name}__shape")]
    nodes = [helper.make_node("Cast", [f"{name}__q"], [f"{name}__f"], name=f"{name}__cast", to=TensorProto.FLOAT),
             helper.make_node("Reshape", [f"{name}__f", f"{name}__gshape"], [f"{name}__g"], name=f"{name}__reshape_g"),
             helper.make_node("Mul", [f"{name}__g", f"{name}__gscale"], [f"{name}__gs"], name=f"{name}__scale_g"),
             helper.make_node("Reshape", [f"{name}__gs", f"{name}__shape"], [name], name=f"{name}__reshape")]
    return inits, nodes


def int8_group(path):
    """N of `--group N`, read back from a graph this script wrote (its `__gshape` constants hold
    [rows/N, N, cols]); 0 for per-channel int8. package.py records it in config.json."""
    for t in onnx.load(path).graph.initializer:
        if t.name.endswith("__gshape"):
            return int(numpy_helper.to_array(t)[1])
    return 0


def main(src, dst, fp16=None, group=None):
    model = onnx.load(src)
    g = model.graph
    inits = {i.name: i for i in g.initializer}
    targets = {}  # initializer name -> axis of its per-channel scale
    for n in g.node:
        if n.op_type == "MatMul" and len(n.input) > 1 and n.input[1] in inits:
            targets[n.input[1]] = 1
        elif n.op_type == "Gather" and n.input[0] in inits:
            targets[n.input[0]] = 0
    new_nodes, kept_f32, n_fp16, n_group = [], 0, 0, 0
    for name, axis in targets.items():
        w = numpy_helper.to_array(inits[name])
        if w.dtype != np.float32 or w.ndim != 2 or w.size < MIN_ELEMENTS:
            kept_f32 += 1
            continue
        if fp16 and re.search(fp16, name):
            g.initializer.remove(inits[name])
            g.initializer.append(numpy_helper.from_array(w.astype(np.float16), f"{name}__h"))
            new_nodes.append(helper.make_node("Cast", [f"{name}__h"], [name], name=f"{name}__cast",
                                              to=TensorProto.FLOAT))
            n_fp16 += 1
            continue
        if group and axis == 1 and w.shape[0] % group == 0:
            extra_inits, extra_nodes = group_nodes(name, w, group)
            g.initializer.remove(inits[name])
            g.initializer.extend(extra_inits)
            new_nodes.extend(extra_nodes)
            n_group += 1
            continue
        amax = np.abs(w).max(axis=1 - axis)
        scale = np.where(amax > 0, amax / 127.0, 1.0).astype(np.float32)
        shape = (1, -1) if axis == 1 else (-1, 1)
        q = np.clip(np.rint(w / scale.reshape(shape)), -127, 127).astype(np.int8)
        g.initializer.remove(inits[name])
        g.initializer.extend([
            numpy_helper.from_array(q, f"{name}__q"),
            numpy_helper.from_array(scale, f"{name}__scale"),
            numpy_helper.from_array(np.zeros(scale.shape, dtype=np.int8), f"{name}__zp"),
        ])
        new_nodes.append(helper.make_node("DequantizeLinear", [f"{name}__q", f"{name}__scale", f"{name}__zp"], [name],
                                          name=f"{name}__dequant", axis=axis))
    # Dequantisation first so every consumer sees its input defined (topological order).
    nodes = new_nodes + list(g.node)
    del g.node[:]
    g.node.extend(nodes)
    if max(o.version for o in model.opset_import if o.domain in ("", "ai.onnx")) < 13:
        raise SystemExit("per-axis DequantizeLinear needs opset >= 13")
    onnx.checker.check_model(model)
    onnx.save(model, dst)
    fp16_note = f", stored {n_fp16} as fp16" if n_fp16 else ""
    n_int8 = sum(n.op_type == "DequantizeLinear" for n in new_nodes)
    group_note = f", {n_group} to int8 per group of {group} rows" if n_group else ""
    print(f"quantised {n_int8} weight tensors to int8 (per-channel){group_note}{fp16_note}, "
          f"kept {kept_f32} small ones f32 -> {dst}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src", help="fp32 ONNX graph")
    ap.add_argument("dst", help="output graph")
    ap.add_argument("--fp16", default=None, metavar="REGEX",
                    help="store weights whose initializer name matches as fp16 instead of int8")
    ap.add_argument("--group", type=int, default=None, metavar="N",
                    help="MatMul weights: one int8 scale per N input rows and output column (not per column)")
    a = ap.parse_args()
    if a.group is not None and a.group < 1:
        ap.error(f"--group must be a positive number of rows, not {a.group}")
    main(a.src, a.dst, a.fp16, a.group)
