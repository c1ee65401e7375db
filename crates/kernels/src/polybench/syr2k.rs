//! SYR2K (PolyBench/C 4.2.1): C = α·A·Bᵀ + α·B·Aᵀ + β·C on the lower triangle (j ≤ i),
//! A and B are N×M, α = 1.5, β = 1.2 (WORKLOADS.md §1).
//!
//! Structure — Table 2: 1 MBLK, 0 serial: screens over rows i with equal triangular work
//! (as SYRK).
//!
//! Paper size: A, B and C (in-out) in Table 2's 1280 MB ⇒ M = N = 7478.

use super::sizes::paper_n;
use crate::cost::{ld, looped, ops, st, Cost, LOOP_OVERHEAD, LOOP_SETUP};
use crate::dataset::Dataset;
use crate::desc::Access::{InOut, Input};
use crate::desc::{section, Access, DescBuilder, KernelDesc};
use crate::error::KernelError;
use crate::io::{self, Extent};
use crate::kernel::Kernel;
use crate::partition::{triangular, ScreenPlan};
use crate::reference;
use crate::state::{fill2, Data, State};

pub const NAME: &str = "syr2k";
pub const ALPHA: f64 = 1.5;
pub const BETA: f64 = 1.2;
const C: usize = 0;
const A: usize = 1;
const B: usize = 2;

pub struct Syr2k {
    m: usize,
    n: usize,
    desc: KernelDesc,
}

/// (M, N) per dataset.
pub fn dims(d: Dataset) -> (usize, usize) {
    if d == Dataset::Paper {
        let n = paper_n(1280, |n| 8 * 3 * n * n);
        return (n, n);
    }
    d.pick([
        (20, 30),
        (60, 80),
        (200, 240),
        (1000, 1200),
        (2000, 2600),
        (0, 0),
    ])
}

impl Syr2k {
    pub fn new(dataset: Dataset, plan: ScreenPlan) -> Result<Self, KernelError> {
        let (m, n) = dims(dataset);
        let screens = plan.screens(NAME, "C = αABᵀ + αBAᵀ + βC", n)?;
        let mut b = DescBuilder::new(&[("C = αABᵀ + αBAᵀ + βC", false)]);
        b.push(0, 0, screens);
        let (mu, nu) = (m as u64, n as u64);
        let desc = b.finish(
            NAME,
            dataset,
            format!("M={m} N={n}"),
            vec![
                section("C", nu * nu, 8, Access::InOut),
                section("A", nu * mu, 8, Access::Input),
                section("B", nu * mu, 8, Access::Input),
            ],
            vec!["C"],
        );
        Ok(Syr2k { m, n, desc })
    }
}

impl Kernel for Syr2k {
    fn desc(&self) -> &KernelDesc {
        &self.desc
    }

    fn init(&self) -> State {
        let (m, n) = (self.m, self.n);
        let (fm, fn_) = (m as f64, n as f64);
        let mut s = State::new();
        s.push(
            "C",
            &[n, n],
            Data::F64(fill2(n, n, |i, j| ((i * j + 3) % n) as f64 / fm)),
        );
        s.push(
            "A",
            &[n, m],
            Data::F64(fill2(n, m, |i, j| ((i * j + 1) % n) as f64 / fn_)),
        );
        s.push(
            "B",
            &[n, m],
            Data::F64(fill2(n, m, |i, j| ((i * j + 2) % m) as f64 / fm)),
        );
        s
    }

    fn compute_screen(&self, mb: usize, screen: u32, st: &mut State) {
        let (m, n) = (self.m, self.n);
        let mut c = st.take_f64(C);
        let (a, b) = (st.f64s(A), st.f64s(B));
        for i in triangular(n, self.desc.screens(mb), screen) {
            let crow = &mut c[i * n..i * n + i + 1];
            crow.iter_mut().for_each(|v| *v *= BETA);
            for k in 0..m {
                let (aik, bik) = (a[i * m + k], b[i * m + k]);
                for (j, cij) in crow.iter_mut().enumerate() {
                    *cij += a[j * m + k] * ALPHA * bik + b[j * m + k] * ALPHA * aik;
                }
            }
        }
        st.put_f64(C, c);
    }

    fn compute_serial(&self, _mb: usize, _st: &mut State) {
        unreachable!("syr2k has no serial microblock")
    }

    fn screen_cost(&self, mb: usize, screen: u32) -> Cost {
        let m = self.m as u64;
        // row i: scale i+1 entries; per k: load A[i][k], B[i][k], multiply each by α
        // (hoisted); per j ≤ i: load A[j][k], B[j][k], C, two fma, store C.
        triangular(self.n, self.desc.screens(mb), screen)
            .map(|i| {
                let w = i as u64 + 1;
                looped(w, ld(1) + ops(1) + st(1))
                    + looped(m, ld(2) + ops(2) + looped(w, ld(3) + ops(2) + st(1)))
                    + ops(LOOP_OVERHEAD)
            })
            .sum::<Cost>()
            + ops(LOOP_SETUP)
    }

    fn screen_io(&self, mb: usize, screen: u32) -> Vec<Extent> {
        let r = triangular(self.n, self.desc.screens(mb), screen);
        let a_rows = 8 * self.m as u64;
        vec![
            io::rows(0, r.clone(), 8 * self.n as u64, InOut),
            io::rows(1, 0..r.end, a_rows, Input),
            io::rows(2, 0..r.end, a_rows, Input),
        ]
    }

    fn reference(&self, input: &State) -> State {
        reference::syr2k::run(self.m, self.n, ALPHA, BETA, input)
    }
}
