//! The drive's ordinary (firmware) path as the block device of the shared host model
//! (`nearflash_host::Host`): the host's storage stack submits block requests here; the
//! machine takes them (`take_submitted`) as commands of the drive's NVMe front end
//! (`nearflash_nvme::Nvme`: doorbell, SQE fetch, controller, the firmware path behind it —
//! the multiplexer, the storage, slot 0's pass-through — the data's DMA, CQE and MSI-X), and
//! once the front end says the host's handler saw a command's completion, posts it back
//! (`post`) for the port's own event, `PortEvent`, at that instant.
//!
//! The host model moves no data (it is a timing model of the page cache and the stack), so
//! the port says it is not functional; in functional fidelity it keeps the bytes of the
//! pages it read, by device page, for the runtime to hand to the caller.

use nearflash_blockdev::{BlockCompletion, BlockDevice, BlockRequest};
use nearflash_host::PAGE_BYTES;
use nearflash_sim::{Schedule, SimRng, TraceEvent};
use std::collections::BTreeMap;

/// The port's one event: the host's handler saw the completion of its request `0`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortEvent(pub u64);

impl TraceEvent for PortEvent {
    fn hash_word(&self) -> u64 {
        0xF9 << 56 ^ self.0
    }
}

pub struct FirmwarePort {
    capacity_bytes: u64,
    /// Requests the host submitted, until the drive takes them.
    submitted: Vec<BlockRequest>,
    /// Completions the controller posted, until the host's handler sees them.
    posted: BTreeMap<u64, BlockCompletion>,
    done: Vec<BlockCompletion>,
    outstanding: u64,
    /// Functional fidelity: the bytes of the pages read, by device offset.
    pages: BTreeMap<u64, Vec<u8>>,
}

impl FirmwarePort {
    pub fn new(capacity_bytes: u64) -> FirmwarePort {
        FirmwarePort {
            capacity_bytes,
            submitted: Vec::new(),
            posted: BTreeMap::new(),
            done: Vec::new(),
            outstanding: 0,
            pages: BTreeMap::new(),
        }
    }

    /// The requests submitted since the last take, in order.
    pub fn take_submitted(&mut self) -> Vec<BlockRequest> {
        std::mem::take(&mut self.submitted)
    }

    /// The controller posted `c` (its `data`: a read's bytes in functional fidelity); the
    /// host sees it at `PortEvent(c.id)`.
    pub fn post(&mut self, mut c: BlockCompletion) {
        let data = std::mem::take(&mut c.data);
        if !data.is_empty() {
            assert!(
                c.offset_bytes.is_multiple_of(PAGE_BYTES),
                "the host reads pages"
            );
            for (k, page) in data.chunks(PAGE_BYTES as usize).enumerate() {
                self.pages
                    .insert(c.offset_bytes + k as u64 * PAGE_BYTES, page.to_vec());
            }
        }
        let prev = self.posted.insert(c.id, c);
        assert!(prev.is_none(), "one completion per request");
    }

    /// The bytes last read of the device page at `dev_offset` (functional fidelity).
    pub fn page(&self, dev_offset: u64) -> Option<&[u8]> {
        self.pages.get(&dev_offset).map(Vec::as_slice)
    }

    /// Keeps only the pages `keep` says the host still caches.
    pub fn retain_pages(&mut self, mut keep: impl FnMut(u64) -> bool) {
        self.pages.retain(|&dev, _| keep(dev));
    }

    pub fn pages_held(&self) -> usize {
        self.pages.len()
    }
}

impl BlockDevice for FirmwarePort {
    type Event = PortEvent;

    fn capacity_bytes(&self) -> u64 {
        self.capacity_bytes
    }

    fn is_functional(&self) -> bool {
        false
    }

    fn submit<S: Schedule<PortEvent>>(&mut self, req: BlockRequest, _: &mut S) {
        self.outstanding += 1;
        self.submitted.push(req);
    }

    fn handle<S: Schedule<PortEvent>>(&mut self, ev: PortEvent, _: &mut S, _: &mut SimRng) {
        let c = self.posted.remove(&ev.0).expect("the controller posted it");
        self.done.push(c);
    }

    fn take_completions(&mut self, out: &mut Vec<BlockCompletion>) {
        self.outstanding -= self.done.len() as u64;
        out.append(&mut self.done);
    }

    fn outstanding(&self) -> u64 {
        self.outstanding
    }
}
