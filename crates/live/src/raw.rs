//! `--expose raw`: the device's logical space served as one file, `MOUNT/device`, for
//! block-level tools (fio, dd, mkfs of another file system). Each read or write of it is one
//! block request to the FTL device over the image's pages (no file system in between); fsync
//! is a device flush. Requests must be sector-aligned (512 bytes), as on a block device
//! opened with `O_DIRECT`; others are `EINVAL`. The file is `direct_io`: the kernel caches none
//! of its pages, so every read reaches the device. `MOUNT/.nearflash/stats.json` is there too.
//! Requests are served one at a time (the mount presents queue depth 1 to the device).
//!
//! The device is a model (`Served`: the load rig over the FTL device, collecting its
//! completions after every event) on a `sim::Driver` this front end holds; serving a request
//! submits it and waits with `Sim::run_until`, under the watchdog.

use crate::device::{
    device_figures, stats_json, virtual_attr, STATS_DIR_INO, STATS_DIR_NAME, STATS_FILE_INO,
    STATS_FILE_NAME,
};
use crate::driver::LiveDevice;
use crate::names::{Handles, ROOT};
use crate::op::{Answer, Attr, Call, DirItem, Errno, FsSpace, InodeNo, LiveOp};
use crate::pace::Clock;
use crate::stats::{self, LiveStats, Recorder};
use nearflash_blockdev::load::{Rig, RigEvent};
use nearflash_blockdev::{BlockCompletion, BlockDevice, BlockOp, BlockRequest, SECTOR_BYTES};
use nearflash_fs::FileKind;
use nearflash_ftl::Device;
use nearflash_image::ImageError;
use nearflash_preset::Preset;
use nearflash_sim::{Driver, EventQueue, Model, Progress, Schedule, Sim, SimRng, SimTime};
use std::path::Path;

/// The device file's name and inode.
pub const DEVICE_NAME: &str = "device";
pub const DEVICE_INO: InodeNo = 2;
/// The one handle of the device file (any number of opens share it: it holds no state).
const DEVICE_FH: u64 = 1;
/// Open statistics snapshots at once.
const STATS_HANDLES_MAX: usize = 64;

/// The device behind the raw file: the load rig over the FTL device, with what it completed
/// taken after every event (so a wait can see its request done).
struct Served {
    rig: Rig<Device>,
    done: Vec<BlockCompletion>,
}

impl Model for Served {
    type Event = RigEvent<nearflash_ftl::Event>;

    fn handle(&mut self, ev: Self::Event, q: &mut EventQueue<Self::Event>, rng: &mut SimRng) {
        self.rig.handle(ev, q, rng);
        self.rig.take_completions(&mut self.done);
    }

    fn check_invariants(&self) {
        self.rig.check_invariants();
    }

    /// A request is outstanding until it completes; requests are served one at a time.
    fn progress(&self) -> Progress {
        let p = self.rig.progress();
        assert!(p.outstanding <= 1, "requests are served one at a time");
        p
    }
}

/// The device served raw.
pub struct RawDevice {
    run: Driver<Served>,
    name: String,
    preset_name: String,
    power_w: (f64, f64),
    clock: Clock,
    sim_start: SimTime,
    next_id: u64,
    snapshots: Handles<Vec<u8>>,
    recorder: Recorder,
    device_error: Option<String>,
}

impl RawDevice {
    /// Opens (recovering the FTL) or, with `format`, creates the image's device.
    pub fn open(
        path: &Path,
        format: Option<&Preset>,
        pace: crate::Pace,
    ) -> Result<RawDevice, ImageError> {
        let mut sim = Sim::new(0);
        let (preset, dev) = match format {
            Some(p) => {
                let q = &mut sim.queue().map(RigEvent::Device);
                (p.clone(), nearflash_image::create_device(p, path, q)?)
            }
            None => nearflash_image::open_device(path, &mut sim.queue().map(RigEvent::Device))?,
        };
        let host = preset.host.clone().unwrap_or_default();
        let clock = Clock::new(pace, sim.now());
        Ok(RawDevice {
            sim_start: sim.now(),
            run: Driver::new(
                sim,
                Served {
                    rig: Rig::new(dev),
                    done: Vec::new(),
                },
            ),
            name: path.display().to_string(),
            preset_name: preset.name.clone(),
            power_w: (host.ssd_active_power_w, host.ssd_idle_power_w),
            clock,
            next_id: 0,
            snapshots: Handles::new(2, STATS_HANDLES_MAX),
            recorder: Recorder::default(),
            device_error: None,
        })
    }

    /// The clock the device was opened with.
    pub fn clock(&self) -> Clock {
        self.clock
    }

    /// Flushes the device (its write buffers to flash); the final statistics.
    pub fn close(mut self) -> Result<LiveStats, ImageError> {
        let _ = self.block(BlockOp::Flush, 0, 0, Vec::new());
        nearflash_image::store_health(self.dev())?;
        Ok(self.stats())
    }

