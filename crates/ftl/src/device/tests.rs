//! Device scenario tests on a tiny geometry, each checked against the `verify::Reference`
//! model: GC, trims, flushes, injected failures, wear-out, and clean-shutdown recovery.

use super::*;
use crate::config::GcPolicy;
use crate::recovery::recover;
use crate::testing::{tiny_flash, tiny_ftl};
use crate::verify::{AckedAt, Reference};
use nearflash_blockdev::{BlockOp, IoError, SECTOR_BYTES};
use nearflash_flash::{MemoryStore, NoStore};
use nearflash_sim::{EventQueue, Sim};

enum Pending {
    Read { lsn: u64, before: Vec<AckedAt> },
    Write { lsn: u64, count: u64, stamp: u32 },
    Trim { lsn: u64, count: u64, stamp: u32 },
    Flush,
}

struct Harness {
    dev: Device,
    /// The one loop (`sim::Sim`): its RNG also draws the random workloads.
    sim: Sim<Event>,
    reference: Reference,
    inflight: BTreeMap<u64, Pending>,
    next_id: u64,
    errors: Vec<(BlockOp, IoError)>,
    /// Flexible Data Placement: the Placement Identifier each write carries, by its first
    /// sector (`None`: plain writes).
    placement: Option<Box<dyn Fn(u64) -> u16>>,
}

impl Harness {
    fn new(flash: FlashConfig, ftl: FtlConfig, seed: u64) -> Self {
        Self::with_fidelity(flash, ftl, seed, true)
    }

    /// A harness in functional fidelity (page data kept; reads are checked against the
    /// reference) or timing fidelity (no data; only completions and errors are recorded).
    fn with_fidelity(flash: FlashConfig, ftl: FtlConfig, seed: u64, functional: bool) -> Self {
        let mut sim = Sim::new(seed);
        let pages = Geometry::from_config(&flash).page_count();
        let store: Box<dyn PageStore> = if functional {
            Box::new(MemoryStore::new(pages, flash.page_size_bytes))
        } else {
            Box::new(NoStore)
        };
        let dev = Device::format(&flash, &ftl, store, sim.queue()).expect("valid config");
        let sectors = dev.logical_bytes() / SECTOR_BYTES;
        let group_sectors = u64::from(dev.layout().unit_sectors());
        Harness {
            dev,
            sim,
            reference: Reference::new(sectors, group_sectors),
            inflight: BTreeMap::new(),
            next_id: 0,
            errors: Vec::new(),
            placement: None,
        }
    }

    fn sectors(&self) -> u64 {
        self.reference.sectors()
    }

    fn submit(&mut self, op: BlockOp, lsn: u64, count: u64) {
        let id = self.next_id;
        self.next_id += 1;
        let mut data = Vec::new();
        let pending = match op {
            BlockOp::Read => Pending::Read {
                lsn,
                before: self.reference.acked_at(lsn, count),
            },
            BlockOp::Write => {
                let (d, stamp) = self.reference.issue_write(lsn, count);
                data = d;
                Pending::Write { lsn, count, stamp }
            }
            BlockOp::Trim => Pending::Trim {
                lsn,
                count,
                stamp: self.reference.issue_trim(lsn, count),
            },
            BlockOp::Flush => Pending::Flush,
        };
        self.inflight.insert(id, pending);
        let req = BlockRequest {
            id,
            op,
            offset_bytes: lsn * SECTOR_BYTES,
            len_bytes: count * SECTOR_BYTES,
            data,
        };
        match &self.placement {
            Some(pid_of) if op == BlockOp::Write => {
                let pid = pid_of(lsn);
                self.dev.submit_placed(req, pid, self.sim.queue())
            }
            _ => self.dev.submit(req, self.sim.queue()),
        }
        self.drain();
    }

