//! A RAM block device with a fixed latency per request: the simplest `BlockDevice`, for
//! tests and tools that want the file system without a flash model. Writes are durable on
//! completion (there is no power to cut); it serves requests in parallel.

use nearflash_blockdev::{
    BlockCompletion, BlockDevice, BlockOp, BlockRequest, IoError, SECTOR_BYTES,
};
use nearflash_sim::{Schedule, SimDuration, SimRng, SimTime, TraceEvent};
use std::collections::BTreeMap;

/// A request finishing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RamDiskEvent(pub u64);

impl TraceEvent for RamDiskEvent {
    fn hash_word(&self) -> u64 {
        0x5241_4d00_0000_0000 ^ self.0
    }
}

pub struct RamDisk {
    bytes: Vec<u8>,
    latency: SimDuration,
    pending: BTreeMap<u64, (BlockRequest, SimTime)>,
    done: Vec<BlockCompletion>,
}

impl RamDisk {
    pub fn new(capacity_bytes: u64, latency: SimDuration) -> RamDisk {
        assert_eq!(capacity_bytes % SECTOR_BYTES, 0);
        RamDisk {
            bytes: vec![0; capacity_bytes as usize],
            latency,
            pending: BTreeMap::new(),
            done: Vec::new(),
        }
    }

    fn check(&self, r: &BlockRequest) -> Result<(), IoError> {
        if r.op == BlockOp::Flush {
            return Ok(());
        }
        if !r.offset_bytes.is_multiple_of(SECTOR_BYTES)
            || !r.len_bytes.is_multiple_of(SECTOR_BYTES)
            || r.len_bytes == 0
        {
            return Err(IoError::Misaligned {
                offset_bytes: r.offset_bytes,
                len_bytes: r.len_bytes,
            });
        }
        let cap = self.bytes.len() as u64;
        if r.offset_bytes
            .checked_add(r.len_bytes)
            .is_none_or(|e| e > cap)
        {
            return Err(IoError::OutOfRange {
                offset_bytes: r.offset_bytes,
                len_bytes: r.len_bytes,
                capacity_bytes: cap,
            });
        }
        if r.op == BlockOp::Write && r.data.len() as u64 != r.len_bytes {
            return Err(IoError::PayloadSize {
                got: r.data.len() as u64,
                expected: r.len_bytes,
            });
        }
        Ok(())
    }
}

impl BlockDevice for RamDisk {
    type Event = RamDiskEvent;

    fn capacity_bytes(&self) -> u64 {
        self.bytes.len() as u64
    }

    fn is_functional(&self) -> bool {
        true
    }

    fn submit<S: Schedule<RamDiskEvent>>(&mut self, req: BlockRequest, q: &mut S) {
        let id = req.id;
        let now = q.now();
        assert!(
            self.pending.insert(id, (req, now)).is_none(),
            "request id {id} submitted twice"
        );
        q.schedule_in(self.latency, RamDiskEvent(id));
    }

    fn handle<S: Schedule<RamDiskEvent>>(&mut self, ev: RamDiskEvent, q: &mut S, _: &mut SimRng) {
        let (req, submitted) = self.pending.remove(&ev.0).expect("a pending request");
        let result = self.check(&req);
        let mut data = Vec::new();
        if result.is_ok() {
            let (lo, hi) = (
                req.offset_bytes as usize,
                (req.offset_bytes + req.len_bytes) as usize,
            );
            match req.op {
                BlockOp::Read => data = self.bytes[lo..hi].to_vec(),
                BlockOp::Write => self.bytes[lo..hi].copy_from_slice(&req.data),
                BlockOp::Trim => self.bytes[lo..hi].fill(0),
                BlockOp::Flush => {}
            }
        }
        self.done.push(BlockCompletion {
            id: req.id,
            op: req.op,
            offset_bytes: req.offset_bytes,
            len_bytes: req.len_bytes,
            submitted,
            completed: q.now(),
            result,
            data,
        });
    }

    fn take_completions(&mut self, out: &mut Vec<BlockCompletion>) {
        out.append(&mut self.done);
    }

    fn outstanding(&self) -> u64 {
        (self.pending.len() + self.done.len()) as u64
    }
}
