//! Where each instance's data sections live in the device's logical space (what Flashvisor
//! maps them onto, §4.3), and which ranges must hold data before the run.
//!
//! Every section starts on a page-group boundary (see `Layout::place` for what happens when
//! the instances outgrow the device). Read-only (`Input`) sections are shared by
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
    /// Instances placed on flash already mapped by an earlier instance (space ran out).
    pub reused_instances: usize,
}

impl Layout {
    /// Places instances (`instance_plans[i]` = index into `plans`): the shared inputs of
    /// every kernel first, then each instance's private sections in one block after another.
    /// When the private blocks outgrow the device, placement wraps around to the start of the
    /// private area, so a later instance maps the same flash as an earlier one and its write
    /// locks wait until the earlier instance has finished (§4.3: a mapping for writes is
    /// blocked while the range is mapped by another kernel). Only an instance that cannot fit
    /// at all (with the shared inputs) is an error.
    pub fn place(
        plans: &[KernelPlan],
        instance_plans: &[usize],
        group_bytes: u64,
        capacity_bytes: u64,
    ) -> Result<Layout, AccelError> {
        assert!(group_bytes > 0 && group_bytes.is_multiple_of(512));
        let aligned = |bytes: u64| bytes.div_ceil(group_bytes) * group_bytes;
        let mut next = 0u64;
        let mut shared: BTreeMap<(usize, usize), u64> = BTreeMap::new();
        let mut preload = Vec::new();
        for &p in instance_plans {
            for (s, sec) in plans[p].desc.sections.iter().enumerate() {
                if sec.access == Access::Input && !shared.contains_key(&(p, s)) {
                    shared.insert((p, s), next);
                    if sec.bytes > 0 {
                        preload.push(next..next + aligned(sec.bytes));
                    }
                    next += aligned(sec.bytes);
                }
            }
        }
        let private_start = next;
        let mut offsets = Vec::with_capacity(instance_plans.len());
        let mut end_bytes = next;
        let mut reused_instances = 0;
        let mut wrapped = false;
        for &p in instance_plans {
            let sections = &plans[p].desc.sections;
            let block: u64 = sections
                .iter()
                .filter(|s| s.access != Access::Input)
                .map(|s| aligned(s.bytes))
                .sum();
            if private_start + block > capacity_bytes {
                return Err(AccelError::DoesNotFit {
                    needed_bytes: private_start + block,
                    capacity_bytes,
                });
            }
            if next + block > capacity_bytes {
                next = private_start;
                wrapped = true;
            }
            reused_instances += usize::from(wrapped);
            let mut v = Vec::with_capacity(sections.len());
            for (s, sec) in sections.iter().enumerate() {
                if sec.access == Access::Input {
                    v.push(shared[&(p, s)]);
                    continue;
                }
                v.push(next);
                if sec.access == Access::InOut && sec.bytes > 0 {
                    preload.push(next..next + aligned(sec.bytes));
                }
                next += aligned(sec.bytes);
            }
            end_bytes = end_bytes.max(next);
            offsets.push(v);
        }
        Ok(Layout {
            group_bytes,
            offsets,
            preload,
            end_bytes,
            reused_instances,
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
