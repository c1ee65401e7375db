//! A timing-fidelity device made to answer reads with the data written to it.
//!
//! A file system — or a real program such as a LevelDB above one — must read back what it
//! wrote, but a timing-fidelity device stores no bytes. [`Shadowed`] keeps the payload of
//! every completed write in memory, 4 KiB at a time, and fills each completed read from that
//! copy; the requests reach the device unchanged but for their payloads, so they are timed
//! exactly as in functional fidelity. Over a functional device it passes everything through
//! (the device is the copy).
//!
//! A write's payload is applied when the write completes, as the device's contract says it
//! becomes readable; a trim drops the pages it covers whole (a partial page keeps its bytes,
//! which the contract allows: a trimmed range may read as zeros or as older data of the same
//! page).

use crate::{BlockCompletion, BlockDevice, BlockOp, BlockRequest};
use nearflash_sim::{Schedule, SimRng};
use std::collections::{BTreeMap, HashMap};

/// Bytes of one shadow page.
pub const SHADOW_PAGE_BYTES: u64 = 4096;

/// `D`, answering reads with what was written even when `D` keeps no data.
pub struct Shadowed<D> {
    dev: D,
    /// None over a functional device (pass-through).
    pages: Option<HashMap<u64, Box<[u8]>>>,
    /// Payloads of writes in flight, by request id (bounded by the device's outstanding
    /// requests, which the caller bounds).
    pending: BTreeMap<u64, Vec<u8>>,
    done: Vec<BlockCompletion>,
}

impl<D: BlockDevice> Shadowed<D> {
    pub fn new(dev: D) -> Self {
        let pages = (!dev.is_functional()).then(HashMap::new);
        Shadowed {
            dev,
            pages,
            pending: BTreeMap::new(),
            done: Vec::new(),
        }
    }

    pub fn device(&self) -> &D {
        &self.dev
    }

    pub fn device_mut(&mut self) -> &mut D {
        &mut self.dev
    }

    pub fn into_device(self) -> D {
        self.dev
    }

    /// Bytes held by the shadow copy (0 over a functional device).
    pub fn shadow_bytes(&self) -> u64 {
        self.pages
            .as_ref()
            .map_or(0, |p| p.len() as u64 * SHADOW_PAGE_BYTES)
    }

    fn apply_write(pages: &mut HashMap<u64, Box<[u8]>>, offset: u64, data: &[u8]) {
        let mut at = offset;
        let mut rest = data;
        while !rest.is_empty() {
            let page = at / SHADOW_PAGE_BYTES;
            let within = (at % SHADOW_PAGE_BYTES) as usize;
            let n = rest.len().min(SHADOW_PAGE_BYTES as usize - within);
            let buf = pages
                .entry(page)
                .or_insert_with(|| vec![0u8; SHADOW_PAGE_BYTES as usize].into_boxed_slice());
            buf[within..within + n].copy_from_slice(&rest[..n]);
            at += n as u64;
            rest = &rest[n..];
        }
    }

    fn fill_read(pages: &HashMap<u64, Box<[u8]>>, offset: u64, len: u64) -> Vec<u8> {
        let mut out = vec![0u8; len as usize];
        let mut at = offset;
        let mut filled = 0usize;
        while filled < out.len() {
            let page = at / SHADOW_PAGE_BYTES;
            let within = (at % SHADOW_PAGE_BYTES) as usize;
            let n = (out.len() - filled).min(SHADOW_PAGE_BYTES as usize - within);
            if let Some(buf) = pages.get(&page) {
                out[filled..filled + n].copy_from_slice(&buf[within..within + n]);
            }
            at += n as u64;
            filled += n;
        }
        out
    }

    fn trim(pages: &mut HashMap<u64, Box<[u8]>>, offset: u64, len: u64) {
        let first = offset.div_ceil(SHADOW_PAGE_BYTES);
        let end = (offset + len) / SHADOW_PAGE_BYTES;
        for p in first..end {
            pages.remove(&p);
        }
    }
}

impl<D> Shadowed<D> {
    /// Over a timing device, keeps a write's payload until it completes (the device gets the
    /// request without it).
    fn keep_payload(&mut self, mut req: BlockRequest) -> BlockRequest {
        if self.pages.is_some() && req.op == BlockOp::Write {
            let data = std::mem::take(&mut req.data);
            if data.len() as u64 == req.len_bytes {
                self.pending.insert(req.id, data);
            } else {
                // A wrong payload size is the device's error to report; keep it visible.
                req.data = data;
            }
        }
        req
    }
}

impl<D: BlockDevice> BlockDevice for Shadowed<D> {
    type Event = D::Event;

    fn capacity_bytes(&self) -> u64 {
        self.dev.capacity_bytes()
    }

    /// Always true: reads return data.
    fn is_functional(&self) -> bool {
        true
    }

    fn submit<S: Schedule<Self::Event>>(&mut self, req: BlockRequest, q: &mut S) {
        let req = self.keep_payload(req);
        self.dev.submit(req, q);
    }

    fn submit_fua<S: Schedule<Self::Event>>(&mut self, req: BlockRequest, q: &mut S) {
        let req = self.keep_payload(req);
        self.dev.submit_fua(req, q);
    }

    fn volatile_write_cache(&self) -> bool {
        self.dev.volatile_write_cache()
    }

    fn admission_limit(&self) -> u64 {
        self.dev.admission_limit()
    }

