//! The FlashAbacus reproduction (`nearflash reproduce flashabacus`): seed 000's evaluation (§5) — homogeneous workloads
//! (6 instances of each Table 2 kernel), heterogeneous mixes MX1–MX14 (24 instances) and the
//! §5.6 graph/big-data workloads, each under SIMD, InterSt, InterDy, IntraIo and IntraO3 —
//! then the paper's headline claims beside ours (`claims`) and Figs. 10–16 (`figures`).
//!
//! In timing fidelity every run is made under both instruction-cost models (`[accel]
//! cost_model`: `counted`, our implementation's count, and `table2`, the paper's measured
//! B/KI): the claims of the configured model come first under their own ids, the other
//! model's follow under `<id>.<model>`, and the terminal and `report.html` show them side by
//! side with the paper's value. Functional fidelity runs the configured model only (the cost
//! model changes when things happen, not what is computed).

mod claims;
mod figures;
mod shared;
pub mod system;

use crate::{claims_table, Options, Paper, ReproduceError};
use comfy_table::{presets::UTF8_BORDERS_ONLY, Table};
use nearflash_accel::workload::MIXES;
use nearflash_accel::{AccelConfig, CostModel, RunReport};
use nearflash_kernels::table2::PAPER;
use nearflash_kernels::Dataset;
use nearflash_preset::Preset;
use nearflash_report::html::Page;
use nearflash_report::{Claim, LatencyMs, Run, Summary};
use nearflash_sim::Fidelity;
use shared::SharedPreconditioning;
use std::collections::BTreeMap;
use std::fmt::Write;
use system::{precondition_accel, run_accel_from, run_system, run_system_functional};

/// The five systems of §5, in the paper's order.
pub const SYSTEMS: [&str; 5] = ["simd", "inter-st", "inter-dy", "intra-io", "intra-o3"];
/// §5.6 graph and big-data workloads.
pub const SECTION_5_6: [&str; 5] = ["nn", "bfs", "nw", "pathfinder", "wordcount"];

/// Which evaluation a workload belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Group {
    Homogeneous,
    Heterogeneous,
    Section56,
}

/// The workloads of each group, in figure order.
pub fn workloads() -> Vec<(Group, String)> {
    let mut v: Vec<(Group, String)> = PAPER
        .iter()
        .map(|r| (Group::Homogeneous, r.kernel.to_string()))
        .collect();
    v.extend(
        MIXES
            .iter()
            .map(|(m, _)| (Group::Heterogeneous, m.to_string())),
    );
    v.extend(
        SECTION_5_6
            .iter()
            .map(|w| (Group::Section56, w.to_string())),
    );
    v
}

/// One simulated run, keyed for the claims and figures.
pub struct Measured {
    pub group: Group,
    pub cost_model: CostModel,
    pub system: &'static str,
    pub workload: String,
    pub report: RunReport,
}

impl Measured {
    /// Mean compute utilization of the worker LWPs: a worker's computing time over the time
    /// to run the whole workload (LWP0/1 are Flashvisor and Storengine, not workers).
    pub fn worker_utilization(&self) -> f64 {
        let w = &self.report.lwp_utilization[2..];
        w.iter().sum::<f64>() / w.len().max(1) as f64
    }

    /// §5.4's LWP utilization: "the LWP's actual execution time (average)" over "the
    /// latency to execute entire application(s)" — a worker's time occupied by its units
    /// (waiting for their data included) over the makespan, averaged over the workers.
    pub fn worker_occupancy(&self) -> f64 {
        let w = &self.report.worker_occupied_ns;
        let makespan = self.report.sim_time_ns.max(1) as f64;
        w.iter().map(|&o| o as f64 / makespan).sum::<f64>() / w.len().max(1) as f64
    }
}

/// Default memory bound of functional runs, MiB.
const MAX_FUNCTIONAL_MIB: u64 = 2048;

