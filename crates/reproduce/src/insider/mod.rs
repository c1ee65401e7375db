//! The INSIDER reproduction (`nearflash reproduce insider`): seed 001's evaluation. Timing
//! fidelity (paper sizes, byte counts only): the seven applications of Fig. 9 under
//! host-only, host-bypass, host-bypass-pipeline and INSIDER at PCIe Gen3 x8 and x16, the
//! no-reduction counterfactual that splits the speedup (Fig. 10), the ARM-core drive
//! (Figs. 12–13) and the §5.3 fairness experiment (Fig. 11) — `Timing`. Functional fidelity: every application on real bytes
//! through the runtime at reduced sizes, verified against its reference — `Functional`.

mod claims;
mod figures;

use crate::{claims_table, Options, Paper, ReproduceError};
use comfy_table::{presets::UTF8_BORDERS_ONLY, Table};
use nearflash_host::HostConfig;
use nearflash_insider::app::AppProfile;
use nearflash_insider::experiment::{run_app, RunResult, System};
use nearflash_insider::fairness::{run_fairness, Contender, FairnessResult};
use nearflash_insider::functional::FunctionalResult;
use nearflash_insider::runtime::{MachineSpec, Runtime};
use nearflash_insider::{InsiderConfig, InsiderError};
use nearflash_preset::Preset;
use nearflash_report::html::Page;
use nearflash_report::{Claim, Reference, Run, Summary};
use nearflash_sim::Fidelity;
use std::collections::BTreeMap;
use std::fmt::Write;

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
    /// The host of the host-side systems.
    pub host: HostConfig,
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

/// What the host-only baseline needs of a preset.
const HOST_NEEDS: &str = "the host-only baseline (the host storage stack)";

/// The preset's INSIDER drive and host, after refusing `--only`.
fn load(opts: &Options) -> Result<(Preset, InsiderConfig, HostConfig), ReproduceError> {
    // Story: `reproduce insider --only grep` used to run all seven applications anyway.
    if !opts.only.is_empty() {
        return Err(ReproduceError::Invalid(
            "reproduce insider does not take --only: its claims compare the seven \
             applications of Fig. 9 with each other, so they always run together"
                .into(),
        ));
    }
    let preset = Preset::load(opts.preset.as_deref().unwrap_or("insider"), &opts.overrides)?;
    let cfg: InsiderConfig = preset.require()?;
    let host = preset.require_host(HOST_NEEDS)?.clone();
    Ok((preset, cfg, host))
}

/// Total simulated time of the §5.3 fairness experiment, ms.
const FAIRNESS_DURATION_MS: f64 = 80.0;
/// Its rate-measurement window, ms.
const FAIRNESS_WINDOW_MS: f64 = 2.0;

/// §5.3's programs: statistics, SQL and pass-through throttled to 12, 6.4 and 8 GB/s; they
/// join 20 ms apart so that the drive is first ample, then short.
pub fn fairness_contenders() -> Result<Vec<Contender>, ReproduceError> {
    [
        ("statistics", 12_000.0, 0.0),
        ("sql", 6_400.0, 20.0),
        ("passthrough", 8_000.0, 40.0),
    ]
    .iter()
    .map(|&(name, demand_mb_s, start_ms)| {
        let app = nearflash_iscapps::app(name)?;
        Ok(Contender {
            name: name.into(),
            cost: app.program(0)?.cost(),
            output_per_input: app.output_ratio(0)?.ratio,
            demand_mb_s,
            start_ms,
        })
    })
    .collect()
}

/// One simulation of the timing reproduction.
#[derive(Clone, Debug)]
pub enum Task {
    /// An application on a system at a link width.
    App {
        app: &'static str,
        system: System,
        lanes: u32,
    },
    /// The §5.3 fairness experiment.
    Fairness,
}

/// What one timing simulation measured.
pub enum Outcome {
    App(RunResult),
    Fairness(FairnessResult),
}

/// The timing reproduction: paper sizes, byte counts only.
pub struct Timing {
    preset: Preset,
    cfg: InsiderConfig,
    host: HostConfig,
    profiles: BTreeMap<&'static str, AppProfile>,
    contenders: Vec<Contender>,
    seed: u64,
}

impl Timing {
    pub fn new(opts: &Options) -> Result<Self, ReproduceError> {
        let (preset, cfg, host) = load(opts)?;
        let profiles = APPS
            .iter()
            .map(|&a| {
                let app = nearflash_iscapps::app(a)?;
                Ok((a, AppProfile::from_app(app.as_ref())?))
            })
            .collect::<Result<_, ReproduceError>>()?;
        Ok(Timing {
            preset,
            cfg,
            host,
            profiles,
            contenders: fairness_contenders()?,
            seed: opts.seed,
        })
    }
}

impl Paper for Timing {
    type Run = Task;
    type Measured = Outcome;
    type Evaluation = Evaluation;

