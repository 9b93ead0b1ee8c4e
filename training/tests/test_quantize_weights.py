"""quantize_weights.py, the tool that made the shipped model.onnx (MODEL_CARD.md, "Stage 3c"), on a
small random graph of the same operator kinds (Gather embedding table, MatMul weights, a bias):
every stored weight is within half a quantisation step of the original, the rewritten graph computes
exactly with those dequantised weights (onnxruntime), per-group scales give an outlying input row its
own scale, and int8_group() (what package.py records in config.json) reads N back.

Run: python -m unittest discover -s training/tests (needs numpy, onnx, onnxruntime; the Rust test
tests/tests/training_scripts.rs runs it in the test venv)."""
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

TRAINING = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, TRAINING)
from quantize_weights import MIN_ELEMENTS, int8_group  # noqa: E402

SCRIPT = os.path.join(TRAINING, "quantize_weights.py")


def make_weights(seed=7):
    rng = np.random.default_rng(seed)
    w1 = rng.normal(0, 0.05, (64, 128)).astype(np.float32)
    w1[5] *= 40.0  # an outlying input row: with one scale per column it coarsens all 64 rows
    return {
        "emb": rng.normal(0, 0.1, (256, 64)).astype(np.float32),
        "w1": w1,
        "b1": rng.normal(0, 0.1, (128,)).astype(np.float32),  # small: stays f32
        "w2": rng.normal(0, 0.05, (128, 80)).astype(np.float32),
        "w3": rng.normal(0, 0.05, (80, 64)).astype(np.float32),  # 80 rows: not a multiple of 32
    }


def make_graph(w, path):
    nodes = [
        helper.make_node("Gather", ["emb", "ids"], ["h0"]),
        helper.make_node("MatMul", ["h0", "w1"], ["h1"]),
        helper.make_node("Add", ["h1", "b1"], ["h1b"]),
        helper.make_node("Relu", ["h1b"], ["h1r"]),
        helper.make_node("MatMul", ["h1r", "w2"], ["h2"]),
        helper.make_node("MatMul", ["h2", "w3"], ["out"]),
    ]
    graph = helper.make_graph(
        nodes, "tiny",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, ["n"])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, ["n", 64])],
        [numpy_helper.from_array(v, k) for k, v in w.items()])
    # IR 7, as the shipped model.onnx (onnx's own default is newer than the test
    # venv's onnxruntime reads).
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)], ir_version=7)
    onnx.checker.check_model(model)
    onnx.save(model, path)


def forward(w, ids):
    """The tiny graph in numpy, with the given (possibly dequantised) weights."""
    h = w["emb"][ids] @ w["w1"] + w["b1"]
    return (np.maximum(h, 0) @ w["w2"]) @ w["w3"]


def run(path, ids):
    # The graph's own semantics: at its default level onnxruntime 1.32 (the training venv) fuses
    # DequantizeLinear into integer MatMul kernels that differ from the f32 product by ~1e-3 here;
    # tract folds the weights to f32 instead (engine_reference.rs compares it on the shipped model).
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    return sess.run(["out"], {"ids": ids})[0]


def stored(path):
    """Initializers of a quantised graph, by name, as numpy arrays."""
    return {t.name: numpy_helper.to_array(t) for t in onnx.load(path).graph.initializer}


def dequantised(init, name, kind):
    """The f32 weight the quantised graph computes with, and the per-element step (scale)."""
    q = init[f"{name}__q"].astype(np.float32)
    if kind == "group":
        rows_g, group, cols = init[f"{name}__gshape"]
        scale = np.broadcast_to(init[f"{name}__gscale"], (rows_g, group, cols)).reshape(q.shape)
    elif kind == "column":
        scale = np.broadcast_to(init[f"{name}__scale"].reshape(1, -1), q.shape)
    else:  # row: embedding tables
        scale = np.broadcast_to(init[f"{name}__scale"].reshape(-1, 1), q.shape)
    return q * scale, scale


