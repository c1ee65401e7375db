//! wordcount — Mars (MapReduce on GPUs) WordCount (WORKLOADS.md §3).
//!
//! Input text: Mars takes any text file and its evaluation sizes are unpublished, so we
//! generate English-like text from a fixed seed: a vocabulary of `VOCABULARY` pseudo-words
//! (2–12 lower-case letters), word choice skewed towards low vocabulary indices
//! (index = below(below(V) + 1), so a few words are frequent), capitalised after a full
//! stop, separated by spaces, with ". " about every 12 words and a newline about every 10.
//!
//! Preprocessing as in Mars (host side, in `init`): cut the text into map records of
//! about 2,048 bytes, each extended to the next non-letter so no word is split; the record
//! start offsets are an input section. Upper-casing is done by the map as it reads.
//!
//! Computation: a word is a maximal run of letters A–Z after upper-casing; emit each word
//! of at least 6 letters (Mars tests `wsize > 6` with the terminator counted); the count
//! of a word is its group size. Output: the distinct words in sorted order (`words`, bytes,
//! each followed by a 0) and their counts (`counts`). Every array has the fixed size of its
//! data section, as a device buffer does: `words` and `counts` are sized for the worst case
//! (every emitted word distinct) and zero-padded after the last group, in the run and in
//! the reference alike.
//!
//! Structure (WORKLOADS.md's map → sort/group → count):
//! - MB0 `map`: screens over blocks of records; screen s writes its words to its own slice
//!   of `emit` (the slices lie back to back, sized from the emission counts).
//! - MB1 `sort`: screen s sorts its own slice of `emit` (the parallel part of the sort).
//! - MB2 `group`: serial k-way merge of the sorted runs, group boundaries and counts.
//!
//! Sizes (bytes of text): mini 16 KiB, small 256 KiB, medium 8 MiB, large 32 MiB,
//! extralarge 128 MiB (WORKLOADS.md's suggested 8/32/128 MB tiers for the last three;
//! mini and small are ours), paper = medium (unpublished in the paper).

use crate::cost::{ld, looped, ops, st, Cost};
use crate::dataset::Dataset;
use crate::desc::Access::{InOut, Input, Output};
use crate::desc::{section, Access, DescBuilder, KernelDesc};
use crate::error::KernelError;
use crate::io::{self, Extent};
use crate::kernel::Kernel;
use crate::partition::{even, ScreenPlan};
use crate::reference;
use crate::state::{Data, State};
use nearflash_sim::SimRng;

pub const NAME: &str = "wordcount";
pub const RECORD_BYTES: usize = 2048;
pub const MIN_WORD_LEN: usize = 6;
pub const VOCABULARY: u64 = 4096;
pub const INIT_SEED: u64 = 0x3a25;
const TEXT: usize = 0;
const RECORDS: usize = 1;
const EMIT: usize = 2;
const WORDS: usize = 3;
const COUNTS: usize = 4;

pub fn dims(d: Dataset) -> usize {
    d.pick([16 << 10, 256 << 10, 8 << 20, 32 << 20, 128 << 20, 8 << 20])
}

/// Generate `bytes` bytes of text.
pub fn generate(bytes: usize, seed: u64) -> Vec<u8> {
    let mut rng = SimRng::seed_from_u64(seed);
    let vocab: Vec<Vec<u8>> = (0..VOCABULARY)
        .map(|_| {
            let len = 2 + rng.below(11) as usize;
            (0..len).map(|_| b'a' + rng.below(26) as u8).collect()
        })
        .collect();
    let mut text = Vec::with_capacity(bytes + 16);
    let mut capital = true;
    while text.len() < bytes {
        let bound = rng.below(VOCABULARY) + 1;
        let idx = rng.below(bound) as usize;
        let start = text.len();
        text.extend_from_slice(&vocab[idx]);
        if capital {
            text[start] = text[start].to_ascii_uppercase();
        }
        capital = false;
        if rng.below(12) == 0 {
            text.push(b'.');
            capital = true;
        }
        text.push(if rng.below(10) == 0 { b'\n' } else { b' ' });
    }
    text.truncate(bytes);
    text
}

