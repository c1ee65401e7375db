//! `nearflash serve`: mount a device image through FUSE (live mode, `nearflash_live`) until
//! SIGINT/SIGTERM or `fusermount3 -u`; then unmount, commit, and write the final statistics
//! (atomically) beside the image or to `--stats`. `nearflash stats --mount DIR` prints a
//! running server's statistics as a table.

use crate::error::CliError;
use crate::output::{check_file, write_atomic};
use nearflash_live::{Expose, LiveStats, Pace, ServeConfig};
use nearflash_preset::Preset;
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug)]
pub struct ServeArgs {
    /// The device image (made by `nearflash fs mkfs`, or by `--format`).
    #[arg(long)]
    pub image: PathBuf,
    /// An existing empty directory to mount on.
    #[arg(long)]
    pub mount: PathBuf,
    /// Create (overwrite) the image with `--preset` and format its file system first.
    #[arg(long)]
    pub format: bool,
    /// The preset for `--format`.
    #[arg(long)]
    pub preset: Option<String>,
    #[arg(long = "set", value_name = "TABLE.FIELD=VALUE")]
    pub overrides: Vec<String>,
    /// none: answer as fast as the host computes, account simulated time; wall: hold each
    /// answer until its simulated completion time.
    #[arg(long, default_value = "none")]
    pub pace: Pace,
    /// fs: the device's file system; raw: its logical space as one file, MOUNT/device.
    #[arg(long, default_value = "fs")]
    pub expose: Expose,
    /// Where the final statistics go (default: IMAGE.stats.json).
    #[arg(long)]
    pub stats: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
pub struct StatsArgs {
    /// The mount point of a running `nearflash serve`.
    #[arg(long)]
    pub mount: PathBuf,
    /// Print the JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

pub fn serve(args: &ServeArgs) -> Result<(), CliError> {
    let format = match (args.format, &args.preset) {
        (true, Some(p)) => Some(Preset::load(p, &args.overrides)?),
        (true, None) => {
            return Err(CliError::Workload("--format needs --preset".into()));
        }
        (false, Some(_)) => {
            return Err(CliError::Workload(
                "--preset applies only with --format (an image keeps its own preset)".into(),
            ))
        }
        (false, None) if !args.overrides.is_empty() => {
            return Err(CliError::Workload(
                "--set applies only with --format".into(),
            ))
        }
        (false, None) => None,
    };
    let stats_path = args.stats.clone().unwrap_or_else(|| {
        let mut p = args.image.clone().into_os_string();
        p.push(".stats.json");
        PathBuf::from(p)
    });
    check_file("--stats", &stats_path)?;
    let cfg = ServeConfig {
        image: args.image.clone(),
        mount: args.mount.clone(),
        format,
        pace: args.pace,
        expose: args.expose,
    };
    let stats = nearflash_live::serve(&cfg, || {
        eprintln!(
            "serving {} at {} (pace {:?}); statistics at {}/.nearflash/stats.json; \
             virtual files: nearflash vfile register; Ctrl-C or fusermount3 -u to stop",
            cfg.image.display(),
            cfg.mount.display(),
            cfg.pace,
            cfg.mount.display()
        );
    })
    .map_err(|e| CliError::Live(Box::new(e)))?;
    let mut json = serde_json::to_vec_pretty(&stats).expect("stats serialize");
    json.push(b'\n');
    write_atomic(&stats_path, &json)?;
    print_table(&stats);
    println!("statistics written to {}", stats_path.display());
    if let Some(e) = &stats.device_error {
        return Err(CliError::Store(e.clone()));
    }
    Ok(())
}

pub fn stats(args: &StatsArgs) -> Result<(), CliError> {
    let path = args.mount.join(".nearflash").join("stats.json");
    let text = read_bounded(&path)?;
    if args.json {
        print!("{text}");
        return Ok(());
    }
    let stats: LiveStats = serde_json::from_str(&text).map_err(|source| CliError::StatsFile {
        path: path.display().to_string(),
        source,
    })?;
    print_table(&stats);
    Ok(())
}

/// Reads the statistics file (at most 1 MiB: it is a few KiB).
fn read_bounded(path: &Path) -> Result<String, CliError> {
    use std::io::Read;
    let io = |source| CliError::Io {
        what: format!(
            "{} (is a `nearflash serve` running at that mount point?)",
            path.display()
        ),
        source,
    };
    let mut text = String::new();
    std::fs::File::open(path)
        .map_err(io)?
        .take(1 << 20)
        .read_to_string(&mut text)
        .map_err(io)?;
    Ok(text)
}

fn print_table(s: &LiveStats) {
    let mut t = comfy_table::Table::new();
    t.set_header(vec![
        "operation",
        "count",
        "errors",
        "bytes",
        "mean µs",
        "p50 µs",
        "p99 µs",
        "max µs",
    ]);
    for (name, o) in &s.ops {
        t.add_row(vec![
            name.clone(),
            o.count.to_string(),
            o.errors.to_string(),
            o.bytes.to_string(),
            format!("{:.1}", o.latency_us.mean),
            format!("{:.1}", o.latency_us.p50),
            format!("{:.1}", o.latency_us.p99),
            format!("{:.1}", o.latency_us.max),
        ]);
    }
    println!(
        "{} ({}, expose {}, pace {:?})",
        s.image, s.preset, s.expose, s.pace
    );
    println!("{t}");
    let mut d = comfy_table::Table::new();
    d.set_header(vec!["figure", "value"]);
    let mut row = |k: &str, v: String| {
        d.add_row(vec![k.to_string(), v]);
    };
    row("operations", s.ops_total.to_string());
    row("errors", s.errors_total.to_string());
    row(
        "simulated / wall time",
        format!("{:.3} s / {:.3} s", s.sim_time_s, s.wall_time_s),
    );
    row("device busy (simulated)", format!("{:.3} s", s.busy_sim_s));
    row(
        "IOPS (per busy s / per wall s)",
        format!("{:.0} / {:.0}", s.iops_busy, s.iops_wall),
    );
    row(
        "read / written",
        format!("{} B / {} B", s.read_bytes, s.write_bytes),
    );
    row(
        "latency µs mean / p50 / p99 / p99.9 / max",
        format!(
            "{:.1} / {:.1} / {:.1} / {:.1} / {:.1}",
            s.latency_us.mean,
            s.latency_us.p50,
            s.latency_us.p99,
            s.latency_us.p999,
            s.latency_us.max
        ),
    );
    if let Some(c) = &s.buffer_cache {
        row(
            "buffer cache hits / misses",
            format!("{} / {} ({:.1}%)", c.hits, c.misses, c.hit_ratio * 100.0),
        );
    }
    if let Some(f) = &s.fs {
        row("fs commits", f.commits.to_string());
    }
    let v = &s.device;
    row(
        "FTL host reads / writes",
        format!("{} / {}", v.host_reads, v.host_writes),
    );
    row("WAF", format!("{:.2}", v.waf));
    row(
        "GC runs / pages copied",
        format!("{} / {}", v.gc_runs, v.gc_pages_copied),
    );
    row(
        "flash page reads / programs / erases",
        format!(
            "{} / {} / {}",
            v.flash_page_reads, v.flash_page_programs, v.flash_block_erases
        ),
    );
    row("energy", format!("{:.3} J", s.energy.joules));
    if let Some(v) = &s.vfiles {
        row(
            "virtual files registered / runs / failed",
            format!("{} / {} / {}", v.registered, v.runs, v.runs_failed),
        );
        row(
            "virtual files bytes in / out",
            format!("{} B / {} B", v.bytes_in, v.bytes_out),
        );
        row(
            "virtual files ISC unit requests / credits returned",
            format!("{} / {}", v.isc_requests, v.credits_returned),
        );
        row(
            "virtual files slot or core time (simulated)",
            format!("{:.6} s", v.program_sim_s),
        );
        if let Some(e) = &v.last_error {
            row("virtual files last error", e.clone());
        }
    }
    if let Some(e) = &s.device_error {
        row("device error", e.clone());
    }
    println!("{d}");
}
