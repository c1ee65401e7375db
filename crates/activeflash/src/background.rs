//! Fig. 2: compression in the background on the controller while the foreground writes.
//!
//! The foreground writes `volume_bytes` as 4 KiB random writes, open loop at a set
//! throughput. Each page it writes joins the controller's compression queue; the
//! controller's compression task (`worker`) reads pages back from flash, compresses them in
//! the time its FTL work leaves free, appends the stream to the compressed log and trims the
//! originals — all through the same FTL, dies and bus as the foreground. When the foreground
//! ends we count the fraction of its live pages that live compressed, and the energy saved
//! against the baseline in which the host compresses everything (Δpower × busy time, the
//! paper's accounting: the controller's compression and the FTL work its extra commands
//! cost, against the host's compression of the same bytes).
//!
//! `charge_compute = false` is the paper's own assumption for its ≤ 24 MB/s limit ("due to
//! just additional I/O and no computation on controller"): compression takes no controller
//! time, only I/O.

use crate::corpus::PAGE_BYTES;
use crate::error::ActiveFlashError;
use crate::model::Model;
use crate::rig::{Fidelity, Machine, Rig};
use crate::worker::Side;
use crate::ActiveFlashConfig;
use nearflash_flash::FlashConfig;
use nearflash_ftl::FtlConfig;
use nearflash_sim::SimTime;
use serde::Serialize;

#[derive(Clone, Copy, Debug)]
pub struct BackgroundParams {
    pub foreground_mb_s: f64,
    pub volume_bytes: u64,
    /// Run the compression task at all (false: the baseline without compression).
    pub compress: bool,
    pub charge_compute: bool,
}

#[derive(Clone, Debug, Serialize)]
pub struct BackgroundPoint {
    pub foreground_mb_s: f64,
    /// Throughput the foreground achieved (bytes over first arrival to last completion).
    pub achieved_mb_s: f64,
    pub fraction_compressed: f64,
    pub energy_saving: f64,
    /// The analytic model at x = foreground / host compression rate (capped at 1).
    pub model_host_utilization: f64,
    pub model_fraction: f64,
    pub model_energy_saving: f64,
    pub latency_us_min: f64,
    pub latency_us_mean: f64,
    pub latency_us_p99: f64,
    pub latency_us_max: f64,
    pub controller_ftl_utilization: f64,
    pub controller_offload_utilization: f64,
    /// Input bytes over compressed bytes of the extents written.
    pub compression_ratio: f64,
    pub flash_page_reads: u64,
    pub flash_page_programs: u64,
    pub gc_pages_copied: u64,
    pub sim_s: f64,
    pub trace_hash: String,
}

/// Logical pages to hold back for the compressed log of `pages` pages: every extent may be
/// one page longer than its input.
pub(crate) fn log_pages_for(pages: u64, extent_pages: u32) -> u64 {
    pages + pages.div_ceil(u64::from(extent_pages)) + 2 * u64::from(extent_pages)
}

/// Runs one point of Fig. 2 and returns it with the rig (drained, ready to verify).
pub fn run_background(
    flash: &FlashConfig,
    ftl: &FtlConfig,
    cfg: &ActiveFlashConfig,
    params: BackgroundParams,
    fidelity: Fidelity,
    seed: u64,
) -> Result<(BackgroundPoint, Rig), ActiveFlashError> {
    let f = params.foreground_mb_s;
    check_foreground_mb_s(f)?;
    let pages = params.volume_bytes.div_ceil(PAGE_BYTES as u64);
    let mut rig = Rig::new(
        flash,
        ftl,
        cfg,
        fidelity,
        log_pages_for(pages, cfg.extent_pages),
        seed,
    )?;
    check_write_ceiling(&rig, f)?;
    if pages > rig.user_pages() {
        return Err(ActiveFlashError::VolumeTooLarge {
            volume_bytes: params.volume_bytes,
            user_bytes: rig.user_pages() * PAGE_BYTES as u64,
        });
    }
    {
        let w = &mut rig.machine_mut().workers[Side::Controller.index()];
        w.stopped = !params.compress;
        w.charge_compute = params.charge_compute;
    }
    let start = rig.now();
    let ctrl0 = (
        rig.machine().controller.busy_foreground_ns,
        rig.machine().controller.busy_background_ns,
    );
    rig.start_foreground(pages, Some(f), 0);
    rig.run_until(Machine::foreground_done)?;
    let point = measure(&rig, cfg, f, start, ctrl0)?;
    rig.machine_mut().workers[Side::Controller.index()].stopped = true;
    rig.drain()?;
    Ok((point, rig))
}

/// Refuses a foreground throughput (MB/s) that is not a positive number.
pub(crate) fn check_foreground_mb_s(f: f64) -> Result<(), ActiveFlashError> {
    if !(f.is_finite() && f > 0.0) {
        return Err(ActiveFlashError::NotPositive {
            what: "foreground throughput (MB/s)",
            value: f,
        });
    }
    Ok(())
}

