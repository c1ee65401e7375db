//! One-shot programs (`flash.one_shot_pages`) under page-level mapping: fills bound for
//! native superblocks hold a word line's slices and are programmed in one operation, so a
//! program-bound device writes about `one_shot_pages` times faster; data, GC, program
//! failures, the SLC write cache and power cuts all keep every acknowledged write.

use super::*;
use crate::config::MappingMode;
use crate::recovery::recover;
use crate::testing::{tiny_slc_flash, tiny_slc_ftl};

/// The tiny device with 24-page blocks and a 600 us program (program-bound: a two-plane
/// word line crosses the bus in ~62 us), TLC word lines of `k` pages.
fn flash(k: u32) -> FlashConfig {
    FlashConfig {
        one_shot_pages: k,
        ..tiny_slc_flash()
    }
}

fn ftl() -> FtlConfig {
    FtlConfig {
        mapping: MappingMode::Page,
        ..tiny_ftl()
    }
}

fn page_map(h: &Harness) -> PageMapStats {
    h.dev.stats().page_map.clone().expect("page-map stats")
}

/// Writes `bytes` sequentially from sector 0 in 64 KiB requests at queue depth 8; returns
/// the time taken.
fn write_sequential(h: &mut Harness, bytes: u64) -> SimDuration {
    let start = h.sim.now();
    let end = bytes / SECTOR_BYTES;
    let mut at = 0;
    while at < end {
        while h.inflight.len() >= 8 {
            h.step();
        }
        let n = 128.min(end - at);
        h.submit(BlockOp::Write, at, n);
        at += n;
    }
    h.run_until_done();
    h.sim.now().since(start)
}

/// `n` random 4 KiB writes at queue depth `qd`; returns the time taken.
fn write_random(h: &mut Harness, n: u32, qd: usize) -> SimDuration {
    let start = h.sim.now();
    let units = h.sectors() / 8;
    for _ in 0..n {
        while h.inflight.len() >= qd {
            h.step();
        }
        let u = h.sim.rng().below(units);
        h.submit(BlockOp::Write, u * 8, 8);
    }
    h.run_until_done();
    h.sim.now().since(start)
}

#[test]
fn sequential_writes_program_word_lines_three_times_faster() {
    let bytes = 2 << 20;
    let mut runs = Vec::new();
    for k in [1, 3] {
        let mut h = Harness::new(flash(k), ftl(), 5);
        let t = write_sequential(&mut h, bytes);
        h.verify_all();
        assert!(h.errors.is_empty(), "k = {k}: {:?}", h.errors);
        h.dev.check_invariants();
        runs.push((t, page_map(&h), h.dev.backbone().stats().clone()));
    }
    let (t1, p1, f1) = &runs[0];
    let (t3, p3, f3) = &runs[1];
    // Each program holds a word line's units: a third as many programs, the same pages.
    assert_eq!(p1.host_units, p3.host_units);
    assert!(
        p3.host_programs * 3 <= p1.host_programs + 3,
        "{} word-line programs against {} page programs",
        p3.host_programs,
        p1.host_programs
    );
    assert!(f3.page_programs <= f1.page_programs + 24, "{f3:?} {f1:?}");
    let speedup = t1.as_ns() as f64 / t3.as_ns() as f64;
    assert!(
        (2.6..3.1).contains(&speedup),
        "time per byte fell {speedup:.2}x (k=1 {t1:?}, k=3 {t3:?})"
    );
}

#[test]
fn random_4k_writes_share_word_lines_and_run_about_three_times_faster() {
    let mut runs = Vec::new();
    for k in [1, 3] {
        let mut h = Harness::new(flash(k), ftl(), 9);
        let t = write_random(&mut h, 600, 32);
        h.verify_all();
        assert!(h.errors.is_empty(), "k = {k}: {:?}", h.errors);
        h.dev.check_invariants();
        runs.push((t, page_map(&h)));
    }
    let (t1, p1) = &runs[0];
    let (t3, p3) = &runs[1];
    assert!(
        p3.host_programs * 2 < p1.host_programs,
        "{p3:?} against {p1:?}"
    );
    let speedup = t1.as_ns() as f64 / t3.as_ns() as f64;
    assert!(
        speedup > 2.4,
        "time per byte fell {speedup:.2}x (k=1 {t1:?}, k=3 {t3:?})"
    );
}

