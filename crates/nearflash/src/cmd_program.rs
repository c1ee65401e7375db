//! `nearflash program check|run`: a user's own program, a WebAssembly module speaking the WASI
//! preview 1 subset of `nearflash-wasm` (docs/programs.md), checked, or run next to the data.
//!
//! `run` writes the input file onto the simulated INSIDER drive through its file system,
//! binds the program to it with reg_virt_file and reads its output with vread (`--engine slot`
//! or `core`: the drive's slots or cores, per-chunk time from the fuel burnt); or writes it onto
//! the Active Flash SSD, whose controller runs the program as a background task over the
//! file's pages read back from flash and writes its output there (`arm`,
//! `nearflash_activeflash::program`, optionally beside a foreground of random writes); or
//! charges the fuel on one host core of the same compute model (`host`). It then prints bytes
//! in and out, fuel, instructions, simulated time, throughput and energy, next to the
//! host-only run (read the file through the host's storage stack, run the module on one host
//! core). Exit status: 0 when the program exits 0, 1 when it exits non-zero (the code is
//! printed), 2 when it traps, runs out of fuel or breaks a limit.

use crate::error::CliError;
use nearflash_jobs::program::{limits, load, ProgramOptions, ProgramReport};
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct ProgramArgs {
    #[command(subcommand)]
    pub command: ProgramCommand,
}

#[derive(clap::Subcommand, Debug)]
pub enum ProgramCommand {
    /// Validate a module: imports within the WASI subset, `_start` and `memory` exported,
    /// declared memory within the limit. Non-zero exit on a problem.
    Check {
        /// PROG.wasm or PROG.wat.
        program: PathBuf,
        #[arg(long, default_value_t = 64)]
        memory_max_mib: u64,
    },
    /// Run a module over a file, next to the data.
    Run(RunArgs),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Engine {
    /// An INSIDER application slot (a soft core at the slot clock).
    Slot,
    /// The INSIDER drive's embedded cores.
    Core,
    /// The Active Flash SSD controller's ARM core (800 MHz Cortex-A8): a background task
    /// over the file on flash.
    Arm,
    /// The host CPU (one core).
    Host,
}

#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// PROG.wasm or PROG.wat.
    pub program: PathBuf,
    /// The host file to write onto the drive and bind the program to (its standard input).
    #[arg(long)]
    pub input: PathBuf,
    /// An argument (argv[1], argv[2], …); repeatable.
    #[arg(long = "arg", allow_hyphen_values = true)]
    pub args: Vec<String>,
    #[arg(long, default_value = "insider")]
    pub preset: String,
    #[arg(long, value_enum, default_value = "slot")]
    pub engine: Engine,
    /// Where the program's standard output goes (default: this process's stdout).
    #[arg(long)]
    pub output: Option<PathBuf>,
    /// Fuel for the whole run, one unit per executed operator [default: 2 × 10^9 + 100 per
    /// input byte: a runaway loop stops within about 10 s of wall time on a small input]
    #[arg(long)]
    pub fuel_max: Option<u64>,
    /// Linear memory the module may declare and grow to, MiB (1..4096)
    #[arg(long, default_value_t = 64)]
    pub memory_max_mib: u64,
    /// Seeds the machine and the program's random_get.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Write every figure as JSON.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Refuse an input larger than this (MiB): the run holds it in RAM a few times.
    #[arg(long, default_value_t = 1024)]
    pub input_max_mib: u64,
    /// With `--engine arm`: a foreground of 4 KiB random writes at this rate (MB/s) beside
    /// the program, whose FTL work preempts it (Active Flash's Fig. 2 setting).
    #[arg(long)]
    pub foreground_mb_s: Option<f64>,
}

pub fn run(args: &ProgramArgs) -> Result<bool, CliError> {
    match &args.command {
        ProgramCommand::Check {
            program,
            memory_max_mib,
        } => {
            let p = load(program, limits(*memory_max_mib, 1)?)?;
            println!("{}: a valid WASI command module", p.name());
            println!("  imports: {}", p.imports().join(", "));
            println!(
                "  memory: {} pages declared ({} KiB), limit {} pages",
                p.memory_pages(),
                p.memory_pages() * 64,
                p.limits().memory_pages_max
            );
            Ok(true)
        }
        ProgramCommand::Run(r) => run_program(r),
    }
}

