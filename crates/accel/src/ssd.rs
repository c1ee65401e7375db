//! SIMD's NVMe SSD as the host sees it: the project's flash device (`nearflash-ftl`) on the
//! one simulation loop (`sim::Sim`), which is also the run's clock. The host's file system turns a byte range
//! into requests of at most `io_request_bytes`, keeps `io_queue_depth` in flight, and spends
//! `io_stack_request_ns` of host CPU on each before it reaches the drive. Every event after
//! preconditioning goes into the trace hash.

use crate::error::AccelError;
use crate::host::HostConfig;
use crate::server::FifoServer;
use nearflash_blockdev::load::{RigEvent, DEFAULT_STALL_LIMIT};
use nearflash_flash::{FlashConfig, NoStore};
use nearflash_ftl::{BlockCompletion, BlockOp, BlockRequest, Device, Event, FtlConfig};
use nearflash_sim::{
    EventQueue, Model, Progress, Schedule, Sim, SimDuration, SimRng, SimTime, Watchdog,
};
use std::collections::BTreeMap;

/// The drive and the requests the host's stack is still preparing: a `sim::Model`.
struct Drive {
    dev: Device,
    next_request: u64,
    /// Host tokens that submit a request when they fire (the host CPU finished its stack work).
    submits: BTreeMap<u64, (BlockOp, u64, u64)>,
}

impl Model for Drive {
    type Event = RigEvent<Event>;

    fn handle(
        &mut self,
        ev: RigEvent<Event>,
        q: &mut EventQueue<RigEvent<Event>>,
        rng: &mut SimRng,
    ) {
        match ev {
            RigEvent::Arrival(token) => {
                let (op, offset_bytes, len_bytes) = self
                    .submits
                    .remove(&token)
                    .expect("every arrival token has its request");
                let id = self.next_request;
                self.next_request += 1;
                let req = BlockRequest {
                    id,
                    op,
                    offset_bytes,
                    len_bytes,
                    data: Vec::new(),
                };
                self.dev.submit(req, &mut q.map(RigEvent::Device));
            }
            RigEvent::Device(e) => self.dev.handle(e, &mut q.map(RigEvent::Device), rng),
        }
    }
}

pub struct Ssd {
    sim: Sim<RigEvent<Event>>,
    drive: Drive,
    next_token: u64,
    completions: Vec<BlockCompletion>,
    /// Bytes the timed run read from / wrote to the drive.
    pub read_bytes: u64,
    pub write_bytes: u64,
}

impl Ssd {
    pub fn format(flash: &FlashConfig, ftl: &FtlConfig, seed: u64) -> Result<Ssd, AccelError> {
        let mut sim = Sim::new(seed);
        let dev = Device::format(
            flash,
            ftl,
            Box::new(NoStore),
            &mut sim.queue().map(RigEvent::Device),
        )
        .map_err(|e| AccelError::Device(format!("SSD: {e}")))?;
        Ok(Ssd {
            sim,
            drive: Drive {
                dev,
                next_request: 0,
                submits: BTreeMap::new(),
            },
            next_token: 0,
            completions: Vec::new(),
            read_bytes: 0,
            write_bytes: 0,
        })
    }

    pub fn dev(&self) -> &Device {
        &self.drive.dev
    }

    /// The run's clock.
    pub fn now(&self) -> SimTime {
        self.sim.now()
    }

    /// Events processed so far.
    pub fn events(&self) -> u64 {
        self.sim.events()
    }

    pub fn trace_hash(&self) -> String {
        self.sim.trace_hash().hex()
    }

    /// Summed die and channel busy time so far.
    pub fn device_busy(&self) -> (u64, u64) {
        let now = self.sim.now();
        (
            self.drive.dev.die_busy_ns(now).iter().sum(),
            self.drive.dev.channel_busy_ns(now).iter().sum(),
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
        let from = self.sim.now();
        let start = round_down(offset, 512);
        let end = round_up(offset + bytes, 512);
        let step = host.io_request_bytes;
        let mut todo = (start..end)
            .step_by(step as usize)
            .map(|a| (a, step.min(end - a)));
        cpu.serve(from, SimDuration::from_ns(host.syscall_ns));
        let mut watchdog = Watchdog::starting_at(DEFAULT_STALL_LIMIT, from);
        let (mut inflight, mut completed) = (0u32, 0u64);
        let mut exhausted = false;
        loop {
            while inflight < host.io_queue_depth && !exhausted {
                match todo.next() {
                    Some((o, len)) => {
                        let at = cpu.serve(
                            self.sim.now(),
                            SimDuration::from_ns(host.io_stack_request_ns),
                        );
                        self.next_token += 1;
                        let token = self.next_token;
                        self.drive.submits.insert(token, (op, o, len));
                        self.sim.queue().schedule_at(at, RigEvent::Arrival(token));
                        inflight += 1;
                    }
                    None => exhausted = true,
                }
            }
            if inflight == 0 {
                break;
            }
            if !self.sim.step(&mut self.drive) {
                return Err(AccelError::Device(format!(
                    "SSD {op:?}: {inflight} request(s) outstanding and no event pending"
                )));
            }
            self.drive.dev.take_completions(&mut self.completions);
            for c in self.completions.drain(..) {
                c.result
                    .map_err(|e| AccelError::Device(format!("SSD {op:?}: {e}")))?;
                match c.op {
                    BlockOp::Read => self.read_bytes += c.len_bytes,
                    _ => self.write_bytes += c.len_bytes,
                }
                inflight -= 1;
                completed += 1;
            }
            let progress = Progress {
                completed,
                outstanding: u64::from(inflight),
            };
            watchdog
                .observe(self.sim.now(), progress)
                .map_err(|e| AccelError::Device(format!("SSD {op:?}: {e}")))?;
        }
        Ok(())
    }

    /// Runs the drive (its background work included) until `at` (or now, if `at` is past).
    pub fn advance_to(&mut self, at: SimTime) {
        let t = at.max(self.sim.now());
        self.sim.advance_to(t, &mut self.drive);
    }

    /// Writes the input files (untimed preconditioning); the trace hash starts after it.
    pub fn preload(&mut self, files: &[(u64, u64)], request_bytes: u64) -> Result<(), AccelError> {
        let step = request_bytes.max(1 << 20);
        let todo = files.iter().flat_map(|&(base, len)| {
            (base..base + len)
                .step_by(step as usize)
                .map(move |a| (a, step.min(base + len - a)))
        });
        crate::preload::write_extents(
            &mut self.sim,
            &mut self.drive.dev,
            RigEvent::Device,
            |e| match e {
                RigEvent::Device(d) => d,
                RigEvent::Arrival(t) => unreachable!("host token {t} while preconditioning"),
            },
            &mut self.drive.next_request,
            todo,
            |_, _| Vec::new(),
            "SSD preconditioning",
        )?;
        self.sim.restart_trace();
        Ok(())
    }
}

fn round_up(x: u64, to: u64) -> u64 {
    x.div_ceil(to) * to
}

fn round_down(x: u64, to: u64) -> u64 {
    x / to * to
}
