//! `semtrace`: the venue-side command line (the library is `lib.rs`).

use clap::Parser;
use semtrace::{cli, commands, exit};

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
