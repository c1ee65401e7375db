//! What fio's options mean on the simulated drive: the table of options nearflash models,
//! accepts and ignores (host-only), or refuses, and the typed job built from a section's
//! options (its `[global]` ones first). An option neither fio nor nearflash knows, or one
//! nearflash does not model, is an error naming it and its line — never silently dropped.

use crate::error::{FioError, Location};
use crate::jobfile::{Entry, Section};
use crate::value::{self, SizeOrShare, TimeUnit};

/// Reads, writes, trims — fio's data directions, in its order.
pub const DIRECTIONS: [&str; 3] = ["read", "write", "trim"];

/// What fio's `rw` asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rw {
    Read,
    Write,
    Trim,
    RandRead,
    RandWrite,
    RandTrim,
    /// Sequential mixed reads and writes (`rw`, `readwrite`).
    ReadWrite,
    RandReadWrite,
}

impl Rw {
    fn parse(text: &str) -> Option<Rw> {
        Some(match text {
            "read" => Rw::Read,
            "write" => Rw::Write,
            "trim" => Rw::Trim,
            "randread" => Rw::RandRead,
            "randwrite" => Rw::RandWrite,
            "randtrim" => Rw::RandTrim,
            "rw" | "readwrite" => Rw::ReadWrite,
            "randrw" => Rw::RandReadWrite,
            _ => return None,
        })
    }

    pub fn random(self) -> bool {
        matches!(
            self,
            Rw::RandRead | Rw::RandWrite | Rw::RandTrim | Rw::RandReadWrite
        )
    }

    /// Which directions the job issues.
    pub fn directions(self) -> [bool; 3] {
        match self {
            Rw::Read | Rw::RandRead => [true, false, false],
            Rw::Write | Rw::RandWrite => [false, true, false],
            Rw::Trim | Rw::RandTrim => [false, false, true],
            Rw::ReadWrite | Rw::RandReadWrite => [true, true, false],
        }
    }
}

/// How a direction picks its request sizes.
#[derive(Clone, Debug, PartialEq)]
pub enum BlockSizes {
    Fixed(u64),
    /// Uniform over [min, max] in steps of the smaller of min and the alignment.
    Range(u64, u64),
    /// Sizes with their percentages (adding up to 100).
    Split(Vec<(u64, u32)>),
}

impl BlockSizes {
    pub fn min(&self) -> u64 {
        match self {
            BlockSizes::Fixed(b) | BlockSizes::Range(b, _) => *b,
            BlockSizes::Split(v) => v.iter().map(|&(b, _)| b).min().unwrap_or(0),
        }
    }

    pub fn max(&self) -> u64 {
        match self {
            BlockSizes::Fixed(b) | BlockSizes::Range(_, b) => *b,
            BlockSizes::Split(v) => v.iter().map(|&(b, _)| b).max().unwrap_or(0),
        }
    }

    fn sizes(&self) -> Vec<u64> {
        match self {
            BlockSizes::Fixed(b) => vec![*b],
            BlockSizes::Range(a, b) => vec![*a, *b],
            BlockSizes::Split(v) => v.iter().map(|&(b, _)| b).collect(),
        }
    }
}

/// fio's `random_distribution`.
#[derive(Clone, Debug, PartialEq)]
pub enum Distribution {
    Uniform,
    Zipf(f64),
    Pareto(f64),
    /// Standard deviation as a percentage of the region.
    Normal(f64),
    /// (access %, region %) zones in order.
    Zoned(Vec<(u32, u32)>),
}

/// fio's `verify` methods nearflash computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VerifyKind {
    Crc32c,
    Md5,
}

impl VerifyKind {
    pub fn name(self) -> &'static str {
        match self {
            VerifyKind::Crc32c => "crc32c",
            VerifyKind::Md5 => "md5",
        }
    }
}

/// One job as the options describe it (before `numjobs` clones it).
#[derive(Clone, Debug)]
pub struct JobSpec {
    pub name: String,
    pub description: Option<String>,
    pub at: Location,
    pub rw: Rw,
    /// Bytes skipped after each sequential request (`rw=read:4k`).
    pub seq_skip_bytes: u64,
    pub rwmixread: u32,
    pub bs: [BlockSizes; 3],
    /// Offsets are multiples of this (default: the direction's smallest block size).
    pub blockalign: [Option<u64>; 3],
    pub iodepth: u32,
    pub numjobs: u32,
    pub size: Option<SizeOrShare>,
    pub offset: SizeOrShare,
    pub offset_increment: u64,
    pub io_size: Option<u64>,
    pub number_ios: Option<u64>,
    pub loops: u32,
    pub runtime_ns: Option<u64>,
    pub time_based: bool,
    pub ramp_time_ns: u64,
    pub startdelay_ns: u64,
    pub thinktime_ns: u64,
    pub thinktime_blocks: u32,
    pub rate_bytes_s: [Option<u64>; 3],
    pub rate_iops: [Option<u64>; 3],
    pub randrepeat: bool,
    pub randseed: Option<u64>,
    pub distribution: Distribution,
    pub percentage_random: [u32; 3],
    pub norandommap: bool,
    /// A FLUSH after every this many writes (fsync / fdatasync); 0: never.
    pub fsync_every: u32,
    pub end_fsync: bool,
    pub direct: bool,
    /// Writes with Force Unit Access (fio's `sync=1`, O_SYNC on a block device).
    pub sync: bool,
    pub verify: Option<VerifyKind>,
    pub do_verify: bool,
    pub stonewall: bool,
    pub group_reporting: bool,
    pub write_iolog: Option<String>,
    /// `read_iolog`: the logs to replay (clone i replays file i mod their count).
    pub read_iolog: Vec<String>,
    pub replay_no_stall: bool,
    /// Percent of the log's rate (fio's default 100).
    pub replay_time_scale: u32,
    pub replay_redirect: Option<String>,
    pub replay_align: Option<u64>,
    /// Offsets are divided by this (fio's default 1).
    pub replay_scale: u64,
    pub replay_skip: crate::replay::Skip,
    /// `fdp=1`: writes carry a Flexible Data Placement directive.
    pub fdp: bool,
    /// `fdp_pli`: indices into the drive's reclaim unit handle list (Reclaim Unit Handle
    /// Status order) the writes use; empty: every handle.
    pub fdp_pli: Vec<u16>,
    /// `fdp_pli_select=random` (fio's default is `roundrobin`).
    pub fdp_pli_random: bool,
    /// `zonemode=zbd`: the job runs on the zoned drive through fio's zone logic
    /// (`crate::zbd`): writes at the write pointers, reads below them.
    pub zbd: bool,
    /// `zonesize`: must equal the drive's zone size (checked when the drive is known).
    pub zonesize: Option<u64>,
    /// `max_open_zones`: zones written at once by all jobs; `None` or 0: the drive's limit.
    pub max_open_zones: Option<u32>,
    /// `zone_reset_threshold`: share of the region's bytes below write pointers past which
    /// zones are reset every `1 / zone_reset_frequency` writes.
    pub zone_reset_threshold: f64,
    /// `zone_reset_frequency`: 0 (default) never resets early.
    pub zone_reset_frequency: f64,
    /// `read_beyond_wp`: reads go where they are drawn, past write pointers too.
    pub read_beyond_wp: bool,
    pub bwavgtime_ns: u64,
    pub iopsavgtime_ns: u64,
    pub kb_base: u64,
    /// The section's own options as written (fio's `job options`).
    pub options: Vec<(String, String)>,
    /// Host-only options accepted and ignored, with where they were.
    pub ignored: Vec<(String, Location)>,
}

