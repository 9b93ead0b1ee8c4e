"""common.long_premise_pairs, the rule-made long premises of stages 3d and 3e (MODEL_CARD.md,
"Long premises"): labels are kept, the added sentence is a long one from a train-split review of
another paper, heldout reviews are never used, `verbatim` adds each fact next to one in both orders,
and the output is the same for the same seed.

Run: python -m unittest discover -s training/tests (needs numpy)."""
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from common import LABEL2ID, long_premise_pairs  # noqa: E402

LONG = {
    "A": "The first paper trains a very large model on a corpus of web pages and reports that its accuracy "
         "improves steadily with the number of parameters, although the authors do not show error bars for "
         "any of the runs.",
    "B": "The second paper proposes a graph method whose message passing is restricted to the k nearest "
         "neighbours of each node, and the experiments on three citation datasets show a gain of two points "
         "over the strongest baseline.",
    "H": "This heldout review sentence is long enough to qualify as a long sentence for the rule but it "
         "belongs to a heldout review and so must never be used as padding in any of the training pairs.",
}


def write_reviews(d):
    rows = []
    for pid, split in (("A", "train"), ("B", "train"), ("H", "heldout")):
        name = f"reviews/{pid}.txt"
        os.makedirs(os.path.join(d, "reviews"), exist_ok=True)
        with open(os.path.join(d, name), "w") as f:
            f.write(f"Short opener. {LONG[pid]} Short closer.")
        rows.append({"review": name, "paper": pid, "split": split})
    path = os.path.join(d, "reviews.jsonl")
    with open(path, "w") as f:
        f.write("".join(json.dumps(r) + "\n" for r in rows))
    return path


def pair(pid, window, fact, label):
    return dict(premise=window, hypothesis=fact, label=LABEL2ID[label], binary=0, src="decoding",
                kind="model>=0.3", item_id=f"{pid}.x", paper_id=pid)


DEC = [pair("A", "The model is large.", "The authors train a large model.", "entailment"),
       pair("A", "The paper is well written.", "The authors train a large model.", "neutral"),
       pair("B", "Gains are small.", "The method gains two points.", "contradiction")]


class LongPremises(unittest.TestCase):
    def test_labels_kept_and_padding_from_another_train_paper(self):
        with tempfile.TemporaryDirectory() as d:
            out = long_premise_pairs(DEC, write_reviews(d), seed=13)
        self.assertEqual(len(out), len(DEC))
        for e, o in zip(DEC, out):
            self.assertEqual(o["label"], e["label"])
            self.assertEqual(o["hypothesis"], e["hypothesis"])
            self.assertEqual(o["kind"], "rule-long")
            added = o["premise"].replace(e["premise"], "").strip()
            self.assertTrue(o["premise"].startswith(e["premise"]) or o["premise"].endswith(e["premise"]))
            other = "B" if e["paper_id"] == "A" else "A"
            self.assertEqual(added, LONG[other])
            self.assertNotIn(LONG["H"], o["premise"])

    def test_verbatim_facts_in_both_orders(self):
        with tempfile.TemporaryDirectory() as d:
            out = long_premise_pairs(DEC, write_reviews(d), seed=13, verbatim=True)
        verb = [o for o in out if o["kind"] == "rule-long-verbatim"]
        self.assertEqual(len(verb), 2 * 2)  # two distinct (paper, fact), two orders each
        for o in verb:
            self.assertEqual(o["label"], LABEL2ID["entailment"])
            self.assertTrue(o["premise"].startswith(o["hypothesis"]) or o["premise"].endswith(o["hypothesis"]))

    def test_seeded(self):
        with tempfile.TemporaryDirectory() as d:
            path = write_reviews(d)
            a = long_premise_pairs(DEC, path, seed=13, verbatim=True)
            b = long_premise_pairs(DEC, path, seed=13, verbatim=True)
        self.assertEqual([x["premise"] for x in a], [x["premise"] for x in b])

    def test_needs_two_papers(self):
        with tempfile.TemporaryDirectory() as d:
            path = write_reviews(d)
            rows = [json.loads(line) for line in open(path)]
            with open(path, "w") as f:
                f.write(json.dumps(rows[0]) + "\n")
            with self.assertRaises(ValueError):
                long_premise_pairs(DEC, path, seed=13)


if __name__ == "__main__":
    unittest.main()
