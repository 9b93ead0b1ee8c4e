#!/usr/bin/env python3
"""onnxruntime side of `scripts/bench.sh`: the same pairs, batches, padding and thread count as
`semtrace bench --dump-pairs` (pairs sorted by token length, batches padded to their longest
rounded up to 8, as tract's engine does). Usage: ort_bench.py MODEL_DIR PAIRS.json [THREADS]
-> prints JSON."""
import json
import sys
import time

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

model_dir, pairs_path = sys.argv[1], sys.argv[2]
threads = int(sys.argv[3]) if len(sys.argv) > 3 else 1
req = json.load(open(pairs_path))
tok = Tokenizer.from_file(f"{model_dir}/tokenizer.json")
tok.no_padding()
tok.enable_truncation(req["max_length"], strategy="longest_first")
so = ort.SessionOptions()
so.intra_op_num_threads = threads
so.inter_op_num_threads = 1
sess = ort.InferenceSession(f"{model_dir}/model.onnx", so, providers=["CPUExecutionProvider"])
pairs = [(p["premise"], p["hypothesis"]) for p in req["pairs"]]
bs = req["batch_size"]


def batches():
    encoded = [tok.encode(p, h) for p, h in pairs]
    order = sorted(range(len(encoded)), key=lambda i: (len(encoded[i].ids), i))
    for i in range(0, len(order), bs):
        encs = [encoded[j] for j in order[i:i + bs]]
        longest = max(len(e.ids) for e in encs)
        seq = req["fixed_len"] or -(-longest // 8) * 8
        arr = {k: np.zeros((len(encs), seq), dtype=np.int64) for k in ("input_ids", "attention_mask", "token_type_ids")}
        for r, e in enumerate(encs):
            n = min(len(e.ids), seq)
            arr["input_ids"][r, :n] = e.ids[:n]
            arr["attention_mask"][r, :n] = e.attention_mask[:n]
            arr["token_type_ids"][r, :n] = e.type_ids[:n]
        feed = {}
        for i_ in sess.get_inputs():
            n = i_.name.lower()
            feed[i_.name] = arr["input_ids" if "input_ids" in n else "attention_mask" if "attention_mask" in n else "token_type_ids"]
        yield feed


def run():
    for feed in batches():
        sess.run(None, feed)


run()  # warm-up, as on the tract side
t = time.perf_counter()
run()
dt = time.perf_counter() - t
print(json.dumps({"engine": "onnxruntime " + ort.__version__, "pairs": len(pairs), "batch_size": bs, "threads": threads,
                  "pairs_per_s": len(pairs) / dt}))
