//! A user's program (`nearflash program run`): a WebAssembly module speaking the WASI
//! preview 1 subset of `nearflash-wasm` (docs/programs.md), run over a file next to the data —
//! in INSIDER's slots or drive cores (the file written onto the simulated INSIDER drive through
//! its file system, bound with reg_virt_file, read with vread; per-chunk time from the fuel
//! burnt), as the Active Flash controller's background task over the file's pages read back
//! from flash (`arm`, optionally beside a foreground of random writes), or on one host core of
//! the same compute model (`host`) — beside the host-only run (the file read through the
//! host's storage stack, the module on one host core). A non-zero exit is a report
//! (`exit_code`), not an error; a trap, running out of fuel or breaking a limit is an error.

use crate::error::JobError;
use nearflash_activeflash::{ActiveFlashConfig, ActiveFlashError, ProgramParams, ProgramRun};
use nearflash_hw::compute::CoreSpec;
use nearflash_insider::config::EngineKind;
use nearflash_insider::runtime::{MachineSpec, ProgramSpec, Runtime};
use nearflash_insider::stream::Direction;
use nearflash_insider::InsiderConfig;
use nearflash_preset::Preset;
use nearflash_wasm::limits::{default_fuel, FUEL_BASE};
use nearflash_wasm::stream::{Meter, WasmStreamProgram};
use nearflash_wasm::{cost, run_chunks, Limits, Outcome, Program};
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// Where the program runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
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

/// The options of a program run.
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ProgramOptions {
    /// PROG.wasm or PROG.wat.
    pub program: PathBuf,
    /// The host file written onto the drive and bound to the program (its standard input).
    pub input: PathBuf,
    /// argv[1], argv[2], …
    pub args: Vec<String>,
    pub preset: String,
    /// Overrides of the preset's fields (`table.field=value`).
    pub overrides: Vec<String>,
    pub engine: Engine,
    /// Fuel for the whole run (none: 2 × 10^9 + 100 per input byte).
    pub fuel_max: Option<u64>,
    /// Linear memory the module may declare and grow to, MiB (1..4096).
    pub memory_max_mib: u64,
    pub seed: u64,
    /// Refuse an input larger than this (MiB): the run holds it in RAM a few times.
    pub input_max_mib: u64,
    /// With engine `arm`: a foreground of 4 KiB random writes at this rate (MB/s).
    pub foreground_mb_s: Option<f64>,
}

impl Default for ProgramOptions {
    fn default() -> Self {
        ProgramOptions {
            program: PathBuf::new(),
            input: PathBuf::new(),
            args: Vec::new(),
            preset: "insider".into(),
            overrides: Vec::new(),
            engine: Engine::Slot,
            fuel_max: None,
            memory_max_mib: 64,
            seed: 1,
            input_max_mib: 1024,
            foreground_mb_s: None,
        }
    }
}

/// A program run: the report (what `--json` writes) and the program's standard output.
#[derive(Debug)]
pub struct ProgramOutcome {
    pub report: ProgramReport,
    pub output: Vec<u8>,
}

const USER: u32 = 1000;
const INPUT_PATH: &str = "/home/user/input";

/// The limits a module runs under; refuses a memory or fuel limit out of range.
pub fn limits(memory_max_mib: u64, fuel_max: u64) -> Result<Limits, JobError> {
    if memory_max_mib == 0 || memory_max_mib > 4096 {
        return Err(JobError::Workload(format!(
            "memory_max_mib {memory_max_mib}: must be 1..4096 (wasm32 addresses 4 GiB)"
        )));
    }
    if fuel_max == 0 {
        return Err(JobError::Workload("fuel_max must be at least 1".into()));
    }
    Ok(Limits {
        memory_pages_max: memory_max_mib * 16,
        fuel_max,
        ..Limits::default()
    })
}

