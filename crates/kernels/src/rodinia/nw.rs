//! nw — Needleman–Wunsch global alignment (Rodinia; WORKLOADS.md §2).
//!
//! Inputs: two sequences of length L (a multiple of 16) with symbols 1..=10 indexing
//! BLOSUM62, gap penalty p = 10. Generator: Rodinia seeds `srand(7)` and draws
//! `rand() % 10 + 1`; we draw the same range from `SimRng` seeded with 7 (row sequence
//! first, then column sequence). As in Rodinia's host code, `init` builds the
//! (L+1)×(L+1) `reference` matrix S[i][j] = BLOSUM62[a_i][b_j] and the score matrix H with
//! H[i][0] = −i·p, H[0][j] = −j·p.
//!
//! Computation: H[i][j] = max(H[i−1][j−1] + S[i][j], H[i][j−1] − p, H[i−1][j] − p).
//! Structure: the matrix is tiled into 16×16 blocks processed along block anti-diagonals:
//! 2·(L/16) − 1 microblocks (steps), one phase "block diagonal", no serial microblock
//! (§5.6 names nw among the workloads with no serial microblock). Diagonal d holds the
//! blocks (bx, by) with bx + by = d; they are split into min(plan, blocks) screens of
//! contiguous blocks.
//!
//! Sizes (L): mini 64, small 256, medium 1024, large 2048 (Rodinia default `needle 2048
//! 10`), extralarge 4096, paper 2048 (§5.6 gives no size; Rodinia's default). mini, small,
//! medium and extralarge are ours.

use super::blosum62::BLOSUM62;
use crate::cost::{ld, looped, ops, st, Cost};
use crate::dataset::Dataset;
use crate::desc::Access::{InOut, Input};
use crate::desc::{section, Access, DescBuilder, KernelDesc};
use crate::error::KernelError;
use crate::io::{self, Extent};
use crate::kernel::Kernel;
use crate::partition::{even, ScreenPlan};
use crate::reference;
use crate::state::{Data, State};
use nearflash_sim::SimRng;
use std::ops::Range;

pub const NAME: &str = "nw";
pub const BLOCK: usize = 16;
pub const PENALTY: i32 = 10;
pub const INIT_SEED: u64 = 7;
const REF: usize = 2;
const SCORE: usize = 3;

pub struct Nw {
    len: usize,
    desc: KernelDesc,
}

pub fn dims(d: Dataset) -> usize {
    d.pick([64, 256, 1024, 2048, 4096, 2048])
}

impl Nw {
    pub fn new(dataset: Dataset, plan: ScreenPlan) -> Result<Self, KernelError> {
        let len = dims(dataset);
        let blocks = len / BLOCK;
        if blocks == 0 {
            plan.screens(NAME, "block diagonal", 0)?;
        }
        let mut b = DescBuilder::new(&[("block diagonal", false)]);
        for d in 0..2 * blocks - 1 {
            let n = Self::diag_blocks(blocks, d).len();
            b.push(0, d as u32, plan.screens(NAME, "block diagonal", n)?);
        }
        let cells = ((len + 1) * (len + 1)) as u64;
        let desc = b.finish(
            NAME,
            dataset,
            format!("L={len} penalty={PENALTY}"),
            vec![
                section("seq_a", len as u64, 4, Access::Input),
                section("seq_b", len as u64, 4, Access::Input),
                section("reference", cells, 4, Access::Input),
                section("score", cells, 4, Access::InOut),
            ],
            vec!["score"],
        );
        Ok(Nw { len, desc })
    }

    /// Block x-indices on anti-diagonal d of a blocks×blocks grid.
    fn diag_blocks(blocks: usize, d: usize) -> Range<usize> {
        d.saturating_sub(blocks - 1)..d.min(blocks - 1) + 1
    }

