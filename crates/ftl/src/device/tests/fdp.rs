//! Flexible Data Placement (`[fdp]`): handles keep their data in superblocks of their own,
//! GC honours their isolation type, the logs and I/O Management commands answer from the
//! device's state, and all of it survives a power cut — each run checked against the
//! reference model.

use super::*;
use crate::config::MappingMode;
use crate::fdp::{FdpConfig, FdpError, FdpEventType, FdpLog, HandleType, HandleUsage};
use crate::recovery::recover;

fn fdp_ftl(handles: u32, handle_type: HandleType) -> FtlConfig {
    FtlConfig {
        mapping: MappingMode::Page,
        fdp: FdpConfig {
            enabled: true,
            handles,
            handle_type,
            reclaim_groups: 1,
        },
        ..tiny_ftl()
    }
}

/// Three streams by address: 64 KiB regions take handles 0, 1, 2 in turn.
fn three_streams(lsn: u64) -> u16 {
    ((lsn / 128) % 3) as u16
}

/// The data superblocks holding mapped units, with the handles of those units.
fn handles_by_superblock(dev: &Device) -> BTreeMap<u32, BTreeSet<u8>> {
    let mut out: BTreeMap<u32, BTreeSet<u8>> = BTreeMap::new();
    for lun in 0..dev.layout.host_entries() as u32 {
        if let Some(pun) = dev.map.lookup_unit(crate::layout::Lun(lun)) {
            let sb = dev.layout.sb_of(dev.layout.split_pun(pun).0);
            out.entry(sb.0).or_default().insert(dev.unit_handle(lun));
        }
    }
    out
}

#[test]
fn each_handle_fills_superblocks_of_its_own() {
    let mut h = Harness::new(tiny_flash(), fdp_ftl(3, HandleType::InitiallyIsolated), 5);
    h.placement = Some(Box::new(three_streams));
    // Well under the capacity: no GC yet, so every superblock was written by the host.
    let units = h.sectors() / 8;
    for _ in 0..units / 2 {
        while h.inflight.len() >= 8 {
            h.step();
        }
        let u = h.sim.rng().below(units);
        h.submit(BlockOp::Write, u * 8, 8);
    }
    h.run_until_done();
    assert_eq!(h.dev.stats().gc_runs, 0);
    h.verify_all();
    h.dev.check_invariants();
    let by_sb = handles_by_superblock(&h.dev);
    let mut owners = BTreeSet::new();
    for (sb, handles) in &by_sb {
        assert_eq!(
            handles.len(),
            1,
            "superblock {sb} holds handles {handles:?}"
        );
        let owner = h.dev.sbs.get(SbId(*sb)).ruh;
        assert_eq!(owner, handles.first().copied(), "superblock {sb}");
        owners.insert(owner);
    }
    assert_eq!(owners.len(), 3, "{owners:?}");
    assert!(h.errors.is_empty(), "{:?}", h.errors);
}

/// GC under both isolation types on a device overwritten several times: persistently
/// isolated handles' data is never mixed, not even by GC (`check_invariants` asserts that
/// every superblock a handle owns holds only its units); initially isolated handles' data
/// meets in GC's shared superblocks.
#[test]
fn gc_keeps_persistently_isolated_handles_apart_and_mixes_initially_isolated_ones() {
    for ty in [
        HandleType::PersistentlyIsolated,
        HandleType::InitiallyIsolated,
    ] {
        let mut h = Harness::new(tiny_flash(), fdp_ftl(3, ty), 9);
        h.placement = Some(Box::new(three_streams));
        for _ in 0..6 {
            h.random_ops(800, 8, 48);
            h.dev.check_invariants();
        }
        h.verify_all();
        assert!(h.errors.is_empty(), "{ty:?}: {:?}", h.errors);
        let s = h.dev.stats().clone();
        assert!(s.gc_runs > 10, "{ty:?}: {} GC runs", s.gc_runs);
        let by_sb = handles_by_superblock(&h.dev);
        let mixed = by_sb.values().filter(|hs| hs.len() > 1).count();
        let shared = by_sb
            .keys()
            .filter(|&&sb| h.dev.sbs.get(SbId(sb)).ruh.is_none())
            .count();
        match ty {
            HandleType::PersistentlyIsolated => {
                assert_eq!((mixed, shared), (0, 0), "{by_sb:?}");
            }
            HandleType::InitiallyIsolated => {
                assert!(shared > 0 && mixed > 0, "{by_sb:?}");
            }
        }
        let f = s.fdp.expect("FDP counters");
        assert!(f.handles.iter().all(|x| x.gc_bytes_copied > 0), "{f:?}");
    }
}

