//! The device thread's state in file-system mode: the image (FTL over the image's pages, the
//! file system mounted on it), the inode-to-path table, the open directory listings and stats
//! snapshots, and the statistics. `FsDevice::execute` turns one kernel request into the file
//! system's operations, run as the caller (owner and mode are enforced by the file system,
//! as for any of its callers), and answers it.
//!
//! Virtual entries: `/.nearflash` (a read-only directory the file system never sees) holds
//! `stats.json`, a snapshot of `LiveStats` taken when it is opened, the control file and
//! `vfiles/`, INSIDER's virtual files (`vfiles`: registering, permissions, persisting; `vrun`:
//! a run on INSIDER's ISC unit). A real
//! `/.nearflash` on the image is hidden while served: it holds the registrations.
//!
//! Times: the file system records simulated nanoseconds; setting a file's times (`touch`,
//! `cp -p`) is accepted and not stored, as the file system keeps no settable times.

mod cs;
mod handles;
mod namespace;
mod vfiles;
mod vrun;

use crate::driver::LiveDevice;
use crate::errno;
use crate::names::{Handles, Names, ROOT};
use crate::op::{Answer, Attr, Call, DirItem, Errno, FsSpace, InodeNo, LiveOp};
use crate::pace::Clock;
use crate::stats::{self, CacheFigures, DeviceFigures, FsFigures, LiveStats, Recorder};
use crate::vfile::control::{ControlHandle, CONTROL_FILE_NAME};
use crate::vfile::drive::DriveIsc;
use crate::vfile::figures::VfileFigures;
use crate::vfile::registry::Registry;
use crate::vfile::OPEN_OUTPUTS_MAX;
use nearflash_fs::{
    Caller, Fh, FileKind, FsCompletion, FsOp, FsReply, OpId, OpenFlags, BLOCK_BYTES,
};
use nearflash_image::Image;
use nearflash_insider::isc::Unit;
use nearflash_sim::SimTime;

impl LiveDevice for FsDevice {
    fn now(&mut self) -> SimTime {
        let now = self.image.host_mut().now();
        debug_assert!(now >= self.sim_start, "simulated time went back");
        now
    }
    fn advance_to(&mut self, t: SimTime) {
        if t > self.image.host_mut().now() {
            self.image.host_mut().advance_to(t);
        }
        debug_assert!(self.image.host_mut().now() >= t, "the device reached {t:?}");
    }
    fn execute(&mut self, call: Call) -> Result<Answer, Errno> {
        let before = self.image.host_mut().now();
        let answer = self.execute_op(call);
        debug_assert!(
            self.image.host_mut().now() >= before,
            "a request moved simulated time back"
        );
        answer
    }
    fn recorder(&mut self) -> &mut Recorder {
        &mut self.recorder
    }
}

/// Every inode from here up is virtual (the file system's numbers are 32-bit).
pub const VIRTUAL_INO_BASE: InodeNo = 1 << 40;
/// The virtual directory's name at the root, and its inode.
pub const STATS_DIR_NAME: &str = ".nearflash";
pub const STATS_DIR_INO: InodeNo = VIRTUAL_INO_BASE;
/// The statistics file inside it.
pub const STATS_FILE_NAME: &str = "stats.json";
pub const STATS_FILE_INO: InodeNo = VIRTUAL_INO_BASE + 1;
/// The control file inside it (`vfile::control`).
pub const CONTROL_FILE_INO: InodeNo = VIRTUAL_INO_BASE + 2;
/// The virtual files' directory inside it, and the first virtual file's inode.
pub const VFILES_DIR_NAME: &str = "vfiles";
pub const VFILES_DIR_INO: InodeNo = VIRTUAL_INO_BASE + 3;
pub const VFILE_INO_BASE: InodeNo = 1 << 41;

// The file system's inode numbers (32-bit) never reach the virtual range, and the virtual
// files' numbers lie above the fixed virtual entries.
const _: () = assert!(VIRTUAL_INO_BASE > u32::MAX as InodeNo);
const _: () = assert!(VFILE_INO_BASE > VFILES_DIR_INO);

