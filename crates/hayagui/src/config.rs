//! Hayagui's parameters (the preset's `[hayagui]` table): the accelerator (an NEC SX-Aurora
//! TSUBASA Vector Engine), the two access paths' costs, AccelFS's geometry, and the
//! application's compute cost model. Every default cites its source (`../shared/HAYAGUI.md`
//! collects them) or says it is an assumption and why. Validated at the edge: an impossible
//! value is an error naming the field.

use nearflash_hw::compute::CoreSpec;
use nearflash_hw::link::LinkConfig;
use nearflash_nvme::NvmeConfig;
use serde::{Deserialize, Serialize};
use thiserror::Error;

#[derive(Debug, Error, PartialEq)]
#[error("hayagui.{field}: {reason}")]
pub struct ConfigError {
    pub field: &'static str,
    pub reason: String,
}

/// The accelerator: a Vector Engine Type 10B (seed 003 does not name the type; a Xeon Gold
/// 6126 host suggests an A300-class server, whose cards are 10Bs — HAYAGUI.md §1.6).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct VeConfig {
    /// 8 vector cores (VE Type 10B; SX-Aurora.github.io "VE HW overview", 2018-06-20).
    pub cores: u32,
    /// 1.4 GHz (Type 10B, same source).
    pub clock_mhz: f64,
    /// Cycles per instruction of the scalar processing unit (SPU). Assumption: 2.0. NEC's own
    /// HPCG post calls it "the slow scalar processor" (SX-Aurora.github.io, 2019-11-01); an
    /// out-of-order 4-issue core that runs branchy storage code (hash lookups, list walks,
    /// pointer chasing) well below its peak. No published CPI exists.
    pub scalar_cpi: f64,
    /// Bytes per second one core copies between buffers in HBM (AccelFS's cache ↔ the
    /// caller's buffer, LevelDB's memcpy): assumption 10,000 MB/s — the vector unit loads and
    /// stores at up to 400 GB/s per core (same source), but a library memcpy of kilobyte
    /// buffers is bound by its start-up and the scalar loop around it.
    pub memcpy_mb_s: f64,
    /// HBM2: 1.22 TB/s per chip (Type 10B; same source).
    pub hbm_mb_s: f64,
    /// Assumption: 120 ns loaded HBM access latency (a DRAM row miss plus the on-chip
    /// network), of the order of a DDR4 access.
    pub hbm_latency_ns: u64,
    /// The card's PCIe link: Gen3 ×16 (WikiChip, "A look at NEC's latest vector processor").
    pub link: LinkConfig,
}

impl Default for VeConfig {
    fn default() -> Self {
        VeConfig {
            cores: 8,
            clock_mhz: 1400.0,
            scalar_cpi: 2.0,
            memcpy_mb_s: 10_000.0,
            hbm_mb_s: 1_220_000.0,
            hbm_latency_ns: 120,
            link: LinkConfig {
                lanes: 16,
                ..LinkConfig::default()
            },
        }
    }
}

impl VeConfig {
    /// One core running scalar code.
    pub fn scalar_core(&self) -> CoreSpec {
        CoreSpec::new(self.clock_mhz, self.scalar_cpi)
    }
}

/// The VE↔host copy of a redirected call's buffer, by VEOS's system DMA (plain) or by the
/// accelerated-I/O library's user DMA over a huge-page buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CopyPath {
    /// VEOS 2.0.3 system-call offloading: arguments and buffers by system DMA.
    Veos,
    /// libsysve accelerated I/O (`VE_ACC_IO=1`).
    AcceleratedIo,
}

/// A copy's bandwidth against the record size: the readings of one thread's iozone
/// bandwidth at 1 MB and 16 MB records (HAYAGUI.md §1.5, read off SX-Aurora.github.io's
/// `accelio_iozone_{read,write}_bw.png`, ±10%). Between the two sizes the bandwidth is
/// interpolated linearly in log2(size); outside them it is held at the nearer reading.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CopyRates {
    /// Host → VE (a `read(2)`'s data), MB/s at a 1 MB and a 16 MB record.
    pub to_ve_mb_s: [f64; 2],
    /// VE → host (a `write(2)`'s data), MB/s at 1 MB and 16 MB.
    pub to_host_mb_s: [f64; 2],
}

