//! The systems of §5.2 and §5.5 as host programs over the runtime, each run on one
//! application in timing fidelity (byte counts, no data) on a fresh drive:
//!
//! * `host-only`: POSIX `pread`s of `HOST_READ_BYTES`, one at a time from one reader (the
//!   paper's host-only code, cited at `HOST_READ_BYTES`), through the host storage stack, then
//!   the whole computation on the host's cores; no overlap.
//! * `host-bypass`: the same reads through a virtual file over the pass-through program
//!   (no storage stack), non-pipelined: the drive works only while a vread waits.
//! * `host-bypass-pipeline`: the same, pipelined (pre-issue at vopen, host buffers).
//! * `insider`: the drive program in a slot, pipelined; the host runs the remainder on the
//!   program's output.
//! * `insider-no-reduction`: a counterfactual for Fig. 10 — as `insider`, but the bus carries
//!   as many bytes as the program reads (the host's work is unchanged), which isolates the
//!   benefit of data reduction.
//! * `arm`: as `insider`, on the drive's cores instead of slots (§5.5).
//!
//! Virtual writes (RLE) mirror these: the host decodes and writes (host-only: `O_DIRECT`
//! `pwrite` per chunk; host-bypass: `vwrite` through pass-through, with `vsync` per chunk
//! unless pipelined), or the host `vwrite`s the encoded bytes and the drive decodes.

use crate::app::{AppProfile, Pass};
use crate::config::{EngineKind, InsiderConfig};
use crate::error::InsiderError;
use crate::runtime::{MachineSpec, ProgramSpec, Runtime};
use crate::stream::Direction;
use nearflash_flash::FlashConfig;
use nearflash_ftl::FtlConfig;
use nearflash_host::HostConfig;
use nearflash_iscapps::apps::PassThrough;

/// The application's buffer per read or write call: INSIDER's runtime buffer size
/// (`APP_BUF_SIZE`, 2 MiB, zainryan/INSIDER-System `insider_macros.h`), used for every system.
/// It is also the host-only baseline's I/O depth: §5.2 says only that host-only uses POSIX
/// reads and OpenMP over 32 cores for the computation; its code (INSIDER-System
/// `apps/host/{grep,statistics,sql,knn,relief}/src/pure_cpu`) reads with one thread, one
/// blocking `read()` of `READ_BUF_SIZE` = 2 MiB (`apps/host/*/inc/const.h`) at a time, and
/// runs OpenMP only over the data read: one reader, one 2 MiB read outstanding — what
/// `read_pass` does for `System::HostOnly`.
pub const HOST_READ_BYTES: u64 = 2 << 20;

/// The user the experiments run as.
const UID: u32 = 1000;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum System {
    HostOnly,
    HostBypass,
    HostBypassPipeline,
    Insider,
    InsiderNoReduction,
    Arm,
}

impl System {
    pub const ALL: [System; 6] = [
        System::HostOnly,
        System::HostBypass,
        System::HostBypassPipeline,
        System::Insider,
        System::InsiderNoReduction,
        System::Arm,
    ];

    pub fn name(self) -> &'static str {
        match self {
            System::HostOnly => "host-only",
            System::HostBypass => "host-bypass",
            System::HostBypassPipeline => "host-bypass-pipeline",
            System::Insider => "insider",
            System::InsiderNoReduction => "insider-no-reduction",
            System::Arm => "arm",
        }
    }
}

/// One measured run.
#[derive(Clone, Debug, PartialEq)]
pub struct RunResult {
    pub system: System,
    pub app: String,
    pub pcie_lanes: u32,
    pub input_bytes: u64,
    pub sim_ns: u64,
    /// Input bytes per second of simulated time (MB = 10^6 bytes).
    pub throughput_mb_s: f64,
    /// Busy fraction of the engines that ran programs (slots or cores), mean.
    pub engine_utilization: f64,
    /// Busy fraction of the PCIe link, drive to host.
    pub pcie_d2h_utilization: f64,
    /// What the drive's storage served during the run (data and the file system's own
    /// requests; not the formatting and preconditioning before it).
    pub storage_read_bytes: u64,
    pub storage_write_bytes: u64,
    pub events: u64,
    pub trace_hash: String,
}

