//! The SSD: what every simulated system's drive is.
//!
//! An SSD here is three sans-IO components stacked, each itself a [`BlockDevice`]:
//!
//! 1. the flash translation layer over its flash backbone ([`nearflash_ftl::Device`]: dies and
//!    channels, mapping, garbage collection, recovery);
//! 2. the drive's DRAM write buffer in front of it ([`WriteCache`], the preset's
//!    `[write_cache]`; a disabled one passes every request, completion and event through
//!    unchanged, so a drive without a buffer is the same stack);
//! 3. the NVMe front end with its PCIe link ([`Nvme`], the preset's `[nvme]`): queue pairs,
//!    doorbells, command fetch, DMA, completion entries and interrupts.
//!
//! [`Ssd`] names the stack and [`SsdConfig`] the four tables that configure it; [`format`]
//! builds a fresh drive and [`attach`] puts the buffer and the front end around an FTL built
//! another way (recovered from an image, preconditioned). FlashAbacus's SIMD baseline
//! (`accel::ssd`), Hayagui's drive, `nearflash io`/`fio`/traces (`iobench`) and the
//! computational drive of `nearflash cs` are all this type.
//!
//! The layer under the buffer is a parameter (`Ssd<D>`, the FTL by default) for one case: a
//! drive in timing fidelity keeps no bytes, but a real program above it must read back what
//! it wrote. Hayagui's drive is `Ssd<Shadowed<Device>>` (`blockdev::shadow`): the shadow
//! keeps the payload of what reached the FTL, answers the FTL's reads with it, and changes no
//! request's timing.

use nearflash_blockdev::BlockDevice;
use nearflash_flash::{ConfigError, FlashConfig, PageStore};
use nearflash_ftl::{Device, Event, FtlConfig};
use nearflash_nvme::{Nvme, NvmeConfig, NvmeError, NvmeEvent};
use nearflash_sim::Schedule;
use nearflash_wcache::{WcEvent, WriteCache, WriteCacheConfig};

/// The SSD: the FTL (or a layer over it, `D`) behind its DRAM write buffer, behind the NVMe
/// front end and its PCIe link.
pub type Ssd<D = Device> = Nvme<WriteCache<D>>;

/// The SSD's events: the front end's, wrapping the buffer's, wrapping the FTL's.
pub type SsdEvent<E = Event> = NvmeEvent<WcEvent<E>>;

/// Wraps an FTL event as the SSD's event (for `Schedule::map` while formatting or
/// preconditioning the FTL alone).
pub fn wrap(e: Event) -> SsdEvent {
    NvmeEvent::Device(WcEvent::Device(e))
}

/// The SSD's configuration: the preset's `[flash]`, `[ftl]`, `[write_cache]` and `[nvme]`
/// tables (each type cites its defaults).
#[derive(Clone, Debug, PartialEq)]
pub struct SsdConfig {
    pub flash: FlashConfig,
    pub ftl: FtlConfig,
    pub write_cache: WriteCacheConfig,
    pub nvme: NvmeConfig,
}

/// Why an SSD could not be built, by the layer that refused its configuration.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SsdError {
    #[error("the flash or FTL configuration: {0}")]
    Ftl(#[from] ConfigError),
    #[error("the write buffer's configuration: {0}")]
    WriteCache(#[from] nearflash_wcache::ConfigError),
    #[error("the NVMe front end's configuration: {0}")]
    Nvme(#[from] NvmeError),
}

/// A freshly formatted SSD of `cfg` over `store` (`NoStore`: timing fidelity, no bytes kept;
/// a memory or image store: functional). Formatting schedules the FTL's first events on `q`.
pub fn format(
    cfg: &SsdConfig,
    store: Box<dyn PageStore>,
    q: &mut impl Schedule<SsdEvent>,
) -> Result<Ssd, SsdError> {
    let dev = Device::format(&cfg.flash, &cfg.ftl, store, &mut q.map(wrap))?;
    attach(dev, &cfg.write_cache, &cfg.nvme)
}

/// The SSD around `dev`, an FTL (or a layer over one) built elsewhere: recovered from an
/// image, preconditioned, or shadowed.
pub fn attach<D: BlockDevice>(
    dev: D,
    write_cache: &WriteCacheConfig,
    nvme: &NvmeConfig,
) -> Result<Ssd<D>, SsdError> {
    let buffered = WriteCache::new(write_cache.clone(), dev)?;
    let ssd = Nvme::new(nvme.clone(), buffered)?;
    assert_eq!(
        ssd.device().device().capacity_bytes(),
        ssd.capacity_bytes(),
        "every layer exposes the FTL's capacity"
    );
    Ok(ssd)
}

/// The layers inside an SSD, by name.
pub trait Layers<D> {
    /// The write buffer (behind the front end).
    fn buffer(&self) -> &WriteCache<D>;
    /// The layer under the buffer: the FTL itself for `Ssd`.
    fn inner(&self) -> &D;
    fn inner_mut(&mut self) -> &mut D;
}

impl<D: BlockDevice> Layers<D> for Ssd<D> {
    fn buffer(&self) -> &WriteCache<D> {
        self.device()
    }

    fn inner(&self) -> &D {
        self.device().device()
    }

    fn inner_mut(&mut self) -> &mut D {
        self.device_mut().device_mut()
    }
}

#[cfg(test)]
mod tests;
