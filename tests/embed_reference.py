#!/usr/bin/env python3
"""Independent reference for the sentence embedder: BERT forward pass in numpy (float64), read
straight from model.safetensors (no safetensors/torch packages), tokens from HuggingFace
`tokenizers`, mean pooling over the attention mask and L2 normalisation (sentence-transformers).

Usage: embed_reference.py MODEL_DIR < texts.json  (a JSON list of strings)
Prints {"ids": [[int]], "vectors": [[float]]}. Each text runs alone (no padding).
"""
import json
import math
import struct
import sys

import numpy as np
from tokenizers import Tokenizer

MAX_TOKENS = 256


def read_safetensors(path):
    raw = open(path, "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n])
    data = memoryview(raw)[8 + n :]
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        b, end = e["data_offsets"]
        dt = {"F32": "<f4", "I64": "<i8"}[e["dtype"]]
        out[name] = np.frombuffer(data[b:end], dtype=dt).reshape(e["shape"]).astype(
            np.float64 if e["dtype"] == "F32" else np.int64
        )
    return out


def layer_norm(x, g, b, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * g + b


def erf(x):
    return np.vectorize(math.erf)(x)


def encode(w, cfg, ids):
    h, heads = cfg["hidden_size"], cfg["num_attention_heads"]
    dh = h // heads
    eps = cfg.get("layer_norm_eps", 1e-12)
    p = "bert." if "bert.embeddings.word_embeddings.weight" in w else ""
    W = lambda n: w[p + n]
    s = len(ids)
    x = W("embeddings.word_embeddings.weight")[ids] + W("embeddings.position_embeddings.weight")[:s] + W(
        "embeddings.token_type_embeddings.weight"
    )[0]
    x = layer_norm(x, W("embeddings.LayerNorm.weight"), W("embeddings.LayerNorm.bias"), eps)
    lin = lambda t, n: t @ W(n + ".weight").T + W(n + ".bias")
    for l in range(cfg["num_hidden_layers"]):
        q_ = f"encoder.layer.{l}."
        q = lin(x, q_ + "attention.self.query").reshape(s, heads, dh).transpose(1, 0, 2)
        k = lin(x, q_ + "attention.self.key").reshape(s, heads, dh).transpose(1, 0, 2)
        v = lin(x, q_ + "attention.self.value").reshape(s, heads, dh).transpose(1, 0, 2)
        sc = q @ k.transpose(0, 2, 1) / math.sqrt(dh)
        sc = sc - sc.max(-1, keepdims=True)
        a = np.exp(sc)
        a = a / a.sum(-1, keepdims=True)
        ctx = (a @ v).transpose(1, 0, 2).reshape(s, h)
        x = layer_norm(
            lin(ctx, q_ + "attention.output.dense") + x,
            W(q_ + "attention.output.LayerNorm.weight"),
            W(q_ + "attention.output.LayerNorm.bias"),
            eps,
        )
        f = lin(x, q_ + "intermediate.dense")
        f = 0.5 * f * (1.0 + erf(f / math.sqrt(2.0)))
        x = layer_norm(
            lin(f, q_ + "output.dense") + x,
            W(q_ + "output.LayerNorm.weight"),
            W(q_ + "output.LayerNorm.bias"),
            eps,
        )
    m = x.mean(0)
    return m / max(np.linalg.norm(m), 1e-12)


def main():
    d = sys.argv[1]
    texts = json.load(sys.stdin)
    cfg = json.load(open(f"{d}/config.json"))
    w = read_safetensors(f"{d}/model.safetensors")
    tok = Tokenizer.from_file(f"{d}/tokenizer.json")
    tok.no_padding()
    tok.enable_truncation(MAX_TOKENS)
    ids, vecs = [], []
    for t in texts:
        e = tok.encode(t)
        ids.append(e.ids)
        vecs.append(encode(w, cfg, np.array(e.ids)).tolist())
    json.dump({"ids": ids, "vectors": vecs}, sys.stdout)


if __name__ == "__main__":
    main()
