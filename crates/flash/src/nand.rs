//! The NAND rules, kept per physical block: pages are programmed strictly in order, never
//! twice without an erase, erases are whole-block, each erase adds a program/erase cycle,
//! and a block that failed a program or an erase (or wore out) is bad. Breaking a rule is a
//! firmware bug, so the checks are assertions that stay on in release builds.

use crate::geometry::{BlockId, Geometry};

#[derive(Clone, Copy, Debug, Default)]
struct BlockState {
    /// Next page that may be programmed; `pages_per_block` when full.
    write_ptr: u32,
    pe_cycles: u32,
    bad: bool,
}

#[derive(Clone)]
pub struct NandState {
    blocks: Vec<BlockState>,
    pages_per_block: u32,
}

impl NandState {
    /// A fresh device: every block erased, no wear.
    pub fn new(geo: &Geometry) -> Self {
        NandState {
            blocks: vec![BlockState::default(); geo.block_count() as usize],
            pages_per_block: geo.pages_per_block,
        }
    }

    /// Every block starts with `pe_cycles` of wear (a device aged before the run).
    pub fn age(&mut self, pe_cycles: u32) {
        for b in &mut self.blocks {
            b.pe_cycles = pe_cycles;
        }
    }

    /// Asserts that programming `page` of `block` is legal and advances the write pointer.
    pub fn on_program(&mut self, block: BlockId, page: u32) {
        let pages_per_block = self.pages_per_block;
        let b = &mut self.blocks[block.0 as usize];
        assert!(
            page < pages_per_block,
            "NAND rule: page {page} out of block range"
        );
        assert!(
            page == b.write_ptr,
            "NAND rule: block {} must be programmed in order (next page {}, got {page})",
            block.0,
            b.write_ptr
        );
        b.write_ptr += 1;
    }

    /// Undoes `on_program` of `page` for a program that power loss interrupted before tPROG
    /// began: the data never reached the array, so the page is still erased and programmable.
    pub fn unprogram(&mut self, block: BlockId, page: u32) {
        let b = &mut self.blocks[block.0 as usize];
        assert_eq!(
            b.write_ptr,
            page + 1,
            "only the last program of block {} can be undone",
            block.0
        );
        b.write_ptr = page;
    }

    /// Records an erase of `block`: its pages become programmable again.
    pub fn on_erase(&mut self, block: BlockId) {
        let b = &mut self.blocks[block.0 as usize];
        b.write_ptr = 0;
        b.pe_cycles += 1;
    }

    pub fn mark_bad(&mut self, block: BlockId) {
        self.blocks[block.0 as usize].bad = true;
    }

    pub fn is_bad(&self, block: BlockId) -> bool {
        self.blocks[block.0 as usize].bad
    }

    pub fn pe_cycles(&self, block: BlockId) -> u32 {
        self.blocks[block.0 as usize].pe_cycles
    }

    pub fn write_ptr(&self, block: BlockId) -> u32 {
        self.blocks[block.0 as usize].write_ptr
    }

    /// Marks `block` as fully programmed: after a power cut the firmware cannot know how far
    /// an interrupted program got, so a half-written block is never programmed again before
    /// an erase.
    pub fn close(&mut self, block: BlockId) {
        self.blocks[block.0 as usize].write_ptr = self.pages_per_block;
    }

    pub fn block_count(&self) -> usize {
        self.blocks.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn geo() -> Geometry {
        Geometry {
            channels: 1,
            ways_per_channel: 1,
            planes_per_die: 1,
            blocks_per_plane: 2,
            pages_per_block: 4,
            page_size_bytes: 16,
            oob_size_bytes: 64,
            one_shot_pages: 1,
        }
    }

    #[test]
    fn pages_program_in_order_and_erase_resets() {
        let mut n = NandState::new(&geo());
        for p in 0..4 {
            n.on_program(BlockId(1), p);
        }
        n.on_erase(BlockId(1));
        n.on_program(BlockId(1), 0);
        assert_eq!(n.pe_cycles(BlockId(1)), 1);
    }

    #[test]
    #[should_panic(expected = "programmed in order")]
    fn out_of_order_program_is_a_bug() {
        let mut n = NandState::new(&geo());
        n.on_program(BlockId(0), 1);
    }

    #[test]
    #[should_panic(expected = "programmed in order")]
    fn program_without_erase_is_a_bug() {
        let mut n = NandState::new(&geo());
        for p in 0..4 {
            n.on_program(BlockId(0), p);
        }
        n.close(BlockId(0));
        n.on_program(BlockId(0), 0);
    }
}
