//! BiCG sub-kernel (PolyBench/C 4.2.1): q = A·p and s = Aᵀ·r, A is N×M (WORKLOADS.md §1).
//!
//! Structure — Table 2: 2 MBLKs, 1 serial.
//! - MB0 `q = A·p`: screens over blocks of rows i.
//! - MB1 `s = Aᵀ·r`: serial. Rephrasing as for ATAX: the reference accumulates s across the
//!   i-loop (s[j] += r[i]·A[i][j]); that recurrence is kept as one serial microblock rather
//!   than WORKLOADS.md's single microblock with two parallel families.
//!
//! Paper size: A, p and r in Table 2's 640 MB ⇒ M = N = 9157.

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

pub const NAME: &str = "bicg";
const A: usize = 0;
const P: usize = 1;
const R: usize = 2;
const S: usize = 3;
const Q: usize = 4;

pub struct Bicg {
    m: usize,
    n: usize,
    desc: KernelDesc,
}

/// (M, N) per dataset (same table as atax).
pub fn dims(d: Dataset) -> (usize, usize) {
    if d == Dataset::Paper {
        let n = paper_n(640, |n| 8 * (n * n + 2 * n));
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

impl Bicg {
    pub fn new(dataset: Dataset, plan: ScreenPlan) -> Result<Self, KernelError> {
        let (m, n) = dims(dataset);
        let screens = plan.screens(NAME, "q = A·p", n)?;
        let mut b = DescBuilder::new(&[("q = A·p", false), ("s = Aᵀ·r", true)]);
        b.push(0, 0, screens).push(1, 0, 0);
        let (mu, nu) = (m as u64, n as u64);
        let desc = b.finish(
            NAME,
            dataset,
            format!("M={m} N={n}"),
            vec![
                section("A", nu * mu, 8, Access::Input),
                section("p", mu, 8, Access::Input),
                section("r", nu, 8, Access::Input),
                section("s", mu, 8, Access::Output),
                section("q", nu, 8, Access::Output),
            ],
            vec!["s", "q"],
        );
        Ok(Bicg { m, n, desc })
    }
}

impl Kernel for Bicg {
    fn desc(&self) -> &KernelDesc {
        &self.desc
    }

    fn init(&self) -> State {
        let (m, n) = (self.m, self.n);
        let (fm, fn_) = (m as f64, n as f64);
        let mut s = State::new();
        s.push(
            "A",
            &[n, m],
            Data::F64(fill2(n, m, |i, j| ((i * (j + 1)) % n) as f64 / fn_)),
        );
        s.push("p", &[m], Data::F64(fill1(m, |i| (i % m) as f64 / fm)));
        s.push("r", &[n], Data::F64(fill1(n, |i| (i % n) as f64 / fn_)));
        s.push("s", &[m], Data::F64(vec![0.0; m]));
        s.push("q", &[n], Data::F64(vec![0.0; n]));
        s
    }

    fn compute_screen(&self, mb: usize, screen: u32, st: &mut State) {
        let m = self.m;
        let mut q = st.take_f64(Q);
        let (a, p) = (st.f64s(A), st.f64s(P));
        for i in even(self.n, self.desc.screens(mb), screen) {
            let mut acc = 0.0;
            for (aij, pj) in a[i * m..(i + 1) * m].iter().zip(p) {
                acc += aij * pj;
            }
            q[i] = acc;
        }
        st.put_f64(Q, q);
    }

    fn compute_serial(&self, _mb: usize, st: &mut State) {
        let m = self.m;
        let mut s = st.take_f64(S);
        let (a, r) = (st.f64s(A), st.f64s(R));
        s.iter_mut().for_each(|v| *v = 0.0);
        for i in 0..self.n {
            let ri = r[i];
            for (sj, aij) in s.iter_mut().zip(&a[i * m..(i + 1) * m]) {
                *sj += ri * aij;
            }
        }
        st.put_f64(S, s);
    }

    fn screen_cost(&self, mb: usize, screen: u32) -> Cost {
        let (m, n) = (self.m as u64, self.n as u64);
        if self.desc.microblocks[mb].phase == 0 {
            // per row i: dot product of length M (load A, load p, fma), store q[i].
            let rows = even(self.n, self.desc.screens(mb), screen).len() as u64;
            looped(rows, looped(m, ld(2) + ops(1)) + st(1))
        } else {
            // zero s; per row: load r[i]; per element load A and s, fma, store s.
            looped(m, st(1)) + looped(n, ld(1) + looped(m, ld(2) + ops(1) + st(1)))
        }
    }

    fn screen_io(&self, mb: usize, screen: u32) -> Vec<Extent> {
        if self.desc.microblocks[mb].phase == 0 {
            let r = even(self.n, self.desc.screens(mb), screen);
            vec![
                io::rows(0, r.clone(), 8 * self.m as u64, Input),
                io::all(&self.desc, 1, Input),
                io::elems(4, r, 8, Output),
            ]
        } else {
            vec![
                io::all(&self.desc, 0, Input),
                io::all(&self.desc, 2, Input),
                io::all(&self.desc, 3, Output),
            ]
        }
    }

    fn reference(&self, input: &State) -> State {
        reference::bicg::run(self.m, self.n, input)
    }
}
