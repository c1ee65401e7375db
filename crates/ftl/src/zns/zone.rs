//! The zone state machine of a zoned namespace (NVMe ZNS, TP4053; STANDARDS §3.2): each
//! zone's state and write pointer, and the open and active resources (MOR, MAR) they hold.
//! Pure bookkeeping — no flash: the zoned device (`device.rs`) asks it whether a command is
//! allowed, and it answers with the spec's status or applies the transition.
//!
//! Rules (the spec's state diagram, as FEMU's `zns.c` and QEMU's `hw/nvme/ctrl.c` apply it):
//! - a write or append to an Empty or Closed zone opens it implicitly; when every open
//!   resource is taken, the oldest implicitly open zone is closed to admit it (only an
//!   explicitly open zone is never closed behind the host's back); Empty → open also needs an
//!   active resource;
//! - Close: open → Closed, or Empty if nothing was written; Finish: Empty, open or Closed →
//!   Full; Reset: open, Closed or Full → Empty; Offline: Read Only → Offline;
//! - a write or append that fills the zone makes it Full and frees its resources.
//!
//! Tolerates any command sequence: a refused command changes nothing. Invariants (checked by
//! `check`): open ≤ MOR, active ≤ MAR, the counts match the states, every write pointer lies
//! in its zone.

pub use nearflash_blockdev::zone::{ZoneAction, ZoneDescriptor, ZoneFilter, ZoneState};
use nearflash_blockdev::ZoneStatus;
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Zone {
    state: ZoneState,
    wp_sector: u64,
    finished_by_controller: bool,
}

/// What a state change did to other zones, for the device to act on.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Transition {
    /// Implicitly open zones closed to admit this one.
    pub closed_implicitly: Vec<u32>,
}

/// Every zone's state and write pointer, and the resources they hold.
#[derive(Clone, Debug)]
pub struct ZoneTable {
    zones: Vec<Zone>,
    zone_sectors: u64,
    capacity_sectors: u64,
    open_max: u32,
    active_max: u32,
    open: u32,
    active: u32,
    /// Implicitly open zones, oldest first: the one an implicit close picks.
    implicit: VecDeque<u32>,
}

impl ZoneTable {
    /// `count` empty zones of `zone_sectors` each, of which `capacity_sectors` are writable.
    pub fn new(
        count: u32,
        zone_sectors: u64,
        capacity_sectors: u64,
        open_max: u32,
        active_max: u32,
    ) -> Self {
        assert!(capacity_sectors > 0 && capacity_sectors <= zone_sectors);
        assert!(open_max > 0 && open_max <= active_max);
        ZoneTable {
            zones: (0..count)
                .map(|z| Zone {
                    state: ZoneState::Empty,
                    wp_sector: u64::from(z) * zone_sectors,
                    finished_by_controller: false,
                })
                .collect(),
            zone_sectors,
            capacity_sectors,
            open_max,
            active_max,
            open: 0,
            active: 0,
            implicit: VecDeque::new(),
        }
    }

    pub fn count(&self) -> u32 {
        self.zones.len() as u32
    }

    pub fn zone_sectors(&self) -> u64 {
        self.zone_sectors
    }

    pub fn capacity_sectors(&self) -> u64 {
        self.capacity_sectors
    }

    pub fn open_count(&self) -> u32 {
        self.open
    }

    pub fn active_count(&self) -> u32 {
        self.active
    }

    pub fn open_max(&self) -> u32 {
        self.open_max
    }

    pub fn active_max(&self) -> u32 {
        self.active_max
    }

    /// The zone holding `sector`, if any.
    pub fn zone_of(&self, sector: u64) -> Option<u32> {
        let z = sector / self.zone_sectors;
        (z < self.zones.len() as u64).then_some(z as u32)
    }

    pub fn start_sector(&self, zone: u32) -> u64 {
        u64::from(zone) * self.zone_sectors
    }

    pub fn state(&self, zone: u32) -> ZoneState {
        self.zones[zone as usize].state
    }

    pub fn wp_sector(&self, zone: u32) -> u64 {
        self.zones[zone as usize].wp_sector
    }

    pub fn descriptor(&self, zone: u32) -> ZoneDescriptor {
        let z = &self.zones[zone as usize];
        ZoneDescriptor {
            zone,
            state: z.state,
            start_sector: self.start_sector(zone),
            capacity_sectors: self.capacity_sectors,
            wp_sector: z.wp_sector,
            finished_by_controller: z.finished_by_controller,
        }
    }