/// How nearflash treats one of fio's options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Modelled on the simulated drive.
    Supported,
    /// Accepted and reported as ignored: it concerns only the host (engine, files, CPUs,
    /// logs) and changes nothing the drive sees.
    Ignored,
    /// Refused with an error: modelling it is left for later.
    Unsupported(&'static str),
}

/// One row of the option table (docs/cli.md holds the same table for users).
pub struct OptionDef {
    pub names: &'static [&'static str],
    pub status: Status,
    pub meaning: &'static str,
}

use Status::{Ignored, Supported, Unsupported};

macro_rules! opts {
    ($( [$($n:literal),+] $s:expr, $m:literal; )*) => {
        &[ $( OptionDef { names: &[$($n),+], status: $s, meaning: $m } ),* ]
    };
}

/// Most `fdp_pli` indices fio takes (`FIO_MAX_DP_IDS`, fio's `dataplacement.h`).
pub const FDP_PLI_MAX: usize = 16;

/// Every option nearflash knows.
pub const TABLE: &[OptionDef] = opts! {
    ["zonemode"] Supported, "none (default) or zbd: the job runs on the zoned drive (zns.enabled=true): writes at the zones' write pointers, reads below them (strided is refused)";
    ["zonesize"] Supported, "with zonemode=zbd: the zone size, which must equal the drive's (default: the drive's)";
    ["max_open_zones"] Supported, "with zonemode=zbd: zones all jobs write at once (default and most: the drive's max open zones; 0: the drive's)";
    ["zone_reset_threshold"] Supported, "with zonemode=zbd: share (0-1) of the region's bytes below write pointers past which zones are reset as zone_reset_frequency says";
    ["zone_reset_frequency"] Supported, "with zonemode=zbd: past the threshold, the zone a write goes to is reset first every 1/frequency writes (0, default: never)";
    ["read_beyond_wp"] Supported, "with zonemode=zbd: 1 reads where drawn, past write pointers too (default 0: reads stay below them)";
    ["fdp"] Supported, "1: writes carry a Data Placement directive (Flexible Data Placement: the preset needs fdp.enabled=true)";
    ["fdp_pli"] Supported, "indices into the drive's reclaim unit handle list the writes use, comma-separated, at most 16 (default: every handle)";
    ["fdp_pli_select"] Supported, "roundrobin (default): each write takes the next listed handle; random: uniformly at random (the job's own stream)";
    ["name"] Supported, "the job's name (default: the section's)";
    ["description"] Supported, "shown in the report";
    ["rw", "readwrite"] Supported, "read, write, trim, randread, randwrite, randtrim, rw/readwrite, randrw; `:N` skips N bytes after each sequential request";
    ["rwmixread"] Supported, "share of reads in a mixed job, percent (default 50)";
    ["rwmixwrite"] Supported, "share of writes in a mixed job, percent";
    ["bs", "blocksize"] Supported, "request size, per direction (`4k,8k`)";
    ["bsrange", "blocksize_range"] Supported, "request sizes uniform over a range, per direction";
    ["bssplit"] Supported, "request sizes with their shares (`4k/50:64k/50`), per direction";
    ["blockalign", "ba"] Supported, "offset alignment, per direction (default: the smallest block size)";
    ["iodepth"] Supported, "requests the job keeps in flight";
    ["numjobs"] Supported, "clones of the job, each its own submitter and RNG stream";
    ["size"] Supported, "the job's region of the device (bytes or a % of it; default: all)";
    ["offset"] Supported, "start of the region (bytes or a % of the device)";
    ["offset_increment"] Supported, "each clone's region starts this much after the previous clone's";
    ["io_size", "io_limit"] Supported, "bytes to transfer (default: size)";
    ["number_ios"] Supported, "stop after this many requests";
    ["loops"] Supported, "repeat the job's I/O this many times";
    ["runtime", "timeout"] Supported, "stop after this much simulated time (default unit s)";
    ["time_based"] Supported, "run for the whole runtime, wrapping over the region";
    ["ramp_time"] Supported, "simulated time run before the figures start (default unit s)";
    ["startdelay"] Supported, "simulated time before the job starts (default unit s)";
    ["thinktime"] Supported, "after thinktime_blocks requests, drain and idle this long (default unit us)";
    ["thinktime_blocks"] Supported, "requests between think times (default 1)";
    ["rate"] Supported, "bandwidth cap per direction, bytes/s of simulated time";
    ["rate_iops"] Supported, "IOPS cap per direction, in simulated time";
    ["randrepeat"] Supported, "repeatable random offsets (default 1): streams from --seed, or randseed";
    ["randseed"] Supported, "seed of the job's random offsets, independent of --seed";
    ["random_distribution"] Supported, "random, zipf:θ, pareto:h, normal:σ%, zoned:a/r:...";
    ["percentage_random"] Supported, "share of random offsets in a random job, per direction";
    ["norandommap"] Supported, "random offsets with replacement (default: each block once per pass)";
    ["fsync"] Supported, "an NVMe FLUSH after every N writes (waits for the writes first)";
    ["fdatasync"] Supported, "as fsync: an NVMe FLUSH after every N writes";
    ["end_fsync"] Supported, "a FLUSH when the job ends";
    ["direct"] Supported, "1: as fio's O_DIRECT; 0 is taken the same (no host page cache on this path; noted)";
    ["buffered"] Supported, "the inverse of direct";
    ["sync"] Supported, "1: every write with Force Unit Access";
    ["verify"] Supported, "crc32c (crc32c-intel), md5 or 0/null: after writing, read every block back and compare digests (real data in functional fidelity)";
    ["do_verify"] Supported, "run the verify pass (default 1 when verify is set)";
    ["stonewall", "wait_for_previous"] Supported, "start a new group after the previous jobs finish";
    ["group_reporting"] Supported, "report each group as one job";
    ["write_iolog"] Supported, "write the job's requests as a fio iolog v3 (µs timestamps in simulated time since the job's group started), as fio ≥ 3.31 writes";
    ["read_iolog"] Supported, "replay an iolog (v2 or v3) instead of generating requests; `a:b` gives clone i file i mod 2; timed: each request no sooner than its gap after the previous issue, within iodepth";
    ["replay_no_stall"] Supported, "replay the log in order as fast as iodepth allows, ignoring its timestamps";
    ["replay_time_scale"] Supported, "percent of the log's rate (50: gaps doubled; default 100)";
    ["replay_redirect"] Supported, "replay every file the log names onto the simulated drive (without it a second file is an error naming its line)";
    ["replay_align"] Supported, "round each replayed offset down to this power of two";
    ["replay_scale"] Supported, "divide each replayed offset by this (default 1)";
    ["replay_skip"] Supported, "leave out read, write, trim or sync entries (comma-separated)";
    ["read_iolog_chunked"] Ignored, "the log is always read as a bounded stream";
    ["bwavgtime"] Supported, "bandwidth sample window (default 500 ms of simulated time)";
    ["iopsavgtime"] Supported, "IOPS sample window (default 500 ms of simulated time)";
    ["kb_base"] Supported, "1024 (default) or 1000 for k/m/g suffixes";
    ["ioengine"] Ignored, "host I/O engine: requests go to the simulated drive";
    ["filename", "directory", "filename_format"] Ignored, "the target is the simulated drive";
    ["thread"] Ignored, "threads or processes: host only";
    ["invalidate"] Ignored, "host page cache: not on this path";
    ["iodepth_batch", "iodepth_batch_submit", "iodepth_batch_complete", "iodepth_batch_complete_min", "iodepth_batch_complete_max", "iodepth_low"] Ignored, "host submission batching: requests are submitted one by one";
    ["cpus_allowed", "cpumask", "cpus_allowed_policy", "numa_cpu_nodes", "numa_mem_policy", "nice", "prio", "prioclass"] Ignored, "host CPU placement and priority";
    ["gtod_reduce", "clocksource", "disable_lat", "disable_clat", "disable_slat", "disable_bw_measurement", "clat_percentiles", "lat_percentiles", "slat_percentiles"] Ignored, "host time keeping: every figure comes from simulated time";
    ["write_bw_log", "write_lat_log", "write_iops_log", "write_hist_log", "log_avg_msec", "log_hist_msec", "per_job_logs", "log_offset"] Ignored, "fio's log files are not written";
    ["exitall", "exitall_on_error", "create_on_open", "allow_mounted_write", "lockmem", "fadvise_hint", "overwrite", "unlink", "refill_buffers", "scramble_buffers", "buffer_compress_percentage", "zero_buffers", "group_id"] Ignored, "host-side file and buffer handling";
    ["merge_blktrace_file", "merge_blktrace_scalars", "merge_blktrace_iters"] Unsupported("merging blktraces is not modelled: replay one iolog per job"), "";
    ["verify_backlog", "verify_backlog_batch", "verify_async", "verify_interval", "verify_offset", "verify_pattern", "verify_only", "experimental_verify"] Unsupported("verify runs as one pass after the writes; interleaved or partial verification is not modelled"), "";
    ["zonerange", "zoneskip", "zonecapacity", "job_max_open_zones", "ignore_zone_limits", "write_zone_remainder", "recover_zbd_write_error"] Unsupported("zonemode=strided and these zbd refinements are not modelled; zonemode=zbd takes the zone geometry and limits from the drive (docs/zns.md)"), "";
    ["unified_rw_reporting"] Unsupported("mixed-direction reporting is not produced"), "";
    ["new_group"] Unsupported("a reporting group apart from the run groups is not modelled; stonewall starts a group"), "";
    ["rate_process", "rate_min", "rate_iops_min", "rate_cycle", "rate_ignore_thinktime"] Unsupported("only fio's default linear rate process is modelled"), "";
    ["steadystate", "ss", "ss_dur", "ss_ramp"] Unsupported("steady-state detection is not modelled"), "";
    ["latency_target", "latency_window", "latency_percentile", "latency_run", "max_latency"] Unsupported("latency-target depth search is not modelled"), "";
    ["rwmixcycle", "trim_percentage", "trim_backlog", "trim_verify_zero", "continue_on_error", "fill_device", "fill_fs", "size_increment", "file_service_type", "nrfiles", "openfiles", "random_generator", "io_submit_mode", "serialize_overlap", "io_size_increment"] Unsupported("not modelled"), "";
};

