//! `nearflash crashtest`: power cuts at random events (aimed in turn at host writes, GC copies,
//! checkpoint writes and erases), recovery, and a read-back of every sector against the
//! reference model, one seed after another. Prints the cuts per phase and the violations; the
//! last line is "N passed, M failed", and any failure makes the exit status non-zero. With
//! `--set zns.enabled=true` the drive is zoned and the zoned crash test runs instead
//! (`nearflash_ftl::zns::crashtest`: cuts aimed at programs and Resets; acknowledged data
//! and write pointers checked).

use crate::error::CliError;
use crate::progress::Progress;
use comfy_table::{presets::UTF8_BORDERS_ONLY, Table};
use nearflash_ftl::zns::crashtest as zcrash;
use nearflash_ftl::{run_seed, summarize, CrashOutcome, CrashSummary, CrashTestConfig};
use nearflash_preset::Preset;
use serde::Serialize;
use std::path::PathBuf;
use std::time::Instant;

#[derive(clap::Args, Debug)]
pub struct CrashArgs {
    /// Built-in preset name or path to a preset TOML file (functional fidelity: the device
    /// is held in RAM, so use a small one).
    #[arg(long, default_value = "test-min")]
    pub preset: String,
    /// Override a preset field, e.g. --set flash.program_fail_probability=0.001.
    #[arg(long = "set", value_name = "TABLE.FIELD=VALUE")]
    pub overrides: Vec<String>,
    /// Number of seeds (one power-cut scenario each).
    #[arg(long, default_value_t = 100)]
    pub seeds: u64,
    /// First seed; seeds run from here upwards.
    #[arg(long, default_value_t = 0)]
    pub first_seed: u64,
    /// Random operations before the cut.
    #[arg(long)]
    pub ops: Option<usize>,
    /// Random operations (checked) on the recovered device.
    #[arg(long)]
    pub ops_after_recovery: Option<usize>,
    /// No second cut during the operations after recovery.
    #[arg(long)]
    pub single_cut: bool,
    /// Write the summary and every failed seed's outcome as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// No progress bar and no table.
    #[arg(long)]
    pub quiet: bool,
    /// Refuse a device whose pages and reference model could need more than this much RAM
    /// (MiB): the crash test fills the device and GC rewrites all of it.
    #[arg(long, default_value_t = MEMORY_MIB_MAX)]
    pub memory_max_mib: u64,
}

/// Default RAM budget of one crash-test device (MiB): far above `test-min` (about 40 MiB),
/// far below a paper-scale device (`flashabacus`: 32 GiB).
pub const MEMORY_MIB_MAX: u64 = 4096;

/// RAM a functional device of `flash` can come to hold: every physical page with its spare
/// area (GC eventually writes all of them), plus 16 bytes of reference state per sector.
pub fn functional_memory_bytes(flash: &nearflash_flash::FlashConfig) -> u64 {
    let pages = nearflash_flash::Geometry::from_config(flash).page_count();
    let per_page = u64::from(flash.page_size_bytes) + u64::from(flash.oob_size_bytes);
    let sectors = pages * u64::from(flash.page_size_bytes) / nearflash_ftl::SECTOR_BYTES;
    pages
        .saturating_mul(per_page)
        .saturating_add(sectors.saturating_mul(16))
}

#[derive(Serialize)]
struct CrashReport<'a> {
    version: &'static str,
    preset: &'a str,
    config: &'a CrashTestConfig,
    first_seed: u64,
    summary: &'a CrashSummary,
    failures: Vec<&'a CrashOutcome>,
    wall_s: f64,
}

/// Biggest seed count accepted (each seed formats and fills a device).
const SEEDS_MAX: u64 = 10_000_000;

