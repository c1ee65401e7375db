//! One benchmark run: format the preset's device over the chosen store behind the chosen
//! host interface, optionally fill the span and let the device settle, then measure the
//! workload (closed-loop synthetic, or a trace open-loop) and build the report from the
//! counters before and after.

use crate::driver::{Driver, ListSource, PhaseResult, StoreSpec};
use crate::error::IoBenchError;
use crate::interface::{FrontEnd, Interface};
use crate::report::{IoReport, Measured, Precondition};
use crate::trace::TracePlan;
use crate::workload::{fill_requests, Generator, SyntheticSpec};
use nearflash_ftl::Device;
use nearflash_preset::Preset;
use nearflash_sim::{Fidelity, SimDuration};
use std::time::Instant;

/// Bytes of each preconditioning write.
const FILL_REQUEST_BYTES: u64 = 1 << 20;
/// Preconditioning queue depth.
const FILL_QUEUE_DEPTH: u32 = 16;
/// Most logical bytes a functional run may keep in RAM (the page store plus the reference
/// model); beyond it, `--store-file` keeps pages in a sparse file.
pub const FUNCTIONAL_MEMORY_BYTES_MAX: u64 = 8 << 30;
const GIB: f64 = (1u64 << 30) as f64;

/// What to measure.
pub enum Plan {
    Synthetic(SyntheticSpec),
    /// Boxed: a trace's plan holds its request, arrival and stream lists' headers and its
    /// reading summary, several times a synthetic spec.
    Trace(Box<TracePlan>),
}

/// The stretch of a run a progress report is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    Precondition,
    Measure,
}

impl Stage {
    pub fn name(self) -> &'static str {
        match self {
            Stage::Precondition => "precondition",
            Stage::Measure => "measure",
        }
    }
}

/// A benchmark: the machine, the plan, where pages go and the seed.
pub struct Bench<'a> {
    pub preset: &'a Preset,
    pub plan: &'a Plan,
    /// The path from the host to the FTL: the NVMe front end and link, or bare.
    pub interface: Interface,
    pub store: StoreSpec,
    pub seed: u64,
    /// Fill the span before measuring; `None` takes the plan's default (synthetic patterns
    /// that read are preconditioned, writes and traces are not).
    pub precondition: Option<bool>,
    /// Spread the writes (preconditioning's too) over this many Flexible Data Placement
    /// handles by the address-regions rule (`placement`); `None`: no directives.
    pub placement_handles: Option<u32>,
    /// The rule that spreads them (`--placement-by`): address regions (the default) or a
    /// trace's streams.
    pub placement_rule: crate::placement::PlacementRule,
}

/// The logical capacity of the preset's device (no device is built).
pub fn capacity_bytes(preset: &Preset) -> u64 {
    let geo = nearflash_flash::Geometry::from_config(&preset.flash);
    nearflash_ftl::Layout::new(&geo, &preset.ftl).logical_bytes()
}

