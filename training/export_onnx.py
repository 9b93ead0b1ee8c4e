#!/usr/bin/env python3
"""Export the selected checkpoint to ONNX (fp32) and weight-only int8 (quantize_weights.py).

    training/.venv/bin/python training/export_onnx.py --ckpt training/checkpoints/best.pt --out-dir training/work

Writes <out-dir>/model.fp32.onnx and <out-dir>/model.int8.onnx (weight-only int8, per-channel scales). Inputs input_ids / attention_mask /
token_type_ids (int64, [batch, seq], both dynamic); output logits [batch, 3]. Legacy TorchScript exporter
(dynamo=False), opset 14 (LayerNorm decomposed into primitive ops, eager attention, no fused ops).
"""
import argparse
import collections
import math
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_nli import build_model, load_checkpoint_model  # noqa: E402
from split_model import (HybridCrossEncoder, HybridHypothesis, HybridUpper, Lower,  # noqa: E402
                         MemoryCrossEncoder, MemoryLower, MemoryUpper, SplitCrossEncoder, Upper)


class PlainBert(torch.nn.Module):
    """Same weights and math as the trained CrossEncoder, written out with plain ops so that the exported graph
    has a simple additive attention mask (transformers' own mask builder traces into a gather-heavy subgraph
    that tract cannot analyse)."""

    def __init__(self, ce):
        super().__init__()
        self.ce = ce
        cfg = ce.bert.config
        self.h = cfg.num_attention_heads
        self.d = cfg.hidden_size // cfg.num_attention_heads

    def forward(self, input_ids, attention_mask, token_type_ids):
        bert = self.ce.bert
        emb = bert.embeddings
        seq = input_ids.shape[1]
        pos = emb.position_ids[:, :seq]
        x = emb.word_embeddings(input_ids) + emb.position_embeddings(pos) + emb.token_type_embeddings(token_type_ids)
        x = emb.LayerNorm(x)
        mask = (1.0 - attention_mask.unsqueeze(1).unsqueeze(2).to(x.dtype)) * -10000.0  # [b,1,1,s]
        for layer in bert.encoder.layer:
            sa = layer.attention.self

            def heads(t):
                return t.view(t.shape[0], -1, self.h, self.d).transpose(1, 2)  # [b,h,s,d]

            q, k, v = heads(sa.query(x)), heads(sa.key(x)), heads(sa.value(x))
            scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.d) + mask
            ctx = torch.matmul(torch.softmax(scores, dim=-1), v).transpose(1, 2)
            ctx = ctx.reshape(ctx.shape[0], -1, self.h * self.d)
            ao = layer.attention.output
            x = ao.LayerNorm(ao.dense(ctx) + x)
            inter = torch.nn.functional.gelu(layer.intermediate.dense(x))
            x = layer.output.LayerNorm(layer.output.dense(inter) + x)
        pooled = torch.tanh(bert.pooler.dense(x[:, 0]))
        return self.ce.classifier(pooled)


SAMPLE_IDS = [[101, 2023, 2003, 1037, 3231, 102, 2009, 2003, 102], [101, 2178, 102, 2028, 102, 0, 0, 0, 0]]
SAMPLE_TT = [[0, 0, 0, 0, 0, 0, 1, 1, 1], [0, 0, 0, 1, 1, 0, 0, 0, 0]]


def export_fp32(model, fp32, opset=14):
    """Export the CrossEncoder as plain-op fp32 ONNX; returns the sample feed and the torch logits on it."""
    plain = PlainBert(model).eval()
    ids = torch.tensor(SAMPLE_IDS)
    am = (ids != 0).long()
    tt = torch.tensor(SAMPLE_TT)
    with torch.no_grad():
        ref = model(ids, am, tt).numpy()
        ref2 = plain(ids, am, tt).numpy()
        print(f"max|plain-transformers| {np.abs(ref - ref2).max():.3g}")
        assert np.abs(ref - ref2).max() < 1e-4
        torch.onnx.export(
            plain, (ids, am, tt), fp32, dynamo=False, do_constant_folding=True, opset_version=opset,
            input_names=["input_ids", "attention_mask", "token_type_ids"], output_names=["logits"],
            dynamic_axes={"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"},
                          "token_type_ids": {0: "batch", 1: "seq"}, "logits": {0: "batch"}})
    feed = {"input_ids": ids.numpy(), "attention_mask": am.numpy(), "token_type_ids": tt.numpy()}
    return feed, ref


