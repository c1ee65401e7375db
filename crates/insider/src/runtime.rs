//! The host side (§3.3, §4.2): the INSIDER runtime library and the kernel's ordinary file
//! path, over one simulated drive. Its core does not block (`ops`): a call is submitted
//! (`submit(Call)` → `OpId`), moves on as the machine's events and its own deadlines come,
//! and ends as a `Completion` taken with `take_completions`; `step` turns the one simulation
//! loop, so any number of simulated threads and processes have calls in flight at once and
//! the drive (and every open virtual file) keeps working meanwhile. The POSIX-like entry
//! points below (`pread`, `vread`, `vopen`, …) are a thin blocking layer over that core
//! (`run_to_completion`): each steps the loop until its own call — or, for the control
//! plane, its file-system operations — ends, every other call in flight going on meanwhile.
//!
//! The drive's file system is `nearflash-fs` on the drive itself (`devfs`): namespace,
//! owners, modes, permission checks, sizes, extents, the append-only attribute and the
//! mapping files all live there, and its metadata and journal writes are drive requests.
//!
//! Ordinary path: `create`/`pwrite`/`fsync`/`truncate`/`fallocate` are file-system
//! operations (buffered writes sit in the file system's buffer cache until a commit);
//! `pread` and `pwrite_direct` (`O_DIRECT`) are operations of the shared host model
//! (`nearflash_host::Host`, a component of the machine: the system call, the storage stack
//! per request and per page, the bounded LRU page cache with read-ahead, the copy, on the
//! host's cores) over the file's extents, its block requests crossing the drive's NVMe front
//! end and firmware (slot 0). The runtime declares each file's extents to the host and
//! drops the host's cached pages of a file whose blocks the drive or the file system
//! rewrote.
//!
//! Virtual files (Table 2): `reg_virt_file` appends the mapping to the caller's mapping file
//! `/.<login>.nearflash` (mode 0640) and programs a free slot; `vopen` reads the mapping,
//! opens every real file as the caller — the file system checks the permission *before
//! anything starts* (denied ⇒ an error, no drive request) — sets append-only for the
//! duration, fetches the extents and hands extents and slot to the drive, which pre-issues
//! them (pipelined mode). `vread` pops the host-side buffer; `vwrite` pushes bytes through
//! the program into the preallocated real file; `vclose` returns the bytes the drive wrote.

use crate::backing::{Backing, Emulated};
use crate::config::{Backing as BackingKind, InsiderConfig};
use crate::devfs::DevFs;
use crate::error::InsiderError;
use crate::machine::{Machine, MachineEvent};
use crate::stream::{Direction, Extent, ProgramRun, Stream};
use nearflash_flash::{FlashConfig, MemoryStore, NoStore, PageStore};
use nearflash_fs::{Caller, Fh, FileExtent, FsError, FsOp, FsReply, Ino, OpenFlags, Stat};
use nearflash_ftl::{Device, FtlConfig};
use nearflash_host::{Extent as HostExtent, FileId, HostConfig, PAGE_BYTES};
use nearflash_hw::server::FifoServer;
use nearflash_sim::{Schedule, Sim, SimDuration, SimTime};
use nearflash_stream::StreamProgram;
use std::collections::{BTreeMap, BTreeSet};

mod ops;

pub use ops::{Call, Completion, OpId, Output, CALLS_MAX};

/// The superuser passes every permission check.
pub const ROOT_UID: u32 = 0;

/// Makes a fresh instance of a drive program (a slot is reset to it at every vopen).
pub type ProgramFactory = Box<dyn Fn() -> Box<dyn StreamProgram>>;

/// A drive program the administrator installed: how to build it, and (timing fidelity, no
/// data) how much output it makes per input byte.
pub struct ProgramSpec {
    pub make: ProgramFactory,
    pub output_per_input: f64,
}

/// How the machine is built.
pub struct MachineSpec<'a> {
    pub insider: &'a InsiderConfig,
    pub host: &'a HostConfig,
    /// Needed when `insider.backing = "flash"`.
    pub flash: Option<(&'a FlashConfig, &'a FtlConfig)>,
    pub functional: bool,
    pub seed: u64,
}

/// One row of the host's user table (`/etc/passwd`: the file system knows only numbers).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct User {
    pub uid: u32,
    pub gid: u32,
    pub login: String,
}

/// A real file vopen opened on the caller's behalf.
struct RealFile {
    path: String,
    fh: Fh,
    /// vopen set its append-only flag (vclose clears it again).
    set_append_only: bool,
}

struct VirtualFd {
    dir: Direction,
    files: Vec<RealFile>,
    /// Their inodes (the host's read cache of them is dropped after a virtual write).
    real_inos: Vec<Ino>,
    program: String,
}

struct RealFd {
    ino: Ino,
    fh: Fh,
    path: String,
    writable: bool,
}

enum Fd {
    Virtual(VirtualFd),
    Real(RealFd),
}

/// The host's in-core copy of a file's inode (what the kernel keeps after a lookup): the
/// hot paths (`pread`, `pwrite_direct`) read it without a file-system operation; every
/// runtime call that changes the file refreshes it.
#[derive(Clone, Debug)]
struct FileView {
    size_bytes: u64,
    append_only: bool,
    /// Fetched on first use after a change.
    extents: Option<Vec<FileExtent>>,
}

impl FileView {
    /// The view of a freshly stat'ed inode (its extents fetched on first use).
    fn of(st: &Stat) -> FileView {
        FileView {
            size_bytes: st.size_bytes,
            append_only: st.append_only,
            extents: None,
        }
    }
}