/// Whether `ino` is one of the virtual entries' (never the file system's).
pub fn is_virtual(ino: InodeNo) -> bool {
    ino >= VIRTUAL_INO_BASE
}

/// Open directory listings at once (each a snapshot of one directory).
const DIR_HANDLES_MAX: usize = 4096;
/// Open statistics snapshots at once.
const STATS_HANDLES_MAX: usize = 64;
/// Open control handles at once (each holds a request of at most
/// `vfile::control::REQUEST_BYTES_MAX`).
const CONTROL_HANDLES_MAX: usize = 16;
/// The longest name the file system stores (its directory entries hold 120 bytes).
const NAME_BYTES_MAX: u32 = 120;

/// The device served as a file system.
pub struct FsDevice {
    image: Image,
    preset_name: String,
    names: Names,
    dirs: Handles<Vec<DirItem>>,
    snapshots: Handles<Vec<u8>>,
    controls: Handles<ControlHandle>,
    /// Runs' outputs, one per open handle of a virtual file.
    outputs: Handles<vfiles::Output>,
    vfiles: Registry,
    /// INSIDER's ISC unit the virtual files run on (`vrun`), of the image's preset's
    /// `[insider]` table (`vfile::drive`).
    isc: Unit,
    vfile_figures: VfileFigures,
    pub recorder: Recorder,
    clock: Clock,
    sim_start: SimTime,
    power_w: (f64, f64),
    /// The first device-side failure, reported in the statistics.
    device_error: Option<String>,
    /// The computational drive of the control file's `cs` requests (made on the first).
    cs: Option<Box<cs::CsDrive>>,
}

impl FsDevice {
    /// Serves `image` (opened or created, its file system mounted) under `clock`, with the
    /// virtual files registered on it; `Err` when the ISC unit's preset (`[insider]`) does not
    /// load.
    pub fn new(
        mut image: Image,
        preset_name: String,
        power_w: (f64, f64),
        clock: Clock,
    ) -> Result<Self, nearflash_preset::PresetError> {
        let sim_start = image.host_mut().now();
        let drive = DriveIsc::of_preset(image.preset())?;
        let mut dev = FsDevice {
            image,
            preset_name,
            names: Names::default(),
            dirs: Handles::new(1, DIR_HANDLES_MAX),
            snapshots: Handles::new(2, STATS_HANDLES_MAX),
            controls: Handles::new(3, CONTROL_HANDLES_MAX),
            outputs: Handles::new(4, OPEN_OUTPUTS_MAX),
            vfiles: Registry::new(VFILE_INO_BASE),
            vfile_figures: VfileFigures {
                engine: drive.source.clone(),
                ..VfileFigures::default()
            },
            isc: Unit::new(&drive.cfg),
            recorder: Recorder::default(),
            clock,
            sim_start,
            power_w,
            device_error: None,
            cs: None,
        };
        dev.load_vfiles();
        assert!(
            dev.vfiles.entries().all(|e| e.ino >= VFILE_INO_BASE),
            "a registered virtual file outside the virtual files' inode range"
        );
        Ok(dev)
    }

    /// Commits everything and closes the image; the final statistics.
    pub fn close(mut self) -> Result<LiveStats, nearflash_image::ImageError> {
        let stats = self.stats();
        debug_assert!(stats.sim_time_s >= 0.0, "simulated time went back");
        self.image.close()?;
        Ok(stats)
    }

    /// Runs one file-system operation as `caller` to completion.
    fn fs(&mut self, caller: Caller, op: FsOp) -> Result<FsReply, Errno> {
        let id = self.fs_submit(caller, op)?;
        match self.image.host_mut().wait(id) {
            Ok(c) => {
                debug_assert!(
                    c.id == id && c.submitted <= c.finished,
                    "the wait answers the operation submitted, after it was submitted"
                );
                self.fs_answer(c)
            }
            Err(e) => {
                if let Err(e) = self.image.check_store() {
                    self.note_device_error(e.to_string());
                    return Err(Errno(libc::EIO));
                }
                self.note_device_error(e.to_string());
                Err(errno::of_host(&e))
            }
        }
    }

