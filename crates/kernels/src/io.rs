//! Per-screen data footprints: which bytes of which data section a screen (or serial
//! microblock) reads and writes, so a device model can move exactly those bytes between
//! flash and DDR and take range locks on them. An extent is `count` blocks of `len_bytes`
//! every `stride_bytes` starting at `offset_bytes` within the section (count = 1 is a
//! contiguous range; a column block of a row-major matrix is one strided extent).
//! Footprints may over-approximate (e.g. the whole `visited` array of a bfs level) but
//! never omit bytes a screen touches.

use crate::desc::{Access, KernelDesc};
use serde::Serialize;
use std::ops::Range;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Extent {
    /// Index into `KernelDesc::sections`.
    pub section: usize,
    pub offset_bytes: u64,
    pub len_bytes: u64,
    pub stride_bytes: u64,
    pub count: u64,
    /// Input = read, Output = written, InOut = read and written.
    pub access: Access,
}

impl Extent {
    /// Bytes covered.
    pub fn total_bytes(&self) -> u64 {
        self.len_bytes * self.count
    }

    /// One past the last byte covered.
    pub fn end_bytes(&self) -> u64 {
        if self.count == 0 {
            return self.offset_bytes;
        }
        self.offset_bytes + self.stride_bytes * (self.count - 1) + self.len_bytes
    }

    pub fn reads(&self) -> bool {
        self.access != Access::Output
    }

    pub fn writes(&self) -> bool {
        self.access != Access::Input
    }

    /// The byte intervals covered, in order.
    pub fn intervals(&self) -> impl Iterator<Item = Range<u64>> + '_ {
        (0..self.count).map(move |k| {
            let start = self.offset_bytes + k * self.stride_bytes;
            start..start + self.len_bytes
        })
    }
}

/// The whole of `section` with its declared access.
pub fn whole(desc: &KernelDesc, section: usize) -> Extent {
    let s = &desc.sections[section];
    span(section, 0..s.bytes, s.access)
}

/// The whole of `section` with the given access.
pub fn all(desc: &KernelDesc, section: usize, access: Access) -> Extent {
    span(section, 0..desc.sections[section].bytes, access)
}

/// A contiguous byte range.
pub fn span(section: usize, bytes: Range<u64>, access: Access) -> Extent {
    Extent {
        section,
        offset_bytes: bytes.start,
        len_bytes: bytes.end - bytes.start,
        stride_bytes: 0,
        count: 1,
        access,
    }
}

/// Rows `rows` of a row-major matrix with rows of `row_bytes`.
pub fn rows(section: usize, rows: Range<usize>, row_bytes: u64, access: Access) -> Extent {
    span(
        section,
        rows.start as u64 * row_bytes..rows.end as u64 * row_bytes,
        access,
    )
}

/// Elements `elems` of a vector of `elem_bytes` elements.
pub fn elems(section: usize, elems: Range<usize>, elem_bytes: u64, access: Access) -> Extent {
    rows(section, elems, elem_bytes, access)
}

/// Columns `cols` of rows `row_range` of a row-major matrix of `row_len` elements per
/// row: one strided extent.
pub fn cols(
    section: usize,
    cols: Range<usize>,
    row_range: Range<usize>,
    row_len: usize,
    elem_bytes: u64,
    access: Access,
) -> Extent {
    let row_bytes = row_len as u64 * elem_bytes;
    Extent {
        section,
        offset_bytes: row_range.start as u64 * row_bytes + cols.start as u64 * elem_bytes,
        len_bytes: (cols.end - cols.start) as u64 * elem_bytes,
        stride_bytes: row_bytes,
        count: (row_range.end - row_range.start) as u64,
        access,
    }
}
