//! `nearflash run`: a workload (6 instances of one kernel, or a heterogeneous mix MX1–MX14)
//! on the FlashAbacus accelerator of a preset under one of its four schedulers, or on the
//! conventional SIMD baseline (host + NVMe SSD + the same accelerator without flash). Prints
//! throughput, per-instance latency, per-LWP utilization, energy by Fig. 13 category,
//! simulated time and the trace hash; `--json` writes the whole report. `--fidelity
//! functional` also moves real data — through the accelerator's flash, or for SIMD through
//! the host's SSD, PCIe and DDR3L — verifies every instance against its kernel's reference
//! and prints the verdicts; a wrong output is an error (non-zero exit) naming kernel, array
//! and index. The job itself is `nearflash_jobs::run`.

use crate::error::CliError;
use comfy_table::{presets::UTF8_BORDERS_ONLY, Table};
use nearflash_accel::{InstanceCheck, RunReport};
use nearflash_jobs::{RunFailure, RunOptions};
use nearflash_kernels::Dataset;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// Built-in preset name or path to a TOML preset with an [accel] table.
    #[arg(long, default_value = "flashabacus")]
    pub preset: String,
    /// Override a preset field, e.g. --set accel.lwp_cpi=1.5 (repeatable).
    #[arg(long = "set", value_name = "TABLE.FIELD=VALUE")]
    pub overrides: Vec<String>,
    /// simd | inter-st | inter-dy | intra-io | intra-o3.
    #[arg(long)]
    pub system: String,
    /// A kernel name (6 instances) or mx1..mx14 (24 instances).
    #[arg(long)]
    pub workload: String,
    /// Kernel sizes: mini | small | medium | large | extralarge | paper (Table 2).
    #[arg(long, default_value = "paper")]
    pub dataset: String,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// timing | functional (real data through the devices, every instance verified).
    #[arg(long, default_value = "timing")]
    pub fidelity: String,
    /// Functional fidelity: refuse a run whose data would take more memory than this.
    #[arg(long, default_value_t = 2048)]
    pub max_functional_mib: u64,
    /// Write the report as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

pub fn run(args: &RunArgs) -> Result<(), CliError> {
    if let Some(path) = &args.json {
        crate::output::check_file("--json", path)?;
    }
    let opts = RunOptions {
        preset: args.preset.clone(),
        overrides: args.overrides.clone(),
        system: args.system.clone(),
        workload: args.workload.clone(),
        dataset: args.dataset.clone(),
        seed: args.seed,
        fidelity: args.fidelity.clone(),
        max_functional_mib: args.max_functional_mib,
    };
    let out = match nearflash_jobs::run(&opts) {
        Ok(out) => out,
        Err(failure) => {
            let RunFailure { error, checks } = *failure;
            if let Some(checks) = &checks {
                print_checks(checks);
            }
            return Err(error.into());
        }
    };
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&out.json()).expect("serialisable");
        crate::output::write_atomic(path, (text + "\n").as_bytes())?;
    }
    print_report(&out.report, &out.preset, out.dataset, out.wall_s);
    if let Some(checks) = &out.checks {
        print_checks(checks);
    }
    Ok(())
}

/// The functional verdicts: one row per instance.
fn print_checks(checks: &[InstanceCheck]) {
    let mut t = Table::new();
    t.load_preset(UTF8_BORDERS_ONLY);
    t.set_header(vec![
        "instance",
        "kernel",
        "live-out arrays",
        "verification",
    ]);
    for c in checks {
        t.add_row(vec![
            c.instance.to_string(),
            c.kernel.to_string(),
            c.live_out.join(", "),
            match &c.result {
                Ok(()) => "ok".to_string(),
                Err(e) => format!("FAILED: {e}"),
            },
        ]);
    }
    let passed = checks.iter().filter(|c| c.result.is_ok()).count();
    println!(
        "functional verification: {passed} of {} instances match their reference",
        checks.len()
    );
    println!("{t}");
}