/// Overwriting the device many times with mixed requests: GC copies units into word lines
/// (its fills hold three slices, its run's last one padded) and nothing is lost.
#[test]
fn gc_copies_into_word_lines_and_keeps_every_write() {
    for policy in [GcPolicy::Greedy, GcPolicy::RoundRobin] {
        let ftl = FtlConfig {
            gc_policy: policy,
            ..ftl()
        };
        let mut h = Harness::new(flash(3), ftl, 7);
        h.random_ops(4000, 8, 48);
        h.verify_all();
        let s = h.dev.stats().clone();
        let p = page_map(&h);
        assert!(s.gc_runs > 5, "{policy:?}: gc ran {} times", s.gc_runs);
        assert!(p.gc_units_copied > 0, "{policy:?}: {p:?}");
        assert!(h.errors.is_empty(), "{policy:?}: {:?}", h.errors);
        h.dev.check_invariants();
    }
}

/// A failed word-line program fails its fill, whose units are programmed elsewhere from
/// the buffer.
#[test]
fn a_failed_word_line_is_programmed_elsewhere() {
    let mut flash = flash(3);
    flash.program_fail_probability = 0.0003;
    let ftl = FtlConfig {
        spare_blocks_per_plane: 4,
        ..ftl()
    };
    let mut h = Harness::new(flash, ftl, 11);
    h.random_ops(3000, 8, 48);
    h.verify_all();
    assert!(
        h.dev.stats().program_failures > 0,
        "no failure was injected"
    );
    assert!(h.errors.is_empty(), "{:?}", h.errors);
    h.dev.check_invariants();
}

/// With the SLC write cache on, host fills are one slice while the cache takes writes and
/// a word line once it is full; folding copies into word lines. A fill sized for one kind
/// that lands in the other is padded or split — every write still reads back.
#[test]
fn the_slc_cache_takes_single_pages_and_native_superblocks_take_word_lines() {
    let ftl = FtlConfig {
        mapping: MappingMode::Page,
        ..tiny_slc_ftl()
    };
    let mut h = Harness::new(flash(3), ftl, 13);
    write_sequential(&mut h, 3 << 20);
    h.random_ops(3000, 16, 48);
    h.verify_all();
    assert!(h.errors.is_empty(), "{:?}", h.errors);
    let slc = h.dev.stats().slc.clone().expect("cache on");
    assert!(
        slc.slc_write_bytes > 0 && slc.tlc_direct_write_bytes > 0,
        "{slc:?}"
    );
    h.dev.check_invariants();
}

/// A power cut after a mixed workload: recovery reads every page's unit records (a word
/// line's pages each carry their own) and every acknowledged unit comes back.
#[test]
fn a_power_cut_recovers_every_acknowledged_unit_of_word_lines() {
    for seed in [21, 22, 23] {
        let mut h = Harness::new(flash(3), ftl(), seed);
        h.random_ops(2500, 8, 48);
        // Leave writes in flight, some of them in tPROG.
        let sectors = h.sectors();
        for _ in 0..6 {
            let lsn = h.sim.rng().below(sectors - 8);
            h.submit(BlockOp::Write, lsn, 8);
        }
        for _ in 0..5 {
            h.step();
        }
        let Harness {
            dev,
            mut sim,
            mut reference,
            inflight,
            ..
        } = h;
        let mut bb = dev.bb;
        bb.power_cut(sim.rng());
        let mut q = EventQueue::new();
        let (mut dev, _) = recover(bb, &ftl(), &mut q).expect("recovers");
        dev.check_invariants();
        let sectors = reference.sectors();
        let data = dev.peek(0, sectors * SECTOR_BYTES).expect("peek");
        for s in 0..sectors {
            let sector = &data[(s * SECTOR_BYTES) as usize..((s + 1) * SECTOR_BYTES) as usize];
            if let Err(v) = reference.check_after_crash(s, sector) {
                panic!(
                    "seed {seed}: sector {s} after the cut ({} in flight): {v:?}",
                    inflight.len()
                );
            }
            reference.settle_after_crash(s, sector);
        }
    }
}

#[test]
fn page_group_mapping_refuses_one_shot_programs() {
    let e = tiny_ftl().validate(&flash(3)).unwrap_err().to_string();
    assert!(e.contains("flash.one_shot_pages"), "{e}");
    ftl()
        .validate(&flash(3))
        .expect("page-level mapping takes word lines");
}
