//! `nearflash io` on a zoned drive (`--set zns.enabled=true`): a zone-aware sequential
//! pattern over `nearflash_ftl::zns::ZonedDevice`, behind the NVMe front end and its link
//! (`--interface nvme`, the default: writes, reads, Zone Appends and Zone Management Sends
//! cross the queues and the link as NVMe commands, so the run is timed end to end) or bare
//! (`--interface bare`). The host keeps `lanes` zones open at once
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
use crate::interface::Interface;
use crate::workload::Pattern;
use nearflash_blockdev::{BlockDevice, BlockOp, BlockRequest, IoError, ZoneStatus, SECTOR_BYTES};
use nearflash_flash::NoStore;
use nearflash_ftl::zns::{
    ZoneAction, ZoneCommand, ZoneCompletion, ZoneReply, ZoneRequest, ZonedDevice,
};
use nearflash_hw::link::Direction;
use nearflash_nvme::Nvme;
use nearflash_preset::Preset;
use nearflash_sim::{
    EventQueue, LatencyHistogram, Model, Progress, Sim, SimDuration, SimRng, SimTime, Watchdog,
};
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
    /// The path to the drive: the NVMe front end (the preset's `[nvme]`) or bare.
    pub interface: Interface,
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
    /// `nvme` or `bare`.
    pub interface: String,
    /// Through NVMe: commands the front end carried (zone commands among them) and the
    /// bytes its link moved down (host to drive) and up.
    pub nvme_commands: u64,
    pub nvme_zone_commands: u64,
    pub link_down_bytes: u64,
    pub link_up_bytes: u64,
    /// Mean and 99th-percentile latency of host writes and appends, submission to the
    /// completion the host sees (µs).
    pub write_lat_mean_us: f64,
    pub write_lat_p99_us: f64,
    pub trace_hash: u64,
}

impl ZonedReport {
    pub fn table(&self) -> String {
        format!(
            "zoned drive ({}): {} zones of {} KiB, {} lanes (max open {})\n\
             writes {}  appends {}  reads {}  resets {}\n\
             errors: zone full {}  boundary {}  other {}\n\
             host bytes {}  media bytes {}  WAF {:.3}\n\
             write latency mean {:.1} µs  p99 {:.1} µs\n\
             simulated {:.6} s  write {:.1} MiB/s  wall {:.3} s  {:.0} sim ops/wall s",
            self.interface,
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
            self.write_lat_mean_us,
            self.write_lat_p99_us,
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
    /// Latencies of completed writes and appends.
    write_lat: LatencyHistogram,
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

/// The zoned drive with the path in front of it: bare, or behind the NVMe front end.
trait ZonedFront: BlockDevice + Sized {
    fn zoned(&self) -> &ZonedDevice;

    /// Nothing in flight on the path or in the drive.
    fn quiescent(&self) -> bool;

    /// Fills the front end's figures into the report (none when bare).
    fn front_figures(&self, _report: &mut ZonedReport) {}
}

impl ZonedFront for ZonedDevice {
    fn zoned(&self) -> &ZonedDevice {
        self
    }

    fn quiescent(&self) -> bool {
        self.is_quiescent()
    }
}

impl ZonedFront for Nvme<ZonedDevice> {
    fn zoned(&self) -> &ZonedDevice {
        self.device()
    }

    fn quiescent(&self) -> bool {
        self.outstanding() == 0 && self.device().is_quiescent()
    }

    fn front_figures(&self, r: &mut ZonedReport) {
        let s = self.stats();
        r.nvme_commands = s.commands;
        r.nvme_zone_commands = s.zone_appends + s.zone_sends + s.zone_receives;
        r.link_down_bytes = self.link().stats(Direction::Down).payload_bytes;
        r.link_up_bytes = self.link().stats(Direction::Up).payload_bytes;
    }
}

/// One pass of the host over the drive (writes/appends, or reads when `reading`) as the
/// simulation's machine: after every event it hands the drive's completions to the lanes and
/// submits to every idle lane, exactly where the host acts.
struct Pass<'a, D> {
    dev: &'a mut D,
    host: &'a mut Host,
    spec: &'a ZonedSpec,
    req_sectors: u64,
    reading: bool,
}

impl<D: ZonedFront> Pass<'_, D> {
    /// Submits a request to every idle lane while requests remain.
    fn feed(&mut self, q: &mut EventQueue<D::Event>) {
        for l in 0..self.host.lanes.len() {
            if self.host.issued < self.spec.requests && !self.host.lanes[l].busy {
                submit(
                    self.dev,
                    q,
                    self.host,
                    l,
                    self.spec,
                    self.req_sectors,
                    self.reading,
                );
            }
        }
    }

    /// Every request issued and completed.
    fn finished(&self) -> bool {
        self.host.pending.is_empty() && self.host.issued >= self.spec.requests
    }
}

impl<D: ZonedFront> Model for Pass<'_, D> {
    type Event = D::Event;

