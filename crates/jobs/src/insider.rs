//! The INSIDER jobs (seed 001): one application on one of the §5.2/§5.5 systems (`insider`),
//! several copies of a drive program side by side in the drive's slots sharing its bandwidth
//! (`insider_share`, the §5.3 machinery with every program starting at once), and the virtual
//! file walk-through (`vfile_demo`, the data behind `nearflash vfile demo`).

use crate::error::JobError;
use nearflash_insider::app::AppProfile;
use nearflash_insider::experiment::{run_app_on, System};
use nearflash_insider::fairness::{run_fairness, Contender};
use nearflash_insider::runtime::{MachineSpec, ProgramSpec, Runtime};
use nearflash_insider::stream::Direction;
use nearflash_insider::{InsiderConfig, InsiderError};
use nearflash_iscapps::apps::GrepApp;
use nearflash_iscapps::IscApp;
use nearflash_preset::Preset;
use nearflash_sim::SimTime;
use serde::{Deserialize, Serialize};

/// The options of an INSIDER application run.
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct InsiderOptions {
    pub preset: String,
    pub overrides: Vec<String>,
    /// grep | knn | statistics | sql | integration | relief | rle | passthrough.
    pub app: String,
    /// host-only | host-bypass | host-bypass-pipeline | insider | insider-no-reduction | arm.
    pub system: String,
    pub seed: u64,
}

impl Default for InsiderOptions {
    fn default() -> Self {
        InsiderOptions {
            preset: "insider".into(),
            overrides: Vec::new(),
            app: "grep".into(),
            system: "insider".into(),
            seed: 1,
        }
    }
}

fn system_named(name: &str) -> Result<System, JobError> {
    System::ALL
        .into_iter()
        .find(|s| s.name() == name)
        .ok_or_else(|| {
            JobError::Workload(format!(
                "unknown INSIDER system '{name}' (known: {})",
                System::ALL.map(System::name).join(", ")
            ))
        })
}

/// What the drive and host needs of a preset: its `[insider]` table and its host.
fn machine(
    preset: &Preset,
    what: &'static str,
) -> Result<(InsiderConfig, nearflash_host::HostConfig), JobError> {
    let cfg: InsiderConfig = preset.require()?;
    let host = preset.require_host(what)?.clone();
    Ok((cfg, host))
}

/// One application at the paper's size on one system, timing fidelity; the fields of
/// `nearflash_insider::experiment::RunResult`.
pub fn insider(opts: &InsiderOptions) -> Result<serde_json::Value, JobError> {
    let system = system_named(&opts.system)?;
    let preset = Preset::load(&opts.preset, &opts.overrides)?;
    let (cfg, host) = machine(&preset, "INSIDER runs (the host storage stack)")?;
    let app = nearflash_iscapps::app(&opts.app)?;
    let profile = AppProfile::from_app(app.as_ref())?;
    let flash = (cfg.backing == nearflash_insider::BackingKind::Flash)
        .then_some((&preset.flash, &preset.ftl));
    let r = run_app_on(system, &profile, &cfg, &host, flash, opts.seed)?;
    Ok(serde_json::json!({
        "version": crate::VERSION,
        "preset": preset.name,
        "seed": opts.seed,
        "system": r.system.name(),
        "app": r.app,
        "pcie_lanes": r.pcie_lanes,
        "input_bytes": r.input_bytes,
        "sim_ns": r.sim_ns,
        "throughput_mb_s": r.throughput_mb_s,
        "engine_utilization": r.engine_utilization,
        "pcie_d2h_utilization": r.pcie_d2h_utilization,
        "storage_read_bytes": r.storage_read_bytes,
        "storage_write_bytes": r.storage_write_bytes,
        "events": r.events,
        "trace_hash": r.trace_hash,
    }))
}

/// The options of a shared-drive run: `programs` copies of one application's drive program,
/// each behind its own virtual file in its own slot, all starting at once.
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ShareOptions {
    pub preset: String,
    pub overrides: Vec<String>,
    pub app: String,
    /// Programs side by side (default: one per application slot, `insider.app_slots`).
    pub programs: Option<u32>,
    /// Each program's own processing limit, MB/s (default: the drive's whole bandwidth, so
    /// only the drive, the credits and the slot limit them).
    pub demand_mb_s: Option<f64>,
    /// Simulated time of the run, ms.
    pub duration_ms: f64,
    pub seed: u64,
}

