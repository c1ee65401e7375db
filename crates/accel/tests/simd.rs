//! The SIMD baseline: every kernel runs and no phase overlaps another (transfer and compute
//! never overlap); data larger than DDR3L are chunked; energy equals power × time per
//! component, recomputed here from the report's busy times and the config's powers; runs
//! are deterministic; bad powers are errors naming the field.

mod common;

use nearflash_accel::{
    run_simd, run_workload, AccelConfig, HostConfig, NvmeConfig, RunReport, RunSpec, SchedulerKind,
    SimdSpec,
};
use nearflash_kernels::{Dataset, KERNELS};

fn simd_run(accel: &AccelConfig, host: &HostConfig, workload: &str, seed: u64) -> RunReport {
    let (_, _, flash, ftl) = common::simd();
    let spec = SimdSpec {
        accel,
        host,
        ssd_nvme: &NvmeConfig::default(),
        ssd_flash: &flash,
        ssd_ftl: &ftl,
        dataset: Dataset::Mini,
        seed,
    };
    run_simd(&spec, workload).unwrap()
}

const ORDER: [&str; 7] = [
    "ssd_read",
    "copy_in",
    "pcie_in",
    "compute",
    "pcie_out",
    "copy_out",
    "ssd_write",
];

fn assert_serial_phases(r: &RunReport) {
    let p = &r.phases;
    assert!(!p.is_empty());
    for (k, w) in p.windows(2).enumerate() {
        assert!(w[0].start_ns <= w[0].end_ns);
        // Phases follow one another: none starts before the previous one ended.
        assert!(
            w[1].start_ns >= w[0].end_ns,
            "{:?} overlaps {:?}",
            w[0],
            w[1]
        );
        let i = ORDER.iter().position(|x| *x == w[0].phase).unwrap();
        if (w[1].instance, w[1].chunk) == (w[0].instance, w[0].chunk) {
            assert_eq!(w[1].phase, ORDER[i + 1], "phase {k}");
        } else {
            assert_eq!(w[0].phase, "ssd_write");
            assert_eq!(w[1].phase, "ssd_read");
        }
    }
    // Compute intervals are disjoint from every transfer interval.
    for c in p.iter().filter(|x| x.phase == "compute") {
        for t in p.iter().filter(|x| x.phase != "compute") {
            assert!(
                t.end_ns <= c.start_ns || t.start_ns >= c.end_ns,
                "{t:?} / {c:?}"
            );
        }
    }
}

#[test]
fn every_kernel_runs_and_no_phase_overlaps() {
    let (accel, host, _, _) = common::simd();
    for k in KERNELS {
        let r = simd_run(&accel, &host, k, 1);
        assert_eq!(r.instances.len(), 6, "{k}");
        assert_eq!(r.scheduler, "simd");
        assert!(r.throughput_mb_s > 0.0, "{k}");
        assert_serial_phases(&r);
        // Instances run one after another.
        for w in r.instances.windows(2) {
            assert!(w[1].started_ns >= w[0].latency_ns, "{k}");
        }
    }
}

#[test]
fn data_larger_than_ddr3l_are_chunked() {
    let (mut accel, host, _, _) = common::simd();
    let whole = simd_run(&accel, &host, "atax", 1);
    assert!(whole.instances.iter().all(|i| i.chunks == 1));
    // 4 KiB of DDR3L beside the kernel description.
    accel.ddr_bytes = accel.kernel_description_bytes + (4 << 10);
    let r = simd_run(&accel, &host, "atax", 1);
    assert_serial_phases(&r);
    for (n, i) in r.instances.iter().enumerate() {
        assert!(i.chunks > 1, "{i:?}");
        let computes = r
            .phases
            .iter()
            .filter(|p| p.phase == "compute" && p.instance == n)
            .count();
        assert_eq!(computes as u32, i.chunks);
    }
    // The same bytes cross the SSD either way (rounded to sectors per chunk).
    assert!(r.flash_read_bytes >= whole.flash_read_bytes);
    assert!(r.sim_time_ns > whole.sim_time_ns);
}

