//! The `semtrace` CLI as a library: argument parsing ([`cli`]), one module per command
//! ([`commands`]: argument checks, file and network I/O, printing) and exit codes ([`exit`]), over
//! the library crates: the document loader ([`source`], crate semtrace-source), the build
//! pipeline ([`pipeline`], semtrace-pipeline) and the carrier embedding with the hidden-text
//! scanner ([`protect`], [`inspect`]: semtrace-protect). `main.rs` only parses and dispatches;
//! the fuzz targets (`fuzz/`) call the loaders and parsers here.

mod atomic;
mod candidates;
pub mod cli;
pub mod commands;
mod controls;
mod embedded;
pub mod exit;
mod http;
/// The hidden-text scanner lives in semtrace-protect; `semtrace::inspect` keeps its paths.
pub use semtrace_protect::inspect;
mod llm;
mod model_store;
/// The build pipeline lives in its own crate; `crate::pipeline` keeps its paths.
pub use semtrace_pipeline as pipeline;
mod progress;
/// The carrier embedding lives in its own crate; `semtrace::protect` keeps its paths.
pub use semtrace_protect as protect;
mod review_files;
/// Document loading lives in its own crate; `semtrace::source` keeps its paths.
pub use semtrace_source as source;