/// A file as the host model knows it: its id there and the extents last declared.
struct HostFile {
    id: FileId,
    extents: Vec<HostExtent>,
}

/// One registration of the mapping file.
#[derive(Clone, Debug, PartialEq)]
struct Mapping {
    vpath: String,
    program: String,
    /// (real path, offset, length; `None` = to the end of the file at vopen).
    pieces: Vec<(String, u64, Option<u64>)>,
}

pub struct Runtime {
    m: Machine,
    fs: DevFs,
    users: BTreeMap<u32, User>,
    host: HostConfig,
    cfg: InsiderConfig,
    programs: BTreeMap<String, ProgramSpec>,
    /// Slot i (1-based) → (owner uid, vpath) of the registration it holds.
    slots: Vec<Option<(u32, String)>>,
    fds: BTreeMap<u32, Fd>,
    next_fd: u32,
    /// The files declared to the host model, by inode.
    host_files: BTreeMap<Ino, HostFile>,
    /// Files with data the file system may hold dirty (written through it): synced before
    /// the drive or `pread` reads their blocks directly.
    fs_dirty: BTreeSet<Ino>,
    views: BTreeMap<Ino, FileView>,
    /// The application thread's core: the runtime's own copies (virtual files) happen on
    /// it, in order.
    host_cpu: FifoServer,
    /// Cores of the processes reading with `Call::ProcessVread`, by descriptor.
    process_cpu: BTreeMap<u32, FifoServer>,
    /// The core's calls in flight, by number (at most `CALLS_MAX` with `completions`).
    ops: BTreeMap<u64, ops::InFlight>,
    next_op: u64,
    /// Calls that ended, until their callers take them.
    completions: Vec<Completion>,
    /// §3.5 system-level pipelining for virtual files opened from now on.
    pub pipelined: bool,
    throttles: BTreeMap<String, f64>,
}

fn mapping_path(login: &str) -> String {
    format!("/.{login}.nearflash")
}

/// Device byte ranges holding file bytes `offset .. offset + len` of a file with `extents`.
fn map_extents(
    extents: &[FileExtent],
    path: &str,
    offset: u64,
    len: u64,
) -> Result<Vec<Extent>, InsiderError> {
    let mut out = Vec::new();
    let end = offset + len;
    for e in extents {
        let (s, t) = (e.file_offset_bytes, e.file_offset_bytes + e.len_bytes);
        if t <= offset || s >= end {
            continue;
        }
        let (a, b) = (offset.max(s), end.min(t));
        match out.last_mut() {
            Some(Extent {
                device_offset_bytes,
                len_bytes,
            }) if *device_offset_bytes + *len_bytes == e.device_offset_bytes + (a - s) => {
                *len_bytes += b - a
            }
            _ => out.push(Extent {
                device_offset_bytes: e.device_offset_bytes + (a - s),
                len_bytes: b - a,
            }),
        }
    }
    if out.iter().map(|e| e.len_bytes).sum::<u64>() != len {
        return Err(InsiderError::OutOfFile {
            path: path.into(),
            range: format!("{offset}+{len} (not allocated)"),
            size_bytes: extents.iter().map(|e| e.len_bytes).sum(),
        });
    }
    Ok(out)
}

impl Runtime {
    /// Formats the drive and an empty file system on it; root is the only user.
    pub fn new(spec: &MachineSpec) -> Result<Runtime, InsiderError> {
        spec.insider.validate()?;
        spec.host.validate()?;
        assert_eq!(
            spec.insider.fs_block_bytes, PAGE_BYTES,
            "the file system's block is the host's page (validated)"
        );
        let mut sim = Sim::new(spec.seed);
        let backing = match spec.insider.backing {
            BackingKind::DramEmulated => {
                Backing::Emulated(Emulated::new(spec.insider, spec.functional))
            }
            BackingKind::Flash => {
                let (flash, ftl) = spec.flash.ok_or(InsiderError::Config {
                    field: "insider.backing",
                    reason: "\"flash\" needs the preset's [flash] and [ftl] tables".into(),
                })?;
                let geo = nearflash_flash::Geometry::from_config(flash);
                let store: Box<dyn PageStore> = if spec.functional {
                    Box::new(MemoryStore::new(geo.page_count(), flash.page_size_bytes))
                } else {
                    Box::new(NoStore)
                };
                let dev =
                    Device::format(flash, ftl, store, &mut sim.queue().map(MachineEvent::Dev))?;
                Backing::Flash(Box::new(dev))
            }
        };
        let mut m = Machine::new(spec.insider, spec.host, backing, sim)?;
        // Files start on a C boundary (ext4's `stripe=`): C is one page of every channel
        // (`configs/insider.toml`), so each ISC request occupies every channel once.
        let fs = DevFs::format(&mut m, spec.insider.credit_request_bytes)?;
        let root = User {
            uid: ROOT_UID,
            gid: 0,
            login: "root".into(),
        };
        Ok(Runtime {
            m,
            fs,
            users: BTreeMap::from([(ROOT_UID, root)]),
            host: spec.host.clone(),
            cfg: spec.insider.clone(),
            programs: BTreeMap::new(),
            slots: vec![None; spec.insider.app_slots as usize],
            fds: BTreeMap::new(),
            next_fd: 3,
            host_files: BTreeMap::new(),
            fs_dirty: BTreeSet::new(),
            views: BTreeMap::new(),
            host_cpu: FifoServer::default(),
            process_cpu: BTreeMap::new(),
            ops: BTreeMap::new(),
            next_op: 0,
            completions: Vec::new(),
            pipelined: true,
            throttles: BTreeMap::new(),
        })
    }

