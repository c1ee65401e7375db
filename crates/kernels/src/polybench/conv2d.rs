//! 2DCONV (PolyBench/GPU 1.0, `float`): B[i][j] = Σ_{a,b∈1..3} c_ab·A[i+b−2][j+a−2] for
//! interior points 1 ≤ i, j ≤ N−2 (WORKLOADS.md §1); border values of B are left 0.
//!
//! Init: PolyBench/GPU uses unseeded `rand()/RAND_MAX`; we use a seeded generator
//! (`SimRng`, seed `INIT_SEED`): A[i][j] = (top 24 bits of the next u64) / 2^24, a uniform
//! float in [0, 1) that is exact in `float`, drawn in row-major order.
//!
//! Structure — Table 2: 1 MBLK, 0 serial: one microblock, screens over blocks of interior
//! rows. Sizes: NI = NJ = 1024, 2048, 4096, 8192, 16384 for mini…extralarge
//! (WORKLOADS.md's PolyBench/GPU table).
//!
//! Paper size: one float matrix A is Table 2's 640 MB ⇒ N = 12952.

use super::sizes::paper_n;
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

pub const NAME: &str = "2dconv";
pub const INIT_SEED: u64 = 0x2dc0_2dc0;
/// c[a-1][b-1] = c_ab: c11 0.2, c21 0.5, c31 −0.8, c12 −0.3, c22 0.6, c32 −0.9,
/// c13 0.4, c23 0.7, c33 0.10.
pub const COEFF: [[f32; 3]; 3] = [[0.2, -0.3, 0.4], [0.5, 0.6, 0.7], [-0.8, -0.9, 0.10]];
const A: usize = 0;
const B: usize = 1;

pub struct Conv2d {
    n: usize,
    desc: KernelDesc,
}

pub fn dims(d: Dataset) -> usize {
    if d == Dataset::Paper {
        return paper_n(640, |n| 4 * n * n);
    }
    d.pick([1024, 2048, 4096, 8192, 16384, 0])
}

impl Conv2d {
    pub fn new(dataset: Dataset, plan: ScreenPlan) -> Result<Self, KernelError> {
        let n = dims(dataset);
        let screens = plan.screens(NAME, "B = conv(A)", n.saturating_sub(2))?;
        let mut b = DescBuilder::new(&[("B = conv(A)", false)]);
        b.push(0, 0, screens);
        let nn = (n * n) as u64;
        let desc = b.finish(
            NAME,
            dataset,
            format!("NI=NJ={n} (float)"),
            vec![
                section("A", nn, 4, Access::Input),
                section("B", nn, 4, Access::Output),
            ],
            vec!["B"],
        );
        Ok(Conv2d { n, desc })
    }
}

impl Kernel for Conv2d {
    fn desc(&self) -> &KernelDesc {
        &self.desc
    }

    fn init(&self) -> State {
        let n = self.n;
        let mut rng = SimRng::seed_from_u64(INIT_SEED);
        let a: Vec<f32> = (0..n * n)
            .map(|_| (rng.next_u64() >> 40) as f32 / (1u32 << 24) as f32)
            .collect();
        let mut s = State::new();
        s.push("A", &[n, n], Data::F32(a));
        s.push("B", &[n, n], Data::F32(vec![0.0; n * n]));
        s
    }

    fn compute_screen(&self, mb: usize, screen: u32, st: &mut State) {
        let n = self.n;
        let mut b = st.take_f32(B);
        let a = st.f32s(A);
        for r in even(n - 2, self.desc.screens(mb), screen) {
            let i = r + 1;
            for j in 1..n - 1 {
                let mut acc = 0.0f32;
                for (ca, col) in COEFF.iter().zip(j - 1..=j + 1) {
                    for (c, row) in ca.iter().zip(i - 1..=i + 1) {
                        acc += c * a[row * n + col];
                    }
                }
                b[i * n + j] = acc;
            }
        }
        st.put_f32(B, b);
    }

    fn compute_serial(&self, _mb: usize, _st: &mut State) {
        unreachable!("2dconv has no serial microblock")
    }

    fn screen_cost(&self, mb: usize, screen: u32) -> Cost {
        let rows = even(self.n - 2, self.desc.screens(mb), screen).len() as u64;
        // per output: 9 loads, 1 mul + 8 fma, 1 store (coefficients in registers).
        looped(rows, looped(self.n as u64 - 2, ld(9) + ops(9) + st(1)))
    }

    fn screen_io(&self, mb: usize, screen: u32) -> Vec<Extent> {
        let r = even(self.n - 2, self.desc.screens(mb), screen);
        let row_bytes = 4 * self.n as u64;
        // output rows r.start+1 .. r.end+1 read input rows r.start .. r.end+2.
        vec![
            io::rows(0, r.start..r.end + 2, row_bytes, Input),
            io::rows(1, r.start + 1..r.end + 1, row_bytes, Output),
        ]
    }

    fn reference(&self, input: &State) -> State {
        reference::conv2d::run(self.n, input)
    }
}
