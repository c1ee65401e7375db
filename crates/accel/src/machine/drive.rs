//! The driver's side of the machine: [`Machine`] holds the machine's state (`State`, a
//! `sim::Model`) on its `sim::Driver`, formats or copies its device, preconditions the inputs
//! (a phase of the same loop, `crate::preload`), starts the timed run and waits for it with
//! `Driver::run_until` under the driver's one watchdog.
//!
//! Tolerates: a run that stops progressing (requests outstanding and no event pending, or
//! events but no flash request or unit completing for the stall limit) — the typed
//! `AccelError::Stalled`, not a hang; an event that fails — the run stops on it.

use super::{Ev, Instance, MachineEvent, State};
use crate::config::AccelConfig;
use crate::error::AccelError;
use crate::functional::{Fault, Functional, InstanceCheck};
use crate::layout::Layout;
use crate::plan::KernelPlan;
use crate::preload::{write_extents, Preload};
use crate::report::RunReport;
use crate::sched::SchedulerKind;
use crate::server::transfer;
use nearflash_flash::{FlashConfig, Geometry, MemoryStore, NoStore, PageStore};
use nearflash_ftl::{Device, FtlConfig};
use nearflash_kernels::Kernel;
use nearflash_sim::{Driver, Schedule, Sim, SimDuration, STALL_LIMIT};

/// The accelerator on the one simulation loop: the driver owns the clock, the RNG and the
/// trace hash; its model is the machine's state.
pub struct Machine {
    pub(super) run: Driver<State>,
    /// The inputs are on flash already (built from a [`super::Preconditioned`] device).
    pub(super) preconditioned: bool,
}