    fn handle(&mut self, ev: D::Event, q: &mut EventQueue<D::Event>, rng: &mut SimRng) {
        self.dev.handle(ev, q, rng);
        collect(self.dev, self.host, self.reading);
        self.feed(q);
    }

    fn check_invariants(&self) {
        self.dev.check_invariants();
    }

    fn progress(&self) -> Progress {
        Progress {
            completed: self.host.completed,
            outstanding: self.dev.outstanding(),
        }
    }
}

/// Runs `spec` on a freshly formatted zoned drive of `preset` (timing fidelity), through
/// the interface `spec.interface`.
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
    let dev = ZonedDevice::format(&preset.flash, &preset.ftl, &preset.zns, Box::new(NoStore))
        .map_err(format_err)?;
    match spec.interface {
        Interface::Bare => run_on(dev, preset, spec, seed),
        Interface::Nvme => {
            let nvme =
                Nvme::new(preset.nvme.clone(), dev).map_err(|source| IoBenchError::Nvme {
                    preset: preset.name.clone(),
                    source,
                })?;
            run_on(nvme, preset, spec, seed)
        }
    }
}

fn run_on<D: ZonedFront>(
    dev: D,
    preset: &Preset,
    spec: &ZonedSpec,
    seed: u64,
) -> Result<ZonedReport, IoBenchError> {
    let zoned = dev.zoned();
    if spec.zone_append && spec.request_bytes > zoned.config().zone_append_size_limit_bytes {
        return Err(IoBenchError::Workload(format!(
            "--request-kib: a Zone Append of {} bytes exceeds the drive's ZASL of {} bytes \
             (zns.zone_append_size_limit_bytes)",
            spec.request_bytes,
            zoned.config().zone_append_size_limit_bytes
        )));
    }
    let zone_sectors = zoned.zones().capacity_sectors();
    let req_sectors = spec.request_bytes / SECTOR_BYTES;
    if req_sectors > zone_sectors {
        return Err(IoBenchError::Workload(format!(
            "--request-kib: {} bytes exceeds a zone's capacity of {} bytes",
            spec.request_bytes,
            zone_sectors * SECTOR_BYTES
        )));
    }
    let zone_count = zoned.zones().count();
    let lanes = spec
        .queue_depth
        .max(1)
        .min(zoned.zones().open_max())
        .min(zoned.zones().active_max())
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
        write_lat: LatencyHistogram::default(),
        report: ZonedReport {
            preset: preset.name.clone(),
            seed,
            spec: Some(spec.clone()),
            zones: zone_count,
            zone_bytes: zone_sectors * SECTOR_BYTES,
            open_zones_max: zoned.zones().open_max(),
            lanes,
            interface: spec.interface.name().to_string(),
            ..Default::default()
        },
    };
    let mut dev = dev;
    let mut sim: Sim<D::Event> = Sim::new(seed);
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
    let zoned = dev.zoned();
    let stats = zoned.stats();
    let r = &mut host.report;
    dev.front_figures(r);
    r.host_bytes_written = stats.host_sectors_written * SECTOR_BYTES;
    r.media_bytes_written = stats.rows_programmed * zoned.layout().group_bytes();
    r.waf = if r.host_bytes_written == 0 {
        0.0
    } else {
        r.media_bytes_written as f64 / r.host_bytes_written as f64
    };
    r.write_lat_mean_us = host.write_lat.mean_ns() / 1e3;
    r.write_lat_p99_us = host.write_lat.quantile_ns(0.99) as f64 / 1e3;
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
/// and runs the drive until all complete, under the watchdog, then on until no event is
/// pending (what the drive does after the last completion counts towards the run's time).
fn drive<D: ZonedFront>(
    dev: &mut D,
    sim: &mut Sim<D::Event>,
    host: &mut Host,
    spec: &ZonedSpec,
    req_sectors: u64,
    reading: bool,
) -> Result<(), IoBenchError> {
    let mut wd = Watchdog::starting_at(SimDuration::from_ns(STALL_MS * 1_000_000), sim.now());
    let mut pass = Pass {
        dev,
        host,
        spec,
        req_sectors,
        reading,
    };
    pass.feed(sim.queue());
    sim.run_until(&mut pass, &mut wd, Pass::progress, Pass::finished)
        .map_err(|s| IoBenchError::Stalled(s.to_string()))?;
    // Nothing is outstanding: the drive's own work runs out with no watchdog to watch it.
    sim.run_until_by(SimTime(u64::MAX), &mut pass, |_| false);
    assert!(pass.dev.quiescent(), "zoned drive idle with work in flight");
    Ok(())
}

