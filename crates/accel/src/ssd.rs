//! SIMD's host and its conventional NVMe SSD, on the shared layers: the host model
//! (`nearflash-host`: system calls, the storage stack's CPU cost per request and per page, a
//! bounded page cache with read-ahead and write-back, fsync) over the SSD every system uses
//! (`nearflash-ssd`: the NVMe front end — doorbell, SQE fetch, controller, DMA over the SSD's
//! PCIe link, MSI-X — over a write buffer, disabled here, over the FTL). They are one
//! `sim::Model` (`HostSide`) on the run's `sim::Driver`, through their composed events,
//! `HostEvent<nearflash_ssd::SsdEvent>`;
//! a host operation is waited for with `Driver::run_until`, under its watchdog. Every event
//! after preconditioning goes into the trace hash.
//!
//! SIMD's file I/O is buffered (through the page cache), as the paper describes the
//! baseline: the application requests data from the SSD "through the I/O runtime library"
//! and the file system, and the data are copied between OS-kernel buffers and user buffers
//! inside host DRAM (seed 000 §2.1, Fig. 1b ❸; §3.1 decomposes the baseline's time into SSD
//! latency and "CPU latency that host storage stack takes", Fig. 3d; §5 "Accelerators": SIMD
//! "performs I/Os through a discrete high-performance SSD"). An output is written and then
//! fsync'd: an instance is done when its output is on the SSD, as §3.1 counts the time "to
//! load/store input/output data".
//!
//! In functional fidelity the flash device stores data (`MemoryStore`) and `HostPages`,
//! between the host and the NVMe front end, carries the page cache's bytes: reads bring the
//! device's data into host memory, buffered writes stage theirs there, write-backs take them
//! to the device. Timing is the same in both fidelities.

use crate::error::AccelError;
use crate::host_pages::HostPages;
use crate::preload::Preload;
use nearflash_flash::{FlashConfig, Geometry, MemoryStore, NoStore, PageStore};
use nearflash_ftl::{Device, Event, FtlConfig};
use nearflash_host::{
    Extent, FileId, Host, HostCompletion, HostConfig, HostEvent, HostStats, OpFlags, OpId,
    PAGE_BYTES,
};
use nearflash_nvme::{NvmeConfig, NvmeEvent, NvmeStats};
use nearflash_sim::{Driver, EventQueue, Model, Progress, Schedule, Sim, SimRng, SimTime};
use nearflash_ssd::Layers;
use nearflash_wcache::{WcEvent, WriteCacheConfig};

/// The conventional SSD as the host reaches it: the shared assembly (`nearflash_ssd`), its
/// DRAM write buffer disabled — the paper's SSD table (`[ssd]`) gives none, and a disabled
/// buffer passes every request and event through unchanged.
pub type Drive = nearflash_ssd::Ssd;
/// The run's events: the host's, wrapping the SSD's.
pub type SsdEvent = HostEvent<nearflash_ssd::SsdEvent>;

fn wrap_device(e: Event) -> SsdEvent {
    HostEvent::Device(nearflash_ssd::wrap(e))
}

fn unwrap_device(e: SsdEvent) -> Event {
    match e {
        HostEvent::Device(NvmeEvent::Device(WcEvent::Device(d))) => d,
        other => unreachable!("{other:?} while preconditioning: only the flash device runs"),
    }
}

/// The host and its SSD on their simulation loop; in functional fidelity the SSD stores
/// data and `HostPages` carries the bytes of the host's page cache.
pub struct Ssd {
    run: Driver<HostSide>,
}

/// The host over its drive as a `sim::Model`: the host handles every event, and what it
/// completes is collected after each, so a wait can end on it.
struct HostSide {
    host: Host<HostPages<Drive>>,
    done: Vec<HostCompletion>,
    /// The host operation a caller waits for (SIMD runs one at a time).
    waiting: Option<OpId>,
}

impl Model for HostSide {
    type Event = SsdEvent;

    fn handle(&mut self, ev: SsdEvent, q: &mut EventQueue<SsdEvent>, rng: &mut SimRng) {
        self.host.handle(ev, q, rng);
        self.host.take_completions(&mut self.done);
    }

    /// The drive's NVMe completions count as progress while an operation is outstanding.
    fn progress(&self) -> Progress {
        Progress {
            completed: self.host.device().inner().stats().cqes,
            outstanding: u64::from(self.waiting.is_some()),
        }
    }
}

impl HostSide {
    fn completed(&self, id: OpId) -> bool {
        self.done.iter().any(|c| c.op == id)
    }
}

