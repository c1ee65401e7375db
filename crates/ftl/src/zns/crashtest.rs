//! Power-cut crash testing of the zoned drive. For one seed: format a zoned drive over a
//! `MemoryStore`, drive a random zoned workload (writes at the write pointer, Zone Appends,
//! reads, and Open, Close, Finish and Reset of a handful of zones) with self-describing
//! sectors, cut power at an event chosen from the seed, recover, and check:
//!
//! - every acknowledged write below a write pointer reads back (else *lost*);
//! - every recovered write pointer is at or past the end of the acknowledged data of its zone
//!   (else a *write-pointer regression*);
//! - no read ever returns another sector's data or garbage (*wrong*).
//!
//! Then the recovered drive runs more of the workload, optionally with a second cut. Cuts
//! are aimed: even seeds cut while a program is executing, odd seeds while an erase (a
//! Reset) is. A zone whose Reset was in flight at the cut may come back with its old data or
//! empty; it is not checked, and the workload resets it again. One `SimRng` from the seed
//! drives everything; a firmware panic is caught and reported as the seed's error.

use super::config::ZnsConfig;
use super::device::{ZnsEvent, ZoneCommand, ZoneCompletion, ZoneReply, ZoneRequest, ZonedDevice};
use super::recovery::{recover, ZnsRecoveryError, ZnsRecoveryReport};
use super::zone::{ZoneAction, ZoneState};
use crate::config::FtlConfig;
use crate::crashtest::CrashTestConfig;
use nearflash_blockdev::{
    BlockCompletion, BlockDevice, BlockOp, BlockRequest, IoError, SECTOR_BYTES,
};
use nearflash_flash::backbone::PowerCutReport;
use nearflash_flash::{ConfigError, FlashConfig, Geometry, MemoryStore};
use nearflash_sim::{
    EventQueue, Model, Progress, Sim, SimDuration, SimRng, SimTime, Stall, Watchdog,
};
use serde::Serialize;
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use thiserror::Error;

/// Zones the workload uses: few enough that they fill, finish and reset within a seed.
const ZONES_USED_MAX: u32 = 6;
/// Events after the aimed point within which a cut must find its kind of work.
const AIM_EVENTS_MAX: u64 = 20_000;
/// No completion for this long is a stall.
const STALL_MS: f64 = 1000.0;