    /// Queues one file-system operation as `caller` now (its answer: `fs_answer`).
    fn fs_submit(&mut self, caller: Caller, op: FsOp) -> Result<OpId, Errno> {
        let host = self.image.host_mut();
        host.submit(caller, op).map_err(|e| errno::of_fs(&e))
    }

    /// The answer of a finished operation: its reply, or its errno (a failing store or an
    /// I/O or corruption error is noted as the device's error).
    fn fs_answer(&mut self, c: FsCompletion) -> Result<FsReply, Errno> {
        if let Err(e) = self.image.check_store() {
            self.note_device_error(e.to_string());
            return Err(Errno(libc::EIO));
        }
        c.result.map_err(|e| {
            if matches!(
                e,
                nearflash_fs::FsError::Io(_) | nearflash_fs::FsError::Corrupt(_)
            ) {
                self.note_device_error(e.to_string());
            }
            errno::of_fs(&e)
        })
    }

    fn note_device_error(&mut self, e: String) {
        if self.device_error.is_none() {
            eprintln!("nearflash serve: device error: {e}");
            self.device_error = Some(e);
        }
    }

    fn stat(&mut self, caller: Caller, path: &str) -> Result<Attr, Errno> {
        match self.fs(caller, FsOp::Stat(path.to_string()))? {
            FsReply::Stat(st) => {
                let a = Attr::from_stat(&st);
                debug_assert!(
                    !is_virtual(a.ino),
                    "the file system's inode {} is virtual",
                    a.ino
                );
                Ok(a)
            }
            _ => Err(Errno(libc::EIO)),
        }
    }

    /// Executes one request: a dispatcher with one arm per request kind (the longer ones are
    /// methods in `namespace.rs` and `handles.rs`), so it is long by design.
    fn execute_op(&mut self, call: Call) -> Result<Answer, Errno> {
        let caller = call.caller;
        let is_unlink = matches!(call.op, LiveOp::Unlink { .. });
        match call.op {
            LiveOp::Lookup { parent, name } => {
                if let Some(a) = self.virtual_child(parent, &name)? {
                    return Ok(Answer::Entry(a));
                }
                let path = self.names.child(parent, &name)?;
                let a = self.stat(caller, &path)?;
                self.names.set(a.ino, path);
                Ok(Answer::Entry(a))
            }
            LiveOp::Getattr { ino, fh } => {
                if let Some(a) = self.virtual_attr(ino, fh) {
                    return Ok(Answer::Attr(a));
                }
                let path = self.names.path(ino)?.to_string();
                let a = self.stat(Caller::ROOT, &path)?;
                if a.ino != ino {
                    return Err(Errno(libc::ESTALE));
                }
                Ok(Answer::Attr(a))
            }
            LiveOp::Setattr {
                ino,
                mode,
                uid,
                gid,
                size,
            } => self.setattr(caller, ino, mode, uid, gid, size),
            LiveOp::Mkdir {
                parent,
                name,
                mode,
                umask,
            } => self.mkdir(caller, parent, name, mode, umask),
            LiveOp::Unlink { parent, name } | LiveOp::Rmdir { parent, name } => {
                self.refuse_virtual_name(parent, &name)?;
                let path = self.names.child(parent, &name)?;
                let ino = self.stat(Caller::ROOT, &path)?.ino;
                let op = if is_unlink {
                    FsOp::Unlink(path)
                } else {
                    FsOp::Rmdir(path)
                };
                self.fs(caller, op)?;
                self.names.remove(ino);
                Ok(Answer::Done)
            }
            LiveOp::Rename {
                parent,
                name,
                new_parent,
                new_name,
                noreplace,
            } => self.rename(caller, parent, name, new_parent, new_name, noreplace),
            LiveOp::Open { ino, flags } => self.open(caller, ino, flags),
            LiveOp::Create {
                parent,
                name,
                mode,
                umask,
                flags,
            } => self.create(caller, parent, name, mode, umask, flags),
            LiveOp::Read {
                fh,
                offset_bytes,
                len_bytes,
                ..
            } => self.read(caller, fh, offset_bytes, len_bytes),
            LiveOp::Write {
                fh,
                offset_bytes,
                data,
                ..
            } => self.write(caller, fh, offset_bytes, data),
            LiveOp::Release { fh } => self.release(caller, fh),
            LiveOp::Fsync { fh } => {
                if self.snapshots.owns(fh) || self.controls.owns(fh) || self.outputs.owns(fh) {
                    return Ok(Answer::Done);
                }
                self.fs(caller, FsOp::Fsync(fs_handle(fh)?))?;
                Ok(Answer::Done)
            }
            LiveOp::Opendir { ino } => {
                let items = self.listing(caller, ino)?;
                let fh = self.dirs.insert(items)?;
                debug_assert!(self.dirs.owns(fh), "an opened listing is held");
                Ok(Answer::Opened {
                    fh,
                    direct_io: false,
                })
            }
            LiveOp::Readdir { fh, offset } => {
                let items = self.dirs.get(fh)?;
                let from = (offset as usize).min(items.len());
                Ok(Answer::Entries(items[from..].to_vec()))
            }
            LiveOp::Releasedir { fh } => {
                self.dirs.remove(fh)?;
                Ok(Answer::Done)
            }
            LiveOp::Fsyncdir => {
                self.fs(caller, FsOp::Sync)?;
                Ok(Answer::Done)
            }
            LiveOp::Statfs => {
                let fs = self.image.host_mut().fs();
                let (free_blocks, free_inodes) = fs.free_counts().ok_or(Errno(libc::EIO))?;
                let (blocks, inodes) = fs.total_counts().ok_or(Errno(libc::EIO))?;
                Ok(Answer::Space(FsSpace {
                    blocks,
                    free_blocks,
                    inodes,
                    free_inodes,
                    block_bytes: BLOCK_BYTES as u32,
                    name_bytes_max: NAME_BYTES_MAX,
                }))
            }
        }
    }

