//! What the host requests in flight are waiting for — for a watchdog's stall report, so a
//! run that stops making progress names the stuck requests and their state instead of
//! spinning or reporting a bare count.

use super::jobs::{ReqId, SpaceWaiter, WritePhase};
use super::Device;
use nearflash_blockdev::BlockOp;
use nearflash_sim::SimTime;
use std::fmt;

/// Where an in-flight host request is held up (its least advanced part, for a request that
/// spans several page groups).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum RequestPhase {
    /// A write or trim queued behind another one to the same page group.
    WaitingForLock,
    /// A write waiting for a free page group (foreground GC is running for it).
    WaitingForFreeSuperblock,
    /// A flush waiting for the writes submitted before it.
    WaitingForEarlierWrites,
    /// Flash operations (reads, programs) of the request are queued or executing.
    OnFlash,
    /// Every part is done; the completion is being assembled.
    Completing,
}

impl fmt::Display for RequestPhase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RequestPhase::WaitingForLock => "waiting-for-lock",
            RequestPhase::WaitingForFreeSuperblock => "waiting-for-free-superblock",
            RequestPhase::WaitingForEarlierWrites => "waiting-for-earlier-writes",
            RequestPhase::OnFlash => "on-flash",
            RequestPhase::Completing => "completing",
        })
    }
}

/// One host request in flight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InflightRequest {
    pub id: u64,
    pub op: BlockOp,
    pub offset_bytes: u64,
    pub len_bytes: u64,
    pub submitted: SimTime,
    pub phase: RequestPhase,
}

impl fmt::Display for InflightRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "#{} {:?} {}+{} (submitted at {:.6} s): {}",
            self.id,
            self.op,
            self.offset_bytes,
            self.len_bytes,
            self.submitted.as_secs_f64(),
            self.phase
        )
    }
}

impl Device {
    /// The host requests in flight, oldest first, with what each is waiting for.
    pub fn inflight_requests(&self) -> Vec<InflightRequest> {
        let mut out: Vec<(ReqId, InflightRequest)> = self
            .reqs
            .iter()
            .map(|(slot, r)| {
                let phase = if r.op == BlockOp::Flush {
                    RequestPhase::WaitingForEarlierWrites
                } else {
                    RequestPhase::Completing
                };
                (
                    slot,
                    InflightRequest {
                        id: r.id,
                        op: r.op,
                        offset_bytes: r.offset_bytes,
                        len_bytes: r.len_bytes,
                        submitted: r.submitted,
                        phase,
                    },
                )
            })
            .collect();
        let mut parts: Vec<(ReqId, RequestPhase)> = Vec::new();
        // Each request's least advanced part decides its phase (below), so the order the
        // jobs are visited in does not matter.
        let jobs = &self.jobs;
        parts.extend(
            jobs.reads
                .iter()
                .map(|(_, r)| (r.seg.req, RequestPhase::OnFlash)),
        );
        for (id, w) in jobs.writes.iter() {
            let phase = match w.phase {
                WritePhase::WaitLock => RequestPhase::WaitingForLock,
                WritePhase::WaitAlloc if self.alloc_waiters.contains(SpaceWaiter::Group(id)) => {
                    RequestPhase::WaitingForFreeSuperblock
                }
                WritePhase::WaitAlloc | WritePhase::ReadOld | WritePhase::Program => {
                    RequestPhase::OnFlash
                }
            };
            parts.push((w.seg.req, phase));
        }
        parts.extend(
            jobs.trims
                .iter()
                .map(|(_, t)| (t.seg.req, RequestPhase::WaitingForLock)),
        );
        parts.extend(
            jobs.unit_reads
                .iter()
                .map(|(_, r)| (r.reads[0].0.req, RequestPhase::OnFlash)),
        );
        parts.extend(jobs.unit_writes.iter().map(|(_, w)| {
            let phase = if w.old.is_some() {
                RequestPhase::OnFlash
            } else {
                RequestPhase::WaitingForLock
            };
            (w.seg.req, phase)
        }));
        for (id, f) in jobs.fills.iter() {
            let phase = if self.alloc_waiters.contains(SpaceWaiter::Fill(id)) {
                RequestPhase::WaitingForFreeSuperblock
            } else {
                RequestPhase::OnFlash
            };
            parts.extend(f.units.iter().filter_map(|u| u.req).map(|r| (r, phase)));
        }
        // GC copies, erases, checkpoint programs and translation reads belong to no request.
        for (slot, phase) in parts {
            if let Some((_, r)) = out.iter_mut().find(|(s, _)| *s == slot) {
                // The least advanced part decides (the enum is ordered that way).
                r.phase = r.phase.min(phase);
            }
        }
        let mut reqs: Vec<InflightRequest> = out.into_iter().map(|(_, r)| r).collect();
        reqs.sort_by_key(|r| (r.submitted, r.id));
        reqs
    }

    /// A one-line description of the first `max` requests in flight (a stall report).
    pub fn describe_inflight(&self, max: usize) -> String {
        let reqs = self.inflight_requests();
        let mut s: Vec<String> = reqs.iter().take(max).map(|r| r.to_string()).collect();
        if reqs.len() > max {
            s.push(format!("... and {} more", reqs.len() - max));
        }
        if s.is_empty() {
            s.push("no host request in flight".into());
        }
        format!("{}; firmware: {}", s.join("; "), self.describe_firmware())
    }

    /// The firmware state a stall usually hinges on: free superblocks and their states, GC,
    /// checkpoint, waiting writes.
    pub fn describe_firmware(&self) -> String {
        let mut by_state = std::collections::BTreeMap::new();
        for s in 0..self.layout.superblocks() {
            *by_state
                .entry(format!("{:?}", self.sbs.get(crate::layout::SbId(s)).state))
                .or_insert(0u32) += 1;
        }
        format!(
            "superblocks {by_state:?}, {} retiring; GC {}; checkpoint {}; {} writes and {} GC \
             copies waiting for space; {} flash ops in flight",
            self.sbs.retiring().count(),
            match &self.gc {
                Some(run) => format!("collecting {:?}", run.victim()),
                None => "idle".into(),
            },
            if self.ckpt.active.is_some() {
                "being written"
            } else {
                "idle"
            },
            self.alloc_waiters.len(),
            self.gc_alloc_waiters.len(),
            self.bb.in_flight()
        )
    }
}
