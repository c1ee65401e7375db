//! A journaled file system over any nearflash block device — the "device file system" of
//! the layered design (INSIDER's files, AccelFS). 4 KiB blocks over 512-byte sectors;
//! inodes with owner, group, mode, times and extents; hierarchical directories; a bounded
//! LRU buffer cache; a write-ahead metadata journal (ordered data); fsck; and a power-cut
//! crash test over the real FTL. The on-disk format and the durability promise are in
//! `docs/design.md` ("The device file system").
//!
//! Sans-IO: [`Fs`] is handed `now` and block completions and answers with block requests
//! and operation completions; it never blocks and never reads a clock. [`FsHost`] is the
//! synchronous convenience driver (a `sim::Sim` loop owning a device and an `Fs`).

pub mod cache;
pub mod config;

pub mod crashtest;
pub mod error;
mod exec;
pub mod format;
pub mod fsck;
pub mod host;
mod ops;
pub mod ramdisk;
pub mod readahead;
pub mod types;

pub use cache::CacheStats;
pub use config::FsConfig;
pub use error::{ConfigError, Corruption, FsError};
pub use exec::{Fs, FsCompletion, FsIo, FsStats, IoKind, OpId};
pub use format::superblock::FormatOptions;
pub use fsck::{FsckProblem, FsckReport};
pub use host::{FsHost, HostError};
pub use ops::{FsOp, FsReply, FALLOCATE_BLOCKS_MAX};
pub use types::{
    Access, BlockNo, Caller, DirEntry, Fh, FileExtent, FileKind, Ino, OpenFlags, Stat, BLOCK_BYTES,
    ROOT_INO,
};