pub fn run(args: &CrashArgs) -> Result<bool, CliError> {
    let wall = Instant::now();
    check_args(args)?;
    let preset = Preset::load(&args.preset, &args.overrides)?;
    let cfg = crash_config(args, &preset)?;
    if preset.zns.enabled {
        return run_zoned(args, &preset, &cfg, wall);
    }
    let bar = Progress::new("crashtest", !args.quiet);
    let mut outcomes = Vec::with_capacity(args.seeds as usize);
    for (i, seed) in (args.first_seed..args.first_seed + args.seeds).enumerate() {
        outcomes.push(run_seed(&preset.flash, &preset.ftl, &cfg, seed));
        bar.update(i as u64 + 1, args.seeds);
    }
    bar.finish();
    let summary = summarize(&outcomes);
    let failures: Vec<&CrashOutcome> = outcomes.iter().filter(|o| !o.passed()).collect();
    if let Some(path) = &args.json {
        let report = CrashReport {
            version: env!("CARGO_PKG_VERSION"),
            preset: &preset.name,
            config: &cfg,
            first_seed: args.first_seed,
            summary: &summary,
            failures: failures.clone(),
            wall_s: wall.elapsed().as_secs_f64(),
        };
        let text = serde_json::to_string_pretty(&report).expect("serialisable");
        crate::output::write_atomic(path, (text + "\n").as_bytes())?;
    }
    if !args.quiet {
        println!("{}", table(&summary, preset.ftl.fdp.enabled));
        for f in failures.iter().take(10) {
            println!(
                "seed {} failed: cut in {:?}; {}",
                f.seed,
                f.cut_phase,
                f.error
                    .as_deref()
                    .or(f.first_violation.as_deref())
                    .unwrap_or("I/O errors")
            );
        }
        println!("wall time: {:.2} s", wall.elapsed().as_secs_f64());
    }
    println!("{} passed, {} failed", summary.passed, summary.failed);
    Ok(summary.failed == 0)
}

/// Refuses a seed count out of range, a seed range that overflows, or a `--json` path that
/// cannot be written.
fn check_args(args: &CrashArgs) -> Result<(), CliError> {
    if args.seeds == 0 || args.seeds > SEEDS_MAX {
        return Err(CliError::Workload(format!(
            "--seeds must be within 1..={SEEDS_MAX}, got {}",
            args.seeds
        )));
    }
    if args.first_seed.checked_add(args.seeds).is_none() {
        return Err(CliError::Workload(
            "--first-seed + --seeds overflows".into(),
        ));
    }
    if let Some(path) = &args.json {
        crate::output::check_file("--json", path)?;
    }
    Ok(())
}

/// The crash test's configuration from the options, refused if a device of the preset would
/// not fit `--memory-max-mib` or no operations were asked for.
fn crash_config(args: &CrashArgs, preset: &Preset) -> Result<CrashTestConfig, CliError> {
    let need = functional_memory_bytes(&preset.flash);
    if need > args.memory_max_mib << 20 {
        return Err(CliError::Workload(format!(
            "preset {}: a crash-test device could hold {} MiB in RAM, more than \
             --memory-max-mib {}; use a smaller geometry (e.g. --preset test-min) or raise the limit",
            preset.name,
            need >> 20,
            args.memory_max_mib
        )));
    }
    let mut cfg = CrashTestConfig::default();
    if let Some(n) = args.ops {
        cfg.ops_per_seed = n;
    }
    if let Some(n) = args.ops_after_recovery {
        cfg.ops_after_recovery = n;
    }
    if args.single_cut {
        cfg.second_cut = false;
    }
    if cfg.ops_per_seed == 0 {
        return Err(CliError::Workload("--ops must be at least 1".into()));
    }
    Ok(cfg)
}

/// The summary's table; with Flexible Data Placement on, a row for recoveries whose FDP
/// counters were not those the last checkpoint saved.
fn table(s: &CrashSummary, fdp: bool) -> String {
    let mut t = Table::new();
    t.load_preset(UTF8_BORDERS_ONLY);
    t.set_header(vec!["figure", "value"]);
    let phases = |m: &std::collections::BTreeMap<nearflash_ftl::CutPhase, u64>| {
        m.iter()
            .map(|(p, n)| format!("{}: {n}", serde_json::to_value(p).expect("phase")))
            .collect::<Vec<_>>()
            .join(", ")
            .replace('"', "")
    };
    let rows = [
        ("seeds", s.seeds.to_string()),
        ("first cuts by phase", phases(&s.cuts_by_phase)),
        ("second cuts by phase", phases(&s.second_cuts_by_phase)),
        (
            "acknowledged sectors checked",
            s.flushed_writes_checked.to_string(),
        ),
        ("lost flushed writes", s.lost_flushed_writes.to_string()),
        ("wrong-data reads", s.wrong_data_reads.to_string()),
        ("I/O errors", s.io_errors.to_string()),
        ("no-space errors", s.no_space_errors.to_string()),
        (
            "uncorrectable reads (media errors)",
            s.uncorrectable_errors.to_string(),
        ),
        ("errors (recovery / firmware)", s.errors.to_string()),
    ];
    for (k, v) in rows {
        t.add_row(vec![k.to_string(), v]);
    }
    if fdp {
        t.add_row(vec![
            "FDP logs not as checkpointed".to_string(),
            s.fdp_logs_lost.to_string(),
        ]);
    }
    t.to_string()
}

