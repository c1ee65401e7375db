//! The crate's one error type: bad configuration names the field, database failures carry
//! rusty-leveldb's `Status`.

use thiserror::Error;

/// What can go wrong configuring or running a benchmark.
#[derive(Debug, Error)]
pub enum KvBenchError {
    /// A benchmark name db_bench does not know.
    #[error("unknown benchmark '{name}'")]
    UnknownBenchmark {
        /// The name as given.
        name: String,
    },
    /// A benchmark db_bench knows but this port cannot run.
    #[error("benchmark '{name}' is not supported: {reason}")]
    UnsupportedBenchmark {
        /// The name as given.
        name: String,
        /// Why it cannot run here.
        reason: &'static str,
    },
    /// A configuration value out of range.
    #[error("invalid {field} = {value}: {reason}")]
    InvalidConfig {
        /// The field's name.
        field: &'static str,
        /// The value given, printed.
        value: String,
        /// What it must be.
        reason: &'static str,
    },
    /// The database reported an error.
    #[error("database error during {context}: {source}")]
    Db {
        /// What the runner was doing.
        context: &'static str,
        /// rusty-leveldb's status.
        #[source]
        source: rusty_leveldb::Status,
    },
    /// A stored YCSB record could not be decoded.
    #[error("corrupt record for key {key}: {reason}")]
    CorruptRecord {
        /// The record's key.
        key: String,
        /// What was wrong.
        reason: &'static str,
    },
}

impl KvBenchError {
    /// Wraps a rusty-leveldb status with what the runner was doing.
    pub(crate) fn db(context: &'static str) -> impl FnOnce(rusty_leveldb::Status) -> Self {
        move |source| Self::Db { context, source }
    }
}
