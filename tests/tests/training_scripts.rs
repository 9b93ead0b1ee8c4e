//! The training scripts that produce shipped artefacts, run for real in the test venv: today
//! `training/quantize_weights.py`, which wrote the embedded model.onnx (group-wise weight-only int8),
//! on a small random graph of the same operator kinds, against onnxruntime
//! (`training/tests/test_quantize_weights.py` holds the assertions); and `common.long_premise_pairs`,
//! the rule-made training pairs of stages 3d/3e (`training/tests/test_long_premises.py`). The full
//! training stages need torch and hours of CPU; they are reproduced by the model card's commands, not
//! here.

use semtrace_e2e::*;

#[test]
fn quantize_weights_is_exact_to_its_dequantised_weights() {
    let out = std::process::Command::new(python())
        .args(["-m", "unittest", "discover", "-v", "-s"])
        .arg(root().join("training/tests"))
        .current_dir(root())
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("run the test venv's python");
    let log = format!("{}{}", stdout(&out), stderr(&out));
    assert!(out.status.success(), "training/tests failed:\n{log}");
    // Every case ran (unittest exits 0 on zero tests found).
    assert!(log.contains("Ran 9 tests"), "{log}");
}