/// Mars's record cut: starts at multiples of about `RECORD_BYTES`, each boundary moved
/// forward past the rest of a word it would split.
pub fn record_starts(text: &[u8]) -> Vec<i64> {
    let mut starts = Vec::new();
    let mut pos = 0;
    while pos < text.len() {
        starts.push(pos as i64);
        let mut end = (pos + RECORD_BYTES).min(text.len());
        while end < text.len() && text[end].is_ascii_alphabetic() {
            end += 1;
        }
        pos = end;
    }
    starts
}

pub struct Wordcount {
    bytes: usize,
    records: usize,
    screens: u32,
    /// Per map screen: (words emitted, bytes emitted incl. terminators).
    emitted: Vec<(u64, u64)>,
    /// Per map screen: where its slice of `emit` starts.
    emit_starts: Vec<u64>,
    text: Vec<u8>,
    starts: Vec<i64>,
    desc: KernelDesc,
}

impl Wordcount {
    pub fn new(dataset: Dataset, plan: ScreenPlan) -> Result<Self, KernelError> {
        let bytes = dims(dataset);
        let text = generate(bytes, INIT_SEED);
        let starts = record_starts(&text);
        let records = starts.len();
        let screens = plan.screens(NAME, "map", records)?;
        // Emission sizes per map screen (words, bytes with terminators), for the sort and
        // merge costs and the `emit` footprints.
        let emitted: Vec<(u64, u64)> = (0..screens)
            .map(|s| {
                let words = map_bytes(&text[record_bytes(&starts, bytes, screens, s)]);
                (
                    words.len() as u64,
                    words.iter().map(|w| w.len() as u64 + 1).sum(),
                )
            })
            .collect();
        let total_words: u64 = emitted.iter().map(|e| e.0).sum();
        let emit_bytes: u64 = emitted.iter().map(|e| e.1).sum();
        let emit_starts: Vec<u64> = emitted
            .iter()
            .scan(0u64, |at, e| {
                let start = *at;
                *at += e.1;
                Some(start)
            })
            .collect();
        let mut b = DescBuilder::new(&[("map", false), ("sort", false), ("group", true)]);
        b.push(0, 0, screens).push(1, 0, screens).push(2, 0, 0);
        let desc = b.finish(
            NAME,
            dataset,
            format!("bytes={bytes} records={records} emitted={total_words}"),
            vec![
                section("text", bytes as u64, 1, Access::Input),
                section("records", records as u64, 8, Access::Input),
                section("emit", emit_bytes, 1, Access::Output),
                // upper bounds: at most every emitted word is distinct.
                section("words", emit_bytes, 1, Access::Output),
                section("counts", total_words, 8, Access::Output),
            ],
            vec!["words", "counts"],
        );
        Ok(Wordcount {
            bytes,
            records,
            screens,
            emitted,
            emit_starts,
            text,
            starts,
            desc,
        })
    }

    fn record_range(&self, screen: u32) -> std::ops::Range<usize> {
        record_bytes(&self.starts, self.bytes, self.screens, screen)
    }

    /// Screen `s`'s slice of `emit`.
    fn emit_at(&self, s: u32) -> std::ops::Range<usize> {
        let start = self.emit_starts[s as usize] as usize;
        start..start + self.emitted[s as usize].1 as usize
    }

    /// Element counts of the `words` and `counts` buffers (their sections' sizes).
    fn output_capacity(&self) -> (usize, usize) {
        let s = &self.desc.sections;
        (s[WORDS].bytes as usize, s[COUNTS].bytes as usize / 8)
    }
}