    fn drain(&mut self) {
        let mut done = Vec::new();
        self.dev.take_completions(&mut done);
        for c in done {
            let p = self.inflight.remove(&c.id).expect("known request");
            if let Err(e) = c.result {
                self.errors.push((c.op, e));
                continue;
            }
            match p {
                Pending::Read { .. } if !self.dev.is_functional() => {}
                Pending::Read { lsn, before } => {
                    if let Err(v) = self.reference.check_read(lsn, &before, &c.data) {
                        panic!("read {} returned wrong data: {v:?}", c.id);
                    }
                }
                Pending::Write { lsn, count, stamp } => self.reference.ack_write(lsn, count, stamp),
                Pending::Trim { lsn, count, stamp } => self.reference.ack_trim(lsn, count, stamp),
                Pending::Flush => {
                    assert!(
                        self.inflight
                            .iter()
                            .all(|(&id, p)| id > c.id || !matches!(p, Pending::Write { .. })),
                        "flush {} completed before an earlier write",
                        c.id
                    );
                }
            }
        }
    }

    fn step(&mut self) -> bool {
        if !self.sim.step(&mut self.dev) {
            return false;
        }
        self.drain();
        true
    }

    fn run_until_done(&mut self) {
        while !self.inflight.is_empty() {
            assert!(self.step(), "event queue ran dry with requests in flight");
        }
    }

    fn random_ops(&mut self, ops: usize, qd: usize, max_sectors: u64) {
        let sectors = self.sectors();
        for _ in 0..ops {
            while self.inflight.len() >= qd {
                self.step();
            }
            let count = 1 + self.sim.rng().below(max_sectors);
            let lsn = self.sim.rng().below(sectors - count + 1);
            let op = match self.sim.rng().below(100) {
                0..=59 => BlockOp::Write,
                60..=91 => BlockOp::Read,
                92..=96 => BlockOp::Trim,
                _ => BlockOp::Flush,
            };
            self.submit(op, lsn, count);
        }
        self.run_until_done();
    }

    fn verify_all(&mut self) {
        let sectors = self.sectors();
        let chunk = 64;
        let mut lsn = 0;
        while lsn < sectors {
            let n = chunk.min(sectors - lsn);
            self.submit(BlockOp::Read, lsn, n);
            lsn += n;
            if self.inflight.len() >= 8 {
                self.run_until_done();
            }
        }
        self.run_until_done();
    }
}

#[test]
fn written_data_reads_back_across_groups_and_partial_pages() {
    let mut h = Harness::new(tiny_flash(), tiny_ftl(), 1);
    h.submit(BlockOp::Write, 0, 32); // exactly one 16 KiB group
    h.submit(BlockOp::Write, 40, 50); // partial groups on both ends
    h.submit(BlockOp::Write, 3, 1); // one sector inside a page: read-modify-write
    h.run_until_done();
    h.submit(BlockOp::Read, 0, 100);
    h.run_until_done();
    assert!(h.errors.is_empty(), "{:?}", h.errors);
    assert!(h.dev.stats().rmw_page_reads > 0);
    h.dev.check_invariants();
}

#[test]
fn never_written_reads_are_zeros_without_flash_access() {
    let mut h = Harness::new(tiny_flash(), tiny_ftl(), 1);
    h.submit(BlockOp::Read, 100, 64);
    h.run_until_done();
    assert_eq!(h.dev.backbone().stats().page_reads, 0);
}

#[test]
fn overwriting_a_full_device_many_times_runs_gc_and_keeps_every_write() {
    for policy in [
        GcPolicy::Greedy,
        GcPolicy::RoundRobin,
        GcPolicy::CostBenefit,
    ] {
        let mut ftl = tiny_ftl();
        ftl.gc_policy = policy;
        let mut h = Harness::new(tiny_flash(), ftl, 7);
        h.random_ops(4000, 8, 48);
        h.verify_all();
        let s = h.dev.stats().clone();
        assert!(s.gc_runs > 10, "{policy:?}: gc ran {} times", s.gc_runs);
        assert!(s.gc_groups_copied > 0, "{policy:?}");
        assert!(s.checkpoints_written > 0, "{policy:?}");
        assert_eq!(s.integrity_errors, 0);
        assert!(h.errors.is_empty(), "{policy:?}: {:?}", h.errors);
        h.dev.check_invariants();
    }
}

