//! A progress bar on stderr for long runs, drawn only when stderr is a terminal.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

pub struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    pub fn new(label: &str, enabled: bool) -> Self {
        let bar = (enabled && std::io::stderr().is_terminal()).then(|| {
            let b = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
            b.set_style(
                ProgressStyle::with_template(
                    "{prefix:>13} [{bar:40}] {pos}/{len} requests ({per_sec}, eta {eta})",
                )
                .expect("valid template")
                .progress_chars("=> "),
            );
            b.set_prefix(label.to_string());
            b
        });
        Progress { bar }
    }

    /// Updates the bar: `done` of `total` requests.
    pub fn update(&self, done: u64, total: u64) {
        if let Some(b) = &self.bar {
            b.set_length(total);
            b.set_position(done);
        }
    }

    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}
