//! Every way an Active Flash model or simulation can refuse its input, each naming the value
//! at fault. Nothing here panics on bad input; programmer errors are assertions.

use crate::program::ProgramRun;
use nearflash_ftl::IoError;
use nearflash_stream::ProgramError;
use thiserror::Error;

#[derive(Debug, Error, PartialEq)]
pub enum ActiveFlashError {
    #[error("config field 'active_flash.{field}': {reason}")]
    Config { field: &'static str, reason: String },

    #[error("{what} must lie within [0, 1], got {value}")]
    OutOfUnitRange { what: &'static str, value: f64 },

    #[error(
        "foreground throughput {requested_mb_s} MB/s exceeds the device's 4 KiB random-write \
         ceiling of {device_mb_s:.1} MB/s"
    )]
    ForegroundTooFast {
        requested_mb_s: f64,
        device_mb_s: f64,
    },

    #[error("{what} must be a positive number, got {value}")]
    NotPositive { what: &'static str, value: f64 },

    #[error(
        "the foreground volume ({volume_bytes} bytes) does not fit the device's user area \
         ({user_bytes} bytes)"
    )]
    VolumeTooLarge { volume_bytes: u64, user_bytes: u64 },

    #[error(
        "Active Flash needs 4 KiB mapping units (one channel, one plane, 4096-byte pages); \
         got {channels} channels x {planes_per_die} planes x {page_size_bytes} B"
    )]
    Geometry {
        channels: u32,
        planes_per_die: u32,
        page_size_bytes: u32,
    },

    #[error("device configuration: {0}")]
    DeviceConfig(#[from] nearflash_flash::ConfigError),

    /// A wait stopped making progress: commands outstanding at the FTL with none
    /// completing, or the queue emptying before the wait's goal was met (a workload waiting
    /// on something no event will bring).
    #[error("the simulation stalled: {0}")]
    Stalled(#[from] nearflash_sim::Stall),

    /// An open-loop foreground arrived faster than the controller served it until
    /// `foreground_waiting_max` writes waited: the offered load exceeds what the controller
    /// sustains, so its latency has no steady state.
    #[error(
        "the open-loop foreground outran the controller: {waiting} writes waiting at {at_ms:.3}          ms (active_flash.foreground_waiting_max); lower the foreground rate"
    )]
    Overloaded { waiting: usize, at_ms: f64 },

    #[error("I/O error at offset {offset_bytes}: {source}")]
    Io {
        offset_bytes: u64,
        #[source]
        source: IoError,
    },

    #[error("verification: {0}")]
    Verification(String),

    /// The controller's program task stopped on its program's fault; `run` holds the figures
    /// and the output up to it.
    #[error("the controller's program task: {fault}")]
    Program {
        #[source]
        fault: ProgramFault,
        run: Box<ProgramRun>,
    },
}

/// Why the controller's program task stopped its program early.
#[derive(Clone, Debug, Error, PartialEq)]
pub enum ProgramFault {
    /// The program's own error (a WebAssembly program's trap, fuel or limit, or a non-zero
    /// exit), or a program that did not end its output at the end of its input.
    #[error(transparent)]
    Program(#[from] ProgramError),

    #[error("the program's output exceeds the {bytes_max}-byte output region")]
    OutputFull { bytes_max: u64 },
}
