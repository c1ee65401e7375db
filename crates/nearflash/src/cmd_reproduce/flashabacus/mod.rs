//! `nearflash reproduce flashabacus`: seed 000's evaluation (§5) — homogeneous workloads
//! (6 instances of each Table 2 kernel), heterogeneous mixes MX1–MX14 (24 instances) and the
//! §5.6 graph/big-data workloads, each under SIMD, InterSt, InterDy, IntraIo and IntraO3 —
//! then the paper's headline claims beside ours (`claims`) and Figs. 10–16 (`figures`).

mod claims;
mod figures;

use super::{parallel_map, Fidelity, ReproduceArgs};
use crate::cmd_run::{accel_spec, run_system};
use crate::error::CliError;
use crate::preset::Preset;
use comfy_table::{presets::UTF8_BORDERS_ONLY, Table};
use nearflash_accel::run::run_workload_functional;
use nearflash_accel::workload::MIXES;
use nearflash_accel::RunReport;
use nearflash_kernels::table2::PAPER;
use nearflash_kernels::Dataset;
use nearflash_report::{LatencyMs, Run, Summary};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

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

pub fn run(
    args: &ReproduceArgs,
    fidelity: Fidelity,
    jobs: usize,
    out: &Path,
) -> Result<bool, CliError> {
    let wall = Instant::now();
    let preset = Preset::load(
        args.preset.as_deref().unwrap_or("flashabacus"),
        &args.overrides,
    )?;
    let all = workloads();
    if let Some(bad) = args
        .only
        .iter()
        .find(|w| !all.iter().any(|(_, known)| known == *w))
    {
        return Err(CliError::Workload(format!(
            "--only: '{bad}' is not a workload of this reproduction (known: {})",
            all.iter()
                .map(|(_, w)| w.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    let mut tasks: Vec<(Group, &'static str, String)> = all
        .into_iter()
        .filter(|(_, w)| args.only.is_empty() || args.only.contains(w))
        .flat_map(|(g, w)| SYSTEMS.iter().map(move |s| (g, *s, w.clone())))
        .collect();
    // The 24-instance mixes are the longest runs: start them first so the jobs finish
    // together (the summary's run order is this order, the same for every job count).
    tasks.sort_by_key(|(g, _, _)| *g != Group::Heterogeneous);
    let dataset: Dataset = match (&args.dataset, fidelity) {
        (Some(d), _) => d
            .parse()
            .map_err(|e: nearflash_kernels::KernelError| CliError::Kernel(e.to_string()))?,
        (None, Fidelity::Timing) => Dataset::Paper,
        (None, Fidelity::Functional) => Dataset::Mini,
    };
    let bar = crate::progress::Progress::new("reproduce", true);
    let results = parallel_map(
        tasks.len(),
        jobs,
        |i| {
            let (_, system, workload) = &tasks[i];
            run_one(
                &preset,
                system,
                workload,
                (dataset, args.seed),
                fidelity,
                args.max_functional_mib.unwrap_or(2048) << 20,
            )
        },
        |done| bar.update(done as u64, tasks.len() as u64),
    );
    bar.finish();
    let mut measured = Vec::with_capacity(tasks.len());
    let mut verified = 0usize;
    for ((group, system, workload), r) in tasks.into_iter().zip(results) {
        let (report, checks) = r?;
        verified += checks;
        measured.push(Measured {
            group,
            system,
            workload,
            report,
        });
    }
    let claims = claims::claims(&measured);
    let summary = Summary {
        paper: "flashabacus".into(),
        fidelity: fidelity.name().into(),
        seed: args.seed,
        claims,
        runs: measured.iter().map(to_run).collect(),
        wall_s: wall.elapsed().as_secs_f64(),
    };
    let page = figures::page(&measured, &preset.name, dataset);
    nearflash_report::write_dir(out, &summary, &page).map_err(|e| CliError::Io {
        what: format!("writing the report to {}", out.display()),
        source: std::io::Error::other(e.to_string()),
    })?;
    print(&summary, &measured, out, dataset);
    if fidelity == Fidelity::Functional {
        println!(
            "functional fidelity: {verified} kernel instances computed real data through the \
             simulated flash and matched their references (SIMD runs in timing fidelity: its \
             data path is not modelled functionally)"
        );
    }
    Ok(true)
}

/// One run; in functional fidelity the FlashAbacus systems compute real data and every
/// instance is verified (a mismatch is an error naming kernel, array and index). Returns
/// the report and the number of instances verified.
fn run_one(
    preset: &Preset,
    system: &str,
    workload: &str,
    (dataset, seed): (Dataset, u64),
    fidelity: Fidelity,
    max_functional_bytes: u64,
) -> Result<(RunReport, usize), CliError> {
    if fidelity == Fidelity::Timing || system == "simd" {
        return Ok((run_system(preset, system, workload, dataset, seed)?, 0));
    }
    let spec = accel_spec(preset, system, dataset, seed)?;
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

fn print(summary: &Summary, measured: &[Measured], out: &Path, dataset: Dataset) {
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
    println!(
        "throughput, MB/s of input processed (dataset {}, {} fidelity)",
        dataset.name(),
        summary.fidelity
    );
    println!("{t}");
    let mut c = Table::new();
    c.load_preset(UTF8_BORDERS_ONLY);
    c.set_header(vec!["claim", "paper", "ours", "unit"]);
    for cl in &summary.claims {
        c.add_row(vec![
            cl.id.clone(),
            format!("{:.1}", cl.paper),
            format!("{:.1}", cl.ours),
            cl.unit.clone(),
        ]);
    }
    println!("{c}");
    println!(
        "{} runs in {:.1} s wall; wrote {}/summary.json and {}/report.html",
        summary.runs.len(),
        summary.wall_s,
        out.display(),
        out.display()
    );
}
