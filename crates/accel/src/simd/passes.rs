//! How SIMD cuts a kernel instance into passes that fit DDR3L, and which bytes each pass moves.
//!
//! An instance's files: the input file holds its `Input` and `InOut` sections, the output
//! file its `Output` and `InOut` sections, each in section order, back to back (`Files`).
//!
//! - **It fits** (both files and the kernel description within DDR3L): one pass. The host
//!   reads the whole input file, copies it in, the kernel runs every microblock, the whole
//!   output file comes back and is written.
//! - **It does not fit**: a later microblock may need data an earlier one wrote anywhere in
//!   an array (atax's `y = Aᵀ·tmp` reads all of `tmp`), so the passes follow the
//!   microblocks: each microblock's screens are grouped, in order, into passes whose
//!   footprint (what their units read or write, in 64-byte lines) fits DDR3L beside the
//!   description. A pass copies in everything its units read or write — inputs, and
//!   results of earlier passes, which the host keeps in its memory (the user buffer) — and
//!   copies back what they write. The host reads each section of the input file once, with
//!   the first pass that touches it (untouched sections with the first pass: an `InOut`
//!   section's untouched bytes are output too), and writes each section of the output file
//!   once, after the last pass that writes it (unwritten sections after the last pass):
//!   whole sections, long runs, even when a pass's own bytes are strided.
//! - **Screens as fine as needed.** A kernel is rebuilt with twice the screens per
//!   microblock while a screen does not fit DDR3L (and halving shrinks it by a quarter) or
//!   the passes leave more than a tenth of their workers' rounds idle (`balance`: OpenMP
//!   splits a pass's loop evenly over all workers; whole screens cannot).
//! - **Streaming.** A microblock with a unit that can never fit (3mm's serial `E, F, G = 0`,
//!   2mm's screens that each read all of `B` and `C`) streams through DDR3L whole, in
//!   ⌈footprint / room⌉ parts, each moving and computing an equal share of every unit on all
//!   workers. Functionally its units compute once, on all their bytes, with the last part:
//!   the data are checked, not that the loops could consume them in streaming order.
//!
//! Passes are planned once per kernel type, before the run, from the kernels crate's
//! footprints: nothing here depends on data or time.

use crate::config::AccelConfig;
use crate::error::AccelError;
use crate::plan::{KernelPlan, UnitPlan, DDR_LINE_BYTES};
use nearflash_kernels::{build, Access, Dataset, Kernel, KernelDesc, MicroblockKind, ScreenPlan};
use std::ops::Range;

/// Screens per microblock SIMD asks for at most when refining a kernel to fit DDR3L.
const SCREENS_PER_MICROBLOCK_MAX: u32 = 1 << 16;

/// The share of its workers' rounds a plan of passes must keep busy (`balance`) before SIMD
/// stops refining its screens.
const BALANCE_MIN: f64 = 0.9;

/// Where each section lies in the instance's input and output files.
#[derive(Clone, Debug)]
pub(crate) struct Files {
    /// Per section: its byte offset in the input file (`Input`, `InOut`), if there.
    pub input_at: Vec<Option<u64>>,
    /// Per section: its byte offset in the output file (`Output`, `InOut`), if there.
    pub output_at: Vec<Option<u64>>,
    pub input_bytes: u64,
    pub output_bytes: u64,
}

impl Files {
    pub(crate) fn of(desc: &KernelDesc) -> Files {
        let place = |in_file: fn(Access) -> bool| {
            let mut at = 0;
            let offsets = desc
                .sections
                .iter()
                .map(|s| {
                    in_file(s.access).then(|| {
                        at += s.bytes;
                        at - s.bytes
                    })
                })
                .collect();
            (offsets, at)
        };
        let (input_at, input_bytes) = place(|a| a != Access::Output);
        let (output_at, output_bytes) = place(|a| a != Access::Input);
        Files {
            input_at,
            output_at,
            input_bytes,
            output_bytes,
        }
    }
}

/// The units a pass computes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum PassUnits {
    /// Every microblock (the instance fits DDR3L).
    All,
    /// Screens `screens` of microblock `mb` (a serial microblock: `0..1`).
    Screens { mb: usize, screens: Range<u32> },
}

