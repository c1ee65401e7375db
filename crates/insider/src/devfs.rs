//! The drive's file system (INSIDER §3.3 mounts an ordinary file system on the drive): the
//! project's on-disk `nearflash-fs` over the drive's own storage (the flash device or the
//! DRAM-emulated drive). The host runtime drives it: every block request the file system
//! issues — superblock, bitmaps, inode table, directory, journal and the mapping files'
//! data — becomes a request of the drive's firmware path (PCIe, the multiplexer, the
//! backing), so metadata and journal I/O cost simulated time and contend with the virtual
//! files' traffic.
//!
//! Timing fidelity stores no bytes in the drive, but a file system must read back what it
//! wrote: there the driver keeps the payload of every block the file system writes (its
//! metadata and small files — bulk file data moves without payloads and never through it)
//! and answers the file system's reads from that copy; the requests themselves are timed
//! exactly as in functional fidelity.
//!
//! The file system's CPU timer (its operations' compute time) is an event on the drive's
//! queue: every pump leaves the timer it stands at with the drive (`Machine::set_fs_timer`),
//! and the loop turns at it like at any event.

use crate::error::InsiderError;
use crate::machine::Machine;
use nearflash_blockdev::{BlockCompletion, BlockOp, BlockRequest};
use nearflash_fs::{Caller, FormatOptions, Fs, FsConfig, FsError, FsOp, FsReply, FsStats};
use nearflash_sim::SimTime;
use std::collections::BTreeMap;

pub struct DevFs {
    fs: Fs,
    /// Timing fidelity: device byte offset → the block the file system last wrote there.
    shadow: Option<BTreeMap<u64, Vec<u8>>>,
    /// Firmware request id → the file system's request and when it was submitted.
    inflight: BTreeMap<u64, (BlockRequest, SimTime)>,
    /// `Machine::firmware_completed` when `inflight` was last scanned for finished requests.
    fw_completed_seen: u64,
    /// The file system's operation id → the ticket its caller holds.
    tickets: BTreeMap<nearflash_fs::OpId, FsTicket>,
    next_ticket: u64,
    /// Answers not yet taken by their callers (bounded: one per operation in flight, and
    /// the file system admits at most `queue_depth_max` of those).
    done: BTreeMap<FsTicket, Result<FsReply, FsError>>,
    /// Answers produced so far (a caller waiting for one looks only when it grew).
    answered: u64,
}

/// An operation submitted to the drive's file system; its answer is taken with
/// [`DevFs::take`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct FsTicket(u64);

impl DevFs {
    /// mkfs on the drive (default `nearflash-fs` layout and run-time configuration, large
    /// allocations aligned to `stripe_bytes`), mounted.
    pub fn format(m: &mut Machine, stripe_bytes: u64) -> Result<DevFs, InsiderError> {
        let cfg = FsConfig {
            stripe_blocks: (stripe_bytes / nearflash_fs::BLOCK_BYTES as u64).max(1) as u32,
            ..FsConfig::default()
        };
        let fs = Fs::new(cfg, m.capacity_bytes(), true)?;
        let mut d = DevFs {
            fs,
            shadow: (!m.is_functional()).then(BTreeMap::new),
            inflight: BTreeMap::new(),
            fw_completed_seen: 0,
            tickets: BTreeMap::new(),
            next_ticket: 0,
            done: BTreeMap::new(),
            answered: 0,
        };
        let t = d.submit(m, Caller::ROOT, FsOp::Format(FormatOptions::default()));
        // Nothing else runs before the file system exists: mkfs waits on the loop alone, for
        // a turn that concerns the file system.
        loop {
            if let Some(r) = d.take(t) {
                r?;
                return Ok(d);
            }
            d.wait(m)?;
            d.pump(m);
        }
    }

    /// Runs the loop until a turn that concerns the file system: one of its block requests
    /// completed, or its timer came due.
    fn wait(&self, m: &mut Machine) -> Result<(), InsiderError> {
        let seen = self.fw_completed_seen;
        m.wait(|st| st.fw_completed() != seen || st.wake.due)?;
        Ok(())
    }

    /// Answers produced so far.
    pub fn answered(&self) -> u64 {
        self.answered
    }

