//! Block devices: the interface between whatever issues block I/O (a driver, an NVMe front
//! end, a file system) and whatever serves it (the FTL over flash, INSIDER's DRAM-emulated
//! drive). A block device is a sans-IO component: requests enter with [`BlockDevice::submit`],
//! its own events come back through [`BlockDevice::handle`], and finished requests leave
//! through [`BlockDevice::take_completions`]. It never owns the clock.

pub mod load;
pub mod mgmt;
pub mod request;
pub mod shadow;
pub mod verify;
pub mod zone;

pub use mgmt::{MgmtCommand, MgmtCompletion, MgmtRequest, MgmtStatus};
pub use zone::{ZoneCommand, ZoneCompletion, ZoneReply, ZoneRequest};

pub use request::{
    BlockCompletion, BlockOp, BlockRequest, IoError, PlacementDirective, ZoneStatus, SECTOR_BYTES,
};

use nearflash_sim::{Schedule, SimRng, TraceEvent};
use thiserror::Error;

/// A device refused a request because it holds as many as it admits
/// ([`BlockDevice::admission_limit`]): backpressure, not a failure. The request comes back
/// untouched; the caller holds it and submits it again once it has taken a completion.
#[derive(Debug, Error)]
#[error("the device holds its limit of {limit} requests: retry after a completion")]
pub struct Full {
    pub req: BlockRequest,
    pub limit: u64,
}

/// A device that serves sector-addressed reads, writes, trims and flushes.
///
/// Contract (every implementation keeps it; `crates/ftl`'s tests and the reference checker
/// hold them to it):
/// - a request is aligned to [`SECTOR_BYTES`] and lies within `capacity_bytes`, or it
///   completes with an error naming why; it never panics the device;
/// - every submitted request completes exactly once, in any order;
/// - a read returns the data of the newest completed write to each sector (zeros if none or
///   trimmed) — in functional fidelity the payload itself, in timing fidelity none;
/// - durability depends on [`BlockDevice::volatile_write_cache`]:
///   - **without a volatile write cache** (the FTL, INSIDER's drive) a write's completion is
///     sent only once its data is durable (every write is FUA), and a flush completes once
///     every write submitted before it has completed;
///   - **with one** (`crates/wcache` without power-loss protection) a completed write may be
///     lost at a power cut until a FLUSH submitted after its completion has completed, or
///     unless it was submitted with FUA ([`BlockDevice::submit_fua`]); after a cut every
///     sector reads a version of itself no older than the last durable one (never a mixture
///     within a sector, never another sector's data). With power-loss protection every
///     completed write survives, as without a cache.
///
/// A layer that forwards requests to a device below it forwards `submit_fua` as well, and
/// reports the cache of the device below in `volatile_write_cache`.
pub trait BlockDevice {
    /// The device's own events (its flash, its timers).
    type Event: TraceEvent;

    /// Logical capacity in bytes, a multiple of [`SECTOR_BYTES`].
    fn capacity_bytes(&self) -> u64;

    /// True when the device stores data (functional fidelity): writes must carry payloads
    /// and reads return them.
    fn is_functional(&self) -> bool;

    /// Accepts a request at `q.now()`.
    fn submit<S: Schedule<Self::Event>>(&mut self, req: BlockRequest, q: &mut S);

    /// Asserts the device's invariants, and those of the device below a layer (a machine's
    /// [`nearflash_sim::Model::check_invariants`] calls it after every event when asked).
    fn check_invariants(&self) {}

    /// Accepts a write with Force Unit Access: it completes only once its data is durable.
    /// A device without a volatile write cache makes every write durable before completing
    /// it, so the default is an ordinary submit. (FUA is a call rather than a field of
    /// [`BlockRequest`] so that the many places building requests stay as they are; a layer
    /// that forwards requests overrides this to forward it.)
    fn submit_fua<S: Schedule<Self::Event>>(&mut self, req: BlockRequest, q: &mut S) {
        self.submit(req, q);
    }

    /// Accepts a request from submitter `stream` (a benchmark job, a host core), with Force
    /// Unit Access when `fua`. A device with several submission queues (NVMe) puts it on
    /// queue `stream` modulo its queue count, so that each submitter keeps a queue of its
    /// own; any other device takes it as `submit` or `submit_fua`.
    fn submit_from<S: Schedule<Self::Event>>(
        &mut self,
        stream: u32,
        req: BlockRequest,
        fua: bool,
        q: &mut S,
    ) {
        let _ = stream;
        if fua {
            self.submit_fua(req, q);
        } else {
            self.submit(req, q);
        }
    }