impl CopyRates {
    /// Bandwidth (MB/s) of one copy of `bytes`.
    pub fn rate_mb_s(&self, to_ve: bool, bytes: u64) -> f64 {
        let [small, large] = if to_ve {
            self.to_ve_mb_s
        } else {
            self.to_host_mb_s
        };
        const SMALL: f64 = 1e6;
        const LARGE: f64 = 16e6;
        let b = bytes as f64;
        if b <= SMALL {
            return small;
        }
        if b >= LARGE {
            return large;
        }
        let f = (b / SMALL).log2() / (LARGE / SMALL).log2();
        small + (large - small) * f
    }

    /// Nanoseconds to copy `bytes` (rounded up).
    pub fn copy_ns(&self, to_ve: bool, bytes: u64) -> u64 {
        (bytes as f64 * 1e3 / self.rate_mb_s(to_ve, bytes)).ceil() as u64
    }
}

/// The redirected path: what a system call from the VE costs beyond the host's own work.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RedirectConfig {
    /// A call redirected from the VE to its pseudo process on the host and back, less the
    /// call's own work on the host: slide 4 of seed 003 labels 105 ns (native) and 42,748 ns
    /// (redirected) — HAYAGUI.md §1.2 reads them as the same call native and redirected — so
    /// 42,748 − 105 = 42,643 ns. Derived.
    pub call_overhead_ns: u64,
    /// Which copy engine moves the buffers.
    pub copy: CopyPath,
    /// VEOS 2.0.3, one thread: read ≈0.35 GB/s at 1 MB and ≈0.75 at 16 MB records; write
    /// ≈0.27 and ≈0.55 (HAYAGUI.md §1.5 table).
    pub veos: CopyRates,
    /// Accelerated I/O, one thread: read ≈2.5 and ≈2.4 GB/s; write ≈1.4 and ≈1.8 (same).
    pub accelerated_io: CopyRates,
}

impl Default for RedirectConfig {
    fn default() -> Self {
        RedirectConfig {
            call_overhead_ns: 42_748 - 105,
            copy: CopyPath::Veos,
            veos: CopyRates {
                to_ve_mb_s: [350.0, 750.0],
                to_host_mb_s: [270.0, 550.0],
            },
            accelerated_io: CopyRates {
                to_ve_mb_s: [2_500.0, 2_400.0],
                to_host_mb_s: [1_400.0, 1_800.0],
            },
        }
    }
}

impl RedirectConfig {
    pub fn rates(&self) -> &CopyRates {
        match self.copy {
            CopyPath::Veos => &self.veos,
            CopyPath::AcceleratedIo => &self.accelerated_io,
        }
    }
}

/// The host's file system and page cache on the redirected path (its NVMe driver is
/// `hayagui.nvme`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HostFsConfig {
    /// Page-cache capacity. Assumption: 2 GiB. The host has 96 GB (seed 003's testbed), so
    /// its page cache could hold every data set here; the cache holds real bytes in the
    /// simulator, so it is bounded to keep a run's memory in reach of a small machine. Reads
    /// that matter start cold (the benchmarks drop the cache), so the bound changes no
    /// figure whose working set fits 2 GiB.
    pub page_cache_bytes: u64,
    /// CPU time per file-system call on the host (VFS, ext4): assumption 2 µs, the shared
    /// file system's default (crates/fs: `fs.op_cpu_ns`).
    pub op_cpu_ns: u64,
    /// Host memcpy per 4 KiB between the page cache and the pseudo process's buffer:
    /// assumption 400 ns (≈10 GB/s, the shared file system's default).
    pub copy_ns_per_4k: u64,
    /// Linux's read-ahead for buffered reads, the largest window: `read_ahead_kb` = 128, the
    /// kernel's default (`VM_READAHEAD_PAGES` = `SZ_128K / PAGE_SIZE`, include/linux/mm.h;
    /// Documentation/ABI/stable/sysfs-block). The on-demand windows (mm/readahead.c) are
    /// the shared file system's (`fs.read_ahead_bytes`, crates/fs `readahead`).
    pub read_ahead_bytes: u64,
}

