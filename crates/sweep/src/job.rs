//! The jobs a sweep can run, each mapping a point's options document onto the job's typed
//! options (`nearflash-jobs`) and returning the same JSON the CLI writes; and which of their
//! figures a table may record (only reproducible ones: wall-clock figures are refused).

use nearflash_jobs::JobError;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Job {
    /// `nearflash io`: block I/O on a preset's device.
    Io,
    /// `nearflash run`: a workload on FlashAbacus.
    Run,
    /// An INSIDER application on one system.
    Insider,
    /// INSIDER programs side by side in the drive's slots.
    InsiderShare,
    /// Hayagui's file-operation microbenchmark.
    Fileops,
    /// LevelDB's db_bench on Hayagui's accelerator.
    DbBench,
    /// A YCSB core workload on Hayagui's accelerator.
    Ycsb,
    /// The genome application on Hayagui's accelerator.
    Genome,
    /// A user's WebAssembly program over a file, next to the data.
    Program,
    /// One Active Flash point (background compression, or a split job).
    ActiveFlash,
    /// A hot and a cold write stream: conventional, FDP, ZNS with host placement.
    Placement,
}

/// Figures that depend on the machine that ran the simulation, not on the model (the first
/// part of a metric's path).
const WALL_CLOCK: [&str; 5] = [
    "wall_s",
    "events_per_wall_s",
    "speed",
    "peak_rss_mb",
    // The zoned io report's.
    "sim_ops_per_wall_s",
];

impl Job {
    pub const ALL: [Job; 11] = [
        Job::Io,
        Job::Run,
        Job::Insider,
        Job::InsiderShare,
        Job::Fileops,
        Job::DbBench,
        Job::Ycsb,
        Job::Genome,
        Job::Program,
        Job::ActiveFlash,
        Job::Placement,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Job::Io => "io",
            Job::Run => "run",
            Job::Insider => "insider",
            Job::InsiderShare => "insider-share",
            Job::Fileops => "fileops",
            Job::DbBench => "db-bench",
            Job::Ycsb => "ycsb",
            Job::Genome => "genome",
            Job::Program => "program",
            Job::ActiveFlash => "active-flash",
            Job::Placement => "placement",
        }
    }

    pub fn named(name: &str) -> Result<Job, String> {
        Job::ALL
            .into_iter()
            .find(|j| j.name() == name)
            .ok_or_else(|| {
                format!(
                    "unknown job '{name}' (known: {})",
                    Job::ALL.map(Job::name).join(", ")
                )
            })
    }

    /// The preset a point uses when the spec names none (the CLI's default).
    pub fn default_preset(self) -> &'static str {
        match self {
            Job::Io | Job::Run => "flashabacus",
            Job::Insider | Job::InsiderShare | Job::Program => "insider",
            Job::Fileops | Job::DbBench | Job::Ycsb | Job::Genome => "hayagui",
            Job::ActiveFlash => "active-flash",
            Job::Placement => "test-min",
        }
    }

    /// The table's columns when the spec lists no `metrics`.
    pub fn default_metrics(self) -> &'static [&'static str] {
        match self {
            Job::Io => &[
                "iops",
                "read_bandwidth_mb_s",
                "write_bandwidth_mb_s",
                "latency_us.p50",
                "latency_us.p99",
                "latency_us.p999",
                "waf",
                "gc_runs",
                "trace_hash",
            ],
            Job::Run => &[
                "report.throughput_mb_s",
                "report.latency_ms.avg",
                "report.latency_ms.max",
                "report.energy_j.total",
                "report.sim_time_ns",
                "report.trace_hash",
            ],
            Job::Insider => &[
                "throughput_mb_s",
                "sim_ns",
                "engine_utilization",
                "pcie_d2h_utilization",
                "trace_hash",
            ],
            Job::InsiderShare => &[
                "per_program_mb_s",
                "min_program_mb_s",
                "max_program_mb_s",
                "total_mb_s",
                "fair_share_mb_s",
                "worst_deviation",
            ],
            Job::Fileops => &[
                "latency.mean_ns",
                "latency.p99_ns",
                "throughput_mb_s",
                "nvme_commands",
                "trace_hash",
            ],
            Job::DbBench => &[
                "sim_ns",
                "compute_ns",
                "nvme_commands",
                "ssd_flushes",
                "trace_hash",
            ],
            Job::Ycsb => &[
                "load.throughput_ops_per_s",
                "run.throughput_ops_per_s",
                "nvme_commands",
                "trace_hash",
            ],
            Job::Genome => &["total_ns", "mapped", "reads", "trace_hash"],
            Job::Program => &[
                "exit_code",
                "run.time_ns",
                "run.throughput_mb_s",
                "run.fuel",
                "host_only.time_ns",
            ],
            Job::ActiveFlash => &[
                "background.achieved_mb_s",
                "background.fraction_compressed",
                "background.energy_saving",
                "background.latency_us_p99",
                "split.throughput_mb_s",
                "split.energy_j",
            ],
            Job::Placement => &[
                "modes.0.waf",
                "modes.0.host_waf",
                "modes.0.device_waf",
                "modes.0.copied_units",
                "modes.0.throughput_mb_s",
                "modes.0.write_latency_us_p99",
                "modes.0.write_latency_us_p999",
            ],
        }
    }

    /// A metric path is a dotted path into the job's JSON; wall-clock figures are refused.
    pub fn check_metric(self, m: &str) -> Result<(), String> {
        let first = m.split('.').next().unwrap_or("");
        let first_of_report = m.strip_prefix("report.").unwrap_or(m);
        let first_of_report = first_of_report.split('.').next().unwrap_or("");
        if WALL_CLOCK.contains(&first) || WALL_CLOCK.contains(&first_of_report) {
            return Err(format!(
                "metric '{m}' depends on the machine that runs the simulation, not on the model; \
                 a sweep's table records only reproducible figures"
            ));
        }
        if m.is_empty() || m.split('.').any(str::is_empty) {
            return Err(format!("metric '{m}' is not a dotted path"));
        }
        Ok(())
    }

    /// Runs the job on an options document (`preset`, `overrides`, `seed` and the job's own
    /// options), returning its JSON.
    pub fn run(self, doc: serde_json::Value) -> Result<serde_json::Value, JobError> {
        use nearflash_jobs as j;
        Ok(match self {
            Job::Io => {
                let o: j::IoOptions = j::options_from("io", doc)?;
                // A zoned preset (`zns.enabled = true`, fixed or swept) runs the zoned job.
                serde_json::to_value(j::io_any(&o, &mut |_, _, _| {})?)
                    .expect("a report serialises")
            }
            Job::Run => {
                let o: j::RunOptions = j::options_from("run", doc)?;
                j::run(&o).map_err(|f| f.error)?.json()
            }
            Job::Insider => j::insider(&j::options_from("insider", doc)?)?,
            Job::InsiderShare => j::insider_share(&j::options_from("insider-share", doc)?)?,
            Job::Fileops => to_json(j::fileops(&j::options_from("fileops", doc)?)?),
            Job::DbBench => to_json(j::db_bench(&j::options_from("db-bench", doc)?)?),
            Job::Ycsb => to_json(j::ycsb(&j::options_from("ycsb", doc)?)?),
            Job::Genome => to_json(j::genome(&j::options_from("genome", doc)?)?),
            Job::Program => to_json(j::program(&j::options_from("program", doc)?)?.report),
            Job::ActiveFlash => to_json(j::active_flash(&j::options_from("active-flash", doc)?)?),
            Job::Placement => to_json(j::placement(&j::options_from("placement", doc)?)?),
        })
    }

    /// Checks an options document without running it (every name known, every value typed).
    pub fn check(self, doc: serde_json::Value) -> Result<(), JobError> {
        use nearflash_jobs as j;
        match self {
            Job::Io => j::options_from::<j::IoOptions>("io", doc).map(drop),
            Job::Run => j::options_from::<j::RunOptions>("run", doc).map(drop),
            Job::Insider => j::options_from::<j::InsiderOptions>("insider", doc).map(drop),
            Job::InsiderShare => j::options_from::<j::ShareOptions>("insider-share", doc).map(drop),
            Job::Fileops => j::options_from::<j::FileopsOptions>("fileops", doc).map(drop),
            Job::DbBench => j::options_from::<j::DbBenchOptions>("db-bench", doc).map(drop),
            Job::Ycsb => j::options_from::<j::YcsbOptions>("ycsb", doc).map(drop),
            Job::Genome => j::options_from::<j::GenomeOptions>("genome", doc).map(drop),
            Job::Program => j::options_from::<j::ProgramOptions>("program", doc).map(drop),
            Job::ActiveFlash => {
                j::options_from::<j::ActiveFlashOptions>("active-flash", doc).map(drop)
            }
            Job::Placement => j::options_from::<j::PlacementOptions>("placement", doc).map(drop),
        }
    }
}

