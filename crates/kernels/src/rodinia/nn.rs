//! nn — k nearest neighbours over hurricane records (Rodinia; WORKLOADS.md §2).
//!
//! Records are Rodinia's fixed-width 49-byte text lines
//! `"%4d %2d %2d %2d %2d %-9s %5.1f %5.1f %4d %4d\n"` (year, month, day, hour, storm
//! number, name, lat, lon, speed, pressure); latitude at byte 27, longitude at byte 33.
//! Generator (Rodinia's `hurricanegen` ranges and its 21 names, drawn from `SimRng` seeded
//! with `INIT_SEED` instead of `time()`): year 1950–2004, month 1–12, day 1–28, hour one
//! of {0, 6, 12, 18}, number 1–28, lat in [7, 70), lon in [0, 358) (drawn directly in
//! tenths, which is what `%5.1f` keeps), speed 10–164, pressure 0–899.
//!
//! Computation: d = sqrt((lat − 30)² + (lon − 90)²) in float for every record; return
//! the k = 5 smallest distances (Rodinia's run `-r 5 -lat 30 -lng 90`).
//! Structure: MB0 `distance` — screens over blocks of records (parse lat/lon, distance);
//! MB1 `top-k` — serial (Rodinia's serial selection: keep a sorted list of the k best,
//! insert a record when it beats the worst). Live-out: `knn_dist` (the k distances,
//! ascending — ties may pick other records but not other distances) and `dist`.
//!
//! Sizes (records): mini 1,024, small 10,691 (one file of `filelist_4`), medium 42,764
//! (`filelist_4`, the default run), large 641,986 (≈30 MB per the generator's comment),
//! extralarge 21,893,120 (the largest generator preset), paper = medium (§5.6 gives none).

use crate::cost::{ld, looped, ops, st, Cost};
use crate::dataset::Dataset;
use crate::desc::Access::{Input, Output};
use crate::desc::{section, Access, DescBuilder, KernelDesc};
use crate::error::KernelError;
use crate::io::{self, Extent};
use crate::kernel::Kernel;
use crate::partition::{even, ScreenPlan};
use crate::reference;
use crate::state::{Data, State};
use nearflash_sim::SimRng;
use std::fmt::Write;

pub const NAME: &str = "nn";
pub const RECORD_BYTES: usize = 49;
pub const LAT_OFFSET: usize = 27;
pub const LON_OFFSET: usize = 33;
pub const K: usize = 5;
pub const TARGET_LAT: f32 = 30.0;
pub const TARGET_LON: f32 = 90.0;
pub const INIT_SEED: u64 = 0x4e4e;
const NAMES: [&str; 21] = [
    "ALBERTO", "BERYL", "CHRIS", "DEBBY", "ERNESTO", "FLORENCE", "GORDON", "HELENE", "ISAAC",
    "JOYCE", "KIRK", "LESLIE", "MICHAEL", "NADINE", "OSCAR", "PATTY", "RAFAEL", "SANDY", "TONY",
    "VALERIE", "WILLIAM",
];
const RECORDS: usize = 0;
const DIST: usize = 1;
const KNN_DIST: usize = 2;
const KNN_INDEX: usize = 3;

pub struct Nn {
    records: usize,
    k: usize,
    desc: KernelDesc,
}

pub fn dims(d: Dataset) -> usize {
    d.pick([1_024, 10_691, 42_764, 641_986, 21_893_120, 42_764])
}

/// Generate `n` records as Rodinia's text lines.
pub fn generate(n: usize, seed: u64) -> Vec<u8> {
    let mut rng = SimRng::seed_from_u64(seed);
    let mut r = |lo: u64, n: u64| lo + rng.below(n);
    let mut text = String::with_capacity(n * RECORD_BYTES);
    for _ in 0..n {
        let year = r(1950, 55);
        let month = r(1, 12);
        let day = r(1, 28);
        let hour = [0, 6, 12, 18][r(0, 4) as usize];
        let num = r(1, 28);
        let name = NAMES[r(0, 21) as usize];
        let lat = r(70, 630);
        let lon = r(0, 3580);
        let speed = r(10, 155);
        let press = r(0, 900);
        writeln!(
            text,
            "{year:4} {month:2} {day:2} {hour:2} {num:2} {name:<9} {:3}.{} {:3}.{} {speed:4} {press:4}",
            lat / 10,
            lat % 10,
            lon / 10,
            lon % 10
        )
        .expect("write to String");
    }
    debug_assert_eq!(text.len(), n * RECORD_BYTES);
    text.into_bytes()
}

/// Parse a right-aligned `%5.1f` field ("  7.3", "357.9") to float, digit by digit.
fn parse_tenths(field: &[u8]) -> f32 {
    let mut tenths: i32 = 0;
    for &c in field {
        if c.is_ascii_digit() {
            tenths = tenths * 10 + (c - b'0') as i32;
        }
    }
    tenths as f32 / 10.0
}

