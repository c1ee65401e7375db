//! AccelFS ("Vefs", `liva/accelfs`): the file system inside the accelerator, driving the SSD
//! through the direct NVMe engine.
//!
//! As in its code: file data lives in **8 KiB chunks**; each file has its **own cache of 256
//! chunks** (2 MiB), write-back, least recently used chunk evicted first (a dirty victim is
//! written before it goes); **read misses are grouped into physically contiguous runs of at
//! most 2 MiB**, one NVMe command each, all issued, then polled; a partial write of a chunk
//! not cached reads it first unless it lies past the end of the file; **`Sync`** writes the
//! file's dirty chunks, then its metadata (the chunk list, the size), waits, then sends an
//! **NVMe FLUSH**.
//!
//! What differs, and why: the names, the allocation and the metadata are the shared file
//! system's (`crates/fs`, running on the VE's scalar core over the same NVMe queue), not
//! AccelFS's header chunk and 32 MiB chunk bitmap — so the database a run leaves on the
//! device is a file tree `nearflash fs export` copies out and `nearflash fs fsck` checks,
//! and metadata is journaled (a `Sync` commits a journal transaction where AccelFS rewrites
//! its header). The namespace is therefore hierarchical where AccelFS's is flat (a
//! directory is a name prefix there); the calls the workloads make behave the same. Blocks
//! are allocated 4 KiB at a time as chunks are written back (`Fallocate`, then `Extents`
//! for their device addresses); the size is set exactly at `Sync` (`SetSize`, which zeroes
//! nothing: AccelFS owns the bytes).

use crate::config::AccelFsConfig;
use crate::files::{Fd, FileError, OpenMode};
use crate::machine::{Calls, Run};
use nearflash_blockdev::{BlockOp, BlockRequest};
use nearflash_fs::{Caller, Fh, FsOp, FsReply, OpenFlags, BLOCK_BYTES};
use nearflash_hw::compute::CoreSpec;
use nearflash_lru::Keyed;
use nearflash_sim::SimDuration;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

const BLOCK: u64 = BLOCK_BYTES as u64;

/// Files AccelFS keeps known (with their caches) while no descriptor holds them.
/// Assumption: 256 — a LevelDB of a few hundred tables keeps its caches; the file system's
/// 1024 open handles are never reached.
pub const IDLE_FILES_MAX: usize = 256;

/// AccelFS's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct AccelFsStats {
    pub calls: u64,
    pub chunk_hits: u64,
    pub chunk_misses: u64,
    pub read_commands: u64,
    pub read_bytes: u64,
    pub write_commands: u64,
    pub write_bytes: u64,
    pub evictions: u64,
    pub dirty_evictions: u64,
    pub syncs: u64,
    pub flushes: u64,
    pub fs_ops: u64,
}

struct Chunk {
    data: Box<[u8]>,
    dirty: bool,
}

/// A file AccelFS knows (its in-memory inode).
struct AFile {
    fh: Fh,
    /// The file's size as the program sees it.
    size: u64,
    /// The size the file system records; blocks `0..ceil(fs_size / 4 KiB)` are mapped.
    fs_size: u64,
    /// Device byte offset of each mapped 4 KiB block of the file.
    blocks: Vec<u64>,
    cache: HashMap<u64, Chunk>,
    /// The cached chunks, least recently used first.
    lru: Keyed<u64>,
    /// Allocation or size changed since the last commit.
    meta_dirty: bool,
    opens: u32,
}

impl AFile {
    fn dirty_chunks(&self) -> Vec<u64> {
        let mut v: Vec<u64> = self
            .cache
            .iter()
            .filter(|(_, c)| c.dirty)
            .map(|(&i, _)| i)
            .collect();
        v.sort_unstable();
        v
    }
}

pub struct AccelFs {
    cfg: AccelFsConfig,
    core: CoreSpec,
    memcpy_mb_s: f64,
    files: BTreeMap<String, AFile>,
    fds: BTreeMap<Fd, String>,
    next_fd: u64,
    stats: AccelFsStats,
}

