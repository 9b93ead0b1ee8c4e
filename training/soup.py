#!/usr/bin/env python3
"""Average the model weights of several checkpoints (a "weight soup") into one checkpoint.

    training/.venv/bin/python training/soup.py OUT.pt A.pt B.pt [...]

Used to try whether averaging runs of the same recipe helps (MODEL_CARD.md, "Weight soups")."""
import os
import sys

import torch


def main(out, paths):
    states = [torch.load(p, map_location="cpu", weights_only=False)["model"] for p in paths]
    avg = {k: sum(s[k].float() for s in states) / len(states) if states[0][k].is_floating_point() else states[0][k]
           for k in states[0]}
    tmp = out + ".tmp"
    torch.save({"model": avg, "state": {"step": 0, "soup": [os.path.basename(os.path.dirname(p)) + "/" + os.path.basename(p) for p in paths]}}, tmp)
    os.replace(tmp, out)
    print(f"averaged {len(paths)} checkpoints -> {out}")


if __name__ == "__main__":
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2:])
