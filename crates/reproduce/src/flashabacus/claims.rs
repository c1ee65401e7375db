//! The paper's headline claims (seed 000 abstract, §5.2–§5.6) computed from our runs.
//!
//! Every "X outperforms Y by p%" of the paper is read as the mean over the named workloads
//! of the per-workload ratio minus one (the paper averages per-workload bars); energy
//! savings likewise as the mean of per-workload (1 − E_X / E_Y). The workload sets follow
//! the text: "data-intensive" are the Table 2 kernels whose bytes per kilo-instruction is
//! above 10 (ATAX, BICG, 2DCONV, MVT, ADI, FDTD-2D, GESUMMV — the paper splits Fig. 10a by
//! B/KI); "all workloads" are the homogeneous and heterogeneous sets of Figs. 10 and 13.

use super::{Group, Measured};
use crate::prose::count_word;
use nearflash_kernels::table2::PAPER;
use nearflash_report::{Claim, Reference, NO_CHANGE_PCT, TIE_RATIO};

/// B/KI above which Table 2 calls a kernel data-intensive.
const DATA_INTENSIVE_BYTES_PER_KI: f64 = 10.0;

fn data_intensive() -> Vec<&'static str> {
    PAPER
        .iter()
        .filter(|r| r.bytes_per_ki > DATA_INTENSIVE_BYTES_PER_KI)
        .map(|r| r.kernel)
        .collect()
}

fn find<'a>(ms: &[&'a Measured], system: &str, workload: &str) -> Option<&'a Measured> {
    ms.iter()
        .find(|m| m.system == system && m.workload == workload)
        .copied()
}

fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// Mean over `workloads` of f(x, y) for systems x, y (workloads missing either are skipped;
/// `None` when none has both — e.g. a run restricted with `--only`).
fn mean_pair(
    ms: &[&Measured],
    x: &str,
    y: &str,
    workloads: &[String],
    f: impl Fn(&Measured, &Measured) -> f64,
) -> Option<f64> {
    let v: Vec<f64> = workloads
        .iter()
        .filter_map(|w| Some(f(find(ms, x, w)?, find(ms, y, w)?)))
        .collect();
    mean(&v)
}

fn gain_pct(x: &Measured, y: &Measured) -> f64 {
    (x.report.throughput_mb_s / y.report.throughput_mb_s - 1.0) * 100.0
}

fn energy_change_pct(x: &Measured, y: &Measured) -> f64 {
    (x.report.energy_j.total / y.report.energy_j.total - 1.0) * 100.0
}

fn of_group(ms: &[&Measured], g: Group) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for m in ms.iter().filter(|m| m.group == g) {
        if !v.contains(&m.workload) {
            v.push(m.workload.clone());
        }
    }
    v
}

fn mean_of(
    ms: &[&Measured],
    system: &str,
    workloads: &[String],
    f: impl Fn(&Measured) -> f64,
) -> Option<f64> {
    let v: Vec<f64> = workloads
        .iter()
        .filter_map(|w| find(ms, system, w))
        .map(f)
        .collect();
    mean(&v)
}

/// §5.4's utilization (execution time over the workload's latency), %.
fn mean_util(ms: &[&Measured], system: &str, workloads: &[String]) -> Option<f64> {
    mean_of(ms, system, workloads, |m| m.worker_occupancy() * 100.0)
}

/// Computing time over the workload's latency, %.
fn mean_compute(ms: &[&Measured], system: &str, workloads: &[String]) -> Option<f64> {
    mean_of(ms, system, workloads, |m| m.worker_utilization() * 100.0)
}

fn dm_share_pct(ms: &[&Measured], system: &str, workloads: &[String]) -> Option<f64> {
    mean_of(ms, system, workloads, |m| {
        m.report.energy_j.data_movement / m.report.energy_j.total * 100.0
    })
}

/// A claim, or `None` when the runs it rests on were not made; `baseline` as
/// `Claim::baseline` says.
fn claim(
    id: &str,
    description: &str,
    paper: f64,
    ours: Option<f64>,
    (unit, baseline): (&str, Option<f64>),
    note: &str,
) -> Option<Claim> {
    Some(Claim {
        id: id.into(),
        description: description.into(),
        paper,
        ours: ours?,
        unit: unit.into(),
        note: note.into(),
        reference: Reference::PaperFigure,
        baseline,
    })
}