/// The host's operations on one file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileOp {
    Read,
    /// A buffered write (`Ssd::fsync` makes it durable).
    Write,
}

impl Ssd {
    /// A fresh SSD behind the host; `functional`: over a `MemoryStore` (it stores data).
    pub fn format(
        flash: &FlashConfig,
        ftl: &FtlConfig,
        nvme: &NvmeConfig,
        host: &HostConfig,
        seed: u64,
        functional: bool,
    ) -> Result<Ssd, AccelError> {
        let mut sim = Sim::new(seed);
        let store: Box<dyn PageStore> = if functional {
            Box::new(MemoryStore::new(
                Geometry::from_config(flash).page_count(),
                flash.page_size_bytes,
            ))
        } else {
            Box::new(NoStore)
        };
        let dev = Device::format(flash, ftl, store, &mut sim.queue().map(wrap_device))?;
        let drive = nearflash_ssd::attach(dev, &WriteCacheConfig::default(), nvme)?;
        let host = Host::new(host.clone(), HostPages::new(drive))?;
        Ok(Ssd {
            run: Driver::new(
                sim,
                HostSide {
                    host,
                    done: Vec::new(),
                    waiting: None,
                },
            ),
        })
    }

    fn host(&self) -> &Host<HostPages<Drive>> {
        &self.run.model().host
    }

    fn host_mut(&mut self) -> &mut Host<HostPages<Drive>> {
        &mut self.run.model_mut().host
    }

    pub fn dev(&self) -> &Device {
        self.host().device().inner().inner()
    }

    /// True when the SSD stores data (functional fidelity).
    pub fn is_functional(&self) -> bool {
        self.dev().is_functional()
    }

    pub fn host_stats(&self) -> HostStats {
        self.host().stats()
    }

    pub fn nvme_stats(&self) -> NvmeStats {
        self.host().device().inner().stats()
    }

    /// Bytes in the host's page cache now, and its capacity.
    pub fn cache_bytes(&self) -> (u64, u64) {
        let c = self.host().cache();
        (c.bytes(), c.capacity_bytes())
    }

    /// The run's clock.
    pub fn now(&self) -> SimTime {
        self.run.now()
    }

    /// Events processed so far.
    pub fn events(&self) -> u64 {
        self.run.sim().events()
    }

    pub fn trace_hash(&self) -> String {
        self.run.sim().trace_hash().hex()
    }

    /// Summed die and channel busy time so far.
    pub fn device_busy(&self) -> (u64, u64) {
        let now = self.run.now();
        (
            self.dev().die_busy_ns(now).iter().sum(),
            self.dev().channel_busy_ns(now).iter().sum(),
        )
    }

    /// Declares a file of `len_bytes` (rounded up to whole pages) at `dev_offset`.
    pub fn add_file(&mut self, dev_offset: u64, len_bytes: u64) -> Result<FileId, AccelError> {
        Ok(self.host_mut().add_file(vec![Extent {
            dev_offset,
            len: len_bytes.div_ceil(PAGE_BYTES) * PAGE_BYTES,
        }])?)
    }

    /// Reads or writes `len` bytes of `file` at `offset` through the host's buffered I/O;
    /// returns when the operation has completed.
    pub fn file_io(
        &mut self,
        op: FileOp,
        file: FileId,
        offset: u64,
        len: u64,
    ) -> Result<(), AccelError> {
        let flags = OpFlags::default();
        let (side, q, _) = self.run.parts();
        let id = match op {
            FileOp::Read => side.host.read(file, offset, len, flags, q)?,
            FileOp::Write => side.host.write(file, offset, len, flags, q)?,
        };
        self.wait(id)
    }

    /// `fsync(file)`: returns once its dirty pages are written back and the drive flushed.
    pub fn fsync(&mut self, file: FileId) -> Result<(), AccelError> {
        let (side, q, _) = self.run.parts();
        let id = side.host.fsync(file, q)?;
        self.wait(id)
    }

    /// Functional fidelity: the bytes `[dev_offset, dev_offset + out.len())` in host memory
    /// (what the host's last reads brought in and its writes put there).
    pub fn host_bytes(&self, dev_offset: u64, out: &mut [u8]) {
        self.host().device().read(dev_offset, out);
    }

    /// Functional fidelity: a buffered write's bytes enter the page cache at `dev_offset`
    /// (call it with the `FileOp::Write` of the same range).
    pub fn stage(&mut self, dev_offset: u64, bytes: &[u8]) {
        self.host_mut().device_mut().stage(dev_offset, bytes);
    }