    /// Report Zones: descriptors of the zones from the one holding `from_sector` on that
    /// match `filter`, at most `limit` of them.
    pub fn report(
        &self,
        from_sector: u64,
        filter: ZoneFilter,
        limit: usize,
    ) -> Vec<ZoneDescriptor> {
        let first = (from_sector / self.zone_sectors).min(self.zones.len() as u64) as u32;
        (first..self.count())
            .filter(|&z| filter.matches(self.zones[z as usize].state))
            .take(limit)
            .map(|z| self.descriptor(z))
            .collect()
    }

    /// Checks a write (or, with `append`, a Zone Append addressed to `sector`) of
    /// `len_sectors` in FEMU's order — zone state, then the write pointer, then the
    /// boundary — and returns where it lands.
    pub fn check_write(
        &self,
        zone: u32,
        sector: u64,
        len_sectors: u64,
        append: bool,
    ) -> Result<u64, ZoneStatus> {
        let z = &self.zones[zone as usize];
        match z.state {
            ZoneState::Full => return Err(ZoneStatus::ZoneIsFull { zone }),
            ZoneState::ReadOnly => return Err(ZoneStatus::ZoneIsReadOnly { zone }),
            ZoneState::Offline => return Err(ZoneStatus::ZoneIsOffline { zone }),
            _ => {}
        }
        let expected = if append {
            self.start_sector(zone)
        } else {
            z.wp_sector
        };
        if sector != expected {
            return Err(ZoneStatus::InvalidWrite {
                zone,
                sector,
                wp_sector: z.wp_sector,
            });
        }
        if z.wp_sector + len_sectors > self.start_sector(zone) + self.capacity_sectors {
            return Err(ZoneStatus::BoundaryError { zone });
        }
        Ok(z.wp_sector)
    }

    /// Applies a write of `len_sectors` at the write pointer (after `check_write`): opens the
    /// zone implicitly if need be, advances the write pointer, and makes the zone Full when
    /// it reaches the capacity.
    pub fn write(&mut self, zone: u32, len_sectors: u64) -> Result<Transition, ZoneStatus> {
        let state = self.state(zone);
        assert!(
            !matches!(
                state,
                ZoneState::Full | ZoneState::ReadOnly | ZoneState::Offline
            ),
            "write applied to a {} zone",
            state.name()
        );
        let mut t = Transition::default();
        if !state.is_open() {
            t = self.acquire(state == ZoneState::Empty)?;
            self.set_state(zone, ZoneState::ImplicitlyOpen);
        }
        let end = self.start_sector(zone) + self.capacity_sectors;
        let z = &mut self.zones[zone as usize];
        z.wp_sector += len_sectors;
        assert!(z.wp_sector <= end, "write crossed zone {zone}'s capacity");
        if z.wp_sector == end {
            self.make_full(zone, false);
        }
        Ok(t)
    }

    /// Takes an open resource (closing the oldest implicitly open zone if all are taken),
    /// and an active one when `needs_active`.
    fn acquire(&mut self, needs_active: bool) -> Result<Transition, ZoneStatus> {
        if needs_active && self.active >= self.active_max {
            return Err(ZoneStatus::TooManyActiveZones {
                active_max: self.active_max,
            });
        }
        let mut t = Transition::default();
        if self.open >= self.open_max {
            let Some(victim) = self.implicit.front().copied() else {
                return Err(ZoneStatus::TooManyOpenZones {
                    open_max: self.open_max,
                });
            };
            self.set_state(victim, ZoneState::Closed);
            t.closed_implicitly.push(victim);
        }
        debug_assert!(self.open < self.open_max);
        Ok(t)
    }

    /// Moves `zone` to `to`, keeping the resource counts and the implicit-open order.
    fn set_state(&mut self, zone: u32, to: ZoneState) {
        let from = self.zones[zone as usize].state;
        if from == to {
            return;
        }
        if from.is_open() {
            self.open -= 1;
        }
        if from.is_active() {
            self.active -= 1;
        }
        if from == ZoneState::ImplicitlyOpen {
            self.implicit.retain(|&z| z != zone);
        }
        if to.is_open() {
            self.open += 1;
        }
        if to.is_active() {
            self.active += 1;
        }
        if to == ZoneState::ImplicitlyOpen {
            self.implicit.push_back(zone);
        }
        assert!(self.open <= self.open_max, "open zones exceed MOR");
        assert!(self.active <= self.active_max, "active zones exceed MAR");
        self.zones[zone as usize].state = to;
    }

    fn make_full(&mut self, zone: u32, by_controller: bool) {
        self.set_state(zone, ZoneState::Full);
        let end = self.start_sector(zone) + self.zone_sectors;
        let z = &mut self.zones[zone as usize];
        z.wp_sector = end;
        z.finished_by_controller = by_controller;
    }