/// Reads a file no larger than `max_bytes`, as a bounded stream.
fn read_bounded(what: &str, path: &Path, max_bytes: u64) -> Result<Vec<u8>, JobError> {
    nearflash_outfile::read_bounded(path, max_bytes).map_err(|source| JobError::Io {
        what: format!("{what} {}", path.display()),
        source,
    })
}

/// Loads and validates the module at `path` under `limits`.
pub fn load(path: &Path, limits: Limits) -> Result<Program, JobError> {
    let bytes = read_bounded("program", path, limits.module_bytes_max)?;
    let name = path
        .file_name()
        .map_or_else(|| "program".into(), |n| n.to_string_lossy().into_owned());
    Ok(Program::load(&name, &bytes, limits)?)
}

/// One engine's figures.
#[derive(Debug, Serialize)]
pub struct EngineFigures {
    pub engine: String,
    pub bytes_in: u64,
    pub bytes_out: u64,
    pub fuel: u64,
    pub instructions: f64,
    pub time_ns: u64,
    pub throughput_mb_s: f64,
    /// None where the preset gives the engine no power figure.
    pub energy_j: Option<f64>,
}

#[derive(Debug, Serialize)]
pub struct ProgramReport {
    pub program: String,
    pub args: Vec<String>,
    pub preset: String,
    pub seed: u64,
    pub exit_code: i32,
    pub engine: Engine,
    pub run: EngineFigures,
    pub host_only: EngineFigures,
    /// The Active Flash controller's task (`--engine arm`): its flash I/O, busy times and
    /// the foreground beside it.
    pub controller: Option<ProgramRun>,
    /// What the program wrote to fd 2: the run's own on `host`, the host-only run's (the same
    /// program over the same input) on the device engines.
    pub diagnostics: String,
}

fn figures(
    engine: &str,
    bytes_in: u64,
    bytes_out: u64,
    fuel: u64,
    time_ns: u64,
    power_w: Option<f64>,
) -> EngineFigures {
    let throughput_mb_s = if time_ns == 0 {
        0.0
    } else {
        bytes_in as f64 * 1e3 / time_ns as f64
    };
    EngineFigures {
        engine: engine.to_string(),
        bytes_in,
        bytes_out,
        fuel,
        instructions: cost::instructions(fuel),
        time_ns,
        throughput_mb_s,
        energy_j: power_w.map(|w| w * time_ns as f64 * 1e-9),
    }
}

/// What one engine's run gave: its output, the fuel it burnt, its exit status and figures.
struct EngineRun {
    output: Vec<u8>,
    fuel: u64,
    exit_code: i32,
    fig: EngineFigures,
}

/// Runs `r.program` over `r.input` on `r.engine`, beside the host-only run.
pub fn program(r: &ProgramOptions) -> Result<ProgramOutcome, JobError> {
    let (limits, input) = checked_input(r)?;
    let program = load(&r.program, limits)?;
    let preset = Preset::load(&r.preset, &r.overrides)?;
    let mut cfg: InsiderConfig = preset.require()?;
    cfg.engine = match r.engine {
        Engine::Core => EngineKind::Cores,
        _ => EngineKind::Slots,
    };
    let mut rt = machine(r, &preset, &cfg, &input)?;
    // The Active Flash SSD (`arm`), and the energy figures: its controller (ARM) and host;
    // INSIDER's preset has no power for its slots and drive cores.
    let af_preset = Preset::load("active-flash", &[])?;
    let af: ActiveFlashConfig = af_preset.require()?;

    let mut controller = None;
    let run = match r.engine {
        Engine::Slot | Engine::Core => Some(run_insider(r, limits, &mut rt, &input)?),
        Engine::Arm => {
            let (run, task) = run_controller(r, limits, &program, &af_preset, &af, &input)?;
            controller = Some(task);
            Some(run)
        }
        // The host engine is the host-only run itself (below): the file read through the
        // host's storage stack, then the module on one host core.
        Engine::Host => None,
    };

    // The host-only comparison (also the host engine's run).
    let (h, host_fig) = host_only(r, &program, &mut rt, &cfg, &af)?;
    let diagnostics = String::from_utf8_lossy(&h.diagnostics).into_owned();
    let run = run.unwrap_or_else(|| EngineRun {
        fig: figures(
            "host (read + one core)",
            host_fig.bytes_in,
            host_fig.bytes_out,
            host_fig.fuel,
            host_fig.time_ns,
            Some(af.host().active_power_w),
        ),
        output: h.output,
        fuel: h.fuel,
        exit_code: h.exit_code,
    });

    let report = ProgramReport {
        program: program.name().to_string(),
        args: r.args.clone(),
        preset: preset.name.clone(),
        seed: r.seed,
        exit_code: run.exit_code,
        engine: r.engine,
        run: run.fig,
        host_only: host_fig,
        controller,
        diagnostics,
    };
    debug_assert_eq!(run.fuel, report.run.fuel);
    Ok(ProgramOutcome {
        report,
        output: run.output,
    })
}