impl Default for HostFsConfig {
    fn default() -> Self {
        HostFsConfig {
            page_cache_bytes: 2 << 30,
            op_cpu_ns: 2_000,
            copy_ns_per_4k: 400,
            read_ahead_bytes: 128 << 10,
        }
    }
}

/// AccelFS ("Vefs", `liva/accelfs`) as its code sets it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AccelFsConfig {
    /// `kChunkSize` = 8 KiB (`_misc.h`).
    pub chunk_bytes: u64,
    /// Chunks each file caches: 256 (2 MiB); 4096 with `LARGE_CACHE` (`cache_container.h`).
    pub cache_chunks_per_file: u32,
    /// Cache misses are read in physically contiguous runs of at most 2 MiB per NVMe command
    /// (`Vefs::Read`), the direct engine's largest DMA buffer (`liva/sxaurora_unvme`).
    pub run_bytes_max: u64,
    /// Entries of the direct engine's one I/O queue: 256 (`qsize = 256`, `unvme_core.c`).
    pub queue_entries: u32,
    /// Instructions AccelFS runs per call on the VE's scalar core (name lookup, the chunk
    /// cache's hash probes, bookkeeping). Assumption: 2,000.
    pub call_instructions: u64,
    /// Instructions the direct engine runs per NVMe command (build the SQE, the PRP list,
    /// ring the doorbell, reap the CQE). Assumption: 1,000 — unvme's submit and poll paths
    /// are a few hundred lines of straight-line code.
    pub command_instructions: u64,
    /// File-system operations on the VE (create, rename, allocation — the shared file
    /// system's metadata engine runs on the VE's scalar core): CPU time per operation.
    /// Assumption: 4 µs, the host's 2 µs (`hayagui.host_fs.op_cpu_ns`) on a core of about
    /// half the speed (1.4 GHz at CPI 2 against 2.6 GHz).
    pub fs_op_cpu_ns: u64,
}

impl Default for AccelFsConfig {
    fn default() -> Self {
        AccelFsConfig {
            chunk_bytes: 8192,
            cache_chunks_per_file: 256,
            run_bytes_max: 2 << 20,
            queue_entries: 256,
            call_instructions: 2_000,
            command_instructions: 1_000,
            fs_op_cpu_ns: 4_000,
        }
    }
}

/// LevelDB's own compute, charged on a VE core the same way on both paths (the storage
/// calls it makes are charged by the path that serves them). No figure is published for
/// LevelDB on the VE; these are assumptions of the order of LevelDB's work on a scalar core:
/// db_bench's fillseq runs ≈2 µs per 100-byte put on a ≈3 GHz x86 at an IPC near 2 (LevelDB's
/// own published db_bench output), i.e. ≈10k instructions per operation including its file
/// work.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LevelDbCostConfig {
    /// Instructions per database call (a put, a get, an iterator step): memtable skip-list
    /// search, batch encoding, key comparisons. Assumption: 5,000.
    pub op_instructions: u64,
    /// Instructions per byte of key and value a call moves (copies into the batch and the
    /// memtable, comparisons). Assumption: 20.
    pub instructions_per_op_byte: f64,
    /// Instructions per byte LevelDB reads or writes through its Env (CRC32C — the VE has
    /// no CRC instruction, so a table-driven loop — Snappy, block parsing, merging in
    /// compaction). Assumption: 10.
    pub instructions_per_io_byte: f64,
    /// LevelDB's user-space write buffer per writable file: 64 KiB on both paths — Hayagui's
    /// VE Env (`VE_OPT`, `helpers/veenv/veenv.cc`) and LevelDB's POSIX Env
    /// (`kWritableFileBufferSize = 65536`, `util/env_posix.cc`).
    pub write_buffer_bytes: u64,
}

impl Default for LevelDbCostConfig {
    fn default() -> Self {
        LevelDbCostConfig {
            op_instructions: 5_000,
            instructions_per_op_byte: 20.0,
            instructions_per_io_byte: 10.0,
            write_buffer_bytes: 64 << 10,
        }
    }
}