impl AccelFs {
    pub fn new(cfg: AccelFsConfig, core: CoreSpec, memcpy_mb_s: f64) -> AccelFs {
        AccelFs {
            cfg,
            core,
            memcpy_mb_s,
            files: BTreeMap::new(),
            fds: BTreeMap::new(),
            next_fd: 3,
            stats: AccelFsStats::default(),
        }
    }

    pub fn stats(&self) -> AccelFsStats {
        self.stats
    }

    fn chunk_bytes(&self) -> u64 {
        self.cfg.chunk_bytes
    }

    fn charge(&self, m: &mut Run, instructions: u64) {
        m.advance(self.core.duration(instructions as f64));
    }

    fn call(&mut self, m: &mut Run) {
        self.stats.calls += 1;
        self.charge(m, self.cfg.call_instructions);
    }

    fn memcpy(&self, m: &mut Run, bytes: u64) {
        let ns = (bytes as f64 * 1e3 / self.memcpy_mb_s).ceil() as u64;
        m.advance(SimDuration::from_ns(ns));
    }

    fn fs(&mut self, m: &mut Run, op: FsOp) -> Result<FsReply, FileError> {
        self.stats.fs_ops += 1;
        Ok(m.fs_run(Caller::ROOT, op)?)
    }

    fn path_of(&self, fd: Fd) -> Result<String, FileError> {
        self.fds.get(&fd).cloned().ok_or(FileError::BadFd(fd))
    }

    fn load_extents(&mut self, m: &mut Run, path: &str) -> Result<(), FileError> {
        let fh = self.files[path].fh;
        let FsReply::Extents(ext) = self.fs(m, FsOp::Extents(fh))? else {
            unreachable!("Extents answers extents")
        };
        let f = self.files.get_mut(path).expect("known file");
        let n = f.fs_size.div_ceil(BLOCK) as usize;
        let mut blocks = vec![u64::MAX; n];
        for e in ext {
            let first = (e.file_offset_bytes / BLOCK) as usize;
            for i in 0..(e.len_bytes / BLOCK) as usize {
                if let Some(b) = blocks.get_mut(first + i) {
                    *b = e.device_offset_bytes + i as u64 * BLOCK;
                }
            }
        }
        assert!(
            blocks.iter().all(|&b| b != u64::MAX),
            "{path}: every block below the size is mapped (AccelFS never leaves holes)"
        );
        f.blocks = blocks;
        Ok(())
    }

    pub fn open(&mut self, m: &mut Run, path: &str, mode: OpenMode) -> Result<Fd, FileError> {
        self.call(m);
        if !self.files.contains_key(path) {
            let flags = OpenFlags {
                read: true,
                write: true,
                append: false,
                truncate: mode.truncate,
                create: mode.create,
                excl: false,
            };
            let FsReply::Opened(fh) = self.fs(
                m,
                FsOp::Open {
                    path: path.to_string(),
                    flags,
                    perm: 0o644,
                },
            )?
            else {
                unreachable!("Open answers a handle")
            };
            let FsReply::Stat(st) = self.fs(m, FsOp::Stat(path.to_string()))? else {
                unreachable!("Stat answers a stat")
            };
            self.files.insert(
                path.to_string(),
                AFile {
                    fh,
                    size: st.size_bytes,
                    fs_size: st.size_bytes,
                    blocks: Vec::new(),
                    cache: HashMap::new(),
                    lru: Keyed::new(),
                    meta_dirty: false,
                    opens: 0,
                },
            );
            self.load_extents(m, path)?;
        } else if mode.truncate {
            let fh = self.files[path].fh;
            self.fs(m, FsOp::SetSize { fh, size_bytes: 0 })?;
            let f = self.files.get_mut(path).expect("known file");
            f.size = 0;
            f.fs_size = 0;
            f.blocks.clear();
            f.cache.clear();
            f.lru.clear();
            f.meta_dirty = true;
        }
        self.files.get_mut(path).expect("known file").opens += 1;
        let fd = Fd(self.next_fd);
        self.next_fd += 1;
        self.fds.insert(fd, path.to_string());
        Ok(fd)
    }

