//! Directory contents: lookup, listing, adding and removing entries. A directory's size is
//! its block count × 4 KiB; it grows by a block when full and never shrinks (rmdir frees it).

use crate::cache::BlockClass;
use crate::error::{Corruption, FsError};
use crate::exec::Cx;
use crate::format::dir::{self, RawEntry, DIRENTS_PER_BLOCK};
use crate::format::inode::Inode;
use crate::types::{BlockNo, Ino, BLOCK_BYTES_U64};

/// Where an entry lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    pub block: BlockNo,
    pub index: usize,
}

impl Cx {
    /// The directory's blocks in order (every one must be mapped).
    fn dir_blocks(&self, ino: Ino, inode: &Inode) -> Result<Vec<BlockNo>, FsError> {
        let n = inode.size_bytes / BLOCK_BYTES_U64;
        if !inode.size_bytes.is_multiple_of(BLOCK_BYTES_U64) || n != inode.mapped_blocks() {
            return Err(Corruption::Inode {
                ino,
                what: "directory size does not match its blocks",
            }
            .into());
        }
        (0..n as u32)
            .map(|fb| {
                inode.map(fb).ok_or(
                    Corruption::Inode {
                        ino,
                        what: "directory has a hole",
                    }
                    .into(),
                )
            })
            .collect()
    }

    async fn load_dir_block(&self, ino: Ino, b: BlockNo) -> Result<(), FsError> {
        self.load(b, BlockClass::Meta).await?;
        self.with(b, |d| dir::check_block(ino, b, d))?;
        Ok(())
    }

    /// Every entry with its slot, in slot order.
    pub async fn dir_entries(
        &self,
        ino: Ino,
        inode: &Inode,
    ) -> Result<Vec<(RawEntry, Slot)>, FsError> {
        let mut out = Vec::new();
        for b in self.dir_blocks(ino, inode)? {
            self.load_dir_block(ino, b).await?;
            self.with(b, |d| {
                for index in 0..DIRENTS_PER_BLOCK {
                    if let Some(e) = dir::entry(d, index) {
                        out.push((e, Slot { block: b, index }));
                    }
                }
            });
        }
        Ok(out)
    }

    pub async fn lookup(
        &self,
        ino: Ino,
        inode: &Inode,
        name: &str,
    ) -> Result<Option<(RawEntry, Slot)>, FsError> {
        for b in self.dir_blocks(ino, inode)? {
            self.load_dir_block(ino, b).await?;
            let hit = self.with(b, |d| {
                (0..DIRENTS_PER_BLOCK).find_map(|index| {
                    dir::entry(d, index)
                        .filter(|e| e.name == name.as_bytes())
                        .map(|e| (e, Slot { block: b, index }))
                })
            });
            if hit.is_some() {
                return Ok(hit);
            }
        }
        Ok(None)
    }

    async fn free_slot(&self, ino: Ino, inode: &Inode) -> Result<Option<Slot>, FsError> {
        for b in self.dir_blocks(ino, inode)? {
            self.load_dir_block(ino, b).await?;
            let free = self.with(b, |d| {
                (0..DIRENTS_PER_BLOCK).find(|&index| dir::entry(d, index).is_none())
            });
            if let Some(index) = free {
                return Ok(Some(Slot { block: b, index }));
            }
        }
        Ok(None)
    }

    /// Blocks an entry added to this directory may need (a directory block and perhaps an
    /// extent block) — checked before anything changes.
    pub async fn blocks_to_add_entry(&self, ino: Ino, inode: &Inode) -> Result<u64, FsError> {
        Ok(if self.free_slot(ino, inode).await?.is_some() {
            0
        } else {
            2
        })
    }

    /// Adds an entry (the name is known to be absent), growing the directory if needed; the
    /// caller writes `inode` back.
    pub async fn dir_add(&self, ino: Ino, inode: &mut Inode, e: &RawEntry) -> Result<(), FsError> {
        let slot = match self.free_slot(ino, inode).await? {
            Some(s) => s,
            None => {
                let fb = (inode.size_bytes / BLOCK_BYTES_U64) as u32;
                let b = self.grow(inode, fb).await?;
                self.install(b, BlockClass::Meta, dir::empty_block(ino))
                    .await?;
                inode.size_bytes += BLOCK_BYTES_U64;
                Slot { block: b, index: 0 }
            }
        };
        self.set_slot(slot, Some(e)).await
    }

    /// Writes or clears one slot.
    pub async fn set_slot(&self, slot: Slot, e: Option<&RawEntry>) -> Result<(), FsError> {
        self.load(slot.block, BlockClass::Meta).await?;
        self.with_mut(slot.block, |d| dir::set_entry(d, slot.index, e));
        Ok(())
    }
}
