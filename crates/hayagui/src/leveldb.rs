//! A real LevelDB (`rusty-leveldb` 4.0.2, unmodified) on the VE: [`SimEnv`] is its `Env`
//! over the program API ([`Ve`]), so every file call LevelDB makes is served by the path
//! under test — AccelFS and the direct engine, or system calls redirected to the host — in
//! simulated time, and the database's files are really on the simulated SSD's file system.
//!
//! - Writable files keep LevelDB's 64 KiB user-space buffer (`hayagui.leveldb
//!   .write_buffer_bytes`) on both paths; `Write::flush` is LevelDB's sync point (the WAL on a
//!   synchronous write, a finished table, the manifest), so it writes the buffer and then
//!   syncs (`fdatasync(2)` redirected; AccelFS's `Sync` direct).
//! - LevelDB's own compute is charged on a VE core by [`VeHook`] (per call and per byte of
//!   key and value) and here per byte it reads or writes (CRC, compression, block parsing,
//!   compaction's merging) — the same charges on both paths (`hayagui.leveldb`).
//! - `children` is sorted (LevelDB deletes obsolete files in the order it lists them);
//!   `micros` is simulated time; the info log goes nowhere, as in Hayagui's VE Env.
//!
//! rusty-leveldb compacts inline, in the call that triggered it (it has no background
//! thread), so compaction's I/O and compute land on the calling core and in that call's
//! latency; Hayagui's C++ LevelDB compacts on a second thread.

use crate::config::LevelDbCostConfig;
use crate::files::{Fd, FileError, OpenMode, Ve};
use nearflash_kvbench::{BenchClock, DbOp, OpHook};
use nearflash_sim::SimDuration;
use rusty_leveldb::env::{Env, FileLock, Logger, RandomAccess};
use rusty_leveldb::{Status, StatusCode};
use std::cell::RefCell;
use std::collections::BTreeSet;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// The VE shared by LevelDB's environment, its clock and its hook.
pub type SharedVe = Rc<RefCell<Ve>>;

/// What went wrong where LevelDB cannot be told (a buffered write failing as its file is
/// dropped): counted, and the run fails.
#[derive(Clone, Debug, Default)]
pub struct EnvFailures {
    pub count: u64,
    pub first: Option<String>,
}

/// LevelDB's Env over the VE's file API.
pub struct SimEnv {
    ve: SharedVe,
    cost: LevelDbCostConfig,
    locks: RefCell<BTreeSet<String>>,
    failures: Rc<RefCell<EnvFailures>>,
}

fn path_str(p: &Path) -> Result<String, Status> {
    p.to_str()
        .map(str::to_string)
        .ok_or_else(|| Status::new(StatusCode::InvalidArgument, "path is not UTF-8"))
}

fn status(what: &str, p: &str, e: FileError) -> Status {
    let code = match e.fs_error() {
        Some(nearflash_fs::FsError::NotFound(_)) => StatusCode::NotFound,
        Some(nearflash_fs::FsError::Exists(_)) => StatusCode::AlreadyExists,
        Some(nearflash_fs::FsError::Permission(_)) => StatusCode::PermissionDenied,
        _ => StatusCode::IOError,
    };
    Status::new(code, &format!("{what} {p}: {e}"))
}

fn io_error(e: FileError) -> io::Error {
    io::Error::other(e.to_string())
}

impl SimEnv {
    pub fn new(ve: SharedVe, cost: LevelDbCostConfig) -> SimEnv {
        SimEnv {
            ve,
            cost,
            locks: RefCell::new(BTreeSet::new()),
            failures: Rc::new(RefCell::new(EnvFailures::default())),
        }
    }

    /// Failures no caller could be told of.
    pub fn failures(&self) -> Rc<RefCell<EnvFailures>> {
        self.failures.clone()
    }

    fn open(&self, p: &Path, mode: OpenMode, what: &str) -> Result<Fd, Status> {
        let s = path_str(p)?;
        self.ve
            .borrow_mut()
            .open(&s, mode)
            .map_err(|e| status(what, &s, e))
    }

    fn file(&self, fd: Fd, at: u64) -> FileHandle {
        FileHandle {
            ve: self.ve.clone(),
            fd,
            at,
            io_instructions_per_byte: self.cost.instructions_per_io_byte,
        }
    }
}

