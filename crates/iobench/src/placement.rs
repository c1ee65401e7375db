//! Flexible Data Placement from the benchmark's side (`nearflash io --placement-handles N`):
//! the host tags its writes with placement handles by a rule, and each write carries the
//! Data Placement directive of its handle to the drive (through the NVMe SQE and the DRAM
//! write buffer, or straight to the FTL when bare).
//!
//! The rule, **address regions**: the run's span (the synthetic workload's, or the trace's)
//! is split into `handles` contiguous regions of equal size (the last takes the remainder's
//! sectors), and a write whose first byte lies in region *i* carries placement handle *i*.
//! Data at nearby addresses is placed together, as a host that gives each file, table or
//! volume region its own handle does; for a trace it stands in for a stream id the formats
//! do not record (see docs/fdp.md). A write is tagged by its start: one that straddles a
//! region boundary goes whole to the first region's handle.
//!
//! The rule **streams** (`--placement-by stream`, traces replayed at their arrival times):
//! a write carries entry `stream mod N` of the list below, its trace's stream being the
//! issuing process where the format records one (FIU's and blkparse's PID), else its device
//! column (MSR's disk, SYSTOR's LUN, Alibaba's device, Tencent's volume, SPC's ASU, MQSim's
//! devno; `nearflash_iotrace::TraceRequest::stream`), and 0 for a fio iolog. Writes of one
//! application stream then share a handle whatever their addresses, which is what FDP asks of
//! a host; a trace filtered to one device (`--trace-device`) has one device stream, so with
//! a device-column format every write takes entry 0.
//!
//! With several reclaim groups (`fdp.reclaim_groups` = NRG) region *i* takes entry *i* of the
//! drive's Reclaim Unit Handle Status list (`FdpConfig::status_pids`): placement handle *i* /
//! NRG in group *i* mod NRG, so consecutive regions alternate between the groups and each group
//! holds its share of the span (a group holds only its share of the media). With one group
//! entry *i* is placement handle *i*.

use crate::error::IoBenchError;
use nearflash_blockdev::{PlacementDirective, SECTOR_BYTES};
use nearflash_preset::Preset;
use serde::Serialize;

/// Which rule picks a write's placement handle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PlacementRule {
    /// By the address region a write starts in (every workload).
    #[default]
    Regions,
    /// By the trace's stream id modulo the handles used (traces at their arrival times).
    Streams,
}

impl PlacementRule {
    pub fn from_name(name: &str) -> Option<PlacementRule> {
        match name {
            "region" | "regions" => Some(PlacementRule::Regions),
            "stream" | "streams" => Some(PlacementRule::Streams),
            _ => None,
        }
    }

    fn is_regions(&self) -> bool {
        *self == PlacementRule::Regions
    }
}

/// The address-regions rule over a span, or the streams rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct PlacementSpread {
    /// Placement handles used: 0 .. handles.
    pub handles: u16,
    /// The span the regions divide, from byte 0.
    pub span_bytes: u64,
    /// Bytes of each region (a whole number of sectors; the last region may be longer).
    pub region_bytes: u64,
    /// The rule (omitted from the report when it is the default, regions).
    #[serde(skip_serializing_if = "PlacementRule::is_regions")]
    pub rule: PlacementRule,
    /// The drive's status list (`FdpConfig::status_pids`): region `i`'s Placement Identifier.
    #[serde(skip)]
    pids: [u16; PIDS_MAX],
}

/// Entries a status list may have: `fdp.handles` × `fdp.reclaim_groups` stays within the 128
/// placement identifiers QEMU's `NVME_FDP_MAXPIDS` allows; longer lists are cut (the regions
/// use at most `--placement-handles` entries).
const PIDS_MAX: usize = 128;

impl PlacementSpread {
    /// The rule for `handles` handles over `span_bytes`, checked against the preset: FDP must
    /// be on and have that many handles.
    pub fn new(preset: &Preset, handles: u32, span_bytes: u64) -> Result<Self, IoBenchError> {
        let fdp = &preset.ftl.fdp;
        if !fdp.enabled {
            return Err(IoBenchError::Placement(format!(
                "--placement-handles needs Flexible Data Placement: preset {} has \
                 fdp.enabled=false (--set fdp.enabled=true)",
                preset.name
            )));
        }
        let entries = (fdp.handles * fdp.reclaim_groups).min(PIDS_MAX as u32);
        if handles == 0 || handles > entries {
            return Err(IoBenchError::Placement(format!(
                "--placement-handles {handles}: preset {} has fdp.handles={} × \
                 fdp.reclaim_groups={} placement identifiers (give 1 to {entries})",
                preset.name, fdp.handles, fdp.reclaim_groups
            )));
        }
        let sectors = span_bytes / SECTOR_BYTES;
        if sectors < u64::from(handles) {
            return Err(IoBenchError::Placement(format!(
                "--placement-handles {handles}: the span of {span_bytes} bytes has fewer \
                 sectors than handles"
            )));
        }
        let handles = u16::try_from(handles).expect("at most 128 entries");
        let mut pids = [0u16; PIDS_MAX];
        for (slot, pid) in pids.iter_mut().zip(fdp.status_pids()) {
            *slot = pid;
        }
        Ok(PlacementSpread {
            handles,
            span_bytes,
            region_bytes: sectors / u64::from(handles) * SECTOR_BYTES,
            rule: PlacementRule::Regions,
            pids,
        })
    }

