//! `nearflash reproduce insider`: seed 001's evaluation. Timing fidelity (paper sizes, byte
//! counts only): the seven applications of Fig. 9 under host-only, host-bypass,
//! host-bypass-pipeline and INSIDER at PCIe Gen3 x8 and x16, the no-reduction counterfactual
//! that splits the speedup (Fig. 10), the ARM-core drive (Figs. 12–13) and the §5.3 fairness
//! experiment (Fig. 11). Functional fidelity: every application on real bytes through the
//! runtime at reduced sizes, verified against its reference.

mod claims;
mod figures;

use super::{parallel_map, Fidelity, ReproduceArgs};
use crate::error::CliError;
use crate::preset::Preset;
use comfy_table::{presets::UTF8_BORDERS_ONLY, Table};
use nearflash_host::HostConfig;
use nearflash_insider::app::AppProfile;
use nearflash_insider::experiment::{run_app, RunResult, System};
use nearflash_insider::fairness::{run_fairness, Contender, FairnessResult};
use nearflash_insider::runtime::{MachineSpec, Runtime};
use nearflash_insider::InsiderConfig;
use nearflash_report::{Run, Summary};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

/// Fig. 9's applications, in the paper's order.
pub const APPS: [&str; 7] = [
    "grep",
    "knn",
    "statistics",
    "sql",
    "integration",
    "relief",
    "rle",
];

/// One measured run and the link it ran on.
pub struct Measured {
    pub app: String,
    pub system: System,
    pub lanes: u32,
    pub result: RunResult,
}

impl Measured {
    /// `insider-x8`, `host-only-x8`, ...
    pub fn label(&self) -> String {
        format!("{}-x{}", self.system.name(), self.lanes)
    }
}

/// Everything the claims and figures read.
pub struct Evaluation {
    pub runs: Vec<Measured>,
    pub fairness: FairnessResult,
    pub fairness_contenders: Vec<Contender>,
    pub cfg: InsiderConfig,
}

impl Evaluation {
    pub fn get(&self, app: &str, system: System, lanes: u32) -> Option<&RunResult> {
        self.runs
            .iter()
            .find(|m| m.app == app && m.system == system && m.lanes == lanes)
            .map(|m| &m.result)
    }

    /// Time of `system` on `app` at `lanes`, seconds.
    pub fn secs(&self, app: &str, system: System, lanes: u32) -> f64 {
        self.get(app, system, lanes)
            .map_or(f64::NAN, |r| r.sim_ns as f64 / 1e9)
    }
}

fn load(args: &ReproduceArgs) -> Result<(Preset, InsiderConfig, HostConfig), CliError> {
    let preset = Preset::load(args.preset.as_deref().unwrap_or("insider"), &args.overrides)?;
    let cfg = preset.insider.clone().ok_or_else(|| CliError::Config {
        source_name: format!("preset {}", preset.name),
        reason: "no [insider] table: reproduce insider needs the INSIDER drive".into(),
    })?;
    let host = preset.host.clone().ok_or_else(|| CliError::Config {
        source_name: format!("preset {}", preset.name),
        reason: "no [host] table: the host-only baseline needs the host storage stack".into(),
    })?;
    Ok((preset, cfg, host))
}

/// §5.3's programs: statistics, SQL and pass-through throttled to 12, 6.4 and 8 GB/s; they
/// join 20 ms apart so that the drive is first ample, then short.
pub fn fairness_contenders() -> Result<Vec<Contender>, CliError> {
    [
        ("statistics", 12_000.0, 0.0),
        ("sql", 6_400.0, 20.0),
        ("passthrough", 8_000.0, 40.0),
    ]
    .iter()
    .map(|&(name, demand_mb_s, start_ms)| {
        let app = nearflash_iscapps::app(name).map_err(|e| CliError::Workload(e.to_string()))?;
        let err = |e: nearflash_iscapps::AppError| CliError::Workload(e.to_string());
        Ok(Contender {
            name: name.into(),
            cost: app.program(0).map_err(err)?.cost(),
            output_per_input: app.output_ratio(0).map_err(err)?.ratio,
            demand_mb_s,
            start_ms,
        })
    })
    .collect()
}

pub fn run(
    args: &ReproduceArgs,
    fidelity: Fidelity,
    jobs: usize,
    out: &Path,
) -> Result<bool, CliError> {
    // Story: `reproduce insider --only grep` used to run all seven applications anyway.
    if !args.only.is_empty() {
        return Err(CliError::Workload(
            "reproduce insider does not take --only: its claims compare the seven \
             applications of Fig. 9 with each other, so they always run together"
                .into(),
        ));
    }
    let (preset, cfg, host) = load(args)?;
    match fidelity {
        Fidelity::Timing => timing(args, &preset, &cfg, &host, jobs, out),
        Fidelity::Functional => functional(args, &preset, &cfg, &host, out),
    }
}

