#!/usr/bin/env python3
"""The selected run's fp16 weights from a device sweep (training/gpu/sweep.py: best.fp16.part0, part1, …)
back into an fp32 checkpoint that export_onnx.py reads (fp16 rounding of the weights only; the
int8 export quantises far more coarsely).

usage: training/.venv/bin/python training/gpu/unpack.py PARTS_DIR OUT.pt"""
import glob
import io
import os
import sys

import torch


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[-1])
    parts = sorted(glob.glob(os.path.join(sys.argv[1], "best.fp16.part*")), key=lambda p: int(p.rsplit("part", 1)[1]))
    if not parts:
        sys.exit(f"unpack.py: no best.fp16.part* in {sys.argv[1]}")
    ck = torch.load(io.BytesIO(b"".join(open(p, "rb").read() for p in parts)), map_location="cpu", weights_only=False)
    model = {k: (v.float() if v.is_floating_point() else v) for k, v in ck["model"].items()}
    # step -1: the sweep keeps only the weights; export_onnx.py prints the step it finds.
    torch.save({"model": model, "n_layers": ck.get("n_layers"), "state": {"step": -1, "sweep_run": ck.get("run")}}, sys.argv[2])
    print(f"{ck.get('run')}: {len(model)} tensors from {len(parts)} parts -> {sys.argv[2]}")


if __name__ == "__main__":
    main()
