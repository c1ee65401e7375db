//! A host driving the device one command at a time — the shape of the Python API the issue
//! asks for (`load_program`, `activate`, `create_range_set`, `memory_copy`, `execute`,
//! `memory_read`) and what `nearflash cs run` uses. It owns the one [`Sim`] and the device,
//! and waits with `Sim::run_until` under one watchdog.
//!
//! Block I/O on the NVM namespace (writing the input, the host-only path's reads) goes through
//! the same front end, `depth` requests in flight.

use crate::config::CsConfig;
use crate::device::{BuildError, Command, Completion, CsDevice, CsEvent, Drive, SubmitError};
use crate::port::{Port, PortServer};
use nearflash_blockdev::{BlockCompletion, BlockDevice, BlockOp, BlockRequest, IoError};
use nearflash_flash::{Geometry, MemoryStore};
use nearflash_nvme::{Nvme, NvmeConfig, NvmeError, NvmeEvent};
use nearflash_sim::{Progress, Schedule, Sim, SimDuration, SimTime, Stall, Watchdog};

/// The drive's layers, as a preset gives them.
/// The drive's configuration: the shared SSD assembly's (`[flash]`, `[ftl]`, `[write_cache]`,
/// `[nvme]`).
pub use nearflash_ssd::SsdConfig as DriveConfig;

/// The watchdog's limit: one hour of simulated time without a completion while something is
/// outstanding. Far above the longest command a default budget allows (2.5 × 10^8 + 100 per
/// byte of a 1 GiB range set, on the slowest default engine at 1600 MIPS: about 67 s).
pub const STALL_LIMIT: SimDuration = SimDuration(3_600_000_000_000);