    pub fn machine(&self) -> &Machine {
        &self.m
    }

    /// The drive's file system (its counters: operations, commits, block requests).
    pub fn fs(&self) -> &DevFs {
        &self.fs
    }

    pub fn now(&self) -> SimTime {
        self.m.now()
    }

    pub fn config(&self) -> &InsiderConfig {
        &self.cfg
    }

    pub fn is_functional(&self) -> bool {
        self.m.is_functional()
    }

    pub fn user(&self, uid: u32) -> Result<&User, InsiderError> {
        self.users
            .get(&uid)
            .ok_or(InsiderError::UnknownUser { uid })
    }

    pub fn users(&self) -> impl Iterator<Item = &User> {
        self.users.values()
    }

    fn caller(&self, uid: u32) -> Result<Caller, InsiderError> {
        Ok(Caller {
            uid,
            gid: self.user(uid)?.gid,
        })
    }

    /// Runs a file-system operation as `uid`; its error is named after `path`, the user and
    /// the access `needed` (for a permission failure).
    fn fs_op(
        &mut self,
        uid: u32,
        op: FsOp,
        path: &str,
        needed: &'static str,
    ) -> Result<FsReply, InsiderError> {
        let caller = self.caller(uid)?;
        let ticket = self.fs.submit(&mut self.m, caller, op);
        let mut answer = None;
        self.drive_until(|rt| {
            answer = rt.fs.take(ticket);
            answer.is_some()
        })?;
        answer
            .expect("answered")
            .map_err(|e| self.fs_error(e, uid, path, needed))
    }

    /// The caller waits `d` (a message crossing PCIe) while everything else goes on.
    fn sleep(&mut self, d: SimDuration) -> Result<(), InsiderError> {
        let until = self.m.now() + d;
        self.call(Call::Sleep { until }).map(|_| ())
    }

    fn fs_error(&self, e: FsError, uid: u32, path: &str, needed: &'static str) -> InsiderError {
        let path = path.to_string();
        match e {
            FsError::NotFound(_) => InsiderError::NotFound { path },
            FsError::Exists(_) => InsiderError::Exists { path },
            FsError::NotDir(_) => InsiderError::NotADirectory { path },
            FsError::IsDir(_) => InsiderError::IsADirectory { path },
            FsError::AppendOnly(_) => InsiderError::AppendOnly { path },
            FsError::Permission(_) => InsiderError::PermissionDenied {
                path,
                login: self.user(uid).map(|u| u.login.clone()).unwrap_or_default(),
                needed,
            },
            e => InsiderError::Fs(e),
        }
    }

    /// `stat(path)` as `uid`.
    pub fn stat(&mut self, uid: u32, path: &str) -> Result<Stat, InsiderError> {
        match self.fs_op(uid, FsOp::Stat(path.into()), path, "search")? {
            FsReply::Stat(s) => Ok(s),
            r => unreachable!("stat answered {r:?}"),
        }
    }

    /// Stats `path` and refreshes the in-core view of its inode.
    fn refresh(&mut self, path: &str) -> Result<Stat, InsiderError> {
        let st = self.stat(ROOT_UID, path)?;
        self.views.insert(st.ino, FileView::of(&st));
        Ok(st)
    }

    fn fs_open(
        &mut self,
        uid: u32,
        path: &str,
        flags: OpenFlags,
        perm: u16,
    ) -> Result<Fh, InsiderError> {
        let needed = if flags.write { "write" } else { "read" };
        let op = FsOp::Open {
            path: path.into(),
            flags,
            perm,
        };
        match self.fs_op(uid, op, path, needed)? {
            FsReply::Opened(fh) => Ok(fh),
            r => unreachable!("open answered {r:?}"),
        }
    }

    fn fs_close(&mut self, fh: Fh) -> Result<(), InsiderError> {
        self.fs_op(ROOT_UID, FsOp::Close(fh), "", "").map(|_| ())
    }

    fn fs_extents(&mut self, fh: Fh, path: &str) -> Result<Vec<FileExtent>, InsiderError> {
        match self.fs_op(ROOT_UID, FsOp::Extents(fh), path, "read")? {
            FsReply::Extents(e) => Ok(e),
            r => unreachable!("extents answered {r:?}"),
        }
    }

    /// Makes the file system write the data it holds dirty for `ino` (through `fh`).
    fn fs_sync(&mut self, ino: Ino, fh: Fh, path: &str) -> Result<(), InsiderError> {
        if self.fs_dirty.remove(&ino) {
            self.fs_op(ROOT_UID, FsOp::Fsync(fh), path, "write")?;
        }
        Ok(())
    }

    /// `fallocate` through `fh` until `offset..offset + len` is covered.
    fn fs_fallocate(
        &mut self,
        ino: Ino,
        fh: Fh,
        path: &str,
        offset: u64,
        len: u64,
    ) -> Result<(), InsiderError> {
        let mut done = 0;
        while done < len {
            let op = FsOp::Fallocate {
                fh,
                offset_bytes: offset + done,
                len_bytes: len - done,
            };
            match self.fs_op(ROOT_UID, op, path, "write") {
                Ok(FsReply::Written(n)) => done += n,
                Ok(r) => unreachable!("fallocate answered {r:?}"),
                Err(InsiderError::Fs(FsError::NoSpace(_))) => {
                    return Err(InsiderError::NoSpace {
                        needed_bytes: len - done,
                    })
                }
                Err(e) => return Err(e),
            }
        }
        // A partial last block may have had its stale tail zeroed in the file system's cache.
        self.fs_dirty.insert(ino);
        self.refresh(path).map(|_| ())
    }

