//! The journal's FLUSH and FUA requests, seen from the device. A recording device over a RAM
//! disk, which may claim a volatile write cache, keeps what a volatile cache would have made
//! durable: a write is durable once it completed with FUA, or once a FLUSH submitted after its
//! completion has completed. The stories check the journal's ordering rules against that:
//! a commit record reaches the device only after everything before it is durable, and a
//! transaction's homes are durable before the journal that holds it is overwritten — and that
//! a device without a volatile cache sees exactly the requests it saw before barriers existed.

use nearflash_blockdev::{BlockCompletion, BlockDevice, BlockOp, BlockRequest};
use nearflash_fs::format::journal::Descriptor;
use nearflash_fs::format::superblock::Superblock;
use nearflash_fs::ramdisk::{RamDisk, RamDiskEvent};
use nearflash_fs::{
    Caller, FormatOptions, FsConfig, FsHost, FsOp, FsReply, OpenFlags, BLOCK_BYTES,
};
use nearflash_sim::{Schedule, Sim, SimDuration, SimRng};
use std::collections::{BTreeMap, BTreeSet};

const CAPACITY_BYTES: u64 = 16 << 20;

/// One request as the device saw it.
#[derive(Clone, Debug)]
struct Seen {
    op: BlockOp,
    block: u64,
    fua: bool,
    data: Vec<u8>,
}

/// A RAM disk that records every request and tracks what a volatile write cache would have
/// made durable.
struct Recorder {
    disk: RamDisk,
    volatile: bool,
    log: Vec<Seen>,
    /// Log index of each request in flight, by id.
    inflight: BTreeMap<u64, usize>,
    /// Writes completed and not yet durable.
    completed: BTreeSet<usize>,
    /// Each FLUSH in flight and the writes it will make durable.
    flushes: BTreeMap<u64, BTreeSet<usize>>,
    durable: BTreeSet<usize>,
    /// Violations of the ordering rules, as found.
    violations: Vec<String>,
    /// The journal's region, once mkfs wrote the superblock.
    sb: Option<Superblock>,
    /// The homes of the last transaction a descriptor named.
    homes: BTreeSet<u64>,
}

impl Recorder {
    fn new(volatile: bool) -> Recorder {
        Recorder {
            disk: RamDisk::new(CAPACITY_BYTES, SimDuration::from_us(20)),
            volatile,
            log: Vec::new(),
            inflight: BTreeMap::new(),
            completed: BTreeSet::new(),
            flushes: BTreeMap::new(),
            durable: BTreeSet::new(),
            violations: Vec::new(),
            sb: None,
            homes: BTreeSet::new(),
        }
    }

    fn journal_index(&self, block: u64) -> Option<u32> {
        let sb = self.sb?;
        let start = u64::from(sb.journal_start.0);
        (start..start + u64::from(sb.journal_blocks))
            .contains(&block)
            .then(|| (block - start) as u32)
    }

    /// Writes to `blocks` (any block when `None`) submitted before log index `before` that
    /// are not durable.
    fn not_durable(&self, before: usize, blocks: Option<&BTreeSet<u64>>) -> Vec<u64> {
        self.log[..before]
            .iter()
            .enumerate()
            .filter(|(i, s)| {
                s.op == BlockOp::Write
                    && !self.durable.contains(i)
                    && blocks.is_none_or(|b| b.contains(&s.block))
            })
            .map(|(_, s)| s.block)
            .collect()
    }

