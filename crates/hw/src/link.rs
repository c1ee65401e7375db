//! A PCIe link: generation × lanes → bandwidth after line encoding, transaction-layer packet
//! (TLP) overhead per maximum payload, a one-way latency, and energy per byte on the wire.
//! The link is full duplex: each direction is a FIFO of transfers with its own busy-until
//! time, so a DMA going up never waits behind one going down, and two going the same way
//! queue. A transfer's wire time comes from the bytes it puts on the wire (payload plus one
//! header per TLP), never from a formula over a workload; busy time, bytes and energy are
//! counted from the transfers served.
//!
//! Tolerates: any payload size (a zero-byte transfer is one header-only TLP — a memory read
//! request); bad configs are typed errors naming the field.

use nearflash_sim::{SimDuration, SimTime};
use serde::{Deserialize, Serialize};
use thiserror::Error;

#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum LinkError {
    #[error("link.{field}: {reason}")]
    Config { field: &'static str, reason: String },
}

/// Which way a transfer goes. `Down` is from the root complex (host) to the endpoint (the
/// device): doorbell writes, read completions carrying host memory. `Up` is from the
/// endpoint: its read requests, data it writes to memory, completion entries, interrupts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Direction {
    Down,
    Up,
}

impl Direction {
    fn index(self) -> usize {
        match self {
            Direction::Down => 0,
            Direction::Up => 1,
        }
    }
}

/// PCIe link parameters. Every field carries its unit; each default cites its source or is
/// marked as an assumption.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct LinkConfig {
    /// PCIe generation 1..=5. Per-lane raw rate and line code (PCI Express Base
    /// Specification 1.1/2.0/3.0/4.0/5.0): Gen1 2.5 GT/s and Gen2 5 GT/s with 8b/10b
    /// (250 and 500 MB/s per lane); Gen3 8 GT/s, Gen4 16 GT/s, Gen5 32 GT/s with 128b/130b
    /// (≈984.6, 1969.2, 3938.5 MB/s per lane). Default Gen3: the Intel SSD 750 is a PCIe 3.0
    /// x4 device (Intel SSD 750 product specification).
    pub generation: u8,
    /// Link width: 1, 2, 4, 8, 12, 16 or 32 lanes (PCIe Base Specification link widths).
    /// Default ×4 (Intel SSD 750, as above).
    pub lanes: u32,
    /// Assumption: 250 ns one-way latency (flight, PHY/data-link pipelines and the root
    /// complex), half the ≈500 ns round trip of a small DMA read that Neugebauer et al.,
    /// "Understanding PCIe performance for end host networking", SIGCOMM'18, measure on
    /// Xeon E5 hosts.
    pub latency_ns: u64,
    /// Maximum TLP payload (Max_Payload_Size), a power of two from 128 to 4096 bytes (PCIe
    /// Base Specification, Device Control register). Default 256 B, the size most server
    /// root complexes configure (Neugebauer et al., SIGCOMM'18, §2).
    pub max_payload_bytes: u32,
    /// Bytes each TLP adds on the wire: a 16-byte header with 64-bit addressing, 6 bytes of
    /// data-link sequence number and LCRC, 2 bytes of Gen3 framing = 24 B (Neugebauer et
    /// al., SIGCOMM'18, §2; PCIe Base Specification 3.0 §2.2, §3.5, §4.2.2).
    pub tlp_overhead_bytes: u32,
    /// Assumption: 5 pJ per bit moved across the link (SerDes at both ends; the order of
    /// published PCIe Gen3 PHY efficiencies), i.e. 40 pJ per wire byte.
    pub energy_pj_per_byte: f64,
}

impl Default for LinkConfig {
    fn default() -> Self {
        LinkConfig {
            generation: 3,
            lanes: 4,
            latency_ns: 250,
            max_payload_bytes: 256,
            tlp_overhead_bytes: 24,
            energy_pj_per_byte: 40.0,
        }
    }
}

/// Nanoseconds per wire byte per lane of each generation, as an exact fraction
/// (numerator, denominator): 8 bits ÷ (rate in GT/s × code efficiency).
fn ns_per_byte_lane(generation: u8) -> (u64, u64) {
    match generation {
        1 => (4, 1),     // 8 / (2.5 × 8/10)
        2 => (2, 1),     // 8 / (5 × 8/10)
        3 => (130, 128), // 8 / (8 × 128/130)
        4 => (130, 256), // 8 / (16 × 128/130)
        5 => (130, 512), // 8 / (32 × 128/130)
        _ => unreachable!("generation is validated"),
    }
}

