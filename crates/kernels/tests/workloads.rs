//! Structure, determinism and reporting checks beyond the per-kernel reference match:
//! the §5.6 workloads' microblock shapes, bit-identical reruns, random screen orders and
//! counts (proptest), the functional-run report, and (ignored) heavier sizes.

use nearflash_kernels::*;
use proptest::prelude::*;

#[test]
fn section_5_6_structures() {
    let p = ScreenPlan::default();
    // nw: 2·(L/16) − 1 diagonal steps, no serial microblock (§5.6).
    let nw = build("nw", Dataset::Mini, p).unwrap();
    assert_eq!(nw.desc().microblocks.len(), 2 * (64 / 16) - 1);
    assert_eq!(nw.desc().serial_mblk_count(), 0);
    // pathfinder: rows − 1 steps, no serial microblock (§5.6).
    let pf = build("path", Dataset::Mini, p).unwrap();
    assert_eq!(pf.desc().microblocks.len(), 20 - 1);
    assert_eq!(pf.desc().serial_mblk_count(), 0);
    // nn and wordcount end in one serial microblock; bfs has two screened per level.
    assert_eq!(
        build("nn", Dataset::Mini, p)
            .unwrap()
            .desc()
            .serial_mblk_count(),
        1
    );
    assert_eq!(
        build("wc", Dataset::Mini, p)
            .unwrap()
            .desc()
            .serial_mblk_count(),
        1
    );
    let bfs = build("bfs", Dataset::Mini, p).unwrap();
    assert_eq!(bfs.desc().mblk_count(), 2);
    assert_eq!(bfs.desc().microblocks.len() % 2, 0);
    assert!(bfs.desc().microblocks.len() >= 4);
}

#[test]
fn time_steps_are_unrolled_in_order() {
    let k = build("adi", Dataset::Mini, ScreenPlan::default()).unwrap();
    let d = k.desc();
    assert_eq!(d.microblocks.len(), 3 * 20);
    for (i, m) in d.microblocks.iter().enumerate() {
        assert_eq!(m.step as usize, i / 3);
        assert_eq!(m.phase, i % 3);
    }
}

#[test]
fn reruns_are_bit_identical() {
    for name in KERNELS {
        let a = run_and_verify(
            build(name, Dataset::Mini, ScreenPlan::new(3))
                .unwrap()
                .as_ref(),
            Some(5),
        )
        .unwrap();
        let b = run_and_verify(
            build(name, Dataset::Mini, ScreenPlan::new(3))
                .unwrap()
                .as_ref(),
            Some(5),
        )
        .unwrap();
        assert_eq!(a, b, "{name}");
    }
}

#[test]
fn execute_reports_and_dumps() {
    let dir = tempfile::tempdir().unwrap();
    let r = execute(
        "correlation",
        Dataset::Mini,
        ScreenPlan::default(),
        1,
        Some(dir.path()),
    )
    .unwrap();
    assert_eq!(r.kernel, "correlation");
    assert_eq!(
        r.arrays.iter().map(|a| a.name.as_str()).collect::<Vec<_>>(),
        ["corr", "mean", "stddev"]
    );
    assert!(r.arrays.iter().all(|a| a.max_rel_err <= 1e-8));
    assert_eq!(r.dumped.len(), 3);
    let corr = read_f64_file(&dir.path().join("corr.f64")).unwrap();
    assert_eq!(corr.len(), 28 * 28);
    assert_eq!(corr[0], 1.0);
    assert!(r.cost.instructions > 0);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, .. ProptestConfig::default() })]

    #[test]
    fn any_screen_count_and_order_matches_the_reference(
        which in 0usize..19,
        screens in 1u32..40,
        seed in any::<u64>(),
    ) {
        let name = KERNELS[which % KERNELS.len()];
        let k = build(name, Dataset::Mini, ScreenPlan::new(screens)).unwrap();
        prop_assert!(run_and_verify(k.as_ref(), Some(seed)).is_ok(), "{} {} {}", name, screens, seed);
    }
}

#[test]
#[ignore = "heavy: every kernel at medium, verified (release: a few minutes)"]
fn every_kernel_at_medium() {
    for name in KERNELS {
        let r = execute(name, Dataset::Medium, ScreenPlan::default(), 3, None)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        println!(
            "{name:<12} {:<40} instr {:>14}",
            r.dims, r.cost.instructions
        );
    }
}

#[test]
#[ignore = "heavy: builds the §5.6 workloads at paper size (generates their data for costs)"]
fn section_5_6_at_paper_size() {
    for name in ["nn", "bfs", "nw", "pathfinder", "wordcount"] {
        let k = build(name, Dataset::Paper, ScreenPlan::default()).unwrap();
        let c = total_cost(k.as_ref());
        let d = k.desc();
        println!(
            "{name:<11} {:<52} MBs {:>4} in {:>10.1} MiB  LD/ST {:>5.2}%  B/KI {:>8.2}",
            d.dims,
            d.microblocks.len(),
            d.input_bytes() as f64 / (1u64 << 20) as f64,
            c.ldst_ratio_pct(),
            c.bytes_per_kilo_instruction(d.input_bytes())
        );
    }
}