/// Runs `app` on `system` with `cfg` (its `pcie_lanes` chosen by the caller).
pub fn run_app(
    system: System,
    app: &AppProfile,
    cfg: &InsiderConfig,
    host: &HostConfig,
    seed: u64,
) -> Result<RunResult, InsiderError> {
    run_app_on(system, app, cfg, host, None, seed)
}

/// `run_app` with the flash device for `insider.backing = "flash"` (the files are written
/// through the FTL, untimed, before the run).
pub fn run_app_on(
    system: System,
    app: &AppProfile,
    cfg: &InsiderConfig,
    host: &HostConfig,
    flash: Option<(&FlashConfig, &FtlConfig)>,
    seed: u64,
) -> Result<RunResult, InsiderError> {
    let mut cfg = cfg.clone();
    if system == System::Arm {
        cfg.engine = EngineKind::Cores;
    }
    let mut rt = Runtime::new(&MachineSpec {
        insider: &cfg,
        host,
        flash,
        functional: false,
        seed,
    })?;
    rt.add_user(UID, 100, "user")?;
    rt.mkdir(0, "/data", 0o777)?;
    rt.install_program(
        "pt",
        ProgramSpec {
            make: Box::new(|| Box::<PassThrough>::default()),
            output_per_input: 1.0,
        },
    );
    // Every input is on the drive before the clock starts (on flash: written through the FTL).
    for (k, pass) in app.passes.iter().enumerate() {
        rt.install_file(UID, &format!("/data/in{k}"), 0o644, pass.input_bytes, None)?;
    }
    let start = rt.now();
    let served_before = *rt.machine().backing_stats();
    for (k, pass) in app.passes.iter().enumerate() {
        match pass.direction {
            Direction::Read => read_pass(&mut rt, system, pass, k)?,
            Direction::Write => write_pass(&mut rt, system, pass, k)?,
        }
    }
    let sim_ns = rt.now().since(start).as_ns().max(1);
    let m = rt.machine();
    let busy = m.engine_busy_ns();
    let engine_utilization =
        busy.iter().sum::<u64>() as f64 / (busy.len().max(1) as f64 * sim_ns as f64);
    Ok(RunResult {
        system,
        app: app.name.clone(),
        pcie_lanes: cfg.pcie_lanes,
        input_bytes: app.input_bytes(),
        sim_ns,
        throughput_mb_s: app.input_bytes() as f64 * 1e3 / sim_ns as f64,
        engine_utilization,
        pcie_d2h_utilization: m.pcie_busy_ns().0 as f64 / sim_ns as f64,
        storage_read_bytes: m.backing_stats().read_bytes - served_before.read_bytes,
        storage_write_bytes: m.backing_stats().write_bytes - served_before.write_bytes,
        events: m.events(),
        trace_hash: m.trace_hash(),
    })
}

fn install_pass_program(rt: &mut Runtime, system: System, pass: &Pass, k: usize) -> String {
    let name = format!("app{k}");
    let cost = pass.cost;
    let ratio = if system == System::InsiderNoReduction {
        1.0
    } else {
        pass.output_per_input
    };
    rt.install_program(
        &name,
        ProgramSpec {
            make: Box::new(move || Box::new(Costed { cost, name: "app" })),
            output_per_input: ratio,
        },
    );
    name
}

/// Timing fidelity runs no program: only its cost matters (functional runs use the real one).
pub(crate) struct Costed {
    pub(crate) cost: nearflash_stream::WorkCost,
    pub(crate) name: &'static str,
}

impl nearflash_stream::StreamProgram for Costed {
    fn name(&self) -> &'static str {
        self.name
    }
    fn on_flit(
        &mut self,
        _: &nearflash_stream::Flit,
        _: &mut nearflash_stream::FlitWriter,
    ) -> Result<(), nearflash_stream::ProgramError> {
        Err(nearflash_stream::ProgramError::Fault {
            program: self.name,
            reason: "a timing-fidelity stand-in holds a cost, not a program".into(),
        })
    }
    fn cost(&self) -> nearflash_stream::WorkCost {
        self.cost
    }
}

