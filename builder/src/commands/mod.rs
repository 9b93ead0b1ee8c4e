//! One module per subcommand; each returns the process exit code.

mod bench;
mod detect;
mod embed;
mod model;

use anyhow::Result;

use crate::cli::{Cli, Command};

pub fn run(cli: Cli) -> Result<i32> {
    match cli.command {
        Command::Detect(a) => detect::run(a),
        Command::Model { command } => model::run(command),
        Command::Bench(a) => bench::run(a),
        Command::Embed(a) => embed::run(a),
    }
}
