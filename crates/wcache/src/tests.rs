//! The buffer over the tiny FTL device (`ftl::testing`, functional fidelity): write latency,
//! read hits and merges, watermark and idle destaging, FLUSH, FUA, backpressure, overwrites
//! during destage, and a property test against the reference model with no power cuts.

use super::*;
use nearflash_blockdev::verify::Reference;
use nearflash_flash::{Geometry, MemoryStore, NoStore, PageStore};
use nearflash_ftl::testing::{tiny_flash, tiny_ftl};
use nearflash_ftl::{Device, Event};
use nearflash_sim::Sim;
use proptest::prelude::*;

type Ev = WcEvent<Event>;

struct Harness {
    sim: Sim<Ev>,
    wc: WriteCache<Device>,
    done: Vec<BlockCompletion>,
    next_id: u64,
}

fn small(units: u64) -> WriteCacheConfig {
    WriteCacheConfig {
        enabled: true,
        capacity_bytes: units * 4096,
        ..WriteCacheConfig::default()
    }
}

impl Harness {
    fn new(cfg: WriteCacheConfig, seed: u64) -> Harness {
        let flash = tiny_flash();
        let pages = Geometry::from_config(&flash).page_count();
        Self::over(
            cfg,
            seed,
            Box::new(MemoryStore::new(pages, flash.page_size_bytes)),
        )
    }

    /// Timing fidelity: no data anywhere.
    fn timing(cfg: WriteCacheConfig, seed: u64) -> Harness {
        Self::over(cfg, seed, Box::new(NoStore))
    }

    fn over(cfg: WriteCacheConfig, seed: u64, store: Box<dyn PageStore>) -> Harness {
        Self::over_ftl(cfg, seed, store, &tiny_ftl())
    }

    fn over_ftl(
        cfg: WriteCacheConfig,
        seed: u64,
        store: Box<dyn PageStore>,
        ftl: &nearflash_ftl::FtlConfig,
    ) -> Harness {
        let mut sim = Sim::new(seed);
        let flash = tiny_flash();
        let dev = Device::format(&flash, ftl, store, &mut sim.queue().map(WcEvent::Device))
            .expect("tiny device formats");
        Harness {
            sim,
            wc: WriteCache::new(cfg, dev).expect("valid config"),
            done: Vec::new(),
            next_id: 0,
        }
    }

    fn submit(&mut self, op: BlockOp, sector: u64, count: u64, data: Vec<u8>, fua: bool) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        let req = BlockRequest {
            id,
            op,
            offset_bytes: sector * SECTOR_BYTES,
            len_bytes: if op == BlockOp::Flush {
                0
            } else {
                count * SECTOR_BYTES
            },
            data,
        };
        if fua {
            self.wc.submit_fua(req, self.sim.queue());
        } else {
            self.wc.submit(req, self.sim.queue());
        }
        self.wc.take_completions(&mut self.done);
        id
    }

    fn write(&mut self, sector: u64, count: u64, byte: u8) -> u64 {
        let data = vec![byte; (count * SECTOR_BYTES) as usize];
        self.submit(BlockOp::Write, sector, count, data, false)
    }

    fn step(&mut self) -> bool {
        let more = self.sim.step(&mut self.wc);
        self.wc.take_completions(&mut self.done);
        self.wc.check_invariants();
        more
    }

    /// Runs until request `id` completes; returns its completion.
    fn wait(&mut self, id: u64) -> BlockCompletion {
        loop {
            if let Some(i) = self.done.iter().position(|c| c.id == id) {
                return self.done.remove(i);
            }
            assert!(self.step(), "request {id} never completed");
        }
    }

    /// Runs `us` of simulated time.
    fn run_for(&mut self, us: u64) {
        let end = self.sim.now() + SimDuration::from_us(us);
        while self.sim.next_deadline().is_some_and(|t| t <= end) {
            self.step();
        }
    }
}

