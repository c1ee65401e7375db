//! The machine's events and the words they add to the trace hash.

use super::{DriveDone, Event, HostEvent, NvmeEvent, PortEvent};
use nearflash_sim::TraceEvent;

/// The machine's events: the backing device's own, the drive's, its NVMe front end's (over
/// the firmware path) and the shared host model's (over the front end).
#[derive(Clone, Copy, Debug)]
pub enum MachineEvent {
    Dev(Event),
    Insider(Ev),
    Nvme(NvmeEvent<DriveDone>),
    Host(HostEvent<PortEvent>),
    /// The clock reaches an instant with a deadline of the runtime (`wake`).
    Timer,
}

impl TraceEvent for MachineEvent {
    fn hash_word(&self) -> u64 {
        match self {
            MachineEvent::Dev(e) => e.hash_word(),
            MachineEvent::Insider(e) => e.code(),
            MachineEvent::Nvme(e) => e.hash_word(),
            MachineEvent::Host(e) => e.hash_word(),
            MachineEvent::Timer => 10 << 56,
        }
    }
}

/// The drive's own events.
#[derive(Clone, Copy, Debug)]
pub enum Ev {
    /// Emulated storage finished a request.
    BackingDone(u64),
    SlotDone(u32),
    DmaDone(u32),
    H2dDone(u32),
}

impl Ev {
    fn code(&self) -> u64 {
        match *self {
            Ev::BackingDone(x) => 1 << 56 ^ x,
            Ev::SlotDone(x) => 6 << 56 ^ u64::from(x),
            Ev::DmaDone(x) => 7 << 56 ^ u64::from(x),
            Ev::H2dDone(x) => 8 << 56 ^ u64::from(x),
        }
    }
}
