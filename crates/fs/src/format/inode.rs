//! Inodes (256 bytes, 16 per table block) with up to 15 extents inline and, beyond that, one
//! extent block of 340 more; the extent list maps file blocks to device blocks. Unmapped file
//! blocks below the size read as zeros (holes).

use super::{crc, get_u16, get_u32, get_u64, put_u16, put_u32, put_u64};
use crate::error::Corruption;
use crate::types::{BlockNo, FileKind, Ino, BLOCK_BYTES, PERM_MASK};

pub const INODE_BYTES: usize = 256;
pub const INLINE_EXTENTS: usize = 15;
const EXTENT_BYTES: usize = 12;
const INLINE_AT: usize = 64;
pub const EXTENT_BLOCK_MAGIC: &[u8; 4] = b"NFXT";
const EXTENT_BLOCK_HEADER: usize = 16;
pub const EXTENT_BLOCK_ENTRIES: usize = (BLOCK_BYTES - EXTENT_BLOCK_HEADER) / EXTENT_BYTES;
/// Extents one file can have.
pub const EXTENTS_MAX: usize = INLINE_EXTENTS + EXTENT_BLOCK_ENTRIES;

/// `Inode::flags`: the file is append-only (`chattr +a`): it opens for writing only with
/// `append`, and it cannot be truncated, unlinked or renamed over while the flag is set.
pub const FLAG_APPEND_ONLY: u32 = 1;
/// Every flag bit this version knows; a decoder rejects the others.
const FLAGS_KNOWN: u32 = FLAG_APPEND_ONLY;

/// `len` device blocks from `start` hold file blocks `file_block..file_block + len`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extent {
    pub file_block: u32,
    pub start: BlockNo,
    pub len: u32,
}

