//! Flexible Data Placement (`[fdp]`) over the measured phase: bytes and write amplification
//! per reclaim unit handle.

use super::Measured;
use serde::Serialize;

/// What Flexible Data Placement's statistics counted in the measured phase (the FDP
/// Statistics log's counters, and each handle's).
#[derive(Clone, Debug, Serialize)]
pub struct FdpReport {
    pub host_bytes_written: u64,
    /// Host and GC programs with their filler, and mapping checkpoints.
    pub media_bytes_written: u64,
    pub media_bytes_erased: u64,
    /// Media bytes per host byte (null if the host wrote nothing).
    pub waf: Option<f64>,
    /// How the host placed its writes (null: no directives, every write on handle 0).
    pub placement: Option<String>,
    /// Per handle; the handles the host used are those with host bytes.
    pub handles: Vec<FdpHandleReport>,
    /// FDP events logged over the whole run (host events, controller events).
    pub host_events: usize,
    pub controller_events: usize,
}

#[derive(Clone, Debug, Serialize)]
pub struct FdpHandleReport {
    pub host_bytes_written: u64,
    /// Its units programmed by the host or GC, and the filler of its own superblocks.
    pub media_bytes_written: u64,
    pub gc_bytes_copied: u64,
    pub waf: Option<f64>,
}

impl FdpReport {
    pub(super) fn of(m: &Measured) -> Option<Self> {
        let (s, e) = (m.start.ftl.fdp.as_ref()?, m.end.ftl.fdp.as_ref()?);
        let waf = |host: u64, media: u64| (host > 0).then(|| media as f64 / host as f64);
        let handles = s
            .handles
            .iter()
            .zip(&e.handles)
            .map(|(a, b)| {
                let host = b.host_bytes_written - a.host_bytes_written;
                let media = b.media_bytes_written - a.media_bytes_written;
                FdpHandleReport {
                    host_bytes_written: host,
                    media_bytes_written: media,
                    gc_bytes_copied: b.gc_bytes_copied - a.gc_bytes_copied,
                    waf: waf(host, media),
                }
            })
            .collect();
        let host = e.host_bytes_written - s.host_bytes_written;
        let media = e.media_bytes_written - s.media_bytes_written;
        Some(FdpReport {
            host_bytes_written: host,
            media_bytes_written: media,
            media_bytes_erased: e.media_bytes_erased - s.media_bytes_erased,
            waf: waf(host, media),
            placement: m.placement.clone(),
            handles,
            host_events: m.device.fdp_events(false).map_or(0, |v| v.len()),
            controller_events: m.device.fdp_events(true).map_or(0, |v| v.len()),
        })
    }

    pub(super) fn rows(&self) -> Vec<(String, String)> {
        let mb = |b: u64| format!("{:.1}", b as f64 / 1e6);
        let waf = |w: Option<f64>| w.map_or("-".into(), |w| format!("{w:.2}"));
        let mut rows = vec![(
            "FDP: host / media MB written (WAF)".into(),
            format!(
                "{} / {} ({})",
                mb(self.host_bytes_written),
                mb(self.media_bytes_written),
                waf(self.waf)
            ),
        )];
        rows.push((
            "FDP placement by the host".into(),
            self.placement
                .clone()
                .unwrap_or_else(|| "none (every write on handle 0)".into()),
        ));
        for (i, h) in self.handles.iter().enumerate() {
            if h.media_bytes_written == 0 {
                continue;
            }
            rows.push((
                format!("FDP handle {i}: host / media / GC-copied MB (WAF)"),
                format!(
                    "{} / {} / {} ({})",
                    mb(h.host_bytes_written),
                    mb(h.media_bytes_written),
                    mb(h.gc_bytes_copied),
                    waf(h.waf)
                ),
            ));
        }
        rows.push((
            "FDP events logged: host / controller".into(),
            format!("{} / {}", self.host_events, self.controller_events),
        ));
        rows
    }
}