class SplitGraph(torch.nn.Module):
    """A split cross-encoder (split_model.py) as one graph with two entry points, so that it stays one
    file with one SHA-256: `input_ids`/`attention_mask`/`token_type_ids` of single segments ->
    `lower_hidden`, and `hidden`/`pair_mask` of concatenated segments -> `logits`. The engine runs each
    part on its own (its inputs and outputs selected by name); the parts share no node."""

    def __init__(self, sce):
        super().__init__()
        self.lower, self.upper = Lower(sce), Upper(sce)

    def forward(self, input_ids, attention_mask, token_type_ids, hidden, pair_mask):
        return self.lower(input_ids, attention_mask, token_type_ids), self.upper(hidden, pair_mask)


def export_split(sce, path, opset=14):
    """Export a SplitCrossEncoder; returns the feed of both parts and the packed torch logits they must give."""
    graph = SplitGraph(sce).eval()
    ids = torch.tensor(SAMPLE_IDS)
    tt = torch.tensor(SAMPLE_TT)
    am = (ids != 0).long()
    with torch.no_grad():
        ref = sce(ids, am, tt).numpy()
        # row 0's premise segment through the lower part, and both rows' segments concatenated
        seg = ids[:, :6]
        hid = torch.cat([graph.lower(ids[:1, :6], am[:1, :6], tt[:1, :6]), graph.lower(ids[:1, 6:], am[:1, 6:], tt[:1, 6:])], 1)
        hid = torch.cat([hid, torch.cat([graph.lower(ids[1:, :3], am[1:, :3], tt[1:, :3]),
                                         graph.lower(ids[1:, 3:5], am[1:, 3:5], tt[1:, 3:5]),
                                         torch.zeros(1, 4, hid.shape[2])], 1)], 0)
        pm = am.clone()
        sep = graph.upper(hid, pm).numpy()
        print(f"max|packed-separate| {np.abs(ref - sep).max():.3g}")
        assert np.abs(ref - sep).max() < 1e-4
        torch.onnx.export(
            graph, (seg, am[:, :6], tt[:, :6], hid, pm), path, dynamo=False, do_constant_folding=True,
            opset_version=opset,
            input_names=["input_ids", "attention_mask", "token_type_ids", "hidden", "pair_mask"],
            output_names=["lower_hidden", "logits"],
            dynamic_axes={"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"},
                          "token_type_ids": {0: "batch", 1: "seq"}, "lower_hidden": {0: "batch", 1: "seq"},
                          "hidden": {0: "pairs", 1: "pair_seq"}, "pair_mask": {0: "pairs", 1: "pair_seq"},
                          "logits": {0: "pairs"}})
    feed = {"input_ids": seg.numpy(), "attention_mask": am[:, :6].numpy(), "token_type_ids": tt[:, :6].numpy(),
            "hidden": hid.numpy(), "pair_mask": pm.numpy()}
    return feed, ref


def _memory_sample(model, lower):
    """The packed sample rows' torch logits, and the same rows apart (row 0: premise of 6 tokens,
    hypothesis of 3; row 1: premise of 3, hypothesis of 2, both padded) with the premises' memory."""
    ids = torch.tensor(SAMPLE_IDS)
    ref = model(ids, (ids != 0).long(), torch.tensor(SAMPLE_TT)).numpy()
    prem = torch.tensor([[101, 2023, 2003, 1037, 3231, 102], [101, 2178, 102, 0, 0, 0]])
    pm = (prem != 0).long()
    hyp = torch.tensor([[2009, 2003, 102], [2028, 102, 0]])
    return ref, prem, pm, lower(prem, pm, torch.zeros_like(prem)), hyp, (hyp != 0).long()