/// Byte range of the records of map screen `screen`.
fn record_bytes(starts: &[i64], bytes: usize, screens: u32, screen: u32) -> std::ops::Range<usize> {
    let r = even(starts.len(), screens, screen);
    let from = starts[r.start] as usize;
    let to = if r.end < starts.len() {
        starts[r.end] as usize
    } else {
        bytes
    };
    from..to
}

/// The map: upper-case, split into maximal runs of A–Z, keep words of ≥ 6 letters.
fn map_bytes(bytes: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut word = Vec::new();
    for &c in bytes.iter().chain(std::iter::once(&b' ')) {
        let u = c.to_ascii_uppercase();
        if u.is_ascii_uppercase() {
            word.push(u);
        } else {
            if word.len() >= MIN_WORD_LEN {
                out.push(std::mem::take(&mut word));
            }
            word.clear();
        }
    }
    out
}

fn pack(words: &[Vec<u8>]) -> Vec<u8> {
    let mut v = Vec::new();
    for w in words {
        v.extend_from_slice(w);
        v.push(0);
    }
    v
}

fn unpack(bytes: &[u8]) -> Vec<&[u8]> {
    bytes.split(|&c| c == 0).filter(|w| !w.is_empty()).collect()
}

fn ceil_log2(n: u64) -> u64 {
    if n <= 1 {
        0
    } else {
        64 - (n - 1).leading_zeros() as u64
    }
}

impl Kernel for Wordcount {
    fn desc(&self) -> &KernelDesc {
        &self.desc
    }

    fn init(&self) -> State {
        let mut s = State::new();
        s.push("text", &[self.bytes], Data::U8(self.text.clone()));
        s.push("records", &[self.records], Data::I64(self.starts.clone()));
        let emit_bytes = self.desc.sections[EMIT].bytes as usize;
        let (words, counts) = self.output_capacity();
        s.push("emit", &[emit_bytes], Data::U8(vec![0; emit_bytes]));
        s.push("words", &[words], Data::U8(vec![0; words]));
        s.push("counts", &[counts], Data::I64(vec![0; counts]));
        s
    }

    fn compute_screen(&self, mb: usize, screen: u32, st: &mut State) {
        let slot = self.emit_at(screen);
        let packed = if self.desc.microblocks[mb].phase == 0 {
            let text = st.u8s(TEXT);
            let starts = st.i64s(RECORDS);
            let r = even(self.records, self.screens, screen);
            let from = starts[r.start] as usize;
            let to = if r.end < self.records {
                starts[r.end] as usize
            } else {
                text.len()
            };
            pack(&map_bytes(&text[from..to]))
        } else {
            let mut words: Vec<&[u8]> = unpack(&st.u8s(EMIT)[slot.clone()]);
            words.sort_unstable();
            let mut v = Vec::new();
            for w in words {
                v.extend_from_slice(w);
                v.push(0);
            }
            v
        };
        // The slice is sized from the emission counted in `new`; data other than the
        // generated text (a skipped microblock, corrupted flash) may emit another amount:
        // cut or zero-pad (zeros are empty words) so the wrong result shows in verification.
        let mut packed = packed;
        packed.resize(slot.len(), 0);
        st.u8s_mut(EMIT)[slot].copy_from_slice(&packed);
    }

    fn compute_serial(&self, _mb: usize, st: &mut State) {
        let emit = st.u8s(EMIT);
        let runs: Vec<Vec<&[u8]>> = (0..self.screens)
            .map(|s| unpack(&emit[self.emit_at(s)]))
            .collect();
        let mut pos = vec![0usize; runs.len()];
        let mut words = Vec::new();
        let mut counts: Vec<i64> = Vec::new();
        let mut last: Option<&[u8]> = None;
        loop {
            // smallest head among the runs (ties: lowest run index)
            let mut best: Option<(usize, &[u8])> = None;
            for (r, run) in runs.iter().enumerate() {
                if let Some(&w) = run.get(pos[r]) {
                    if best.is_none_or(|(_, b)| w < b) {
                        best = Some((r, w));
                    }
                }
            }
            let Some((r, w)) = best else { break };
            pos[r] += 1;
            if last == Some(w) {
                *counts.last_mut().expect("a group is open") += 1;
            } else {
                words.extend_from_slice(w);
                words.push(0);
                counts.push(1);
                last = Some(w);
            }
        }
        let (wn, cn) = self.output_capacity();
        words.resize(wn, 0);
        counts.resize(cn, 0);
        st.put_u8(WORDS, words);
        st.put_i64(COUNTS, counts);
    }

