//! `nearflash io` on a zoned drive (`--set zns.enabled=true`): a zone-aware sequential
//! pattern over `nearflash_ftl::zns::ZonedDevice`. The host keeps `lanes` zones open at once
//! (the queue depth, at most the drive's max open zones): lane `i` writes zones `i`, `i +
//! lanes`, … in turn, one request in flight per lane, each at the zone's write pointer
//! (Write) or addressed to the zone's start (Zone Append, `--zone-append`). When a lane
//! reaches the last zone it wraps to its first, which it resets first (Zone Management Send
//! Reset: an erase of the zone's blocks). `seq-read` writes the requests first, then reads the
//! written data back in the same order. Random patterns cannot run on a zoned drive (a write
//! must land at a write pointer) and are refused.
//!
//! Faults tolerated: the drive's refusals (boundary, zone full, invalid write, too many
//! open/active zones) are counted apart and the lane moves to its next zone; a stall is an
//! error from the watchdog.

use crate::error::IoBenchError;
use crate::workload::Pattern;
use nearflash_blockdev::{BlockDevice, BlockOp, BlockRequest, IoError, ZoneStatus, SECTOR_BYTES};
use nearflash_flash::NoStore;
use nearflash_ftl::zns::{
    ZnsEvent, ZoneAction, ZoneCommand, ZoneCompletion, ZoneReply, ZoneRequest, ZonedDevice,
};
use nearflash_preset::Preset;
use nearflash_sim::{Progress, Sim, SimDuration, Watchdog};
use serde::Serialize;
use std::time::Instant;

/// No completion for this long of simulated time is a stall (as the crash test's).
const STALL_MS: u64 = 1000;

/// A zoned benchmark: the pattern, its size and how it writes.
#[derive(Clone, Debug, Serialize)]
pub struct ZonedSpec {
    pub pattern: Pattern,
    pub request_bytes: u64,
    pub requests: u64,
    /// Zones written at once (one request in flight each); capped at max open zones.
    pub queue_depth: u32,
    /// Zone Append instead of writes at the write pointer.
    pub zone_append: bool,
}

/// The figures of a zoned run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ZonedReport {
    pub preset: String,
    pub seed: u64,
    pub spec: Option<ZonedSpec>,
    pub zones: u32,
    pub zone_bytes: u64,
    pub open_zones_max: u32,
    pub lanes: u32,
    pub writes: u64,
    pub appends: u64,
    pub reads: u64,
    pub resets: u64,
    pub zone_full_errors: u64,
    pub boundary_errors: u64,
    pub other_errors: u64,
    pub host_bytes_written: u64,
    pub media_bytes_written: u64,
    /// Media bytes / host bytes: ~1.0 with no device GC (padding of partial rows adds to it).
    pub waf: f64,
    pub simulated_s: f64,
    pub write_mib_s: f64,
    pub wall_s: f64,
    /// Simulated host operations (writes, appends, reads, resets) per wall second.
    pub sim_ops_per_wall_s: f64,
    pub trace_hash: u64,
}

impl ZonedReport {
    pub fn table(&self) -> String {
        format!(
            "zoned drive: {} zones of {} KiB, {} lanes (max open {})\n\
             writes {}  appends {}  reads {}  resets {}\n\
             errors: zone full {}  boundary {}  other {}\n\
             host bytes {}  media bytes {}  WAF {:.3}\n\
             simulated {:.6} s  write {:.1} MiB/s  wall {:.3} s  {:.0} sim ops/wall s",
            self.zones,
            self.zone_bytes >> 10,
            self.lanes,
            self.open_zones_max,
            self.writes,
            self.appends,
            self.reads,
            self.resets,
            self.zone_full_errors,
            self.boundary_errors,
            self.other_errors,
            self.host_bytes_written,
            self.media_bytes_written,
            self.waf,
            self.simulated_s,
            self.write_mib_s,
            self.wall_s,
            self.sim_ops_per_wall_s
        )
    }
}

/// One open zone stream of the host.
#[derive(Clone, Copy, Debug)]
struct Lane {
    zone: u32,
    /// Host's write pointer, zone-relative sectors.
    wp: u64,
    busy: bool,
    /// The zone must be reset before it is written (it was written in an earlier round).
    needs_reset: bool,
    /// Read phase: sectors of this lane left to read back.
    read_cursor: u64,
}

