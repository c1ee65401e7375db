//! MVT (PolyBench/C 4.2.1): x1 += A·y1 and x2 += Aᵀ·y2, A is N×N (WORKLOADS.md §1).
//!
//! Structure — Table 2: 1 MBLK, 0 serial: one microblock holding two independent screen
//! families. With S = screens requested (≤ N), screens 0..S compute blocks of rows of x1
//! (row dot products) and screens S..2S blocks of x2 (column dot products, strided access).
//!
//! Paper size: A is Table 2's 640 MB (plus the four vectors) ⇒ N = 9156.

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
use crate::state::{fill1, fill2, Data, State};

pub const NAME: &str = "mvt";
const A: usize = 0;
const X1: usize = 1;
const X2: usize = 2;
const Y1: usize = 3;
const Y2: usize = 4;

pub struct Mvt {
    n: usize,
    family: u32,
    desc: KernelDesc,
}

pub fn dims(d: Dataset) -> usize {
    if d == Dataset::Paper {
        return paper_n(640, |n| 8 * (n * n + 4 * n));
    }
    d.pick([40, 120, 400, 2000, 4000, 0])
}

impl Mvt {
    pub fn new(dataset: Dataset, plan: ScreenPlan) -> Result<Self, KernelError> {
        let n = dims(dataset);
        let family = plan.screens(NAME, "x1 += A·y1 ‖ x2 += Aᵀ·y2", n)?;
        let mut b = DescBuilder::new(&[("x1 += A·y1 ‖ x2 += Aᵀ·y2", false)]);
        b.push(0, 0, 2 * family);
        let nu = n as u64;
        let desc = b.finish(
            NAME,
            dataset,
            format!("N={n}"),
            vec![
                section("A", nu * nu, 8, Access::Input),
                section("x1", nu, 8, Access::InOut),
                section("x2", nu, 8, Access::InOut),
                section("y_1", nu, 8, Access::Input),
                section("y_2", nu, 8, Access::Input),
            ],
            vec!["x1", "x2"],
        );
        Ok(Mvt { n, family, desc })
    }
}

impl Kernel for Mvt {
    fn desc(&self) -> &KernelDesc {
        &self.desc
    }

    fn init(&self) -> State {
        let n = self.n;
        let f = n as f64;
        let mut s = State::new();
        s.push(
            "A",
            &[n, n],
            Data::F64(fill2(n, n, |i, j| ((i * j) % n) as f64 / f)),
        );
        s.push("x1", &[n], Data::F64(fill1(n, |i| (i % n) as f64 / f)));
        s.push(
            "x2",
            &[n],
            Data::F64(fill1(n, |i| ((i + 1) % n) as f64 / f)),
        );
        s.push(
            "y_1",
            &[n],
            Data::F64(fill1(n, |i| ((i + 3) % n) as f64 / f)),
        );
        s.push(
            "y_2",
            &[n],
            Data::F64(fill1(n, |i| ((i + 4) % n) as f64 / f)),
        );
        s
    }

    fn compute_screen(&self, _mb: usize, screen: u32, st: &mut State) {
        let n = self.n;
        if screen < self.family {
            let mut x1 = st.take_f64(X1);
            let (a, y1) = (st.f64s(A), st.f64s(Y1));
            for i in even(n, self.family, screen) {
                let mut acc = x1[i];
                for (aij, yj) in a[i * n..(i + 1) * n].iter().zip(y1) {
                    acc += aij * yj;
                }
                x1[i] = acc;
            }
            st.put_f64(X1, x1);
        } else {
            let mut x2 = st.take_f64(X2);
            let (a, y2) = (st.f64s(A), st.f64s(Y2));
            for i in even(n, self.family, screen - self.family) {
                let mut acc = x2[i];
                for j in 0..n {
                    acc += a[j * n + i] * y2[j];
                }
                x2[i] = acc;
            }
            st.put_f64(X2, x2);
        }
    }

    fn compute_serial(&self, _mb: usize, _st: &mut State) {
        unreachable!("mvt has no serial microblock")
    }

    fn screen_cost(&self, _mb: usize, screen: u32) -> Cost {
        let rows = even(self.n, self.family, screen % self.family).len() as u64;
        // per output: load x[i], dot product of length N (load A, load y, fma), store x[i].
        looped(rows, ld(1) + looped(self.n as u64, ld(2) + ops(1)) + st(1))
    }

    fn screen_io(&self, _mb: usize, screen: u32) -> Vec<Extent> {
        let n = self.n;
        if screen < self.family {
            let r = even(n, self.family, screen);
            vec![
                io::rows(0, r.clone(), 8 * n as u64, Input),
                io::all(&self.desc, 3, Input),
                io::elems(1, r, 8, InOut),
            ]
        } else {
            let r = even(n, self.family, screen - self.family);
            vec![
                io::cols(0, r.clone(), 0..n, n, 8, Input),
                io::all(&self.desc, 4, Input),
                io::elems(2, r, 8, InOut),
            ]
        }
    }

    fn reference(&self, input: &State) -> State {
        reference::mvt::run(self.n, input)
    }
}
