//! What the runtime's loop waits for, kept by the drive as it handles events: every
//! deadline is an event on the queue, and the runtime resumes only the calls an event
//! concerns.
//!
//! Deadlines: a call's (a sleep, CPU time on a host core, a copy) and the file system's CPU
//! timer. Each stands in an ordered set; each instant with a deadline has one
//! [`MachineEvent::Timer`] on the queue, shared by every deadline there. When it fires, what
//! is due is read from the sets, so a deadline that no longer stands (the file system moved
//! its timer) costs nothing. A call's deadline `t` is *reached* once every drive event due by
//! `t` has happened: `t < now`, or `t == now` with nothing but timer ticks still due at `now`
//! — exactly when a loop that advanced the clock by hand to the earliest deadline would have
//! resumed it, whatever order the instant's events were scheduled in.
//!
//! Changes: the streams whose state changed (their calls may move), host operations that
//! ended, firmware requests that completed (the file system's block requests).

use super::{MachineEvent, Q};
use nearflash_sim::SimTime;
use std::collections::BTreeSet;

#[derive(Debug, Default)]
pub(crate) struct Wake {
    /// A turn of the loop happened since the runtime last waited: a drive event, or a timer
    /// tick with a deadline due and no drive event left at its instant.
    pub(crate) turned: bool,
    /// A call's deadline was reached or the file system's timer came due at the last turn.
    pub(crate) due: bool,
    /// Streams whose state changed since the runtime last looked.
    pub(crate) touched: BTreeSet<u32>,
    /// Host operations that ended, in all.
    pub(crate) host_ended: u64,
    /// Calls' deadlines: (when, call number).
    timers: BTreeSet<(SimTime, u64)>,
    /// The file system's CPU timer.
    fs_timer: Option<SimTime>,
    /// Instants with a `Timer` event on the queue (one each).
    ticks: BTreeSet<SimTime>,
    /// The time of the last event.
    now: SimTime,
}

impl Wake {
    /// Call `op` waits until `at` (not before `now`).
    pub(crate) fn arm(&mut self, q: &mut Q, at: SimTime, op: u64) {
        let inserted = self.timers.insert((at, op));
        assert!(inserted, "call {op} has one deadline at a time");
        self.tick(q, at);
    }

    /// Call `op` no longer waits until `at` (resumed, or ended).
    pub(crate) fn disarm(&mut self, at: SimTime, op: u64) {
        self.timers.remove(&(at, op));
    }

    /// The file system's CPU timer is now `at` (`None`: no operation is computing).
    pub(crate) fn set_fs_timer(&mut self, q: &mut Q, at: Option<SimTime>) {
        self.fs_timer = at;
        if let Some(t) = at {
            self.tick(q, t);
        }
    }

    fn tick(&mut self, q: &mut Q, at: SimTime) {
        let at = at.max(q.now());
        if self.ticks.insert(at) {
            q.schedule_at(at, MachineEvent::Timer);
        }
    }

    /// No drive event is left at `now`, only (perhaps) this instant's timer tick.
    fn quiet(&self, now: SimTime, pending_now: usize) -> bool {
        let own = usize::from(self.ticks.contains(&now));
        assert!(pending_now >= own, "the instant's tick is pending");
        pending_now == own
    }

    /// Every drive event due by `t` has happened (`pending_now`: events still due at `now`).
    pub(crate) fn reached(&self, t: SimTime, now: SimTime, pending_now: usize) -> bool {
        t < now || (t == now && self.quiet(now, pending_now))
    }

    /// The calls whose deadlines are reached, into `out` (in deadline order). A deadline
    /// stands until its call is resumed past it (`disarm`): the loop turns at it, and every
    /// pass looks at its call, until then.
    pub(crate) fn reached_calls(&self, now: SimTime, pending_now: usize, out: &mut Vec<u64>) {
        for &(t, op) in &self.timers {
            if !self.reached(t, now, pending_now) {
                return;
            }
            out.push(op);
        }
    }

    /// After an event at `now` (`timer`: a `Timer` tick, whose instant is no longer ticked):
    /// whether the loop turned, and whether a deadline is due.
    pub(crate) fn after_event(&mut self, timer: bool, now: SimTime, pending_now: usize) {
        self.now = now;
        if timer {
            let was = self.ticks.remove(&now);
            assert!(was, "a tick fires at its instant");
        }
        let call_due = self
            .timers
            .first()
            .is_some_and(|&(t, _)| self.reached(t, now, pending_now));
        let fs_due = self.fs_timer.is_some_and(|t| t <= now);
        let due = call_due || fs_due;
        self.due |= due;
        self.turned |= !timer || (due && self.quiet(now, pending_now));
    }

    /// A wait begins: only turns from now on count.
    pub(crate) fn begin_wait(&mut self) {
        self.turned = false;
        self.due = false;
    }

    pub(crate) fn check_invariants(&self) {
        let now = self.now;
        assert!(
            self.ticks.first().is_none_or(|&t| t >= now),
            "a tick in the past"
        );
        for &(t, op) in &self.timers {
            assert!(
                self.ticks.contains(&t.max(now)) || t <= now,
                "call {op}'s deadline at {t:?} has a tick on the queue"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nearflash_sim::EventQueue;

    #[test]
    fn deadlines_at_one_instant_share_one_tick_and_wait_behind_its_drive_events() {
        let mut q: Q = EventQueue::new();
        let mut w = Wake::default();
        w.arm(&mut q, SimTime(10), 1);
        w.arm(&mut q, SimTime(10), 2);
        w.set_fs_timer(&mut q, Some(SimTime(10)));
        assert_eq!(q.len(), 1, "one tick for the instant");
        // A drive event at the same instant, scheduled after the tick.
        q.schedule_at(
            SimTime(10),
            MachineEvent::Insider(super::super::Ev::SlotDone(3)),
        );
        let (t, ev) = q.pop().unwrap();
        assert!(matches!(ev, MachineEvent::Timer) && t == SimTime(10));
        w.after_event(true, t, q.pending_now());
        assert!(!w.turned, "the drive event at 10 comes first");
        let mut out = Vec::new();
        w.reached_calls(t, q.pending_now(), &mut out);
        assert!(out.is_empty());
        q.pop().unwrap();
        w.after_event(false, t, q.pending_now());
        assert!(w.turned && w.due);
        w.reached_calls(t, q.pending_now(), &mut out);
        assert_eq!(out, vec![1, 2]);
        w.disarm(SimTime(10), 1);
        out.clear();
        w.reached_calls(t, q.pending_now(), &mut out);
        assert_eq!(out, vec![2], "a deadline stands until its call is resumed");
        w.check_invariants();
    }
}
