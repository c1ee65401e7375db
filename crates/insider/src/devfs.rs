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
}

impl DevFs {
    /// mkfs on the drive (default `nearflash-fs` layout and run-time configuration, large
    /// allocations aligned to `stripe_bytes`), mounted.
    pub fn format(m: &mut Machine, stripe_bytes: u64) -> Result<DevFs, InsiderError> {
        let cfg = FsConfig {
            stripe_blocks: (stripe_bytes / nearflash_fs::BLOCK_BYTES as u64).max(1) as u32,
            ..FsConfig::default()
        };
        let fs = Fs::new(cfg, m.capacity_bytes(), true)
            .map_err(|e| InsiderError::Device(format!("device file system: {e}")))?;
        let mut d = DevFs {
            fs,
            shadow: (!m.is_functional()).then(BTreeMap::new),
            inflight: BTreeMap::new(),
        };
        d.run(m, Caller::ROOT, FsOp::Format(FormatOptions::default()))?
            .map_err(|e| InsiderError::Device(format!("mkfs on the drive: {e}")))?;
        Ok(d)
    }

    pub fn stats(&self) -> FsStats {
        self.fs.stats()
    }

    /// Runs one operation to completion, the machine (and every stream) running meanwhile.
    /// The outer error is the machine's (a stall); the inner the operation's answer.
    pub fn run(
        &mut self,
        m: &mut Machine,
        caller: Caller,
        op: FsOp,
    ) -> Result<Result<FsReply, FsError>, InsiderError> {
        let id = match self.fs.submit(m.now(), caller, op) {
            Ok(id) => id,
            Err(e) => return Ok(Err(e)),
        };
        loop {
            self.issue(m);
            if let Some(c) = self.fs.poll_completion() {
                assert_eq!(c.id, id, "one operation at a time");
                return Ok(c.result);
            }
            let waiting: Vec<u64> = self.inflight.keys().copied().collect();
            let timer = self.fs.poll_timeout();
            if waiting.is_empty() && timer.is_none() {
                return Err(InsiderError::Device(
                    "device file system waits for nothing and has not finished".into(),
                ));
            }
            let any_done = |m: &Machine| waiting.iter().any(|&f| m.firmware_is_done(f));
            match timer {
                Some(t) => {
                    m.run_until_deadline(t, any_done)?;
                }
                None => m.run_until(any_done)?,
            }
            let now = m.now();
            for f in waiting {
                if let Some(result) = m.firmware_done(f) {
                    let (req, submitted) = self.inflight.remove(&f).expect("ours");
                    let c = self.complete(req, submitted, now, result);
                    self.fs.handle_block_completion(now, c);
                }
            }
            if self.fs.poll_timeout().is_some_and(|t| t <= now) {
                self.fs.handle_timeout(now);
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
            let fw = m.firmware(now, r.op, r.offset_bytes, r.len_bytes, payload);
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
