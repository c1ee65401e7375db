//! zbd jobs on the zoned drive, bare and through NVMe: placement, resets, limits, reports.

use super::*;
use nearflash_sim::Fidelity;

const ZONED: &[&str] = &["zns.enabled=true"];

use crate::runner::tests::run_test_min as run_on;

fn zoned(text: &str) -> FioRun {
    run_on(text, ZONED, Fidelity::Timing).unwrap()
}

fn zone_kib() -> u64 {
    let p = Preset::load("test-min", &["zns.enabled=true".to_string()]).unwrap();
    format(&p).unwrap().zone_bytes() / 1024
}

fn figure(r: &FioRun, key: &str) -> u64 {
    r.nearflash["zoned"][key].as_u64().unwrap()
}

/// A sequential job over four zones fills them in order at their write pointers (the
/// drive refuses a write anywhere else); its second loop wraps to the first zone and
/// resets each full zone before writing it again.
#[test]
fn a_sequential_zbd_write_job_fills_zones_and_resets_them_when_it_wraps() {
    let z = zone_kib();
    let one_pass = zoned(&format!(
        "[w]\nzonemode=zbd\nrw=write\nbs=16k\nsize={}k\niodepth=4\n",
        4 * z
    ));
    let s = &one_pass.jobs[0].stats;
    assert_eq!((s.errors, s.zone_resets), (0, 0));
    assert_eq!(s.dirs[1].io_bytes, 4 * z * 1024);
    assert_eq!(one_pass.nearflash["zoned"]["zones_by_state"]["full"], 4);
    let two = zoned(&format!(
        "[w]\nzonemode=zbd\nrw=write\nbs=16k\nsize={}k\nloops=2\niodepth=4\n",
        4 * z
    ));
    let s = &two.jobs[0].stats;
    assert_eq!((s.errors, s.zone_resets), (0, 4), "each zone reset once");
    assert_eq!(
        figure(&two, "zone_resets"),
        4,
        "the drive ran the four resets"
    );
    let waf = two.nearflash["waf"].as_f64().unwrap();
    assert!((0.99..1.01).contains(&waf), "whole rows, no GC: WAF {waf}");
}

/// examples/fio/zbd.fio's random writer: writes drawn over 8 zones at random go to at
/// most 4 open zones at their write pointers; it writes the region three times over, so
/// full zones are drawn again and reset. No write fails (a write off a write pointer
/// would), and the drive never holds more than 4 open zones.
#[test]
fn a_random_write_job_on_four_open_zones_wraps_and_resets_full_zones() {
    let z = zone_kib();
    let r = zoned(&format!(
        "[w]\nzonemode=zbd\nmax_open_zones=4\nrw=randwrite\nbs=16k\nsize={}k\n\
         io_size={}k\niodepth=8\n",
        8 * z,
        24 * z
    ));
    let s = &r.jobs[0].stats;
    assert_eq!(s.errors, 0, "{:?}", s.first_error);
    assert_eq!(s.dirs[1].io_bytes, 24 * z * 1024);
    assert!(s.zone_resets >= 8, "{} resets", s.zone_resets);
    assert_eq!(figure(&r, "zone_resets"), s.zone_resets);
    assert_eq!(r.nearflash["zoned"]["write_zones_max"], 4);
    let by_state = &r.nearflash["zoned"]["zones_by_state"];
    let open = by_state["implicitly open"].as_u64().unwrap_or(0)
        + by_state["closed"].as_u64().unwrap_or(0);
    assert!(open <= 4, "{by_state}");
    assert_eq!(
        figure(&r, "active_zones_peak"),
        4,
        "the drive held the 4 targets at once"
    );
}

/// A writer leaves zones partly written; a random reader after it (stonewall) reads only
/// below the write pointers — every read checked against the drive's zone table when
/// issued. The same reader with read_beyond_wp=1 does read past them: the check can fail.
#[test]
fn a_random_read_job_never_reads_past_a_write_pointer() {
    let z = zone_kib();
    let text = |beyond: u32| {
        format!(
            "[global]\nzonemode=zbd\nsize={}k\nbs=16k\n\
             [w]\nmax_open_zones=4\nrw=randwrite\nnumber_ios=40\n\
             [r]\nstonewall\nrw=randread\nnumber_ios=400\niodepth=8\nread_beyond_wp={beyond}\n",
            8 * z
        )
    };
    let r = zoned(&text(0));
    let reads = r.jobs[1].stats.dirs[0].total_ios;
    assert_eq!(reads, 400);
    assert_eq!(figure(&r, "reads"), 400);
    assert_eq!(figure(&r, "reads_past_write_pointer"), 0);
    let beyond = zoned(&text(1));
    assert!(figure(&beyond, "reads_past_write_pointer") > 0);
}

