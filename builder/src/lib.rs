//! The `semtrace` CLI as a library: argument parsing ([`cli`]), one module per command
//! ([`commands`]) and exit codes ([`exit`]), over the document loader ([`source`]) and the
//! carrier embedding ([`protect`]). `main.rs` only parses and dispatches; the fuzz targets
//! (`fuzz/`) call the loaders and parsers here directly.

mod atomic;
mod candidates;
pub mod cli;
pub mod commands;
mod controls;
mod embedded;
pub mod exit;
mod http;
mod inspect;
mod llm;
mod model_store;
mod pipeline;
mod progress;
pub mod protect;
mod review_files;
/// Document loading lives in its own crate; `semtrace::source` keeps its paths.
pub use semtrace_source as source;