#[derive(Debug, Error)]
enum ZnsCrashError {
    #[error("configuration: {0}")]
    Config(#[from] ConfigError),
    #[error("recovery failed: {0}")]
    Recovery(#[from] ZnsRecoveryError),
    #[error("stalled: {0}")]
    Stalled(Stall),
}

/// What the dies were doing when power was cut.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ZnsCutPhase {
    Program,
    Erase,
    #[default]
    Idle,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ZnsCrashOutcome {
    pub seed: u64,
    pub cut_phase: ZnsCutPhase,
    pub second_cut_phase: Option<ZnsCutPhase>,
    pub power_cut: PowerCutReport,
    /// Acknowledged sectors checked after the cuts.
    pub acked_sectors_checked: u64,
    pub lost_acked_sectors: u64,
    /// Zones whose recovered write pointer fell below their acknowledged data.
    pub wp_regressions: u64,
    pub wrong_data_reads: u64,
    /// Commands that failed unexpectedly.
    pub io_errors: u64,
    /// Writes the zone's media refused after padding used up its rows (expected).
    pub capacity_refusals: u64,
    pub ops_completed: u64,
    pub recovery: ZnsRecoveryReport,
    pub first_violation: Option<String>,
    pub error: Option<String>,
}

impl ZnsCrashOutcome {
    pub fn passed(&self) -> bool {
        self.lost_acked_sectors == 0
            && self.wp_regressions == 0
            && self.wrong_data_reads == 0
            && self.io_errors == 0
            && self.error.is_none()
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ZnsCrashSummary {
    pub seeds: u64,
    pub passed: u64,
    pub failed: u64,
    pub failed_seeds: Vec<u64>,
    pub cuts_by_phase: BTreeMap<ZnsCutPhase, u64>,
    pub acked_sectors_checked: u64,
    pub lost_acked_sectors: u64,
    pub wp_regressions: u64,
    pub wrong_data_reads: u64,
    pub io_errors: u64,
    pub errors: u64,
}

pub fn summarize(outcomes: &[ZnsCrashOutcome]) -> ZnsCrashSummary {
    let mut s = ZnsCrashSummary::default();
    for o in outcomes {
        s.seeds += 1;
        if o.passed() {
            s.passed += 1;
        } else {
            s.failed += 1;
            s.failed_seeds.push(o.seed);
        }
        *s.cuts_by_phase.entry(o.cut_phase).or_default() += 1;
        if let Some(p) = o.second_cut_phase {
            *s.cuts_by_phase.entry(p).or_default() += 1;
        }
        s.acked_sectors_checked += o.acked_sectors_checked;
        s.lost_acked_sectors += o.lost_acked_sectors;
        s.wp_regressions += o.wp_regressions;
        s.wrong_data_reads += o.wrong_data_reads;
        s.io_errors += o.io_errors;
        s.errors += u64::from(o.error.is_some());
    }
    s
}

/// Runs one seed; never panics.
pub fn run_seed(
    flash: &FlashConfig,
    ftl: &FtlConfig,
    zns: &ZnsConfig,
    cfg: &CrashTestConfig,
    seed: u64,
) -> ZnsCrashOutcome {
    let mut out = ZnsCrashOutcome {
        seed,
        ..ZnsCrashOutcome::default()
    };
    let r = catch_unwind(AssertUnwindSafe(|| {
        run_inner(flash, ftl, zns, cfg, seed, &mut out)
    }));
    match r {
        Ok(Ok(())) => {}
        Ok(Err(e)) => out.error = Some(e.to_string()),
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "panic".into());
            out.error = Some(format!("firmware panic: {msg}"));
        }
    }
    out
}

/// The content of `sector` written by write `version`: both in the first 16 bytes, a
/// pattern of them after.
fn pattern(sector: u64, version: u64) -> [u8; SECTOR_BYTES as usize] {
    let mut b = [0u8; SECTOR_BYTES as usize];
    b[..8].copy_from_slice(&sector.to_le_bytes());
    b[8..16].copy_from_slice(&version.to_le_bytes());
    let fill = (sector ^ version.rotate_left(17)) as u8 | 1;
    b[16..].fill(fill);
    b
}

#[derive(Clone, Debug)]
enum Pending {
    Write {
        zone: u32,
        sector: u64,
        len: u64,
        version: u64,
    },
    Append {
        zone: u32,
        len: u64,
        version: u64,
    },
    Read {
        sector: u64,
    },
    Send {
        zone: u32,
        action: ZoneAction,
    },
}

#[derive(Clone, Debug, Default)]
struct HostZone {
    /// Where the next write or append lands (sectors reserved by commands in flight).
    wp: u64,
    /// Writes to it were refused (media used up) or its state is unknown: no more writes
    /// until a Reset completes.
    poisoned: bool,
    full: bool,
    /// Appends in flight, whose sectors the host learns at completion.
    appends_in_flight: u32,
    /// Plain writes in flight. The host keeps the zone's write pointer only while at most
    /// one kind of write is in flight (a write refused by the device would leave an append
    /// behind it at a lower sector than the host reserved), and sends zone management
    /// commands only to a zone with no write of either kind in flight: NVMe does not order
    /// commands, so a write in flight across a Reset may land after it, where the host no
    /// longer expects it. Hosts of zoned drives serialise the same way (Linux zonefs and
    /// f2fs hold the zone's lock across a reset or finish).
    writes_in_flight: u32,
    /// Commands of any kind in flight to the zone (a read in flight across a Reset may
    /// see the data or the erased zone).
    in_flight: u32,
    reset_in_flight: bool,
}

/// The host side: the reference of acknowledged data and the commands in flight.
struct Host {
    zones: Vec<HostZone>,
    zone_sectors: u64,
    /// Acknowledged version of each sector.
    acked: BTreeMap<u64, u64>,
    /// Versions submitted per sector (acknowledged or not): what a read may return.
    issued: BTreeMap<u64, u64>,
    pending: BTreeMap<u64, Pending>,
    next_id: u64,
    next_version: u64,
    max_request_sectors: u64,
}

impl Host {
    fn zone_start(&self, z: u32) -> u64 {
        u64::from(z) * self.zone_sectors
    }

    /// Submits one random command.
    fn submit_one(
        &mut self,
        dev: &mut ZonedDevice,
        q: &mut EventQueue<ZnsEvent>,
        rng: &mut SimRng,
    ) {
        let id = self.next_id;
        self.next_id += 1;
        let z = rng.below(self.zones.len() as u64) as u32;
        let roll = rng.below(100);
        let hz = &self.zones[z as usize];
        let writable = !hz.poisoned && !hz.full && !hz.reset_in_flight;
        let room = self.zone_sectors - hz.wp;
        let len = 1 + rng.below(self.max_request_sectors);
        let len = len.min(room);
        let quiet = hz.in_flight == 0;
        self.zones[z as usize].in_flight += 1;
        let hz = &self.zones[z as usize];
        let cmd = if roll < 45 && writable && room > 0 && hz.appends_in_flight == 0 {
            let sector = self.zone_start(z) + hz.wp;
            let version = self.issue(sector, len);
            self.zones[z as usize].wp += len;
            self.zones[z as usize].writes_in_flight += 1;
            self.pending.insert(
                id,
                Pending::Write {
                    zone: z,
                    sector,
                    len,
                    version,
                },
            );
            let data = (0..len)
                .flat_map(|i| pattern(sector + i, version))
                .collect();
            dev.submit(
                BlockRequest {
                    id,
                    op: BlockOp::Write,
                    offset_bytes: sector * SECTOR_BYTES,
                    len_bytes: len * SECTOR_BYTES,
                    data,
                },
                q,
            );
            return;
        } else if roll < 70 && writable && room > 0 && hz.writes_in_flight == 0 {
            let len = len.min(dev.config().zone_append_size_limit_bytes / SECTOR_BYTES);
            // The drive assigns appends in order: this one lands at the host's write pointer.
            let sector = self.zone_start(z) + self.zones[z as usize].wp;
            let version = self.issue(sector, len);
            let hz = &mut self.zones[z as usize];
            hz.wp += len;
            hz.appends_in_flight += 1;
            self.pending.insert(
                id,
                Pending::Append {
                    zone: z,
                    len,
                    version,
                },
            );
            let data = (0..len)
                .flat_map(|i| pattern(sector + i, version))
                .collect();
            ZoneCommand::Append {
                zone_start_sector: self.zone_start(z),
                len_bytes: len * SECTOR_BYTES,
                data,
            }
        } else if (roll < 90 || !quiet) && !hz.reset_in_flight {
            let len = (1 + rng.below(self.max_request_sectors)).min(self.zone_sectors);
            let start = rng.below(self.zone_sectors - len + 1);
            let sector = self.zone_start(z) + start;
            self.pending.insert(id, Pending::Read { sector });
            dev.submit(
                BlockRequest {
                    id,
                    op: BlockOp::Read,
                    offset_bytes: sector * SECTOR_BYTES,
                    len_bytes: len * SECTOR_BYTES,
                    data: Vec::new(),
                },
                q,
            );
            return;
        } else if !quiet {
            // A Reset is in flight to this zone: nothing to send it until it ends.
            self.zones[z as usize].in_flight -= 1;
            return;
        } else {
            let action = match roll {
                90..=93 => ZoneAction::Reset,
                94..=95 => ZoneAction::Finish,
                96..=97 => ZoneAction::Close,
                _ => ZoneAction::Open,
            };
            let hz = &mut self.zones[z as usize];
            match action {
                ZoneAction::Reset => hz.reset_in_flight = true,
                ZoneAction::Finish => hz.full = true,
                _ => {}
            }
            self.pending.insert(id, Pending::Send { zone: z, action });
            ZoneCommand::Send {
                zone_start_sector: self.zone_start(z),
                action,
            }
        };
        dev.submit_zone(ZoneRequest { id, cmd }, q);
    }

    fn issue(&mut self, sector: u64, len: u64) -> u64 {
        let v = self.next_version;
        self.next_version += 1;
        for s in sector..sector + len {
            self.issued.insert(s, v);
        }
        v
    }

    /// Checks a read's data against the reference.
    fn check_read(&self, sector: u64, data: &[u8], out: &mut ZnsCrashOutcome, strict: bool) {
        for (i, got) in data.chunks(SECTOR_BYTES as usize).enumerate() {
            let s = sector + i as u64;
            let zeros = got.iter().all(|&b| b == 0);
            let acked = self.acked.get(&s).copied();
            if strict && acked.is_some() {
                out.acked_sectors_checked += 1;
            }
            let ok = match acked {
                Some(v) => got == pattern(s, v) || (!strict && self.matches_issued(s, got)),
                None => zeros || self.matches_issued(s, got),
            };
            if !ok {
                let lost = strict && acked.is_some() && (zeros || self.matches_issued(s, got));
                if lost {
                    out.lost_acked_sectors += 1;
                } else {
                    out.wrong_data_reads += 1;
                }
                out.first_violation.get_or_insert_with(|| {
                    format!(
                        "sector {s}: acked version {acked:?}, read {}",
                        if zeros {
                            "zeros".to_string()
                        } else {
                            format!("{:02x?}", &got[..16])
                        }
                    )
                });
            }
        }
    }

    /// A sector image some write to `s` produced.
    fn matches_issued(&self, s: u64, got: &[u8]) -> bool {
        let v = u64::from_le_bytes(got[8..16].try_into().expect("8 bytes"));
        self.issued.get(&s).is_some_and(|&max| v <= max) && got == pattern(s, v)
    }

    fn on_block(&mut self, c: BlockCompletion, out: &mut ZnsCrashOutcome) {
        out.ops_completed += 1;
        match self.pending.remove(&c.id).expect("pending") {
            Pending::Write {
                zone,
                sector,
                len,
                version,
            } => {
                let hz = &mut self.zones[zone as usize];
                hz.writes_in_flight -= 1;
                hz.in_flight -= 1;
                match c.result {
                    Ok(()) => self.ack(sector, len, version),
                    Err(e) => self.refused(zone, &e, out),
                }
            }
            Pending::Read { sector } => {
                self.zones[(sector / self.zone_sectors) as usize].in_flight -= 1;
                self.check_completed_read(sector, c, out);
            }
            other => unreachable!("{other:?} is not a block command"),
        }
    }

    fn check_completed_read(&self, sector: u64, c: BlockCompletion, out: &mut ZnsCrashOutcome) {
        match c.result {
            Ok(()) => self.check_read(sector, &c.data, out, false),
            Err(e) => {
                out.io_errors += 1;
                out.first_violation
                    .get_or_insert(format!("read failed: {e}"));
            }
        }
    }

    fn on_zone(&mut self, c: ZoneCompletion, out: &mut ZnsCrashOutcome) {
        out.ops_completed += 1;
        match self.pending.remove(&c.id).expect("pending") {
            Pending::Append { zone, len, version } => {
                let hz = &mut self.zones[zone as usize];
                hz.appends_in_flight -= 1;
                hz.in_flight -= 1;
                match c.result {
                    Ok(ZoneReply::Appended { sector }) => self.ack(sector, len, version),
                    Ok(r) => unreachable!("append answered {r:?}"),
                    Err(e) => self.refused(zone, &e, out),
                }
            }
            Pending::Send { zone, action } => {
                self.zones[zone as usize].in_flight -= 1;
                if action == ZoneAction::Reset {
                    let hz = &mut self.zones[zone as usize];
                    hz.reset_in_flight = false;
                    if c.result.is_ok() {
                        *hz = HostZone::default();
                        let start = self.zone_start(zone);
                        let range = start..start + self.zone_sectors;
                        self.acked.retain(|s, _| !range.contains(s));
                    }
                }
                if let Err(e) = c.result {
                    // Open can meet the resource limits; anything else is unexpected.
                    let limit = matches!(
                        e,
                        IoError::Zone(
                            nearflash_blockdev::ZoneStatus::TooManyOpenZones { .. }
                                | nearflash_blockdev::ZoneStatus::TooManyActiveZones { .. }
                                | nearflash_blockdev::ZoneStatus::InvalidStateTransition { .. }
                        )
                    );
                    if !limit {
                        out.io_errors += 1;
                        out.first_violation
                            .get_or_insert(format!("zone {zone} {action:?} failed: {e}"));
                    }
                }
            }
            other => unreachable!("{other:?} is not a zone command"),
        }
    }

    fn ack(&mut self, sector: u64, len: u64, version: u64) {
        for s in sector..sector + len {
            self.acked.insert(s, version);
        }
    }

    /// A write or append refused: expected when the zone's media ran out (padding) or a
    /// resource limit was met; the zone's write pointer is then unknown to the host.
    fn refused(&mut self, zone: u32, e: &IoError, out: &mut ZnsCrashOutcome) {
        use nearflash_blockdev::ZoneStatus as S;
        self.zones[zone as usize].poisoned = true;
        match e {
            IoError::Zone(
                S::BoundaryError { .. }
                | S::ZoneIsFull { .. }
                | S::InvalidWrite { .. }
                | S::TooManyOpenZones { .. }
                | S::TooManyActiveZones { .. },
            ) => out.capacity_refusals += 1,
            _ => {
                out.io_errors += 1;
                out.first_violation
                    .get_or_insert(format!("write to zone {zone} failed: {e}"));
            }
        }
    }
}

struct Rig {
    sim: Sim<ZnsEvent>,
    dev: ZonedDevice,
}

fn phase_now(dev: &ZonedDevice) -> ZnsCutPhase {
    match dev.executing() {
        (_, true) => ZnsCutPhase::Erase,
        (true, false) => ZnsCutPhase::Program,
        _ => ZnsCutPhase::Idle,
    }
}

/// Runs `ops` commands at the queue depth; with `cut`, stops at the first event after
/// command `cut.0` at which the dies do `cut.1`'s kind of work (or `AIM_EVENTS_MAX` events
/// later) and returns where it stopped.
fn drive(
    rig: &mut Rig,
    host: &mut Host,
    ops: usize,
    qd: usize,
    cut: Option<(usize, ZnsCutPhase)>,
    out: &mut ZnsCrashOutcome,
) -> Result<Option<ZnsCutPhase>, ZnsCrashError> {
    let mut wd = Watchdog::starting_at(SimDuration::from_us_f64(STALL_MS * 1000.0), rig.sim.now());
    let mut w = Workload {
        dev: &mut rig.dev,
        host,
        out,
        ops,
        qd,
        cut,
        submitted: 0,
        aimed_events: 0,
        stopped_at: None,
    };
    let (q, rng) = rig.sim.parts();
    w.feed(q, rng);
    rig.sim
        .run_until(&mut w, &mut wd, Workload::progress, |w| {
            w.stopped_at.is_some() || w.finished()
        })
        .map_err(ZnsCrashError::Stalled)?;
    if w.stopped_at.is_none() {
        // Nothing is outstanding: the drive's own work runs out with no watchdog to watch it.
        rig.sim.run_until_by(SimTime(u64::MAX), &mut w, |_| false);
    }
    Ok(w.stopped_at)
}

/// The host's random commands on the drive as the simulation's machine: after every event
/// it collects the completions, tops the queue up to its depth and, past the cut's command,
/// looks at what the dies do.
struct Workload<'a> {
    dev: &'a mut ZonedDevice,
    host: &'a mut Host,
    out: &'a mut ZnsCrashOutcome,
    ops: usize,
    qd: usize,
    cut: Option<(usize, ZnsCutPhase)>,
    submitted: usize,
    /// Events seen since the cut's command was submitted.
    aimed_events: u64,
    /// Where power is cut: the phase the dies were in.
    stopped_at: Option<ZnsCutPhase>,
}

impl Workload<'_> {
    /// Submits up to the queue depth, then decides whether to cut here.
    fn feed(&mut self, q: &mut EventQueue<ZnsEvent>, rng: &mut SimRng) {
        while self.submitted < self.ops && self.host.pending.len() < self.qd {
            self.host.submit_one(self.dev, q, rng);
            self.submitted += 1;
            // A refusal completes at once: the host learns of it before its next command
            // (a write pointer it reserved past is then known to be wrong).
            collect(self.dev, self.host, self.out);
        }
        if let Some((at, phase)) = self.cut {
            if self.submitted > at {
                let now = phase_now(self.dev);
                self.aimed_events += 1;
                if now == phase
                    || self.aimed_events > AIM_EVENTS_MAX
                    || self.host.pending.is_empty()
                {
                    self.stopped_at = Some(now);
                }
            }
        }
    }