    fn title(&self) -> &'static str {
        "insider"
    }

    fn fidelity(&self) -> Fidelity {
        Fidelity::Timing
    }

    fn seed(&self) -> u64 {
        self.seed
    }

    fn runs(&self) -> Vec<Task> {
        let mut tasks = Vec::new();
        for app in APPS {
            for lanes in [8, 16] {
                for system in [
                    System::HostOnly,
                    System::HostBypass,
                    System::HostBypassPipeline,
                    System::Insider,
                    System::InsiderNoReduction,
                ] {
                    tasks.push(Task::App { app, system, lanes });
                }
            }
            tasks.push(Task::App {
                app,
                system: System::Arm,
                lanes: 8,
            });
        }
        tasks.push(Task::Fairness);
        tasks
    }

    fn simulate(&self, task: &Task) -> Result<Outcome, ReproduceError> {
        match *task {
            Task::App { app, system, lanes } => {
                let cfg = InsiderConfig {
                    pcie_lanes: lanes,
                    ..self.cfg.clone()
                };
                run_app(system, &self.profiles[app], &cfg, &self.host, self.seed)
                    .map(Outcome::App)
                    .map_err(|source| ReproduceError::Insider {
                        what: format!("{app} on {}", system.name()),
                        source,
                    })
            }
            Task::Fairness => run_fairness(
                &self.cfg,
                &self.host,
                &self.contenders,
                FAIRNESS_DURATION_MS,
                FAIRNESS_WINDOW_MS,
                self.seed,
            )
            .map(Outcome::Fairness)
            .map_err(|source| ReproduceError::Insider {
                what: "fairness".into(),
                source,
            }),
        }
    }

    fn evaluate(
        &self,
        tasks: Vec<Task>,
        outcomes: Vec<Outcome>,
    ) -> Result<Evaluation, ReproduceError> {
        let mut runs = Vec::with_capacity(tasks.len());
        let mut fairness = None;
        for (task, outcome) in tasks.into_iter().zip(outcomes) {
            match (task, outcome) {
                (Task::App { app, system, lanes }, Outcome::App(result)) => runs.push(Measured {
                    app: app.to_string(),
                    system,
                    lanes,
                    result,
                }),
                (Task::Fairness, Outcome::Fairness(f)) => fairness = Some(f),
                _ => unreachable!("each task yields its own kind of outcome"),
            }
        }
        Ok(Evaluation {
            runs,
            fairness: fairness.expect("the fairness experiment is one of the runs"),
            fairness_contenders: self.contenders.clone(),
            cfg: self.cfg.clone(),
            host: self.host.clone(),
        })
    }

    fn claims(&self, ev: &Evaluation) -> Result<Vec<Claim>, ReproduceError> {
        Ok(claims::claims(ev))
    }

    fn summary_runs(&self, ev: &Evaluation) -> Vec<Run> {
        ev.runs.iter().map(to_run).collect()
    }

    fn figures(&self, ev: &Evaluation) -> Result<Page, ReproduceError> {
        Ok(figures::page(ev, &self.preset.name))
    }

    fn text(&self, ev: &Evaluation, summary: &Summary) -> String {
        text_timing(summary, ev, &self.preset.name)
    }
}