#[test]
fn a_placement_identifier_naming_no_handle_writes_through_handle_0_and_is_logged() {
    let mut h = Harness::new(tiny_flash(), fdp_ftl(2, HandleType::InitiallyIsolated), 1);
    h.placement = Some(Box::new(|lsn| if lsn < 64 { 7 } else { 1 }));
    h.submit(BlockOp::Write, 0, 8);
    h.submit(BlockOp::Write, 64, 8);
    h.run_until_done();
    h.verify_all();
    assert_eq!(h.dev.unit_handle(0), 0, "placed by handle 0");
    assert_eq!(h.dev.unit_handle(8), 1);
    let events = h.dev.fdp_events(false).unwrap();
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0].kind, FdpEventType::InvalidPlacementId);
    assert_eq!(events[0].pid, Some(7));
    let s = h.dev.stats().fdp.clone().unwrap();
    assert_eq!(s.invalid_placement_ids, 1);
    assert_eq!(s.handles[0].host_bytes_written, 4096);
    assert_eq!(s.handles[1].host_bytes_written, 4096);
}

#[test]
fn a_handle_update_moves_the_handle_on_and_logs_the_part_written_unit() {
    let mut h = Harness::new(tiny_flash(), fdp_ftl(2, HandleType::InitiallyIsolated), 2);
    h.placement = Some(Box::new(|_| 1));
    h.submit(BlockOp::Write, 0, 64);
    h.run_until_done();
    let before = h.dev.ruh_status().unwrap();
    let full = u64::from(h.dev.layout.write_points()) * h.dev.reclaim_unit_bytes() / SECTOR_BYTES;
    assert_eq!(
        before[0].available_media_writes, full,
        "handle 0 wrote nothing"
    );
    assert!(before[1].available_media_writes < full, "{before:?}");
    let open: Vec<SbId> = h
        .dev
        .points(crate::device::alloc::Stream::Host(1))
        .iter()
        .flatten()
        .map(|wp| wp.sb)
        .collect();
    assert!(!open.is_empty());
    let now = h.sim.now();
    // An unknown identifier refuses the whole command.
    assert_eq!(
        h.dev.ruh_update(&[1, 9], now),
        Err(FdpError::InvalidPlacementId { pid: 9 })
    );
    assert_eq!(h.dev.ruh_status().unwrap(), before);
    h.dev.ruh_update(&[1], now).unwrap();
    for sb in &open {
        assert_eq!(h.dev.sbs.get(*sb).state, SbState::Closed, "{sb:?}");
    }
    let after = h.dev.ruh_status().unwrap();
    assert_eq!(after[1].available_media_writes, full);
    let events = h.dev.fdp_events(false).unwrap();
    assert!(!events.is_empty());
    assert!(events
        .iter()
        .all(|e| e.kind == FdpEventType::RuNotFullyWritten && e.location == Some((1, 0))));
    // Writes go on into new superblocks, and GC reclaims the closed ones' unwritten rest.
    h.submit(BlockOp::Write, 64, 64);
    h.run_until_done();
    h.verify_all();
    assert!(h.errors.is_empty(), "{:?}", h.errors);
    h.dev.check_invariants();
}

