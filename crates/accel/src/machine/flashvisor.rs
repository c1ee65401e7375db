//! The offload and Flashvisor's messages (§4): a kernel description crosses PCIe into
//! DDR3L and its interrupt reaches Flashvisor (LWP0), which maps the kernel's data sections
//! under range locks (§4.3), admits it into the execution chain and dispatches units to the
//! workers; a unit's stages (inputs, DDR3L, compute, outputs) and its report back. Messages
//! to Flashvisor queue on its LWP in arrival order.
//!
//! Tolerates nothing silently: a unit reported twice, a lock granted to a kernel never
//! mapped, a worker given a unit while it holds one are programmer errors and assert.

use super::{Ev, FvMsg, MachineEvent, State, Q};
use nearflash_ftl::{BlockOp, BlockRequest};
use nearflash_kernels::Access;
use nearflash_rangelock::{Acquire, PageRange};
use nearflash_sim::{Schedule, SimDuration, SimTime};

impl State {
    pub(super) fn submit(
        &mut self,
        q: &mut Q,
        op: BlockOp,
        offset_bytes: u64,
        len_bytes: u64,
        data: Vec<u8>,
    ) -> u64 {
        let id = self.next_request;
        self.next_request += 1;
        self.dev.submit(
            BlockRequest {
                id,
                op,
                offset_bytes,
                len_bytes,
                data,
            },
            &mut q.map(MachineEvent::Dev),
        );
        id
    }

    pub(super) fn schedule(&mut self, q: &mut Q, at: SimTime, ev: Ev) {
        q.schedule_at(at, MachineEvent::Accel(ev));
    }

    /// A message through a hardware queue to Flashvisor, handled in arrival order on LWP0.
    fn send_flashvisor(&mut self, q: &mut Q, msg: FvMsg) {
        let arrival = q.now() + SimDuration::from_ns(self.cfg.queue_message_ns);
        let done = self.flashvisor.serve(
            arrival,
            SimDuration::from_ns(self.cfg.flashvisor_message_ns()),
        );
        self.schedule(q, done, Ev::Fv(msg));
    }

    pub(super) fn on_event(&mut self, q: &mut Q, ev: Ev) {
        let now = q.now();
        match ev {
            Ev::Downloaded(i) => {
                let bytes = self.cfg.kernel_description_bytes;
                let at = self.ddr.access(now, bytes);
                self.schedule(q, at, Ev::Interrupt(i));
            }
            Ev::Interrupt(i) => self.send_flashvisor(q, FvMsg::Arrive(i)),
            Ev::Fv(msg) => self.on_flashvisor(q, msg),
            Ev::Start(w) => {
                if self.unit_plan(w).reads.runs.is_empty() {
                    self.on_event(q, Ev::DdrIn(w));
                } else {
                    self.send_flashvisor(q, FvMsg::Read(w));
                }
            }
            Ev::DdrIn(w) => {
                let ns = self.unit_plan(w).compute_ns;
                self.workers[w].busy.account(now, ns);
                self.schedule(q, now + SimDuration::from_ns(ns), Ev::Computed(w));
            }
            Ev::Computed(w) => {
                if let Some(f) = self.func.as_mut() {
                    let u = self.workers[w].unit.expect("running");
                    f.compute(u.kernel, u.mb, u.screen);
                }
                let bytes = self.unit_plan(w).write_line_bytes;
                if bytes == 0 {
                    self.unit_finished(q, w);
                } else {
                    let at = self.ddr.access(now, bytes);
                    self.schedule(q, at, Ev::DdrOut(w));
                }
            }
            Ev::DdrOut(w) => {
                self.write_to_cache(q, w);
                self.unit_finished(q, w);
            }
        }
    }

    fn on_flashvisor(&mut self, q: &mut Q, msg: FvMsg) {
        match msg {
            FvMsg::Arrive(i) => self.map_sections(q, i),
            FvMsg::Read(w) => self.read_through_cache(q, w),
            FvMsg::Done(w) => {
                let now = q.now();
                let worker = &mut self.workers[w];
                let u = worker.unit.take().expect("a worker reports its unit");
                let since = worker.held_since.take().expect("a held unit has a start");
                worker.occupied_ns += now.since(since).as_ns();
                let finished = if std::mem::take(&mut worker.completed_locally) {
                    true
                } else {
                    self.chain.complete(u)
                };
                if finished {
                    self.flush(q, u.kernel);
                }
                self.dispatch(q);
            }
        }
    }

