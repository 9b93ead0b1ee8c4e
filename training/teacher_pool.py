"""The unlabelled in-domain pool a teacher labels for distillation (issue "Detection that survives real
LLM reviews", item 3: "let the teacher label a large pool of unlabelled in-domain pairs (facts x windows
of many papers and reviews)"). Nothing written here is committed: the pool holds human review text, which
stays in ../shared (it is read from there by path and the pool lives in the git-ignored training/work/).

  python3 training/teacher_pool.py build                 # -> training/work/teacher/pool.jsonl
  training/.venv/bin/python training/teacher_pool.py label CKPT   # -> training/work/teacher/pool.labelled.jsonl

Sources, train side only (no paper of ../shared/data/nli/indomain/dev.jsonl, of the heldout decoding split,
of ../shared/corpus/reviews/ or of ../shared/corpus/llm-reviews/):
  * `decoding`: the LLM-written reviews of training/data/decoding (train split) against the facts of their
    bundles; per (review, fact) the 6 windows of most word overlap and 4 at random;
  * `human-facts`: the real reviews (../shared/corpus/train-pool) of the train-split papers of
    training/data/priors/labels.jsonl against those papers' approved facts; per (review, fact) the 3
    windows of most word overlap and 1 at random;
  * `human-props`: the in-domain train propositions against the other natural windows of their paper.
Windows: sentences split as crates/core/src/segment.rs does in outline (blank lines, headings and list items
break; `.`/`!`/`?` then a capital ends a sentence), adjacent pairs with stride 1. Seeded (21); the pairs
are shuffled within each source and the sources come in the order above.

`label` runs the teacher checkpoint (train_nli.py, e.g. teacher.sh's) in bf16 on 2 threads and writes its
logits per pair; resumable (pairs already labelled are skipped).

The teacher's logits are the expensive part (80 min of training, 35 min of labelling) and git-ignored files
do not outlive a machine, so `pack` commits them *by reference*: training/data/teacher/pool-logits.tsv holds,
per pool pair in pool order, a 16-hex key (SHA-256 of premise NUL hypothesis), the source and the three
logits, and no text; `unpack` rebuilds pool.labelled.jsonl from a freshly built pool.jsonl, refusing a pool
whose pairs differ from the ones the logits were made on. A partly labelled pool packs its prefix, and
`label` resumes from it.

  python3 training/teacher_pool.py pack     # pool.labelled.jsonl -> training/data/teacher/pool-logits.tsv
  python3 training/teacher_pool.py unpack   # pool.jsonl + pool-logits.tsv -> pool.labelled.jsonl
"""
import hashlib
import json
import os
import random
import re
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(ROOT, "..", "shared")
DEC = os.path.join(ROOT, "training", "data", "decoding")
OUT = os.path.join(ROOT, "training", "work", "teacher")
PACKED = os.path.join(ROOT, "training", "data", "teacher", "pool-logits.tsv")
SEED = 21
SENT_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[A-Z0-9(\"'])")
ABBREV = re.compile(r"\b(e\.g|i\.e|et al|etc|cf|vs|Fig|Figs|Eq|Eqs|Sec|Tab|approx|resp|w\.r\.t)\.$", re.I)
LIST = re.compile(r"^\s*(?:[-*+•]|\d+[.)]|\(\w\))\s+")
WORD = re.compile(r"[a-z0-9]+")


def sentences(text):
    out = []
    for block in re.split(r"\n\s*\n", text):
        lines = [ln.strip() for ln in block.split("\n") if ln.strip()]
        buf = []
        for ln in lines:
            heading = ln.startswith("#") or (len(ln.split()) <= 8 and not re.search(r"[.!?]$", ln))
            if heading or LIST.match(ln):
                if buf:
                    out += split_run(" ".join(buf))
                buf = []
                if heading:
                    continue
                ln = LIST.sub("", ln)
            buf.append(ln.replace("**", ""))
        if buf:
            out += split_run(" ".join(buf))
    return [" ".join(s.split()) for s in out if len(s.split()) >= 3]


def split_run(text):
    parts, cur = [], ""
    for piece in SENT_END.split(text):
        cur = f"{cur} {piece}" if cur else piece
        if not ABBREV.search(cur):
            parts.append(cur)
            cur = ""
    return parts + ([cur] if cur else [])


def windows(text):
    s = sentences(text)
    if len(s) <= 2:
        return [" ".join(s)] if s else []
    return [f"{a} {b}" for a, b in zip(s, s[1:])][:128]


def words(t):
    return set(WORD.findall(t.lower()))


def build():
    rng = random.Random(SEED)
    dev_papers = {json.loads(l)["paper_id"] for l in open(os.path.join(SHARED, "data/nli/indomain/dev.jsonl"))}
    pool, seen = [], set()

    def add(prem, hyp, paper, src):
        if (prem, hyp) not in seen and paper not in dev_papers:
            seen.add((prem, hyp))
            pool.append(dict(premise=prem, hypothesis=hyp, paper=paper, source=src))

    papers = {r["paper"]: r for r in map(json.loads, open(os.path.join(DEC, "papers.jsonl")))}
    for m in map(json.loads, open(os.path.join(DEC, "manifest.jsonl"))):
        if m["split"] != "train":
            continue
        b = json.load(open(os.path.join(DEC, m["bundle"])))
        facts = [f["text"] for p in b["positions"] for f in p["facts"]]
        ws = windows(open(os.path.join(DEC, m["review"]), encoding="utf-8").read())
        wset = [words(w) for w in ws]
        for f in facts:
            fw = words(f)
            order = sorted(range(len(ws)), key=lambda i: -len(fw & wset[i]))
            for i in order[:6] + rng.sample(order[6:], min(4, len(order[6:]))):
                add(ws[i], f, m["paper"], "decoding")
    assert all(papers[p]["split"] == "train" for p in {e["paper"] for e in pool}), "a heldout decoding paper"

    facts_of = {}
    for r in map(json.loads, open(os.path.join(ROOT, "training/data/priors/labels.jsonl"))):
        if r["split"] == "train":
            facts_of.setdefault(r["paper"], []).append(r["text"])
    for line in open(os.path.join(SHARED, "corpus/train-pool/neurips2025-train.jsonl"), encoding="utf-8"):
        d = json.loads(line)
        if d["id"] not in facts_of:
            continue
        for rev in d["reviews"]:
            text = rev["review_text"]
            ws = windows(text)
            if not ws:
                continue
            wset = [words(w) for w in ws]
            for f in facts_of[d["id"]]:
                fw = words(f)
                order = sorted(range(len(ws)), key=lambda i: -len(fw & wset[i]))
                for i in order[:3] + [rng.randrange(len(ws))]:
                    add(ws[i], f, d["id"], "human-facts")

    by_paper = {}
    props = {}
    for e in map(json.loads, open(os.path.join(SHARED, "data/nli/indomain/train.jsonl"))):
        if e["kind"] == "natural":
            by_paper.setdefault(e["paper_id"], set()).add(e["premise"])
        props.setdefault(e["paper_id"], set()).add(e["hypothesis"])
    for p in sorted(props):
        for h in sorted(props[p]):
            for w in sorted(by_paper.get(p, ())):
                add(w, h, p, "human-props")

    os.makedirs(OUT, exist_ok=True)
    pool = in_source_order(pool, rng)
    with open(os.path.join(OUT, "pool.jsonl.tmp"), "w", encoding="utf-8") as f:
        for e in pool:
            f.write(json.dumps(e, ensure_ascii=False) + "\n")
    os.replace(os.path.join(OUT, "pool.jsonl.tmp"), os.path.join(OUT, "pool.jsonl"))
    by = {}
    for e in pool:
        by[e["source"]] = by.get(e["source"], 0) + 1
    print(f"pool: {len(pool)} pairs {by} of {len({e['paper'] for e in pool})} papers -> {OUT}/pool.jsonl")


def in_source_order(pool, rng):
    """Shuffled within a source, sources in order of their worth to a student, so that a partly labelled
    (and packed) pool holds the decoding pairs first."""
    rank = {"decoding": 0, "human-facts": 1, "human-props": 2}
    pool = list(pool)
    rng.shuffle(pool)
    return sorted(pool, key=lambda e: rank[e["source"]])


def labelled_row(e, logits):
    """One line of pool.labelled.jsonl, as label writes it and unpack rebuilds it."""
    return json.dumps({k: e[k] for k in ("premise", "hypothesis", "paper", "source")} | {"teacher": logits},
                      ensure_ascii=False) + "\n"


def pair_key(prem, hyp):
    return hashlib.sha256(f"{prem}\0{hyp}".encode("utf-8")).hexdigest()[:16]


def pack(src=None, dst=PACKED):
    """pool.labelled.jsonl -> the committed TSV of keys, sources and logits (no text)."""
    src = src or os.path.join(OUT, "pool.labelled.jsonl")
    if not os.path.exists(src):
        sys.exit(f"pack: {src} missing (made by teacher.sh label)")
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    n = 0
    with open(dst + ".tmp", "w", encoding="utf-8") as out:
        for line in open(src, encoding="utf-8"):
            e = json.loads(line)
            out.write(f"{pair_key(e['premise'], e['hypothesis'])}\t{e['source']}\t"
                      + ",".join(f"{x:.3f}" for x in e["teacher"]) + "\n")
            n += 1
    os.replace(dst + ".tmp", dst)
    print(f"pack: {n} pairs' logits -> {dst}")
    return n


def unpack(pool_path=None, src=PACKED, dst=None):
    """The committed logits onto a rebuilt pool, in pool order; a pool that differs is refused."""
    pool_path = pool_path or os.path.join(OUT, "pool.jsonl")
    dst = dst or os.path.join(OUT, "pool.labelled.jsonl")
    for path, how in ((pool_path, "teacher_pool.py build"), (src, "teacher_pool.py pack")):
        if not os.path.exists(path):
            sys.exit(f"unpack: {path} missing (made by {how})")
    pool = [json.loads(l) for l in open(pool_path, encoding="utf-8")]
    rows = [l.rstrip("\n").split("\t") for l in open(src, encoding="utf-8") if l.strip()]
    if len(rows) > len(pool):
        sys.exit(f"unpack: {len(rows)} packed logits for a pool of {len(pool)} pairs: not the same pool")
    # Everything is checked before anything is written, so a refused file leaves no half-written output.
    labelled = []
    for i, (e, row) in enumerate(zip(pool, rows)):
        try:
            assert len(row) == 3
            logits = [float(x) for x in row[2].split(",")]
            assert len(logits) == 3
        except (AssertionError, ValueError):
            sys.exit(f"unpack: line {i + 1} of {src} is not KEY<TAB>SOURCE<TAB>three logits: a broken file")
        if row[0] != pair_key(e["premise"], e["hypothesis"]) or row[1] != e["source"]:
            sys.exit(f"unpack: pair {i} of the pool is not the one its logits were made on "
                     "(the pool's sources or teacher_pool.py build changed): relabel with teacher.sh label")
        labelled.append(labelled_row(e, logits))
    with open(dst + ".tmp", "w", encoding="utf-8") as out:
        out.writelines(labelled)
    os.replace(dst + ".tmp", dst)
    print(f"unpack: {len(rows)} of {len(pool)} pool pairs labelled -> {dst}")
    return len(rows)


def label(ckpt, bs=32):
    dst = os.path.join(OUT, "pool.labelled.jsonl")
    if not os.path.exists(os.path.join(OUT, "pool.jsonl")):
        sys.exit(f"label: {OUT}/pool.jsonl missing (made by teacher_pool.py build)")
    n_pool = sum(1 for _ in open(os.path.join(OUT, "pool.jsonl"), encoding="utf-8"))
    if os.path.exists(dst) and sum(1 for _ in open(dst, encoding="utf-8")) >= n_pool:
        print(f"label: all {n_pool} pool pairs already labelled ({dst})")
        return
    if not os.path.exists(ckpt):
        sys.exit(f"label: {ckpt} missing (made by bash training/teacher.sh train)")
    import torch

    sys.path.insert(0, os.path.join(ROOT, "training"))
    import train_nli as tn
    from common import MAX_LEN, load_tokenizer

    torch.set_num_threads(2)
    model, ck = tn.load_checkpoint_model(ckpt)
    model.eval()
    bdir = ck.get("backbone") or tn.backbone_dir()
    tok = load_tokenizer(os.path.join(bdir, "tokenizer.json"), MAX_LEN)
    tn.set_padding(tok, 32)
    pool = [json.loads(l) for l in open(os.path.join(OUT, "pool.jsonl"), encoding="utf-8")]
    done = sum(1 for _ in open(dst, encoding="utf-8")) if os.path.exists(dst) else 0
    print(f"label: {len(pool)} pairs, {done} already labelled, teacher {ckpt}", flush=True)
    t0 = time.time()
    with open(dst, "a", encoding="utf-8") as out:
        for s in range(done, len(pool), 512):
            chunk = pool[s:s + 512]
            tn.encode_all(tok, chunk)
            order = sorted(range(len(chunk)), key=lambda i: len(chunk[i]["ids"]))
            logits = [None] * len(chunk)
            with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
                for b in range(0, len(order), bs):
                    idx = order[b:b + bs]
                    ids, am, tt, *_ = tn.collate([dict(chunk[i], label=0, binary=0) for i in idx])
                    for i, row in zip(idx, model(ids, am, tt).float().tolist()):
                        logits[i] = [round(x, 4) for x in row]
            for e, lg in zip(chunk, logits):
                out.write(labelled_row(e, lg))
            out.flush()
            n = s + len(chunk) - done
            el = time.time() - t0
            print(f"  {s + len(chunk)}/{len(pool)} ({n / el:.1f} pairs/s, ETA {(len(pool) - s - len(chunk)) / (n / el) / 60:.0f} min)", flush=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["build"]:
        build()
    elif sys.argv[1:2] == ["label"] and len(sys.argv) == 3:
        label(sys.argv[2])
    elif sys.argv[1:] == ["pack"]:
        pack()
    elif sys.argv[1:] == ["unpack"]:
        unpack()
    else:
        sys.exit(__doc__)