#[test]
fn the_statistics_log_counts_host_and_media_bytes_per_handle() {
    let mut h = Harness::new(
        tiny_flash(),
        fdp_ftl(3, HandleType::PersistentlyIsolated),
        4,
    );
    h.placement = Some(Box::new(three_streams));
    h.random_ops(3000, 8, 48);
    // Let GC and checkpoints in flight finish, so that every program has completed.
    while !h.dev.is_quiescent() {
        assert!(h.step());
    }
    let s = h.dev.stats().clone();
    let f = s.fdp.clone().unwrap();
    assert_eq!(f.host_bytes_written, s.host_write_bytes);
    assert_eq!(
        f.handles.iter().map(|x| x.host_bytes_written).sum::<u64>(),
        f.host_bytes_written
    );
    // Media: every host and GC program's unit slots, and the checkpoints.
    let page_bytes = u64::from(h.dev.layout.geo.page_size_bytes);
    let programs = h.dev.backbone().stats().page_programs * page_bytes;
    assert_eq!(f.media_bytes_written, programs, "{f:?}");
    let by_handle: u64 = f.handles.iter().map(|x| x.media_bytes_written).sum();
    assert_eq!(
        by_handle + f.shared_filler_bytes + s.checkpoint_pages * page_bytes,
        f.media_bytes_written
    );
    assert!(f.media_bytes_erased > 0);
    let log = h.dev.fdp_statistics().unwrap();
    assert!(log.waf().unwrap() > 1.0);
    for x in &f.handles {
        assert!(x.waf().unwrap() >= 1.0, "{x:?}");
    }
    let bytes = h.dev.fdp_log(FdpLog::Statistics).unwrap();
    assert_eq!(
        u128::from_le_bytes(bytes[0..16].try_into().unwrap()),
        u128::from(f.host_bytes_written)
    );
}

#[test]
fn the_configuration_and_usage_logs_describe_the_drive() {
    let h = Harness::new(
        tiny_flash(),
        fdp_ftl(4, HandleType::PersistentlyIsolated),
        1,
    );
    let c = h.dev.fdp_configuration().unwrap();
    assert_eq!(c.handle_types, vec![2; 4]);
    assert_eq!((c.reclaim_groups, c.rgif), (1, 0));
    // A superblock: 16 page rows of 2 channels × 2 planes × 4 KiB.
    assert_eq!(c.reclaim_unit_bytes, 16 * 16 * 1024);
    let log = h.dev.fdp_log(FdpLog::Configurations).unwrap();
    assert_eq!(log.len(), 16 + 64 + 4 * 4);
    assert_eq!(h.dev.ruh_usage().unwrap(), vec![HandleUsage::Host; 4]);
    assert_eq!(h.dev.fdp_log(FdpLog::HostEvents).unwrap().len(), 64);
    assert_eq!(FdpLog::from_lid(0x23, true), Some(FdpLog::ControllerEvents));
}

#[test]
fn a_drive_without_fdp_refuses_its_commands_and_ignores_directives() {
    let mut h = Harness::new(
        tiny_flash(),
        FtlConfig {
            mapping: MappingMode::Page,
            ..tiny_ftl()
        },
        1,
    );
    h.placement = Some(Box::new(|_| 3));
    h.submit(BlockOp::Write, 0, 16);
    h.run_until_done();
    h.verify_all();
    assert!(h.errors.is_empty());
    assert!(h.dev.stats().fdp.is_none());
    assert_eq!(h.dev.ruh_status(), Err(FdpError::Disabled));
    assert_eq!(h.dev.ruh_update(&[0], h.sim.now()), Err(FdpError::Disabled));
    assert_eq!(h.dev.fdp_log(FdpLog::Statistics), Err(FdpError::Disabled));
}

#[test]
fn fdp_needs_page_mapping_and_refuses_the_slc_cache_naming_the_field() {
    let field = |ftl: FtlConfig, flash: FlashConfig| match ftl.validate(&flash) {
        Err(nearflash_flash::ConfigError::Invalid { field, .. }) => field,
        other => panic!("accepted: {other:?}"),
    };
    let mut t = fdp_ftl(2, HandleType::InitiallyIsolated);
    t.mapping = MappingMode::PageGroup;
    assert_eq!(field(t, tiny_flash()), "fdp.enabled");
    let t = FtlConfig {
        slc_cache: crate::testing::tiny_slc_ftl().slc_cache,
        ..fdp_ftl(2, HandleType::InitiallyIsolated)
    };
    assert_eq!(field(t, crate::testing::tiny_slc_flash()), "fdp.enabled");
    assert_eq!(
        field(fdp_ftl(0, HandleType::InitiallyIsolated), tiny_flash()),
        "fdp.handles"
    );
    let mut t = fdp_ftl(2, HandleType::InitiallyIsolated);
    t.fdp.reclaim_groups = 3;
    assert_eq!(field(t, tiny_flash()), "fdp.reclaim_groups");
    // Every handle keeps write points open: too many for the tiny device's superblocks.
    assert_eq!(
        field(fdp_ftl(32, HandleType::PersistentlyIsolated), tiny_flash()),
        "fdp.handles"
    );
}