    fn handle<S: Schedule<Self::Event>>(&mut self, ev: Self::Event, q: &mut S, rng: &mut SimRng) {
        self.dev.handle(ev, q, rng);
    }

    fn check_invariants(&self) {
        self.dev.check_invariants();
    }

    fn take_completions(&mut self, out: &mut Vec<BlockCompletion>) {
        let Some(pages) = self.pages.as_mut() else {
            self.dev.take_completions(out);
            return;
        };
        self.dev.take_completions(&mut self.done);
        for mut c in self.done.drain(..) {
            match c.op {
                BlockOp::Write => {
                    let data = self.pending.remove(&c.id);
                    if let (Ok(()), Some(data)) = (&c.result, data) {
                        Self::apply_write(pages, c.offset_bytes, &data);
                    }
                }
                BlockOp::Read if c.result.is_ok() => {
                    c.data = Self::fill_read(pages, c.offset_bytes, c.len_bytes);
                }
                BlockOp::Trim if c.result.is_ok() => Self::trim(pages, c.offset_bytes, c.len_bytes),
                _ => {}
            }
            out.push(c);
        }
    }

    fn outstanding(&self) -> u64 {
        self.dev.outstanding()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::IoError;
    use nearflash_sim::{EventQueue, SimTime, TraceEvent};

    /// A timing device: every request completes 10 µs after it arrives, with no data.
    #[derive(Default)]
    struct Timed {
        done: Vec<BlockCompletion>,
        inflight: BTreeMap<u64, BlockRequest>,
        submitted: BTreeMap<u64, SimTime>,
    }

    #[derive(Clone, Copy, Debug)]
    struct Done(u64);
    impl TraceEvent for Done {
        fn hash_word(&self) -> u64 {
            self.0
        }
    }

    impl BlockDevice for Timed {
        type Event = Done;
        fn capacity_bytes(&self) -> u64 {
            1 << 20
        }
        fn is_functional(&self) -> bool {
            false
        }
        fn submit<S: Schedule<Done>>(&mut self, req: BlockRequest, q: &mut S) {
            assert!(req.data.is_empty(), "a timing device gets no payload");
            self.submitted.insert(req.id, q.now());
            q.schedule_in(nearflash_sim::SimDuration::from_ns(10_000), Done(req.id));
            self.inflight.insert(req.id, req);
        }
        fn handle<S: Schedule<Done>>(&mut self, ev: Done, q: &mut S, _: &mut SimRng) {
            let r = self.inflight.remove(&ev.0).unwrap();
            self.done.push(BlockCompletion {
                id: r.id,
                op: r.op,
                offset_bytes: r.offset_bytes,
                len_bytes: r.len_bytes,
                submitted: self.submitted.remove(&r.id).unwrap(),
                completed: q.now(),
                result: Ok::<(), IoError>(()),
                data: Vec::new(),
            });
        }
        fn take_completions(&mut self, out: &mut Vec<BlockCompletion>) {
            out.append(&mut self.done);
        }
        fn outstanding(&self) -> u64 {
            self.inflight.len() as u64
        }
    }

    fn run(dev: &mut Shadowed<Timed>, req: BlockRequest) -> BlockCompletion {
        let mut q: EventQueue<Done> = EventQueue::new();
        let mut rng = SimRng::seed_from_u64(1);
        dev.submit(req, &mut q);
        let mut out = Vec::new();
        while let Some((_, ev)) = q.pop() {
            dev.handle(ev, &mut q, &mut rng);
            dev.take_completions(&mut out);
        }
        out.pop().expect("one completion")
    }

    fn req(id: u64, op: BlockOp, offset: u64, len: u64, data: Vec<u8>) -> BlockRequest {
        BlockRequest {
            id,
            op,
            offset_bytes: offset,
            len_bytes: len,
            data,
        }
    }

    #[test]
    fn reads_return_what_was_written_across_pages_and_zeros_elsewhere() {
        let mut dev = Shadowed::new(Timed::default());
        let data: Vec<u8> = (0..6144u32).map(|i| (i % 251) as u8).collect();
        run(&mut dev, req(1, BlockOp::Write, 2048, 6144, data.clone()));
        let c = run(&mut dev, req(2, BlockOp::Read, 0, 12288, Vec::new()));
        assert!(c.data[..2048].iter().all(|&b| b == 0));
        assert_eq!(&c.data[2048..8192], &data[..]);
        assert!(c.data[8192..].iter().all(|&b| b == 0));
        assert_eq!(dev.shadow_bytes(), 2 * SHADOW_PAGE_BYTES);
        // A trim drops the whole pages it covers, and only those.
        run(&mut dev, req(3, BlockOp::Trim, 4096, 4096, Vec::new()));
        let c = run(&mut dev, req(4, BlockOp::Read, 4096, 4096, Vec::new()));
        assert!(c.data.iter().all(|&b| b == 0));
        let c = run(&mut dev, req(5, BlockOp::Read, 2048, 2048, Vec::new()));
        assert_eq!(&c.data[..], &data[..2048]);
    }

    #[test]
    fn a_write_is_readable_only_once_it_completed() {
        let mut dev = Shadowed::new(Timed::default());
        let mut q: EventQueue<Done> = EventQueue::new();
        dev.submit(req(1, BlockOp::Write, 0, 4096, vec![7u8; 4096]), &mut q);
        assert_eq!(dev.shadow_bytes(), 0, "nothing applied before completion");
    }
}