    /// Functional fidelity: host memory drops its copy of `[dev_offset, dev_offset + len)`.
    pub fn forget(&mut self, dev_offset: u64, len: u64) {
        self.host_mut().device_mut().forget(dev_offset, len);
    }

    /// Functional fidelity, untimed: the bytes a read of `[dev_offset, dev_offset + len)`
    /// submitted now would return from the drive (sector aligned).
    pub fn peek(&mut self, dev_offset: u64, len: u64) -> Result<Vec<u8>, AccelError> {
        self.host_mut()
            .device_mut()
            .inner_mut()
            .inner_mut()
            .peek(dev_offset, len)
            .map_err(|source| AccelError::Io {
                op: nearflash_ftl::BlockOp::Read,
                offset_bytes: dev_offset,
                source,
            })
    }

    /// Runs the loop until operation `id` completes (the watchdog counts NVMe completions
    /// as progress).
    fn wait(&mut self, id: OpId) -> Result<(), AccelError> {
        let side = self.run.model_mut();
        assert!(
            side.waiting.is_none(),
            "SIMD runs one host operation at a time"
        );
        // An operation the host completed as it was submitted (no event) is collected here.
        side.host.take_completions(&mut side.done);
        side.waiting = Some(id);
        let waited = self.run.run_until(|side| side.completed(id));
        let side = self.run.model_mut();
        side.waiting = None;
        waited.map_err(|stall| AccelError::Stalled {
            what: "the SSD's host operation",
            stall,
        })?;
        let i = side
            .done
            .iter()
            .position(|c| c.op == id)
            .expect("the wait ended on it");
        let c = side.done.swap_remove(i);
        assert!(
            side.done.is_empty(),
            "SIMD runs one host operation at a time"
        );
        Ok(c.result?)
    }

    /// Runs the machine (the drive's background work, the host's write-back) until `at` (or
    /// now, if `at` is past).
    pub fn advance_to(&mut self, at: SimTime) {
        let t = at.max(self.run.now());
        self.run.advance_to(t);
    }