class QuantizeWeights(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.w = make_weights()
        cls.fp32 = os.path.join(cls.tmp.name, "fp32.onnx")
        make_graph(cls.w, cls.fp32)
        cls.ids = np.array([0, 3, 17, 255, 128, 64, 9], dtype=np.int64)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def quantise(self, out, *flags):
        path = os.path.join(self.tmp.name, out)
        r = subprocess.run([sys.executable, SCRIPT, self.fp32, path, *flags], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        return path, r.stdout

    def check_full_range(self, init, name, kind):
        """Each scale is its channel's (or group's) max |w| / 127: the largest stored value is ±127.
        A step merely bounding the error would let a coarser scale pass."""
        q = np.abs(init[f"{name}__q"].astype(np.int32))
        if kind == "group":
            rows_g, group, cols = init[f"{name}__gshape"]
            peak = q.reshape(rows_g, group, cols).max(axis=1)
        else:
            peak = q.max(axis=0 if kind == "column" else 1)
        self.assertTrue(np.all(peak == 127), f"{name}: peaks {np.unique(peak)}")

    def check_exact(self, path, deq):
        """The graph computes with exactly the dequantised weights, and each is within half a step."""
        for name, (wq, scale) in deq.items():
            err = np.abs(wq - self.w[name])
            self.assertTrue(np.all(err <= scale / 2 + 1e-7), f"{name}: max error {err.max()} > step/2")
        weights = dict(self.w, **{k: v for k, (v, _) in deq.items()})
        np.testing.assert_allclose(run(path, self.ids), forward(weights, self.ids), rtol=1e-5, atol=1e-5)

    def test_fp32_graph_is_the_reference(self):
        self.assertGreaterEqual(self.w["w3"].size, MIN_ELEMENTS)
        np.testing.assert_allclose(run(self.fp32, self.ids), forward(self.w, self.ids), rtol=1e-5, atol=1e-5)

    def test_per_channel(self):
        path, out = self.quantise("pc.onnx")
        self.assertIn("quantised 4 weight tensors to int8 (per-channel)", out)
        init = stored(path)
        for name in ("emb", "w1", "w2", "w3"):
            self.assertNotIn(name, init)  # no f32 copy left behind
            self.assertEqual(init[f"{name}__q"].dtype, np.int8)
        self.assertEqual(init["b1"].dtype, np.float32)
        self.check_exact(path, {"emb": dequantised(init, "emb", "row"),
                                **{n: dequantised(init, n, "column") for n in ("w1", "w2", "w3")}})
        self.check_full_range(init, "emb", "row")
        for n in ("w1", "w2", "w3"):
            self.check_full_range(init, n, "column")
        self.assertEqual(int8_group(path), 0)
        self.assertLess(os.path.getsize(path), 0.4 * os.path.getsize(self.fp32))

    def test_group_of_32_rows(self):
        path, out = self.quantise("g32.onnx", "--group", "32")
        self.assertIn("2 to int8 per group of 32 rows", out)
        init = stored(path)
        self.assertNotIn("w3__gshape", init)  # 80 rows: falls back to one scale per column
        deq = {"emb": dequantised(init, "emb", "row"), "w1": dequantised(init, "w1", "group"),
               "w2": dequantised(init, "w2", "group"), "w3": dequantised(init, "w3", "column")}
        self.check_exact(path, deq)
        for n, kind in (("emb", "row"), ("w1", "group"), ("w2", "group"), ("w3", "column")):
            self.check_full_range(init, n, kind)
        self.assertEqual(int8_group(path), 32)
        # Why groups: the outlying row 5 no longer sets the step of rows 32..63, which carry no outlier.
        pc = dequantised(stored(self.quantise("pc2.onnx")[0]), "w1", "column")[0]
        grouped_err = np.abs(deq["w1"][0][32:] - self.w["w1"][32:]).mean()
        column_err = np.abs(pc[32:] - self.w["w1"][32:]).mean()
        self.assertLess(grouped_err, column_err / 10)

    def test_fp16_regex(self):
        path, out = self.quantise("mix.onnx", "--fp16", "^w2$")
        self.assertIn("stored 1 as fp16", out)
        init = stored(path)
        self.assertEqual(init["w2__h"].dtype, np.float16)
        self.assertNotIn("w2__q", init)
        weights = {"emb": dequantised(init, "emb", "row"), "w1": dequantised(init, "w1", "column"),
                   "w3": dequantised(init, "w3", "column")}
        fp16 = init["w2__h"].astype(np.float32)
        self.assertLessEqual(np.abs(fp16 - self.w["w2"]).max(), 1e-3 * np.abs(self.w["w2"]).max())
        self.check_exact(path, dict(weights, w2=(fp16, np.full_like(fp16, 1e-3))))

    def test_bad_group_is_refused(self):
        r = subprocess.run([sys.executable, SCRIPT, self.fp32, os.path.join(self.tmp.name, "bad.onnx"),
                            "--group", "0"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--group must be a positive number of rows", r.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.tmp.name, "bad.onnx")))


if __name__ == "__main__":
    unittest.main()
