//! `report.html` for Hayagui: each experiment's direct and redirected figures as bars, and
//! the genome runs' phase times per data set.

use super::spread::{db_spread, fileops_spread, genome_total, ycsb_spread, Spread};
use super::{paper_phase_s, Measured, GENOME_DATASETS};
use crate::prose::count_word;
use nearflash_hayagui::Access;
use nearflash_report::html::{Page, Section};
use nearflash_report::svg::BarChart;

/// Bars of the direct and the redirected figure of every row of `s`.
fn bars(title: &str, y: &str, s: &Spread) -> String {
    BarChart {
        title: title.into(),
        y_label: y.into(),
        categories: s.rows.iter().map(|r| r.0.clone()).collect(),
        groups: vec![
            ("direct".into(), s.rows.iter().map(|r| r.1).collect()),
            ("redirected".into(), s.rows.iter().map(|r| r.2).collect()),
        ],
        stacked: false,
    }
    .to_svg()
}

/// The page: the access paths described, then a section per experiment.
pub(super) fn page(m: &Measured) -> Page {
    let fo_us = fileops_spread(m);
    let genome_sections = genome_charts(m);
    Page {
        title: "Hayagui (seed 003): reproduction".into(),
        intro: vec![intro(m)],
        sections: vec![
            Section {
                heading: "File operations".into(),
                paragraphs: vec![],
                figures: vec![bars("Mean latency per call", "µs", &fo_us)],
            },
            Section {
                heading: "LevelDB db_bench".into(),
                paragraphs: vec![],
                figures: vec![bars("db_bench", "µs/op", &db_spread(m))],
            },
            Section {
                heading: "YCSB".into(),
                paragraphs: vec![],
                figures: vec![bars("YCSB run phase", "ops/s", &ycsb_spread(m))],
            },
            Section {
                heading: "Genome sequence matching".into(),
                paragraphs: vec![],
                figures: genome_sections,
            },
        ],
    }
}

/// The page's opening paragraph: how many simulations, and the two access paths.
fn intro(m: &Measured) -> String {
    let n_runs = m.fileops.len() + m.db.len() + m.ycsb.len() + m.genome.len();
    format!(
        "{} simulations, each workload on both access paths: the direct path (AccelFS with {} KiB chunks and \
         {}-chunk per-file caches over an in-accelerator NVMe engine, one queue of {} \
         entries, polled, DMA into the VE's HBM) and the redirected path ({:.1} µs per call, \
         VEOS copies, the host's file system and page cache with {} KiB read-ahead, the \
         kernel's NVMe driver), the same Samsung 970 EVO model under both{}.",
        count_word(n_runs),
        m.cfg.accelfs.chunk_bytes >> 10,
        m.cfg.accelfs.cache_chunks_per_file,
        m.cfg.accelfs.queue_entries,
        m.cfg.redirect.call_overhead_ns as f64 / 1e3,
        m.cfg.host_fs.read_ahead_bytes >> 10,
        if m.write_cache_bytes > 0 {
            format!(
                ", with its {} MiB DRAM write buffer (a volatile cache: syncs end in a FLUSH)",
                m.write_cache_bytes >> 20
            )
        } else {
            String::new()
        }
    )
}

/// One chart per genome data set run on both paths: each phase's time on each path.
fn genome_charts(m: &Measured) -> Vec<String> {
    let mut charts = Vec::new();
    for (ds, row) in GENOME_DATASETS {
        let paper_load = paper_phase_s(&row, nearflash_genome::Phase::LoadTarget);
        let paper_total: f64 = row.iter().sum();
        let (Some(d), Some(r)) = (
            genome_total(m, ds, Access::Direct),
            genome_total(m, ds, Access::Redirected),
        ) else {
            continue;
        };
        let cats: Vec<String> = d.phases.iter().map(|p| format!("{:?}", p.phase)).collect();
        charts.push(
            BarChart {
                title: format!(
                    "Genome {ds} (1/{}): phase times; the paper's baseline loads the target in \
                     {paper_load} of {paper_total:.3} s",
                    m.sizes.genome_scale
                ),
                y_label: "seconds".into(),
                categories: cats,
                groups: vec![
                    (
                        "direct".into(),
                        d.phases.iter().map(|p| p.ns as f64 / 1e9).collect(),
                    ),
                    (
                        "redirected".into(),
                        r.phases.iter().map(|p| p.ns as f64 / 1e9).collect(),
                    ),
                ],
                stacked: false,
            }
            .to_svg(),
        );
    }
    charts
}