    /// §4.3: range locks on every data section; the kernel is admitted once all are held.
    fn map_sections(&mut self, q: &mut Q, i: usize) {
        assert!(self.mapped_at[i].is_none(), "an instance is mapped once");
        self.mapped_at[i] = Some(q.now());
        let sections = self.plans[self.instances[i].plan].desc.sections.clone();
        for (s, sec) in sections.iter().enumerate() {
            let g = self.layout.section_groups(i, s, sec.bytes);
            if g.is_empty() {
                continue;
            }
            let access = match sec.access {
                Access::Input => nearflash_rangelock::Access::Read,
                Access::Output | Access::InOut => nearflash_rangelock::Access::Write,
            };
            let range = PageRange::new(g.start, g.end - 1).expect("non-empty range");
            let a = self
                .locks
                .acquire(range, access)
                .expect("ranges are valid and the table is sized for every section");
            if let Acquire::Queued(_) = a {
                self.locks_waiting[i] += 1;
            }
            self.lock_owner.insert(a.id(), i);
            self.held[i].push(a.id());
        }
        if self.locks_waiting[i] == 0 {
            self.admit(q, i);
        }
    }

    fn admit(&mut self, q: &mut Q, i: usize) {
        assert!(self.mapped_at[i].is_some() && self.admitted_at[i].is_none());
        self.admitted_at[i] = Some(q.now());
        if let Some(f) = self.func.as_mut() {
            f.admit(i, &mut self.dev, &self.layout, &self.plans);
        }
        self.chain.admit(i);
        self.sched.admitted(&self.chain, i);
        self.dispatch(q);
    }

    fn dispatch(&mut self, q: &mut Q) {
        let free: Vec<bool> = self.workers.iter().map(|w| w.unit.is_none()).collect();
        let at = q.now() + SimDuration::from_ns(self.cfg.queue_message_ns);
        for (w, u) in self.sched.pick(&mut self.chain, &free) {
            self.started_at[u.kernel].get_or_insert(at);
            assert!(
                self.workers[w].held_since.is_none(),
                "a free worker holds nothing"
            );
            self.workers[w].held_since = Some(q.now());
            self.workers[w].unit = Some(u);
            self.schedule(q, at, Ev::Start(w));
        }
    }

    pub(super) fn unit_plan(&self, w: usize) -> &crate::plan::UnitPlan {
        let u = self.workers[w].unit.expect("the worker runs a unit");
        self.plans[self.instances[u.kernel].plan].unit(u.mb, u.screen)
    }

    fn unit_finished(&mut self, q: &mut Q, w: usize) {
        self.units_finished += 1;
        let u = self.workers[w].unit.expect("running");
        if self.sched.kind().is_inter() {
            // The worker owns the whole kernel: it goes on by itself and reports the end.
            if !self.chain.complete(u) {
                let next = self.chain.issue(u.kernel);
                self.workers[w].unit = Some(next);
                self.schedule(q, q.now(), Ev::Start(w));
                return;
            }
            self.workers[w].completed_locally = true;
        }
        self.send_flashvisor(q, FvMsg::Done(w));
    }

    pub(super) fn kernel_finished(&mut self, q: &mut Q, i: usize) {
        self.done_at[i] = Some(q.now());
        self.unfinished -= 1;
        if let Some(f) = self.func.as_mut() {
            f.verify(i, &mut self.dev, &self.layout);
        }
        for id in std::mem::take(&mut self.held[i]) {
            self.lock_owner.remove(&id);
            let granted = self
                .locks
                .release(id)
                .expect("a finished kernel holds its locks");
            for g in granted {
                let j = self.lock_owner[&g];
                self.locks_waiting[j] -= 1;
                if self.locks_waiting[j] == 0 {
                    self.admit(q, j);
                }
            }
        }
    }
}