#[test]
fn a_sequential_reader_reads_only_what_was_written_and_stops() {
    let z = zone_kib();
    let r = zoned(&format!(
        "[global]\nzonemode=zbd\nsize={}k\nbs=16k\n[w]\nrw=write\nnumber_ios=20\n\
         [r]\nstonewall\nrw=read\n",
        4 * z
    ));
    // 20 writes of 16 KiB: the reader reads those 320 KiB and finds nothing more.
    assert_eq!(r.jobs[1].stats.dirs[0].io_bytes, 20 * 16 * 1024);
    assert_eq!(figure(&r, "reads_past_write_pointer"), 0);
}

/// fio's zone_reset_threshold / zone_reset_frequency: once half the region lies below
/// write pointers, every 4th write resets its zone first — long before zones fill, so
/// the run resets many times more often than the same job without them, and the drive
/// erased each reset zone.
#[test]
fn zone_reset_threshold_and_frequency_reset_zones_before_they_fill() {
    let z = zone_kib();
    let job = |extra: &str| {
        zoned(&format!(
            "[w]\nzonemode=zbd\nmax_open_zones=4\nrw=randwrite\nbs=16k\nsize={}k\n\
             io_size={}k\niodepth=4\n{extra}",
            8 * z,
            16 * z
        ))
    };
    let plain = job("");
    let early = job("zone_reset_threshold=0.5\nzone_reset_frequency=0.25\n");
    let (a, b) = (&plain.jobs[0].stats, &early.jobs[0].stats);
    assert_eq!((a.errors, b.errors), (0, 0));
    assert!(
        b.zone_resets > 2 * a.zone_resets,
        "{} vs {}",
        b.zone_resets,
        a.zone_resets
    );
    assert_eq!(figure(&early, "zone_resets"), b.zone_resets);
    let erases = early.nearflash["flash_block_erases"].as_u64().unwrap();
    assert!(
        erases >= b.zone_resets,
        "each reset erased its zone's blocks"
    );
}

/// Two writers (numjobs=2) share the write target zones, as fio's jobs share
/// `zbd_info`: together they keep at most max_open_zones zones open and every write lands
/// at a write pointer.
#[test]
fn clones_share_the_open_zone_limit() {
    let z = zone_kib();
    let r = zoned(&format!(
        "[w]\nzonemode=zbd\nmax_open_zones=3\nrw=randwrite\nbs=16k\nsize={}k\n\
         io_size={}k\niodepth=4\nnumjobs=2\n",
        8 * z,
        12 * z
    ));
    assert_eq!(r.jobs.len(), 2);
    for j in &r.jobs {
        assert_eq!(j.stats.errors, 0, "{:?}", j.stats.first_error);
        assert_eq!(j.stats.dirs[1].io_bytes, 12 * z * 1024);
    }
    assert_eq!(
        figure(&r, "active_zones_peak"),
        3,
        "both jobs together, 3 zones at once"
    );
    let resets: u64 = r.jobs.iter().map(|j| j.stats.zone_resets).sum();
    assert_eq!(figure(&r, "zone_resets"), resets);
}