#[derive(Serialize)]
struct ZonedCrashReport<'a> {
    version: &'static str,
    preset: &'a str,
    config: &'a CrashTestConfig,
    first_seed: u64,
    summary: &'a zcrash::ZnsCrashSummary,
    failures: Vec<&'a zcrash::ZnsCrashOutcome>,
    wall_s: f64,
}

/// The zoned crash test over the seeds (`--set zns.enabled=true`).
fn run_zoned(
    args: &CrashArgs,
    preset: &Preset,
    cfg: &CrashTestConfig,
    wall: Instant,
) -> Result<bool, CliError> {
    let bar = Progress::new("crashtest (zoned)", !args.quiet);
    let mut outcomes = Vec::with_capacity(args.seeds as usize);
    for (i, seed) in (args.first_seed..args.first_seed + args.seeds).enumerate() {
        outcomes.push(zcrash::run_seed(
            &preset.flash,
            &preset.ftl,
            &preset.zns,
            cfg,
            seed,
        ));
        bar.update(i as u64 + 1, args.seeds);
    }
    bar.finish();
    let summary = zcrash::summarize(&outcomes);
    let failures: Vec<&zcrash::ZnsCrashOutcome> = outcomes.iter().filter(|o| !o.passed()).collect();
    if let Some(path) = &args.json {
        let report = ZonedCrashReport {
            version: env!("CARGO_PKG_VERSION"),
            preset: &preset.name,
            config: cfg,
            first_seed: args.first_seed,
            summary: &summary,
            failures: failures.clone(),
            wall_s: wall.elapsed().as_secs_f64(),
        };
        let text = serde_json::to_string_pretty(&report).expect("serialisable");
        crate::output::write_atomic(path, (text + "\n").as_bytes())?;
    }
    if !args.quiet {
        println!("{}", zoned_table(&summary));
        for f in failures.iter().take(10) {
            println!(
                "seed {} failed: cut in {:?}; {}",
                f.seed,
                f.cut_phase,
                f.error
                    .as_deref()
                    .or(f.first_violation.as_deref())
                    .unwrap_or("I/O errors")
            );
        }
        println!("wall time: {:.2} s", wall.elapsed().as_secs_f64());
    }
    println!("{} passed, {} failed", summary.passed, summary.failed);
    Ok(summary.failed == 0)
}

/// The zoned crash test's summary as a table.
fn zoned_table(s: &zcrash::ZnsCrashSummary) -> String {
    let mut t = Table::new();
    t.load_preset(UTF8_BORDERS_ONLY);
    t.set_header(vec!["figure", "value"]);
    let cuts = s
        .cuts_by_phase
        .iter()
        .map(|(p, n)| format!("{p:?}: {n}").to_lowercase())
        .collect::<Vec<_>>()
        .join(", ");
    let rows = [
        ("seeds", s.seeds.to_string()),
        ("cuts by phase", cuts),
        (
            "acknowledged sectors checked",
            s.acked_sectors_checked.to_string(),
        ),
        (
            "lost acknowledged sectors",
            s.lost_acked_sectors.to_string(),
        ),
        ("write-pointer regressions", s.wp_regressions.to_string()),
        ("wrong-data reads", s.wrong_data_reads.to_string()),
        ("I/O errors", s.io_errors.to_string()),
        ("errors (recovery / firmware)", s.errors.to_string()),
    ];
    for (k, v) in rows {
        t.add_row(vec![k.to_string(), v]);
    }
    t.to_string()
}
