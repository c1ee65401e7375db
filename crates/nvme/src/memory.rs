//! Memory endpoints a DMA can target — host DRAM or a peer device's BAR/DRAM — and the DMA
//! itself across the NVMe device's link. Each endpoint has a port: a FIFO of accesses with
//! its own bandwidth, so a peer-to-peer transfer into a slow device memory is bounded by
//! that memory, and many devices writing into host DRAM share its port.
//!
//! A DMA streams: the port starts as the first bytes cross the link (cut-through), and the
//! transfer is done when both the link and the port have handled the last byte.

use crate::config::MemoryPortConfig;
use nearflash_hw::link::{Direction, Link};
use nearflash_sim::{SimDuration, SimTime};

/// Which memory a DMA targets: 0 is host DRAM, others are peers added with
/// [`crate::Nvme::add_endpoint`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EndpointId(pub u16);

impl EndpointId {
    pub const HOST: EndpointId = EndpointId(0);
}

#[derive(Clone, Debug)]
pub struct MemoryPort {
    cfg: MemoryPortConfig,
    busy_until: SimTime,
    busy_ns: u64,
    bytes: u64,
}

impl MemoryPort {
    pub fn new(cfg: MemoryPortConfig) -> Self {
        MemoryPort {
            cfg,
            busy_until: SimTime::ZERO,
            busy_ns: 0,
            bytes: 0,
        }
    }

    /// Serves `bytes` starting no earlier than `at`; returns (start, end of the last byte's
    /// access, including the memory's latency).
    fn serve(&mut self, at: SimTime, bytes: u64) -> (SimTime, SimTime) {
        let service =
            SimDuration::from_ns((bytes as f64 * 1000.0 / self.cfg.bandwidth_mb_s).ceil() as u64);
        let start = self.busy_until.max(at);
        self.busy_until = start + service;
        self.busy_ns += service.as_ns();
        self.bytes += bytes;
        (
            start,
            self.busy_until + SimDuration::from_ns(self.cfg.latency_ns),
        )
    }

    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    pub fn busy_ns(&self) -> u64 {
        self.busy_ns
    }
}

/// The device writes `bytes` into `port`'s memory (read data, a completion entry): posted
/// writes going up the link. Returns when the last byte is in memory.
pub fn dma_to_memory(link: &mut Link, port: &mut MemoryPort, now: SimTime, bytes: u64) -> SimTime {
    let t = link.transfer(now, Direction::Up, bytes);
    let lat = SimDuration::from_ns(link.config().latency_ns);
    let (_, port_done) = port.serve(t.start + lat, bytes);
    let done = t.arrives.max(port_done);
    assert!(done > now, "a DMA takes time");
    done
}

/// The device reads `bytes` from `port`'s memory (a command, write data): a read request
/// goes up, the completions carry the data down. Returns when the last byte is in the
/// device.
pub fn dma_from_memory(
    link: &mut Link,
    port: &mut MemoryPort,
    now: SimTime,
    bytes: u64,
) -> SimTime {
    let request = link.transfer(now, Direction::Up, 0);
    let (port_start, port_done) = port.serve(request.arrives, bytes);
    let first_byte = port_start + SimDuration::from_ns(port.cfg.latency_ns);
    let data = link.transfer(first_byte, Direction::Down, bytes);
    let lat = SimDuration::from_ns(link.config().latency_ns);
    let done = data.arrives.max(port_done + lat);
    assert!(done > request.arrives, "data follows its request");
    done
}

#[cfg(test)]
mod tests {
    use super::*;
    use nearflash_hw::link::LinkConfig;

    #[test]
    fn a_slow_peer_memory_bounds_a_peer_to_peer_dma() {
        let mut link = Link::new(LinkConfig::default()).unwrap();
        // 1 GB/s: 128 KiB takes 131 µs, far longer than the ×4 Gen3 link's ≈35 µs.
        let mut slow = MemoryPort::new(MemoryPortConfig {
            bandwidth_mb_s: 1000.0,
            latency_ns: 0,
        });
        let done = dma_to_memory(&mut link, &mut slow, SimTime::ZERO, 128 << 10);
        assert_eq!(done.as_ns(), 250 + 131_072);
        let mut fast = MemoryPort::new(MemoryPortConfig::host_dram());
        let mut link = Link::new(LinkConfig::default()).unwrap();
        let done = dma_to_memory(&mut link, &mut fast, SimTime::ZERO, 128 << 10);
        let wire = LinkConfig::default().wire_time(128 << 10).as_ns();
        assert_eq!(done.as_ns(), wire + 250, "the link bounds it");
    }

    #[test]
    fn a_read_from_memory_is_a_request_up_then_data_down() {
        let cfg = LinkConfig::default();
        let mut link = Link::new(cfg.clone()).unwrap();
        let mut dram = MemoryPort::new(MemoryPortConfig::host_dram());
        let done = dma_from_memory(&mut link, &mut dram, SimTime::ZERO, 64);
        // Request: 24 B header ≈ 7 ns + 250 ns; DRAM 80 ns; data 64 + 24 B ≈ 23 ns + 250 ns.
        let req = cfg.wire_time(0).as_ns() + 250;
        let expect = req + 80 + cfg.wire_time(64).as_ns() + 250;
        assert_eq!(done.as_ns(), expect);
        assert_eq!(link.stats(Direction::Up).payload_bytes, 0);
        assert_eq!(link.stats(Direction::Down).payload_bytes, 64);
    }
}