    /// Applies a Zone Management Send action to `zone`.
    pub fn apply(&mut self, zone: u32, action: ZoneAction) -> Result<Transition, ZoneStatus> {
        let state = self.state(zone);
        let invalid = Err(ZoneStatus::InvalidStateTransition {
            zone,
            action: action.name(),
            state: state.name(),
        });
        let mut t = Transition::default();
        match (action, state) {
            (ZoneAction::Open, ZoneState::ExplicitlyOpen) => {}
            (ZoneAction::Open, ZoneState::ImplicitlyOpen) => {
                self.set_state(zone, ZoneState::ExplicitlyOpen);
            }
            (ZoneAction::Open, ZoneState::Empty | ZoneState::Closed) => {
                t = self.acquire(state == ZoneState::Empty)?;
                self.set_state(zone, ZoneState::ExplicitlyOpen);
            }
            (ZoneAction::Close, ZoneState::Closed) => {}
            (ZoneAction::Close, s) if s.is_open() => {
                let to = if self.wp_sector(zone) == self.start_sector(zone) {
                    ZoneState::Empty
                } else {
                    ZoneState::Closed
                };
                self.set_state(zone, to);
            }
            (ZoneAction::Finish, ZoneState::Full) => {}
            (ZoneAction::Finish, ZoneState::Empty) => {
                // Empty → Full passes through an active state (FEMU checks an active
                // resource for it).
                if self.active >= self.active_max {
                    return Err(ZoneStatus::TooManyActiveZones {
                        active_max: self.active_max,
                    });
                }
                self.make_full(zone, false);
            }
            (ZoneAction::Finish, s) if s.is_active() => self.make_full(zone, false),
            (ZoneAction::Reset, ZoneState::Empty) => {}
            (ZoneAction::Reset, s) if s.is_active() || s == ZoneState::Full => {
                self.set_state(zone, ZoneState::Empty);
                self.zones[zone as usize] = Zone {
                    state: ZoneState::Empty,
                    wp_sector: self.start_sector(zone),
                    finished_by_controller: false,
                };
            }
            (ZoneAction::Offline, ZoneState::Offline) => {}
            (ZoneAction::Offline, ZoneState::ReadOnly) => {
                self.set_state(zone, ZoneState::Offline);
            }
            _ => return invalid,
        }
        Ok(t)
    }

    /// The controller finishes `zone` (its media holds no more page groups): Full, with ZFC.
    pub fn finish_by_controller(&mut self, zone: u32) {
        assert!(
            self.state(zone).is_active(),
            "only an active zone is finished"
        );
        self.make_full(zone, true);
    }

    /// The controller makes `zone` Read Only (a program failed on its media).
    pub fn make_read_only(&mut self, zone: u32) {
        if !matches!(self.state(zone), ZoneState::ReadOnly | ZoneState::Offline) {
            self.set_state(zone, ZoneState::ReadOnly);
        }
    }

    /// The controller takes `zone` offline (an erase of its media failed).
    pub fn make_offline(&mut self, zone: u32) {
        self.set_state(zone, ZoneState::Offline);
    }

    /// After a power cut: a zone recovered with `wp_sector`, Full (`full`, and whether the
    /// controller finished it), Read Only or Offline per its media. Open zones come back
    /// Closed (their open resources are gone with the controller's RAM).
    pub fn restore(&mut self, zone: u32, wp_sector: u64, state: ZoneState, by_controller: bool) {
        assert!(
            !state.is_open(),
            "zones are restored closed, not {}",
            state.name()
        );
        let start = self.start_sector(zone);
        assert!(wp_sector >= start && wp_sector <= start + self.zone_sectors);
        self.set_state(zone, state);
        let z = &mut self.zones[zone as usize];
        z.wp_sector = wp_sector;
        z.finished_by_controller = by_controller;
    }

    /// Asserts the invariants (tests call it after every command).
    pub fn check(&self) {
        let open = self.zones.iter().filter(|z| z.state.is_open()).count() as u32;
        let active = self.zones.iter().filter(|z| z.state.is_active()).count() as u32;
        assert_eq!(open, self.open, "open count drifted");
        assert_eq!(active, self.active, "active count drifted");
        assert!(open <= self.open_max && active <= self.active_max);
        for (i, z) in self.zones.iter().enumerate() {
            let start = self.start_sector(i as u32);
            assert!(z.wp_sector >= start && z.wp_sector <= start + self.zone_sectors);
            if z.state == ZoneState::Empty {
                assert_eq!(z.wp_sector, start, "empty zone {i} has data");
            }
        }
        let implicit = self
            .zones
            .iter()
            .filter(|z| z.state == ZoneState::ImplicitlyOpen)
            .count();
        assert_eq!(implicit, self.implicit.len(), "implicit-open order drifted");
    }
}

#[cfg(test)]
mod tests;
