"""Source-NLI gate check (docs/evaluation.md, "Two source windows"): for every candidate a build
dropped at the source-NLI gate ("entailment < 0.68" against its three-sentence window), how close
the fact is to its quotation, and what the shipped model gives it with the quotation alone as
premise (onnxruntime on models/semtrace-nli-minilm/model.onnx).

usage: training/.venv/bin/python training/source_gate_check.py BUILD_DIR
       (BUILD_DIR as made by training/judge_builds.sh, e.g. training/work/judge/builds-r8)
"""

import difflib
import glob
import json
import os
import sys

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

MODEL = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "models",
                     "semtrace-nli-minilm")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    cfg = json.load(open(os.path.join(MODEL, "config.json")))
    tok = Tokenizer.from_file(os.path.join(MODEL, "tokenizer.json"))
    tok.enable_truncation(cfg["max_length"])
    sess = ort.InferenceSession(os.path.join(MODEL, "model.onnx"))
    drops = []
    for path in sorted(glob.glob(os.path.join(sys.argv[1], "*", "report.json"))):
        for c in json.load(open(path))["candidates"]:
            if "< 0.68" in (c.get("reason") or ""):
                drops.append((c["text"], c["quote"]))
    if not drops:
        sys.exit("no source-NLI drops found under " + sys.argv[1])
    close = sum(difflib.SequenceMatcher(None, t.lower(), q.lower()).ratio() > 0.8 for t, q in drops)
    scores = []
    for text, quote in drops:
        e = tok.encode(quote, text)
        feed = {k: np.array([v], np.int64) for k, v in
                (("input_ids", e.ids), ("attention_mask", e.attention_mask),
                 ("token_type_ids", e.type_ids))}
        logits = sess.run(None, feed)[0][0]
        p = np.exp(logits - logits.max())
        scores.append(float(p[cfg["entailment_index"]] / p.sum()))
    s = np.array(scores)
    print(f"source-NLI drops: {len(drops)}; fact within 0.8 string similarity of its quotation: {close}")
    print(f"entailment with the quotation alone as premise: min {s.min():.3f}, median "
          f"{np.median(s):.3f}, max {s.max():.3f}; >= 0.68: {(s >= 0.68).sum()}")


if __name__ == "__main__":
    sys.exit(main())
