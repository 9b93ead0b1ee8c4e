//! The training scripts that produce shipped artefacts, run for real in the test venv: today
//! `training/quantize_weights.py`, which wrote the embedded model.onnx (group-wise weight-only int8),
//! on a small random graph of the same operator kinds, against onnxruntime
//! (`training/tests/test_quantize_weights.py` holds the assertions); `common.long_premise_pairs`,
//! the rule-made training pairs of stages 3d/3e (`training/tests/test_long_premises.py`); and the
//! teacher pool's windows and train_nli.py's padding (`training/tests/test_teacher_pool.py`, whose
//! torch half is skipped in the test venv, which has no torch). The full
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
    // Every case written was found (unittest exits 0 on zero tests found): the count is taken from
    // the files, so adding a case cannot leave this assertion stale.
    let written: usize = std::fs::read_dir(root().join("training/tests"))
        .expect("training/tests")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "py"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("read a training test");
            text.lines()
                .filter(|l| l.trim_start().starts_with("def test_"))
                .count()
        })
        .sum();
    assert!(written >= 13, "training/tests lost cases: {written}");
    assert!(log.contains(&format!("Ran {written} tests")), "{log}");
}
