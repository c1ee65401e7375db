//! `report.html` for FlashAbacus: Figs. 10–16 of seed 000 redrawn from our runs.

use super::{Group, Measured, SYSTEMS};
use nearflash_report::html::{Page, Section};
use nearflash_report::svg::{BarChart, LineChart, Series};

/// The paper's names for our systems.
fn label(system: &str) -> &'static str {
    match system {
        "simd" => "SIMD",
        "inter-st" => "InterSt",
        "inter-dy" => "InterDy",
        "intra-io" => "IntraIo",
        _ => "IntraO3",
    }
}

fn workloads_of(ms: &[Measured], g: Group) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for m in ms.iter().filter(|m| m.group == g) {
        if !v.contains(&m.workload) {
            v.push(m.workload.clone());
        }
    }
    v
}

fn get<'a>(ms: &'a [Measured], s: &str, w: &str) -> Option<&'a Measured> {
    ms.iter().find(|m| m.system == s && m.workload == w)
}

/// Grouped bars of `f` per workload of `g`, one bar per system, optionally relative to SIMD.
fn per_system_bars(
    ms: &[Measured],
    g: Group,
    title: &str,
    y_label: &str,
    f: impl Fn(&Measured) -> f64,
    relative_to_simd: bool,
) -> String {
    let wl = workloads_of(ms, g);
    let groups = SYSTEMS
        .iter()
        .map(|s| {
            let vals = wl
                .iter()
                .map(|w| {
                    let v = get(ms, s, w).map_or(0.0, &f);
                    if relative_to_simd {
                        get(ms, "simd", w).map_or(0.0, |b| v / f(b))
                    } else {
                        v
                    }
                })
                .collect();
            (label(s).to_string(), vals)
        })
        .collect();
    BarChart {
        title: title.into(),
        y_label: y_label.into(),
        categories: wl.iter().map(|w| w.to_uppercase()).collect(),
        groups,
        stacked: false,
    }
    .to_svg()
}

/// A number read off a run.
type Metric<'a> = &'a dyn Fn(&Measured) -> f64;

/// Energy by Fig. 13 category, summed over the workloads of `g`, one stacked bar per system.
fn energy_stack(ms: &[Measured], g: Group, title: &str) -> String {
    let wl = workloads_of(ms, g);
    let sum = |s: &str, f: Metric| -> f64 {
        wl.iter().filter_map(|w| get(ms, s, w)).map(f).sum::<f64>() / 1e3
    };
    let cats: [(&str, Metric); 3] = [
        ("data movement", &|m| m.report.energy_j.data_movement),
        ("computation", &|m| m.report.energy_j.computation),
        ("storage access", &|m| m.report.energy_j.storage_access),
    ];
    BarChart {
        title: title.into(),
        y_label: "energy, kJ (sum over workloads)".into(),
        categories: SYSTEMS.iter().map(|s| label(s).to_string()).collect(),
        groups: cats
            .iter()
            .map(|(n, f)| (n.to_string(), SYSTEMS.iter().map(|s| sum(s, *f)).collect()))
            .collect(),
        stacked: true,
    }
    .to_svg()
}

/// Fig. 12: fraction of a workload's kernels completed over time, per system.
fn cdf(ms: &[Measured], workload: &str, title: &str) -> String {
    let series = SYSTEMS
        .iter()
        .filter_map(|s| get(ms, s, workload))
        .map(|m| {
            let mut lat: Vec<f64> = m
                .report
                .instances
                .iter()
                .map(|i| i.latency_ns as f64 / 1e6)
                .collect();
            lat.sort_by(f64::total_cmp);
            let n = lat.len() as f64;
            let mut points = vec![(0.0, 0.0)];
            points.extend(
                lat.iter()
                    .enumerate()
                    .map(|(k, &t)| (t, (k + 1) as f64 / n)),
            );
            Series {
                name: label(m.system).into(),
                points,
            }
        })
        .collect();
    LineChart {
        title: title.into(),
        x_label: "time since offload, ms".into(),
        y_label: "fraction of kernels completed".into(),
        series,
        step: true,
    }
    .to_svg()
}

/// Fig. 15: worker utilization and power over time, IntraO3 against SIMD.
fn time_series(ms: &[Measured], workload: &str) -> [String; 2] {
    let pick = |f: fn(&nearflash_accel::series::SeriesPoint) -> f64| -> Vec<Series> {
        ["simd", "intra-o3"]
            .iter()
            .filter_map(|s| get(ms, s, workload))
            .map(|m| Series {
                name: label(m.system).into(),
                points: m.report.series.iter().map(|p| (p.t_ms, f(p))).collect(),
            })
            .collect()
    };
    [
        LineChart {
            title: format!(
                "Fig. 15a — worker utilization over time, {}",
                workload.to_uppercase()
            ),
            x_label: "time, ms".into(),
            y_label: "workers computing, fraction".into(),
            series: pick(|p| p.worker_utilization),
            step: true,
        }
        .to_svg(),
        LineChart {
            title: format!("Fig. 15b — power over time, {}", workload.to_uppercase()),
            x_label: "time, ms".into(),
            y_label: "power, W".into(),
            series: pick(|p| p.power_w),
            step: true,
        }
        .to_svg(),
    ]
}

