//! `nearflash run`: a workload (6 instances of one kernel, or a heterogeneous mix MX1–MX14)
//! on the FlashAbacus accelerator of a preset under one of its four schedulers, or on the
//! conventional SIMD baseline (host + NVMe SSD + the same accelerator without flash). Prints
//! throughput, per-instance latency, per-LWP utilization, energy by Fig. 13 category,
//! simulated time and the trace hash; `--json` writes the whole report. `--fidelity
//! functional` (FlashAbacus systems) also moves real data through the simulated flash,
//! verifies every instance against its kernel's reference and prints the verdicts; a wrong
//! output is an error (non-zero exit) naming kernel, array and index.

use crate::error::CliError;
use crate::preset::Preset;
use comfy_table::{presets::UTF8_BORDERS_ONLY, Table};
use nearflash_accel::{
    run_simd, run_workload, run_workload_functional, AccelError, Fidelity, InstanceCheck,
    NvmeConfig, PageCacheConfig, RunReport, RunSpec, SchedulerKind, SimdSpec,
};
use nearflash_kernels::Dataset;
use std::path::PathBuf;
use std::time::Instant;

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
    /// timing | functional (real data through flash, every instance verified).
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
    let preset = Preset::load(&args.preset, &args.overrides)?;
    let dataset: Dataset = args
        .dataset
        .parse()
        .map_err(|e: nearflash_kernels::KernelError| CliError::Kernel(e.to_string()))?;
    let fidelity: Fidelity = args.fidelity.parse().map_err(AccelError::from)?;
    let wall = Instant::now();
    let (report, checks) = match fidelity {
        Fidelity::Timing => (
            run_system(&preset, &args.system, &args.workload, dataset, args.seed)?,
            None,
        ),
        Fidelity::Functional => {
            let max_bytes = args.max_functional_mib.saturating_mul(1 << 20);
            let spec = accel_spec(&preset, &args.system, dataset, args.seed)?;
            match run_workload_functional(&spec, &args.workload, max_bytes) {
                Ok(run) => (run.report, Some(run.checks)),
                Err(e) => {
                    if let AccelError::Verification { checks, .. } = &e {
                        print_checks(checks);
                    }
                    return Err(e.into());
                }
            }
        }
    };
    let wall_s = wall.elapsed().as_secs_f64();
    if let Some(path) = &args.json {
        let doc = serde_json::json!({
            "preset": preset.name,
            "dataset": dataset.name(),
            "fidelity": fidelity.name(),
            "verification": checks.as_ref().map(|cs| cs
                .iter()
                .map(|c| serde_json::json!({
                    "instance": c.instance,
                    "kernel": c.kernel,
                    "app": c.app,
                    "live_out": c.live_out,
                    "ok": c.result.is_ok(),
                }))
                .collect::<Vec<_>>()),
            "version": env!("CARGO_PKG_VERSION"),
            "wall_s": wall_s,
            "report": report,
        });
        let text = serde_json::to_string_pretty(&doc).expect("serialisable");
        crate::output::write_atomic(path, (text + "\n").as_bytes())?;
    }
    print_report(&report, &preset.name, dataset, wall_s);
    if let Some(checks) = &checks {
        print_checks(checks);
    }
    Ok(())
}

/// Runs `workload` on `system` (simd or one of the four schedulers) of `preset`.
pub fn run_system(
    preset: &Preset,
    system: &str,
    workload: &str,
    dataset: Dataset,
    seed: u64,
) -> Result<RunReport, CliError> {
    if system.eq_ignore_ascii_case("simd") {
        let accel = preset.accel.as_ref().ok_or_else(|| CliError::NoAccel {
            preset: preset.name.clone(),
        })?;
        let missing = |table| CliError::NoHost {
            preset: preset.name.clone(),
            table,
        };
        let spec = SimdSpec {
            accel,
            host: preset.host.as_ref().ok_or_else(|| missing("host"))?,
            // The host model's page cache and cores, and the SSD's NVMe front end: their
            // cited defaults (the Intel 750 is a PCIe 3.0 x4 NVMe drive, the link's default).
            page_cache: &PageCacheConfig::default(),
            ssd_nvme: &NvmeConfig::default(),
            ssd_flash: preset
                .ssd_flash
                .as_ref()
                .ok_or_else(|| missing("ssd_flash"))?,
            ssd_ftl: preset.ssd_ftl.as_ref().ok_or_else(|| missing("ssd_ftl"))?,
            dataset,
            seed,
        };
        Ok(run_simd(&spec, workload)?)
    } else {
        let spec = accel_spec(preset, system, dataset, seed)?;
        Ok(run_workload(&spec, workload)?)
    }
}

/// The accelerator run of `system` (one of the four FlashAbacus schedulers) of `preset`,
/// for `run_workload` or `run_workload_functional`; `simd` has no functional fidelity and
/// is refused.
pub fn accel_spec<'a>(
    preset: &'a Preset,
    system: &str,
    dataset: Dataset,
    seed: u64,
) -> Result<RunSpec<'a>, CliError> {
    let accel = preset.accel.as_ref().ok_or_else(|| CliError::NoAccel {
        preset: preset.name.clone(),
    })?;
    if system.eq_ignore_ascii_case("simd") {
        return Err(AccelError::SimdFunctional.into());
    }
    Ok(RunSpec {
        accel,
        flash: &preset.flash,
        ftl: &preset.ftl,
        scheduler: system.parse::<SchedulerKind>()?,
        dataset,
        seed,
    })
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

fn print_report(r: &RunReport, preset: &str, dataset: Dataset, wall_s: f64) {
    println!(
        "{} on {preset} ({}), {} instances, dataset {}, seed {}",
        r.workload,
        r.scheduler,
        r.instances.len(),
        dataset.name(),
        r.seed
    );
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
    println!("{t}");
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
    println!("{u}");
    let mut p = Table::new();
    p.load_preset(UTF8_BORDERS_ONLY);
    p.set_header(vec!["component", "category", "busy", "energy"]);
    for (name, c) in &e.per_component {
        p.add_row(vec![
            name.clone(),
            format!("{:?}", c.category),
            format!("{:.6} s", c.busy_ns as f64 / 1e9),
            format!("{:.4} J", c.energy_j),
        ]);
    }
    println!("{p}");
}
