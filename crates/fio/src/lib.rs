//! `nearflash fio`: fio job files run on the simulated drive, with fio's output. The layers,
//! top to bottom: `jobfile` reads fio's syntax into sections of raw options (with their
//! lines); `options` says what each option means here (modelled, ignored as host-only, or
//! refused) and builds typed jobs; `job` runs one job as a paced request source (its own RNG
//! stream, depth, think time, rate, start delay, verify pass) with its distributions in
//! `dist`, replaying an iolog (`read_iolog`) read in `replay`; `runner` places the jobs on the device and runs the groups through the I/O
//! benchmark's driver — the path `nearflash io` takes; `stats` holds what a job measured;
//! `json` and `normal` print it in fio's two shapes.

pub mod dist;
mod error;
pub mod job;
pub mod jobfile;
pub mod json;
pub mod normal;
pub mod options;
pub mod replay;
pub mod runner;
pub mod stats;
pub mod value;
pub mod zbd;
pub mod zoned;

pub use error::{FioError, Location};
pub use runner::{run, FioRun, RunOptions};

/// fio's output formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputFormat {
    Normal,
    Json,
    /// JSON with the completion-latency histogram bins.
    JsonPlus,
}

/// The report of `run` in `format`.
pub fn render(run: &FioRun, format: OutputFormat) -> String {
    match format {
        OutputFormat::Normal => normal::render(run),
        OutputFormat::Json => json::render(run, false),
        OutputFormat::JsonPlus => json::render(run, true),
    }
}