    /// Checks the rules at the submission of write `i`.
    fn check_write(&mut self, i: usize) {
        let s = &self.log[i];
        if s.block == 0 {
            self.sb = Some(Superblock::decode(&s.data, CAPACITY_BYTES).expect("a superblock"));
            return;
        }
        let Some(j) = self.journal_index(s.block) else {
            return;
        };
        if j == 0 {
            // A descriptor: the journal is reused; the homes of the transaction it held must
            // be durable.
            let late = self.not_durable(i, Some(&self.homes));
            if !late.is_empty() {
                self.violations.push(format!(
                    "descriptor written while homes {late:?} of the last transaction were not durable"
                ));
            }
            let d = Descriptor::decode(&s.data).expect("a descriptor");
            self.homes = d.homes.iter().map(|b| u64::from(b.0)).collect();
        } else if s.fua {
            // A commit record: everything before it (data, descriptor, images) is durable.
            let late = self.not_durable(i, None);
            if !late.is_empty() {
                self.violations.push(format!(
                    "commit record written while blocks {late:?} were not durable"
                ));
            }
        }
    }

    fn record(&mut self, req: &BlockRequest, fua: bool) {
        let i = self.log.len();
        self.log.push(Seen {
            op: req.op,
            block: req.offset_bytes / BLOCK_BYTES as u64,
            fua,
            data: req.data.clone(),
        });
        self.inflight.insert(req.id, i);
        match req.op {
            BlockOp::Flush => {
                let covered = std::mem::take(&mut self.completed);
                self.flushes.insert(req.id, covered);
            }
            BlockOp::Write => self.check_write(i),
            _ => {}
        }
    }

    fn count(&self, op: BlockOp) -> usize {
        self.log.iter().filter(|s| s.op == op).count()
    }
}

impl BlockDevice for Recorder {
    type Event = RamDiskEvent;

    fn capacity_bytes(&self) -> u64 {
        self.disk.capacity_bytes()
    }

    fn is_functional(&self) -> bool {
        true
    }

    fn submit<S: Schedule<RamDiskEvent>>(&mut self, req: BlockRequest, q: &mut S) {
        self.record(&req, false);
        self.disk.submit(req, q);
    }

    fn submit_fua<S: Schedule<RamDiskEvent>>(&mut self, req: BlockRequest, q: &mut S) {
        assert!(
            self.volatile,
            "FUA asked of a device without a volatile cache"
        );
        self.record(&req, true);
        self.disk.submit(req, q);
    }

    fn volatile_write_cache(&self) -> bool {
        self.volatile
    }

    fn handle<S: Schedule<RamDiskEvent>>(&mut self, ev: RamDiskEvent, q: &mut S, rng: &mut SimRng) {
        self.disk.handle(ev, q, rng);
    }

    fn take_completions(&mut self, out: &mut Vec<BlockCompletion>) {
        let first = out.len();
        self.disk.take_completions(out);
        for c in &out[first..] {
            let i = self.inflight.remove(&c.id).expect("a recorded request");
            match c.op {
                BlockOp::Write if self.log[i].fua => {
                    self.durable.insert(i);
                }
                BlockOp::Write => {
                    self.completed.insert(i);
                }
                BlockOp::Flush => {
                    let covered = self.flushes.remove(&c.id).expect("a recorded flush");
                    self.durable.extend(covered);
                }
                _ => {}
            }
        }
    }

    fn outstanding(&self) -> u64 {
        self.disk.outstanding()
    }
}

fn host(volatile: bool) -> FsHost<Recorder> {
    let mut h = FsHost::new(Sim::new(1), Recorder::new(volatile), FsConfig::default()).unwrap();
    h.run(Caller::ROOT, FsOp::Format(FormatOptions::default()))
        .unwrap();
    h
}