    /// Firmware completions the file system has looked at (`Machine::firmware_completed`
    /// when it last did): a turn that moved it on concerns the file system.
    pub fn fw_completed_seen(&self) -> u64 {
        self.fw_completed_seen
    }

    pub fn stats(&self) -> FsStats {
        self.fs.stats()
    }

    /// Starts `op` as `caller` at the machine's `now` and hands its first block requests to
    /// the drive. Never waits: the answer comes with [`DevFs::take`] once [`DevFs::pump`] has
    /// seen the operation end.
    pub fn submit(&mut self, m: &mut Machine, caller: Caller, op: FsOp) -> FsTicket {
        let t = FsTicket(self.next_ticket);
        self.next_ticket += 1;
        match self.fs.submit(m.now(), caller, op) {
            Ok(id) => {
                self.tickets.insert(id, t);
            }
            Err(e) => {
                self.done.insert(t, Err(e));
                self.answered += 1;
            }
        }
        self.pump(m);
        t
    }

    /// The answer of `t` once its operation has ended (taking it).
    pub fn take(&mut self, t: FsTicket) -> Option<Result<FsReply, FsError>> {
        self.done.remove(&t)
    }

    /// Operations submitted whose answers have not been produced yet.
    pub fn busy(&self) -> bool {
        !self.tickets.is_empty()
    }

    /// Moves the file system on at the machine's `now`: its completed block requests, a due
    /// timer, new block requests, ended operations; then leaves its timer with the drive.
    /// Called after every turn that concerns it (and harmless after any other).
    pub fn pump(&mut self, m: &mut Machine) {
        loop {
            let now = m.now();
            let mut moved = false;
            // Only a firmware completion since the last look can have finished one of ours.
            let completed = m.firmware_completed();
            let finished: Vec<u64> = if completed == self.fw_completed_seen {
                Vec::new()
            } else {
                self.fw_completed_seen = completed;
                self.inflight
                    .keys()
                    .copied()
                    .filter(|&f| m.firmware_is_done(f))
                    .collect()
            };
            for f in finished {
                let result = m.firmware_done(f).expect("done");
                let (req, submitted) = self.inflight.remove(&f).expect("ours");
                let c = self.complete(req, submitted, now, result);
                self.fs.handle_block_completion(now, c);
                moved = true;
            }
            if self.fs.poll_timeout().is_some_and(|t| t <= now) {
                self.fs.handle_timeout(now);
                moved = true;
            }
            self.issue(m);
            while let Some(c) = self.fs.poll_completion() {
                let t = self
                    .tickets
                    .remove(&c.id)
                    .expect("an operation we submitted");
                self.done.insert(t, c.result);
                self.answered += 1;
                moved = true;
            }
            if !moved {
                m.set_fs_timer(self.fs.poll_timeout());
                return;
            }
        }
    }

    /// Hands the file system's block requests to the drive's firmware path.
    fn issue(&mut self, m: &mut Machine) {
        while let Some(mut r) = self.fs.poll_block_request() {
            let data = std::mem::take(&mut r.data);
            let payload = match &mut self.shadow {
                Some(shadow) => {
                    if r.op == BlockOp::Write {
                        shadow.insert(r.offset_bytes, data);
                    }
                    Vec::new()
                }
                None => data,
            };
            let now = m.now();
            let fw = m.firmware(r.op, r.offset_bytes, r.len_bytes, payload);
            self.inflight.insert(fw, (r, now));
        }
    }

    fn complete(
        &self,
        req: BlockRequest,
        submitted: SimTime,
        now: SimTime,
        result: Result<Vec<u8>, nearflash_blockdev::IoError>,
    ) -> BlockCompletion {
        let (result, data) = match result {
            Ok(data) => (Ok(()), data),
            Err(e) => (Err(e), Vec::new()),
        };
        let data = match (&self.shadow, req.op) {
            (Some(shadow), BlockOp::Read) => shadow
                .get(&req.offset_bytes)
                .cloned()
                .unwrap_or_else(|| vec![0; req.len_bytes as usize]),
            _ => data,
        };
        BlockCompletion {
            id: req.id,
            op: req.op,
            offset_bytes: req.offset_bytes,
            len_bytes: req.len_bytes,
            submitted,
            completed: now,
            result,
            data,
        }
    }
}
