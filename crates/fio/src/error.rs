//! Why a job file could not be read or run: every error about the file names the file and
//! line (and the option, where one is at fault).

use std::path::PathBuf;
use thiserror::Error;

/// Where a line came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    pub file: PathBuf,
    /// 1-based.
    pub line: u32,
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file.display(), self.line)
    }
}

#[derive(Debug, Error)]
pub enum FioError {
    /// The file's syntax: a malformed line, an undefined variable, a bad include.
    #[error("{at}: {reason}")]
    Syntax { at: Location, reason: String },

    #[error("{path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// An option fio knows that nearflash does not model (yet).
    #[error("{at}: option '{option}' is not supported: {reason}")]
    Unsupported {
        at: Location,
        option: String,
        reason: &'static str,
    },

    /// An option neither fio nor nearflash knows.
    #[error("{at}: unknown option '{option}'")]
    Unknown { at: Location, option: String },

    /// A known option with a value it cannot take.
    #[error("{at}: option '{option}': {reason}")]
    Value {
        at: Location,
        option: String,
        reason: String,
    },

    /// A job whose options do not fit together or do not fit the device.
    #[error("job '{job}': {reason}")]
    Job { job: String, reason: String },

    #[error(transparent)]
    Preset(#[from] nearflash_preset::PresetError),

    #[error(transparent)]
    Run(#[from] nearflash_iobench::IoBenchError),

    #[error("read_iolog {path}: {source}")]
    ReplayOpen {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// The iolog itself: a bad header or line (with its number), a second file, a limit.
    /// Boxed: a trace error carries a line's text and 128-bit timestamps.
    #[error("read_iolog {path}: {source}")]
    ReplayTrace {
        path: PathBuf,
        #[source]
        source: Box<nearflash_iotrace::TraceError>,
    },

    #[error("read_iolog {path}: replay_skip leaves none of its {skipped} requests to replay")]
    ReplaySkipsAll { path: PathBuf, skipped: u64 },

    #[error("write_iolog {path}: {source}")]
    Iolog {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}
