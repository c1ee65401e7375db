//! 3MM (PolyBench/C 4.2.1): E = A·B, F = C·D, G = E·F. A is NI×NK, B NK×NJ, C NJ×NM,
//! D NM×NL (WORKLOADS.md §1).
//!
//! Structure — Table 2: 3 MBLKs, 1 serial.
//! - MB0 `E, F, G = 0`: serial. Rephrasing: the reference's `= 0` initialisations of the
//!   three products are hoisted into one serial pass; the products then accumulate into
//!   the zeroed arrays.
//! - MB1 `E = AB ‖ F = CD`: two independent screen families (S screens over rows of E,
//!   then S over rows of F).
//! - MB2 `G = EF`: screens over rows of G.
//!
//! Paper size: A, B, C, D in Table 2's 2560 MB ⇒ all dimensions 9158.

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

pub const NAME: &str = "3mm";
const A: usize = 0;
const B: usize = 1;
const C: usize = 2;
const D: usize = 3;
const E: usize = 4;
const F: usize = 5;
const G: usize = 6;

pub struct Mm3 {
    ni: usize,
    nj: usize,
    nk: usize,
    nl: usize,
    nm: usize,
    /// Screens per family in MB1 (E rows, F rows).
    family_e: u32,
    family_f: u32,
    desc: KernelDesc,
}

/// (NI, NJ, NK, NL, NM) per dataset.
pub fn dims(d: Dataset) -> (usize, usize, usize, usize, usize) {
    if d == Dataset::Paper {
        let n = paper_n(2560, |n| 8 * 4 * n * n);
        return (n, n, n, n, n);
    }
    d.pick([
        (16, 18, 20, 22, 24),
        (40, 50, 60, 70, 80),
        (180, 190, 200, 210, 220),
        (800, 900, 1000, 1100, 1200),
        (1600, 1800, 2000, 2200, 2400),
        (0, 0, 0, 0, 0),
    ])
}

impl Mm3 {
    pub fn new(dataset: Dataset, plan: ScreenPlan) -> Result<Self, KernelError> {
        let (ni, nj, nk, nl, nm) = dims(dataset);
        let family_e = plan.screens(NAME, "E = AB ‖ F = CD", ni)?;
        let family_f = plan.screens(NAME, "E = AB ‖ F = CD", nj)?;
        let g = plan.screens(NAME, "G = EF", ni)?;
        let mut b = DescBuilder::new(&[
            ("E, F, G = 0", true),
            ("E = AB ‖ F = CD", false),
            ("G = EF", false),
        ]);
        b.push(0, 0, 0)
            .push(1, 0, family_e + family_f)
            .push(2, 0, g);
        let (i, j, k, l, m) = (ni as u64, nj as u64, nk as u64, nl as u64, nm as u64);
        let desc = b.finish(
            NAME,
            dataset,
            format!("NI={ni} NJ={nj} NK={nk} NL={nl} NM={nm}"),
            vec![
                section("A", i * k, 8, Access::Input),
                section("B", k * j, 8, Access::Input),
                section("C", j * m, 8, Access::Input),
                section("D", m * l, 8, Access::Input),
                section("E", i * j, 8, Access::Output),
                section("F", j * l, 8, Access::Output),
                section("G", i * l, 8, Access::Output),
            ],
            vec!["G"],
        );
        Ok(Mm3 {
            ni,
            nj,
            nk,
            nl,
            nm,
            family_e,
            family_f,
            desc,
        })
    }

    /// out[r][c] += Σ_t x[r][t]·y[t][c] for rows r in `rows`; x is ·×inner, y inner×cols.
    fn product(
        x: &[f64],
        y: &[f64],
        out: &mut [f64],
        rows: std::ops::Range<usize>,
        inner: usize,
        cols: usize,
    ) {
        for r in rows {
            for c in 0..cols {
                let mut acc = out[r * cols + c];
                for t in 0..inner {
                    acc += x[r * inner + t] * y[t * cols + c];
                }
                out[r * cols + c] = acc;
            }
        }
    }

    /// Cost of `rows` rows of a product with `inner`-long dot products and `cols` columns:
    /// per output load the zeroed accumulator, per term load two and fma, then store.
    fn product_cost(rows: u64, inner: u64, cols: u64) -> Cost {
        looped(
            rows,
            looped(cols, ld(1) + looped(inner, ld(2) + ops(1)) + st(1)),
        )
    }
}

impl Kernel for Mm3 {
    fn desc(&self) -> &KernelDesc {
        &self.desc
    }

