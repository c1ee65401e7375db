//! fio's normal text output (`--output-format=normal`), laid out as fio 3.42's `stat.c`
//! prints it (`show_thread_status_normal`, `show_ddir_status`, `show_clat_percentiles`,
//! `show_group_stats`, `show_disk_util`) with its number formatting (`num2str`: four
//! significant digits, binary units with decimal ones beside), then nearflash's own
//! figures. Submission latency (`slat`) and CPU figures are not printed where fio would
//! show zeros for a simulated host.

use crate::job::DISK_NAME;
use crate::json::{
    group_bandwidth, rates, runtime_ms, EPOCH_CTIME, FIO_LAYOUT_VERSION, PERCENTILES,
};
use crate::options::{BlockSizes, Rw, DIRECTIONS};
use crate::runner::{FioRun, JobReport};
use crate::stats::{DirStats, JobStats, LatStat, LAT_LABELS};
use std::fmt::Write;

/// fio's `num2str` with four significant digits: divide by `base` while the value has more
/// than four digits, then show `3 − integer digits` decimals if it was divided.
pub fn num2str(value: f64, base: f64, units: &[&str]) -> String {
    let mut v = value;
    let mut unit = 0;
    while v >= 10_000.0 && unit + 1 < units.len() {
        v /= base;
        unit += 1;
    }
    if unit == 0 {
        return format!("{}{}", v.round() as u64, units[0]);
    }
    let digits = (v.max(1.0).log10().floor() as usize) + 1;
    let decimals = 3usize.saturating_sub(digits);
    format!("{v:.decimals$}{}", units[unit])
}

const BIN: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
const DEC: [&str; 6] = ["B", "kB", "MB", "GB", "TB", "PB"];
const COUNT: [&str; 5] = ["", "k", "M", "G", "T"];

fn bytes(v: f64) -> (String, String) {
    (num2str(v, 1024.0, &BIN), num2str(v, 1000.0, &DEC))
}

fn rw_name(rw: Rw) -> &'static str {
    match rw {
        Rw::Read => "read",
        Rw::Write => "write",
        Rw::Trim => "trim",
        Rw::RandRead => "randread",
        Rw::RandWrite => "randwrite",
        Rw::RandTrim => "randtrim",
        Rw::ReadWrite => "rw",
        Rw::RandReadWrite => "randrw",
    }
}

/// fio's `display_lat` (`nsec_to_usec`, `nsec_to_msec` in `stat.h`): µs once the values
/// are spread past 100 µs, ms once past 100 ms; min and max in whole units.
fn lat_line(out: &mut String, name: &str, l: &LatStat) {
    let h = &l.hist;
    let (min, max, dev) = (h.min_ns(), h.max_ns(), l.stddev_ns());
    let (div, unit) = if min > 2_000_000 && max > 99_999_999 && dev > 1e6 {
        (1_000_000, "msec")
    } else if min > 2_000 && max > 99_999 && dev > 1e3 {
        (1_000, "usec")
    } else {
        (1, "nsec")
    };
    let _ = writeln!(
        out,
        "    {name} ({unit}): min={}, max={}, avg={:5.02}, stdev={:5.02}",
        num2str((min / div) as f64, 1000.0, &COUNT),
        num2str((max / div) as f64, 1000.0, &COUNT),
        h.mean_ns() / div as f64,
        dev / div as f64
    );
}

/// fio's `show_clat_percentiles`: the unit by the range of the values, four to a line.
fn percentiles(out: &mut String, name: &str, l: &LatStat) {
    let h = &l.hist;
    if h.count() == 0 {
        return;
    }
    let vals: Vec<u64> = PERCENTILES
        .iter()
        .map(|p| h.quantile_ns(p / 100.0))
        .collect();
    let (minv, maxv) = (vals[0], *vals.last().expect("a list"));
    let (scale, unit) = if minv > 2_000_000 && maxv > 99_999_999 {
        (2, "msec")
    } else if minv > 2_000 && maxv > 99_999 {
        (1, "usec")
    } else {
        (0, "nsec")
    };
    let scaled: Vec<u64> = vals
        .iter()
        .map(|&v| (0..scale).fold(v, |v, _| v.div_ceil(1000)))
        .collect();
    let width = 5.max(scaled.iter().max().expect("a list").to_string().len());
    let per_line = 73 / (12 + width);
    let _ = write!(out, "    {name} percentiles ({unit}):\n     |");
    for (i, (p, v)) in PERCENTILES.iter().zip(&scaled).enumerate() {
        if i != 0 && i % per_line == 0 {
            out.push_str("     |");
        }
        let last = i == PERCENTILES.len() - 1;
        let _ = write!(
            out,
            " {p:5.2}th=[{v:width$}]{}",
            if last { '\n' } else { ',' }
        );
        if !last && i % per_line == per_line - 1 {
            out.push('\n');
        }
    }
}

