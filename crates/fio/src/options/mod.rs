//! What fio's options mean on the simulated drive: the table of options nearflash models,
//! accepts and ignores (host-only), or refuses, and the typed job built from a section's
//! options (its `[global]` ones first). An option neither fio nor nearflash knows, or one
//! nearflash does not model, is an error naming it and its line — never silently dropped.
//!
//! Here the job's types; `table` holds the option table, `apply` reads one option into a
//! job, `check` what only the whole job shows.

use crate::error::{FioError, Location};
use crate::jobfile::Section;
use crate::value::SizeOrShare;

mod apply;
mod check;
mod table;

pub use table::{find, OptionDef, Status, FDP_PLI_MAX, TABLE};

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
}

#[cfg(test)]
mod tests;