impl Extent {
    pub fn file_end(&self) -> u32 {
        self.file_block + self.len
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inode {
    /// Type bits | permission bits.
    pub mode: u16,
    pub link_count: u16,
    pub uid: u32,
    pub gid: u32,
    pub size_bytes: u64,
    pub mtime_ns: u64,
    pub ctime_ns: u64,
    /// A directory's parent (the root's is itself); 0 for files.
    pub parent: Ino,
    /// Where extents beyond the inline ones live.
    pub extent_block: Option<BlockNo>,
    /// Bumped each time the inode number is reused; stale file handles detect it.
    pub generation: u32,
    /// Attribute flags (`FLAG_*`).
    pub flags: u32,
    /// Sorted by `file_block`, non-overlapping, non-empty.
    pub extents: Vec<Extent>,
}

impl Inode {
    pub fn new(kind: FileKind, perm: u16, uid: u32, gid: u32, now_ns: u64) -> Inode {
        Inode {
            mode: kind.type_bits() | (perm & PERM_MASK),
            link_count: if kind == FileKind::Dir { 2 } else { 1 },
            uid,
            gid,
            size_bytes: 0,
            mtime_ns: now_ns,
            ctime_ns: now_ns,
            parent: Ino(0),
            extent_block: None,
            generation: 0,
            flags: 0,
            extents: Vec::new(),
        }
    }

    pub fn kind(&self) -> FileKind {
        FileKind::from_mode(self.mode).expect("decoded inodes have a known type")
    }

    pub fn perm(&self) -> u16 {
        self.mode & PERM_MASK
    }

    pub fn append_only(&self) -> bool {
        self.flags & FLAG_APPEND_ONLY != 0
    }

    /// The device block holding file block `fb`, if mapped.
    pub fn map(&self, fb: u32) -> Option<BlockNo> {
        let i = self.extents.partition_point(|e| e.file_end() <= fb);
        let e = self.extents.get(i)?;
        (e.file_block <= fb).then(|| BlockNo(e.start.0 + (fb - e.file_block)))
    }

    /// Maps file block `fb` (unmapped until now) to device block `b`, merging with the
    /// extent before it when contiguous.
    pub fn add_block(&mut self, fb: u32, b: BlockNo) {
        debug_assert!(self.map(fb).is_none(), "file block {fb} already mapped");
        let i = self.extents.partition_point(|e| e.file_end() <= fb);
        if i > 0 {
            let prev = &mut self.extents[i - 1];
            if prev.file_end() == fb && prev.start.0 + prev.len == b.0 {
                prev.len += 1;
                return;
            }
        }
        self.extents.insert(
            i,
            Extent {
                file_block: fb,
                start: b,
                len: 1,
            },
        );
    }

    /// Maps file blocks `fb..fb + len` (unmapped until now) to device blocks `b..b + len`.
    pub fn add_run(&mut self, fb: u32, b: BlockNo, len: u32) {
        debug_assert!(len > 0);
        self.add_block(fb, b);
        let i = self.extents.partition_point(|e| e.file_end() <= fb);
        let e = &mut self.extents[i];
        debug_assert_eq!(
            e.file_end(),
            fb + 1,
            "the run's first block ends its extent"
        );
        debug_assert!(self
            .extents
            .get(i + 1)
            .is_none_or(|n| n.file_block >= fb + len));
        self.extents[i].len += len - 1;
    }

    /// Unmaps every file block at or beyond `fb`; returns the freed device extents.
    pub fn cut_from(&mut self, fb: u32) -> Vec<(BlockNo, u32)> {
        let mut freed = Vec::new();
        let keep = self.extents.partition_point(|e| e.file_end() <= fb);
        let tail: Vec<Extent> = self.extents.drain(keep..).collect();
        for e in tail {
            if e.file_block >= fb {
                freed.push((e.start, e.len));
            } else {
                // Only the first extent of the tail can straddle `fb`; its head stays, last.
                let kept = fb - e.file_block;
                freed.push((BlockNo(e.start.0 + kept), e.len - kept));
                self.extents.push(Extent { len: kept, ..e });
            }
        }
        freed
    }

    /// Blocks mapped by the extent list.
    pub fn mapped_blocks(&self) -> u64 {
        self.extents.iter().map(|e| u64::from(e.len)).sum()
    }

    /// Encodes the inode (its inline extents; the rest go to the extent block).
    pub fn encode(&self, out: &mut [u8]) {
        debug_assert_eq!(out.len(), INODE_BYTES);
        debug_assert!(self.extents.len() <= EXTENTS_MAX);
        debug_assert_eq!(
            self.extents.len() > INLINE_EXTENTS,
            self.extent_block.is_some(),
            "an extent block exactly when extents overflow the inode"
        );
        out.fill(0);
        put_u16(out, 0, self.mode);
        put_u16(out, 2, self.link_count);
        put_u32(out, 4, self.uid);
        put_u32(out, 8, self.gid);
        put_u32(out, 12, self.extents.len() as u32);
        put_u64(out, 16, self.size_bytes);
        put_u64(out, 24, self.mtime_ns);
        put_u64(out, 32, self.ctime_ns);
        put_u32(out, 40, self.parent.0);
        put_u32(out, 44, self.extent_block.map_or(0, |b| b.0));
        put_u32(out, 48, self.generation);
        put_u32(out, 52, self.flags);
        for (i, e) in self.extents.iter().take(INLINE_EXTENTS).enumerate() {
            put_extent(out, INLINE_AT + i * EXTENT_BYTES, e);
        }
        let c = crc(&[&out[..252]]);
        put_u32(out, 252, c);
    }

    /// Decodes an allocated inode; the extents past the inline ones are read from the extent
    /// block by the caller (`decode_extent_block`).
    pub fn decode(ino: Ino, b: &[u8]) -> Result<Inode, Corruption> {
        let bad = |what| Corruption::Inode { ino, what };
        if crc(&[&b[..252]]) != get_u32(b, 252) {
            return Err(bad("checksum mismatch"));
        }
        let mode = get_u16(b, 0);
        if FileKind::from_mode(mode).is_none() || mode & !(0o170_000 | PERM_MASK) != 0 {
            return Err(bad("unknown file type or mode bits"));
        }
        let flags = get_u32(b, 52);
        if flags & !FLAGS_KNOWN != 0 {
            return Err(bad("unknown attribute flags"));
        }
        let count = get_u32(b, 12) as usize;
        if count > EXTENTS_MAX {
            return Err(bad("extent count out of range"));
        }
        let extent_block = match get_u32(b, 44) {
            0 => None,
            x => Some(BlockNo(x)),
        };
        if (count > INLINE_EXTENTS) != extent_block.is_some() {
            return Err(bad("extent block present iff extents overflow"));
        }
        let extents = (0..count.min(INLINE_EXTENTS))
            .map(|i| get_extent(b, INLINE_AT + i * EXTENT_BYTES))
            .collect();
        Ok(Inode {
            mode,
            link_count: get_u16(b, 2),
            uid: get_u32(b, 4),
            gid: get_u32(b, 8),
            size_bytes: get_u64(b, 16),
            mtime_ns: get_u64(b, 24),
            ctime_ns: get_u64(b, 32),
            parent: Ino(get_u32(b, 40)),
            extent_block,
            generation: get_u32(b, 48),
            flags,
            extents,
        })
        .and_then(|i: Inode| {
            // The count includes the extents still to be read from the extent block.
            if i.extents.len() == count.min(INLINE_EXTENTS) {
                Ok(i)
            } else {
                Err(bad("extent count"))
            }
        })
    }

    /// The total extent count recorded in an encoded inode.
    pub fn recorded_extents(b: &[u8]) -> usize {
        get_u32(b, 12) as usize
    }

    /// Encodes the overflow extents into an extent block.
    pub fn encode_extent_block(&self, ino: Ino) -> Vec<u8> {
        let rest = &self.extents[INLINE_EXTENTS..];
        let mut b = vec![0u8; BLOCK_BYTES];
        b[0..4].copy_from_slice(EXTENT_BLOCK_MAGIC);
        put_u32(&mut b, 4, ino.0);
        put_u32(&mut b, 8, rest.len() as u32);
        for (i, e) in rest.iter().enumerate() {
            put_extent(&mut b, EXTENT_BLOCK_HEADER + i * EXTENT_BYTES, e);
        }
        let c = crc(&[&b[0..12], &b[EXTENT_BLOCK_HEADER..]]);
        put_u32(&mut b, 12, c);
        b
    }

    /// Appends the extents of an extent block (after checking it belongs to this inode and
    /// holds the count the inode recorded) and checks the whole list is sorted and disjoint.
    pub fn decode_extent_block(
        &mut self,
        ino: Ino,
        block: BlockNo,
        b: &[u8],
        recorded: usize,
    ) -> Result<(), Corruption> {
        let bad = |what| Corruption::ExtentBlock { ino, block, what };
        if &b[0..4] != EXTENT_BLOCK_MAGIC {
            return Err(bad("bad magic"));
        }
        if crc(&[&b[0..12], &b[EXTENT_BLOCK_HEADER..]]) != get_u32(b, 12) {
            return Err(bad("checksum mismatch"));
        }
        if get_u32(b, 4) != ino.0 {
            return Err(bad("belongs to another inode"));
        }
        let n = get_u32(b, 8) as usize;
        if n + INLINE_EXTENTS != recorded || n > EXTENT_BLOCK_ENTRIES {
            return Err(bad("extent count does not match the inode"));
        }
        self.extents
            .extend((0..n).map(|i| get_extent(b, EXTENT_BLOCK_HEADER + i * EXTENT_BYTES)));
        Ok(())
    }

    /// Extents sorted, disjoint, non-empty and within `file_blocks_max`.
    pub fn extents_well_formed(&self) -> bool {
        self.extents.iter().all(|e| e.len > 0 && e.start.0 > 0)
            && self
                .extents
                .windows(2)
                .all(|w| w[0].file_end() <= w[1].file_block)
            && self
                .extents
                .iter()
                .all(|e| e.file_block.checked_add(e.len).is_some())
    }
}

fn put_extent(b: &mut [u8], at: usize, e: &Extent) {
    put_u32(b, at, e.file_block);
    put_u32(b, at + 4, e.start.0);
    put_u32(b, at + 8, e.len);
}

fn get_extent(b: &[u8], at: usize) -> Extent {
    Extent {
        file_block: get_u32(b, at),
        start: BlockNo(get_u32(b, at + 4)),
        len: get_u32(b, at + 8),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file() -> Inode {
        Inode::new(FileKind::File, 0o644, 1000, 100, 5)
    }

    #[test]
    fn contiguous_blocks_merge_into_one_extent_and_map_back() {
        let mut i = file();
        for fb in 0..4 {
            i.add_block(fb, BlockNo(100 + fb));
        }
        i.add_block(10, BlockNo(500));
        assert_eq!(i.extents.len(), 2);
        assert_eq!(i.map(3), Some(BlockNo(103)));
        assert_eq!(i.map(5), None);
        assert_eq!(i.map(10), Some(BlockNo(500)));
    }

    #[test]
    fn cutting_in_the_middle_of_an_extent_frees_its_tail() {
        let mut i = file();
        for fb in 0..8 {
            i.add_block(fb, BlockNo(100 + fb));
        }
        i.add_block(20, BlockNo(300));
        let freed = i.cut_from(3);
        assert_eq!(freed, vec![(BlockNo(103), 5), (BlockNo(300), 1)]);
        assert_eq!(i.mapped_blocks(), 3);
        assert!(i.extents_well_formed());
    }

    #[test]
    fn inode_with_an_extent_block_round_trips_and_detects_bit_flips() {
        let mut i = file();
        for k in 0..20u32 {
            i.add_block(k * 2, BlockNo(1000 + k * 2));
        }
        i.extent_block = Some(BlockNo(77));
        i.size_bytes = 12345;
        let mut raw = vec![0u8; INODE_BYTES];
        i.encode(&mut raw);
        let xb = i.encode_extent_block(Ino(9));
        let mut back = Inode::decode(Ino(9), &raw).unwrap();
        back.decode_extent_block(Ino(9), BlockNo(77), &xb, Inode::recorded_extents(&raw))
            .unwrap();
        assert_eq!(back, i);
        raw[17] ^= 4;
        assert!(Inode::decode(Ino(9), &raw).is_err());
        let mut other = Inode::decode(Ino(9), &{
            let mut r = vec![0u8; INODE_BYTES];
            i.encode(&mut r);
            r
        })
        .unwrap();
        let e = other
            .decode_extent_block(Ino(10), BlockNo(77), &xb, 20)
            .unwrap_err();
        assert!(e.to_string().contains("another inode"), "{e}");
    }
}
