//! What a reader sees: the run table's rows, the report's tables and the three figures.

use super::*;

pub(super) fn background_run(system: &str, p: &BackgroundPoint) -> Run {
    let mut extra = BTreeMap::new();
    for (k, v) in [
        ("foreground_mb_s", p.foreground_mb_s),
        ("fraction_compressed", p.fraction_compressed),
        ("energy_saving", p.energy_saving),
        ("model_fraction", p.model_fraction),
        ("model_energy_saving", p.model_energy_saving),
        ("controller_ftl_utilization", p.controller_ftl_utilization),
        (
            "controller_offload_utilization",
            p.controller_offload_utilization,
        ),
        ("compression_ratio", p.compression_ratio),
        ("latency_us_p99", p.latency_us_p99),
    ] {
        extra.insert(k.to_string(), serde_json::json!(v));
    }
    for (k, v) in [
        ("flash_page_reads", p.flash_page_reads),
        ("flash_page_programs", p.flash_page_programs),
        ("gc_pages_copied", p.gc_pages_copied),
    ] {
        extra.insert(k.to_string(), serde_json::json!(v));
    }
    extra.insert("trace_hash".into(), serde_json::json!(p.trace_hash));
    Run {
        system: system.into(),
        workload: format!("4k-rand-write-{}MBps", p.foreground_mb_s),
        throughput_mb_s: Some(p.achieved_mb_s),
        latency_ms: Some(LatencyMs {
            min: p.latency_us_min / 1e3,
            avg: p.latency_us_mean / 1e3,
            max: p.latency_us_max / 1e3,
        }),
        energy_j: BTreeMap::new(),
        utilization: Some(p.controller_ftl_utilization + p.controller_offload_utilization),
        sim_s: p.sim_s,
        extra,
    }
}

pub(super) fn split_run(p: &SplitPoint) -> Run {
    let mut extra = BTreeMap::new();
    for (k, v) in [
        ("controller_share", p.controller_share),
        ("model_speedup", p.model_speedup),
        ("model_energy", p.model_energy),
        ("compression_ratio", p.compression_ratio),
        ("host_busy_s", p.host_busy_s),
        ("controller_busy_s", p.controller_busy_s),
    ] {
        extra.insert(k.to_string(), serde_json::json!(v));
    }
    extra.insert("host_pages".into(), serde_json::json!(p.host_pages));
    extra.insert(
        "controller_pages".into(),
        serde_json::json!(p.controller_pages),
    );
    extra.insert("trace_hash".into(), serde_json::json!(p.trace_hash));
    let mut energy_j = BTreeMap::new();
    energy_j.insert("compression_delta".into(), p.energy_j);
    Run {
        system: "split".into(),
        workload: format!("controller-share-{}", p.controller_share),
        throughput_mb_s: Some(p.throughput_mb_s),
        latency_ms: None,
        energy_j,
        utilization: Some(p.controller_busy_s / p.makespan_s),
        sim_s: p.makespan_s,
        extra,
    }
}

/// The report's text tables: Fig. 2's and Fig. 3's points, then the claims.
pub(super) fn tables(m: &Measured, s: &Summary) -> String {
    let mut out = String::new();
    fig2_table(&mut out, m);
    writeln!(out).expect("writing to a String");
    fig3_table(&mut out, m);
    writeln!(out).expect("writing to a String");
    claims_table(&mut out, s);
    out
}

fn fig2_table(out: &mut String, m: &Measured) {
    writeln!(
        out,
        "Fig. 2 — background compression on the controller while the foreground writes"
    )
    .expect("writing to a String");
    writeln!(
        out,
        "{:>8} | {:>9} {:>9} | {:>9} {:>9} {:>9} | {:>9} {:>9} {:>10}",
        "fg MB/s",
        "io: frac",
        "io: save",
        "cpu: frac",
        "cpu: save",
        "model c",
        "ctl ftl",
        "ctl cmp",
        "fg lat us"
    )
    .expect("writing to a String");
    for (a, b) in m.io_only.iter().zip(&m.compute) {
        writeln!(
            out,
            "{:>8.1} | {:>9.3} {:>9.3} | {:>9.3} {:>9.3} {:>9.3} | {:>9.3} {:>9.3} {:>10.0}",
            a.foreground_mb_s,
            a.fraction_compressed,
            a.energy_saving,
            b.fraction_compressed,
            b.energy_saving,
            b.model_fraction,
            b.controller_ftl_utilization,
            b.controller_offload_utilization,
            b.latency_us_mean
        )
        .expect("writing to a String");
    }
}

