//! ATAX (PolyBench/C 4.2.1): y = Aᵀ(A·x), A is M×N (WORKLOADS.md §1).
//!
//! Structure — Table 2: 2 MBLKs, 1 serial.
//! - MB0 `tmp = A·x`: screens over blocks of rows i (dot products of length N).
//! - MB1 `y = Aᵀ·tmp`: serial. This is the rephrasing: PolyBench's reference fuses both
//!   products into one i-loop in which y accumulates across i, a loop-carried recurrence;
//!   we keep that accumulation (y[j] += A[i][j]·tmp[i], i outer) as one serial microblock
//!   instead of WORKLOADS.md's column-parallel form, which gives Table 2's serial count.
//!
//! Paper size: A alone is Table 2's 640 MB ⇒ M = N = 9158 (see `sizes`).

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
use crate::state::{fill1, fill2, Data, State};

pub const NAME: &str = "atax";
const A: usize = 0;
const X: usize = 1;
const Y: usize = 2;
const TMP: usize = 3;

pub struct Atax {
    m: usize,
    n: usize,
    desc: KernelDesc,
}

/// (M, N) per dataset.
pub fn dims(d: Dataset) -> (usize, usize) {
    if d == Dataset::Paper {
        let n = paper_n(640, |n| 8 * (n * n + n));
        return (n, n);
    }
    d.pick([
        (38, 42),
        (116, 124),
        (390, 410),
        (1900, 2100),
        (1800, 2200),
        (0, 0),
    ])
}

impl Atax {
    pub fn new(dataset: Dataset, plan: ScreenPlan) -> Result<Self, KernelError> {
        let (m, n) = dims(dataset);
        let screens = plan.screens(NAME, "tmp = A·x", m)?;
        let mut b = DescBuilder::new(&[("tmp = A·x", false), ("y = Aᵀ·tmp", true)]);
        b.push(0, 0, screens).push(1, 0, 0);
        let (mu, nu) = (m as u64, n as u64);
        let desc = b.finish(
            NAME,
            dataset,
            format!("M={m} N={n}"),
            vec![
                section("A", mu * nu, 8, Access::Input),
                section("x", nu, 8, Access::Input),
                section("y", nu, 8, Access::Output),
                section("tmp", mu, 8, Access::Output),
            ],
            vec!["y"],
        );
        Ok(Atax { m, n, desc })
    }
}

impl Kernel for Atax {
    fn desc(&self) -> &KernelDesc {
        &self.desc
    }

    fn init(&self) -> State {
        let (m, n) = (self.m, self.n);
        let (fm, fn_) = (m as f64, n as f64);
        let mut s = State::new();
        s.push(
            "A",
            &[m, n],
            Data::F64(fill2(m, n, |i, j| ((i + j) % n) as f64 / (5.0 * fm))),
        );
        s.push("x", &[n], Data::F64(fill1(n, |i| 1.0 + i as f64 / fn_)));
        s.push("y", &[n], Data::F64(vec![0.0; n]));
        s.push("tmp", &[m], Data::F64(vec![0.0; m]));
        s
    }

    fn compute_screen(&self, mb: usize, screen: u32, st: &mut State) {
        let n = self.n;
        let rows = even(self.m, self.desc.screens(mb), screen);
        let mut tmp = st.take_f64(TMP);
        let (a, x) = (st.f64s(A), st.f64s(X));
        for i in rows {
            let row = &a[i * n..(i + 1) * n];
            let mut acc = 0.0;
            for j in 0..n {
                acc += row[j] * x[j];
            }
            tmp[i] = acc;
        }
        st.put_f64(TMP, tmp);
    }

    fn compute_serial(&self, _mb: usize, st: &mut State) {
        let n = self.n;
        let mut y = st.take_f64(Y);
        let (a, tmp) = (st.f64s(A), st.f64s(TMP));
        y.iter_mut().for_each(|v| *v = 0.0);
        for i in 0..self.m {
            let t = tmp[i];
            for (yj, aij) in y.iter_mut().zip(&a[i * n..(i + 1) * n]) {
                *yj += aij * t;
            }
        }
        st.put_f64(Y, y);
    }

    fn screen_cost(&self, mb: usize, screen: u32) -> Cost {
        let (m, n) = (self.m as u64, self.n as u64);
        if self.desc.microblocks[mb].phase == 0 {
            // per row: dot product (2 loads + fma per element), then store tmp[i].
            let rows = even(self.m, self.desc.screens(mb), screen).len() as u64;
            looped(rows, looped(n, ld(2) + ops(1)) + st(1))
        } else {
            // zero y (1 store per element); per row: load tmp[i], then per element load A
            // and y, fma, store y.
            looped(n, st(1)) + looped(m, ld(1) + looped(n, ld(2) + ops(1) + st(1)))
        }
    }

    fn screen_io(&self, mb: usize, screen: u32) -> Vec<Extent> {
        let (m, n) = (self.m, self.n);
        if self.desc.microblocks[mb].phase == 0 {
            let r = even(m, self.desc.screens(mb), screen);
            vec![
                io::rows(0, r.clone(), 8 * n as u64, Input),
                io::all(&self.desc, 1, Input),
                io::elems(3, r, 8, Output),
            ]
        } else {
            vec![
                io::all(&self.desc, 0, Input),
                io::all(&self.desc, 3, Input),
                io::all(&self.desc, 2, Output),
            ]
        }
    }

    fn reference(&self, input: &State) -> State {
        reference::atax::run(self.m, self.n, input)
    }
}
