//! The program's view: a POSIX-like file API on the VE (`open`, `read_at`, `write_at`,
//! `sync`, …), served by AccelFS over the direct engine or redirected to the host, and the
//! application's own compute on a VE core. Every call runs the machine's loop until its
//! work is done, so a program written against [`Ve`] — a benchmark, LevelDB's environment,
//! the genome pipeline — runs unchanged on either path, in simulated time.

use crate::accelfs::{AccelFs, AccelFsStats};
use crate::config::HayaguiConfig;
use crate::machine::{self, Calls, Machine, MachineError, Run};
use crate::redirect::{RedirectStats, Redirected};
use nearflash_flash::{FlashConfig, PageStore};
use nearflash_fs::{DirEntry, FsConfig, FsStats};
use nearflash_ftl::FtlConfig;
use nearflash_hw::compute::CoreSpec;
use nearflash_nvme::{CompletionMode, MemoryPortConfig, NvmeConfig, NvmeStats};
use nearflash_sim::SimTime;
use nearflash_wcache::WriteCacheConfig;
use serde::Serialize;
use thiserror::Error;

/// A file descriptor of the program on the VE.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Fd(pub u64);

/// How a file is opened.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpenMode {
    pub create: bool,
    pub truncate: bool,
}

impl OpenMode {
    pub const EXISTING: OpenMode = OpenMode {
        create: false,
        truncate: false,
    };
    pub const CREATE: OpenMode = OpenMode {
        create: true,
        truncate: false,
    };
    pub const CREATE_TRUNC: OpenMode = OpenMode {
        create: true,
        truncate: true,
    };
}

/// Which way the program reaches its files.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Access {
    /// Hayagui: AccelFS and the NVMe engine inside the accelerator.
    Direct,
    /// The baseline: system calls redirected to the host.
    Redirected,
}

impl Access {
    pub fn name(self) -> &'static str {
        match self {
            Access::Direct => "direct",
            Access::Redirected => "redirected",
        }
    }

    pub fn parse(s: &str) -> Result<Access, FileError> {
        match s {
            "direct" => Ok(Access::Direct),
            "redirected" => Ok(Access::Redirected),
            other => Err(FileError::UnknownAccess(other.to_string())),
        }
    }
}