    /// Writes the input files (untimed preconditioning, straight to the flash device) with
    /// the payloads `payload(offset, len)` gives (empty in timing fidelity); the trace hash
    /// starts after it.
    pub fn preload(
        &mut self,
        files: &[(u64, u64)],
        request_bytes: u64,
        payload: impl FnMut(u64, u64) -> Vec<u8>,
    ) -> Result<(), AccelError> {
        let step = request_bytes.max(1 << 20);
        let todo = files.iter().flat_map(|&(base, len)| {
            (base..base + len)
                .step_by(step as usize)
                .map(move |a| (a, step.min(base + len - a)))
        });
        let mut next_id = 0;
        crate::preload::write_extents(
            &mut self.run,
            |side| {
                let dev = side.host.device_mut().inner_mut().inner_mut();
                Preload::new(dev, (wrap_device, unwrap_device), &mut next_id, payload)
            },
            todo.collect(),
            "SSD preconditioning",
        )?;
        self.run.restart_trace();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nearflash_host::PageCacheConfig;

    const KIB: u64 = 1 << 10;
    const MIB: u64 = 1 << 20;

    /// The `flashabacus` preset's SIMD tables: host, and the SSD's flash and FTL.
    fn preset() -> (HostConfig, FlashConfig, FtlConfig) {
        let mut doc: toml::Table = include_str!("../../../configs/flashabacus.toml")
            .parse()
            .unwrap();
        let host = doc.remove("host").unwrap().try_into().unwrap();
        let flash = doc.remove("ssd_flash").unwrap().try_into().unwrap();
        let ftl = doc.remove("ssd_ftl").unwrap().try_into().unwrap();
        (host, flash, ftl)
    }

    /// The preset's SSD with `file_bytes` written at device offset 0 and declared as a file.
    fn ssd_with_file(page_cache: &PageCacheConfig, file_bytes: u64) -> (Ssd, FileId) {
        let (host, flash, ftl) = preset();
        let host = HostConfig {
            page_cache: page_cache.clone(),
            ..host
        };
        let mut ssd = Ssd::format(&flash, &ftl, &NvmeConfig::default(), &host, 1, false).unwrap();
        ssd.preload(&[(0, file_bytes)], host.io_request_bytes, |_, _| Vec::new())
            .unwrap();
        let file = ssd.add_file(0, file_bytes).unwrap();
        (ssd, file)
    }

    /// A SIMD instance's buffered read of one 4 KiB page costs, by hand from the configs:
    /// the system call, the stack's request and page costs, the NVMe path of one 4 KiB read
    /// (doorbell, SQE fetch, controller, data DMA, CQE, MSI-X), the flash read of one page
    /// (tR, then the page and its spare area over the channel), and the copy to the user.
    #[test]
    fn a_4kib_read_costs_the_stack_the_nvme_command_the_flash_page_and_the_copy() {
        let (host, flash, _) = preset();
        let cache = PageCacheConfig::default();
        let nvme = NvmeConfig::default();
        let (mut ssd, file) = ssd_with_file(&cache, 4 * KIB);
        let from = ssd.now();
        ssd.file_io(FileOp::Read, file, 0, 4 * KIB).unwrap();
        let took_ns = ssd.now().since(from).as_ns();

        let stack_ns = host.syscall_ns + host.io_stack_request_ns + cache.stack_page_ns;
        let w = |b| nvme.link.wire_time(b).as_ns();
        let lat = nvme.link.latency_ns;
        let dram = nvme.host_memory.latency_ns;
        let doorbell = w(4) + lat;
        let fetch = w(0) + lat + dram + w(64) + lat;
        let data = w(4096) + lat;
        // The CQE's DRAM write starts as its first byte lands and ends after its last one.
        let cqe = (w(16) + lat).max(lat + 1 + dram);
        let nvme_ns = doorbell + fetch + nvme.controller_ns + data + cqe + nvme.msix_latency_ns;
        assert_eq!(nvme_ns, 6_587, "the NVMe crate's QD1 4 KiB figure");
        let page_bytes = f64::from(flash.page_size_bytes + flash.oob_size_bytes);
        let flash_ns = (flash.read_latency_us * 1e3).round() as u64
            + flash.command_overhead_ns
            + (page_bytes / flash.channel_rate_mb_s * 1e3).round() as u64;
        assert_eq!(flash_ns, 75_000 + 100 + 132_812);
        let copy_ns = host.copy_ns(4 * KIB);
        assert_eq!(took_ns, stack_ns + nvme_ns + flash_ns + copy_ns);

        let (h, n) = (ssd.host_stats(), ssd.nvme_stats());
        assert_eq!((h.syscalls, h.misses, h.device_requests), (1, 1, 1));
        assert_eq!((n.commands, n.interrupts), (1, 1));
        assert_eq!(h.cpu_busy_ns, stack_ns + copy_ns, "the host's CPU, once");
        assert_eq!(ssd.dev().stats().host_read_bytes, 4 * KIB);
    }

    /// Reading a file four times the page cache keeps the cache at its limit; the reads go
    /// as one request per `io_request_bytes`, at most a chunk and its read-ahead in flight.
    #[test]
    fn a_file_larger_than_the_page_cache_keeps_the_cache_bounded() {
        let (host, _, _) = preset();
        let cache = PageCacheConfig {
            capacity_bytes: 2 * MIB,
            ..PageCacheConfig::default()
        };
        let (mut ssd, file) = ssd_with_file(&cache, 8 * MIB);
        for at in (0..8 * MIB).step_by(MIB as usize) {
            ssd.file_io(FileOp::Read, file, at, MIB).unwrap();
            let (bytes, capacity) = ssd.cache_bytes();
            assert!(bytes <= capacity);
        }
        let h = ssd.host_stats();
        assert_eq!(
            h.cache_bytes_max, cache.capacity_bytes,
            "filled, never beyond"
        );
        assert!(h.evictions > 0);
        assert_eq!(h.device_requests, 8 * MIB / host.io_request_bytes);
        let window = (host.io_request_bytes + cache.read_ahead_bytes) / host.io_request_bytes;
        assert!(u64::from(h.device_in_flight_max) <= window, "{h:?}");
        assert_eq!(ssd.dev().stats().host_read_bytes, 8 * MIB);
    }

    /// An output written and fsync'd is on the flash when the call returns: the flush
    /// reached the device and every byte was written back.
    #[test]
    fn a_synced_write_reaches_the_flash_before_it_returns() {
        let (mut ssd, file) = ssd_with_file(&PageCacheConfig::default(), 4 * MIB);
        let before = ssd.dev().stats().host_write_bytes;
        ssd.file_io(FileOp::Write, file, 0, 3 * MIB).unwrap();
        ssd.fsync(file).unwrap();
        assert_eq!(ssd.dev().stats().host_write_bytes - before, 3 * MIB);
        assert_eq!(ssd.nvme_stats().flushes, 1);
        assert_eq!(ssd.host_stats().writeback_pages, 3 * MIB / PAGE_BYTES);
    }
}
