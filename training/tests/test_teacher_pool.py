"""teacher_pool.py's review windows, its packed logits, and train_nli.py's padding and resume signature (the teacher and
its pool, MODEL_CARD.md "A stronger teacher on CPU"): headings are dropped, list items and blank lines
break sentences, abbreviations do not, windows are adjacent sentence pairs with stride 1; collate() pads
with the tokenizer's <pad> id to a multiple of --pad-multiple; a checkpoint written before the new options
existed still resumes.

Run: training/.venv/bin/python -m unittest discover -s training/tests (needs torch for the train_nli part)."""
import argparse
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import teacher_pool as tp  # noqa: E402

REVIEW = """## Summary
The paper proposes a sparse router for mixture-of-experts models, e.g. for translation. It reports a 2.1 BLEU gain on WMT.

Strengths:
- The method is simple and well motivated by the analysis in Sec. 3.
- Experiments cover four language pairs.
"""


class Windows(unittest.TestCase):
    def test_sentences(self):
        self.assertEqual(tp.sentences(REVIEW), [
            "The paper proposes a sparse router for mixture-of-experts models, e.g. for translation.",
            "It reports a 2.1 BLEU gain on WMT.",
            "The method is simple and well motivated by the analysis in Sec. 3.",
            "Experiments cover four language pairs.",
        ])

    def test_windows_are_adjacent_pairs(self):
        s = tp.sentences(REVIEW)
        self.assertEqual(tp.windows(REVIEW), [f"{a} {b}" for a, b in zip(s, s[1:])])
        self.assertEqual(tp.windows("Only one sentence here."), ["Only one sentence here."])
        self.assertEqual(tp.windows(""), [])


class SourceOrder(unittest.TestCase):
    def test_decoding_first_each_source_shuffled_and_seeded(self):
        pool = [dict(source=s, i=i) for i, s in enumerate(["human-props", "decoding", "human-facts"] * 20)]
        a = tp.in_source_order(pool, tp.random.Random(21))
        self.assertEqual([e["source"] for e in a], ["decoding"] * 20 + ["human-facts"] * 20 + ["human-props"] * 20)
        self.assertEqual(sorted(e["i"] for e in a), list(range(60)))
        dec = [e["i"] for e in a[:20]]
        self.assertNotEqual(dec, sorted(dec))  # shuffled within the source
        self.assertEqual(a, tp.in_source_order(pool, tp.random.Random(21)))
        self.assertEqual(pool[0]["source"], "human-props")  # the input is left as it was


