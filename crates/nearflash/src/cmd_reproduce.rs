//! `nearflash reproduce <paper>`: re-runs a paper's evaluation (`nearflash-reproduce`) and
//! reports paper-vs-ours for every headline claim — a table on the terminal,
//! `DIR/summary.json` (schema in `nearflash-report`) and `DIR/report.html` (the paper's
//! figures as SVG).

use crate::error::CliError;
use nearflash_reproduce::{Fidelity, Options};
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct ReproduceArgs {
    /// Which paper: flashabacus, insider, active-flash.
    pub paper: String,
    /// timing (paper sizes, modelled time only) or functional (reduced sizes, real data
    /// through the device, every output verified).
    #[arg(long, default_value = "timing")]
    pub fidelity: String,
    /// Output directory for summary.json and report.html (default: reproduce-<paper>).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// The preset (default: the paper's own).
    #[arg(long)]
    pub preset: Option<String>,
    /// Override a preset field, e.g. --set accel.lwp_cpi=1.5 (repeatable).
    #[arg(long = "set", value_name = "TABLE.FIELD=VALUE")]
    pub overrides: Vec<String>,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// FlashAbacus: kernel sizes (mini | small | medium | large | extralarge | paper);
    /// default paper in timing fidelity, mini in functional fidelity.
    #[arg(long)]
    pub dataset: Option<String>,
    /// FlashAbacus functional fidelity: refuse runs that would hold more than this much data
    /// in memory (MiB) [default: 2048].
    #[arg(long)]
    pub max_functional_mib: Option<u64>,
    /// Run only these workloads (comma-separated, e.g. atax,mx1,nn); claims whose runs are
    /// missing are left out.
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<String>,
    /// Simulations run side by side (default: the machine's cores). Each simulation is
    /// single-threaded and deterministic; this only changes the wall time.
    #[arg(long)]
    pub jobs: Option<usize>,
    /// active-flash: foreground volume of 4 KiB random writes in MiB (default 256 in timing
    /// fidelity, 16 in functional; the paper's 6 GB is 6144).
    #[arg(long)]
    pub volume_mib: Option<u64>,
    /// active-flash: Fig. 2 foreground throughputs in MB/s (default: the built-in sweep).
    #[arg(long, value_delimiter = ',')]
    pub foreground_mb_s: Vec<f64>,
    /// active-flash: Fig. 3 controller shares in [0, 1] (default: the built-in sweep).
    #[arg(long, value_delimiter = ',')]
    pub splits: Vec<f64>,
}

/// The outputs a reproduction writes into its directory.
const OUTPUTS: [&str; 2] = ["summary.json", "report.html"];

pub fn run(args: &ReproduceArgs) -> Result<bool, CliError> {
    let fidelity: Fidelity = args
        .fidelity
        .parse()
        .map_err(|e: nearflash_sim::UnknownFidelity| CliError::Workload(e.to_string()))?;
    let jobs = args.jobs.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("reproduce-{}", args.paper)));
    let opts = Options {
        fidelity,
        preset: args.preset.clone(),
        overrides: args.overrides.clone(),
        seed: args.seed,
        only: args.only.clone(),
        dataset: args.dataset.clone(),
        max_functional_mib: args.max_functional_mib,
        volume_mib: args.volume_mib,
        foreground_mb_s: args.foreground_mb_s.clone(),
        splits: args.splits.clone(),
    };
    nearflash_reproduce::check(&args.paper, &opts, jobs)?;
    prepare_out(&out)?;
    let bar = crate::progress::Progress::new("reproduce", true);
    let result = nearflash_reproduce::run(&args.paper, &opts, jobs, &|done, total| {
        bar.update(done as u64, total as u64)
    });
    bar.finish();
    let r = result?;
    nearflash_report::write_dir(&out, &r.summary, &r.page)?;
    print!("{}", r.text);
    println!(
        "{} runs in {:.1} s wall; wrote {}/summary.json and {}/report.html",
        r.summary.runs.len(),
        r.summary.wall_s,
        out.display(),
        out.display()
    );
    Ok(true)
}

/// Before any work: the output directory must take files, and the previous run's outputs
/// are removed — a rerun killed half-way must not leave the old `summary.json` looking like
/// its result. (The new ones are written atomically at the end.)
fn prepare_out(out: &std::path::Path) -> Result<(), CliError> {
    crate::output::check_dir("--out", out)?;
    for name in OUTPUTS {
        let p = out.join(name);
        match std::fs::remove_file(&p) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(CliError::Io {
                    what: format!("removing the stale {}", p.display()),
                    source: e,
                })
            }
        }
    }
    Ok(())
}
