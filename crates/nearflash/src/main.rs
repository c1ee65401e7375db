//! `nearflash`: the command-line front end of the simulator.

mod cmd_crashtest;
mod cmd_cs;
mod cmd_dbbench;
mod cmd_fileops;
mod cmd_fio;
mod cmd_fs;
mod cmd_genome;
mod cmd_io;
mod cmd_kernel;
mod cmd_model;
mod cmd_placement;
mod cmd_program;
mod cmd_reproduce;
mod cmd_run;
mod cmd_serve;
mod cmd_soak;
mod cmd_sweep;
mod cmd_trace;
mod cmd_vfile;
mod cmd_vfile_mount;
mod cmd_ycsb;
mod error;
mod huge_pages;
mod interrupt;
mod output;
mod progress;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[global_allocator]
static ALLOC: huge_pages::HugePages = huge_pages::HugePages;

#[derive(Parser)]
#[command(
    name = "nearflash",
    version,
    about = "Deterministic full-system simulator of computational flash storage",
    long_about = "nearflash simulates flash devices that compute next to their data. Every figure \
                  comes from modelled events; every run replays exactly from its seed."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Drive the simulated device with a block I/O workload (synthetic or a block trace).
    Io(cmd_io::IoArgs),
    /// Run a fio job file on the simulated drive; print fio's report (normal, json, json+).
    Fio(cmd_fio::FioArgs),
    /// Block traces: `trace stats FORMAT:PATH` prints what one holds before a long replay.
    Trace(cmd_trace::TraceArgs),
    /// Cut power at random events, recover, and check that no acknowledged write is lost.
    Crashtest(cmd_crashtest::CrashArgs),
    /// The device file system on an image: mkfs, import, export, ls, fsck, crashtest.
    Fs(cmd_fs::FsArgs),
    /// Run one workload functionally, verify it against its reference, dump its outputs.
    Kernel(cmd_kernel::KernelArgs),
    /// Run a workload on the FlashAbacus accelerator under one of its four schedulers.
    Run(cmd_run::RunArgs),
    /// Evaluate a paper's analytic model (prints a table; --out DIR writes the figure).
    Model(cmd_model::ModelArgs),
    /// Re-run a paper's evaluation; write summary.json and report.html (paper vs ours).
    Reproduce(cmd_reproduce::ReproduceArgs),
    /// INSIDER's virtual files: `vfile demo` walks through one on real bytes; `vfile
    /// register|unregister|list` manage those of a running `serve`.
    Vfile(cmd_vfile::VfileArgs),
    /// Seeded soak: draw configurations, workloads and faults from a seed until one fails.
    Soak(cmd_soak::SoakArgs),
    /// Hayagui: read/write/write-sync latency from the accelerator, direct or redirected.
    Fileops(cmd_fileops::FileopsArgs),
    /// Hayagui: LevelDB's db_bench by a real LevelDB on the accelerator, direct or redirected.
    DbBench(cmd_dbbench::DbBenchArgs),
    /// Hayagui: a YCSB core workload against LevelDB on the accelerator, direct or redirected.
    Ycsb(cmd_ycsb::YcsbArgs),
    /// Hayagui: the six-phase genome matching application on the accelerator.
    Genome(cmd_genome::GenomeArgs),
    /// Why data placement matters: a hot and a cold write stream on the conventional drive,
    /// on FDP handles and on zones placed by the host, side by side (WAF, copies, latency).
    Placement(cmd_placement::PlacementArgs),
    /// A design-space sweep: grid/random points x seeds, a resumable table, a summary page.
    Sweep(cmd_sweep::SweepArgs),
    /// A local sweep's worker process: runs the points it reads on standard input (one JSON
    /// line each) and answers each with its row (started by `sweep --backend local`).
    #[command(hide = true)]
    SweepWorker,
    /// Users' own programs (WebAssembly, WASI preview 1): check a module, or run it next to
    /// the data on a drive engine and compare with the host.
    Program(cmd_program::ProgramArgs),
    /// Computational storage the standard way: NVMe Computational Programs and Subsystem
    /// Local Memory, eBPF and WebAssembly programs, every command timed.
    Cs(cmd_cs::CsArgs),
    /// Live mode: mount a device image through FUSE so unmodified programs run on it.
    Serve(cmd_serve::ServeArgs),
    /// Print a running `serve`'s statistics (MOUNT/.nearflash/stats.json) as a table.
    Stats(cmd_serve::StatsArgs),
    /// List the built-in presets, or print one as TOML.
    Presets {
        /// A preset to print in full.
        name: Option<String>,
    },
}

/// Restores the default SIGPIPE action, so `nearflash ... | head` ends quietly when the
/// reader goes away instead of panicking on a failed print (Rust ignores SIGPIPE by default).
#[cfg(unix)]
fn default_sigpipe() {
    // SAFETY: called first thing in main, before any other thread exists; setting a signal
    // disposition to SIG_DFL has no other precondition.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

fn main() -> ExitCode {
    #[cfg(unix)]
    default_sigpipe();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Io(args) => cmd_io::run(&args),
        Command::Fio(args) => cmd_fio::run(&args),
        Command::Trace(args) => cmd_trace::run(&args).map(|()| true),
        Command::Crashtest(args) => cmd_crashtest::run(&args),
        Command::Fs(args) => cmd_fs::run(&args),
        Command::Kernel(args) => cmd_kernel::run(&args).map(|()| true),
        Command::Run(args) => cmd_run::run(&args).map(|()| true),
        Command::Model(args) => cmd_model::run(&args).map(|()| true),
        Command::Reproduce(args) => cmd_reproduce::run(&args),
        Command::Vfile(args) => cmd_vfile::run(&args).map(|()| true),
        Command::Soak(args) => cmd_soak::run(&args),
        Command::DbBench(args) => cmd_dbbench::run(&args).map(|()| true),
        Command::Ycsb(args) => cmd_ycsb::run(&args),
        Command::Genome(args) => cmd_genome::run(&args),
        Command::Fileops(args) => cmd_fileops::run(&args).map(|()| true),
        Command::Placement(args) => cmd_placement::run(&args),
        Command::Sweep(args) => cmd_sweep::run(&args),
        Command::SweepWorker => cmd_sweep::worker().map(|()| true),
        Command::Program(args) => cmd_program::run(&args),
        Command::Cs(args) => cmd_cs::run(&args),
        Command::Serve(args) => cmd_serve::serve(&args).map(|()| true),
        Command::Stats(args) => cmd_serve::stats(&args).map(|()| true),
        Command::Presets { name } => list_presets(name.as_deref()).map(|()| true),
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        // The command ran and found failures (e.g. a crash test that lost data).
        Ok(false) => ExitCode::from(1),
        // 128 + SIGINT, as a shell reports a command Ctrl-C ended.
        Err(e @ error::CliError::Interrupted(_)) => {
            eprintln!("error: {e}");
            ExitCode::from(130)
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn list_presets(name: Option<&str>) -> Result<(), error::CliError> {
    match name {
        Some(n) => {
            let (source, text) = nearflash_preset::read_text(n)?;
            nearflash_preset::Preset::parse(&source, &text, &[])?;
            print!("{text}");
        }
        None => {
            // Name, the tables beyond [flash] and [ftl] (what the preset can run), description.
            for (n, _) in nearflash_preset::BUILTIN {
                let p = nearflash_preset::Preset::load(n, &[])?;
                println!("{n:<14} {:<16} {}", p.tables().join(" "), p.description);
            }
        }
    }
    Ok(())
}