fn fig3_table(out: &mut String, m: &Measured) {
    writeln!(
        out,
        "Fig. 3 — compression after the foreground, split host / controller"
    )
    .expect("writing to a String");
    writeln!(
        out,
        "{:>7} {:>10} {:>10} {:>10} {:>12} {:>12}",
        "share", "MB/s", "model ×", "energy J", "energy rel", "model rel"
    )
    .expect("writing to a String");
    for p in &m.split {
        writeln!(
            out,
            "{:>7.2} {:>10.1} {:>10.3} {:>10.1} {:>12.3} {:>12.3}",
            p.controller_share,
            p.throughput_mb_s,
            p.model_speedup,
            p.energy_j,
            p.energy_j / p.host_only_energy_j,
            p.model_energy
        )
        .expect("writing to a String");
    }
}

fn claims_table(out: &mut String, s: &Summary) {
    writeln!(
        out,
        "{:<42} {:>9} {:>9} {:<5} verdict",
        "claim", "paper", "ours", "unit"
    )
    .expect("writing to a String");
    for c in &s.claims {
        writeln!(
            out,
            "{:<42} {:>9.2} {:>9.2} {:<5} {}",
            c.id,
            c.paper,
            c.ours,
            c.unit,
            c.verdict().name()
        )
        .expect("writing to a String");
    }
}

/// Foreground rates up to which the comparison with c(x) is summed up.
const MODERATE_MB_S: f64 = 80.0;

/// How the simulated fractions compare with c(x), in numbers.
fn fig2_comparison(compute: &[BackgroundPoint], io_only: &[BackgroundPoint]) -> String {
    // Up to ~60% of the device's ceiling the foreground leaves the compression task its I/O.
    let moderate = |p: &&BackgroundPoint| p.foreground_mb_s <= MODERATE_MB_S;
    let gap = compute
        .iter()
        .filter(moderate)
        .map(|p| p.model_fraction - p.fraction_compressed)
        .fold(0.0_f64, f64::max);
    let busy = compute
        .iter()
        .filter(moderate)
        .filter(|p| p.model_fraction < 1.0)
        .map(|p| p.controller_offload_utilization)
        .fold(1.0_f64, f64::min);
    let above = io_only
        .iter()
        .filter(|p| p.fraction_compressed > p.model_fraction + 1e-9)
        .count();
    format!(
        "Against the model (x = foreground / host compression rate): with compute, the \
         simulated fraction stays within {:.1} points below c(x) up to {MODERATE_MB_S} MB/s — where \
         c(x) < 1 the controller is at least {:.0}% busy compressing, the rest going to the FTL \
         work of the foreground's and its own commands, which the model does not have; near the \
         device's ceiling the foreground's queue starves the compression task of I/O, which \
         the model ignores. I/O only, the fraction exceeds c(x) at {above} of {} rates: \
         without computation the controller is bounded by its I/O alone.",
        gap * 100.0,
        busy * 100.0,
        io_only.len()
    )
}

/// Fig. 1: energy saving and slowdown against host utilization, both in % of the baseline
/// (energy saved, and the hybrid's time), so they share one axis.
pub fn fig1(curve: &[ModelPoint]) -> LineChart {
    let series = |name: &str, f: fn(&ModelPoint) -> f64| Series {
        name: name.into(),
        points: curve
            .iter()
            .map(|p| (p.host_utilization, 100.0 * f(p)))
            .collect(),
    };
    LineChart {
        title: "Fig. 1 — analytic model: energy saving and slowdown".into(),
        x_label: "host CPU utilization in the baseline, x".into(),
        y_label: "% of the baseline".into(),
        series: vec![
            series("energy saved ΔE(x)", |p| p.energy_saving),
            series("time S(x) (slowdown × 100)", |p| p.slowdown),
        ],
        step: false,
    }
}