fn timing(
    args: &ReproduceArgs,
    preset: &Preset,
    cfg: &InsiderConfig,
    host: &HostConfig,
    jobs: usize,
    out: &Path,
) -> Result<bool, CliError> {
    let wall = Instant::now();
    let mut tasks: Vec<(&str, System, u32)> = Vec::new();
    for app in APPS {
        for lanes in [8, 16] {
            for s in [
                System::HostOnly,
                System::HostBypass,
                System::HostBypassPipeline,
                System::Insider,
                System::InsiderNoReduction,
            ] {
                tasks.push((app, s, lanes));
            }
        }
        tasks.push((app, System::Arm, 8));
    }
    let profiles: BTreeMap<&str, AppProfile> = APPS
        .iter()
        .map(|&a| {
            let app = nearflash_iscapps::app(a).map_err(|e| CliError::Workload(e.to_string()))?;
            let p = AppProfile::from_app(app.as_ref())
                .map_err(|e| CliError::Workload(e.to_string()))?;
            Ok((a, p))
        })
        .collect::<Result<_, CliError>>()?;
    let bar = crate::progress::Progress::new("reproduce", true);
    let results = parallel_map(
        tasks.len(),
        jobs,
        |i| {
            let (app, system, lanes) = tasks[i];
            let cfg = InsiderConfig {
                pcie_lanes: lanes,
                ..cfg.clone()
            };
            run_app(system, &profiles[app], &cfg, host, args.seed)
        },
        |done| bar.update(done as u64, tasks.len() as u64),
    );
    bar.finish();
    let mut runs = Vec::with_capacity(tasks.len());
    for ((app, system, lanes), r) in tasks.into_iter().zip(results) {
        runs.push(Measured {
            app: app.to_string(),
            system,
            lanes,
            result: r
                .map_err(|e| CliError::Workload(format!("{app} on {}: {e}", system.name())))?,
        });
    }
    let contenders = fairness_contenders()?;
    let fairness = run_fairness(cfg, host, &contenders, 80.0, 2.0, args.seed)
        .map_err(|e| CliError::Workload(format!("fairness: {e}")))?;
    let ev = Evaluation {
        runs,
        fairness,
        fairness_contenders: contenders,
        cfg: cfg.clone(),
    };
    let summary = Summary {
        paper: "insider".into(),
        fidelity: "timing".into(),
        seed: args.seed,
        claims: claims::claims(&ev),
        runs: ev.runs.iter().map(to_run).collect(),
        wall_s: wall.elapsed().as_secs_f64(),
    };
    let page = figures::page(&ev, &preset.name);
    write(out, &summary, &page)?;
    print_timing(&summary, &ev, out);
    Ok(true)
}

fn write(
    out: &Path,
    summary: &Summary,
    page: &nearflash_report::html::Page,
) -> Result<(), CliError> {
    nearflash_report::write_dir(out, summary, page).map_err(|e| CliError::Io {
        what: format!("writing the report to {}", out.display()),
        source: std::io::Error::other(e.to_string()),
    })
}

fn to_run(m: &Measured) -> Run {
    let r = &m.result;
    Run {
        system: m.label(),
        workload: m.app.clone(),
        throughput_mb_s: r.throughput_mb_s,
        latency_ms: None,
        energy_j: BTreeMap::new(),
        utilization: r.engine_utilization,
        sim_s: r.sim_ns as f64 / 1e9,
        extra: BTreeMap::from([
            ("input_bytes".to_string(), serde_json::json!(r.input_bytes)),
            ("pcie_lanes".to_string(), serde_json::json!(m.lanes)),
            (
                "pcie_d2h_utilization".to_string(),
                serde_json::json!(r.pcie_d2h_utilization),
            ),
            (
                "storage_read_bytes".to_string(),
                serde_json::json!(r.storage_read_bytes),
            ),
            (
                "storage_write_bytes".to_string(),
                serde_json::json!(r.storage_write_bytes),
            ),
            ("events".to_string(), serde_json::json!(r.events)),
            ("trace_hash".to_string(), serde_json::json!(r.trace_hash)),
        ]),
    }
}

