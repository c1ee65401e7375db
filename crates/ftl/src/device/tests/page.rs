//! Page-level mapping (`ftl.mapping = "page"`): 4 KiB units packed into one die's
//! multi-plane programs, GC that copies valid units, recovery from unit records — each
//! checked against the reference model.

use super::*;
use crate::config::MappingMode;
use crate::recovery::recover;

fn page_ftl() -> FtlConfig {
    FtlConfig {
        mapping: MappingMode::Page,
        ..tiny_ftl()
    }
}

/// Flash page programs (host and GC) since the device was formatted.
fn page_programs(h: &Harness) -> u64 {
    h.dev.backbone().stats().page_programs
}

/// Random 4 KiB writes at queue depth 8 over the whole device: page-group mapping programs
/// a whole group (4 pages) per write, page-level mapping packs the writes of an instant into
/// two-page programs.
#[test]
fn small_random_writes_program_units_not_whole_groups() {
    let mut programs = Vec::new();
    for mapping in [MappingMode::PageGroup, MappingMode::Page] {
        let ftl = FtlConfig {
            mapping,
            ..tiny_ftl()
        };
        let mut h = Harness::new(tiny_flash(), ftl, 3);
        let units = h.sectors() / 8;
        let before = page_programs(&h);
        for _ in 0..400 {
            while h.inflight.len() >= 8 {
                h.step();
            }
            let u = h.sim.rng().below(units);
            h.submit(BlockOp::Write, u * 8, 8);
        }
        h.run_until_done();
        h.verify_all();
        assert!(h.errors.is_empty(), "{mapping:?}: {:?}", h.errors);
        programs.push(page_programs(&h) - before);
    }
    let (group, page) = (programs[0], programs[1]);
    // 400 writes of one 4 KiB page: a group program is 4 pages (WAF >= 4) before GC.
    assert!(group >= 1600, "page-group mapping programmed {group} pages");
    assert!(
        page * 2 < group,
        "page-level mapping programmed {page} pages, page-group {group}"
    );
}

/// Overwriting a full device many times: GC moves valid units, never loses one, and the
/// mapping's invariants hold, under every victim policy.
#[test]
fn gc_copies_valid_units_and_keeps_every_write() {
    for policy in [
        GcPolicy::Greedy,
        GcPolicy::RoundRobin,
        GcPolicy::CostBenefit,
    ] {
        let ftl = FtlConfig {
            gc_policy: policy,
            ..page_ftl()
        };
        let mut h = Harness::new(tiny_flash(), ftl, 7);
        h.random_ops(4000, 8, 48);
        h.verify_all();
        let s = h.dev.stats().clone();
        let p = s.page_map.clone().expect("page-map stats");
        assert!(s.gc_runs > 10, "{policy:?}: gc ran {} times", s.gc_runs);
        assert!(p.gc_units_copied > 0, "{policy:?}: {p:?}");
        assert!(s.checkpoints_written > 0, "{policy:?}");
        assert_eq!(s.integrity_errors, 0);
        assert!(h.errors.is_empty(), "{policy:?}: {:?}", h.errors);
        h.dev.check_invariants();
    }
}

/// A unit still in the write buffer is read from there; a partial write of a unit merges
/// with its old sectors; whole-unit trims read as zeros.
#[test]
fn partial_unit_writes_merge_and_trims_unmap_whole_units() {
    let mut h = Harness::new(tiny_flash(), page_ftl(), 5);
    h.submit(BlockOp::Write, 0, 64);
    h.submit(BlockOp::Read, 0, 64);
    h.run_until_done();
    h.submit(BlockOp::Write, 3, 2); // inside unit 0
    h.submit(BlockOp::Write, 14, 6); // across units 1 and 2
    h.run_until_done();
    h.submit(BlockOp::Trim, 20, 20); // units 3 and 4 whole (24..40); 20..24 partial
    h.run_until_done();
    h.verify_all();
    assert!(h.errors.is_empty(), "{:?}", h.errors);
    let p = h.dev.stats().page_map.clone().expect("stats");
    assert!(p.rmw_unit_reads >= 2, "{p:?}");
    assert!(p.buffer_read_hits >= 1, "{p:?}");
    assert!(h.dev.mapping().lookup_unit(crate::layout::Lun(3)).is_none());
    assert!(h.dev.mapping().lookup_unit(crate::layout::Lun(2)).is_some());
}