    /// Accepts a write carrying a Data Placement directive (`placement`), from submitter
    /// `stream` when one is named (as [`BlockDevice::submit_from`]; otherwise as `submit`),
    /// with Force Unit Access when `fua`. A device without Flexible Data Placement ignores the
    /// directive, as the specification has a controller do, so the default is the submit the
    /// request would have had without it; a layer that forwards writes overrides this to
    /// forward the directive, and the FTL places the write by it.
    fn submit_placed<S: Schedule<Self::Event>>(
        &mut self,
        stream: Option<u32>,
        req: BlockRequest,
        fua: bool,
        placement: PlacementDirective,
        q: &mut S,
    ) {
        let _ = placement;
        match stream {
            Some(s) => self.submit_from(s, req, fua, q),
            None if fua => self.submit_fua(req, q),
            None => self.submit(req, q),
        }
    }

    /// True when completed writes may sit in volatile memory (NVMe Identify Controller,
    /// VWC bit): the host must FLUSH, or write with FUA, for durability. Default: none.
    fn volatile_write_cache(&self) -> bool {
        false
    }

    /// True when the namespace is zoned (Identify Namespace's command set is ZNS): it takes
    /// [`BlockDevice::submit_zone`] and writes only at write pointers. Default: conventional.
    fn is_zoned(&self) -> bool {
        false
    }

    /// Accepts a command of the zoned command set (Zone Append, Zone Management Send and
    /// Receive) at `q.now()`; its answer leaves through [`BlockDevice::take_zone_completions`],
    /// once, like a block request's. A device that is not zoned hands the request back
    /// (`Err`) without completing it, and the caller answers it (the NVMe front end with
    /// Invalid Command Opcode); a layer that forwards requests overrides this to forward it.
    fn submit_zone<S: Schedule<Self::Event>>(
        &mut self,
        req: ZoneRequest,
        q: &mut S,
    ) -> Result<(), ZoneRequest> {
        let _ = q;
        Err(req)
    }

    /// Moves finished zone commands into `out` (in completion order). Default: none.
    fn take_zone_completions(&mut self, out: &mut Vec<ZoneCompletion>) {
        let _ = out;
    }

    /// Accepts a management command (FDP's I/O Management Send and Receive, Get Log Page)
    /// at `q.now()`; its answer leaves through [`BlockDevice::take_mgmt_completions`]. A device
    /// that offers none hands the request back (`Err`) and the caller answers it (the NVMe
    /// front end with Invalid Command Opcode); a layer that forwards requests overrides this
    /// to forward it.
    fn submit_mgmt<S: Schedule<Self::Event>>(
        &mut self,
        req: MgmtRequest,
        q: &mut S,
    ) -> Result<(), MgmtRequest> {
        let _ = q;
        Err(req)
    }

    /// Moves answered management commands into `out`. Default: none.
    fn take_mgmt_completions(&mut self, out: &mut Vec<MgmtCompletion>) {
        let _ = out;
    }

    /// Handles one of the device's own events.
    fn handle<S: Schedule<Self::Event>>(&mut self, ev: Self::Event, q: &mut S, rng: &mut SimRng);

    /// Moves finished requests into `out` (in completion order).
    fn take_completions(&mut self, out: &mut Vec<BlockCompletion>);

    /// Requests submitted and not yet taken as completions.
    fn outstanding(&self) -> u64;

    /// Requests the device admits at once, counted as [`BlockDevice::outstanding`] counts
    /// them: [`BlockDevice::try_submit`] refuses beyond it, and a device with a limit of its
    /// own (the FTL's) asserts that a plain `submit` stays within it. Default: no limit of
    /// its own (a layer forwards the limit of the device below).
    fn admission_limit(&self) -> u64 {
        u64::MAX
    }

    /// Accepts `req` at `q.now()` if the device holds fewer than its admission limit;
    /// otherwise hands it back ([`Full`]) without effect. A caller whose outstanding count is
    /// not bounded by construction (an open-loop arrival process) submits this way and retries
    /// after taking a completion.
    fn try_submit<S: Schedule<Self::Event>>(
        &mut self,
        req: BlockRequest,
        q: &mut S,
    ) -> Result<(), Full> {
        let limit = self.admission_limit();
        if self.outstanding() >= limit {
            return Err(Full { req, limit });
        }
        self.submit(req, q);
        Ok(())
    }
}
