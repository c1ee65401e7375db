//! Functional fidelity end to end: kernels compute real data through the simulated flash and
//! every instance is verified against its reference; timing is identical to a timing run;
//! injected faults (a flipped input byte, a lost write-back) fail verification; two kernels
//! whose output sections overlap are serialized by the range lock and both verify; runs too
//! big for memory, layouts that reuse flash and sections that are not their arrays' byte
//! images are refused with a typed error.

mod common;

use common::{flashabacus, test_min};
use nearflash_accel::machine::{Instance, Machine};
use nearflash_accel::plan::KernelPlan;
use nearflash_accel::{
    layout::Layout, run_workload, run_workload_functional, verified, AccelError, Fault,
    FunctionalRun, RunSpec, SchedulerKind, FUNCTIONAL_MAX_BYTES_DEFAULT,
};
use nearflash_flash::{FlashConfig, Geometry};
use nearflash_ftl::layout::Layout as FtlLayout;
use nearflash_ftl::FtlConfig;
use nearflash_kernels::{
    build, Access, Cost, Data, Dataset, Extent, Kernel, KernelDesc, Microblock, MicroblockKind,
    Phase, ScreenPlan, Section, State,
};

type Device = (FlashConfig, FtlConfig, nearflash_accel::AccelConfig);

fn spec(dev: &Device, kind: SchedulerKind, dataset: Dataset) -> RunSpec<'_> {
    RunSpec {
        accel: &dev.2,
        flash: &dev.0,
        ftl: &dev.1,
        scheduler: kind,
        dataset,
        seed: 5,
    }
}

fn functional(
    dev: &Device,
    kind: SchedulerKind,
    workload: &str,
    dataset: Dataset,
) -> Result<FunctionalRun, AccelError> {
    run_workload_functional(
        &spec(dev, kind, dataset),
        workload,
        FUNCTIONAL_MAX_BYTES_DEFAULT,
    )
}

fn assert_verifies(dev: &Device, kind: SchedulerKind, workload: &str) {
    let r = functional(dev, kind, workload, Dataset::Mini)
        .unwrap_or_else(|e| panic!("{workload} under {kind}: {e}"));
    assert_eq!(r.checks.len(), r.report.instances.len());
    assert!(r.checks.iter().all(|c| c.result.is_ok()));
}

/// A machine of `kernels` (one instance each, application = index) at `mini` on the
/// flashabacus device, with `place` free to move sections before the run.
fn machine(kernels: &[&str], kind: SchedulerKind, place: impl FnOnce(&mut Layout)) -> Machine {
    let (flash, ftl, accel) = flashabacus();
    let ftl_layout = FtlLayout::new(&Geometry::from_config(&flash), &ftl);
    let group = ftl_layout.group_bytes();
    let ks: Vec<Box<dyn Kernel>> = kernels
        .iter()
        .map(|k| {
            build(
                k,
                Dataset::Mini,
                ScreenPlan::new(accel.screens_per_microblock),
            )
            .unwrap()
        })
        .collect();
    let plans: Vec<KernelPlan> = ks
        .iter()
        .map(|k| KernelPlan::new(k.as_ref(), &accel, group).unwrap())
        .collect();
    let which: Vec<usize> = (0..kernels.len()).collect();
    let mut layout = Layout::place(&plans, &which, group, ftl_layout.logical_bytes()).unwrap();
    place(&mut layout);
    let instances = which
        .iter()
        .map(|&p| Instance { plan: p, app: p })
        .collect();
    Machine::new_functional(&accel, &flash, &ftl, kind, plans, ks, instances, layout, 3).unwrap()
}

/// Every kernel of Table 2 and §5.6 under the out-of-order intra-kernel scheduler (the one
/// that runs the most units of one kernel at once), and a representative set under all four.
#[test]
fn every_kernel_verifies_in_functional_fidelity_at_mini() {
    let dev = flashabacus();
    for name in nearflash_kernels::KERNELS {
        assert_verifies(&dev, SchedulerKind::IntraO3, name);
    }
    for kind in SchedulerKind::ALL {
        // bfs: screens write any node (overlapping footprints); wordcount: variable output
        // in fixed buffers; adi: serial microblocks; nw: a diagonal wavefront.
        for name in ["atax", "bfs", "wordcount", "adi", "nw"] {
            assert_verifies(&dev, kind, name);
        }
    }
    assert_verifies(&dev, SchedulerKind::IntraO3, "mx4");
}