struct Host {
    lanes: Vec<Lane>,
    zone_sectors: u64,
    zone_count: u32,
    written: Vec<bool>,
    next_id: u64,
    issued: u64,
    completed: u64,
    /// Request id → lane index.
    pending: std::collections::BTreeMap<u64, usize>,
    report: ZonedReport,
}

impl Host {
    fn advance_zone(&mut self, l: usize) {
        let n = self.lanes.len() as u32;
        let lane = &mut self.lanes[l];
        let next = lane.zone + n;
        lane.zone = if next < self.zone_count {
            next
        } else {
            l as u32
        };
        lane.wp = 0;
        lane.needs_reset = self.written[lane.zone as usize];
    }

    fn count_error(&mut self, e: &IoError) {
        match e {
            IoError::Zone(ZoneStatus::ZoneIsFull { .. }) => self.report.zone_full_errors += 1,
            IoError::Zone(ZoneStatus::BoundaryError { .. }) => self.report.boundary_errors += 1,
            _ => self.report.other_errors += 1,
        }
    }
}

/// Runs `spec` on a freshly formatted zoned drive of `preset` (timing fidelity).
pub fn run(preset: &Preset, spec: &ZonedSpec, seed: u64) -> Result<ZonedReport, IoBenchError> {
    if !matches!(spec.pattern, Pattern::SeqWrite | Pattern::SeqRead) {
        return Err(IoBenchError::Workload(format!(
            "pattern {:?} cannot run on a zoned drive (zns.enabled = true): writes must land at \
             a zone's write pointer; use seq-write or seq-read",
            spec.pattern
        )));
    }
    if spec.request_bytes == 0 || !spec.request_bytes.is_multiple_of(SECTOR_BYTES) {
        return Err(IoBenchError::Workload(format!(
            "--request-kib: {} bytes is not a positive multiple of {SECTOR_BYTES}",
            spec.request_bytes
        )));
    }
    let format_err = |source| IoBenchError::Format {
        preset: preset.name.clone(),
        source,
    };
    let mut dev = ZonedDevice::format(&preset.flash, &preset.ftl, &preset.zns, Box::new(NoStore))
        .map_err(format_err)?;
    if spec.zone_append && spec.request_bytes > dev.config().zone_append_size_limit_bytes {
        return Err(IoBenchError::Workload(format!(
            "--request-kib: a Zone Append of {} bytes exceeds the drive's ZASL of {} bytes \
             (zns.zone_append_size_limit_bytes)",
            spec.request_bytes,
            dev.config().zone_append_size_limit_bytes
        )));
    }
    let zone_sectors = dev.zones().capacity_sectors();
    let req_sectors = spec.request_bytes / SECTOR_BYTES;
    if req_sectors > zone_sectors {
        return Err(IoBenchError::Workload(format!(
            "--request-kib: {} bytes exceeds a zone's capacity of {} bytes",
            spec.request_bytes,
            zone_sectors * SECTOR_BYTES
        )));
    }
    let zone_count = dev.zones().count();
    let lanes = spec
        .queue_depth
        .max(1)
        .min(dev.zones().open_max())
        .min(dev.zones().active_max())
        .min(zone_count);
    let mut host = Host {
        lanes: (0..lanes)
            .map(|z| Lane {
                zone: z,
                wp: 0,
                busy: false,
                needs_reset: false,
                read_cursor: 0,
            })
            .collect(),
        zone_sectors,
        zone_count,
        written: vec![false; zone_count as usize],
        next_id: 1,
        issued: 0,
        completed: 0,
        pending: Default::default(),
        report: ZonedReport {
            preset: preset.name.clone(),
            seed,
            spec: Some(spec.clone()),
            zones: zone_count,
            zone_bytes: zone_sectors * SECTOR_BYTES,
            open_zones_max: dev.zones().open_max(),
            lanes,
            ..Default::default()
        },
    };
    let mut sim: Sim<ZnsEvent> = Sim::new(seed);
    let wall = Instant::now();
    drive(&mut dev, &mut sim, &mut host, spec, req_sectors, false)?;
    if spec.pattern == Pattern::SeqRead {
        // Read back what each lane's zones hold, from the lowest zone of each lane.
        for (l, lane) in host.lanes.iter_mut().enumerate() {
            lane.zone = l as u32;
            lane.read_cursor = 0;
        }
        host.issued = 0;
        drive(&mut dev, &mut sim, &mut host, spec, req_sectors, true)?;
    }
    dev.check_invariants();
    let wall_s = wall.elapsed().as_secs_f64();
    let stats = dev.stats();
    let r = &mut host.report;
    r.host_bytes_written = stats.host_sectors_written * SECTOR_BYTES;
    r.media_bytes_written = stats.rows_programmed * dev.layout().group_bytes();
    r.waf = if r.host_bytes_written == 0 {
        0.0
    } else {
        r.media_bytes_written as f64 / r.host_bytes_written as f64
    };
    r.simulated_s = sim.now().as_secs_f64();
    r.write_mib_s = if r.simulated_s > 0.0 {
        r.host_bytes_written as f64 / r.simulated_s / (1u64 << 20) as f64
    } else {
        0.0
    };
    r.wall_s = wall_s;
    let ops = r.writes + r.appends + r.reads + r.resets;
    r.sim_ops_per_wall_s = ops as f64 / wall_s.max(1e-9);
    r.trace_hash = sim.trace_hash().finish();
    Ok(host.report)
}

