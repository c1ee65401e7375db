//! FDTD-2D (PolyBench/C 4.2.1): 2-D finite-difference time-domain (Yee) update of ex, ey,
//! hz (NX×NY) over TMAX steps driven by fict (WORKLOADS.md §1).
//!
//! Structure — Table 2: 3 MBLKs, 1 serial, per time step (unrolled in
//! `KernelDesc::microblocks`, step t = 0..TMAX−1), exactly FlashAbacus Fig. 6:
//! - MB0 `ey[0][:] = fict[t]`: serial (m0 in Fig. 6).
//! - MB1 `ey, ex update`: screens over blocks of rows i (ey for i ≥ 1, ex for j ≥ 1).
//! - MB2 `hz update`: screens over blocks of rows i < NX−1.
//!
//! Paper size: ex, ey, hz (in-out) are Table 2's 1920 MB ⇒ NX = NY = 9158; TMAX = 1 (our
//! assumption, see `sizes`).

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
use crate::state::{fill1, fill2, Data, State};

pub const NAME: &str = "fdtd-2d";
const FICT: usize = 0;
const EX: usize = 1;
const EY: usize = 2;
const HZ: usize = 3;

pub struct Fdtd2d {
    tmax: usize,
    nx: usize,
    ny: usize,
    desc: KernelDesc,
}

/// (TMAX, NX, NY) per dataset.
pub fn dims(d: Dataset) -> (usize, usize, usize) {
    if d == Dataset::Paper {
        let n = paper_n(1920, |n| 8 * (3 * n * n + 1));
        return (1, n, n);
    }
    d.pick([
        (20, 20, 30),
        (40, 60, 80),
        (100, 200, 240),
        (500, 1000, 1200),
        (1000, 2000, 2600),
        (0, 0, 0),
    ])
}

impl Fdtd2d {
    pub fn new(dataset: Dataset, plan: ScreenPlan) -> Result<Self, KernelError> {
        let (tmax, nx, ny) = dims(dataset);
        let e = plan.screens(NAME, "ey, ex update", nx)?;
        let h = plan.screens(NAME, "hz update", nx.saturating_sub(1))?;
        let mut b = DescBuilder::new(&[
            ("ey[0][:] = fict[t]", true),
            ("ey, ex update", false),
            ("hz update", false),
        ]);
        for t in 0..tmax as u32 {
            b.push(0, t, 0).push(1, t, e).push(2, t, h);
        }
        let g = (nx * ny) as u64;
        let desc = b.finish(
            NAME,
            dataset,
            format!("TMAX={tmax} NX={nx} NY={ny}"),
            vec![
                section("_fict_", tmax as u64, 8, Access::Input),
                section("ex", g, 8, Access::InOut),
                section("ey", g, 8, Access::InOut),
                section("hz", g, 8, Access::InOut),
            ],
            vec!["ex", "ey", "hz"],
        );
        Ok(Fdtd2d { tmax, nx, ny, desc })
    }
}

impl Kernel for Fdtd2d {
    fn desc(&self) -> &KernelDesc {
        &self.desc
    }

    fn init(&self) -> State {
        let (tmax, nx, ny) = (self.tmax, self.nx, self.ny);
        let (fx, fy) = (nx as f64, ny as f64);
        let mut s = State::new();
        s.push("_fict_", &[tmax], Data::F64(fill1(tmax, |t| t as f64)));
        s.push(
            "ex",
            &[nx, ny],
            Data::F64(fill2(nx, ny, |i, j| (i * (j + 1)) as f64 / fx)),
        );
        s.push(
            "ey",
            &[nx, ny],
            Data::F64(fill2(nx, ny, |i, j| (i * (j + 2)) as f64 / fy)),
        );
        s.push(
            "hz",
            &[nx, ny],
            Data::F64(fill2(nx, ny, |i, j| (i * (j + 3)) as f64 / fx)),
        );
        s
    }