    /// Closes `fd`. The file stays known with its cache, as AccelFS's in-memory inode keeps
    /// its chunk cache (`cache_container.h` hangs the cache off the inode); beyond
    /// [`IDLE_FILES_MAX`] files no descriptor holds, clean ones are forgotten (cache dropped,
    /// file-system handle closed) in name order, so memory and handles stay bounded.
    pub fn close(&mut self, m: &mut Run, fd: Fd) -> Result<(), FileError> {
        self.call(m);
        let path = self.fds.remove(&fd).ok_or(FileError::BadFd(fd))?;
        let f = self
            .files
            .get_mut(&path)
            .expect("an open fd names a known file");
        f.opens = f.opens.saturating_sub(1);
        let idle = self.files.values().filter(|f| f.opens == 0).count();
        if idle > IDLE_FILES_MAX {
            self.forget_idle(m, idle - IDLE_FILES_MAX)?;
        }
        Ok(())
    }

    /// Forgets up to `n` files no descriptor holds and with nothing dirty (name order).
    pub fn forget_idle(&mut self, m: &mut Run, n: usize) -> Result<(), FileError> {
        let victims: Vec<String> = self
            .files
            .iter()
            .filter(|(_, f)| f.opens == 0 && !f.meta_dirty && f.cache.values().all(|c| !c.dirty))
            .map(|(p, _)| p.clone())
            .take(n)
            .collect();
        for p in victims {
            let f = self.files.remove(&p).expect("known file");
            self.fs(m, FsOp::Close(f.fh))?;
        }
        Ok(())
    }

    pub fn size(&mut self, m: &mut Run, path: &str) -> Result<u64, FileError> {
        self.call(m);
        if let Some(f) = self.files.get(path) {
            return Ok(f.size);
        }
        let FsReply::Stat(st) = self.fs(m, FsOp::Stat(path.to_string()))? else {
            unreachable!("Stat answers a stat")
        };
        Ok(st.size_bytes)
    }