impl Machine {
    /// Formats a timing-fidelity device, places nothing yet: `layout` says where each
    /// instance's sections live; their inputs are written (untimed) before `run`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        cfg: &AccelConfig,
        flash: &FlashConfig,
        ftl: &FtlConfig,
        kind: SchedulerKind,
        plans: Vec<KernelPlan>,
        instances: Vec<Instance>,
        layout: Layout,
        seed: u64,
    ) -> Result<Machine, AccelError> {
        Machine::build(cfg, flash, ftl, kind, plans, instances, layout, seed, None)
    }

    /// As `new`, in functional fidelity: `kernels[p]` is the kernel `plans[p]` was built
    /// from; run with `run_functional`.
    #[allow(clippy::too_many_arguments)]
    pub fn new_functional(
        cfg: &AccelConfig,
        flash: &FlashConfig,
        ftl: &FtlConfig,
        kind: SchedulerKind,
        plans: Vec<KernelPlan>,
        kernels: Vec<Box<dyn Kernel>>,
        instances: Vec<Instance>,
        layout: Layout,
        seed: u64,
    ) -> Result<Machine, AccelError> {
        let func = Functional::new(
            kernels,
            &plans,
            instances.iter().map(|i| i.plan).collect(),
            instances.iter().map(|i| i.app).collect(),
            &layout,
        )?;
        Machine::build(
            cfg,
            flash,
            ftl,
            kind,
            plans,
            instances,
            layout,
            seed,
            Some(func),
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn build(
        cfg: &AccelConfig,
        flash: &FlashConfig,
        ftl: &FtlConfig,
        kind: SchedulerKind,
        plans: Vec<KernelPlan>,
        instances: Vec<Instance>,
        layout: Layout,
        seed: u64,
        func: Option<Functional>,
    ) -> Result<Machine, AccelError> {
        cfg.validate()?;
        let mut sim = Sim::new(seed);
        let store: Box<dyn PageStore> = match func {
            Some(_) => Box::new(MemoryStore::new(
                Geometry::from_config(flash).page_count(),
                flash.page_size_bytes,
            )),
            None => Box::new(NoStore),
        };
        let dev = Device::format(flash, ftl, store, &mut sim.queue().map(MachineEvent::Dev))?;
        let st = State::new(
            cfg,
            dev,
            (flash, ftl),
            kind,
            plans,
            instances,
            layout,
            seed,
            func,
        )?;
        Ok(Machine::on(Driver::new(sim, st), false))
    }

    /// The machine on its driver, waits watched with the machine's stall limit: the
    /// default, plus the longest unit's computing time — one unit may compute for its whole
    /// planned time with nothing else to do, and nothing completes meanwhile.
    pub(super) fn on(run: Driver<State>, preconditioned: bool) -> Machine {
        let longest_unit_ns = run
            .model()
            .plans
            .iter()
            .flat_map(|p| p.units.iter().flatten())
            .map(|u| u.compute_ns)
            .max()
            .unwrap_or(0);
        let limit = STALL_LIMIT + SimDuration::from_ns(longest_unit_ns);
        Machine {
            run: run.with_stall_limit(limit),
            preconditioned,
        }
    }

    /// Functional fidelity: injects `fault` (tests show verification catches it).
    pub fn inject(&mut self, fault: Fault) {
        let st = self.run.model_mut();
        st.func
            .as_mut()
            .expect("faults need functional fidelity")
            .inject(fault, &st.layout);
    }

    /// Preconditions the inputs, then runs every instance to completion.
    pub fn run(mut self, workload: &str) -> Result<RunReport, AccelError> {
        self.execute(workload)
    }

    /// Functional fidelity: `run`, and every instance's verdict (live-out arrays read back
    /// from flash when it finished, against the kernel's reference).
    pub fn run_functional(
        mut self,
        workload: &str,
    ) -> Result<(RunReport, Vec<InstanceCheck>), AccelError> {
        assert!(self.run.model().func.is_some(), "built with new_functional");
        let report = self.execute(workload)?;
        let checks = self
            .run
            .model_mut()
            .func
            .take()
            .expect("functional")
            .into_checks();
        Ok((report, checks))
    }

    fn execute(&mut self, workload: &str) -> Result<RunReport, AccelError> {
        if !self.preconditioned {
            self.preload()?;
        }
        self.start();
        // Unfinished kernels always have events pending; the watchdog stops a run in which
        // none are (a lost completion) or events keep coming but no flash request or unit
        // completes (a livelock).
        self.run
            .run_until(|st| st.unfinished == 0 || st.failure.is_some())
            .map_err(|stall| AccelError::Stalled {
                what: "the FlashAbacus machine",
                stall,
            })?;
        let st = self.run.model_mut();
        if let Some(e) = st.failure.take() {
            return Err(e);
        }
        assert_eq!(st.unfinished, 0, "the run ended with every instance done");
        let end = self.run.now();
        let events = self.run.sim().events();
        let trace_hash = self.run.sim().trace_hash().hex();
        let st = self.run.model_mut();
        st.sample_dies(end, true);
        Ok(st.report(workload, end, events, trace_hash))
    }

    /// Starts the timed run now: the trace hash, the busy-time series and the counters start
    /// here, and the host downloads every kernel description over PCIe.
    fn start(&mut self) {
        // The trace hash covers the timed run only, as it always has.
        self.run.restart_trace();
        let (now, events) = (self.run.now(), self.run.sim().events());
        let (st, q, _) = self.run.parts();
        st.start = now;
        st.last_event = now;
        st.events_start = events;
        st.flash_busy_start_ns = st.flash_busy_ns(now);
        st.start_series();
        for i in 0..st.instances.len() {
            let at = st.pcie.serve(
                now,
                transfer(st.cfg.kernel_description_bytes, st.cfg.pcie_bandwidth_mb_s),
            );
            st.schedule(q, at, Ev::Downloaded(i));
        }
    }

    /// Writes every input range (untimed preconditioning) and waits for the writes.
    pub(super) fn preload(&mut self) -> Result<(), AccelError> {
        let st = self.run.model();
        let chunk = st.cfg.flash_request_bytes_max;
        assert!(chunk > 0, "a validated configuration has a request size");
        let mut todo: Vec<(u64, u64)> = Vec::new();
        for r in &st.layout.preload {
            let mut at = r.start;
            while at < r.end {
                let len = chunk.min(r.end - at);
                todo.push((at, len));
                at += len;
            }
        }
        let unwrap = |e| match e {
            MachineEvent::Dev(d) => d,
            MachineEvent::Accel(a) => unreachable!("accelerator event {a:?} before the run"),
        };
        write_extents(
            &mut self.run,
            |st| {
                let State {
                    dev,
                    next_request,
                    func,
                    ..
                } = st;
                let func = func.as_ref();
                Preload::new(
                    dev,
                    (MachineEvent::Dev, unwrap),
                    next_request,
                    move |o, l| func.map_or_else(Vec::new, |f| f.preload_payload(o, l)),
                )
            },
            todo,
            "preconditioning",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nearflash_ftl::layout::Layout as FtlLayout;
    use nearflash_kernels::{build, Dataset, ScreenPlan};
    use nearflash_rangelock::{Access, PageRange};
    use nearflash_sim::StallReason;

    /// Two GEMM instances at `mini` on the `test-min` device under IntraO3.
    fn two_gemm() -> Machine {
        let mut doc: toml::Table = include_str!("../../../../configs/test-min.toml")
            .parse()
            .unwrap();
        let flash: FlashConfig = doc.remove("flash").unwrap().try_into().unwrap();
        let ftl: FtlConfig = doc.remove("ftl").unwrap().try_into().unwrap();
        let accel: AccelConfig = doc.remove("accel").unwrap().try_into().unwrap();
        let ftl_layout = FtlLayout::new(&Geometry::from_config(&flash), &ftl);
        let group = ftl_layout.group_bytes();
        let k = build("gemm", Dataset::Mini, ScreenPlan::new(2)).unwrap();
        let plans = vec![KernelPlan::new(k.as_ref(), &accel, group).unwrap()];
        let layout = Layout::place(&plans, &[0, 0], group, ftl_layout.logical_bytes()).unwrap();
        let instances = vec![Instance { plan: 0, app: 0 }, Instance { plan: 0, app: 1 }];
        let kind = SchedulerKind::IntraO3;
        Machine::new(&accel, &flash, &ftl, kind, plans, instances, layout, 1).unwrap()
    }

    #[test]
    fn two_kernels_run_to_completion_under_the_watchdog() {
        let r = two_gemm().run("gemm x2").unwrap();
        assert_eq!(r.instances.len(), 2);
        assert!(r.events > 0);
    }

    /// The machine's loop used to step until every instance finished; a kernel that could
    /// never be admitted — its write lock queued behind a lock nobody releases (a leak) —
    /// had to be caught by a watchdog of its own. Now the run is one `Driver::run_until`:
    /// the kernels waiting on the leaked lock are the typed stall, reported when nothing is
    /// left to run, never a hang.
    #[test]
    fn kernels_waiting_on_a_leaked_range_lock_are_a_stall_not_a_hang() {
        let mut m = two_gemm();
        let st = m.run.model_mut();
        let groups = st.layout.end_bytes.div_ceil(st.layout.group_bytes);
        let everything = PageRange::new(0, groups - 1).unwrap();
        st.locks.acquire(everything, Access::Write).unwrap();
        let err = m.run("gemm x2").unwrap_err();
        let AccelError::Stalled { what, stall } = err else {
            panic!("expected a stall, got {err}");
        };
        assert_eq!(what, "the FlashAbacus machine");
        assert_eq!(stall.progress.outstanding, 2, "both kernels are unfinished");
        assert_eq!(stall.progress.completed, 0, "no unit ran");
        assert!(matches!(
            stall.reason,
            StallReason::NoEventPending | StallReason::NoCompletion
        ));
    }
}