    fn screen_blocks(&self, mb: usize, screen: u32) -> Range<usize> {
        let d = self.desc.microblocks[mb].step as usize;
        let all = Self::diag_blocks(self.len / BLOCK, d);
        let r = even(all.len(), self.desc.screens(mb), screen);
        all.start + r.start..all.start + r.end
    }
}

impl Kernel for Nw {
    fn desc(&self) -> &KernelDesc {
        &self.desc
    }

    fn init(&self) -> State {
        let l = self.len;
        let w = l + 1;
        let mut rng = SimRng::seed_from_u64(INIT_SEED);
        let a: Vec<i32> = (0..l).map(|_| rng.below(10) as i32 + 1).collect();
        let b: Vec<i32> = (0..l).map(|_| rng.below(10) as i32 + 1).collect();
        let mut s = vec![0i32; w * w];
        for i in 1..w {
            for j in 1..w {
                s[i * w + j] = BLOSUM62[a[i - 1] as usize][b[j - 1] as usize];
            }
        }
        let mut h = vec![0i32; w * w];
        for i in 1..w {
            h[i * w] = -(i as i32) * PENALTY;
            h[i] = -(i as i32) * PENALTY;
        }
        let mut st = State::new();
        st.push("seq_a", &[l], Data::I32(a));
        st.push("seq_b", &[l], Data::I32(b));
        st.push("reference", &[w, w], Data::I32(s));
        st.push("score", &[w, w], Data::I32(h));
        st
    }

    fn compute_screen(&self, mb: usize, screen: u32, st: &mut State) {
        let w = self.len + 1;
        let d = self.desc.microblocks[mb].step as usize;
        let mut h = st.take_i32(SCORE);
        let s = st.i32s(REF);
        for bx in self.screen_blocks(mb, screen) {
            let by = d - bx;
            for i in by * BLOCK + 1..=(by + 1) * BLOCK {
                for j in bx * BLOCK + 1..=(bx + 1) * BLOCK {
                    let diag = h[(i - 1) * w + j - 1] + s[i * w + j];
                    let left = h[i * w + j - 1] - PENALTY;
                    let up = h[(i - 1) * w + j] - PENALTY;
                    h[i * w + j] = diag.max(left).max(up);
                }
            }
        }
        st.put_i32(SCORE, h);
    }

    fn compute_serial(&self, _mb: usize, _st: &mut State) {
        unreachable!("nw has no serial microblock")
    }

    fn screen_cost(&self, mb: usize, screen: u32) -> Cost {
        let blocks = self.screen_blocks(mb, screen).len() as u64;
        let b = BLOCK as u64;
        // per cell: load the diagonal and upper neighbours and S (the left neighbour is
        // the previous cell, in a register); add, two subtracts, two max (compare +
        // select each) = 7 ops; store.
        looped(blocks, looped(b, looped(b, ld(3) + ops(7) + st(1))))
    }

    fn screen_io(&self, mb: usize, screen: u32) -> Vec<Extent> {
        let w = self.len + 1;
        let d = self.desc.microblocks[mb].step as usize;
        let mut v = Vec::new();
        for bx in self.screen_blocks(mb, screen) {
            let (r0, c0) = ((d - bx) * BLOCK, bx * BLOCK);
            // halo: the row above (17 cells from the corner) and the column to the left.
            v.push(io::cols(3, c0..c0 + BLOCK + 1, r0..r0 + 1, w, 4, Input));
            v.push(io::cols(3, c0..c0 + 1, r0 + 1..r0 + BLOCK + 1, w, 4, Input));
            v.push(io::cols(
                3,
                c0 + 1..c0 + BLOCK + 1,
                r0 + 1..r0 + BLOCK + 1,
                w,
                4,
                InOut,
            ));
            v.push(io::cols(
                2,
                c0 + 1..c0 + BLOCK + 1,
                r0 + 1..r0 + BLOCK + 1,
                w,
                4,
                Input,
            ));
        }
        v
    }

    fn reference(&self, input: &State) -> State {
        reference::nw::run(self.len, PENALTY, input)
    }
}
