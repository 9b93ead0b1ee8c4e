#!/usr/bin/env python3
"""Turn an exported cross-encoder ONNX graph (fp32 or weight-only int8) back into a training checkpoint.

    training/.venv/bin/python training/onnx_to_ckpt.py models/semtrace-nli-minilm/model.onnx OUT.pt

Why: a further training stage can then start from the shipped weights without the 80 minutes of stages 1 and 2
(checkpoints are not committed). int8 weights come back dequantised (q * scale), i.e. exactly the values every
engine computes with.

How: the backbone is exported once more with export_onnx.py's exporter after filling every parameter with a
distinct random tensor; each initializer of that export is then matched to the parameter it holds (itself or its
transpose). The exporter names initializers deterministically, so the same names in the given graph hold the
trained values. The result is checked by running both on a few pairs.

    onnx_to_ckpt.py GRAPH OUT.pt --write-map MAP.json   # also writes the initializer -> parameter map
    onnx_to_ckpt.py GRAPH OUT.pt --map MAP.json         # uses that map instead of exporting a probe

The exporter's initializer names are counters of its tracer, so another torch version may number them
differently: the device sweep (training/gpu/) carries a map made here and never exports a probe there.
"""
import json
import os
import sys
import tempfile

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_onnx import PlainBert, export_fp32  # noqa: E402
from train_nli import build_model  # noqa: E402


def float_initializers(path):
    """name -> float32 array; int8 weights of quantize_weights.py (per channel or per group of input rows)
    and its fp16 weights are turned back to f32 under their original name."""
    import onnx
    from onnx import numpy_helper

    g = onnx.load(path).graph
    arrays = {i.name: numpy_helper.to_array(i) for i in g.initializer}
    out = {}
    for name, a in arrays.items():
        if name.endswith("__q") and name[:-3] + "__gscale" in arrays:
            # quantize_weights.py --group N (the shipped stage-3c graph): one scale per N input rows
            base = name[:-3]
            rows, cols = a.shape
            gs = arrays[base + "__gscale"]
            out[base] = (a.astype(np.float32).reshape(gs.shape[0], rows // gs.shape[0], cols) * gs).reshape(rows, cols)
        elif name.endswith("__q"):
            base = name[:-3]
            scale = arrays[base + "__scale"]
            axis = next(n for n in g.node if n.op_type == "DequantizeLinear" and n.output[0] == base).attribute
            ax = next(x.i for x in axis if x.name == "axis")
            shape = (1, -1) if ax == 1 else (-1, 1)
            out[base] = a.astype(np.float32) * scale.reshape(shape)
        elif name.endswith("__h"):
            out[name[:-3]] = a.astype(np.float32)  # --fp16 kept weights (Cast to f32 in the graph)
        elif not (name.endswith(("__scale", "__zp", "__gscale", "__gshape", "__shape"))):
            out[name] = a
    return out


def probe_map(model, params):
    """initializer name -> (parameter name, transposed), by exporting the model with distinct random weights."""
    with torch.no_grad():
        for p in params.values():
            p.copy_(torch.randn_like(p))
    with tempfile.TemporaryDirectory() as tmp:
        probe = os.path.join(tmp, "probe.onnx")
        export_fp32(model, probe)
        marked = float_initializers(probe)
    out = {}
    for name, arr in marked.items():
        t = torch.from_numpy(np.ascontiguousarray(arr))
        hit = None
        for pn, p in params.items():
            if p.shape == t.shape and torch.equal(p.detach(), t):
                hit = (pn, False)
            elif p.dim() == 2 and p.shape[::-1] == t.shape and torch.equal(p.detach().T, t):
                hit = (pn, True)
            if hit:
                break
        if hit is None:
            continue  # a constant of the graph (position ids, mask scale), not a parameter
        out[name] = hit
    return out, set(marked)


def main(src, dst, map_in=None, map_out=None):
    torch.manual_seed(0)
    model = build_model().eval()
    params = dict(model.named_parameters())
    trained = float_initializers(src)
    if map_in:
        names = json.load(open(map_in))
        mapping = {k: tuple(v) for k, v in names.items()}
        if not set(mapping) <= set(trained):
            sys.exit(f"{src} lacks initializers of {map_in}: not the graph the map was made for")
    else:
        mapping, marked = probe_map(model, params)
        if marked != set(trained):
            sys.exit(f"{src} does not have this exporter's initializers "
                     f"({len(marked ^ set(trained))} names differ): re-export it with export_onnx.py")
    if map_out:
        json.dump({k: list(v) for k, v in sorted(mapping.items())}, open(map_out, "w"), indent=0)
    state = {n: p.detach().clone() for n, p in params.items()}
    filled = set()
    for name, (pn, transposed) in mapping.items():
        v = torch.from_numpy(np.ascontiguousarray(trained[name]))
        state[pn] = (v.T if transposed else v).contiguous().clone()
        filled.add(pn)
    missing = sorted(set(params) - filled)
    if missing:
        sys.exit(f"no initializer holds these parameters: {missing}")
    model.load_state_dict(state, strict=False)

    # Check: the rebuilt model reproduces the graph's logits on a few pairs.
    import onnxruntime as ort

    ids = torch.tensor([[101, 2023, 2003, 1037, 3231, 102, 2009, 2003, 102], [101, 2178, 102, 2028, 102, 0, 0, 0, 0]])
    am = (ids != 0).long()
    tt = torch.tensor([[0, 0, 0, 0, 0, 0, 1, 1, 1], [0, 0, 0, 1, 1, 0, 0, 0, 0]])
    with torch.no_grad():
        ref = PlainBert(model)(ids, am, tt).numpy()
    so = ort.SessionOptions()
    # ENABLE_ALL would fuse the int8 DequantizeLinear+MatMul into integer kernels (activations quantised too)
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    s = ort.InferenceSession(src, so, providers=["CPUExecutionProvider"])
    got = s.run(["logits"], {"input_ids": ids.numpy(), "attention_mask": am.numpy(), "token_type_ids": tt.numpy()})[0]
    diff = float(np.abs(ref - got).max())
    print(f"{len(filled)} parameters restored from {src}; max|torch - onnx| = {diff:.3g}")
    if diff > 1e-3:
        sys.exit("the rebuilt model does not reproduce the graph")
    tmp = dst + ".tmp"
    torch.save({"model": model.state_dict(), "state": {"step": 0, "source": os.path.basename(src)}}, tmp)
    os.replace(tmp, dst)
    print(f"wrote {dst}")


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("graph")
    ap.add_argument("out")
    ap.add_argument("--map", default=None, help="initializer -> parameter map from --write-map (no probe export)")
    ap.add_argument("--write-map", default=None, help="also write the initializer -> parameter map here")
    a = ap.parse_args()
    main(a.graph, a.out, a.map, a.write_map)
