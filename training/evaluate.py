#!/usr/bin/env python3
"""Evaluate exported ONNX NLI cross-encoders with onnxruntime (CPU).

    training/.venv/bin/python training/evaluate.py --model fp32=training/work/model.fp32.onnx \
        --model int8=training/work/model.int8.onnx --out models/semtrace-nli-minilm/metrics.json

Metrics per model:
  indomain_dev: 3-way accuracy, entailment precision/recall/F1, per-kind accuracy, confusion matrix,
                triple check = fraction of item_id triples with P(ent|para) > P(ent|alter) and > P(ent|near).
  rte_test / rte_dev: 2-way accuracy, entailment predicted iff P(entailment) > 0.5 (= P(ent) > P(neu)+P(con)).
  sick_test: 3-way accuracy on the SICK TEST split (SemEval_set == TEST).
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import onnxruntime as ort

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import ENTAIL, LABELS, cross_paper_pairs, MAX_LEN, NOT_ENTAIL, encode_all, load_tokenizer, read_indomain, read_rte, read_sick  # noqa: E402


def is_split(sess):
    """A split cross-encoder graph (split_model.py; export_onnx.SplitGraph, MemoryGraph) has a `hidden`
    (segments layout) or a `memory` input."""
    return any(i.name in ("hidden", "memory") for i in sess.get_inputs())


def encode_for(sess, tok, exs):
    """Token ids as the graph reads them: the pair encoding, or segment by segment for a split graph."""
    if is_split(sess):
        from split_model import encode_split
        return encode_split(tok, exs)
    return encode_all(tok, exs)


def _pad(rows, dtype=np.int64):
    n = max(len(r) for r in rows)
    out = np.zeros((len(rows), n), dtype=dtype)
    mask = np.zeros((len(rows), n), dtype=np.int64)
    for i, r in enumerate(rows):
        out[i, :len(r)], mask[i, :len(r)] = r, 1
    return out, mask


def run_split(sess, exs, order, bs):
    """A split graph as the engine runs it: each segment through the lower part (padded batches; a
    padded row's states are masked out), the two segments' states concatenated through the upper part."""
    inputs = {i.name: i for i in sess.get_inputs()}
    one = np.ones((1, 1), np.int64)
    memory = "memory" in inputs
    hybrid = "hyp_hidden" in inputs  # HybridGraph: the hypothesis has a lower part of its own
    if hybrid:
        planes, width = inputs["memory"].shape[1], inputs["memory"].shape[3]
        dummy_upper = {"memory": np.zeros((1, planes, 1, width), np.float32), "memory_mask": one,
                       "hyp_hidden": np.zeros((1, 1, width), np.float32), "hyp_mask": one,
                       "hyp_input_ids": one, "hyp_attention_mask": one}
    elif memory:
        planes, width = inputs["memory"].shape[1], inputs["memory"].shape[3]
        dummy_upper = {"memory": np.zeros((1, planes, 1, width), np.float32), "memory_mask": one, "hyp_ids": one,
                       "hyp_mask": one}
    else:
        width = inputs["hidden"].shape[2]
        dummy_upper = {"hidden": np.zeros((1, 1, width), np.float32), "pair_mask": one}
    no_lower = {"input_ids": one, "attention_mask": one, "token_type_ids": 0 * one}
    probs = np.zeros((len(exs), len(LABELS)), dtype=np.float64)
    for s in range(0, len(order), bs):
        b = order[s:s + bs]
        segs = [[[i for i, tt in zip(exs[k]["ids"], exs[k]["tt"]) if tt == t] for k in b] for t in (0, 1)]

        def lower(t):
            ids, am = _pad(segs[t])
            return sess.run(["lower_hidden"], dict(dummy_upper, input_ids=ids, attention_mask=am,
                                                   token_type_ids=np.full_like(ids, t)))[0], am
        if hybrid:
            mem, mm = lower(0)
            hyp, hm = _pad(segs[1])
            hh = sess.run(["hyp_lower_hidden"], dict(dummy_upper, **no_lower, hyp_input_ids=hyp,
                                                     hyp_attention_mask=hm))[0]
            feed = dict(dummy_upper, **no_lower, memory=mem, memory_mask=mm, hyp_hidden=hh, hyp_mask=hm)
        elif memory:
            # padded premises: masked keys, and the hypothesis positions start after each row's own length
            mem, mm = lower(0)
            hyp, hm = _pad(segs[1])
            feed = dict(no_lower, memory=mem, memory_mask=mm, hyp_ids=hyp, hyp_mask=hm)
        else:
            states = []
            for t in (0, 1):
                h, _ = lower(t)
                states.append([h[r, :len(seg)] for r, seg in enumerate(segs[t])])
            pairs = [np.concatenate([p, q]) for p, q in zip(*states)]
            n = max(len(x) for x in pairs)
            hid = np.zeros((len(b), n, width), np.float32)
            pm = np.zeros((len(b), n), np.int64)
            for r, x in enumerate(pairs):
                hid[r, :len(x)], pm[r, :len(x)] = x, 1
            feed = dict(no_lower, hidden=hid, pair_mask=pm)
        logits = sess.run(["logits"], feed)[0].astype(np.float64)
        e = np.exp(logits - logits.max(1, keepdims=True))
        probs[b] = e / e.sum(1, keepdims=True)
    return probs


def run_model(sess, exs, bs=32):
    if is_split(sess):
        return run_split(sess, exs, sorted(range(len(exs)), key=lambda i: len(exs[i]["ids"])), bs)
    order = sorted(range(len(exs)), key=lambda i: len(exs[i]["ids"]))
    probs = np.zeros((len(exs), len(LABELS)), dtype=np.float64)
    for s in range(0, len(order), bs):
        b = order[s:s + bs]
        n = max(len(exs[i]["ids"]) for i in b)
        ids = np.zeros((len(b), n), dtype=np.int64)
        tt = np.zeros((len(b), n), dtype=np.int64)
        am = np.zeros((len(b), n), dtype=np.int64)
        for r, i in enumerate(b):
            L = len(exs[i]["ids"])
            ids[r, :L], tt[r, :L], am[r, :L] = exs[i]["ids"], exs[i]["tt"], 1
        logits = sess.run(["logits"], {"input_ids": ids, "attention_mask": am, "token_type_ids": tt})[0].astype(np.float64)
        e = np.exp(logits - logits.max(1, keepdims=True))
        probs[b] = e / e.sum(1, keepdims=True)
    return probs


def prf(pred, y, cls):
    tp = float(((pred == cls) & (y == cls)).sum())
    p = tp / max(1, int((pred == cls).sum()))
    r = tp / max(1, int((y == cls).sum()))
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def indomain_metrics(exs, probs):
    y = np.array([e["label"] for e in exs])
    pred = probs.argmax(1)
    p, r, f = prf(pred, y, ENTAIL)
    kinds = sorted(set(e["kind"] for e in exs))
    per_kind = {}
    for k in kinds:
        m = np.array([e["kind"] == k for e in exs])
        per_kind[k] = {"n": int(m.sum()), "acc": float((pred[m] == y[m]).mean())}
    conf = np.zeros((3, 3), dtype=int)
    for a, b in zip(y, pred):
        conf[a, b] += 1
    trip = {}
    for e, pr in zip(exs, probs):
        if e["kind"] in ("para", "alter", "near"):
            trip.setdefault(e["item_id"], {})[e["kind"]] = float(pr[ENTAIL])
    full = [t for t in trip.values() if len(t) == 3]
    ok_alter = [t["para"] > t["alter"] for t in full]
    ok_near = [t["para"] > t["near"] for t in full]
    ok = [a and b for a, b in zip(ok_alter, ok_near)]
    return {
        "n": len(exs), "acc": float((pred == y).mean()),
        "entailment_precision": p, "entailment_recall": r, "entailment_f1": f,
        "macro_f1": float(np.mean([prf(pred, y, c)[2] for c in range(3)])),
        "per_kind": per_kind,
        "confusion_rows_gold_cols_pred": {"labels": LABELS, "matrix": conf.tolist()},
        "triple_check": {"n_triples": len(full), "para_gt_alter_and_near": float(np.mean(ok)),
                         "para_gt_alter": float(np.mean(ok_alter)), "para_gt_near": float(np.mean(ok_near))},
    }


def binary_metrics(exs, probs):
    y = np.array([e["label"] == ENTAIL for e in exs])
    pred = probs[:, ENTAIL] > 0.5
    pred_argmax = probs.argmax(1) == ENTAIL
    return {"n": len(exs), "acc_p_entail_gt_0.5": float((pred == y).mean()),
            "acc_argmax_is_entail": float((pred_argmax == y).mean())}


def sick_metrics(exs, probs):
    y = np.array([e["label"] for e in exs])
    pred = probs.argmax(1)
    return {"n": len(exs), "acc": float((pred == y).mean()), "entailment_f1": prf(pred, y, ENTAIL)[2],
            "macro_f1": float(np.mean([prf(pred, y, c)[2] for c in range(3)]))}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", action="append", required=True, help="name=path.onnx (repeatable)")
    ap.add_argument("--tokenizer", default=None, help="tokenizer.json (default: backbone's)")
    ap.add_argument("--data", default="../shared/data/nli")
    ap.add_argument("--out", default="models/semtrace-nli-minilm/metrics.json")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--bs", type=int, default=1,
                    help="batch size; default 1 because int8 DynamicQuantizeLinear scales are per batch tensor, "
                         "so int8 outputs depend on which examples (and padding) share a batch")
    ap.add_argument("--skip-sick", action="store_true")
    ap.add_argument("--limit", type=int, default=0, help="smoke test: first N examples of each set")
    args = ap.parse_args()

    if args.tokenizer is None:
        from common import backbone_dir
        args.tokenizer = os.path.join(backbone_dir(), "tokenizer.json")
    tok = load_tokenizer(args.tokenizer, MAX_LEN)
    sets = {
        "indomain_dev": read_indomain(os.path.join(args.data, "indomain/dev.jsonl")),
        "rte_dev": read_rte(os.path.join(args.data, "rte/dev.tsv")),
        "rte_test": read_rte(os.path.join(args.data, "rte/test.tsv")),
    }
    # Cross-paper probe: dev propositions against natural review windows of other papers (neutral by
    # construction); reported as the share the decoder would count as a mention (p >= 0.52).
    sets["indomain_dev_cross_paper"] = cross_paper_pairs(sets["indomain_dev"], 99, per_hyp=2)
    if not args.skip_sick:
        sets["sick_test"] = read_sick(os.path.join(args.data, "sick/SICK.txt"), {"TEST"})
    if args.limit:
        sets = {k: v[:args.limit] for k, v in sets.items()}
    for v in sets.values():
        encode_all(tok, v)
    assert all(e["label"] in (ENTAIL, NOT_ENTAIL) for e in sets["rte_test"])

    results = {}
    if os.path.exists(args.out):
        with open(args.out) as f:
            results = json.load(f)
    results.setdefault("models", {})
    for spec in args.model:
        name, path = spec.split("=", 1)
        so = ort.SessionOptions()
        so.intra_op_num_threads = args.threads
        # onnxruntime >= 1.2x fuses DequantizeLinear+MatMul into integer kernels at ENABLE_ALL, quantising
        # activations too (0.03 in logits); BASIC keeps the f32 arithmetic that tract and the browser run.
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        res = {"file": os.path.basename(path), "size_bytes": os.path.getsize(path), "eval_batch_size": args.bs}
        for sname, exs in sets.items():
            t = time.time()
            encode_for(sess, tok, exs)  # a split graph reads its segments apart
            probs = run_model(sess, exs, bs=args.bs)
            if sname == "indomain_dev":
                res[sname] = indomain_metrics(exs, probs)
            elif sname == "indomain_dev_cross_paper":
                res[sname] = {"n": len(exs), "spurious_rate_at_0.52": round(float((probs[:, ENTAIL] >= 0.52).mean()), 4),
                              "mean_p_entailment": round(float(probs[:, ENTAIL].mean()), 4)}
            elif sname.startswith("rte"):
                res[sname] = binary_metrics(exs, probs)
            else:
                res[sname] = sick_metrics(exs, probs)
            res[sname]["seconds"] = round(time.time() - t, 1)
            print(name, sname, json.dumps({k: v for k, v in res[sname].items() if k not in ("confusion_rows_gold_cols_pred",)}),
                  flush=True)
        results["models"][name] = res
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=2)
    print("wrote", args.out)


if __name__ == "__main__":
    main()