    /// System startup for a user: a row in the user table and the hidden mapping file
    /// `/.<login>.nearflash`, owned by the user, mode 0640 (§3.3.1).
    pub fn add_user(&mut self, uid: u32, gid: u32, login: &str) -> Result<(), InsiderError> {
        self.users.insert(
            uid,
            User {
                uid,
                gid,
                login: login.to_string(),
            },
        );
        let path = mapping_path(login);
        let flags = OpenFlags {
            excl: true,
            ..OpenFlags::CREATE_TRUNC
        };
        let fh = self.fs_open(ROOT_UID, &path, flags, 0o640)?;
        self.fs_close(fh)?;
        let op = FsOp::Chown {
            path: path.clone(),
            uid,
            gid,
        };
        self.fs_op(ROOT_UID, op, &path, "owner").map(|_| ())
    }

    /// The administrator installs a drive program under `name`.
    pub fn install_program(&mut self, name: &str, spec: ProgramSpec) {
        self.programs.insert(name.to_string(), spec);
    }

    /// §5.3: caps the processing rate of `program` (the experiment throttles accelerators).
    pub fn throttle(&mut self, program: &str, mb_s: f64) {
        self.throttles.insert(program.to_string(), mb_s);
    }

    /// Host compute of `instructions` spread over every host core (OpenMP, perfect scaling).
    pub fn host_compute(&mut self, instructions: f64) -> Result<(), InsiderError> {
        self.call(Call::Compute { instructions }).map(|_| ())
    }

    // ---- the ordinary file path ----------------------------------------------------------

    pub fn mkdir(&mut self, uid: u32, path: &str, mode: u16) -> Result<(), InsiderError> {
        let op = FsOp::Mkdir {
            path: path.into(),
            perm: mode,
        };
        self.fs_op(uid, op, path, "write").map(|_| ())
    }

    pub fn create(&mut self, uid: u32, path: &str, mode: u16) -> Result<(), InsiderError> {
        let flags = OpenFlags {
            excl: true,
            ..OpenFlags::CREATE_TRUNC
        };
        let fh = self.fs_open(uid, path, flags, mode)?;
        self.fs_close(fh)
    }

    /// Untimed preconditioning: a file whose `contents` (timing fidelity: `size_bytes` of
    /// no particular bytes) were written long before the run. The file system's operations
    /// (create, allocate) still take their simulated time.
    pub fn install_file(
        &mut self,
        uid: u32,
        path: &str,
        mode: u16,
        size_bytes: u64,
        contents: Option<&[u8]>,
    ) -> Result<(), InsiderError> {
        let flags = OpenFlags {
            excl: true,
            ..OpenFlags::CREATE_TRUNC
        };
        let fh = self.fs_open(uid, path, flags, mode)?;
        let ino = self.stat(uid, path)?.ino;
        if size_bytes > 0 {
            self.fs_fallocate(ino, fh, path, 0, size_bytes)?;
        }
        let all = self.fs_extents(fh, path)?;
        self.fs_close(fh)?;
        // Long before the run: the file system committed it, too.
        self.fs_op(ROOT_UID, FsOp::Sync, path, "write")?;
        self.fs_dirty.remove(&ino);
        let extents = map_extents(&all, path, 0, size_bytes)?;
        let emulated_timing =
            !self.is_functional() && self.cfg.backing == BackingKind::DramEmulated;
        if emulated_timing {
            return Ok(());
        }
        let mut at = 0usize;
        for e in extents {
            let data = match contents {
                Some(c) if self.is_functional() => c[at..at + e.len_bytes as usize].to_vec(),
                _ => Vec::new(),
            };
            at += e.len_bytes as usize;
            // Whole blocks: the tail of the last one is zeros.
            let len = e.len_bytes.div_ceil(self.cfg.fs_block_bytes) * self.cfg.fs_block_bytes;
            self.m.preload(e.device_offset_bytes, len, data)?;
        }
        Ok(())
    }

    /// Opens a real file for the ordinary path (a writable descriptor appends only to an
    /// append-only file).
    pub fn open(&mut self, uid: u32, path: &str, writable: bool) -> Result<u32, InsiderError> {
        let flags = OpenFlags {
            write: writable,
            ..OpenFlags::READ
        };
        let fh = self.fs_open(uid, path, flags, 0)?;
        let ino = match self.refresh(path) {
            Ok(s) => s.ino,
            Err(e) => {
                self.fs_close(fh)?;
                return Err(e);
            }
        };
        let fd = self.next_fd;
        self.next_fd += 1;
        self.fds.insert(
            fd,
            Fd::Real(RealFd {
                ino,
                fh,
                path: path.into(),
                writable,
            }),
        );
        Ok(fd)
    }

    pub fn close(&mut self, fd: u32) -> Result<(), InsiderError> {
        match self.fds.get(&fd) {
            Some(Fd::Real(r)) => {
                let fh = r.fh;
                self.fds.remove(&fd);
                self.fs_close(fh)
            }
            Some(Fd::Virtual(_)) => Err(InsiderError::WrongMode {
                fd,
                mode: "virtual",
                op: "close (use vclose)",
            }),
            None => Err(InsiderError::BadDescriptor { fd }),
        }
    }

    fn real(&self, fd: u32) -> Result<&RealFd, InsiderError> {
        match self.fds.get(&fd) {
            Some(Fd::Real(r)) => Ok(r),
            Some(Fd::Virtual(_)) => Err(InsiderError::WrongMode {
                fd,
                mode: "virtual",
                op: "a POSIX call",
            }),
            None => Err(InsiderError::BadDescriptor { fd }),
        }
    }