/// A change of one system's figure against another's, or a saving, percent: judged against
/// no change.
const CHANGE_PCT: (&str, Option<f64>) = ("%", NO_CHANGE_PCT);
/// A share or a utilization, percent: a level, with no direction.
const LEVEL_PCT: (&str, Option<f64>) = ("%", None);
/// A throughput: a level.
const RATE_MB_S: (&str, Option<f64>) = ("MB/s", None);
/// One system's figure over another's: judged against a tie.
const RATIO: (&str, Option<f64>) = ("x", TIE_RATIO);

/// `f(x, y)` per workload of `workloads` that both systems ran, in order.
fn per_workload(
    ms: &[&Measured],
    x: &str,
    y: &str,
    workloads: &[String],
    f: impl Fn(&Measured, &Measured) -> f64,
) -> Vec<(String, f64)> {
    workloads
        .iter()
        .filter_map(|w| Some((w.clone(), f(find(ms, x, w)?, find(ms, y, w)?))))
        .collect()
}

fn signed_pct(x: f64) -> String {
    format!("{x:+.0}%")
}

/// "−2% to +44%" (or one value) over `v`, formatted by `f`; "none ran" when empty.
fn span(v: &[(String, f64)], f: impl Fn(f64) -> String) -> String {
    let lo = v.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
    let hi = v.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
    match v.len() {
        0 => "none ran".into(),
        _ if f(lo) == f(hi) => f(lo),
        _ => format!("{} to {}", f(lo), f(hi)),
    }
}

/// The `n` largest entries of `v`, "name value" joined.
fn top(v: &[(String, f64)], n: usize, f: impl Fn(f64) -> String) -> String {
    let mut v = v.to_vec();
    v.sort_by(|a, b| b.1.total_cmp(&a.1));
    v.iter()
        .take(n)
        .map(|(w, x)| format!("{w} {}", f(*x)))
        .collect::<Vec<_>>()
        .join(", ")
}

fn without(all: &[String], minus: &[String]) -> Vec<String> {
    all.iter().filter(|w| !minus.contains(w)).cloned().collect()
}

/// Workers' compute utilization (%) of `system` per workload.
fn utils(ms: &[&Measured], system: &str, workloads: &[String]) -> Vec<(String, f64)> {
    workloads
        .iter()
        .filter_map(|w| Some((w.clone(), 100.0 * find(ms, system, w)?.worker_utilization())))
        .collect()
}

fn pct(x: f64) -> String {
    format!("{x:.0}%")
}

fn opt_pct(x: Option<f64>) -> String {
    x.map_or_else(|| "—".into(), |x| format!("{x:.1}%"))
}

/// The largest instance input of the FlashAbacus runs of `workloads`, GB.
fn largest_instance_gb(ms: &[&Measured], workloads: &[String]) -> f64 {
    ms.iter()
        .filter(|m| m.system != "simd" && workloads.contains(&m.workload))
        .flat_map(|m| m.report.instances.iter().map(|i| i.input_bytes))
        .max()
        .unwrap_or(0) as f64
        / 1e9
}