class HybridGraph(torch.nn.Module):
    """A HybridCrossEncoder (split_model.py) as one graph with three entry points: a premise's
    `input_ids`/`attention_mask`/`token_type_ids` -> `lower_hidden` (its memory), a hypothesis's
    `hyp_input_ids`/`hyp_attention_mask` -> `hyp_lower_hidden`, and `memory`/`memory_mask`/`hyp_hidden`/
    `hyp_mask` -> `logits`."""

    def __init__(self, hce):
        super().__init__()
        self.lower, self.hyp, self.upper = MemoryLower(hce), HybridHypothesis(hce), HybridUpper(hce)

    def forward(self, input_ids, attention_mask, token_type_ids, hyp_input_ids, hyp_attention_mask, memory,
                memory_mask, hyp_hidden, hyp_mask):
        return (self.lower(input_ids, attention_mask, token_type_ids), self.hyp(hyp_input_ids, hyp_attention_mask),
                self.upper(memory, memory_mask, hyp_hidden, hyp_mask))


def export_hybrid(hce, path, opset=14):
    """Export a HybridCrossEncoder; returns a feed of the three parts and the packed torch logits they must
    give (the rows of export_memory)."""
    graph = HybridGraph(hce).eval()
    with torch.no_grad():
        ref, prem, pm, mem, hyp, hm = _memory_sample(hce, graph.lower)
        hh = graph.hyp(hyp, hm)
        sep = graph.upper(mem, pm, hh, hm).numpy()
        print(f"max|packed-separate| {np.abs(ref - sep).max():.3g}")
        assert np.abs(ref - sep).max() < 1e-4
        torch.onnx.export(
            graph, (prem, pm, torch.zeros_like(prem), hyp, hm, mem, pm, hh, hm), path, dynamo=False,
            do_constant_folding=True, opset_version=opset,
            input_names=["input_ids", "attention_mask", "token_type_ids", "hyp_input_ids", "hyp_attention_mask",
                         "memory", "memory_mask", "hyp_hidden", "hyp_mask"],
            output_names=["lower_hidden", "hyp_lower_hidden", "logits"],
            dynamic_axes={"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"},
                          "token_type_ids": {0: "batch", 1: "seq"}, "lower_hidden": {0: "batch", 2: "seq"},
                          "hyp_input_ids": {0: "hyps", 1: "hyp_len"}, "hyp_attention_mask": {0: "hyps", 1: "hyp_len"},
                          "hyp_lower_hidden": {0: "hyps", 1: "hyp_len"},
                          "memory": {0: "pairs", 2: "memory_seq"}, "memory_mask": {0: "pairs", 1: "memory_seq"},
                          "hyp_hidden": {0: "pairs", 1: "hyp_seq"}, "hyp_mask": {0: "pairs", 1: "hyp_seq"},
                          "logits": {0: "pairs"}})
    feed = {"input_ids": prem.numpy(), "attention_mask": pm.numpy(), "token_type_ids": np.zeros_like(prem.numpy()),
            "hyp_input_ids": hyp.numpy(), "hyp_attention_mask": hm.numpy(),
            "memory": mem.numpy(), "memory_mask": pm.numpy(), "hyp_hidden": hh.numpy(), "hyp_mask": hm.numpy()}
    return feed, ref


class MemoryGraph(torch.nn.Module):
    """A MemoryCrossEncoder (split_model.py) as one graph with two entry points: a premise's
    `input_ids`/`attention_mask`/`token_type_ids` -> `lower_hidden` (its memory), and `memory`/
    `memory_mask`/`hyp_ids`/`hyp_mask` -> `logits`."""

    def __init__(self, mce):
        super().__init__()
        self.lower, self.upper = MemoryLower(mce), MemoryUpper(mce)

    def forward(self, input_ids, attention_mask, token_type_ids, memory, memory_mask, hyp_ids, hyp_mask):
        return self.lower(input_ids, attention_mask, token_type_ids), self.upper(memory, memory_mask, hyp_ids, hyp_mask)