#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("building the drive: {0}")]
    Drive(#[from] nearflash_ssd::SsdError),
    #[error("the drive's NVMe front end: {0}")]
    Nvme(#[from] NvmeError),
    #[error(transparent)]
    Build(#[from] BuildError),
    #[error(transparent)]
    Submit(#[from] SubmitError),
    #[error("the simulation stalled: {0}")]
    Stall(#[from] Stall),
    #[error("block I/O at byte {offset_bytes} of the NVM namespace failed: {source}")]
    Io { offset_bytes: u64, source: IoError },
    #[error(
        "copy_from_file names a file of a file system: only the drive of `nearflash serve` \
         (the control file, `nearflash cs --mount`) has one; here write the file with write_nvm"
    )]
    NoFileSystem,
    /// The file system refused the caller the file (its own check, as for `open(2)`), or
    /// it is not a regular file.
    #[error("{path}: {} (as uid {uid}, gid {gid})", std::io::Error::from_raw_os_error(*errno))]
    File {
        path: String,
        uid: u32,
        gid: u32,
        errno: i32,
    },
    #[error("{path}: a hole at byte {hole_at_bytes} (a sparse file): Memory Copy reads the LBAs a file holds")]
    Sparse { path: String, hole_at_bytes: u64 },
    #[error(
        "{what} on the served image's NVM namespace: its blocks are the file system's \
         (write the file through the mount and name it with copy_from_file)"
    )]
    ImageBlocks { what: &'static str },
    #[error("{len_bytes} bytes at byte {offset_bytes} do not fit the NVM namespace of {capacity_bytes} bytes")]
    TooLarge {
        offset_bytes: u64,
        len_bytes: u64,
        capacity_bytes: u64,
    },
}

/// The drive's loop and the device: over its own drive ([`Session::new`]), or over a
/// [`Port`] another loop serves ([`Session::over_port`]).
pub struct Session<D: BlockDevice = Drive> {
    sim: Sim<CsEvent<D::Event>>,
    dev: CsDevice<D>,
    next_block_id: u64,
}

impl Session {
    /// A freshly formatted drive (its flash keeps its data in memory) with `cs` around it.
    pub fn new(drive: &DriveConfig, cs: CsConfig, seed: u64) -> Result<Session, SessionError> {
        let mut sim: Sim<CsEvent> = Sim::new(seed);
        let geo = Geometry::from_config(&drive.flash);
        let store = Box::new(MemoryStore::new(
            geo.page_count(),
            drive.flash.page_size_bytes,
        ));
        let nvme = nearflash_ssd::format(drive, store, &mut sim.queue().map(CsEvent::Nvme))?;
        Ok(Session {
            sim,
            dev: CsDevice::new(cs, nvme)?,
            next_block_id: 0,
        })
    }
}

impl<D: BlockDevice> Session<D> {
    /// Offers a run computed outside the device to the next Execute (`Programs::expect`).
    pub fn expect_run(&mut self, k: crate::program::KnownRun) {
        self.dev.expect_run(k);
    }

    pub fn device(&self) -> &CsDevice<D> {
        &self.dev
    }

    pub fn now(&self) -> SimTime {
        self.sim.now()
    }

    /// The run's trace hash so far (same seed and inputs ⇒ same hash).
    pub fn trace_hash(&self) -> u64 {
        self.sim.trace_hash().finish()
    }

    fn progress(d: &CsDevice<D>) -> Progress {
        Progress {
            completed: d.completed_count(),
            outstanding: d.outstanding(),
        }
    }

    /// Submits `cmd` now and runs until it completes.
    pub fn call(&mut self, cmd: Command) -> Result<Completion, SessionError> {
        let id = self.dev.submit(cmd, self.sim.queue())?;
        let mut watchdog = Watchdog::starting_at(STALL_LIMIT, self.sim.now());
        self.sim
            .run_until(&mut self.dev, &mut watchdog, Self::progress, |d| {
                d.has_completed(id)
            })?;
        let mut done = Vec::new();
        self.dev.take_completions(&mut done);
        let i = done
            .iter()
            .position(|c| c.id == id)
            .expect("run_until stopped at its completion");
        assert_eq!(done.len(), 1, "one command at a time");
        Ok(done.swap_remove(i))
    }

    /// Submits host reads of `len_bytes` at `offset_bytes` in requests of `request_bytes`,
    /// all at once (the front end holds back what its queues cannot take), then `cmd`,
    /// and runs until both are done: the command contending with ordinary I/O. Answers the
    /// command's completion.
    pub fn call_beside_reads(
        &mut self,
        cmd: Command,
        offset_bytes: u64,
        len_bytes: u64,
        request_bytes: u64,
    ) -> Result<Completion, SessionError> {
        self.check_fits(offset_bytes, len_bytes)?;
        let reads = len_bytes.div_ceil(request_bytes);
        for i in 0..reads {
            let at = i * request_bytes;
            self.next_block_id += 1;
            let req = BlockRequest {
                id: self.next_block_id,
                op: BlockOp::Read,
                offset_bytes: offset_bytes + at,
                len_bytes: request_bytes.min(len_bytes - at),
                data: Vec::new(),
            };
            self.dev.submit_block(req, self.sim.queue());
        }
        let id = self.dev.submit(cmd, self.sim.queue())?;
        let mut watchdog = Watchdog::starting_at(STALL_LIMIT, self.sim.now());
        self.sim
            .run_until(&mut self.dev, &mut watchdog, Self::progress, |d| {
                d.has_completed(id) && d.block_completions_waiting() as u64 == reads
            })?;
        let mut blocks = Vec::new();
        self.dev.take_block_completions(&mut blocks);
        if let Some(c) = blocks.iter().find(|c| c.result.is_err()) {
            return Err(SessionError::Io {
                offset_bytes: c.offset_bytes,
                source: c.result.clone().expect_err("found an error"),
            });
        }
        let mut done = Vec::new();
        self.dev.take_completions(&mut done);
        assert_eq!(done.len(), 1, "one command at a time");
        Ok(done.remove(0))
    }

    /// Runs `reqs` through the front end with at most `depth` in flight; answers their
    /// completions in completion order.
    fn blocks(
        &mut self,
        mut reqs: impl Iterator<Item = BlockRequest>,
        depth: u32,
    ) -> Result<Vec<BlockCompletion>, SessionError> {
        assert!(depth > 0);
        let mut watchdog = Watchdog::starting_at(STALL_LIMIT, self.sim.now());
        let mut done = Vec::new();
        let mut out = 0u32;
        loop {
            while out < depth {
                let Some(r) = reqs.next() else { break };
                self.dev.submit_block(r, self.sim.queue());
                out += 1;
            }
            if out == 0 {
                return Ok(done);
            }
            let before = done.len();
            self.sim
                .run_until(&mut self.dev, &mut watchdog, Self::progress, |d| {
                    d.block_completions_waiting() > 0
                })?;
            self.dev.take_block_completions(&mut done);
            let landed = (done.len() - before) as u32;
            assert!(landed <= out && landed > 0, "a wait ends on a completion");
            out -= landed;
            for c in &done[before..] {
                if let Err(e) = &c.result {
                    return Err(SessionError::Io {
                        offset_bytes: c.offset_bytes,
                        source: e.clone(),
                    });
                }
            }
        }
    }

    fn check_fits(&self, offset_bytes: u64, len_bytes: u64) -> Result<(), SessionError> {
        let capacity_bytes = self.dev.nvm_lbas() * crate::device::LBA_BYTES;
        if offset_bytes
            .checked_add(len_bytes)
            .is_none_or(|e| e > capacity_bytes)
        {
            return Err(SessionError::TooLarge {
                offset_bytes,
                len_bytes,
                capacity_bytes,
            });
        }
        Ok(())
    }

    /// Writes `data` at `offset_bytes` of the NVM namespace in requests of `request_bytes`
    /// (the tail padded with zeros to a whole LBA), then flushes.
    pub fn write_nvm(
        &mut self,
        offset_bytes: u64,
        data: &[u8],
        request_bytes: u64,
        depth: u32,
    ) -> Result<(), SessionError> {
        let lba = crate::device::LBA_BYTES;
        let padded = (data.len() as u64).div_ceil(lba) * lba;
        self.check_fits(offset_bytes, padded)?;
        let mut id = self.next_block_id;
        let reqs = (0..padded.div_ceil(request_bytes)).map(|i| {
            let at = i * request_bytes;
            let len = request_bytes.min(padded - at);
            let mut chunk =
                data[(at as usize).min(data.len())..((at + len) as usize).min(data.len())].to_vec();
            chunk.resize(len as usize, 0);
            id += 1;
            BlockRequest {
                id,
                op: BlockOp::Write,
                offset_bytes: offset_bytes + at,
                len_bytes: len,
                data: chunk,
            }
        });
        self.blocks(reqs, depth)?;
        self.next_block_id = id + 1;
        let flush = BlockRequest {
            id: self.next_block_id,
            op: BlockOp::Flush,
            offset_bytes: 0,
            len_bytes: 0,
            data: Vec::new(),
        };
        self.next_block_id += 1;
        self.blocks(std::iter::once(flush), 1)?;
        Ok(())
    }

    /// Reads `len_bytes` at `offset_bytes` of the NVM namespace in requests of
    /// `request_bytes`, `depth` in flight, into host memory; answers the data and each
    /// request's completion time, in completion order.
    pub fn read_nvm(
        &mut self,
        offset_bytes: u64,
        len_bytes: u64,
        request_bytes: u64,
        depth: u32,
    ) -> Result<(Vec<u8>, Vec<SimTime>), SessionError> {
        self.check_fits(offset_bytes, len_bytes)?;
        let first = self.next_block_id;
        let reqs = (0..len_bytes.div_ceil(request_bytes)).map(|i| {
            let at = i * request_bytes;
            BlockRequest {
                id: first + i,
                op: BlockOp::Read,
                offset_bytes: offset_bytes + at,
                len_bytes: request_bytes.min(len_bytes - at),
                data: Vec::new(),
            }
        });
        let done = self.blocks(reqs, depth)?;
        self.next_block_id = first + done.len() as u64;
        let mut data = vec![0u8; len_bytes as usize];
        let mut times = Vec::with_capacity(done.len());
        for c in done {
            let at = (c.offset_bytes - offset_bytes) as usize;
            let n = c.data.len().min(c.len_bytes as usize);
            data[at..at + n].copy_from_slice(&c.data[..n]);
            times.push(c.completed);
        }
        Ok((data, times))
    }
}

impl Session<Port> {
    /// `cs` around an NVMe front end whose namespace is a [`Port`] of `capacity_bytes`
    /// (the served device's), its clock starting at `start` (the server's now).
    pub fn over_port(
        nvme: NvmeConfig,
        cs: CsConfig,
        capacity_bytes: u64,
        seed: u64,
        start: SimTime,
    ) -> Result<Session<Port>, SessionError> {
        let mut sim: Sim<CsEvent<crate::port::Landed>> = Sim::new(seed);
        sim.queue().advance_clock(start);
        let nvme = Nvme::new(nvme, Port::new(capacity_bytes))?;
        Ok(Session {
            sim,
            dev: CsDevice::new(cs, nvme)?,
            next_block_id: 0,
        })
    }

    /// Moves the drive's clock to `t` (the server's now), running what is due by then.
    pub fn advance_to(&mut self, t: SimTime) {
        assert!(t >= self.sim.now(), "the drive's clock never goes back");
        self.sim.advance_to(t, &mut self.dev);
    }

    /// Submits `cmd` now and runs until it completes, the port's requests served by
    /// `server`: the two loops step together in time order — the server runs up to the
    /// drive's next event (or until one of its requests finishes, which lands in the port at
    /// that instant), then the drive takes its next event — under the drive's watchdog (the
    /// server's own guards its unbounded waits). The server's clock is never ahead of the
    /// drive's next event, so every request the drive issues goes in at the drive's now.
    pub fn call_served(
        &mut self,
        cmd: Command,
        server: &mut impl PortServer,
    ) -> Result<Completion, SessionError> {
        assert!(
            server.now() <= self.sim.now(),
            "the server starts no later than the drive"
        );
        let id = self.dev.submit(cmd, self.sim.queue())?;
        let mut watchdog = Watchdog::starting_at(STALL_LIMIT, self.sim.now());
        let mut landed = Vec::new();
        while !self.dev.has_completed(id) {
            for req in self.dev.drive_mut().take_outbox() {
                server.submit(self.sim.now(), req);
            }
            if server.outstanding() > 0 {
                server.run_until_done(self.sim.next_deadline(), &mut landed)?;
                let mut q = self
                    .sim
                    .queue()
                    .map(|e| CsEvent::Nvme(NvmeEvent::Device(e)));
                for c in landed.drain(..) {
                    self.dev.drive_mut().land(c, &mut q);
                }
            }
            let stepped = self
                .sim
                .step_watched(&mut self.dev, &mut watchdog, Self::progress)?;
            // With nothing pending, the command in flight is outstanding: a stall, not false.
            assert!(stepped, "a command in flight keeps the loop going");
        }
        let mut done = Vec::new();
        self.dev.take_completions(&mut done);
        assert_eq!(done.len(), 1, "one command at a time");
        Ok(done.remove(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::LBA_BYTES;

    /// A device answering each read `LATENCY` after it goes in, one at a time, its LBA `i`
    /// holding bytes of value `i`.
    struct Slow {
        now: SimTime,
        busy_until: SimTime,
        inflight: Vec<(SimTime, BlockRequest)>,
        served: u64,
    }

    const LATENCY: SimDuration = SimDuration(50_000);

    impl PortServer for Slow {
        fn now(&self) -> SimTime {
            self.now
        }
        fn submit(&mut self, at: SimTime, req: BlockRequest) {
            self.now = self.now.max(at);
            self.busy_until = self.busy_until.max(self.now) + LATENCY;
            self.inflight.push((self.busy_until, req));
        }
        fn outstanding(&self) -> u64 {
            self.inflight.len() as u64
        }
        fn run_until_done(
            &mut self,
            limit: Option<SimTime>,
            out: &mut Vec<BlockCompletion>,
        ) -> Result<(), Stall> {
            let (at, _) = self.inflight[0];
            if limit.is_some_and(|l| at > l) {
                return Ok(());
            }
            let (at, req) = self.inflight.remove(0);
            self.now = at;
            self.served += 1;
            let data = (0..req.len_bytes)
                .map(|i| ((req.offset_bytes + i) / LBA_BYTES) as u8)
                .collect();
            out.push(BlockCompletion {
                id: req.id,
                op: req.op,
                offset_bytes: req.offset_bytes,
                len_bytes: req.len_bytes,
                submitted: at,
                completed: at,
                result: Ok(()),
                data,
            });
            Ok(())
        }
    }

    #[test]
    fn a_memory_copy_over_a_port_reads_its_server_on_one_clock() {
        let start = SimTime(1_000_000);
        let mut s = Session::over_port(
            NvmeConfig::default(),
            CsConfig::default(),
            1 << 30,
            1,
            start,
        )
        .unwrap();
        let mut server = Slow {
            now: start,
            busy_until: start,
            inflight: Vec::new(),
            served: 0,
        };
        let copy = Command::CopyFromNvm {
            dest_bytes: 0,
            sources: vec![(3, 2), (7, 1)],
        };
        let done = s.call_served(copy, &mut server).unwrap();
        assert_eq!(done.result, Ok(0));
        // Two reads (one per source range, within a copy chunk), the server serving one after
        // the other: the copy took at least their time, and the drive's clock is the
        // command's end, not behind the server's.
        assert_eq!(server.served, 2);
        assert!(done.completed.since(done.submitted) >= SimDuration(2 * LATENCY.0));
        assert_eq!(s.now(), done.completed);
        assert!(server.now <= s.now());
        let read = Command::MemoryRead {
            offset_bytes: 0,
            len_bytes: 3 * LBA_BYTES,
        };
        let got = s.call_served(read, &mut server).unwrap();
        let want: Vec<u8> = [3u8, 4, 7]
            .iter()
            .flat_map(|&b| std::iter::repeat_n(b, LBA_BYTES as usize))
            .collect();
        assert_eq!(got.data, want);
    }
}