/// The placement that FDP exists for: a hot stream (4 KiB writes at random over an eighth of
/// the drive) and a cold stream (16 KiB writes in order over the rest, one for every three
/// hot ones) written at the same time. On one handle every superblock mixes them, and GC
/// copies the cold data out of superblocks whose hot data died, again and again; on a
/// handle each, the cold stream's superblocks are invalidated whole by its next pass and
/// the hot stream's are mostly invalid when collected. (Static wear-leveling is off: the
/// separation makes the hot superblocks wear faster, and moving the cold ones to even that
/// out is a cost of its own, measured in docs/fdp.md.)
#[test]
fn hot_and_cold_streams_on_their_own_handles_copy_less_than_on_one() {
    let fdp = FtlConfig {
        wear_leveling_spread_pe: 0,
        ..fdp_ftl(2, HandleType::InitiallyIsolated)
    };
    let conventional = FtlConfig {
        fdp: FdpConfig {
            enabled: false,
            ..fdp.fdp.clone()
        },
        ..fdp.clone()
    };
    // The FDP drive's capacity for both (the conventional drive holds back fewer write
    // points, so the span leaves it a little more spare room: the comparison favours it).
    let units = Harness::new(tiny_flash(), fdp.clone(), 11).sectors() / 8;
    let hot = units / 8;
    let mut copied = Vec::new();
    for ftl in [conventional, fdp] {
        let mut h = Harness::new(tiny_flash(), ftl, 11);
        h.placement = Some(Box::new(move |lsn| u16::from(lsn >= hot * 8)));
        let mut cold_next = hot;
        let mut written = 0;
        for i in 1.. {
            if written >= 12 * units {
                break;
            }
            while h.inflight.len() >= 8 {
                h.step();
            }
            let (u, n) = if i % 4 == 0 {
                if cold_next + 4 > units {
                    cold_next = hot;
                }
                cold_next += 4;
                (cold_next - 4, 4)
            } else {
                (h.sim.rng().below(hot), 1)
            };
            written += n;
            h.submit(BlockOp::Write, u * 8, n * 8);
        }
        h.run_until_done();
        h.verify_all();
        assert!(h.errors.is_empty(), "{:?}", h.errors);
        h.dev.check_invariants();
        copied.push(h.dev.stats().page_map.as_ref().unwrap().gc_units_copied);
    }
    let (one, two) = (copied[0], copied[1]);
    // Measured: 22,025 units on one handle, 817 on two.
    assert!(
        two * 8 < one,
        "GC copied {one} units on one handle, {two} on two"
    );
}

/// A power cut: the units' handles, the superblocks' owners and the counters come back as
/// the checkpoint and the spare areas hold them, and recovery logs the handles whose
/// reclaim units it left part-written.
#[test]
fn fdp_state_survives_a_power_cut() {
    let ftl = fdp_ftl(3, HandleType::PersistentlyIsolated);
    let mut h = Harness::new(tiny_flash(), ftl.clone(), 21);
    h.placement = Some(Box::new(three_streams));
    h.random_ops(2500, 8, 48);
    let handles_before: Vec<u8> = (0..h.dev.layout.host_entries() as u32)
        .map(|u| h.dev.unit_handle(u))
        .collect();
    let (saved, started) = h.dev.fdp_stats_durable();
    let saved = saved.cloned().expect("a checkpoint");
    let mut durable = started.to_vec();
    durable.push(saved);
    assert!(durable.iter().all(|s| s.host_bytes_written > 0));
    let Harness { dev, mut sim, .. } = h;
    let mut bb = dev.bb;
    bb.power_cut(sim.rng());
    let mut q = EventQueue::new();
    let (dev, _) = recover(bb, &ftl, &mut q).expect("recovers");
    let now = dev.stats().fdp.clone().unwrap();
    let key = |s: &crate::device::FdpStats| {
        (
            s.host_bytes_written,
            s.media_bytes_written,
            s.handles.clone(),
        )
    };
    assert!(
        durable.iter().any(|s| key(s) == key(&now)),
        "recovered {now:?}, checkpointed {durable:?}"
    );
    for (u, &before) in handles_before.iter().enumerate() {
        if dev.map.lookup_unit(crate::layout::Lun(u as u32)).is_some() {
            assert_eq!(dev.unit_handle(u as u32), before, "unit {u}");
        }
    }
    dev.check_invariants();
    let resets: Vec<_> = dev
        .fdp_events(false)
        .unwrap()
        .into_iter()
        .filter(|e| e.kind == FdpEventType::ControllerResetModifiedRuh)
        .collect();
    assert!(!resets.is_empty(), "open units were cut part-written");
}

