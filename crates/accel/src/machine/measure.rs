//! What a run measures and reports: the busy-time series of every resource (started with the
//! timed run), the backbone's die busy time sampled between events, Fig. 13's energy meter
//! and the run's `RunReport`.

use super::State;
use crate::energy::{Category, EnergyMeter};
use crate::report::{InstanceReport, LatencySummaryMs, RunReport};
use crate::series::{series_points, TimeBins};
use nearflash_sim::SimTime;

impl State {
    pub(super) fn start_series(&mut self) {
        let t = self.start;
        self.flashvisor.start_series(t);
        self.ddr.start_series(t);
        self.pcie.start_series(t);
        for w in &mut self.workers {
            w.busy.start_series(t);
        }
        self.storengine.start_series(t);
        self.die_bins.reset(t);
        self.die_sample = (t, self.flash_busy_start_ns.0);
    }

    /// Spreads the dies' busy time since the last sample over the time since then; sampled
    /// at least twice per bin (`force`: now, at the end of the run).
    pub(super) fn sample_dies(&mut self, now: SimTime, force: bool) {
        let (t0, busy0) = self.die_sample;
        if !force && now.since(t0).as_ns() < self.die_bins.bin_ns() / 2 {
            return;
        }
        let busy = self.flash_busy_ns(now).0;
        self.die_bins.add_spread(t0, now, busy - busy0);
        self.die_sample = (now, busy);
    }

    pub(super) fn flash_busy_ns(&self, now: SimTime) -> (u64, u64) {
        (
            self.dev.die_busy_ns(now).iter().sum(),
            self.dev.channel_busy_ns(now).iter().sum(),
        )
    }

    /// Fig. 13 for FlashAbacus: workers and DDR3L compute, Flashvisor, Storengine and the
    /// backbone serve storage, PCIe moves data. The backbone's busy time is its dies' summed
    /// busy time over the die count (the mean fraction of dies busy). The host is not
    /// counted: after the offload it takes no part in the run (§4).
    fn energy_meter(
        &self,
        now: SimTime,
        lwp_busy_ns: &[u64],
        die_busy_ns: u64,
        makespan: u64,
    ) -> EnergyMeter {
        let c = &self.cfg;
        let mut m = EnergyMeter::default();
        let mut lwp_bins = vec![self.flashvisor.bins(), self.storengine.bins()];
        lwp_bins.extend(self.workers.iter().map(|w| w.busy.bins()));
        for (i, (&b, bins)) in lwp_busy_ns.iter().zip(lwp_bins).enumerate() {
            let cat = if i < 2 {
                Category::StorageAccess
            } else {
                Category::Computation
            };
            m.add(
                format!("lwp{i}"),
                cat,
                c.lwp_active_power_w,
                c.lwp_idle_power_w,
                b.min(makespan),
                (bins, 1),
            );
        }
        m.add(
            "ddr3l",
            Category::Computation,
            c.ddr_power_w,
            c.ddr_idle_power_w,
            self.ddr.busy_ns().min(makespan),
            (self.ddr.bins(), 1),
        );
        m.add(
            "pcie",
            Category::DataMovement,
            c.pcie_power_w,
            c.pcie_idle_power_w,
            self.pcie.busy_ns().min(makespan),
            (self.pcie.bins(), 1),
        );
        let dies = self.dev.die_busy_ns(now).len().max(1) as u64;
        m.add(
            "flash_backbone",
            Category::StorageAccess,
            c.backbone_active_power_w,
            c.backbone_idle_power_w,
            (die_busy_ns / dies).min(makespan),
            (&self.die_bins, dies),
        );
        m
    }

    /// The run's report at `end`: per instance its latency, start and lock wait, and per
    /// resource its busy time, utilization and energy. Mostly one line per report field: the
    /// length is the report's, not the logic's.
    pub(super) fn report(
        &self,
        workload: &str,
        end: SimTime,
        events: u64,
        trace_hash: String,
    ) -> RunReport {
        let flash_busy = self.flash_busy_ns(end);
        let makespan = end.since(self.start).as_ns().max(1);
        let instances: Vec<InstanceReport> = self
            .instances
            .iter()
            .enumerate()
            .map(|(i, inst)| {
                let desc = &self.plans[inst.plan].desc;
                InstanceReport {
                    kernel: desc.name,
                    app: inst.app,
                    latency_ns: self.done_at[i].expect("finished").since(self.start).as_ns(),
                    started_ns: self.started_at[i]
                        .expect("started")
                        .since(self.start)
                        .as_ns(),
                    input_bytes: desc.input_bytes(),
                    lock_wait_ns: self.admitted_at[i]
                        .expect("admitted")
                        .since(self.mapped_at[i].expect("mapped"))
                        .as_ns(),
                    chunks: 1,
                }
            })
            .collect();
        let input_bytes: u64 = instances.iter().map(|i| i.input_bytes).sum();
        let latencies: Vec<u64> = instances.iter().map(|i| i.latency_ns).collect();
        let mut lwp_busy_ns = vec![self.flashvisor.busy_ns(), self.storengine.ns()];
        lwp_busy_ns.extend(self.workers.iter().map(|w| w.busy.busy_ns()));
        let die_busy_ns = flash_busy.0 - self.flash_busy_start_ns.0;
        let meter = self.energy_meter(end, &lwp_busy_ns, die_busy_ns, makespan);
        let workers: Vec<&TimeBins> = self.workers.iter().map(|w| w.busy.bins()).collect();
        let series = series_points(&workers, meter.power_series(makespan), makespan);
        let energy_j = meter.report(makespan);
        RunReport {
            scheduler: self.sched.kind().name(),
            workload: workload.to_string(),
            seed: self.seed,
            sim_time_ns: makespan,
            input_bytes,
            throughput_mb_s: input_bytes as f64 / (makespan as f64 / 1e9) / 1e6,
            latency_ms: LatencySummaryMs::of(&latencies),
            instances,
            lwp_utilization: lwp_busy_ns
                .iter()
                .map(|&b| b as f64 / makespan as f64)
                .collect(),
            lwp_busy_ns,
            worker_occupied_ns: self.workers.iter().map(|w| w.occupied_ns).collect(),
            ddr_busy_ns: self.ddr.busy_ns(),
            pcie_busy_ns: self.pcie.busy_ns(),
            flash_die_busy_ns: die_busy_ns,
            flash_channel_busy_ns: flash_busy.1 - self.flash_busy_start_ns.1,
            flash_read_bytes: self.flash_read_bytes,
            flash_write_bytes: self.flash_write_bytes,
            ddr_hit_groups: self.cache.hit_counts().0,
            ddr_miss_groups: self.cache.hit_counts().1,
            flashvisor_messages: self.flashvisor.served(),
            reused_instances: self.layout.reused_instances,
            flash_needed_bytes: self.layout.own_flash_bytes,
            flash_capacity_bytes: self.layout.capacity_bytes,
            host_cpu_busy_ns: 0,
            host_dram_busy_ns: 0,
            ssd_busy_ns: 0,
            phases: Vec::new(),
            energy_j,
            series,
            events: events - self.events_start,
            trace_hash,
        }
    }
}