/// With one request at a time at the FTL, writes wait in Flashvisor's per-worker queues and
/// leave them round robin, not in the order they were queued: payloads are taken at issue,
/// so the last write of a page group still carries every screen's bytes.
#[test]
fn every_kernel_verifies_with_a_one_deep_ftl_queue() {
    let mut dev = flashabacus();
    dev.2.flash_queue_depth = 1;
    for name in nearflash_kernels::KERNELS {
        assert_verifies(&dev, SchedulerKind::IntraO3, name);
    }
    assert_verifies(&dev, SchedulerKind::InterDy, "mx8");
}

/// The whole matrix: every kernel and mix under every scheduler (`cargo test -- --ignored`).
#[test]
#[ignore]
fn every_kernel_and_mix_verifies_under_every_scheduler() {
    let dev = flashabacus();
    let mixes: Vec<String> = (1..=14).map(|m| format!("mx{m}")).collect();
    let workloads = nearflash_kernels::KERNELS
        .iter()
        .copied()
        .chain(mixes.iter().map(String::as_str));
    for w in workloads {
        for kind in SchedulerKind::ALL {
            assert_verifies(&dev, kind, w);
        }
    }
}

/// Moving real data changes nothing in time: same events, same trace hash, same report —
/// also on a device busy with GC.
#[test]
fn functional_and_timing_runs_have_the_same_trace() {
    let dev = flashabacus();
    for (kind, workload, dataset) in [
        (SchedulerKind::IntraO3, "bfs", Dataset::Mini),
        (SchedulerKind::InterSt, "wordcount", Dataset::Mini),
        (SchedulerKind::IntraIo, "mx4", Dataset::Mini),
        (SchedulerKind::InterDy, "gemm", Dataset::Small),
    ] {
        let t = run_workload(&spec(&dev, kind, dataset), workload).unwrap();
        let f = functional(&dev, kind, workload, dataset).unwrap();
        assert_eq!(f.report.trace_hash, t.trace_hash, "{workload} under {kind}");
        assert_eq!(
            f.report.sim_time_ns, t.sim_time_ns,
            "{workload} under {kind}"
        );
        assert_eq!(f.report, t, "{workload} under {kind}");
    }
    // On the 12 MiB test device GC and checkpoints run while the data move.
    let tiny = test_min();
    let t = run_workload(&spec(&tiny, SchedulerKind::IntraO3, Dataset::Mini), "mx4").unwrap();
    let f = functional(&tiny, SchedulerKind::IntraO3, "mx4", Dataset::Mini).unwrap();
    assert!(t.lwp_busy_ns[1] > 0, "Storengine worked during the run");
    assert_eq!(f.report, t);
}

/// A silently corrupted input (the flipped byte is covered by the page's checksum, so the
/// FTL returns it as good data) makes atax's `y` wrong: a typed error naming the array.
#[test]
fn a_flipped_input_byte_fails_verification() {
    let mut m = machine(&["atax"], SchedulerKind::IntraO3, |_| {});
    // the most significant byte of A[0][0]: sign and exponent.
    m.inject(Fault::FlipInputByte {
        instance: 0,
        section: 0,
        byte: 7,
    });
    let (report, checks) = m.run_functional("atax").unwrap();
    let e = verified(report, checks).unwrap_err();
    let AccelError::Verification { failed, first, .. } = &e else {
        panic!("{e}");
    };
    assert_eq!(*failed, 1);
    assert!(
        matches!(first, nearflash_kernels::KernelError::Mismatch { array, .. } if array == "y")
    );
    assert!(
        e.to_string().contains("atax") && e.to_string().contains("y["),
        "{e}"
    );
}

/// One screen's write-back is lost (its page groups keep their previous content): only that
/// instance fails, and the error names it.
#[test]
fn a_lost_write_back_fails_verification() {
    let mut m = machine(&["atax", "atax"], SchedulerKind::IntraO3, |_| {});
    // atax: microblock 1 computes y = Aᵀ·tmp.
    m.inject(Fault::DropWrite {
        instance: 1,
        microblock: 1,
        screen: 0,
    });
    let (report, checks) = m.run_functional("atax x2").unwrap();
    assert!(checks[0].result.is_ok());
    let e = verified(report, checks).unwrap_err();
    assert!(
        matches!(
            e,
            AccelError::Verification {
                failed: 1,
                instance: 1,
                ..
            }
        ),
        "{e}"
    );
}