    fn dev(&self) -> &Device {
        &self.run.model().rig.dev
    }

    fn capacity_bytes(&self) -> u64 {
        self.dev().capacity_bytes()
    }

    /// One block request, run to completion under the watchdog.
    fn block(
        &mut self,
        op: BlockOp,
        offset_bytes: u64,
        len_bytes: u64,
        data: Vec<u8>,
    ) -> Result<Vec<u8>, Errno> {
        self.next_id += 1;
        let id = self.next_id;
        let req = BlockRequest {
            id,
            op,
            offset_bytes,
            len_bytes,
            data,
        };
        let (m, q, _) = self.run.parts();
        assert!(m.done.is_empty(), "requests are served one at a time");
        m.rig.submit(req, q);
        m.rig.take_completions(&mut m.done);
        // The request is outstanding until it completes, so an empty queue is a stall too.
        if let Err(s) = self.run.run_until(|m| m.done.iter().any(|c| c.id == id)) {
            self.note_device_error(format!("block request stuck: {s}"));
            return Err(Errno(libc::EIO));
        }
        let done = &mut self.run.model_mut().done;
        assert_eq!(done.len(), 1, "requests are served one at a time");
        let c = done.pop().expect("the request completed");
        assert_eq!(c.id, id, "the completion is the request's");
        if let Err(e) = nearflash_image::store_health(self.dev()) {
            self.note_device_error(e.to_string());
            return Err(Errno(libc::EIO));
        }
        c.result.map_err(|e| {
            self.note_device_error(e.to_string());
            Errno(libc::EIO)
        })?;
        Ok(c.data)
    }

    fn note_device_error(&mut self, e: String) {
        if self.device_error.is_none() {
            eprintln!("nearflash serve: device error: {e}");
            self.device_error = Some(e);
        }
    }

    fn attr(&mut self, ino: InodeNo) -> Option<Attr> {
        let now_ns = self.run.now().as_ns();
        match ino {
            ROOT => Some(Attr {
                ino,
                kind: FileKind::Dir,
                perm: 0o755,
                uid: 0,
                gid: 0,
                size_bytes: 4096,
                blocks_512: 0,
                link_count: 3,
                mtime_ns: now_ns,
                ctime_ns: now_ns,
            }),
            DEVICE_INO => Some(Attr {
                ino,
                kind: FileKind::File,
                perm: 0o600,
                uid: 0,
                gid: 0,
                size_bytes: self.capacity_bytes(),
                blocks_512: self.capacity_bytes() / 512,
                link_count: 1,
                mtime_ns: now_ns,
                ctime_ns: now_ns,
            }),
            STATS_FILE_INO => {
                let len = stats_json(&self.stats()).len() as u64;
                virtual_attr(ino, now_ns, len)
            }
            _ => virtual_attr(ino, now_ns, 0),
        }
    }

    /// Checks an I/O range: sector-aligned; clamps it to the device's end.
    fn range(&self, offset_bytes: u64, len_bytes: u64) -> Result<u64, Errno> {
        if !offset_bytes.is_multiple_of(SECTOR_BYTES) || !len_bytes.is_multiple_of(SECTOR_BYTES) {
            return Err(Errno(libc::EINVAL));
        }
        Ok(len_bytes.min(self.capacity_bytes().saturating_sub(offset_bytes)))
    }

    /// The statistics now.
    pub fn stats(&mut self) -> LiveStats {
        let sim_time_s = (self.run.now().as_ns() - self.sim_start.as_ns()) as f64 / 1e9;
        let dev = &self.run.model().rig.dev;
        let page_bytes = u64::from(dev.backbone().config().page_size_bytes);
        let mut s = LiveStats {
            image: self.name.clone(),
            preset: self.preset_name.clone(),
            expose: "raw".into(),
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
            buffer_cache: None,
            fs: None,
            device: device_figures(dev.stats(), dev.backbone().stats(), page_bytes),
            energy: Default::default(),
            vfiles: None,
            device_error: self.device_error.clone(),
        };
        self.recorder.fill(&mut s);
        s.energy = stats::energy(self.power_w.0, self.power_w.1, s.busy_sim_s, sim_time_s);
        s
    }
}

impl LiveDevice for RawDevice {
    fn now(&mut self) -> SimTime {
        self.run.now()
    }

    fn advance_to(&mut self, t: SimTime) {
        if t > self.run.now() {
            self.run.advance_to(t);
        }
    }