/// Refuses a foreground throughput (MB/s) faster than the rig's device can write.
pub(crate) fn check_write_ceiling(rig: &Rig, f: f64) -> Result<(), ActiveFlashError> {
    let ceiling = rig.write_ceiling_mb_s();
    if f > ceiling {
        return Err(ActiveFlashError::ForegroundTooFast {
            requested_mb_s: f,
            device_mb_s: ceiling,
        });
    }
    Ok(())
}

/// The point of foreground rate `f` once the foreground is done: what it achieved, the share
/// of live pages compressed, the energy saved and the model's figures beside them
/// (`start`: when the foreground began; `ctrl0`: the controller's foreground and background
/// busy times then, ns).
fn measure(
    rig: &Rig,
    cfg: &ActiveFlashConfig,
    f: f64,
    start: SimTime,
    ctrl0: (u64, u64),
) -> Result<BackgroundPoint, ActiveFlashError> {
    let fg = rig.machine().fg.as_ref().expect("the foreground ran");
    let elapsed_ns = rig.now().since(start).as_ns().max(1) as f64;
    let achieved_mb_s =
        (fg.total * PAGE_BYTES as u64) as f64 / fg.end.since(fg.start).as_ns().max(1) as f64 * 1e3;
    let latency_us_min = fg.latency.min_ns() as f64 / 1e3;
    let latency_us_max = fg.latency.max_ns() as f64 / 1e3;
    let latency_us_mean = fg.latency.mean_ns() / 1e3;
    let latency_us_p99 = fg.latency.quantile_ns(0.99) as f64 / 1e3;
    let fg_commands = fg.total;
    let live = rig.machine().versions.count_nonzero() as u64;
    let compressed = rig.machine().pages_compressed_live;
    let fraction_compressed = compressed as f64 / live.max(1) as f64;
    let ftl_ns = rig.machine().controller.busy_foreground_ns - ctrl0.0;
    let energy_saving = energy_saving(rig, cfg, live, compressed, fg_commands, ftl_ns);
    let ratio = rig.machine().workers[Side::Controller.index()].compression_ratio();

    let model = Model::from_config(cfg)?;
    let host = cfg.host();
    let x = (f * 1e6 / host.rate_bytes_per_s(cfg.compress_instructions_per_byte())).min(1.0);
    Ok(BackgroundPoint {
        foreground_mb_s: f,
        achieved_mb_s,
        fraction_compressed,
        energy_saving,
        model_host_utilization: x,
        model_fraction: model.offloaded_fraction(x)?,
        model_energy_saving: model.energy_saving(x)?,
        latency_us_min,
        latency_us_mean,
        latency_us_p99,
        latency_us_max,
        controller_ftl_utilization: ftl_ns as f64 / elapsed_ns,
        controller_offload_utilization: (rig.machine().controller.busy_background_ns - ctrl0.1)
            as f64
            / elapsed_ns,
        compression_ratio: ratio,
        flash_page_reads: rig.machine().dev.backbone().stats().page_reads,
        flash_page_programs: rig.machine().dev.backbone().stats().page_programs,
        gc_pages_copied: rig.machine().dev.stats().gc_pages_copied,
        sim_s: elapsed_ns * 1e-9,
        trace_hash: rig.trace_hash(),
    })
}

/// The energy saved against the host compressing every live page (Δpower × busy time): the
/// controller's compression and the FTL work its extra commands cost (`ftl_ns` busy over
/// the foreground's `fg_commands`), plus the host's compression of the pages left
/// uncompressed.
fn energy_saving(
    rig: &Rig,
    cfg: &ActiveFlashConfig,
    live: u64,
    compressed: u64,
    fg_commands: u64,
    ftl_ns: u64,
) -> f64 {
    let ipb = cfg.compress_instructions_per_byte();
    let host = cfg.host();
    let ctrl = cfg.controller();
    let live_bytes = (live * PAGE_BYTES as u64) as f64;
    let baseline_j = live_bytes * host.time_ns(ipb) * 1e-9 * host.delta_power_w();
    let worker = &rig.machine().workers[Side::Controller.index()];
    let ctrl_compress_ns = ctrl.time_ns(worker.instructions);
    let extra_ftl_ns =
        ftl_ns.saturating_sub(fg_commands * rig.machine().controller.foreground_ns()) as f64;
    let offload_j = (ctrl_compress_ns + extra_ftl_ns) * 1e-9 * ctrl.delta_power_w()
        + (live - compressed) as f64
            * PAGE_BYTES as f64
            * host.time_ns(ipb)
            * 1e-9
            * host.delta_power_w();
    if baseline_j > 0.0 {
        1.0 - offload_j / baseline_j
    } else {
        0.0
    }
}
