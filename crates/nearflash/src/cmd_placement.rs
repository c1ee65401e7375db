//! `nearflash placement`: why data placement matters — a hot and a cold write stream run on
//! the conventional drive, on FDP with a placement handle per stream, and on zones placed by
//! a host log-structured layer (`nearflash-placement`), side by side: write amplification
//! and its parts, copies, erases, throughput and write latency in simulated time. Every mode
//! reads its data back and checks it.

use crate::error::CliError;
use comfy_table::{presets::UTF8_BORDERS_ONLY, Table};
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct PlacementArgs {
    /// Built-in preset name or path to a TOML preset (its flash held in memory: at most 1 GiB).
    #[arg(long, default_value = "test-min")]
    pub preset: String,
    /// Override a preset field (repeatable).
    #[arg(long = "set", value_name = "TABLE.FIELD=VALUE")]
    pub overrides: Vec<String>,
    /// conventional, fdp, zns or all.
    #[arg(long, default_value = "all")]
    pub mode: String,
    /// Share of the span the hot stream overwrites, percent.
    #[arg(long, default_value_t = 12.5)]
    pub hot_fraction_percent: f64,
    /// Share of write requests the hot stream issues, percent.
    #[arg(long, default_value_t = 75)]
    pub hot_write_percent: u64,
    /// Hot request size, KiB (a power of two from 4 to the zone append size limit).
    #[arg(long, default_value_t = 4)]
    pub hot_request_kib: u64,
    /// Cold request size, KiB.
    #[arg(long, default_value_t = 16)]
    pub cold_request_kib: u64,
    /// User bytes written = passes x the span.
    #[arg(long, default_value_t = 6)]
    pub passes: u64,
    /// Writes in flight.
    #[arg(long, default_value_t = 8)]
    pub queue_depth: u32,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Write every mode's figures as JSON (atomically).
    #[arg(long)]
    pub json: Option<PathBuf>,
}

pub fn run(args: &PlacementArgs) -> Result<bool, CliError> {
    if let Some(path) = &args.json {
        crate::output::check_file("--json", path)?;
    }
    let opts = nearflash_jobs::PlacementOptions {
        preset: args.preset.clone(),
        overrides: args.overrides.clone(),
        mode: args.mode.clone(),
        hot_fraction_percent: args.hot_fraction_percent,
        hot_write_percent: args.hot_write_percent,
        hot_request_kib: args.hot_request_kib,
        cold_request_kib: args.cold_request_kib,
        passes: args.passes,
        queue_depth: args.queue_depth,
        seed: args.seed,
    };
    let run = nearflash_jobs::placement(&opts)?;
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&run).expect("serialisable");
        crate::output::write_atomic(path, (text + "\n").as_bytes())?;
    }
    println!(
        "{}: span {:.2} MiB, hot {:.2} MiB ({}% of writes, {} KiB), cold {} KiB, {} passes, \
         queue depth {}, seed {}",
        run.preset,
        run.span_bytes as f64 / 1048576.0,
        run.hot_bytes as f64 / 1048576.0,
        run.params.hot_write_percent,
        run.params.hot_request_kib,
        run.params.cold_request_kib,
        run.params.passes,
        run.params.queue_depth,
        run.params.seed
    );
    let mut t = Table::new();
    t.load_preset(UTF8_BORDERS_ONLY);
    let mut header = vec!["".to_string()];
    header.extend(run.modes.iter().map(|m| m.mode.name().to_string()));
    t.set_header(header);
    type Cell = fn(&nearflash_jobs::placement::ModeReport) -> String;
    let rows: [(&str, Cell); 16] = [
        ("user MiB", |m| {
            format!("{:.1}", m.user_bytes as f64 / 1048576.0)
        }),
        ("host copies MiB", |m| {
            format!("{:.1}", m.host_copy_bytes as f64 / 1048576.0)
        }),
        ("media MiB", |m| {
            format!("{:.1}", m.media_bytes as f64 / 1048576.0)
        }),
        ("WAF", |m| format!("{:.2}", m.waf)),
        ("  host part", |m| format!("{:.2}", m.host_waf)),
        ("  device part", |m| format!("{:.2}", m.device_waf)),
        ("units copied (GC / cleaning)", |m| {
            m.copied_units.to_string()
        }),
        ("block erases", |m| m.block_erases.to_string()),
        ("zones cleaned", |m| m.zones_cleaned.to_string()),
        ("appends retried", |m| m.appends_retried.to_string()),
        ("throughput MB/s", |m| format!("{:.2}", m.throughput_mb_s)),
        ("write p50 us", |m| format!("{:.0}", m.write_latency_us_p50)),
        ("write p99 us", |m| format!("{:.0}", m.write_latency_us_p99)),
        ("write p99.9 us", |m| {
            format!("{:.0}", m.write_latency_us_p999)
        }),
        ("write max us", |m| format!("{:.0}", m.write_latency_us_max)),
        ("units verified", |m| m.units_verified.to_string()),
    ];
    for (name, cell) in rows {
        let mut row = vec![name.to_string()];
        row.extend(run.modes.iter().map(cell));
        t.add_row(row);
    }
    println!("{t}");
    Ok(true)
}
