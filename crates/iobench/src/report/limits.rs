//! The analytic ceilings of the backbone and the host link a report shows beside the
//! measured figures, for comparison only.

use nearflash_ftl::Device;
use nearflash_nvme::NvmeConfig;
use serde::Serialize;

/// Closed-form ceilings of the backbone and the host link, for comparison only: every
/// measured figure comes from the simulated events.
#[derive(Clone, Debug, Serialize)]
pub struct AnalyticLimits {
    /// All channel buses busy moving multi-plane page data (MB/s of page data).
    pub bus_read_bandwidth_mb_s: f64,
    /// All dies busy reading full multi-plane pages: tR + the register drain over the bus.
    pub die_read_bandwidth_mb_s: f64,
    /// min(bus, die): the backbone's sequential read ceiling.
    pub backbone_read_bandwidth_mb_s: f64,
    /// The PCIe link's payload ceiling in each direction after TLP overhead (`up`: device to
    /// host, read data; `down`: host to device, write data), MB/s; null when bare.
    pub link_up_payload_mb_s: Option<f64>,
    pub link_down_payload_mb_s: Option<f64>,
    /// The NVMe controller's command ceiling, one command per `controller_ns`; null when bare.
    pub controller_iops: Option<f64>,
    /// min(backbone, link up): the read ceiling of the whole path.
    pub read_bandwidth_mb_s: f64,
    /// Single-page reads: every die busy for tR + one page's transfer (IOPS), the backbone's.
    pub page_read_iops: f64,
    /// Multi-plane programs: every die busy for transfer + tPROG (MB/s of page data).
    pub program_bandwidth_mb_s: f64,
    /// min(program, link down): the write ceiling of the whole path.
    pub write_bandwidth_mb_s: f64,
}

impl AnalyticLimits {
    /// The limits of `dev` behind the front end `nvme` (none when bare).
    pub fn of(dev: &Device, nvme: Option<&NvmeConfig>) -> Self {
        let bb = dev.backbone();
        let geo = bb.geometry();
        let planes = geo.planes_per_die;
        let page = f64::from(geo.page_size_bytes);
        let dies = f64::from(geo.die_count());
        let channels = f64::from(geo.channels);
        let xfer_all_us = bb.transfer_time(planes).as_us_f64();
        let xfer_one_us = bb.transfer_time(1).as_us_f64();
        let t_r = bb.read_latency(0).as_us_f64();
        let t_prog = bb.program_latency(0).as_us_f64();
        let per_op_bytes = page * f64::from(planes);
        let bus = channels * per_op_bytes / xfer_all_us;
        let die = dies * per_op_bytes / (t_r + xfer_all_us);
        let backbone = bus.min(die);
        let program = (dies * per_op_bytes / (xfer_all_us + t_prog)).min(bus);
        // Both directions of a PCIe link run at the same rate.
        let link = nvme.map(|n| n.link.payload_mb_s());
        let limits = AnalyticLimits {
            bus_read_bandwidth_mb_s: bus,
            die_read_bandwidth_mb_s: die,
            backbone_read_bandwidth_mb_s: backbone,
            link_up_payload_mb_s: link,
            link_down_payload_mb_s: link,
            controller_iops: nvme.map(|n| 1e9 / n.controller_ns.max(1) as f64),
            read_bandwidth_mb_s: link.map_or(backbone, |l| backbone.min(l)),
            page_read_iops: (dies / ((t_r + xfer_one_us) * 1e-6))
                .min(channels / (xfer_one_us * 1e-6)),
            program_bandwidth_mb_s: program,
            write_bandwidth_mb_s: link.map_or(program, |l| program.min(l)),
        };
        assert!(limits.read_bandwidth_mb_s <= limits.backbone_read_bandwidth_mb_s);
        assert!(limits.write_bandwidth_mb_s <= limits.program_bandwidth_mb_s);
        limits
    }
}
