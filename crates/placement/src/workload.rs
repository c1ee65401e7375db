//! The workload: two write streams with different lifetimes over one logical span of 4 KiB
//! units, drawn from the run's one RNG, and the reference map of what each unit must read
//! back. The *hot* stream overwrites the first part of the span at random; the *cold* stream
//! rewrites the rest in address order, wrapping. No write is issued to a unit that has a
//! write in flight, so "the last version written" is the last one issued — in every mode.
//!
//! Each unit's payload is stamped with its index and version (bytes 0..8 and 8..16, little
//! endian), so a read names what it returned.

use nearflash_sim::{LatencyHistogram, SimRng, SimTime};

/// Bytes of a logical unit: the page-mapped FTL's 4 KiB unit (`nearflash_ftl::config`,
/// MQSim's and FEMU's sector group), also the host layer's block on zones.
pub const UNIT_BYTES: u64 = 4096;

/// The two streams.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stream {
    Hot = 0,
    Cold = 1,
}

/// Streams, in placement-handle order (hot on handle 0, cold on handle 1).
pub const STREAMS: [Stream; 2] = [Stream::Hot, Stream::Cold];

/// One user write: `units` units from `first_unit`, of `stream`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UserWrite {
    pub stream: Stream,
    pub first_unit: u64,
    pub units: u64,
    /// When the host issued it (latency is measured from here, waiting included).
    pub issued: SimTime,
}

/// The shape of the workload in units (validated by `crate::Params::shape`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    pub span_units: u64,
    /// Units `0..hot_units` are the hot stream's; the rest the cold stream's.
    pub hot_units: u64,
    pub hot_request_units: u64,
    pub cold_request_units: u64,
    /// Share of writes (requests) the hot stream issues, percent.
    pub hot_write_percent: u64,
    /// User units to write in all.
    pub total_units: u64,
}

/// The generator, the reference map and the latency record of one run.
pub struct Load {
    shape: Shape,
    cold_next: u64,
    issued_units: u64,
    /// The last version issued per unit (0: never written): the reference map.
    versions: Vec<u64>,
    busy: Vec<bool>,
    in_flight: u64,
    completed: u64,
    pub latency: LatencyHistogram,
    /// Completion time of the last user write.
    pub last_write_done: SimTime,
}

impl Load {
    pub fn new(shape: Shape) -> Load {
        assert!(shape.hot_units > 0 && shape.hot_units < shape.span_units);
        assert!(shape.hot_units.is_multiple_of(shape.hot_request_units));
        assert!((shape.span_units - shape.hot_units).is_multiple_of(shape.cold_request_units));
        Load {
            cold_next: shape.hot_units,
            issued_units: 0,
            versions: vec![0; shape.span_units as usize],
            busy: vec![false; shape.span_units as usize],
            in_flight: 0,
            completed: 0,
            latency: LatencyHistogram::default(),
            last_write_done: SimTime::ZERO,
            shape,
        }
    }

    pub fn shape(&self) -> Shape {
        self.shape
    }

    /// Every write issued and completed.
    pub fn finished(&self) -> bool {
        self.issued_units >= self.shape.total_units && self.in_flight == 0
    }

    pub fn in_flight(&self) -> u64 {
        self.in_flight
    }

    pub fn completed(&self) -> u64 {
        self.completed
    }

    /// The next write, or `None` when the total is issued.
    pub fn next(&mut self, rng: &mut SimRng, now: SimTime) -> Option<UserWrite> {
        if self.issued_units >= self.shape.total_units {
            return None;
        }
        let s = self.shape;
        let (stream, first_unit, units) = if rng.below(100) < s.hot_write_percent {
            let slots = s.hot_units / s.hot_request_units;
            let mut slot = rng.below(slots);
            // Probe past slots with a write in flight: at most the queue depth are.
            while self.busy[(slot * s.hot_request_units) as usize] {
                slot = (slot + 1) % slots;
            }
            (Stream::Hot, slot * s.hot_request_units, s.hot_request_units)
        } else {
            // Skip requests still in flight (a cold region only a few requests long): at most
            // the queue depth are, and the region holds more (`Params::shape`).
            assert!(self.in_flight < (s.span_units - s.hot_units) / s.cold_request_units);
            let first = loop {
                if self.cold_next + s.cold_request_units > s.span_units {
                    self.cold_next = s.hot_units;
                }
                let first = self.cold_next;
                self.cold_next += s.cold_request_units;
                if !self.busy[first as usize] {
                    break first;
                }
            };
            (Stream::Cold, first, s.cold_request_units)
        };
        for u in first_unit..first_unit + units {
            assert!(!self.busy[u as usize], "unit {u} written twice at once");
            self.busy[u as usize] = true;
            self.versions[u as usize] += 1;
        }
        self.issued_units += units;
        self.in_flight += 1;
        Some(UserWrite {
            stream,
            first_unit,
            units,
            issued: now,
        })
    }