/// The run's headline, its metrics, each LWP's utilization and each component's energy.
fn print_report(r: &RunReport, preset: &str, dataset: Dataset, wall_s: f64) {
    println!(
        "{} on {preset} ({}), {} instances, dataset {}, seed {}",
        r.workload,
        r.scheduler,
        r.instances.len(),
        dataset.name(),
        r.seed
    );
    println!("{}", metrics_table(r, wall_s));
    println!("{}", lwp_table(r));
    println!("{}", component_table(r));
}

/// Throughput, latency, time, data moved, events, energy (and for SIMD the host's busy
/// times), and the trace hash.
fn metrics_table(r: &RunReport, wall_s: f64) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_BORDERS_ONLY);
    t.set_header(vec!["metric", "value"]);
    t.add_row(vec![
        "throughput".to_string(),
        format!("{:.2} MB/s", r.throughput_mb_s),
    ]);
    t.add_row(vec![
        "latency min / avg / max".to_string(),
        format!(
            "{:.2} / {:.2} / {:.2} ms",
            r.latency_ms.min, r.latency_ms.avg, r.latency_ms.max
        ),
    ]);
    t.add_row(vec![
        "simulated time".to_string(),
        format!("{:.6} s", r.sim_time_ns as f64 / 1e9),
    ]);
    t.add_row(vec![
        "input processed".to_string(),
        format!("{:.1} MB", r.input_bytes as f64 / 1e6),
    ]);
    t.add_row(vec![
        "flash read / written".to_string(),
        format!(
            "{:.1} / {:.1} MB",
            r.flash_read_bytes as f64 / 1e6,
            r.flash_write_bytes as f64 / 1e6
        ),
    ]);
    t.add_row(vec![
        "events (wall)".to_string(),
        format!("{} ({wall_s:.2} s)", r.events),
    ]);
    let e = &r.energy_j;
    t.add_row(vec![
        "energy total".to_string(),
        format!(
            "{:.3} J (data movement {:.3}, computation {:.3}, storage access {:.3})",
            e.total, e.data_movement, e.computation, e.storage_access
        ),
    ]);
    if r.scheduler == "simd" {
        let chunks: u32 = r.instances.iter().map(|i| i.chunks).sum();
        t.add_row(vec![
            "host CPU / DRAM / SSD busy".to_string(),
            format!(
                "{:.3} / {:.3} / {:.3} s ({chunks} chunks)",
                r.host_cpu_busy_ns as f64 / 1e9,
                r.host_dram_busy_ns as f64 / 1e9,
                r.ssd_busy_ns as f64 / 1e9
            ),
        ]);
    }
    t.add_row(vec!["trace hash".to_string(), r.trace_hash.clone()]);
    t
}

/// Each LWP's role under the scheduler and its utilization.
fn lwp_table(r: &RunReport) -> Table {
    let mut u = Table::new();
    u.load_preset(UTF8_BORDERS_ONLY);
    u.set_header(vec!["LWP", "role", "utilization"]);
    for (i, x) in r.lwp_utilization.iter().enumerate() {
        let role = match (i, r.scheduler) {
            (0 | 1, "simd") => "idle (no Flashvisor/Storengine in SIMD)",
            (0, _) => "Flashvisor",
            (1, _) => "Storengine (GC/checkpoint in progress)",
            _ => "worker",
        };
        u.add_row(vec![
            format!("LWP{i}"),
            role.to_string(),
            format!("{:.1}%", x * 100.0),
        ]);
    }
    u
}

/// Each component's category, busy time and energy.
fn component_table(r: &RunReport) -> Table {
    let mut p = Table::new();
    p.load_preset(UTF8_BORDERS_ONLY);
    p.set_header(vec!["component", "category", "busy", "energy"]);
    for (name, c) in &r.energy_j.per_component {
        p.add_row(vec![
            name.clone(),
            format!("{:?}", c.category),
            format!("{:.6} s", c.busy_ns as f64 / 1e9),
            format!("{:.4} J", c.energy_j),
        ]);
    }
    p
}
