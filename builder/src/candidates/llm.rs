//! Candidate-fact generation with an LLM (paper, appendix "Exact-12 Construction Details"):
//! evidence units are grouped into ~15,000-character chunks of consecutive units with a three-unit
//! overlap; every chunk gets an initial pass and a supplemental pass (which lists the facts already
//! found in that chunk and asks for different ones). Answers are JSON-schema constrained. Items that
//! are structurally invalid (wrong length, short quote, unknown unit, non-numeric scores) are dropped
//! and counted; scores are clamped to their ranges. No quality gate is applied here.

use semtrace_core::params::{MAX_WORDS, MIN_QUOTE_WORDS, MIN_WORDS};
use std::collections::BTreeMap;

use anyhow::Result;
use futures_util::future::try_join_all;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::llm::{ChatRequest, LlmClient, Message};
use crate::pipeline::candidate::{Attributes, Origin};
use crate::source::EvidenceUnit;

pub use semtrace_build::facts::CATEGORIES;

#[derive(Debug, Clone)]
pub struct GenOptions {
    /// Target characters per chunk (the paper's ~15,000).
    pub chunk_chars: usize,
    /// Units shared by consecutive chunks.
    pub overlap_units: usize,
    /// Most facts asked for per pass.
    pub max_facts_per_pass: usize,
    /// `max_tokens` of each request.
    pub max_tokens: u32,
    /// Whether to run the supplemental pass.
    pub supplemental: bool,
}

impl Default for GenOptions {
    fn default() -> Self {
        GenOptions {
            chunk_chars: 15_000,
            overlap_units: 3,
            max_facts_per_pass: 12,
            max_tokens: 4096,
            supplemental: true,
        }
    }
}

/// One candidate fact, as generated (not yet gated).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RawCandidate {
    pub text: String,
    pub quote: String,
    /// Evidence-unit id the quote is taken from.
    pub unit: String,
    /// The LLM's scores, clamped, in the one attribute type every candidate has (flattened: the
    /// JSON keeps its fields at the top level).
    #[serde(flatten)]
    pub attributes: Attributes,
    /// LlmInitial, LlmSupplemental or LlmRefill.
    pub origin: Origin,
    /// Index of the chunk the candidate came from.
    pub chunk: usize,
}

/// Why generated items were dropped or adjusted.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct DropCounts {
    pub fact_length: usize,
    pub quote_length: usize,
    pub unknown_unit: usize,
    pub bad_score: usize,
    pub empty: usize,
    /// Kept, but a score was clamped into range or the category replaced by "other".
    pub adjusted: usize,
}