/// The power-cut test on FDP drives of both isolation types: writes spread over the
/// handles (`testing::workload_pid`, with invalid identifiers and handle updates mixed in),
/// and after each cut no acknowledged write is lost and the counters are the checkpoint's.
#[test]
fn power_cuts_on_fdp_drives_lose_nothing_and_keep_the_logs() {
    for ty in [
        HandleType::InitiallyIsolated,
        HandleType::PersistentlyIsolated,
    ] {
        let ftl = fdp_ftl(3, ty);
        let cfg = crate::CrashTestConfig {
            ops_per_seed: 400,
            ops_after_recovery: 150,
            ..Default::default()
        };
        for seed in 0..12 {
            let out = crate::run_seed(&tiny_flash(), &ftl, &cfg, seed);
            assert!(out.passed(), "{ty:?} seed {seed}: {out:?}");
            assert_eq!(out.no_space_errors, 0, "{ty:?} seed {seed}");
        }
    }
}

/// One run of the hot/cold workload of `hot_and_cold_streams_...` on a larger device, for
/// docs/fdp.md: (host units, filler units, GC units copied, media bytes per host byte).
fn hot_cold_run(
    flash: &FlashConfig,
    ftl: &FtlConfig,
    span_units: u64,
    cold_units: u64,
) -> (u64, u64, u64, f64) {
    let mut h = Harness::new(flash.clone(), ftl.clone(), 11);
    let hot = span_units / 8;
    h.placement = Some(Box::new(move |lsn| u16::from(lsn >= hot * 8)));
    let mut cold_next = hot;
    let mut written = 0;
    for i in 1.. {
        if written >= 12 * span_units {
            break;
        }
        while h.inflight.len() >= 8 {
            h.step();
        }
        let (u, n) = if i % 4 == 0 {
            if cold_next + cold_units > span_units {
                cold_next = hot;
            }
            cold_next += cold_units;
            (cold_next - cold_units, cold_units)
        } else {
            (h.sim.rng().below(hot), 1)
        };
        written += n;
        h.submit(BlockOp::Write, u * 8, n * 8);
    }
    h.run_until_done();
    h.verify_all();
    assert!(h.errors.is_empty(), "{:?}", h.errors);
    let s = h.dev.stats();
    let pm = s.page_map.as_ref().unwrap();
    let page_bytes = u64::from(h.dev.layout.geo.page_size_bytes);
    let media = h.dev.backbone().stats().page_programs * page_bytes;
    (
        pm.host_units,
        pm.pad_units,
        pm.gc_units_copied,
        media as f64 / s.host_write_bytes as f64,
    )
}