#[derive(Debug, Error)]
pub enum FileError {
    #[error(transparent)]
    Machine(#[from] MachineError),
    #[error("bad file descriptor {}", .0 .0)]
    BadFd(Fd),
    #[error("{0} is open")]
    Busy(String),
    #[error("unknown access path '{0}' (direct or redirected)")]
    UnknownAccess(String),
}

impl FileError {
    /// The file system's own error, when that is what went wrong.
    pub fn fs_error(&self) -> Option<&nearflash_fs::FsError> {
        match self {
            FileError::Machine(MachineError::Fs(e)) => Some(e),
            _ => None,
        }
    }
}

/// Directory entries' names, without `.` and `..`.
pub(crate) fn names(entries: Vec<DirEntry>) -> Vec<String> {
    entries
        .into_iter()
        .map(|e| e.name)
        .filter(|n| n != "." && n != "..")
        .collect()
}

enum Path {
    Direct(AccelFs),
    Redirected(Redirected),
}

/// Counters of whichever path served the program.
#[derive(Clone, Copy, Debug, Serialize)]
#[serde(untagged)]
pub enum PathStats {
    Direct(AccelFsStats),
    Redirected(RedirectStats),
}

/// The accelerator running one program over one access path, and the machine under it: the
/// program's blocking calls drive the machine's loop (`machine::Calls`).
pub struct Ve {
    m: Run,
    path: Path,
    access: Access,
    core: CoreSpec,
    compute_ns: u64,
}

/// The NVMe front end each path drives: the host's driver (`hayagui.nvme`) for the redirected path; for the direct path the same controller and link,
/// with the engine's one queue of `accelfs.queue_entries`, polled, its queues and buffers in
/// the VE's HBM — a peer memory whose accesses also cross the VE's own PCIe link.
pub fn nvme_for(access: Access, cfg: &HayaguiConfig) -> NvmeConfig {
    let host_nvme = &cfg.nvme;
    match access {
        Access::Redirected => host_nvme.clone(),
        Access::Direct => NvmeConfig {
            queue_pairs: 1,
            queue_entries: cfg.accelfs.queue_entries,
            completion: CompletionMode::Poll,
            host_memory: MemoryPortConfig {
                bandwidth_mb_s: cfg.ve.hbm_mb_s,
                latency_ns: cfg.ve.hbm_latency_ns + cfg.ve.link.latency_ns,
            },
            ..host_nvme.clone()
        },
    }
}

/// The file system each path runs: AccelFS's metadata engine on the VE's scalar core, or the
/// host's file system with its page cache.
pub fn fs_for(access: Access, cfg: &HayaguiConfig) -> FsConfig {
    match access {
        Access::Direct => FsConfig {
            // AccelFS writes its metadata with no barrier between writes; its `Sync` ends in
            // one NVMe FLUSH (`HardWrite` → `NVME_CMD_FLUSH`, liva/accelfs), which the direct
            // path sends itself (`Calls::flush`).
            barriers: false,
            op_cpu_ns: cfg.accelfs.fs_op_cpu_ns,
            copy_ns_per_4k: (4096.0 * 1e3 / cfg.ve.memcpy_mb_s).ceil() as u64,
            ..FsConfig::default()
        },
        Access::Redirected => FsConfig {
            cache_bytes: cfg.host_fs.page_cache_bytes,
            op_cpu_ns: cfg.host_fs.op_cpu_ns,
            copy_ns_per_4k: cfg.host_fs.copy_ns_per_4k,
            // Linux moves a whole read(2)/write(2) per call (up to MAX_RW_COUNT); the host
            // side of a redirected call loops over short writes within one call.
            write_bytes_max: 16 << 20,
            read_ahead_bytes: cfg.host_fs.read_ahead_bytes,
            ..FsConfig::default()
        },
    }
}

impl Ve {
    /// A fresh SSD (`flash`/`ftl` over `store`, behind the DRAM write buffer of
    /// `write_cache`), formatted, and the program's path to it.
    pub fn format(
        flash: &FlashConfig,
        ftl: &FtlConfig,
        write_cache: &WriteCacheConfig,
        store: Box<dyn PageStore>,
        cfg: &HayaguiConfig,
        access: Access,
        seed: u64,
    ) -> Result<Ve, FileError> {
        let m = machine::format(
            flash,
            ftl,
            write_cache,
            store,
            &nvme_for(access, cfg),
            fs_for(access, cfg),
            seed,
        )?;
        Ok(Self::with(m, cfg, access))
    }

    /// Over a machine the caller built on its loop (an image's device, recovered, behind
    /// [`nvme_for`] and [`fs_for`] of `access`): formats or mounts its file system.
    pub fn over(
        mut m: Run,
        start: crate::machine::Start,
        cfg: &HayaguiConfig,
        access: Access,
    ) -> Result<Ve, FileError> {
        m.start(start)?;
        Ok(Self::with(m, cfg, access))
    }

    fn with(m: Run, cfg: &HayaguiConfig, access: Access) -> Ve {
        let core = cfg.ve.scalar_core();
        let path = match access {
            Access::Direct => {
                Path::Direct(AccelFs::new(cfg.accelfs.clone(), core, cfg.ve.memcpy_mb_s))
            }
            Access::Redirected => Path::Redirected(Redirected::new(cfg.redirect.clone())),
        };
        Ve {
            m,
            path,
            access,
            core,
            compute_ns: 0,
        }
    }

    pub fn access(&self) -> Access {
        self.access
    }

    pub fn now(&self) -> SimTime {
        self.m.now()
    }

    pub fn machine(&self) -> &Machine {
        self.m.model()
    }

    /// Events the machine's loop processed so far.
    pub fn events(&self) -> u64 {
        self.m.sim().events()
    }

    /// The machine loop's trace hash so far.
    pub fn trace_hash(&self) -> String {
        self.m.sim().trace_hash().hex()
    }

    pub fn nvme_stats(&self) -> NvmeStats {
        self.machine().nvme_stats()
    }

    pub fn fs_stats(&self) -> FsStats {
        self.machine().fs_stats()
    }

    pub fn path_stats(&self) -> PathStats {
        match &self.path {
            Path::Direct(a) => PathStats::Direct(a.stats()),
            Path::Redirected(r) => PathStats::Redirected(r.stats()),
        }
    }

