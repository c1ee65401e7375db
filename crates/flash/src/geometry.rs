//! Geometry derived from the config, and the address newtypes of the backbone. Dies are
//! numbered channel-major (`die = channel * ways + way`), a way being a die position on a
//! channel (package × die within package); blocks and pages get global linear ids so that
//! per-block and per-page tables are flat vectors.

use crate::config::FlashConfig;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DieId(pub u32);

/// A physical block: (die, plane, block within plane), linearised.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BlockId(pub u64);

/// A physical page: (block, page within block), linearised.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PageId(pub u64);

#[derive(Clone, Debug, PartialEq)]
pub struct Geometry {
    pub channels: u32,
    pub ways_per_channel: u32,
    pub planes_per_die: u32,
    pub blocks_per_plane: u32,
    pub pages_per_block: u32,
    pub page_size_bytes: u32,
    pub oob_size_bytes: u32,
    /// Pages a native program covers: a word line with one-shot programs, else 1
    /// (`flash.one_shot_pages`).
    pub one_shot_pages: u32,
}

impl Geometry {
    pub fn from_config(c: &FlashConfig) -> Self {
        Geometry {
            channels: c.channels,
            ways_per_channel: c.packages_per_channel * c.dies_per_package,
            planes_per_die: c.planes_per_die,
            blocks_per_plane: c.blocks_per_plane,
            pages_per_block: c.pages_per_block,
            page_size_bytes: c.page_size_bytes,
            oob_size_bytes: c.oob_size_bytes,
            one_shot_pages: c.one_shot_pages,
        }
    }

    pub fn die_count(&self) -> u32 {
        self.channels * self.ways_per_channel
    }

    pub fn die(&self, channel: u32, way: u32) -> DieId {
        debug_assert!(channel < self.channels && way < self.ways_per_channel);
        DieId(channel * self.ways_per_channel + way)
    }

    pub fn channel_of(&self, die: DieId) -> u32 {
        die.0 / self.ways_per_channel
    }

    pub fn block_count(&self) -> u64 {
        u64::from(self.die_count())
            * u64::from(self.planes_per_die)
            * u64::from(self.blocks_per_plane)
    }

    pub fn page_count(&self) -> u64 {
        self.block_count() * u64::from(self.pages_per_block)
    }

    pub fn capacity_bytes(&self) -> u64 {
        self.page_count() * u64::from(self.page_size_bytes)
    }

    pub fn block_id(&self, die: DieId, plane: u32, block: u32) -> BlockId {
        debug_assert!(plane < self.planes_per_die && block < self.blocks_per_plane);
        BlockId(
            (u64::from(die.0) * u64::from(self.planes_per_die) + u64::from(plane))
                * u64::from(self.blocks_per_plane)
                + u64::from(block),
        )
    }

    /// (die, plane, block within plane) of a block id.
    pub fn block_parts(&self, b: BlockId) -> (DieId, u32, u32) {
        let bpp = u64::from(self.blocks_per_plane);
        let block = (b.0 % bpp) as u32;
        let plane_idx = b.0 / bpp;
        let plane = (plane_idx % u64::from(self.planes_per_die)) as u32;
        let die = (plane_idx / u64::from(self.planes_per_die)) as u32;
        (DieId(die), plane, block)
    }

    pub fn page_id(&self, block: BlockId, page: u32) -> PageId {
        debug_assert!(page < self.pages_per_block);
        PageId(block.0 * u64::from(self.pages_per_block) + u64::from(page))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn geo() -> Geometry {
        Geometry {
            channels: 4,
            ways_per_channel: 8,
            planes_per_die: 2,
            blocks_per_plane: 256,
            pages_per_block: 256,
            page_size_bytes: 8192,
            oob_size_bytes: 448,
            one_shot_pages: 1,
        }
    }

    #[test]
    fn flashabacus_geometry_is_32_gib_over_32_dies() {
        let g = geo();
        assert_eq!(g.die_count(), 32);
        assert_eq!(g.capacity_bytes(), 32 << 30);
    }

    #[test]
    fn block_ids_round_trip() {
        let g = geo();
        for die in [0, 5, 31] {
            for plane in 0..2 {
                for block in [0, 17, 255] {
                    let id = g.block_id(DieId(die), plane, block);
                    assert_eq!(g.block_parts(id), (DieId(die), plane, block));
                }
            }
        }
        assert_eq!(g.channel_of(g.die(3, 7)), 3);
    }
}
