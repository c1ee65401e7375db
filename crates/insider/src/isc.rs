//! The ISC unit and the multiplexer of Fig. 7 (§3.6): the multiplexer and its Slots Index
//! FIFO here ([`Mux`]), the unit's compute side — credits, input FIFOs, slots or cores — in
//! `unit` ([`Unit`], sans-IO, also driven by live mode's virtual files). Requests of the ISC unit (one per
//! credit, `C` bytes, tagged with the program's slot) and of the ordinary firmware (tagged slot
//! 0, pass-through) meet in the multiplexer, which forwards each to the storage and pushes its
//! slot index into the Slots Index FIFO (SIF). Returning data is matched with the SIF in order:
//! the dispatcher pops the head entry once its data is back and hands the data to that slot's
//! input FIFO. (Storage that completes out of order therefore waits at the head of the SIF, as
//! the hardware would.)
//!
//! Adaptive credit-based scheduling: a credit register per program starts at R; the ISC unit
//! visits programs with pending requests round-robin and issues a request of size C for each
//! whose register is above zero, decrementing it. A credit comes back when the program's input
//! FIFO has room for another C bytes not already promised — a faster program drains its FIFO
//! sooner, gets its credits back sooner, and so is issued more.

use nearflash_ftl::BlockCompletion;
use std::collections::VecDeque;

pub mod unit;

pub use unit::{Issue, SlotDone, SlotFault, Unit, UnitStats};

/// Who asked for a read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// The ISC unit, for the virtual file open as this descriptor.
    Isc(u32),
    /// The ordinary firmware, for this host request.
    Firmware(u64),
}

/// One entry of the Slots Index FIFO.
#[derive(Debug)]
pub struct SifEntry {
    pub req_id: u64,
    pub slot: usize,
    pub origin: Origin,
    /// Bytes of the (sector-aligned) read before and within the wanted range.
    pub skip_bytes: u64,
    pub take_bytes: u64,
    pub done: Option<BlockCompletion>,
}

/// The multiplexer and its Slots Index FIFO.
#[derive(Default)]
pub struct Mux {
    sif: VecDeque<SifEntry>,
    pub isc_requests: u64,
    pub firmware_requests: u64,
}

impl Mux {
    /// The multiplexer forwarded a request: remember its slot.
    pub fn push(&mut self, e: SifEntry) {
        match e.origin {
            Origin::Isc(_) => self.isc_requests += 1,
            Origin::Firmware(_) => self.firmware_requests += 1,
        }
        self.sif.push_back(e);
    }

    /// Storage returned the data of `c.id`.
    pub fn complete(&mut self, c: BlockCompletion) {
        let e = self
            .sif
            .iter_mut()
            .find(|e| e.req_id == c.id)
            .expect("every read in flight has a SIF entry");
        debug_assert!(e.done.is_none());
        e.done = Some(c);
    }

    /// The dispatcher: the head entry, once its data is back.
    pub fn pop_ready(&mut self) -> Option<SifEntry> {
        if self.sif.front().is_some_and(|e| e.done.is_some()) {
            return self.sif.pop_front();
        }
        None
    }

    pub fn sif_len(&self) -> usize {
        self.sif.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nearflash_ftl::BlockOp;
    use nearflash_sim::SimTime;

    fn done(id: u64) -> BlockCompletion {
        BlockCompletion {
            id,
            op: BlockOp::Read,
            offset_bytes: 0,
            len_bytes: 0,
            submitted: SimTime::ZERO,
            completed: SimTime::ZERO,
            result: Ok(()),
            data: Vec::new(),
        }
    }

    #[test]
    fn dispatcher_releases_in_sif_order() {
        let mut u = Mux::default();
        for (id, slot) in [(1, 2), (2, 0)] {
            u.push(SifEntry {
                req_id: id,
                slot,
                origin: Origin::Isc(0),
                skip_bytes: 0,
                take_bytes: 0,
                done: None,
            });
        }
        u.complete(done(2));
        assert!(u.pop_ready().is_none(), "the head is not back yet");
        u.complete(done(1));
        assert_eq!(u.pop_ready().unwrap().slot, 2);
        assert_eq!(u.pop_ready().unwrap().slot, 0);
    }
}
