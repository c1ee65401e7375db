//! The sweep's progress bar on stderr (points done of all, rate, eta), drawn only when asked
//! for and stderr is a terminal; rows already in a resumed table count as done.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

pub struct Bar {
    bar: Option<ProgressBar>,
}

impl Bar {
    pub fn new(enabled: bool, total: u64, done: u64) -> Bar {
        let bar = (enabled && std::io::stderr().is_terminal()).then(|| {
            let b = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
            b.set_style(
                ProgressStyle::with_template(
                    "{prefix:>8} [{bar:40}] {pos}/{len} points ({per_sec}, eta {eta})",
                )
                .expect("valid template")
                .progress_chars("=> "),
            );
            b.set_prefix("sweep");
            b.set_position(done);
            b
        });
        Bar { bar }
    }

    pub fn set(&self, done: u64) {
        if let Some(b) = &self.bar {
            b.set_position(done);
        }
    }

    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}
