//! Typed errors: preparing or finishing an application (`AppError`) and comparing a result
//! with its reference (`VerifyError`). Program faults stay `ProgramError` (nearflash-stream).

use nearflash_stream::ProgramError;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AppError {
    #[error("unknown application `{name}`; known: {known}")]
    UnknownApp { name: String, known: String },
    #[error("{app}: {input_bytes} input bytes hold no whole record of {record_bytes} bytes")]
    TooSmall {
        app: &'static str,
        input_bytes: u64,
        record_bytes: u64,
    },
    #[error("{app} has {pass_count} pass(es); pass {pass} does not exist")]
    NoSuchPass {
        app: &'static str,
        pass: usize,
        pass_count: usize,
    },
    #[error("{app}: expected {expected} drive output(s), got {got}")]
    OutputCount {
        app: &'static str,
        expected: usize,
        got: usize,
    },
    #[error("{app}: malformed drive output: {reason}")]
    DriveOutput { app: &'static str, reason: String },
    #[error("{app}: bad configuration: {reason}")]
    Config { app: &'static str, reason: String },
    #[error(transparent)]
    Program(#[from] ProgramError),
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum VerifyError {
    #[error("{app}: result kinds differ (got {got}, want {want})")]
    Kind {
        app: &'static str,
        got: &'static str,
        want: &'static str,
    },
    #[error("{app}: {what} has {got} entries, the reference {want}")]
    Length {
        app: &'static str,
        what: &'static str,
        got: usize,
        want: usize,
    },
    #[error("{app}: {what} differs at index {index}: {detail}")]
    Mismatch {
        app: &'static str,
        what: &'static str,
        index: usize,
        detail: String,
    },
}