/// An open file of LevelDB's: closed when dropped.
struct FileHandle {
    ve: SharedVe,
    fd: Fd,
    at: u64,
    io_instructions_per_byte: f64,
}

impl FileHandle {
    fn read_at(&self, off: u64, dst: &mut [u8]) -> Result<usize, FileError> {
        let mut ve = self.ve.borrow_mut();
        let got = ve.read_at(self.fd, off, dst.len() as u64)?;
        dst[..got.len()].copy_from_slice(&got);
        ve.compute(got.len() as f64 * self.io_instructions_per_byte);
        Ok(got.len())
    }
}

impl Drop for FileHandle {
    fn drop(&mut self) {
        // A close fails only on a bad descriptor, which this handle never holds.
        let _ = self.ve.borrow_mut().close(self.fd);
    }
}

struct SeqFile(FileHandle);

impl Read for SeqFile {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.0.read_at(self.0.at, buf).map_err(io_error)?;
        self.0.at += n as u64;
        Ok(n)
    }
}

struct RandomFile(FileHandle);

impl RandomAccess for RandomFile {
    fn read_at(&self, off: usize, dst: &mut [u8]) -> rusty_leveldb::Result<usize> {
        self.0
            .read_at(off as u64, dst)
            .map_err(|e| Status::new(StatusCode::IOError, &e.to_string()))
    }
}

/// A writable file with LevelDB's user-space buffer.
struct WritableFile {
    f: FileHandle,
    buf: Vec<u8>,
    buffer_bytes: usize,
    failures: Rc<RefCell<EnvFailures>>,
}

impl WritableFile {
    fn write_out(&mut self) -> Result<(), FileError> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let mut ve = self.f.ve.borrow_mut();
        ve.compute(self.buf.len() as f64 * self.f.io_instructions_per_byte);
        ve.write_at(self.f.fd, self.f.at, &self.buf)?;
        self.f.at += self.buf.len() as u64;
        self.buf.clear();
        Ok(())
    }
}

impl Write for WritableFile {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(data);
        if self.buf.len() >= self.buffer_bytes {
            self.write_out().map_err(io_error)?;
        }
        Ok(data.len())
    }

    /// LevelDB's sync point: the buffer, then a sync.
    fn flush(&mut self) -> io::Result<()> {
        self.write_out().map_err(io_error)?;
        self.f.ve.borrow_mut().sync(self.f.fd).map_err(io_error)
    }
}

impl Drop for WritableFile {
    fn drop(&mut self) {
        if let Err(e) = self.write_out() {
            let mut f = self.failures.borrow_mut();
            f.count += 1;
            f.first.get_or_insert_with(|| e.to_string());
        }
    }
}

impl Env for SimEnv {
    fn open_sequential_file(&self, p: &Path) -> rusty_leveldb::Result<Box<dyn Read>> {
        let fd = self.open(p, OpenMode::EXISTING, "open")?;
        Ok(Box::new(SeqFile(self.file(fd, 0))))
    }

    fn open_random_access_file(&self, p: &Path) -> rusty_leveldb::Result<Box<dyn RandomAccess>> {
        let fd = self.open(p, OpenMode::EXISTING, "open")?;
        Ok(Box::new(RandomFile(self.file(fd, 0))))
    }

    fn open_writable_file(&self, p: &Path) -> rusty_leveldb::Result<Box<dyn Write>> {
        let fd = self.open(p, OpenMode::CREATE_TRUNC, "create")?;
        Ok(Box::new(WritableFile {
            f: self.file(fd, 0),
            buf: Vec::new(),
            buffer_bytes: self.cost.write_buffer_bytes as usize,
            failures: self.failures.clone(),
        }))
    }

    fn open_appendable_file(&self, p: &Path) -> rusty_leveldb::Result<Box<dyn Write>> {
        let s = path_str(p)?;
        let fd = self.open(p, OpenMode::CREATE, "open")?;
        let at = self
            .ve
            .borrow_mut()
            .size(&s)
            .map_err(|e| status("size of", &s, e))?;
        Ok(Box::new(WritableFile {
            f: self.file(fd, at),
            buf: Vec::new(),
            buffer_bytes: self.cost.write_buffer_bytes as usize,
            failures: self.failures.clone(),
        }))
    }

    fn exists(&self, p: &Path) -> rusty_leveldb::Result<bool> {
        let s = path_str(p)?;
        self.ve
            .borrow_mut()
            .exists(&s)
            .map_err(|e| status("stat", &s, e))
    }