/// How many instances of `workloads` had to reuse flash an earlier instance still held
/// (the device cannot hold them all at once at these sizes), how much flash each workload
/// would need for every instance to have its own, and how long the reusing instances waited
/// for their range locks under each of `systems`.
fn reuse_note(ms: &[&Measured], workloads: &[String], systems: &[&str]) -> String {
    let placed: Vec<&Measured> = workloads
        .iter()
        .filter_map(|w| find(ms, "intra-o3", w))
        .collect();
    let reused: Vec<(String, f64)> = placed
        .iter()
        .map(|m| (m.workload.clone(), m.report.reused_instances as f64))
        .collect();
    let with = reused.iter().filter(|(_, r)| *r > 0.0).count();
    if with == 0 {
        return "Every instance has flash of its own.".into();
    }
    let gb = |b: u64| b as f64 / 1e9;
    let needed: Vec<(String, f64)> = placed
        .iter()
        .map(|m| (m.workload.clone(), gb(m.report.flash_needed_bytes)))
        .collect();
    let capacity = placed
        .first()
        .map_or(0.0, |m| gb(m.report.flash_capacity_bytes));
    let waits: Vec<String> = systems
        .iter()
        .map(|s| {
            let runs: Vec<&Measured> = workloads.iter().filter_map(|w| find(ms, s, w)).collect();
            let waiting: usize = runs
                .iter()
                .map(|m| {
                    m.report
                        .instances
                        .iter()
                        .filter(|i| i.lock_wait_ns > 0)
                        .count()
                })
                .sum();
            let share: Vec<(String, f64)> = runs
                .iter()
                .map(|m| {
                    let mean_wait: f64 = m
                        .report
                        .instances
                        .iter()
                        .map(|i| i.lock_wait_ns as f64)
                        .sum::<f64>()
                        / m.report.instances.len().max(1) as f64;
                    (
                        m.workload.clone(),
                        100.0 * mean_wait / m.report.sim_time_ns.max(1) as f64,
                    )
                })
                .collect();
            let max_s = runs
                .iter()
                .flat_map(|m| m.report.instances.iter().map(|i| i.lock_wait_ns))
                .max()
                .unwrap_or(0) as f64
                / 1e9;
            format!(
                "{s} {waiting} waited, up to {max_s:.1} s, {} of the makespan",
                span(&share, |x| format!("{x:.0}%")),
            )
        })
        .collect();
    let over_paper = needed
        .iter()
        .filter(|(_, n)| *n > PAPER_BACKBONE_GB)
        .count();
    let paper = if over_paper == 0 {
        format!("all within the paper's {PAPER_BACKBONE_GB:.0} GB backbone")
    } else {
        format!("{over_paper} beyond the paper's {PAPER_BACKBONE_GB:.0} GB backbone too")
    };
    format!(
        "Flash reuse: {with} of {} workloads need {} GB for every instance's own flash against the device's {capacity:.1} GB ({paper}), so {} instances each reuse flash an earlier one holds and wait for its range locks: {}.",
        reused.len(),
        span(&needed, |x| format!("{x:.0}")),
        span(&reused, |x| format!("{x:.0}")),
        waits.join("; "),
    )
}

/// §4.3: "to cover 32GB flash backbone with 64KB page group ... it only requires 2MB".
const PAPER_BACKBONE_GB: f64 = 32.0;

/// Gains below this are "small" in the IntraO3-vs-IntraIo note, %.
const SMALL_GAIN_PCT: f64 = 5.0;

/// Kernel instances of the first run of group `g` (every workload of a group has as many).
fn instances(ms: &[&Measured], g: Group) -> usize {
    ms.iter()
        .find(|m| m.group == g)
        .map_or(0, |m| m.report.instances.len())
}

/// Worker LWPs (all but Flashvisor's and Storengine's), as the runs report them.
fn workers(ms: &[&Measured]) -> usize {
    ms.first()
        .map_or(0, |m| m.report.lwp_utilization.len().saturating_sub(2))
}

/// The workload sets the claims average over, and the words their notes share.
struct Sets {
    /// The homogeneous workloads (Table 2 kernels) that ran.
    homo: Vec<String>,
    /// The heterogeneous mixes that ran.
    hetero: Vec<String>,
    /// The §5.6 graph and big-data workloads that ran.
    s56: Vec<String>,
    /// The homogeneous and heterogeneous workloads: "all workloads" of Figs. 10 and 13.
    all: Vec<String>,
    /// Table 2's data-intensive kernels (B/KI above `DATA_INTENSIVE_BYTES_PER_KI`).
    di: Vec<String>,
    /// The data-intensive kernels that ran.
    di_homo: Vec<String>,
    /// The homogeneous workloads that are not data-intensive.
    compute_bound: Vec<String>,
    /// The worker count, in words ("six").
    six: String,
    /// The SIMD host's copies of every byte each way, in words ("the" when unknown).
    copies: String,
}

impl Sets {
    /// The sets of the workloads in `ms`; `host_copies` as `claims` takes it.
    fn of(ms: &[&Measured], host_copies: Option<u32>) -> Sets {
        let homo = of_group(ms, Group::Homogeneous);
        let hetero = of_group(ms, Group::Heterogeneous);
        let s56 = of_group(ms, Group::Section56);
        let all: Vec<String> = homo.iter().chain(&hetero).cloned().collect();
        let di: Vec<String> = data_intensive().into_iter().map(String::from).collect();
        let di_homo: Vec<String> = homo.iter().filter(|w| di.contains(w)).cloned().collect();
        let compute_bound = without(&homo, &di_homo);
        Sets {
            six: count_word(workers(ms)),
            copies: host_copies.map_or_else(|| "the".to_string(), |c| count_word(c as usize)),
            homo,
            hetero,
            s56,
            all,
            di,
            di_homo,
            compute_bound,
        }
    }
}