#[test]
fn trimmed_groups_read_as_zeros() {
    let mut h = Harness::new(tiny_flash(), tiny_ftl(), 1);
    h.submit(BlockOp::Write, 0, 96);
    h.run_until_done();
    h.submit(BlockOp::Trim, 16, 64); // whole group 1 (32..64) only
    h.run_until_done();
    h.submit(BlockOp::Read, 0, 96);
    h.run_until_done();
    assert!(h.dev.mapping().lookup(crate::layout::Lgn(1)).is_none());
    assert!(h.dev.mapping().lookup(crate::layout::Lgn(0)).is_some());
}

#[test]
fn flush_completes_only_after_earlier_writes() {
    let mut h = Harness::new(tiny_flash(), tiny_ftl(), 1);
    h.submit(BlockOp::Write, 0, 32);
    h.submit(BlockOp::Write, 64, 32);
    h.submit(BlockOp::Flush, 0, 0);
    assert_eq!(h.inflight.len(), 3, "flush must wait");
    h.run_until_done(); // the Flush arm of drain asserts the ordering
}

#[test]
fn request_past_capacity_or_misaligned_is_rejected() {
    let mut h = Harness::new(tiny_flash(), tiny_ftl(), 1);
    let sectors = h.sectors();
    h.submit(BlockOp::Read, sectors - 1, 2);
    h.run_until_done();
    assert!(matches!(
        h.errors[0],
        (BlockOp::Read, IoError::OutOfRange { .. })
    ));
    let cap = h.dev.logical_bytes();
    h.dev.submit(
        BlockRequest {
            id: 99,
            op: BlockOp::Write,
            offset_bytes: 100,
            len_bytes: 512,
            data: vec![0; 512],
        },
        h.sim.queue(),
    );
    let mut out = Vec::new();
    h.dev.take_completions(&mut out);
    assert!(
        matches!(out[0].result, Err(IoError::Misaligned { .. })),
        "{cap}"
    );
}

#[test]
fn program_failures_move_data_and_remap_bad_blocks() {
    let mut flash = tiny_flash();
    // About one page program in 3000 fails: a dozen blocks go bad over the run, which the
    // spares (4 per plane) absorb. (A rate that ruins more blocks than there are spares and
    // over-provisioning shrinks the device below its logical capacity: writes then fail
    // with `NoSpace`, as the worn-out test expects.)
    flash.program_fail_probability = 0.0003;
    let mut ftl = tiny_ftl();
    ftl.spare_blocks_per_plane = 4;
    let mut h = Harness::new(flash, ftl, 11);
    h.random_ops(3000, 8, 48);
    h.verify_all();
    let s = h.dev.stats().clone();
    assert!(s.program_failures > 0, "no failure was injected");
    assert!(s.blocks_remapped > 0);
    assert!(h.errors.is_empty(), "{:?}", h.errors);
    h.dev.check_invariants();
}

#[test]
fn worn_out_device_fails_writes_with_no_space_but_keeps_acked_data() {
    let mut flash = tiny_flash();
    flash.endurance_pe_cycles = 6;
    let mut ftl = tiny_ftl();
    ftl.spare_blocks_per_plane = 1;
    let mut h = Harness::new(flash, ftl, 5);
    h.random_ops(8000, 4, 64);
    let s = h.dev.stats().clone();
    assert!(s.superblocks_retired > 0, "{s:?}");
    assert!(h
        .errors
        .iter()
        .all(|(op, e)| *op == BlockOp::Write && *e == IoError::NoSpace));
    assert!(!h.errors.is_empty(), "the device never ran out of space");
    h.errors.clear();
    h.verify_all();
    assert!(
        h.errors.is_empty(),
        "reads failed on a worn device: {:?}",
        h.errors
    );
}

#[test]
fn static_wear_leveling_moves_cold_data() {
    let mut h = Harness::new(tiny_flash(), tiny_ftl(), 3);
    // Cold: fill everything once. Hot: hammer a small range.
    let sectors = h.sectors();
    let mut lsn = 0;
    while lsn < sectors {
        let n = 64.min(sectors - lsn);
        h.submit(BlockOp::Write, lsn, n);
        lsn += n;
        h.run_until_done();
    }
    for i in 0..3000 {
        h.submit(BlockOp::Write, (i * 32) % 256, 32);
        if h.inflight.len() >= 4 {
            h.run_until_done();
        }
    }
    h.run_until_done();
    assert!(h.dev.stats().wear_leveling_runs > 0);
    let (min, _, max) = h.dev.erase_count_summary();
    assert!(
        max - min <= 2 * tiny_ftl().wear_leveling_spread_pe + 2,
        "{min}..{max}"
    );
    h.verify_all();
}