/// One pass: read → copy in → compute → copy out → write.
#[derive(Clone, Debug)]
pub(crate) struct Pass {
    pub units: PassUnits,
    /// A unit larger than DDR3L streams through it: this pass is part `.0` of `.1`, moving
    /// and computing that share of it (`None`: the pass holds its units whole).
    pub stream: Option<(u64, u64)>,
    /// Byte ranges of the input file the host reads from the SSD before this pass.
    pub ssd_read: Vec<Range<u64>>,
    /// (section, byte range) the units read or write, copied from host memory into DDR3L
    /// (a streamed unit's: all of them, named by its first part).
    pub copy_in: Vec<(usize, Range<u64>)>,
    /// Bytes copied from host memory into DDR3L (the kernel description besides).
    pub in_bytes: u64,
    /// Bytes copied back from DDR3L to host memory.
    pub out_bytes: u64,
    /// Byte ranges of the output file the host writes to the SSD afterwards.
    pub ssd_write: Vec<Range<u64>>,
}

impl Pass {
    /// The share of each unit this pass moves and computes: (part, parts).
    pub(crate) fn share(&self) -> (u64, u64) {
        self.stream.unwrap_or((0, 1))
    }

    /// The first pass of its units: DDR3L receives what they read.
    pub(crate) fn is_first_part(&self) -> bool {
        self.stream.is_none_or(|(c, _)| c == 0)
    }

    /// The last pass of its units: they compute and their results leave DDR3L.
    pub(crate) fn is_last_part(&self) -> bool {
        self.stream.is_none_or(|(c, n)| c + 1 == n)
    }

    /// The pass's units as slices of `plan.units`, one per microblock.
    pub(crate) fn unit_plans<'p>(&self, plan: &'p KernelPlan) -> Vec<&'p [UnitPlan]> {
        match &self.units {
            PassUnits::All => plan.units.iter().map(Vec::as_slice).collect(),
            PassUnits::Screens { mb, screens } => {
                vec![&plan.units[*mb][screens.start as usize..screens.end as usize]]
            }
        }
    }
}

/// A kernel type as SIMD runs it: the kernel (built with as many screens as DDR3L needs),
/// its cost plan, its files and its passes.
pub(crate) struct SimdKernel {
    pub kernel: Box<dyn Kernel>,
    pub plan: KernelPlan,
    pub files: Files,
    pub passes: Vec<Pass>,
}

impl SimdKernel {
    pub(crate) fn new(
        name: &str,
        dataset: Dataset,
        cfg: &AccelConfig,
    ) -> Result<SimdKernel, AccelError> {
        let description = cfg.kernel_description_bytes;
        if cfg.ddr_bytes <= description {
            return Err(AccelError::Config {
                field: "ddr_bytes",
                reason: format!(
                    "SIMD keeps the {description}-byte kernel description in DDR3L beside \
                     the data: DDR3L must be larger"
                ),
            });
        }
        let budget = cfg.ddr_bytes - description;
        let workers = cfg.worker_count();
        let mut screens = cfg.screens_per_microblock;
        let mut before: Option<(usize, u64)> = None;
        loop {
            let kernel = build(name, dataset, ScreenPlan::new(screens))?;
            let plan = KernelPlan::new(kernel.as_ref(), cfg, DDR_LINE_BYTES)?;
            let files = Files::of(&plan.desc);
            if files.input_bytes + files.output_bytes + description <= cfg.ddr_bytes {
                let passes = vec![single_pass(&plan.desc, &files)];
                return Ok(SimdKernel::of(kernel, plan, passes));
            }
            let passes = multi_pass(&plan, &files, budget);
            let units: usize = plan.units.iter().map(Vec::len).sum();
            let largest = largest_screen(&plan);
            // Finer screens help while a screen does not fit DDR3L and halving them shrinks
            // it by a quarter, or while passes leave workers idle in their last round
            // (OpenMP would split a pass's loop evenly over all of them).
            let too_large = largest > budget && before.is_none_or(|(_, b)| largest * 4 <= b * 3);
            let starved = balance(&plan, &passes, workers) < BALANCE_MIN;
            let grew = before.is_none_or(|(u, _)| units > u);
            if !(too_large || starved) || !grew || screens >= SCREENS_PER_MICROBLOCK_MAX {
                return Ok(SimdKernel::of(kernel, plan, passes));
            }
            before = Some((units, largest));
            screens *= 2;
        }
    }

