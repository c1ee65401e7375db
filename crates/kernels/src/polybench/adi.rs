//! ADI (PolyBench/C 4.2.1): alternating-direction implicit solver for 2-D heat diffusion,
//! u, v, p, q are N×N, TSTEPS time steps (WORKLOADS.md §1).
//!
//! Structure — Table 2: 3 MBLKs, 1 serial, per time step. Time steps are unrolled in
//! `KernelDesc::microblocks` (step t = 0..TSTEPS−1); `phases` lists the three below once.
//! - MB0 `column boundaries`: serial. Rephrasing: the column sweep's boundary statements
//!   (v[0][i] = 1, p[i][0] = 0, q[i][0] = v[0][i], v[N−1][i] = 1 for i in 1..N−1) are
//!   hoisted out of the per-column loop into one serial pass. (The row sweep's boundaries
//!   cannot be hoisted before the column sweep: they overwrite u's edge columns, which the
//!   column sweep reads.)
//! - MB1 `column sweep`: screens over blocks of i in 1..N−1; each solves one tridiagonal
//!   system (Thomas algorithm), serial along j.
//! - MB2 `row sweep`: the same on rows, reading v and writing u.
//!
//! Paper size: only u is read (v, p, q are written before being read), so u is Table 2's
//! 1920 MB ⇒ N = 15863; TSTEPS = 1 (our assumption, see `sizes`).

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

pub const NAME: &str = "adi";
const U: usize = 0;
const V: usize = 1;
const P: usize = 2;
const Q: usize = 3;

/// The solver's coefficients, from N and TSTEPS as in PolyBench.
#[derive(Debug, Clone, Copy)]
pub struct Coeffs {
    pub a: f64,
    pub b: f64,
    pub c: f64,
    pub d: f64,
    pub e: f64,
    pub f: f64,
}

impl Coeffs {
    pub fn new(tsteps: usize, n: usize) -> Coeffs {
        let dx = 1.0 / n as f64;
        let dy = 1.0 / n as f64;
        let dt = 1.0 / tsteps as f64;
        let (b1, b2) = (2.0, 1.0);
        let mul1 = b1 * dt / (dx * dx);
        let mul2 = b2 * dt / (dy * dy);
        let a = -mul1 / 2.0;
        let d = -mul2 / 2.0;
        Coeffs {
            a,
            b: 1.0 + mul1,
            c: a,
            d,
            e: 1.0 + mul2,
            f: d,
        }
    }
}

pub struct Adi {
    tsteps: usize,
    n: usize,
    k: Coeffs,
    desc: KernelDesc,
}

/// (TSTEPS, N) per dataset.
pub fn dims(d: Dataset) -> (usize, usize) {
    if d == Dataset::Paper {
        return (1, paper_n(1920, |n| 8 * n * n));
    }
    d.pick([
        (20, 20),
        (40, 60),
        (100, 200),
        (500, 1000),
        (1000, 2000),
        (0, 0),
    ])
}

impl Adi {
    pub fn new(dataset: Dataset, plan: ScreenPlan) -> Result<Self, KernelError> {
        let (tsteps, n) = dims(dataset);
        let inner = n.saturating_sub(2);
        let col = plan.screens(NAME, "column sweep", inner)?;
        let row = plan.screens(NAME, "row sweep", inner)?;
        let mut b = DescBuilder::new(&[
            ("column boundaries", true),
            ("column sweep", false),
            ("row sweep", false),
        ]);
        for t in 0..tsteps as u32 {
            b.push(0, t, 0).push(1, t, col).push(2, t, row);
        }
        let nn = (n * n) as u64;
        let desc = b.finish(
            NAME,
            dataset,
            format!("TSTEPS={tsteps} N={n}"),
            vec![
                section("u", nn, 8, Access::InOut),
                section("v", nn, 8, Access::Output),
                section("p", nn, 8, Access::Output),
                section("q", nn, 8, Access::Output),
            ],
            vec!["u"],
        );
        Ok(Adi {
            tsteps,
            n,
            k: Coeffs::new(tsteps, n),
            desc,
        })
    }
}

impl Kernel for Adi {
    fn desc(&self) -> &KernelDesc {
        &self.desc
    }

    fn init(&self) -> State {
        let n = self.n;
        let mut s = State::new();
        s.push(
            "u",
            &[n, n],
            Data::F64(fill2(n, n, |i, j| (i + n - j) as f64 / n as f64)),
        );
        for name in ["v", "p", "q"] {
            s.push(name, &[n, n], Data::F64(vec![0.0; n * n]));
        }
        s
    }

    fn compute_serial(&self, _mb: usize, st: &mut State) {
        let n = self.n;
        let mut v = st.take_f64(V);
        let mut p = st.take_f64(P);
        let mut q = st.take_f64(Q);
        for i in 1..n - 1 {
            v[i] = 1.0;
            p[i * n] = 0.0;
            q[i * n] = v[i];
            v[(n - 1) * n + i] = 1.0;
        }
        st.put_f64(V, v);
        st.put_f64(P, p);
        st.put_f64(Q, q);
    }

