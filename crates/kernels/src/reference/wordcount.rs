//! wordcount reference: a CPU ordered-map count over the whole text with the same
//! tokenisation rules (upper-case; maximal runs of A–Z; keep words of ≥ 6 letters).

use super::result;
use crate::state::{Data, State};
use std::collections::BTreeMap;

pub fn run(input: &State, min_len: usize) -> State {
    let text = match &input.get("text").expect("text").data {
        Data::U8(v) => v,
        _ => panic!("text is bytes"),
    };
    let upper: Vec<u8> = text.iter().map(|c| c.to_ascii_uppercase()).collect();
    let mut counts: BTreeMap<&[u8], i64> = BTreeMap::new();
    for word in upper.split(|c| !c.is_ascii_uppercase()) {
        if word.len() >= min_len {
            *counts.entry(word).or_insert(0) += 1;
        }
    }
    let mut words = Vec::new();
    let mut n = Vec::new();
    for (w, c) in counts {
        words.extend_from_slice(w);
        words.push(0);
        n.push(c);
    }
    let (lw, ln) = (words.len(), n.len());
    result(vec![
        ("words", vec![lw], Data::U8(words)),
        ("counts", vec![ln], Data::I64(n)),
    ])
}
