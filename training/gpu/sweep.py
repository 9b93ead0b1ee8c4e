#!/usr/bin/env python3
"""A hyper-parameter sweep of the stage-3c recipe on a device machine (one prepared command; issue
"Detection that survives real LLM reviews", item 3: "use it for what fits: many student runs, a
hyper-parameter sweep"). Runs train_nli.py once per configuration from the stages-1-2 checkpoint,
selects by train_nli.py's own score (in-domain dev and the heldout decoding pairs; never llm-reviews),
and writes to OUT: summary.tsv (one line per run), runs.log (each run's dev lines) and the selected
run's weights in fp16, split into parts that the device tool can bring back (16 MiB per file).
`training/gpu/unpack.py` turns those parts back into a checkpoint for export_onnx.py.

usage: sweep.py --payload DIR --out DIR [--device cuda] [--budget-s 480] [--dry-run]
--dry-run: one configuration for a few steps (checks the plumbing on a CPU)."""
import argparse
import gzip
import itertools
import os
import re
import shutil
import subprocess
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PART_BYTES = 15 * 1024 * 1024

# The grid around stage 3c (lr 5e-5, 0.6 epoch, decoding x4, rules, seed 13); first the shipped recipe.
GRID = [dict(lr=lr, epochs=ep, rep=rep, seed=seed)
        for seed, lr, ep, rep in itertools.product([13, 14], [5e-5, 3e-5, 8e-5], [0.6, 1.2], [4, 8])]


def run_name(c):
    return f"lr{c['lr']:.0e}-ep{c['epochs']}-rep{c['rep']}-s{c['seed']}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--payload", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--work", default="/tmp/semtrace-sweep")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--budget-s", type=float, default=480, help="start no new run after this many seconds")
    ap.add_argument("--dry-run", action="store_true")
    a = ap.parse_args()
    t0 = time.time()
    os.makedirs(a.out, exist_ok=True)
    nli = os.path.join(a.work, "nli", "indomain")
    os.makedirs(nli, exist_ok=True)
    for f in ("train", "dev"):
        with gzip.open(os.path.join(a.payload, f"{f}.jsonl.gz"), "rb") as src, open(os.path.join(nli, f"{f}.jsonl"), "wb") as dst:
            shutil.copyfileobj(src, dst)
    env = dict(os.environ, SEMTRACE_BACKBONE_DIR=os.path.join(a.payload, "backbone"), PYTHONUNBUFFERED="1")
    py = sys.executable
    init = os.path.join(a.work, "stage12.pt")
    subprocess.run([py, os.path.join(ROOT, "training/onnx_to_ckpt.py"), os.path.join(a.payload, "stage12.int8.onnx"), init],
                   env=env, check=True)
    grid = GRID[:1] if a.dry_run else GRID
    rows = []
    log = open(os.path.join(a.out, "runs.log"), "w")
    for c in grid:
        if time.time() - t0 > a.budget_s:
            print(f"budget reached after {len(rows)} runs", flush=True)
            break
        name = run_name(c)
        ck = os.path.join(a.work, name)
        cmd = [py, os.path.join(ROOT, "training/train_nli.py"), "--device", a.device, "--data", os.path.join(a.work, "nli"),
               "--init", init, "--ckpt-dir", ck, "--no-rte", "--identity-aug",
               "--decoding", os.path.join(ROOT, "training/data/decoding/labels.jsonl"), "--decoding-repeat", str(c["rep"]),
               "--decoding-rules", "--epochs", str(0.002 if a.dry_run else c["epochs"]), "--bs", "32", "--lr", str(c["lr"]),
               "--warmup", "0.05", "--freeze-word-emb", "--seed", str(c["seed"]), "--save-every", "1000000",
               "--log-every", "100"]
        if a.device != "cpu":
            cmd.append("--bf16")
        t = time.time()
        p = subprocess.run(cmd, env=env, capture_output=True, text=True)
        dev_lines = [l for l in p.stdout.splitlines() if l.startswith("[dev]") or l.startswith("done:")]
        log.write(f"== {name} rc {p.returncode} {time.time() - t:.0f}s\n" + "\n".join(dev_lines) + "\n")
        if p.returncode != 0:
            log.write(p.stderr[-3000:] + "\n")
        log.flush()
        m = re.search(r"acc ([\d.]+) entF1 ([\d.]+).*decoding P ([\d.]+) R ([\d.]+) F1 ([\d.]+) score ([\d.]+)",
                      dev_lines[-2] if len(dev_lines) >= 2 else "")
        if p.returncode == 0 and m:
            rows.append((float(m.group(6)), name, m.groups(), ck))
        print(f"{name}: rc {p.returncode}, {time.time() - t:.0f}s, {m.groups() if m else 'no figures'}", flush=True)
    with open(os.path.join(a.out, "summary.tsv"), "w") as f:
        f.write("score\trun\tdev_acc\tdev_ent_f1\tdec_P\tdec_R\tdec_F1\n")
        for score, name, g, _ in sorted(rows, reverse=True):
            f.write(f"{score:.4f}\t{name}\t" + "\t".join(g[:5]) + "\n")
    if not rows:
        sys.exit("sweep.py: no run finished")
    best = max(rows)
    sd = torch.load(os.path.join(best[3], "best.pt"), map_location="cpu", weights_only=False)
    half = {k: (v.half() if v.is_floating_point() else v) for k, v in sd["model"].items()}
    tmp = os.path.join(a.work, "best.fp16.pt")
    torch.save({"model": half, "n_layers": sd.get("n_layers"), "run": best[1]}, tmp)
    data = open(tmp, "rb").read()
    for i in range(0, len(data), PART_BYTES):
        with open(os.path.join(a.out, f"best.fp16.part{i // PART_BYTES}"), "wb") as f:
            f.write(data[i:i + PART_BYTES])
    print(f"selected {best[1]} (score {best[0]:.4f}); {len(data)} bytes in {(len(data) + PART_BYTES - 1) // PART_BYTES} parts; "
          f"{time.time() - t0:.0f}s in all", flush=True)


if __name__ == "__main__":
    main()