class Packed(unittest.TestCase):
    """pack/unpack: the teacher's logits committed by reference (keys, no text) and put back on a rebuilt pool."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        d = self.dir.name
        self.pool = os.path.join(d, "pool.jsonl")
        self.labelled = os.path.join(d, "pool.labelled.jsonl")
        self.tsv = os.path.join(d, "packed", "pool-logits.tsv")
        self.pairs = [dict(premise=f"Window {i} says 0.{i}.", hypothesis=f"Fact {i % 3}.", paper=f"P{i % 2}",
                           source="decoding" if i % 2 else "human-facts") for i in range(5)]
        with open(self.pool, "w") as f:
            f.writelines(json.dumps(e) + "\n" for e in self.pairs)

    def tearDown(self):
        self.dir.cleanup()

    def write_labelled(self, n):
        with open(self.labelled, "w") as f:
            for i, e in enumerate(self.pairs[:n]):
                f.write(json.dumps(e | {"teacher": [i + 0.12345, -1.0, 2.5]}) + "\n")

    def assert_refused(self, says):
        """unpack exits with a message that says `says`, and leaves no output, whole or half-written."""
        with self.assertRaises(SystemExit) as e:
            tp.unpack(self.pool, self.tsv, self.labelled)
        self.assertIn(says, str(e.exception.code))
        self.assertFalse(os.path.exists(self.labelled))
        self.assertFalse(os.path.exists(self.labelled + ".tmp"))

    def test_round_trip_holds_no_text(self):
        self.write_labelled(5)
        self.assertEqual(tp.pack(self.labelled, self.tsv), 5)
        with open(self.tsv) as f:
            packed = f.read()
        self.assertNotIn("Window", packed)
        self.assertNotIn("Fact", packed)
        os.remove(self.labelled)
        self.assertEqual(tp.unpack(self.pool, self.tsv, self.labelled), 5)
        with open(self.labelled) as f:
            rows = [json.loads(line) for line in f]
        self.assertEqual([r["premise"] for r in rows], [e["premise"] for e in self.pairs])
        self.assertEqual(rows[2]["teacher"], [2.123, -1.0, 2.5])

    def test_a_prefix_unpacks_for_label_to_resume(self):
        self.write_labelled(2)
        tp.pack(self.labelled, self.tsv)
        self.assertEqual(tp.unpack(self.pool, self.tsv, self.labelled), 2)

    def test_a_changed_pool_is_refused_and_nothing_written(self):
        self.write_labelled(5)
        tp.pack(self.labelled, self.tsv)
        os.remove(self.labelled)
        self.pairs[3]["premise"] = "Another window."
        with open(self.pool, "w") as f:
            f.writelines(json.dumps(e) + "\n" for e in self.pairs)
        self.assert_refused("pair 3")

    def test_a_broken_line_is_a_clear_error_and_nothing_written(self):
        self.write_labelled(5)
        tp.pack(self.labelled, self.tsv)
        os.remove(self.labelled)
        with open(self.tsv) as f:
            lines = f.readlines()
        for bad in (lines[1].rsplit(",", 1)[0] + "\n", lines[1].replace("\t", " "), lines[1].replace("2.5", "x")):
            with open(self.tsv, "w") as f:
                f.writelines([lines[0], bad] + lines[2:])
            self.assert_refused("line 2")

    def test_label_needs_no_teacher_once_all_is_labelled(self):
        out, tp.OUT = tp.OUT, self.dir.name
        try:
            self.write_labelled(5)
            tp.label(os.path.join(self.dir.name, "no-such-teacher.pt"))  # returns: nothing left to label
            self.write_labelled(4)
            with self.assertRaises(SystemExit) as e:
                tp.label(os.path.join(self.dir.name, "no-such-teacher.pt"))
            self.assertIn("no-such-teacher.pt missing", str(e.exception.code))
        finally:
            tp.OUT = out

    def test_more_logits_than_pairs_is_refused(self):
        self.write_labelled(5)
        tp.pack(self.labelled, self.tsv)
        with open(self.pool, "w") as f:
            f.writelines(json.dumps(e) + "\n" for e in self.pairs[:4])
        os.remove(self.labelled)
        self.assert_refused("not the same pool")


try:
    import torch  # noqa: F401

    import train_nli as tn
except ImportError:  # plain python3 without the training venv
    tn = None


class FakeTok:
    def __init__(self, pad):
        self.pad = pad

    def token_to_id(self, t):
        return self.pad if t == "<pad>" else None


@unittest.skipIf(tn is None, "needs torch (training/.venv)")
class Padding(unittest.TestCase):
    def tearDown(self):
        tn.set_padding(FakeTok(None), 1)

    def test_pad_id_and_multiple(self):
        exs = [dict(ids=[5] * 3, tt=[0] * 3, label=0, binary=0), dict(ids=[5] * 33, tt=[0] * 33, label=1, binary=0)]
        tn.set_padding(FakeTok(1), 32)
        ids, am, *_ = tn.collate(exs)
        self.assertEqual(tuple(ids.shape), (2, 64))
        self.assertEqual(int(ids[0, 3]), 1)
        self.assertEqual(int(am[0].sum()), 3)
        tn.set_padding(FakeTok(None), 1)
        ids, *_ = tn.collate(exs)
        self.assertEqual(tuple(ids.shape), (2, 33))
        self.assertEqual(int(ids[0, 3]), 0)

    def test_old_checkpoints_still_resume(self):
        a = argparse.Namespace(lr=5e-5, bs=32, epochs=0.6, seed=13, indomain_repeat=1, no_rte=True, sick=False,
                               student_layers="0,2,5", split_layer=None, split_mode="segments", backbone=None,
                               soft_pool=None, soft_pool_max=0, soft_weight=1.0)
        self.assertEqual(tn.resume_signature(a, None), [5e-5, 32, 0.6, 13, 1, True, False, "0,2,5"])
        a.soft_pool = "pool.jsonl"
        self.assertEqual(tn.resume_signature(a, None)[-3:], ["pool.jsonl", 0, 1.0])


if __name__ == "__main__":
    unittest.main()
