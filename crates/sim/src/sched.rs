//! Scheduling, the one interface between a component and the clock.
//!
//! A component is a sans-IO state machine (the quinn-proto shape): it is handed `now` and an
//! event of its *own* type, and answers by scheduling more of its own events through a
//! [`Schedule`]. A machine that composes components has an event enum with one variant per
//! component and hands each component a [`Mapped`] view of its queue that wraps the
//! component's events into that variant — so no component ever sees, or smuggles events
//! through, another's type. The same components run under the simulation loop
//! ([`crate::Sim`]) and under a wall-clock loop: both only need something that implements
//! `Schedule`.

use crate::queue::EventQueue;
use crate::time::{SimDuration, SimTime};

/// Something that accepts events of type `E` for later delivery.
pub trait Schedule<E> {
    /// The current simulated time.
    fn now(&self) -> SimTime;

    /// Delivers `event` at absolute time `at`, which must not be in the past.
    fn schedule_at(&mut self, at: SimTime, event: E);

    /// Delivers `event` `delay` after now.
    fn schedule_in(&mut self, delay: SimDuration, event: E) {
        let at = self.now() + delay;
        self.schedule_at(at, event);
    }

    /// A view of this scheduler for a component whose events `wrap` turns into ours.
    fn map<C, F>(&mut self, wrap: F) -> Mapped<'_, Self, F>
    where
        Self: Sized,
        F: Fn(C) -> E,
    {
        Mapped { inner: self, wrap }
    }
}

impl<E> Schedule<E> for EventQueue<E> {
    #[inline]
    fn now(&self) -> SimTime {
        EventQueue::now(self)
    }

    #[inline]
    fn schedule_at(&mut self, at: SimTime, event: E) {
        EventQueue::schedule_at(self, at, event);
    }
}

/// A parent's scheduler seen by one of its components: events of the component's type `C`
/// are wrapped into the parent's type by `wrap` (usually an enum variant constructor).
pub struct Mapped<'a, S: ?Sized, F> {
    inner: &'a mut S,
    wrap: F,
}

impl<S, F, C, P> Schedule<C> for Mapped<'_, S, F>
where
    S: Schedule<P> + ?Sized,
    F: Fn(C) -> P,
{
    #[inline]
    fn now(&self) -> SimTime {
        self.inner.now()
    }

    #[inline]
    fn schedule_at(&mut self, at: SimTime, event: C) {
        let wrapped = (self.wrap)(event);
        self.inner.schedule_at(at, wrapped);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq)]
    enum Child {
        Tick(u32),
    }

    #[derive(Debug, PartialEq)]
    enum Parent {
        A(Child),
        B(Child),
    }

    fn child_component(s: &mut impl Schedule<Child>, n: u32) {
        s.schedule_in(SimDuration(10 * u64::from(n)), Child::Tick(n));
    }

    #[test]
    fn mapped_views_wrap_each_components_events_into_its_variant() {
        let mut q: EventQueue<Parent> = EventQueue::new();
        child_component(&mut q.map(Parent::A), 2);
        child_component(&mut q.map(Parent::B), 1);
        assert_eq!(q.pop(), Some((SimTime(10), Parent::B(Child::Tick(1)))));
        assert_eq!(q.pop(), Some((SimTime(20), Parent::A(Child::Tick(2)))));
    }

    #[test]
    fn nested_views_compose() {
        #[derive(Debug, PartialEq)]
        enum Top {
            P(Parent),
        }
        let mut q: EventQueue<Top> = EventQueue::new();
        {
            let mut p = q.map(Top::P);
            let mut a = p.map(Parent::A);
            assert_eq!(a.now(), SimTime::ZERO);
            child_component(&mut a, 3);
        }
        assert_eq!(
            q.pop(),
            Some((SimTime(30), Top::P(Parent::A(Child::Tick(3)))))
        );
    }
}
