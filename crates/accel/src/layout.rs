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
    /// Bytes the run would need for every instance to have flash of its own: the shared
    /// inputs and every instance's private sections, group aligned.
    pub own_flash_bytes: u64,
    /// The logical bytes it was placed on.
    pub capacity_bytes: u64,
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
        let mut own_flash_bytes = private_start;
        for &p in instance_plans {
            let sections = &plans[p].desc.sections;
            let block: u64 = sections
                .iter()
                .filter(|s| s.access != Access::Input)
                .map(|s| aligned(s.bytes))
                .sum();
            own_flash_bytes += block;
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
            own_flash_bytes,
            capacity_bytes,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::AccelConfig;
    use nearflash_kernels::{build, Dataset, ScreenPlan};

    #[test]
    fn instances_get_flash_of_their_own_until_the_device_is_full_then_reuse_the_earliest() {
        let group = 64 << 10;
        let k = build("atax", Dataset::Mini, ScreenPlan::default()).unwrap();
        let plan = KernelPlan::new(k.as_ref(), &AccelConfig::default(), group).unwrap();
        let aligned = |b: u64| b.div_ceil(group) * group;
        let (shared, private): (u64, u64) = plan.desc.sections.iter().fold((0, 0), |(s, p), x| {
            if x.access == Access::Input {
                (s + aligned(x.bytes), p)
            } else {
                (s, p + aligned(x.bytes))
            }
        });
        assert!(private > 0, "atax writes private outputs");
        let plans = [plan];
        let roomy = Layout::place(&plans, &[0; 4], group, 1 << 40).unwrap();
        assert_eq!(roomy.reused_instances, 0);
        assert_eq!(roomy.own_flash_bytes, shared + 4 * private);
        assert_eq!(roomy.end_bytes, roomy.own_flash_bytes);
        // Room for the shared inputs and two private blocks: instances 2 and 3 wrap onto
        // the flash of instances 0 and 1.
        let tight = Layout::place(&plans, &[0; 4], group, shared + 2 * private).unwrap();
        assert_eq!(tight.reused_instances, 2);
        assert_eq!(tight.own_flash_bytes, roomy.own_flash_bytes);
        assert_eq!(tight.offsets[2], tight.offsets[0]);
        assert_eq!(tight.offsets[3], tight.offsets[1]);
        let e = Layout::place(&plans, &[0], group, shared + private - group).unwrap_err();
        assert!(matches!(e, AccelError::DoesNotFit { .. }), "{e}");
    }
}
