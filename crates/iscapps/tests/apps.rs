//! Every app, at reduced record shapes: drive program(s) fed through flits cut at random
//! lengths, then the host remainder, equal the independent reference; generators are
//! deterministic; the paper figures are sane.

use nearflash_iscapps::apps::*;
use nearflash_iscapps::{
    flits_with_lengths, pure_cpu, registry, run_app, AppError, AppOutput, Direction, IscApp, Side,
};
use proptest::prelude::*;

/// Each app with records small enough for KiB-sized inputs.
fn small_apps() -> Vec<Box<dyn IscApp>> {
    vec![
        Box::new(GrepApp::with_line_chars(97).unwrap()),
        Box::new(KnnApp::with_features(100).unwrap()),
        // Two features: distances 0–162, so ties at the K-th neighbour and in the vote.
        Box::new(KnnApp::with_features(2).unwrap()),
        Box::new(StatisticsApp::with_row_values(50).unwrap()),
        Box::new(SqlApp::with_rounds(8).unwrap()),
        Box::new(IntegrationApp::default()),
        Box::new(IntegrationApp::with_query(
            *b"AAAAAAAABBBBBBBBCCCCCCCCDDDDDDDD",
        )),
        Box::new(ReliefApp::default()),
        Box::new(ReliefApp::with_threshold(0)),
        Box::new(ReliefApp::with_threshold(1)),
        Box::new(RleApp),
        Box::new(PassThroughApp),
    ]
}

/// Enough bytes for two records plus a header.
fn min_bytes(app: &dyn IscApp) -> u64 {
    2 * app.record_bytes() + 16
}

fn check(app: &dyn IscApp, seed: u64, input_bytes: u64, lengths: &[usize]) {
    let input_bytes = input_bytes.max(min_bytes(app));
    let data = app.generate(seed, input_bytes).unwrap();
    let want = app.reference(&data).unwrap();
    let got = run_app(app, &data, &|b: &[u8]| flits_with_lengths(b, lengths))
        .unwrap_or_else(|e| panic!("{} seed {seed}: {e}", app.name()));
    app.verify(&got, &want)
        .unwrap_or_else(|e| panic!("{} seed {seed} size {input_bytes}: {e}", app.name()));
    app.verify(&pure_cpu(app, &data).unwrap(), &want).unwrap();
    // A virtual write preallocates exactly what the drive writes.
    match (app.direction(), app.preallocate_bytes(&data), &got) {
        (Direction::Write, Some(n), AppOutput::Bytes(file)) => assert_eq!(n, file.len() as u64),
        (Direction::Read, None, _) => {}
        other => panic!(
            "{}: direction and preallocation disagree: {other:?}",
            app.name()
        ),
    }
}

#[test]
fn every_app_matches_its_reference_at_several_sizes_and_seeds() {
    for app in small_apps() {
        for seed in [1, 2, 3] {
            for kib in [1, 4, 37] {
                check(app.as_ref(), seed, kib * 1024, &[]);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn flit_boundaries_anywhere_give_the_same_result(
        seed in 0u64..1000,
        input_bytes in 200u64..6000,
        lengths in proptest::collection::vec(1usize..=64, 1..9),
    ) {
        for app in small_apps() {
            check(app.as_ref(), seed, input_bytes, &lengths);
        }
    }
}

#[test]
fn generators_are_deterministic_and_seeds_differ() {
    for app in small_apps() {
        let a = app.generate(7, 5000).unwrap();
        assert_eq!(a, app.generate(7, 5000).unwrap(), "{}", app.name());
        assert_ne!(
            a.input,
            app.generate(8, 5000).unwrap().input,
            "{}",
            app.name()
        );
    }
}

#[test]
fn too_small_inputs_are_errors_not_empty_files() {
    for app in small_apps() {
        let err = app.generate(1, app.record_bytes() - 1);
        assert!(
            matches!(err, Err(AppError::TooSmall { .. })),
            "{}",
            app.name()
        );
    }
}

#[test]
fn paper_figures_are_positive_and_costs_valid() {
    for app in registry() {
        assert!(app.paper_input_bytes() >= 1 << 30, "{}", app.name());
        for pass in 0..app.pass_count() {
            let r = app.output_ratio(pass).unwrap();
            assert!(r.ratio.is_finite() && r.ratio >= 0.0, "{}", app.name());
            assert!(!r.derivation.is_empty());
            assert!(
                app.program(pass).unwrap().cost().is_valid(),
                "{}",
                app.name()
            );
        }
        assert!(app.output_ratio(app.pass_count()).is_err());
        let drive_passes: Vec<usize> = app
            .stages()
            .iter()
            .filter_map(|s| match s.side {
                Side::Drive { pass } => Some(pass),
                Side::Host => None,
            })
            .collect();
        let every_pass: Vec<usize> = (0..app.pass_count()).collect();
        assert_eq!(
            drive_passes,
            every_pass,
            "{}: one drive stage per pass",
            app.name()
        );
        assert!(app.program(app.pass_count()).is_err());
        let h = app.host_cost();
        assert!(h.pure_cpu_instructions_per_input_byte >= 0.0);
        assert!(h.remainder_instructions_per_output_byte >= 0.0);
    }
}
