//! GEMM (PolyBench/C 4.2.1): C = α·A·B + β·C, A is NI×NK, B is NK×NJ, α = 1.5, β = 1.2.
//!
//! Structure — Table 2: 1 MBLK, 0 serial: one microblock, screens over blocks of rows i
//! (each row of C depends only on row i of A, all of B and row i of C).
//!
//! Paper size: A, B and C (in-out) in Table 2's 192 MB ⇒ NI = NJ = NK = 2896.

use super::sizes::paper_n;
use crate::cost::{ld, looped, ops, st, Cost};
use crate::dataset::Dataset;
use crate::desc::Access::{InOut, Input};
use crate::desc::{section, Access, DescBuilder, KernelDesc};
use crate::error::KernelError;
use crate::io::{self, Extent};
use crate::kernel::Kernel;
use crate::partition::{even, ScreenPlan};
use crate::reference;
use crate::state::{fill2, Data, State};

pub const NAME: &str = "gemm";
pub const ALPHA: f64 = 1.5;
pub const BETA: f64 = 1.2;
const C: usize = 0;
const A: usize = 1;
const B: usize = 2;

pub struct Gemm {
    ni: usize,
    nj: usize,
    nk: usize,
    desc: KernelDesc,
}

/// (NI, NJ, NK) per dataset.
pub fn dims(d: Dataset) -> (usize, usize, usize) {
    if d == Dataset::Paper {
        let n = paper_n(192, |n| 8 * 3 * n * n);
        return (n, n, n);
    }
    d.pick([
        (20, 25, 30),
        (60, 70, 80),
        (200, 220, 240),
        (1000, 1100, 1200),
        (2000, 2300, 2600),
        (0, 0, 0),
    ])
}

impl Gemm {
    pub fn new(dataset: Dataset, plan: ScreenPlan) -> Result<Self, KernelError> {
        let (ni, nj, nk) = dims(dataset);
        let screens = plan.screens(NAME, "C = αAB + βC", ni)?;
        let mut b = DescBuilder::new(&[("C = αAB + βC", false)]);
        b.push(0, 0, screens);
        let (i, j, k) = (ni as u64, nj as u64, nk as u64);
        let desc = b.finish(
            NAME,
            dataset,
            format!("NI={ni} NJ={nj} NK={nk}"),
            vec![
                section("C", i * j, 8, Access::InOut),
                section("A", i * k, 8, Access::Input),
                section("B", k * j, 8, Access::Input),
            ],
            vec!["C"],
        );
        Ok(Gemm { ni, nj, nk, desc })
    }
}

impl Kernel for Gemm {
    fn desc(&self) -> &KernelDesc {
        &self.desc
    }

    fn init(&self) -> State {
        let (ni, nj, nk) = (self.ni, self.nj, self.nk);
        let mut s = State::new();
        s.push(
            "C",
            &[ni, nj],
            Data::F64(fill2(ni, nj, |i, j| ((i * j + 1) % ni) as f64 / ni as f64)),
        );
        s.push(
            "A",
            &[ni, nk],
            Data::F64(fill2(ni, nk, |i, k| {
                ((i * (k + 1)) % nk) as f64 / nk as f64
            })),
        );
        s.push(
            "B",
            &[nk, nj],
            Data::F64(fill2(nk, nj, |k, j| {
                ((k * (j + 2)) % nj) as f64 / nj as f64
            })),
        );
        s
    }

    fn compute_screen(&self, mb: usize, screen: u32, st: &mut State) {
        let (nj, nk) = (self.nj, self.nk);
        let mut c = st.take_f64(C);
        let (a, b) = (st.f64s(A), st.f64s(B));
        for i in even(self.ni, self.desc.screens(mb), screen) {
            let crow = &mut c[i * nj..(i + 1) * nj];
            crow.iter_mut().for_each(|v| *v *= BETA);
            for k in 0..nk {
                let t = ALPHA * a[i * nk + k];
                for (cij, bkj) in crow.iter_mut().zip(&b[k * nj..(k + 1) * nj]) {
                    *cij += t * bkj;
                }
            }
        }
        st.put_f64(C, c);
    }

    fn compute_serial(&self, _mb: usize, _st: &mut State) {
        unreachable!("gemm has no serial microblock")
    }

    fn screen_cost(&self, mb: usize, screen: u32) -> Cost {
        let (nj, nk) = (self.nj as u64, self.nk as u64);
        let rows = even(self.ni, self.desc.screens(mb), screen).len() as u64;
        // per row: scale C row (load, mul, store); per k: load A[i][k], multiply by α;
        // per j: load B and C, fma, store C.
        looped(
            rows,
            looped(nj, ld(1) + ops(1) + st(1))
                + looped(nk, ld(1) + ops(1) + looped(nj, ld(2) + ops(1) + st(1))),
        )
    }

    fn screen_io(&self, mb: usize, screen: u32) -> Vec<Extent> {
        let r = even(self.ni, self.desc.screens(mb), screen);
        vec![
            io::rows(0, r.clone(), 8 * self.nj as u64, InOut),
            io::rows(1, r, 8 * self.nk as u64, Input),
            io::all(&self.desc, 2, Input),
        ]
    }

    fn reference(&self, input: &State) -> State {
        reference::gemm::run(self.ni, self.nj, self.nk, ALPHA, BETA, input)
    }
}