    /// The same handles by rule `rule`.
    pub fn with_rule(self, rule: PlacementRule) -> Self {
        PlacementSpread { rule, ..self }
    }

    /// The rule in words, for the report.
    pub fn describe(&self) -> String {
        if self.rule == PlacementRule::Streams {
            return format!(
                "handles 0-{} by the trace's stream id modulo {}",
                self.handles - 1,
                self.handles
            );
        }
        format!(
            "handles 0-{} by address regions of {} bytes",
            self.handles - 1,
            self.region_bytes
        )
    }

    /// The directive of a write starting at `offset_bytes` from trace stream `stream` (0
    /// for synthetic workloads).
    pub fn directive(&self, offset_bytes: u64, stream: u64) -> PlacementDirective {
        let entry = match self.rule {
            PlacementRule::Regions => {
                (offset_bytes / self.region_bytes).min(u64::from(self.handles) - 1)
            }
            PlacementRule::Streams => stream % u64::from(self.handles),
        };
        PlacementDirective(self.pids[entry as usize])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fdp_preset(handles: u32) -> Preset {
        Preset::load(
            "test-min",
            &[
                "ftl.mapping=\"page\"".into(),
                "fdp.enabled=true".into(),
                format!("fdp.handles={handles}"),
            ],
        )
        .unwrap()
    }

    #[test]
    fn address_regions_give_each_contiguous_quarter_its_own_handle() {
        let s = PlacementSpread::new(&fdp_preset(8), 4, 4 << 20).unwrap();
        assert_eq!(s.region_bytes, 1 << 20);
        let pid = |o: u64| s.directive(o, 0).0;
        assert_eq!(
            [pid(0), pid((1 << 20) - 512), pid(1 << 20), pid(3 << 20)],
            [0, 0, 1, 3]
        );
        // The remainder's sectors and anything past the span go to the last handle.
        let odd = PlacementSpread::new(&fdp_preset(8), 3, 10 * 512).unwrap();
        assert_eq!(odd.region_bytes, 3 * 512);
        assert_eq!(odd.directive(9 * 512, 0).0, 2);
    }

    #[test]
    fn spreading_is_refused_without_fdp_or_beyond_its_handles_naming_the_option() {
        let plain = Preset::load("test-min", &[]).unwrap();
        let e = PlacementSpread::new(&plain, 2, 1 << 20).unwrap_err();
        assert!(e.to_string().contains("fdp.enabled"), "{e}");
        let e = PlacementSpread::new(&fdp_preset(4), 5, 1 << 20).unwrap_err();
        assert!(e.to_string().contains("fdp.handles=4"), "{e}");
        let e = PlacementSpread::new(&fdp_preset(4), 0, 1 << 20).unwrap_err();
        assert!(e.to_string().contains("--placement-handles 0"), "{e}");
    }

    /// Two reclaim groups: the regions take the status list's (handle, group) pairs in
    /// order, so they alternate between the groups (PID bit 15 names group 1).
    #[test]
    fn with_two_reclaim_groups_regions_alternate_between_the_groups() {
        let preset = Preset::load(
            "test-min",
            &[
                "ftl.mapping=\"page\"".into(),
                "fdp.enabled=true".into(),
                "fdp.handles=2".into(),
                "fdp.reclaim_groups=2".into(),
            ],
        )
        .unwrap();
        let s = PlacementSpread::new(&preset, 4, 4 << 20).unwrap();
        let pids: Vec<u16> = (0..4).map(|i| s.directive(i << 20, 0).0).collect();
        assert_eq!(pids, [0x0000, 0x8000, 0x0001, 0x8001]);
        assert!(PlacementSpread::new(&preset, 5, 4 << 20).is_err());
    }

    /// The streams rule: stream ids modulo the handles used, whatever the address.
    #[test]
    fn the_streams_rule_takes_the_stream_id_modulo_the_handles() {
        let s = PlacementSpread::new(&fdp_preset(8), 3, 4 << 20)
            .unwrap()
            .with_rule(PlacementRule::Streams);
        let pids: Vec<u16> = [0, 1, 2, 3, 4890]
            .iter()
            .map(|&st| s.directive(3 << 20, st).0)
            .collect();
        assert_eq!(pids, [0, 1, 2, 0, 4890 % 3]);
        assert!(s.describe().contains("stream id modulo 3"));
    }
}