fn run_program(r: &RunArgs) -> Result<bool, CliError> {
    for (flag, path) in [("--output", &r.output), ("--json", &r.json)] {
        if let Some(p) = path {
            crate::output::check_file(flag, p)?;
        }
    }
    // Named as the command line spells them (the job names its options).
    if r.memory_max_mib == 0 || r.memory_max_mib > 4096 {
        return Err(CliError::Workload(format!(
            "--memory-max-mib {}: must be 1..4096 (wasm32 addresses 4 GiB)",
            r.memory_max_mib
        )));
    }
    if r.fuel_max == Some(0) {
        return Err(CliError::Workload("--fuel-max must be at least 1".into()));
    }
    if r.foreground_mb_s.is_some() && r.engine != Engine::Arm {
        return Err(CliError::Workload(
            "--foreground-mb-s runs beside the Active Flash controller's task: give --engine arm"
                .into(),
        ));
    }
    use nearflash_jobs::program::Engine as E;
    let out = nearflash_jobs::program::program(&ProgramOptions {
        program: r.program.clone(),
        input: r.input.clone(),
        args: r.args.clone(),
        preset: r.preset.clone(),
        overrides: Vec::new(),
        engine: match r.engine {
            Engine::Slot => E::Slot,
            Engine::Core => E::Core,
            Engine::Arm => E::Arm,
            Engine::Host => E::Host,
        },
        fuel_max: r.fuel_max,
        memory_max_mib: r.memory_max_mib,
        seed: r.seed,
        input_max_mib: r.input_max_mib,
        foreground_mb_s: r.foreground_mb_s,
    })?;
    match &r.output {
        Some(p) => crate::output::write_atomic(p, &out.output)?,
        None => {
            use std::io::Write;
            let mut so = std::io::stdout().lock();
            so.write_all(&out.output)
                .and_then(|()| so.flush())
                .map_err(|source| CliError::Io {
                    what: "stdout".into(),
                    source,
                })?;
        }
    }
    let report = out.report;
    print_table(&report);
    if let Some(p) = &r.json {
        let text = serde_json::to_string_pretty(&report).expect("a report serializes");
        crate::output::write_atomic(p, text.as_bytes())?;
    }
    if report.exit_code != 0 {
        eprintln!("{}: exited with code {}", report.program, report.exit_code);
    }
    Ok(report.exit_code == 0)
}

fn print_table(r: &ProgramReport) {
    eprintln!(
        "{:<30} {:>12} {:>12} {:>14} {:>14} {:>14} {:>10} {:>10}",
        "engine",
        "bytes in",
        "bytes out",
        "fuel",
        "instructions",
        "time (us)",
        "MB/s",
        "energy (J)"
    );
    for f in [&r.run, &r.host_only] {
        eprintln!(
            "{:<30} {:>12} {:>12} {:>14} {:>14.0} {:>14.1} {:>10.1} {:>10}",
            f.engine,
            f.bytes_in,
            f.bytes_out,
            f.fuel,
            f.instructions,
            f.time_ns as f64 / 1e3,
            f.throughput_mb_s,
            f.energy_j.map_or("n/a".into(), |j| format!("{j:.4}"))
        );
    }
    if let Some(c) = &r.controller {
        eprintln!(
            "controller task: {} page reads from flash, {} page writes of output; busy {:.1} us \
             computing and {:.1} us on FTL work for its commands (the host wrote the file in {:.1} us \
             before)",
            c.flash_page_reads,
            c.flash_page_writes,
            c.compute_busy_ns as f64 / 1e3,
            c.ftl_busy_ns as f64 / 1e3,
            c.file_write_ns as f64 / 1e3
        );
        if let Some(fg) = &c.foreground {
            eprintln!(
                "foreground beside it: {:.1} MB/s asked, {:.1} MB/s achieved, {} writes, latency \
                 mean {:.1} us, max {:.1} us",
                fg.requested_mb_s,
                fg.achieved_mb_s,
                fg.writes,
                fg.latency_us_mean,
                fg.latency_us_max
            );
        }
    }
}
