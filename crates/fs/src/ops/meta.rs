//! Inodes and allocation: reading and writing inodes (with their extent block) through the
//! cache, the block and inode bitmaps (next-fit allocation with a goal for contiguity), and
//! growing a file by one block. Blocks freed by the running transaction are not handed out
//! again before it commits.

use crate::cache::BlockClass;
use crate::error::{Corruption, FsError};
use crate::exec::Cx;
use crate::format::get_u32;
use crate::format::inode::{Inode, EXTENTS_MAX, INLINE_EXTENTS, INODE_BYTES};
use crate::format::superblock::BITS_PER_BLOCK;
use crate::types::{BlockNo, Ino};

impl Cx {
    /// Reads an allocated inode and its extent block.
    pub async fn read_inode(&self, ino: Ino) -> Result<Inode, FsError> {
        let sb = self.sb()?;
        if !sb.valid_ino(ino) {
            return Err(Corruption::Inode {
                ino,
                what: "inode number out of range",
            }
            .into());
        }
        let (blk, off) = sb.inode_location(ino);
        self.load(blk, BlockClass::Meta).await?;
        let (mut inode, recorded) = self.with(blk, |b| {
            let raw = &b[off..off + INODE_BYTES];
            Inode::decode(ino, raw).map(|i| (i, Inode::recorded_extents(raw)))
        })?;
        if let Some(xb) = inode.extent_block {
            if !sb.is_data_block(xb) {
                return Err(Corruption::Inode {
                    ino,
                    what: "extent block outside the data area",
                }
                .into());
            }
            self.load(xb, BlockClass::Meta).await?;
            self.with(xb, |b| inode.decode_extent_block(ino, xb, b, recorded))?;
        }
        let blocks_ok = inode
            .extents
            .iter()
            .all(|e| sb.is_data_block(e.start) && sb.is_data_block(BlockNo(e.start.0 + e.len - 1)));
        if !inode.extents_well_formed() || !blocks_ok {
            return Err(Corruption::Inode {
                ino,
                what: "extents overlap or leave the data area",
            }
            .into());
        }
        Ok(inode)
    }

    /// Writes an inode (and its extent block, which the caller allocated when needed).
    pub async fn write_inode(&self, ino: Ino, inode: &Inode) -> Result<(), FsError> {
        let sb = self.sb()?;
        if let Some(xb) = inode.extent_block {
            let data = inode.encode_extent_block(ino);
            self.install(xb, BlockClass::Meta, data).await?;
        }
        let (blk, off) = sb.inode_location(ino);
        self.load(blk, BlockClass::Meta).await?;
        self.with_mut(blk, |b| inode.encode(&mut b[off..off + INODE_BYTES]));
        Ok(())
    }

    /// Whether the bitmap bit for `block`/`bit` is set.
    async fn bit(&self, bm: BlockNo, bit: usize) -> Result<bool, FsError> {
        self.load(bm, BlockClass::Meta).await?;
        Ok(self.with(bm, |b| b[bit / 8] & (1 << (bit % 8)) != 0))
    }

    async fn set_bit(&self, bm: BlockNo, bit: usize, on: bool) -> Result<bool, FsError> {
        self.load(bm, BlockClass::Meta).await?;
        Ok(self.with_mut(bm, |b| {
            let was = b[bit / 8] & (1 << (bit % 8)) != 0;
            if on {
                b[bit / 8] |= 1 << (bit % 8);
            } else {
                b[bit / 8] &= !(1 << (bit % 8));
            }
            was
        }))
    }

    /// Free blocks that can be allocated now (not counting those freed by the running
    /// transaction).
    pub fn allocatable_blocks(&self) -> u64 {
        let st = self.st.borrow();
        st.mounted
            .as_ref()
            .map_or(0, |m| m.free_blocks - m.freed_uncommitted.len() as u64)
    }

    pub fn free_inodes(&self) -> u64 {
        let st = self.st.borrow();
        st.mounted.as_ref().map_or(0, |m| m.free_inodes)
    }

    /// Fails with `NoSpace` unless `n` blocks can be allocated.
    pub fn need_blocks(&self, n: u64) -> Result<(), FsError> {
        if self.allocatable_blocks() < n {
            return Err(FsError::NoSpace("data blocks"));
        }
        Ok(())
    }

