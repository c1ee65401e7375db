//! The FlashAbacus reproduction (`nearflash reproduce flashabacus`): seed 000's evaluation (§5) — homogeneous workloads
//! (6 instances of each Table 2 kernel), heterogeneous mixes MX1–MX14 (24 instances) and the
//! §5.6 graph/big-data workloads, each under SIMD, InterSt, InterDy, IntraIo and IntraO3 —
//! then the paper's headline claims beside ours (`claims`) and Figs. 10–16 (`figures`).

mod claims;
mod figures;
pub mod system;

use crate::{claims_table, Options, Paper, ReproduceError};
use comfy_table::{presets::UTF8_BORDERS_ONLY, Table};
use nearflash_accel::run::run_workload_functional;
use nearflash_accel::workload::MIXES;
use nearflash_accel::{AccelConfig, RunReport};
use nearflash_kernels::table2::PAPER;
use nearflash_kernels::Dataset;
use nearflash_preset::Preset;
use nearflash_report::html::Page;
use nearflash_report::{Claim, LatencyMs, Run, Summary};
use nearflash_sim::Fidelity;
use std::collections::BTreeMap;
use std::fmt::Write;
use system::{accel_spec, run_system};

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
    pub system: &'static str,
    pub workload: String,
    pub report: RunReport,
}

impl Measured {
    /// Mean utilization of the worker LWPs (§5.4: an LWP's execution time over the time to
    /// run the whole workload; LWP0/1 are Flashvisor and Storengine, not workers).
    pub fn worker_utilization(&self) -> f64 {
        let w = &self.report.lwp_utilization[2..];
        w.iter().sum::<f64>() / w.len().max(1) as f64
    }
}

/// Default memory bound of functional runs, MiB.
const MAX_FUNCTIONAL_MIB: u64 = 2048;

/// One run: a workload of a group on one system.
pub type Task = (Group, &'static str, String);

/// The FlashAbacus reproduction at a preset, dataset and fidelity.
pub struct FlashAbacus {
    preset: Preset,
    accel: AccelConfig,
    tasks: Vec<Task>,
    dataset: Dataset,
    fidelity: Fidelity,
    seed: u64,
    max_functional_bytes: u64,
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
        let mut tasks: Vec<Task> = all
            .into_iter()
            .filter(|(_, w)| opts.only.is_empty() || opts.only.contains(w))
            .flat_map(|(g, w)| SYSTEMS.iter().map(move |s| (g, *s, w.clone())))
            .collect();
        // The 24-instance mixes are the longest runs: start them first so the jobs finish
        // together (the summary's run order is this order, the same for every job count).
        tasks.sort_by_key(|(g, _, _)| *g != Group::Heterogeneous);
        let dataset: Dataset = match (&opts.dataset, opts.fidelity) {
            (Some(d), _) => d.parse()?,
            (None, Fidelity::Timing) => Dataset::Paper,
            (None, Fidelity::Functional) => Dataset::Mini,
        };
        Ok(FlashAbacus {
            accel: preset.require()?,
            preset,
            tasks,
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

    fn simulate(&self, (_, system, workload): &Task) -> Result<(RunReport, usize), ReproduceError> {
        run_one(
            &self.preset,
            &self.accel,
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
        for ((group, system, workload), (report, checks)) in runs.into_iter().zip(measured) {
            ev.verified += checks;
            ev.measured.push(Measured {
                group,
                system,
                workload,
                report,
            });
        }
        Ok(ev)
    }

    fn claims(&self, ev: &Evaluation) -> Result<Vec<Claim>, ReproduceError> {
        Ok(claims::claims(
            &ev.measured,
            self.preset.host.as_ref().map(|h| h.copies_per_direction),
        ))
    }

    fn summary_runs(&self, ev: &Evaluation) -> Vec<Run> {
        ev.measured.iter().map(to_run).collect()
    }

    fn figures(&self, ev: &Evaluation) -> Result<Page, ReproduceError> {
        Ok(figures::page(&ev.measured, &self.preset.name, self.dataset))
    }

    fn text(&self, ev: &Evaluation, summary: &Summary) -> String {
        let mut out = text(summary, &ev.measured, self.dataset);
        if self.fidelity == Fidelity::Functional {
            writeln!(
                out,
                "functional fidelity: {} kernel instances computed real data through the \
                 simulated flash and matched their references (SIMD runs in timing fidelity: \
                 its data path is not modelled functionally)",
                ev.verified
            )
            .expect("writing to a String");
        }
        out
    }
}

/// One run; in functional fidelity the FlashAbacus systems compute real data and every
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
    if fidelity == Fidelity::Timing || system == "simd" {
        return Ok((
            run_system(preset, accel, system, workload, dataset, seed)?,
            0,
        ));
    }
    let spec = accel_spec(preset, accel, system, dataset, seed)?;
    let run = run_workload_functional(&spec, workload, max_functional_bytes)?;
    let n = run.checks.len();
    Ok((run.report, n))
}

fn to_run(m: &Measured) -> Run {
    let r = &m.report;
    let e = &r.energy_j;
    Run {
        system: m.system.to_string(),
        workload: m.workload.clone(),
        throughput_mb_s: r.throughput_mb_s,
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
        utilization: m.worker_utilization(),
        sim_s: r.sim_time_ns as f64 / 1e9,
        extra: BTreeMap::from([
            (
                "group".to_string(),
                serde_json::json!(format!("{:?}", m.group).to_lowercase()),
            ),
            ("trace_hash".to_string(), serde_json::json!(r.trace_hash)),
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
        ]),
    }
}

fn text(summary: &Summary, measured: &[Measured], dataset: Dataset) -> String {
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
    format!(
        "throughput, MB/s of input processed (dataset {}, {} fidelity)\n{t}\n{}\n",
        dataset.name(),
        summary.fidelity,
        claims_table(&summary.claims, 1)
    )
}
