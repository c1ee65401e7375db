//! nearflash-outfile: host output files written so that nothing is clobbered that is not
//! theirs — and input files read as bounded streams ([`read_bounded`]).
//!
//! - A regular file (or a path that does not exist yet) is written under a temporary name in
//!   the same directory, fsynced, and renamed over the target when complete: a run killed
//!   half-way leaves the old file or the new one, never a truncated one, and a failed write
//!   leaves nothing under the target's name.
//! - A device, FIFO, socket or any other special file is written *in place*, never renamed
//!   over: `--json /dev/null` must leave `/dev/null` the null device (renaming a temporary
//!   over it, as root, replaced the system's `/dev/null` with a regular file).
//! - A symbolic link is followed: the file it names is replaced, the link stays a link.
//! - [`Overwrite::Refuse`] refuses an existing target (checked when the file is created and
//!   again, atomically, when it is committed: the commit is a hard link, which fails if the
//!   name was taken meanwhile).
//!
//! Faults tolerated: a process killed at any point (the temporary, named `.NAME.tmp-PID-N`,
//! is the only leftover); a write error (the temporary is removed when the file is dropped
//! uncommitted).

#![warn(missing_docs)]

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Whether an existing target may be replaced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overwrite {
    /// Replace an existing regular file (atomically).
    Replace,
    /// Fail with `AlreadyExists` if the target exists.
    Refuse,
}

/// Whether `path` names (through any symbolic links) an existing file that is neither a
/// regular file nor a directory: a character or block device, a FIFO, a socket.
pub fn is_special(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir())
}

/// The path a write to `path` replaces: the file a symbolic link names (so the link stays),
/// else `path` itself.
pub fn resolve(path: &Path) -> PathBuf {
    let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    if is_link {
        if let Ok(real) = std::fs::canonicalize(path) {
            return real;
        }
    }
    path.to_path_buf()
}

/// The directory a file path lives in (`.` for a bare name).
pub fn parent_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// A temporary name beside `path`, unique to this process and this call.
pub fn temp_beside(path: &Path) -> PathBuf {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let name = path
        .file_name()
        .map_or_else(|| "output".into(), |n| n.to_string_lossy().into_owned());
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    parent_of(path).join(format!(".{name}.tmp-{}-{n}", std::process::id()))
}

/// Writes `bytes` to `path`: atomically for a regular file, in place for a special one.
pub fn write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut f = OutFile::create(path, Overwrite::Replace)?;
    f.write_all(bytes)?;
    f.commit()
}

/// An output file being written: a temporary beside a regular target (renamed over it by
/// [`OutFile::commit`], removed if dropped uncommitted), or the special file itself.
pub struct OutFile {
    file: File,
    /// The file the output replaces (symbolic links resolved).
    target: PathBuf,
    /// The temporary being written; `None` for a special target written in place, and after
    /// the commit.
    tmp: Option<PathBuf>,
    overwrite: Overwrite,
}

impl OutFile {
    /// Starts an output to `path`. A special file is opened for writing in place (without
    /// truncation, which a device ignores and a FIFO does not have); otherwise a temporary
    /// is created beside the target. With [`Overwrite::Refuse`], an existing target is
    /// refused (`AlreadyExists`) before anything is written.
    pub fn create(path: &Path, overwrite: Overwrite) -> std::io::Result<OutFile> {
        let target = resolve(path);
        let exists = std::fs::symlink_metadata(&target).is_ok();
        if overwrite == Overwrite::Refuse && exists {
            return Err(already_exists(&target));
        }
        if is_special(&target) {
            let file = File::options().write(true).open(&target)?;
            return Ok(OutFile {
                file,
                target,
                tmp: None,
                overwrite,
            });
        }
        let tmp = temp_beside(&target);
        let file = File::options().write(true).create_new(true).open(&tmp)?;
        Ok(OutFile {
            file,
            target,
            tmp: Some(tmp),
            overwrite,
        })
    }

    /// Makes the output durable and gives it the target's name: fsync, then a rename over the
    /// target (or, refusing to overwrite, a hard link that fails if the name is taken), then
    /// an fsync of the directory. A special target is only flushed.
    pub fn commit(mut self) -> std::io::Result<()> {
        self.file.flush()?;
        let Some(tmp) = self.tmp.clone() else {
            return Ok(());
        };
        self.file.sync_all()?;
        match self.overwrite {
            Overwrite::Replace => std::fs::rename(&tmp, &self.target)?,
            Overwrite::Refuse => link_no_clobber(&tmp, &self.target)?,
        }
        self.tmp = None;
        // The rename is durable once the directory is; a directory that cannot be opened
        // for an fsync (some file systems) leaves it as durable as the rename alone.
        if let Ok(dir) = File::open(parent_of(&self.target)) {
            let _ = dir.sync_all();
        }
        Ok(())
    }

    /// The file the output replaces.
    pub fn target(&self) -> &Path {
        &self.target
    }
}

/// Gives `tmp` the name `target` only if `target` does not exist, then removes `tmp`.
fn link_no_clobber(tmp: &Path, target: &Path) -> std::io::Result<()> {
    match std::fs::hard_link(tmp, target) {
        Ok(()) => std::fs::remove_file(tmp),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(already_exists(target)),
        // A file system without hard links: check, then rename (a race window remains).
        Err(_) => {
            if std::fs::symlink_metadata(target).is_ok() {
                return Err(already_exists(target));
            }
            std::fs::rename(tmp, target)
        }
    }
}

fn already_exists(target: &Path) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::AlreadyExists,
        format!("{} exists (not overwritten)", target.display()),
    )
}

impl Write for OutFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.file.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

impl Drop for OutFile {
    fn drop(&mut self) {
        if let Some(tmp) = self.tmp.take() {
            let _ = std::fs::remove_file(tmp);
        }
    }
}

/// Reads the file at `path` as a bounded stream: at most `max_bytes` are read, and a file
/// larger than that is an error of kind `InvalidData` ("larger than N bytes") — never read
/// whole first, whatever it is (a FIFO, `/dev/zero`).
pub fn read_bounded(path: &Path, max_bytes: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    File::open(path)?
        .take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max_bytes {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("larger than {max_bytes} bytes"),
        ));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests;
