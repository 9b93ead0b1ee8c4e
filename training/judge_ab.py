"""Blind A/B of two builders' selected facts under the fact rubric (issue 23, item 3).

Judges differ more between rounds than the builders do, so a change is measured on the facts it
changes, by the same judges: the facts only the old builder selected and those only the new one
selected, shuffled together (seed 4), each judged by every judge.

usage:
  python3 training/judge_ab.py prep OLD_BUILDS NEW_BUILDS NAME
      OLD_BUILDS/NEW_BUILDS: <paper>/report.json trees of training/judge_builds.sh. Writes the judge
      input (with quotations) to training/work/judge/NAME/in.jsonl and the key (item, paper, fact
      text, source, arm; no quotations) to training/data/fact-judgments/NAME/key.jsonl.
  python3 training/judge_ab.py summary NAME
      Reads training/data/fact-judgments/NAME/key.jsonl and judge-*.jsonl; prints pass rates per arm
      and judge, flags, and the judges' agreement.
"""
import collections
import glob
import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
QS = ["self_contained", "true_to_quote", "reviewer_like", "not_boilerplate"]


def selected(build_dir):
    out = {}
    for rp in glob.glob(os.path.join(build_dir, "*", "report.json")):
        r = json.load(open(rp))
        if r.get("status") != "ok":
            continue
        name = os.path.basename(os.path.dirname(rp))
        for c in r["candidates"]:
            if c.get("selected_rank"):
                out[(name, c["text"])] = {"paper": name, "title": r["document"].get("title") or name,
                                          "text": c["text"], "quote": c["quote"],
                                          "source": c.get("source", "")}
    return out


def prep(old_dir, new_dir, name):
    a, b = selected(old_dir), selected(new_dir)
    rows = [v | {"arm": "old-only"} for k, v in sorted(a.items()) if k not in b]
    rows += [v | {"arm": "new-only"} for k, v in sorted(b.items()) if k not in a]
    random.Random(4).shuffle(rows)
    work = os.path.join(HERE, "work", "judge", name)
    data = os.path.join(HERE, "data", "fact-judgments", name)
    os.makedirs(work, exist_ok=True)
    os.makedirs(data, exist_ok=True)
    with open(os.path.join(work, "in.jsonl"), "w") as f_in, \
            open(os.path.join(data, "key.jsonl"), "w") as f_key:
        for i, r in enumerate(rows):
            item = f"ab{i:03d}"
            f_in.write(json.dumps({"paper": r["paper"], "title": r["title"], "fact": item,
                                   "text": r["text"], "quote": r["quote"], "source": r["source"]},
                                  ensure_ascii=False) + "\n")
            f_key.write(json.dumps({"item": item, "paper": r["paper"], "text": r["text"],
                                    "source": r["source"], "arm": r["arm"]},
                                   ensure_ascii=False) + "\n")
    print(f"{sum(r['arm'] == 'old-only' for r in rows)} old-only, "
          f"{sum(r['arm'] == 'new-only' for r in rows)} new-only facts")


def summary(name):
    data = os.path.join(HERE, "data", "fact-judgments", name)
    key = {d["item"]: d for d in map(json.loads, open(os.path.join(data, "key.jsonl")))}
    judges = {}
    for path in sorted(glob.glob(os.path.join(data, "judge-*.jsonl"))):
        j = os.path.basename(path)[len("judge-"):-len(".jsonl")]
        judges[j] = {r["fact"]: r for r in map(json.loads, open(path))}
        assert set(judges[j]) == set(key), f"{path}: items differ from the key"
    ok = lambda r: all(r[q] is True for q in QS) and r["flag"] == "none"
    print("| arm | facts | " + " | ".join(f"judge {j} pass" for j in judges) + " | flags (all judges) |")
    print("|---|---|" + "---|" * len(judges) + "---|")
    for arm in sorted({d["arm"] for d in key.values()}, reverse=True):
        items = [i for i in key if key[i]["arm"] == arm]
        cells = []
        for j in judges.values():
            p = sum(ok(j[i]) for i in items)
            cells.append(f"{p} ({100 * p / len(items):.1f}%)")
        flags = collections.Counter(j[i]["flag"] for j in judges.values() for i in items)
        flags.pop("none", None)
        print(f"| {arm} | {len(items)} | " + " | ".join(cells) + " | "
              + ", ".join(f"{k} {v}" for k, v in flags.most_common()) + " |")
    if len(judges) == 2:
        x, y = judges.values()
        agree = sum(ok(x[i]) == ok(y[i]) for i in key)
        print(f"judges agree on pass/fail for {agree} of {len(key)} facts")


if __name__ == "__main__":
    if sys.argv[1:2] == ["prep"] and len(sys.argv) == 5:
        prep(*sys.argv[2:5])
    elif sys.argv[1:2] == ["summary"] and len(sys.argv) == 3:
        summary(sys.argv[2])
    else:
        sys.exit(__doc__)
