//! Instruction-count cost model. A screen's cost is derived from its loop structure, on an
//! abstract load/store RISC machine (the LWPs are TI C66x DSPs per seed 000 §3; we do not
//! model VLIW packing — the engine's CPI does that):
//!
//! - every arithmetic, compare, convert or sqrt operation is one instruction (`ops`);
//!   a fused multiply-add is one instruction; divides are one instruction (the engine's CPI
//!   accounts for latency, not this count);
//! - every array element read is one load, every element write one store, and each load or
//!   store is itself one instruction; addresses use base+index addressing, so no separate
//!   address arithmetic is counted; scalars live in registers;
//! - a loop costs `LOOP_SETUP` once (set index, load bound) plus `LOOP_OVERHEAD` per
//!   iteration (increment index, compare-and-branch);
//! - a data-dependent branch (`if`) is one instruction.
//!
//! Example, a dot product of length n: per iteration 2 loads + 1 fma + 2 loop overhead
//! = 5 instructions, 2 of them loads; `looped(n, ld(2) + ops(1))`.
//!
//! From the totals: B/KI = input bytes ÷ (instructions ÷ 1000) (Table 2's "data volume per
//! thousand instructions"), and LD/ST ratio = (loads + stores) ÷ instructions.
//! Counts are never tuned towards Table 2; `table2` reports the gap.

use serde::Serialize;
use std::ops::{Add, AddAssign};

/// Per-iteration loop overhead: increment the index, compare-and-branch.
pub const LOOP_OVERHEAD: u64 = 2;
/// Once per loop: initialise the index, load the bound.
pub const LOOP_SETUP: u64 = 2;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Cost {
    pub instructions: u64,
    pub loads: u64,
    pub stores: u64,
}

impl Cost {
    pub const ZERO: Cost = Cost {
        instructions: 0,
        loads: 0,
        stores: 0,
    };

    pub fn times(self, n: u64) -> Cost {
        Cost {
            instructions: self.instructions * n,
            loads: self.loads * n,
            stores: self.stores * n,
        }
    }

    /// (loads + stores) ÷ instructions, in percent.
    pub fn ldst_ratio_pct(&self) -> f64 {
        if self.instructions == 0 {
            return 0.0;
        }
        100.0 * (self.loads + self.stores) as f64 / self.instructions as f64
    }

    /// Bytes per kilo-instruction for `bytes` of data processed.
    pub fn bytes_per_kilo_instruction(&self, bytes: u64) -> f64 {
        if self.instructions == 0 {
            return 0.0;
        }
        bytes as f64 * 1000.0 / self.instructions as f64
    }
}

impl Add for Cost {
    type Output = Cost;
    fn add(self, o: Cost) -> Cost {
        Cost {
            instructions: self.instructions + o.instructions,
            loads: self.loads + o.loads,
            stores: self.stores + o.stores,
        }
    }
}

impl AddAssign for Cost {
    fn add_assign(&mut self, o: Cost) {
        *self = *self + o;
    }
}

impl std::iter::Sum for Cost {
    fn sum<I: Iterator<Item = Cost>>(iter: I) -> Cost {
        iter.fold(Cost::ZERO, |a, b| a + b)
    }
}

/// `n` arithmetic / compare / branch instructions.
pub const fn ops(n: u64) -> Cost {
    Cost {
        instructions: n,
        loads: 0,
        stores: 0,
    }
}

/// `n` loads.
pub const fn ld(n: u64) -> Cost {
    Cost {
        instructions: n,
        loads: n,
        stores: 0,
    }
}

/// `n` stores.
pub const fn st(n: u64) -> Cost {
    Cost {
        instructions: n,
        loads: 0,
        stores: n,
    }
}

/// A loop of `iters` iterations around `body`.
pub fn looped(iters: u64, body: Cost) -> Cost {
    ops(LOOP_SETUP) + (body + ops(LOOP_OVERHEAD)).times(iters)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_product_costs_five_per_element() {
        let c = looped(100, ld(2) + ops(1));
        assert_eq!(c.instructions, LOOP_SETUP + 500);
        assert_eq!(c.loads, 200);
        assert!((c.ldst_ratio_pct() - 200.0 / 502.0 * 100.0).abs() < 1e-12);
    }
}