fn shares_line(out: &mut String, unit: &str, counts: &[u64], labels: &[String], total: u64) {
    if total == 0 {
        return;
    }
    let shown: Vec<String> = counts
        .iter()
        .zip(labels)
        .filter(|(&c, _)| c > 0)
        .map(|(&c, l)| format!("{l}={:3.2}%", c as f64 * 100.0 / total as f64))
        .collect();
    if !shown.is_empty() {
        let _ = writeln!(out, "  lat ({unit})   : {}", shown.join(", "));
    }
}

/// One job's block: its header, each direction's figures, latency shares, depths and the
/// issued counts.
fn job(out: &mut String, run: &FioRun, j: &JobReport) {
    let s = &j.stats;
    let _ = writeln!(
        out,
        "{}: (groupid={}, jobs={}): err={:2}: pid=0: {EPOCH_CTIME}",
        j.spec.name, j.groupid, j.members, j.error
    );
    if let Some(d) = &j.spec.description {
        let _ = writeln!(out, "  Description  : [{d}]");
    }
    let group_bw = group_bandwidth(run, j.groupid);
    for (d, ds) in s.dirs.iter().enumerate() {
        if ds.io_bytes == 0 {
            continue;
        }
        direction(out, j, d, ds, group_bw[d]);
    }
    latency_shares(out, s);
    if s.sync.count() > 0 {
        out.push_str("  fsync/fdatasync/sync_file_range:\n");
        lat_line(out, "sync", &s.sync);
        percentiles(out, "sync", &s.sync);
    }
    depths_and_counts(out, s, j.spec.iodepth);
}

/// One direction's lines of a job: rates, latencies, percentiles, and the bandwidth and IOPS
/// samples (`group_bw_bytes_s`: the group's aggregate bandwidth in the direction).
fn direction(out: &mut String, j: &JobReport, d: usize, ds: &DirStats, group_bw_bytes_s: u64) {
    let s = &j.stats;
    let (bw, iops) = rates(ds, s.runtime_ns);
    let (bw_bin, bw_dec) = bytes(bw as f64);
    let (io_bin, _) = bytes(ds.io_bytes as f64);
    // fio appends the job's zone resets to each direction's line (`zbd_write_status`).
    let resets = if crate::json::counts_zone_resets(&j.spec) {
        format!("; {} zone resets", s.zone_resets)
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "  {}: IOPS={}, BW={bw_bin}/s ({bw_dec}/s)({io_bin}/{}msec){resets}",
        DIRECTIONS[d],
        num2str(iops, 1000.0, &COUNT),
        runtime_ms(s.runtime_ns)
    );
    lat_line(out, "clat", &ds.clat);
    lat_line(out, " lat", &ds.clat);
    percentiles(out, "clat", &ds.clat);
    let b = &ds.bw.samples;
    if b.n > 0 {
        let per = if group_bw_bytes_s > 0 {
            b.mean() * 1024.0 * 100.0 / group_bw_bytes_s as f64
        } else {
            0.0
        };
        let _ = writeln!(
            out,
            "   bw (  KiB/s): min={:5}, max={:5}, per={per:3.2}%, avg={:5.02}, \
             stdev={:5.02}, samples={}",
            b.min as u64,
            b.max as u64,
            b.mean(),
            b.stddev(),
            b.n
        );
    }
    let i = &ds.iops.samples;
    if i.n > 0 {
        let _ = writeln!(
            out,
            "   iops        : min={:5}, max={:5}, avg={:5.02}, stdev={:5.02}, samples={}",
            i.min as u64,
            i.max as u64,
            i.mean(),
            i.stddev(),
            i.n
        );
    }
}