/// Creates files, writes, fsyncs, renames and unlinks: many commits, each reusing the journal.
fn workload(h: &mut FsHost<Recorder>) {
    for i in 0..6u8 {
        let path = format!("/f{i}");
        let FsReply::Opened(fh) = h
            .run(
                Caller::ROOT,
                FsOp::Open {
                    path: path.clone(),
                    flags: OpenFlags {
                        write: true,
                        create: true,
                        ..OpenFlags::default()
                    },
                    perm: 0o644,
                },
            )
            .unwrap()
        else {
            panic!("open answers Opened")
        };
        h.run(
            Caller::ROOT,
            FsOp::Write {
                fh,
                offset_bytes: 0,
                data: vec![i; 20_000 + usize::from(i) * 4096],
            },
        )
        .unwrap();
        h.run(Caller::ROOT, FsOp::Fsync(fh)).unwrap();
        h.run(Caller::ROOT, FsOp::Close(fh)).unwrap();
        if i % 2 == 1 {
            h.run(
                Caller::ROOT,
                FsOp::Rename {
                    from: path,
                    to: format!("/g{i}"),
                },
            )
            .unwrap();
        }
    }
    h.run(Caller::ROOT, FsOp::Unlink("/f0".into())).unwrap();
    h.run(Caller::ROOT, FsOp::Sync).unwrap();
}

#[test]
fn on_a_volatile_cache_every_commit_record_and_every_reused_journal_finds_its_blocks_durable() {
    let mut h = host(true);
    assert!(h.fs().issues_barriers());
    // mkfs is durable when it completes.
    assert!(h.dev().not_durable(h.dev().log.len(), None).is_empty());
    workload(&mut h);
    let dev = h.dev();
    assert!(dev.violations.is_empty(), "{:?}", dev.violations);
    let commits = h.fs().stats().commits;
    let fua: Vec<&Seen> = dev.log.iter().filter(|s| s.fua).collect();
    assert_eq!(
        fua.len() as u64,
        commits,
        "one FUA commit record per commit"
    );
    assert_eq!(h.fs().stats().block_fua_writes, commits);
    assert!(fua.iter().all(|s| dev.journal_index(s.block).is_some()));
    // Two FLUSHes a commit (the last checkpoint before the journal, the journal before the
    // commit record), one for mkfs, and one for the final sync (its checkpoint).
    let flushes = dev.count(BlockOp::Flush) as u64;
    assert_eq!(flushes, h.fs().stats().block_flushes);
    assert!(
        flushes <= 2 * commits + 2 && flushes >= commits,
        "{flushes} FLUSHes for {commits} commits"
    );
}

#[test]
fn without_a_volatile_cache_the_device_sees_no_flush_and_no_fua() {
    let mut h = host(false);
    assert!(!h.fs().issues_barriers());
    workload(&mut h);
    let dev = h.dev();
    assert_eq!(dev.count(BlockOp::Flush), 0);
    assert!(dev.log.iter().all(|s| !s.fua));
    let s = h.fs().stats();
    assert_eq!((s.block_flushes, s.block_fua_writes), (0, 0));
    assert!(s.commits > 6);
}

/// The checker sees a broken rule: a commit record written with FUA but with no FLUSH after
/// the data before it is reported, naming the block that was not durable.
#[test]
fn a_commit_record_without_a_flush_before_it_is_caught_by_the_checker() {
    let mut dev = Recorder::new(true);
    let mut sim: Sim<RamDiskEvent> = Sim::new(2);
    // A superblock (mkfs's), a data write, then a FUA commit record with no FLUSH between.
    let sb_block = host(true).dev().log[0].data.clone();
    let reqs = [
        (0u64, sb_block),
        (300, vec![7u8; BLOCK_BYTES]),
        (2, vec![0u8; BLOCK_BYTES]),
    ];
    for (id, (block, data)) in reqs.into_iter().enumerate() {
        let req = BlockRequest {
            id: id as u64,
            op: BlockOp::Write,
            offset_bytes: block * BLOCK_BYTES as u64,
            len_bytes: BLOCK_BYTES as u64,
            data,
        };
        if block == 2 {
            dev.submit_fua(req, sim.queue());
        } else {
            dev.submit(req, sim.queue());
        }
    }
    assert_eq!(dev.violations.len(), 1, "{:?}", dev.violations);
    assert!(dev.violations[0].contains("300"), "{:?}", dev.violations);
}
