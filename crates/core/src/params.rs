//! Every frozen number of the method, in one place: the paper's Exact-12 configuration
//! (`../shared/paper/semtrace-paper.tex`, section named per constant) and the project's own
//! additions (docs section named per constant). Code uses these names; a build or a decode never
//! changes them. `tests::no_other_file_defines_a_frozen_constant` checks that no other source file
//! defines a constant of the same name or (for fractional values) the same value.

// --- Detection (paper, "Detection" and appendix "Detection Details") ---

/// τ_min: a fact counts as stated when some window entails it at least this much. The same value
/// is τ_mention of the priors, the activation of the implication risk ρ and the generic-mention
/// gate: all three ask "would the detector see this fact here?".
pub const TAU_MIN: f64 = 0.52;
/// Decision margin between the two sides of a position.
pub const MARGIN: f64 = 0.20;
/// Both sides at or above this: the position is erased as `both`.
pub const TAU_BOTH: f64 = 0.90;
/// Observed positions needed before a review is eligible for a verdict.
pub const O_MIN: usize = 8;
/// The score reported for an ineligible review.
pub const INELIGIBLE_SCORE: i64 = -13;
/// Sentences per review window.
pub const WINDOW_SENTENCES: usize = 2;
/// Windows scored per review, at most.
pub const MAX_WINDOWS: usize = 128;
/// Significance level of the verdict.
pub const ALPHA: f64 = 0.01;
/// Positions (pairs of facts) of the Exact-12 configuration.
pub const K_EXACT: usize = 12;

// --- Gates (paper, "Generating and Filtering Candidate Facts"; docs/method.md, "3. Gates") ---

/// Fact length in words.
pub const MIN_WORDS: usize = 12;
pub const MAX_WORDS: usize = 35;
/// Shortest supporting quotation, in words.
pub const MIN_QUOTE_WORDS: usize = 5;
/// Entailment of the fact by its local source window.
pub const TAU_SOURCE: f64 = 0.68;
/// Neutrality: |sentiment| and |rating impact| at most these.
pub const MAX_SENTIMENT: f64 = 0.35;
pub const MAX_RATING_IMPACT: f64 = 0.35;
/// Near-duplicate: sentence-embedding cosine at or above this.
pub const TAU_NEAR_DUP_COSINE: f64 = 0.99;
/// Semantic duplicate: bidirectional entailment and lexical Jaccard at or above these.
pub const TAU_EQUIV_ENTAILMENT: f64 = 0.75;
pub const TAU_EQUIV_JACCARD: f64 = 0.35;

// --- Selection (paper, "Selecting Reliable and Nonredundant Facts") ---

/// Utility weights of B(f) = α_e·e + α_i·i + α_v·v + α_n·n + α_r·(1 − r).
pub const ALPHA_E: f64 = 1.2;
pub const ALPHA_I: f64 = 0.8;
pub const ALPHA_V: f64 = 0.5;
pub const ALPHA_N: f64 = 0.5;
pub const ALPHA_R: f64 = 1.0;
/// Redundancy weights of R(f, g) = β_c·max(0, corr) + β_l·J_lex.
pub const BETA_CORR: f64 = 0.6;
pub const BETA_LEX: f64 = 0.4;
/// MMR trade-off λ_MMR.
pub const LAMBDA_MMR: f64 = 1.2;

// --- Pairing and slot assignment (paper, "Code-Aware Pairing, Orientation, and Slot Assignment"
// and appendix "Exact-12 Construction Details") ---

/// Objective weights of L = λ_A·A + λ_P·P + λ_H·H.
pub const LAMBDA_A: f64 = 8.0;
pub const LAMBDA_P: f64 = 1.0;
pub const LAMBDA_H: f64 = 1.0;
/// Pair-cost weights of C_pair: priors/importance/naturalness gaps, co-mention, redundancy,
/// category mismatch.
pub const PAIR_W_PRIOR: f64 = 3.0;
pub const PAIR_W_CO: f64 = 2.0;
pub const PAIR_W_R: f64 = 2.0;
pub const PAIR_W_CAT: f64 = 0.2;

// --- The project's own additions (docs/method.md) ---

/// Offline candidates: how much less natural (n) a sentence without an authorial anchor is
/// ("Candidates", heuristic attributes).
pub const UNANCHORED_PENALTY: f64 = 0.25;
/// Offline builds: selection draws from the ⌈QUALITY_SHORTLIST·2K⌉ approved offline facts of
/// highest P(pass the fact rubric)·(1 − r_f) (docs/method.md, "Facts a reviewer would state").
pub const QUALITY_SHORTLIST: f64 = 1.5;
/// Offline builds: approved facts below this P(pass the fact rubric) enter selection only to make
/// up 2K (docs/method.md, "Facts a reviewer would state").
pub const QUALITY_FLOOR: f64 = 0.5;
/// Offline candidates: sentences this long (words) are also split into clauses ("Candidates").
pub const LONG_SENTENCE_WORDS: usize = 25;
/// Largest K a build accepts (docs/method.md, "K beyond 12").
pub const MAX_K: usize = 48;
/// Largest review the detector reads, in bytes (docs/cli.md, exit codes).
pub const MAX_REVIEW_BYTES: usize = 1 << 20;

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    /// (name, value) of every constant above, read from this file's own text so the list cannot
    /// fall behind it.
    fn frozen() -> Vec<(String, String)> {
        let text = include_str!("params.rs");
        let head = &text[..text.find("#[cfg(test)]").unwrap()];
        head.lines().filter_map(|l| definition(l.trim())).collect()
    }

    /// `pub const NAME: T = VALUE;` → (NAME, VALUE).
    fn definition(line: &str) -> Option<(String, String)> {
        let rest = line
            .strip_prefix("pub const ")
            .or_else(|| line.strip_prefix("const "))?;
        let (name, rest) = rest.split_once(':')?;
        let (_, value) = rest.split_once('=')?;
        Some((
            name.trim().to_string(),
            value.trim().trim_end_matches(';').trim().to_string(),
        ))
    }

    fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                rust_files(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }

    #[test]
    fn no_other_file_defines_a_frozen_constant() {
        let frozen = frozen();
        assert!(frozen.len() >= 30, "{frozen:?}");
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut files = Vec::new();
        for crate_dir in [
            "crates/core/src",
            "crates/infer/src",
            "crates/build/src",
            "crates/eval/src",
            "builder/src",
            "detector-wasm/src",
        ] {
            rust_files(&root.join(crate_dir), &mut files);
        }
        assert!(files.len() > 50, "{} source files", files.len());
        let mut found = Vec::new();
        for f in files {
            if f.ends_with("crates/core/src/params.rs") {
                continue;
            }
            let text = std::fs::read_to_string(&f).unwrap();
            for (n, line) in text.lines().enumerate() {
                let Some((name, value)) = definition(line.trim()) else {
                    continue;
                };
                // A value with two decimals or more (0.52, 0.68) is distinctive; 1.0, 0.8 or 12
                // are not (layout tolerances, sizes).
                let distinctive = value
                    .split_once('.')
                    .is_some_and(|(_, d)| d.chars().filter(char::is_ascii_digit).count() >= 2);
                let same_value = distinctive && frozen.iter().any(|(_, v)| *v == value);
                if frozen.iter().any(|(k, _)| *k == name) || same_value {
                    found.push(format!("{}:{}: {}", f.display(), n + 1, line.trim()));
                }
            }
        }
        assert!(
            found.is_empty(),
            "frozen constants defined outside params.rs (use semtrace_core::params):\n{}",
            found.join("\n")
        );
    }
}
