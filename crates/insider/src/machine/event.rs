//! The machine's events and the words they add to the trace hash.

use super::{Event, HostEvent, PortEvent};
use nearflash_sim::TraceEvent;

/// The machine's events: the backing device's own, the drive's, and the shared host
/// model's (over the drive's firmware path).
#[derive(Clone, Copy, Debug)]
pub enum MachineEvent {
    Dev(Event),
    Insider(Ev),
    Host(HostEvent<PortEvent>),
    /// The clock reaches an instant with a deadline of the runtime (`wake`).
    Timer,
}

impl TraceEvent for MachineEvent {
    fn hash_word(&self) -> u64 {
        match self {
            MachineEvent::Dev(e) => e.hash_word(),
            MachineEvent::Insider(e) => e.code(),
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
    /// The host storage stack hands a firmware request to the drive.
    FwSubmit(u64),
    /// A firmware read passed slot 0; now it crosses PCIe.
    FwPassed(u64),
    /// A firmware read's data reached host memory.
    FwDelivered(u64),
    /// A firmware write's data reached the drive.
    FwWriteArrived(u64),
    /// The host's handler saw a firmware request's NVMe completion.
    FwCompleted(u64),
    SlotDone(u32),
    DmaDone(u32),
    H2dDone(u32),
}

impl Ev {
    fn code(&self) -> u64 {
        match *self {
            Ev::BackingDone(x) => 1 << 56 ^ x,
            Ev::FwSubmit(x) => 2 << 56 ^ x,
            Ev::FwPassed(x) => 3 << 56 ^ x,
            Ev::FwDelivered(x) => 4 << 56 ^ x,
            Ev::FwWriteArrived(x) => 5 << 56 ^ x,
            Ev::SlotDone(x) => 6 << 56 ^ u64::from(x),
            Ev::DmaDone(x) => 7 << 56 ^ u64::from(x),
            Ev::H2dDone(x) => 8 << 56 ^ u64::from(x),
            Ev::FwCompleted(x) => 9 << 56 ^ x,
        }
    }
}