impl Default for ShareOptions {
    fn default() -> Self {
        ShareOptions {
            preset: "insider".into(),
            overrides: Vec::new(),
            app: "statistics".into(),
            programs: None,
            demand_mb_s: None,
            // Programs that open together ramp up one after another (credits, FIFOs): with
            // 8 slots the last one's rate was still 0 over the window [2, 10] ms of a 10 ms
            // run, and within 13% of the fair share over [8, 40] ms (measured, statistics on
            // the insider preset). The measurement skips the first fifth of the run.
            duration_ms: 40.0,
            seed: 1,
        }
    }
}

/// Most programs a shared-drive run takes (each holds a file and buffers).
pub const SHARE_PROGRAMS_MAX: u32 = 64;
/// Longest shared-drive run, simulated ms.
pub const SHARE_DURATION_MS_MAX: f64 = 1000.0;

/// Runs `programs` copies side by side; per program: its measured rate and max-min fair share.
pub fn insider_share(opts: &ShareOptions) -> Result<serde_json::Value, JobError> {
    let preset = Preset::load(&opts.preset, &opts.overrides)?;
    let (cfg, host) = machine(&preset, "INSIDER runs (the host storage stack)")?;
    let (programs, demand_mb_s) = share_checked(opts, &cfg)?;
    let app = nearflash_iscapps::app(&opts.app)?;
    let contenders: Vec<Contender> = (0..programs)
        .map(|i| {
            Ok(Contender {
                name: format!("{}{i}", opts.app),
                cost: app.program(0)?.cost(),
                output_per_input: app.output_ratio(0)?.ratio,
                demand_mb_s,
                start_ms: 0.0,
            })
        })
        .collect::<Result<_, JobError>>()?;
    let bin_ms = opts.duration_ms / 10.0;
    let r = run_fairness(
        &cfg,
        &host,
        &contenders,
        opts.duration_ms,
        bin_ms,
        opts.seed,
    )?;
    assert_eq!(r.phases.len(), 1, "every program starts at 0: one phase");
    let phase = &r.phases[0];
    let measured = &phase.measured_mb_s;
    let total: f64 = measured.iter().sum();
    Ok(serde_json::json!({
        "version": crate::VERSION,
        "preset": preset.name,
        "seed": opts.seed,
        "app": opts.app,
        "programs": programs,
        "app_slots": cfg.app_slots,
        "demand_mb_s": demand_mb_s,
        "drive_mb_s": r.drive_mb_s,
        "duration_ms": opts.duration_ms,
        "total_mb_s": total,
        "per_program_mb_s": total / f64::from(programs),
        "min_program_mb_s": measured.iter().copied().fold(f64::INFINITY, f64::min),
        "max_program_mb_s": measured.iter().copied().fold(0.0, f64::max),
        "fair_share_mb_s": phase.fair_mb_s[0],
        "worst_deviation": r.worst_deviation(),
        "measured_mb_s": measured,
    }))
}

/// The number of programs and each one's demand, checked against the drive's slots and the
/// limits, with the run's duration.
fn share_checked(opts: &ShareOptions, cfg: &InsiderConfig) -> Result<(u32, f64), JobError> {
    let programs = opts.programs.unwrap_or(cfg.app_slots);
    if programs == 0 || programs > SHARE_PROGRAMS_MAX {
        return Err(JobError::Workload(format!(
            "programs must be 1..={SHARE_PROGRAMS_MAX}, got {programs}"
        )));
    }
    if programs > cfg.app_slots {
        return Err(JobError::Workload(format!(
            "{programs} programs need {programs} application slots; the drive has {} \
             (insider.app_slots)",
            cfg.app_slots
        )));
    }
    if !(opts.duration_ms > 0.0 && opts.duration_ms <= SHARE_DURATION_MS_MAX) {
        return Err(JobError::Workload(format!(
            "duration_ms must be in (0, {SHARE_DURATION_MS_MAX}], got {}",
            opts.duration_ms
        )));
    }
    let demand_mb_s = opts.demand_mb_s.unwrap_or(cfg.emulated_bandwidth_mb_s);
    if !(demand_mb_s.is_finite() && demand_mb_s > 0.0) {
        return Err(JobError::Workload(format!(
            "demand_mb_s must be a positive number, got {demand_mb_s}"
        )));
    }
    Ok((programs, demand_mb_s))
}

/// The options of `nearflash vfile demo`.
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct VfileOptions {
    pub preset: String,
    pub overrides: Vec<String>,
    pub size_mib: u64,
    pub seed: u64,
    pub memory_max_mib: u64,
}