/// A job's result as the JSON the CLI writes.
fn to_json(v: impl serde::Serialize) -> serde_json::Value {
    serde_json::to_value(v).expect("a job's result serialises")
}

/// A metric whose cells are text, not numbers: a trace hash (`trace_hash`, `report.trace_hash`).
/// Every other metric is a figure; a text value there is refused (`Point::run`).
pub fn is_text_metric(path: &str) -> bool {
    path.rsplit('.').next() == Some("trace_hash")
}

/// The value at a dotted `path` in `doc` (object keys, or list indices as numbers).
pub fn lookup<'a>(doc: &'a serde_json::Value, path: &str) -> Option<&'a serde_json::Value> {
    path.split('.').try_fold(doc, |v, part| match v {
        serde_json::Value::Object(m) => m.get(part),
        serde_json::Value::Array(a) => part.parse::<usize>().ok().and_then(|i| a.get(i)),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wall_clock_metrics_are_refused_and_paths_are_followed() {
        assert!(Job::Io.check_metric("speed.events_per_wall_s").is_err());
        assert!(Job::Run.check_metric("report.wall_s").is_err());
        assert!(Job::Io.check_metric("latency_us.p99").is_ok());
        let doc = serde_json::json!({"a": {"b": [1, {"c": 2}]}});
        assert_eq!(lookup(&doc, "a.b.1.c"), Some(&serde_json::json!(2)));
        assert_eq!(lookup(&doc, "a.x"), None);
        assert!(Job::Io.check_metric("sim_ops_per_wall_s").is_err());
    }

    /// Story (issue 34): `job = "io"` with `zns.enabled = true` failed with "runs through the
    /// zoned job": a sweep could not put zoned drives beside ordinary ones.
    #[test]
    fn an_io_point_on_a_zoned_preset_runs_the_zoned_job() {
        let point = |overrides: Vec<&str>| {
            serde_json::json!({
                "preset": "test-min",
                "overrides": overrides,
                "seed": 1,
                "pattern": "seq-write",
                "request_kib": 16,
                "requests": 400,
                "queue_depth": 2,
            })
        };
        let zoned = Job::Io.run(point(vec!["zns.enabled=true"])).unwrap();
        assert!(lookup(&zoned, "resets").is_some(), "{zoned}");
        assert!(lookup(&zoned, "waf").unwrap().as_f64().unwrap() >= 1.0);
        let plain = Job::Io.run(point(vec![])).unwrap();
        assert!(lookup(&plain, "iops").is_some() && lookup(&plain, "resets").is_none());
    }
}
