//! The study's stories, its bad inputs, and a property test of every mode against the
//! reference map, on the tiny test device (`nearflash_ftl::testing`).

use super::*;
use nearflash_ftl::testing::{tiny_flash, tiny_ftl};
use proptest::prelude::*;

/// The tiny test device as a drive: 2 × 2 × 2 × 48 blocks × 16 pages of 4 KiB (`tiny_flash`),
/// the study's firmware without static wear-leveling (it moves cold data on its own and would
/// blur the copies the placement saves, as docs/fdp.md notes).
fn drive() -> Drive {
    Drive {
        flash: tiny_flash(),
        ftl: FtlConfig {
            wear_leveling_spread_pe: 0,
            ..tiny_ftl()
        },
        zns: ZnsConfig::default(),
    }
}

fn params(passes: u64, seed: u64) -> Params {
    Params {
        passes,
        seed,
        ..Params::default()
    }
}

fn one(mode: Mode, p: &Params) -> ModeReport {
    run(&drive(), p, &[mode])
        .expect("the run completes")
        .remove(0)
}

#[test]
fn a_cold_stream_on_its_own_handle_is_copied_less_than_on_a_shared_drive() {
    let p = params(4, 3);
    let conv = one(Mode::Conventional, &p);
    let fdp = one(Mode::Fdp, &p);
    assert_eq!(conv.user_bytes, fdp.user_bytes);
    assert!(conv.copied_units > 0, "the shared drive collected nothing");
    assert!(
        fdp.copied_units < conv.copied_units,
        "FDP copied {} units, the shared drive {}",
        fdp.copied_units,
        conv.copied_units
    );
    assert!(fdp.waf < conv.waf, "{} vs {}", fdp.waf, conv.waf);
    assert_eq!(conv.host_waf, 1.0);
}

#[test]
fn host_cleaning_on_zones_keeps_every_block() {
    let p = params(4, 5);
    let zns = one(Mode::Zns, &p);
    assert!(zns.zones_cleaned > 0, "the host never cleaned a zone");
    assert_eq!(zns.zone_resets, zns.zones_cleaned);
    assert!(zns.units_verified > 0);
    // The parts multiply to the whole; the host's copies are counted.
    assert!((zns.host_waf * zns.device_waf - zns.waf).abs() < 1e-9);
    assert_eq!(zns.host_copy_bytes, zns.copied_units * UNIT_BYTES);
    assert!(zns.host_waf > 1.0);
    assert_eq!(zns.device_write_bytes, zns.user_bytes + zns.host_copy_bytes);
}

#[test]
fn each_mode_writes_the_same_user_bytes_and_reports_its_latency_tail_in_order() {
    let p = params(2, 1);
    let reports = run(&drive(), &p, &Mode::ALL).unwrap();
    let shape = p.shape(&drive()).unwrap();
    for r in &reports {
        assert_eq!(r.user_bytes, shape.total_units * UNIT_BYTES, "{:?}", r.mode);
        assert!(r.write_latency_us_p50 <= r.write_latency_us_p99);
        assert!(r.write_latency_us_p99 <= r.write_latency_us_p999);
        assert!(r.write_latency_us_p999 <= r.write_latency_us_max);
        assert!(r.throughput_mb_s > 0.0 && r.waf >= 1.0);
    }
}

#[test]
fn the_same_seed_gives_the_same_figures() {
    let p = params(2, 9);
    let a = run(&drive(), &p, &Mode::ALL).unwrap();
    let b = run(&drive(), &p, &Mode::ALL).unwrap();
    assert_eq!(a, b);
}

#[test]
fn mode_names_other_than_the_three_and_all_are_refused() {
    assert_eq!(Mode::parse_list("ALL").unwrap(), Mode::ALL.to_vec());
    assert_eq!(Mode::parse_list("fdp").unwrap(), vec![Mode::Fdp]);
    let e = Mode::parse_list("zoned").unwrap_err();
    assert!(e.to_string().contains("\"zoned\""), "{e}");
}