    fn screen_cost(&self, mb: usize, screen: u32) -> Cost {
        match self.desc.microblocks[mb].phase {
            0 => {
                // per byte: load, upper-case (compare + subtract), letter test (2),
                // branch = ld 1 + 5 ops; per emitted byte one store.
                let bytes = self.record_range(screen).len() as u64;
                let (_, emitted_bytes) = self.emitted[screen as usize];
                looped(bytes, ld(1) + ops(5)) + st(emitted_bytes)
            }
            1 => {
                // comparison sort of w words: w·⌈log2 w⌉ comparisons, each loading the
                // two leading characters and comparing (we assume the first character
                // decides, 2 ops) and a pointer move (store); then the sorted words
                // are rewritten (load + store per byte).
                let (w, b) = self.emitted[screen as usize];
                looped(w * ceil_log2(w), ld(2) + ops(2) + st(1)) + looped(b, ld(1) + st(1))
            }
            _ => {
                // merge: per word ⌈log2 S⌉ head comparisons (load + compare each), a
                // comparison with the previous word (load, compare, branch), then
                // either a count increment (load, add, store) or a copy of the word
                // (load + store per byte) and a new count.
                let (w, b): (u64, u64) = self
                    .emitted
                    .iter()
                    .fold((0, 0), |a, e| (a.0 + e.0, a.1 + e.1));
                let heads = ceil_log2(self.screens as u64).max(1);
                looped(
                    w,
                    (ld(1) + ops(1)).times(heads) + ld(1) + ops(2) + ld(1) + ops(1) + st(1),
                ) + looped(b, ld(1) + st(1))
            }
        }
    }

    fn screen_io(&self, mb: usize, screen: u32) -> Vec<Extent> {
        // screen s's emitted words occupy its slice of the `emit` section.
        let emit_at = |s: u32| -> std::ops::Range<u64> {
            let r = self.emit_at(s);
            r.start as u64..r.end as u64
        };
        match self.desc.microblocks[mb].phase {
            0 => {
                let t = self.record_range(screen);
                // the screen's record starts, and the next screen's first (where its
                // text ends).
                let r = even(self.records, self.screens, screen);
                vec![
                    io::span(0, t.start as u64..t.end as u64, Input),
                    io::elems(1, r.start..(r.end + 1).min(self.records), 8, Input),
                    io::span(2, emit_at(screen), Output),
                ]
            }
            1 => vec![io::span(2, emit_at(screen), InOut)],
            _ => vec![
                io::all(&self.desc, 2, Input),
                io::all(&self.desc, 3, Output),
                io::all(&self.desc, 4, Output),
            ],
        }
    }

    fn reference(&self, input: &State) -> State {
        let r = reference::wordcount::run(input, MIN_WORD_LEN);
        let (wn, cn) = self.output_capacity();
        let mut words = r.get("words").expect("reference words").data.clone();
        let mut counts = r.get("counts").expect("reference counts").data.clone();
        if let (Data::U8(w), Data::I64(c)) = (&mut words, &mut counts) {
            w.resize(wn, 0);
            c.resize(cn, 0);
        }
        let mut out = State::new();
        out.push("words", &[wn], words);
        out.push("counts", &[cn], counts);
        out
    }
}
