#!/usr/bin/env python3
"""Sweeps on a device machine (one prepared command; issue "Detection that survives real LLM reviews",
item 3: "use it for what fits: many student runs, a hyper-parameter sweep").

--mode recipe (default): the stage-3c recipe (MODEL_CARD.md, "Stage 3c") from the stages-1-2
checkpoint under a grid of learning rates, lengths, decoding repeats and seeds.
--mode students: students of the default (its graph turned back into a checkpoint is the teacher)
that keep 2, 3 or 4 encoder layers, for longer and with two distillation weights.

Each run is train_nli.py with --select decoding: its best.pt, and the runs, are chosen on the heldout
decoding pairs (train-pool papers held out of training); in-domain dev is reported, never selected
on, and llm-reviews is never read. The best run per group is kept (recipe: one group; students: one per
layer count). OUT gets summary.tsv (every run, best first), runs.log (each run's dev lines) and each
selected run's weights in fp16 *without* the word-embedding matrix, which training keeps frozen
(--freeze-word-emb), so it equals the starting checkpoint's: NAME.fp16.partN files under the device
tool's 16 MiB per-file limit. `training/gpu/unpack.py` puts the matrix back from the same start.

Each run trains in fp32 and is evaluated once, at its end, as stage 3c was (so the first recipe run is
the shipped recipe), and its figures are read from its best.pt. No run may pass --deadline-s: a run
starts only if the longest so far would still fit, and is stopped at the deadline.

usage: sweep.py --payload DIR --out DIR [--mode recipe|students] [--device cuda] [--deadline-s 540] [--dry-run]
--dry-run: one configuration for a few steps (checks the plumbing on a CPU)."""
import argparse
import gzip
import itertools
import os
import shutil
import subprocess
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PART_BYTES = 15 * 1024 * 1024
WORD_EMB = "bert.embeddings.word_embeddings.weight"

# Around stage 3c (lr 5e-5, 0.6 epoch, decoding x4, rules, seed 13); the shipped recipe first.
RECIPE = [dict(lr=lr, epochs=ep, rep=rep, seed=seed)
          for seed, lr, ep, rep in itertools.product([13, 14], [5e-5, 3e-5, 8e-5], [0.6, 1.2], [4, 8])]
# training/students.sh's recipe, longer than a CPU allows, with two weights of the teacher's soft labels.
STUDENTS = [dict(layers=ly, epochs=ep, kd=kd)
            for ep, ly, kd in itertools.product([1.0, 3.0], ["0,2,5", "0,5", "0,2,3,5"], [0.7, 0.3])]


def run_name(mode, c):
    if mode == "recipe":
        return f"lr{c['lr']:.0e}-ep{c['epochs']}-rep{c['rep']}-s{c['seed']}"
    return f"L{c['layers'].replace(',', '')}-ep{c['epochs']}-kd{c['kd']}"


def run_args(mode, c, init, dry):
    epochs = str(0.002 if dry else c["epochs"])
    common = ["--no-rte", "--identity-aug", "--decoding", os.path.join(ROOT, "training/data/decoding/labels.jsonl"),
              "--epochs", epochs, "--bs", "32", "--warmup", "0.05", "--freeze-word-emb", "--save-every", "1000000",
              "--eval-every", "1000000", "--log-every", "100", "--init", init, "--select", "decoding"]
    if mode == "recipe":
        return common + ["--decoding-repeat", str(c["rep"]), "--decoding-rules", "--lr", str(c["lr"]),
                         "--seed", str(c["seed"])]
    return common + ["--identity-frames", "--decoding-repeat", "2", "--lr", "5e-5", "--teacher", init,
                     "--student-layers", c["layers"], "--kd-alpha", str(c["kd"]), "--kd-temp", "2"]


def write_parts(ck_path, name, out):
    """The run's best.pt in fp16 without the word-embedding matrix, in parts of PART_BYTES."""
    ck = torch.load(ck_path, map_location="cpu", weights_only=False)
    sd = {k: (v.half() if v.is_floating_point() else v) for k, v in ck["model"].items() if k != WORD_EMB}
    tmp = ck_path + ".fp16"
    torch.save({"model": sd, "n_layers": ck.get("n_layers"), "run": name}, tmp)
    data = open(tmp, "rb").read()
    for i in range(0, len(data), PART_BYTES):
        with open(os.path.join(out, f"{name}.fp16.part{i // PART_BYTES}"), "wb") as f:
            f.write(data[i:i + PART_BYTES])
    return len(data)