#[test]
fn out_of_range_parameters_are_refused_by_name() {
    let cases: Vec<(Params, &str)> = vec![
        (
            Params {
                hot_fraction_percent: 100.0,
                ..Params::default()
            },
            "hot_fraction_percent",
        ),
        (
            Params {
                hot_fraction_percent: f64::NAN,
                ..Params::default()
            },
            "hot_fraction_percent",
        ),
        (
            Params {
                hot_fraction_percent: 0.01,
                ..Params::default()
            },
            "hot_fraction_percent",
        ),
        (
            Params {
                hot_write_percent: 0,
                ..Params::default()
            },
            "hot_write_percent",
        ),
        (
            Params {
                cold_request_kib: 12,
                ..Params::default()
            },
            "cold_request_kib",
        ),
        (
            Params {
                hot_request_kib: 256,
                ..Params::default()
            },
            "hot_request_kib",
        ),
        (
            Params {
                passes: 0,
                ..Params::default()
            },
            "passes",
        ),
        (
            Params {
                queue_depth: 0,
                ..Params::default()
            },
            "queue_depth",
        ),
    ];
    for (p, field) in cases {
        match p.shape(&drive()) {
            Err(PlacementError::Param { field: f, .. }) => assert_eq!(f, field),
            other => panic!("{field}: {other:?}"),
        }
    }
    let mut slc = drive();
    slc.ftl.slc_cache.enabled = true;
    assert!(matches!(
        Params::default().shape(&slc),
        Err(PlacementError::Param {
            field: "ftl.slc_cache.enabled",
            ..
        })
    ));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Every mode reads back, for every unit written, the last version written (the
    /// reference map), whatever the mix.
    #[test]
    fn every_mode_reads_back_the_last_version_written(
        seed in 0u64..1000,
        hot_fraction_percent in 5.0f64..50.0,
        hot_write_percent in 10u64..90,
        cold_kib in prop::sample::select(vec![4u64, 8, 16, 32]),
        queue_depth in 1u32..12,
    ) {
        let p = Params {
            hot_fraction_percent,
            hot_write_percent,
            cold_request_kib: cold_kib,
            queue_depth,
            passes: 2,
            seed,
            ..Params::default()
        };
        let shape = p.shape(&drive()).unwrap();
        for mode in Mode::ALL {
            match run(&drive(), &p, &[mode]) {
                // Each unit ever written was read back right (a wrong one fails the run), on
                // zones too: padded lone appends never run the host out of zones (seeds 964
                // and 539 did; 400 cases pass).
                Ok(r) => prop_assert!(
                    r[0].units_verified > 0 && r[0].units_verified <= shape.span_units
                ),
                // Small lone appends padded to whole rows can leave the zones too small for
                // the span (seed 964 in proptest-regressions): a typed refusal, never a hang
                // or wrong data.
                Err(e) => prop_assert!(false, "{mode:?}: {e}"),
            }
        }
    }
}

/// The regression: at queue depth 1 every 4 KiB append is alone in its instant and padded to
/// a whole page row, so a zone held a quarter of its capacity and 1-unit cleaning copies
/// used up the reserve until the host stalled with no free zone. Cleaning now appends its
/// copies in row-filling batches.
#[test]
fn a_lone_small_writer_still_fits_its_span_on_zones() {
    let p = Params {
        hot_fraction_percent: 5.0,
        hot_write_percent: 10,
        cold_request_kib: 4,
        queue_depth: 1,
        passes: 2,
        seed: 0,
        ..Params::default()
    };
    let zns = one(Mode::Zns, &p);
    assert!(zns.zones_cleaned > 0 && zns.units_verified > 0);
}

/// Seed 964 of the property test: 4 KiB writes at queue depth 3 leave most user appends alone
/// in their instant, padded to whole rows. Cleaning copies went to the same zones as the user
/// appends, which used up the zone a cleaning had opened from the reserve; the cleaning found
/// no zone for the rest of its copies and the run stopped with `HostOutOfSpace`. Copies now
/// have zones of their own.
#[test]
fn padded_user_appends_no_longer_eat_the_zone_a_cleaning_opened() {
    let p = Params {
        hot_fraction_percent: 24.03084152469079,
        hot_write_percent: 29,
        cold_request_kib: 4,
        queue_depth: 3,
        passes: 2,
        seed: 964,
        ..Params::default()
    };
    let zns = one(Mode::Zns, &p);
    assert!(zns.zones_cleaned > 0 && zns.units_verified > 0);
    assert!(zns.appends_retried > 0, "padding did fill user zones early");
}

/// Seed 539: 8 KiB cold writes at queue depth 3. With copy zones counted in units only, each
/// cleaning's last copy row was padded, the next cleaning's copy met a boundary error and
/// closed the copy zone out with half of it unused; each cleaning then used as much as it
/// freed, the host never had a zone for user writes, and the watchdog stopped the run after
/// 60 s of cleanings. The copy zone now counts the padded row.
#[test]
fn cleaning_frees_zones_when_its_own_last_row_is_padded() {
    let p = Params {
        hot_fraction_percent: 15.271898372829543,
        hot_write_percent: 40,
        cold_request_kib: 8,
        queue_depth: 3,
        passes: 2,
        seed: 539,
        ..Params::default()
    };
    let zns = one(Mode::Zns, &p);
    assert!(zns.zones_cleaned > 0 && zns.units_verified > 0);
}
