//! CORRELATION (PolyBench/C 4.2.1): data is N×M; column means, standard deviations
//! (σ ≤ 0.1 ⇒ 1), normalise, corr = dataᵀ·data with corr_ii = 1 (WORKLOADS.md §1).
//!
//! Structure — Table 2: 4 MBLKs, 1 serial.
//! - MB0 `mean`: serial (rephrasing as in COVARIANCE: the cheapest phase runs serially).
//! - MB1 `stddev`: screens over blocks of columns j.
//! - MB2 `normalize`: screens over blocks of rows i.
//! - MB3 `corr`: screens over rows i of the upper triangle (i < j mirrored; corr_ii = 1),
//!   equal-work split.
//!
//! Live-out: corr, plus mean and stddev — WORKLOADS.md warns that corr is mostly 1.0 for
//! this input, so the intermediates are checked too.
//!
//! Paper size: data is Table 2's 640 MB ⇒ M = N = 9158.

use super::covariance::upper_rows;
use crate::cost::{ld, looped, ops, st, Cost, LOOP_OVERHEAD, LOOP_SETUP};
use crate::dataset::Dataset;
use crate::desc::Access::{InOut, Input, Output};
use crate::desc::{section, Access, DescBuilder, KernelDesc};
use crate::error::KernelError;
use crate::io::{self, Extent};
use crate::kernel::Kernel;
use crate::partition::{even, ScreenPlan};
use crate::reference;
use crate::state::{fill2, Data, State};

pub const NAME: &str = "correlation";
pub const EPS: f64 = 0.1;
const DATA: usize = 0;
const MEAN: usize = 1;
const STDDEV: usize = 2;
const CORR: usize = 3;

pub struct Correlation {
    m: usize,
    n: usize,
    desc: KernelDesc,
}

/// (M, N) per dataset (same table as covariance).
pub fn dims(d: Dataset) -> (usize, usize) {
    super::covariance::dims(d)
}

impl Correlation {
    pub fn new(dataset: Dataset, plan: ScreenPlan) -> Result<Self, KernelError> {
        let (m, n) = dims(dataset);
        let sd = plan.screens(NAME, "stddev", m)?;
        let norm = plan.screens(NAME, "normalize", n)?;
        let corr = plan.screens(NAME, "corr", m)?;
        let mut b = DescBuilder::new(&[
            ("mean", true),
            ("stddev", false),
            ("normalize", false),
            ("corr", false),
        ]);
        b.push(0, 0, 0)
            .push(1, 0, sd)
            .push(2, 0, norm)
            .push(3, 0, corr);
        let (mu, nu) = (m as u64, n as u64);
        let desc = b.finish(
            NAME,
            dataset,
            format!("M={m} N={n}"),
            vec![
                section("data", nu * mu, 8, Access::InOut),
                section("mean", mu, 8, Access::Output),
                section("stddev", mu, 8, Access::Output),
                section("corr", mu * mu, 8, Access::Output),
            ],
            vec!["corr", "mean", "stddev"],
        );
        Ok(Correlation { m, n, desc })
    }
}

impl Kernel for Correlation {
    fn desc(&self) -> &KernelDesc {
        &self.desc
    }

    fn init(&self) -> State {
        let (m, n) = (self.m, self.n);
        let mut s = State::new();
        s.push(
            "data",
            &[n, m],
            Data::F64(fill2(n, m, |i, j| (i * j) as f64 / m as f64 + i as f64)),
        );
        s.push("mean", &[m], Data::F64(vec![0.0; m]));
        s.push("stddev", &[m], Data::F64(vec![0.0; m]));
        s.push("corr", &[m, m], Data::F64(vec![0.0; m * m]));
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
        let float_n = n as f64;
        let screens = self.desc.screens(mb);
        match self.desc.microblocks[mb].phase {
            1 => {
                let mut sd = st.take_f64(STDDEV);
                let (data, mean) = (st.f64s(DATA), st.f64s(MEAN));
                for j in even(m, screens, screen) {
                    let mut acc = 0.0;
                    for i in 0..n {
                        let d = data[i * m + j] - mean[j];
                        acc += d * d;
                    }
                    let s = (acc / float_n).sqrt();
                    sd[j] = if s <= EPS { 1.0 } else { s };
                }
                st.put_f64(STDDEV, sd);
            }
            2 => {
                let mut data = st.take_f64(DATA);
                let (mean, sd) = (st.f64s(MEAN), st.f64s(STDDEV));
                let sqrt_n = float_n.sqrt();
                for i in even(n, screens, screen) {
                    for j in 0..m {
                        let x = data[i * m + j] - mean[j];
                        data[i * m + j] = x / (sqrt_n * sd[j]);
                    }
                }
                st.put_f64(DATA, data);
            }
            _ => {
                let mut corr = st.take_f64(CORR);
                let data = st.f64s(DATA);
                for i in upper_rows(m, screens, screen) {
                    corr[i * m + i] = 1.0;
                    for j in i + 1..m {
                        let mut acc = 0.0;
                        for k in 0..n {
                            acc += data[k * m + i] * data[k * m + j];
                        }
                        corr[i * m + j] = acc;
                        corr[j * m + i] = acc;
                    }
                }
                st.put_f64(CORR, corr);
            }
        }
    }

    fn screen_cost(&self, mb: usize, screen: u32) -> Cost {
        let (m, n) = (self.m as u64, self.n as u64);
        let screens = self.desc.screens(mb);
        match self.desc.microblocks[mb].phase {
            // per column: N loads and adds, divide, store.
            0 => looped(m, looped(n, ld(1) + ops(1)) + ops(1) + st(1)),
            // per column: load mean; per element load, subtract, fma; then divide, sqrt,
            // compare-and-select, store.
            1 => {
                let cols = even(self.m, screens, screen).len() as u64;
                looped(cols, ld(1) + looped(n, ld(1) + ops(2)) + ops(3) + st(1))
            }
            // per element: load data, mean, stddev; subtract, mul (√N·σ), divide; store.
            2 => {
                let rows = even(self.n, screens, screen).len() as u64;
                looped(rows, looped(m, ld(3) + ops(3) + st(1)))
            }
            // row i: store the diagonal; per j > i: dot product of length N (2 loads +
            // fma), two stores.
            _ => {
                upper_rows(self.m, screens, screen)
                    .map(|i| {
                        st(1)
                            + looped(m - 1 - i as u64, looped(n, ld(2) + ops(1)) + st(2))
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
            1 => {
                let c = even(m, screens, screen);
                vec![
                    io::cols(0, c.clone(), 0..n, m, 8, Input),
                    io::elems(1, c.clone(), 8, Input),
                    io::elems(2, c, 8, Output),
                ]
            }
            2 => vec![
                io::rows(0, even(n, screens, screen), 8 * m as u64, InOut),
                io::all(&self.desc, 1, Input),
                io::all(&self.desc, 2, Input),
            ],
            _ => {
                let r = upper_rows(m, screens, screen);
                vec![
                    io::cols(0, r.start..m, 0..n, m, 8, Input),
                    io::cols(3, r.start..m, r.clone(), m, 8, Output),
                    io::cols(3, r.clone(), r.end..m, m, 8, Output),
                ]
            }
        }
    }

    fn reference(&self, input: &State) -> State {
        reference::correlation::run(self.m, self.n, EPS, input)
    }
}
