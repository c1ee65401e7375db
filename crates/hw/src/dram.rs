//! A DRAM port: the one path into a memory (an accelerator's DDR3L, a drive's DDR), a FIFO
//! server whose service time is the bytes moved at the port's bandwidth. Requests queue
//! behind each other; busy time and its series feed utilization and energy.

use crate::series::TimeBins;
use crate::server::{transfer, FifoServer};
use nearflash_sim::SimTime;

#[derive(Clone, Debug)]
pub struct DramPort {
    bandwidth_mb_s: f64,
    server: FifoServer,
}

impl DramPort {
    /// A port moving `bandwidth_mb_s` (10^6 bytes per second); configs validate it positive.
    pub fn new(bandwidth_mb_s: f64) -> DramPort {
        assert!(
            bandwidth_mb_s.is_finite() && bandwidth_mb_s > 0.0,
            "a DRAM port's bandwidth is validated positive, got {bandwidth_mb_s} MB/s"
        );
        DramPort {
            bandwidth_mb_s,
            server: FifoServer::default(),
        }
    }

    /// Moves `bytes` through the port from `now` (after the transfers queued before);
    /// returns when they are through.
    pub fn access(&mut self, now: SimTime, bytes: u64) -> SimTime {
        self.server.serve(now, transfer(bytes, self.bandwidth_mb_s))
    }

    pub fn start_series(&mut self, origin: SimTime) {
        self.server.start_series(origin);
    }

    pub fn bins(&self) -> &TimeBins {
        self.server.bins()
    }

    pub fn busy_ns(&self) -> u64 {
        self.server.busy_ns()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nearflash_sim::SimDuration;

    #[test]
    fn accesses_queue_at_the_port_bandwidth() {
        let mut p = DramPort::new(6400.0);
        assert_eq!(p.access(SimTime::ZERO, 6400).as_ns(), 1000);
        assert_eq!(
            p.access(SimTime::ZERO, 3200).as_ns(),
            1500,
            "waits for the first"
        );
        let later = SimTime::ZERO + SimDuration::from_ns(10_000);
        assert_eq!(p.access(later, 64).as_ns(), 10_010);
        assert_eq!(p.busy_ns(), 1510);
    }
}