/// Every claim, paper value beside ours; `host_copies` is the SIMD host's copies of every
/// byte each way (`[host] copies_per_direction`).
pub fn claims(ms: &[&Measured], host_copies: Option<u32>) -> Vec<Claim> {
    let sets = Sets::of(ms, host_copies);
    let mut v = versus_simd(ms, &sets);
    v.extend(between_schedulers(ms, &sets));
    v.extend(levels(ms, &sets));
    v.extend(section_5_6(ms, &sets.s56));
    v.into_iter().flatten().collect()
}

/// FlashAbacus against the SIMD baseline: throughput and energy over all workloads, and
/// throughput on the data-intensive kernels (abstract, §5.2, §5.3).
fn versus_simd(ms: &[&Measured], s: &Sets) -> Vec<Option<Claim>> {
    let fa = ["inter-st", "inter-dy", "intra-io", "intra-o3"];
    let six = &s.six;
    let copies = &s.copies;
    vec![
        claim(
            "intra_o3_vs_simd_throughput",
            "IntraO3 vs SIMD, throughput, mean over all homogeneous and heterogeneous workloads (abstract, §5.2)",
            127.0,
            mean_pair(ms, "intra-o3", "simd", &s.all, gain_pct),
            CHANGE_PCT,
            &format!(
                "Per kind: data-intensive homogeneous kernels {} (no host stack, no PCIe copies, the flash read in parallel with compute of other screens); the {} compute-bound homogeneous kernels {} (SIMD also spreads each kernel over all {six} workers, OpenMP-style); mixes {}.{} The compute-bound kernels pull the mean below the paper's.",
                span(&per_workload(ms, "intra-o3", "simd", &s.di_homo, gain_pct), signed_pct),
                s.compute_bound.len(),
                span(&per_workload(ms, "intra-o3", "simd", &s.compute_bound, gain_pct), signed_pct),
                span(&per_workload(ms, "intra-o3", "simd", &s.hetero, gain_pct), signed_pct),
                per_workload(ms, "intra-o3", "simd", &s.di_homo, gain_pct)
                    .iter()
                    .filter(|(_, g)| *g < 0.0)
                    .map(|(w, g)| format!(" {w} loses ({}): its units exceed DDR3L, so each time step streams its arrays from flash again, while SIMD reads each chunk once.", signed_pct(*g)))
                    .collect::<String>(),
            ),
        ),
        claim(
            "intra_o3_vs_simd_energy",
            "IntraO3 vs SIMD, energy, mean over all homogeneous and heterogeneous workloads (abstract, §5.3)",
            -78.4,
            mean_pair(ms, "intra-o3", "simd", &s.all, energy_change_pct),
            CHANGE_PCT,
            "SIMD keeps a host CPU, DRAM and an NVMe SSD powered for the whole run (cited powers in [host]); FlashAbacus replaces them by the accelerator's LWPs and its flash backbone (powers in [accel]; idle powers are assumptions).",
        ),
        claim(
            "flashabacus_vs_simd_data_intensive",
            &format!("The four FlashAbacus schedulers vs SIMD on data-intensive homogeneous workloads (B/KI > {DATA_INTENSIVE_BYTES_PER_KI}), throughput (§5.2)"),
            144.0,
            mean(
                &fa.iter()
                    .filter_map(|sys| mean_pair(ms, sys, "simd", &s.di, gain_pct))
                    .collect::<Vec<_>>(),
            ),
            CHANGE_PCT,
            &format!(
                "Mean over InterSt, InterDy, IntraIo, IntraO3 and the {} kernels with B/KI > {DATA_INTENSIVE_BYTES_PER_KI} in Table 2. SIMD pays the host file system, {copies} user/kernel copies and PCIe for every byte (costs cited in [host]); ADI is the exception (see intra_o3_vs_simd_throughput).",
                count_word(s.di.len()),
            ),
        ),
    ]
}

