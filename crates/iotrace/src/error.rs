//! Errors from trace parsing; every per-line error carries the 1-based line number.

use thiserror::Error;

/// Why a trace could not be parsed.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum TraceError {
    #[error("invalid time_scale {0}: must be finite and > 0")]
    InvalidTimeScale(f64),

    #[error("line {line}: longer than {max} bytes (an MSR line is under 100; is this a trace?)")]
    LineTooLong { line: usize, max: usize },

    #[error("more than {max} requests (raise the limit to read a longer trace)")]
    TooManyRequests { max: u64 },

    #[error("line {line}: not UTF-8 text")]
    NotText { line: usize },

    #[error("reading the trace: {0}")]
    Read(String),

    #[error("line {line}: expected {expected} comma-separated fields, found {found}")]
    FieldCount {
        line: usize,
        expected: usize,
        found: usize,
    },

    #[error("line {line}: field '{field}' is not an integer: {value:?}")]
    NotInteger {
        line: usize,
        field: &'static str,
        value: String,
    },

    #[error("line {line}: field '{field}' is out of range: {value} (expected 0..={max})")]
    OutOfRange {
        line: usize,
        field: &'static str,
        value: String,
        max: u64,
    },

    #[error("line {line}: unknown request type {value:?} (expected Read or Write)")]
    UnknownType { line: usize, value: String },

    #[error(
        "line {line}: timestamp goes backwards ({timestamp} is before the previous {previous})"
    )]
    BackwardsTimestamp {
        line: usize,
        timestamp: u64,
        previous: u64,
    },

    #[error("line {line}: request size is 0")]
    ZeroSize { line: usize },

    #[error("line {line}: offset {offset} + size {size} overflows u64")]
    OffsetOverflow { line: usize, offset: u64, size: u64 },

    #[error("line {line}: arrival time overflows u64 nanoseconds")]
    ArrivalOverflow { line: usize },

    #[error("trace contains no requests")]
    EmptyTrace,

    #[error("trace contains no requests for disk {disk}")]
    NoRequestsForDisk { disk: u32 },
}
