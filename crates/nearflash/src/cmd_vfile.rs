//! `nearflash vfile`: INSIDER's virtual files (seed 001 §3.3). `demo` walks through one on
//! the simulated INSIDER drive, on real bytes: a user writes a file through the ordinary path,
//! registers a virtual file that runs grep over it in the drive, reads the matches with vread
//! and the runtime checks them against grep's reference — with the simulated time of every
//! step, a host-only read of the same file to compare, and another user's vopen refused. The
//! job itself is `nearflash_jobs::vfile_demo`. `register`, `unregister` and `list` manage the
//! virtual files of a running `nearflash serve` (`cmd_vfile_mount`).

use crate::cmd_vfile_mount::{ListArgs, RegisterArgs, UnregisterArgs};
use crate::error::CliError;
use nearflash_jobs::VfileOptions;

#[derive(clap::Args, Debug)]
pub struct VfileArgs {
    #[command(subcommand)]
    pub command: VfileCommand,
}

#[derive(clap::Subcommand, Debug)]
pub enum VfileCommand {
    /// A virtual grep file on the simulated INSIDER drive, step by step.
    Demo(DemoArgs),
    /// Register a virtual file on a running `nearflash serve`: reading
    /// MOUNT/.nearflash/vfiles/NAME runs a drive program over a real file.
    Register(RegisterArgs),
    /// Remove a virtual file of a running `nearflash serve` (its owner or root).
    Unregister(UnregisterArgs),
    /// List the virtual files of a running `nearflash serve`.
    List(ListArgs),
}

#[derive(clap::Args, Debug)]
pub struct DemoArgs {
    #[arg(long, default_value = "insider")]
    pub preset: String,
    /// Override a preset field, e.g. --set insider.backing=flash (repeatable).
    #[arg(long = "set", value_name = "TABLE.FIELD=VALUE")]
    pub overrides: Vec<String>,
    /// Size of the demo file.
    #[arg(long, default_value_t = 16)]
    pub size_mib: u64,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Refuse a demo that would hold more than this much in RAM (MiB).
    #[arg(long, default_value_t = crate::cmd_crashtest::MEMORY_MIB_MAX)]
    pub memory_max_mib: u64,
}

pub fn run(args: &VfileArgs) -> Result<(), CliError> {
    match &args.command {
        VfileCommand::Demo(a) => demo(a),
        VfileCommand::Register(a) => crate::cmd_vfile_mount::register(a),
        VfileCommand::Unregister(a) => crate::cmd_vfile_mount::unregister(a),
        VfileCommand::List(a) => crate::cmd_vfile_mount::list(a),
    }
}

fn demo(args: &DemoArgs) -> Result<(), CliError> {
    let d = nearflash_jobs::vfile_demo(&VfileOptions {
        preset: args.preset.clone(),
        overrides: args.overrides.clone(),
        size_mib: args.size_mib,
        seed: args.seed,
        memory_max_mib: args.memory_max_mib,
    })?;
    println!(
        "drive: preset {} ({} backing, PCIe Gen3 x{}, {} application slots, C = {} KiB, R = {})",
        d.preset, d.backing, d.pcie_lanes, d.app_slots, d.credit_request_kib, d.credits_initial
    );
    println!(
        "1. alice writes {} ({} bytes, {} lines, mode 0600) and fsyncs: {:.1} us",
        d.path, d.file_bytes, d.file_lines, d.write_us
    );
    println!(
        "2. reg_virt_file({}, grep) -> {}, recorded in /.alice.nearflash (mode 0640)",
        d.path, d.vpath
    );
    println!(
        "3. vopen + send_params(pattern {:?}): {:.1} us; vread: {} bytes of (row, col) pairs \
         in {:.1} us; {:.2} GB/s of file scanned in the drive",
        d.pattern, d.vopen_us, d.vread_bytes, d.vread_us, d.scan_gb_s
    );
    println!(
        "   the host expands the pairs into each line's first match: equal to grep's reference"
    );
    println!(
        "4. host-only: pread of the whole file through the storage stack: {:.1} us ({:.2} GB/s, \
         before any host computing)",
        d.host_read_us, d.host_read_gb_s
    );
    println!(
        "5. bob's vopen of a virtual file over it: refused ({}); drive requests issued: {}",
        d.refused, d.refused_requests
    );
    Ok(())
}