/// The schedulers against each other on homogeneous workloads and heterogeneous mixes,
/// throughput (§5.2).
fn between_schedulers(ms: &[&Measured], s: &Sets) -> Vec<Option<Claim>> {
    let six = &s.six;
    vec![
        claim(
            "inter_st_vs_inter_dy_homogeneous",
            "InterSt vs InterDy on homogeneous workloads, throughput (§5.2: InterSt poorer by 53%)",
            -53.0,
            mean_pair(ms, "inter-st", "inter-dy", &s.homo, gain_pct),
            CHANGE_PCT,
            &format!(
                "Homogeneous instances are one application, so InterSt runs all {} on the worker its application number selects while InterDy spreads them over {six} workers: compute-bound kernels {}, data-intensive ones {}.",
                count_word(instances(ms, Group::Homogeneous)),
                span(&per_workload(ms, "inter-st", "inter-dy", &s.compute_bound, gain_pct), signed_pct),
                span(&per_workload(ms, "inter-st", "inter-dy", &s.di_homo, gain_pct), signed_pct),
            ),
        ),
        claim(
            "intra_o3_vs_intra_io_homogeneous",
            "IntraO3 vs IntraIo on homogeneous workloads, throughput (§5.2)",
            62.0,
            mean_pair(ms, "intra-o3", "intra-io", &s.homo, gain_pct),
            CHANGE_PCT,
            &format!(
                "IntraO3 gains where serial microblocks idle IntraIo's workers (largest: {}); {} of {} homogeneous kernels gain less than {SMALL_GAIN_PCT:.0}%. In our cost model most serial microblocks are short next to the screened ones (Table 2 kernels' serial parts are reductions over one vector), so IntraIo idles less than on the prototype. {}",
                top(&per_workload(ms, "intra-o3", "intra-io", &s.homo, gain_pct), 3, signed_pct),
                per_workload(ms, "intra-o3", "intra-io", &s.homo, gain_pct).iter().filter(|(_, g)| *g < SMALL_GAIN_PCT).count(),
                per_workload(ms, "intra-o3", "intra-io", &s.homo, gain_pct).len(),
                reuse_note(ms, &s.homo, &["intra-o3", "intra-io"]),
            ),
        ),
        claim(
            "inter_dy_vs_inter_st_heterogeneous",
            "InterDy vs InterSt on heterogeneous mixes, throughput (§5.2)",
            177.0,
            mean_pair(ms, "inter-dy", "inter-st", &s.hetero, gain_pct),
            CHANGE_PCT,
            &format!(
                "InterSt binds each of the {} instances to a worker by application number, so the worker holding the long kernels finishes last; InterDy hands each kernel to whichever worker is free (per mix {}). Mix membership is our reconstruction (crates/accel/src/workload.rs), which sets how unbalanced InterSt gets. {}",
                instances(ms, Group::Heterogeneous),
                span(&per_workload(ms, "inter-dy", "inter-st", &s.hetero, gain_pct), signed_pct),
                reuse_note(ms, &s.hetero, &["inter-dy", "inter-st"]),
            ),
        ),
        claim(
            "intra_o3_vs_inter_dy_heterogeneous",
            "IntraO3 vs InterDy on heterogeneous mixes, throughput (§5.2)",
            15.0,
            mean_pair(ms, "intra-o3", "inter-dy", &s.hetero, gain_pct),
            CHANGE_PCT,
            &format!(
                "Per mix {}. Our mixes end with a few large compute-bound kernels (the largest instance holds {:.1} GB) that InterDy runs on one worker each while the other workers idle; IntraO3 spreads their screens over all {six}. The paper's mixes (membership lost from the seed) evidently left InterDy less of a straggler tail. {}",
                span(&per_workload(ms, "intra-o3", "inter-dy", &s.hetero, gain_pct), signed_pct),
                largest_instance_gb(ms, &s.hetero),
                reuse_note(ms, &s.hetero, &["intra-o3", "inter-dy"]),
            ),
        ),
    ]
}

