//! Zoned namespace mode (NVMe ZNS, TP4053; STANDARDS §3.2), switched on by the preset's
//! `[zns]` table: the drive exposes zones that the host writes sequentially and resets,
//! instead of a conventional namespace behind a mapping table and GC.
//!
//! - `zone.rs`: the zone state machine and its resource limits (pure bookkeeping);
//! - `device.rs`: the zoned drive over the flash backbone — zones on superblocks, row
//!   buffers, Zone Append, Zone Management Send and Receive, Reset as an erase;
//! - `recovery.rs`: mounting after a power cut from the rows' spare areas;
//! - `crashtest.rs`: power-cut testing of a zoned workload;
//! - `reference.rs`: the spec's transition table written flat, the property tests' oracle.

pub mod config;
pub mod crashtest;
pub mod device;
pub mod recovery;
pub mod reference;
pub mod zone;

pub use config::ZnsConfig;
pub use device::{
    ZnsEvent, ZnsStats, ZoneCommand, ZoneCompletion, ZoneReply, ZoneRequest, ZonedDevice,
    REPORT_ZONES_MAX,
};
pub use recovery::{recover, ZnsRecoveryError, ZnsRecoveryReport};
pub use zone::{ZoneAction, ZoneDescriptor, ZoneFilter, ZoneState, ZoneTable};