impl DropCounts {
    pub fn dropped(&self) -> usize {
        self.fact_length + self.quote_length + self.unknown_unit + self.bad_score + self.empty
    }
    fn add(&mut self, o: &DropCounts) {
        self.fact_length += o.fact_length;
        self.quote_length += o.quote_length;
        self.unknown_unit += o.unknown_unit;
        self.bad_score += o.bad_score;
        self.empty += o.empty;
        self.adjusted += o.adjusted;
    }
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Generation {
    pub candidates: Vec<RawCandidate>,
    pub chunks: usize,
    /// Items the model returned, before dropping.
    pub returned: usize,
    pub dropped: DropCounts,
}

/// A chunk: a run of consecutive units.
#[derive(Debug, Clone, PartialEq)]
pub struct Chunk {
    pub index: usize,
    /// Range into the unit slice.
    pub start: usize,
    pub end: usize,
}

/// Consecutive units up to `chunk_chars` characters (a unit longer than that is a chunk alone);
/// each next chunk starts `overlap` units before the previous one ended (always moving forward).
pub fn make_chunks(units: &[EvidenceUnit], chunk_chars: usize, overlap: usize) -> Vec<Chunk> {
    let mut chunks = Vec::new();
    let mut start = 0;
    while start < units.len() {
        let mut end = start;
        let mut chars = 0;
        while end < units.len() {
            let n = units[end].text.chars().count() + 1;
            if end > start && chars + n > chunk_chars {
                break;
            }
            chars += n;
            end += 1;
        }
        chunks.push(Chunk {
            index: chunks.len(),
            start,
            end,
        });
        if end >= units.len() {
            break;
        }
        start = end.saturating_sub(overlap).max(start + 1);
    }
    chunks
}

/// The chunk as shown to the model: one `[unit-id] text` paragraph per unit.
pub fn chunk_text(units: &[EvidenceUnit]) -> String {
    units
        .iter()
        .map(|u| format!("[{}] {}", u.id, u.text))
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// The answer's JSON schema; `unit` is restricted to the chunk's unit ids.
pub fn facts_schema(unit_ids: &[&str], max_items: usize) -> Value {
    let score01 = json!({"type": "number", "minimum": 0, "maximum": 1});
    let score11 = json!({"type": "number", "minimum": -1, "maximum": 1});
    json!({
        "type": "object",
        "properties": {
            "facts": {
                "type": "array",
                "maxItems": max_items,
                "items": {
                    "type": "object",
                    "properties": {
                        "fact": {"type": "string", "minLength": 40, "maxLength": 320},
                        "quote": {"type": "string", "minLength": 20, "maxLength": 400},
                        "unit": {"type": "string", "enum": unit_ids},
                        "importance": score01,
                        "verifiability": score01,
                        "natural_expressibility": score01,
                        "sentiment": score11,
                        "rating_impact": score11,
                        "category": {"type": "string", "enum": CATEGORIES}
                    },
                    "required": ["fact", "quote", "unit", "importance", "verifiability",
                                 "natural_expressibility", "sentiment", "rating_impact", "category"],
                    "additionalProperties": false
                }
            }
        },
        "required": ["facts"],
        "additionalProperties": false
    })
}

const SYSTEM: &str =
    "You extract candidate facts from a scientific paper for a review-tracing system. \
You answer only with JSON that matches the given schema.";

fn rules(max: usize) -> String {
    format!(
        "Extract up to {max} facts from the paper excerpt below. Every paragraph starts with its unit id in \
square brackets, e.g. [p3.u2]. Rules for every fact:\n\
- TRUE: stated by the excerpt itself, not inferred, not from your own knowledge.\n\
- ATOMIC: one claim per fact; no lists of unrelated claims joined by \"and\".\n\
- SELF-CONTAINED: understandable without the paper; name the method, dataset or quantity instead of \
\"it\", \"this approach\" or \"the proposed method\" where the excerpt gives the name.\n\
- SPECIFIC: prefer facts with numbers, dataset names, named methods, model sizes, hyper-parameters, \
comparisons with named baselines.\n\
- NEUTRAL: describe, do not praise or criticise (no \"impressive\", \"novel\", \"unfortunately\").\n\
- {MIN_WORDS} to {MAX_WORDS} words, one sentence.\n\
- \"quote\": an exact quotation of at least {MIN_QUOTE_WORDS} consecutive words copied character for \
character from ONE paragraph of the excerpt that supports the fact (no unit id, no ellipsis, no \
paraphrase); \"unit\": that paragraph's id.\n\
- Scores: \"importance\" (0..1, how central to the paper's contribution), \"verifiability\" (0..1, how \
clearly the quote alone establishes the fact), \"natural_expressibility\" (0..1, how naturally a \
reviewer would mention it in a review), \"sentiment\" (-1..1, negative to positive tone of the fact; \
0 is neutral), \"rating_impact\" (-1..1, how the fact would move a reviewer's score; 0 for none), \
\"category\": one of {}.\n\
Skip references, acknowledgements, author lists and checklist boilerplate.",
        CATEGORIES.join(", ")
    )
}

fn initial_prompt(text: &str, max: usize) -> String {
    format!(
        "{}\n\nPaper excerpt:\n<<<\n{text}\n>>>\n\nAnswer with {{\"facts\": [...]}}.",
        rules(max)
    )
}

fn supplemental_prompt(text: &str, max: usize, found: &[String]) -> String {
    let list = if found.is_empty() {
        "(none)".to_string()
    } else {
        found
            .iter()
            .map(|f| format!("- {f}"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    format!(
        "{}\n\nThese facts were already extracted from this excerpt:\n{list}\n\nFind DIFFERENT facts: \
other claims, other paragraphs, other numbers. Do not restate, split or paraphrase the facts above.\n\n\
Paper excerpt:\n<<<\n{text}\n>>>\n\nAnswer with {{\"facts\": [...]}}.",
        rules(max)
    )
}

fn refill_prompt(text: &str, max: usize) -> String {
    format!(
        "{}\n\nThe paragraphs below are parts of the paper that no accepted fact covers yet. Look for \
facts in exactly these paragraphs, especially concrete settings, numbers and named components.\n\n\
Paper excerpt:\n<<<\n{text}\n>>>\n\nAnswer with {{\"facts\": [...]}}.",
        rules(max)
    )
}

/// One fact as the model returns it; numbers are `Value`s so that one bad item does not sink the answer.
#[derive(Debug, Deserialize)]
pub struct FactItem {
    #[serde(default)]
    pub fact: String,
    #[serde(default)]
    pub quote: String,
    #[serde(default)]
    pub unit: String,
    #[serde(default)]
    pub importance: Value,
    #[serde(default)]
    pub verifiability: Value,
    #[serde(default)]
    pub natural_expressibility: Value,
    #[serde(default)]
    pub sentiment: Value,
    #[serde(default)]
    pub rating_impact: Value,
    #[serde(default)]
    pub category: String,
}

#[derive(Debug, Deserialize)]
pub struct FactsAnswer {
    pub facts: Vec<FactItem>,
}

fn words(s: &str) -> usize {
    s.split_whitespace().count()
}

fn normalize_ws(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Validate one item: drop structurally invalid ones (counted), clamp scores, default the category.
pub fn validate_item(
    item: FactItem,
    unit_ids: &[&str],
    origin: Origin,
    chunk: usize,
    counts: &mut DropCounts,
) -> Option<RawCandidate> {
    let text = normalize_ws(&item.fact);
    let quote = normalize_ws(
        item.quote
            .trim_matches(|c: char| c == '"' || c == '\u{201c}' || c == '\u{201d}'),
    );
    if text.is_empty() || quote.is_empty() {
        counts.empty += 1;
        return None;
    }
    let n = words(&text);
    if !(MIN_WORDS..=MAX_WORDS).contains(&n) {
        counts.fact_length += 1;
        return None;
    }
    if words(&quote) < MIN_QUOTE_WORDS {
        counts.quote_length += 1;
        return None;
    }
    let unit = item
        .unit
        .trim()
        .trim_matches(|c| c == '[' || c == ']')
        .to_string();
    if !unit_ids.contains(&unit.as_str()) {
        counts.unknown_unit += 1;
        return None;
    }
    let mut adjusted = false;
    let mut score = |v: &Value, lo: f64, hi: f64| -> Option<f64> {
        let x = match v {
            Value::Number(n) => n.as_f64(),
            Value::String(s) => s.trim().parse::<f64>().ok(),
            _ => None,
        }
        .filter(|x| x.is_finite())?;
        let c = x.clamp(lo, hi);
        if c != x {
            adjusted = true;
        }
        Some(c)
    };
    let scores = (
        score(&item.importance, 0.0, 1.0),
        score(&item.verifiability, 0.0, 1.0),
        score(&item.natural_expressibility, 0.0, 1.0),
        score(&item.sentiment, -1.0, 1.0),
        score(&item.rating_impact, -1.0, 1.0),
    );
    let (
        Some(importance),
        Some(verifiability),
        Some(naturalness),
        Some(sentiment),
        Some(rating_impact),
    ) = scores
    else {
        counts.bad_score += 1;
        return None;
    };
    let cat = item.category.trim().to_lowercase();
    let category = if CATEGORIES.contains(&cat.as_str()) {
        cat
    } else {
        adjusted = true;
        "other".to_string()
    };
    if adjusted {
        counts.adjusted += 1;
    }
    Some(RawCandidate {
        text,
        quote,
        unit,
        attributes: Attributes {
            importance,
            verifiability,
            naturalness,
            sentiment,
            rating_impact,
            category,
        },
        origin,
        chunk,
    })
}

struct PassResult {
    candidates: Vec<RawCandidate>,
    returned: usize,
    counts: DropCounts,
}

async fn run_pass(
    client: &LlmClient,
    units: &[EvidenceUnit],
    chunk: usize,
    prompt: String,
    origin: Origin,
    opts: &GenOptions,
) -> Result<PassResult> {
    let ids: Vec<&str> = units.iter().map(|u| u.id.as_str()).collect();
    let req = ChatRequest {
        messages: vec![Message::system(SYSTEM), Message::user(prompt)],
        schema: Some((
            "candidate_facts".to_string(),
            facts_schema(&ids, opts.max_facts_per_pass),
        )),
        max_tokens: Some(opts.max_tokens),
        ..Default::default()
    };
    let answer: FactsAnswer = client.chat_json(&req).await?;
    let returned = answer.facts.len();
    let mut counts = DropCounts::default();
    let candidates = answer
        .facts
        .into_iter()
        .filter_map(|it| validate_item(it, &ids, origin, chunk, &mut counts))
        .collect();
    Ok(PassResult {
        candidates,
        returned,
        counts,
    })
}

fn collect(chunks: usize, passes: Vec<PassResult>) -> Generation {
    let mut g = Generation {
        chunks,
        ..Default::default()
    };
    for p in passes {
        g.returned += p.returned;
        g.dropped.add(&p.counts);
        g.candidates.extend(p.candidates);
    }
    g
}

/// Initial + supplemental passes over every chunk (chunks run concurrently, bounded by the client).
/// Candidates come out in chunk order, initial before supplemental.
pub async fn generate(
    client: &LlmClient,
    units: &[EvidenceUnit],
    opts: &GenOptions,
) -> Result<Generation> {
    let chunks = make_chunks(units, opts.chunk_chars, opts.overlap_units);
    let per_chunk = chunks.iter().map(|c| async move {
        let cu = &units[c.start..c.end];
        let text = chunk_text(cu);
        let first = run_pass(
            client,
            cu,
            c.index,
            initial_prompt(&text, opts.max_facts_per_pass),
            Origin::LlmInitial,
            opts,
        )
        .await?;
        let mut out = vec![];
        if opts.supplemental {
            let found: Vec<String> = first.candidates.iter().map(|c| c.text.clone()).collect();
            let second = run_pass(
                client,
                cu,
                c.index,
                supplemental_prompt(&text, opts.max_facts_per_pass, &found),
                Origin::LlmSupplemental,
                opts,
            )
            .await?;
            out.push(first);
            out.push(second);
        } else {
            out.push(first);
        }
        anyhow::Ok(out)
    });
    let passes = try_join_all(per_chunk).await?;
    Ok(collect(
        chunks.len(),
        passes.into_iter().flatten().collect(),
    ))
}

/// Targeted refill over evidence not covered by the surviving facts: one pass per chunk of the
/// uncovered units (same chunking), origin "llm-refill". Chunk indices count refill chunks.
pub async fn refill(
    client: &LlmClient,
    uncovered_units: &[EvidenceUnit],
    opts: &GenOptions,
) -> Result<Generation> {
    let chunks = make_chunks(uncovered_units, opts.chunk_chars, opts.overlap_units);
    let passes = try_join_all(chunks.iter().map(|c| {
        let cu = &uncovered_units[c.start..c.end];
        run_pass(
            client,
            cu,
            c.index,
            refill_prompt(&chunk_text(cu), opts.max_facts_per_pass),
            Origin::LlmRefill,
            opts,
        )
    }))
    .await?;
    Ok(collect(chunks.len(), passes))
}

/// Candidates per category, for summaries.
pub fn by_category(c: &[RawCandidate]) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for x in c {
        *m.entry(x.attributes.category.clone()).or_insert(0) += 1;
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(i: usize, chars: usize) -> EvidenceUnit {
        EvidenceUnit {
            id: format!("p1.u{i}"),
            page: 1,
            section: None,
            text: "x".repeat(chars),
        }
    }

    #[test]
    fn chunks_overlap_by_three_units_and_cover_everything() {
        let units: Vec<_> = (1..=40).map(|i| unit(i, 999)).collect();
        let chunks = make_chunks(&units, 15_000, 3);
        assert_eq!(chunks[0].start, 0);
        assert_eq!(chunks[0].end, 15);
        for w in chunks.windows(2) {
            assert_eq!(w[1].start, w[0].end - 3);
        }
        assert_eq!(chunks.last().unwrap().end, 40);
    }

    #[test]
    fn chunking_always_progresses() {
        // Units longer than a chunk: one per chunk, still advancing despite the overlap.
        let units: Vec<_> = (1..=5).map(|i| unit(i, 20_000)).collect();
        let chunks = make_chunks(&units, 15_000, 3);
        assert_eq!(chunks.len(), 5);
        assert!(chunks.iter().all(|c| c.end == c.start + 1));
        assert!(make_chunks(&[], 15_000, 3).is_empty());
    }

    fn item(fact: &str, quote: &str, unit: &str, imp: Value) -> FactItem {
        FactItem {
            fact: fact.into(),
            quote: quote.into(),
            unit: unit.into(),
            importance: imp,
            verifiability: json!(0.5),
            natural_expressibility: json!(0.5),
            sentiment: json!(0.0),
            rating_impact: json!(-3.0),
            category: "result".into(),
        }
    }

    #[test]
    fn validation_drops_and_clamps() {
        let ids = ["p1.u1"];
        let mut c = DropCounts::default();
        let good = "The model reaches 28.4 BLEU on the WMT 2014 English-to-German translation task after training.";
        let q = "achieves 28.4 BLEU on the WMT 2014";
        let r = validate_item(
            item(good, q, "p1.u1", json!(1.5)),
            &ids,
            Origin::LlmInitial,
            0,
            &mut c,
        )
        .unwrap();
        assert_eq!(r.attributes.importance, 1.0);
        assert_eq!(r.attributes.rating_impact, -1.0);
        assert_eq!(c.adjusted, 1);
        assert!(validate_item(
            item("Too short fact.", q, "p1.u1", json!(0.5)),
            &ids,
            Origin::LlmInitial,
            0,
            &mut c
        )
        .is_none());
        assert!(validate_item(
            item(good, "four words only here", "p1.u1", json!(0.5)),
            &ids,
            Origin::LlmInitial,
            0,
            &mut c
        )
        .is_none());
        assert!(validate_item(
            item(good, q, "p9.u9", json!(0.5)),
            &ids,
            Origin::LlmInitial,
            0,
            &mut c
        )
        .is_none());
        assert!(validate_item(
            item(good, q, "p1.u1", json!("n/a")),
            &ids,
            Origin::LlmInitial,
            0,
            &mut c
        )
        .is_none());
        assert_eq!(
            (c.fact_length, c.quote_length, c.unknown_unit, c.bad_score),
            (1, 1, 1, 1)
        );
        assert_eq!(c.dropped(), 4);
    }

    #[test]
    fn schema_restricts_units_and_categories() {
        let s = facts_schema(&["p1.u1", "p1.u2"], 5);
        let items = &s["properties"]["facts"]["items"];
        assert_eq!(
            items["properties"]["unit"]["enum"],
            json!(["p1.u1", "p1.u2"])
        );
        assert_eq!(
            items["properties"]["category"]["enum"]
                .as_array()
                .unwrap()
                .len(),
            8
        );
        assert_eq!(s["properties"]["facts"]["maxItems"], 5);
    }
}