/// Levels rather than comparisons: SIMD's throughput on the mixes, worker utilization
/// (§5.4) and SIMD's data-movement share of energy (§5.3).
fn levels(ms: &[&Measured], s: &Sets) -> Vec<Option<Claim>> {
    let six = &s.six;
    vec![
        claim(
            "simd_heterogeneous_throughput",
            "SIMD throughput on heterogeneous mixes, mean (§5.2)",
            3.5,
            mean_of(ms, "simd", &s.hetero, |m| m.report.throughput_mb_s),
            RATE_MB_S,
            "Absolute throughput rests on our instruction counts (kernels crate cost model, derivations beside each kernel) and the preset's CPI (an assumption); doubling the CPI would halve it.",
        ),
        claim(
            "inter_dy_utilization_homogeneous",
            "InterDy worker utilization on homogeneous workloads (§5.4)",
            98.0,
            mean_util(ms, "inter-dy", &s.homo),
            LEVEL_PCT,
            &format!(
                "§5.4's definition: a worker's execution time (a kernel from its dispatch to Flashvisor's receipt of its end, waiting for flash included) over the latency of the whole workload, averaged over the {six} workers. Counting computing time only gives {} (compute-bound kernels {}; the {} data-intensive ones {}, their workers waiting for flash with no prefetch beyond the unit's own reads) — the figure this claim reported before. What stays below 100% under the paper's definition is the tail: the workers that finish first idle while the last kernel runs.",
                opt_pct(mean_compute(ms, "inter-dy", &s.homo)),
                span(&utils(ms, "inter-dy", &s.compute_bound), pct),
                s.di_homo.len(),
                span(&utils(ms, "inter-dy", &s.di_homo), pct),
            ),
        ),
        claim(
            "intra_o3_utilization_heterogeneous",
            "IntraO3 worker utilization on heterogeneous mixes (§5.4)",
            94.0,
            mean_util(ms, "intra-o3", &s.hetero),
            LEVEL_PCT,
            &format!(
                "As above (§5.4's definition; computing only: {}). Serial microblocks of the mixes keep workers idle only when no other instance has ready screens.",
                opt_pct(mean_compute(ms, "intra-o3", &s.hetero)),
            ),
        ),
        claim(
            "simd_data_movement_energy_share_data_intensive",
            "Share of SIMD's energy spent moving data, data-intensive homogeneous workloads (§5.3)",
            71.0,
            dm_share_pct(ms, "simd", &s.di),
            LEVEL_PCT,
            "Data movement = host CPU, host DRAM and PCIe (Fig. 13's grouping).",
        ),
    ]
}

/// FlashAbacus against SIMD on the §5.6 graph and big-data workloads (`s56`): throughput
/// ratios, energy savings and SIMD's data-movement share.
fn section_5_6(ms: &[&Measured], s56: &[String]) -> Vec<Option<Claim>> {
    let mut v = Vec::new();
    for (sys, paper) in [("intra-io", 2.1), ("inter-dy", 3.4), ("intra-o3", 3.4)] {
        v.push(claim(
            &format!("s56_{}_vs_simd_throughput", sys.replace('-', "_")),
            &format!("{sys} vs SIMD on the §5.6 graph/big-data workloads, throughput ratio"),
            paper,
            mean_pair(ms, sys, "simd", s56, |x, y| {
                x.report.throughput_mb_s / y.report.throughput_mb_s
            }),
            RATIO,
            "Mean over nn, bfs, nw, pathfinder, wordcount of the per-workload ratio. Our §5.6 inputs follow WORKLOADS.md; their serial microblocks (bfs levels, nw diagonals) are where the schedulers differ.",
        ));
    }
    for (sys, paper) in [
        ("inter-st", 74.0),
        ("intra-io", 83.0),
        ("inter-dy", 88.0),
        ("intra-o3", 88.0),
    ] {
        v.push(claim(
            &format!("s56_{}_energy_saving", sys.replace('-', "_")),
            &format!("{sys} energy saving vs SIMD on the §5.6 workloads"),
            paper,
            mean_pair(ms, sys, "simd", s56, energy_change_pct).map(|x| -x),
            CHANGE_PCT,
            &format!(
                "Mean over the {} workloads of 1 − E/E_SIMD.",
                count_word(s56.len())
            ),
        ));
    }
    v.push(claim(
        "s56_simd_data_movement_energy_share",
        "Share of SIMD's energy spent moving data on the §5.6 workloads (§5.6: 79%)",
        79.0,
        dm_share_pct(ms, "simd", s56),
        LEVEL_PCT,
        "Host CPU, DRAM and PCIe, as in Fig. 16b.",
    ));
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_intensive_set_is_the_seven_high_bki_kernels() {
        assert_eq!(
            data_intensive(),
            ["atax", "bicg", "2dconv", "mvt", "adi", "fdtd-2d", "gesummv"]
        );
    }
}
