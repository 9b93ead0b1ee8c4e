//! Embed the project's own NLI model (models/semtrace-nli-minilm) as the default, when present.
use std::path::Path;

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../models/semtrace-nli-minilm");
    println!("cargo::rustc-check-cfg=cfg(has_default_model)");
    for f in ["model.onnx", "tokenizer.json", "config.json"] {
        println!("cargo::rerun-if-changed={}", dir.join(f).display());
    }
    if ["model.onnx", "tokenizer.json", "config.json"]
        .iter()
        .all(|f| dir.join(f).is_file())
    {
        println!("cargo::rustc-cfg=has_default_model");
        println!(
            "cargo::rustc-env=SEMTRACE_DEFAULT_MODEL_DIR={}",
            dir.canonicalize().unwrap().display()
        );
    }
}