    /// The virtual entries' attributes (`fh`: the handle `fstat` names, if any); `None` for
    /// an inode that is not (or no longer) a virtual entry.
    fn virtual_attr(&mut self, ino: InodeNo, fh: Option<u64>) -> Option<Attr> {
        let now_ns = self.now().as_ns();
        if self.vfiles.owns_ino(ino) {
            return self.vfile_attr(ino, fh);
        }
        let len = if ino == STATS_FILE_INO {
            self.stats_json().len() as u64
        } else {
            0
        };
        let attr = virtual_attr(ino, now_ns, len);
        debug_assert!(attr.is_none_or(|a| a.ino == ino), "the attributes of {ino}");
        attr
    }

    /// A virtual entry named `name` in `parent`, if there is one; `ENOENT` for any other
    /// name inside the virtual directories.
    fn virtual_child(&mut self, parent: InodeNo, name: &str) -> Result<Option<Attr>, Errno> {
        let ino = match (parent, name) {
            (ROOT, STATS_DIR_NAME) => STATS_DIR_INO,
            (STATS_DIR_INO, STATS_FILE_NAME) => STATS_FILE_INO,
            (STATS_DIR_INO, CONTROL_FILE_NAME) => CONTROL_FILE_INO,
            (STATS_DIR_INO, VFILES_DIR_NAME) => VFILES_DIR_INO,
            (VFILES_DIR_INO, name) => match self.vfiles.get(name) {
                Some(e) => e.ino,
                None => return Err(Errno(libc::ENOENT)),
            },
            (STATS_DIR_INO, _) => return Err(Errno(libc::ENOENT)),
            _ => return Ok(None),
        };
        debug_assert!(is_virtual(ino), "a virtual child has a virtual inode");
        Ok(Some(self.virtual_attr(ino, None).expect("a virtual entry")))
    }

    /// Changing the virtual entries, or anything inside the virtual directories, is refused
    /// (virtual files come and go through the control file).
    fn refuse_virtual_name(&self, parent: InodeNo, name: &str) -> Result<(), Errno> {
        if (parent == ROOT && name == STATS_DIR_NAME) || is_virtual(parent) {
            return Err(Errno(libc::EPERM));
        }
        Ok(())
    }

