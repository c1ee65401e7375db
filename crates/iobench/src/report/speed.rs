//! How fast the simulator ran: events and flash operations per wall-clock second, over the
//! measured phase and over the whole command.

use super::Measured;
use serde::Serialize;

/// How fast the simulator ran, over one stretch of the command. Flash operations are counted
/// two ways: `plane_ops` are pages read or programmed and blocks erased, per plane (a
/// two-plane program is two); `die_ops` are operations a die executed (a two-plane program is
/// one).
#[derive(Clone, Debug, Serialize)]
pub struct Speed {
    pub wall_s: f64,
    pub sim_events: u64,
    pub events_per_wall_s: f64,
    pub plane_ops: u64,
    pub plane_ops_per_wall_s: f64,
    pub die_ops: u64,
    pub die_ops_per_wall_s: f64,
}

impl Speed {
    pub(super) fn of(wall_s: f64, sim_events: u64, plane_ops: u64, die_ops: u64) -> Speed {
        let wall = wall_s.max(1e-9);
        Speed {
            wall_s,
            sim_events,
            events_per_wall_s: sim_events as f64 / wall,
            plane_ops,
            plane_ops_per_wall_s: plane_ops as f64 / wall,
            die_ops,
            die_ops_per_wall_s: die_ops as f64 / wall,
        }
    }
}

/// The simulator's speed over the measured phase and over the whole command (formatting,
/// preconditioning and settling included).
#[derive(Clone, Debug, Serialize)]
pub struct SpeedReport {
    pub measured: Speed,
    pub whole_command: Speed,
}

impl SpeedReport {
    /// The simulator's speed over the measured phase (`flash_ops` in it) and the whole command.
    pub(super) fn of(m: &Measured, flash_ops: u64) -> SpeedReport {
        let (s, e) = (m.start, m.end);
        SpeedReport {
            measured: Speed::of(
                m.measured_wall_s,
                e.events - s.events,
                flash_ops,
                e.die_ops - s.die_ops,
            ),
            whole_command: Speed::of(
                m.wall_s,
                m.total_events,
                e.page_reads + e.page_programs + e.block_erases,
                e.die_ops,
            ),
        }
    }
}
