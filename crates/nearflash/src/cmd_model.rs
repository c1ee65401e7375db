//! `nearflash model active-flash`: the analytic model of Active Flash §II at a preset's
//! parameters — s, p, and c(x), ΔE(x), S(x) over host utilization x — as a table, and Fig. 1
//! as `DIR/fig1.svg` with `--out DIR`.

use crate::error::CliError;
use nearflash_activeflash::{ActiveFlashConfig, Model};
use nearflash_preset::Preset;
use nearflash_reproduce::active_flash::fig1;
use std::path::PathBuf;

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum ModelName {
    ActiveFlash,
}

#[derive(clap::Args, Debug)]
pub struct ModelArgs {
    /// The paper whose analytic model to evaluate.
    #[arg(value_enum)]
    pub paper: ModelName,
    /// Preset (name or path) holding the [active_flash] table.
    #[arg(long, default_value = "active-flash")]
    pub preset: String,
    /// Override a preset field, e.g. active_flash.controller_dmips=2000.
    #[arg(long = "set", value_name = "TABLE.FIELD=VALUE")]
    pub set: Vec<String>,
    /// Utilization steps between 0 and 1 (the knee x = 1/s is added).
    #[arg(long, default_value_t = 10)]
    pub steps: u32,
    /// Write Fig. 1 as DIR/fig1.svg.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

pub fn run(args: &ModelArgs) -> Result<(), CliError> {
    if let Some(dir) = &args.out {
        crate::output::check_dir("--out", dir)?;
    }
    let ModelName::ActiveFlash = args.paper;
    if args.steps == 0 || args.steps > 1000 {
        return Err(CliError::Workload(format!(
            "--steps must be 1..=1000, got {}",
            args.steps
        )));
    }
    let preset = Preset::load(&args.preset, &args.set)?;
    let cfg: ActiveFlashConfig = preset.require()?;
    let m = Model::from_config(&cfg)?;
    println!(
        "Active Flash analytic model (seed 004 §II), preset {}",
        preset.name
    );
    println!(
        "  s = host / controller speed = {} / {} DMIPS = {:.4}",
        cfg.host_dmips, cfg.controller_dmips, m.s
    );
    println!(
        "  p = controller / host Δpower = ({} − {}) / ({} − {}) W = {:.5}",
        cfg.controller_active_power_w,
        cfg.controller_idle_power_w,
        cfg.host_active_power_w,
        cfg.host_idle_power_w,
        m.p
    );
    println!(
        "  knee x = 1/s = {:.4}; largest saving 1 − s·p = {:.4}",
        1.0 / m.s,
        1.0 - m.s * m.p
    );
    println!();
    println!("{:>8} {:>10} {:>10} {:>10}", "x", "c(x)", "ΔE(x)", "S(x)");
    let curve = m.curve(args.steps);
    for p in &curve {
        println!(
            "{:>8.4} {:>10.4} {:>10.4} {:>10.4}",
            p.host_utilization, p.offloaded_fraction, p.energy_saving, p.slowdown
        );
    }
    if let Some(dir) = &args.out {
        std::fs::create_dir_all(dir).map_err(|e| CliError::Io {
            what: format!("output directory {}", dir.display()),
            source: e,
        })?;
        let path = dir.join("fig1.svg");
        crate::output::write_atomic(&path, fig1(&curve).to_svg().as_bytes())?;
        println!("\nwrote {}", path.display());
    }
    Ok(())
}
