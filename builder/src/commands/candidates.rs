//! `semtrace candidates`: raw LLM candidate facts of a text/Markdown document, as JSON.

use anyhow::Result;
use serde_json::json;

use super::llm_args;
use crate::candidates::llm::{by_category, generate, GenOptions};
use crate::cli::CandidatesArgs;
use crate::exit::{self, InputError};
use crate::llm::cache::write_atomic;

pub fn run(a: CandidatesArgs) -> Result<i32> {
    let units = llm_args::load_source(&a.source)?.units;
    if units.is_empty() {
        return Err(InputError(format!("{} has no text paragraphs", a.source.display())).into());
    }
    let client = llm_args::client(&a.llm, &a.out)?;
    let opts = GenOptions {
        chunk_chars: a.chunk_chars.max(1),
        max_facts_per_pass: a.max_facts.max(1),
        max_tokens: a.max_tokens,
        supplemental: !a.no_supplemental,
        ..Default::default()
    };
    let started = std::time::Instant::now();
    let generation = llm_args::runtime()?.block_on(generate(&client, &units, &opts))?;
    let stats = client.stats();
    let summary = json!({
        "source": a.source.display().to_string(),
        "units": units.len(),
        "chunks": generation.chunks,
        "returned": generation.returned,
        "kept": generation.candidates.len(),
        "dropped": generation.dropped,
        "dropped_total": generation.dropped.dropped(),
        "by_category": by_category(&generation.candidates),
        "llm": {
            "endpoint": client.config().endpoint(),
            "model": client.config().model,
            "stats": stats,
        },
        "seconds": started.elapsed().as_secs_f64(),
    });
    let mut doc = summary.clone();
    doc["candidates"] = serde_json::to_value(&generation.candidates)?;
    write_atomic(&a.out, &serde_json::to_vec_pretty(&doc)?)?;
    if a.json {
        println!("{}", serde_json::to_string(&summary)?);
    } else {
        eprintln!(
            "{} candidates from {} chunks ({} dropped) -> {}; LLM calls {}, cache hits {}, HTTP requests {}",
            generation.candidates.len(),
            generation.chunks,
            generation.dropped.dropped(),
            a.out.display(),
            stats.calls,
            stats.cache.hits,
            stats.http_requests
        );
    }
    Ok(exit::OK)
}