impl LinkConfig {
    pub fn validate(&self) -> Result<(), LinkError> {
        let err = |field: &'static str, reason: String| LinkError::Config { field, reason };
        if !(1..=5).contains(&self.generation) {
            return Err(err(
                "generation",
                format!("must be a PCIe generation 1..=5, got {}", self.generation),
            ));
        }
        if ![1, 2, 4, 8, 12, 16, 32].contains(&self.lanes) {
            return Err(err(
                "lanes",
                format!("must be 1, 2, 4, 8, 12, 16 or 32, got {}", self.lanes),
            ));
        }
        if !self.max_payload_bytes.is_power_of_two()
            || !(128..=4096).contains(&self.max_payload_bytes)
        {
            return Err(err(
                "max_payload_bytes",
                format!(
                    "must be a power of two from 128 to 4096, got {}",
                    self.max_payload_bytes
                ),
            ));
        }
        if self.tlp_overhead_bytes == 0 {
            return Err(err("tlp_overhead_bytes", "must be greater than 0".into()));
        }
        if !(self.energy_pj_per_byte.is_finite() && self.energy_pj_per_byte >= 0.0) {
            return Err(err(
                "energy_pj_per_byte",
                format!(
                    "must be finite and non-negative, got {}",
                    self.energy_pj_per_byte
                ),
            ));
        }
        Ok(())
    }

    /// Payload bandwidth of one direction with no TLP overhead, in MB/s (10^6 B/s).
    pub fn raw_mb_s(&self) -> f64 {
        let (num, den) = ns_per_byte_lane(self.generation);
        1000.0 * den as f64 * f64::from(self.lanes) / num as f64
    }

    /// Payload bandwidth of one direction carrying a long stream of maximum-payload TLPs, in
    /// MB/s: the raw rate × max_payload / (max_payload + TLP overhead). The ceiling a bulk
    /// DMA approaches (PCIe 3.0 ×4 with 256 B payloads and 24 B per TLP: 3,938.5 × 256 / 280
    /// = 3,600.9 MB/s); smaller transfers and the commands' own TLPs only lower it.
    pub fn payload_mb_s(&self) -> f64 {
        let mps = f64::from(self.max_payload_bytes);
        self.raw_mb_s() * mps / (mps + f64::from(self.tlp_overhead_bytes))
    }

    /// TLPs needed for `payload_bytes` (a header-only TLP for zero bytes).
    pub fn tlps(&self, payload_bytes: u64) -> u64 {
        payload_bytes
            .div_ceil(u64::from(self.max_payload_bytes))
            .max(1)
    }

    /// Bytes on the wire for `payload_bytes`.
    pub fn wire_bytes(&self, payload_bytes: u64) -> u64 {
        payload_bytes + self.tlps(payload_bytes) * u64::from(self.tlp_overhead_bytes)
    }

    /// Time the wire is busy for `payload_bytes`, rounded up to the nanosecond.
    pub fn wire_time(&self, payload_bytes: u64) -> SimDuration {
        let (num, den) = ns_per_byte_lane(self.generation);
        let wire = self.wire_bytes(payload_bytes);
        SimDuration::from_ns((wire * num).div_ceil(den * u64::from(self.lanes)))
    }
}

/// When a transfer occupied its direction and when it arrived at the far end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transfer {
    /// The first byte went on the wire.
    pub start: SimTime,
    /// The last byte went on the wire.
    pub wire_done: SimTime,
    /// The last byte arrived (`wire_done` + the link's latency).
    pub arrives: SimTime,
}

/// Counters of one direction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DirectionStats {
    pub transfers: u64,
    pub payload_bytes: u64,
    pub wire_bytes: u64,
    pub busy_ns: u64,
}

#[derive(Clone, Debug, Default)]
struct Lane {
    busy_until: SimTime,
    stats: DirectionStats,
}

/// One full-duplex PCIe link.
#[derive(Clone, Debug)]
pub struct Link {
    cfg: LinkConfig,
    dirs: [Lane; 2],
}

impl Link {
    pub fn new(cfg: LinkConfig) -> Result<Link, LinkError> {
        cfg.validate()?;
        Ok(Link {
            cfg,
            dirs: Default::default(),
        })
    }

    pub fn config(&self) -> &LinkConfig {
        &self.cfg
    }

    /// Queues `payload_bytes` in direction `dir` at `now`, behind what that direction is
    /// already carrying.
    pub fn transfer(&mut self, now: SimTime, dir: Direction, payload_bytes: u64) -> Transfer {
        let wire = self.cfg.wire_time(payload_bytes);
        let lane = &mut self.dirs[dir.index()];
        let start = lane.busy_until.max(now);
        let wire_done = start + wire;
        assert!(
            wire_done >= lane.busy_until,
            "a direction's time only moves on"
        );
        lane.busy_until = wire_done;
        lane.stats.transfers += 1;
        lane.stats.payload_bytes += payload_bytes;
        lane.stats.wire_bytes += self.cfg.wire_bytes(payload_bytes);
        lane.stats.busy_ns += wire.as_ns();
        Transfer {
            start,
            wire_done,
            arrives: wire_done + SimDuration::from_ns(self.cfg.latency_ns),
        }
    }

    /// When direction `dir` finishes what it has queued.
    pub fn free_at(&self, dir: Direction) -> SimTime {
        self.dirs[dir.index()].busy_until
    }

    pub fn stats(&self, dir: Direction) -> DirectionStats {
        self.dirs[dir.index()].stats
    }