    pub fn exists(&mut self, m: &mut Run, path: &str) -> Result<bool, FileError> {
        self.call(m);
        if self.files.contains_key(path) {
            return Ok(true);
        }
        match m.fs_run(Caller::ROOT, FsOp::Stat(path.to_string())) {
            Ok(_) => Ok(true),
            Err(crate::machine::MachineError::Fs(nearflash_fs::FsError::NotFound(_))) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    pub fn children(&mut self, m: &mut Run, dir: &str) -> Result<Vec<String>, FileError> {
        self.call(m);
        let FsReply::Entries(es) = self.fs(m, FsOp::Readdir(dir.to_string()))? else {
            unreachable!("Readdir answers entries")
        };
        Ok(crate::files::names(es))
    }

    pub fn mkdir(&mut self, m: &mut Run, path: &str) -> Result<(), FileError> {
        self.call(m);
        self.fs(
            m,
            FsOp::Mkdir {
                path: path.to_string(),
                perm: 0o755,
            },
        )?;
        Ok(())
    }

    pub fn rmdir(&mut self, m: &mut Run, path: &str) -> Result<(), FileError> {
        self.call(m);
        self.fs(m, FsOp::Rmdir(path.to_string()))?;
        Ok(())
    }

    pub fn delete(&mut self, m: &mut Run, path: &str) -> Result<(), FileError> {
        self.call(m);
        if self.fds.values().any(|p| p == path) {
            return Err(FileError::Busy(path.to_string()));
        }
        if let Some(f) = self.files.remove(path) {
            self.fs(m, FsOp::Close(f.fh))?;
        }
        self.fs(m, FsOp::Unlink(path.to_string()))?;
        Ok(())
    }

    pub fn rename(&mut self, m: &mut Run, from: &str, to: &str) -> Result<(), FileError> {
        self.call(m);
        if self.fds.values().any(|p| p == to) {
            return Err(FileError::Busy(to.to_string()));
        }
        if let Some(old) = self.files.remove(to) {
            self.fs(m, FsOp::Close(old.fh))?;
        }
        self.fs(
            m,
            FsOp::Rename {
                from: from.to_string(),
                to: to.to_string(),
            },
        )?;
        if let Some(f) = self.files.remove(from) {
            self.files.insert(to.to_string(), f);
        }
        for p in self.fds.values_mut() {
            if p == from {
                *p = to.to_string();
            }
        }
        Ok(())
    }

    /// Reads up to `len` bytes at `offset` (fewer at the end of the file).
    pub fn read_at(
        &mut self,
        m: &mut Run,
        fd: Fd,
        offset: u64,
        len: u64,
    ) -> Result<Vec<u8>, FileError> {
        self.call(m);
        let path = self.path_of(fd)?;
        let size = self.files[&path].size;
        let end = offset.saturating_add(len).min(size);
        if offset >= end {
            return Ok(Vec::new());
        }
        let c = self.chunk_bytes();
        let mut out = Vec::with_capacity((end - offset) as usize);
        // A window of at most half the cache at a time, so one call never evicts its own
        // chunks before copying them.
        let window = u64::from(self.cfg.cache_chunks_per_file).div_ceil(2).max(1);
        let mut chunk = offset / c;
        let last = (end - 1) / c;
        while chunk <= last {
            let stop = (chunk + window - 1).min(last);
            let want: Vec<u64> = (chunk..=stop).collect();
            self.fill(m, &path, &want)?;
            let f = self.files.get_mut(&path).expect("known file");
            for i in want {
                let ch = f.cache.get_mut(&i).expect("filled");
                f.lru.touch(i);
                let lo = offset.max(i * c) - i * c;
                let hi = end.min((i + 1) * c) - i * c;
                out.extend_from_slice(&ch.data[lo as usize..hi as usize]);
            }
            chunk = stop + 1;
        }
        self.memcpy(m, out.len() as u64);
        Ok(out)
    }

    /// Writes `data` at `offset` (a gap past the end of the file is filled with zeros).
    pub fn write_at(
        &mut self,
        m: &mut Run,
        fd: Fd,
        offset: u64,
        data: &[u8],
    ) -> Result<(), FileError> {
        self.call(m);
        let path = self.path_of(fd)?;
        let size = self.files[&path].size;
        let (offset, data) = if offset > size {
            let mut d = vec![0u8; (offset - size) as usize];
            d.extend_from_slice(data);
            (size, std::borrow::Cow::Owned(d))
        } else {
            (offset, std::borrow::Cow::Borrowed(data))
        };
        if data.is_empty() {
            return Ok(());
        }
        let c = self.chunk_bytes();
        let end = offset + data.len() as u64;
        let window = u64::from(self.cfg.cache_chunks_per_file).div_ceil(2).max(1);
        let mut chunk = offset / c;
        let last = (end - 1) / c;
        while chunk <= last {
            let stop = (chunk + window - 1).min(last);
            // Chunks to read first: partly overwritten, not cached, holding bytes on disk.
            let f = &self.files[&path];
            let on_disk = f.size.min(f.blocks.len() as u64 * BLOCK);
            let need_read: Vec<u64> = (chunk..=stop)
                .filter(|&i| {
                    let whole = offset <= i * c && end >= (i + 1) * c;
                    !whole && !f.cache.contains_key(&i) && i * c < on_disk
                })
                .collect();
            let fresh: Vec<u64> = (chunk..=stop)
                .filter(|i| !f.cache.contains_key(i) && !need_read.contains(i))
                .collect();
            self.fill(m, &path, &need_read)?;
            self.make_room(m, &path, fresh.len(), &(chunk..=stop).collect::<Vec<_>>())?;
            let f = self.files.get_mut(&path).expect("known file");
            for i in chunk..=stop {
                let ch = f.cache.entry(i).or_insert_with(|| Chunk {
                    data: vec![0u8; c as usize].into_boxed_slice(),
                    dirty: false,
                });
                f.lru.touch(i);
                let lo = offset.max(i * c);
                let hi = end.min((i + 1) * c);
                ch.data[(lo - i * c) as usize..(hi - i * c) as usize]
                    .copy_from_slice(&data[(lo - offset) as usize..(hi - offset) as usize]);
                ch.dirty = true;
            }
            // The window's bytes are in the file now: a later window's evictions write
            // back these chunks up to this size.
            f.size = f.size.max(end.min((stop + 1) * c));
            chunk = stop + 1;
        }
        debug_assert!(self.files[&path].size >= end);
        self.memcpy(m, data.len() as u64);
        Ok(())
    }

    /// AccelFS's `Sync`: the dirty chunks, then the metadata, then an NVMe FLUSH.
    pub fn sync(&mut self, m: &mut Run, fd: Fd) -> Result<(), FileError> {
        self.call(m);
        let path = self.path_of(fd)?;
        self.sync_path(m, &path)
    }

    /// Syncs every file with dirty chunks or metadata (an unmount), then forgets those no
    /// descriptor holds.
    pub fn sync_all(&mut self, m: &mut Run) -> Result<(), FileError> {
        let paths: Vec<String> = self
            .files
            .iter()
            .filter(|(_, f)| {
                f.meta_dirty || f.size != f.fs_size || f.cache.values().any(|c| c.dirty)
            })
            .map(|(p, _)| p.clone())
            .collect();
        for p in paths {
            self.sync_path(m, &p)?;
            if self.files[&p].opens == 0 {
                let f = self.files.remove(&p).expect("known file");
                self.fs(m, FsOp::Close(f.fh))?;
            }
        }
        Ok(())
    }

    fn sync_path(&mut self, m: &mut Run, path: &str) -> Result<(), FileError> {
        self.stats.syncs += 1;
        let path = path.to_string();
        let dirty = self.files[&path].dirty_chunks();
        self.write_back(m, &path, &dirty)?;
        let f = &self.files[&path];
        let (fh, size, fs_size) = (f.fh, f.size, f.fs_size);
        if fs_size != size {
            self.fs(
                m,
                FsOp::SetSize {
                    fh,
                    size_bytes: size,
                },
            )?;
            let f = self.files.get_mut(&path).expect("known file");
            f.fs_size = size;
            f.meta_dirty = true;
        }
        if self.files[&path].meta_dirty {
            self.fs(m, FsOp::Fsync(fh))?;
            self.files.get_mut(&path).expect("known file").meta_dirty = false;
        }
        self.stats.flushes += 1;
        self.charge(m, self.cfg.command_instructions);
        m.flush()?;
        Ok(())
    }

    /// Makes `want` cached: misses are read in device-contiguous runs of at most
    /// `run_bytes_max`, all issued at once; bytes past what is on disk read as zeros.
    fn fill(&mut self, m: &mut Run, path: &str, want: &[u64]) -> Result<(), FileError> {
        let c = self.chunk_bytes();
        let f = &self.files[path];
        let misses: Vec<u64> = want
            .iter()
            .copied()
            .filter(|i| !f.cache.contains_key(i))
            .collect();
        self.stats.chunk_hits += (want.len() - misses.len()) as u64;
        self.stats.chunk_misses += misses.len() as u64;
        if misses.is_empty() {
            return Ok(());
        }
        self.make_room(m, path, misses.len(), want)?;
        let f = &self.files[path];
        let on_disk_blocks = f
            .size
            .min(f.fs_size)
            .div_ceil(BLOCK)
            .min(f.blocks.len() as u64);
        // (device offset, chunk, block within the chunk) of every block to read.
        let mut pieces: Vec<(u64, u64, u64)> = Vec::new();
        for &i in &misses {
            for k in 0..c / BLOCK {
                let b = i * (c / BLOCK) + k;
                if b < on_disk_blocks {
                    pieces.push((f.blocks[b as usize], i, k));
                }
            }
        }
        let runs = runs(&mut pieces, self.cfg.run_bytes_max);
        let reqs: Vec<BlockRequest> = runs
            .iter()
            .map(|r| BlockRequest {
                id: 0,
                op: BlockOp::Read,
                offset_bytes: r[0].0,
                len_bytes: r.len() as u64 * BLOCK,
                data: Vec::new(),
            })
            .collect();
        self.stats.read_commands += reqs.len() as u64;
        self.stats.read_bytes += pieces.len() as u64 * BLOCK;
        self.charge(m, self.cfg.command_instructions * reqs.len() as u64);
        let done = m.block_io(reqs)?;
        let f = self.files.get_mut(path).expect("known file");
        for &i in &misses {
            f.cache.insert(
                i,
                Chunk {
                    data: vec![0u8; c as usize].into_boxed_slice(),
                    dirty: false,
                },
            );
        }
        for (run, comp) in runs.iter().zip(done) {
            for (j, &(_, i, k)) in run.iter().enumerate() {
                let src = &comp.data[j * BLOCK as usize..(j + 1) * BLOCK as usize];
                let ch = f.cache.get_mut(&i).expect("inserted");
                ch.data[(k * BLOCK) as usize..((k + 1) * BLOCK) as usize].copy_from_slice(src);
            }
        }
        for &i in &misses {
            assert!(f.cache.contains_key(&i), "inserted");
            let was = f.lru.touch(i);
            debug_assert!(!was, "a missed chunk enters the recency list once");
        }
        Ok(())
    }

    /// Evicts least recently used chunks (never those in `keep`) until `incoming` more fit;
    /// dirty victims are written back first, together.
    fn make_room(
        &mut self,
        m: &mut Run,
        path: &str,
        incoming: usize,
        keep: &[u64],
    ) -> Result<(), FileError> {
        let cap = self.cfg.cache_chunks_per_file as usize;
        let f = &self.files[path];
        let excess = (f.cache.len() + incoming).saturating_sub(cap);
        if excess == 0 {
            return Ok(());
        }
        let victims: Vec<u64> = f
            .lru
            .iter()
            .filter(|i| !keep.contains(i))
            .take(excess)
            .collect();
        let dirty: Vec<u64> = victims
            .iter()
            .copied()
            .filter(|i| f.cache[i].dirty)
            .collect();
        self.stats.evictions += victims.len() as u64;
        self.stats.dirty_evictions += dirty.len() as u64;
        self.write_back(m, path, &dirty)?;
        let f = self.files.get_mut(path).expect("known file");
        for i in victims {
            f.cache.remove(&i).expect("cached");
            let was = f.lru.remove(i);
            debug_assert!(was, "a cached chunk is on the recency list");
        }
        Ok(())
    }

    /// Maps blocks `0..nblocks` of the file (allocating past the file system's size).
    fn ensure_mapped(&mut self, m: &mut Run, path: &str, nblocks: u64) -> Result<(), FileError> {
        let f = &self.files[path];
        if f.blocks.len() as u64 >= nblocks {
            return Ok(());
        }
        let fh = f.fh;
        let aligned = f.fs_size.div_ceil(BLOCK) * BLOCK;
        if aligned != f.fs_size {
            // Grow to the block boundary first, zeroing nothing, so Fallocate's own growth
            // has no stale tail to zero over AccelFS's bytes.
            self.fs(
                m,
                FsOp::SetSize {
                    fh,
                    size_bytes: aligned,
                },
            )?;
        }
        let target = nblocks * BLOCK;
        let mut at = aligned;
        while at < target {
            let FsReply::Written(n) = self.fs(
                m,
                FsOp::Fallocate {
                    fh,
                    offset_bytes: at,
                    len_bytes: target - at,
                },
            )?
            else {
                unreachable!("Fallocate answers the bytes covered")
            };
            at += n;
        }
        let f = self.files.get_mut(path).expect("known file");
        f.fs_size = target;
        f.meta_dirty = true;
        self.load_extents(m, path)
    }

    /// Writes `chunks` (dirty, cached) in device-contiguous runs of at most
    /// `run_bytes_max`; only the blocks below the file's size.
    fn write_back(&mut self, m: &mut Run, path: &str, chunks: &[u64]) -> Result<(), FileError> {
        if chunks.is_empty() {
            return Ok(());
        }
        let c = self.chunk_bytes();
        let per = c / BLOCK;
        let size_blocks = self.files[path].size.div_ceil(BLOCK);
        let need = chunks
            .iter()
            .map(|&i| ((i + 1) * per).min(size_blocks))
            .max()
            .unwrap_or(0);
        self.ensure_mapped(m, path, need)?;
        let f = &self.files[path];
        let mut pieces: Vec<(u64, u64, u64)> = Vec::new();
        for &i in chunks {
            for k in 0..per {
                let b = i * per + k;
                if b < size_blocks {
                    pieces.push((f.blocks[b as usize], i, k));
                }
            }
        }
        let runs = runs(&mut pieces, self.cfg.run_bytes_max);
        let reqs: Vec<BlockRequest> = runs
            .iter()
            .map(|r| {
                let mut data = Vec::with_capacity(r.len() * BLOCK as usize);
                for &(_, i, k) in r {
                    data.extend_from_slice(
                        &f.cache[&i].data[(k * BLOCK) as usize..((k + 1) * BLOCK) as usize],
                    );
                }
                BlockRequest {
                    id: 0,
                    op: BlockOp::Write,
                    offset_bytes: r[0].0,
                    len_bytes: data.len() as u64,
                    data,
                }
            })
            .collect();
        self.stats.write_commands += reqs.len() as u64;
        self.stats.write_bytes += pieces.len() as u64 * BLOCK;
        self.charge(m, self.cfg.command_instructions * reqs.len() as u64);
        m.block_io(reqs)?;
        let f = self.files.get_mut(path).expect("known file");
        for i in chunks {
            if let Some(ch) = f.cache.get_mut(i) {
                ch.dirty = false;
            }
        }
        Ok(())
    }
}

/// Sorts `(device offset, ..)` pieces of one block each and cuts them into runs of
/// device-contiguous blocks of at most `run_bytes_max`.
fn runs(pieces: &mut [(u64, u64, u64)], run_bytes_max: u64) -> Vec<Vec<(u64, u64, u64)>> {
    pieces.sort_unstable();
    let max_blocks = (run_bytes_max / BLOCK).max(1) as usize;
    let mut out: Vec<Vec<(u64, u64, u64)>> = Vec::new();
    for &p in pieces.iter() {
        match out.last_mut() {
            Some(r) if r.len() < max_blocks && r.last().expect("non-empty").0 + BLOCK == p.0 => {
                r.push(p)
            }
            _ => out.push(vec![p]),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_are_device_contiguous_and_bounded() {
        let mut p: Vec<(u64, u64, u64)> = [0u64, 4096, 8192, 16384, 20480, 24576, 28672]
            .iter()
            .rev()
            .map(|&d| (d, 0, 0))
            .collect();
        let r = runs(&mut p, 8192);
        let lens: Vec<usize> = r.iter().map(Vec::len).collect();
        assert_eq!(lens, vec![2, 1, 2, 2], "{r:?}");
        assert_eq!(r[2][0].0, 16384);
    }
}