def export_memory(mce, path, opset=14):
    """Export a MemoryCrossEncoder; returns a feed of both parts and the packed torch logits they must give
    (row 0: premise of 6 tokens, hypothesis of 3; row 1: premise of 3, hypothesis of 2, both padded)."""
    graph = MemoryGraph(mce).eval()
    with torch.no_grad():
        ref, prem, pm, mem, hyp, hm = _memory_sample(mce, graph.lower)
        sep = graph.upper(mem, pm, hyp, hm).numpy()
        print(f"max|packed-separate| {np.abs(ref - sep).max():.3g}")
        assert np.abs(ref - sep).max() < 1e-4
        torch.onnx.export(
            graph, (prem, pm, torch.zeros_like(prem), mem, pm, hyp, hm), path, dynamo=False,
            do_constant_folding=True, opset_version=opset,
            input_names=["input_ids", "attention_mask", "token_type_ids", "memory", "memory_mask", "hyp_ids", "hyp_mask"],
            output_names=["lower_hidden", "logits"],
            dynamic_axes={"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"},
                          "token_type_ids": {0: "batch", 1: "seq"}, "lower_hidden": {0: "batch", 2: "seq"},
                          "memory": {0: "pairs", 2: "memory_seq"}, "memory_mask": {0: "pairs", 1: "memory_seq"},
                          "hyp_ids": {0: "pairs", 1: "hyp_seq"}, "hyp_mask": {0: "pairs", 1: "hyp_seq"},
                          "logits": {0: "pairs"}})
    feed = {"input_ids": prem.numpy(), "attention_mask": pm.numpy(), "token_type_ids": np.zeros_like(prem.numpy()),
            "memory": mem.numpy(), "memory_mask": pm.numpy(), "hyp_ids": hyp.numpy(), "hyp_mask": hm.numpy()}
    return feed, ref


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", default="training/checkpoints/best.pt")
    ap.add_argument("--out-dir", default="training/work")
    ap.add_argument("--opset", type=int, default=14)
    args = ap.parse_args()
    torch.set_num_threads(2)
    os.makedirs(args.out_dir, exist_ok=True)

    if args.ckpt != "none":
        model, ck = load_checkpoint_model(args.ckpt)
        inner = model.ce if isinstance(model, (SplitCrossEncoder, MemoryCrossEncoder)) else model
        print(f"loaded {args.ckpt} (step {ck['state']['step']}, {len(inner.bert.encoder.layer)} encoder layers, split {ck.get('split')})")
    else:
        model = build_model()
    model.eval()

    fp32 = os.path.join(args.out_dir, "model.fp32.onnx")
    if isinstance(model, HybridCrossEncoder):
        feed, ref = export_hybrid(model, fp32, args.opset)
    elif isinstance(model, MemoryCrossEncoder):
        feed, ref = export_memory(model, fp32, args.opset)
    elif isinstance(model, SplitCrossEncoder):
        feed, ref = export_split(model, fp32, args.opset)
    else:
        feed, ref = export_fp32(model, fp32, args.opset)
    import onnx
    import onnxruntime as ort
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from quantize_weights import main as quantize_weights

    m = onnx.load(fp32)
    onnx.checker.check_model(m)
    print("fp32 ops:", dict(collections.Counter(n.op_type for n in m.graph.node)))
    int8 = os.path.join(args.out_dir, "model.int8.onnx")
    # Weight-only int8 (see quantize_weights.py): activations stay f32, so results do not depend on
    # batch composition and tract, onnxruntime and the browser agree to float rounding.
    quantize_weights(fp32, int8)
    mq = onnx.load(int8)
    print("int8 ops:", dict(collections.Counter(n.op_type for n in mq.graph.node)))
    print("opsets:", [(o.domain or "ai.onnx", o.version) for o in mq.opset_import])

    so = ort.SessionOptions()
    # f32 arithmetic, as tract runs it (ENABLE_ALL would fuse the int8 weights into integer kernels)
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    for path in (fp32, int8):
        s = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        out = s.run(["logits"], feed)[0]
        # also a different batch/seq size to prove both axes are dynamic
        # (the split graphs' sample rows have fixed segment lengths: a different batch size only)
        out1 = s.run(["logits"], {k: v[:1] if k not in ("input_ids", "attention_mask", "token_type_ids") or len(feed) > 3
                                  else v[:1, :7] for k, v in feed.items()})[0]
        print(f"{os.path.basename(path)}: {os.path.getsize(path) / 1e6:.1f} MB, max|onnx-torch| {np.abs(out - ref).max():.4g}, "
              f"shape {out.shape}/{out1.shape}")


if __name__ == "__main__":
    main()
