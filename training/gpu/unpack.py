#!/usr/bin/env python3
"""A run selected by a device sweep (training/gpu/sweep.py: NAME.fp16.part0, part1, …) back into an
fp32 checkpoint that export_onnx.py reads. The sweep leaves out the word-embedding matrix (frozen in
training, so equal to its start); it is taken from INIT, the checkpoint that onnx_to_ckpt.py makes
here from the same graph the sweep started from (recipe: the stages-1-2 graph,
target/gpu-payload/stage12.int8.onnx; students: models/semtrace-nli-minilm/model.onnx).
Only fp16 rounding of the other weights is lost; the int8 export quantises far more coarsely.

usage: training/.venv/bin/python training/gpu/unpack.py FILES_DIR NAME INIT.pt OUT.pt"""
import glob
import io
import os
import sys

import torch

WORD_EMB = "bert.embeddings.word_embeddings.weight"


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__.strip().splitlines()[-1])
    files, name, init, out = sys.argv[1:]
    parts = sorted(glob.glob(os.path.join(files, f"{name}.fp16.part*")), key=lambda p: int(p.rsplit("part", 1)[1]))
    if not parts:
        sys.exit(f"unpack.py: no {name}.fp16.part* in {files}")
    ck = torch.load(io.BytesIO(b"".join(open(p, "rb").read() for p in parts)), map_location="cpu", weights_only=False)
    model = {k: (v.float() if v.is_floating_point() else v) for k, v in ck["model"].items()}
    if WORD_EMB in model:
        sys.exit(f"unpack.py: {name} carries its own word embeddings; not a sweep.py part set")
    model[WORD_EMB] = torch.load(init, map_location="cpu", weights_only=False)["model"][WORD_EMB].float()
    # step -1: the sweep keeps only the weights; export_onnx.py prints the step it finds.
    torch.save({"model": model, "n_layers": ck.get("n_layers"), "state": {"step": -1, "sweep_run": ck.get("run")}}, out)
    print(f"{ck.get('run')}: {len(model)} tensors from {len(parts)} parts and {init} -> {out}")


if __name__ == "__main__":
    main()