fn to_run(m: &Measured) -> Run {
    let r = &m.result;
    Run {
        system: m.label(),
        workload: m.app.clone(),
        throughput_mb_s: Some(r.throughput_mb_s),
        latency_ms: None,
        energy_j: BTreeMap::new(),
        // Host-only runs its programs on the host: no drive engine ran, so there is no
        // utilization to report (its runs printed "0.0%").
        utilization: (m.system != System::HostOnly).then_some(r.engine_utilization),
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

fn text_timing(summary: &Summary, ev: &Evaluation, preset: &str) -> String {
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
    format!(
        "end-to-end rate, MB/s of input processed (paper sizes, preset {preset})\n{t}\n{}\n",
        claims_table(&summary.claims, 2)
    )
}

/// Reduced input per application in functional fidelity.
const FUNCTIONAL_BYTES: u64 = 8 << 20;

/// The functional reproduction: every application on real bytes through the runtime.
pub struct Functional {
    preset: Preset,
    cfg: InsiderConfig,
    host: HostConfig,
    seed: u64,
}

impl Functional {
    pub fn new(opts: &Options) -> Result<Self, ReproduceError> {
        let (preset, cfg, host) = load(opts)?;
        Ok(Functional {
            preset,
            cfg,
            host,
            seed: opts.seed,
        })
    }

    /// One application through a fresh runtime on the preset's flash, verified.
    fn run_verified(&self, name: &'static str) -> Result<FunctionalResult, ReproduceError> {
        let mut rt = Runtime::new(&MachineSpec {
            insider: &self.cfg,
            host: &self.host,
            flash: Some((&self.preset.flash, &self.preset.ftl)),
            functional: true,
            seed: self.seed,
        })
        .map_err(|source| ReproduceError::Insider {
            what: format!("preset {}", self.preset.name),
            source,
        })?;
        let setup = |rt: &mut Runtime| -> Result<(), InsiderError> {
            rt.add_user(1000, 100, "user")?;
            rt.mkdir(0, "/data", 0o777)
        };
        setup(&mut rt).map_err(|source| ReproduceError::Insider {
            what: "runtime setup".into(),
            source,
        })?;
        nearflash_insider::functional::run_verified(&mut rt, name, FUNCTIONAL_BYTES, self.seed)
            .map_err(|source| ReproduceError::Verification {
                what: name.into(),
                source,
            })
    }
}

impl Paper for Functional {
    type Run = &'static str;
    type Measured = FunctionalResult;
    /// Each application with its verified result.
    type Evaluation = Vec<(&'static str, FunctionalResult)>;

    fn title(&self) -> &'static str {
        "insider"
    }

    fn fidelity(&self) -> Fidelity {
        Fidelity::Functional
    }

    fn seed(&self) -> u64 {
        self.seed
    }

    fn runs(&self) -> Vec<&'static str> {
        nearflash_iscapps::APPS.to_vec()
    }

    fn simulate(&self, name: &&'static str) -> Result<FunctionalResult, ReproduceError> {
        self.run_verified(name)
    }

    fn evaluate(
        &self,
        runs: Vec<&'static str>,
        measured: Vec<FunctionalResult>,
    ) -> Result<Self::Evaluation, ReproduceError> {
        Ok(runs.into_iter().zip(measured).collect())
    }

    fn claims(&self, ev: &Self::Evaluation) -> Result<Vec<Claim>, ReproduceError> {
        // Every run returned only once its output matched the reference.
        let verified = ev.len();
        Ok(vec![Claim {
            reference: Reference::OwnBound,
            id: "apps_verified".into(),
            description: "applications whose output through the runtime equals the reference"
                .into(),
            paper: nearflash_iscapps::APPS.len() as f64,
            ours: verified as f64,
            unit: "apps".into(),
            note: format!(
                "reduced inputs of {} MiB each with the paper's record layouts, on the \
                 preset's {:?} backing",
                FUNCTIONAL_BYTES >> 20,
                self.cfg.backing
            ),
            baseline: None,
        }])
    }

    fn summary_runs(&self, ev: &Self::Evaluation) -> Vec<Run> {
        ev.iter()
            .map(|(name, r)| Run {
                system: "insider".into(),
                workload: (*name).into(),
                throughput_mb_s: Some(r.input_bytes as f64 * 1e3 / r.sim_ns.max(1) as f64),
                latency_ms: None,
                energy_j: BTreeMap::new(),
                utilization: None,
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
            })
            .collect()
    }

    fn figures(&self, _: &Self::Evaluation) -> Result<Page, ReproduceError> {
        Ok(Page {
            title: "INSIDER (ATC'19), functional fidelity".into(),
            intro: vec![
                "Every application runs on real bytes through the virtual-file runtime; \
                 its result is checked against an independent reference."
                    .into(),
            ],
            sections: Vec::new(),
        })
    }

    fn text(&self, ev: &Self::Evaluation, summary: &Summary) -> String {
        let mut out = String::new();
        for (name, r) in ev {
            writeln!(
                out,
                "{name:<12} {:>9} input bytes -> {:?} output bytes: verified against the \
                 reference",
                r.input_bytes, r.output_bytes
            )
            .expect("writing to a String");
        }
        out + &claims_table(&summary.claims, 2) + "\n"
    }
}

#[cfg(test)]
mod run_row_tests {
    use super::*;

    /// Story: every host-only row of the INSIDER runs table printed utilization "0.0%" —
    /// the mean over no drive engines.
    #[test]
    fn a_host_only_run_has_no_engine_utilization_and_a_drive_run_has_its_own() {
        let row = |system: System, engine_utilization: f64| {
            to_run(&Measured {
                app: "grep".into(),
                system,
                lanes: 8,
                result: RunResult {
                    system,
                    app: "grep".into(),
                    pcie_lanes: 8,
                    input_bytes: 1 << 20,
                    sim_ns: 1_000_000,
                    throughput_mb_s: 1048.576,
                    engine_utilization,
                    pcie_d2h_utilization: 0.5,
                    storage_read_bytes: 1 << 20,
                    storage_write_bytes: 0,
                    events: 10,
                    trace_hash: "0".into(),
                },
            })
        };
        assert_eq!(row(System::HostOnly, 0.0).utilization, None);
        assert_eq!(row(System::Insider, 0.25).utilization, Some(0.25));
        assert_eq!(row(System::HostBypass, 0.03).utilization, Some(0.03));
    }
}
