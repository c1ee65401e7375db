//! `nearflash reproduce <paper>`: re-runs a paper's evaluation (`nearflash-reproduce`) and
//! reports paper-vs-ours for every headline claim — a table on the terminal,
//! `DIR/summary.json` (schema in `nearflash-report`) and `DIR/report.html` (the paper's
//! figures as SVG). The job itself is `nearflash_jobs::reproduce`.

use crate::error::CliError;
use nearflash_jobs::ReproduceOptions;
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
    /// hayagui: divide the genome data sets by this (default 10 in timing fidelity, 1000
    /// in functional; 1 is the full size, which needs memory of the order of the targets).
    #[arg(long)]
    pub genome_scale: Option<u64>,
    /// hayagui: db_bench's N, the number of 100-byte values (default 500,000 in timing
    /// fidelity — 58 MB, 14× LevelDB's block cache, as db_bench's own default of 1,000,000
    /// against C++ LevelDB's 8 MiB — and 2,000 in functional).
    #[arg(long)]
    pub db_num: Option<i64>,
    /// hayagui: YCSB's record count, also its operation count (default 50,000 in timing
    /// fidelity — 56 MB, 13× LevelDB's block cache — and 1,000 in functional).
    #[arg(long)]
    pub ycsb_records: Option<i64>,
}

pub fn run(args: &ReproduceArgs) -> Result<bool, CliError> {
    let opts = ReproduceOptions {
        fidelity: Some(args.fidelity.clone()),
        out: args.out.clone(),
        preset: args.preset.clone(),
        overrides: args.overrides.clone(),
        seed: Some(args.seed),
        dataset: args.dataset.clone(),
        max_functional_mib: args.max_functional_mib,
        only: args.only.clone(),
        jobs: args.jobs,
        volume_mib: args.volume_mib,
        foreground_mb_s: args.foreground_mb_s.clone(),
        splits: args.splits.clone(),
        genome_scale: args.genome_scale,
        db_num: args.db_num,
        ycsb_records: args.ycsb_records,
    };
    let out = nearflash_jobs::reproduce::out_dir(&args.paper, &opts);
    let bar = crate::progress::Progress::new("reproduce", true);
    let result = crate::interrupt::until_ctrl_c(
        "the simulations were stopped; no summary.json or report.html was written",
        || {
            nearflash_jobs::reproduce(&args.paper, &opts, &|done, total| {
                bar.update(done as u64, total as u64)
            })
        },
    );
    bar.finish();
    let r = result?;
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