/// Random 4 KiB writes over half the drive (no GC, no periodic checkpoint) in timing
/// fidelity — plain, or placed at random over `handles` handles: (host writes per wall
/// second, simulation events per wall second).
fn write_speed(flash: &FlashConfig, ftl: &FtlConfig, handles: u16) -> (f64, f64) {
    let ftl = FtlConfig {
        checkpoint_interval_us: 0.0,
        ..ftl.clone()
    };
    let mut h = Harness::with_fidelity(flash.clone(), ftl, 3, false);
    if handles > 0 {
        h.placement = Some(Box::new(move |lsn| {
            ((lsn / 8 * 2_654_435_761) % u64::from(handles)) as u16
        }));
    }
    let units = h.sectors() / 8 / 2;
    let wall = std::time::Instant::now();
    for _ in 0..units {
        while h.inflight.len() >= 32 {
            h.step();
        }
        let u = h.sim.rng().below(units);
        h.submit(BlockOp::Write, u * 8, 8);
    }
    h.run_until_done();
    assert_eq!(h.dev.stats().gc_runs, 0);
    let secs = wall.elapsed().as_secs_f64();
    (units as f64 / secs, h.sim.events() as f64 / secs)
}

/// The figures of docs/fdp.md: `cargo test -p nearflash-ftl --profile ci --lib
/// fdp_measured -- --ignored --nocapture`.
#[test]
#[ignore = "measurement: prints docs/fdp.md's tables"]
fn fdp_measured() {
    // 2 channels × 2 ways × 2 planes × 96 blocks × 32 pages of 4 KiB: 48 MiB.
    let flash = FlashConfig {
        blocks_per_plane: 96,
        pages_per_block: 32,
        ..tiny_flash()
    };
    let base = |ty: HandleType, enabled: bool| FtlConfig {
        wear_leveling_spread_pe: 0,
        fdp: FdpConfig {
            enabled,
            ..fdp_ftl(2, ty).fdp
        },
        ..fdp_ftl(2, ty)
    };
    let span = Harness::new(
        flash.clone(),
        base(HandleType::PersistentlyIsolated, true),
        1,
    )
    .sectors()
        / 8;
    println!("| drive | cold write | host units | filler units | GC units copied | WAF |");
    println!("|---|---|---|---|---|---|");
    for (name, ftl) in [
        ("conventional", base(HandleType::InitiallyIsolated, false)),
        (
            "FDP, 2 initially isolated handles",
            base(HandleType::InitiallyIsolated, true),
        ),
        (
            "FDP, 2 persistently isolated handles",
            base(HandleType::PersistentlyIsolated, true),
        ),
    ] {
        for cold in [4u64, 1] {
            let (host, pads, copied, waf) = hot_cold_run(&flash, &ftl, span, cold);
            println!(
                "| {name} | {} KiB | {host} | {pads} | {copied} | {waf:.2} |",
                cold * 4
            );
        }
    }
    // Speed: a larger drive (256 blocks × 64 pages per plane: 256 MiB), best of five.
    let big = FlashConfig {
        blocks_per_plane: 256,
        pages_per_block: 64,
        ..tiny_flash()
    };
    let best = |ftl: &FtlConfig, handles: u16| {
        (0..5)
            .map(|_| write_speed(&big, ftl, handles))
            .fold((0.0f64, 0.0f64), |a, b| if b.0 > a.0 { b } else { a })
    };
    let plain = best(&base(HandleType::InitiallyIsolated, false), 0);
    println!("\n| drive | host writes / wall s | vs conventional | events / wall s |");
    println!("|---|---|---|---|");
    println!("| conventional | {:.0} | 1.00 | {:.0} |", plain.0, plain.1);
    for handles in [2u32, 8] {
        let ftl = FtlConfig {
            fdp: FdpConfig {
                handles,
                ..base(HandleType::InitiallyIsolated, true).fdp
            },
            ..base(HandleType::InitiallyIsolated, true)
        };
        let v = best(&ftl, handles as u16);
        println!(
            "| FDP, {handles} handles, writes spread over them | {:.0} | {:.2} | {:.0} |",
            v.0,
            v.0 / plain.0,
            v.1
        );
    }
}

fn grouped_ftl(handles: u32, handle_type: HandleType, groups: u32) -> FtlConfig {
    let mut c = fdp_ftl(handles, handle_type);
    c.fdp.reclaim_groups = groups;
    c
}

