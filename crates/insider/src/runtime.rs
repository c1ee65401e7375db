//! The host side (§3.3, §4.2): the INSIDER runtime library and the kernel's ordinary file
//! path, over one simulated drive. Calls are blocking, like the POSIX calls they imitate: each
//! runs the machine's event loop until it completes, so simulated time passes while the drive
//! (and every other open virtual file) keeps working in the background.
//!
//! Ordinary path: `create`/`write`/`pread`/`fsync`/`truncate`/`fallocate` through a page
//! cache and the host storage stack (`[host]`: a system call, a per-request stack cost, the
//! copies), requests of `io_request_bytes` through the drive's firmware (slot 0).
//!
//! Virtual files (Table 2): `reg_virt_file` records the mapping in the caller's mapping file
//! `/.<login>.nearflash` (mode 0640) and programs a free slot; `vopen` reads the mapping,
//! checks the caller's permission on every real file *before anything starts* (denied ⇒ an
//! error, no drive request), sets append-only for the duration, fetches the extents and
//! hands extents and slot to the drive, which pre-issues them (pipelined mode). `vread` pops
//! the host-side buffer; `vwrite` pushes bytes through the program into the preallocated real
//! file; `vclose` returns the bytes the drive wrote.

use crate::backing::{Backing, Emulated};
use crate::config::{Backing as BackingKind, InsiderConfig};
use crate::error::InsiderError;
use crate::fs::{Access, Extent, FileSystem, ROOT_UID};
use crate::machine::{Machine, MachineEvent};
use crate::stream::{Direction, ProgramRun, Stream};
use nearflash_flash::{FlashConfig, MemoryStore, NoStore, PageStore};
use nearflash_ftl::{BlockOp, Device, FtlConfig};
use nearflash_host::HostConfig;
use nearflash_hw::server::FifoServer;
use nearflash_sim::{Schedule, Sim, SimDuration, SimTime};
use nearflash_stream::StreamProgram;
use std::collections::{BTreeMap, BTreeSet};

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

struct VirtualFd {
    dir: Direction,
    /// Real files whose append-only flag vopen set (cleared again by vclose).
    set_append_only: Vec<u64>,
    real_inos: Vec<u64>,
    program: String,
}

struct RealFd {
    ino: u64,
    path: String,
    writable: bool,
}

enum Fd {
    Virtual(VirtualFd),
    Real(RealFd),
}

/// A page of the host page cache.
struct CachedPage {
    data: Vec<u8>,
    dirty: bool,
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
    fs: FileSystem,
    host: HostConfig,
    cfg: InsiderConfig,
    programs: BTreeMap<String, ProgramSpec>,
    /// Slot i (1-based) → (owner uid, vpath) of the registration it holds.
    slots: Vec<Option<(u32, String)>>,
    fds: BTreeMap<u32, Fd>,
    next_fd: u32,
    cache: BTreeMap<(u64, u64), CachedPage>,
    /// The application thread's core: stack work and copies happen on it, in order.
    host_cpu: FifoServer,
    /// Cores of the processes reading with `vread_detached`, by descriptor.
    process_cpu: BTreeMap<u32, FifoServer>,
    /// §3.5 system-level pipelining for virtual files opened from now on.
    pub pipelined: bool,
    throttles: BTreeMap<String, f64>,
}

fn mapping_path(login: &str) -> String {
    format!("/.{login}.nearflash")
}