fn submit<D: ZonedFront>(
    dev: &mut D,
    q: &mut EventQueue<D::Event>,
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
            q,
        );
        return;
    }
    if lane.needs_reset {
        let cmd = ZoneCommand::Send {
            zone_start_sector: start,
            action: ZoneAction::Reset,
        };
        return zone(dev, q, ZoneRequest { id, cmd });
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
        zone(dev, q, ZoneRequest { id, cmd });
    } else {
        dev.submit(
            BlockRequest {
                id,
                op: BlockOp::Write,
                offset_bytes: sector * SECTOR_BYTES,
                len_bytes: len * SECTOR_BYTES,
                data: Vec::new(),
            },
            q,
        );
    }
}

/// Submits a zone command: the zoned drive takes every one, through any interface.
fn zone<D: ZonedFront>(dev: &mut D, q: &mut EventQueue<D::Event>, req: ZoneRequest) {
    dev.submit_zone(req, q)
        .unwrap_or_else(|r| panic!("the zoned drive refused zone command {}", r.id));
}

/// Hands the drive's completions to the host's lanes.
fn collect<D: ZonedFront>(dev: &mut D, host: &mut Host, reading: bool) {
    let (mut blocks, mut zones) = (Vec::new(), Vec::<ZoneCompletion>::new());
    dev.take_completions(&mut blocks);
    dev.take_zone_completions(&mut zones);
    let results = blocks
        .into_iter()
        .map(|c| {
            let lat = c.completed.since(c.submitted).as_ns();
            (c.id, c.op == BlockOp::Read, lat, c.result.map(|()| None))
        })
        .chain(zones.into_iter().map(|c| {
            let lat = c.completed.since(c.submitted).as_ns();
            (c.id, false, lat, c.result.map(Some))
        }));
    for (id, is_read, lat_ns, result) in results {
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
            Ok(Some(ZoneReply::Appended { .. })) => {
                host.report.appends += 1;
                host.write_lat.record(lat_ns);
            }
            Ok(Some(ZoneReply::Report(_))) => unreachable!("no report is issued"),
            Ok(None) => {
                host.report.writes += 1;
                host.write_lat.record(lat_ns);
            }
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
            interface: Interface::Nvme,
        }
    }

    fn bare_spec(s: ZonedSpec) -> ZonedSpec {
        ZonedSpec {
            interface: Interface::Bare,
            ..s
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

    /// The story of the first remaining item: a zoned run is timed end to end like
    /// an ordinary one. Through NVMe the same requests do the same flash work (writes,
    /// resets, WAF) but every one also crosses the queues and the link: the data goes down
    /// the link, Resets and Appends are NVMe commands, and each write takes longer than on
    /// the bare drive by at least the controller's firmware time.
    #[test]
    fn a_zoned_run_through_the_nvme_front_end_is_timed_end_to_end() {
        let p = zoned_preset();
        let n = requests_for_two_rounds(&p);
        for append in [false, true] {
            let nvme = run(&p, &spec(Pattern::SeqWrite, append, n), 1).unwrap();
            let bare = run(&p, &bare_spec(spec(Pattern::SeqWrite, append, n)), 1).unwrap();
            assert_eq!(
                (nvme.interface.as_str(), bare.interface.as_str()),
                ("nvme", "bare")
            );
            assert_eq!(
                (
                    nvme.writes,
                    nvme.appends,
                    nvme.resets,
                    nvme.media_bytes_written
                ),
                (
                    bare.writes,
                    bare.appends,
                    bare.resets,
                    bare.media_bytes_written
                )
            );
            assert_eq!(nvme.nvme_commands, n + nvme.resets);
            let zone_cmds = nvme.resets + if append { n } else { 0 };
            assert_eq!(nvme.nvme_zone_commands, zone_cmds);
            assert!(nvme.link_down_bytes >= nvme.host_bytes_written);
            assert_eq!((bare.nvme_commands, bare.link_down_bytes), (0, 0));
            // One lane, so no write queues behind another on the dies: the latency is the
            // path's plus the flash's.
            let qd1 = |s: ZonedSpec| ZonedSpec {
                queue_depth: 1,
                requests: 64,
                ..s
            };
            let nvme = run(&p, &qd1(spec(Pattern::SeqWrite, append, n)), 1).unwrap();
            let bare = run(&p, &qd1(bare_spec(spec(Pattern::SeqWrite, append, n))), 1).unwrap();
            let firmware_us = p.nvme.controller_ns as f64 / 1e3;
            assert!(
                nvme.write_lat_mean_us > bare.write_lat_mean_us + firmware_us,
                "append {append}: nvme {} µs, bare {} µs",
                nvme.write_lat_mean_us,
                bare.write_lat_mean_us
            );
        }
    }

    #[test]
    fn seq_read_reads_back_what_it_wrote() {
        let p = zoned_preset();
        for s in [
            spec(Pattern::SeqRead, false, 64),
            bare_spec(spec(Pattern::SeqRead, false, 64)),
        ] {
            let r = run(&p, &s, 1).unwrap();
            assert_eq!((r.writes, r.reads), (64, 64));
        }
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