    /// Allocates a data-area block, `goal` first if it is free.
    pub async fn alloc_block(&self, goal: Option<BlockNo>) -> Result<BlockNo, FsError> {
        self.need_blocks(1)?;
        let sb = self.sb()?;
        if let Some(g) = goal.filter(|&g| sb.is_data_block(g)) {
            let (bm, bit) = sb.block_bit(g);
            if !self.is_freed_uncommitted(g) && !self.bit(bm, bit).await? {
                return self.take_block(g).await;
            }
        }
        let cursor = self
            .st
            .borrow()
            .mounted
            .as_ref()
            .map_or(0, |m| m.block_cursor);
        let start = cursor.clamp(sb.data_start.0, sb.total_blocks - 1);
        // Scan [start, total) then [data_start, start), one bitmap block at a time.
        for (lo, hi) in [(start, sb.total_blocks), (sb.data_start.0, start)] {
            let mut b = lo;
            while b < hi {
                let (bm, first_bit) = sb.block_bit(BlockNo(b));
                let span = (BITS_PER_BLOCK - first_bit as u32).min(hi - b);
                self.load(bm, BlockClass::Meta).await?;
                let found = {
                    let st = self.st.borrow();
                    let freed = &st.mounted.as_ref().expect("mounted").freed_uncommitted;
                    let bits = st.cache.get(bm);
                    (0..span).map(|k| first_bit + k as usize).find(|&bit| {
                        bits[bit / 8] & (1 << (bit % 8)) == 0
                            && !freed.contains(&BlockNo(b + (bit - first_bit) as u32))
                    })
                };
                if let Some(bit) = found {
                    return self.take_block(BlockNo(b + (bit - first_bit) as u32)).await;
                }
                b += span;
            }
        }
        Err(Corruption::Superblock("free block count disagrees with the bitmap").into())
    }

    /// Allocates up to `max` contiguous blocks: the first as `alloc_block(goal)` does, then
    /// every free block right after it. Returns the first block and how many.
    pub async fn alloc_run(
        &self,
        goal: Option<BlockNo>,
        max: u32,
    ) -> Result<(BlockNo, u32), FsError> {
        debug_assert!(max > 0);
        let stripe = self.cfg.stripe_blocks;
        let goal = match goal {
            None if stripe > 1 && max >= stripe => self.free_stripe_start().await?,
            g => g,
        };
        let first = self.alloc_block(goal).await?;
        let sb = self.sb()?;
        let mut len = 1u32;
        while len < max {
            let b = BlockNo(first.0 + len);
            if !sb.is_data_block(b) {
                break;
            }
            let (bm, first_bit) = sb.block_bit(b);
            let span = (BITS_PER_BLOCK - first_bit as u32)
                .min(max - len)
                .min(sb.total_blocks - b.0);
            self.load(bm, BlockClass::Meta).await?;
            let took = {
                let mut st = self.st.borrow_mut();
                let st = &mut *st;
                let m = st.mounted.as_mut().expect("mounted");
                let bits = st.cache.get_mut(bm);
                let mut k = 0u32;
                while k < span {
                    let bit = first_bit + k as usize;
                    if bits[bit / 8] & (1 << (bit % 8)) != 0
                        || m.freed_uncommitted.contains(&BlockNo(b.0 + k))
                    {
                        break;
                    }
                    bits[bit / 8] |= 1 << (bit % 8);
                    k += 1;
                }
                m.free_blocks -= u64::from(k);
                m.block_cursor = b.0 + k;
                k
            };
            len += took;
            if took < span {
                break;
            }
        }
        Ok((first, len))
    }

    /// The first free block on a `stripe_blocks` boundary at or after the allocation cursor
    /// (wrapping once); `None` when a bounded scan finds none (the caller falls back to any
    /// free block).
    async fn free_stripe_start(&self) -> Result<Option<BlockNo>, FsError> {
        /// Stripe boundaries tried before giving up on alignment.
        const CANDIDATES_MAX: u32 = 4096;
        let sb = self.sb()?;
        let stripe = self.cfg.stripe_blocks;
        let cursor = self
            .st
            .borrow()
            .mounted
            .as_ref()
            .map_or(0, |m| m.block_cursor)
            .clamp(sb.data_start.0, sb.total_blocks - 1);
        let round_up = |b: u32| b.div_ceil(stripe).saturating_mul(stripe);
        let mut b = round_up(cursor);
        let mut wrapped = false;
        for _ in 0..CANDIDATES_MAX {
            if b >= sb.total_blocks {
                if wrapped {
                    break;
                }
                wrapped = true;
                b = round_up(sb.data_start.0);
                continue;
            }
            let (bm, bit) = sb.block_bit(BlockNo(b));
            if !self.is_freed_uncommitted(BlockNo(b)) && !self.bit(bm, bit).await? {
                return Ok(Some(BlockNo(b)));
            }
            b = b.saturating_add(stripe);
        }
        Ok(None)
    }

    fn is_freed_uncommitted(&self, b: BlockNo) -> bool {
        let st = self.st.borrow();
        st.mounted
            .as_ref()
            .is_some_and(|m| m.freed_uncommitted.contains(&b))
    }

    async fn take_block(&self, b: BlockNo) -> Result<BlockNo, FsError> {
        let sb = self.sb()?;
        let (bm, bit) = sb.block_bit(b);
        let was = self.set_bit(bm, bit, true).await?;
        debug_assert!(!was, "{b} allocated twice");
        let mut st = self.st.borrow_mut();
        let m = st.mounted.as_mut().expect("mounted");
        m.free_blocks -= 1;
        m.block_cursor = b.0 + 1;
        Ok(b)
    }

