//! `nearflash cs run`: computational storage the standard way (crates/cs, docs/cs.md). Writes
//! the input file to the NVM namespace of the preset's drive, then runs the NVMe
//! Computational Programs / Subsystem Local Memory sequence — Load Program in chunks,
//! activate, create a range set, Memory Copy the input into SLM, Execute, Memory Read — with
//! each command's simulated latency (`--trace-commands`), and the same work on the host
//! (read through the host stack, the program on a host core). The program's type comes from
//! its name: `.o` is an eBPF object (`clang -target bpf -O2 -c`), `.wasm`/`.wat` WebAssembly.
//! Exit status: 0 when every command succeeds; 2 with the failing command's status and
//! message otherwise.

use crate::error::CliError;
use nearflash_cs::sequence::{
    host_only, host_run, known_run, offload_with, Offload, OffloadError, Step,
};
use nearflash_cs::ProgramType;
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug)]
pub struct CsArgs {
    #[command(subcommand)]
    pub command: CsCommand,
}

#[derive(clap::Subcommand, Debug)]
pub enum CsCommand {
    /// Offload a program over a file through the CP/SLM command sets; compare with the host.
    Run(CsRunArgs),
    /// Run a TOML list of commands (docs/cs.md, "Command scripts"), each printed with its
    /// simulated latency and status.
    Script(CsScriptArgs),
}

