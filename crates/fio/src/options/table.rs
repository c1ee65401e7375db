//! The table of fio's options: which nearflash models, accepts and ignores (host-only),
//! or refuses, with what each means (docs/cli.md shows the same table).

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

/// The row of option `key` (any of its names).
pub fn find(key: &str) -> Option<&'static OptionDef> {
    TABLE.iter().find(|d| d.names.contains(&key))
}

/// The first name of option `key`: the one the job reads it by.
pub(super) fn canonical(key: &str) -> Option<&'static str> {
    find(key).map(|d| d.names[0])
}
