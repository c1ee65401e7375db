//! Namespaces and memory range sets. The device has one NVM namespace, one memory namespace
//! (the SLM) and one compute namespace per engine. Reachability: every compute namespace
//! reaches the memory namespace and nothing else — a program sees flash only after a Memory
//! Copy has brought it into SLM (the SDC'23 architecture, STANDARDS.md §3.1).
//!
//! A range set is made for one compute namespace from Memory Range Descriptors
//! `{MNSID, length, starting byte}`; each is checked — namespace reachable, inside the
//! memory namespace, on the range granularity — and the set is bounded by MAXMEMR, the sets by
//! MAXMEMRS.

use crate::ebpf::vm::Window;
use crate::error::CommandError;

/// The NVM namespace.
pub const NSID_NVM: u32 = 1;
/// The memory namespace (SLM).
pub const NSID_SLM: u32 = 2;
/// The first compute namespace; engine `i` is `NSID_COMPUTE_FIRST + i`.
pub const NSID_COMPUTE_FIRST: u32 = 3;

/// A Memory Range Descriptor (32 bytes on the wire: MNSID u32, length u32, starting byte u64,
/// 16 reserved).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RangeDescriptor {
    pub nsid: u32,
    pub len_bytes: u32,
    pub start_bytes: u64,
}

/// Bytes of one descriptor as the host transfers it.
pub const DESCRIPTOR_BYTES: u64 = 32;

struct RangeSet {
    owner: u32,
    windows: Vec<Window>,
}

/// The device's range sets.
pub struct RangeSets {
    sets: Vec<Option<RangeSet>>,
    ranges_max: u16,
    granularity_bytes: u64,
    slm_bytes: u64,
    compute_namespaces: u32,
}

impl RangeSets {
    pub fn new(
        sets_max: u16,
        ranges_max: u16,
        granularity_bytes: u64,
        slm_bytes: u64,
        compute_namespaces: u32,
    ) -> Self {
        assert!(sets_max > 0 && ranges_max > 0 && granularity_bytes > 0);
        RangeSets {
            sets: (0..sets_max).map(|_| None).collect(),
            ranges_max,
            granularity_bytes,
            slm_bytes,
            compute_namespaces,
        }
    }

    /// The engine index of compute namespace `nsid`.
    pub fn engine_of(&self, nsid: u32) -> Result<usize, CommandError> {
        nsid.checked_sub(NSID_COMPUTE_FIRST)
            .filter(|&i| i < self.compute_namespaces)
            .map(|i| i as usize)
            .ok_or(CommandError::InvalidNamespace {
                nsid,
                wanted: "compute",
            })
    }

    /// Memory Range Set Management (create): the new set's RSID.
    pub fn create(&mut self, compute: u32, descs: &[RangeDescriptor]) -> Result<u16, CommandError> {
        self.engine_of(compute)?;
        if descs.len() > usize::from(self.ranges_max) {
            return Err(CommandError::TooManyRanges {
                ranges: descs.len(),
                ranges_max: self.ranges_max,
            });
        }
        let mut windows = Vec::with_capacity(descs.len());
        for (index, d) in descs.iter().enumerate() {
            if d.nsid != NSID_SLM {
                let known = d.nsid == NSID_NVM || self.engine_of(d.nsid).is_ok();
                if !known {
                    return Err(CommandError::InvalidNamespace {
                        nsid: d.nsid,
                        wanted: "memory",
                    });
                }
                return Err(CommandError::Unreachable {
                    index,
                    nsid: d.nsid,
                    compute,
                });
            }
            let len = u64::from(d.len_bytes);
            let bad = |reason: String| CommandError::BadRange {
                index,
                start_bytes: d.start_bytes,
                len_bytes: len,
                reason,
            };
            if len == 0 {
                return Err(bad("a range has at least one byte".into()));
            }
            let g = self.granularity_bytes;
            if !d.start_bytes.is_multiple_of(g) || !len.is_multiple_of(g) {
                return Err(bad(format!("not on the MRSG granularity of {g} bytes")));
            }
            if d.start_bytes
                .checked_add(len)
                .is_none_or(|e| e > self.slm_bytes)
            {
                return Err(bad(format!(
                    "past the end of the memory namespace ({} bytes)",
                    self.slm_bytes
                )));
            }
            windows.push(Window {
                start_bytes: d.start_bytes,
                len_bytes: len,
            });
        }
        let Some(free) = self.sets.iter().position(Option::is_none) else {
            return Err(CommandError::TooManyRangeSets {
                sets: self.sets.len() as u16,
            });
        };
        self.sets[free] = Some(RangeSet {
            owner: compute,
            windows,
        });
        Ok(free as u16)
    }

