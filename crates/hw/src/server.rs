//! A FIFO server: one contended piece of hardware (an LWP, the DDR3L port, the PCIe link).
//! A request occupies it for its service time, starting when it is free; the caller schedules
//! the completion event at the returned time. Busy time accumulates per server so that
//! utilization — and later energy (active power × busy + idle power × the rest) — is
//! measured from the served requests, never from a formula over the workload.

use crate::series::TimeBins;
use nearflash_sim::{SimDuration, SimTime};

#[derive(Clone, Debug, Default)]
pub struct FifoServer {
    busy_until: SimTime,
    busy_ns: u64,
    served: u64,
    bins: TimeBins,
}

impl FifoServer {
    /// Queue a request of `service` at `now`; returns when it finishes.
    pub fn serve(&mut self, now: SimTime, service: SimDuration) -> SimTime {
        let start = self.busy_until.max(now);
        self.busy_until = start + service;
        self.busy_ns += service.as_ns();
        self.served += 1;
        self.bins.add(start, self.busy_until);
        self.busy_until
    }

    /// Record busy time from `start` for `ns` that another component timed (an LWP
    /// computing a screen).
    pub fn account(&mut self, start: SimTime, ns: u64) {
        self.busy_ns += ns;
        self.served += 1;
        self.bins.add(start, start + SimDuration::from_ns(ns));
    }

    /// Record `ns` of busy time that another component timed somewhere within `[start,
    /// end)` (a sampled counter's increase, e.g. a multi-core host's CPU time over an I/O,
    /// which may exceed the span when several cores worked), spread evenly over that span
    /// in the time series.
    pub fn account_spread(&mut self, start: SimTime, end: SimTime, ns: u64) {
        self.busy_ns += ns;
        self.served += 1;
        self.bins.add_spread(start, end, ns);
    }

    /// Starts the time series at `origin` (the start of the timed run).
    pub fn start_series(&mut self, origin: SimTime) {
        self.bins.reset(origin);
    }

    /// Busy time per bin since `start_series`.
    pub fn bins(&self) -> &TimeBins {
        &self.bins
    }

    /// When the server finishes the work queued so far.
    pub fn free_at(&self) -> SimTime {
        self.busy_until
    }

    pub fn busy_ns(&self) -> u64 {
        self.busy_ns
    }

    pub fn served(&self) -> u64 {
        self.served
    }
}

/// Service time of `bytes` over a link of `mb_s` (10^6 bytes per second), rounded up.
pub fn transfer(bytes: u64, mb_s: f64) -> SimDuration {
    assert!(mb_s > 0.0, "bandwidth is validated positive");
    SimDuration::from_ns((bytes as f64 * 1000.0 / mb_s).ceil() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_queue_behind_each_other() {
        let mut s = FifoServer::default();
        let t0 = SimTime::ZERO;
        let a = s.serve(t0, SimDuration::from_ns(100));
        let b = s.serve(t0, SimDuration::from_ns(50));
        assert_eq!(a.as_ns(), 100);
        assert_eq!(b.as_ns(), 150);
        let c = s.serve(
            SimTime::ZERO + SimDuration::from_ns(1000),
            SimDuration::from_ns(10),
        );
        assert_eq!(c.as_ns(), 1010);
        assert_eq!(s.busy_ns(), 160);
    }

    #[test]
    fn spread_busy_time_counts_once_and_leaves_the_queue_alone() {
        let mut s = FifoServer::default();
        let at = |ns| SimTime::ZERO + SimDuration::from_ns(ns);
        s.account_spread(at(0), at(1000), 300);
        assert_eq!(s.busy_ns(), 300);
        assert_eq!(s.free_at(), SimTime::ZERO, "no request was queued");
        assert_eq!(s.bins().rebinned(1000, 1000), vec![300]);
    }

    #[test]
    fn transfer_time_follows_bandwidth() {
        assert_eq!(transfer(6400, 6400.0).as_ns(), 1000);
        assert_eq!(transfer(1, 1000.0).as_ns(), 1);
    }
}