impl Runtime {
    /// Formats the drive and an empty file system; root is the only user.
    pub fn new(spec: &MachineSpec) -> Result<Runtime, InsiderError> {
        spec.insider.validate()?;
        spec.host
            .validate()
            .map_err(|e| InsiderError::Device(format!("host: {e}")))?;
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
                    Device::format(flash, ftl, store, &mut sim.queue().map(MachineEvent::Dev))
                        .map_err(|e| InsiderError::Device(e.to_string()))?;
                Backing::Flash(Box::new(dev))
            }
        };
        let capacity = backing.capacity_bytes();
        let m = Machine::new(spec.insider, backing, sim);
        Ok(Runtime {
            m,
            fs: FileSystem::new(capacity, spec.insider.fs_block_bytes),
            host: spec.host.clone(),
            cfg: spec.insider.clone(),
            programs: BTreeMap::new(),
            slots: vec![None; spec.insider.app_slots as usize],
            fds: BTreeMap::new(),
            next_fd: 3,
            cache: BTreeMap::new(),
            host_cpu: FifoServer::default(),
            process_cpu: BTreeMap::new(),
            pipelined: true,
            throttles: BTreeMap::new(),
        })
    }

    pub fn machine(&self) -> &Machine {
        &self.m
    }

    pub fn fs(&self) -> &FileSystem {
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

    /// System startup for a user: a row in the user table and the hidden mapping file
    /// `/.<login>.nearflash`, owned by the user, mode 0640 (§3.3.1).
    pub fn add_user(&mut self, uid: u32, gid: u32, login: &str) -> Result<(), InsiderError> {
        self.fs.add_user(uid, gid, login);
        let ino = self
            .fs
            .create(ROOT_UID, &mapping_path(login), 0o640, false)?;
        let n = self.fs.inode_mut(ino);
        n.uid = uid;
        n.gid = gid;
        Ok(())
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
    pub fn host_compute(&mut self, instructions: f64) {
        let per_core = instructions / f64::from(self.cfg.host_cores);
        self.m.advance(self.cfg.host_core().duration(per_core));
    }

    /// Work on the application thread's own core (stack costs, copies), then wait for it.
    fn host_thread(&mut self, ns: u64) {
        let now = self.m.now();
        let done = self.host_cpu.serve(now, SimDuration::from_ns(ns));
        self.m.advance(done.since(now));
    }

    // ---- the ordinary file path ----------------------------------------------------------

    pub fn mkdir(&mut self, uid: u32, path: &str, mode: u16) -> Result<(), InsiderError> {
        self.fs.create(uid, path, mode, true).map(|_| ())
    }

    pub fn create(&mut self, uid: u32, path: &str, mode: u16) -> Result<(), InsiderError> {
        self.fs.create(uid, path, mode, false).map(|_| ())
    }

    /// Untimed preconditioning: a file whose `contents` (timing fidelity: `size_bytes` of
    /// no particular bytes) were written long before the run.
    pub fn install_file(
        &mut self,
        uid: u32,
        path: &str,
        mode: u16,
        size_bytes: u64,
        contents: Option<&[u8]>,
    ) -> Result<(), InsiderError> {
        let ino = self.fs.create(uid, path, mode, false)?;
        self.fs.reserve(ino, size_bytes)?;
        self.fs.inode_mut(ino).size_bytes = size_bytes;
        let extents = self.fs.map(ino, 0, size_bytes);
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

    /// Opens a real file for the ordinary path.
    pub fn open(&mut self, uid: u32, path: &str, writable: bool) -> Result<u32, InsiderError> {
        let ino = self.fs.lookup(path)?;
        if self.fs.inode(ino).entries.is_some() {
            return Err(InsiderError::IsADirectory { path: path.into() });
        }
        self.fs.check(uid, ino, path, Access::Read)?;
        if writable {
            self.fs.check(uid, ino, path, Access::Write)?;
        }
        let fd = self.next_fd;
        self.next_fd += 1;
        self.fds.insert(
            fd,
            Fd::Real(RealFd {
                ino,
                path: path.into(),
                writable,
            }),
        );
        Ok(fd)
    }

    pub fn close(&mut self, fd: u32) -> Result<(), InsiderError> {
        match self.fds.get(&fd) {
            Some(Fd::Real(_)) => {
                self.fds.remove(&fd);
                Ok(())
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

    fn block(&self) -> u64 {
        self.cfg.fs_block_bytes
    }

    /// `pwrite`: into the page cache (dirty), allocating blocks. Append-only files accept
    /// writes at their end only.
    pub fn pwrite(&mut self, fd: u32, offset: u64, data: &[u8]) -> Result<(), InsiderError> {
        self.pwrite_len(fd, offset, data.len() as u64, data)
    }

    /// `pwrite` of `len` bytes; `data` is empty in timing fidelity.
    pub fn pwrite_len(
        &mut self,
        fd: u32,
        offset: u64,
        len: u64,
        data: &[u8],
    ) -> Result<(), InsiderError> {
        assert!(data.is_empty() || data.len() as u64 == len);
        let r = self.real(fd)?;
        let (ino, path, writable) = (r.ino, r.path.clone(), r.writable);
        if !writable {
            return Err(InsiderError::WrongMode {
                fd,
                mode: "read-only",
                op: "write",
            });
        }
        let size = self.fs.inode(ino).size_bytes;
        if self.fs.inode(ino).append_only && offset != size {
            return Err(InsiderError::AppendOnly { path });
        }
        let end = offset + len;
        self.fs.reserve(ino, end)?;
        let b = self.block();
        let mut at = offset;
        while at < end {
            let page = at / b;
            if !self.cache.contains_key(&(ino, page)) {
                let fill = self.read_pages_from_drive(ino, page, 1, size)?;
                self.cache.insert(
                    (ino, page),
                    CachedPage {
                        data: fill,
                        dirty: false,
                    },
                );
            }
            let p = self.cache.get_mut(&(ino, page)).expect("just cached");
            let in_page = (at % b) as usize;
            let n = ((b - at % b).min(end - at)) as usize;
            if !data.is_empty() {
                p.data.resize(b as usize, 0);
                let src = (at - offset) as usize;
                p.data[in_page..in_page + n].copy_from_slice(&data[src..src + n]);
            }
            p.dirty = true;
            at += n as u64;
        }
        let n = self.fs.inode_mut(ino);
        n.size_bytes = n.size_bytes.max(end);
        let ns = self.host.syscall_ns + self.host.copy_ns(len);
        self.host_thread(ns);
        Ok(())
    }

    /// `pwrite` with `O_DIRECT` (timing fidelity: no data): straight to the drive in
    /// `io_request_bytes` requests through the storage stack, at most `io_queue_depth` in
    /// flight, bypassing the page cache; returns when every request is acknowledged.
    pub fn pwrite_direct(&mut self, fd: u32, offset: u64, len: u64) -> Result<(), InsiderError> {
        let r = self.real(fd)?;
        let (ino, path, writable) = (r.ino, r.path.clone(), r.writable);
        if !writable {
            return Err(InsiderError::WrongMode {
                fd,
                mode: "read-only",
                op: "write",
            });
        }
        if self.fs.inode(ino).append_only && offset != self.fs.inode(ino).size_bytes {
            return Err(InsiderError::AppendOnly { path });
        }
        self.fs.reserve(ino, offset + len)?;
        let mut reqs = Vec::new();
        for e in self.fs.map(ino, offset, len) {
            let mut at = 0;
            while at < e.len_bytes {
                let n = self.host.io_request_bytes.min(e.len_bytes - at);
                reqs.push((e.device_offset_bytes + at, n.div_ceil(512) * 512));
                at += n;
            }
        }
        self.host_thread(self.host.syscall_ns + self.host.copy_ns(len));
        for wave in reqs.chunks(self.host.io_queue_depth as usize) {
            let mut ids = Vec::new();
            for &(off, n) in wave {
                let at = self.host_cpu.serve(
                    self.m.now(),
                    SimDuration::from_ns(self.host.io_stack_request_ns),
                );
                ids.push(self.m.firmware(at, BlockOp::Write, off, n, Vec::new()));
            }
            self.wait_firmware(&ids)?;
        }
        let n = self.fs.inode_mut(ino);
        n.size_bytes = n.size_bytes.max(offset + len);
        Ok(())
    }

    /// Waits for firmware requests `ids` (consecutive) and collects their data.
    fn wait_firmware(&mut self, ids: &[u64]) -> Result<Vec<u8>, InsiderError> {
        let mut waiting: Vec<u64> = ids.to_vec();
        let mut out = Vec::new();
        let mut done: BTreeMap<u64, Result<Vec<u8>, String>> = BTreeMap::new();
        while !waiting.is_empty() {
            let first = waiting[0];
            self.m.run_until(|m| m.firmware_is_done(first))?;
            waiting.retain(|&id| {
                if let Some(r) = self.m.firmware_done(id) {
                    done.insert(id, r);
                    false
                } else {
                    true
                }
            });
        }
        for id in ids {
            let data = done
                .remove(id)
                .expect("waited for")
                .map_err(InsiderError::Device)?;
            out.extend_from_slice(&data);
        }
        Ok(out)
    }

    /// A page of a file read through the drive before a partial write (zeros past the size).
    fn read_pages_from_drive(
        &mut self,
        ino: u64,
        page: u64,
        pages: u64,
        size: u64,
    ) -> Result<Vec<u8>, InsiderError> {
        let b = self.block();
        let start = page * b;
        if !self.is_functional() {
            return Ok(Vec::new());
        }
        if start >= size {
            return Ok(vec![0; (pages * b) as usize]);
        }
        let len = (pages * b).min(size.div_ceil(b) * b - start);
        let mut out = self.drive_read(ino, start, len)?;
        out.resize((pages * b) as usize, 0);
        Ok(out)
    }

    /// Reads file bytes `[offset, offset+len)` from the drive through the storage stack:
    /// `io_request_bytes` requests, each costing the stack's per-request CPU before it is
    /// handed to the drive, at most `io_queue_depth` in flight.
    fn drive_read(&mut self, ino: u64, offset: u64, len: u64) -> Result<Vec<u8>, InsiderError> {
        let mut reqs = Vec::new();
        for e in self.fs.map(ino, offset, len) {
            let mut at = 0;
            while at < e.len_bytes {
                let n = self.host.io_request_bytes.min(e.len_bytes - at);
                reqs.push((e.device_offset_bytes + at, n));
                at += n;
            }
        }
        let mut out = Vec::new();
        for wave in reqs.chunks(self.host.io_queue_depth as usize) {
            let mut ids = Vec::new();
            for &(off, n) in wave {
                let at = self.host_cpu.serve(
                    self.m.now(),
                    SimDuration::from_ns(self.host.io_stack_request_ns),
                );
                ids.push(self.m.firmware(at, BlockOp::Read, off, n, Vec::new()));
            }
            out.extend_from_slice(&self.wait_firmware(&ids)?);
        }
        Ok(out)
    }

    /// `pread`: cached pages are copied; the rest come from the drive through the stack.
    /// Returns the bytes read (short at the end of the file); `data` is empty in timing
    /// fidelity.
    pub fn pread(
        &mut self,
        fd: u32,
        offset: u64,
        len: u64,
    ) -> Result<(u64, Vec<u8>), InsiderError> {
        let ino = self.real(fd)?.ino;
        let size = self.fs.inode(ino).size_bytes;
        let len = len.min(size.saturating_sub(offset));
        if len == 0 {
            self.host_thread(self.host.syscall_ns);
            return Ok((0, Vec::new()));
        }
        let b = self.block();
        let (first, last) = (offset / b, (offset + len - 1) / b);
        let functional = self.is_functional();
        let mut pages: BTreeMap<u64, Vec<u8>> = BTreeMap::new();
        let mut p = first;
        while p <= last {
            if let Some(c) = self.cache.get(&(ino, p)) {
                pages.insert(p, c.data.clone());
                p += 1;
                continue;
            }
            let mut q = p;
            while q < last && !self.cache.contains_key(&(ino, q + 1)) {
                q += 1;
            }
            let start = p * b;
            let run = ((q + 1) * b).min(size.div_ceil(b) * b) - start;
            let data = self.drive_read(ino, start, run)?;
            if functional {
                for (i, chunk) in data.chunks(b as usize).enumerate() {
                    let mut page = chunk.to_vec();
                    page.resize(b as usize, 0);
                    self.cache.insert(
                        (ino, p + i as u64),
                        CachedPage {
                            data: page.clone(),
                            dirty: false,
                        },
                    );
                    pages.insert(p + i as u64, page);
                }
            }
            p = q + 1;
        }
        let ns = self.host.syscall_ns
            + u64::from(self.host.copies_per_direction) * self.host.copy_ns(len);
        self.host_thread(ns);
        if !functional {
            return Ok((len, Vec::new()));
        }
        let mut out = Vec::with_capacity(len as usize);
        for (p, page) in pages {
            let s = if p == first { (offset % b) as usize } else { 0 };
            let e = if p == last {
                ((offset + len - 1) % b + 1) as usize
            } else {
                b as usize
            };
            out.extend_from_slice(&page[s..e]);
        }
        Ok((len, out))
    }

    /// Flushes the dirty pages of `ino` to the drive and waits for them.
    fn flush_inode(&mut self, ino: u64) -> Result<(), InsiderError> {
        let b = self.block();
        let dirty: Vec<u64> = self
            .cache
            .range((ino, 0)..(ino + 1, 0))
            .filter(|(_, p)| p.dirty)
            .map(|(&(_, p), _)| p)
            .collect();
        let functional = self.m.is_functional();
        // Runs of dirty pages contiguous on the device, at most `io_request_bytes` each.
        let mut runs: Vec<(u64, u64, Vec<u8>)> = Vec::new();
        for p in dirty {
            let page = if functional {
                let c = self.cache.get_mut(&(ino, p)).expect("listed");
                c.dirty = false;
                c.data.clone()
            } else {
                self.cache.remove(&(ino, p));
                Vec::new()
            };
            let dev = self.fs.map(ino, p * b, b)[0].device_offset_bytes;
            match runs.last_mut() {
                Some((off, len, data))
                    if *off + *len == dev && *len + b <= self.host.io_request_bytes =>
                {
                    *len += b;
                    data.extend_from_slice(&page);
                }
                _ => runs.push((dev, b, page)),
            }
        }
        for wave in runs.chunks(self.host.io_queue_depth as usize) {
            let mut ids = Vec::new();
            for (off, len, data) in wave {
                let at = self.host_cpu.serve(
                    self.m.now(),
                    SimDuration::from_ns(self.host.io_stack_request_ns),
                );
                ids.push(
                    self.m
                        .firmware(at, BlockOp::Write, *off, *len, data.clone()),
                );
            }
            self.wait_firmware(&ids)?;
        }
        Ok(())
    }

    pub fn fsync(&mut self, fd: u32) -> Result<(), InsiderError> {
        let ino = self.real(fd)?.ino;
        self.host_thread(self.host.syscall_ns);
        self.flush_inode(ino)
    }

    /// `truncate(path, size)`: needs write permission; fails on an append-only file.
    pub fn truncate(&mut self, uid: u32, path: &str, size_bytes: u64) -> Result<(), InsiderError> {
        let ino = self.fs.lookup(path)?;
        self.fs.check(uid, ino, path, Access::Write)?;
        self.fs.truncate(ino, path, size_bytes)?;
        let b = self.block();
        let keep = size_bytes.div_ceil(b);
        self.cache.retain(|&(i, p), _| i != ino || p < keep);
        Ok(())
    }

    /// `fallocate(path, 0, len)`: allocates blocks so the file covers `len` bytes (and has at
    /// least that size); the new blocks count as written (the unwritten flag is cleared, as
    /// §3.3.2 asks of users of virtual writes).
    pub fn fallocate(&mut self, uid: u32, path: &str, len: u64) -> Result<(), InsiderError> {
        let ino = self.fs.lookup(path)?;
        self.fs.check(uid, ino, path, Access::Write)?;
        self.fs.reserve(ino, len)?;
        let n = self.fs.inode_mut(ino);
        n.size_bytes = n.size_bytes.max(len);
        Ok(())
    }

    /// `posix_fadvise(POSIX_FADV_DONTNEED)`: drops the file's clean pages from the page cache.
    pub fn drop_cache(&mut self, path: &str) -> Result<(), InsiderError> {
        let ino = self.fs.lookup(path)?;
        self.cache.retain(|&(i, _), p| i != ino || p.dirty);
        Ok(())
    }

    /// Sets or clears the append-only attribute (`chattr +a`; owner or root).
    pub fn set_append_only(&mut self, uid: u32, path: &str, on: bool) -> Result<(), InsiderError> {
        let ino = self.fs.lookup(path)?;
        if uid != ROOT_UID && self.fs.inode(ino).uid != uid {
            return Err(InsiderError::PermissionDenied {
                path: path.into(),
                login: self.fs.user(uid)?.login.clone(),
                needed: "owner",
            });
        }
        self.fs.inode_mut(ino).append_only = on;
        Ok(())
    }

    /// The whole content of a real file through the ordinary path (functional fidelity).
    pub fn read_file(&mut self, uid: u32, path: &str) -> Result<Vec<u8>, InsiderError> {
        let fd = self.open(uid, path, false)?;
        let size = self.fs.inode(self.real(fd)?.ino).size_bytes;
        let (_, data) = self.pread(fd, 0, size)?;
        self.close(fd)?;
        Ok(data)
    }

    // ---- virtual files -----------------------------------------------------------------

    fn login(&self, uid: u32) -> Result<String, InsiderError> {
        Ok(self.fs.user(uid)?.login.clone())
    }

    fn read_mappings(&mut self, uid: u32) -> Result<Vec<Mapping>, InsiderError> {
        let path = mapping_path(&self.login(uid)?);
        let fd = self.open(uid, &path, false)?;
        let size = self.fs.inode(self.real(fd)?.ino).size_bytes;
        let text = self.mapping_text(fd, size)?;
        self.close(fd)?;
        text.lines().map(|l| parse_mapping(&path, l)).collect()
    }

    /// The mapping file's text: from the page cache (it is written through it) or the drive.
    fn mapping_text(&mut self, fd: u32, size: u64) -> Result<String, InsiderError> {
        let ino = self.real(fd)?.ino;
        let b = self.block();
        let mut bytes = Vec::new();
        for p in 0..size.div_ceil(b) {
            match self.cache.get(&(ino, p)) {
                Some(c) => bytes.extend_from_slice(&c.data),
                None => {
                    let (_, d) = self.pread(fd, p * b, b)?;
                    bytes.extend_from_slice(&d);
                }
            }
        }
        bytes.truncate(size as usize);
        String::from_utf8(bytes).map_err(|_| InsiderError::MappingFile {
            path: format!("fd {fd}"),
            reason: "not UTF-8".into(),
        })
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
        self.slots[slot] = Some((uid, vpath.to_string()));
        let line = format_mapping(&Mapping {
            vpath: vpath.into(),
            program: program.into(),
            pieces,
        });
        let path = mapping_path(&self.login(uid)?);
        let fd = self.open(uid, &path, true)?;
        let end = self.fs.inode(self.real(fd)?.ino).size_bytes;
        let r = self.pwrite(fd, end, line.as_bytes());
        self.close(fd)?;
        r
    }

    /// `vopen(vpath, O_RDONLY | O_WRONLY)`.
    pub fn vopen(&mut self, uid: u32, vpath: &str, dir: Direction) -> Result<u32, InsiderError> {
        let mapping = self
            .read_mappings(uid)?
            .into_iter()
            .find(|m| m.vpath == vpath)
            .ok_or_else(|| InsiderError::UnknownVirtualPath {
                vpath: vpath.into(),
                login: self
                    .fs
                    .user(uid)
                    .map(|u| u.login.clone())
                    .unwrap_or_default(),
            })?;
        let access = match dir {
            Direction::Read => Access::Read,
            Direction::Write => Access::Write,
        };
        // Every permission first: a denied file means nothing starts.
        let mut inos = Vec::new();
        for (path, _, _) in &mapping.pieces {
            let ino = self.fs.lookup(path)?;
            if self.fs.inode(ino).entries.is_some() {
                return Err(InsiderError::IsADirectory { path: path.clone() });
            }
            self.fs.check(uid, ino, path, access)?;
            inos.push(ino);
        }
        let mut extents: Vec<Extent> = Vec::new();
        for ((path, off, len), &ino) in mapping.pieces.iter().zip(&inos) {
            let n = self.fs.inode(ino);
            let limit = match dir {
                Direction::Read => n.size_bytes,
                Direction::Write => n.allocated_bytes(),
            };
            let len = len.unwrap_or(limit.saturating_sub(*off));
            if off + len > limit {
                return Err(InsiderError::OutOfFile {
                    path: path.clone(),
                    range: format!("{off}+{len}"),
                    size_bytes: limit,
                });
            }
            extents.extend(self.fs.map(ino, *off, len));
        }
        if dir == Direction::Write {
            for &ino in &inos {
                self.host_thread(self.host.syscall_ns);
                self.flush_inode(ino)?;
            }
        }
        let mut set = Vec::new();
        for &ino in &inos {
            let n = self.fs.inode_mut(ino);
            if !n.append_only {
                n.append_only = true;
                set.push(ino);
            }
        }
        let slot = 1 + self
            .slots
            .iter()
            .position(|s| s.as_ref().is_some_and(|(u, v)| *u == uid && v == vpath))
            .ok_or_else(|| InsiderError::Device(format!("{vpath}: its slot was released")))?;
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
        // The runtime's calls: the extents (filefrag) and a message with extents and slot.
        let ns = self.host.syscall_ns * (1 + inos.len() as u64);
        self.host_thread(ns);
        self.m
            .advance(SimDuration::from_us_f64(self.cfg.pcie_latency_us));
        self.m.open(s);
        self.fds.insert(
            fd,
            Fd::Virtual(VirtualFd {
                dir,
                set_append_only: set,
                real_inos: inos,
                program: mapping.program,
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
        self.m
            .advance(SimDuration::from_us_f64(self.cfg.pcie_latency_us));
        let s = self.m.stream_mut(fd).expect("open");
        if let Some(p) = s.run.program.as_mut() {
            if let Err(e) = p.on_params(params) {
                s.fault = Some(e.to_string());
            }
        }
        self.fault(fd)
    }

    /// `vread(fd, len)`: up to `len` bytes of the program's output; 0 at the end. Blocks
    /// until `len` bytes are buffered or the output has ended.
    pub fn vread(&mut self, fd: u32, len: u64) -> Result<(u64, Vec<u8>), InsiderError> {
        let v = self.virt(fd)?;
        if v.dir != Direction::Read {
            return Err(InsiderError::WrongMode {
                fd,
                mode: Direction::Write.name(),
                op: "vread",
            });
        }
        self.m.arm(fd);
        let pipelined = self.m.stream(fd).expect("open").pipelined;
        if !pipelined {
            self.m.want(fd, len);
        }
        // A vread larger than the host-side buffers returns what they hold when full.
        let enough = if pipelined {
            len.min(self.cfg.host_buffer_bytes)
        } else {
            len
        };
        self.m.run_until(|m| {
            let s = m.stream(fd).expect("open");
            s.host_buf_bytes >= enough || s.output_complete()
        })?;
        if !pipelined {
            self.m.want(fd, 0);
        }
        self.fault(fd)?;
        let (n, data) = self.m.take(fd, len);
        // The runtime copies from its DMA buffer into the caller's buffer.
        self.host_thread(self.host.copy_ns(n));
        Ok((n, data))
    }

    /// `poll` for several processes, each with its own descriptor and host core (§5.3 runs
    /// one process per program): waits until a descriptor has `len` bytes (or its end) to
    /// vread and its process is idle, or until `deadline`; returns the first such in `fds`
    /// order. Read it with `vread_detached`.
    pub fn poll(
        &mut self,
        fds: &[u32],
        len: u64,
        deadline: SimTime,
    ) -> Result<Option<u32>, InsiderError> {
        for &fd in fds {
            self.virt(fd)?;
            self.m.arm(fd);
        }
        let enough = len.min(self.cfg.host_buffer_bytes);
        let free: BTreeMap<u32, SimTime> = fds
            .iter()
            .map(|&fd| {
                (
                    fd,
                    self.process_cpu
                        .get(&fd)
                        .map_or(SimTime::ZERO, FifoServer::free_at),
                )
            })
            .collect();
        let ready = |m: &Machine, fd: u32| {
            m.now() >= free[&fd]
                && m.stream(fd)
                    .is_some_and(|s| s.host_buf_bytes >= enough || s.output_complete())
        };
        self.m
            .run_until_deadline(deadline, |m| fds.iter().any(|&fd| ready(m, fd)))?;
        Ok(fds.iter().copied().find(|&fd| ready(&self.m, fd)))
    }

    /// `vread` by the process owning `fd` on its own core: takes what the host buffer holds
    /// (up to `len`) without waiting; the copy occupies that process's core, not the caller.
    pub fn vread_detached(&mut self, fd: u32, len: u64) -> Result<u64, InsiderError> {
        self.virt(fd)?;
        self.fault(fd)?;
        let (n, _) = self.m.take(fd, len);
        let now = self.m.now();
        let ns = self.host.copy_ns(n);
        self.process_cpu
            .entry(fd)
            .or_default()
            .serve(now, SimDuration::from_ns(ns));
        Ok(n)
    }

    /// `vwrite(fd, data)` (timing fidelity: `len` bytes of no particular content).
    pub fn vwrite(&mut self, fd: u32, len: u64, data: &[u8]) -> Result<(), InsiderError> {
        let v = self.virt(fd)?;
        if v.dir != Direction::Write {
            return Err(InsiderError::WrongMode {
                fd,
                mode: Direction::Read.name(),
                op: "vwrite",
            });
        }
        self.fault(fd)?;
        self.m.arm(fd);
        self.host_thread(self.host.copy_ns(len));
        let c = self.cfg.credit_request_bytes;
        let window = c * u64::from(self.cfg.credits_initial);
        let mut at = 0u64;
        while at < len {
            let n = c.min(len - at);
            self.m.run_until(|m| {
                let s = m.stream(fd).expect("open");
                s.fault.is_some()
                    || s.h2d_inflight_bytes + s.fifo.iter().map(|c| c.bytes).sum::<u64>() + n
                        <= window
            })?;
            self.fault(fd)?;
            let chunk = if data.is_empty() {
                Vec::new()
            } else {
                data[at as usize..(at + n) as usize].to_vec()
            };
            self.m.push_write(fd, n, chunk, false);
            at += n;
        }
        Ok(())
    }

    fn write_idle(m: &Machine, fd: u32, ended: bool) -> bool {
        let s = m.stream(fd).expect("open");
        s.fault.is_some()
            || (s.h2d.is_empty()
                && s.fifo.is_empty()
                && !s.slot_busy
                && s.writes_inflight == 0
                && (!ended || s.program_ended))
    }

    /// `vsync(fd)`: waits until the drive has processed every byte written so far and
    /// written every whole request of output.
    pub fn vsync(&mut self, fd: u32) -> Result<(), InsiderError> {
        self.virt(fd)?;
        self.m.run_until(|m| Self::write_idle(m, fd, false))?;
        self.fault(fd)
    }

    /// `vclose(fd)`: ends the stream; for a virtual write, returns the bytes the drive wrote to
    /// the real file(s) (the caller may truncate to it). Clears the append-only flags vopen
    /// set, drops the host's read cache of the real files after a write, resets the slot.
    pub fn vclose(&mut self, fd: u32) -> Result<u64, InsiderError> {
        let v = self.virt(fd)?;
        let dir = v.dir;
        let mut result = Ok(0);
        if dir == Direction::Write {
            self.m.push_write(fd, 0, Vec::new(), true);
            self.m.arm(fd);
            result = self
                .m
                .run_until(|m| Self::write_idle(m, fd, true))
                .and_then(|()| self.fault(fd))
                .map(|()| self.m.stream(fd).expect("open").written_bytes);
        } else if let Err(e) = self.fault(fd) {
            result = Err(e);
        }
        self.m.close(fd);
        self.m
            .advance(SimDuration::from_us_f64(self.cfg.pcie_latency_us));
        let Some(Fd::Virtual(v)) = self.fds.remove(&fd) else {
            unreachable!("checked virtual");
        };
        for ino in v.set_append_only {
            self.fs.inode_mut(ino).append_only = false;
        }
        if dir == Direction::Write {
            let inos: BTreeSet<u64> = v.real_inos.iter().copied().collect();
            self.cache.retain(|(i, _), _| !inos.contains(i));
        }
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
