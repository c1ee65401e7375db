//! An untimed look at the logical space, for a host model that checks results outside
//! simulated time (the accelerator's functional verification): what a read submitted now
//! would return — the data of the last write acknowledged before this instant, zeros where
//! nothing is mapped — straight from the page store, with no flash operation, no time and
//! no effect on the device's state. Every page is checked against its spare-area record
//! exactly as a timed read checks it.

use super::Device;
use crate::layout::Lgn;
use crate::oob::{LossCause, OobRecord, PageKind};
use nearflash_blockdev::{IoError, SECTOR_BYTES};

impl Device {
    /// The mapped bytes `[offset_bytes, offset_bytes + len_bytes)` (sector aligned).
    /// Functional fidelity only: a timing device holds no data.
    pub fn peek(&mut self, offset_bytes: u64, len_bytes: u64) -> Result<Vec<u8>, IoError> {
        assert!(self.functional, "peek needs a device that stores data");
        if len_bytes == 0
            || !offset_bytes.is_multiple_of(SECTOR_BYTES)
            || !len_bytes.is_multiple_of(SECTOR_BYTES)
        {
            return Err(IoError::Misaligned {
                offset_bytes,
                len_bytes,
            });
        }
        let cap = self.logical_bytes();
        if offset_bytes
            .checked_add(len_bytes)
            .is_none_or(|end| end > cap)
        {
            return Err(IoError::OutOfRange {
                offset_bytes,
                len_bytes,
                capacity_bytes: cap,
            });
        }
        let gb = self.layout.unit_bytes();
        let mut out = vec![0u8; len_bytes as usize];
        let mut at = offset_bytes;
        let end = offset_bytes + len_bytes;
        while at < end {
            let group = if self.layout.page_mapped() {
                self.peek_unit(crate::layout::Lun((at / gb) as u32))?
            } else {
                self.peek_group(Lgn((at / gb) as u32))?
            };
            let within = (at % gb) as usize;
            let n = ((end - at) as usize).min(gb as usize - within);
            let dst = (at - offset_bytes) as usize;
            if let Some(g) = group {
                out[dst..dst + n].copy_from_slice(&g[within..within + n]);
            }
            at += n as u64;
        }
        Ok(out)
    }

    /// The whole of group `lgn`, or `None` if it is not mapped (reads as zeros).
    fn peek_group(&mut self, lgn: Lgn) -> Result<Option<Vec<u8>>, IoError> {
        let Some(pgn) = self.map.lookup(lgn) else {
            return Ok(None);
        };
        let geo = self.layout.geo.clone();
        let (ps, os) = (geo.page_size_bytes as usize, geo.oob_size_bytes as usize);
        let sb = self.layout.sb_of(pgn);
        let page = self.layout.page_of(pgn);
        let pages = self.layout.group_pages();
        let dps = self.layout.page_data_bytes() as usize;
        let mut data = vec![0u8; pages as usize * dps];
        let mut page_buf = vec![0u8; ps];
        let mut oob = vec![0u8; os];
        for k in 0..pages {
            let (c, l) = self.layout.page_position(k);
            let die = self.layout.die_of(sb, c);
            let block = geo.block_id(die, l, self.remap.block(sb, c, l));
            self.bb
                .store_mut()
                .read(geo.page_id(block, page), &mut page_buf, &mut oob);
            let lpn = u64::from(lgn.0) * u64::from(pages) + u64::from(k);
            match OobRecord::decode(&page_buf, &oob) {
                Some(r) if r.kind == PageKind::Data && r.lpn == lpn => {}
                Some(r) if r.kind == PageKind::Lost(LossCause::Media) && r.lpn == lpn => {
                    return Err(IoError::Uncorrectable)
                }
                _ => return Err(IoError::Integrity),
            }
            // The page's whole sectors, packed: the group's logical bytes.
            data[k as usize * dps..(k as usize + 1) * dps].copy_from_slice(&page_buf[..dps]);
        }
        Ok(Some(data))
    }
}
