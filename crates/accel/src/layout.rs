//! Where each instance's data sections live in the device's logical space (what Flashvisor
//! maps them onto, §4.3), and which ranges must hold data before the run.
//!
//! Every section starts on a page-group boundary. Read-only (`Input`) sections are shared by
//! all instances of the same kernel — they process the same input file, and readers share a
//! range lock — which keeps 24-instance mixes of 2.5 GiB kernels within the 32 GB backbone;
//! `Output` and `InOut` sections are private to each instance. The inputs (`Input` and
//! `InOut` sections) are written before the timed run (preconditioning, not timed) so that
//! screens read real mapped pages.

use crate::error::AccelError;
use crate::plan::KernelPlan;
use nearflash_kernels::Access;
use std::collections::BTreeMap;
use std::ops::Range;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    pub group_bytes: u64,
    /// Per instance, per section: its logical byte offset.
    pub offsets: Vec<Vec<u64>>,
    /// Logical byte ranges to write before the run, group aligned.
    pub preload: Vec<Range<u64>>,
    /// One past the last byte used.
    pub end_bytes: u64,
}

impl Layout {
    /// Places instances (`instance_plans[i]` = index into `plans`) one after another.
    pub fn place(
        plans: &[KernelPlan],
        instance_plans: &[usize],
        group_bytes: u64,
        capacity_bytes: u64,
    ) -> Result<Layout, AccelError> {
        assert!(group_bytes > 0 && group_bytes % 512 == 0);
        let mut next = 0u64;
        let mut shared: BTreeMap<(usize, usize), u64> = BTreeMap::new();
        let mut preload = Vec::new();
        let mut offsets = Vec::with_capacity(instance_plans.len());
        for &p in instance_plans {
            let mut v = Vec::new();
            for (s, sec) in plans[p].desc.sections.iter().enumerate() {
                let len = sec.bytes.div_ceil(group_bytes) * group_bytes;
                let mut alloc = |preload: &mut Vec<Range<u64>>, load: bool| {
                    let at = next;
                    next += len;
                    if load && len > 0 {
                        preload.push(at..at + len);
                    }
                    at
                };
                let at = match sec.access {
                    Access::Input => *shared
                        .entry((p, s))
                        .or_insert_with(|| alloc(&mut preload, true)),
                    Access::InOut => alloc(&mut preload, true),
                    Access::Output => alloc(&mut preload, false),
                };
                v.push(at);
            }
            offsets.push(v);
        }
        if next > capacity_bytes {
            return Err(AccelError::DoesNotFit {
                needed_bytes: next,
                capacity_bytes,
            });
        }
        Ok(Layout {
            group_bytes,
            offsets,
            preload,
            end_bytes: next,
        })
    }

    /// Absolute page-group range of a section-relative group run.
    pub fn groups(&self, instance: usize, section: usize, run: &Range<u64>) -> Range<u64> {
        let base = self.offsets[instance][section] / self.group_bytes;
        base + run.start..base + run.end
    }

    /// Absolute page-group range of a whole section (empty sections take none).
    pub fn section_groups(&self, instance: usize, section: usize, bytes: u64) -> Range<u64> {
        let base = self.offsets[instance][section] / self.group_bytes;
        base..base + bytes.div_ceil(self.group_bytes)
    }
}
