//! The paper's headline claims (§1, §5.2–§5.5) beside ours.

use super::{Evaluation, APPS};
use nearflash_insider::experiment::System;
use nearflash_report::{Claim, Reference};

fn claim(id: &str, description: &str, paper: f64, ours: f64, unit: &str, note: String) -> Claim {
    Claim {
        id: id.into(),
        description: description.into(),
        paper,
        ours,
        unit: unit.into(),
        note,
        reference: Reference::PaperFigure,
    }
}

fn geomean(v: &[f64]) -> f64 {
    (v.iter().map(|x| x.ln()).sum::<f64>() / v.len().max(1) as f64).exp()
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

fn min(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::INFINITY, f64::min)
}

fn max(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::NEG_INFINITY, f64::max)
}

/// `app=value` for every app, for notes.
fn listing(v: &[f64]) -> String {
    APPS.iter()
        .zip(v)
        .map(|(a, x)| format!("{a} {x:.1}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Fig. 10's three factors at `lanes` per app: (I/O stack bypass, offload + pipelining,
/// data reduction); their product is host-only ÷ INSIDER.
pub fn breakdown(ev: &Evaluation, lanes: u32) -> Vec<(f64, f64, f64)> {
    APPS.iter()
        .map(|a| {
            let t = |s| ev.secs(a, s, lanes);
            (
                t(System::HostOnly) / t(System::HostBypass),
                t(System::HostBypass) / t(System::InsiderNoReduction),
                t(System::InsiderNoReduction) / t(System::Insider),
            )
        })
        .collect()
}

/// INSIDER's speedup over the ARM-core drive per app (x8).
pub fn arm_speedups(ev: &Evaluation) -> Vec<f64> {
    APPS.iter()
        .map(|a| ev.secs(a, System::Arm, 8) / ev.secs(a, System::Insider, 8))
        .collect()
}

pub fn claims(ev: &Evaluation) -> Vec<Claim> {
    let mut out = Vec::new();
    for lanes in [8, 16] {
        let s: Vec<f64> = APPS
            .iter()
            .map(|a| ev.secs(a, System::HostOnly, lanes) / ev.secs(a, System::Insider, lanes))
            .collect();
        let note = format!(
            "per app: {}. INSIDER is bounded by the 16 GB/s drive except relief (its second \
             pass returns every byte, so PCIe bounds it) and rle (a virtual write: the drive \
             writes 7.25x the bytes it receives). Host-only reads through the host storage \
             stack ([host]: a system call per read, 8 us of CPU per 128 KiB request, one copy \
             at ~10 GB/s; assumptions, not fits) and computes on 32 cores without overlap, \
             reaching 3.2-4.1 GB/s on the read apps; for 7x-11x the paper's host-only must \
             have run near 1.5-2 GB/s. A per-page page-cache cost (insertion, LRU, \
             read-ahead), which we do not model, would account for the difference.",
            listing(&s)
        );
        out.push(claim(
            &format!("insider_vs_host_only_x{lanes}_min"),
            &format!("INSIDER over host-only, PCIe Gen3 x{lanes}: smallest speedup (§5.2.1)"),
            7.0,
            min(&s),
            "x",
            note.clone(),
        ));
        out.push(claim(
            &format!("insider_vs_host_only_x{lanes}_max"),
            &format!("INSIDER over host-only, PCIe Gen3 x{lanes}: largest speedup (§5.2.1)"),
            11.0,
            max(&s),
            "x",
            note,
        ));
    }
    let factors = |lanes| {
        let b = breakdown(ev, lanes);
        (
            geomean(&b.iter().map(|x| x.0).collect::<Vec<_>>()),
            geomean(&b.iter().map(|x| x.1).collect::<Vec<_>>()),
            geomean(&b.iter().map(|x| x.2).collect::<Vec<_>>()),
        )
    };
    let (io8, off8, red8) = factors(8);
    let (io16, off16, red16) = factors(16);
    out.push(claim(
        "fig10_x8_data_reduction_is_largest",
        "Fig. 10: at x8, data reduction is the largest of the three factors (1 = yes)",
        1.0,
        f64::from(u8::from(red8 > io8 && red8 > off8)),
        "yes=1",
        format!(
            "geometric means over the apps at x8: I/O-stack bypass {io8:.2}x, offload + \
             pipelining {off8:.2}x, data reduction {red8:.2}x. Data reduction is measured with a \
             counterfactual run (the program's input volume crosses the bus); the paper's bar \
             heights are not given numerically. I/O-stack bypass is small here because our \
             stack costs 8 us of CPU per 128 KiB request, little next to the copy both paths \
             pay; the paper's larger share implies a costlier stack (see the host-only claims)."
        ),
    ));
    out.push(claim(
        "fig10_data_reduction_shrinks_at_x16",
        "Fig. 10: the data-reduction factor is smaller at x16 than at x8 (1 = yes)",
        1.0,
        f64::from(u8::from(red16 < red8)),
        "yes=1",
        format!(
            "x16: I/O-stack bypass {io16:.2}x, offload + pipelining {off16:.2}x, data \
             reduction {red16:.2}x (x8: {red8:.2}x)."
        ),
    ));
    let arm = arm_speedups(ev);
    let arm_note = format!(
        "per app: {}. ARM: 4 Cortex-A72-class cores at {:.0} MHz with CPI {:.2} (perfect IPC, as \
         §5.5 assumes), time-shared by chunk, with the same pipelining; instructions per byte \
         are the apps' core cost models (crates/iscapps), not profiles of ARM binaries, so \
         the compute-heavy end (knn) lands above the paper's 58x and the averages follow; \
         sql is drive-bound on both, as in the paper (1x).",
        listing(&arm),
        ev.cfg.core_clock_mhz,
        ev.cfg.core_cpi
    );
    for (id, what, paper, ours) in [
        ("vs_arm_min", "smallest", 1.0, min(&arm)),
        ("vs_arm_max", "largest", 58.0, max(&arm)),
        ("vs_arm_avg", "average", 12.0, mean(&arm)),
    ] {
        out.push(claim(
            id,
            &format!("INSIDER over the ARM-based drive (§5.5): {what} speedup"),
            paper,
            ours,
            "x",
            arm_note.clone(),
        ));
    }
    let price = ev.cfg.arm_price_usd / ev.cfg.fpga_price_usd;
    let cost: Vec<f64> = arm.iter().map(|s| s * price).collect();
    let cost_note = format!(
        "rate per dollar: speedup x ${:.0} (Cortex-A72) / ${:.0} (XC7A200T) = speedup x {price:.2}; \
         per app: {}",
        ev.cfg.arm_price_usd,
        ev.cfg.fpga_price_usd,
        listing(&cost)
    );
    for (id, what, paper, ours) in [
        ("cost_efficiency_min", "smallest", 2.0, min(&cost)),
        ("cost_efficiency_max", "largest", 150.0, max(&cost)),
        ("cost_efficiency_avg", "average", 31.0, mean(&cost)),
    ] {
        out.push(claim(
            id,
            &format!("INSIDER's cost efficiency over ARM (§5.5, Fig. 13): {what}"),
            paper,
            ours,
            "x",
            cost_note.clone(),
        ));
    }
    let f = &ev.fairness;
    let phases: Vec<String> = f
        .phases
        .iter()
        .map(|p| {
            let m: Vec<String> = p
                .measured_mb_s
                .iter()
                .map(|x| format!("{:.1}", x / 1e3))
                .collect();
            let w: Vec<String> = p
                .fair_mb_s
                .iter()
                .map(|x| format!("{:.1}", x / 1e3))
                .collect();
            format!(
                "{:.0}-{:.0} ms: [{}] vs fair [{}] GB/s",
                p.start_ms,
                p.end_ms,
                m.join(", "),
                w.join(", ")
            )
        })
        .collect();
    out.push(Claim {
        reference: Reference::OwnBound,
        ..claim(
            "fairness_max_deviation_pct",
            "§5.3: statistics, SQL, pass-through (12, 6.4, 8 GB/s) on a 16 GB/s drive: largest \
         deviation from the max-min fair share",
            10.0,
            100.0 * f.worst_deviation(),
            "%",
            format!(
                "the paper shows Fig. 11 without numbers; 10% is the acceptance bound. Programs \
             join at 0, 20 and 40 ms; {}. Smallest active rate {:.1} GB/s: nobody starves.",
                phases.join("; "),
                f.min_active_mb_s() / 1e3
            ),
        )
    });
    out
}
