//! `report.html` for INSIDER: Figs. 9–13 of seed 001 redrawn from our runs.

use super::claims::{arm_speedups, breakdown};
use super::{Evaluation, APPS};
use nearflash_insider::experiment::System;
use nearflash_report::html::{Page, Section};
use nearflash_report::svg::{BarChart, LineChart, Series};

fn cats() -> Vec<String> {
    APPS.iter().map(|a| a.to_string()).collect()
}

fn rates(ev: &Evaluation, s: System, lanes: u32) -> Vec<f64> {
    APPS.iter()
        .map(|a| ev.get(a, s, lanes).map_or(0.0, |r| r.throughput_mb_s / 1e3))
        .collect()
}

pub fn page(ev: &Evaluation, preset: &str) -> Page {
    let mut sections: Vec<Section> = [8, 16].map(|lanes| fig9_section(ev, preset, lanes)).into();
    sections.extend([8, 16].map(|lanes| fig10_section(ev, lanes)));
    sections.push(fig11_section(ev));
    sections.push(fig12_13_section(ev));
    Page {
        title: "INSIDER (ATC'19): in-storage computing behind virtual files".into(),
        intro: vec![
            "Timing fidelity at the paper's sizes: every request of C bytes occupies the \
             emulated storage's chips, credits gate the ISC unit, slots are FIFO servers, the \
             PCIe link is the shared link model (TLP headers, a FIFO each way), and the \
             host's stack, copies and compute take their modelled time."
                .into(),
        ],
        sections,
    }
}

/// Fig. 9: the end-to-end rate of every app on the four systems at one link width.
fn fig9_section(ev: &Evaluation, preset: &str, lanes: u32) -> Section {
    let groups = [
        System::HostOnly,
        System::HostBypass,
        System::HostBypassPipeline,
        System::Insider,
    ]
    .iter()
    .map(|&s| (s.name().to_string(), rates(ev, s, lanes)))
    .collect();
    Section {
        heading: format!("Fig. 9: end-to-end rate, PCIe Gen3 x{lanes}"),
        paragraphs: vec![format!(
            "GB/s of input processed at the paper's sizes (preset {preset}, DRAM-emulated \
             16 GB/s drive as in §4.1)."
        )],
        figures: vec![BarChart {
            title: format!("Fig. 9 (x{lanes})"),
            y_label: "GB/s".into(),
            categories: cats(),
            groups,
            stacked: false,
        }
        .to_svg()],
    }
}

/// Fig. 10: the speedup's three factors for every app at one link width.
fn fig10_section(ev: &Evaluation, lanes: u32) -> Section {
    let b = breakdown(ev, lanes);
    let groups = vec![
        (
            "I/O-stack bypass".to_string(),
            b.iter().map(|x| x.0).collect(),
        ),
        (
            "offload + pipelining".to_string(),
            b.iter().map(|x| x.1).collect(),
        ),
        (
            "data reduction".to_string(),
            b.iter().map(|x| x.2).collect(),
        ),
    ];
    Section {
        heading: format!("Fig. 10: speedup breakdown, x{lanes}"),
        paragraphs: vec![
            "Factors whose product is host-only ÷ INSIDER: host-only ÷ host-bypass; \
             host-bypass ÷ INSIDER-without-reduction (the bus carries the program's input \
             volume); INSIDER-without-reduction ÷ INSIDER."
                .into(),
        ],
        figures: vec![BarChart {
            title: format!("Fig. 10 (x{lanes})"),
            y_label: "speedup factor (x)".into(),
            categories: cats(),
            groups,
            stacked: false,
        }
        .to_svg()],
    }
}

/// Fig. 11: the rates of programs sharing the drive over time.
fn fig11_section(ev: &Evaluation) -> Section {
    let f = &ev.fairness;
    Section {
        heading: "Fig. 11: concurrent programs share the drive".into(),
        paragraphs: vec![format!(
            "Rates of input processed per {:.0} ms bin; demands {} GB/s on a {:.0} GB/s drive.",
            f.series
                .first()
                .and_then(|s| s.points.get(1).map(|p| p.0 - s.points[0].0))
                .unwrap_or(0.0),
            ev.fairness_contenders
                .iter()
                .map(|c| format!("{} {:.1}", c.name, c.demand_mb_s / 1e3))
                .collect::<Vec<_>>()
                .join(", "),
            f.drive_mb_s / 1e3
        )],
        figures: vec![LineChart {
            title: "Fig. 11".into(),
            x_label: "time (ms)".into(),
            y_label: "GB/s".into(),
            series: f
                .series
                .iter()
                .map(|s| Series {
                    name: s.name.clone(),
                    points: s.points.iter().map(|&(t, r)| (t, r / 1e3)).collect(),
                })
                .collect(),
            step: true,
        }
        .to_svg()],
    }
}

/// Figs. 12–13: INSIDER against the ARM-core drive, in rate and in rate per dollar.
fn fig12_13_section(ev: &Evaluation) -> Section {
    let arm = arm_speedups(ev);
    let price = ev.cfg.arm_price_usd / ev.cfg.fpga_price_usd;
    Section {
        heading: "Figs. 12–13: INSIDER vs an ARM-core drive".into(),
        paragraphs: vec![
            "Fig. 12: end-to-end rates (x8). Fig. 13: cost efficiency (rate per dollar) of \
             INSIDER over ARM."
                .into(),
        ],
        figures: vec![
            BarChart {
                title: "Fig. 12".into(),
                y_label: "GB/s".into(),
                categories: cats(),
                groups: vec![
                    ("ARM".into(), rates(ev, System::Arm, 8)),
                    ("INSIDER".into(), rates(ev, System::Insider, 8)),
                ],
                stacked: false,
            }
            .to_svg(),
            BarChart {
                title: "Fig. 13".into(),
                y_label: "cost efficiency over ARM (x)".into(),
                categories: cats(),
                groups: vec![(
                    "INSIDER / ARM".into(),
                    arm.iter().map(|s| s * price).collect(),
                )],
                stacked: false,
            }
            .to_svg(),
        ],
    }
}