/// A power cut with the host idle: recovery rebuilds every unit from the checkpoint and the
/// unit records of what was programmed after it.
#[test]
fn a_power_cut_recovers_every_acknowledged_unit() {
    for seed in [21, 22, 23] {
        let mut h = Harness::new(tiny_flash(), page_ftl(), seed);
        h.random_ops(2500, 8, 48);
        h.verify_all();
        let Harness {
            dev,
            mut sim,
            mut reference,
            ..
        } = h;
        let mut bb = dev.bb;
        bb.power_cut(sim.rng());
        let mut q = EventQueue::new();
        let (mut dev, report) = recover(bb, &page_ftl(), &mut q).expect("recovers");
        assert!(report.checkpoint_seq.is_some(), "{report:?}");
        dev.check_invariants();
        let sectors = reference.sectors();
        let data = dev.peek(0, sectors * SECTOR_BYTES).expect("peek");
        for s in 0..sectors {
            let sector = &data[(s * SECTOR_BYTES) as usize..((s + 1) * SECTOR_BYTES) as usize];
            if let Err(v) = reference.check_after_crash(s, sector) {
                panic!("seed {seed}: sector {s} after the cut: {v:?}");
            }
            reference.settle_after_crash(s, sector);
        }
    }
}

/// Injected program failures: a failed program's units are programmed elsewhere from the
/// buffer, the bad block is remapped, and no write is lost. Each run makes some 4,000
/// programs, so about one failure is expected per seed; five seeds make a run without any
/// failure unlikely (one seed alone once passed with none injected, found when the capacity
/// moved). A higher rate would use up the spares and end in "no space", a different story.
#[test]
fn program_failures_reprogram_the_fill_elsewhere() {
    let mut injected = 0;
    for seed in 11..16 {
        let mut flash = tiny_flash();
        flash.program_fail_probability = 0.0003;
        let ftl = FtlConfig {
            spare_blocks_per_plane: 4,
            ..page_ftl()
        };
        let mut h = Harness::new(flash, ftl, seed);
        h.random_ops(3000, 8, 48);
        h.verify_all();
        injected += h.dev.stats().program_failures;
        assert!(h.errors.is_empty(), "seed {seed}: {:?}", h.errors);
        h.dev.check_invariants();
    }
    assert!(injected > 0, "no failure was injected");
}

/// Page-level mapping needs pages of whole 4 KiB units and spare areas with a record per
/// unit; the configuration is refused, naming the field, otherwise.
#[test]
fn page_mapping_refuses_geometries_it_cannot_hold() {
    let mut flash = tiny_flash();
    flash.page_size_bytes = 2048;
    let e = page_ftl().validate(&flash).unwrap_err().to_string();
    assert!(e.contains("ftl.mapping"), "{e}");
    let mut flash = tiny_flash();
    flash.page_size_bytes = 8192;
    flash.oob_size_bytes = 64;
    let e = page_ftl().validate(&flash).unwrap_err().to_string();
    assert!(e.contains("flash.oob_size_bytes"), "{e}");
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(16))]

        /// Against the reference model, as for page-group mapping: any sequence of writes,
        /// reads, trims and flushes at any queue depth over a full device returns only legal
        /// data, and every sector reads back legally after.
        #[test]
        fn page_mapped_device_agrees_with_the_reference(
            ops in proptest::collection::vec((0u8..100, 0.0f64..1.0, 1u64..48), 200..1200),
            qd in 1usize..16,
            seed in any::<u64>(),
        ) {
            let mut h = Harness::new(tiny_flash(), page_ftl(), seed);
            let sectors = h.sectors();
            let mut lsn = 0;
            while lsn < sectors {
                let n = 64.min(sectors - lsn);
                h.submit(BlockOp::Write, lsn, n);
                lsn += n;
                while h.inflight.len() >= 8 {
                    h.step();
                }
            }
            h.run_until_done();
            for (kind, at, count) in ops {
                while h.inflight.len() >= qd {
                    h.step();
                }
                let lsn = ((sectors - count) as f64 * at) as u64;
                let op = match kind {
                    0..=59 => BlockOp::Write,
                    60..=91 => BlockOp::Read,
                    92..=96 => BlockOp::Trim,
                    _ => BlockOp::Flush,
                };
                h.submit(op, lsn, count);
            }
            h.run_until_done();
            h.verify_all();
            prop_assert!(h.errors.is_empty(), "{:?}", h.errors);
            h.dev.check_invariants();
        }
    }
}
