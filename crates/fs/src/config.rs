//! The file system's run-time parameters (what mkfs writes is in `layout::FormatOptions`):
//! buffer-cache size, queue bounds, and the CPU cost charged per operation. Validated at the
//! edge; an impossible value is an error naming the field.

use crate::error::ConfigError;
use crate::types::BLOCK_BYTES;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FsConfig {
    /// Buffer-cache capacity (LRU over 4 KiB blocks). Must hold the largest journal
    /// transaction plus working room: at least [`FsConfig::cache_blocks_min`] blocks.
    pub cache_bytes: u64,
    /// Operations waiting behind the running one; a submit beyond it is `Busy`.
    pub queue_depth_max: usize,
    /// Open file handles.
    pub open_files_max: usize,
    /// Block requests one operation keeps in flight at the device.
    pub io_depth_max: usize,
    /// Largest write one `Write` operation performs; a longer one is a short write (POSIX
    /// allows it) that reports how many bytes it wrote.
    pub write_bytes_max: u64,
    /// CPU time per operation (system call, path walk, locking). ASSUMED: 2 µs, the order of
    /// a Linux VFS system call on a server core; no seed paper gives a figure.
    pub op_cpu_ns: u64,
    /// CPU time per 4 KiB copied between the caller and the cache. ASSUMED: 400 ns, a 4 KiB
    /// memcpy at about 10 GB/s.
    pub copy_ns_per_4k: u64,
    /// Allocation alignment in blocks (ext4's `stripe=` mount option): a `Fallocate` run of
    /// at least this many blocks that does not continue the file's previous block starts on
    /// a multiple of it, so a device striping its logical space in units of this size sees
    /// whole stripes. 1: no alignment (the default).
    pub stripe_blocks: u32,
    /// Send FLUSH and FUA where the journal's ordering needs them, on a device with a volatile
    /// write cache (ext4's `barrier=1`, its default). `false` is ext4's `barrier=0`: faster on
    /// such a device, and a power cut may lose committed files or corrupt the file system
    /// (`fs crashtest --write-cache --no-barriers` shows it). No effect on a device
    /// without a volatile cache, where no barrier is ever sent.
    pub barriers: bool,
    /// Read-ahead for buffered reads: the largest window, Linux's `read_ahead_kb` (the
    /// on-demand read-ahead of mm/readahead.c, `crate::readahead`). 0 (the default here):
    /// none — the file system as a device's own (INSIDER's drive, AccelFS's metadata
    /// engine) reads what it is asked. A host's file system sets Linux's default, 128 KiB
    /// (`VM_READAHEAD_PAGES` = `SZ_128K / PAGE_SIZE`, include/linux/mm.h; `read_ahead_kb`,
    /// Documentation/ABI/stable/sysfs-block).
    pub read_ahead_bytes: u64,
}

impl Default for FsConfig {
    fn default() -> Self {
        FsConfig {
            cache_bytes: 4 << 20,
            queue_depth_max: 64,
            open_files_max: 1024,
            io_depth_max: 32,
            write_bytes_max: 1 << 20,
            op_cpu_ns: 2_000,
            copy_ns_per_4k: 400,
            stripe_blocks: 1,
            barriers: true,
            read_ahead_bytes: 0,
        }
    }
}

impl FsConfig {
    /// The smallest cache, in blocks: a full journal transaction (which stays pinned until it
    /// commits) plus the blocks one operation touches at once.
    pub fn cache_blocks_min(journal_blocks: u32) -> u64 {
        u64::from(journal_blocks) + 64
    }

    pub fn cache_blocks(&self) -> u64 {
        self.cache_bytes / BLOCK_BYTES as u64
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        let positive = |field: &'static str, v: u64| {
            if v == 0 {
                Err(ConfigError::Invalid {
                    field,
                    reason: "must be greater than zero".into(),
                })
            } else {
                Ok(())
            }
        };
        positive("fs.cache_bytes", self.cache_bytes)?;
        positive("fs.queue_depth_max", self.queue_depth_max as u64)?;
        positive("fs.open_files_max", self.open_files_max as u64)?;
        positive("fs.io_depth_max", self.io_depth_max as u64)?;
        positive("fs.stripe_blocks", u64::from(self.stripe_blocks))?;
        if !self.read_ahead_bytes.is_multiple_of(BLOCK_BYTES as u64)
            || self.read_ahead_bytes > self.cache_bytes / 4
        {
            return Err(ConfigError::Invalid {
                field: "fs.read_ahead_bytes",
                reason: format!(
                    "must be a multiple of {BLOCK_BYTES} and at most a quarter of fs.cache_bytes, got {}",
                    self.read_ahead_bytes
                ),
            });
        }
        if self.write_bytes_max < BLOCK_BYTES as u64 {
            return Err(ConfigError::Invalid {
                field: "fs.write_bytes_max",
                reason: format!("must be at least one block ({BLOCK_BYTES} bytes)"),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_valid_and_zero_fields_are_named() {
        FsConfig::default().validate().unwrap();
        let e = FsConfig {
            io_depth_max: 0,
            ..FsConfig::default()
        }
        .validate()
        .unwrap_err();
        assert!(e.to_string().contains("fs.io_depth_max"), "{e}");
        let e = FsConfig {
            write_bytes_max: 100,
            ..FsConfig::default()
        }
        .validate()
        .unwrap_err();
        assert!(e.to_string().contains("fs.write_bytes_max"), "{e}");
        let e = FsConfig {
            read_ahead_bytes: 1000,
            ..FsConfig::default()
        }
        .validate()
        .unwrap_err();
        assert!(e.to_string().contains("fs.read_ahead_bytes"), "{e}");
    }
}
