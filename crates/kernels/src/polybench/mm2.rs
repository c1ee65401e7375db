//! 2MM (PolyBench/C 4.2.1): tmp = α·A·B (NI×NJ), then D = tmp·C + β·D (NI×NL); A is NI×NK,
//! B NK×NJ, C NJ×NL; α = 1.5, β = 1.2 (WORKLOADS.md §1).
//!
//! Structure — Table 2: 2 MBLKs, 1 serial.
//! - MB0 `D *= β`: serial. Rephrasing: the reference's `D[i][j] *= beta` statement is
//!   hoisted out of the second loop nest into one serial pass (O(NI·NL), cheap).
//! - MB1 `tmp = αAB; D += tmp·C`: screens over blocks of rows i. Row i of D needs only row
//!   i of tmp, so the two products fuse per row (WORKLOADS.md's MB1 → MB2 split becomes one
//!   row-parallel microblock; the fusion is what leaves room for Table 2's serial MBLK).
//!
//! Paper size: A, B, C and D (in-out) in Table 2's 2560 MB ⇒ NI = NJ = NK = NL = 9158.

use super::sizes::paper_n;
use crate::cost::{ld, looped, ops, st, Cost};
use crate::dataset::Dataset;
use crate::desc::Access::{InOut, Input, Output};
use crate::desc::{section, Access, DescBuilder, KernelDesc};
use crate::error::KernelError;
use crate::io::{self, Extent};
use crate::kernel::Kernel;
use crate::partition::{even, ScreenPlan};
use crate::reference;
use crate::state::{fill2, Data, State};

pub const NAME: &str = "2mm";
pub const ALPHA: f64 = 1.5;
pub const BETA: f64 = 1.2;
const A: usize = 0;
const B: usize = 1;
const C: usize = 2;
const D: usize = 3;
const TMP: usize = 4;

pub struct Mm2 {
    ni: usize,
    nj: usize,
    nk: usize,
    nl: usize,
    desc: KernelDesc,
}

/// (NI, NJ, NK, NL) per dataset.
pub fn dims(d: Dataset) -> (usize, usize, usize, usize) {
    if d == Dataset::Paper {
        let n = paper_n(2560, |n| 8 * 4 * n * n);
        return (n, n, n, n);
    }
    d.pick([
        (16, 18, 22, 24),
        (40, 50, 70, 80),
        (180, 190, 210, 220),
        (800, 900, 1100, 1200),
        (1600, 1800, 2200, 2400),
        (0, 0, 0, 0),
    ])
}

impl Mm2 {
    pub fn new(dataset: Dataset, plan: ScreenPlan) -> Result<Self, KernelError> {
        let (ni, nj, nk, nl) = dims(dataset);
        let screens = plan.screens(NAME, "tmp = αAB; D += tmp·C", ni)?;
        let mut b = DescBuilder::new(&[("D *= β", true), ("tmp = αAB; D += tmp·C", false)]);
        b.push(0, 0, 0).push(1, 0, screens);
        let (i, j, k, l) = (ni as u64, nj as u64, nk as u64, nl as u64);
        let desc = b.finish(
            NAME,
            dataset,
            format!("NI={ni} NJ={nj} NK={nk} NL={nl}"),
            vec![
                section("A", i * k, 8, Access::Input),
                section("B", k * j, 8, Access::Input),
                section("C", j * l, 8, Access::Input),
                section("D", i * l, 8, Access::InOut),
                section("tmp", i * j, 8, Access::Output),
            ],
            vec!["D"],
        );
        Ok(Mm2 {
            ni,
            nj,
            nk,
            nl,
            desc,
        })
    }
}

impl Kernel for Mm2 {
    fn desc(&self) -> &KernelDesc {
        &self.desc
    }

    fn init(&self) -> State {
        let (ni, nj, nk, nl) = (self.ni, self.nj, self.nk, self.nl);
        let mut s = State::new();
        s.push(
            "A",
            &[ni, nk],
            Data::F64(fill2(ni, nk, |i, k| ((i * k + 1) % ni) as f64 / ni as f64)),
        );
        s.push(
            "B",
            &[nk, nj],
            Data::F64(fill2(nk, nj, |k, j| {
                ((k * (j + 1)) % nj) as f64 / nj as f64
            })),
        );
        s.push(
            "C",
            &[nj, nl],
            Data::F64(fill2(nj, nl, |j, l| {
                ((j * (l + 3) + 1) % nl) as f64 / nl as f64
            })),
        );
        s.push(
            "D",
            &[ni, nl],
            Data::F64(fill2(ni, nl, |i, l| {
                ((i * (l + 2)) % nk) as f64 / nk as f64
            })),
        );
        s.push("tmp", &[ni, nj], Data::F64(vec![0.0; ni * nj]));
        s
    }

    fn compute_screen(&self, mb: usize, screen: u32, st: &mut State) {
        let (nj, nk, nl) = (self.nj, self.nk, self.nl);
        let mut tmp = st.take_f64(TMP);
        let mut d = st.take_f64(D);
        let (a, b, c) = (st.f64s(A), st.f64s(B), st.f64s(C));
        for i in even(self.ni, self.desc.screens(mb), screen) {
            for j in 0..nj {
                let mut acc = 0.0;
                for k in 0..nk {
                    acc += ALPHA * a[i * nk + k] * b[k * nj + j];
                }
                tmp[i * nj + j] = acc;
            }
            for l in 0..nl {
                let mut acc = d[i * nl + l];
                for j in 0..nj {
                    acc += tmp[i * nj + j] * c[j * nl + l];
                }
                d[i * nl + l] = acc;
            }
        }
        st.put_f64(TMP, tmp);
        st.put_f64(D, d);
    }

    fn compute_serial(&self, _mb: usize, st: &mut State) {
        st.f64s_mut(D).iter_mut().for_each(|v| *v *= BETA);
    }

    fn screen_cost(&self, mb: usize, screen: u32) -> Cost {
        let (ni, nj, nk, nl) = (
            self.ni as u64,
            self.nj as u64,
            self.nk as u64,
            self.nl as u64,
        );
        if self.desc.microblocks[mb].phase == 0 {
            // per element of D: load, mul, store.
            return looped(ni * nl, ld(1) + ops(1) + st(1));
        }
        let rows = even(self.ni, self.desc.screens(mb), screen).len() as u64;
        // per row: NJ outputs of tmp, each a length-NK dot product (load A, load B, mul by
        // α, fma) then a store; NL outputs of D, each load D, length-NJ dot product (load
        // tmp, load C, fma), store.
        looped(
            rows,
            looped(nj, looped(nk, ld(2) + ops(2)) + st(1))
                + looped(nl, ld(1) + looped(nj, ld(2) + ops(1)) + st(1)),
        )
    }

    fn screen_io(&self, mb: usize, screen: u32) -> Vec<Extent> {
        if self.desc.microblocks[mb].phase == 0 {
            return vec![io::all(&self.desc, 3, InOut)];
        }
        let r = even(self.ni, self.desc.screens(mb), screen);
        vec![
            io::rows(0, r.clone(), 8 * self.nk as u64, Input),
            io::all(&self.desc, 1, Input),
            io::all(&self.desc, 2, Input),
            io::rows(3, r.clone(), 8 * self.nl as u64, InOut),
            io::rows(4, r, 8 * self.nj as u64, Output),
        ]
    }

    fn reference(&self, input: &State) -> State {
        reference::mm2::run(self.ni, self.nj, self.nk, self.nl, ALPHA, BETA, input)
    }
}