fn print_timing(summary: &Summary, ev: &Evaluation, out: &Path) {
    let mut t = Table::new();
    t.load_preset(UTF8_BORDERS_ONLY);
    t.set_header(vec![
        "app",
        "host-only x8",
        "bypass x8",
        "bypass-pipe x8",
        "INSIDER x8",
        "bypass x16",
        "bypass-pipe x16",
        "INSIDER x16",
        "ARM x8",
    ]);
    for app in APPS {
        let cell = |s, l| {
            ev.get(app, s, l)
                .map_or("—".into(), |r| format!("{:.0}", r.throughput_mb_s))
        };
        t.add_row(vec![
            app.to_string(),
            cell(System::HostOnly, 8),
            cell(System::HostBypass, 8),
            cell(System::HostBypassPipeline, 8),
            cell(System::Insider, 8),
            cell(System::HostBypass, 16),
            cell(System::HostBypassPipeline, 16),
            cell(System::Insider, 16),
            cell(System::Arm, 8),
        ]);
    }
    println!("end-to-end rate, MB/s of input processed (paper sizes, preset insider)");
    println!("{t}");
    print_claims(summary);
    println!(
        "{} runs in {:.1} s wall; wrote {}/summary.json and {}/report.html",
        summary.runs.len(),
        summary.wall_s,
        out.display(),
        out.display()
    );
}

fn print_claims(summary: &Summary) {
    let mut c = Table::new();
    c.load_preset(UTF8_BORDERS_ONLY);
    c.set_header(vec!["claim", "paper", "ours", "unit"]);
    for cl in &summary.claims {
        c.add_row(vec![
            cl.id.clone(),
            format!("{:.2}", cl.paper),
            format!("{:.2}", cl.ours),
            cl.unit.clone(),
        ]);
    }
    println!("{c}");
}

/// Reduced input per application in functional fidelity.
const FUNCTIONAL_BYTES: u64 = 8 << 20;

fn functional(
    args: &ReproduceArgs,
    preset: &Preset,
    cfg: &InsiderConfig,
    host: &HostConfig,
    out: &Path,
) -> Result<bool, CliError> {
    let wall = Instant::now();
    let mut runs = Vec::new();
    let mut verified = 0u32;
    let apps = nearflash_iscapps::APPS;
    for &name in apps {
        let mut rt = Runtime::new(&MachineSpec {
            insider: cfg,
            host,
            flash: Some((&preset.flash, &preset.ftl)),
            functional: true,
            seed: args.seed,
        })
        .map_err(|e| CliError::Config {
            source_name: format!("preset {}", preset.name),
            reason: e.to_string(),
        })?;
        let setup = |rt: &mut Runtime| -> Result<(), nearflash_insider::InsiderError> {
            rt.add_user(1000, 100, "user")?;
            rt.mkdir(0, "/data", 0o777)
        };
        setup(&mut rt).map_err(|e| CliError::Workload(e.to_string()))?;
        let r =
            nearflash_insider::functional::run_verified(&mut rt, name, FUNCTIONAL_BYTES, args.seed)
                .map_err(|e| CliError::Verification(format!("{name}: {e}")))?;
        verified += 1;
        println!(
            "{name:<12} {:>9} input bytes -> {:?} output bytes: verified against the reference",
            r.input_bytes, r.output_bytes
        );
        runs.push(Run {
            system: "insider".into(),
            workload: name.into(),
            throughput_mb_s: r.input_bytes as f64 * 1e3 / r.sim_ns.max(1) as f64,
            latency_ms: None,
            energy_j: BTreeMap::new(),
            utilization: 0.0,
            sim_s: r.sim_ns as f64 / 1e9,
            extra: BTreeMap::from([
                ("input_bytes".to_string(), serde_json::json!(r.input_bytes)),
                (
                    "output_bytes".to_string(),
                    serde_json::json!(r.output_bytes),
                ),
                ("verified".to_string(), serde_json::json!(true)),
                ("trace_hash".to_string(), serde_json::json!(r.trace_hash)),
            ]),
        });
    }
    let summary = Summary {
        paper: "insider".into(),
        fidelity: "functional".into(),
        seed: args.seed,
        claims: vec![nearflash_report::Claim {
            reference: nearflash_report::Reference::OwnBound,
            id: "apps_verified".into(),
            description: "applications whose output through the runtime equals the reference"
                .into(),
            paper: apps.len() as f64,
            ours: f64::from(verified),
            unit: "apps".into(),
            note: format!(
                "reduced inputs of {} MiB each with the paper's record layouts, on the \
                 preset's {:?} backing",
                FUNCTIONAL_BYTES >> 20,
                cfg.backing
            ),
        }],
        runs,
        wall_s: wall.elapsed().as_secs_f64(),
    };
    let page = nearflash_report::html::Page {
        title: "INSIDER (ATC'19), functional fidelity".into(),
        intro: vec![
            "Every application runs on real bytes through the virtual-file runtime; \
                     its result is checked against an independent reference."
                .into(),
        ],
        sections: Vec::new(),
    };
    write(out, &summary, &page)?;
    print_claims(&summary);
    Ok(true)
}
