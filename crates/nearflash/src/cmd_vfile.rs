//! `nearflash vfile demo`: a walk-through of INSIDER's virtual files (seed 001 §3.3) on a
//! preset's drive, on real bytes: a user writes a file through the ordinary path, registers
//! a virtual file that runs grep over it in the drive, reads the matches with vread and the
//! runtime checks them against grep's reference — with the simulated time of every step, a
//! host-only read of the same file to compare, and another user's vopen refused.

use crate::error::CliError;
use nearflash_insider::runtime::{MachineSpec, ProgramSpec, Runtime};
use nearflash_insider::stream::Direction;
use nearflash_insider::{InsiderConfig, InsiderError};
use nearflash_iscapps::apps::GrepApp;
use nearflash_iscapps::IscApp;
use nearflash_preset::Preset;
use nearflash_sim::SimTime;

#[derive(clap::Args, Debug)]
pub struct VfileArgs {
    /// What to show: demo.
    pub what: String,
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

/// Copies of the demo file held in RAM at once: the bytes written, the drive's pages and the
/// host-only read's buffer (grep's output is far smaller).
const FILE_COPIES_IN_RAM: u64 = 3;

const ALICE: u32 = 1000;
const BOB: u32 = 1001;
/// Demo lines: 4,095 chars of {A-D} and a newline (the paper's lines are 65,535 chars).
const LINE_CHARS: u64 = 4095;

fn us(a: SimTime, b: SimTime) -> f64 {
    b.since(a).as_ns() as f64 / 1e3
}

fn e(err: InsiderError) -> CliError {
    CliError::Workload(err.to_string())
}

pub fn run(args: &VfileArgs) -> Result<(), CliError> {
    if args.what != "demo" {
        return Err(CliError::Workload(format!(
            "unknown vfile command '{}' (known: demo)",
            args.what
        )));
    }
    if args.size_mib == 0 {
        return Err(CliError::Workload("--size-mib must be at least 1".into()));
    }
    // Story: `vfile demo --size-mib 1000000` tried to hold a terabyte in RAM.
    let need_mib = args.size_mib.saturating_mul(FILE_COPIES_IN_RAM);
    if need_mib > args.memory_max_mib {
        return Err(CliError::Workload(format!(
            "--size-mib {}: the demo would hold about {need_mib} MiB in RAM, more than \
             --memory-max-mib {}",
            args.size_mib, args.memory_max_mib
        )));
    }
    let preset = Preset::load(&args.preset, &args.overrides)?;
    let cfg: InsiderConfig = preset.require()?;
    let host = preset
        .require_host("the vfile demo (the host storage stack)")?
        .clone();
    let mut rt = Runtime::new(&MachineSpec {
        insider: &cfg,
        host: &host,
        flash: Some((&preset.flash, &preset.ftl)),
        functional: true,
        seed: args.seed,
    })
    .map_err(|err| CliError::Config {
        source_name: format!("preset {}", preset.name),
        reason: err.to_string(),
    })?;
    println!(
        "drive: preset {} ({:?} backing, PCIe Gen3 x{}, {} application slots, C = {} KiB, R = {})",
        preset.name,
        cfg.backing,
        cfg.pcie_lanes,
        cfg.app_slots,
        cfg.credit_request_bytes >> 10,
        cfg.credits_initial
    );
    rt.add_user(ALICE, 100, "alice").map_err(e)?;
    rt.add_user(BOB, 101, "bob").map_err(e)?;
    rt.mkdir(0, "/home", 0o755).map_err(e)?;
    rt.mkdir(0, "/home/alice", 0o777).map_err(e)?;
    rt.install_program(
        "grep",
        ProgramSpec {
            make: Box::new(|| Box::new(nearflash_iscapps::apps::GrepProgram::default())),
            output_per_input: 8.0 / (LINE_CHARS + 1) as f64,
        },
    );

    // 1. Alice writes a file through the ordinary path.
    let app =
        GrepApp::with_line_chars(LINE_CHARS).map_err(|x| CliError::Workload(x.to_string()))?;
    let data = app
        .generate(args.seed, args.size_mib << 20)
        .map_err(|x| CliError::Workload(x.to_string()))?;
    let path = "/home/alice/lines.txt";
    let t0 = rt.now();
    rt.create(ALICE, path, 0o600).map_err(e)?;
    let fd = rt.open(ALICE, path, true).map_err(e)?;
    for (i, piece) in data.input.chunks(1 << 20).enumerate() {
        rt.pwrite(fd, (i as u64) << 20, piece).map_err(e)?;
    }
    rt.fsync(fd).map_err(e)?;
    rt.close(fd).map_err(e)?;
    let t1 = rt.now();
    println!(
        "1. alice writes {path} ({} bytes, {} lines, mode 0600) and fsyncs: {:.1} us",
        data.input.len(),
        data.record_count,
        us(t0, t1)
    );

    // 2. She registers a virtual file: grep over the real file, in a drive slot.
    let vpath = "/home/alice/lines.grep";
    rt.reg_virt_file(ALICE, vpath, path, "grep").map_err(e)?;
    println!(
        "2. reg_virt_file({path}, grep) -> {vpath}, recorded in /.alice.nearflash (mode 0640)"
    );

    // 3. vopen, send_params (the 2-char pattern), vread the (row, col) pairs, vclose.
    let t2 = rt.now();
    let vfd = rt.vopen(ALICE, vpath, Direction::Read).map_err(e)?;
    for p in &data.params {
        rt.send_params(vfd, p).map_err(e)?;
    }
    let t3 = rt.now();
    let mut out = Vec::new();
    loop {
        let (n, d) = rt.vread(vfd, 64 << 10).map_err(e)?;
        if n == 0 {
            break;
        }
        out.extend_from_slice(&d);
    }
    rt.vclose(vfd).map_err(e)?;
    let t4 = rt.now();
    println!(
        "3. vopen + send_params(pattern {:?}): {:.1} us; vread: {} bytes of (row, col) pairs \
         in {:.1} us; {:.2} GB/s of file scanned in the drive",
        String::from_utf8_lossy(&data.params[0]),
        us(t2, t3),
        out.len(),
        us(t3, t4),
        data.input.len() as f64 / (us(t2, t4) * 1e3)
    );
    let got = app
        .host_remainder(&data, &[out])
        .map_err(|x| CliError::Workload(x.to_string()))?;
    let want = app
        .reference(&data)
        .map_err(|x| CliError::Workload(x.to_string()))?;
    app.verify(&got, &want)
        .map_err(|x| CliError::Verification(x.to_string()))?;
    println!(
        "   the host expands the pairs into each line's first match: equal to grep's reference"
    );

    // 4. The same bytes through the host storage stack, for comparison (cold cache).
    rt.drop_cache(path).map_err(e)?;
    let t5 = rt.now();
    let fd = rt.open(ALICE, path, false).map_err(e)?;
    let mut at = 0;
    loop {
        let (n, _) = rt.pread(fd, at, 2 << 20).map_err(e)?;
        if n == 0 {
            break;
        }
        at += n;
    }
    rt.close(fd).map_err(e)?;
    let t6 = rt.now();
    println!(
        "4. host-only: pread of the whole file through the storage stack: {:.1} us ({:.2} GB/s, \
         before any host computing)",
        us(t5, t6),
        at as f64 / (us(t5, t6) * 1e3)
    );

    // 5. Bob registers the same file, but vopen checks his permission first.
    rt.reg_virt_file(BOB, "/home/alice/steal.grep", path, "grep")
        .map_err(e)?;
    let (isc_before, _) = rt.machine().mux_requests();
    match rt.vopen(BOB, "/home/alice/steal.grep", Direction::Read) {
        Err(err) => println!(
            "5. bob's vopen of a virtual file over it: refused ({err}); drive requests issued: {}",
            rt.machine().mux_requests().0 - isc_before
        ),
        Ok(_) => {
            return Err(CliError::Verification(
                "bob could open a virtual file over alice's 0600 file".into(),
            ))
        }
    }
    Ok(())
}
