//! COVARIANCE (PolyBench/C 4.2.1): data is N×M (N observations of M variables);
//! cov = (data − mean)ᵀ(data − mean)/(N−1), float_n = N (WORKLOADS.md §1).
//!
//! Structure — Table 2: 3 MBLKs, 1 serial.
//! - MB0 `mean`: serial. Rephrasing: the column means (O(NM), the cheapest phase) run as
//!   one serial microblock instead of WORKLOADS.md's column-parallel form.
//! - MB1 `center`: data −= mean, screens over blocks of rows.
//! - MB2 `cov`: screens over rows i of the upper triangle (j ≥ i, mirrored to cov[j][i]);
//!   row i has M−i outputs, split into equal-work screens.
//!
//! Paper size: data is Table 2's 640 MB ⇒ M = N = 9158.

use super::sizes::paper_n;
use crate::cost::{ld, looped, ops, st, Cost, LOOP_OVERHEAD, LOOP_SETUP};
use crate::dataset::Dataset;
use crate::desc::Access::{InOut, Input, Output};
use crate::desc::{section, Access, DescBuilder, KernelDesc};
use crate::error::KernelError;
use crate::io::{self, Extent};
use crate::kernel::Kernel;
use crate::partition::{even, triangular, ScreenPlan};
use crate::reference;
use crate::state::{fill2, Data, State};
use std::ops::Range;

pub const NAME: &str = "covariance";
const DATA: usize = 0;
const MEAN: usize = 1;
const COV: usize = 2;

pub struct Covariance {
    m: usize,
    n: usize,
    desc: KernelDesc,
}

/// (M, N) per dataset.
pub fn dims(d: Dataset) -> (usize, usize) {
    if d == Dataset::Paper {
        let n = paper_n(640, |n| 8 * n * n);
        return (n, n);
    }
    d.pick([
        (28, 32),
        (80, 100),
        (240, 260),
        (1200, 1400),
        (2600, 3000),
        (0, 0),
    ])
}

/// Rows i of an upper-triangular loop (row i costs M−i) for screen s: the triangular split
/// of the reversed index.
pub(crate) fn upper_rows(m: usize, screens: u32, s: u32) -> Range<usize> {
    let r = triangular(m, screens, screens - 1 - s);
    (m - r.end)..(m - r.start)
}

impl Covariance {
    pub fn new(dataset: Dataset, plan: ScreenPlan) -> Result<Self, KernelError> {
        let (m, n) = dims(dataset);
        let center = plan.screens(NAME, "center", n)?;
        let cov = plan.screens(NAME, "cov", m)?;
        let mut b = DescBuilder::new(&[("mean", true), ("center", false), ("cov", false)]);
        b.push(0, 0, 0).push(1, 0, center).push(2, 0, cov);
        let (mu, nu) = (m as u64, n as u64);
        let desc = b.finish(
            NAME,
            dataset,
            format!("M={m} N={n}"),
            vec![
                section("data", nu * mu, 8, Access::InOut),
                section("mean", mu, 8, Access::Output),
                section("cov", mu * mu, 8, Access::Output),
            ],
            vec!["cov"],
        );
        Ok(Covariance { m, n, desc })
    }
}

impl Kernel for Covariance {
    fn desc(&self) -> &KernelDesc {
        &self.desc
    }

    fn init(&self) -> State {
        let (m, n) = (self.m, self.n);
        let mut s = State::new();
        s.push(
            "data",
            &[n, m],
            Data::F64(fill2(n, m, |i, j| (i * j) as f64 / m as f64)),
        );
        s.push("mean", &[m], Data::F64(vec![0.0; m]));
        s.push("cov", &[m, m], Data::F64(vec![0.0; m * m]));
        s
    }

    fn compute_serial(&self, _mb: usize, st: &mut State) {
        let (m, n) = (self.m, self.n);
        let mut mean = st.take_f64(MEAN);
        let data = st.f64s(DATA);
        for (j, mj) in mean.iter_mut().enumerate() {
            let mut acc = 0.0;
            for i in 0..n {
                acc += data[i * m + j];
            }
            *mj = acc / n as f64;
        }
        st.put_f64(MEAN, mean);
    }

    fn compute_screen(&self, mb: usize, screen: u32, st: &mut State) {
        let (m, n) = (self.m, self.n);
        let screens = self.desc.screens(mb);
        if self.desc.microblocks[mb].phase == 1 {
            let mut data = st.take_f64(DATA);
            let mean = st.f64s(MEAN);
            for i in even(n, screens, screen) {
                for (d, mj) in data[i * m..(i + 1) * m].iter_mut().zip(mean) {
                    *d -= mj;
                }
            }
            st.put_f64(DATA, data);
        } else {
            let mut cov = st.take_f64(COV);
            let data = st.f64s(DATA);
            for i in upper_rows(m, screens, screen) {
                for j in i..m {
                    let mut acc = 0.0;
                    for k in 0..n {
                        acc += data[k * m + i] * data[k * m + j];
                    }
                    acc /= n as f64 - 1.0;
                    cov[i * m + j] = acc;
                    cov[j * m + i] = acc;
                }
            }
            st.put_f64(COV, cov);
        }
    }

    fn screen_cost(&self, mb: usize, screen: u32) -> Cost {
        let (m, n) = (self.m as u64, self.n as u64);
        match self.desc.microblocks[mb].phase {
            // per column: sum of N loads (load, add), divide, store.
            0 => looped(m, looped(n, ld(1) + ops(1)) + ops(1) + st(1)),
            // per element: load data, load mean, subtract, store.
            1 => {
                let rows = even(self.n, self.desc.screens(mb), screen).len() as u64;
                looped(rows, looped(m, ld(2) + ops(1) + st(1)))
            }
            // per (i, j ≥ i): dot product of length N over two columns (2 loads + fma),
            // divide, two stores.
            _ => {
                upper_rows(self.m, self.desc.screens(mb), screen)
                    .map(|i| {
                        looped(m - i as u64, looped(n, ld(2) + ops(1)) + ops(1) + st(2))
                            + ops(LOOP_OVERHEAD)
                    })
                    .sum::<Cost>()
                    + ops(LOOP_SETUP)
            }
        }
    }

    fn screen_io(&self, mb: usize, screen: u32) -> Vec<Extent> {
        let (m, n) = (self.m, self.n);
        let screens = self.desc.screens(mb);
        match self.desc.microblocks[mb].phase {
            0 => vec![
                io::all(&self.desc, 0, Input),
                io::all(&self.desc, 1, Output),
            ],
            1 => vec![
                io::rows(0, even(n, screens, screen), 8 * m as u64, InOut),
                io::all(&self.desc, 1, Input),
            ],
            _ => {
                // rows i of cov (j ≥ i) and their mirror, columns i of rows ≥ i.
                let r = upper_rows(m, screens, screen);
                vec![
                    io::cols(0, r.start..m, 0..n, m, 8, Input),
                    io::cols(2, r.start..m, r.clone(), m, 8, Output),
                    io::cols(2, r.clone(), r.end..m, m, 8, Output),
                ]
            }
        }
    }

    fn reference(&self, input: &State) -> State {
        reference::covariance::run(self.m, self.n, input)
    }
}
