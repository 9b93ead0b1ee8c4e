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
                  2 usage error; 3 bad input (bundle or review); 4 model error (cannot load, or not \
                  the bundle's model); 5 file-system or network error."
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
    /// Manage NLI models: fetch the paper's DeBERTa-v3 models, import a local one, list them.
    Model {
        #[command(subcommand)]
        command: ModelCommand,
    },
    /// Measure the engine (pairs/s) and the exhaustive decoder (wall time per review) on real reviews.
    Bench(BenchArgs),
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

#[derive(Args, Debug, Clone)]
pub struct ModelArgs {
    /// NLI model: a registered name (see `semtrace model list`), a model directory
    /// (model.onnx + tokenizer.json + config.json), or "default" for the embedded model.
    #[arg(long, short = 'm', default_value = "default", env = "SEMTRACE_MODEL")]
    pub model: String,
    /// Pairs per inference batch.
    #[arg(long, default_value_t = 8)]
    pub batch_size: usize,
}

#[derive(Args, Debug)]
pub struct DetectArgs {
    /// Signature bundle (JSON) of the protected copy.
    #[arg(long, short = 'b')]
    pub bundle: PathBuf,
    /// Reviews: files, directories (their .txt and .md files) or "-" for standard input.
    #[arg(required = true)]
    pub reviews: Vec<PathBuf>,
    #[command(flatten)]
    pub model: ModelArgs,
    /// Emit one JSON report per review (JSON Lines) on stdout instead of tables.
    #[arg(long)]
    pub json: bool,
    /// Proceed even if the model is not the one the bundle was built for; reports say so.
    #[arg(long)]
    pub allow_model_mismatch: bool,
    /// Override the bundle's significance level for the "exposed" verdict.
    #[arg(long)]
    pub alpha: Option<f64>,
    /// No progress bar.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

#[derive(Subcommand, Debug)]
pub enum ModelCommand {
    /// Download a DeBERTa-v3 NLI cross-encoder (ONNX + tokenizer + config) from the HuggingFace
    /// hub at a pinned revision, verify its SHA-256 and register it.
    Fetch(FetchArgs),
    /// Register a local model directory (copied into the model cache after a test load).
    Import(ImportArgs),
    /// List registered models.
    List,
}

#[derive(Args, Debug)]
pub struct FetchArgs {
    /// Which model: one of the pinned names (see --help of `semtrace model list`).
    #[arg(default_value = "nli-deberta-v3-xsmall")]
    pub name: String,
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
    /// Bundle whose facts are scored.
    #[arg(long, short = 'b')]
    pub bundle: PathBuf,
    /// Reviews JSONL (`reviews[].review_text` per line, as ../shared/corpus/reviews/*.jsonl) or text files.
    #[arg(long)]
    pub reviews: PathBuf,
    /// How many reviews to decode exhaustively.
    #[arg(long, default_value_t = 3)]
    pub limit: usize,
    /// Pairs for the engine throughput figure.
    #[arg(long, default_value_t = 64)]
    pub pairs: usize,
    #[command(flatten)]
    pub model: ModelArgs,
    /// Write the exact engine-benchmark pairs as JSON (for the onnxruntime side).
    #[arg(long)]
    pub dump_pairs: Option<PathBuf>,
    /// Print a JSON summary instead of text.
    #[arg(long)]
    pub json: bool,
}