    /// Simulated time the program spent computing (its own work, not its file calls).
    pub fn compute_ns(&self) -> u64 {
        self.compute_ns
    }

    /// The program waits (`sleep`): simulated time passes, the machine's events run.
    pub fn sleep(&mut self, d: nearflash_sim::SimDuration) {
        self.m.advance(d);
    }

    /// Work on a VE core at a given CPI (the vector unit's element operations: `instructions`
    /// at one per cycle of `cpi`), charged like [`Ve::compute`].
    pub fn compute_at_cpi(&mut self, instructions: f64, cpi: f64) {
        let d = CoreSpec::new(self.core.clock_mhz, cpi).duration(instructions);
        self.compute_ns += d.as_ns();
        self.m.advance(d);
    }

    /// The program's own work: `instructions` on one VE core's scalar unit. The same charge
    /// on both paths.
    pub fn compute(&mut self, instructions: f64) {
        let d = self.core.duration(instructions);
        self.compute_ns += d.as_ns();
        self.m.advance(d);
    }
}

macro_rules! dispatch {
    ($self:ident, $method:ident ( $($arg:expr),* )) => {
        match &mut $self.path {
            Path::Direct(a) => a.$method(&mut $self.m, $($arg),*),
            Path::Redirected(r) => r.$method(&mut $self.m, $($arg),*),
        }
    };
}

impl Ve {
    pub fn open(&mut self, path: &str, mode: OpenMode) -> Result<Fd, FileError> {
        dispatch!(self, open(path, mode))
    }

    pub fn close(&mut self, fd: Fd) -> Result<(), FileError> {
        dispatch!(self, close(fd))
    }

    pub fn read_at(&mut self, fd: Fd, offset: u64, len: u64) -> Result<Vec<u8>, FileError> {
        dispatch!(self, read_at(fd, offset, len))
    }

    pub fn write_at(&mut self, fd: Fd, offset: u64, data: &[u8]) -> Result<(), FileError> {
        dispatch!(self, write_at(fd, offset, data))
    }

    /// `fdatasync(2)` on the redirected path, AccelFS's `Sync` on the direct one.
    pub fn sync(&mut self, fd: Fd) -> Result<(), FileError> {
        dispatch!(self, sync(fd))
    }

    pub fn size(&mut self, path: &str) -> Result<u64, FileError> {
        dispatch!(self, size(path))
    }

    pub fn exists(&mut self, path: &str) -> Result<bool, FileError> {
        dispatch!(self, exists(path))
    }

    pub fn children(&mut self, dir: &str) -> Result<Vec<String>, FileError> {
        dispatch!(self, children(dir))
    }

    pub fn mkdir(&mut self, path: &str) -> Result<(), FileError> {
        dispatch!(self, mkdir(path))
    }

    pub fn delete(&mut self, path: &str) -> Result<(), FileError> {
        dispatch!(self, delete(path))
    }

    pub fn rmdir(&mut self, path: &str) -> Result<(), FileError> {
        dispatch!(self, rmdir(path))
    }

    pub fn rename(&mut self, from: &str, to: &str) -> Result<(), FileError> {
        dispatch!(self, rename(from, to))
    }

    /// Makes everything durable, as an unmount does: AccelFS writes back every file's dirty
    /// chunks and metadata; then the file system commits (`sync(2)`).
    pub fn sync_all(&mut self) -> Result<(), FileError> {
        if let Path::Direct(a) = &mut self.path {
            a.sync_all(&mut self.m)?;
        }
        self.m
            .fs_run(nearflash_fs::Caller::ROOT, nearflash_fs::FsOp::Sync)?;
        Ok(())
    }

    /// Drops what the path caches of files no one has open, clean only (a benchmark's
    /// cold start): the file system's buffer cache — the host's page cache on the redirected
    /// path, AccelFS's metadata on the direct one — and AccelFS's closed, clean files with
    /// their chunk caches.
    pub fn drop_caches(&mut self) -> Result<(), FileError> {
        if let Path::Direct(a) = &mut self.path {
            a.forget_idle(&mut self.m, usize::MAX)?;
        }
        self.m
            .fs_run(nearflash_fs::Caller::ROOT, nearflash_fs::FsOp::DropCaches)?;
        Ok(())
    }
}