    fn writable(&self, fd: u32) -> Result<(Ino, Fh, String), InsiderError> {
        let r = self.real(fd)?;
        if !r.writable {
            return Err(InsiderError::WrongMode {
                fd,
                mode: "read-only",
                op: "write",
            });
        }
        Ok((r.ino, r.fh, r.path.clone()))
    }

    fn block(&self) -> u64 {
        self.cfg.fs_block_bytes
    }

    /// `pwrite`: a file-system write (into its buffer cache, dirty until a commit).
    /// Append-only files accept writes at their end only.
    pub fn pwrite(&mut self, fd: u32, offset: u64, data: &[u8]) -> Result<(), InsiderError> {
        self.pwrite_len(fd, offset, data.len() as u64, data)
    }

    /// `pwrite` of `len` bytes; `data` is empty in timing fidelity (zeros are written).
    pub fn pwrite_len(
        &mut self,
        fd: u32,
        offset: u64,
        len: u64,
        data: &[u8],
    ) -> Result<(), InsiderError> {
        assert!(data.is_empty() || data.len() as u64 == len);
        let (ino, fh, path) = self.writable(fd)?;
        let b = self.block();
        self.drop_pages(ino, offset / b, (offset + len).div_ceil(b));
        let mut at = 0u64;
        while at < len {
            let n = (len - at).min(nearflash_fs::FsConfig::default().write_bytes_max);
            let bytes = if data.is_empty() {
                vec![0; n as usize]
            } else {
                data[at as usize..(at + n) as usize].to_vec()
            };
            let op = FsOp::Write {
                fh,
                offset_bytes: offset + at,
                data: bytes,
            };
            self.fs_dirty.insert(ino);
            match self.fs_op(ROOT_UID, op, &path, "write") {
                Ok(FsReply::Written(w)) => at += w,
                Ok(r) => unreachable!("write answered {r:?}"),
                Err(InsiderError::Fs(FsError::NoSpace(_))) => {
                    return Err(InsiderError::NoSpace {
                        needed_bytes: len - at,
                    })
                }
                Err(e) => return Err(e),
            }
        }
        self.refresh(&path)?;
        Ok(())
    }

    /// `pwrite` with `O_DIRECT` (timing fidelity: no data): straight to the drive in
    /// `io_request_bytes` requests through the storage stack, at most `io_queue_depth` in
    /// flight, bypassing the caches; returns when every request is acknowledged. Writes
    /// past the size allocate first (and commit, so no cached block lands on them later).
    /// Blocking form of `Call::PwriteDirect`.
    pub fn pwrite_direct(&mut self, fd: u32, offset: u64, len: u64) -> Result<(), InsiderError> {
        self.call(Call::PwriteDirect { fd, offset, len })
            .map(|_| ())
    }

    /// `pread`: cached pages are copied; the rest come from the drive through the stack.
    /// Returns the bytes read (short at the end of the file); `data` is empty in timing
    /// fidelity. Blocking form of `Call::Pread`.
    pub fn pread(
        &mut self,
        fd: u32,
        offset: u64,
        len: u64,
    ) -> Result<(u64, Vec<u8>), InsiderError> {
        match self.call(Call::Pread { fd, offset, len })? {
            Output::Read { n, data } => Ok((n, data)),
            o => unreachable!("pread answered {o:?}"),
        }
    }

    /// Drops the host's cached pages `first .. end` of `ino` (they went stale).
    fn drop_pages(&mut self, ino: Ino, first: u64, end: u64) {
        if end <= first {
            return;
        }
        if let Some(f) = self.host_files.get(&ino) {
            self.m.host_drop_cached(f.id, first, end - 1);
        }
    }

    /// The host's page cache (what `pread` keeps).
    pub fn page_cache(&self) -> &nearflash_host::PageCache {
        self.m.host().cache()
    }

    /// `fsync`: the file system commits (the file's data, then the journal).
    pub fn fsync(&mut self, fd: u32) -> Result<(), InsiderError> {
        let r = self.real(fd)?;
        let (ino, fh, path) = (r.ino, r.fh, r.path.clone());
        self.fs_dirty.remove(&ino);
        self.fs_op(ROOT_UID, FsOp::Fsync(fh), &path, "write")
            .map(|_| ())
    }

    /// `truncate(path, size)`: needs write permission; fails on an append-only file.
    pub fn truncate(&mut self, uid: u32, path: &str, size_bytes: u64) -> Result<(), InsiderError> {
        let op = FsOp::Truncate {
            path: path.into(),
            size_bytes,
        };
        self.fs_op(uid, op, path, "write")?;
        let ino = self.refresh(path)?.ino;
        let keep = size_bytes.div_ceil(self.block());
        self.drop_pages(ino, keep, u64::MAX);
        Ok(())
    }

    /// `fallocate(path, 0, len)`: allocates blocks so the file covers `len` bytes (and has at
    /// least that size); the new blocks count as written (the unwritten flag is cleared, as
    /// §3.3.2 asks of users of virtual writes).
    pub fn fallocate(&mut self, uid: u32, path: &str, len: u64) -> Result<(), InsiderError> {
        let flags = OpenFlags {
            append: true,
            ..OpenFlags::WRITE
        };
        let fh = self.fs_open(uid, path, flags, 0)?;
        let ino = self.stat(uid, path)?.ino;
        let r = if len > 0 {
            self.fs_fallocate(ino, fh, path, 0, len)
        } else {
            Ok(())
        };
        self.fs_close(fh)?;
        r
    }