#[test]
fn a_4k_write_completes_in_buffer_time_not_after_a_flash_program() {
    let mut h = Harness::new(small(64), 1);
    let id = h.write(0, 8, 0xAB);
    let c = h.wait(id);
    c.result.unwrap();
    let latency_us = c.completed.since(c.submitted).as_us_f64();
    // 4096 B at 6,400 MB/s is 0.64 us; a program of the tiny device takes 200 us.
    assert!(latency_us < 1.0, "buffered write took {latency_us} us");
    assert_eq!(h.wc.occupied_units(), 1);
    assert_eq!(
        h.wc.device().stats().host_writes,
        0,
        "nothing reached the FTL yet"
    );
}

#[test]
fn a_read_after_a_write_returns_the_buffered_data_from_the_buffer() {
    let mut h = Harness::new(small(64), 1);
    let id = h.write(16, 8, 0x5A);
    h.wait(id).result.unwrap();
    let id = h.submit(BlockOp::Read, 16, 8, Vec::new(), false);
    let c = h.wait(id);
    assert_eq!(c.data, vec![0x5A; 4096]);
    assert_eq!(h.wc.stats().read_hits, 1);
    assert!(c.completed.since(c.submitted).as_us_f64() < 1.0);
}

#[test]
fn a_sector_write_is_merged_with_the_device_data_on_read() {
    let mut h = Harness::new(small(64), 1);
    let id = h.submit(BlockOp::Write, 0, 8, vec![1; 4096], true);
    h.wait(id).result.unwrap();
    assert_eq!(
        h.wc.occupied_units(),
        0,
        "a FUA write leaves the buffer durable"
    );
    let id = h.write(2, 1, 2);
    h.wait(id).result.unwrap();
    assert_eq!(h.wc.occupied_units(), 1);
    let id = h.submit(BlockOp::Read, 0, 8, Vec::new(), false);
    let c = h.wait(id);
    let mut want = vec![1u8; 4096];
    want[1024..1536].fill(2);
    assert_eq!(c.data, want);
    assert_eq!(h.wc.stats().read_partial_hits, 1);
}

#[test]
fn watermark_destaging_starts_at_the_high_mark_and_stops_at_the_low_one() {
    let cfg = WriteCacheConfig {
        high_watermark_percent: 50.0,
        low_watermark_percent: 25.0,
        idle_destage_us: 1e9,
        destage_inflight_max: 2,
        ..small(16)
    };
    let mut h = Harness::new(cfg, 1);
    // Seven scattered units: below the high mark (8), nothing moves.
    for u in 0..7 {
        let id = h.write(u * 32, 8, u as u8);
        h.wait(id).result.unwrap();
    }
    h.run_for(5_000);
    assert_eq!(h.wc.stats().destage_jobs, 0);
    let id = h.write(7 * 32, 8, 7);
    h.wait(id).result.unwrap();
    h.run_for(20_000);
    let occupied = h.wc.occupied_units();
    assert!(h.wc.stats().destage_jobs > 0);
    assert!(
        (2..=4).contains(&occupied),
        "stops at the low mark (4), less what was in flight: {occupied}"
    );
    assert_eq!(h.wc.destages_in_flight(), 0);
}

#[test]
fn an_idle_host_lets_the_buffer_drain() {
    let mut h = Harness::new(small(64), 1);
    let id = h.write(40, 8, 9);
    h.wait(id).result.unwrap();
    h.run_for(500);
    assert_eq!(h.wc.occupied_units(), 1, "not idle long enough (1 ms)");
    h.run_for(5_000);
    assert_eq!(h.wc.occupied_units(), 0);
    assert_eq!(h.wc.stats().destaged_bytes, 4096);
}

#[test]
fn flush_waits_for_the_destage_of_every_unit_dirty_at_its_arrival() {
    let mut h = Harness::new(small(64), 1);
    for u in 0..4 {
        let id = h.write(u * 8, 8, u as u8 + 1);
        h.wait(id).result.unwrap();
    }
    let id = h.submit(BlockOp::Flush, 0, 0, Vec::new(), false);
    let c = h.wait(id);
    c.result.unwrap();
    assert!(
        c.completed.since(c.submitted).as_us_f64() > 200.0,
        "a flush of dirty data waits for a program"
    );
    assert_eq!(h.wc.occupied_units(), 0);
    assert_eq!(
        h.wc.stats().destage_jobs,
        1,
        "four contiguous units coalesce"
    );
    assert_eq!(h.wc.stats().destage_writes, 1);
    // An empty buffer flushes at once (the device's own flush is a barrier).
    let id = h.submit(BlockOp::Flush, 0, 0, Vec::new(), false);
    let c = h.wait(id);
    assert!(c.completed.since(c.submitted).as_us_f64() < 1.0);
}

