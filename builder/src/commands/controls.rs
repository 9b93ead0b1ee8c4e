//! `semtrace controls`: selection-only control reviews of a document, as JSON.

use anyhow::Result;
use serde_json::json;

use super::llm_args;
use crate::cli::ControlsArgs;
use crate::controls::{control_seed, generate_controls, ControlOptions};
use crate::exit;
use crate::llm::cache::write_atomic;

pub fn run(a: ControlsArgs) -> Result<i32> {
    let text = llm_args::body_text(&llm_args::load_source(&a.source)?);
    let client = llm_args::client(&a.llm, &a.out)?;
    let opts = ControlOptions {
        temperature: a.temperature,
        top_p: a.top_p,
        max_tokens: a.max_tokens,
        max_paper_chars: a.max_paper_chars,
    };
    let reviews = llm_args::runtime()?.block_on(generate_controls(
        &client,
        &text,
        a.count,
        a.seed_base,
        &opts,
    ))?;
    let doc = json!({
        "source": a.source.display().to_string(),
        "seeds": (0..a.count).map(|k| control_seed(a.seed_base, k)).collect::<Vec<_>>(),
        "reviews": reviews,
        "llm": {"endpoint": client.config().endpoint(), "stats": client.stats()},
    });
    write_atomic(&a.out, &serde_json::to_vec_pretty(&doc)?)?;
    Ok(exit::OK)
}
