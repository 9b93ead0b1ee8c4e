//! One module per subcommand; each returns the process exit code.

mod bench;
mod build;
mod candidates;
mod controls;
mod detect;
mod embed;
mod eval;
mod extract;
mod inspect;
mod llm_args;
mod model;
mod protect;
mod recipients;
mod validity;
pub mod venue;

use anyhow::Result;

use crate::cli::{Cli, Command};

pub fn run(cli: Cli) -> Result<i32> {
    match cli.command {
        Command::Detect(a) => detect::run(a),
        Command::Merge(a) => venue::merge(a),
        Command::Model { command } => model::run(command),
        Command::Bench(a) => bench::run(a),
        Command::Eval(a) => eval::run(a),
        Command::Build(a) => build::run(a),
        Command::Candidates(a) => candidates::run(a),
        Command::Controls(a) => controls::run(a),
        Command::Extract(a) => extract::run(a),
        Command::Embed(a) => embed::run(a),
        Command::Protect(a) => protect::run(a),
        Command::Inspect(a) => inspect::run(a),
    }
}