/// The options' limits checked and the input read: the default fuel scales with the input,
/// which is read after the other checks.
fn checked_input(r: &ProgramOptions) -> Result<(Limits, Vec<u8>), JobError> {
    let mut limits = limits(r.memory_max_mib, r.fuel_max.unwrap_or(FUEL_BASE))?;
    if r.foreground_mb_s.is_some() && r.engine != Engine::Arm {
        return Err(JobError::Workload(
            "foreground_mb_s runs beside the Active Flash controller's task: give engine arm"
                .into(),
        ));
    }
    let input = read_bounded("input", &r.input, r.input_max_mib << 20)?;
    if r.fuel_max.is_none() {
        limits.fuel_max = default_fuel(input.len() as u64);
    }
    Ok((limits, input))
}

/// The simulated INSIDER machine (on the preset's flash, with its host) holding the input
/// as a user's file.
fn machine(
    r: &ProgramOptions,
    preset: &Preset,
    cfg: &InsiderConfig,
    input: &[u8],
) -> Result<Runtime, JobError> {
    let host = preset
        .require_host("program run (the host storage stack)")?
        .clone();
    let mut rt = Runtime::new(&MachineSpec {
        insider: cfg,
        host: &host,
        flash: Some((&preset.flash, &preset.ftl)),
        functional: true,
        seed: r.seed,
    })?;
    rt.add_user(USER, 100, "user")?;
    rt.mkdir(0, "/home", 0o755)?;
    rt.mkdir(0, "/home/user", 0o777)?;
    rt.install_file(USER, INPUT_PATH, 0o600, input.len() as u64, Some(input))?;
    Ok(rt)
}

/// The host-only run: the file read through the host's storage stack, then the module on one
/// host core (not overlapped); its outcome and figures.
fn host_only(
    r: &ProgramOptions,
    program: &Program,
    rt: &mut Runtime,
    cfg: &InsiderConfig,
    af: &ActiveFlashConfig,
) -> Result<(Outcome, EngineFigures), JobError> {
    let t0 = rt.now();
    let data = rt.read_file(USER, INPUT_PATH)?;
    let io_ns = rt.now().since(t0).as_ns();
    let h = run_chunks(program, &r.args, r.seed, &data, 256 << 10)?;
    let host_core: CoreSpec = cfg.host_core();
    let host_ns = io_ns + cost::duration(&host_core, h.fuel).as_ns();
    let host_fig = figures(
        "host only (read + one core)",
        data.len() as u64,
        h.output.len() as u64,
        h.fuel,
        host_ns,
        Some(af.host().active_power_w),
    );
    Ok((h, host_fig))
}