#[derive(clap::Args, Debug)]
pub struct CsScriptArgs {
    /// The script: `[[command]]` tables with `op = "write_nvm" | "load_program" | …`.
    pub script: PathBuf,
    /// Run the script on the computational drive of the `nearflash serve` mounted at DIR,
    /// through its control file: its namespace is the image's (`copy_from_file` names a
    /// file of the mount by its path inside it), its clock the device's. The files the
    /// script names are read here (at most 4 MiB each) and sent with the request.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["preset", "overrides", "seed"])]
    pub mount: Option<PathBuf>,
    #[arg(long, default_value = "ssd-970evo")]
    pub preset: String,
    /// `table.field=value` overrides of the preset.
    #[arg(long = "set")]
    pub overrides: Vec<String>,
    /// Refuse a file the script names that is larger than this (MiB).
    #[arg(long, default_value_t = 2048)]
    pub file_max_mib: u64,
    /// Write every command (name, detail, latency, status) and the last Execute's return as
    /// JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// A script's files, relative to the working directory (as fio's `filename=` is), each read
/// as a bounded stream.
struct ScriptFiles {
    max_bytes: u64,
}

impl nearflash_cs::script::ScriptFiles for ScriptFiles {
    fn read(&mut self, path: &Path) -> std::io::Result<Vec<u8>> {
        nearflash_outfile::read_bounded(path, self.max_bytes).map_err(|e| {
            if e.kind() == std::io::ErrorKind::InvalidData {
                std::io::Error::new(e.kind(), format!("{e} (--file-max-mib)"))
            } else {
                e
            }
        })
    }
}

#[derive(clap::Args, Debug)]
pub struct CsRunArgs {
    #[arg(long, default_value = "ssd-970evo")]
    pub preset: String,
    /// `table.field=value` overrides of the preset (e.g. `cs.slm_bytes=1073741824`).
    #[arg(long = "set")]
    pub overrides: Vec<String>,
    /// PROG.o (eBPF), PROG.wasm or PROG.wat (WebAssembly).
    #[arg(long)]
    pub program: PathBuf,
    /// The file written to the NVM namespace and copied into SLM (range 0).
    #[arg(long)]
    pub input: PathBuf,
    /// CPARAM1, then CPARAM2: a decimal number, or `str:TEXT` (up to 8 bytes, first byte
    /// lowest). Repeatable, at most twice.
    #[arg(long = "param", allow_hyphen_values = true)]
    pub params: Vec<String>,
    /// The compute engine by name (the preset's `[cs]` engines; `--engine list` names them).
    #[arg(long)]
    pub engine: Option<String>,
    /// Where the program's output (range 1, read back with Memory Read) goes.
    #[arg(long)]
    pub output: PathBuf,
    /// Print each command with its simulated latency.
    #[arg(long)]
    pub trace_commands: bool,
    /// Write the run as JSON to this file: every command with its latency and status, the
    /// offload's and the host-only path's times and work.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Bytes of the output range.
    #[arg(long, default_value_t = 4096)]
    pub output_bytes: u64,
    /// Load Program chunk size, KiB.
    #[arg(long, default_value_t = 64)]
    pub chunk_kib: u64,
    /// Refuse an input larger than this (MiB): the run holds it in RAM a few times.
    #[arg(long, default_value_t = 2048)]
    pub input_max_mib: u64,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// Programs read are bounded: 64 MiB, far above any device's MAXPB, so that an oversized
/// program reaches the device and is refused there with its status.
const PROGRAM_FILE_BYTES_MAX: u64 = 64 << 20;

fn read_bounded(what: &str, path: &Path, max_bytes: u64) -> Result<Vec<u8>, CliError> {
    nearflash_outfile::read_bounded(path, max_bytes).map_err(|source| CliError::Io {
        what: format!("{what} {}", path.display()),
        source,
    })
}

fn param(text: &str) -> Result<u64, CliError> {
    if let Some(s) = text.strip_prefix("str:") {
        if s.len() > 8 {
            return Err(CliError::Workload(format!(
                "--param {text}: str: takes at most 8 bytes"
            )));
        }
        let mut w = [0u8; 8];
        w[..s.len()].copy_from_slice(s.as_bytes());
        return Ok(u64::from_le_bytes(w));
    }
    text.parse().map_err(|_| {
        CliError::Workload(format!(
            "--param {text}: a decimal number or str:TEXT (up to 8 bytes)"
        ))
    })
}

fn program_type(path: &Path) -> Result<ProgramType, CliError> {
    match path.extension().and_then(|e| e.to_str()) {
        Some("o") => Ok(ProgramType::Ebpf),
        Some("wasm") | Some("wat") => Ok(ProgramType::Wasm),
        _ => Err(CliError::Workload(format!(
            "--program {}: name it .o (an eBPF object), .wasm or .wat (WebAssembly)",
            path.display()
        ))),
    }
}

fn us(d: nearflash_sim::SimDuration) -> f64 {
    d.as_ns() as f64 / 1e3
}

/// Every command (name, detail, latency, status) as JSON.
fn steps_json(steps: &[Step]) -> Vec<serde_json::Value> {
    steps
        .iter()
        .map(|s| {
            serde_json::json!({
                "command": s.name,
                "detail": s.detail,
                "latency_us": us(s.latency),
                "status": s.status.name(),
            })
        })
        .collect()
}

fn print_steps(steps: &[Step]) {
    for s in steps {
        eprintln!(
            "  {:<32} {:>14.1} us  {:<28} {}",
            s.name,
            us(s.latency),
            s.status.name(),
            s.detail
        );
    }
}

pub fn run(args: &CsArgs) -> Result<bool, CliError> {
    match &args.command {
        CsCommand::Run(r) => run_offload(r),
        CsCommand::Script(a) => run_script(a),
    }
}

/// Scripts are small: a megabyte of TOML is far more than any command list needs.
const SCRIPT_BYTES_MAX: u64 = 1 << 20;

fn run_script(a: &CsScriptArgs) -> Result<bool, CliError> {
    use nearflash_cs::script::{run_script, Script, ScriptError};
    if let Some(j) = &a.json {
        crate::output::check_file("--json", j)?;
    }
    let text = read_bounded("script", &a.script, SCRIPT_BYTES_MAX)?;
    let name = a.script.display().to_string();
    let text = String::from_utf8(text)
        .map_err(|_| CliError::Workload(format!("script {name}: not UTF-8 text")))?;
    let script = Script::parse(&name, &text)?;
    if let Some(mount) = &a.mount {
        return run_script_mounted(a, mount, &name, script);
    }
    let mut drive = nearflash_jobs::cs::open(&a.preset, &a.overrides, a.seed)?;
    let mut files = ScriptFiles {
        max_bytes: a.file_max_mib << 20,
    };
    eprintln!(
        "{name}: {} commands on preset {}",
        script.commands.len(),
        drive.preset
    );
    let writes = drive.writes();
    let got = match run_script(&mut drive.session, &script, &name, &mut files, writes) {
        Ok(g) => g,
        Err(e) => {
            if let ScriptError::Command { steps, .. } = &e {
                print_steps(steps);
            }
            return Err(e.into());
        }
    };
    print_steps(&got.steps);
    for (file, data) in &got.outputs {
        crate::output::write_atomic(file, data)?;
    }
    let total: u64 = got.steps.iter().map(|s| s.latency.as_ns()).sum();
    eprintln!(
        "{} commands in {:.1} us simulated{}",
        got.steps.len(),
        total as f64 / 1e3,
        got.last_result.map_or(String::new(), |r| format!(
            "; the last Execute returned {r}"
        ))
    );
    if let Some(j) = &a.json {
        let steps = steps_json(&got.steps);
        let doc = serde_json::json!({
            "script": name,
            "preset": drive.preset,
            "commands": steps,
            "last_result": got.last_result,
        });
        let text = serde_json::to_vec_pretty(&doc).expect("JSON values serialise");
        crate::output::write_atomic(j, &text)?;
    }
    Ok(true)
}

/// `cs script --mount DIR`: the script as one `cs` request to the mount's control file, the
/// files it names read here (bounded) and sent in it; the answer's steps printed as a local
/// run prints them, its outputs written here.
fn run_script_mounted(
    a: &CsScriptArgs,
    mount: &Path,
    name: &str,
    script: nearflash_cs::script::Script,
) -> Result<bool, CliError> {
    use nearflash_cs::script::ScriptCommand;
    use nearflash_live::vfile::control::{
        hex_decode, hex_encode, CsRequest, Request, MODULE_BYTES_MAX,
    };
    let max_bytes = (a.file_max_mib << 20).min(MODULE_BYTES_MAX);
    let mut files = std::collections::BTreeMap::new();
    for c in &script.commands {
        let file = match c {
            ScriptCommand::WriteNvm { file, .. }
            | ScriptCommand::LoadProgram { file, .. }
            | ScriptCommand::MemoryWrite { file, .. } => file,
            _ => continue,
        };
        if let std::collections::btree_map::Entry::Vacant(slot) =
            files.entry(file.to_string_lossy().into_owned())
        {
            slot.insert(hex_encode(&read_bounded("script file", file, max_bytes)?));
        }
    }
    eprintln!(
        "{name}: {} commands on the drive served at {}",
        script.commands.len(),
        mount.display()
    );
    let request = Request::Cs(CsRequest {
        commands: script.commands,
        files,
    });
    let answer = crate::cmd_vfile_mount::send(mount, &request)?;
    let cs = answer.cs.ok_or_else(|| {
        CliError::Workload(format!("{}: the answer has no cs steps", mount.display()))
    })?;
    for s in &cs.steps {
        eprintln!(
            "  {:<32} {:>14.1} us  {:<28} {}",
            s.command, s.latency_us, s.status, s.detail
        );
    }
    for (file, hex) in &cs.outputs {
        let data = hex_decode(hex)
            .map_err(|e| CliError::Workload(format!("output {file:?} in the answer: {e}")))?;
        crate::output::write_atomic(Path::new(file), &data)?;
    }
    let total_us: f64 = cs.steps.iter().map(|s| s.latency_us).sum();
    eprintln!(
        "{} commands in {total_us:.1} us simulated{}; the device's clock at {:.1} us",
        cs.steps.len(),
        cs.last_result.map_or(String::new(), |r| format!(
            "; the last Execute returned {r}"
        )),
        cs.now_us
    );
    if let Some(j) = &a.json {
        let doc = serde_json::json!({
            "script": name,
            "mount": mount.display().to_string(),
            "commands": cs.steps,
            "last_result": cs.last_result,
            "now_us": cs.now_us,
        });
        let text = serde_json::to_vec_pretty(&doc).expect("JSON values serialise");
        crate::output::write_atomic(j, &text)?;
    }
    Ok(true)
}

fn run_offload(r: &CsRunArgs) -> Result<bool, CliError> {
    crate::output::check_file("--output", &r.output)?;
    if let Some(j) = &r.json {
        crate::output::check_file("--json", j)?;
    }
    if r.params.len() > 2 {
        return Err(CliError::Workload(
            "--param: Execute Program takes two parameters (CPARAM1, CPARAM2)".into(),
        ));
    }
    let mut params = [0u64; 2];
    for (i, p) in r.params.iter().enumerate() {
        params[i] = param(p)?;
    }
    if r.chunk_kib == 0 || r.output_bytes == 0 || r.output_bytes > u64::from(u32::MAX) {
        return Err(CliError::Workload(
            "--chunk-kib and --output-bytes must be positive (the output range at most 4 GiB)"
                .into(),
        ));
    }
    let ptype = program_type(&r.program)?;
    let mut drive = nearflash_jobs::cs::open(&r.preset, &r.overrides, r.seed)?;
    let engine = match &r.engine {
        None => 0,
        Some(name) => drive.engine(name).ok_or_else(|| {
            CliError::Workload(format!(
                "--engine {name}: preset {} has {}",
                drive.preset,
                drive.engines.join(", ")
            ))
        })?,
    };
    let engine_name = drive.engines[engine].clone();
    let program = read_bounded("program", &r.program, PROGRAM_FILE_BYTES_MAX)?;
    let input = read_bounded("input", &r.input, r.input_max_mib << 20)?;
    let cs_err = |e: nearflash_cs::session::SessionError| CliError::Cs(e.into());
    let (request_bytes, depth) = (drive.host.io_request_bytes, drive.host.io_queue_depth);
    drive
        .session
        .write_nvm(0, &input, request_bytes, depth)
        .map_err(cs_err)?;
    let o = Offload {
        ptype,
        program,
        input_bytes: input.len() as u64,
        params,
        engine,
        output_bytes: r.output_bytes,
        chunk_bytes: r.chunk_kib << 10,
    };
    eprintln!(
        "{} ({}, {} bytes) over {} ({} bytes) on engine {engine_name} of preset {}",
        r.program.display(),
        ptype.name(),
        o.program.len(),
        r.input.display(),
        input.len(),
        drive.preset
    );
    // The host-only path's program run is pure (no simulation): it runs on another core
    // while the offload's first commands are simulated; Execute answers with it if the
    // device's run is the same run (same program, parameters, budget, ranges and bytes:
    // `Programs::expect`), and host_only uses it if the host reads these bytes — the program
    // is interpreted once for both paths.
    let cfg = drive.session.device().config().clone();
    let input = std::sync::Arc::new(input);
    let (got, ahead) = std::thread::scope(|sc| {
        let mut host = Some(sc.spawn(|| host_run(&cfg, &o, &input)));
        let join = |h: std::thread::ScopedJoinHandle<'_, _>| {
            h.join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        };
        let mut ahead = None;
        let got = offload_with(&mut drive.session, &o, &mut |s| {
            if let Some(h) = host.take() {
                let run = join(h);
                if let Some(k) = known_run(&cfg, &o, &input, &run) {
                    s.expect_run(k);
                }
                ahead = Some(run);
            }
        });
        let ahead = match (ahead, host) {
            (Some(run), _) => run,
            (None, Some(h)) => join(h),
            (None, None) => unreachable!("the host run is joined once"),
        };
        (got, ahead)
    });
    let got = match got {
        Ok(g) => g,
        Err(e) => {
            // The commands up to the failing one, with their latencies; then the error names
            // the command, its status and why.
            if let OffloadError::Command { steps, .. } = &e {
                print_steps(steps);
            }
            return Err(CliError::Cs(e));
        }
    };
    if r.trace_commands {
        print_steps(&got.steps);
    }
    if !got.log.is_empty() {
        eprintln!("program log: {}", String::from_utf8_lossy(&got.log));
    }
    crate::output::write_atomic(&r.output, &got.output)?;
    let h = host_only(
        &mut drive.session,
        &o,
        &drive.host,
        Some((input.as_slice(), ahead)),
    )
    .map_err(CliError::Cs)?;
    eprintln!(
        "offload:   {:>12.1} us  (result {}, {} instructions, {} SLM bytes touched)",
        us(got.total),
        got.result,
        got.work.instructions,
        got.work.slm_bytes
    );
    eprintln!(
        "host only: {:>12.1} us  (read {:.1} us through the host stack, compute {:.1} us on a host core)",
        us(h.total),
        us(h.read),
        us(h.compute)
    );
    eprintln!(
        "speedup of the offload: {:.2}x{}",
        h.total.as_ns() as f64 / got.total.as_ns().max(1) as f64,
        if h.output == got.output {
            ""
        } else {
            " (the host's output differs!)"
        }
    );
    if let Some(j) = &r.json {
        let doc = serde_json::json!({
            "program": r.program.display().to_string(),
            "type": ptype.name(),
            "engine": engine_name,
            "engine_kind": match drive.session.device().config().engines[engine].kind {
                nearflash_cs::EngineKind::Cores { .. } => "cores",
                nearflash_cs::EngineKind::Slots { .. } => "slots",
            },
            "preset": drive.preset,
            "input_bytes": o.input_bytes,
            "commands": steps_json(&got.steps),
            "offload": {
                "total_us": us(got.total),
                "result": got.result,
                "instructions": got.work.instructions,
                "slm_bytes": got.work.slm_bytes,
            },
            "host_only": {
                "total_us": us(h.total),
                "read_us": us(h.read),
                "compute_us": us(h.compute),
                "instructions": h.work.instructions,
            },
            "speedup": h.total.as_ns() as f64 / got.total.as_ns().max(1) as f64,
            "outputs_equal": h.output == got.output,
        });
        let text = serde_json::to_vec_pretty(&doc).expect("JSON values serialise");
        crate::output::write_atomic(j, &text)?;
    }
    Ok(h.output == got.output)
}
