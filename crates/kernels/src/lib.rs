//! nearflash-kernels: the real workloads that run on the simulated computational SSD.
//!
//! FlashAbacus (seed 000) kernels — a kernel is a sequence of microblocks, each serial or
//! split into independent screens — for the 14 kernels of Table 2 and the §5.6 workloads.
//! Each workload provides a deterministic dataset generator, a description (data sections
//! and microblocks), a real screen-level implementation, an independent sequential
//! reference, and an instruction-count cost model. Pure computation: no device model, no
//! clocks, no threads, no I/O except the explicit live-out dump.
//!
//! Entry points: [`build`] a kernel by name and [`Dataset`], walk
//! `kernel.desc().microblocks`, call [`run_screen`] / [`run_serial`] and [`cost`],
//! then [`verify`] against `kernel.reference(&input)`; [`dump_live_out`] writes results;
//! [`table2::compare`] reports our B/KI and LD/ST ratio beside Table 2's.

// Index loops mirror the PolyBench/Rodinia loop nests they transcribe.
#![allow(clippy::needless_range_loop, clippy::assign_op_pattern)]

pub mod cost;
pub mod dataset;
pub mod desc;
pub mod dump;
pub mod error;
pub mod io;
pub mod kernel;
pub mod mars;
pub mod partition;
pub mod polybench;
pub mod polybench_dump;
pub mod reference;
pub mod registry;
pub mod report;
pub mod rodinia;
pub mod run;
pub mod state;
pub mod table2;
pub mod verify;

pub use cost::Cost;
pub use dataset::Dataset;
pub use desc::{Access, KernelDesc, Microblock, MicroblockKind, Phase, Section};
pub use dump::{dump_live_out, read_f64_file};
pub use error::KernelError;
pub use io::Extent;
pub use kernel::{cost, footprint, microblock_cost, run_screen, run_serial, total_cost, Kernel};
pub use partition::ScreenPlan;
pub use registry::{build, build_named, canonical_name, KERNELS};
pub use report::{execute, ArraySummary, KernelReport};
pub use run::{run_all, run_and_verify, run_shuffled};
pub use state::{Array, Data, State};
pub use verify::verify;
