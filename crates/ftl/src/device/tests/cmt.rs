//! The cached mapping table (`ftl.mapping_cache_bytes`, DFTL): lookups that miss read
//! translation units from flash, dirty evictions program them, the translation units hold
//! the real entries, GC moves them like any unit, data stay correct across power cuts — each
//! checked against the reference model.

use super::*;
use crate::config::{MappingMode, ENTRIES_PER_TRANSLATION_UNIT, TRANSLATION_UNIT_BYTES};
use crate::device::MappingCacheStats;
use crate::recovery::recover;

/// A device whose logical space spans many translation units: 2 ch × 2 dies × 2 planes ×
/// 32 blocks × 32 pages of 8 KiB = 32 MiB raw, about 5 translation units of 4 MiB each.
fn cmt_flash() -> FlashConfig {
    FlashConfig {
        blocks_per_plane: 32,
        pages_per_block: 32,
        page_size_bytes: 8192,
        oob_size_bytes: 128,
        ..tiny_flash()
    }
}

fn cmt_ftl(cache_units: u64) -> FtlConfig {
    FtlConfig {
        mapping: MappingMode::Page,
        mapping_cache_bytes: Some(cache_units * TRANSLATION_UNIT_BYTES),
        ..tiny_ftl()
    }
}

fn cmt_stats(h: &Harness) -> MappingCacheStats {
    h.dev.stats().mapping_cache.clone().expect("a cached table")
}

/// Random 4 KiB reads (queue depth `qd`) over the whole logical space.
fn random_reads(h: &mut Harness, n: usize, qd: usize) {
    let units = h.sectors() / 8;
    for _ in 0..n {
        while h.inflight.len() >= qd {
            h.step();
        }
        let u = h.sim.rng().below(units);
        h.submit(BlockOp::Read, u * 8, 8);
    }
    h.run_until_done();
}

fn fill(h: &mut Harness) {
    let sectors = h.sectors();
    let mut lsn = 0;
    while lsn < sectors {
        while h.inflight.len() >= 8 {
            h.step();
        }
        let n = 256.min(sectors - lsn);
        h.submit(BlockOp::Write, lsn, n);
        lsn += n;
    }
    h.run_until_done();
}

#[test]
fn a_cache_as_large_as_the_table_keeps_it_in_dram() {
    let layout = Layout::new(&Geometry::from_config(&cmt_flash()), &cmt_ftl(1 << 20));
    assert_eq!(layout.translation_units(), 0);
    let h = Harness::new(cmt_flash(), cmt_ftl(1 << 20), 1);
    assert!(h.dev.stats().mapping_cache.is_none());
    let small = Layout::new(&Geometry::from_config(&cmt_flash()), &cmt_ftl(1));
    assert_eq!(
        small.translation_units(),
        small.host_entries().div_ceil(ENTRIES_PER_TRANSLATION_UNIT)
    );
    assert!(
        small.translation_units() >= 4,
        "{}",
        small.translation_units()
    );
    assert!(
        small.logical_bytes() < layout.logical_bytes(),
        "the table on flash takes its room from the logical capacity"
    );
}

/// Story: a DRAM-less design. Random reads over more translation units than the cache holds
/// miss at about the rate the cache's share of the table predicts, each miss a flash read
/// of a translation unit before the data read; reads stay correct and the entries read
/// back match the table.
#[test]
fn random_reads_miss_a_small_cache_and_read_translation_units() {
    let mut h = Harness::new(cmt_flash(), cmt_ftl(1), 5);
    fill(&mut h);
    let before = cmt_stats(&h);
    random_reads(&mut h, 2000, 8);
    assert!(h.errors.is_empty(), "{:?}", h.errors);
    let s = cmt_stats(&h);
    let tu = h.dev.layout().translation_units() as f64;
    let lookups = (s.hits + s.misses - before.hits - before.misses) as f64;
    let miss_rate = (s.misses - before.misses) as f64 / lookups;
    // One of `tu` translation units cached: a random lookup hits with probability ~1/tu.
    assert!(
        (miss_rate - (1.0 - 1.0 / tu)).abs() < 0.1,
        "miss rate {miss_rate} with {tu} translation units: {s:?}"
    );
    assert!(s.translation_reads > before.translation_reads, "{s:?}");
    assert!(s.translation_reads_checked > 100, "{s:?}");
    assert_eq!(s.translation_mismatches, 0, "{s:?}");
    // The same reads with the table in DRAM take less time: no translation reads.
    let mut dram = Harness::new(
        cmt_flash(),
        FtlConfig {
            mapping_cache_bytes: None,
            ..cmt_ftl(1)
        },
        5,
    );
    fill(&mut dram);
    let (t0, d0) = (h.sim.now(), dram.sim.now());
    random_reads(&mut h, 2000, 8);
    random_reads(&mut dram, 2000, 8);
    assert!(
        h.sim.now().since(t0) > dram.sim.now().since(d0),
        "misses cost flash reads"
    );
}