    /// Energy spent moving every wire byte so far, both directions, in joules.
    pub fn energy_j(&self) -> f64 {
        let wire: u64 = self.dirs.iter().map(|d| d.stats.wire_bytes).sum();
        wire as f64 * self.cfg.energy_pj_per_byte * 1e-12
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn gen(generation: u8, lanes: u32) -> LinkConfig {
        LinkConfig {
            generation,
            lanes,
            ..LinkConfig::default()
        }
    }

    #[test]
    fn per_lane_rates_follow_the_spec_after_encoding() {
        let mb = |g| gen(g, 1).raw_mb_s();
        assert!((mb(1) - 250.0).abs() < 1e-9);
        assert!((mb(2) - 500.0).abs() < 1e-9);
        assert!((mb(3) - 8000.0 * 128.0 / 130.0 / 8.0).abs() < 1e-9);
        assert!((mb(4) - 2.0 * mb(3)).abs() < 1e-9);
        assert!((mb(5) - 4.0 * mb(3)).abs() < 1e-9);
        assert!((gen(3, 4).raw_mb_s() - 4.0 * mb(3)).abs() < 1e-9);
    }

    #[test]
    fn a_4kib_transfer_on_gen3_x4_pays_sixteen_tlp_headers() {
        let cfg = LinkConfig::default();
        assert_eq!(cfg.tlps(4096), 16);
        assert_eq!(cfg.wire_bytes(4096), 4096 + 16 * 24);
        // 4480 B × 130 / (128 × 4) ns = 1137.5 ns, rounded up.
        assert_eq!(cfg.wire_time(4096).as_ns(), 1138);
        // A read request carries no payload: one header-only TLP.
        assert_eq!(cfg.wire_bytes(0), 24);
    }

    #[test]
    fn a_bulk_stream_on_gen3_x4_carries_3600_mb_s_of_payload() {
        let cfg = LinkConfig::default();
        let expect = 8000.0 * 128.0 / 130.0 / 8.0 * 4.0 * 256.0 / 280.0;
        assert!((cfg.payload_mb_s() - expect).abs() < 1e-9);
        assert!((cfg.payload_mb_s() - 3600.9).abs() < 0.1);
        // A 32 MiB transfer's wire time agrees with the closed form to the nanosecond.
        let bytes = 32u64 << 20;
        let ns = cfg.wire_time(bytes).as_ns() as f64;
        assert!((bytes as f64 * 1000.0 / cfg.payload_mb_s() - ns).abs() < 1.0);
    }

    #[test]
    fn directions_are_independent_fifos() {
        let mut l = Link::new(LinkConfig::default()).unwrap();
        let t0 = SimTime::ZERO;
        let a = l.transfer(t0, Direction::Up, 4096);
        let b = l.transfer(t0, Direction::Up, 4096);
        let c = l.transfer(t0, Direction::Down, 4096);
        assert_eq!(a.wire_done.as_ns(), 1138);
        assert_eq!(b.start, a.wire_done, "same direction queues");
        assert_eq!(c.start, t0, "the other direction does not");
        assert_eq!(a.arrives.as_ns(), 1138 + 250);
        assert_eq!(l.stats(Direction::Up).transfers, 2);
        assert_eq!(l.stats(Direction::Up).busy_ns, 2 * 1138);
        let wire = 3.0 * 4480.0;
        assert!((l.energy_j() - wire * 40e-12).abs() < 1e-18);
    }

    #[test]
    fn bad_fields_are_named() {
        let e = |c: LinkConfig| c.validate().unwrap_err().to_string();
        assert!(e(gen(6, 4)).contains("link.generation"));
        assert!(e(gen(3, 3)).contains("link.lanes"));
        let mps = LinkConfig {
            max_payload_bytes: 300,
            ..LinkConfig::default()
        };
        assert!(e(mps).contains("link.max_payload_bytes"));
        let pj = LinkConfig {
            energy_pj_per_byte: f64::NAN,
            ..LinkConfig::default()
        };
        assert!(e(pj).contains("link.energy_pj_per_byte"));
    }

    proptest! {
        /// Whatever the arrivals, a direction never carries more than its raw bandwidth:
        /// the busy time covers every wire byte and transfers never overlap.
        #[test]
        fn a_direction_never_exceeds_its_bandwidth(
            sizes in proptest::collection::vec((0u64..10_000, 0u64..20_000), 1..50),
        ) {
            let mut l = Link::new(gen(2, 2)).unwrap();
            let mut now = SimTime::ZERO;
            let mut last_done = SimTime::ZERO;
            let mut wire = 0u64;
            for (gap, bytes) in sizes {
                now += SimDuration::from_ns(gap);
                let t = l.transfer(now, Direction::Down, bytes);
                prop_assert!(t.start >= last_done && t.start >= now);
                last_done = t.wire_done;
                wire += l.config().wire_bytes(bytes);
            }
            // Gen2 ×2: 1 ns per wire byte.
            prop_assert_eq!(l.stats(Direction::Down).busy_ns, wire);
        }
    }
}