    /// `posix_fadvise(POSIX_FADV_DONTNEED)`: drops the file's pages from the read cache.
    pub fn drop_cache(&mut self, path: &str) -> Result<(), InsiderError> {
        let ino = self.stat(ROOT_UID, path)?.ino;
        self.drop_pages(ino, 0, u64::MAX);
        Ok(())
    }

    /// Sets or clears the append-only attribute (`chattr +a`; owner or root).
    pub fn set_append_only(&mut self, uid: u32, path: &str, on: bool) -> Result<(), InsiderError> {
        let op = FsOp::SetAppendOnly {
            path: path.into(),
            on,
        };
        self.fs_op(uid, op, path, "owner")?;
        self.refresh(path).map(|_| ())
    }

    /// The whole content of a real file through the ordinary path (functional fidelity).
    pub fn read_file(&mut self, uid: u32, path: &str) -> Result<Vec<u8>, InsiderError> {
        let fd = self.open(uid, path, false)?;
        let size = self.refresh(path)?.size_bytes;
        let (_, data) = self.pread(fd, 0, size)?;
        self.close(fd)?;
        Ok(data)
    }

    // ---- virtual files -----------------------------------------------------------------

    fn login(&self, uid: u32) -> Result<String, InsiderError> {
        Ok(self.user(uid)?.login.clone())
    }

    /// The caller's mapping file, read through the file system as the caller.
    fn read_mappings(&mut self, uid: u32) -> Result<Vec<Mapping>, InsiderError> {
        let path = mapping_path(&self.login(uid)?);
        let fh = self.fs_open(uid, &path, OpenFlags::READ, 0)?;
        let mut bytes = Vec::new();
        loop {
            let op = FsOp::Read {
                fh,
                offset_bytes: bytes.len() as u64,
                len_bytes: u64::MAX,
            };
            match self.fs_op(uid, op, &path, "read")? {
                FsReply::Data(d) if d.is_empty() => break,
                FsReply::Data(d) => bytes.extend_from_slice(&d),
                r => unreachable!("read answered {r:?}"),
            }
        }
        self.fs_close(fh)?;
        let text = String::from_utf8(bytes).map_err(|_| InsiderError::MappingFile {
            path: path.clone(),
            reason: "not UTF-8".into(),
        })?;
        text.lines().map(|l| parse_mapping(&path, l)).collect()
    }

    /// `reg_virt_file(real_path, program)`: the virtual file `vpath` is the output of `program`
    /// over the whole of `real_path`.
    pub fn reg_virt_file(
        &mut self,
        uid: u32,
        vpath: &str,
        real_path: &str,
        program: &str,
    ) -> Result<(), InsiderError> {
        self.register(uid, vpath, vec![(real_path.to_string(), 0, None)], program)
    }

    /// The scatter-gather form: `program` over the concatenation of (path, offset, length).
    pub fn reg_virt_file_sg(
        &mut self,
        uid: u32,
        vpath: &str,
        pieces: &[(&str, u64, u64)],
        program: &str,
    ) -> Result<(), InsiderError> {
        let pieces = pieces
            .iter()
            .map(|&(p, o, l)| (p.to_string(), o, Some(l)))
            .collect();
        self.register(uid, vpath, pieces, program)
    }

    fn register(
        &mut self,
        uid: u32,
        vpath: &str,
        pieces: Vec<(String, u64, Option<u64>)>,
        program: &str,
    ) -> Result<(), InsiderError> {
        if !self.programs.contains_key(program) {
            return Err(InsiderError::UnknownProgram {
                name: program.into(),
            });
        }
        if vpath.contains(['|', '\n', ','])
            || pieces.iter().any(|p| p.0.contains(['|', '\n', ',', ':']))
        {
            return Err(InsiderError::NotFound { path: vpath.into() });
        }
        if self.read_mappings(uid)?.iter().any(|m| m.vpath == vpath) {
            return Err(InsiderError::VirtualExists {
                vpath: vpath.into(),
            });
        }
        let slot = self
            .slots
            .iter()
            .position(Option::is_none)
            .ok_or(InsiderError::NoFreeSlot {
                slots: self.cfg.app_slots,
            })?;
        let line = format_mapping(&Mapping {
            vpath: vpath.into(),
            program: program.into(),
            pieces,
        });
        let path = mapping_path(&self.login(uid)?);
        let flags = OpenFlags {
            append: true,
            ..OpenFlags::WRITE
        };
        let fh = self.fs_open(uid, &path, flags, 0)?;
        let op = FsOp::Write {
            fh,
            offset_bytes: 0,
            data: line.into_bytes(),
        };
        let r = self.fs_op(uid, op, &path, "write");
        self.fs_close(fh)?;
        r?;
        self.slots[slot] = Some((uid, vpath.to_string()));
        Ok(())
    }

    /// Closes the real files vopen opened (and clears the flags it set).
    fn release(&mut self, files: Vec<RealFile>) -> Result<(), InsiderError> {
        let mut first_err = None;
        for f in files {
            if f.set_append_only {
                let op = FsOp::SetAppendOnly {
                    path: f.path.clone(),
                    on: false,
                };
                if let Err(e) = self
                    .fs_op(ROOT_UID, op, &f.path, "owner")
                    .and_then(|_| self.refresh(&f.path))
                {
                    first_err.get_or_insert(e);
                }
            }
            if let Err(e) = self.fs_close(f.fh) {
                first_err.get_or_insert(e);
            }
        }
        first_err.map_or(Ok(()), Err)
    }

