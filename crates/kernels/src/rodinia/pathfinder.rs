//! pathfinder — dynamic programming on a grid (Rodinia; WORKLOADS.md §2).
//!
//! Input: a rows×cols grid `wall` of ints `rand() % 10`, seeded with 9 in Rodinia; we draw
//! the same range from `SimRng` seeded with 9, row-major. Computation: r⁰ = wall row 0;
//! r^t[n] = wall[t][n] + min(r^{t−1}[n−1], r^{t−1}[n], r^{t−1}[n+1]) (neighbours outside
//! the grid dropped); output: the final row `result`.
//!
//! Structure: serial over rows, ‖ over columns: one phase "row step", no serial
//! microblock (§5.6), repeated rows−1 times (unrolled; step t computes row t). The row
//! vectors alternate between the two rows of `rows2` (step t reads row (t−1) mod 2 and
//! writes row t mod 2; the last step writes `result`); `init` puts wall row 0 into row 0,
//! as Rodinia's host code does.
//!
//! Sizes (cols × rows): mini 1,000 × 20, small 10,000 × 100, medium 100,000 × 100 (Rodinia
//! default `pathfinder 100000 100`), large 1,000,000 × 100, extralarge 1,000,000 × 1,000,
//! paper = medium (§5.6 gives no size). mini, small, large and extralarge are ours.

use crate::cost::{ld, looped, ops, st, Cost};
use crate::dataset::Dataset;
use crate::desc::Access::{Input, Output};
use crate::desc::{section, Access, DescBuilder, KernelDesc};
use crate::error::KernelError;
use crate::io::{self, Extent};
use crate::kernel::Kernel;
use crate::partition::{even, ScreenPlan};
use crate::reference;
use crate::state::{Data, State};
use nearflash_sim::SimRng;

pub const NAME: &str = "pathfinder";
pub const INIT_SEED: u64 = 9;
const WALL: usize = 0;
const ROWS2: usize = 1;
const RESULT: usize = 2;

pub struct Pathfinder {
    cols: usize,
    rows: usize,
    desc: KernelDesc,
}

/// (cols, rows) per dataset.
pub fn dims(d: Dataset) -> (usize, usize) {
    d.pick([
        (1_000, 20),
        (10_000, 100),
        (100_000, 100),
        (1_000_000, 100),
        (1_000_000, 1_000),
        (100_000, 100),
    ])
}

impl Pathfinder {
    pub fn new(dataset: Dataset, plan: ScreenPlan) -> Result<Self, KernelError> {
        let (cols, rows) = dims(dataset);
        let screens = plan.screens(NAME, "row step", cols)?;
        if rows < 2 {
            return Err(KernelError::ZeroScreens {
                kernel: NAME.into(),
                phase: "row step".into(),
                reason: "a grid of fewer than 2 rows has no row step".into(),
            });
        }
        let mut b = DescBuilder::new(&[("row step", false)]);
        for t in 1..rows as u32 {
            b.push(0, t, screens);
        }
        let c = cols as u64;
        let desc = b.finish(
            NAME,
            dataset,
            format!("cols={cols} rows={rows}"),
            vec![
                section("wall", c * rows as u64, 4, Access::Input),
                // in-out: row 0 starts as wall row 0 (`init`) and step 1 reads it.
                section("rows2", 2 * c, 4, Access::InOut),
                section("result", c, 4, Access::Output),
            ],
            vec!["result"],
        );
        Ok(Pathfinder { cols, rows, desc })
    }
}

impl Kernel for Pathfinder {
    fn desc(&self) -> &KernelDesc {
        &self.desc
    }

    fn init(&self) -> State {
        let (cols, rows) = (self.cols, self.rows);
        let mut rng = SimRng::seed_from_u64(INIT_SEED);
        let wall: Vec<i32> = (0..cols * rows).map(|_| rng.below(10) as i32).collect();
        let mut rows2 = vec![0i32; 2 * cols];
        rows2[..cols].copy_from_slice(&wall[..cols]);
        let mut s = State::new();
        s.push("wall", &[rows, cols], Data::I32(wall));
        s.push("rows2", &[2, cols], Data::I32(rows2));
        s.push("result", &[cols], Data::I32(vec![0; cols]));
        s
    }

    fn compute_screen(&self, mb: usize, screen: u32, st: &mut State) {
        let cols = self.cols;
        let t = self.desc.microblocks[mb].step as usize;
        let last = t == self.rows - 1;
        let mut rows2 = st.take_i32(ROWS2);
        let mut result = st.take_i32(RESULT);
        let wall = &st.i32s(WALL)[t * cols..(t + 1) * cols];
        let src_off = ((t - 1) % 2) * cols;
        let dst_off = (t % 2) * cols;
        for n in even(cols, self.desc.screens(mb), screen) {
            let lo = n.saturating_sub(1);
            let hi = (n + 1).min(cols - 1);
            let best = rows2[src_off + lo..=src_off + hi]
                .iter()
                .copied()
                .min()
                .expect("non-empty");
            let v = wall[n] + best;
            if last {
                result[n] = v;
            } else {
                rows2[dst_off + n] = v;
            }
        }
        st.put_i32(ROWS2, rows2);
        st.put_i32(RESULT, result);
    }

    fn compute_serial(&self, _mb: usize, _st: &mut State) {
        unreachable!("pathfinder has no serial microblock")
    }

    fn screen_cost(&self, mb: usize, screen: u32) -> Cost {
        let n = even(self.cols, self.desc.screens(mb), screen).len() as u64;
        // per column: load three previous-row values and the wall cell; two min
        // (compare + select each) and two edge tests = 6 ops; add; store.
        looped(n, ld(4) + ops(7) + st(1))
    }

    fn screen_io(&self, mb: usize, screen: u32) -> Vec<Extent> {
        let cols = self.cols;
        let t = self.desc.microblocks[mb].step as usize;
        let r = even(cols, self.desc.screens(mb), screen);
        let src = (t - 1) % 2;
        let mut v = vec![
            io::cols(0, r.clone(), t..t + 1, cols, 4, Input),
            io::cols(
                1,
                r.start.saturating_sub(1)..(r.end + 1).min(cols),
                src..src + 1,
                cols,
                4,
                Input,
            ),
        ];
        if t == self.rows - 1 {
            v.push(io::elems(2, r, 4, Output));
        } else {
            v.push(io::cols(1, r, t % 2..t % 2 + 1, cols, 4, Output));
        }
        v
    }

    fn reference(&self, input: &State) -> State {
        reference::pathfinder::run(self.cols, self.rows, input)
    }
}
