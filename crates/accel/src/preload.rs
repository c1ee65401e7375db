//! Untimed preconditioning shared by the accelerator's flash backbone and the SIMD host's SSD:
//! write a list of extents closed-loop at a fixed queue depth and run the device until every
//! write has completed, so the timed run reads data the FTL really maps.

use crate::error::AccelError;
use nearflash_ftl::{BlockOp, BlockRequest, Device, Event};
use nearflash_sim::{EventQueue, Schedule, SimRng};

/// Writes kept in flight while preconditioning.
const PRELOAD_QUEUE_DEPTH: u32 = 64;

/// Writes every `(offset_bytes, len_bytes)` extent with the payload `payload(offset_bytes,
/// len_bytes)` gives (empty in timing fidelity). Request ids continue from `next_id`; a
/// failed write is an error naming `what`. `q` is the machine's queue, whose events `wrap`
/// and `unwrap` turn from and into the device's (nothing but the device has events yet).
#[allow(clippy::too_many_arguments)]
pub fn write_extents<P>(
    dev: &mut Device,
    q: &mut EventQueue<P>,
    wrap: impl Fn(Event) -> P + Copy,
    unwrap: impl Fn(P) -> Event,
    rng: &mut SimRng,
    next_id: &mut u64,
    extents: impl Iterator<Item = (u64, u64)>,
    mut payload: impl FnMut(u64, u64) -> Vec<u8>,
    what: &str,
) -> Result<(), AccelError> {
    let mut extents = extents;
    let mut completions = Vec::new();
    let mut inflight = 0u32;
    let mut exhausted = false;
    loop {
        while inflight < PRELOAD_QUEUE_DEPTH && !exhausted {
            match extents.next() {
                Some((offset_bytes, len_bytes)) => {
                    dev.submit(
                        BlockRequest {
                            id: *next_id,
                            op: BlockOp::Write,
                            offset_bytes,
                            len_bytes,
                            data: payload(offset_bytes, len_bytes),
                        },
                        &mut q.map(wrap),
                    );
                    *next_id += 1;
                    inflight += 1;
                }
                None => exhausted = true,
            }
        }
        dev.take_completions(&mut completions);
        for c in completions.drain(..) {
            c.result
                .map_err(|e| AccelError::Device(format!("{what} write: {e}")))?;
            inflight -= 1;
        }
        if inflight == 0 && exhausted {
            return Ok(());
        }
        let (_, ev) = q.pop().expect("writes in flight have events");
        dev.handle(unwrap(ev), &mut q.map(wrap), rng);
    }
}