/// Sequential reads hit: one translation read per translation unit's 1,024 units.
#[test]
fn sequential_reads_hit_the_cache() {
    let mut h = Harness::new(cmt_flash(), cmt_ftl(2), 5);
    fill(&mut h);
    let before = cmt_stats(&h);
    let sectors = h.sectors();
    let mut lsn = 0;
    while lsn + 8 <= sectors {
        while h.inflight.len() >= 4 {
            h.step();
        }
        h.submit(BlockOp::Read, lsn, 8);
        lsn += 8;
    }
    h.run_until_done();
    assert!(h.errors.is_empty(), "{:?}", h.errors);
    let s = cmt_stats(&h);
    // A lookup waiting for a load in flight is a miss too (up to the queue depth of them
    // per translation unit), but they share one read.
    let tu = h.dev.layout().translation_units();
    let loads = s.translation_reads - before.translation_reads;
    assert!(
        loads <= tu + 2,
        "{loads} translation reads for {tu} translation units"
    );
    assert!(s.misses - before.misses <= 4 * tu, "{s:?}");
    assert!(s.hit_rate() > 0.95, "{s:?}");
}

/// Story: random overwrites with a cache of one translation unit: every change dirties a
/// translation unit, evictions write them back (more programs than with the table in DRAM,
/// counted in the write amplification), GC moves translation units with the data, and every
/// read returns the last write.
#[test]
fn random_writes_write_back_dirty_translation_units_and_keep_every_write() {
    let mut programs = Vec::new();
    for cache in [None, Some(TRANSLATION_UNIT_BYTES)] {
        let ftl = FtlConfig {
            mapping_cache_bytes: cache,
            ..cmt_ftl(1)
        };
        let mut h = Harness::new(cmt_flash(), ftl, 9);
        h.random_ops(20000, 8, 48);
        h.verify_all();
        assert!(h.errors.is_empty(), "{cache:?}: {:?}", h.errors);
        assert_eq!(h.dev.stats().integrity_errors, 0);
        h.dev.check_invariants();
        if cache.is_some() {
            let s = cmt_stats(&h);
            assert!(s.translation_writes > 0 && s.update_loads > 0, "{s:?}");
            assert!(s.translation_reads_checked > 0, "{s:?}");
            assert_eq!(s.translation_mismatches, 0, "{s:?}");
            assert!(h.dev.stats().gc_runs > 0);
        }
        programs.push(h.dev.backbone().stats().page_programs);
    }
    assert!(
        programs[1] > programs[0],
        "translation write-backs are programs: {programs:?}"
    );
}

/// A power cut with a cached table: the table recovers from the spare-area records as
/// without the cache; translation units written before the cut are rewritten on first use
/// (their entries may predate the recovered table), and every acknowledged write survives
/// and stays readable through the new cache.
#[test]
fn a_power_cut_with_a_cached_table_keeps_every_acknowledged_write() {
    let ftl = cmt_ftl(2);
    let mut h = Harness::new(cmt_flash(), ftl.clone(), 13);
    h.random_ops(3000, 8, 24);
    h.verify_all();
    assert!(cmt_stats(&h).translation_writes > 0);
    let Harness {
        dev,
        mut sim,
        mut reference,
        next_id,
        ..
    } = h;
    let mut bb = dev.bb;
    bb.power_cut(sim.rng());
    let mut sim = Sim::new(14);
    let (mut dev, _) = recover(bb, &ftl, sim.queue()).expect("recovers");
    dev.check_invariants();
    let sectors = reference.sectors();
    let data = dev.peek(0, sectors * SECTOR_BYTES).expect("peek");
    for s in 0..sectors {
        let sector = &data[(s * SECTOR_BYTES) as usize..((s + 1) * SECTOR_BYTES) as usize];
        if let Err(v) = reference.check_after_crash(s, sector) {
            panic!("sector {s} after the cut: {v:?}");
        }
        reference.settle_after_crash(s, sector);
    }
    let mut h = Harness {
        dev,
        sim,
        reference,
        inflight: BTreeMap::new(),
        next_id,
        errors: Vec::new(),
        placement: None,
    };
    h.random_ops(2000, 8, 24);
    h.verify_all();
    assert!(h.errors.is_empty(), "{:?}", h.errors);
    let s = cmt_stats(&h);
    assert_eq!(s.translation_mismatches, 0, "{s:?}");
    assert!(s.translation_writes > 0, "{s:?}");
}

#[test]
fn validation_names_the_mapping_cache_field() {
    let err = |ftl: FtlConfig| match ftl.validate(&cmt_flash()) {
        Err(nearflash_flash::ConfigError::Invalid { field, .. }) => field,
        other => panic!("accepted: {other:?}"),
    };
    let group = FtlConfig {
        mapping: MappingMode::PageGroup,
        ..cmt_ftl(2)
    };
    assert_eq!(err(group), "ftl.mapping_cache_bytes");
    let tiny = FtlConfig {
        mapping_cache_bytes: Some(100),
        ..cmt_ftl(2)
    };
    assert_eq!(err(tiny), "ftl.mapping_cache_bytes");
    let cramped = FtlConfig {
        scratchpad_bytes: 4096,
        ..cmt_ftl(2)
    };
    assert_eq!(err(cramped), "ftl.scratchpad_bytes");
    cmt_ftl(2).validate(&cmt_flash()).expect("valid");
}
