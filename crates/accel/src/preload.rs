//! Untimed preconditioning shared by the accelerator's flash backbone and the SIMD host's SSD:
//! write a list of extents closed-loop at a fixed queue depth and run the device until every
//! write has completed, so the timed run reads data the FTL really maps.
//!
//! It runs on the machine's own `sim::Sim` (its clock, RNG and queue), with a model that
//! hands every event to the device — nothing but the device has events yet — and a watchdog,
//! so a device that stops completing writes is an error, not a spin. Whatever background work
//! the writes leave pending stays queued for the timed run.

use crate::error::AccelError;
use nearflash_blockdev::load::DEFAULT_STALL_LIMIT;
use nearflash_blockdev::{BlockCompletion, BlockDevice, BlockOp, BlockRequest};
use nearflash_sim::{EventQueue, Model, Progress, Schedule, Sim, SimRng, TraceEvent, Watchdog};

/// Writes kept in flight while preconditioning.
const PRELOAD_QUEUE_DEPTH: u32 = 64;

/// The machine before its run: only the device has events. `wrap` and `unwrap` turn the
/// device's events into the machine's and back.
struct DeviceOnly<'a, D: BlockDevice, P> {
    dev: &'a mut D,
    wrap: fn(D::Event) -> P,
    unwrap: fn(P) -> D::Event,
}

impl<D: BlockDevice, P: TraceEvent> Model for DeviceOnly<'_, D, P> {
    type Event = P;

    fn handle(&mut self, ev: P, q: &mut EventQueue<P>, rng: &mut SimRng) {
        self.dev
            .handle((self.unwrap)(ev), &mut q.map(self.wrap), rng);
    }
}

/// Writes every `(offset_bytes, len_bytes)` extent with the payload `payload(offset_bytes,
/// len_bytes)` gives (empty in timing fidelity). Request ids continue from `next_id`; a
/// failed write is an error naming `what`.
#[allow(clippy::too_many_arguments)]
pub fn write_extents<D: BlockDevice, P: TraceEvent>(
    sim: &mut Sim<P>,
    dev: &mut D,
    wrap: fn(D::Event) -> P,
    unwrap: fn(P) -> D::Event,
    next_id: &mut u64,
    extents: impl Iterator<Item = (u64, u64)>,
    mut payload: impl FnMut(u64, u64) -> Vec<u8>,
    what: &'static str,
) -> Result<(), AccelError> {
    let mut extents = extents;
    let mut model = DeviceOnly { dev, wrap, unwrap };
    let mut watchdog = Watchdog::starting_at(DEFAULT_STALL_LIMIT, sim.now());
    let mut completions: Vec<BlockCompletion> = Vec::new();
    let (mut inflight, mut completed) = (0u32, 0u64);
    let mut exhausted = false;
    loop {
        while inflight < PRELOAD_QUEUE_DEPTH && !exhausted {
            match extents.next() {
                Some((offset_bytes, len_bytes)) => {
                    let req = BlockRequest {
                        id: *next_id,
                        op: BlockOp::Write,
                        offset_bytes,
                        len_bytes,
                        data: payload(offset_bytes, len_bytes),
                    };
                    model.dev.submit(req, &mut sim.queue().map(wrap));
                    *next_id += 1;
                    inflight += 1;
                }
                None => exhausted = true,
            }
        }
        model.dev.take_completions(&mut completions);
        for c in completions.drain(..) {
            c.result.map_err(|source| AccelError::Io {
                op: c.op,
                offset_bytes: c.offset_bytes,
                source,
            })?;
            inflight -= 1;
            completed += 1;
        }
        if inflight == 0 && exhausted {
            return Ok(());
        }
        let progress = Progress {
            completed,
            outstanding: u64::from(inflight),
        };
        let stepped = sim
            .step_watched(&mut model, &mut watchdog, |_| progress)
            .map_err(|stall| AccelError::Stalled { what, stall })?;
        assert!(
            stepped,
            "writes are outstanding, so an empty queue is a stall"
        );
    }
}