impl Default for VfileOptions {
    fn default() -> Self {
        VfileOptions {
            preset: "insider".into(),
            overrides: Vec::new(),
            size_mib: 16,
            seed: 1,
            memory_max_mib: crate::MEMORY_MIB_MAX,
        }
    }
}

/// What the demo measured, step by step (simulated µs).
#[derive(Clone, Debug, Serialize)]
pub struct VfileDemo {
    pub preset: String,
    pub backing: String,
    pub pcie_lanes: u32,
    pub app_slots: u32,
    pub credit_request_kib: u64,
    pub credits_initial: u32,
    pub path: String,
    pub file_bytes: u64,
    pub file_lines: u64,
    pub write_us: f64,
    pub vpath: String,
    pub pattern: String,
    pub vopen_us: f64,
    pub vread_bytes: u64,
    pub vread_us: f64,
    pub scan_gb_s: f64,
    pub host_read_us: f64,
    pub host_read_gb_s: f64,
    /// The other user's refused vopen, and the drive requests it issued (must be 0).
    pub refused: String,
    pub refused_requests: u64,
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

fn e(err: InsiderError) -> JobError {
    JobError::Workload(err.to_string())
}

fn app_err(x: impl std::fmt::Display) -> JobError {
    JobError::Workload(x.to_string())
}

/// A walk-through of INSIDER's virtual files (seed 001 §3.3) on a preset's drive, on real
/// bytes: a user writes a file through the ordinary path, registers a virtual file that runs
/// grep over it in the drive, reads the matches with vread and the runtime checks them against
/// grep's reference — with the simulated time of every step, a host-only read of the same
/// file to compare, and another user's vopen refused.
pub fn vfile_demo(opts: &VfileOptions) -> Result<VfileDemo, JobError> {
    check_demo_size(opts)?;
    let preset = Preset::load(&opts.preset, &opts.overrides)?;
    let cfg: InsiderConfig = preset.require()?;
    let mut rt = demo_machine(opts, &preset, &cfg)?;

    // 1. Alice writes a file through the ordinary path.
    let app = GrepApp::with_line_chars(LINE_CHARS).map_err(app_err)?;
    let data = app
        .generate(opts.seed, opts.size_mib << 20)
        .map_err(app_err)?;
    let path = "/home/alice/lines.txt";
    let write_us = write_file(&mut rt, path, &data.input)?;

    // 2. She registers a virtual file: grep over the real file, in a drive slot.
    let vpath = "/home/alice/lines.grep";
    rt.reg_virt_file(ALICE, vpath, path, "grep").map_err(e)?;

    // 3. vopen, send_params (the 2-char pattern), vread the (row, col) pairs, vclose.
    let (t2, t3, out) = grep_through_vfile(&mut rt, vpath, &data.params)?;
    let t4 = rt.now();
    let vread_bytes = out.len() as u64;
    let got = app.host_remainder(&data, &[out]).map_err(app_err)?;
    let want = app.reference(&data).map_err(app_err)?;
    app.verify(&got, &want)
        .map_err(|x| JobError::Verification(x.to_string()))?;

    // 4. The same bytes through the host storage stack, for comparison (cold cache).
    let (host_read_us, at) = host_read(&mut rt, path)?;

    // 5. Bob registers the same file, but vopen checks his permission first.
    let (refused, refused_requests) = bob_refused(&mut rt, path)?;
    Ok(VfileDemo {
        preset: preset.name.clone(),
        backing: format!("{:?}", cfg.backing),
        pcie_lanes: cfg.pcie_lanes,
        app_slots: cfg.app_slots,
        credit_request_kib: cfg.credit_request_bytes >> 10,
        credits_initial: cfg.credits_initial,
        path: path.into(),
        file_bytes: data.input.len() as u64,
        file_lines: data.record_count,
        write_us,
        vpath: vpath.into(),
        pattern: String::from_utf8_lossy(&data.params[0]).into_owned(),
        vopen_us: us(t2, t3),
        vread_bytes,
        vread_us: us(t3, t4),
        scan_gb_s: data.input.len() as f64 / (us(t2, t4) * 1e3),
        host_read_us,
        host_read_gb_s: at as f64 / (host_read_us * 1e3),
        refused,
        refused_requests,
    })
}

/// Refuses an empty file, or one the demo's copies of would not fit `--memory-max-mib`.
fn check_demo_size(opts: &VfileOptions) -> Result<(), JobError> {
    if opts.size_mib == 0 {
        return Err(JobError::Workload("--size-mib must be at least 1".into()));
    }
    // Story: `vfile demo --size-mib 1000000` tried to hold a terabyte in RAM.
    let need_mib = opts.size_mib.saturating_mul(FILE_COPIES_IN_RAM);
    if need_mib > opts.memory_max_mib {
        return Err(JobError::Workload(format!(
            "--size-mib {}: the demo would hold about {need_mib} MiB in RAM, more than \
             --memory-max-mib {}",
            opts.size_mib, opts.memory_max_mib
        )));
    }
    Ok(())
}

/// The demo's machine: the preset's INSIDER drive and host, users alice and bob, alice's
/// home, and the grep program installed.
fn demo_machine(
    opts: &VfileOptions,
    preset: &Preset,
    cfg: &InsiderConfig,
) -> Result<Runtime, JobError> {
    let host = preset
        .require_host("the vfile demo (the host storage stack)")?
        .clone();
    let mut rt = Runtime::new(&MachineSpec {
        insider: cfg,
        host: &host,
        flash: Some((&preset.flash, &preset.ftl)),
        functional: true,
        seed: opts.seed,
    })
    .map_err(|err| JobError::Config {
        source_name: format!("preset {}", preset.name),
        reason: err.to_string(),
    })?;
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
    Ok(rt)
}

/// Alice writes `bytes` to `path` through the ordinary path (1 MiB pwrites, fsync); the
/// simulated time it took, us.
fn write_file(rt: &mut Runtime, path: &str, bytes: &[u8]) -> Result<f64, JobError> {
    let t0 = rt.now();
    rt.create(ALICE, path, 0o600).map_err(e)?;
    let fd = rt.open(ALICE, path, true).map_err(e)?;
    for (i, piece) in bytes.chunks(1 << 20).enumerate() {
        rt.pwrite(fd, (i as u64) << 20, piece).map_err(e)?;
    }
    rt.fsync(fd).map_err(e)?;
    rt.close(fd).map_err(e)?;
    Ok(us(t0, rt.now()))
}

/// Alice opens the virtual file, sends grep its parameters and reads the matches to the end:
/// the time before vopen, the time after send_params, and what vread gave.
fn grep_through_vfile(
    rt: &mut Runtime,
    vpath: &str,
    params: &[Vec<u8>],
) -> Result<(SimTime, SimTime, Vec<u8>), JobError> {
    let t2 = rt.now();
    let vfd = rt.vopen(ALICE, vpath, Direction::Read).map_err(e)?;
    for p in params {
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
    Ok((t2, t3, out))
}

/// The file read through the host storage stack from a cold cache: its time (us) and bytes.
fn host_read(rt: &mut Runtime, path: &str) -> Result<(f64, u64), JobError> {
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
    Ok((us(t5, rt.now()), at))
}

/// Bob registers a virtual file over alice's 0600 file; his vopen must be refused: its error
/// and the ISC requests the refusal cost.
fn bob_refused(rt: &mut Runtime, path: &str) -> Result<(String, u64), JobError> {
    rt.reg_virt_file(BOB, "/home/alice/steal.grep", path, "grep")
        .map_err(e)?;
    let (isc_before, _) = rt.machine().mux_requests();
    let refused = match rt.vopen(BOB, "/home/alice/steal.grep", Direction::Read) {
        Err(err) => err.to_string(),
        Ok(_) => {
            return Err(JobError::Verification(
                "bob could open a virtual file over alice's 0600 file".into(),
            ))
        }
    };
    let refused_requests = rt.machine().mux_requests().0 - isc_before;
    Ok((refused, refused_requests))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_programs_in_two_slots_share_the_drive_fairly() {
        let o = ShareOptions {
            programs: Some(2),
            duration_ms: 4.0,
            ..ShareOptions::default()
        };
        let r = insider_share(&o).unwrap();
        let per = r["per_program_mb_s"].as_f64().unwrap();
        let fair = r["fair_share_mb_s"].as_f64().unwrap();
        assert!(per > 0.0 && (per - fair).abs() / fair < 0.2, "{r}");
    }

    #[test]
    fn more_programs_than_slots_is_an_error_naming_the_field() {
        let o = ShareOptions {
            programs: Some(9),
            ..ShareOptions::default()
        };
        let e = insider_share(&o).unwrap_err().to_string();
        assert!(e.contains("insider.app_slots"), "{e}");
    }

    #[test]
    fn an_unknown_system_names_the_known_ones() {
        let o = InsiderOptions {
            system: "fpga".into(),
            ..InsiderOptions::default()
        };
        let e = insider(&o).unwrap_err().to_string();
        assert!(e.contains("host-bypass-pipeline"), "{e}");
    }
}
