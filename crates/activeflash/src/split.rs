//! Fig. 3: compression after the foreground, split between the host and the controller.
//!
//! The foreground first writes `volume_bytes` as 4 KiB random writes (closed loop, queue
//! depth 32 — its speed does not matter here). Then the live pages, in the order they were
//! written, are dealt to the two sides by an even interleave: a `controller_share` of them
//! to the controller, which compresses flash-resident data in its idle time; the rest to the
//! host, which re-reads its pages from the SSD (every read a command the controller's FTL
//! processes), compresses them on its CPU and writes the compressed stream back. Both
//! append to the compressed log and trim the originals. The job's throughput is the live
//! bytes over the time until both sides are done; its energy is each engine's Δpower × busy
//! time.

use crate::background::log_pages_for;
use crate::corpus::PAGE_BYTES;
use crate::error::ActiveFlashError;
use crate::model::Model;
use crate::rig::{Fidelity, Machine, Rig};
use crate::worker::Side;
use crate::ActiveFlashConfig;
use nearflash_flash::FlashConfig;
use nearflash_ftl::FtlConfig;
use serde::Serialize;

/// Queue depth of the foreground that fills the device before the split job.
const FILL_QUEUE_DEPTH: u32 = 32;

#[derive(Clone, Debug, Serialize)]
pub struct SplitPoint {
    pub controller_share: f64,
    pub throughput_mb_s: f64,
    pub makespan_s: f64,
    /// Δpower × busy time of host compression and of all controller work during the job.
    pub energy_j: f64,
    /// The same for the host compressing every page alone (computation only).
    pub host_only_energy_j: f64,
    pub host_busy_s: f64,
    pub controller_busy_s: f64,
    /// Pages each side compressed.
    pub host_pages: u64,
    pub controller_pages: u64,
    /// The analytic model (computation only): throughput relative to the host alone, and
    /// energy relative to the host alone.
    pub model_speedup: f64,
    pub model_energy: f64,
    pub compression_ratio: f64,
    pub trace_hash: String,
}

pub fn run_split(
    flash: &FlashConfig,
    ftl: &FtlConfig,
    cfg: &ActiveFlashConfig,
    controller_share: f64,
    volume_bytes: u64,
    fidelity: Fidelity,
    seed: u64,
) -> Result<(SplitPoint, Rig), ActiveFlashError> {
    if !(0.0..=1.0).contains(&controller_share) {
        return Err(ActiveFlashError::OutOfUnitRange {
            what: "controller share (split)",
            value: controller_share,
        });
    }
    let pages = volume_bytes.div_ceil(PAGE_BYTES as u64);
    let mut rig = Rig::new(
        flash,
        ftl,
        cfg,
        fidelity,
        log_pages_for(pages, cfg.extent_pages),
        seed,
    )?;
    if pages > rig.user_pages() {
        return Err(ActiveFlashError::VolumeTooLarge {
            volume_bytes,
            user_bytes: rig.user_pages() * PAGE_BYTES as u64,
        });
    }
    rig.start_foreground(pages, None, FILL_QUEUE_DEPTH);
    rig.run_until(Machine::foreground_done)?;

    rig.machine_mut().assign_split(controller_share);
    for w in &mut rig.machine_mut().workers {
        w.stopped = false;
        w.draining = true;
    }
    let start = rig.now();
    let ctrl0 =
        rig.machine().controller.busy_foreground_ns + rig.machine().controller.busy_background_ns;
    let host0 = rig.machine().host.busy_background_ns;
    rig.drain()?;
    let makespan_ns = rig.now().since(start).as_ns().max(1) as f64;
    let live = rig.machine().versions.count_nonzero() as u64;
    let ctrl_ns = (rig.machine().controller.busy_foreground_ns
        + rig.machine().controller.busy_background_ns
        - ctrl0) as f64;
    let host_ns = (rig.machine().host.busy_background_ns - host0) as f64;
    let energy_j = ctrl_ns * 1e-9 * cfg.controller().delta_power_w()
        + host_ns * 1e-9 * cfg.host().delta_power_w();
    let ipb = cfg.compress_instructions_per_byte();
    let host_only_energy_j = (live * PAGE_BYTES as u64) as f64
        * cfg.host().time_ns(ipb)
        * 1e-9
        * cfg.host().delta_power_w();
    let model = Model::from_config(cfg)?;
    let (c, h) = (
        &rig.machine().workers[Side::Controller.index()],
        &rig.machine().workers[Side::Host.index()],
    );
    let bytes_out = c.bytes_out + h.bytes_out;
    let point = SplitPoint {
        controller_share,
        throughput_mb_s: (live * PAGE_BYTES as u64) as f64 / makespan_ns * 1e3,
        makespan_s: makespan_ns * 1e-9,
        energy_j,
        host_only_energy_j,
        host_busy_s: host_ns * 1e-9,
        controller_busy_s: ctrl_ns * 1e-9,
        host_pages: h.pages_in,
        controller_pages: c.pages_in,
        model_speedup: model.split_speedup(controller_share)?,
        model_energy: model.split_energy(controller_share)?,
        compression_ratio: (c.bytes_in + h.bytes_in) as f64 / bytes_out.max(1) as f64,
        trace_hash: rig.trace_hash(),
    };
    Ok((point, rig))
}