#[test]
fn background_gc_runs_when_idle() {
    let mut h = Harness::new(tiny_flash(), tiny_ftl(), 9);
    h.random_ops(1500, 8, 48);
    let before = h.dev.stats().gc_background_runs;
    // Idle: let timers run for a while with no host commands.
    let until = h.sim.now() + SimDuration::from_ms(200);
    while h.sim.next_deadline().is_some_and(|t| t < until) {
        h.step();
    }
    assert!(h.dev.stats().gc_background_runs > before);
    assert!(h.dev.sbs.free_count() >= tiny_ftl().gc_background_free_superblocks);
    h.verify_all();
}

#[test]
fn clean_power_cut_recovers_everything_from_checkpoint_and_scan() {
    let mut h = Harness::new(tiny_flash(), tiny_ftl(), 21);
    h.random_ops(2500, 8, 48);
    let mapping_before: Vec<u32> = h.dev.mapping().l2p_snapshot();
    let seqs_before: Vec<u64> = h.dev.mapping().seq_snapshot();
    // GC may be part-way through a victim (the host is idle, GC is not): a group it already
    // copied is in two places with one sequence number, and recovery rightly prefers the
    // source (whole by construction) over the copy.
    let victim = h.dev.gc_victim();
    let pages = h.dev.layout.groups_per_superblock();
    let Harness { dev, mut sim, .. } = h;
    let mut bb = dev.bb;
    bb.power_cut(sim.rng());
    let mut q = EventQueue::new();
    let (dev, report) = recover(bb, &tiny_ftl(), &mut q).expect("recovers");
    assert!(report.checkpoint_seq.is_some(), "{report:?}");
    // Trims are not durable, so compare only groups mapped before the cut.
    for (g, &p) in mapping_before.iter().enumerate() {
        if p != crate::mapping::UNMAPPED {
            let now = dev.mapping().l2p_snapshot()[g];
            let gc_source = Some(SbId(now / pages)) == victim;
            assert!(
                now == p
                    || (gc_source
                        && dev.mapping().seq(crate::layout::Lgn(g as u32)) == seqs_before[g]),
                "group {g}: {now} vs {p}"
            );
        }
    }
}

#[test]
fn timing_fidelity_recovery_is_refused() {
    let mut q = EventQueue::new();
    let dev = Device::format(&tiny_flash(), &tiny_ftl(), Box::new(NoStore), &mut q).unwrap();
    assert!(recover(dev.bb, &tiny_ftl(), &mut q).is_err());
}

#[test]
fn mapping_table_larger_than_scratchpad_is_a_config_error() {
    let mut ftl = tiny_ftl();
    ftl.scratchpad_bytes = 16;
    let mut q = EventQueue::new();
    let e = Device::format(&tiny_flash(), &ftl, Box::new(NoStore), &mut q)
        .err()
        .unwrap();
    assert!(e.to_string().contains("ftl.scratchpad_bytes"), "{e}");
}