    fn compute_serial(&self, mb: usize, st: &mut State) {
        let t = self.desc.microblocks[mb].step as usize;
        let fict = st.f64s(FICT)[t];
        st.f64s_mut(EY)[..self.ny]
            .iter_mut()
            .for_each(|v| *v = fict);
    }

    fn compute_screen(&self, mb: usize, screen: u32, st: &mut State) {
        let ny = self.ny;
        let screens = self.desc.screens(mb);
        if self.desc.microblocks[mb].phase == 1 {
            let mut ex = st.take_f64(EX);
            let mut ey = st.take_f64(EY);
            let hz = st.f64s(HZ);
            for i in even(self.nx, screens, screen) {
                let r = i * ny;
                if i >= 1 {
                    for j in 0..ny {
                        ey[r + j] -= 0.5 * (hz[r + j] - hz[r - ny + j]);
                    }
                }
                for j in 1..ny {
                    ex[r + j] -= 0.5 * (hz[r + j] - hz[r + j - 1]);
                }
            }
            st.put_f64(EX, ex);
            st.put_f64(EY, ey);
        } else {
            let mut hz = st.take_f64(HZ);
            let (ex, ey) = (st.f64s(EX), st.f64s(EY));
            for i in even(self.nx - 1, screens, screen) {
                let r = i * ny;
                for j in 0..ny - 1 {
                    hz[r + j] -= 0.7 * (ex[r + j + 1] - ex[r + j] + ey[r + ny + j] - ey[r + j]);
                }
            }
            st.put_f64(HZ, hz);
        }
    }

    fn screen_cost(&self, mb: usize, screen: u32) -> Cost {
        let (nx, ny) = (self.nx, self.ny as u64);
        let screens = self.desc.screens(mb);
        match self.desc.microblocks[mb].phase {
            // load fict[t]; NY stores.
            0 => ld(1) + looped(ny, st(1)),
            // per row (i ≥ 1): ey update per j: load ey, two hz; sub, fma; store.
            // ex update per j ≥ 1: the same shape.
            1 => even(nx, screens, screen)
                .map(|i| {
                    let ey_part = if i >= 1 {
                        looped(ny, ld(3) + ops(2) + st(1))
                    } else {
                        Cost::ZERO
                    };
                    ey_part
                        + looped(ny - 1, ld(3) + ops(2) + st(1))
                        + ops(crate::cost::LOOP_OVERHEAD + 1)
                })
                .sum(),
            // per (i, j): load hz, ex×2, ey×2; sub, add, sub, fma; store.
            _ => {
                let rows = even(nx - 1, screens, screen).len() as u64;
                looped(rows, looped(ny - 1, ld(5) + ops(4) + st(1)))
            }
        }
    }

    fn screen_io(&self, mb: usize, screen: u32) -> Vec<Extent> {
        let (nx, ny) = (self.nx, self.ny);
        let row = 8 * ny as u64;
        let m = self.desc.microblocks[mb];
        match m.phase {
            0 => vec![
                io::elems(0, m.step as usize..m.step as usize + 1, 8, Input),
                io::rows(2, 0..1, row, Output),
            ],
            1 => {
                let r = even(nx, self.desc.screens(mb), screen);
                vec![
                    io::rows(3, r.start.saturating_sub(1)..r.end, row, Input),
                    io::rows(2, r.start.max(1)..r.end.max(1), row, InOut),
                    io::rows(1, r, row, InOut),
                ]
            }
            _ => {
                let r = even(nx - 1, self.desc.screens(mb), screen);
                vec![
                    io::rows(1, r.clone(), row, Input),
                    io::rows(2, r.start..r.end + 1, row, Input),
                    io::rows(3, r, row, InOut),
                ]
            }
        }
    }

    fn reference(&self, input: &State) -> State {
        reference::fdtd2d::run(self.tmax, self.nx, self.ny, input)
    }
}