impl Nn {
    pub fn new(dataset: Dataset, plan: ScreenPlan) -> Result<Self, KernelError> {
        let records = dims(dataset);
        let screens = plan.screens(NAME, "distance", records)?;
        let mut b = DescBuilder::new(&[("distance", false), ("top-k", true)]);
        b.push(0, 0, screens).push(1, 0, 0);
        let n = records as u64;
        let k = K.min(records);
        let desc = b.finish(
            NAME,
            dataset,
            format!("records={records} k={K} lat={TARGET_LAT} lng={TARGET_LON}"),
            vec![
                section("records", n * RECORD_BYTES as u64, 1, Access::Input),
                section("dist", n, 4, Access::Output),
                section("knn_dist", k as u64, 4, Access::Output),
                section("knn_index", k as u64, 4, Access::Output),
            ],
            vec!["knn_dist", "dist"],
        );
        Ok(Nn { records, k, desc })
    }
}

impl Kernel for Nn {
    fn desc(&self) -> &KernelDesc {
        &self.desc
    }

    fn init(&self) -> State {
        let n = self.records;
        let mut s = State::new();
        s.push(
            "records",
            &[n * RECORD_BYTES],
            Data::U8(generate(n, INIT_SEED)),
        );
        s.push("dist", &[n], Data::F32(vec![0.0; n]));
        s.push("knn_dist", &[self.k], Data::F32(vec![0.0; self.k]));
        s.push("knn_index", &[self.k], Data::I32(vec![-1; self.k]));
        s
    }

    fn compute_screen(&self, mb: usize, screen: u32, st: &mut State) {
        let mut dist = st.take_f32(DIST);
        let text = st.u8s(RECORDS);
        for i in even(self.records, self.desc.screens(mb), screen) {
            let rec = &text[i * RECORD_BYTES..(i + 1) * RECORD_BYTES];
            let lat = parse_tenths(&rec[LAT_OFFSET..LAT_OFFSET + 5]);
            let lon = parse_tenths(&rec[LON_OFFSET..LON_OFFSET + 5]);
            let (dl, dn) = (lat - TARGET_LAT, lon - TARGET_LON);
            dist[i] = (dl * dl + dn * dn).sqrt();
        }
        st.put_f32(DIST, dist);
    }

    fn compute_serial(&self, _mb: usize, st: &mut State) {
        let k = self.k;
        // best[0..filled] sorted ascending by (distance, index).
        let mut best: Vec<(f32, i32)> = Vec::with_capacity(k);
        for (i, &d) in st.f32s(DIST).iter().enumerate() {
            if best.len() == k && d >= best[k - 1].0 {
                continue;
            }
            if best.len() == k {
                best.pop();
            }
            let pos = best
                .iter()
                .position(|&(bd, _)| d < bd)
                .unwrap_or(best.len());
            best.insert(pos, (d, i as i32));
        }
        let out_d: Vec<f32> = best.iter().map(|b| b.0).collect();
        let out_i: Vec<i32> = best.iter().map(|b| b.1).collect();
        st.put_f32(KNN_DIST, out_d);
        st.put_i32(KNN_INDEX, out_i);
    }

    fn screen_cost(&self, mb: usize, screen: u32) -> Cost {
        let (n, k) = (self.records as u64, self.k as u64);
        if self.desc.microblocks[mb].phase == 0 {
            // per record: two 5-byte fields, per byte load, digit test (2), multiply-add
            // (1) = ld 1 + 3 ops; convert and divide (2 ops) per field; distance: 2 sub,
            // mul, fma, sqrt = 5 ops; store.
            let recs = even(self.records, self.desc.screens(mb), screen).len() as u64;
            let field = looped(5, ld(1) + ops(3)) + ops(2);
            return looped(recs, field + field + ops(5) + st(1));
        }
        // per record: load, compare with the current k-th, branch (2 ops). Insertions:
        // for records in random order the expected number of times a record enters the
        // top k is Σ_i min(1, k/i) ≈ k·(1 + ln(n/k)); each insertion scans and shifts up
        // to k entries (load, compare, store) and writes the new pair.
        let inserts = if n <= k {
            n
        } else {
            (k as f64 * (1.0 + (n as f64 / k as f64).ln())).round() as u64
        };
        looped(n, ld(1) + ops(2))
            + looped(inserts, looped(k, ld(1) + ops(1) + st(1)) + st(2))
            + looped(k, st(2))
    }

    fn screen_io(&self, mb: usize, screen: u32) -> Vec<Extent> {
        if self.desc.microblocks[mb].phase == 0 {
            let r = even(self.records, self.desc.screens(mb), screen);
            vec![
                io::rows(0, r.clone(), RECORD_BYTES as u64, Input),
                io::elems(1, r, 4, Output),
            ]
        } else {
            vec![
                io::all(&self.desc, 1, Input),
                io::all(&self.desc, 2, Output),
                io::all(&self.desc, 3, Output),
            ]
        }
    }

    fn reference(&self, input: &State) -> State {
        reference::nn::run(self.records, self.k, TARGET_LAT, TARGET_LON, input)
    }
}