pub fn find(key: &str) -> Option<&'static OptionDef> {
    TABLE.iter().find(|d| d.names.contains(&key))
}

fn canonical(key: &str) -> Option<&'static str> {
    find(key).map(|d| d.names[0])
}

impl JobSpec {
    fn defaults(name: &str, at: Location) -> JobSpec {
        JobSpec {
            name: name.to_string(),
            description: None,
            at,
            rw: Rw::Read,
            seq_skip_bytes: 0,
            rwmixread: 50,
            bs: [
                BlockSizes::Fixed(4096),
                BlockSizes::Fixed(4096),
                BlockSizes::Fixed(4096),
            ],
            blockalign: [None; 3],
            iodepth: 1,
            numjobs: 1,
            size: None,
            offset: SizeOrShare::Bytes(0),
            offset_increment: 0,
            io_size: None,
            number_ios: None,
            loops: 1,
            runtime_ns: None,
            time_based: false,
            ramp_time_ns: 0,
            startdelay_ns: 0,
            thinktime_ns: 0,
            thinktime_blocks: 1,
            rate_bytes_s: [None; 3],
            rate_iops: [None; 3],
            randrepeat: true,
            randseed: None,
            distribution: Distribution::Uniform,
            percentage_random: [100; 3],
            norandommap: false,
            fsync_every: 0,
            end_fsync: false,
            direct: false,
            sync: false,
            verify: None,
            do_verify: true,
            stonewall: false,
            group_reporting: false,
            write_iolog: None,
            read_iolog: Vec::new(),
            replay_no_stall: false,
            // fio's replay_time_scale and replay_scale default to 100 and 1 (options.c).
            replay_time_scale: 100,
            replay_redirect: None,
            replay_align: None,
            replay_scale: 1,
            replay_skip: crate::replay::Skip::default(),
            fdp: false,
            fdp_pli: Vec::new(),
            fdp_pli_random: false,
            zbd: false,
            zonesize: None,
            max_open_zones: None,
            // fio's zone_reset_threshold and zone_reset_frequency default to 0 (options.c).
            zone_reset_threshold: 0.0,
            zone_reset_frequency: 0.0,
            read_beyond_wp: false,
            // fio's bwavgtime and iopsavgtime default to 500 ms (HOWTO).
            bwavgtime_ns: 500_000_000,
            iopsavgtime_ns: 500_000_000,
            kb_base: 1024,
            options: Vec::new(),
            ignored: Vec::new(),
        }
    }