    fn compute_screen(&self, mb: usize, screen: u32, st: &mut State) {
        let n = self.n;
        let Coeffs { a, b, c, d, e, f } = self.k;
        let lines = even(n - 2, self.desc.screens(mb), screen);
        let mut p = st.take_f64(P);
        let mut q = st.take_f64(Q);
        if self.desc.microblocks[mb].phase == 1 {
            // Column i: tridiagonal in j over u's column, result into v's column.
            let mut v = st.take_f64(V);
            let u = st.f64s(U);
            for i in lines.map(|r| r + 1) {
                let (pr, qr) = (i * n, i * n);
                for j in 1..n - 1 {
                    let den = a * p[pr + j - 1] + b;
                    p[pr + j] = -c / den;
                    q[qr + j] = (-d * u[j * n + i - 1] + (1.0 + 2.0 * d) * u[j * n + i]
                        - f * u[j * n + i + 1]
                        - a * q[qr + j - 1])
                        / den;
                }
                for j in (1..n - 1).rev() {
                    v[j * n + i] = p[pr + j] * v[(j + 1) * n + i] + q[qr + j];
                }
            }
            st.put_f64(V, v);
        } else {
            // Row i: tridiagonal in j over v's row, result into u's row.
            let mut u = st.take_f64(U);
            let v = st.f64s(V);
            for i in lines.map(|r| r + 1) {
                let r = i * n;
                u[r] = 1.0;
                p[r] = 0.0;
                q[r] = u[r];
                for j in 1..n - 1 {
                    let den = d * p[r + j - 1] + e;
                    p[r + j] = -f / den;
                    q[r + j] = (-a * v[r - n + j] + (1.0 + 2.0 * a) * v[r + j]
                        - c * v[r + n + j]
                        - d * q[r + j - 1])
                        / den;
                }
                u[r + n - 1] = 1.0;
                for j in (1..n - 1).rev() {
                    u[r + j] = p[r + j] * u[r + j + 1] + q[r + j];
                }
            }
            st.put_f64(U, u);
        }
        st.put_f64(P, p);
        st.put_f64(Q, q);
    }

    fn screen_cost(&self, mb: usize, screen: u32) -> Cost {
        let n = self.n as u64;
        if self.desc.microblocks[mb].phase == 0 {
            // per line: four stores (v top, p, q, v bottom).
            return looped(n - 2, st(4));
        }
        let lines = even(self.n - 2, self.desc.screens(mb), screen).len() as u64;
        // Forward pass per j: 3 loads of the input neighbours (p, q of j−1 stay in
        // registers); den = fma, p = divide, numerator = mul + 3 fma, q = divide → 6 ops;
        // store p and q. Back substitution per j: load p, q (next value in a register),
        // fma, store. Per line: the boundary stores (row sweep: 4; column sweep: none,
        // hoisted into MB0).
        let boundary = if self.desc.microblocks[mb].phase == 2 {
            4
        } else {
            0
        };
        looped(
            lines,
            st(boundary)
                + looped(n - 2, ld(3) + ops(6) + st(2))
                + looped(n - 2, ld(2) + ops(1) + st(1)),
        )
    }

    fn screen_io(&self, mb: usize, screen: u32) -> Vec<Extent> {
        let n = self.n;
        let row = 8 * n as u64;
        match self.desc.microblocks[mb].phase {
            // v rows 0 and N−1 (columns 1..N−1), p and q column 0 of rows 1..N−1.
            0 => vec![
                io::cols(1, 1..n - 1, 0..1, n, 8, Output),
                io::cols(1, 1..n - 1, n - 1..n, n, 8, Output),
                io::cols(2, 0..1, 1..n - 1, n, 8, Output),
                io::cols(3, 0..1, 1..n - 1, n, 8, Output),
            ],
            // columns i = r+1 of v (rows 1..N−1, read at j+1 = N−1 too), columns i−1..i+2
            // of u, rows i of p and q.
            1 => {
                let r = even(n - 2, self.desc.screens(mb), screen);
                let i = r.start + 1..r.end + 1;
                vec![
                    io::cols(0, i.start - 1..i.end + 1, 1..n - 1, n, 8, Input),
                    io::cols(1, i.clone(), 1..n - 1, n, 8, Output),
                    io::cols(1, i.clone(), n - 1..n, n, 8, Input),
                    io::rows(2, i.clone(), row, InOut),
                    io::rows(3, i, row, InOut),
                ]
            }
            _ => {
                let r = even(n - 2, self.desc.screens(mb), screen);
                let i = r.start + 1..r.end + 1;
                vec![
                    io::rows(1, i.start - 1..i.end + 1, row, Input),
                    io::rows(0, i.clone(), row, InOut),
                    io::rows(2, i.clone(), row, InOut),
                    io::rows(3, i, row, InOut),
                ]
            }
        }
    }

    fn reference(&self, input: &State) -> State {
        reference::adi::run(self.tsteps, self.n, input)
    }
}