    /// Every command submitted and completed.
    fn finished(&self) -> bool {
        self.submitted >= self.ops && self.host.pending.is_empty()
    }
}

impl Model for Workload<'_> {
    type Event = ZnsEvent;

    fn handle(&mut self, ev: ZnsEvent, q: &mut EventQueue<ZnsEvent>, rng: &mut SimRng) {
        ZonedDevice::handle(self.dev, ev, q, rng);
        collect(self.dev, self.host, self.out);
        self.feed(q, rng);
    }

    fn progress(&self) -> Progress {
        Progress {
            completed: self.out.ops_completed,
            outstanding: self.dev.outstanding(),
        }
    }
}

/// Hands the drive's completions to the host.
fn collect(dev: &mut ZonedDevice, host: &mut Host, out: &mut ZnsCrashOutcome) {
    let (mut blocks, mut zones) = (Vec::new(), Vec::new());
    dev.take_completions(&mut blocks);
    dev.take_zone_completions(&mut zones);
    for c in blocks {
        host.on_block(c, out);
    }
    for c in zones {
        host.on_zone(c, out);
    }
}

/// Cuts power, recovers, and checks every zone against the reference.
fn cut_and_check(
    rig: Rig,
    host: &mut Host,
    ftl: &FtlConfig,
    zns: &ZnsConfig,
    out: &mut ZnsCrashOutcome,
) -> Result<Rig, ZnsCrashError> {
    let mut rng: SimRng = rig.sim.into_rng();
    let mut bb = rig.dev.into_backbone();
    let report = bb.power_cut(&mut rng);
    out.power_cut.torn_program_pages += report.torn_program_pages;
    out.power_cut.dropped_programs += report.dropped_programs;
    out.power_cut.torn_erase_blocks += report.torn_erase_blocks;
    out.power_cut.lost_reads += report.lost_reads;
    let (dev, rec) = recover(bb, ftl, zns)?;
    out.recovery = rec;
    let mut rig = Rig {
        sim: Sim::with_rng(rng),
        dev,
    };
    host.pending.clear();
    for z in 0..host.zones.len() as u32 {
        let start = host.zone_start(z);
        let range = start..start + host.zone_sectors;
        if host.zones[z as usize].reset_in_flight {
            // Old data or none: unknown until the workload resets it again.
            host.acked.retain(|s, _| !range.contains(s));
            host.zones[z as usize] = HostZone {
                poisoned: true,
                ..HostZone::default()
            };
            continue;
        }
        let acked_end = host
            .acked
            .range(range.clone())
            .next_back()
            .map_or(0, |(s, _)| s + 1 - start);
        let d = rig.dev.zones().descriptor(z);
        let wp = d.wp_sector - start;
        if wp < acked_end {
            out.wp_regressions += 1;
            out.first_violation.get_or_insert(format!(
                "zone {z}: write pointer recovered at {wp}, acknowledged data ends at {acked_end}"
            ));
        }
        if acked_end > 0 {
            let id = host.next_id;
            host.next_id += 1;
            rig.dev.submit(
                BlockRequest {
                    id,
                    op: BlockOp::Read,
                    offset_bytes: start * SECTOR_BYTES,
                    len_bytes: acked_end * SECTOR_BYTES,
                    data: Vec::new(),
                },
                rig.sim.queue(),
            );
            let mut wd =
                Watchdog::starting_at(SimDuration::from_us_f64(STALL_MS * 1000.0), rig.sim.now());
            rig.sim
                .run_until(
                    &mut rig.dev,
                    &mut wd,
                    |d| Progress {
                        completed: 0,
                        outstanding: d.outstanding(),
                    },
                    |d| d.requests_in_flight() == 0,
                )
                .map_err(ZnsCrashError::Stalled)?;
            let mut done = Vec::new();
            rig.dev.take_completions(&mut done);
            let c = done.pop().expect("the read completed");
            match c.result {
                Ok(()) => host.check_read(start, &c.data, out, true),
                Err(e) => {
                    out.io_errors += 1;
                    out.first_violation
                        .get_or_insert(format!("zone {z} read after the cut failed: {e}"));
                }
            }
        }
        host.zones[z as usize] = HostZone {
            wp,
            full: matches!(
                d.state,
                ZoneState::Full | ZoneState::ReadOnly | ZoneState::Offline
            ),
            ..HostZone::default()
        };
    }
    Ok(rig)
}

