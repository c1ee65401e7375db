//! GESUMMV (PolyBench/C 4.2.1): y = α·A·x + β·B·x, α = 1.5, β = 1.2 (WORKLOADS.md §1).
//!
//! Structure — Table 2: 1 MBLK, 0 serial: screens over blocks of rows; each row does two
//! dot products and combines them.
//!
//! Paper size: A and B in Table 2's 640 MB ⇒ N = 6476.

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

pub const NAME: &str = "gesummv";
pub const ALPHA: f64 = 1.5;
pub const BETA: f64 = 1.2;
const A: usize = 0;
const B: usize = 1;
const X: usize = 2;
const TMP: usize = 3;
const Y: usize = 4;

pub struct Gesummv {
    n: usize,
    desc: KernelDesc,
}

pub fn dims(d: Dataset) -> usize {
    if d == Dataset::Paper {
        return paper_n(640, |n| 8 * (2 * n * n + n));
    }
    d.pick([30, 90, 250, 1300, 2800, 0])
}

impl Gesummv {
    pub fn new(dataset: Dataset, plan: ScreenPlan) -> Result<Self, KernelError> {
        let n = dims(dataset);
        let screens = plan.screens(NAME, "y = αAx + βBx", n)?;
        let mut b = DescBuilder::new(&[("y = αAx + βBx", false)]);
        b.push(0, 0, screens);
        let nu = n as u64;
        let desc = b.finish(
            NAME,
            dataset,
            format!("N={n}"),
            vec![
                section("A", nu * nu, 8, Access::Input),
                section("B", nu * nu, 8, Access::Input),
                section("x", nu, 8, Access::Input),
                section("tmp", nu, 8, Access::Output),
                section("y", nu, 8, Access::Output),
            ],
            vec!["y"],
        );
        Ok(Gesummv { n, desc })
    }
}

impl Kernel for Gesummv {
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
            Data::F64(fill2(n, n, |i, j| ((i * j + 1) % n) as f64 / f)),
        );
        s.push(
            "B",
            &[n, n],
            Data::F64(fill2(n, n, |i, j| ((i * j + 2) % n) as f64 / f)),
        );
        s.push("x", &[n], Data::F64(fill1(n, |i| (i % n) as f64 / f)));
        s.push("tmp", &[n], Data::F64(vec![0.0; n]));
        s.push("y", &[n], Data::F64(vec![0.0; n]));
        s
    }

    fn compute_screen(&self, mb: usize, screen: u32, st: &mut State) {
        let n = self.n;
        let mut tmp = st.take_f64(TMP);
        let mut y = st.take_f64(Y);
        let (a, b, x) = (st.f64s(A), st.f64s(B), st.f64s(X));
        for i in even(n, self.desc.screens(mb), screen) {
            let (mut t, mut u) = (0.0, 0.0);
            for j in 0..n {
                t = a[i * n + j] * x[j] + t;
                u = b[i * n + j] * x[j] + u;
            }
            tmp[i] = t;
            y[i] = ALPHA * t + BETA * u;
        }
        st.put_f64(TMP, tmp);
        st.put_f64(Y, y);
    }

    fn compute_serial(&self, _mb: usize, _st: &mut State) {
        unreachable!("gesummv has no serial microblock")
    }

    fn screen_cost(&self, mb: usize, screen: u32) -> Cost {
        let rows = even(self.n, self.desc.screens(mb), screen).len() as u64;
        // per row: per j load A, B, x and two fma; then mul + fma and stores of tmp and y.
        looped(rows, looped(self.n as u64, ld(3) + ops(2)) + ops(2) + st(2))
    }

    fn screen_io(&self, mb: usize, screen: u32) -> Vec<Extent> {
        let r = even(self.n, self.desc.screens(mb), screen);
        let row_bytes = 8 * self.n as u64;
        vec![
            io::rows(0, r.clone(), row_bytes, Input),
            io::rows(1, r.clone(), row_bytes, Input),
            io::all(&self.desc, 2, Input),
            io::elems(3, r.clone(), 8, Output),
            io::elems(4, r, 8, Output),
        ]
    }

    fn reference(&self, input: &State) -> State {
        reference::gesummv::run(self.n, ALPHA, BETA, input)
    }
}