    /// The payload of `w`: each unit stamped with its index and the version just issued.
    pub fn payload(&self, w: &UserWrite) -> Vec<u8> {
        let mut data = vec![0u8; (w.units * UNIT_BYTES) as usize];
        for (i, chunk) in data.chunks_mut(UNIT_BYTES as usize).enumerate() {
            let u = w.first_unit + i as u64;
            chunk[..8].copy_from_slice(&u.to_le_bytes());
            chunk[8..16].copy_from_slice(&self.versions[u as usize].to_le_bytes());
        }
        data
    }

    /// `w` completed at `now`.
    pub fn done(&mut self, w: &UserWrite, now: SimTime) {
        assert!(self.in_flight > 0);
        for u in w.first_unit..w.first_unit + w.units {
            assert!(self.busy[u as usize]);
            self.busy[u as usize] = false;
        }
        self.in_flight -= 1;
        self.completed += 1;
        self.latency.record(now.as_ns() - w.issued.as_ns());
        self.last_write_done = self.last_write_done.max(now);
    }

    /// Units ever written, in order: what the final read-back checks.
    pub fn written_units(&self) -> impl Iterator<Item = u64> + '_ {
        (0..self.shape.span_units).filter(|&u| self.versions[u as usize] > 0)
    }

    /// Checks one unit's data read back against the reference map.
    pub fn check(&self, unit: u64, data: &[u8]) -> Result<(), Mismatch> {
        let expected = self.versions[unit as usize];
        let word = |r: std::ops::Range<usize>| {
            data.get(r).map_or(u64::MAX, |b| {
                u64::from_le_bytes(b.try_into().expect("8 bytes"))
            })
        };
        let (got_unit, got_version) = (word(0..8), word(8..16));
        if got_unit == unit && got_version == expected {
            Ok(())
        } else {
            Err(Mismatch {
                unit,
                expected_version: expected,
                got_unit,
                got_version,
            })
        }
    }
}

/// A unit that did not read back as last written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mismatch {
    pub unit: u64,
    pub expected_version: u64,
    pub got_unit: u64,
    pub got_version: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape() -> Shape {
        Shape {
            span_units: 64,
            hot_units: 8,
            hot_request_units: 1,
            cold_request_units: 4,
            hot_write_percent: 75,
            total_units: 640,
        }
    }

    #[test]
    fn the_streams_stay_in_their_regions_and_the_cold_one_goes_in_order() {
        let mut load = Load::new(shape());
        let mut rng = SimRng::seed_from_u64(3);
        let mut cold = Vec::new();
        while let Some(w) = load.next(&mut rng, SimTime::ZERO) {
            match w.stream {
                Stream::Hot => assert!(w.first_unit < 8 && w.units == 1),
                Stream::Cold => {
                    assert!(w.first_unit >= 8 && w.units == 4);
                    cold.push(w.first_unit);
                }
            }
            load.done(&w, SimTime::ZERO);
        }
        assert!(load.finished());
        assert_eq!(&cold[..3], &[8, 12, 16]);
        assert!(cold.windows(2).all(|p| p[1] == p[0] + 4 || p[1] == 8));
    }

    #[test]
    fn a_unit_in_flight_is_never_written_again_until_it_completes() {
        let mut load = Load::new(shape());
        let mut rng = SimRng::seed_from_u64(5);
        let held: Vec<_> = (0..6)
            .filter_map(|_| load.next(&mut rng, SimTime::ZERO))
            .collect();
        let mut units: Vec<_> = held
            .iter()
            .flat_map(|w| w.first_unit..w.first_unit + w.units)
            .collect();
        let n = units.len();
        units.sort_unstable();
        units.dedup();
        assert_eq!(units.len(), n);
    }

    #[test]
    fn a_stale_or_foreign_unit_fails_the_check() {
        let mut load = Load::new(shape());
        let mut rng = SimRng::seed_from_u64(1);
        let w = load.next(&mut rng, SimTime::ZERO).unwrap();
        let data = load.payload(&w);
        let u = w.first_unit;
        assert!(load.check(u, &data[..4096]).is_ok());
        load.done(&w, SimTime::ZERO);
        let mut stale = data[..4096].to_vec();
        stale[8..16].copy_from_slice(&0u64.to_le_bytes());
        assert!(load.check(u, &stale).is_err());
        assert!(load.check(u + 1, &data[..4096]).is_err());
        assert!(load.check(u, &[]).is_err());
    }
}