/// The shares of a job's requests in each latency bucket, nanoseconds to milliseconds.
fn latency_shares(out: &mut String, s: &JobStats) {
    let rw_ios: u64 = s.dirs.iter().map(|d| d.total_ios).sum();
    let labels: Vec<String> = LAT_LABELS.iter().map(u64::to_string).collect();
    let mut ms_labels = labels.clone();
    ms_labels.extend(["2000".to_string(), ">=2000".to_string()]);
    shares_line(out, "nsec", &s.lat_buckets.ns, &labels, rw_ios);
    shares_line(out, "usec", &s.lat_buckets.us, &labels, rw_ios);
    shares_line(out, "msec", &s.lat_buckets.ms, &ms_labels, rw_ios);
}

/// A job's closing lines: depths at submission, issued counts, verify and error counts, and
/// the latency target line.
fn depths_and_counts(out: &mut String, s: &JobStats, iodepth: u32) {
    let pct = |c: u64| {
        if s.submitted == 0 {
            0.0
        } else {
            c as f64 * 100.0 / s.submitted as f64
        }
    };
    let d = &s.depth_at_submit;
    let _ = writeln!(
        out,
        "  IO depths    : 1={:3.1}%, 2={:3.1}%, 4={:3.1}%, 8={:3.1}%, 16={:3.1}%, 32={:3.1}%, \
         >=64={:3.1}%",
        pct(d[0]),
        pct(d[1]),
        pct(d[2]),
        pct(d[3]),
        pct(d[4]),
        pct(d[5]),
        pct(d[6])
    );
    let _ = writeln!(
        out,
        "     issued rwts: total={},{},{},{} short=0,0,0,0 dropped=0,0,0,0",
        s.dirs[0].total_ios,
        s.dirs[1].total_ios,
        s.dirs[2].total_ios,
        s.sync.count()
    );
    if s.verified_blocks + s.verify_errors + s.verify_unchecked > 0 {
        let _ = writeln!(
            out,
            "     verify    : {} blocks matched, {} mismatched, {} not checked (no data in \
             timing fidelity)",
            s.verified_blocks, s.verify_errors, s.verify_unchecked
        );
    }
    if let Some(e) = &s.first_error {
        let _ = writeln!(out, "     errors    : total={}, first_error={e}", s.errors);
    }
    let _ = writeln!(
        out,
        "     latency   : target=0, window=0, percentile=100.00%, depth={iodepth}"
    );
}

fn group(out: &mut String, run: &FioRun, g: u32) {
    let _ = writeln!(out, "\nRun status group {g} (all jobs):");
    let agg = group_bandwidth(run, g);
    for (d, name) in ["   READ", "  WRITE", "   TRIM"].iter().enumerate() {
        let jobs: Vec<&JobReport> = run
            .jobs
            .iter()
            .filter(|j| j.groupid == g && j.stats.dirs[d].total_ios > 0)
            .collect();
        if jobs.is_empty() {
            continue;
        }
        let bws: Vec<u64> = jobs
            .iter()
            .map(|j| rates(&j.stats.dirs[d], j.stats.runtime_ns).0)
            .collect();
        let runs: Vec<u64> = jobs
            .iter()
            .map(|j| runtime_ms(j.stats.runtime_ns))
            .collect();
        let io: u64 = jobs.iter().map(|j| j.stats.dirs[d].io_bytes).sum();
        let (a, a2) = bytes(agg[d] as f64);
        let (lo, lo2) = bytes(*bws.iter().min().expect("a job") as f64);
        let (hi, hi2) = bytes(*bws.iter().max().expect("a job") as f64);
        let (i, i2) = bytes(io as f64);
        let _ = writeln!(
            out,
            "{name}: bw={a}/s ({a2}/s), {lo}/s-{hi}/s ({lo2}/s-{hi2}/s), io={i} ({i2}), \
             run={}-{}msec",
            runs.iter().min().expect("a job"),
            runs.iter().max().expect("a job")
        );
    }
}

/// The whole text report.
pub fn render(run: &FioRun) -> String {
    let mut out = String::new();
    header(&mut out, run);
    for j in &run.jobs {
        job(&mut out, run, j);
    }
    for g in 0..run.groups {
        group(&mut out, run, g);
    }
    disk_stats(&mut out, run);
    nearflash_line(&mut out, run);
    out
}

