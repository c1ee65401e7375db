//! The host side (§3.3, §4.2): the INSIDER runtime library and the kernel's ordinary file
//! path, over one simulated drive. Its core does not block (`ops`): a call is submitted
//! (`submit(Call)` → `OpId`), moves on as the machine's events and its own deadlines come,
//! and ends as a `Completion` taken with `take_completions`; `turn` turns the one simulation
//! loop, so any number of simulated threads and processes have calls in flight at once and
//! the drive (and every open virtual file) keeps working meanwhile. The POSIX-like entry
//! points below (`pread`, `vread`, `vopen`, …) are a thin blocking layer over that core
//! (`run_to_completion`): each runs the loop until its own call — or, for the control
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
use crate::probe::CounterProbe;
use crate::stream::{Direction, Extent, ProgramRun, Stream};
use nearflash_flash::{FlashConfig, MemoryStore, NoStore, PageStore};
use nearflash_fs::{Caller, Fh, FileExtent, FsError, FsOp, FsReply, Ino, OpenFlags, Stat};
use nearflash_ftl::{Device, FtlConfig};
use nearflash_host::{Extent as HostExtent, FileId, HostConfig, PAGE_BYTES};
use nearflash_hw::server::FifoServer;
use nearflash_sim::{EventQueue, Schedule, SimDuration, SimTime};
use nearflash_stream::StreamProgram;
use std::collections::{BTreeMap, BTreeSet};

mod ops;
mod posix;
mod virt;

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
    /// Which calls wait for what (a pass resumes only the calls an event concerns).
    waiters: ops::Waiters,
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
        let make_backing = |q: &mut EventQueue<MachineEvent>| -> Result<Backing, InsiderError> {
            Ok(match spec.insider.backing {
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
                    let dev = Device::format(flash, ftl, store, &mut q.map(MachineEvent::Dev))?;
                    Backing::Flash(Box::new(dev))
                }
            })
        };
        let mut m = Machine::new(spec.insider, spec.host, spec.seed, make_backing)?;
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
            waiters: ops::Waiters::default(),
            pipelined: true,
            throttles: BTreeMap::new(),
        })
    }

    pub fn machine(&self) -> &Machine {
        &self.m
    }

    /// Arms `probe` on open virtual file `fd`: its input bytes consumed, read after every
    /// chunk (false when `fd` is not an open virtual file).
    pub fn probe_consumption(&mut self, fd: u32, probe: CounterProbe) -> bool {
        match self.m.stream_mut(fd) {
            Some(s) => {
                s.consumed_probe = Some(probe);
                true
            }
            None => false,
        }
    }

    /// The drive's file system (its counters: operations, commits, block requests).
    pub fn fs(&self) -> &DevFs {
        &self.fs
    }

    pub fn now(&self) -> SimTime {
        self.m.now()
    }

    /// Checks the drive's and the host's invariants after every event from now on (tests:
    /// the flash device's checks walk its tables, so small drives only).
    pub fn check_invariants_after_every_event(&mut self, on: bool) {
        self.m.check_invariants_after_every_event(on);
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