impl Bench<'_> {
    /// Runs the benchmark; `progress(stage, done, total)` is called as requests complete.
    pub fn run(&self, progress: &mut dyn FnMut(Stage, u64, u64)) -> Result<IoReport, IoBenchError> {
        match self.interface {
            Interface::Nvme => self.run_on::<nearflash_ssd::Ssd>(progress),
            Interface::Bare => self.run_on::<Device>(progress),
        }
    }

    /// The span the workload covers, refused if functional fidelity would hold too much of
    /// it in RAM.
    fn checked_span(&self) -> Result<u64, IoBenchError> {
        let checked = match self.plan {
            Plan::Synthetic(s) => s.span_bytes,
            Plan::Trace(t) => t.span_bytes,
        };
        if self.store == StoreSpec::Memory && checked > FUNCTIONAL_MEMORY_BYTES_MAX {
            return Err(IoBenchError::Workload(format!(
                "functional fidelity in RAM would hold up to {:.1} GiB of pages (more than {} \
                 GiB); lower --span-gib or keep pages on disk with --store-file PATH",
                checked as f64 / GIB,
                FUNCTIONAL_MEMORY_BYTES_MAX >> 30
            )));
        }
        Ok(checked)
    }

    /// How writes spread over placement handles (`--placement-handles`, `--placement-by`);
    /// placing by stream needs a trace replayed at its arrival times.
    fn placement_spread(
        &self,
        checked: u64,
    ) -> Result<Option<crate::placement::PlacementSpread>, IoBenchError> {
        let spread = self
            .placement_handles
            .map(|n| {
                crate::placement::PlacementSpread::new(self.preset, n, checked)
                    .map(|s| s.with_rule(self.placement_rule))
            })
            .transpose()?;
        if self.placement_rule == crate::placement::PlacementRule::Streams {
            let ok = matches!(self.plan, Plan::Trace(t) if t.no_stall_depth.is_none());
            if !ok || self.placement_handles.is_none() {
                return Err(IoBenchError::Placement(
                    "--placement-by stream places a trace's writes by the trace's stream ids: \
                     it needs --trace (replayed at its arrival times, not --no-stall) and \
                     --placement-handles N"
                        .into(),
                ));
            }
        }
        Ok(spread)
    }

    /// The span to precondition, if any: by default a synthetic workload that reads is
    /// preconditioned and a trace is not.
    fn precondition_span(&self) -> Option<u64> {
        match self.plan {
            Plan::Synthetic(s) => self
                .precondition
                .unwrap_or(s.pattern.reads())
                .then_some(s.span_bytes),
            Plan::Trace(t) => self.precondition.unwrap_or(false).then_some(t.span_bytes),
        }
    }

    /// The measured phase: the synthetic workload at its queue depth, or the trace replayed
    /// (closed at a fixed depth, or open at its arrival times); with the workload described.
    fn measure<D: FrontEnd>(
        &self,
        driver: &mut Driver<D>,
        progress: &mut dyn FnMut(Stage, u64, u64),
    ) -> Result<(PhaseResult, serde_json::Value), IoBenchError> {
        let mut on = |d, t| progress(Stage::Measure, d, t);
        Ok(match self.plan {
            Plan::Synthetic(spec) => {
                let mut g = Generator::new(spec.clone());
                let phase = driver.run_closed(&mut g, spec.queue_depth, &mut on)?;
                (phase, serde_json::to_value(spec).expect("serialisable"))
            }
            Plan::Trace(t) => {
                let phase = match t.no_stall_depth {
                    Some(depth) => {
                        let mut list = ListSource::new(t.requests.clone());
                        driver.run_closed(&mut list, depth, &mut on)?
                    }
                    None => driver.run_open(&t.requests, &t.arrivals_ns, &t.streams, &mut on)?,
                };
                (phase, t.describe())
            }
        })
    }

    fn run_on<D: FrontEnd>(
        &self,
        progress: &mut dyn FnMut(Stage, u64, u64),
    ) -> Result<IoReport, IoBenchError> {
        let wall = Instant::now();
        let checked = self.checked_span()?;
        let fidelity = match self.store {
            StoreSpec::None => Fidelity::Timing,
            StoreSpec::Memory | StoreSpec::File(_) => Fidelity::Functional,
        };
        let spread = self.placement_spread(checked)?;
        let mut driver = Driver::<D>::new(self.preset, &self.store, self.seed, checked)?;
        driver.set_placement(spread);
        let precondition = match self.precondition_span() {
            Some(span) => Some(precondition(&mut driver, self.preset, span, progress)?),
            None => None,
        };
        let start = driver.snapshot();
        let measure_t0 = Instant::now();
        let (phase, workload) = self.measure(&mut driver, progress)?;
        let measured_wall_s = measure_t0.elapsed().as_secs_f64();
        let end = driver.snapshot();
        Ok(IoReport::build(Measured {
            preset: self.preset,
            seed: self.seed,
            fidelity: fidelity.name(),
            interface: D::INTERFACE,
            nvme: (D::INTERFACE == Interface::Nvme).then_some(&self.preset.nvme),
            workload,
            precondition,
            phase: &phase,
            start: &start,
            end: &end,
            device: driver.device(),
            trace_hash: driver.trace_hash(),
            wall_s: wall.elapsed().as_secs_f64(),
            measured_wall_s,
            total_events: driver.events(),
            peak_rss_mb: crate::sysinfo::peak_rss_mb(),
            placement: spread.map(|s| s.describe()),
        }))
    }
}