#[test]
fn a_fua_write_completes_only_once_durable() {
    let mut h = Harness::new(small(64), 1);
    let id = h.submit(BlockOp::Write, 8, 8, vec![3; 4096], true);
    let c = h.wait(id);
    c.result.unwrap();
    assert!(c.completed.since(c.submitted).as_us_f64() > 200.0);
    assert_eq!(h.wc.occupied_units(), 0);
    assert_eq!(h.wc.stats().fua_writes, 1);
}

#[test]
fn a_full_buffer_makes_writes_wait_for_destaging() {
    let cfg = WriteCacheConfig {
        destage_inflight_max: 1,
        ..small(4)
    };
    let mut h = Harness::new(cfg, 1);
    let ids: Vec<u64> = (0..12).map(|u| h.write(u * 64, 8, u as u8)).collect();
    for id in ids {
        h.wait(id).result.unwrap();
    }
    let s = h.wc.stats();
    assert_eq!(s.occupancy_peak_units, 4);
    assert!(s.writes_waited >= 8, "{s:?}");
    assert!(s.write_wait_ns > 200_000, "waits span programs: {s:?}");
}

#[test]
fn an_overwrite_during_destage_keeps_the_newer_version_dirty() {
    let mut h = Harness::new(small(64), 1);
    let id = h.write(0, 8, 1);
    h.wait(id).result.unwrap();
    let flush = h.submit(BlockOp::Flush, 0, 0, Vec::new(), false);
    // Let the destage start, then overwrite while it is in flight.
    while h.wc.destages_in_flight() == 0 {
        h.step();
    }
    let id = h.write(0, 8, 2);
    h.wait(id).result.unwrap();
    h.wait(flush).result.unwrap();
    assert_eq!(h.wc.occupied_units(), 1, "the newer version is still dirty");
    let id = h.submit(BlockOp::Flush, 0, 0, Vec::new(), false);
    h.wait(id).result.unwrap();
    assert_eq!(h.wc.occupied_units(), 0);
    let id = h.submit(BlockOp::Read, 0, 8, Vec::new(), false);
    assert_eq!(
        h.wait(id).data,
        vec![2; 4096],
        "the device holds the newer version"
    );
}

#[test]
fn bad_requests_fail_without_being_buffered() {
    let mut h = Harness::new(small(64), 1);
    let cap_sectors = h.wc.capacity_bytes() / SECTOR_BYTES;
    let id = h.write(cap_sectors - 4, 8, 1);
    assert!(matches!(h.wait(id).result, Err(IoError::OutOfRange { .. })));
    let id = h.submit(BlockOp::Write, 0, 8, vec![0; 100], false);
    assert!(matches!(
        h.wait(id).result,
        Err(IoError::PayloadSize { .. })
    ));
    assert_eq!(h.wc.occupied_units(), 0);
}

#[test]
fn the_volatile_write_cache_is_reported_unless_power_loss_protected() {
    let h = Harness::new(small(64), 1);
    assert!(h.wc.volatile_write_cache());
    let h = Harness::new(
        WriteCacheConfig {
            plp: true,
            ..small(64)
        },
        1,
    );
    assert!(!h.wc.volatile_write_cache());
}

