//! The crate's typed errors: malformed FASTA (with its line), bad index bytes, I/O failures
//! reported by the caller's `GenomeIo`, bad parameters.

use thiserror::Error;

/// What can go wrong in the genome pipeline.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum GenomeError {
    /// FASTA that does not parse.
    #[error("malformed FASTA at line {line}: {reason}")]
    Fasta {
        /// 1-based line number.
        line: u64,
        /// What was wrong.
        reason: &'static str,
    },
    /// Index bytes that do not start with the index magic.
    #[error("not a k-mer index (bad magic)")]
    IndexBadMagic,
    /// An index format version this code does not read.
    #[error("unsupported index version {version}")]
    IndexVersion {
        /// The version found.
        version: u32,
    },
    /// Index bytes shorter or longer than their header says.
    #[error("index length mismatch: header implies {expected_bytes} bytes, found {actual_bytes}")]
    IndexLength {
        /// Length implied by the header.
        expected_bytes: u64,
        /// Length given.
        actual_bytes: u64,
    },
    /// Index contents that contradict each other.
    #[error("inconsistent index: {reason}")]
    IndexInconsistent {
        /// What contradicts what.
        reason: &'static str,
    },
    /// A parameter out of range.
    #[error("invalid {field} = {value}: {reason}")]
    InvalidParameter {
        /// The field's name.
        field: &'static str,
        /// The value, printed.
        value: String,
        /// What it must be.
        reason: &'static str,
    },
    /// The caller's storage failed.
    #[error("I/O error on {path}: {reason}")]
    Io {
        /// The file.
        path: String,
        /// The storage's description.
        reason: String,
    },
}
