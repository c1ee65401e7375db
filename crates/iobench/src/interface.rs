//! The host interface the benchmark drives the FTL device through. By default it is the NVMe
//! front end and its PCIe link (`nearflash_nvme::Nvme`, configured by the preset's `[nvme]`):
//! doorbells, command fetch, the controller, data DMA and the completion all occupy the link,
//! so no figure can exceed what the link carries. `bare` hands requests straight to the FTL,
//! as `nearflash io` did before the front end was on its path, for comparison.
//!
//! The driver is generic over [`FrontEnd`], implemented once per interface: each attaches
//! itself to a freshly formatted FTL device, wraps the FTL's events into its own, and shows
//! the driver the FTL behind it and its link's counters.

use crate::error::IoBenchError;
use nearflash_blockdev::BlockDevice;
use nearflash_ftl::{Device, Event};
use nearflash_hw::link::{Direction, DirectionStats};
use nearflash_nvme::HELD_MAX;
use nearflash_preset::Preset;
use nearflash_ssd::{Layers, Ssd, SsdEvent};
use serde::{Deserialize, Serialize};

/// Which path requests take from the host to the FTL.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum Interface {
    /// The NVMe front end and its PCIe link (the preset's `[nvme]`).
    #[default]
    Nvme,
    /// Straight into the FTL: no front end, no link.
    Bare,
}

impl Interface {
    pub fn name(self) -> &'static str {
        match self {
            Interface::Nvme => "nvme",
            Interface::Bare => "bare",
        }
    }
}

/// The front end's counters at one instant, so a phase can be reported alone.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FrontSnapshot {
    pub up: DirectionStats,
    pub down: DirectionStats,
    pub controller_busy_ns: u64,
    pub commands: u64,
}

/// What the driver needs of a host interface in front of the FTL device.
pub trait FrontEnd: BlockDevice + Sized {
    const INTERFACE: Interface;

    /// Puts the interface in front of `dev`, freshly formatted.
    fn attach(dev: Device, preset: &Preset) -> Result<Self, IoBenchError>;

    /// One of the FTL's events as the interface's own.
    fn wrap(ev: Event) -> Self::Event;

    /// The FTL device behind the interface.
    fn ftl(&self) -> &Device;

    /// The front end's counters; `None` when there is no front end.
    fn front(&self) -> Option<FrontSnapshot>;

    /// Declares that the caller may keep up to `requests` outstanding (an open-loop replay),
    /// so that a front end with bounded queues holds them back rather than refusing them.
    fn expect_outstanding(&mut self, requests: u64);

    /// Nothing in flight and no background work pending.
    fn is_quiescent(&self) -> bool;
}

impl FrontEnd for Device {
    const INTERFACE: Interface = Interface::Bare;

    fn attach(dev: Device, _: &Preset) -> Result<Self, IoBenchError> {
        Ok(dev)
    }

    fn wrap(ev: Event) -> Event {
        ev
    }

    fn ftl(&self) -> &Device {
        self
    }

    fn front(&self) -> Option<FrontSnapshot> {
        None
    }

    fn expect_outstanding(&mut self, _: u64) {}

    fn is_quiescent(&self) -> bool {
        Device::is_quiescent(self)
    }
}

/// The SSD (`nearflash_ssd`): the FTL behind its DRAM write buffer (the preset's
/// `[write_cache]`; a disabled one passes every request through unchanged), behind the NVMe
/// front end.
impl FrontEnd for Ssd {
    const INTERFACE: Interface = Interface::Nvme;

    fn attach(dev: Device, preset: &Preset) -> Result<Self, IoBenchError> {
        nearflash_ssd::attach(dev, &preset.write_cache, &preset.nvme).map_err(|source| {
            IoBenchError::Ssd {
                preset: preset.name.clone(),
                source,
            }
        })
    }

    fn wrap(ev: Event) -> SsdEvent {
        nearflash_ssd::wrap(ev)
    }

    fn ftl(&self) -> &Device {
        self.inner()
    }

    fn front(&self) -> Option<FrontSnapshot> {
        let link = self.link();
        let s = self.stats();
        Some(FrontSnapshot {
            up: link.stats(Direction::Up),
            down: link.stats(Direction::Down),
            controller_busy_ns: s.controller_busy_ns,
            commands: s.commands,
        })
    }

    fn expect_outstanding(&mut self, requests: u64) {
        let held = usize::try_from(requests).unwrap_or(usize::MAX);
        self.set_held_max(held.max(HELD_MAX));
    }

    fn is_quiescent(&self) -> bool {
        let cache = self.buffer();
        self.outstanding() == 0
            && cache.occupied_units() == 0
            && cache.destages_in_flight() == 0
            && cache.device().is_quiescent()
    }
}