/// Issues `spec.requests` requests (writes/appends, or reads when `reading`) lane by lane
/// and runs the drive until all complete, under the watchdog.
fn drive(
    dev: &mut ZonedDevice,
    sim: &mut Sim<ZnsEvent>,
    host: &mut Host,
    spec: &ZonedSpec,
    req_sectors: u64,
    reading: bool,
) -> Result<(), IoBenchError> {
    let mut wd = Watchdog::starting_at(SimDuration::from_ns(STALL_MS * 1_000_000), sim.now());
    loop {
        for l in 0..host.lanes.len() {
            if host.issued < spec.requests && !host.lanes[l].busy {
                submit(dev, sim, host, l, spec, req_sectors, reading);
            }
        }
        let done = host.completed;
        let stepped = sim
            .step_watched(dev, &mut wd, |d| Progress {
                completed: done,
                outstanding: d.outstanding(),
            })
            .map_err(|s| IoBenchError::Stalled(s.to_string()))?;
        collect(dev, host, reading);
        if !stepped && host.pending.is_empty() && host.issued >= spec.requests {
            assert!(dev.is_quiescent(), "zoned drive idle with work in flight");
            return Ok(());
        }
    }
}

fn submit(
    dev: &mut ZonedDevice,
    sim: &mut Sim<ZnsEvent>,
    host: &mut Host,
    l: usize,
    spec: &ZonedSpec,
    req_sectors: u64,
    reading: bool,
) {
    let id = host.next_id;
    host.next_id += 1;
    let zs = host.zone_sectors;
    let lane = &mut host.lanes[l];
    let start = u64::from(lane.zone) * zs;
    lane.busy = true;
    host.pending.insert(id, l);
    if reading {
        if lane.read_cursor + req_sectors > zs {
            let n = host.lanes.len() as u32;
            let lane = &mut host.lanes[l];
            lane.zone = if lane.zone + n < host.zone_count {
                lane.zone + n
            } else {
                l as u32
            };
            lane.read_cursor = 0;
        }
        let lane = &mut host.lanes[l];
        let sector = u64::from(lane.zone) * zs + lane.read_cursor;
        lane.read_cursor += req_sectors;
        host.issued += 1;
        dev.submit(
            BlockRequest {
                id,
                op: BlockOp::Read,
                offset_bytes: sector * SECTOR_BYTES,
                len_bytes: req_sectors * SECTOR_BYTES,
                data: Vec::new(),
            },
            sim.queue(),
        );
        return;
    }
    if lane.needs_reset {
        let cmd = ZoneCommand::Send {
            zone_start_sector: start,
            action: ZoneAction::Reset,
        };
        return dev.submit_zone(ZoneRequest { id, cmd }, sim.queue());
    }
    let len = req_sectors.min(zs - lane.wp);
    let sector = start + lane.wp;
    lane.wp += len;
    host.written[lane.zone as usize] = true;
    host.issued += 1;
    if spec.zone_append {
        let cmd = ZoneCommand::Append {
            zone_start_sector: start,
            len_bytes: len * SECTOR_BYTES,
            data: Vec::new(),
        };
        dev.submit_zone(ZoneRequest { id, cmd }, sim.queue());
    } else {
        dev.submit(
            BlockRequest {
                id,
                op: BlockOp::Write,
                offset_bytes: sector * SECTOR_BYTES,
                len_bytes: len * SECTOR_BYTES,
                data: Vec::new(),
            },
            sim.queue(),
        );
    }
}