    /// Frees `len` blocks from `start`; they stay unusable until the transaction commits.
    pub async fn free_blocks(&self, start: BlockNo, len: u32) -> Result<(), FsError> {
        let sb = self.sb()?;
        for b in (start.0..start.0 + len).map(BlockNo) {
            let (bm, bit) = sb.block_bit(b);
            if !self.set_bit(bm, bit, false).await? {
                return Err(
                    Corruption::Superblock("freeing a block the bitmap says is free").into(),
                );
            }
            let mut st = self.st.borrow_mut();
            st.cache.remove(b);
            let m = st.mounted.as_mut().expect("mounted");
            m.free_blocks += 1;
            m.freed_uncommitted.insert(b);
        }
        Ok(())
    }

    /// Allocates an inode number; returns it with the generation its new inode must carry.
    pub async fn alloc_inode(&self) -> Result<(Ino, u32), FsError> {
        if self.free_inodes() == 0 {
            return Err(FsError::NoSpace("inodes"));
        }
        let sb = self.sb()?;
        let cursor = self
            .st
            .borrow()
            .mounted
            .as_ref()
            .map_or(0, |m| m.inode_cursor);
        let n = sb.inode_count;
        for k in 0..n {
            let ino = Ino((cursor + k) % n + 1);
            let (bm, bit) = sb.inode_bit(ino);
            if !self.bit(bm, bit).await? {
                self.set_bit(bm, bit, true).await?;
                let (blk, off) = sb.inode_location(ino);
                self.load(blk, BlockClass::Meta).await?;
                let generation = self.with(blk, |b| get_u32(b, off + 48)).wrapping_add(1);
                let mut st = self.st.borrow_mut();
                let m = st.mounted.as_mut().expect("mounted");
                m.free_inodes -= 1;
                m.inode_cursor = ino.0;
                return Ok((ino, generation));
            }
        }
        Err(Corruption::Superblock("free inode count disagrees with the bitmap").into())
    }

    /// Whether `ino` is allocated in the inode bitmap.
    pub async fn inode_allocated(&self, ino: Ino) -> Result<bool, FsError> {
        let sb = self.sb()?;
        if !sb.valid_ino(ino) {
            return Ok(false);
        }
        let (bm, bit) = sb.inode_bit(ino);
        self.bit(bm, bit).await
    }

    /// Frees an inode and everything it owns (data, directory and extent blocks).
    pub async fn drop_inode(&self, ino: Ino, inode: &Inode) -> Result<(), FsError> {
        for e in &inode.extents {
            self.free_blocks(e.start, e.len).await?;
        }
        if let Some(xb) = inode.extent_block {
            self.free_blocks(xb, 1).await?;
        }
        let sb = self.sb()?;
        let (bm, bit) = sb.inode_bit(ino);
        if !self.set_bit(bm, bit, false).await? {
            return Err(Corruption::Inode {
                ino,
                what: "freeing an inode the bitmap says is free",
            }
            .into());
        }
        let (blk, off) = sb.inode_location(ino);
        self.load(blk, BlockClass::Meta).await?;
        // Keep only the generation, so the next user of the number gets a new one.
        self.with_mut(blk, |b| {
            let slot = &mut b[off..off + INODE_BYTES];
            let generation = get_u32(slot, 48);
            slot.fill(0);
            slot[48..52].copy_from_slice(&generation.to_le_bytes());
        });
        let mut st = self.st.borrow_mut();
        st.mounted.as_mut().expect("mounted").free_inodes += 1;
        Ok(())
    }

    /// Maps file block `fb` of `inode` to a newly allocated block (next to the block before
    /// it when possible), allocating the extent block when the inline extents overflow.
    /// Nothing changes on error.
    pub async fn grow(&self, inode: &mut Inode, fb: u32) -> Result<BlockNo, FsError> {
        debug_assert!(inode.map(fb).is_none());
        let goal = fb
            .checked_sub(1)
            .and_then(|p| inode.map(p))
            .map(|b| BlockNo(b.0 + 1));
        let b = self.alloc_block(goal).await?;
        let merges = goal == Some(b);
        if !merges {
            if inode.extents.len() >= EXTENTS_MAX {
                self.free_blocks(b, 1).await?;
                return Err(FsError::TooManyExtents(EXTENTS_MAX));
            }
            if inode.extents.len() == INLINE_EXTENTS && inode.extent_block.is_none() {
                match self.alloc_block(None).await {
                    Ok(xb) => inode.extent_block = Some(xb),
                    Err(e) => {
                        self.free_blocks(b, 1).await?;
                        return Err(e);
                    }
                }
            }
        }
        inode.add_block(fb, b);
        Ok(b)
    }

    /// Releases the extent block once the extents fit inline again.
    pub async fn shrink_extent_block(&self, inode: &mut Inode) -> Result<(), FsError> {
        if inode.extents.len() <= INLINE_EXTENTS {
            if let Some(xb) = inode.extent_block.take() {
                self.free_blocks(xb, 1).await?;
            }
        }
        Ok(())
    }
}