fn run_inner(
    flash: &FlashConfig,
    ftl: &FtlConfig,
    zns: &ZnsConfig,
    cfg: &CrashTestConfig,
    seed: u64,
    out: &mut ZnsCrashOutcome,
) -> Result<(), ZnsCrashError> {
    cfg.validate()?;
    let pages = Geometry::from_config(flash).page_count();
    let store = Box::new(MemoryStore::new(pages, flash.page_size_bytes));
    let dev = ZonedDevice::format(flash, ftl, zns, store)?;
    let zones = dev
        .zones()
        .count()
        .min(ZONES_USED_MAX)
        .min(dev.zones().active_max());
    let mut host = Host {
        zones: vec![HostZone::default(); zones as usize],
        zone_sectors: dev.zones().capacity_sectors(),
        acked: BTreeMap::new(),
        issued: BTreeMap::new(),
        pending: BTreeMap::new(),
        next_id: 1,
        next_version: 1,
        max_request_sectors: cfg.max_request_sectors,
    };
    let mut rig = Rig {
        sim: Sim::new(seed),
        dev,
    };
    let aim = if seed.is_multiple_of(2) {
        ZnsCutPhase::Program
    } else {
        ZnsCutPhase::Erase
    };
    let at = rig.sim.rng().below(cfg.ops_per_seed as u64) as usize;
    let phase = drive(
        &mut rig,
        &mut host,
        cfg.ops_per_seed,
        cfg.queue_depth,
        Some((at, aim)),
        out,
    )?;
    out.cut_phase = phase.unwrap_or_default();
    rig = cut_and_check(rig, &mut host, ftl, zns, out)?;
    if cfg.ops_after_recovery > 0 {
        let second = if cfg.second_cut {
            let at = rig.sim.rng().below(cfg.ops_after_recovery as u64) as usize;
            Some((at, aim))
        } else {
            None
        };
        let phase = drive(
            &mut rig,
            &mut host,
            cfg.ops_after_recovery,
            cfg.queue_depth,
            second,
            out,
        )?;
        if second.is_some() {
            out.second_cut_phase = Some(phase.unwrap_or_default());
            rig = cut_and_check(rig, &mut host, ftl, zns, out)?;
        }
        rig.dev.check_invariants();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{tiny_flash, tiny_ftl};

    /// 64 seeds of both aims in the normal test run (about half a second); `.ci/run` runs
    /// `nearflash crashtest --set zns.enabled=true --seeds 1000`.
    ///
    /// Story: with 8 seeds this passed while 30% of a thousand failed with another
    /// sector's data: the test's host sent a Reset while writes to the zone were in flight
    /// (NVMe does not order them, so a write could land after the reset, where the host no
    /// longer expected it) and sent Zone Appends behind a write the drive could refuse. The
    /// host now serialises as Linux's zoned file systems do (see `HostZone`).
    #[test]
    fn zoned_power_cuts_lose_no_acknowledged_write_and_no_write_pointer() {
        let cfg = CrashTestConfig {
            ops_per_seed: 300,
            ops_after_recovery: 150,
            ..CrashTestConfig::default()
        };
        let outcomes: Vec<_> = (0..64)
            .map(|s| run_seed(&tiny_flash(), &tiny_ftl(), &ZnsConfig::default(), &cfg, s))
            .collect();
        let sum = summarize(&outcomes);
        for o in &outcomes {
            assert!(o.passed(), "seed {}: {o:?}", o.seed);
        }
        assert!(sum.acked_sectors_checked > 0, "the cuts checked data");
        assert!(
            sum.cuts_by_phase.contains_key(&ZnsCutPhase::Erase),
            "{sum:?}"
        );
        assert!(
            sum.cuts_by_phase.contains_key(&ZnsCutPhase::Program),
            "{sum:?}"
        );
    }

    #[test]
    fn same_seed_same_outcome() {
        let cfg = CrashTestConfig {
            ops_per_seed: 200,
            ops_after_recovery: 50,
            ..CrashTestConfig::default()
        };
        let run = || run_seed(&tiny_flash(), &tiny_ftl(), &ZnsConfig::default(), &cfg, 3);
        assert_eq!(run(), run());
    }
}
