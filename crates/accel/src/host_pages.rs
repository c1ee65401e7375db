//! The bytes of the host's page cache in functional fidelity, carried beside the host model.
//!
//! The host model (`nearflash-host`) times buffered I/O — system calls, the page cache, its
//! read-ahead and write-back, the copies — but carries no data: its block requests have empty
//! payloads, so it refuses a device that stores data. `HostPages` sits between the host and
//! the drive (the NVMe front end over the FTL) and gives the host's requests their bytes:
//!
//! - a read's completion (the device's data, DMA'd by NVMe into host memory) lands in the
//!   pages it covers: the page cache's content after the read;
//! - a user's buffered write puts its bytes into the pages (`stage`, called by the user with
//!   the write, as the copy user buffer → page cache does);
//! - a write-back request (by the flusher or `fsync`) leaves with the pages' bytes as its
//!   payload.
//!
//! A user's bytes win over a device read that completes after them: a partial write to a
//! page the cache does not hold makes the host read the page in, and the copy lands on top
//! of it (the page cache's read-modify-write), whatever order the two reach this layer in.
//! A page never read or written reads as zeros (as an unmapped logical page does). The
//! layer schedules nothing and changes no request's size or order, so a run with it times
//! exactly as one without it; in timing fidelity it passes everything through untouched.

use nearflash_blockdev::{BlockCompletion, BlockDevice, BlockOp, BlockRequest};
use nearflash_host::PAGE_BYTES;
use nearflash_sim::{Schedule, SimRng};
use std::collections::BTreeMap;

/// The host's view of a block device `D`, with the page cache's bytes in functional fidelity.
pub struct HostPages<D> {
    dev: D,
    /// Functional fidelity: device page index → its bytes in host memory (`None`: timing).
    pages: Option<BTreeMap<u64, Page>>,
    done: Vec<BlockCompletion>,
}

impl<D: BlockDevice> HostPages<D> {
    /// Over `dev`; `functional` iff `dev` stores data.
    pub fn new(dev: D) -> Self {
        let pages = dev.is_functional().then(BTreeMap::new);
        HostPages {
            dev,
            pages,
            done: Vec::new(),
        }
    }

    pub fn inner(&self) -> &D {
        &self.dev
    }

    pub fn inner_mut(&mut self) -> &mut D {
        &mut self.dev
    }

    /// The bytes `[offset, offset + out.len())` of host memory's copy of the device.
    pub fn read(&self, offset: u64, out: &mut [u8]) {
        let pages = self
            .pages
            .as_ref()
            .expect("host pages need functional fidelity");
        let mut at = offset;
        let mut done = 0;
        while done < out.len() {
            let (page, within) = (at / PAGE_BYTES, (at % PAGE_BYTES) as usize);
            let n = (PAGE_BYTES as usize - within).min(out.len() - done);
            match pages.get(&page) {
                Some(p) => out[done..done + n].copy_from_slice(&p.bytes[within..within + n]),
                None => out[done..done + n].fill(0),
            }
            done += n;
            at += n as u64;
        }
    }

    /// Puts `bytes` at device offset `offset` into host memory's pages (a buffered write's
    /// copy into the page cache).
    pub fn stage(&mut self, offset: u64, bytes: &[u8]) {
        let pages = self
            .pages
            .as_mut()
            .expect("host pages need functional fidelity");
        stage_into(pages, offset, bytes, true);
    }

    /// Drops host memory's copy of `[offset, offset + len)` (whole pages inside it), once
    /// nothing will read those pages again.
    pub fn forget(&mut self, offset: u64, len: u64) {
        if let Some(pages) = self.pages.as_mut() {
            let first = offset.div_ceil(PAGE_BYTES);
            let end = (offset + len) / PAGE_BYTES;
            let keys: Vec<u64> = pages
                .range(first..end.max(first))
                .map(|(k, _)| *k)
                .collect();
            for k in keys {
                pages.remove(&k);
            }
        }
    }
}

impl<D: BlockDevice> BlockDevice for HostPages<D> {
    type Event = D::Event;

    fn capacity_bytes(&self) -> u64 {
        self.dev.capacity_bytes()
    }

    /// The host above sends no data: this layer carries it.
    fn is_functional(&self) -> bool {
        false
    }

    fn submit<S: Schedule<Self::Event>>(&mut self, mut req: BlockRequest, q: &mut S) {
        if self.pages.is_some() && req.op == BlockOp::Write {
            assert!(req.data.is_empty(), "the host model sends no payloads");
            let mut data = vec![0u8; req.len_bytes as usize];
            self.read(req.offset_bytes, &mut data);
            req.data = data;
        }
        self.dev.submit(req, q);
    }

    fn handle<S: Schedule<Self::Event>>(&mut self, ev: Self::Event, q: &mut S, rng: &mut SimRng) {
        self.dev.handle(ev, q, rng);
    }

    fn check_invariants(&self) {
        self.dev.check_invariants();
    }

    fn take_completions(&mut self, out: &mut Vec<BlockCompletion>) {
        self.dev.take_completions(&mut self.done);
        for mut c in self.done.drain(..) {
            if let Some(pages) = self.pages.as_mut() {
                if c.op == BlockOp::Read && c.result.is_ok() {
                    let data = std::mem::take(&mut c.data);
                    assert_eq!(data.len() as u64, c.len_bytes, "a read returns its bytes");
                    stage_into(pages, c.offset_bytes, &data, false);
                }
            }
            out.push(c);
        }
    }

    fn outstanding(&self) -> u64 {
        self.dev.outstanding()
    }
}

/// A page of host memory: its bytes, and which of them a user wrote (device reads completing
/// later leave those alone).
struct Page {
    bytes: Box<[u8]>,
    /// One bit per byte.
    user: Box<[u64]>,
}

impl Page {
    fn zeros() -> Page {
        Page {
            bytes: vec![0u8; PAGE_BYTES as usize].into_boxed_slice(),
            user: vec![0u64; PAGE_BYTES.div_ceil(64) as usize].into_boxed_slice(),
        }
    }
}

/// Copies `bytes` into the pages from device offset `offset` on (a page first touched is
/// zeros elsewhere): a user's write (`by_user`) marks its bytes; a device read fills only
/// bytes no user wrote.
fn stage_into(pages: &mut BTreeMap<u64, Page>, offset: u64, bytes: &[u8], by_user: bool) {
    let mut at = offset;
    let mut done = 0;
    while done < bytes.len() {
        let (page, within) = (at / PAGE_BYTES, (at % PAGE_BYTES) as usize);
        let n = (PAGE_BYTES as usize - within).min(bytes.len() - done);
        let p = pages.entry(page).or_insert_with(Page::zeros);
        for b in within..within + n {
            let (word, bit) = (b / 64, 1u64 << (b % 64));
            if by_user {
                p.user[word] |= bit;
            } else if p.user[word] & bit != 0 {
                continue;
            }
            p.bytes[b] = bytes[done + b - within];
        }
        done += n;
        at += n as u64;
    }
}