    fn of(kernel: Box<dyn Kernel>, plan: KernelPlan, passes: Vec<Pass>) -> SimdKernel {
        assert!(!passes.is_empty(), "an instance runs in at least one pass");
        SimdKernel {
            kernel,
            files: Files::of(&plan.desc),
            plan,
            passes,
        }
    }

    pub(crate) fn desc(&self) -> &KernelDesc {
        &self.plan.desc
    }
}

/// The whole input file in, every microblock, the whole output file out.
fn single_pass(desc: &KernelDesc, files: &Files) -> Pass {
    let whole = |bytes: u64| (bytes > 0).then_some(0..bytes).into_iter().collect();
    Pass {
        units: PassUnits::All,
        stream: None,
        ssd_read: whole(files.input_bytes),
        copy_in: (desc.sections.iter().enumerate())
            .filter(|(s, sec)| files.input_at[*s].is_some() && sec.bytes > 0)
            .map(|(s, sec)| (s, 0..sec.bytes))
            .collect(),
        in_bytes: files.input_bytes,
        out_bytes: files.output_bytes,
        ssd_write: whole(files.output_bytes),
    }
}

/// A unit's line runs (reads, writes or both) as byte ranges within their sections.
fn byte_runs<'a>(
    desc: &'a KernelDesc,
    runs: impl Iterator<Item = &'a (usize, Range<u64>)> + 'a,
) -> impl Iterator<Item = (usize, Range<u64>)> + 'a {
    runs.map(move |(s, r)| {
        let end = (r.end * DDR_LINE_BYTES).min(desc.sections[*s].bytes);
        (*s, r.start * DDR_LINE_BYTES..end)
    })
    .filter(|(_, r)| r.start < r.end)
}

/// Part `c` of `x` split into `n` near-equal parts (the parts sum to `x`).
pub(crate) fn part(x: u64, n: u64, c: u64) -> u64 {
    let at = |k: u64| (u128::from(x) * u128::from(k) / u128::from(n)) as u64;
    at(c + 1) - at(c)
}

/// Sorted, merged (section, range) runs.
fn union(mut runs: Vec<(usize, Range<u64>)>) -> Vec<(usize, Range<u64>)> {
    runs.sort_by_key(|(s, r)| (*s, r.start));
    let mut out: Vec<(usize, Range<u64>)> = Vec::with_capacity(runs.len());
    for (s, r) in runs {
        match out.last_mut() {
            Some((ls, lr)) if *ls == s && r.start <= lr.end => lr.end = lr.end.max(r.end),
            _ => out.push((s, r)),
        }
    }
    out
}

fn bytes_of(runs: &[(usize, Range<u64>)]) -> u64 {
    runs.iter().map(|(_, r)| r.end - r.start).sum()
}

/// What units `units` of `desc` occupy in DDR3L: everything they read or write.
fn footprint<'a>(desc: &KernelDesc, units: impl Iterator<Item = &'a UnitPlan>) -> u64 {
    let mut runs = Vec::new();
    for u in units {
        runs.extend(byte_runs(desc, u.reads.runs.iter().chain(&u.writes.runs)));
    }
    bytes_of(&union(runs))
}

/// How evenly passes of screens fill the workers: screens over the rounds they take
/// (⌈screens / workers⌉ each, screen s on worker s mod workers), over all passes that hold
/// some screens of a screened microblock; 1 when every round keeps every worker busy.
/// Streamed passes split every unit over the workers and count as full; a serial
/// microblock runs on one worker however it is cut.
fn balance(plan: &KernelPlan, passes: &[Pass], workers: usize) -> f64 {
    let (mut held, mut rounds) = (0usize, 0usize);
    for p in passes.iter().filter(|p| p.stream.is_none()) {
        if let PassUnits::Screens { mb, screens } = &p.units {
            if plan.desc.microblocks[*mb].kind == MicroblockKind::Serial {
                continue;
            }
            let n = (screens.end - screens.start) as usize;
            held += n;
            rounds += n.div_ceil(workers) * workers;
        }
    }
    if rounds == 0 {
        return 1.0;
    }
    held as f64 / rounds as f64
}