    /// Memory Range Set Management (delete).
    pub fn delete(&mut self, rsid: u16) -> Result<(), CommandError> {
        match self.sets.get_mut(usize::from(rsid)) {
            Some(s @ Some(_)) => {
                *s = None;
                Ok(())
            }
            _ => Err(CommandError::NoRangeSet { rsid }),
        }
    }

    /// The windows of range set `rsid`, for a program on compute namespace `nsid`.
    pub fn windows(&self, rsid: u16, nsid: u32) -> Result<&[Window], CommandError> {
        let set = self
            .sets
            .get(usize::from(rsid))
            .and_then(Option::as_ref)
            .ok_or(CommandError::NoRangeSet { rsid })?;
        if set.owner != nsid {
            return Err(CommandError::RangeSetOwner {
                rsid,
                owner: set.owner,
                nsid,
            });
        }
        Ok(&set.windows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sets() -> RangeSets {
        RangeSets::new(2, 2, 4, 1 << 20, 2)
    }

    fn slm(start_bytes: u64, len_bytes: u32) -> RangeDescriptor {
        RangeDescriptor {
            nsid: NSID_SLM,
            len_bytes,
            start_bytes,
        }
    }

    #[test]
    fn a_range_on_the_nvm_namespace_is_unreachable_and_an_unknown_one_invalid() {
        let mut s = sets();
        let nvm = RangeDescriptor {
            nsid: NSID_NVM,
            ..slm(0, 4)
        };
        let e = s.create(NSID_COMPUTE_FIRST, &[slm(0, 4), nvm]).unwrap_err();
        assert!(
            matches!(e, CommandError::Unreachable { index: 1, .. }),
            "{e}"
        );
        let e = s
            .create(
                NSID_COMPUTE_FIRST,
                &[RangeDescriptor {
                    nsid: 99,
                    ..slm(0, 4)
                }],
            )
            .unwrap_err();
        assert!(matches!(e, CommandError::InvalidNamespace { nsid: 99, .. }));
    }

    #[test]
    fn sets_and_ranges_are_bounded_and_deleting_frees_a_set() {
        let mut s = sets();
        let e = s
            .create(NSID_COMPUTE_FIRST, &[slm(0, 4), slm(4, 4), slm(8, 4)])
            .unwrap_err();
        assert!(matches!(e, CommandError::TooManyRanges { ranges: 3, .. }));
        assert_eq!(s.create(NSID_COMPUTE_FIRST, &[slm(0, 4)]).unwrap(), 0);
        assert_eq!(s.create(NSID_COMPUTE_FIRST + 1, &[slm(0, 4)]).unwrap(), 1);
        let e = s.create(NSID_COMPUTE_FIRST, &[slm(0, 4)]).unwrap_err();
        assert!(matches!(e, CommandError::TooManyRangeSets { sets: 2 }));
        s.delete(0).unwrap();
        assert_eq!(s.create(NSID_COMPUTE_FIRST, &[slm(8, 8)]).unwrap(), 0);
        assert!(s.delete(7).is_err());
    }

    #[test]
    fn a_range_past_the_memory_or_off_granularity_is_refused_and_sets_belong_to_their_namespace() {
        let mut s = sets();
        assert!(s
            .create(NSID_COMPUTE_FIRST, &[slm((1 << 20) - 4, 8)])
            .is_err());
        assert!(s.create(NSID_COMPUTE_FIRST, &[slm(2, 4)]).is_err());
        assert!(s.create(NSID_COMPUTE_FIRST + 2, &[slm(0, 4)]).is_err());
        let id = s.create(NSID_COMPUTE_FIRST, &[slm(0, 4)]).unwrap();
        assert!(s.windows(id, NSID_COMPUTE_FIRST).is_ok());
        assert!(matches!(
            s.windows(id, NSID_COMPUTE_FIRST + 1),
            Err(CommandError::RangeSetOwner { .. })
        ));
    }
}