/// The genome application's compute (`nearflash-genome`'s per-phase work counts), charged on
/// a VE core the same way on both paths: parsing is scalar; k-mer hashing, the index's
/// prefix scan, seed voting and Hamming verification are vectorizable loops, charged at the
/// vector unit's throughput. Assumptions, with the reasoning beside each.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GenomeCostConfig {
    /// Scalar instructions per FASTA byte parsed (a byte-at-a-time state machine: load,
    /// compare, branch, store). Assumption: 8.
    pub parse_instructions_per_byte: f64,
    /// Vector element operations per k-mer hashed (2-bit packing and a shift/or per base of
    /// a rolling k-mer, the count or scatter). Assumption: 4.
    pub ops_per_kmer: f64,
    /// Per offset-table entry of the prefix scan, per index byte (de)serialised, per vote,
    /// per base compared: element operations. Assumption: 1 each.
    pub ops_per_element: f64,
    /// Element operations the vector unit retires per cycle: 32, one vector pipe's 32 lanes
    /// (the VE core's 192 DP flop/cycle are 3 FMA pipes × 32 lanes × 2; SX-Aurora.github.io
    /// "VE HW overview").
    pub vector_ops_per_cycle: f64,
    /// The application's read and write size for the index's arrays, bytes. Assumption:
    /// 1 MiB — the paper does not say; `fwrite`/`fread` of a whole array bypass the stream
    /// buffer, and a larger call only lowers the redirected path's cost.
    pub chunk_bytes: u32,
    /// The application reads its FASTA files line by line through the C library's stream
    /// (`fgets`), so each read call is one refill of the stream's buffer: 4096 bytes. The
    /// VE's C library is glibc: NEC's `glibc-ve` 2.21 (veos-sxarr-NEC/glibc-ve, `glibc.spec`)
    /// installs in `/opt/nec/ve/`, the prefix Hayagui's libraries are built against
    /// (liva/accelfs `build.sh`: `clang++ --target=ve-linux`, installed into
    /// `/opt/nec/ve/lib`); NEC's musl port, whose `BUFSIZ` is 1024, sits apart in
    /// `/opt/nec/ve/musl` behind its own `musl-ncc` (veos-sxarr-NEC/musl-libc-ve,
    /// `musl.spec`, 2017). glibc's `_IO_file_doallocate` (libio/filedoalloc.c) sizes the
    /// buffer to the file's `st_blksize` when positive (later releases: and below `BUFSIZ`
    /// = 8192); VEOS answers `fstat` from the host, whose ext4 reports 4096.
    pub fasta_buffer_bytes: u32,
}

impl Default for GenomeCostConfig {
    fn default() -> Self {
        GenomeCostConfig {
            parse_instructions_per_byte: 8.0,
            ops_per_kmer: 4.0,
            ops_per_element: 1.0,
            vector_ops_per_cycle: 32.0,
            chunk_bytes: 1 << 20,
            fasta_buffer_bytes: 4096,
        }
    }
}

/// The whole `[hayagui]` table.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HayaguiConfig {
    /// The SSD's NVMe controller and PCIe link as the host's kernel driver sets them up (the
    /// redirected path); the direct path keeps the controller and link and replaces the
    /// queues (`files::nvme_for`). The NVMe crate's cited defaults: Gen3 ×4 — the 970 EVO is
    /// a PCIe 3.0 ×4 drive (Samsung datasheet, HAYAGUI.md §1.7) — 1024-entry queues,
    /// interrupts.
    pub nvme: NvmeConfig,
    pub ve: VeConfig,
    pub redirect: RedirectConfig,
    pub host_fs: HostFsConfig,
    pub accelfs: AccelFsConfig,
    pub leveldb: LevelDbCostConfig,
    pub genome: GenomeCostConfig,
}