#[test]
fn timing_fidelity_buffers_and_destages_without_data() {
    let mut h = Harness::timing(small(8), 1);
    let ids: Vec<u64> = (0..32)
        .map(|u| h.submit(BlockOp::Write, u * 8, 8, Vec::new(), u % 5 == 0))
        .collect();
    for id in ids {
        h.wait(id).result.unwrap();
    }
    let id = h.submit(BlockOp::Read, 0, 256, Vec::new(), false);
    let c = h.wait(id);
    c.result.unwrap();
    assert!(c.data.is_empty());
    let id = h.submit(BlockOp::Flush, 0, 0, Vec::new(), false);
    h.wait(id).result.unwrap();
    assert_eq!(h.wc.occupied_units(), 0);
    assert_eq!(h.wc.stats().destaged_bytes, 32 * 4096);
}

#[test]
fn a_disabled_buffer_passes_requests_straight_through() {
    let mut h = Harness::new(
        WriteCacheConfig {
            enabled: false,
            ..small(64)
        },
        1,
    );
    let id = h.write(0, 8, 4);
    let c = h.wait(id);
    c.result.unwrap();
    assert!(
        c.completed.since(c.submitted).as_us_f64() > 200.0,
        "a flash program"
    );
    assert_eq!(h.wc.occupied_units(), 0);
    assert_eq!(h.wc.stats().writes, 0);
    assert!(!h.wc.volatile_write_cache());
    let id = h.submit(BlockOp::Read, 0, 8, Vec::new(), false);
    assert_eq!(h.wait(id).data, vec![4; 4096]);
}

#[test]
fn the_same_seed_gives_the_same_trace() {
    let run = |seed| {
        let mut h = Harness::new(small(8), seed);
        let ids: Vec<u64> = (0..40)
            .map(|i| h.write((i * 37) % 2000, 1 + i % 9, i as u8))
            .collect();
        for id in ids {
            h.wait(id);
        }
        h.sim.trace_hash().finish()
    };
    assert_eq!(run(3), run(3));
}

#[derive(Clone, Debug)]
enum Op {
    Write { lsn: u64, count: u64, fua: bool },
    Read { lsn: u64, count: u64 },
    Trim { lsn: u64, count: u64 },
    Flush,
}

fn op() -> impl Strategy<Value = Op> {
    // The first 1,024 sectors (32 page groups of the tiny device), so ops collide.
    prop_oneof![
        5 => (0u64..1024, 1u64..24, prop::bool::weighted(0.1))
            .prop_map(|(lsn, count, fua)| Op::Write { lsn, count, fua }),
        3 => (0u64..1024, 1u64..24).prop_map(|(lsn, count)| Op::Read { lsn, count }),
        1 => (0u64..1024, 1u64..80).prop_map(|(lsn, count)| Op::Trim { lsn, count }),
        1 => Just(Op::Flush),
    ]
}

enum Pending {
    Read {
        lsn: u64,
        before: Vec<nearflash_blockdev::verify::AckedAt>,
    },
    Write {
        lsn: u64,
        count: u64,
        stamp: u32,
    },
    Trim {
        lsn: u64,
        count: u64,
        stamp: u32,
    },
    Flush,
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Functional fidelity with no power cut: every read returns the newest completed write
    /// (or something newer in flight), whatever the buffer size, queue depth and mix.
    #[test]
    fn every_read_returns_the_newest_completed_write(
        ops in prop::collection::vec(op(), 1..160),
        units in 1u64..12,
        depth in 1usize..8,
        seed in 0u64..1000,
    ) {
        let cfg = WriteCacheConfig {
            destage_inflight_max: 1 + (seed % 3) as u32,
            destage_bytes_max: 4096 * (1 + seed % 4),
            ..small(units)
        };
        let mut h = Harness::new(cfg, seed);
        let sectors = h.wc.capacity_bytes() / SECTOR_BYTES;
        let group = h.wc.device().layout().group_bytes() / SECTOR_BYTES;
        let mut r = Reference::new(sectors, group);
        let mut pending: BTreeMap<u64, Pending> = BTreeMap::new();
        let mut ops = ops.into_iter();
        let mut issued_all = false;
        loop {
            while pending.len() < depth && !issued_all {
                let Some(op) = ops.next() else {
                    issued_all = true;
                    break;
                };
                let (id, p) = match op {
                    Op::Write { lsn, count, fua } => {
                        let (data, stamp) = r.issue_write(lsn, count);
                        let id = h.submit(BlockOp::Write, lsn, count, data, fua);
                        (id, Pending::Write { lsn, count, stamp })
                    }
                    Op::Read { lsn, count } => {
                        let before = r.acked_at(lsn, count);
                        (h.submit(BlockOp::Read, lsn, count, Vec::new(), false), Pending::Read { lsn, before })
                    }
                    Op::Trim { lsn, count } => {
                        let stamp = r.issue_trim(lsn, count);
                        (h.submit(BlockOp::Trim, lsn, count, Vec::new(), false), Pending::Trim { lsn, count, stamp })
                    }
                    Op::Flush => (h.submit(BlockOp::Flush, 0, 0, Vec::new(), false), Pending::Flush),
                };
                pending.insert(id, p);
            }
            for c in std::mem::take(&mut h.done) {
                prop_assert!(c.result.is_ok(), "{:?}", c.result);
                match pending.remove(&c.id).expect("a pending request") {
                    Pending::Write { lsn, count, stamp } => r.ack_write(lsn, count, stamp),
                    Pending::Trim { lsn, count, stamp } => r.ack_trim(lsn, count, stamp),
                    Pending::Read { lsn, before } => {
                        if let Err(v) = r.check_read(lsn, &before, &c.data) {
                            prop_assert!(false, "read {}: {:?}", c.id, v);
                        }
                    }
                    Pending::Flush => {}
                }
            }
            if issued_all && pending.is_empty() {
                break;
            }
            prop_assert!(h.step(), "stalled with {} pending", pending.len());
        }
    }
}