fn line(title: &str, x: &str, y: &str, series: Vec<(&str, Vec<(f64, f64)>)>) -> String {
    LineChart {
        title: title.into(),
        x_label: x.into(),
        y_label: y.into(),
        series: series
            .into_iter()
            .map(|(name, points)| Series {
                name: name.into(),
                points,
            })
            .collect(),
        step: false,
    }
    .to_svg()
}

/// The 4 KiB random-write throughput the paper reports for its simulated SSD without
/// compression (seed 004 §III).
const PAPER_WRITE_CEILING_MB_S: f64 = 123.0;

pub(super) fn page(m: &Measured, preset: &Preset) -> Result<Page, ReproduceError> {
    Ok(Page {
        title: "Active Flash (seed 004): reproduction".into(),
        intro: intro(m, preset),
        sections: vec![fig1_section(m), fig2_section(m), fig3_section(m)],
    })
}

/// The page's opening: the drive, the two processors and the model's s and p; what energy
/// counts; what was verified.
fn intro(m: &Measured, preset: &Preset) -> Vec<String> {
    let model = &m.model;
    let flash = &preset.flash;
    let geometry = Geometry::from_config(flash);
    let ratio = m.compute.first().map_or(0.0, |p| p.compression_ratio);
    vec![
        format!(
            "The {} GiB SSD of §III (the paper's 64 GB) on nearflash's FTL ({} bus(es) at {:.0} MT/s, {} \
             dies, {} KiB pages; 4 KiB random-write ceiling {:.0} MB/s from its bus and \
             die timing, against the {PAPER_WRITE_CEILING_MB_S:.0} MB/s the paper measured \
             on its simulator), a {:.0} MHz controller ({:.0} DMIPS) and a {:.0} MHz \
             host ({:.0} DMIPS): s = {:.3}, p = {:.5}. Compression is DEFLATE level {} \
             (miniz_oxide) on generated log records, ratio {ratio:.2}; its cost is {} host \
             cycles per byte (zlib -1 on Silesia), so the host compresses at {:.1} MB/s \
             and the controller at {:.1} MB/s.",
            geometry.capacity_bytes() >> 30,
            geometry.channels,
            flash.channel_rate_mb_s,
            geometry.die_count(),
            geometry.page_size_bytes / 1024,
            write_ceiling_mb_s(flash),
            m.cfg.controller_clock_mhz,
            m.cfg.controller_dmips,
            m.cfg.host_clock_mhz,
            m.cfg.host_dmips,
            model.s,
            model.p,
            m.cfg.compress_level,
            m.cfg.compress_host_cycles_per_byte,
            m.cfg
                .host()
                .rate_bytes_per_s(m.cfg.compress_instructions_per_byte())
                / 1e6,
            model_limit_mb_s(&m.cfg)
        ),
        "Energy is Δpower × busy time, as in the paper: flash and interface energy are \
         not counted."
            .into(),
        match m.fidelity {
            Fidelity::Timing => format!(
                "Functional check: a {} MiB foreground at {} MB/s with background \
                 compression, and a split job at {:.0}% on the controller, ran with real \
                 bytes on the simulated flash; all {} extents were read back through the \
                 FTL and decompressed, and all {} live pages (compressed or not) matched \
                 the bytes written.",
                CHECK_VOLUME_BYTES >> 20,
                CHECK_FOREGROUND_MB_S,
                CHECK_SPLIT * 100.0,
                m.verified.extents,
                m.verified.pages
            ),
            Fidelity::Functional => format!(
                "Functional fidelity: every run stored real bytes on the simulated flash; \
                 all {} extents were read back through the FTL and decompressed, and all \
                 {} live pages (compressed or not) matched the bytes written.",
                m.verified.extents, m.verified.pages
            ),
        },
    ]
}

