//! Compute engines of the drive (§3.2.2, §5.5), on the shared cost model of `nearflash-hw`.
//! FPGA-like slots: each program has its own hardware and streams `slot_bytes_per_cycle ×
//! clock`; slots run side by side, so each is its own FIFO server. Cores: every program shares
//! the same few cores, time-shared; a chunk runs on the core that frees first for `bytes ×
//! instructions_per_byte × CPI ÷ clock` (§5.5 assumes
//! perfect IPC and perfect parallelism, which chunk-level scheduling over all cores gives).
//! Slot 0 is the hardware pass-through of ordinary firmware reads in both cases. A program that
//! meters itself (a WebAssembly module's fuel) is charged its measured instructions per chunk
//! instead (`run_metered`).

use crate::config::{EngineKind, InsiderConfig};
use nearflash_hw::compute::{CoreSpec, SlotSpec, TimeSharedCores};
use nearflash_hw::server::{transfer, FifoServer};
use nearflash_sim::SimTime;
use nearflash_stream::WorkCost;

/// The pass-through slot accepts one 64-byte flit per cycle.
pub const PASS_THROUGH_BYTES_PER_CYCLE: f64 = 64.0;

/// CPI of the soft core a WebAssembly program runs on inside a slot: a single-issue in-order
/// pipeline (MicroBlaze-class) issues one instruction per cycle when it does not stall; as
/// §5.5's perfect-IPC assumption for the ARM cores, stalls are not modelled (an assumption).
pub const SOFT_CORE_CPI: f64 = 1.0;

pub struct Engines {
    kind: EngineKind,
    slot: SlotSpec,
    core: CoreSpec,
    /// Index 0 is the pass-through slot; 1..=app_slots the application slots.
    slots: Vec<FifoServer>,
    cores: TimeSharedCores,
}

impl Engines {
    pub fn new(cfg: &InsiderConfig) -> Engines {
        Engines {
            kind: cfg.engine,
            slot: cfg.slot(),
            core: cfg.core(),
            slots: vec![FifoServer::default(); cfg.app_slots as usize + 1],
            cores: TimeSharedCores::new(cfg.core_count as usize),
        }
    }

    pub fn kind(&self) -> EngineKind {
        self.kind
    }

    /// The rate at which `cost` streams on this engine for one program, MB/s (for cores: one
    /// core), capped by a throttle.
    pub fn rate_mb_s(&self, cost: WorkCost, throttle_mb_s: Option<f64>) -> f64 {
        let r = match self.kind {
            EngineKind::Slots => self.slot.rate_mb_s(cost.slot_bytes_per_cycle),
            EngineKind::Cores => self.core.rate_mb_s(cost.instructions_per_byte),
        };
        throttle_mb_s.map_or(r, |t| r.min(t))
    }

    /// Runs `bytes` of a program in `slot` from `now`; returns when done.
    pub fn run(
        &mut self,
        slot: usize,
        bytes: u64,
        cost: WorkCost,
        throttle_mb_s: Option<f64>,
        now: SimTime,
    ) -> SimTime {
        let service = transfer(bytes, self.rate_mb_s(cost, throttle_mb_s));
        match self.kind {
            EngineKind::Slots => self.slots[slot].serve(now, service),
            EngineKind::Cores => self.cores.run(now, service),
        }
    }

    /// Runs `instructions` a self-metering program (WebAssembly: its fuel) executed on one
    /// chunk, in `slot` from `now`; returns when done. On cores: instructions × CPI ÷ clock on
    /// the core that frees first. In a slot: the module runs on a soft core built in the
    /// slot's logic, at the slot's clock with `SOFT_CORE_CPI`.
    pub fn run_metered(&mut self, slot: usize, instructions: f64, now: SimTime) -> SimTime {
        match self.kind {
            EngineKind::Slots => {
                let soft = CoreSpec::new(self.slot.clock_mhz, SOFT_CORE_CPI);
                self.slots[slot].serve(now, soft.duration(instructions))
            }
            EngineKind::Cores => self.cores.run(now, self.core.duration(instructions)),
        }
    }

    /// Passes `bytes` of an ordinary firmware read through slot 0.
    pub fn pass_through(&mut self, bytes: u64, now: SimTime) -> SimTime {
        let service = self.slot.duration(bytes, PASS_THROUGH_BYTES_PER_CYCLE);
        self.slots[0].serve(now, service)
    }

    /// Busy time of the engines that run programs (slots 1.. or the cores).
    pub fn busy_ns(&self) -> Vec<u64> {
        match self.kind {
            EngineKind::Slots => self.slots[1..].iter().map(FifoServer::busy_ns).collect(),
            EngineKind::Cores => self.cores.busy_ns(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_run_side_by_side_cores_are_shared() {
        let cost = WorkCost {
            slot_bytes_per_cycle: 64.0,
            instructions_per_byte: 1.0,
        };
        let mut cfg = InsiderConfig::default();
        let mut e = Engines::new(&cfg);
        // 16 GB/s per slot: 16 kB in 1 us, two slots in parallel.
        assert_eq!(e.run(1, 16_000, cost, None, SimTime::ZERO).as_ns(), 1000);
        assert_eq!(e.run(2, 16_000, cost, None, SimTime::ZERO).as_ns(), 1000);
        assert_eq!(
            e.run(1, 16_000, cost, Some(8000.0), SimTime::ZERO).as_ns(),
            3000
        );
        cfg.engine = EngineKind::Cores;
        cfg.core_count = 2;
        let mut e = Engines::new(&cfg);
        // One core: 2000 MHz / (1 instr × 1/3 CPI) = 6 GB/s; the third chunk waits.
        let t: Vec<u64> = (0..3)
            .map(|s| e.run(s % 3 + 1, 6000, cost, None, SimTime::ZERO).as_ns())
            .collect();
        assert_eq!(t, vec![1000, 1000, 2000]);
    }
}