/// The largest footprint of a screen (serial microblocks cannot be cut finer).
fn largest_screen(plan: &KernelPlan) -> u64 {
    (plan.units.iter().enumerate())
        .filter(|(mb, _)| plan.desc.microblocks[*mb].kind != MicroblockKind::Serial)
        .flat_map(|(_, units)| units)
        .map(|u| footprint(&plan.desc, std::iter::once(u)))
        .max()
        .unwrap_or(0)
}

/// Passes microblock by microblock, each grouping consecutive screens while their
/// footprint fits `budget`. A microblock with a unit that alone does not fit streams through
/// DDR3L whole, in as many parts as its footprint needs, each part a share of every unit on
/// all workers. Then the file sections each pass reads first and writes last.
fn multi_pass(plan: &KernelPlan, files: &Files, budget: u64) -> Vec<Pass> {
    let desc = &plan.desc;
    let mut passes = Vec::new();
    for (mb, units) in plan.units.iter().enumerate() {
        let streamed = units
            .iter()
            .any(|u| footprint(desc, std::iter::once(u)) > budget);
        let mut start = 0;
        while start < units.len() {
            let mut end = start + 1;
            if streamed {
                end = units.len();
            }
            while end < units.len() && footprint(desc, units[start..=end].iter()) <= budget {
                end += 1;
            }
            let fp = footprint(desc, units[start..end].iter());
            assert!(
                fp <= budget || streamed,
                "only a streamed microblock exceeds DDR3L"
            );
            let parts = fp.div_ceil(budget).max(1);
            let group = &units[start..end];
            // A pass copies in all it may copy back, written or not: the kernels declare
            // some writes larger than they are (bfs's `updating`, written where a neighbour
            // is found), and copying back bytes the pass never had would overwrite results
            // of other passes with whatever DDR3L held.
            let moved = union(
                group
                    .iter()
                    .flat_map(|u| byte_runs(desc, u.reads.runs.iter().chain(&u.writes.runs)))
                    .collect(),
            );
            let writes = union(
                group
                    .iter()
                    .flat_map(|u| byte_runs(desc, u.writes.runs.iter()))
                    .collect(),
            );
            let (in_bytes, out_bytes) = (bytes_of(&moved), bytes_of(&writes));
            for c in 0..parts {
                passes.push(Pass {
                    units: PassUnits::Screens {
                        mb,
                        screens: start as u32..end as u32,
                    },
                    stream: (parts > 1).then_some((c, parts)),
                    ssd_read: Vec::new(),
                    copy_in: if c == 0 { moved.clone() } else { Vec::new() },
                    in_bytes: part(in_bytes, parts, c),
                    out_bytes: part(out_bytes, parts, c),
                    ssd_write: Vec::new(),
                });
            }
            start = end;
        }
    }
    schedule_files(plan, files, &mut passes);
    passes
}