fn fig1_section(m: &Measured) -> Section {
    let model = &m.model;
    Section {
        heading: "Fig. 1 — the analytic model".into(),
        paragraphs: vec![format!(
            "c(x) = 1 below x = 1/s = {:.3}, then 1/(s·x); ΔE(x) = (1 − s·p)·c(x); \
             S(x) = s·c(x).",
            1.0 / model.s
        )],
        figures: vec![fig1(&model.curve(40)).to_svg()],
    }
}

/// `f` of each background point against its foreground throughput.
fn by_foreground(pts: &[BackgroundPoint], f: fn(&BackgroundPoint) -> f64) -> Vec<(f64, f64)> {
    pts.iter().map(|p| (p.foreground_mb_s, f(p))).collect()
}

fn fig2_section(m: &Measured) -> Section {
    let bg = by_foreground;
    Section {
        heading: "Fig. 2 — compression in the background".into(),
        paragraphs: vec![
            "The foreground writes 4 KiB pages at random at a fixed rate; the \
             controller reads what it wrote, compresses it in the time its FTL work \
             leaves, appends it to a compressed log and trims the originals, one page \
             operation at a time, through the same dies and bus. 'I/O only' is the \
             paper's assumption (compression costs no controller time); 'with compute' \
             charges DEFLATE's cycles."
                .into(),
            fig2_comparison(&m.compute, &m.io_only),
        ],
        figures: vec![
            line(
                "Fig. 2 — fraction of the foreground compressed",
                "foreground throughput (MB/s)",
                "fraction compressed",
                vec![
                    (
                        "I/O only (paper)",
                        bg(&m.io_only, |p| p.fraction_compressed),
                    ),
                    ("with compute", bg(&m.compute, |p| p.fraction_compressed)),
                    ("model c(x)", bg(&m.compute, |p| p.model_fraction)),
                ],
            ),
            line(
                "Fig. 2 — energy saved",
                "foreground throughput (MB/s)",
                "energy saving (fraction)",
                vec![
                    ("I/O only (paper)", bg(&m.io_only, |p| p.energy_saving)),
                    ("with compute", bg(&m.compute, |p| p.energy_saving)),
                    ("model ΔE(x)", bg(&m.compute, |p| p.model_energy_saving)),
                ],
            ),
        ],
    }
}

fn fig3_section(m: &Measured) -> Section {
    let model = &m.model;
    let sp = |f: fn(&SplitPoint) -> f64| {
        m.split
            .iter()
            .map(|p| (p.controller_share, f(p)))
            .collect::<Vec<_>>()
    };
    let host_alone = host_rate_mb_s(&m.cfg);
    let model_thr: Vec<(f64, f64)> = m
        .split
        .iter()
        .map(|p| (p.controller_share, p.model_speedup * host_alone))
        .collect();
    let energy_rel: Vec<(f64, f64)> = m
        .split
        .iter()
        .map(|p| (p.controller_share, p.energy_j / p.host_only_energy_j))
        .collect();
    Section {
        heading: "Fig. 3 — split between host and controller".into(),
        paragraphs: vec![format!(
            "After the foreground, a share of the pages is compressed by the \
             controller and the rest by the host, which re-reads them (queue depth \
             {}). The model (computation only) peaks at 1/(1+s) = {:.1}%.",
            m.cfg.host_io_depth,
            model.balanced_split() * 100.0
        )],
        figures: vec![
            line(
                "Fig. 3 — throughput",
                "controller share",
                "throughput (MB/s)",
                vec![
                    ("simulated", sp(|p| p.throughput_mb_s)),
                    ("model (computation only)", model_thr),
                ],
            ),
            line(
                "Fig. 3 — energy relative to the host alone",
                "controller share",
                "energy (relative)",
                vec![("simulated", energy_rel), ("model", sp(|p| p.model_energy))],
            ),
        ],
    }
}