/// Issue 3's acceptance item: atax's `y` and bicg's `q` (both outputs, 336 bytes) mapped onto
/// the same flash. The range lock makes bicg wait until atax has finished, and both results
/// are correct: atax's is read back from flash when it finishes, before bicg overwrites it.
#[test]
fn overlapping_output_sections_are_serialized_and_both_verify() {
    let run = |overlap: bool| {
        let m = machine(&["atax", "bicg"], SchedulerKind::IntraO3, |l| {
            if overlap {
                l.offsets[1][4] = l.offsets[0][2]; // bicg.q onto atax.y
            }
        });
        let (report, checks) = m.run_functional("atax+bicg").unwrap();
        assert!(checks.iter().all(|c| c.result.is_ok()), "{checks:?}");
        let (atax, bicg) = (&report.instances[0], &report.instances[1]);
        (atax.latency_ns, bicg.started_ns)
    };
    let (atax_end, bicg_start) = run(false);
    assert!(bicg_start < atax_end, "disjoint sections run concurrently");
    let (atax_end, bicg_start) = run(true);
    assert!(
        bicg_start >= atax_end,
        "bicg's write lock waits for atax: {bicg_start} < {atax_end}"
    );
}

#[test]
fn functional_runs_that_do_not_fit_are_refused_before_running() {
    let dev = flashabacus();
    let e = run_workload_functional(
        &spec(&dev, SchedulerKind::IntraO3, Dataset::Mini),
        "2dconv",
        16 << 20,
    )
    .unwrap_err();
    assert!(
        matches!(e, AccelError::FunctionalTooLarge { max_mib: 16, .. }),
        "{e}"
    );
    // 2dconv's 4 MiB outputs × 6 instances outgrow the test device (without its
    // over-provisioning, which would leave too little room for even one copy of the inputs):
    // later instances would reuse earlier ones' flash.
    let mut tiny = test_min();
    tiny.1.over_provisioning_percent = 0.0;
    let e = functional(&tiny, SchedulerKind::IntraO3, "2dconv", Dataset::Mini).unwrap_err();
    assert!(matches!(e, AccelError::FunctionalReuse { .. }), "{e}");
    assert!(e.to_string().contains("smaller dataset"), "{e}");
}

/// A kernel whose section `v` claims 16 bytes while its array `v` holds one f64.
struct Misdeclared(KernelDesc);

impl Kernel for Misdeclared {
    fn desc(&self) -> &KernelDesc {
        &self.0
    }
    fn init(&self) -> State {
        let mut s = State::new();
        s.push("v", &[1], Data::F64(vec![1.0]));
        s
    }
    fn compute_screen(&self, _: usize, _: u32, _: &mut State) {}
    fn compute_serial(&self, _: usize, _: &mut State) {}
    fn screen_cost(&self, _: usize, _: u32) -> Cost {
        Cost::default()
    }
    fn screen_io(&self, _: usize, _: u32) -> Vec<Extent> {
        vec![nearflash_kernels::io::span(0, 0..16, Access::InOut)]
    }
    fn reference(&self, input: &State) -> State {
        input.clone()
    }
}

#[test]
fn a_section_that_is_not_its_arrays_image_is_named() {
    let (flash, ftl, accel) = flashabacus();
    let k = Misdeclared(KernelDesc {
        name: "misdeclared",
        dataset: Dataset::Mini,
        dims: String::new(),
        sections: vec![Section {
            name: "v",
            bytes: 16,
            access: Access::InOut,
        }],
        phases: vec![Phase {
            name: "all",
            serial: true,
        }],
        microblocks: vec![Microblock {
            phase: 0,
            step: 0,
            kind: MicroblockKind::Serial,
        }],
        live_out: vec!["v"],
    });
    let group = FtlLayout::new(&Geometry::from_config(&flash), &ftl).group_bytes();
    let plans = vec![KernelPlan::new(&k, &accel, group).unwrap()];
    let layout = Layout::place(&plans, &[0], group, 1 << 30).unwrap();
    let instances = vec![Instance { plan: 0, app: 0 }];
    let kernels: Vec<Box<dyn Kernel>> = vec![Box::new(k)];
    let e = Machine::new_functional(
        &accel,
        &flash,
        &ftl,
        SchedulerKind::IntraO3,
        plans,
        kernels,
        instances,
        layout,
        1,
    )
    .err()
    .expect("refused");
    assert!(
        matches!(e, AccelError::SectionImage { section: "v", .. }),
        "{e}"
    );
    assert!(e.to_string().contains("8 bytes, the section 16"), "{e}");
}