#[test]
fn a_page_that_fails_its_read_when_moved_stays_unreadable_not_zeros() {
    let mut h = Harness::new(tiny_flash(), tiny_ftl(), 1);
    h.submit(BlockOp::Write, 0, 32); // group 0: four pages of 8 sectors
    h.run_until_done();
    // Flip a bit of page 1 (sectors 8..16) in the store.
    let pgn = h.dev.map.lookup(crate::layout::Lgn(0)).expect("mapped");
    let page = h.dev.remap.page_id(&h.dev.layout, pgn, 1);
    let (mut d, mut o) = (vec![0u8; 4096], vec![0u8; 64]);
    h.dev.bb.store_mut().read(page, &mut d, &mut o);
    d[100] ^= 1;
    h.dev.bb.store_mut().program(page, &d, &o);
    // A one-sector write to page 0 merges pages 1..3 of the old group into the new one.
    h.submit(BlockOp::Write, 0, 1);
    h.run_until_done();
    assert_eq!(h.dev.stats().integrity_errors, 1);
    h.submit(BlockOp::Read, 0, 1);
    h.submit(BlockOp::Read, 16, 16);
    h.run_until_done();
    assert!(h.errors.is_empty(), "{:?}", h.errors);
    // The moved copy of page 1 is marked lost: reading it fails instead of returning zeros.
    h.submit(BlockOp::Read, 8, 8);
    h.run_until_done();
    assert_eq!(h.errors, vec![(BlockOp::Read, IoError::Integrity)]);
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    fn policy() -> impl Strategy<Value = GcPolicy> {
        prop_oneof![
            Just(GcPolicy::RoundRobin),
            Just(GcPolicy::Greedy),
            Just(GcPolicy::CostBenefit)
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]

        /// Against the reference model: any sequence of writes, reads, trims and flushes at any
        /// queue depth and GC policy — enough of them to overwrite the device several times —
        /// returns only legal data during the run, and every sector reads back legally after.
        #[test]
        fn device_agrees_with_the_reference_for_any_op_sequence(
            ops in proptest::collection::vec((0u8..100, 0.0f64..1.0, 1u64..48), 200..1200),
            qd in 1usize..16,
            gc_policy in policy(),
            seed in any::<u64>(),
        ) {
            let mut ftl = tiny_ftl();
            ftl.gc_policy = gc_policy;
            let mut h = Harness::new(tiny_flash(), ftl, seed);
            let sectors = h.sectors();
            // Prefill so that the random phase overwrites a full device and GC must run.
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

/// Two writes to the same group in flight at once: the group lock applies them in issue
/// order, so the later one's bytes win wherever both wrote and the earlier one's survive
/// elsewhere (the accelerator's write-back merge relies on this). `peek` sees what a read
/// sees: acknowledged data, zeros where nothing was written.
#[test]
fn in_flight_writes_to_one_group_apply_in_issue_order_and_peek_sees_them() {
    let flash = tiny_flash();
    let mut sim = Sim::new(3);
    let pages = Geometry::from_config(&flash).page_count();
    let store = Box::new(MemoryStore::new(pages, flash.page_size_bytes));
    let mut dev = Device::format(&flash, &tiny_ftl(), store, sim.queue()).unwrap();
    let gb = dev.layout().group_bytes();
    let write = |id: u64, fill: u8, len: u64| BlockRequest {
        id,
        op: BlockOp::Write,
        offset_bytes: 0,
        len_bytes: len,
        data: vec![fill; len as usize],
    };
    dev.submit(write(0, 0xA1, gb), sim.queue());
    dev.submit(write(1, 0xB2, 2 * SECTOR_BYTES), sim.queue());
    let mut done = Vec::new();
    while done.len() < 2 {
        assert!(sim.step(&mut dev), "writes in flight");
        dev.take_completions(&mut done);
    }
    assert!(done.iter().all(|c| c.result.is_ok()));
    let got = dev.peek(0, 2 * gb).unwrap();
    let s = 2 * SECTOR_BYTES as usize;
    assert!(got[..s].iter().all(|&b| b == 0xB2), "the later write wins");
    assert!(
        got[s..gb as usize].iter().all(|&b| b == 0xA1),
        "the earlier one survives"
    );
    assert!(
        got[gb as usize..].iter().all(|&b| b == 0),
        "unwritten reads as zeros"
    );
    assert!(matches!(dev.peek(1, 512), Err(IoError::Misaligned { .. })));
    let cap = dev.logical_bytes();
    assert!(matches!(
        dev.peek(cap, 512),
        Err(IoError::OutOfRange { .. })
    ));
}

/// Story: `ftl.over_provisioning_percent` changed nothing on small devices — the share it
/// held back and the GC reserve were combined with `min`, so the reserve alone decided the
/// capacity. Now the share is held back in addition to the reserve.
#[test]
fn over_provisioning_changes_the_logical_capacity() {
    let capacity = |op: f64| {
        let ftl = FtlConfig {
            over_provisioning_percent: op,
            ..tiny_ftl()
        };
        let layout = Layout::new(&Geometry::from_config(&tiny_flash()), &ftl);
        layout.logical_bytes()
    };
    let caps: Vec<u64> = [0.0, 5.0, 10.0, 20.0, 40.0].map(capacity).to_vec();
    for w in caps.windows(2) {
        assert!(
            w[1] < w[0],
            "more over-provisioning, less capacity: {caps:?}"
        );
    }
}

#[test]
fn in_flight_requests_name_what_they_wait_for() {
    let mut h = Harness::new(tiny_flash(), tiny_ftl(), 1);
    h.submit(BlockOp::Write, 0, 8);
    h.submit(BlockOp::Write, 0, 8); // same group: queued behind the first
    h.submit(BlockOp::Flush, 0, 0);
    let reqs = h.dev.inflight_requests();
    let phases: Vec<_> = reqs.iter().map(|r| (r.id, r.phase)).collect();
    assert_eq!(
        phases,
        [
            (0, RequestPhase::OnFlash),
            (1, RequestPhase::WaitingForLock),
            (2, RequestPhase::WaitingForEarlierWrites)
        ]
    );
    let text = h.dev.describe_inflight(2);
    assert!(text.contains("#1 Write 0+4096") && text.contains("waiting-for-lock"));
    assert!(text.contains("and 1 more"), "{text}");
    h.run_until_done();
    assert!(h.dev.inflight_requests().is_empty());
}

mod cmt;
mod fdp;
mod media;
mod one_shot;
mod page;
mod slc;

/// Story: the FTL admitted any number of host requests, so an open-loop caller's backlog
/// grew inside the firmware without limit. Now it admits `admission_limit` at once (in
/// flight plus completions not yet taken): `try_submit` past it hands the request back,
/// and once a completion is taken the same request is admitted.
#[test]
fn a_request_past_the_admission_limit_is_handed_back_until_a_completion_is_taken() {
    use nearflash_blockdev::{BlockDevice, Full};
    let flash = tiny_flash();
    let mut sim = Sim::new(5);
    let mut dev = Device::format(&flash, &tiny_ftl(), Box::new(NoStore), sim.queue()).unwrap();
    dev.set_admission_limit(2);
    let gb = dev.layout().group_bytes();
    let write = |id: u64| BlockRequest {
        id,
        op: BlockOp::Write,
        offset_bytes: id * gb,
        len_bytes: gb,
        data: Vec::new(),
    };
    dev.try_submit(write(0), sim.queue()).unwrap();
    dev.try_submit(write(1), sim.queue()).unwrap();
    let Err(Full { req, limit }) = dev.try_submit(write(2), sim.queue()) else {
        panic!("a third request past a limit of 2 is admitted");
    };
    assert_eq!((req.id, limit, dev.host_inflight()), (2, 2, 2));
    let mut done = Vec::new();
    while done.is_empty() {
        assert!(sim.step(&mut dev), "writes in flight");
        // A completion not yet taken still counts against the limit.
        assert!(dev.try_submit(write(9), sim.queue()).is_err());
        dev.take_completions(&mut done);
    }
    dev.try_submit(req, sim.queue())
        .expect("a completion taken makes room");
    while done.len() < 3 {
        assert!(sim.step(&mut dev), "writes in flight");
        dev.take_completions(&mut done);
    }
    assert!(done.iter().all(|c| c.result.is_ok()));
    assert_eq!(dev.stats().host_writes, 3);
}

#[test]
#[should_panic(expected = "past the admission limit")]
fn a_plain_submit_past_the_admission_limit_is_a_caller_bug() {
    let flash = tiny_flash();
    let mut sim = Sim::new(5);
    let mut dev = Device::format(&flash, &tiny_ftl(), Box::new(NoStore), sim.queue()).unwrap();
    dev.set_admission_limit(1);
    let gb = dev.layout().group_bytes();
    for id in 0..2 {
        let req = BlockRequest {
            id,
            op: BlockOp::Write,
            offset_bytes: id * gb,
            len_bytes: gb,
            data: Vec::new(),
        };
        dev.submit(req, sim.queue());
    }
}
