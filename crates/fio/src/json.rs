//! fio's JSON output (`--output-format=json`, and `json+` with the completion-latency bins)
//! in the structure fio 3.42's `stat.c` writes (`show_thread_status_json`,
//! `add_ddir_status_json`, `add_ddir_lat_json`, `show_disk_util`), so that scripts written
//! for fio's JSON read it unchanged. nearflash's own figures are in an extra top-level
//! object, `nearflash`. Host figures fio measures and a simulated drive has none of (CPU
//! use, context switches, page faults) are 0; the timestamps are the simulation's epoch, so
//! the same seed gives byte-identical output.

use crate::job::DISK_NAME;
use crate::runner::{FioRun, JobReport};
use crate::stats::{DirStats, JobStats, LatStat, LAT_LABELS};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;

/// The fio release whose JSON layout this follows.
pub const FIO_LAYOUT_VERSION: &str = "fio-3.42";
/// fio's default percentile list (HOWTO, `percentile_list`).
pub const PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];
/// `ctime` of the simulation's epoch (time 0), fio's `time` field.
pub const EPOCH_CTIME: &str = "Thu Jan  1 00:00:00 1970";

/// A JSON tree whose objects keep their keys in the order given (fio's order).
enum Node {
    Leaf(Value),
    Object(Vec<(String, Node)>),
    Array(Vec<Node>),
}

impl Serialize for Node {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Node::Leaf(v) => v.serialize(s),
            Node::Object(pairs) => {
                let mut m = s.serialize_map(Some(pairs.len()))?;
                for (k, v) in pairs {
                    m.serialize_entry(k, v)?;
                }
                m.end()
            }
            Node::Array(items) => items.serialize(s),
        }
    }
}

fn n(v: impl Into<Value>) -> Node {
    Node::Leaf(v.into())
}