fn section(heading: &str, paragraphs: &[&str], figures: Vec<String>) -> Section {
    Section {
        heading: heading.into(),
        paragraphs: paragraphs.iter().map(|p| p.to_string()).collect(),
        figures,
    }
}

/// The whole page.
pub fn page(ms: &[Measured], preset: &str, dataset: nearflash_kernels::Dataset) -> Page {
    let tput = |m: &Measured| m.report.throughput_mb_s;
    let avg_lat = |m: &Measured| m.report.latency_ms.avg;
    let util = |m: &Measured| m.worker_utilization() * 100.0;
    let energy = |m: &Measured| m.report.energy_j.total;
    Page {
        title: "FlashAbacus (EuroSys'18) reproduced by nearflash".into(),
        intro: vec![
            format!(
                "Every number below comes from simulated events on preset '{preset}' at dataset \
                 '{}' ('paper' is Table 2's input sizes; at other sizes the claims are not \
                 comparable with the paper's): flash operations occupying dies and channels \
                 through the FTL, LWPs computing for instructions × CPI ÷ clock, FIFO-served \
                 DDR3L, PCIe and host resources. Systems: SIMD (host + NVMe SSD + the same LWPs, \
                 OpenMP-style) and FlashAbacus under its four schedulers.",
                dataset.name()
            ),
            "Bars relative to SIMD are per-workload ratios; 1.0 means as fast as SIMD.".into(),
        ],
        sections: vec![
            section(
                "Fig. 10 — throughput",
                &["Throughput = input bytes of all instances over the makespan."],
                vec![
                    per_system_bars(ms, Group::Homogeneous, "Fig. 10a — homogeneous, throughput relative to SIMD", "× SIMD", tput, true),
                    per_system_bars(ms, Group::Heterogeneous, "Fig. 10b — heterogeneous, throughput relative to SIMD", "× SIMD", tput, true),
                ],
            ),
            section(
                "Fig. 11 — latency",
                &["Average per-instance latency (offload to completion) relative to SIMD; min/avg/max of every run are in summary.json."],
                vec![
                    per_system_bars(ms, Group::Homogeneous, "Fig. 11a — homogeneous, average latency relative to SIMD", "× SIMD", avg_lat, true),
                    per_system_bars(ms, Group::Heterogeneous, "Fig. 11b — heterogeneous, average latency relative to SIMD", "× SIMD", avg_lat, true),
                ],
            ),
            section(
                "Fig. 12 — completion CDF",
                &[],
                vec![
                    cdf(ms, "atax", "Fig. 12a — ATAX, kernels completed over time"),
                    cdf(ms, "mx1", "Fig. 12b — MX1, kernels completed over time"),
                ],
            ),
            section(
                "Fig. 13 — energy",
                &["Power × busy time plus idle power × the rest, per component; grouped into data movement (host CPU, host DRAM, PCIe), computation (LWP workers, DDR3L) and storage access (SSD or flash backbone, Flashvisor, Storengine)."],
                vec![
                    energy_stack(ms, Group::Homogeneous, "Fig. 13a — homogeneous, energy breakdown"),
                    energy_stack(ms, Group::Heterogeneous, "Fig. 13b — heterogeneous, energy breakdown"),
                    per_system_bars(ms, Group::Homogeneous, "Fig. 13a′ — homogeneous, energy relative to SIMD", "× SIMD", energy, true),
                    per_system_bars(ms, Group::Heterogeneous, "Fig. 13b′ — heterogeneous, energy relative to SIMD", "× SIMD", energy, true),
                ],
            ),
            section(
                "Fig. 14 — worker utilization",
                &["A worker's compute time over the makespan, averaged over the six workers."],
                vec![
                    per_system_bars(ms, Group::Homogeneous, "Fig. 14a — homogeneous, worker utilization", "%", util, false),
                    per_system_bars(ms, Group::Heterogeneous, "Fig. 14b — heterogeneous, worker utilization", "%", util, false),
                ],
            ),
            section(
                "Fig. 15 — time series",
                &["Per-bin busy time of every component, recorded during the run (at most 256 bins). Power counts every powered component of the system, host included for SIMD."],
                time_series(ms, "atax").to_vec(),
            ),
            section(
                "Fig. 16 — graph and big-data workloads (§5.6)",
                &[],
                vec![
                    per_system_bars(ms, Group::Section56, "Fig. 16a — §5.6 throughput relative to SIMD", "× SIMD", tput, true),
                    energy_stack(ms, Group::Section56, "Fig. 16b — §5.6 energy breakdown"),
                ],
            ),
        ],
    }
}