/// Hands the drive's completions to the host's lanes.
fn collect(dev: &mut ZonedDevice, host: &mut Host, reading: bool) {
    let (mut blocks, mut zones) = (Vec::new(), Vec::<ZoneCompletion>::new());
    dev.take_completions(&mut blocks);
    dev.take_zone_completions(&mut zones);
    let results = blocks
        .into_iter()
        .map(|c| (c.id, c.op == BlockOp::Read, c.result.map(|()| None)))
        .chain(zones.into_iter().map(|c| (c.id, false, c.result.map(Some))));
    for (id, is_read, result) in results {
        let l = host
            .pending
            .remove(&id)
            .expect("a completion of an issued request");
        host.completed += 1;
        host.lanes[l].busy = false;
        match result {
            Err(e) => {
                host.count_error(&e);
                if host.lanes[l].needs_reset {
                    // A failed Reset counts against the run's requests, so that a drive whose
                    // erases keep failing ends the run instead of resetting forever.
                    host.issued += 1;
                }
                if !reading {
                    host.advance_zone(l);
                }
            }
            Ok(_) if is_read => host.report.reads += 1,
            Ok(Some(ZoneReply::Done)) => {
                host.report.resets += 1;
                host.lanes[l].needs_reset = false;
            }
            Ok(Some(ZoneReply::Appended { .. })) => host.report.appends += 1,
            Ok(Some(ZoneReply::Report(_))) => unreachable!("no report is issued"),
            Ok(None) => host.report.writes += 1,
        }
        if !reading && !host.lanes[l].needs_reset && host.lanes[l].wp >= host.zone_sectors {
            host.advance_zone(l);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zoned_preset() -> Preset {
        Preset::load("test-min", &["zns.enabled=true".to_string()]).unwrap()
    }

    fn spec(pattern: Pattern, zone_append: bool, requests: u64) -> ZonedSpec {
        ZonedSpec {
            pattern,
            request_bytes: 16 * 1024,
            requests,
            queue_depth: 4,
            zone_append,
        }
    }

    fn requests_for_two_rounds(p: &Preset) -> u64 {
        let dev = ZonedDevice::format(&p.flash, &p.ftl, &p.zns, Box::new(NoStore)).unwrap();
        let zone_bytes = dev.zones().capacity_sectors() * SECTOR_BYTES;
        2 * u64::from(dev.zones().count()) * zone_bytes / (16 * 1024)
    }

    #[test]
    fn sequential_writes_fill_every_zone_wrap_and_reset_them_at_waf_one() {
        let p = zoned_preset();
        let n = requests_for_two_rounds(&p);
        let r = run(&p, &spec(Pattern::SeqWrite, false, n), 1).unwrap();
        assert_eq!(r.writes, n);
        assert_eq!(r.zone_full_errors + r.boundary_errors + r.other_errors, 0);
        assert_eq!(
            u64::from(r.zones),
            r.resets,
            "every zone is reset once, on the second round"
        );
        assert!((0.99..1.05).contains(&r.waf), "WAF {}", r.waf);
    }

    #[test]
    fn zone_appends_fill_zones_like_writes_with_no_device_gc() {
        let p = zoned_preset();
        let n = requests_for_two_rounds(&p);
        let r = run(&p, &spec(Pattern::SeqWrite, true, n), 1).unwrap();
        assert_eq!(r.appends, n);
        assert_eq!(r.writes, 0);
        assert_eq!(u64::from(r.zones), r.resets);
        assert!((0.99..1.05).contains(&r.waf), "WAF {}", r.waf);
    }

    #[test]
    fn seq_read_reads_back_what_it_wrote() {
        let p = zoned_preset();
        let r = run(&p, &spec(Pattern::SeqRead, false, 64), 1).unwrap();
        assert_eq!((r.writes, r.reads), (64, 64));
    }

    #[test]
    fn random_writes_are_refused_on_a_zoned_drive() {
        let p = zoned_preset();
        let e = run(&p, &spec(Pattern::RandWrite, false, 8), 1).unwrap_err();
        assert!(e.to_string().contains("write pointer"), "{e}");
    }

    #[test]
    fn same_seed_same_zoned_run() {
        let p = zoned_preset();
        let a = run(&p, &spec(Pattern::SeqWrite, true, 200), 7).unwrap();
        let b = run(&p, &spec(Pattern::SeqWrite, true, 200), 7).unwrap();
        assert_eq!(a.trace_hash, b.trace_hash);
    }
}
