//! What one kernel type costs, precomputed once from the kernels crate and shared by all its
//! instances: per unit (screen, or serial microblock) the compute time on an LWP and the page
//! groups of each data section it reads and writes. Flashvisor moves data in page groups
//! (§4.3: 64 KiB = 4 channels × 2 planes × 8 KiB), so footprints are rounded out to whole
//! groups and adjacent groups merged into runs.

use crate::chain::Shape;
use crate::config::AccelConfig;
use crate::cost_model::CostSource;
use crate::error::AccelError;
use nearflash_kernels::{cost, footprint, Extent, Kernel, KernelDesc, MicroblockKind};
use std::ops::Range;

/// Runs of page groups of one section (section-relative group indices).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GroupRuns {
    pub runs: Vec<(usize, Range<u64>)>,
}

impl GroupRuns {
    fn from_extents<'a>(extents: impl Iterator<Item = &'a Extent>, group_bytes: u64) -> Self {
        let mut all: Vec<(usize, Range<u64>)> = Vec::new();
        for e in extents.filter(|e| e.count > 0 && e.len_bytes > 0) {
            if e.count == 1 || e.stride_bytes <= group_bytes {
                // Consecutive intervals never skip a group: one run covers them all.
                all.push((
                    e.section,
                    e.offset_bytes / group_bytes..(e.end_bytes() - 1) / group_bytes + 1,
                ));
            } else {
                all.extend(e.intervals().map(|r| {
                    (
                        e.section,
                        r.start / group_bytes..(r.end - 1) / group_bytes + 1,
                    )
                }));
            }
        }
        all.sort_by_key(|(s, r)| (*s, r.start));
        let mut runs: Vec<(usize, Range<u64>)> = Vec::new();
        for (s, r) in all {
            match runs.last_mut() {
                Some((ls, lr)) if *ls == s && r.start <= lr.end => lr.end = lr.end.max(r.end),
                _ => runs.push((s, r)),
            }
        }
        GroupRuns { runs }
    }

    pub fn groups(&self) -> u64 {
        self.runs.iter().map(|(_, r)| r.end - r.start).sum()
    }
}

/// Granularity of an LWP's DDR3L traffic: one 64-byte cache line.
pub const DDR_LINE_BYTES: u64 = 64;

#[derive(Clone, Debug)]
pub struct UnitPlan {
    pub compute_ns: u64,
    /// The page groups the unit reads / writes (what moves between flash and DDR3L).
    pub reads: GroupRuns,
    pub writes: GroupRuns,
    /// The bytes the LWP itself reads / writes in DDR3L: its footprint in 64-byte lines.
    pub read_line_bytes: u64,
    pub write_line_bytes: u64,
}

#[derive(Clone, Debug)]
pub struct KernelPlan {
    pub desc: KernelDesc,
    /// Where the units' instruction counts come from (`[accel] cost_model`).
    pub cost_source: CostSource,
    /// `units[mb][screen]`; a serial microblock has one unit.
    pub units: Vec<Vec<UnitPlan>>,
}

impl KernelPlan {
    pub fn new(k: &dyn Kernel, cfg: &AccelConfig, group_bytes: u64) -> Result<Self, AccelError> {
        let desc = k.desc().clone();
        if desc.microblocks.is_empty() {
            return Err(AccelError::NoMicroblocks {
                kernel: desc.name.into(),
            });
        }
        let cost_source = CostSource::of(k, cfg.cost_model);
        let mut units = Vec::with_capacity(desc.microblocks.len());
        for (mb, m) in desc.microblocks.iter().enumerate() {
            let n = match m.kind {
                MicroblockKind::Serial => 1,
                MicroblockKind::Screens(0) => {
                    return Err(AccelError::ZeroScreens {
                        kernel: desc.name.into(),
                        microblock: mb,
                    })
                }
                MicroblockKind::Screens(n) => n,
            };
            let mut v = Vec::with_capacity(n as usize);
            for s in 0..n {
                let unit_instructions = cost_source.instructions(cost(k, mb, s)?.instructions);
                let io = footprint(k, mb, s)?;
                let lines = |f: fn(&&Extent) -> bool| {
                    GroupRuns::from_extents(io.iter().filter(f), DDR_LINE_BYTES).groups()
                        * DDR_LINE_BYTES
                };
                v.push(UnitPlan {
                    compute_ns: cfg.compute_ns(unit_instructions),
                    reads: GroupRuns::from_extents(io.iter().filter(|e| e.reads()), group_bytes),
                    writes: GroupRuns::from_extents(io.iter().filter(|e| e.writes()), group_bytes),
                    read_line_bytes: lines(|e| e.reads()),
                    write_line_bytes: lines(|e| e.writes()),
                });
            }
            units.push(v);
        }
        Ok(KernelPlan {
            desc,
            cost_source,
            units,
        })
    }

    pub fn shape(&self, app: usize) -> Shape {
        Shape {
            app,
            units_per_mb: self.units.iter().map(|m| m.len() as u32).collect(),
        }
    }

    pub fn unit(&self, mb: usize, screen: u32) -> &UnitPlan {
        &self.units[mb][screen as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nearflash_kernels::Access;

    fn ext(offset: u64, len: u64, stride: u64, count: u64) -> Extent {
        Extent {
            section: 0,
            offset_bytes: offset,
            len_bytes: len,
            stride_bytes: stride,
            count,
            access: Access::Input,
        }
    }

    #[test]
    fn extents_round_out_to_groups_and_merge() {
        let g = 100;
        let e = [ext(50, 100, 0, 1), ext(250, 10, 0, 1)];
        let r = GroupRuns::from_extents(e.iter(), g);
        assert_eq!(r.runs, vec![(0, 0..3)]);
        // A column block: 8 bytes every 1000 bytes, 3 rows → groups 0, 10, 20.
        let r = GroupRuns::from_extents([ext(0, 8, 1000, 3)].iter(), g);
        assert_eq!(r.runs, vec![(0, 0..1), (0, 10..11), (0, 20..21)]);
        assert_eq!(r.groups(), 3);
    }
}