fn joules(active_w: f64, idle_w: f64, busy_ns: u64, makespan_ns: u64) -> f64 {
    (active_w * busy_ns as f64 + idle_w * (makespan_ns - busy_ns) as f64) / 1e9
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

#[test]
fn simd_energy_is_power_times_busy_and_idle_time() {
    let (accel, host, _, _) = common::simd();
    let r = simd_run(&accel, &host, "gemm", 1);
    let t = r.sim_time_ns;
    let lwps: f64 = r
        .lwp_busy_ns
        .iter()
        .map(|&b| joules(accel.lwp_active_power_w, accel.lwp_idle_power_w, b, t))
        .sum();
    let ddr = joules(accel.ddr_power_w, accel.ddr_idle_power_w, r.ddr_busy_ns, t);
    let pcie = joules(
        accel.pcie_power_w,
        accel.pcie_idle_power_w,
        r.pcie_busy_ns,
        t,
    );
    let cpu = joules(
        host.cpu_active_power_w,
        host.cpu_idle_power_w,
        r.host_cpu_busy_ns,
        t,
    );
    let dram = joules(
        host.dram_active_power_w,
        host.dram_idle_power_w,
        r.host_dram_busy_ns,
        t,
    );
    let ssd = joules(
        host.ssd_active_power_w,
        host.ssd_idle_power_w,
        r.ssd_busy_ns,
        t,
    );
    let e = &r.energy_j;
    assert!(close(e.computation, lwps + ddr), "{e:?}");
    assert!(close(e.data_movement, pcie + cpu + dram), "{e:?}");
    assert!(close(e.storage_access, ssd), "{e:?}");
    assert!(close(e.total, lwps + ddr + pcie + cpu + dram + ssd));
    // The host's busy times come from the phases: SSD busy = the SSD phases' length.
    let ssd_phases: u64 = r
        .phases
        .iter()
        .filter(|p| p.phase.starts_with("ssd_"))
        .map(|p| p.end_ns - p.start_ns)
        .sum();
    assert_eq!(r.ssd_busy_ns, ssd_phases);
}

#[test]
fn flashabacus_energy_is_power_times_busy_and_idle_time() {
    let (flash, ftl, accel) = common::test_min();
    let spec = RunSpec {
        accel: &accel,
        flash: &flash,
        ftl: &ftl,
        scheduler: SchedulerKind::IntraO3,
        dataset: Dataset::Mini,
        seed: 1,
    };
    let r = run_workload(&spec, "atax").unwrap();
    let t = r.sim_time_ns;
    let lwp = |b| joules(accel.lwp_active_power_w, accel.lwp_idle_power_w, b, t);
    let dies = u64::from(flash.channels * flash.packages_per_channel * flash.dies_per_package);
    let backbone = joules(
        accel.backbone_active_power_w,
        accel.backbone_idle_power_w,
        r.flash_die_busy_ns / dies,
        t,
    );
    let storage = lwp(r.lwp_busy_ns[0]) + lwp(r.lwp_busy_ns[1]) + backbone;
    let compute: f64 = r.lwp_busy_ns[2..].iter().map(|&b| lwp(b)).sum::<f64>()
        + joules(accel.ddr_power_w, accel.ddr_idle_power_w, r.ddr_busy_ns, t);
    let moving = joules(
        accel.pcie_power_w,
        accel.pcie_idle_power_w,
        r.pcie_busy_ns,
        t,
    );
    let e = &r.energy_j;
    assert!(close(e.storage_access, storage), "{e:?}");
    assert!(close(e.computation, compute), "{e:?}");
    assert!(close(e.data_movement, moving), "{e:?}");
    assert!(close(e.total, storage + compute + moving));
    assert!(!e.per_component.contains_key("host_cpu"));
}

#[test]
fn simd_is_deterministic() {
    let (accel, host, _, _) = common::simd();
    let a = simd_run(&accel, &host, "mvt", 7);
    let b = simd_run(&accel, &host, "mvt", 7);
    assert_eq!(a, b);
}

#[test]
fn zero_powers_are_named() {
    let (accel, host, flash, ftl) = common::simd();
    let bad_host = HostConfig {
        ssd_active_power_w: 0.0,
        ..host.clone()
    };
    let bad_accel = AccelConfig {
        pcie_power_w: 0.0,
        ..accel.clone()
    };
    for (a, h, field) in [
        (&accel, &bad_host, "host.ssd_active_power_w"),
        (&bad_accel, &host, "accel.pcie_power_w"),
    ] {
        let spec = SimdSpec {
            accel: a,
            host: h,
            ssd_nvme: &NvmeConfig::default(),
            ssd_flash: &flash,
            ssd_ftl: &ftl,
            dataset: Dataset::Mini,
            seed: 1,
        };
        let e = run_simd(&spec, "atax").unwrap_err().to_string();
        assert!(e.contains(field), "{e}");
    }
}

#[test]
fn ssd_preset_limits_match_the_intel_750_datasheet() {
    let (_, _, f, _) = common::simd();
    let dies = f64::from(f.channels * f.packages_per_channel * f.dies_per_package);
    let page = f64::from(f.page_size_bytes);
    let read_mb_s =
        f64::from(f.channels) * f.channel_rate_mb_s * page / (page + f64::from(f.oob_size_bytes));
    let write_mb_s = dies * f64::from(f.planes_per_die) * page / f.program_latency_us;
    // Datasheet (400 GB): 2200 MB/s sequential read, 900 MB/s sequential write.
    assert!((read_mb_s / 2200.0 - 1.0).abs() < 0.02, "{read_mb_s}");
    assert!((write_mb_s / 900.0 - 1.0).abs() < 0.02, "{write_mb_s}");
}

/// Paper size (cheap: SIMD's events are few): the timed SSD reads of atax are buffered
/// reads, so the page cache's read-ahead, not the drive, sets their rate. By hand from the
/// configs, per 128 KiB chunk (8 pages of 16 KiB on 8 channels, read in parallel):
/// - at most a chunk and its 128 KiB read-ahead are in flight, each needing at least tR +
///   one page over its channel (75 µs + 17,664 B / 133 MB/s + 100 ns = 207.9 µs): at most
///   2 × 131,072 B / 207.9 µs = 1,261 MB/s, well under the drive's 2.2 GB/s at depth;
/// - read-ahead beats a reader that waits for each chunk in turn: stack (8 µs + 32 pages ×
///   0.1 µs) + NVMe (6.6 µs at least) + flash (207.9 µs) + copy (32 µs) = 257.7 µs per
///   chunk, 509 MB/s.
#[test]
fn paper_atax_reads_at_the_read_ahead_rate() {
    let (accel, host, flash, ftl) = common::simd();
    let spec = SimdSpec {
        accel: &accel,
        host: &host,
        ssd_nvme: &NvmeConfig::default(),
        ssd_flash: &flash,
        ssd_ftl: &ftl,
        dataset: Dataset::Paper,
        seed: 1,
    };
    let r = run_simd(&spec, "atax").unwrap();
    let read_ns: u64 = r
        .phases
        .iter()
        .filter(|p| p.phase == "ssd_read")
        .map(|p| p.end_ns - p.start_ns)
        .sum();
    let mb_s = r.flash_read_bytes as f64 / (read_ns as f64 / 1e9) / 1e6;
    assert!((509.0..1261.0).contains(&mb_s), "{mb_s}");
}
