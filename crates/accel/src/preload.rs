//! Untimed preconditioning shared by the accelerator's flash backbone and the SIMD host's SSD:
//! write a list of extents closed-loop at a fixed queue depth and run the device until every
//! write has completed, so the timed run reads data the FTL really maps.
//!
//! It is a phase of the machine's own run ([`Preload`], a `sim::Model` that hands every event
//! to the device — nothing but the device has events yet — and submits the next write as one
//! completes), waited on through the machine's `sim::Driver` like any wait: a device that stops
//! completing writes is the one `sim::Stall`, not a spin. Whatever background work the writes
//! leave pending stays queued for the timed run.

use crate::error::AccelError;
use nearflash_blockdev::{BlockCompletion, BlockDevice, BlockOp, BlockRequest};
use nearflash_sim::{Driver, EventQueue, Model, Progress, Schedule, SimRng, TraceEvent};

/// How the device's events become the machine's (`P`), and back.
pub type Wrapping<D, P> = (
    fn(<D as BlockDevice>::Event) -> P,
    fn(P) -> <D as BlockDevice>::Event,
);

/// Writes kept in flight while preconditioning.
const PRELOAD_QUEUE_DEPTH: u32 = 64;

/// The preconditioning phase of a machine whose events are `P`: only the device has events.
/// `wrap` and `unwrap` turn the device's events into the machine's and back; `payload(offset,
/// len)` is a write's data (empty in timing fidelity); request ids continue from `next_id`.
pub struct Preload<'m, D: BlockDevice, P, F> {
    dev: &'m mut D,
    wrap: fn(D::Event) -> P,
    unwrap: fn(P) -> D::Event,
    next_id: &'m mut u64,
    payload: F,
    /// `(offset_bytes, len_bytes)` still to submit.
    extents: std::vec::IntoIter<(u64, u64)>,
    completions: Vec<BlockCompletion>,
    inflight: u32,
    completed: u64,
    /// The first write that failed (the phase ends on it).
    failure: Option<AccelError>,
}

impl<'m, D, P, F> Preload<'m, D, P, F>
where
    D: BlockDevice,
    P: TraceEvent,
    F: FnMut(u64, u64) -> Vec<u8>,
{
    pub fn new(
        dev: &'m mut D,
        (wrap, unwrap): Wrapping<D, P>,
        next_id: &'m mut u64,
        payload: F,
    ) -> Self {
        Preload {
            dev,
            wrap,
            unwrap,
            next_id,
            payload,
            extents: Vec::new().into_iter(),
            completions: Vec::new(),
            inflight: 0,
            completed: 0,
            failure: None,
        }
    }

    /// Keeps the queue depth up, then takes what completed. Called before the first event and
    /// after every one, so writes are submitted between events at the instant the old
    /// closed loop submitted them (the device's state after preconditioning, and so every
    /// run, depends on it).
    fn feed(&mut self, q: &mut EventQueue<P>) {
        while self.inflight < PRELOAD_QUEUE_DEPTH {
            let Some((offset_bytes, len_bytes)) = self.extents.next() else {
                break;
            };
            let req = BlockRequest {
                id: *self.next_id,
                op: BlockOp::Write,
                offset_bytes,
                len_bytes,
                data: (self.payload)(offset_bytes, len_bytes),
            };
            self.dev.submit(req, &mut q.map(self.wrap));
            *self.next_id += 1;
            self.inflight += 1;
        }
        assert!(self.inflight <= PRELOAD_QUEUE_DEPTH);
        self.dev.take_completions(&mut self.completions);
        for c in self.completions.drain(..) {
            assert!(self.inflight > 0, "a completion has its write");
            self.inflight -= 1;
            self.completed += 1;
            if let Err(source) = c.result {
                self.failure.get_or_insert(AccelError::Io {
                    op: c.op,
                    offset_bytes: c.offset_bytes,
                    source,
                });
            }
        }
    }

    /// Every write completed, or one failed.
    fn finished(&self) -> bool {
        self.failure.is_some() || (self.inflight == 0 && self.extents.as_slice().is_empty())
    }
}

impl<D, P, F> Model for Preload<'_, D, P, F>
where
    D: BlockDevice,
    P: TraceEvent,
    F: FnMut(u64, u64) -> Vec<u8>,
{
    type Event = P;

    fn handle(&mut self, ev: P, q: &mut EventQueue<P>, rng: &mut SimRng) {
        self.dev
            .handle((self.unwrap)(ev), &mut q.map(self.wrap), rng);
        self.feed(q);
    }

    fn progress(&self) -> Progress {
        Progress {
            completed: self.completed,
            outstanding: u64::from(self.inflight),
        }
    }
}

/// Writes every `(offset_bytes, len_bytes)` extent of `extents` on `driver`'s loop, through the
/// [`Preload`] phase `phase` makes from the driver's model, and waits until all have
/// completed. A failed write is its error; a device that stops completing them is
/// `AccelError::Stalled` naming `what`.
pub fn write_extents<'m, M, D, F>(
    driver: &'m mut Driver<M>,
    phase: impl FnOnce(&'m mut M) -> Preload<'m, D, M::Event, F>,
    extents: Vec<(u64, u64)>,
    what: &'static str,
) -> Result<(), AccelError>
where
    M: Model,
    D: BlockDevice + 'm,
    F: FnMut(u64, u64) -> Vec<u8>,
{
    let done = driver
        .run_phase_until(
            |model, q| {
                let mut p = phase(model);
                p.extents = extents.into_iter();
                p.feed(q);
                p
            },
            Preload::finished,
        )
        .map_err(|stall| AccelError::Stalled { what, stall })?;
    match done.failure {
        Some(e) => Err(e),
        None => {
            assert_eq!(done.inflight, 0, "every write completed");
            Ok(())
        }
    }
}
