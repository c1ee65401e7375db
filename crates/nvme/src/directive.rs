//! The Data Placement directive as a write's submission queue entry carries it (NVMe Flexible
//! Data Placement, TP4146, in NVMe Base 2.1+; `shared/STANDARDS.md` §3.3): the Directive Type
//! DTYPE in CDW12 bits 23:20 — 2, Data Placement — and the Directive Specific field DSPEC in
//! CDW13 bits 31:16, holding the Placement Identifier. The host encodes the directive into
//! the SQE it writes; the controller decodes it from the SQE it fetched, so what reaches the
//! drive is what the 64 bytes said. Other CDW12/CDW13 fields (the block count, the dataset
//! management hints) are not modelled here and stay zero.

use nearflash_blockdev::PlacementDirective;

/// DTYPE of the Data Placement directive (TP4146).
pub const DTYPE_DATA_PLACEMENT: u32 = 2;

/// CDW12 bits 23:20.
const DTYPE_SHIFT: u32 = 20;
const DTYPE_MASK: u32 = 0xF;
/// CDW13 bits 31:16.
const DSPEC_SHIFT: u32 = 16;

/// The directive fields of a write's SQE.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DirectiveDwords {
    pub cdw12: u32,
    pub cdw13: u32,
}

impl DirectiveDwords {
    /// The fields a host writes for `placement` (all zero without a directive).
    pub fn encode(placement: Option<PlacementDirective>) -> DirectiveDwords {
        match placement {
            None => DirectiveDwords::default(),
            Some(PlacementDirective(pid)) => DirectiveDwords {
                cdw12: DTYPE_DATA_PLACEMENT << DTYPE_SHIFT,
                cdw13: u32::from(pid) << DSPEC_SHIFT,
            },
        }
    }

    /// The directive the controller reads back: a Data Placement directive when DTYPE is 2;
    /// any other directive type is not one this drive supports and places nothing.
    pub fn placement(self) -> Option<PlacementDirective> {
        let dtype = self.cdw12 >> DTYPE_SHIFT & DTYPE_MASK;
        (dtype == DTYPE_DATA_PLACEMENT)
            .then_some(PlacementDirective((self.cdw13 >> DSPEC_SHIFT) as u16))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placement_identifier_sits_in_dspec_with_dtype_two() {
        let dw = DirectiveDwords::encode(Some(PlacementDirective(0xBEEF)));
        assert_eq!(dw.cdw12, 0x0020_0000, "DTYPE 2 in CDW12 bits 23:20");
        assert_eq!(dw.cdw13, 0xBEEF_0000, "DSPEC in CDW13 bits 31:16");
        assert_eq!(dw.placement(), Some(PlacementDirective(0xBEEF)));
    }

    #[test]
    fn no_directive_is_all_zero_and_other_directive_types_place_nothing() {
        let none = DirectiveDwords::encode(None);
        assert_eq!(none, DirectiveDwords::default());
        assert_eq!(none.placement(), None);
        // DTYPE 1 (Streams) with a DSPEC: not a placement.
        let streams = DirectiveDwords {
            cdw12: 1 << 20,
            cdw13: 7 << 16,
        };
        assert_eq!(streams.placement(), None);
    }
}