/// Flexible Data Placement through the buffer: writes tagged with placement handles 1 and 2
/// share buffer units, an untagged write follows them, and a one-sector overwrite moves a
/// sector to handle 3. At the FLUSH each run of sectors reaches the FTL under the directive
/// of its newest write — never two handles' sectors in one destage write — so the drive's
/// FDP statistics count each handle's host bytes exactly.
#[test]
fn destaging_keeps_each_sectors_placement_handle_and_never_merges_two_handles() {
    use nearflash_ftl::fdp::FdpConfig;
    let ftl = nearflash_ftl::FtlConfig {
        mapping: nearflash_ftl::MappingMode::Page,
        fdp: FdpConfig {
            enabled: true,
            handles: 4,
            ..FdpConfig::default()
        },
        ..tiny_ftl()
    };
    let mut h = Harness::over_ftl(small(8), 3, Box::new(NoStore), &ftl);
    let placed = |h: &mut Harness, sector: u64, count: u64, pid: u16| {
        let id = h.next_id;
        h.next_id += 1;
        let req = BlockRequest {
            id,
            op: BlockOp::Write,
            offset_bytes: sector * SECTOR_BYTES,
            len_bytes: count * SECTOR_BYTES,
            data: Vec::new(),
        };
        h.wc.submit_placed(None, req, false, PlacementDirective(pid), h.sim.queue());
        id
    };
    let writes = [
        placed(&mut h, 0, 4, 1),
        placed(&mut h, 4, 4, 2),
        placed(&mut h, 8, 8, 1),
        h.submit(BlockOp::Write, 16, 8, Vec::new(), false),
        placed(&mut h, 2, 1, 3),
    ];
    for id in writes {
        assert_eq!(h.wait(id).result, Ok(()));
    }
    assert_eq!(
        h.wc.stats().destage_writes,
        0,
        "all of it is still buffered"
    );
    let flush = h.submit(BlockOp::Flush, 0, 0, Vec::new(), false);
    assert_eq!(h.wait(flush).result, Ok(()));
    // Runs: 0-1 (1), 2 (3), 3 (1), 4-7 (2), 8-15 (1), 16-23 (none: handle 0).
    assert_eq!(h.wc.stats().destage_writes, 6);
    let fdp = h.wc.device().stats().fdp.clone().expect("FDP is on");
    let host: Vec<u64> = fdp.handles.iter().map(|s| s.host_bytes_written).collect();
    let s = SECTOR_BYTES;
    assert_eq!(host, [8 * s, 11 * s, 4 * s, s]);
}
