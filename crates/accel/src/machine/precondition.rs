//! One preconditioning shared by many runs: the workload's device after its untimed
//! preconditioning, on its loop, copied into each run that starts from it
//! ([`Machine::from_preconditioned`]) instead of each writing the same inputs again — a
//! measured speed-up of a reproduction. A copy continues exactly as the original would: the
//! loop (clock, RNG, pending events) is cloned with the device.
//!
//! Tolerates: a run of other inputs (seed, device, request size, input sections) — a typed
//! error naming the first that differs, never a run on the wrong device.

use super::{Instance, Machine, MachineEvent, State};
use crate::config::AccelConfig;
use crate::error::AccelError;
use crate::layout::Layout;
use crate::plan::KernelPlan;
use crate::sched::SchedulerKind;
use nearflash_flash::FlashConfig;
use nearflash_ftl::{Device, FtlConfig};
use nearflash_sim::{Driver, EventQueue, Model, Schedule, SimRng};

/// A workload's device right after its untimed preconditioning — inputs written, every
/// write complete — with the run's clock, RNG and pending events. It depends on the seed,
/// the flash and FTL configurations, the request size and where the inputs lie, not on the
/// scheduler or the cost model, so the accelerator runs of one workload can start from
/// copies of one (`run::precondition`, `run::run_workload_from`). Timing fidelity (the device
/// keeps no data).
pub struct Preconditioned {
    /// The device alone on the loop (nothing else has events yet); never run again itself.
    at_rest: Driver<Flash>,
    next_request: u64,
    seed: u64,
    flash: FlashConfig,
    ftl: FtlConfig,
    request_bytes_max: u64,
    preload: Vec<std::ops::Range<u64>>,
}

/// The preconditioned flash device as a model: its pending events are its own.
struct Flash {
    dev: Device,
}

impl Model for Flash {
    type Event = MachineEvent;

    fn handle(&mut self, ev: MachineEvent, q: &mut EventQueue<MachineEvent>, rng: &mut SimRng) {
        match ev {
            MachineEvent::Dev(e) => self.dev.handle(e, &mut q.map(MachineEvent::Dev), rng),
            MachineEvent::Accel(a) => unreachable!("accelerator event {a:?} before the run"),
        }
    }
}

impl Preconditioned {
    /// Why a run of `seed`, `flash`, `ftl`, `cfg` and `layout` cannot start from this
    /// device (the first input that differs), or `None` when it can.
    fn mismatch(
        &self,
        cfg: &AccelConfig,
        flash: &FlashConfig,
        ftl: &FtlConfig,
        layout: &Layout,
        seed: u64,
    ) -> Option<&'static str> {
        if self.seed != seed {
            Some("seed")
        } else if self.flash != *flash {
            Some("flash configuration")
        } else if self.ftl != *ftl {
            Some("FTL configuration")
        } else if self.request_bytes_max != cfg.flash_request_bytes_max {
            Some("accel.flash_request_bytes_max")
        } else if self.preload != layout.preload {
            Some("the workload's input sections")
        } else {
            None
        }
    }
}

impl Machine {
    /// Preconditions the inputs and hands back the device at that point (the machine's
    /// scheduler and plans are left behind: any run of the workload can start from it).
    pub fn precondition(mut self) -> Result<Preconditioned, AccelError> {
        assert!(
            self.run.model().func.is_none(),
            "preconditioned devices are shared by timing runs"
        );
        self.preload()?;
        let (sim, st) = self.run.into_parts();
        Ok(Preconditioned {
            at_rest: Driver::new(sim, Flash { dev: st.dev }),
            next_request: st.next_request,
            seed: st.seed,
            flash: st.flash_cfg,
            ftl: st.ftl_cfg,
            request_bytes_max: st.cfg.flash_request_bytes_max,
            preload: st.layout.preload,
        })
    }

    /// As `new`, on a copy of `start` (the workload's device after preconditioning): `run`
    /// then skips the preconditioning it already holds. The report is the one `new` + `run`
    /// would give. Errors if `start` was preconditioned for other inputs, naming the first
    /// that differs.
    #[allow(clippy::too_many_arguments)]
    pub fn from_preconditioned(
        start: &Preconditioned,
        cfg: &AccelConfig,
        flash: &FlashConfig,
        ftl: &FtlConfig,
        kind: SchedulerKind,
        plans: Vec<KernelPlan>,
        instances: Vec<Instance>,
        layout: Layout,
        seed: u64,
    ) -> Result<Machine, AccelError> {
        if let Some(differs) = start.mismatch(cfg, flash, ftl, &layout, seed) {
            return Err(AccelError::NotPreconditionedFor { differs });
        }
        let dev = start
            .at_rest
            .model()
            .dev
            .try_clone()
            .expect("a timing device keeps no page data, so it can be copied");
        let mut st = State::new(
            cfg,
            dev,
            (flash, ftl),
            kind,
            plans,
            instances,
            layout,
            seed,
            None,
        )?;
        st.next_request = start.next_request;
        let sim = start.at_rest.sim().clone();
        Ok(Machine::on(Driver::new(sim, st), true))
    }
}
