//! INSIDER's applications (seed 001 §5, WORKLOADS.md §4) as real drive programs.
//!
//! Each app (`IscApp`) brings a seeded generator with the paper's record layout, its drive
//! program(s) as `StreamProgram`s (one per pass), the host-side remainder, an independent
//! reference, a verify function, the data reduction at the paper's size and the cost of
//! each place it can run (slot, core, host). `registry()` lists them; `run_app` /
//! `pure_cpu` run an app in-process; `testing::FaultAfter` is a deliberately faulting
//! program for the runtime's isolation test. Nothing here knows about time or does I/O.

mod app;
pub mod apps;
mod draw;
mod error;
pub mod measure;
mod measured;
mod output;
mod records;
mod registry;
mod run;
pub mod testing;
mod wire;

pub use app::{Dataset, Direction, HostCost, IscApp, OutputRatio, RatioBasis, Side, Stage};
pub use error::{AppError, VerifyError};
pub use output::{AppOutput, GroupAvg, RowStat};
pub use registry::{app, registry, APPS};
pub use run::{flits_with_lengths, pure_cpu, run_app, run_program};
