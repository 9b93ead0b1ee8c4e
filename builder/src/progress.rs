//! Progress bars on stderr (hidden when stderr is not a terminal or with --quiet).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

pub fn bar(total: u64, what: &str, quiet: bool) -> ProgressBar {
    let pb = ProgressBar::with_draw_target(
        Some(total),
        if quiet {
            ProgressDrawTarget::hidden()
        } else {
            ProgressDrawTarget::stderr()
        },
    );
    pb.set_style(
        ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} {msg} ({eta})")
            .expect("valid template")
            .progress_chars("=> "),
    );
    pb.set_prefix(what.to_string());
    pb
}
