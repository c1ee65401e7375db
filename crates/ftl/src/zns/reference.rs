//! A reference model of the zone state machine: the spec's transition table (NVMe ZNS,
//! TP4053; STANDARDS §3.2) written out flat, with the open and active resources recounted
//! from the states on every step, so that no counter can drift. It is the oracle of the
//! property tests — the zone table's own (`zone/tests.rs`) and the NVMe front end's, which
//! drives the real drive through the queues (`crates/nvme/src/zoned/tests.rs`) — and nothing
//! else uses it.

use super::zone::{ZoneAction, ZoneState};

/// The reference: the spec's transition table written out flat, with the resources
/// recounted from the states on every step (no counters to drift).
#[derive(Clone, Debug)]
pub struct ZoneReference {
    /// Each zone's state and zone-relative write pointer (the zone size once Full).
    pub states: Vec<ZoneState>,
    pub wps: Vec<u64>,
    /// Implicitly open zones in the order they were opened.
    order: Vec<u32>,
    open_max: usize,
    active_max: usize,
    zone_sectors: u64,
    capacity_sectors: u64,
}

impl ZoneReference {
    /// `zones` empty zones of `zone_sectors`, `capacity_sectors` of them writable.
    pub fn new(
        zones: u32,
        zone_sectors: u64,
        capacity_sectors: u64,
        open_max: u32,
        active_max: u32,
    ) -> ZoneReference {
        ZoneReference {
            states: vec![ZoneState::Empty; zones as usize],
            wps: vec![0; zones as usize],
            order: Vec::new(),
            open_max: open_max as usize,
            active_max: active_max as usize,
            zone_sectors,
            capacity_sectors,
        }
    }

    /// A failed program: the zone turns Read Only (unless it is already Read Only or
    /// Offline).
    pub fn fail(&mut self, z: u32) {
        if !matches!(
            self.states[z as usize],
            ZoneState::ReadOnly | ZoneState::Offline
        ) {
            self.set(z, ZoneState::ReadOnly);
        }
    }

    fn open(&self) -> usize {
        self.states.iter().filter(|s| s.is_open()).count()
    }
    fn active(&self) -> usize {
        self.states.iter().filter(|s| s.is_active()).count()
    }
    fn set(&mut self, z: u32, s: ZoneState) {
        self.order.retain(|&o| o != z);
        if s == ZoneState::ImplicitlyOpen {
            self.order.push(z);
        }
        self.states[z as usize] = s;
    }
    /// Makes room to open `z`; `None` when the spec refuses.
    fn admit(&mut self, z: u32) -> Option<()> {
        if self.states[z as usize] == ZoneState::Empty && self.active() == self.active_max {
            return None;
        }
        if self.open() == self.open_max {
            let victim = *self.order.first()?;
            self.set(victim, ZoneState::Closed);
        }
        Some(())
    }
    /// A write or append of `len` sectors at the write pointer; false when refused.
    pub fn write(&mut self, z: u32, len: u64) -> bool {
        let s = self.states[z as usize];
        if matches!(
            s,
            ZoneState::Full | ZoneState::ReadOnly | ZoneState::Offline
        ) {
            return false;
        }
        if self.wps[z as usize] + len > self.capacity_sectors {
            return false;
        }
        if !s.is_open() {
            if self.admit(z).is_none() {
                return false;
            }
            self.set(z, ZoneState::ImplicitlyOpen);
        }
        self.wps[z as usize] += len;
        if self.wps[z as usize] == self.capacity_sectors {
            self.set(z, ZoneState::Full);
            self.wps[z as usize] = self.zone_sectors;
        }
        true
    }
    /// A Zone Management Send action; false when refused.
    pub fn act(&mut self, z: u32, a: ZoneAction) -> bool {
        use ZoneState::*;
        let s = self.states[z as usize];
        match (a, s) {
            (ZoneAction::Open, ExplicitlyOpen)
            | (ZoneAction::Close, Closed)
            | (ZoneAction::Finish, Full)
            | (ZoneAction::Reset, Empty)
            | (ZoneAction::Offline, Offline) => true,
            (ZoneAction::Open, ImplicitlyOpen) => {
                self.set(z, ExplicitlyOpen);
                true
            }
            (ZoneAction::Open, Empty | Closed) => {
                if self.admit(z).is_none() {
                    return false;
                }
                self.set(z, ExplicitlyOpen);
                true
            }
            (ZoneAction::Close, ImplicitlyOpen | ExplicitlyOpen) => {
                let to = if self.wps[z as usize] == 0 {
                    Empty
                } else {
                    Closed
                };
                self.set(z, to);
                true
            }
            (ZoneAction::Finish, Empty) if self.active() == self.active_max => false,
            (ZoneAction::Finish, Empty | ImplicitlyOpen | ExplicitlyOpen | Closed) => {
                self.set(z, Full);
                self.wps[z as usize] = self.zone_sectors;
                true
            }
            (ZoneAction::Reset, ImplicitlyOpen | ExplicitlyOpen | Closed | Full) => {
                self.set(z, Empty);
                self.wps[z as usize] = 0;
                true
            }
            (ZoneAction::Offline, ReadOnly) => {
                self.set(z, Offline);
                true
            }
            _ => false,
        }
    }
}