/// Fills [0, span) sequentially, then idles for one checkpoint interval or GC idle threshold
/// (whichever is longer) and until the device is quiescent: the preconditioning pass of
/// `nearflash io`, and `nearflash fio`'s stand-in for fio laying out its file.
pub fn precondition<D: FrontEnd>(
    driver: &mut Driver<D>,
    preset: &Preset,
    span_bytes: u64,
    progress: &mut dyn FnMut(Stage, u64, u64),
) -> Result<Precondition, IoBenchError> {
    let t0 = Instant::now();
    let mut src = ListSource::new(fill_requests(span_bytes, FILL_REQUEST_BYTES).collect());
    let r = driver.run_closed(&mut src, FILL_QUEUE_DEPTH, &mut |d, t| {
        progress(Stage::Precondition, d, t)
    })?;
    if r.failed > 0 {
        return Err(IoBenchError::Workload(format!(
            "preconditioning failed: {}",
            r.first_failure.unwrap_or_default()
        )));
    }
    let cfg = &preset.ftl;
    let idle_us = cfg.checkpoint_interval_us.max(cfg.gc_idle_threshold_us);
    let settled = driver.settle(SimDuration::from_us_f64(idle_us))?;
    Ok(Precondition {
        requests: r.requests,
        bytes: r.write_bytes,
        sim_s: r.end.since(r.start).as_ns() as f64 * 1e-9,
        settle_sim_s: settled.as_ns() as f64 * 1e-9,
        wall_s: t0.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{Amount, Draw, Pattern};

    fn mixed(preset: &Preset) -> Plan {
        Plan::Synthetic(SyntheticSpec {
            pattern: Pattern::Mixed,
            request_bytes: 4096,
            queue_depth: 8,
            amount: Amount::Requests(3000),
            read_percent: 50,
            span_bytes: capacity_bytes(preset) / 2,
        })
    }

    #[test]
    fn a_functional_benchmark_verifies_every_read_and_replays_exactly() {
        for interface in [Interface::Nvme, Interface::Bare] {
            functional_run_verifies_and_replays(interface);
        }
    }

    /// Data flows through whichever path the requests take: over NVMe each read's payload
    /// comes back through the front end's DMA and is verified like a bare one.
    fn functional_run_verifies_and_replays(interface: Interface) {
        let preset = Preset::load("test-min", &[]).unwrap();
        let plan = mixed(&preset);
        let bench = Bench {
            preset: &preset,
            plan: &plan,
            interface,
            store: StoreSpec::Memory,
            seed: 7,
            precondition: Some(true),
            placement_handles: None,
            placement_rule: Default::default(),
        };
        let mut stages = Vec::new();
        let a = bench
            .run(&mut |s, _, _| {
                if stages.last() != Some(&s) {
                    stages.push(s);
                }
            })
            .unwrap();
        assert_eq!(stages, [Stage::Precondition, Stage::Measure]);
        assert_eq!(a.fidelity, "functional");
        assert_eq!(a.interface, interface.name());
        assert_eq!(a.link.is_some(), interface == Interface::Nvme);
        assert_eq!(a.requests, 3000);
        assert_eq!(a.requests_failed, 0);
        assert!(a.reads_verified > 1000, "{}", a.reads_verified);
        assert!(a.precondition.is_some());
        let b = bench.run(&mut |_, _, _| {}).unwrap();
        assert_eq!(a.trace_hash, b.trace_hash);
        assert_eq!(a.reads_verified, b.reads_verified);
    }

    /// `nearflash io --placement-handles 4` on an FDP drive of 8 handles: random writes
    /// spread over handles 0-3 by address region reach the FTL on those handles — through
    /// the NVMe SQE and the DRAM write buffer, or bare — and handles 4-7 get nothing; the
    /// same run without the option puts every byte on handle 0.
    #[test]
    fn four_placement_handles_carry_host_bytes_on_each_of_the_four_and_none_on_others() {
        let preset = Preset::load(
            "test-min",
            &[
                "ftl.mapping=\"page\"".into(),
                "fdp.enabled=true".into(),
                "fdp.handles=8".into(),
                "write_cache.enabled=true".into(),
            ],
        )
        .unwrap();
        let plan = Plan::Synthetic(SyntheticSpec {
            pattern: Pattern::RandWrite,
            request_bytes: 4096,
            queue_depth: 8,
            amount: Amount::Requests(2000),
            read_percent: 0,
            span_bytes: capacity_bytes(&preset),
        });
        let run = |interface, placement_handles| {
            let r = Bench {
                preset: &preset,
                plan: &plan,
                interface,
                store: StoreSpec::Memory,
                seed: 5,
                precondition: Some(false),
                placement_handles,
                placement_rule: Default::default(),
            }
            .run(&mut |_, _, _| {})
            .unwrap();
            assert_eq!(r.requests_failed, 0);
            r.fdp.expect("FDP is on")
        };
        for interface in [Interface::Nvme, Interface::Bare] {
            let fdp = run(interface, Some(4));
            let host: Vec<u64> = fdp.handles.iter().map(|h| h.host_bytes_written).collect();
            assert!(host[..4].iter().all(|&b| b > 0), "{interface:?}: {host:?}");
            assert!(host[4..].iter().all(|&b| b == 0), "{interface:?}: {host:?}");
            assert_eq!(host.iter().sum::<u64>(), fdp.host_bytes_written);
            assert!(fdp.placement.is_some_and(|p| p.contains("0-3")));
            let plain = run(interface, None);
            let host: Vec<u64> = plain.handles.iter().map(|h| h.host_bytes_written).collect();
            assert!(host[0] > 0 && host[1..].iter().all(|&b| b == 0), "{host:?}");
        }
    }

    #[test]
    fn functional_fidelity_in_ram_is_refused_past_its_bound() {
        let preset = Preset::load("flashabacus", &[]).unwrap();
        let plan = mixed(&preset);
        let bench = Bench {
            preset: &preset,
            plan: &plan,
            interface: Interface::Nvme,
            store: StoreSpec::Memory,
            seed: 1,
            precondition: None,
            placement_handles: None,
            placement_rule: Default::default(),
        };
        let e = bench.run(&mut |_, _, _| {}).unwrap_err();
        assert!(e.to_string().contains("--store-file"), "{e}");
    }

    /// The ssd-970evo preset scaled down to 40 blocks per plane (27 GiB raw) with a 512 MiB
    /// SLC cache (4 static + 4 dynamic SLC superblocks of 64 MiB): a write burst smaller than
    /// the cache runs at the SLC rate; a sustained write 8x the cache runs at about the TLC
    /// rate of the same device with the cache off.
    #[test]
    fn the_970evo_preset_scaled_down_bursts_at_slc_speed_then_sustains_at_tlc_speed() {
        let sb = 64u64 << 20;
        let load = |cache: bool| {
            Preset::load(
                "ssd-970evo",
                &[
                    "flash.blocks_per_plane=40".into(),
                    "ftl.spare_blocks_per_plane=2".into(),
                    format!("ftl.slc_cache.static_capacity_bytes={}", 4 * sb),
                    format!("ftl.slc_cache.dynamic_capacity_max_bytes={}", 4 * sb),
                    format!("ftl.slc_cache.enabled={cache}"),
                ],
            )
            .unwrap()
        };
        let run = |preset: &Preset, bytes: u64| {
            let plan = Plan::Synthetic(SyntheticSpec {
                pattern: Pattern::SeqWrite,
                request_bytes: 1 << 20,
                queue_depth: 8,
                amount: Amount::TotalBytes(bytes),
                read_percent: 0,
                span_bytes: capacity_bytes(preset),
            });
            Bench {
                preset,
                plan: &plan,
                interface: Interface::Nvme,
                store: StoreSpec::None,
                seed: 1,
                precondition: Some(false),
                placement_handles: None,
                placement_rule: Default::default(),
            }
            .run(&mut |_, _, _| {})
            .unwrap()
        };
        let (on, off) = (load(true), load(false));
        let burst = run(&on, 4 * sb);
        let sustained = run(&on, 64 * sb);
        let tlc = run(&off, 64 * sb);
        let b = burst.slc_cache.as_ref().expect("cache on");
        assert_eq!(b.tlc_direct_write_bytes, 0, "{b:?}");
        assert!(off_none(&tlc));
        let s = sustained.slc_cache.as_ref().expect("cache on");
        assert!(
            s.slc_write_bytes >= 8 * sb && s.tlc_direct_write_bytes > 0,
            "{s:?}"
        );
        let (bw_burst, bw_sus, bw_tlc) = (
            burst.write_bandwidth_mb_s,
            sustained.write_bandwidth_mb_s,
            tlc.write_bandwidth_mb_s,
        );
        assert!(bw_burst > 1.8 * bw_tlc, "{bw_burst} vs TLC {bw_tlc}");
        assert!(
            bw_sus > bw_tlc && bw_sus < 1.25 * bw_tlc,
            "{bw_sus} vs TLC {bw_tlc}"
        );
    }

    /// An open-loop trace may hold more requests than the NVMe queues (1023 entries) and the
    /// front end's default hold-back bound: a burst of 70,000 arrivals at once waits in the
    /// host's block layer and completes, as it does bare, instead of tripping the bound.
    #[test]
    fn a_trace_burst_deeper_than_the_nvme_queues_waits_in_the_host() {
        let preset = Preset::load("test-min", &[]).unwrap();
        let n = nearflash_nvme::HELD_MAX as u64 + 4464;
        let requests: Vec<Draw> = (0..n)
            .map(|i| Draw {
                op: nearflash_ftl::BlockOp::Read,
                offset_bytes: (i % 1024) * 4096,
                len_bytes: 4096,
            })
            .collect();
        let arrivals = vec![0; requests.len()];
        let mut driver =
            Driver::<nearflash_ssd::Ssd>::new(&preset, &StoreSpec::None, 1, 0).unwrap();
        let phase = driver
            .run_open(&requests, &arrivals, &arrivals, &mut |_, _| {})
            .unwrap();
        assert_eq!((phase.requests, phase.failed), (n, 0));
        let s = driver.front_end().stats();
        assert_eq!(s.commands, n);
        assert_eq!(s.in_flight_max, preset.nvme.depth_max());
    }

    /// A paced job for the test below: its requests one at a time, from `start` on.
    struct Script {
        start: nearflash_sim::SimTime,
        steps: std::collections::VecDeque<Draw>,
        in_flight: bool,
        done: Vec<nearflash_ftl::BlockOp>,
    }

    impl crate::driver::PacedSource for Script {
        fn step(&mut self, now: nearflash_sim::SimTime) -> crate::driver::Step {
            use crate::driver::Step;
            if now < self.start {
                return Step::Until(self.start);
            }
            if self.in_flight {
                return Step::Blocked;
            }
            match self.steps.pop_front() {
                Some(draw) => {
                    self.in_flight = true;
                    Step::Submit {
                        draw,
                        fua: false,
                        placement: None,
                    }
                }
                None => Step::Done,
            }
        }
        fn submitted(&mut self, req: &nearflash_ftl::BlockRequest) {
            assert_eq!(req.data.is_empty(), req.op != nearflash_ftl::BlockOp::Write);
        }
        fn completed(&mut self, c: &nearflash_ftl::BlockCompletion) {
            assert!(c.result.is_ok(), "{c:?}");
            self.in_flight = false;
            self.done.push(c.op);
        }
    }

    /// Two paced jobs on one functional device: the first writes 64 KiB, trims its first
    /// half and flushes; the second starts 10 ms later and reads the 64 KiB back. Every read
    /// is checked against the reference model (the trimmed half as trimmed), so trims and
    /// flushes reach the checker as writes do.
    #[test]
    fn paced_jobs_write_trim_flush_and_read_back_verified() {
        use nearflash_ftl::BlockOp;
        let preset = Preset::load("test-min", &[]).unwrap();
        let draw = |op, offset_bytes, len_bytes| Draw {
            op,
            offset_bytes,
            len_bytes,
        };
        let mut writer = Script {
            start: nearflash_sim::SimTime::ZERO,
            steps: [
                draw(BlockOp::Write, 0, 65536),
                draw(BlockOp::Trim, 0, 32768),
                draw(BlockOp::Flush, 0, 0),
            ]
            .into(),
            in_flight: false,
            done: Vec::new(),
        };
        let mut reader = Script {
            start: nearflash_sim::SimTime(10_000_000),
            steps: (0..16)
                .map(|i| draw(BlockOp::Read, i * 4096, 4096))
                .collect(),
            in_flight: false,
            done: Vec::new(),
        };
        let mut driver =
            Driver::<nearflash_ssd::Ssd>::new(&preset, &StoreSpec::Memory, 1, 1 << 20).unwrap();
        let phase = driver
            .run_paced(&mut [&mut writer, &mut reader], u64::MAX, &mut |_, _| {})
            .unwrap();
        assert_eq!(writer.done, [BlockOp::Write, BlockOp::Trim, BlockOp::Flush]);
        assert_eq!(reader.done.len(), 16);
        assert_eq!(
            (phase.requests, phase.failed, phase.reads_verified),
            (19, 0, 16)
        );
        assert!(phase.end >= nearflash_sim::SimTime(10_000_000));
    }

    fn off_none(r: &IoReport) -> bool {
        r.slc_cache.is_none()
    }
}