fn read_pass(rt: &mut Runtime, system: System, pass: &Pass, k: usize) -> Result<(), InsiderError> {
    let path = format!("/data/in{k}");
    if system == System::HostOnly {
        let fd = rt.open(UID, &path, false)?;
        let mut at = 0;
        loop {
            let (n, _) = rt.pread(fd, at, HOST_READ_BYTES)?;
            if n == 0 {
                break;
            }
            at += n;
            rt.host_compute(n as f64 * pass.host_instructions_per_input_byte)?;
        }
        return rt.close(fd);
    }
    let offload = !matches!(system, System::HostBypass | System::HostBypassPipeline);
    let program = if offload {
        install_pass_program(rt, system, pass, k)
    } else {
        "pt".to_string()
    };
    rt.pipelined = system != System::HostBypass;
    let vpath = format!("/data/in{k}.virt");
    rt.reg_virt_file(UID, &vpath, &path, &program)?;
    let fd = rt.vopen(UID, &vpath, Direction::Read)?;
    loop {
        let (n, _) = rt.vread(fd, HOST_READ_BYTES)?;
        if n == 0 {
            break;
        }
        let instructions = match system {
            System::HostBypass | System::HostBypassPipeline => {
                n as f64 * pass.host_instructions_per_input_byte
            }
            // The host's work is that of the real output, whatever crossed the bus.
            System::InsiderNoReduction => {
                n as f64 * pass.output_per_input * pass.host_instructions_per_output_byte
            }
            _ => n as f64 * pass.host_instructions_per_output_byte,
        };
        rt.host_compute(instructions)?;
    }
    rt.vclose(fd)?;
    Ok(())
}

fn write_pass(rt: &mut Runtime, system: System, pass: &Pass, k: usize) -> Result<(), InsiderError> {
    let input = format!("/data/in{k}");
    let output = format!("/data/out{k}");
    let out_bytes = (pass.input_bytes as f64 * pass.output_per_input).ceil() as u64;
    rt.create(UID, &output, 0o644)?;
    rt.fallocate(UID, &output, out_bytes)?;
    let inp = rt.open(UID, &input, false)?;
    let offload = !matches!(
        system,
        System::HostOnly | System::HostBypass | System::HostBypassPipeline
    );
    let out_fd = if system == System::HostOnly {
        Some(rt.open(UID, &output, true)?)
    } else {
        let program = if offload {
            install_pass_program(rt, system, pass, k)
        } else {
            "pt".to_string()
        };
        rt.pipelined = system != System::HostBypass;
        let vpath = format!("{output}.virt");
        rt.reg_virt_file(UID, &vpath, &output, &program)?;
        None
    };
    let vfd = match out_fd {
        Some(_) => None,
        None => Some(rt.vopen(UID, &format!("{output}.virt"), Direction::Write)?),
    };
    let (mut at, mut written) = (0u64, 0u64);
    loop {
        let (n, _) = rt.pread(inp, at, HOST_READ_BYTES)?;
        if n == 0 {
            break;
        }
        at += n;
        let produced = ((at as f64 * pass.output_per_input) as u64).min(out_bytes) - written;
        match (out_fd, vfd) {
            (Some(fd), _) => {
                rt.host_compute(n as f64 * pass.host_instructions_per_input_byte)?;
                rt.pwrite_direct(fd, written, produced)?;
            }
            // Without amplification the decoded volume itself would cross the bus.
            (None, Some(fd)) if system == System::InsiderNoReduction => {
                rt.vwrite(fd, produced, &[])?
            }
            (None, Some(fd)) if offload => rt.vwrite(fd, n, &[])?,
            (None, Some(fd)) => {
                rt.host_compute(n as f64 * pass.host_instructions_per_input_byte)?;
                rt.vwrite(fd, produced, &[])?;
                if system == System::HostBypass {
                    rt.vsync(fd)?;
                }
            }
            (None, None) => unreachable!("one output path"),
        }
        written += produced;
    }
    rt.close(inp)?;
    match (out_fd, vfd) {
        (Some(fd), _) => rt.close(fd)?,
        (None, Some(fd)) => {
            rt.vclose(fd)?;
        }
        (None, None) => unreachable!("one output path"),
    }
    Ok(())
}