/// One run: a workload of a group on one system under one cost model.
pub type Task = (Group, &'static str, String, CostModel);

/// The FlashAbacus reproduction at a preset, dataset and fidelity.
pub struct FlashAbacus {
    preset: Preset,
    accel: AccelConfig,
    tasks: Vec<Task>,
    /// The configured cost model first, then the other (timing fidelity only).
    models: Vec<CostModel>,
    dataset: Dataset,
    fidelity: Fidelity,
    seed: u64,
    max_functional_bytes: u64,
    /// Timing fidelity: each workload's accelerator device after preconditioning, made once
    /// for its runs under the four schedulers and both cost models.
    preconditioned: SharedPreconditioning,
}

/// Every run, and how many kernel instances were verified on real data.
pub struct Evaluation {
    pub measured: Vec<Measured>,
    pub verified: usize,
}

impl FlashAbacus {
    pub fn new(opts: &Options) -> Result<Self, ReproduceError> {
        let preset = Preset::load(
            opts.preset.as_deref().unwrap_or("flashabacus"),
            &opts.overrides,
        )?;
        let all = workloads();
        if let Some(bad) = opts
            .only
            .iter()
            .find(|w| !all.iter().any(|(_, known)| known == *w))
        {
            return Err(ReproduceError::Invalid(format!(
                "--only: '{bad}' is not a workload of this reproduction (known: {})",
                all.iter()
                    .map(|(_, w)| w.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        let accel: AccelConfig = preset.require()?;
        let models = match opts.fidelity {
            Fidelity::Timing => vec![accel.cost_model, accel.cost_model.other()],
            Fidelity::Functional => vec![accel.cost_model],
        };
        let mut tasks: Vec<Task> = models
            .iter()
            .flat_map(|&m| {
                all.iter()
                    .filter(|(_, w)| opts.only.is_empty() || opts.only.contains(w))
                    .flat_map(move |(g, w)| SYSTEMS.iter().map(move |s| (*g, *s, w.clone(), m)))
            })
            .collect();
        // The 24-instance mixes are the longest runs: start them first so the jobs finish
        // together. A workload's runs (both models) are next to each other, so its
        // preconditioned device is made and dropped while they run (the summary lists the
        // configured model's runs first, each model's in this order, the same for every job
        // count).
        let position = |w: &String| all.iter().position(|(_, known)| known == w);
        let model_position = |m: &CostModel| models.iter().position(|known| known == m);
        tasks.sort_by_key(|(g, system, w, m)| {
            (
                *g != Group::Heterogeneous,
                position(w),
                model_position(m),
                SYSTEMS.iter().position(|s| s == system),
            )
        });
        let dataset: Dataset = match (&opts.dataset, opts.fidelity) {
            (Some(d), _) => d.parse()?,
            (None, Fidelity::Timing) => Dataset::Paper,
            (None, Fidelity::Functional) => Dataset::Mini,
        };
        let preconditioned = SharedPreconditioning::new(
            tasks
                .iter()
                .filter(|(_, system, ..)| opts.fidelity == Fidelity::Timing && *system != "simd")
                .map(|(_, _, w, _)| w.as_str()),
        );
        Ok(FlashAbacus {
            accel,
            preset,
            preconditioned,
            tasks,
            models,
            dataset,
            fidelity: opts.fidelity,
            seed: opts.seed,
            max_functional_bytes: opts.max_functional_mib.unwrap_or(MAX_FUNCTIONAL_MIB) << 20,
        })
    }
}

impl Paper for FlashAbacus {
    type Run = Task;
    /// The report and the number of instances verified.
    type Measured = (RunReport, usize);
    type Evaluation = Evaluation;

    fn title(&self) -> &'static str {
        "flashabacus"
    }

    fn fidelity(&self) -> Fidelity {
        self.fidelity
    }

    fn seed(&self) -> u64 {
        self.seed
    }

    fn runs(&self) -> Vec<Task> {
        self.tasks.clone()
    }

    fn simulate(
        &self,
        (_, system, workload, model): &Task,
    ) -> Result<(RunReport, usize), ReproduceError> {
        let accel = AccelConfig {
            cost_model: *model,
            ..self.accel.clone()
        };
        let shared = (self.fidelity == Fidelity::Timing && *system != "simd")
            .then(|| {
                self.preconditioned.take(workload, || {
                    precondition_accel(&self.preset, &accel, workload, self.dataset, self.seed).ok()
                })
            })
            .flatten();
        if let Some(start) = shared {
            let data = (self.dataset, self.seed);
            let report = run_accel_from(&self.preset, &accel, system, workload, data, &start)?;
            return Ok((report, 0));
        }
        run_one(
            &self.preset,
            &accel,
            system,
            workload,
            (self.dataset, self.seed),
            self.fidelity,
            self.max_functional_bytes,
        )
    }

    fn evaluate(
        &self,
        runs: Vec<Task>,
        measured: Vec<(RunReport, usize)>,
    ) -> Result<Evaluation, ReproduceError> {
        let mut ev = Evaluation {
            measured: Vec::with_capacity(runs.len()),
            verified: 0,
        };
        for ((group, system, workload, cost_model), (report, checks)) in
            runs.into_iter().zip(measured)
        {
            ev.verified += checks;
            ev.measured.push(Measured {
                group,
                cost_model,
                system,
                workload,
                report,
            });
        }
        Ok(ev)
    }

    fn claims(&self, ev: &Evaluation) -> Result<Vec<Claim>, ReproduceError> {
        let copies = self.preset.host.as_ref().map(|h| h.copies_per_direction);
        let mut v = Vec::new();
        for (k, &model) in self.models.iter().enumerate() {
            let ms = self.of_model(ev, model);
            let mut c = claims::claims(&ms, copies);
            if k > 0 {
                // Another model's claims: the same claims under ids of their own.
                for cl in &mut c {
                    cl.id = format!("{}.{model}", cl.id);
                    cl.description = format!("{} [{model} cost model]", cl.description);
                }
            }
            v.extend(c);
        }
        Ok(v)
    }

    fn summary_runs(&self, ev: &Evaluation) -> Vec<Run> {
        self.models
            .iter()
            .flat_map(|&m| ev.measured.iter().filter(move |r| r.cost_model == m))
            .map(to_run)
            .collect()
    }

    fn figures(&self, ev: &Evaluation) -> Result<Page, ReproduceError> {
        let primary = self.of_model(ev, self.models[0]);
        let mut page = figures::page(&primary, &self.preset.name, self.dataset);
        page.sections
            .insert(0, figures::cost_models(&self.models, &self.claims(ev)?));
        Ok(page)
    }

    fn text(&self, ev: &Evaluation, summary: &Summary) -> String {
        let primary = self.of_model(ev, self.models[0]);
        let mut out = text(summary, &primary, self.dataset, &self.models);
        if self.fidelity == Fidelity::Functional {
            writeln!(
                out,
                "functional fidelity: {} kernel instances computed real data — through the \
                 accelerator's flash, or the host's SSD, PCIe and DDR3L for SIMD — and \
                 matched their references",
                ev.verified
            )
            .expect("writing to a String");
        }
        out
    }
}

impl FlashAbacus {
    /// The runs made under `model` (borrowed views, in run order).
    fn of_model<'a>(&self, ev: &'a Evaluation, model: CostModel) -> Vec<&'a Measured> {
        ev.measured
            .iter()
            .filter(|m| m.cost_model == model)
            .collect()
    }
}

/// One run; in functional fidelity every system (SIMD too) computes real data and every
/// instance is verified (a mismatch is an error naming kernel, array and index). Returns
/// the report and the number of instances verified.
fn run_one(
    preset: &Preset,
    accel: &AccelConfig,
    system: &str,
    workload: &str,
    (dataset, seed): (Dataset, u64),
    fidelity: Fidelity,
    max_functional_bytes: u64,
) -> Result<(RunReport, usize), ReproduceError> {
    if fidelity == Fidelity::Timing {
        return Ok((
            run_system(preset, accel, system, workload, dataset, seed)?,
            0,
        ));
    }
    let run = run_system_functional(
        preset,
        accel,
        system,
        workload,
        (dataset, seed),
        max_functional_bytes,
    )?;
    let n = run.checks.len();
    Ok((run.report, n))
}

fn to_run(m: &Measured) -> Run {
    let r = &m.report;
    let e = &r.energy_j;
    Run {
        system: m.system.to_string(),
        workload: m.workload.clone(),
        throughput_mb_s: Some(r.throughput_mb_s),
        latency_ms: Some(LatencyMs {
            min: r.latency_ms.min,
            avg: r.latency_ms.avg,
            max: r.latency_ms.max,
        }),
        energy_j: BTreeMap::from([
            ("total".to_string(), e.total),
            ("data_movement".to_string(), e.data_movement),
            ("computation".to_string(), e.computation),
            ("storage_access".to_string(), e.storage_access),
        ]),
        // §5.4's definition; the compute-only figure is in `extra`.
        utilization: Some(m.worker_occupancy()),
        sim_s: r.sim_time_ns as f64 / 1e9,
        extra: BTreeMap::from([
            (
                "group".to_string(),
                serde_json::json!(format!("{:?}", m.group).to_lowercase()),
            ),
            ("trace_hash".to_string(), serde_json::json!(r.trace_hash)),
            (
                "cost_model".to_string(),
                serde_json::json!(m.cost_model.name()),
            ),
            ("events".to_string(), serde_json::json!(r.events)),
            // Instances placed on flash an earlier instance still holds (their write locks
            // wait for it): the device cannot hold every instance at once.
            (
                "reused_instances".to_string(),
                serde_json::json!(r.reused_instances),
            ),
            (
                "lwp_utilization".to_string(),
                serde_json::json!(r.lwp_utilization),
            ),
            (
                "worker_compute_utilization".to_string(),
                serde_json::json!(m.worker_utilization()),
            ),
            (
                "worker_occupied_ns".to_string(),
                serde_json::json!(r.worker_occupied_ns),
            ),
            (
                "lock_wait".to_string(),
                serde_json::json!({
                    "instances_waiting": r.instances.iter().filter(|i| i.lock_wait_ns > 0).count(),
                    "total_ms": r.instances.iter().map(|i| i.lock_wait_ns).sum::<u64>() as f64 / 1e6,
                    "max_ms": r.instances.iter().map(|i| i.lock_wait_ns).max().unwrap_or(0) as f64 / 1e6,
                }),
            ),
        ]),
    }
}

fn text(
    summary: &Summary,
    measured: &[&Measured],
    dataset: Dataset,
    models: &[CostModel],
) -> String {
    let mut t = Table::new();
    t.load_preset(UTF8_BORDERS_ONLY);
    t.set_header(vec![
        "workload", "SIMD", "InterSt", "InterDy", "IntraIo", "IntraO3",
    ]);
    let mut rows: BTreeMap<(Group, usize), Vec<String>> = BTreeMap::new();
    let order: Vec<String> = workloads().into_iter().map(|(_, w)| w).collect();
    for m in measured {
        let k = order.iter().position(|w| *w == m.workload).unwrap_or(0);
        rows.entry((m.group, k))
            .or_insert_with(|| vec![m.workload.clone()])
            .push(format!("{:.2}", m.report.throughput_mb_s));
    }
    for r in rows.into_values() {
        t.add_row(r);
    }
    let claims = if models.len() > 1 {
        side_by_side(&summary.claims, models)
    } else {
        claims_table(&summary.claims, 1)
    };
    format!(
        "throughput, MB/s of input processed (dataset {}, {} fidelity, {} cost model)\n{t}\n{claims}\n",
        dataset.name(),
        summary.fidelity,
        models[0],
    )
}

/// The claims of every model in one table: paper, then ours under each model (the
/// configured one first, named in the header).
fn side_by_side(claims: &[Claim], models: &[CostModel]) -> String {
    let mut t = Table::new();
    t.load_preset(UTF8_BORDERS_ONLY);
    let mut header = vec!["claim".to_string(), "paper".to_string()];
    header.extend(models.iter().enumerate().map(|(k, m)| {
        if k == 0 {
            format!("ours, {m} (default)")
        } else {
            format!("ours, {m}")
        }
    }));
    header.push("unit".into());
    t.set_header(header);
    for row in figures::claims_by_model(claims, models) {
        let mut cells = vec![row.id.to_string(), format!("{:.1}", row.paper)];
        cells.extend(row.ours.iter().map(|o| {
            o.map_or_else(
                || "—".to_string(),
                |(x, v)| format!("{x:.1} ({})", v.name()),
            )
        }));
        cells.push(row.unit.to_string());
        t.add_row(cells);
    }
    t.to_string()
}