    /// A directory's entries, `.` and `..` first, with the offsets `readdir` resumes from.
    fn listing(&mut self, caller: Caller, ino: InodeNo) -> Result<Vec<DirItem>, Errno> {
        let mut items: Vec<(InodeNo, FileKind, String)> = Vec::new();
        if ino == STATS_DIR_INO {
            items.push((STATS_DIR_INO, FileKind::Dir, ".".into()));
            items.push((ROOT, FileKind::Dir, "..".into()));
            items.push((STATS_FILE_INO, FileKind::File, STATS_FILE_NAME.into()));
            items.push((CONTROL_FILE_INO, FileKind::File, CONTROL_FILE_NAME.into()));
            items.push((VFILES_DIR_INO, FileKind::Dir, VFILES_DIR_NAME.into()));
        } else if ino == VFILES_DIR_INO {
            items.push((VFILES_DIR_INO, FileKind::Dir, ".".into()));
            items.push((STATS_DIR_INO, FileKind::Dir, "..".into()));
            for e in self.vfiles.entries() {
                items.push((e.ino, FileKind::File, e.request.name.clone()));
            }
        } else if is_virtual(ino) {
            return Err(Errno(libc::ENOTDIR));
        } else {
            let dir = self.names.path(ino)?.to_string();
            let FsReply::Entries(list) = self.fs(caller, FsOp::Readdir(dir.clone()))? else {
                return Err(Errno(libc::EIO));
            };
            for e in list {
                let child_ino = u64::from(e.ino.0);
                if ino == ROOT && e.name == STATS_DIR_NAME {
                    continue;
                }
                if e.name != "." && e.name != ".." {
                    self.names.set(child_ino, crate::names::join(&dir, &e.name));
                }
                items.push((child_ino, e.kind, e.name));
            }
            if ino == ROOT {
                items.push((STATS_DIR_INO, FileKind::Dir, STATS_DIR_NAME.into()));
            }
        }
        debug_assert!(
            {
                let mut names: Vec<&str> = items.iter().map(|(_, _, n)| n.as_str()).collect();
                names.sort_unstable();
                names.windows(2).all(|w| w[0] != w[1])
            },
            "a listing names each entry once (a real /.nearflash stays hidden)"
        );
        Ok(items
            .into_iter()
            .enumerate()
            .map(|(i, (ino, kind, name))| DirItem {
                ino,
                kind,
                name,
                offset: i as u64 + 1,
            })
            .collect())
    }

    /// The statistics now.
    pub fn stats(&mut self) -> LiveStats {
        let sim_time_s = (self.now().as_ns() - self.sim_start.as_ns()) as f64 / 1e9;
        let image_name = self.image.name().to_string();
        let host = self.image.host_mut();
        let fs = host.fs().stats();
        let dev = host.dev();
        let ftl = dev.stats();
        let flash = dev.backbone().stats();
        let page_bytes = u64::from(dev.backbone().config().page_size_bytes);
        let lookups = fs.cache.hits + fs.cache.misses;
        let mut s = LiveStats {
            image: image_name,
            preset: self.preset_name.clone(),
            expose: "fs".into(),
            pace: self.clock.pace,
            sim_time_s,
            wall_time_s: self.clock.wall_elapsed().as_secs_f64(),
            busy_sim_s: 0.0,
            ops_total: 0,
            errors_total: 0,
            iops_busy: 0.0,
            iops_wall: 0.0,
            read_bytes: 0,
            write_bytes: 0,
            latency_us: Default::default(),
            ops: Default::default(),
            buffer_cache: Some(CacheFigures {
                hits: fs.cache.hits,
                misses: fs.cache.misses,
                hit_ratio: if lookups > 0 {
                    fs.cache.hits as f64 / lookups as f64
                } else {
                    0.0
                },
                writebacks: fs.cache.writebacks,
                evictions: fs.cache.evictions,
            }),
            fs: Some(FsFigures {
                commits: fs.commits,
                block_reads: fs.block_reads,
                block_writes: fs.block_writes,
            }),
            device: device_figures(ftl, flash, page_bytes),
            energy: Default::default(),
            vfiles: Some(VfileFigures {
                registered: self.vfiles.len() as u64,
                ..self.vfile_figures.clone()
            }),
            device_error: self.device_error.clone(),
        };
        self.recorder.fill(&mut s);
        s.energy = stats::energy(self.power_w.0, self.power_w.1, s.busy_sim_s, sim_time_s);
        debug_assert!(
            s.buffer_cache
                .as_ref()
                .is_none_or(|c| (0.0..=1.0).contains(&c.hit_ratio)),
            "a hit ratio is a fraction"
        );
        s
    }

