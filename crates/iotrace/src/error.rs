//! Errors from trace parsing; every per-line error carries the 1-based line number.

use thiserror::Error;

/// Why a trace could not be parsed.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum TraceError {
    #[error("invalid time_scale {0}: must be finite and > 0")]
    InvalidTimeScale(f64),

    #[error(
        "unknown trace format {0:?} (expected FORMAT:PATH with FORMAT one of msr, blkparse, \
         iolog, systor, alibaba, tencent, fiu, spc, mqsim)"
    )]
    UnknownFormat(String),

    #[error("the {format} format has no device column to select {value:?} from")]
    NoSelector { format: &'static str, value: String },

    #[error("{format}: cannot select {value:?}: expected {expected}")]
    BadSelector {
        format: &'static str,
        value: String,
        expected: &'static str,
    },

    #[error("line {line}: longer than {max} bytes (is this a trace?)")]
    LineTooLong { line: u64, max: usize },

    #[error("more than {max} requests (raise the limit to read a longer trace)")]
    TooManyRequests { max: u64 },

    #[error("line {line}: not UTF-8 text")]
    NotText { line: u64 },

    #[error(
        "line {line}: binary data (a tar archive or a binary trace? extract or convert it \
         to text first)"
    )]
    Binary { line: u64 },

    #[error("reading the trace: {0}")]
    Read(String),

    #[error("line {line}: expected {expected} {separator}-separated fields, found {found}")]
    FieldCount {
        line: u64,
        expected: usize,
        found: usize,
        separator: &'static str,
    },

    #[error("line {line}: field '{field}' is not an integer: {value:?}")]
    NotInteger {
        line: u64,
        field: &'static str,
        value: String,
    },

    #[error("line {line}: field '{field}' is not a decimal number of seconds: {value:?}")]
    NotSeconds {
        line: u64,
        field: &'static str,
        value: String,
    },

    #[error("line {line}: field '{field}' is negative: {value}")]
    Negative {
        line: u64,
        field: &'static str,
        value: String,
    },

    #[error("line {line}: field '{field}' is out of range: {value} (expected 0..={max})")]
    OutOfRange {
        line: u64,
        field: &'static str,
        value: String,
        max: u64,
    },

    #[error("line {line}: unknown request type {value:?} (expected {expected})")]
    UnknownType {
        line: u64,
        value: String,
        expected: &'static str,
    },

    #[error("line {line}: {reason}")]
    Malformed { line: u64, reason: String },

    #[error("line 1: not a fio iolog header {found:?} (expected \"fio version 2 iolog\" or \"fio version 3 iolog\")")]
    IologHeader { found: String },

    #[error(
        "line {line}: the iolog names a second file {file:?} (the first was {first:?}); \
         nearflash replays one file per trace — split the log per file"
    )]
    IologSecondFile {
        line: u64,
        file: String,
        first: String,
    },

    #[error(
        "line {line}: timestamp {timestamp_ns} ns is older than the reorder window of \
         {window} requests allows (requests up to {previous_ns} ns were already released)"
    )]
    BackwardsTimestamp {
        line: u64,
        timestamp_ns: u128,
        previous_ns: u128,
        window: usize,
    },

    #[error("line {line}: request size is 0")]
    ZeroSize { line: u64 },

    #[error("line {line}: offset {offset} + size {size} overflows u64")]
    OffsetOverflow { line: u64, offset: u64, size: u64 },

    #[error("line {line}: arrival time overflows u64 nanoseconds")]
    ArrivalOverflow { line: u64 },

    #[error("trace contains no requests")]
    EmptyTrace,

    #[error("trace contains no requests for {what}")]
    NoRequestsSelected { what: String },
}

impl TraceError {
    /// A problem with one line's content, which `--skip-bad-lines` may skip. Limits, read
    /// errors, binary input and timestamps older than the reorder window stay fatal: skipping
    /// them would silently change what the trace is.
    pub fn is_bad_line(&self) -> bool {
        matches!(
            self,
            TraceError::NotText { .. }
                | TraceError::FieldCount { .. }
                | TraceError::NotInteger { .. }
                | TraceError::NotSeconds { .. }
                | TraceError::Negative { .. }
                | TraceError::OutOfRange { .. }
                | TraceError::UnknownType { .. }
                | TraceError::Malformed { .. }
                | TraceError::ZeroSize { .. }
                | TraceError::OffsetOverflow { .. }
        )
    }
}
