//! The host, once for every system: CPU cores, system calls, the storage stack, a bounded
//! page cache (LRU, read-ahead, write-back with dirty limits, fsync, O_DIRECT), user↔kernel
//! copies, and the block device it reaches (the conventional SSD: an NVMe front end over the
//! FTL). Sans-IO: operations start with a call at `now`, progress by events, finish as
//! completions; nothing blocks.

pub mod cache;
pub mod config;
pub mod error;
pub mod machine;

pub use cache::{PageCache, PageKey, PAGE_BYTES};
pub use config::HostConfig;
pub use error::HostError;
pub use machine::{
    Extent, FileId, Host, HostCompletion, HostEvent, HostStats, OpFlags, OpId, OpKind,
    PageCacheConfig,
};
