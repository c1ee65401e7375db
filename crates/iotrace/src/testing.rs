//! Test helpers shared by the format parsers' unit tests.

use crate::{parse_trace, ReadOptions, Trace, TraceError, TraceFormat, TraceOp};

/// A request as `(arrival_ns, op, offset_bytes, size_bytes)`.
pub type Req = (u64, TraceOp, u64, u64);

pub fn request(arrival_ns: u64, op: TraceOp, offset_bytes: u64, size_bytes: u64) -> Req {
    (arrival_ns, op, offset_bytes, size_bytes)
}

pub fn parse_full(
    format: TraceFormat,
    text: &str,
    opts: &ReadOptions,
) -> Result<Trace, TraceError> {
    parse_trace(text, format, opts)
}

pub fn parse_with(
    format: TraceFormat,
    text: &str,
    opts: &ReadOptions,
) -> Result<Vec<Req>, TraceError> {
    Ok(parse_full(format, text, opts)?
        .requests
        .iter()
        .map(|r| (r.arrival_ns, r.op, r.offset_bytes, r.size_bytes))
        .collect())
}

pub fn parse(format: TraceFormat, text: &str) -> Result<Vec<Req>, TraceError> {
    parse_with(format, text, &ReadOptions::default())
}

pub fn error_message(format: TraceFormat, text: &str) -> String {
    parse(format, text)
        .expect_err("trace should be rejected")
        .to_string()
}

/// Default options with a device selector.
pub fn select(value: &str) -> ReadOptions {
    ReadOptions {
        select: Some(value.to_string()),
        ..ReadOptions::default()
    }
}