    fn stats_json(&mut self) -> Vec<u8> {
        let json = stats_json(&self.stats());
        debug_assert_eq!(
            json.last(),
            Some(&b'\n'),
            "the statistics file ends its line"
        );
        json
    }
}

/// The attributes of the virtual directories, the statistics file (`stats_len`: its current
/// size) and the control file; `None` for any other inode.
pub fn virtual_attr(ino: InodeNo, now_ns: u64, stats_len: u64) -> Option<Attr> {
    let base = Attr {
        ino,
        kind: FileKind::Dir,
        perm: 0o555,
        uid: 0,
        gid: 0,
        size_bytes: BLOCK_BYTES as u64,
        blocks_512: 0,
        link_count: 2,
        mtime_ns: now_ns,
        ctime_ns: now_ns,
    };
    match ino {
        STATS_DIR_INO => Some(Attr {
            link_count: 3,
            ..base
        }),
        VFILES_DIR_INO => Some(base),
        STATS_FILE_INO => Some(Attr {
            kind: FileKind::File,
            perm: 0o444,
            size_bytes: stats_len,
            link_count: 1,
            ..base
        }),
        // Anyone may write a request; each runs as its writer.
        CONTROL_FILE_INO => Some(Attr {
            kind: FileKind::File,
            perm: 0o666,
            size_bytes: 0,
            link_count: 1,
            ..base
        }),
        _ => None,
    }
}

/// The FTL's and the flash's counters.
pub fn device_figures(
    ftl: &nearflash_ftl::FtlStats,
    flash: &nearflash_flash::backbone::FlashStats,
    page_bytes: u64,
) -> DeviceFigures {
    assert!(page_bytes > 0, "a flash page holds bytes");
    DeviceFigures {
        host_reads: ftl.host_reads,
        host_writes: ftl.host_writes,
        host_read_bytes: ftl.host_read_bytes,
        host_write_bytes: ftl.host_write_bytes,
        waf: if ftl.host_write_bytes > 0 {
            (flash.page_programs * page_bytes) as f64 / ftl.host_write_bytes as f64
        } else {
            0.0
        },
        gc_runs: ftl.gc_runs,
        gc_pages_copied: ftl.gc_pages_copied,
        checkpoints_written: ftl.checkpoints_written,
        flash_page_reads: flash.page_reads,
        flash_page_programs: flash.page_programs,
        flash_block_erases: flash.block_erases,
        flash_die_ops: flash.die_ops,
    }
}

/// The statistics as the virtual file holds them.
pub fn stats_json(s: &LiveStats) -> Vec<u8> {
    let mut v = serde_json::to_vec_pretty(s).expect("stats serialize");
    debug_assert!(
        v.first() == Some(&b'{'),
        "the statistics are one JSON object"
    );
    v.push(b'\n');
    v
}

/// A FUSE file handle as the file system's (its handles are 32-bit).
fn fs_handle(fh: u64) -> Result<Fh, Errno> {
    u32::try_from(fh).map(Fh).map_err(|_| Errno(libc::EBADF))
}

/// `open(2)` flags as the file system's.
fn open_flags(flags: i32, create: bool) -> OpenFlags {
    let acc = flags & libc::O_ACCMODE;
    OpenFlags {
        read: acc == libc::O_RDONLY || acc == libc::O_RDWR,
        write: acc == libc::O_WRONLY || acc == libc::O_RDWR,
        append: flags & libc::O_APPEND != 0,
        truncate: flags & libc::O_TRUNC != 0,
        create,
        excl: create && flags & libc::O_EXCL != 0,
    }
}