    fn init(&self) -> State {
        let (ni, nj, nk, nl, nm) = (self.ni, self.nj, self.nk, self.nl, self.nm);
        let mut s = State::new();
        s.push(
            "A",
            &[ni, nk],
            Data::F64(fill2(ni, nk, |i, k| {
                ((i * k + 1) % ni) as f64 / (5 * ni) as f64
            })),
        );
        s.push(
            "B",
            &[nk, nj],
            Data::F64(fill2(nk, nj, |k, j| {
                ((k * (j + 1) + 2) % nj) as f64 / (5 * nj) as f64
            })),
        );
        s.push(
            "C",
            &[nj, nm],
            Data::F64(fill2(nj, nm, |j, m| {
                ((j * (m + 3)) % nl) as f64 / (5 * nl) as f64
            })),
        );
        s.push(
            "D",
            &[nm, nl],
            Data::F64(fill2(nm, nl, |m, l| {
                ((m * (l + 2) + 2) % nk) as f64 / (5 * nk) as f64
            })),
        );
        // E, F, G start as garbage (PolyBench leaves them uninitialised); MB0 zeroes them.
        s.push("E", &[ni, nj], Data::F64(vec![f64::NAN; ni * nj]));
        s.push("F", &[nj, nl], Data::F64(vec![f64::NAN; nj * nl]));
        s.push("G", &[ni, nl], Data::F64(vec![f64::NAN; ni * nl]));
        s
    }

    fn compute_screen(&self, mb: usize, screen: u32, st: &mut State) {
        let (ni, nj, nk, nl, nm) = (self.ni, self.nj, self.nk, self.nl, self.nm);
        if self.desc.microblocks[mb].phase == 1 {
            if screen < self.family_e {
                let mut e = st.take_f64(E);
                Self::product(
                    st.f64s(A),
                    st.f64s(B),
                    &mut e,
                    even(ni, self.family_e, screen),
                    nk,
                    nj,
                );
                st.put_f64(E, e);
            } else {
                let mut f = st.take_f64(F);
                let rows = even(nj, self.family_f, screen - self.family_e);
                Self::product(st.f64s(C), st.f64s(D), &mut f, rows, nm, nl);
                st.put_f64(F, f);
            }
        } else {
            let mut g = st.take_f64(G);
            let rows = even(ni, self.desc.screens(mb), screen);
            Self::product(st.f64s(E), st.f64s(F), &mut g, rows, nj, nl);
            st.put_f64(G, g);
        }
    }

    fn compute_serial(&self, _mb: usize, st: &mut State) {
        for x in [E, F, G] {
            st.f64s_mut(x).iter_mut().for_each(|v| *v = 0.0);
        }
    }

    fn screen_cost(&self, mb: usize, screen: u32) -> Cost {
        let (ni, nj, nk, nl, nm) = (self.ni, self.nj, self.nk, self.nl, self.nm);
        let u = |x: usize| x as u64;
        match self.desc.microblocks[mb].phase {
            // one store per element of E, F and G.
            0 => looped(u(ni * nj + nj * nl + ni * nl), st(1)),
            1 if screen < self.family_e => {
                Self::product_cost(even(ni, self.family_e, screen).len() as u64, u(nk), u(nj))
            }
            1 => {
                let rows = even(nj, self.family_f, screen - self.family_e).len() as u64;
                Self::product_cost(rows, u(nm), u(nl))
            }
            _ => {
                let rows = even(ni, self.desc.screens(mb), screen).len() as u64;
                Self::product_cost(rows, u(nj), u(nl))
            }
        }
    }

    fn screen_io(&self, mb: usize, screen: u32) -> Vec<Extent> {
        let (ni, nj, nk, nl, nm) = (self.ni, self.nj, self.nk, self.nl, self.nm);
        let b = |x: usize| 8 * x as u64;
        match self.desc.microblocks[mb].phase {
            0 => (4..7).map(|s| io::all(&self.desc, s, Output)).collect(),
            1 if screen < self.family_e => {
                let r = even(ni, self.family_e, screen);
                vec![
                    io::rows(0, r.clone(), b(nk), Input),
                    io::all(&self.desc, 1, Input),
                    io::rows(4, r, b(nj), InOut),
                ]
            }
            1 => {
                let r = even(nj, self.family_f, screen - self.family_e);
                vec![
                    io::rows(2, r.clone(), b(nm), Input),
                    io::all(&self.desc, 3, Input),
                    io::rows(5, r, b(nl), InOut),
                ]
            }
            _ => {
                let r = even(ni, self.desc.screens(mb), screen);
                vec![
                    io::rows(4, r.clone(), b(nj), Input),
                    io::all(&self.desc, 5, Input),
                    io::rows(6, r, b(nl), InOut),
                ]
            }
        }
    }

    fn reference(&self, input: &State) -> State {
        reference::mm3::run(self.ni, self.nj, self.nk, self.nl, self.nm, input)
    }
}
