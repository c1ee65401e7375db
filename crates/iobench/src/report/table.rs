//! The report as the terminal shows it: a two-column table of the workload, the flash, the
//! optional sections and the simulator's speed.

use super::IoReport;
use comfy_table::{presets::UTF8_BORDERS_ONLY, Table};

impl IoReport {
    /// The terminal rendering.
    pub fn table(&self) -> String {
        let mut t = Table::new();
        t.load_preset(UTF8_BORDERS_ONLY);
        t.set_header(vec!["figure", "value"]);
        let mut rows = self.workload_rows();
        rows.extend(self.flash_rows());
        rows.extend(self.section_rows());
        rows.extend(self.speed_rows());
        if let Some(row) = trace_row(&self.workload) {
            rows.insert(0, row);
        }
        for (k, v) in rows {
            t.add_row(vec![k, v]);
        }
        t.to_string()
    }

    /// The table's first rows: what ran, and what the host saw (requests, bandwidth, latency).
    fn workload_rows(&self) -> Vec<(String, String)> {
        let f1 = |x: f64| format!("{x:.1}");
        let lim = &self.analytic_limits;
        vec![
            (
                "preset / seed / fidelity / interface".into(),
                format!(
                    "{} / {} / {} / {}",
                    self.preset, self.seed, self.fidelity, self.interface
                ),
            ),
            (
                "requests (failed)".into(),
                format!("{} ({})", self.requests, self.requests_failed),
            ),
            (
                "failed by kind (not in IOPS, MB/s, latency)".into(),
                if self.requests_failed_by_kind.is_empty() {
                    "-".into()
                } else {
                    self.requests_failed_by_kind
                        .iter()
                        .map(|(k, n)| format!("{k}: {n}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                },
            ),
            ("simulated time".into(), format!("{:.3} s", self.sim_time_s)),
            ("IOPS".into(), format!("{:.0}", self.iops)),
            (
                "read / write bandwidth".into(),
                format!(
                    "{} / {} MB/s",
                    f1(self.read_bandwidth_mb_s),
                    f1(self.write_bandwidth_mb_s)
                ),
            ),
            (
                "read limit (analytic)".into(),
                format!(
                    "{} MB/s (bus {}, dies {}, link {}); {:.0} page-read IOPS",
                    f1(lim.read_bandwidth_mb_s),
                    f1(lim.bus_read_bandwidth_mb_s),
                    f1(lim.die_read_bandwidth_mb_s),
                    lim.link_up_payload_mb_s.map_or("-".into(), f1),
                    lim.page_read_iops
                ),
            ),
            (
                "latency p50 / p99 / p99.9 / max".into(),
                format!(
                    "{} / {} / {} / {} us",
                    f1(self.latency_us.p50),
                    f1(self.latency_us.p99),
                    f1(self.latency_us.p999),
                    f1(self.latency_us.max)
                ),
            ),
        ]
    }

    /// The flash translation layer's and the flash's rows: WAF, GC, wear, utilization, sizes.
    fn flash_rows(&self) -> Vec<(String, String)> {
        vec![
            (
                "WAF".into(),
                self.waf.map_or("-".into(), |w| format!("{w:.2}")),
            ),
            (
                "GC runs / pages copied".into(),
                format!("{} / {}", self.gc_runs, self.gc_pages_copied),
            ),
            (
                "checkpoints written (longest)".into(),
                format!(
                    "{} ({:.1} ms)",
                    self.checkpoints_written, self.checkpoint_ms_max
                ),
            ),
            (
                "erase count min / mean / max".into(),
                format!(
                    "{} / {:.2} / {}",
                    self.erase_count.min, self.erase_count.mean, self.erase_count.max
                ),
            ),
            (
                "channel / die utilization (mean)".into(),
                format!(
                    "{:.1}% / {:.1}%",
                    100.0 * self.utilization.channel_mean,
                    100.0 * self.utilization.die_mean
                ),
            ),
            (
                "flash ops per plane (reads + programs + erases); die ops".into(),
                format!(
                    "{} ({} + {} + {}); {}",
                    self.flash_ops,
                    self.flash_page_reads,
                    self.flash_page_programs,
                    self.flash_block_erases,
                    self.flash_die_ops
                ),
            ),
            (
                "mapping table / scratchpad".into(),
                format!(
                    "{:.2} MiB / {:.2} MiB",
                    self.mapping_table_bytes as f64 / 1048576.0,
                    self.scratchpad_bytes as f64 / 1048576.0
                ),
            ),
        ]
    }

    /// The optional sections, in order: media, SLC cache, mapping cache, FDP, host link.
    fn section_rows(&self) -> Vec<(String, String)> {
        let mut rows = Vec::new();
        if let Some(m) = &self.media {
            rows.extend(m.rows());
        }
        if let Some(c) = &self.slc_cache {
            rows.extend(c.rows());
        }
        if let Some(c) = &self.mapping_cache {
            rows.extend(c.rows());
        }
        if let Some(f) = &self.fdp {
            rows.extend(f.rows());
        }
        if let Some(l) = &self.link {
            rows.extend(l.rows());
        }
        rows
    }

    /// The table's last rows: how fast the simulator ran, its memory, and the trace hash.
    fn speed_rows(&self) -> Vec<(String, String)> {
        vec![
            (
                "wall time (precondition)".into(),
                format!(
                    "{:.2} s ({})",
                    self.wall_s,
                    self.precondition
                        .as_ref()
                        .map_or("none".into(), |p| format!("{:.2} s", p.wall_s))
                ),
            ),
            (
                "per wall s, measured: events / plane ops / die ops".into(),
                format!(
                    "{:.2} M / {:.2} M / {:.2} M",
                    self.speed.measured.events_per_wall_s / 1e6,
                    self.speed.measured.plane_ops_per_wall_s / 1e6,
                    self.speed.measured.die_ops_per_wall_s / 1e6
                ),
            ),
            (
                "per wall s, whole command: events / plane ops / die ops".into(),
                format!(
                    "{:.2} M / {:.2} M / {:.2} M",
                    self.speed.whole_command.events_per_wall_s / 1e6,
                    self.speed.whole_command.plane_ops_per_wall_s / 1e6,
                    self.speed.whole_command.die_ops_per_wall_s / 1e6
                ),
            ),
            ("peak RSS".into(), format!("{:.0} MB", self.peak_rss_mb)),
            ("trace hash".into(), self.trace_hash.clone()),
        ]
    }
}

/// A trace replay's input in one row: format, requests, and what reading skipped.
fn trace_row(workload: &serde_json::Value) -> Option<(String, String)> {
    let format = workload.get("format")?.as_str()?;
    let read = workload.get("read")?;
    let n = |v: &serde_json::Value, k: &str| v.get(k).and_then(|x| x.as_u64()).unwrap_or(0);
    let mut text = format!("{format}, {} requests replayed", n(workload, "requests"));
    for (what, count) in [
        ("trims (deallocate)", n(workload, "trims")),
        ("syncs (flush)", n(workload, "flushes")),
        ("bad lines skipped", n(read, "bad_lines")),
        ("other devices' requests", n(read, "filtered_out")),
        ("reordered", n(read, "reordered")),
        ("offsets folded", n(workload, "folded_offsets")),
    ] {
        if count > 0 {
            text += &format!("; {count} {what}");
        }
    }
    if let Some(ignored) = read.get("ignored").and_then(|i| i.as_object()) {
        for (kind, count) in ignored {
            text += &format!("; {count} {kind} ignored");
        }
    }
    Some(("trace".into(), text))
}
