//! One writer per image: an advisory `flock` on the image file, exclusive for a command that
//! writes the image (import, mkfs, serve, db-bench/ycsb --image, …), shared for one that only
//! reads it (ls, fsck, export). The lock belongs to the open file, so it is held exactly as
//! long as the image's page store is alive — for `serve`, until its last commit is on the
//! image — and a killed process releases it.
//!
//! A lock held by someone else is waited for a bounded time (a writer that is finishing its
//! last commit, e.g. a `serve` whose mount point was just unmounted, releases it soon), then
//! refused with the holder's PID, read from `/proc/locks`.

use crate::error::ImageError;
use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::os::unix::io::AsRawFd;
use std::time::{Duration, Instant};

/// How long a command waits for an image another process holds before refusing.
pub const LOCK_WAIT: Duration = Duration::from_secs(5);

/// The interval between two attempts while waiting.
const POLL_INTERVAL: Duration = Duration::from_millis(20);

/// Exclusive (a writer) or shared (a reader).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockKind {
    /// A command that writes the image.
    Exclusive,
    /// A command that only reads it.
    Shared,
}

/// Takes `kind` of lock on `file` (the image `image`), waiting at most `wait` for another
/// holder to let go; then refuses with [`ImageError::InUse`].
pub(crate) fn lock(
    file: &File,
    image: &str,
    kind: LockKind,
    wait: Duration,
) -> Result<(), ImageError> {
    let op = match kind {
        LockKind::Exclusive => libc::LOCK_EX,
        LockKind::Shared => libc::LOCK_SH,
    } | libc::LOCK_NB;
    let start = Instant::now();
    loop {
        // SAFETY: flock on a file descriptor this `File` owns; no memory is passed.
        let r = unsafe { libc::flock(file.as_raw_fd(), op) };
        if r == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::EWOULDBLOCK) if start.elapsed() < wait => std::thread::sleep(POLL_INTERVAL),
            Some(libc::EWOULDBLOCK) => {
                return Err(ImageError::InUse {
                    image: image.to_string(),
                    holder: holder_pid(file),
                    writing: kind == LockKind::Shared,
                })
            }
            _ => {
                return Err(ImageError::Io {
                    what: format!("image {image}: lock"),
                    source: e,
                })
            }
        }
    }
}

/// The PID of a process holding a lock on `file`, from `/proc/locks` (Linux), if any
/// other than this one is found.
fn holder_pid(file: &File) -> Option<u32> {
    let meta = file.metadata().ok()?;
    let (major, minor) = (libc::major(meta.dev()), libc::minor(meta.dev()));
    let text = std::fs::read_to_string("/proc/locks").ok()?;
    let me = std::process::id();
    let holders = text.lines().filter_map(|line| {
        // "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF"; waiters carry "->" and are skipped.
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 6 || f[1] != "FLOCK" {
            return None;
        }
        let pid: u32 = f[4].parse().ok()?;
        let mut id = f[5].split(':');
        let maj = u32::from_str_radix(id.next()?, 16).ok()?;
        let min = u32::from_str_radix(id.next()?, 16).ok()?;
        let ino: u64 = id.next()?.parse().ok()?;
        (maj == major && min == minor && ino == meta.ino()).then_some(pid)
    });
    let pids: Vec<u32> = holders.collect();
    pids.iter()
        .copied()
        .find(|&p| p != me)
        .or(pids.first().copied())
}
