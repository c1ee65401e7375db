//! Users' own in-storage programs: WebAssembly modules speaking a deterministic subset of WASI
//! preview 1 (`wasi`), loaded with their imports checked (`module`), run in the `wasmi`
//! interpreter under limits on memory, fuel and output (`limits`), fed their input in chunks
//! as the device reads it (`run`, sans-IO), and charged time from the fuel they burn through
//! the shared compute-engine model (`cost`). `stream` puts a program behind INSIDER's
//! drive-program interface. docs/programs.md is the user's guide.

pub mod cost;
mod error;
pub mod limits;
mod module;
mod run;
pub mod stream;
pub mod wasi;

pub use error::{LoadError, RunError};
pub use limits::Limits;
pub use module::Program;
pub use run::{run_chunks, Outcome, Run, Status, Step};