fn obj(pairs: Vec<(&str, Node)>) -> Node {
    Node::Object(pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

/// Runtime in whole ms as fio reports it; at least 1 when anything ran.
pub fn runtime_ms(ns: u64) -> u64 {
    if ns == 0 {
        0
    } else {
        ns.div_ceil(1_000_000)
    }
}

/// Bytes/s and IOPS over the exact simulated runtime (fio divides by whole ms; a simulated
/// run of a few ms would be off by up to a ms in it).
pub fn rates(d: &DirStats, runtime_ns: u64) -> (u64, f64) {
    if runtime_ns == 0 {
        return (0, 0.0);
    }
    let bw = (u128::from(d.io_bytes) * 1_000_000_000 / u128::from(runtime_ns)) as u64;
    (bw, d.total_ios as f64 * 1e9 / runtime_ns as f64)
}

fn percentile_key(p: f64) -> String {
    format!("{p:.6}")
}

fn lat(l: &LatStat, percentiles: bool, bins: bool) -> Node {
    let h = &l.hist;
    let mut pairs = vec![
        ("min", n(h.min_ns())),
        ("max", n(h.max_ns())),
        ("mean", n(h.mean_ns())),
        ("stddev", n(l.stddev_ns())),
        ("N", n(h.count())),
    ];
    if percentiles && h.count() > 0 {
        let p = PERCENTILES
            .iter()
            .map(|&p| (percentile_key(p), n(h.quantile_ns(p / 100.0))))
            .collect();
        pairs.push(("percentile", Node::Object(p)));
        if bins {
            let b = h.buckets().map(|(ns, c)| (ns.to_string(), n(c))).collect();
            pairs.push(("bins", Node::Object(b)));
        }
    }
    obj(pairs)
}

/// Zero submission latency for each request: the host's submission path is not modelled
/// apart from the drive's (doorbell, fetch and controller time are in the completion
/// latency).
fn slat(count: u64) -> Node {
    obj(vec![
        ("min", n(0)),
        ("max", n(0)),
        ("mean", n(0.0)),
        ("stddev", n(0.0)),
        ("N", n(count)),
    ])
}

fn direction(d: &DirStats, runtime_ns: u64, group_bw_bytes_s: u64, bins: bool) -> Node {
    let (bw_bytes, iops) = rates(d, runtime_ns);
    let bw_s = &d.bw.samples;
    let iops_s = &d.iops.samples;
    // fio: bw_agg is the mean sampled bandwidth as a percentage of the group's aggregate.
    let agg = if bw_s.n > 0 && group_bw_bytes_s > 0 {
        bw_s.mean() * 1024.0 * 100.0 / group_bw_bytes_s as f64
    } else {
        0.0
    };
    obj(vec![
        ("io_bytes", n(d.io_bytes)),
        ("io_kbytes", n(d.io_bytes >> 10)),
        ("bw_bytes", n(bw_bytes)),
        ("bw", n(bw_bytes / 1024)),
        ("iops", n(iops)),
        (
            "runtime",
            n(runtime_ms(if d.total_ios > 0 { runtime_ns } else { 0 })),
        ),
        ("total_ios", n(d.total_ios)),
        ("short_ios", n(0)),
        ("drop_ios", n(0)),
        ("slat_ns", slat(d.total_ios)),
        ("clat_ns", lat(&d.clat, true, bins)),
        // lat = slat + clat, and slat is 0; fio leaves lat percentiles off by default.
        ("lat_ns", lat(&d.clat, false, false)),
        ("bw_min", n(bw_s.min as u64)),
        ("bw_max", n(bw_s.max as u64)),
        ("bw_agg", n(agg)),
        ("bw_mean", n(bw_s.mean())),
        ("bw_dev", n(bw_s.stddev())),
        ("bw_samples", n(bw_s.n)),
        ("iops_min", n(iops_s.min as u64)),
        ("iops_max", n(iops_s.max as u64)),
        ("iops_mean", n(iops_s.mean())),
        ("iops_stddev", n(iops_s.stddev())),
        ("iops_samples", n(iops_s.n)),
    ])
}

fn shares(counts: &[u64], total: u64, labels: &[&str]) -> Node {
    let pct = |c: u64| {
        if total == 0 {
            0.0
        } else {
            c as f64 * 100.0 / total as f64
        }
    };
    obj(labels
        .iter()
        .zip(counts)
        .map(|(l, &c)| (*l, n(pct(c))))
        .collect())
}

/// Aggregate bandwidth of each group and direction, bytes/s (sum of bytes over the longest
/// runtime), as fio's `group_run_stats.agg`.
pub fn group_bandwidth(run: &FioRun, groupid: u32) -> [u64; 3] {
    std::array::from_fn(|d| {
        let jobs = run.jobs.iter().filter(|j| j.groupid == groupid);
        let bytes: u64 = jobs.clone().map(|j| j.stats.dirs[d].io_bytes).sum();
        let run_ns = jobs
            .filter(|j| j.stats.dirs[d].total_ios > 0)
            .map(|j| j.stats.runtime_ns)
            .max()
            .unwrap_or(0);
        if run_ns == 0 {
            0
        } else {
            (u128::from(bytes) * 1_000_000_000 / u128::from(run_ns)) as u64
        }
    })
}

/// One job's object: its identity and options, each direction's figures, syncs, runtime,
/// depth and latency shares, then fio's zone resets and nearflash's own counts.
fn job(run: &FioRun, j: &JobReport, bins: bool) -> Node {
    let s = &j.stats;
    let group_bw = group_bandwidth(run, j.groupid);
    let options = j
        .spec
        .options
        .iter()
        .map(|(k, v)| (k.clone(), n(v.as_str())))
        .collect();
    let mut pairs = vec![
        ("jobname", n(j.spec.name.as_str())),
        ("groupid", n(j.groupid)),
        ("job_start", n(0)),
        ("error", n(j.error)),
        ("eta", n(0)),
        ("elapsed", n(run.sim_time_ns.div_ceil(1_000_000_000))),
        ("job options", Node::Object(options)),
        (
            "read",
            direction(&s.dirs[0], s.runtime_ns, group_bw[0], bins),
        ),
        (
            "write",
            direction(&s.dirs[1], s.runtime_ns, group_bw[1], bins),
        ),
        (
            "trim",
            direction(&s.dirs[2], s.runtime_ns, group_bw[2], bins),
        ),
        (
            "sync",
            obj(vec![
                ("total_ios", n(s.sync.count())),
                ("lat_ns", lat(&s.sync, true, false)),
            ]),
        ),
        ("job_runtime", n(runtime_ms(s.runtime_ns))),
        ("usr_cpu", n(0.0)),
        ("sys_cpu", n(0.0)),
        ("ctx", n(0)),
        ("majf", n(0)),
        ("minf", n(0)),
    ];
    pairs.extend(depth_and_latency_shares(s));
    if let Some(d) = &j.spec.description {
        pairs.push(("desc", n(d.as_str())));
    }
    // fio reports zone resets for zbd jobs that write (stat.c, `count_zone_resets`).
    if counts_zone_resets(&j.spec) {
        pairs.push(("zone_resets", n(s.zone_resets)));
    }
    pairs.push((
        "nearflash",
        obj(vec![
            ("jobs", n(j.members)),
            ("verified_blocks", n(s.verified_blocks)),
            ("verify_errors", n(s.verify_errors)),
            ("verify_unchecked", n(s.verify_unchecked)),
            ("failed_requests", n(s.errors)),
            ("first_error", n(s.first_error.clone())),
        ]),
    ));
    obj(pairs)
}

/// A job's shares of requests by queue depth at submission, by submit and complete batch,
/// and by latency bucket (nanoseconds to milliseconds).
fn depth_and_latency_shares(s: &JobStats) -> Vec<(&'static str, Node)> {
    let rw_ios: u64 = s.dirs.iter().map(|d| d.total_ios).sum();
    let depth_labels = ["1", "2", "4", "8", "16", "32", ">=64"];
    let batch_labels = ["0", "4", "8", "16", "32", "64", ">=64"];
    // Requests are submitted and reaped one at a time: every batch is of 1 to 4.
    let batches = [0, s.submitted, 0, 0, 0, 0, 0];
    let ns_labels: Vec<String> = LAT_LABELS.iter().map(u64::to_string).collect();
    let ns_refs: Vec<&str> = ns_labels.iter().map(String::as_str).collect();
    let mut ms_refs = ns_refs.clone();
    ms_refs.extend(["2000", ">=2000"]);
    vec![
        (
            "iodepth_level",
            shares(&s.depth_at_submit, s.submitted, &depth_labels),
        ),
        (
            "iodepth_submit",
            shares(&batches, s.submitted, &batch_labels),
        ),
        (
            "iodepth_complete",
            shares(&batches, s.submitted, &batch_labels),
        ),
        ("latency_ns", shares(&s.lat_buckets.ns, rw_ios, &ns_refs)),
        ("latency_us", shares(&s.lat_buckets.us, rw_ios, &ns_refs)),
        ("latency_ms", shares(&s.lat_buckets.ms, rw_ios, &ms_refs)),
    ]
}

/// fio's `count_zone_resets`: set for `zonemode=zbd` jobs that write or trim (zbd.c).
pub fn counts_zone_resets(spec: &crate::options::JobSpec) -> bool {
    let d = spec.rw.directions();
    spec.zbd && (d[1] || d[2])
}

fn disk_util(run: &FioRun) -> Node {
    let d = &run.disk;
    let ms = |ns: u64| ns / 1_000_000;
    let util = if run.sim_time_ns == 0 {
        0.0
    } else {
        (d.busy_ns as f64 * 100.0 / run.sim_time_ns as f64).min(100.0)
    };
    Node::Array(vec![obj(vec![
        ("name", n(DISK_NAME)),
        ("read_ios", n(d.ios[0])),
        ("write_ios", n(d.ios[1])),
        ("read_sectors", n(d.sectors[0])),
        ("write_sectors", n(d.sectors[1])),
        ("read_merges", n(0)),
        ("write_merges", n(0)),
        ("read_ticks", n(ms(d.ticks_ns[0]))),
        ("write_ticks", n(ms(d.ticks_ns[1]))),
        ("in_queue", n(ms(d.ticks_ns[0] + d.ticks_ns[1]))),
        ("util", n(util)),
    ])])
}

/// The whole JSON document; `plus` adds the `bins` of each `clat_ns` (fio's json+).
pub fn render(run: &FioRun, plus: bool) -> String {
    let global = run
        .global_options
        .iter()
        .map(|(k, v)| (k.clone(), n(v.as_str())))
        .collect();
    let mut nearflash = run.nearflash.clone();
    if let Some(o) = nearflash.as_object_mut() {
        o.insert(
            "ignored_options".into(),
            run.ignored
                .iter()
                .map(|(k, at)| Value::from(format!("{k} ({at})")))
                .collect(),
        );
        o.insert(
            "notes".into(),
            run.notes.iter().map(|t| Value::from(t.as_str())).collect(),
        );
    }
    let doc = obj(vec![
        (
            "fio version",
            n(format!(
                "{FIO_LAYOUT_VERSION} (nearflash {})",
                env!("CARGO_PKG_VERSION")
            )),
        ),
        ("timestamp", n(0)),
        ("timestamp_ms", n(0)),
        ("time", n(EPOCH_CTIME)),
        ("global options", Node::Object(global)),
        (
            "jobs",
            Node::Array(run.jobs.iter().map(|j| job(run, j, plus)).collect()),
        ),
        ("disk_util", disk_util(run)),
        ("nearflash", Node::Leaf(nearflash)),
    ]);
    serde_json::to_string_pretty(&doc).expect("serialisable") + "\n"
}
