//! The build report: every candidate and its fate at every gate, the priors, the selection, the
//! assignment and timings — as JSON for machines and as a Markdown summary for people.

use std::fmt::Write as _;

use serde::Serialize;

use super::candidate::{Candidate, CandidateSource};
use super::gates::{Gate, GateRecord};
use semtrace_source::ScopeCut;

pub const REPORT_FORMAT: &str = "semtrace-build-report";

#[derive(Debug, Clone, Serialize)]
pub struct DocumentInfo {
    pub path: String,
    pub kind: String,
    pub sha256: String,
    pub title: String,
    pub pages: u32,
    pub units: usize,
    pub excluded_units: usize,
    pub cut: Option<ScopeCut>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CandidateEntry {
    #[serde(flatten)]
    pub candidate: Candidate,
    #[serde(flatten)]
    pub gates: GateRecord,
    /// Natural-mention rate r_f (approved candidates only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub r: Option<f64>,
    /// Control coverage q_{f,k} (approved candidates, when there are controls).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub q: Option<Vec<f64>>,
    /// Mention features (approved candidates; names in `priors.features`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub features: Option<Vec<f64>>,
    /// Offline approved candidates: the fact-quality model's P(pass the rubric), used as n_f.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quality: Option<f64>,
    /// Offline approved candidates a fill-only rule hit (`rule: evidence`): selected only to make
    /// up 2K, like those under the quality floor.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fill_only: Option<String>,
    /// Utility B(f) (approved candidates).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub utility: Option<f64>,
    /// Rank in the MMR selection (selected candidates).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub selected_rank: Option<usize>,
}

#[derive(Debug, Clone, Serialize)]
pub struct GateCount {
    pub gate: Gate,
    pub entered: usize,
    pub dropped: usize,
}

/// How many candidates one source gave in one pass, and how many of them passed every gate and
/// were selected. `pass`: "initial" or "refill" (the targeted refill over uncovered units).
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct SourceCount {
    pub source: CandidateSource,
    pub pass: String,
    pub candidates: usize,
    pub passed: usize,
    pub selected: usize,
}

/// Per-source counts of the candidate entries, one row per (source, pass) that gave candidates.
pub fn source_counts(entries: &[CandidateEntry]) -> Vec<SourceCount> {
    let mut rows: Vec<SourceCount> = Vec::new();
    for e in entries {
        let source = e.candidate.source;
        let pass = if e.candidate.origin.is_refill() {
            "refill"
        } else {
            "initial"
        };
        let i = match rows
            .iter()
            .position(|r| r.source == source && r.pass == pass)
        {
            Some(i) => i,
            None => {
                rows.push(SourceCount {
                    source,
                    pass: pass.into(),
                    candidates: 0,
                    passed: 0,
                    selected: 0,
                });
                rows.len() - 1
            }
        };
        let r = &mut rows[i];
        r.candidates += 1;
        r.passed += usize::from(e.gates.kept);
        r.selected += usize::from(e.selected_rank.is_some());
    }
    // Offline kinds first, then LLM (the enum's order); the initial pass before the refill.
    rows.sort_by_key(|r| (r.source, r.pass != "initial"));
    rows
}

#[derive(Debug, Clone, Serialize)]
pub struct Priors {
    /// "controls-dir", "llm", "learned" (embedded mention model) or "none".
    pub source: String,
    pub controls: Vec<String>,
    pub tau_mention: f64,
    pub note: String,
    /// Names of the per-candidate mention features.
    pub features: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SelectionEntry {
    pub rank: usize,
    pub id: String,
    pub utility: f64,
    pub max_redundancy: f64,
    pub mmr_score: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct PositionEntry {
    pub index: usize,
    pub slot: String,
    pub slot_label: String,
    /// Fact ids on side 0 and side 1.
    pub facts: [String; 2],
    pub bit: u8,
    /// The fact the codeword selects (side `bit`).
    pub selected: String,
    pub selected_text: String,
    pub pair_cost: f64,
    /// E(selected → unselected).
    pub implication: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Objective {
    pub total: f64,
    pub a: f64,
    pub p: f64,
    pub h: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct AssignmentInfo {
    pub objective: Objective,
    pub initial: Objective,
    pub seed: u64,
    pub positions: Vec<PositionEntry>,
}

/// The trade-off K buys: a longer carrier for a smaller attainable p-value.
#[derive(Debug, Clone, Serialize)]
pub struct Evidence {
    pub alpha: f64,
    /// 2^−K: all K positions observed and matching.
    pub min_p_value: f64,
    pub o_min: usize,
    /// Matches an `exposed` verdict needs at `alpha` with all K observed, and with O = o_min
    /// (None: not attainable there).
    pub needed_all_observed: Option<usize>,
    pub needed_at_o_min: Option<usize>,
}

impl Evidence {
    pub fn new(k: usize, o_min: usize, alpha: f64) -> Evidence {
        use semtrace_core::decode::{binomial_upper_tail, matches_needed};
        Evidence {
            alpha,
            min_p_value: binomial_upper_tail(k, k),
            o_min,
            needed_all_observed: matches_needed(k, alpha),
            needed_at_o_min: matches_needed(o_min, alpha),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Timing {
    pub stage: String,
    pub seconds: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Failure {
    pub stage: String,
    /// The gate that removed the most candidates, i.e. the one that starved the pool.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub starving_gate: Option<Gate>,
    pub message: String,
}

/// How candidate facts were produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BuildMode {
    /// From the document alone (sentences, clauses, captions), no LLM.
    Offline,
    /// Written by an LLM from the evidence units.
    Llm,
}

impl std::fmt::Display for BuildMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            BuildMode::Offline => "offline",
            BuildMode::Llm => "llm",
        })
    }
}

/// Whether a build produced a bundle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BuildStatus {
    Ok,
    /// Too few facts survived the gates; the report says which gate starved the pool.
    Failed,
}

impl std::fmt::Display for BuildStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            BuildStatus::Ok => "ok",
            BuildStatus::Failed => "failed",
        })
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct BuildReport {
    pub format: String,
    pub format_version: String,
    pub status: BuildStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<Failure>,
    pub builder: String,
    pub document: DocumentInfo,
    pub mode: BuildMode,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub llm: Option<serde_json::Value>,
    pub model: String,
    pub model_sha256: String,
    pub embedder: String,
    pub k: usize,
    pub thresholds: serde_json::Value,
    pub gate_counts: Vec<GateCount>,
    /// Candidates per source and pass, and how many passed the gates and were selected.
    pub source_counts: Vec<SourceCount>,
    pub refill: Option<String>,
    pub priors: Option<Priors>,
    pub selection: Vec<SelectionEntry>,
    pub codeword: Vec<u8>,
    pub codeword_source: String,
    pub assignment: Option<AssignmentInfo>,
    /// How strong a verdict this bundle can give (absent when the build failed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evidence: Option<Evidence>,
    pub candidates: Vec<CandidateEntry>,
    /// Seconds per stage (not in the bundle, so bundles stay byte-for-byte reproducible).
    pub timings: Vec<Timing>,
}

fn esc(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// The readable summary.
pub fn markdown(r: &BuildReport) -> String {
    let mut s = String::new();
    let d = &r.document;
    let _ = writeln!(s, "# SemTrace build report: {}\n", esc(&d.title));
    let _ = writeln!(s, "- status: **{}**", r.status);
    if let Some(f) = &r.failure {
        let _ = writeln!(s, "- failed at stage `{}`: {}", f.stage, f.message);
        if let Some(g) = f.starving_gate {
            let _ = writeln!(s, "- starving gate: `{}`", g.name());
        }
    }
    let _ = writeln!(
        s,
        "- document: `{}` ({}, {} pages, sha256 `{}`)",
        d.path, d.kind, d.pages, d.sha256
    );
    let _ = writeln!(
        s,
        "- retained body: {} evidence units; {} excluded after the cut",
        d.units, d.excluded_units
    );
    match &d.cut {
        Some(c) => {
            let _ = writeln!(
                s,
                "- scope cut: page {}, at \"{}\" ({})",
                c.page,
                esc(&c.heading),
                c.reason
            );
        }
        None => {
            let _ = writeln!(s, "- scope cut: none found (whole document retained)");
        }
    }
    let _ = writeln!(
        s,
        "- mode: {}; NLI model `{}` (sha256 `{}`); embedder `{}`",
        r.mode, r.model, r.model_sha256, r.embedder
    );
    let _ = writeln!(
        s,
        "- K = {}, codeword {} ({})",
        r.k,
        r.codeword.iter().map(u8::to_string).collect::<String>(),
        r.codeword_source
    );
    if let Some(e) = &r.evidence {
        let need = |m: Option<usize>, o: usize| match m {
            Some(m) => format!("{m} of {o}"),
            None => format!("not attainable with {o}"),
        };
        let _ = writeln!(
            s,
            "- evidence: smallest attainable p-value {:.2e} (2^-{}); at alpha {} `exposed` needs {} observed, {} at the eligibility bound",
            e.min_p_value,
            r.k,
            e.alpha,
            need(e.needed_all_observed, r.k),
            need(e.needed_at_o_min, e.o_min)
        );
    }
    if let Some(p) = &r.priors {
        let _ = writeln!(s, "- priors: {} — {}", p.source, p.note);
    }
    if let Some(x) = &r.refill {
        let _ = writeln!(s, "- refill: {x}");
    }
    let _ = writeln!(
        s,
        "\n## Gates\n\n| gate | entered | dropped |\n|---|---:|---:|"
    );
    for g in &r.gate_counts {
        let _ = writeln!(s, "| {} | {} | {} |", g.gate.name(), g.entered, g.dropped);
    }
    let _ = writeln!(
        s,
        "\n## Candidates per source\n\n| source | pass | candidates | passed gates | selected |\n|---|---|---:|---:|---:|"
    );
    for c in &r.source_counts {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} |",
            c.source, c.pass, c.candidates, c.passed, c.selected
        );
    }
    if let Some(a) = &r.assignment {
        let _ = writeln!(
            s,
            "\n## Positions\n\nObjective 8A + P + H = {:.3} (A {:.3}, P {:.3}, H {:.3}); matching start {:.3}.\n",
            a.objective.total, a.objective.a, a.objective.p, a.objective.h, a.initial.total
        );
        let _ = writeln!(s, "| # | slot | bit | selected fact | other side | pair cost | E(sel→other) | r_f sel / other |\n|---:|---|---:|---|---|---:|---:|---:|");
        let entry = |id: &str| r.candidates.iter().find(|c| c.candidate.id == id);
        let rate = |id: &str| {
            entry(id)
                .and_then(|c| c.r)
                .map(|x| format!("{x:.2}"))
                .unwrap_or_else(|| "–".into())
        };
        for p in &a.positions {
            let other = &p.facts[1 - p.bit as usize];
            let other_text = entry(other)
                .map(|c| c.candidate.text.as_str())
                .unwrap_or("");
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} ({}) | {} ({}) | {:.3} | {:.2} | {} / {} |",
                p.index,
                esc(&p.slot_label),
                p.bit,
                esc(&p.selected_text),
                p.selected,
                esc(other_text),
                other,
                p.pair_cost,
                p.implication,
                rate(&p.selected),
                rate(other)
            );
        }
    }
    if !r.selection.is_empty() {
        let _ = writeln!(s, "\n## Selection (MMR, λ = 1.2)\n\n| rank | fact | B(f) | max R | score |\n|---:|---|---:|---:|---:|");
        for e in &r.selection {
            let _ = writeln!(
                s,
                "| {} | {} | {:.3} | {:.3} | {:.3} |",
                e.rank, e.id, e.utility, e.max_redundancy, e.mmr_score
            );
        }
    }
    let _ = writeln!(s, "\n## Candidates\n\n| id | unit | origin | source | outcome | e | fact |\n|---|---|---|---|---|---:|---|");
    for c in &r.candidates {
        let outcome = if let Some(rank) = c.selected_rank {
            format!("selected #{rank}")
        } else if c.gates.kept {
            "approved".to_string()
        } else {
            format!(
                "dropped: {} — {}{}",
                c.gates.dropped_by.map(Gate::name).unwrap_or("?"),
                c.gates.reason.as_deref().unwrap_or(""),
                c.gates
                    .duplicate_of
                    .as_deref()
                    .map(|d| format!(" (of {d})"))
                    .unwrap_or_default()
            )
        };
        let e = c
            .gates
            .source_entailment
            .map(|e| format!("{e:.2}"))
            .unwrap_or_default();
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} |",
            c.candidate.id,
            c.gates.unit,
            c.candidate.origin,
            c.candidate.source,
            esc(&outcome),
            e,
            esc(&c.candidate.text)
        );
    }
    let _ = writeln!(s, "\n## Timings\n\n| stage | seconds |\n|---|---:|");
    for t in &r.timings {
        let _ = writeln!(s, "| {} | {:.1} |", t.stage, t.seconds);
    }
    s
}
