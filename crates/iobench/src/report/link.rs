//! The NVMe front end and its PCIe link over the measured phase: payload and wire bytes,
//! utilization and TLPs per direction, and the controller's commands.

use super::Measured;
use crate::interface::FrontSnapshot;
use nearflash_hw::link::DirectionStats;
use nearflash_nvme::NvmeConfig;
use serde::Serialize;

/// One direction of the link over the measured phase.
#[derive(Clone, Debug, Serialize)]
pub struct LinkDirection {
    /// Share of the phase the direction was busy putting bytes on the wire.
    pub utilization: f64,
    /// Bytes on the wire: payload plus a header per TLP.
    pub wire_bytes: u64,
    pub payload_bytes: u64,
    pub transfers: u64,
}

impl LinkDirection {
    pub(super) fn of(start: &DirectionStats, end: &DirectionStats, dur_ns: u64) -> LinkDirection {
        assert!(end.busy_ns >= start.busy_ns && end.wire_bytes >= start.wire_bytes);
        LinkDirection {
            utilization: (end.busy_ns - start.busy_ns) as f64 / dur_ns.max(1) as f64,
            wire_bytes: end.wire_bytes - start.wire_bytes,
            payload_bytes: end.payload_bytes - start.payload_bytes,
            transfers: end.transfers - start.transfers,
        }
    }
}

/// The NVMe front end and its PCIe link over the measured phase (`--interface nvme`).
#[derive(Clone, Debug, Serialize)]
pub struct LinkReport {
    pub generation: u8,
    pub lanes: u32,
    pub max_payload_bytes: u32,
    /// Device to host: read data, completion entries, interrupts, command fetch requests.
    pub up: LinkDirection,
    /// Host to device: write data, commands, doorbells.
    pub down: LinkDirection,
    /// Share of the phase the controller's firmware was busy processing commands.
    pub controller_utilization: f64,
    pub commands: u64,
}

impl LinkReport {
    /// The host link over the measured phase, when the run has a front end.
    pub(super) fn of_phase(m: &Measured, dur_ns: u64) -> Option<LinkReport> {
        match (m.nvme, &m.start.front, &m.end.front) {
            (Some(n), Some(fs), Some(fe)) => Some(LinkReport::of(n, fs, fe, dur_ns)),
            (None, None, None) => None,
            _ => unreachable!("a front end has a config and counters, or neither"),
        }
    }

    pub(super) fn of(
        nvme: &NvmeConfig,
        s: &FrontSnapshot,
        e: &FrontSnapshot,
        dur_ns: u64,
    ) -> LinkReport {
        assert!(e.controller_busy_ns >= s.controller_busy_ns && e.commands >= s.commands);
        LinkReport {
            generation: nvme.link.generation,
            lanes: nvme.link.lanes,
            max_payload_bytes: nvme.link.max_payload_bytes,
            up: LinkDirection::of(&s.up, &e.up, dur_ns),
            down: LinkDirection::of(&s.down, &e.down, dur_ns),
            controller_utilization: (e.controller_busy_ns - s.controller_busy_ns) as f64
                / dur_ns.max(1) as f64,
            commands: e.commands - s.commands,
        }
    }

    pub(super) fn rows(&self) -> Vec<(String, String)> {
        let gb = |b: u64| format!("{:.3}", b as f64 / 1e9);
        vec![
            (
                "link up / down utilization".into(),
                format!(
                    "{:.1}% / {:.1}% (PCIe {}.0 x{})",
                    100.0 * self.up.utilization,
                    100.0 * self.down.utilization,
                    self.generation,
                    self.lanes
                ),
            ),
            (
                "link wire bytes up / down".into(),
                format!(
                    "{} / {} GB",
                    gb(self.up.wire_bytes),
                    gb(self.down.wire_bytes)
                ),
            ),
            (
                "NVMe controller utilization (commands)".into(),
                format!(
                    "{:.1}% ({})",
                    100.0 * self.controller_utilization,
                    self.commands
                ),
            ),
        ]
    }
}