    /// `vopen(vpath, O_RDONLY | O_WRONLY)`.
    pub fn vopen(&mut self, uid: u32, vpath: &str, dir: Direction) -> Result<u32, InsiderError> {
        let mapping = self
            .read_mappings(uid)?
            .into_iter()
            .find(|m| m.vpath == vpath)
            .ok_or_else(|| InsiderError::UnknownVirtualPath {
                vpath: vpath.into(),
                login: self.user(uid).map(|u| u.login.clone()).unwrap_or_default(),
            })?;
        let flags = match dir {
            Direction::Read => OpenFlags::READ,
            Direction::Write => OpenFlags {
                append: true,
                ..OpenFlags::WRITE
            },
        };
        // Every permission first: the file system checks each open as the caller, and a
        // denied file means nothing starts.
        let mut files = Vec::new();
        for (path, _, _) in &mapping.pieces {
            match self.fs_open(uid, path, flags, 0) {
                Ok(fh) => files.push(RealFile {
                    path: path.clone(),
                    fh,
                    set_append_only: false,
                }),
                Err(e) => {
                    self.release(files)?;
                    return Err(e);
                }
            }
        }
        match self.vopen_files(uid, vpath, dir, &mapping, &mut files) {
            Ok(fd) => Ok(fd),
            Err(e) => {
                self.release(files)?;
                Err(e)
            }
        }
    }

    /// vopen once every real file is open: sizes and flags, extents, the stream.
    fn vopen_files(
        &mut self,
        uid: u32,
        vpath: &str,
        dir: Direction,
        mapping: &Mapping,
        files: &mut [RealFile],
    ) -> Result<u32, InsiderError> {
        let mut stats = Vec::new();
        for f in files.iter() {
            stats.push(self.refresh(&f.path)?);
        }
        // The extents (filefrag) and, for a write, the file system's dirty data flushed so
        // the drive's output lands after it.
        let mut extents: Vec<Extent> = Vec::new();
        for (((_, off, len), f), st) in mapping.pieces.iter().zip(files.iter()).zip(&stats) {
            let all = self.fs_extents(f.fh, &f.path)?;
            let limit = match dir {
                Direction::Read => st.size_bytes,
                Direction::Write => all.iter().map(|e| e.len_bytes).sum(),
            };
            let len = len.unwrap_or(limit.saturating_sub(*off));
            if off + len > limit {
                return Err(InsiderError::OutOfFile {
                    path: f.path.clone(),
                    range: format!("{off}+{len}"),
                    size_bytes: limit,
                });
            }
            extents.extend(map_extents(&all, &f.path, *off, len)?);
            self.fs_sync(st.ino, f.fh, &f.path)?;
        }
        for (f, st) in files.iter_mut().zip(&stats) {
            if !st.append_only {
                let op = FsOp::SetAppendOnly {
                    path: f.path.clone(),
                    on: true,
                };
                self.fs_op(ROOT_UID, op, &f.path, "owner")?;
                f.set_append_only = true;
                if let Some(v) = self.views.get_mut(&st.ino) {
                    v.append_only = true;
                }
            }
        }
        let slot = 1 + self
            .slots
            .iter()
            .position(|s| s.as_ref().is_some_and(|(u, v)| *u == uid && v == vpath))
            .ok_or_else(|| InsiderError::SlotReleased {
                vpath: vpath.to_string(),
            })?;
        let spec = &self.programs[&mapping.program];
        let instance = (spec.make)();
        let run = ProgramRun {
            name: mapping.program.clone(),
            cost: instance.cost(),
            program: self.m.is_functional().then_some(instance),
            output_per_input: spec.output_per_input,
            throttle_mb_s: self.throttles.get(&mapping.program).copied(),
        };
        let fd = self.next_fd;
        self.next_fd += 1;
        let mut s = Stream::new(fd, slot, dir, run, self.cfg.credits_initial);
        s.pipelined = self.pipelined;
        s.total_in_bytes = match dir {
            Direction::Read => extents.iter().map(|e| e.len_bytes).sum(),
            Direction::Write => 0,
        };
        s.extents = extents;
        // The runtime's message with extents and slot.
        self.sleep(SimDuration::from_us_f64(self.cfg.pcie_latency_us))?;
        self.m.open(s);
        self.fds.insert(
            fd,
            Fd::Virtual(VirtualFd {
                dir,
                files: files
                    .iter_mut()
                    .map(|f| RealFile {
                        path: f.path.clone(),
                        fh: f.fh,
                        set_append_only: f.set_append_only,
                    })
                    .collect(),
                real_inos: stats.iter().map(|s| s.ino).collect(),
                program: mapping.program.clone(),
            }),
        );
        Ok(fd)
    }

    fn virt(&self, fd: u32) -> Result<&VirtualFd, InsiderError> {
        match self.fds.get(&fd) {
            Some(Fd::Virtual(v)) => Ok(v),
            Some(Fd::Real(_)) => Err(InsiderError::WrongMode {
                fd,
                mode: "a real file",
                op: "a virtual-file call",
            }),
            None => Err(InsiderError::BadDescriptor { fd }),
        }
    }

    fn fault(&self, fd: u32) -> Result<(), InsiderError> {
        let v = self.virt(fd)?;
        match self.m.stream(fd).and_then(|s| s.fault.clone()) {
            Some(reason) => Err(InsiderError::ProgramFault {
                fd,
                program: v.program.clone(),
                reason,
            }),
            None => Ok(()),
        }
    }

