//! Typed errors: one enum for what an operation can answer (`FsError`, the POSIX errno set a
//! caller can act on), one for configuration (`ConfigError`), and the lower layer's
//! `IoError` carried upward unchanged.

use crate::types::{BlockNo, Ino};
use nearflash_blockdev::IoError;
use thiserror::Error;

#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum FsError {
    #[error("no such file or directory: {0}")]
    NotFound(String),
    #[error("already exists: {0}")]
    Exists(String),
    #[error("not a directory: {0}")]
    NotDir(String),
    #[error("is a directory: {0}")]
    IsDir(String),
    #[error("directory not empty: {0}")]
    NotEmpty(String),
    #[error("no space left on the file system ({0})")]
    NoSpace(&'static str),
    #[error("permission denied: {0}")]
    Permission(String),
    /// `EPERM` on an append-only file: a write elsewhere than its end, an open for writing
    /// without `append`, a truncate, unlink or rename over it.
    #[error("operation not permitted on an append-only file: {0}")]
    AppendOnly(String),
    #[error("name too long ({len} bytes; at most {max})")]
    NameTooLong { len: usize, max: usize },
    #[error("invalid name or path: {0:?}")]
    InvalidName(String),
    #[error("invalid argument: {0}")]
    InvalidArgument(&'static str),
    #[error("bad file handle {0}")]
    BadHandle(u32),
    #[error("file handle {0} names a file that was removed")]
    StaleHandle(u32),
    #[error("too many open files (at most {0})")]
    TooManyOpenFiles(usize),
    #[error("file is too fragmented: at most {0} extents")]
    TooManyExtents(usize),
    #[error("a directory cannot be moved into itself: {0}")]
    MoveIntoSelf(String),
    #[error("the file system is not mounted")]
    NotMounted,
    #[error("the file system is already mounted")]
    AlreadyMounted,
    #[error("operation queue full (at most {0} operations waiting)")]
    Busy(usize),
    #[error("the block device must store data (functional fidelity)")]
    NeedsFunctionalDevice,
    #[error("device of {capacity_bytes} bytes is too small for a file system (needs at least {needed_bytes})")]
    DeviceTooSmall {
        capacity_bytes: u64,
        needed_bytes: u64,
    },
    #[error("block device error: {0}")]
    Io(#[from] IoError),
    #[error("corrupt file system: {0}")]
    Corrupt(#[from] Corruption),
}

/// A structure on disk that failed its checks (magic, checksum, range).
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum Corruption {
    #[error("superblock: {0}")]
    Superblock(&'static str),
    #[error("{ino}: {what}")]
    Inode { ino: Ino, what: &'static str },
    #[error("directory block {block} of {dir}: {what}")]
    DirBlock {
        dir: Ino,
        block: BlockNo,
        what: &'static str,
    },
    #[error("extent block {block} of {ino}: {what}")]
    ExtentBlock {
        ino: Ino,
        block: BlockNo,
        what: &'static str,
    },
    #[error("journal: {0}")]
    Journal(&'static str),
}

#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum ConfigError {
    #[error("{field}: {reason}")]
    Invalid { field: &'static str, reason: String },
}