    fn execute(&mut self, call: Call) -> Result<Answer, Errno> {
        match call.op {
            LiveOp::Lookup { parent, name } => {
                let ino = match (parent, name.as_str()) {
                    (ROOT, DEVICE_NAME) => DEVICE_INO,
                    (ROOT, STATS_DIR_NAME) => STATS_DIR_INO,
                    (STATS_DIR_INO, STATS_FILE_NAME) => STATS_FILE_INO,
                    _ => return Err(Errno(libc::ENOENT)),
                };
                self.attr(ino).map(Answer::Entry).ok_or(Errno(libc::ENOENT))
            }
            LiveOp::Getattr { ino, .. } => {
                self.attr(ino).map(Answer::Attr).ok_or(Errno(libc::ENOENT))
            }
            // The device's size is its capacity (a truncate, as `O_TRUNC` on a block device,
            // changes nothing); times are not kept.
            LiveOp::Setattr {
                ino,
                mode: None,
                uid: None,
                gid: None,
                ..
            } => self.attr(ino).map(Answer::Attr).ok_or(Errno(libc::ENOENT)),
            LiveOp::Setattr { .. }
            | LiveOp::Mkdir { .. }
            | LiveOp::Unlink { .. }
            | LiveOp::Rmdir { .. }
            | LiveOp::Rename { .. }
            | LiveOp::Create { .. } => Err(Errno(libc::EPERM)),
            LiveOp::Open { ino, flags } => match ino {
                DEVICE_INO => {
                    if !call.caller.is_root() {
                        return Err(Errno(libc::EACCES));
                    }
                    Ok(Answer::Opened {
                        fh: DEVICE_FH,
                        direct_io: true,
                    })
                }
                STATS_FILE_INO if flags & libc::O_ACCMODE == libc::O_RDONLY => {
                    let snapshot = stats_json(&self.stats());
                    let fh = self.snapshots.insert(snapshot)?;
                    Ok(Answer::Opened {
                        fh,
                        direct_io: true,
                    })
                }
                STATS_FILE_INO => Err(Errno(libc::EACCES)),
                _ => Err(Errno(libc::EISDIR)),
            },
            LiveOp::Read {
                fh,
                offset_bytes,
                len_bytes,
                ..
            } => {
                if self.snapshots.owns(fh) {
                    let s = self.snapshots.get(fh)?;
                    let from = (offset_bytes as usize).min(s.len());
                    let to = (from + len_bytes as usize).min(s.len());
                    return Ok(Answer::Data(s[from..to].to_vec()));
                }
                let len = self.range(offset_bytes, u64::from(len_bytes))?;
                if len == 0 {
                    return Ok(Answer::Data(Vec::new()));
                }
                Ok(Answer::Data(self.block(
                    BlockOp::Read,
                    offset_bytes,
                    len,
                    Vec::new(),
                )?))
            }
            LiveOp::Write {
                fh,
                offset_bytes,
                mut data,
                ..
            } => {
                if fh != DEVICE_FH {
                    return Err(Errno(libc::EBADF));
                }
                let len = self.range(offset_bytes, data.len() as u64)?;
                if len == 0 {
                    return Err(Errno(libc::ENOSPC));
                }
                data.truncate(len as usize);
                self.block(BlockOp::Write, offset_bytes, len, data)?;
                Ok(Answer::Written(
                    u32::try_from(len).map_err(|_| Errno(libc::EIO))?,
                ))
            }
            LiveOp::Release { fh } => {
                if self.snapshots.owns(fh) {
                    self.snapshots.remove(fh)?;
                }
                Ok(Answer::Done)
            }
            LiveOp::Fsync { .. } | LiveOp::Fsyncdir => {
                self.block(BlockOp::Flush, 0, 0, Vec::new())?;
                Ok(Answer::Done)
            }
            LiveOp::Opendir { ino } => Ok(Answer::Opened {
                fh: ino,
                direct_io: false,
            }),
            LiveOp::Readdir { fh, offset } => {
                let items: Vec<(InodeNo, FileKind, &str)> = if fh == STATS_DIR_INO {
                    vec![
                        (STATS_DIR_INO, FileKind::Dir, "."),
                        (ROOT, FileKind::Dir, ".."),
                        (STATS_FILE_INO, FileKind::File, STATS_FILE_NAME),
                    ]
                } else {
                    vec![
                        (ROOT, FileKind::Dir, "."),
                        (ROOT, FileKind::Dir, ".."),
                        (DEVICE_INO, FileKind::File, DEVICE_NAME),
                        (STATS_DIR_INO, FileKind::Dir, STATS_DIR_NAME),
                    ]
                };
                Ok(Answer::Entries(
                    items
                        .into_iter()
                        .enumerate()
                        .skip(offset as usize)
                        .map(|(i, (ino, kind, name))| DirItem {
                            ino,
                            kind,
                            name: name.to_string(),
                            offset: i as u64 + 1,
                        })
                        .collect(),
                ))
            }
            LiveOp::Releasedir { .. } => Ok(Answer::Done),
            LiveOp::Statfs => Ok(Answer::Space(FsSpace {
                blocks: self.capacity_bytes() / 4096,
                free_blocks: 0,
                inodes: 3,
                free_inodes: 0,
                block_bytes: 4096,
                name_bytes_max: 255,
            })),
        }
    }

    fn recorder(&mut self) -> &mut Recorder {
        &mut self.recorder
    }
}
