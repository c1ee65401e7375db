//! nn reference: parse every record with the standard library's float parser, compute all
//! distances, sort by (distance, index) and keep the first k.

use super::result;
use crate::rodinia::nn::{LAT_OFFSET, LON_OFFSET, RECORD_BYTES};
use crate::state::{Data, State};

pub fn run(records: usize, k: usize, lat0: f32, lon0: f32, input: &State) -> State {
    let text = match &input.get("records").expect("records").data {
        Data::U8(v) => v,
        _ => panic!("records are bytes"),
    };
    let field = |rec: &[u8], off: usize| -> f32 {
        std::str::from_utf8(&rec[off..off + 5])
            .expect("ascii")
            .trim()
            .parse::<f32>()
            .expect("a %5.1f field")
    };
    let mut dist = Vec::with_capacity(records);
    for i in 0..records {
        let rec = &text[i * RECORD_BYTES..(i + 1) * RECORD_BYTES];
        let lat = field(rec, LAT_OFFSET);
        let lon = field(rec, LON_OFFSET);
        dist.push(((lat - lat0) * (lat - lat0) + (lon - lon0) * (lon - lon0)).sqrt());
    }
    let mut order: Vec<usize> = (0..records).collect();
    order.sort_by(|&a, &b| dist[a].total_cmp(&dist[b]).then(a.cmp(&b)));
    let knn: Vec<f32> = order[..k].iter().map(|&i| dist[i]).collect();
    result(vec![
        ("knn_dist", vec![k], Data::F32(knn)),
        ("dist", vec![records], Data::F32(dist)),
    ])
}