    /// Builds the job of `section`: its globals, then its own options, in order.
    pub fn from_section(section: &Section) -> Result<JobSpec, FioError> {
        let mut job = JobSpec::defaults(&section.name, section.at.clone());
        // kb_base changes how every size reads, wherever it stands.
        for e in section.globals.iter().chain(&section.entries) {
            if e.key == "kb_base" {
                job.apply(e)?;
            }
        }
        for e in &section.globals {
            job.apply(e)?;
        }
        for e in &section.entries {
            job.apply(e)?;
            job.options
                .push((e.key.clone(), e.value.clone().unwrap_or_default()));
        }
        job.check()?;
        Ok(job)
    }

    /// Applies one option: refuses what nearflash does not model, records what it ignores,
    /// and hands a supported option's value to the setter of its concept.
    fn apply(&mut self, e: &Entry) -> Result<(), FioError> {
        let def = find(&e.key).ok_or_else(|| FioError::Unknown {
            at: e.at.clone(),
            option: e.key.clone(),
        })?;
        match def.status {
            Unsupported(reason) => {
                return Err(FioError::Unsupported {
                    at: e.at.clone(),
                    option: e.key.clone(),
                    reason,
                })
            }
            Ignored => {
                if !self.ignored.iter().any(|(k, _)| *k == e.key) {
                    self.ignored.push((e.key.clone(), e.at.clone()));
                }
                return Ok(());
            }
            Supported => {}
        }
        let text: &str = match (&e.value, takes_bare_flag(def.names[0])) {
            (Some(v), _) => v,
            (None, true) => "1",
            (None, false) => {
                return Err(FioError::Value {
                    at: e.at.clone(),
                    option: e.key.clone(),
                    reason: "needs a value (key=value)".into(),
                })
            }
        };
        let arg = Arg {
            entry: e,
            text,
            kb_base: self.kb_base,
        };
        let name = canonical(&e.key).expect("found above");
        let handled = self.set_pattern(name, &arg)?
            || self.set_region(name, &arg)?
            || self.set_timing(name, &arg)?
            || self.set_randomness(name, &arg)?
            || self.set_durability(name, &arg)?
            || self.set_reporting(name, &arg)?
            || self.set_iolog(name, &arg)?
            || self.set_placement(name, &arg)?;
        if !handled {
            unreachable!("supported option {name} without a handler");
        }
        Ok(())
    }