/// Through the NVMe front end (the default) two writers share four zones at depth 8:
/// NVMe does not order commands, so the host keeps one write in flight per zone (fio's
/// zone lock across jobs, the block layer's zone write plug within one) and the rest wait
/// in the zone's queue. No write lands off its write pointer, every command crossed the
/// front end, and the bare drive, which takes requests in order, runs the same jobs with
/// several writes in flight to a zone.
#[test]
fn through_nvme_a_zones_writes_go_one_at_a_time_and_none_fails() {
    let z = zone_kib();
    let text = format!(
        "[w]\nzonemode=zbd\nmax_open_zones=2\nrw=randwrite\nbs=16k\nsize={}k\n\
         io_size={}k\niodepth=8\nnumjobs=2\n",
        4 * z,
        8 * z
    );
    let r = zoned(&text);
    assert_eq!(r.nearflash["interface"], "nvme");
    for j in &r.jobs {
        assert_eq!(j.stats.errors, 0, "{:?}", j.stats.first_error);
        assert_eq!(j.stats.dirs[1].io_bytes, 8 * z * 1024);
    }
    assert_eq!(figure(&r, "zone_writes_in_flight_peak"), 1);
    assert!(
        figure(&r, "writes_serialised") > 0,
        "depth 8 on 2 zones: writes waited for their zone's previous one"
    );
    let writes: u64 = r.jobs.iter().map(|j| j.stats.dirs[1].total_ios).sum();
    let resets = figure(&r, "zone_resets");
    let commands = r.nearflash["nvme"]["commands"].as_u64().unwrap();
    assert!(
        commands >= writes + resets,
        "{commands} commands for {writes} writes and {resets} resets"
    );
    assert_eq!(
        r.nearflash["nvme"]["zone_commands"].as_u64().unwrap(),
        resets,
        "each reset a Zone Management Send"
    );
    let bare = crate::runner::run(
        &crate::jobfile::tests::one(&text).unwrap(),
        std::path::Path::new("job.fio"),
        &RunOptions {
            preset: "test-min".into(),
            overrides: vec!["zns.enabled=true".into()],
            seed: 1,
            fidelity: Fidelity::Timing,
            interface: Interface::Bare,
            precondition: None,
        },
        &mut |_, _, _| {},
    )
    .unwrap();
    assert_eq!(bare.nearflash["interface"], "bare");
    assert!(bare.nearflash["zoned"].get("writes_serialised").is_none());
    for j in &bare.jobs {
        assert_eq!(j.stats.errors, 0, "{:?}", j.stats.first_error);
    }
}

#[test]
fn zonemode_zbd_and_the_drive_must_agree() {
    let job = "[j]\nzonemode=zbd\nrw=write\nsize=1m\n";
    let e = run_on(job, &[], Fidelity::Timing).unwrap_err().to_string();
    assert!(
        e.contains("zonemode=zbd needs a zoned drive") && e.contains("zns.enabled"),
        "{e}"
    );
    let e = run_on("[j]\nrw=write\nsize=1m\n", ZONED, Fidelity::Timing)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("the drive is zoned") && e.contains("zonemode=zbd"),
        "{e}"
    );
}

#[test]
fn zone_geometry_and_limits_that_do_not_fit_the_drive_are_refused_naming_both() {
    let z = zone_kib() * 1024;
    for (extra, want) in [
        (
            "zonesize=64k\n".to_string(),
            format!("zonesize 65536 does not match the drive's zone size {z}"),
        ),
        (
            "max_open_zones=15\n".to_string(),
            "max_open_zones 15 is larger than the drive's max open zones 14".to_string(),
        ),
        ("bs=12k\n".to_string(), "divides the zone size".to_string()),
        ("size=64k\n".to_string(), "holds no whole zone".to_string()),
    ] {
        let text = format!("[j]\nzonemode=zbd\nrw=randwrite\nsize=2m\n{extra}");
        let e = run_on(&text, ZONED, Fidelity::Timing)
            .unwrap_err()
            .to_string();
        assert!(e.contains(&want), "{extra}: {e}");
    }
    let e = run_on(
        "[j]\nzonemode=zbd\nrw=write\nsize=2m\n",
        ZONED,
        Fidelity::Functional,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("timing fidelity"), "{e}");
}

#[test]
fn a_region_off_zone_boundaries_is_aligned_as_fio_aligns_it() {
    let z = zone_kib();
    let r = zoned(&format!(
        "[w]\nzonemode=zbd\nrw=write\nbs=16k\noffset=16k\nsize={}k\n",
        3 * z
    ));
    // [16k, 3 zones + 16k) holds zones 1 and 2 whole: fio rounds the start up and the
    // end down, and says so.
    assert_eq!(r.jobs[0].stats.dirs[1].io_bytes, 2 * z * 1024);
    assert!(
        r.notes.iter().any(|n| n.contains("aligned to zones")),
        "{:?}",
        r.notes
    );
}