    /// `send_params(fd, bytes)`: one message into the program's parameter FIFO. The program
    /// starts on the host's first `vread`/`vwrite`, after every message sent before it.
    pub fn send_params(&mut self, fd: u32, params: &[u8]) -> Result<(), InsiderError> {
        self.virt(fd)?;
        self.fault(fd)?;
        self.sleep(SimDuration::from_us_f64(self.cfg.pcie_latency_us))?;
        let s = self.m.stream_mut(fd).expect("open");
        if let Some(p) = s.run.program.as_mut() {
            if let Err(e) = p.on_params(params) {
                s.fault = Some(e.to_string());
            }
        }
        self.fault(fd)
    }

    /// `vread(fd, len)`: up to `len` bytes of the program's output; 0 at the end. Blocks
    /// until `len` bytes are buffered or the output has ended (`Call::Vread`).
    pub fn vread(&mut self, fd: u32, len: u64) -> Result<(u64, Vec<u8>), InsiderError> {
        match self.call(Call::Vread { fd, len })? {
            Output::Read { n, data } => Ok((n, data)),
            o => unreachable!("vread answered {o:?}"),
        }
    }

    /// `vwrite(fd, data)` (timing fidelity: `len` bytes of no particular content;
    /// `Call::Vwrite`).
    pub fn vwrite(&mut self, fd: u32, len: u64, data: &[u8]) -> Result<(), InsiderError> {
        let data = data.to_vec();
        self.call(Call::Vwrite { fd, len, data }).map(|_| ())
    }

    /// `vsync(fd)`: waits until the drive has processed every byte written so far and
    /// written every whole request of output (`Call::Vsync`).
    pub fn vsync(&mut self, fd: u32) -> Result<(), InsiderError> {
        self.call(Call::Vsync { fd }).map(|_| ())
    }

    /// `vclose(fd)`: ends the stream; for a virtual write, returns the bytes the drive wrote to
    /// the real file(s) (the caller may truncate to it). Clears the append-only flags vopen
    /// set, closes the real files, drops the host's read cache of them after a write, resets
    /// the slot.
    pub fn vclose(&mut self, fd: u32) -> Result<u64, InsiderError> {
        let v = self.virt(fd)?;
        let dir = v.dir;
        let mut result = Ok(0);
        if dir == Direction::Write {
            self.m.push_write(fd, 0, Vec::new(), true);
            self.m.arm(fd);
            let drain = self.submit_drain(fd);
            result = self.run_to_completion(drain).map(|o| match o {
                Output::Drained { written_bytes } => written_bytes,
                o => unreachable!("a drain answered {o:?}"),
            });
        } else if let Err(e) = self.fault(fd) {
            result = Err(e);
        }
        self.m.close(fd);
        self.sleep(SimDuration::from_us_f64(self.cfg.pcie_latency_us))?;
        let Some(Fd::Virtual(v)) = self.fds.remove(&fd) else {
            unreachable!("checked virtual");
        };
        if dir == Direction::Write {
            for &ino in &v.real_inos {
                self.drop_pages(ino, 0, u64::MAX);
            }
        }
        self.release(v.files)?;
        result
    }
}

fn format_mapping(m: &Mapping) -> String {
    let pieces: Vec<String> = m
        .pieces
        .iter()
        .map(|(p, o, l)| match l {
            Some(l) => format!("{p}:{o}:{l}"),
            None => format!("{p}:{o}:*"),
        })
        .collect();
    format!("{}|{}|{}\n", m.vpath, m.program, pieces.join(","))
}

fn parse_mapping(path: &str, line: &str) -> Result<Mapping, InsiderError> {
    let bad = |reason: &str| InsiderError::MappingFile {
        path: path.into(),
        reason: format!("{reason} in {line:?}"),
    };
    let mut f = line.split('|');
    let (Some(vpath), Some(program), Some(pieces), None) = (f.next(), f.next(), f.next(), f.next())
    else {
        return Err(bad("expected vpath|program|pieces"));
    };
    let pieces = pieces
        .split(',')
        .map(|p| {
            let mut g = p.split(':');
            let (Some(path), Some(o), Some(l), None) = (g.next(), g.next(), g.next(), g.next())
            else {
                return Err(bad("expected path:offset:length"));
            };
            let o = o.parse().map_err(|_| bad("bad offset"))?;
            let l = match l {
                "*" => None,
                l => Some(l.parse().map_err(|_| bad("bad length"))?),
            };
            Ok((path.to_string(), o, l))
        })
        .collect::<Result<_, _>>()?;
    Ok(Mapping {
        vpath: vpath.into(),
        program: program.into(),
        pieces,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ext(file: u64, dev: u64, len: u64) -> FileExtent {
        FileExtent {
            file_offset_bytes: file,
            device_offset_bytes: dev,
            len_bytes: len,
        }
    }

    #[test]
    fn a_range_across_extents_maps_to_their_device_pieces_merged_where_contiguous() {
        let extents = [
            ext(0, 40_960, 8192),
            ext(8192, 49_152, 4096),
            ext(12_288, 4096, 4096),
        ];
        let got = map_extents(&extents, "/f", 100, 14_000).unwrap();
        assert_eq!(
            got,
            vec![
                Extent {
                    device_offset_bytes: 40_960 + 100,
                    len_bytes: 12_188,
                },
                Extent {
                    device_offset_bytes: 4096,
                    len_bytes: 1812,
                },
            ]
        );
    }

    #[test]
    fn a_range_past_the_allocated_blocks_is_out_of_file() {
        let e = map_extents(&[ext(0, 0, 4096)], "/f", 4000, 200).unwrap_err();
        assert!(
            matches!(&e, InsiderError::OutOfFile { path, .. } if path == "/f"),
            "{e}"
        );
    }
}
