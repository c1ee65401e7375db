//! SIMD's NVMe SSD as the host sees it: the project's flash device (`nearflash-ftl`) on its
//! own event queue, which is also the run's clock. The host's file system turns a byte range
//! into requests of at most `io_request_bytes`, keeps `io_queue_depth` in flight, and spends
//! `io_stack_request_ns` of host CPU on each before it reaches the drive. Every popped event
//! goes into the trace hash.

use crate::error::AccelError;
use crate::host::HostConfig;
use crate::server::FifoServer;
use nearflash_blockdev::load::RigEvent;
use nearflash_flash::{FlashConfig, NoStore};
use nearflash_ftl::{BlockCompletion, BlockOp, BlockRequest, Device, Event, FtlConfig};
use nearflash_sim::{EventQueue, Schedule, SimDuration, SimRng, SimTime, TraceEvent, TraceHasher};
use std::collections::BTreeMap;

pub struct Ssd {
    pub q: EventQueue<RigEvent<Event>>,
    pub dev: Device,
    rng: SimRng,
    pub hash: TraceHasher,
    next_request: u64,
    next_token: u64,
    /// Host tokens that submit a request when they fire (the host CPU finished its stack work).
    submits: BTreeMap<u64, (BlockOp, u64, u64)>,
    completions: Vec<BlockCompletion>,
    /// Bytes the timed run read from / wrote to the drive.
    pub read_bytes: u64,
    pub write_bytes: u64,
}

impl Ssd {
    pub fn format(flash: &FlashConfig, ftl: &FtlConfig, seed: u64) -> Result<Ssd, AccelError> {
        let mut q = EventQueue::new();
        let dev = Device::format(flash, ftl, Box::new(NoStore), &mut q.map(RigEvent::Device))
            .map_err(|e| AccelError::Device(format!("SSD: {e}")))?;
        Ok(Ssd {
            q,
            dev,
            rng: SimRng::seed_from_u64(seed),
            hash: TraceHasher::default(),
            next_request: 0,
            next_token: 0,
            submits: BTreeMap::new(),
            completions: Vec::new(),
            read_bytes: 0,
            write_bytes: 0,
        })
    }

    /// Summed die and channel busy time so far.
    pub fn device_busy(&self) -> (u64, u64) {
        let now = self.q.now();
        (
            self.dev.die_busy_ns(now).iter().sum(),
            self.dev.channel_busy_ns(now).iter().sum(),
        )
    }

    /// Reads or writes `bytes` at `offset` (rounded out to sectors) through the host's
    /// storage stack on `cpu`; returns when every request has completed.
    pub fn io(
        &mut self,
        host: &HostConfig,
        cpu: &mut FifoServer,
        op: BlockOp,
        offset: u64,
        bytes: u64,
    ) -> Result<(), AccelError> {
        let from = self.q.now();
        let start = round_down(offset, 512);
        let end = round_up(offset + bytes, 512);
        let step = host.io_request_bytes;
        let mut todo = (start..end)
            .step_by(step as usize)
            .map(|a| (a, step.min(end - a)));
        cpu.serve(from, SimDuration::from_ns(host.syscall_ns));
        let mut inflight = 0u32;
        let mut exhausted = false;
        loop {
            while inflight < host.io_queue_depth && !exhausted {
                match todo.next() {
                    Some((o, len)) => {
                        let at =
                            cpu.serve(self.q.now(), SimDuration::from_ns(host.io_stack_request_ns));
                        let token = self.token();
                        self.submits.insert(token, (op, o, len));
                        self.q.schedule_at(at, RigEvent::Arrival(token));
                        inflight += 1;
                    }
                    None => exhausted = true,
                }
            }
            if inflight == 0 {
                break;
            }
            self.step()?;
            self.dev.take_completions(&mut self.completions);
            for c in self.completions.drain(..) {
                c.result
                    .map_err(|e| AccelError::Device(format!("SSD {op:?}: {e}")))?;
                match c.op {
                    BlockOp::Read => self.read_bytes += c.len_bytes,
                    _ => self.write_bytes += c.len_bytes,
                }
                inflight -= 1;
            }
        }
        Ok(())
    }

    fn token(&mut self) -> u64 {
        self.next_token += 1;
        self.next_token
    }

    /// Pops one event: a host token submits its request; the rest go to the device.
    fn step(&mut self) -> Result<Option<u64>, AccelError> {
        let (at, ev) = self
            .q
            .pop()
            .ok_or_else(|| AccelError::Device("SSD: event queue ran dry".into()))?;
        self.hash.word(at.as_ns());
        self.hash.word(ev.hash_word());
        match ev {
            RigEvent::Arrival(token) => match self.submits.remove(&token) {
                Some((op, offset_bytes, len_bytes)) => {
                    self.submit(op, offset_bytes, len_bytes);
                    Ok(None)
                }
                None => Ok(Some(token)),
            },
            RigEvent::Device(e) => {
                self.dev
                    .handle(e, &mut self.q.map(RigEvent::Device), &mut self.rng);
                Ok(None)
            }
        }
    }

    fn submit(&mut self, op: BlockOp, offset_bytes: u64, len_bytes: u64) {
        let id = self.next_request;
        self.next_request += 1;
        self.dev.submit(
            BlockRequest {
                id,
                op,
                offset_bytes,
                len_bytes,
                data: Vec::new(),
            },
            &mut self.q.map(RigEvent::Device),
        );
    }

    /// Runs the queue (the SSD's background work included) until `at`.
    pub fn advance_to(&mut self, at: SimTime) {
        let token = self.token();
        self.q
            .schedule_at(at.max(self.q.now()), RigEvent::Arrival(token));
        loop {
            match self.step().expect("the marker is queued") {
                Some(t) if t == token => return,
                _ => {}
            }
        }
    }

    /// Writes the input files (untimed preconditioning).
    pub fn preload(&mut self, files: &[(u64, u64)], request_bytes: u64) -> Result<(), AccelError> {
        let step = request_bytes.max(1 << 20);
        let todo = files.iter().flat_map(|&(base, len)| {
            (base..base + len)
                .step_by(step as usize)
                .map(move |a| (a, step.min(base + len - a)))
        });
        crate::preload::write_extents(
            &mut self.dev,
            &mut self.q,
            RigEvent::Device,
            |e| match e {
                RigEvent::Device(d) => d,
                RigEvent::Arrival(t) => unreachable!("host token {t} while preconditioning"),
            },
            &mut self.rng,
            &mut self.next_request,
            todo,
            |_, _| Vec::new(),
            "SSD preconditioning",
        )
    }
}

fn round_up(x: u64, to: u64) -> u64 {
    x.div_ceil(to) * to
}

fn round_down(x: u64, to: u64) -> u64 {
    x / to * to
}