    /// Sets what the job issues: its name, direction mix, block sizes and queue depth.
    fn set_pattern(&mut self, name: &str, a: &Arg) -> Result<bool, FioError> {
        let (v, kb) = (a.text, a.kb_base);
        match name {
            "name" => self.name = v.to_string(),
            "description" => self.description = Some(v.to_string()),
            "rw" => {
                let (mode, skip) = match v.split_once(':') {
                    Some((m, s)) => (m, value::size(s, kb).map_err(|r| a.bad(r))?),
                    None => (v, 0),
                };
                self.rw = Rw::parse(mode).ok_or_else(|| {
                    a.bad(format!(
                        "'{mode}' is not a mode nearflash runs (read, write, trim, randread, \
                         randwrite, randtrim, rw, readwrite, randrw)"
                    ))
                })?;
                self.seq_skip_bytes = skip;
            }
            "rwmixread" | "rwmixwrite" => {
                let p = a.num32()?;
                if p > 100 {
                    return Err(a.bad(format!("{p} is not a percentage")));
                }
                self.rwmixread = if a.entry.key == "rwmixread" {
                    p
                } else {
                    100 - p
                };
            }
            "bs" => {
                self.bs = value::per_direction(v, self.bs.clone(), |f| {
                    value::size(f, kb).map(BlockSizes::Fixed)
                })
                .map_err(|r| a.bad(r))?
            }
            "bsrange" => {
                self.bs = value::per_direction(v, self.bs.clone(), |f| {
                    value::size_range(f, kb).map(|(min, max)| BlockSizes::Range(min, max))
                })
                .map_err(|r| a.bad(r))?
            }
            "bssplit" => {
                self.bs = value::per_direction(v, self.bs.clone(), |f| {
                    value::block_split(f, kb).map(BlockSizes::Split)
                })
                .map_err(|r| a.bad(r))?
            }
            "blockalign" => {
                self.blockalign =
                    value::per_direction(v, self.blockalign, |f| value::size(f, kb).map(Some))
                        .map_err(|r| a.bad(r))?
            }
            "iodepth" => self.iodepth = a.num32()?,
            "numjobs" => self.numjobs = a.num32()?,
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Sets where and how much the job reads and writes: size, offsets, I/O counts, loops.
    fn set_region(&mut self, name: &str, a: &Arg) -> Result<bool, FioError> {
        let (v, kb) = (a.text, a.kb_base);
        match name {
            "size" => self.size = Some(value::size_or_share(v, kb).map_err(|r| a.bad(r))?),
            "offset" => self.offset = value::size_or_share(v, kb).map_err(|r| a.bad(r))?,
            "offset_increment" => self.offset_increment = a.size()?,
            "io_size" => self.io_size = Some(a.size()?),
            "number_ios" => self.number_ios = Some(a.num()?),
            "loops" => self.loops = a.num32()?,
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Sets when the job runs and how fast: runtime, delays, think time and rate limits.
    fn set_timing(&mut self, name: &str, a: &Arg) -> Result<bool, FioError> {
        let (v, kb) = (a.text, a.kb_base);
        match name {
            "runtime" => self.runtime_ns = Some(a.time(TimeUnit::S)?),
            "time_based" => self.time_based = a.flag()?,
            "ramp_time" => self.ramp_time_ns = a.time(TimeUnit::S)?,
            "startdelay" => self.startdelay_ns = a.time(TimeUnit::S)?,
            "thinktime" => self.thinktime_ns = a.time(TimeUnit::Us)?,
            "thinktime_blocks" => self.thinktime_blocks = a.num32()?,
            "rate" => {
                self.rate_bytes_s =
                    value::per_direction(v, self.rate_bytes_s, |f| value::size(f, kb).map(Some))
                        .map_err(|r| a.bad(r))?
            }
            "rate_iops" => {
                self.rate_iops =
                    value::per_direction(v, self.rate_iops, |f| value::integer(f).map(Some))
                        .map_err(|r| a.bad(r))?
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Sets how offsets are drawn: seeds, distribution, share of random requests.
    fn set_randomness(&mut self, name: &str, a: &Arg) -> Result<bool, FioError> {
        let v = a.text;
        match name {
            "randrepeat" => self.randrepeat = a.flag()?,
            "randseed" => self.randseed = Some(a.num()?),
            "random_distribution" => self.distribution = distribution(v).map_err(|r| a.bad(r))?,
            "percentage_random" => {
                self.percentage_random =
                    value::per_direction(v, self.percentage_random, |f| match value::integer(f)? {
                        p @ 0..=100 => Ok(p as u32),
                        p => Err(format!("{p} is not a percentage")),
                    })
                    .map_err(|r| a.bad(r))?
            }
            "norandommap" => self.norandommap = a.flag()?,
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Sets what makes data durable and checked: flushes, direct and synchronous writes,
    /// verification.
    fn set_durability(&mut self, name: &str, a: &Arg) -> Result<bool, FioError> {
        let v = a.text;
        match name {
            "fsync" | "fdatasync" => self.fsync_every = a.num32()?,
            "end_fsync" => self.end_fsync = a.flag()?,
            "direct" => self.direct = a.flag()?,
            "buffered" => self.direct = !a.flag()?,
            "sync" => {
                self.sync = match v {
                    "sync" | "dsync" => true,
                    "none" => false,
                    _ => a.flag()?,
                }
            }
            "verify" => {
                self.verify = match v {
                    "crc32c" | "crc32c-intel" => Some(VerifyKind::Crc32c),
                    "md5" => Some(VerifyKind::Md5),
                    "0" | "null" => None,
                    other => {
                        return Err(a.bad(format!(
                            "verify method '{other}' is not supported (crc32c, crc32c-intel, \
                             md5, null)"
                        )))
                    }
                }
            }
            "do_verify" => self.do_verify = a.flag()?,
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Sets how results are grouped and reported: stonewalls, groups, averaging windows,
    /// the size base.
    fn set_reporting(&mut self, name: &str, a: &Arg) -> Result<bool, FioError> {
        match name {
            "stonewall" => self.stonewall = a.flag()?,
            "group_reporting" => self.group_reporting = a.flag()?,
            "bwavgtime" => self.bwavgtime_ns = a.time(TimeUnit::Ms)?,
            "iopsavgtime" => self.iopsavgtime_ns = a.time(TimeUnit::Ms)?,
            "kb_base" => {
                self.kb_base = match a.num()? {
                    b @ (1000 | 1024) => b,
                    b => return Err(a.bad(format!("{b}: kb_base is 1000 or 1024"))),
                }
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Sets the I/O logs the job writes or replays, and how a replay is scaled and aimed.
    fn set_iolog(&mut self, name: &str, a: &Arg) -> Result<bool, FioError> {
        let v = a.text;
        match name {
            "write_iolog" => self.write_iolog = Some(v.to_string()),
            "read_iolog" => {
                // fio splits the list on ':' (a '\:' escapes one in a name).
                self.read_iolog = split_names(v);
                if self.read_iolog.iter().any(|f| f.is_empty() || f == "-") {
                    return Err(
                        a.bad("an empty name or '-' (stdin) is not a log nearflash reads".into())
                    );
                }
            }
            "replay_no_stall" => self.replay_no_stall = a.flag()?,
            "replay_time_scale" => {
                self.replay_time_scale = a.num32()?;
                if self.replay_time_scale == 0 {
                    return Err(a.bad("replay_time_scale is a percentage of at least 1".into()));
                }
            }
            "replay_redirect" => self.replay_redirect = Some(v.to_string()),
            "replay_align" => {
                let align = a.size()?;
                if !align.is_power_of_two() {
                    return Err(a.bad(format!("{align} is not a power of two")));
                }
                self.replay_align = Some(align);
            }
            "replay_scale" => {
                self.replay_scale = a.num()?;
                if self.replay_scale == 0 {
                    return Err(a.bad("replay_scale divides offsets: at least 1".into()));
                }
            }
            "replay_skip" => {
                self.replay_skip = crate::replay::Skip::parse(v).map_err(|r| a.bad(r))?
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Sets where writes land on the drive: FDP placement IDs and the zoned-drive options.
    fn set_placement(&mut self, name: &str, a: &Arg) -> Result<bool, FioError> {
        let v = a.text;
        match name {
            "fdp" => self.fdp = a.flag()?,
            "fdp_pli" => self.fdp_pli = fdp_placement_ids(a)?,
            "fdp_pli_select" => {
                self.fdp_pli_random = match v {
                    "roundrobin" => false,
                    "random" => true,
                    other => {
                        return Err(a.bad(format!(
                            "'{other}' is not a selection nearflash runs (roundrobin, random)"
                        )))
                    }
                }
            }
            "zonemode" => {
                self.zbd = match v {
                    "none" => false,
                    "zbd" => true,
                    other => {
                        return Err(a.bad(format!(
                            "'{other}' is not a zone mode nearflash runs (none, zbd)"
                        )))
                    }
                }
            }
            "zonesize" => {
                let z = a.size()?;
                if z == 0 {
                    return Err(a.bad("a zone size must be positive".into()));
                }
                self.zonesize = Some(z);
            }
            "max_open_zones" => self.max_open_zones = Some(a.num32()?),
            "zone_reset_threshold" | "zone_reset_frequency" => {
                let f: f64 = v
                    .parse()
                    .map_err(|_| a.bad(format!("'{v}' is not a number")))?;
                if !(0.0..=1.0).contains(&f) {
                    return Err(a.bad(format!("{f} must lie within 0..=1")));
                }
                if a.entry.key == "zone_reset_threshold" {
                    self.zone_reset_threshold = f;
                } else {
                    self.zone_reset_frequency = f;
                }
            }
            "read_beyond_wp" => self.read_beyond_wp = a.flag()?,
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Checks what no single option can: values in range and fitting together.
    fn check(&self) -> Result<(), FioError> {
        let bad = |reason: String| FioError::Job {
            job: self.name.clone(),
            reason,
        };
        let sector = nearflash_ftl::SECTOR_BYTES;
        for (d, used) in self.rw.directions().iter().enumerate() {
            if !used {
                continue;
            }
            for b in self.bs[d].sizes() {
                if b == 0 || b % sector != 0 {
                    return Err(bad(format!(
                        "{} block size {b} is not a positive multiple of {sector} bytes",
                        DIRECTIONS[d]
                    )));
                }
            }
            if let Some(a) = self.blockalign[d] {
                if a == 0 || a % sector != 0 {
                    return Err(bad(format!(
                        "blockalign {a} is not a positive multiple of {sector} bytes"
                    )));
                }
            }
        }
        if !self.seq_skip_bytes.is_multiple_of(sector) {
            return Err(bad(format!(
                "the rw offset skip {} is not a multiple of {sector} bytes",
                self.seq_skip_bytes
            )));
        }
        // Bounds that keep a job file from asking for unbounded work or memory.
        if !(1..=65_536).contains(&self.iodepth) {
            return Err(bad(format!(
                "iodepth {} must be within 1..=65536",
                self.iodepth
            )));
        }
        if !(1..=256).contains(&self.numjobs) {
            return Err(bad(format!(
                "numjobs {} must be within 1..=256",
                self.numjobs
            )));
        }
        if self.loops == 0 || self.thinktime_blocks == 0 {
            return Err(bad("loops and thinktime_blocks must be at least 1".into()));
        }
        if self.time_based && self.runtime_ns.is_none() {
            return Err(bad("time_based needs a runtime".into()));
        }
        if self.bwavgtime_ns == 0 || self.iopsavgtime_ns == 0 {
            return Err(bad("bwavgtime and iopsavgtime must be positive".into()));
        }
        if self.number_ios == Some(0) || self.io_size == Some(0) {
            return Err(bad("number_ios and io_size must be positive".into()));
        }
        self.check_zbd()
    }

    /// What `zonemode=zbd` needs of the job alone (the drive's side is `crate::zbd`'s).
    fn check_zbd(&self) -> Result<(), FioError> {
        let bad = |reason: String| FioError::Job {
            job: self.name.clone(),
            reason,
        };
        if !self.zbd {
            let set: Vec<&str> = [
                ("zonesize", self.zonesize.is_some()),
                ("max_open_zones", self.max_open_zones.is_some()),
                ("zone_reset_threshold", self.zone_reset_threshold > 0.0),
                ("zone_reset_frequency", self.zone_reset_frequency > 0.0),
                ("read_beyond_wp", self.read_beyond_wp),
            ]
            .into_iter()
            .filter_map(|(n, on)| on.then_some(n))
            .collect();
            if !set.is_empty() {
                return Err(bad(format!(
                    "{} applies to zonemode=zbd only (set zonemode=zbd)",
                    set.join(", ")
                )));
            }
            return Ok(());
        }
        let refused = [
            (
                self.rw.directions()[2],
                "rw with trims (fio turns a zbd trim into a zone reset): not modelled",
            ),
            (
                self.verify.is_some(),
                "verify: not modelled with zonemode=zbd (a reset zone loses what verify would read)",
            ),
            (
                !self.read_iolog.is_empty(),
                "read_iolog: a log's writes land at arbitrary offsets, not at write pointers",
            ),
            (
                self.fdp,
                "fdp=1: a zoned drive has no placement handles",
            ),
            (
                self.seq_skip_bytes > 0,
                "an rw offset skip: zbd writes go to the write pointer",
            ),
        ];
        match refused.iter().find(|(on, _)| *on) {
            Some((_, why)) => Err(bad(format!("zonemode=zbd with {why}"))),
            None => Ok(()),
        }
    }
}

/// fio's list of names: split on ':' except where a backslash escapes it (HOWTO, `filename`).
fn split_names(text: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&':') => {
                out.last_mut().expect("one name").push(':');
                chars.next();
            }
            ':' => out.push(String::new()),
            c => out.last_mut().expect("one name").push(c),
        }
    }
    out
}

fn distribution(text: &str) -> Result<Distribution, String> {
    let (kind, arg) = text.split_once(':').unwrap_or((text, ""));
    let float = |what: &str| -> Result<f64, String> {
        arg.parse::<f64>()
            .map_err(|_| format!("{kind} needs a number ({what}), got '{arg}'"))
    };
    Ok(match kind {
        "random" => Distribution::Uniform,
        "zipf" => {
            let t = float("theta")?;
            // fio: theta must differ from 1 (the generator divides by 1 − θ).
            if t.is_nan() || t <= 0.0 || t == 1.0 {
                return Err(format!("zipf theta {t} must be positive and not 1"));
            }
            Distribution::Zipf(t)
        }
        "pareto" => {
            let h = float("h")?;
            if !(h > 0.0 && h < 1.0) {
                return Err(format!("pareto h {h} must lie within (0, 1)"));
            }
            Distribution::Pareto(h)
        }
        "normal" => {
            let s = float("standard deviation, %")?;
            if !(s > 0.0 && s <= 100.0) {
                return Err(format!("normal deviation {s}% must lie within (0, 100]"));
            }
            Distribution::Normal(s)
        }
        "zoned" => {
            let mut zones = Vec::new();
            for z in arg.split(':') {
                let (a, r) = z
                    .split_once('/')
                    .ok_or_else(|| format!("zone '{z}' is not access%/region%"))?;
                let p = |t: &str| {
                    t.trim()
                        .parse::<u32>()
                        .map_err(|_| format!("'{t}' in zone '{z}'"))
                };
                zones.push((p(a)?, p(r)?));
            }
            let (acc, reg): (u32, u32) =
                zones.iter().fold((0, 0), |(a, r), &(x, y)| (a + x, r + y));
            if acc != 100 || reg != 100 {
                return Err(format!(
                    "zoned: accesses add up to {acc}% and regions to {reg}%; both must be 100"
                ));
            }
            Distribution::Zoned(zones)
        }
        other => {
            return Err(format!(
                "'{other}' is not a distribution nearflash draws (random, zipf, pareto, normal, \
                 zoned)"
            ))
        }
    })
}

/// Whether the option may stand bare (`direct` alone reads as `direct=1`).
fn takes_bare_flag(name: &str) -> bool {
    matches!(
        name,
        "time_based"
            | "randrepeat"
            | "norandommap"
            | "direct"
            | "buffered"
            | "sync"
            | "stonewall"
            | "group_reporting"
            | "end_fsync"
            | "do_verify"
            | "replay_no_stall"
            | "fdp"
            | "read_beyond_wp"
    )
}

/// One supported option's value as written, with what reading it needs.
struct Arg<'a> {
    /// The option as written (an alias keeps its own name) and where it stands.
    entry: &'a Entry,
    /// The value; `1` for a flag standing bare.
    text: &'a str,
    /// The job's `kb_base` when the option is read.
    kb_base: u64,
}

impl Arg<'_> {
    /// The error naming the option and its line, with why its value is refused.
    fn bad(&self, reason: String) -> FioError {
        FioError::Value {
            at: self.entry.at.clone(),
            option: self.entry.key.clone(),
            reason,
        }
    }

    /// The value read as a size in bytes.
    fn size(&self) -> Result<u64, FioError> {
        value::size(self.text, self.kb_base).map_err(|r| self.bad(r))
    }

    /// The value read as an integer.
    fn num(&self) -> Result<u64, FioError> {
        value::integer(self.text).map_err(|r| self.bad(r))
    }

    /// The value read as an integer that fits 32 bits.
    fn num32(&self) -> Result<u32, FioError> {
        let n = self.num()?;
        u32::try_from(n).map_err(|_| self.bad(format!("{n} is too large")))
    }

    /// The value read as a boolean.
    fn flag(&self) -> Result<bool, FioError> {
        value::boolean(Some(self.text)).map_err(|r| self.bad(r))
    }

    /// The value read as a time in nanoseconds, `unit` when it names none.
    fn time(&self, unit: TimeUnit) -> Result<u64, FioError> {
        value::time_ns(self.text, unit).map_err(|r| self.bad(r))
    }
}

/// `fdp_pli`'s comma-separated placement ID indices, at most `FDP_PLI_MAX` of them.
fn fdp_placement_ids(a: &Arg) -> Result<Vec<u16>, FioError> {
    let ids = a
        .text
        .split(',')
        .map(|t| {
            let n = value::integer(t.trim()).map_err(|r| a.bad(r))?;
            u16::try_from(n).map_err(|_| a.bad(format!("{n} is not a placement ID index")))
        })
        .collect::<Result<Vec<u16>, FioError>>()?;
    if ids.len() > FDP_PLI_MAX {
        return Err(a.bad(format!(
            "{} indices: fio takes at most {FDP_PLI_MAX}",
            ids.len()
        )));
    }
    Ok(ids)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jobfile::tests::one;

    fn job(text: &str) -> Result<JobSpec, FioError> {
        let f = one(text)?;
        JobSpec::from_section(&f.jobs[0])
    }

    #[test]
    fn a_full_job_reads_every_supported_option() {
        let j = job(
            "[global]\nbs=4k,8k\nioengine=libaio\n[j]\nrw=randrw\nrwmixwrite=30\niodepth=8\n\
             numjobs=2\nsize=50%\noffset=1m\nio_size=2m\nnumber_ios=100\nruntime=2\n\
             time_based\nramp_time=10ms\nstartdelay=1ms\nthinktime=50\nthinktime_blocks=4\n\
             rate=1m,2m\nrate_iops=100\nrandrepeat=0\nrandseed=7\n\
             random_distribution=zipf:1.2\npercentage_random=80\nnorandommap\nfsync=8\n\
             direct=1\nsync=1\nverify=md5\nstonewall\ngroup_reporting\nfilename=/dev/x\n\
             blockalign=8k\ndescription=hello world\n",
        )
        .unwrap();
        assert_eq!(j.rw, Rw::RandReadWrite);
        assert_eq!(j.rwmixread, 70);
        assert_eq!(j.bs[0], BlockSizes::Fixed(4096));
        assert_eq!(j.bs[1], BlockSizes::Fixed(8192));
        assert_eq!((j.iodepth, j.numjobs), (8, 2));
        assert_eq!(j.size, Some(SizeOrShare::Percent(50.0)));
        assert_eq!(j.offset, SizeOrShare::Bytes(1 << 20));
        assert_eq!((j.io_size, j.number_ios), (Some(2 << 20), Some(100)));
        assert_eq!(j.runtime_ns, Some(2_000_000_000));
        assert!(j.time_based);
        assert_eq!((j.ramp_time_ns, j.startdelay_ns), (10_000_000, 1_000_000));
        assert_eq!((j.thinktime_ns, j.thinktime_blocks), (50_000, 4));
        assert_eq!(
            j.rate_bytes_s,
            [Some(1 << 20), Some(2 << 20), Some(2 << 20)]
        );
        assert_eq!(j.rate_iops, [Some(100); 3]);
        assert!(!j.randrepeat);
        assert_eq!(j.randseed, Some(7));
        assert_eq!(j.distribution, Distribution::Zipf(1.2));
        assert_eq!(j.percentage_random, [80; 3]);
        assert!(j.norandommap && j.direct && j.sync && j.stonewall && j.group_reporting);
        assert_eq!(j.fsync_every, 8);
        assert_eq!(j.verify, Some(VerifyKind::Md5));
        assert_eq!(j.blockalign, [Some(8192); 3]);
        assert_eq!(j.description.as_deref(), Some("hello world"));
        let ignored: Vec<&str> = j.ignored.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(ignored, ["ioengine", "filename"]);
        assert_eq!(j.options[0], ("rw".into(), "randrw".into()));
    }

    #[test]
    fn rw_takes_a_sequential_skip_and_bssplit_and_bsrange_read_per_direction() {
        let j = job("[j]\nrw=write:8k\nbssplit=4k/50:64k/50\n").unwrap();
        assert_eq!((j.rw, j.seq_skip_bytes), (Rw::Write, 8192));
        assert_eq!(j.bs[1], BlockSizes::Split(vec![(4096, 50), (65536, 50)]));
        let j = job("[j]\nbsrange=4k-16k,8k-8k\n").unwrap();
        assert_eq!(j.bs[0], BlockSizes::Range(4096, 16384));
        assert_eq!(j.bs[2], BlockSizes::Range(8192, 8192));
    }

    #[test]
    fn distributions() {
        for (t, d) in [
            ("random", Distribution::Uniform),
            ("pareto:0.9", Distribution::Pareto(0.9)),
            ("normal:10", Distribution::Normal(10.0)),
            (
                "zoned:60/10:40/90",
                Distribution::Zoned(vec![(60, 10), (40, 90)]),
            ),
        ] {
            assert_eq!(distribution(t), Ok(d), "{t}");
        }
        for t in ["zipf:1", "zipf:x", "pareto:2", "zoned:60/10", "gauss2:1"] {
            assert!(distribution(t).is_err(), "{t}");
        }
    }

    #[test]
    fn unknown_and_unsupported_options_are_errors_naming_the_option_and_line() {
        let e = job("[j]\nrw=read\nfrobnicate=1\n").unwrap_err().to_string();
        assert_eq!(e, "job.fio:3: unknown option 'frobnicate'");
        for opt in [
            "verify_backlog=16",
            "zonerange=1m",
            "merge_blktrace_file=x.bin",
            "rate_process=poisson",
        ] {
            let e = job(&format!("[global]\n{opt}\n[j]\n"))
                .unwrap_err()
                .to_string();
            let name = opt.split('=').next().unwrap();
            assert!(
                e.starts_with("job.fio:2: option '")
                    && e.contains(name)
                    && e.contains("not supported"),
                "{e}"
            );
        }
    }

    #[test]
    fn bad_values_name_the_option_and_line() {
        for (text, what) in [
            ("[j]\nbs=4q\n", "'bs'"),
            ("[j]\nrw=randtrimwrite\n", "'rw'"),
            ("[j]\nrwmixread=120\n", "'rwmixread'"),
            ("[j]\niodepth\n", "needs a value"),
            ("[j]\nverify=sha512\n", "sha512"),
            ("[j]\nruntime=5 fortnights\n", "'runtime'"),
            ("[j]\nkb_base=512\n", "kb_base"),
        ] {
            let e = job(text).unwrap_err().to_string();
            assert!(
                e.starts_with("job.fio:2:") && e.contains(what),
                "{text:?}: {e}"
            );
        }
    }

    #[test]
    fn jobs_that_do_not_fit_together_are_refused() {
        for (text, what) in [
            ("[j]\nbs=1000\n", "multiple of 512"),
            ("[j]\niodepth=0\n", "iodepth"),
            ("[j]\ntime_based\n", "needs a runtime"),
            ("[j]\nnumjobs=1000\n", "numjobs"),
        ] {
            let e = job(text).unwrap_err().to_string();
            assert!(
                e.starts_with("job 'j':") && e.contains(what),
                "{text:?}: {e}"
            );
        }
    }

    proptest::proptest! {
        /// Whatever the text, reading it as a job file and building its jobs answers with
        /// jobs or an error, never a panic.
        #[test]
        fn any_text_gives_jobs_or_an_error(
            lines in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::string::string_regex("[a-z_]{1,12}=[0-9a-z:/%.,-]{0,12}").unwrap(),
                    proptest::string::string_regex("\\[[a-z]{0,6}\\]?").unwrap(),
                    proptest::string::string_regex("(bs|rw|size|iodepth|bssplit|bsrange|rate|runtime|random_distribution|offset|numjobs|verify)=[0-9a-z:/%.,-]{0,10}").unwrap(),
                    proptest::string::string_regex(".{0,20}").unwrap(),
                ],
                0..12,
            )
        ) {
            if let Ok(f) = one(&lines.join("\n")) {
                for s in &f.jobs {
                    let _ = JobSpec::from_section(s);
                }
            }
        }
    }

    #[test]
    fn docs_cli_md_lists_every_option_of_the_table() {
        let docs = include_str!("../../../docs/cli.md");
        for d in TABLE {
            for n in d.names {
                assert!(docs.contains(&format!("`{n}`")), "docs/cli.md lacks {n}");
            }
        }
    }

    #[test]
    fn the_replay_options_read_as_fio_reads_them() {
        let j = job(
            "[j]\nread_iolog=a.log:b\\:c.log\nreplay_no_stall\nreplay_time_scale=200\n\
             replay_redirect=/dev/sdc\nreplay_align=4k\nreplay_scale=8\nreplay_skip=write,sync\n",
        )
        .unwrap();
        assert_eq!(j.read_iolog, ["a.log", "b:c.log"]);
        assert!(j.replay_no_stall);
        assert_eq!((j.replay_time_scale, j.replay_scale), (200, 8));
        assert_eq!(j.replay_align, Some(4096));
        assert_eq!(j.replay_redirect.as_deref(), Some("/dev/sdc"));
        assert!(j.replay_skip.write && j.replay_skip.sync && !j.replay_skip.read);
        for (text, what) in [
            ("[j]\nreplay_align=3000\n", "power of two"),
            ("[j]\nreplay_time_scale=0\n", "at least 1"),
            ("[j]\nreplay_scale=0\n", "at least 1"),
            ("[j]\nreplay_skip=erase\n", "'erase'"),
            ("[j]\nread_iolog=-\n", "stdin"),
        ] {
            let e = job(text).unwrap_err().to_string();
            assert!(
                e.starts_with("job.fio:2:") && e.contains(what),
                "{text:?}: {e}"
            );
        }
    }

    #[test]
    fn zbd_options_read_as_fio_reads_them_and_misfits_are_refused() {
        let j = job(
            "[j]\nzonemode=zbd\nrw=randwrite\nzonesize=256k\nmax_open_zones=4\n\
             zone_reset_threshold=0.7\nzone_reset_frequency=0.01\nread_beyond_wp\n",
        )
        .unwrap();
        assert!(j.zbd && j.read_beyond_wp);
        assert_eq!((j.zonesize, j.max_open_zones), (Some(256 << 10), Some(4)));
        assert_eq!(
            (j.zone_reset_threshold, j.zone_reset_frequency),
            (0.7, 0.01)
        );
        for (text, what) in [
            ("[j]\nzonemode=strided\n", "'strided'"),
            ("[j]\nzone_reset_threshold=1.5\n", "within 0..=1"),
            ("[j]\nzonesize=0\n", "positive"),
        ] {
            let e = job(text).unwrap_err().to_string();
            assert!(
                e.starts_with("job.fio:2:") && e.contains(what),
                "{text:?}: {e}"
            );
        }
        for (text, what) in [
            (
                "[j]\nmax_open_zones=4\n",
                "max_open_zones applies to zonemode=zbd only",
            ),
            ("[j]\nzonemode=zbd\nrw=randtrim\n", "trims"),
            ("[j]\nzonemode=zbd\nrw=write\nverify=md5\n", "verify"),
            ("[j]\nzonemode=zbd\nrw=write:4k\n", "skip"),
            ("[j]\nzonemode=zbd\nrw=write\nfdp=1\n", "fdp=1"),
        ] {
            let e = job(text).unwrap_err().to_string();
            assert!(
                e.starts_with("job 'j': ") && e.contains(what),
                "{text:?}: {e}"
            );
        }
    }

    #[test]
    fn kb_base_1000_changes_how_sizes_read_wherever_it_stands() {
        let j = job("[j]\nbs=4k\nkb_base=1000\n").unwrap_err().to_string();
        assert!(j.contains("multiple of 512"), "4k is 4000 bytes: {j}");
    }
}