    fn children(&self, p: &Path) -> rusty_leveldb::Result<Vec<PathBuf>> {
        let s = path_str(p)?;
        let mut names = self
            .ve
            .borrow_mut()
            .children(&s)
            .map_err(|e| status("list", &s, e))?;
        names.sort();
        Ok(names.into_iter().map(PathBuf::from).collect())
    }

    fn size_of(&self, p: &Path) -> rusty_leveldb::Result<usize> {
        let s = path_str(p)?;
        self.ve
            .borrow_mut()
            .size(&s)
            .map(|n| n as usize)
            .map_err(|e| status("size of", &s, e))
    }

    fn delete(&self, p: &Path) -> rusty_leveldb::Result<()> {
        let s = path_str(p)?;
        self.ve
            .borrow_mut()
            .delete(&s)
            .map_err(|e| status("delete", &s, e))
    }

    /// `create_dir_all`, as LevelDB's disk Env: existing directories are fine.
    fn mkdir(&self, p: &Path) -> rusty_leveldb::Result<()> {
        let s = path_str(p)?;
        let mut ve = self.ve.borrow_mut();
        let mut at = String::new();
        for part in s.split('/').filter(|c| !c.is_empty()) {
            at.push('/');
            at.push_str(part);
            match ve.mkdir(&at) {
                Ok(()) => {}
                Err(e) if matches!(e.fs_error(), Some(nearflash_fs::FsError::Exists(_))) => {}
                Err(e) => return Err(status("mkdir", &at, e)),
            }
        }
        Ok(())
    }

    /// `remove_dir_all`, as LevelDB's disk Env.
    fn rmdir(&self, p: &Path) -> rusty_leveldb::Result<()> {
        let s = path_str(p)?;
        for name in self.children(p)? {
            let child = format!("{}/{}", s.trim_end_matches('/'), name.display());
            self.delete(Path::new(&child))?;
        }
        self.ve
            .borrow_mut()
            .rmdir(&s)
            .map_err(|e| status("rmdir", &s, e))
    }

    fn rename(&self, from: &Path, to: &Path) -> rusty_leveldb::Result<()> {
        let (f, t) = (path_str(from)?, path_str(to)?);
        self.ve
            .borrow_mut()
            .rename(&f, &t)
            .map_err(|e| status("rename", &f, e))
    }

    fn lock(&self, p: &Path) -> rusty_leveldb::Result<FileLock> {
        let s = path_str(p)?;
        if !self.locks.borrow_mut().insert(s.clone()) {
            return Err(Status::new(
                StatusCode::LockError,
                &format!("{s} is locked"),
            ));
        }
        // LevelDB's LOCK file exists on disk as in the disk Env.
        let fd = self.open(p, OpenMode::CREATE, "lock")?;
        drop(self.file(fd, 0));
        Ok(FileLock { id: s })
    }

    fn unlock(&self, l: FileLock) -> rusty_leveldb::Result<()> {
        if self.locks.borrow_mut().remove(&l.id) {
            Ok(())
        } else {
            Err(Status::new(
                StatusCode::LockError,
                &format!("{} is not locked", l.id),
            ))
        }
    }

    fn new_logger(&self, _: &Path) -> rusty_leveldb::Result<Logger> {
        Ok(Logger::new(Box::new(io::sink())))
    }

    fn micros(&self) -> u64 {
        self.ve.borrow().now().as_ns() / 1_000
    }

    fn sleep_for(&self, micros: u32) {
        self.ve
            .borrow_mut()
            .sleep(SimDuration::from_ns(u64::from(micros) * 1_000));
    }
}

/// The benchmarks' clock: simulated time.
pub struct VeClock(pub SharedVe);

impl BenchClock for VeClock {
    fn now_us(&self) -> f64 {
        self.0.borrow().now().as_ns() as f64 / 1e3
    }
}

/// Charges LevelDB's own work per database call on a VE core.
pub struct VeHook {
    pub ve: SharedVe,
    pub cost: LevelDbCostConfig,
}

impl OpHook for VeHook {
    fn after(&mut self, op: DbOp, bytes: u64) {
        let instructions =
            self.cost.op_instructions as f64 + bytes as f64 * self.cost.instructions_per_op_byte;
        let _ = op;
        self.ve.borrow_mut().compute(instructions);
    }
}
