//! Block I/O trace input for nearflash: parses MSR Cambridge CSV traces into a list of
//! timed read/write requests, with arrival times relative to the first request.

mod error;
mod msr;

pub use error::TraceError;
pub use msr::parse_msr;

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
