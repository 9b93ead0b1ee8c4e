"""teacher_pool.py's review windows and train_nli.py's padding and resume signature (the teacher and
its pool, MODEL_CARD.md "A stronger teacher on CPU"): headings are dropped, list items and blank lines
break sentences, abbreviations do not, windows are adjacent sentence pairs with stride 1; collate() pads
with the tokenizer's <pad> id to a multiple of --pad-multiple; a checkpoint written before the new options
existed still resumes.

Run: training/.venv/bin/python -m unittest discover -s training/tests (needs torch for the train_nli part)."""
import argparse
import os
import sys
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