/// The report's opening: a line per section, the version, the job count, the host-only
/// options ignored and the run's notes.
fn header(out: &mut String, run: &FioRun) {
    for (spec, g) in &run.sections {
        let bs = |d: usize| match &spec.bs[d] {
            BlockSizes::Fixed(b) => format!("{b}B-{b}B"),
            other => format!("{}B-{}B", other.min(), other.max()),
        };
        let _ = writeln!(
            out,
            "{}: (g={g}): rw={}, bs=(R) {}, (W) {}, (T) {}, ioengine=nearflash, iodepth={}",
            spec.name,
            rw_name(spec.rw),
            bs(0),
            bs(1),
            bs(2),
            spec.iodepth
        );
    }
    let _ = writeln!(
        out,
        "{FIO_LAYOUT_VERSION} (nearflash {})",
        env!("CARGO_PKG_VERSION")
    );
    let _ = writeln!(
        out,
        "Starting {} jobs on the simulated drive",
        run.job_count
    );
    if !run.ignored.is_empty() {
        let names: Vec<String> = run
            .ignored
            .iter()
            .map(|(k, at)| format!("{k} ({at})"))
            .collect();
        let _ = writeln!(out, "ignored (host-only): {}", names.join(", "));
    }
    for n in &run.notes {
        let _ = writeln!(out, "note: {n}");
    }
}

/// fio's disk statistics of the simulated drive: I/Os, sectors, ticks and utilization.
fn disk_stats(out: &mut String, run: &FioRun) {
    let d = &run.disk;
    let util = if run.sim_time_ns == 0 {
        0.0
    } else {
        (d.busy_ns as f64 * 100.0 / run.sim_time_ns as f64).min(100.0)
    };
    let _ = writeln!(
        out,
        "\nDisk stats (read/write):\n  {DISK_NAME}: ios={}/{}, sectors={}/{}, merge=0/0, \
         ticks={}/{}, in_queue={}, util={util:3.2}%",
        d.ios[0],
        d.ios[1],
        d.sectors[0],
        d.sectors[1],
        d.ticks_ns[0] / 1_000_000,
        d.ticks_ns[1] / 1_000_000,
        (d.ticks_ns[0] + d.ticks_ns[1]) / 1_000_000
    );
}

/// nearflash's own closing line: the drive, WAF, GC, flash operations and trace hash.
fn nearflash_line(out: &mut String, run: &FioRun) {
    let nf = &run.nearflash;
    let f = |k: &str| nf.get(k).cloned().unwrap_or_default();
    let _ = writeln!(
        out,
        "\nnearflash: preset={}, seed={}, fidelity={}, interface={}, WAF={}, GC runs={}, \
         GC pages copied={}, flash page reads/programs/erases={}/{}/{}, trace hash={}",
        f("preset"),
        f("seed"),
        f("fidelity"),
        f("interface"),
        nf.get("waf")
            .and_then(|w| w.as_f64())
            .map_or("-".into(), |w| format!("{w:.3}")),
        f("gc_runs"),
        f("gc_pages_copied"),
        f("flash_page_reads"),
        f("flash_page_programs"),
        f("flash_block_erases"),
        f("trace_hash")
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn num2str_keeps_four_significant_digits_like_fio() {
        assert_eq!(num2str(4801.0, 1000.0, &COUNT), "4801");
        assert_eq!(num2str(48_012.0, 1000.0, &COUNT), "48.0k");
        assert_eq!(num2str(16.0 * 1048576.0, 1024.0, &BIN), "16.0MiB");
        assert_eq!(num2str(4096.0 * 1048576.0, 1024.0, &BIN), "4096MiB");
        assert_eq!(num2str(19_700_000.0, 1000.0, &DEC), "19.7MB");
        assert_eq!(num2str(4_100_000.0, 1024.0, &BIN), "4004KiB");
        assert_eq!(num2str(3.5 * 1048576.0 * 1024.0, 1024.0, &BIN), "3584MiB");
        assert_eq!(num2str(123.0 * 1048576.0, 1024.0, &BIN), "123MiB");
    }
}
