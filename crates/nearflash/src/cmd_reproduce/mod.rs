//! `nearflash reproduce <paper>`: re-runs a paper's evaluation on its preset and reports
//! paper-vs-ours for every headline claim — a table on the terminal, `DIR/summary.json`
//! (schema in `nearflash-report`) and `DIR/report.html` (the paper's figures as SVG).
//! One module per paper.

mod active_flash;
mod flashabacus;
mod insider;

use crate::error::CliError;
use std::path::PathBuf;

/// The reproducible papers.
pub const PAPERS: &[&str] = &["flashabacus", "insider", "active-flash"];

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

/// Fidelity of a reproduction: the one `Fidelity` of every system.
pub use nearflash_sim::Fidelity;

pub fn run(args: &ReproduceArgs) -> Result<bool, CliError> {
    let fidelity: Fidelity = args
        .fidelity
        .parse()
        .map_err(|e: nearflash_sim::UnknownFidelity| CliError::Workload(e.to_string()))?;
    if args.jobs == Some(0) {
        return Err(CliError::Workload("--jobs must be at least 1".into()));
    }
    let jobs = args.jobs.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("reproduce-{}", args.paper)));
    if !PAPERS.contains(&args.paper.as_str()) {
        return Err(CliError::Workload(format!(
            "unknown paper '{}' (known: {})",
            args.paper,
            PAPERS.join(", ")
        )));
    }
    refuse_flags_of_other_papers(args)?;
    prepare_out(&out)?;
    match args.paper.as_str() {
        "flashabacus" => flashabacus::run(args, fidelity, jobs, &out),
        "insider" => insider::run(args, fidelity, jobs, &out),
        "active-flash" => active_flash::run(args, fidelity, jobs, &out),
        other => Err(CliError::Workload(format!(
            "unknown paper '{other}' (known: {})",
            PAPERS.join(", ")
        ))),
    }
}

/// Runs `jobs` closures side by side over `n` tasks and returns their results in task order
/// (each task is an independent deterministic simulation, so the order of completion does
/// not matter). `progress` is called after each task with the count done.
pub fn parallel_map<T: Send>(
    n: usize,
    jobs: usize,
    task: impl Fn(usize) -> T + Sync,
    progress: impl Fn(usize) + Sync,
) -> Vec<T> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<T>>> = Mutex::new((0..n).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..jobs.clamp(1, n.max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    break;
                }
                let r = task(i);
                results
                    .lock()
                    .expect("no task panics while holding the lock")[i] = Some(r);
                progress(done.fetch_add(1, Ordering::Relaxed) + 1);
            });
        }
    });
    results
        .into_inner()
        .expect("threads joined")
        .into_iter()
        .map(|r| r.expect("every task ran"))
        .collect()
}

/// The outputs a reproduction writes into its directory.
pub const OUTPUTS: [&str; 2] = ["summary.json", "report.html"];

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

/// Every flag takes effect for the paper given or is refused: a paper-specific flag given to
/// another paper would otherwise be silently ignored.
fn refuse_flags_of_other_papers(args: &ReproduceArgs) -> Result<(), CliError> {
    let given: [(&str, &str, bool); 5] = [
        ("--dataset", "flashabacus", args.dataset.is_some()),
        (
            "--max-functional-mib",
            "flashabacus",
            args.max_functional_mib.is_some(),
        ),
        ("--volume-mib", "active-flash", args.volume_mib.is_some()),
        (
            "--foreground-mb-s",
            "active-flash",
            !args.foreground_mb_s.is_empty(),
        ),
        ("--splits", "active-flash", !args.splits.is_empty()),
    ];
    for (flag, paper, set) in given {
        if set && args.paper != paper {
            return Err(CliError::Workload(format!(
                "{flag} applies to `reproduce {paper}` only, not `reproduce {}`",
                args.paper
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parallel_map_keeps_task_order_whatever_the_job_count() {
        for jobs in [1, 2, 7] {
            let v = parallel_map(20, jobs, |i| i * i, |_| {});
            assert_eq!(v, (0..20).map(|i| i * i).collect::<Vec<_>>());
        }
    }
}