/// Fills each pass's `ssd_read` (the input file's sections it touches first) and
/// `ssd_write` (the output file's sections it writes last). Whole sections, so that the
/// host's reads and writes are long runs even when the passes' own bytes are strided (a
/// column block of every row), and each file byte moves once.
fn schedule_files(plan: &KernelPlan, files: &Files, passes: &mut [Pass]) {
    let desc = &plan.desc;
    let sections = desc.sections.len();
    let mut first_touch = vec![None::<usize>; sections];
    let mut last_write = vec![None::<usize>; sections];
    for (j, pass) in passes.iter().enumerate() {
        for u in pass.unit_plans(plan).into_iter().flatten() {
            for (s, _) in byte_runs(desc, u.reads.runs.iter().chain(&u.writes.runs)) {
                first_touch[s].get_or_insert(j);
            }
            for (s, _) in byte_runs(desc, u.writes.runs.iter()) {
                last_write[s] = Some(j);
            }
        }
    }
    let last = passes.len() - 1;
    // Each section's bytes in its file, with the pass that moves them, in file order.
    let runs_of = |at: &[Option<u64>], owner: &[Option<usize>], default: usize| {
        let mut runs: Vec<Vec<Range<u64>>> = vec![Vec::new(); passes.len()];
        let mut placed: Vec<(u64, usize)> = (at.iter().enumerate())
            .filter_map(|(s, a)| a.map(|a| (a, s)))
            .filter(|(_, s)| desc.sections[*s].bytes > 0)
            .collect();
        placed.sort_unstable();
        for (a, s) in placed {
            let j = owner[s].unwrap_or(default);
            let r = a..a + desc.sections[s].bytes;
            match runs[j].last_mut() {
                Some(prev) if prev.end == r.start => prev.end = r.end,
                _ => runs[j].push(r),
            }
        }
        runs
    };
    let reads = runs_of(&files.input_at, &first_touch, 0);
    let writes = runs_of(&files.output_at, &last_write, last);
    for ((pass, r), w) in passes.iter_mut().zip(reads).zip(writes) {
        pass.ssd_read = r;
        pass.ssd_write = w;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(ddr_bytes: u64) -> AccelConfig {
        AccelConfig {
            ddr_bytes,
            kernel_description_bytes: 1 << 10,
            ..AccelConfig::default()
        }
    }

    /// Every input page is read once and every output page written once, whatever the
    /// passes; when the instance fits there is one pass moving both files whole.
    #[test]
    fn files_are_read_and_written_once_whatever_the_passes() {
        let mut cut = 0;
        for name in ["atax", "adi", "3mm", "bfs", "wordcount"] {
            for ddr in [1 << 30, 24 << 10, 12 << 10] {
                let Ok(k) = SimdKernel::new(name, Dataset::Mini, &cfg(ddr)) else {
                    continue;
                };
                let total = |f: fn(&Pass) -> &Vec<Range<u64>>| -> u64 {
                    k.passes.iter().flat_map(f).map(|r| r.end - r.start).sum()
                };
                assert_eq!(total(|p| &p.ssd_read), k.files.input_bytes, "{name} {ddr}");
                assert_eq!(
                    total(|p| &p.ssd_write),
                    k.files.output_bytes,
                    "{name} {ddr}"
                );
                if k.files.input_bytes + k.files.output_bytes + (1 << 10) <= ddr {
                    assert_eq!(k.passes.len(), 1);
                    assert_eq!(k.passes[0].in_bytes, k.files.input_bytes);
                } else {
                    assert!(k.passes.len() > 1, "{name} {ddr}");
                    cut += 1;
                    for p in &k.passes {
                        let units = p.unit_plans(&k.plan);
                        let fp = footprint(k.desc(), units.iter().flat_map(|u| u.iter()));
                        let fits = fp + (1 << 10) <= ddr;
                        assert!(fits || p.stream.is_some(), "{name} {ddr}: {fp}");
                    }
                }
            }
        }
        assert!(
            cut >= 5,
            "the small DDR3Ls cut most of these kernels: {cut}"
        );
    }

    /// A serial microblock larger than DDR3L cannot be cut into screens: it streams through
    /// DDR3L in as many parts as it needs, which together move its bytes once.
    #[test]
    fn a_serial_microblock_larger_than_ddr3l_streams_through_it() {
        // atax's microblock 1 (serial, y = Aᵀ·tmp) reads all of A: 12,768 bytes at mini.
        let k = SimdKernel::new("atax", Dataset::Mini, &cfg((1 << 10) + (4 << 10))).unwrap();
        let streamed: Vec<&Pass> = k.passes.iter().filter(|p| p.stream.is_some()).collect();
        let parts = streamed[0].stream.unwrap().1;
        assert!(parts >= 3, "{parts}");
        assert_eq!(streamed.len() as u64, parts);
        let fp = footprint(k.desc(), k.plan.units[1].iter());
        let moved: u64 = streamed.iter().map(|p| p.in_bytes + p.out_bytes).sum();
        let reads_and_writes = fp + 42 * 8;
        assert_eq!(moved, reads_and_writes, "A, tmp and y in; y out");
        assert!(fp <= parts * (4 << 10), "{fp} in {parts} parts");
    }
}
