//! `semtrace`: the venue-side command line over `semtrace-core`.

mod atomic;
mod candidates;
mod cli;
mod commands;
mod controls;
mod embedded;
mod exit;
mod http;
mod inspect;
mod llm;
mod model_store;
mod pipeline;
mod progress;
mod protect;
mod source;

use clap::Parser;

fn main() {
    // Behave like a Unix filter: `semtrace ... | head` ends quietly instead of panicking on EPIPE.
    #[cfg(unix)]
    // SAFETY: restoring the default disposition of SIGPIPE before any other thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = cli::Cli::parse();
    let code = match commands::run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            exit::code_for(&e)
        }
    };
    std::process::exit(code);
}
