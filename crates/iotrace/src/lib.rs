//! Block I/O trace input for nearflash: parses MSR Cambridge CSV traces into a list of
//! timed read/write requests, with arrival times relative to the first request.

mod error;
mod msr;

pub use error::TraceError;
pub use msr::{parse_msr, read_msr};

/// The direction of a trace request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TraceOp {
    Read,
    Write,
}

/// One request from a trace, in the order it arrived.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TraceRequest {
    /// Arrival time in nanoseconds after the first kept request (which arrives at 0).
    pub arrival_ns: u64,
    pub op: TraceOp,
    pub offset_bytes: u64,
    /// Never 0; `offset_bytes + size_bytes` never overflows `u64`.
    pub size_bytes: u64,
}

/// How to read an MSR Cambridge trace.
#[derive(Clone, Debug, PartialEq)]
pub struct MsrOptions {
    /// Multiplies inter-arrival times (0.5 replays twice as fast); must be finite and > 0.
    pub time_scale: f64,
    /// Keep only the requests of this disk; `None` keeps every disk.
    pub disk_number: Option<u32>,
}

impl Default for MsrOptions {
    /// Real-time replay of every disk.
    fn default() -> Self {
        MsrOptions {
            time_scale: 1.0,
            disk_number: None,
        }
    }
}

/// Bounds on a trace read as a stream ([`read_msr`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MsrLimits {
    /// Longest line accepted, in bytes.
    pub line_bytes_max: usize,
    /// Most requests kept (after the disk filter).
    pub requests_max: u64,
}

/// An MSR Cambridge line is `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`:
/// under 100 bytes in the published traces; 4 KiB leaves room for long host names.
pub const LINE_BYTES_MAX: usize = 4096;

/// The default request limit: 16 Mi requests, 32 bytes each once loaded (512 MiB) — the
/// largest single volume of the MSR Cambridge set (src1_0, ~45 M lines over all its disks
/// together) needs `--trace-requests-max` raised, deliberately.
pub const REQUESTS_MAX: u64 = 16 << 20;

impl Default for MsrLimits {
    fn default() -> Self {
        MsrLimits {
            line_bytes_max: LINE_BYTES_MAX,
            requests_max: REQUESTS_MAX,
        }
    }
}