def best_figures(ck_dir):
    """The evaluation best.pt was saved at: (score, (dev acc, dev entailment F1, decoding P, R, F1))."""
    path = os.path.join(ck_dir, "best.pt")
    if not os.path.exists(path):
        return None
    hist = torch.load(path, map_location="cpu", weights_only=False)["state"]["history"]
    m = max(hist, key=lambda h: h["score"])
    return m["score"], tuple(f"{m[k]:.4f}" for k in ("acc", "ent_f1", "dec_prec", "dec_rec", "dec_f1"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--payload", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--mode", choices=["recipe", "students"], default="recipe")
    ap.add_argument("--work", default="/tmp/semtrace-sweep")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--deadline-s", type=float, default=540,
                    help="seconds after which no run may still be training (the device allows 600 per command)")
    ap.add_argument("--dry-run", action="store_true")
    a = ap.parse_args()
    t0 = time.time()
    # A fresh work folder: train_nli.py would resume a same-named run left on a warm machine.
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.out, exist_ok=True)
    nli = os.path.join(a.work, "nli", "indomain")
    os.makedirs(nli, exist_ok=True)
    for f in ("train", "dev"):
        with gzip.open(os.path.join(a.payload, f"{f}.jsonl.gz"), "rb") as src, \
                open(os.path.join(nli, f"{f}.jsonl"), "wb") as dst:
            shutil.copyfileobj(src, dst)
    env = dict(os.environ, SEMTRACE_BACKBONE_DIR=os.path.join(a.payload, "backbone"), PYTHONUNBUFFERED="1")
    py = sys.executable
    # recipe: the stages-1-2 graph (carried); students: the default's graph (tracked, in the tree).
    graph, names = ((os.path.join(a.payload, "stage12.int8.onnx"), os.path.join(a.payload, "stage12.map.json"))
                    if a.mode == "recipe" else
                    (os.path.join(ROOT, "models/semtrace-nli-minilm/model.onnx"), os.path.join(a.payload, "default.map.json")))
    init = os.path.join(a.work, f"{a.mode}-init.pt")
    # The initializer map made by pack.sh: this torch's exporter may number a probe export differently.
    subprocess.run([py, os.path.join(ROOT, "training/onnx_to_ckpt.py"), graph, init, "--map", names], env=env, check=True)
    grid = RECIPE if a.mode == "recipe" else STUDENTS
    grid = grid[:1] if a.dry_run else grid
    rows = []
    longest = 0.0
    log = open(os.path.join(a.out, "runs.log"), "w")
    for c in grid:
        left = a.deadline_s - (time.time() - t0)
        if left < 1.3 * longest or left < 30:
            print(f"deadline: {len(rows)} runs done, {left:.0f}s left", flush=True)
            break
        name = run_name(a.mode, c)
        ck = os.path.join(a.work, name)
        cmd = [py, os.path.join(ROOT, "training/train_nli.py"), "--device", a.device, "--data",
               os.path.join(a.work, "nli"), "--ckpt-dir", ck] + run_args(a.mode, c, init, a.dry_run)
        t = time.time()
        try:
            p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=max(1.0, left))
            rc, out, err = p.returncode, p.stdout, p.stderr
        except subprocess.TimeoutExpired as e:
            rc, out, err = "timeout", e.stdout or "", e.stderr or ""
            out, err = (x.decode() if isinstance(x, bytes) else x for x in (out, err))
        longest = max(longest, time.time() - t)
        dev_lines = [l for l in out.splitlines() if l.startswith("[dev]") or l.startswith("done:")]
        log.write(f"== {name} rc {rc} {time.time() - t:.0f}s\n" + "\n".join(dev_lines) + "\n")
        if rc != 0:
            log.write(err[-3000:] + "\n")
        log.flush()
        figs = best_figures(ck) if rc == 0 else None
        if figs:
            rows.append((figs[0], name, figs[1], ck, c.get("layers", "all")))
        print(f"{name}: rc {rc}, {time.time() - t:.0f}s, {figs[1] if figs else 'no figures'}", flush=True)
    with open(os.path.join(a.out, "summary.tsv"), "w") as f:
        f.write("score\trun\tdev_acc\tdev_ent_f1\tdec_P\tdec_R\tdec_F1\n")
        for score, name, g, _, _ in sorted(rows, reverse=True):
            f.write(f"{score:.4f}\t{name}\t" + "\t".join(g) + "\n")
    if not rows:
        sys.exit("sweep.py: no run finished")
    for group in sorted({r[4] for r in rows}):
        best = max(r for r in rows if r[4] == group)
        n = write_parts(os.path.join(best[3], "best.pt"), best[1], a.out)
        print(f"selected {best[1]} (score {best[0]:.4f}) for {group}: {n} bytes", flush=True)
    print(f"{time.time() - t0:.0f}s in all", flush=True)


if __name__ == "__main__":
    main()