#[test]
fn polybench_dump_format_round_trips_and_catches_errors() {
    let k = build("mvt", Dataset::Mini, ScreenPlan::default()).unwrap();
    let st = run_and_verify(k.as_ref(), None).unwrap();
    let text = polybench_dump::format(k.desc(), &st);
    assert!(text.starts_with("==BEGIN DUMP_ARRAYS==\nbegin dump: x1\n"));
    let arrays = polybench_dump::parse(&format!("timing 0.1\n{text}")).unwrap();
    assert_eq!(
        arrays.iter().map(|a| a.0.as_str()).collect::<Vec<_>>(),
        ["x1", "x2"]
    );
    assert_eq!(arrays[0].1.len(), 40);
    polybench_dump::compare(k.desc(), &st, &text).unwrap();
    // a value off by more than the print's rounding is a mismatch
    let first = text
        .lines()
        .nth(2)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();
    let v: f64 = first.parse().unwrap();
    let broken = text.replacen(&format!("{first} "), &format!("{:.2} ", v + 0.02), 1);
    assert!(matches!(
        polybench_dump::compare(k.desc(), &st, &broken),
        Err(KernelError::Mismatch { index: 0, .. })
    ));
    assert!(polybench_dump::parse("==BEGIN DUMP_ARRAYS==\nbegin dump: y\n1.00\n").is_err());
}

#[test]
fn zero_screens_is_an_error_for_every_kernel() {
    for name in KERNELS {
        let e = build(name, Dataset::Mini, ScreenPlan::new(0))
            .err()
            .unwrap();
        assert!(matches!(e, KernelError::ZeroScreens { .. }), "{name}: {e}");
        assert!(e.to_string().contains("zero screens"), "{e}");
    }
}

#[test]
fn descriptions_and_comparisons_serialize_to_json() {
    let k = build("fdtd-2d", Dataset::Mini, ScreenPlan::new(2)).unwrap();
    let v = serde_json::to_value(k.desc()).unwrap();
    assert_eq!(v["dataset"], "mini");
    assert_eq!(v["sections"][1]["access"], "inout");
    assert_eq!(v["microblocks"][0]["kind"], "serial");
    assert_eq!(v["microblocks"][1]["kind"]["screens"], 2);
    let fp = footprint(k.as_ref(), 1, 0).unwrap();
    assert!(serde_json::to_string(&fp).unwrap().contains("offset_bytes"));
    let r = execute("gemm", Dataset::Mini, ScreenPlan::default(), 0, None).unwrap();
    assert!(
        serde_json::to_value(&r).unwrap()["cost"]["instructions"]
            .as_u64()
            .unwrap()
            > 0
    );
}

#[test]
fn total_cost_barely_depends_on_the_screen_count() {
    // Splitting a loop into screens only adds per-screen loop setup: the screens' costs
    // partition the work. (Not wordcount: sorting S runs of w/S words and merging them
    // costs genuinely differently from one sort of w words.)
    for name in KERNELS.iter().filter(|n| **n != "wordcount") {
        let one = total_cost(
            build(name, Dataset::Small, ScreenPlan::new(1))
                .unwrap()
                .as_ref(),
        );
        let many = total_cost(
            build(name, Dataset::Small, ScreenPlan::new(8))
                .unwrap()
                .as_ref(),
        );
        let rel =
            (many.instructions as f64 - one.instructions as f64).abs() / one.instructions as f64;
        assert!(
            rel < 0.02,
            "{name}: {} vs {} instructions",
            one.instructions,
            many.instructions
        );
        assert!(
            (many.loads as f64 - one.loads as f64).abs() / (one.loads as f64) < 0.02,
            "{name}: loads {} vs {}",
            one.loads,
            many.loads
        );
    }
}

#[test]
#[ignore = "needs PolyBench dumps: POLYBENCH_DUMP_DIR=<dir of <kernel>.<dataset>.txt stderr files>"]
fn compare_with_polybench_dumps() {
    let dir = std::env::var("POLYBENCH_DUMP_DIR").expect(
        "POLYBENCH_DUMP_DIR must name a directory of PolyBench/C dumps (<kernel>.<dataset>.txt); \
         without it this test compares nothing, which is a failure, not a pass",
    );
    let mut compared = 0;
    for name in KERNELS {
        for d in [Dataset::Mini, Dataset::Small, Dataset::Medium] {
            let path = std::path::Path::new(&dir).join(format!("{name}.{d}.txt"));
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            let k = build(name, d, ScreenPlan::default()).unwrap();
            let st = run_and_verify(k.as_ref(), Some(1)).unwrap();
            polybench_dump::compare(k.desc(), &st, &text)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let ours = polybench_dump::format(k.desc(), &st);
            let theirs: String = text
                .lines()
                .skip_while(|l| *l != "==BEGIN DUMP_ARRAYS==")
                .map(|l| format!("{l}\n"))
                .collect();
            assert_eq!(ours, theirs, "{}: dump text differs", path.display());
            println!("{}: values match, text identical", path.display());
            compared += 1;
        }
    }
    assert!(
        compared > 0,
        "no <kernel>.<dataset>.txt dump found in {dir}: nothing was compared"
    );
    println!("{compared} dumps compared");
}
