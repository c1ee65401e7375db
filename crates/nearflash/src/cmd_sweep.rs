//! `nearflash sweep SPEC.toml --out DIR`: a design-space sweep (`nearflash-sweep`) — grid and
//! random points × seeds over any preset field and job option; rows appended to
//! `DIR/results.csv` as points finish (a rerun computes only the missing ones), then
//! `DIR/summary.html`. `--backend local` runs points in worker processes on this machine (this
//! binary again, as `nearflash sweep-worker`); `--backend ray`
//! hands the sweep to the Python package (`nearflash.sweeps`, in `python3`), which runs each point
//! as a Ray task through the same library — Ray lives in Python, so the CLI delegates rather
//! than reimplementing a Ray client.

use crate::error::CliError;
use nearflash_sweep::table::TABLE_FILE;
use nearflash_sweep::{Sweep, SweepError, WorkerCommand};
use std::path::PathBuf;
use std::process::Command;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Backend {
    /// Worker processes on this machine.
    Local,
    /// Ray tasks (an existing cluster with --address, a local Ray otherwise).
    Ray,
}

#[derive(clap::Args, Debug)]
pub struct SweepArgs {
    /// The sweep's spec (TOML; see examples/sweeps/).
    pub spec: PathBuf,
    /// Directory for results.csv and summary.html (a rerun resumes from its results.csv).
    #[arg(long)]
    pub out: PathBuf,
    #[arg(long, value_enum, default_value = "local")]
    pub backend: Backend,
    /// Ray cluster address (host:port or ray://host:port); default: start a local Ray.
    #[arg(long)]
    pub address: Option<String>,
    /// Points run side by side (default: the machine's cores).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// No progress bar and no closing line.
    #[arg(long)]
    pub quiet: bool,
}

/// What `--backend ray` runs in Python: the package's sweep command, or — when the
/// interpreter cannot import the package — what to install, instead of Python's bare
/// `ModuleNotFoundError`. (A missing Ray is named by the package itself.)
const RAY_MAIN: &str = "\
import sys
try:
    from nearflash import sweeps
except ModuleNotFoundError as e:
    if not (e.name or '').startswith('nearflash'):
        raise
    print(f'error: --backend ray runs in Python and needs the nearflash Python package, which '
          f'{sys.executable} cannot import ({e}): pip install ./crates/python (from the '
          f'nearflash source tree), and Ray: pip install \\'ray[default]\\' '
          f'(NEARFLASH_PYTHON names another interpreter)', file=sys.stderr)
    sys.exit(2)
sys.exit(sweeps.main(sys.argv[1:]))
";

/// The Python interpreter the Ray backend runs (`NEARFLASH_PYTHON`, default `python3`).
fn python() -> String {
    std::env::var("NEARFLASH_PYTHON").unwrap_or_else(|_| "python3".into())
}

pub fn run(args: &SweepArgs) -> Result<bool, CliError> {
    if args.jobs == Some(0) {
        return Err(CliError::Workload("--jobs must be at least 1".into()));
    }
    if args.address.is_some() && args.backend != Backend::Ray {
        return Err(CliError::Workload(
            "--address applies to --backend ray only".into(),
        ));
    }
    match args.backend {
        Backend::Local => {
            let jobs = args.jobs.unwrap_or_else(|| {
                std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
            });
            let exe = std::env::current_exe().map_err(|source| CliError::Io {
                what: "finding this program to start sweep workers".into(),
                source,
            })?;
            let mut sweep = Sweep::open_file(&args.spec, &args.out, !args.quiet)?;
            for r in sweep.rerun() {
                eprintln!("warning: {}: {r}", args.out.join(TABLE_FILE).display());
            }
            let f = sweep.run_local(jobs, &WorkerCommand::new(exe, ["sweep-worker"]))?;
            if !args.quiet {
                println!(
                    "{} points ({} computed now, {} already in the table); wrote {} and {}",
                    f.points,
                    f.computed,
                    f.points - f.computed,
                    f.table.display(),
                    f.summary.display()
                );
            }
            Ok(true)
        }
        Backend::Ray => {
            let py = python();
            let mut cmd = Command::new(&py);
            cmd.args(["-c", RAY_MAIN])
                .arg(&args.spec)
                .arg("--out")
                .arg(&args.out)
                .args(["--backend", "ray"]);
            if let Some(a) = &args.address {
                cmd.args(["--address", a]);
            }
            if let Some(j) = args.jobs {
                cmd.args(["--jobs", &j.to_string()]);
            }
            if args.quiet {
                cmd.arg("--quiet");
            }
            let status = cmd.status().map_err(|source| CliError::Io {
                what: format!(
                    "--backend ray runs in Python, and {py} could not be started (install the \
                     Python package: pip install ./crates/python, and Ray: pip install \
                     'ray[default]'; NEARFLASH_PYTHON names another interpreter)"
                ),
                source,
            })?;
            // The Python side printed its own error; its status is ours.
            Ok(status.success())
        }
    }
}

/// `nearflash sweep-worker`: serves points on standard input and output until end of input.
pub fn worker() -> Result<(), CliError> {
    let stdin = std::io::stdin().lock();
    let stdout = std::io::stdout().lock();
    nearflash_sweep::worker::serve(stdin, stdout)?;
    Ok(())
}

impl From<SweepError> for CliError {
    fn from(e: SweepError) -> Self {
        CliError::Sweep(Box::new(e))
    }
}
