//! The host's errors: bad configuration (naming the field), bad operations (naming the
//! problem) and the block device's typed I/O errors carried upward.

use nearflash_blockdev::IoError;
use thiserror::Error;

#[derive(Clone, Debug, Error, PartialEq)]
pub enum HostError {
    #[error("host.{field}: {reason}")]
    Config { field: &'static str, reason: String },
    #[error("no file {0}")]
    NoSuchFile(u32),
    #[error("file extent {index}: {reason}")]
    Extent { index: usize, reason: String },
    #[error("{offset}+{len} lies beyond the file's {size} bytes")]
    BeyondFile { offset: u64, len: u64, size: u64 },
    #[error("O_DIRECT needs {offset}+{len} aligned to 512-byte sectors")]
    DirectUnaligned { offset: u64, len: u64 },
    #[error("file {0} has operations in flight: its layout cannot change now")]
    FileBusy(u32),
    #[error("file {file}: page {index} beyond the new layout holds unwritten data")]
    UnwrittenBeyond { file: u32, index: u64 },
    #[error("an operation needs a length of at least one byte")]
    Empty,
    #[error("the host model runs in timing fidelity; the block device stores data")]
    FunctionalDevice,
    #[error("I/O error: {0}")]
    Io(#[from] IoError),
}
