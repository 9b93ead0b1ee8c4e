//! `semtrace embed`: sentence vectors and their cosine similarities, as JSON (a quick check of the
//! embedder behind the builder's near-duplicate gate).

use anyhow::Result;
use semtrace_infer::embed::cosine;

use crate::cli::EmbedArgs;
use crate::exit;
use crate::model_store;

pub fn run(a: EmbedArgs) -> Result<i32> {
    let embedder = model_store::load_embedder(Some(&a.model))?;
    let texts: Vec<&str> = a.texts.iter().map(String::as_str).collect();
    let vecs = embedder.embed(&texts)?;
    let cos: Vec<Vec<f32>> = vecs
        .iter()
        .map(|x| vecs.iter().map(|y| cosine(x, y)).collect())
        .collect();
    let mut out = serde_json::json!({
        "model": a.model,
        "sha256": embedder.sha256(),
        "dim": embedder.dim(),
        "texts": texts,
        "cosine": cos,
    });
    if a.vectors {
        out["vectors"] = serde_json::json!(vecs);
    }
    println!("{}", serde_json::to_string_pretty(&out)?);
    Ok(exit::OK)
}