/// The program in an INSIDER slot or on the drive's cores: a second instance of the module
/// bound to the input file as a virtual file, read through to its end.
fn run_insider(
    r: &ProgramOptions,
    limits: Limits,
    rt: &mut Runtime,
    input: &[u8],
) -> Result<EngineRun, JobError> {
    let meter = Rc::new(RefCell::new(Meter::default()));
    rt.install_program(
        "user",
        ProgramSpec {
            // A second instance of the module: the first serves the host-only run.
            make: Box::new(WasmStreamProgram::metered_factory(
                load(&r.program, limits)?,
                r.args.clone(),
                r.seed,
                meter.clone(),
            )),
            output_per_input: 1.0,
        },
    );
    rt.reg_virt_file(USER, "/home/user/virtual", INPUT_PATH, "user")?;
    let t0 = rt.now();
    let fd = rt.vopen(USER, "/home/user/virtual", Direction::Read)?;
    let mut out = Vec::new();
    let read = loop {
        match rt.vread(fd, 1 << 20) {
            Ok((0, _)) => break Ok(()),
            Ok((_, d)) => out.extend_from_slice(&d),
            Err(e) => break Err(e),
        }
    };
    let t1 = rt.now();
    let m = *meter.borrow();
    // Closing a virtual file whose program failed reports that failure again.
    let closed = rt.vclose(fd);
    match read {
        // A non-zero exit is a report, not an error (docs/programs.md: exit status 1,
        // as on the other engines); anything else is the program's error.
        Err(e) if m.exit_code.is_none_or(|c| c == 0) => return Err(e.into()),
        Err(_) => {}
        Ok(()) => {
            closed?;
        }
    }
    let name = if r.engine == Engine::Slot {
        "insider slot"
    } else {
        "insider cores"
    };
    let fig = figures(
        name,
        input.len() as u64,
        out.len() as u64,
        m.fuel,
        t1.since(t0).as_ns(),
        None,
    );
    Ok(EngineRun {
        output: out,
        fuel: m.fuel,
        exit_code: m.exit_code.unwrap_or(0),
        fig,
    })
}

/// The program as the Active Flash controller's background task over the input's pages on
/// flash (beside a foreground of writes if asked); also gives the controller's own figures.
fn run_controller(
    r: &ProgramOptions,
    limits: Limits,
    program: &Program,
    af_preset: &Preset,
    af: &ActiveFlashConfig,
    input: &[u8],
) -> Result<(EngineRun, ProgramRun), JobError> {
    let meter = Rc::new(RefCell::new(Meter::default()));
    let task = WasmStreamProgram::new(program.start(&r.args, r.seed)).with_meter(meter.clone());
    let params = ProgramParams {
        foreground_mb_s: r.foreground_mb_s,
        output_bytes_max: limits.output_bytes_max(input.len() as u64),
    };
    let run = match nearflash_activeflash::run_program(
        &af_preset.flash,
        &af_preset.ftl,
        af,
        input,
        Box::new(task),
        params,
        r.seed,
    ) {
        Ok(run) => run,
        // A non-zero exit is a report, not an error; anything else is the program's error.
        Err(ActiveFlashError::Program { run, .. })
            if meter.borrow().exit_code.is_some_and(|c| c != 0) =>
        {
            *run
        }
        Err(e) => return Err(e.into()),
    };
    let m = *meter.borrow();
    assert_eq!(run.instructions, cost::instructions(m.fuel));
    let fig = EngineFigures {
        engine: "active-flash controller task".into(),
        bytes_in: run.bytes_in,
        bytes_out: run.bytes_out,
        fuel: m.fuel,
        instructions: run.instructions,
        time_ns: run.time_ns,
        throughput_mb_s: run.throughput_mb_s,
        energy_j: Some(af.controller_active_power_w * run.busy_ns() as f64 * 1e-9),
    };
    let engine_run = EngineRun {
        output: run.output.clone(),
        fuel: m.fuel,
        exit_code: m.exit_code.unwrap_or(0),
        fig,
    };
    Ok((engine_run, run))
}
