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

/// A download bar: bytes so far of `total` (0 when the server did not say), speed and time left.
pub fn bytes(total: u64, what: &str, quiet: bool) -> ProgressBar {
    let pb = bar(total, what, quiet);
    pb.set_style(
        ProgressStyle::with_template(
            "{prefix} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} ({eta})",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    pb
}

/// One bar per pipeline stage: a new stage name finishes the previous bar and starts the next.
pub struct Stages {
    quiet: bool,
    current: Option<(String, ProgressBar)>,
}

impl Stages {
    pub fn new(quiet: bool) -> Self {
        Stages {
            quiet,
            current: None,
        }
    }

    pub fn set(&mut self, stage: &str, done: usize, total: usize) {
        if self.current.as_ref().is_none_or(|(s, _)| s != stage) {
            self.finish();
            self.current = Some((stage.to_string(), bar(total as u64, stage, self.quiet)));
        }
        if let Some((_, pb)) = &self.current {
            pb.set_length(total as u64);
            pb.set_position(done as u64);
        }
    }

    pub fn finish(&mut self) {
        if let Some((_, pb)) = self.current.take() {
            pb.finish_and_clear();
        }
    }
}