/// Units written one 4 KiB unit at a time at random over the whole logical space, each
/// placed in reclaim group 0 (lower half of the units) or 1 (upper half), alternating
/// handles by unit: after several overwrites, with GC busy in both groups, every mapped
/// unit lies on its group's ways — GC copies a victim only into its own group — and both
/// groups' superblocks were erased (collected).
#[test]
fn two_reclaim_groups_keep_their_data_and_their_gc_on_their_own_dies() {
    for ty in [
        HandleType::InitiallyIsolated,
        HandleType::PersistentlyIsolated,
    ] {
        let mut h = Harness::new(tiny_flash(), grouped_ftl(2, ty, 2), 11);
        let units = h.sectors() / 8;
        let half = units / 2;
        // RGIF = 1: the top bit names the group.
        h.placement = Some(Box::new(move |lsn| {
            let u = lsn / 8;
            (u16::from(u >= half) << 15) | (u % 2) as u16
        }));
        for _ in 0..5 * units {
            while h.inflight.len() >= 8 {
                h.step();
            }
            let u = h.sim.rng().below(units);
            h.submit(BlockOp::Write, u * 8, 8);
        }
        h.run_until_done();
        h.dev.check_invariants();
        h.verify_all();
        assert!(h.errors.is_empty(), "{ty:?}: {:?}", h.errors);
        assert!(h.dev.stats().gc_runs > 10, "{ty:?}");
        for u in 0..units as u32 {
            let Some(pun) = h.dev.map.lookup_unit(crate::layout::Lun(u)) else {
                continue;
            };
            let sb = h.dev.layout.sb_of(h.dev.layout.split_pun(pun).0);
            assert_eq!(
                h.dev.sb_group(sb),
                u32::from(u64::from(u) >= half),
                "{ty:?}: unit {u} in superblock {sb:?}"
            );
        }
        for g in 0..2 {
            let erased = (0..h.dev.layout.data_superblocks())
                .filter(|&s| h.dev.sb_group(SbId(s)) == g && h.dev.sbs.get(SbId(s)).pe > 0)
                .count();
            assert!(erased > 0, "{ty:?}: group {g} was never collected");
        }
        // Status: one entry per (handle, group), the group in the identifier's top bit.
        let pids: Vec<u16> = h.dev.ruh_status().unwrap().iter().map(|s| s.pid).collect();
        assert_eq!(pids, [0, 0x8000, 1, 0x8001], "{ty:?}");
        let c = h.dev.fdp_configuration().unwrap();
        assert_eq!((c.reclaim_groups, c.rgif), (2, 1));
    }
}

/// Three reclaim groups (RGIF = 2 bits) on a device of three ways: group 3 does not exist.
/// A write whose Placement Identifier names it is placed through placement handle 0 of
/// group 0 and logged as an Invalid Placement Identifier event (as a placement handle out
/// of range is, QEMU's and FEMU's rule); an update naming it is refused whole.
#[test]
fn a_placement_identifier_naming_no_reclaim_group_is_an_invalid_placement_identifier() {
    let flash = FlashConfig {
        dies_per_package: 3,
        ..tiny_flash()
    };
    let mut h = Harness::new(flash, grouped_ftl(2, HandleType::InitiallyIsolated, 3), 3);
    let bad = 3 << 14 | 1;
    h.placement = Some(Box::new(
        move |lsn| if lsn < 64 { bad } else { 2 << 14 | 1 },
    ));
    h.submit(BlockOp::Write, 0, 8);
    h.submit(BlockOp::Write, 64, 8);
    h.run_until_done();
    h.verify_all();
    let group_of_unit = |h: &Harness, u: u32| {
        let pun = h.dev.map.lookup_unit(crate::layout::Lun(u)).unwrap();
        h.dev
            .sb_group(h.dev.layout.sb_of(h.dev.layout.split_pun(pun).0))
    };
    assert_eq!((h.dev.unit_handle(0), group_of_unit(&h, 0)), (0, 0));
    assert_eq!((h.dev.unit_handle(8), group_of_unit(&h, 8)), (1, 2));
    let events = h.dev.fdp_events(false).unwrap();
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0].kind, FdpEventType::InvalidPlacementId);
    assert_eq!(events[0].pid, Some(bad));
    assert_eq!(
        h.dev.ruh_update(&[1, bad], h.sim.now()),
        Err(FdpError::InvalidPlacementId { pid: bad })
    );
    assert_eq!(h.dev.stats().fdp.as_ref().unwrap().ruh_updates, 0);
}