impl HayaguiConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        let err = |field: &'static str, reason: String| Err(ConfigError { field, reason });
        let positive = |field: &'static str, v: f64| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                err(field, format!("must be positive and finite, got {v}"))
            }
        };
        self.nvme.validate().map_err(|e| ConfigError {
            field: "nvme",
            reason: e.to_string(),
        })?;
        if self.ve.cores == 0 {
            return err("ve.cores", "must be at least 1".into());
        }
        positive("ve.clock_mhz", self.ve.clock_mhz)?;
        positive("ve.scalar_cpi", self.ve.scalar_cpi)?;
        positive("ve.memcpy_mb_s", self.ve.memcpy_mb_s)?;
        positive("ve.hbm_mb_s", self.ve.hbm_mb_s)?;
        self.ve.link.validate().map_err(|e| ConfigError {
            field: "ve.link",
            reason: e.to_string(),
        })?;
        for (name, r) in [
            ("redirect.veos", &self.redirect.veos),
            ("redirect.accelerated_io", &self.redirect.accelerated_io),
        ] {
            for v in r.to_ve_mb_s.iter().chain(&r.to_host_mb_s) {
                positive(name, *v)?;
            }
        }
        if self.host_fs.page_cache_bytes < 1 << 20 {
            return err("host_fs.page_cache_bytes", "must be at least 1 MiB".into());
        }
        let a = &self.accelfs;
        if a.chunk_bytes == 0 || !a.chunk_bytes.is_multiple_of(4096) {
            return err(
                "accelfs.chunk_bytes",
                format!("must be a positive multiple of 4096, got {}", a.chunk_bytes),
            );
        }
        if a.cache_chunks_per_file == 0 {
            return err("accelfs.cache_chunks_per_file", "must be at least 1".into());
        }
        if a.run_bytes_max < a.chunk_bytes || !a.run_bytes_max.is_multiple_of(a.chunk_bytes) {
            return err(
                "accelfs.run_bytes_max",
                format!(
                    "must be a multiple of accelfs.chunk_bytes ({}), got {}",
                    a.chunk_bytes, a.run_bytes_max
                ),
            );
        }
        if !(self.leveldb.instructions_per_op_byte >= 0.0
            && self.leveldb.instructions_per_io_byte >= 0.0)
        {
            return err("leveldb", "instruction costs must not be negative".into());
        }
        let g = &self.genome;
        for (field, v) in [
            (
                "genome.parse_instructions_per_byte",
                g.parse_instructions_per_byte,
            ),
            ("genome.ops_per_kmer", g.ops_per_kmer),
            ("genome.ops_per_element", g.ops_per_element),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return err(field, format!("must be finite and not negative, got {v}"));
            }
        }
        positive("genome.vector_ops_per_cycle", g.vector_ops_per_cycle)?;
        if g.chunk_bytes == 0 {
            return err("genome.chunk_bytes", "must be at least 1".into());
        }
        if g.fasta_buffer_bytes == 0 {
            return err("genome.fasta_buffer_bytes", "must be at least 1".into());
        }
        if self.leveldb.write_buffer_bytes == 0 {
            return err("leveldb.write_buffer_bytes", "must be at least 1".into());
        }
        if !(2..=65_536).contains(&a.queue_entries) {
            return err(
                "accelfs.queue_entries",
                format!("must be 2..=65536, got {}", a.queue_entries),
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_bad_fields_are_named() {
        HayaguiConfig::default().validate().unwrap();
        let mut c = HayaguiConfig::default();
        c.accelfs.chunk_bytes = 5000;
        assert!(c
            .validate()
            .unwrap_err()
            .to_string()
            .contains("accelfs.chunk_bytes"));
        let mut c = HayaguiConfig::default();
        c.redirect.veos.to_ve_mb_s[0] = 0.0;
        assert!(c
            .validate()
            .unwrap_err()
            .to_string()
            .contains("redirect.veos"));
    }

    #[test]
    fn copy_bandwidth_follows_the_chart_readings() {
        let r = RedirectConfig::default();
        let v = &r.veos;
        assert_eq!(v.rate_mb_s(true, 4096), 350.0);
        assert_eq!(v.rate_mb_s(true, 16_000_000), 750.0);
        assert_eq!(v.rate_mb_s(true, 64_000_000), 750.0);
        // 4 MB is half-way between 1 and 16 MB in log2.
        assert!((v.rate_mb_s(true, 4_000_000) - 550.0).abs() < 1e-9);
        // 1 MB at 350 MB/s: 2,857,143 ns.
        assert_eq!(v.copy_ns(true, 1_000_000), 2_857_143);
    }
}
