//! Functional fidelity of the FlashAbacus device: the kernels compute real data that travel
//! through the simulated flash, and every instance's live-out arrays are read back from
//! flash and verified against the kernel's independent reference. The machine calls the
//! hooks below at the same events in both fidelities and they schedule nothing, so timing
//! (events, trace hash, makespan) is identical.
//!
//! The data path, per instance:
//! - **Preconditioning** writes the generated input file: each `Input`/`InOut` section holds
//!   the array of the same name, little-endian, row-major (`preload_payload`). The
//!   instance's DDR3L image is a `State` of the kernel's arrays with every element zero —
//!   the input exists only on flash. Arrays with no section (kernel parameters such as
//!   bfs's source node) come with the downloaded kernel description and are copied in.
//! - **Admission** (all range locks held): Flashvisor's write-back copy of each writable
//!   section (`shadows`) is filled from flash, untimed (`Device::peek`).
//! - **Read completion** of a unit: exactly the bytes of its read extents are copied from
//!   the completions into the image — not whole page groups, so a concurrent screen's fresh
//!   results in the same groups survive. Bytes a unit of this instance computed whose
//!   write-back had not completed when the read was submitted are skipped too: the FTL
//!   returns the data of the last write acknowledged before a read's submission, which
//!   would be older than the image (bfs's screens write `cost` and `updating` of any node,
//!   so their footprints overlap).
//! - **Computed**: `run_screen` / `run_serial` on the image.
//! - **Write submission**: the unit's write-extent bytes are merged from the image into the
//!   shadow, and each page-group run's payload is the shadow's bytes as they are when
//!   Flashvisor issues the request to the FTL (read-modify-write, as Flashvisor's write-back
//!   buffer would do), so screens writing different bytes of one page group keep each
//!   other's results. The FTL applies writes to one group in issue order (its group lock),
//!   so the last issued payload — which holds every merge before it — wins.
//! - **Kernel end** (its writes acknowledged): its live-out sections are read back from
//!   flash (untimed `peek`: the bytes a read submitted now returns), deserialised and
//!   verified. Verifying at the end of each kernel rather than of the run keeps the check
//!   correct when a later kernel maps the same flash for writing (range-lock serialised).
//!
//! Refused: a layout that maps two instances onto the same flash for lack of space (the
//! later one's `InOut` inputs would be the earlier one's results). Faults (`Fault`) are
//! injected only by tests, to show that verification fails when the data are wrong.

use crate::error::AccelError;
use crate::layout::Layout;
use crate::plan::KernelPlan;
use nearflash_ftl::Device;
use nearflash_kernels::{
    footprint, run_screen, run_serial, verify, Access, Extent, Kernel, KernelError, MicroblockKind,
    State,
};
use std::collections::BTreeMap;
use std::ops::Range;

/// The verdict on one instance: its live-out arrays as read back from flash against the
/// reference.
#[derive(Clone, Debug, PartialEq)]
pub struct InstanceCheck {
    pub instance: usize,
    pub kernel: &'static str,
    pub app: usize,
    pub live_out: Vec<&'static str>,
    /// The first mismatch (kernel, array, index, got, expected), if any.
    pub result: Result<(), KernelError>,
}

/// A fault a test injects to show that verification catches wrong data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Preconditioning writes byte `byte` of section `section` of `instance` flipped (a
    /// silent corruption: the page's checksum covers the flipped byte).
    FlipInputByte {
        instance: usize,
        section: usize,
        byte: u64,
    },
    /// The write-back of this unit carries the section's previous content (a lost write).
    DropWrite {
        instance: usize,
        microblock: usize,
        screen: u32,
    },
}

/// Computed write extents of one unit, from its `Computed` event until its writes are
/// acknowledged.
struct DirtyEntry {
    writes: Vec<Extent>,
    done: bool,
}

/// Per instance: the units whose results are in the image but maybe not yet on flash,
/// numbered in compute order.
#[derive(Default)]
struct DirtyLog {
    next_seq: u64,
    entries: BTreeMap<u64, DirtyEntry>,
}

impl DirtyLog {
    /// A read submitted now sees every entry before this one on flash.
    fn snapshot(&self) -> u64 {
        self.entries
            .iter()
            .find(|(_, e)| !e.done)
            .map_or(self.next_seq, |(&s, _)| s)
    }

    /// Drops acknowledged entries no outstanding read (snapshot ≥ `keep_from`) can need.
    fn prune(&mut self, keep_from: u64) {
        while let Some(e) = self.entries.first_entry() {
            if !e.get().done || *e.key() >= keep_from {
                break;
            }
            e.remove();
        }
    }
}

struct PendingRead {
    instance: usize,
    snapshot: u64,
    /// (absolute byte offset, data) of each completed request.
    data: Vec<(u64, Vec<u8>)>,
}

pub(crate) struct Functional {
    /// Per plan.
    kernels: Vec<Box<dyn Kernel>>,
    inputs: Vec<State>,
    references: Vec<Option<State>>,
    /// Per plan, per section: the index of the array of the same name.
    section_arrays: Vec<Vec<usize>>,
    /// Per instance.
    plan_of: Vec<usize>,
    apps: Vec<usize>,
    images: Vec<State>,
    shadows: Vec<Vec<Vec<u8>>>,
    dirty: Vec<DirtyLog>,
    checks: Vec<Option<InstanceCheck>>,
    /// Per worker.
    reads: BTreeMap<usize, PendingRead>,
    computed: BTreeMap<usize, (usize, u64)>,
    /// Absolute start of each preconditioned section → (plan, section).
    preload_sources: BTreeMap<u64, (usize, usize)>,
    flip_at: Option<u64>,
    drop_write: Option<(usize, usize, u32)>,
    /// The first device error a hook met (checked by the machine after every event).
    failure: Option<AccelError>,
}

impl Functional {
    /// Checks that every data section is the byte image of the array of the same name and
    /// every live-out array has a section, and builds the zeroed DDR3L images.
    pub(crate) fn new(
        kernels: Vec<Box<dyn Kernel>>,
        plans: &[KernelPlan],
        plan_of: Vec<usize>,
        apps: Vec<usize>,
        layout: &Layout,
    ) -> Result<Functional, AccelError> {
        assert_eq!(kernels.len(), plans.len());
        assert_eq!(plan_of.len(), layout.offsets.len());
        if layout.reused_instances > 0 {
            return Err(AccelError::FunctionalReuse {
                instances: layout.reused_instances,
            });
        }
        let mut inputs = Vec::with_capacity(kernels.len());
        let mut section_arrays = Vec::with_capacity(kernels.len());
        for (k, plan) in kernels.iter().zip(plans) {
            let desc = k.desc();
            assert_eq!(desc.name, plan.desc.name, "kernels and plans line up");
            let init = k.init();
            let mut arrays = Vec::with_capacity(desc.sections.len());
            for sec in &desc.sections {
                let bad = |reason: String| AccelError::SectionImage {
                    kernel: desc.name,
                    section: sec.name,
                    reason,
                };
                let a = init
                    .position(sec.name)
                    .ok_or_else(|| bad("no array has its name".into()))?;
                let bytes = init.array(a).data.byte_len();
                if bytes != sec.bytes {
                    return Err(bad(format!(
                        "the array holds {bytes} bytes, the section {}",
                        sec.bytes
                    )));
                }
                arrays.push(a);
            }
            for name in &desc.live_out {
                if !desc.sections.iter().any(|s| s.name == *name) {
                    return Err(AccelError::SectionImage {
                        kernel: desc.name,
                        section: name,
                        reason: "a live-out array without a data section cannot be read back"
                            .into(),
                    });
                }
            }
            inputs.push(init);
            section_arrays.push(arrays);
        }
        let images = plan_of
            .iter()
            .map(|&p| {
                let mut image = inputs[p].zeroed();
                for (a, array) in inputs[p].arrays().iter().enumerate() {
                    if !section_arrays[p].contains(&a) {
                        *image.data_mut(a) = array.data.clone();
                    }
                }
                image
            })
            .collect();
        let mut preload_sources = BTreeMap::new();
        for (i, &p) in plan_of.iter().enumerate() {
            for (s, sec) in plans[p].desc.sections.iter().enumerate() {
                if sec.access != Access::Output && sec.bytes > 0 {
                    preload_sources.insert(layout.offsets[i][s], (p, s));
                }
            }
        }
        let n = plan_of.len();
        Ok(Functional {
            references: vec![None; kernels.len()],
            kernels,
            inputs,
            section_arrays,
            shadows: vec![Vec::new(); n],
            dirty: (0..n).map(|_| DirtyLog::default()).collect(),
            checks: vec![None; n],
            plan_of,
            apps,
            images,
            reads: BTreeMap::new(),
            computed: BTreeMap::new(),
            preload_sources,
            flip_at: None,
            drop_write: None,
            failure: None,
        })
    }

    pub(crate) fn inject(&mut self, fault: Fault, layout: &Layout) {
        match fault {
            Fault::FlipInputByte {
                instance,
                section,
                byte,
            } => self.flip_at = Some(layout.offsets[instance][section] + byte),
            Fault::DropWrite {
                instance,
                microblock,
                screen,
            } => self.drop_write = Some((instance, microblock, screen)),
        }
    }

    pub(crate) fn take_failure(&mut self) -> Option<AccelError> {
        self.failure.take()
    }

    /// The generated input bytes of the preconditioning write `[offset, offset + len)`
    /// (zeros past the end of its section, up to the page group).
    pub(crate) fn preload_payload(&self, offset: u64, len: u64) -> Vec<u8> {
        let (&start, &(p, s)) = self
            .preload_sources
            .range(..=offset)
            .next_back()
            .expect("preconditioning writes only preloaded sections");
        let rel = offset - start;
        let data = &self.inputs[p].array(self.section_arrays[p][s]).data;
        let mut out = vec![0u8; len as usize];
        if rel < data.byte_len() {
            let n = len.min(data.byte_len() - rel) as usize;
            data.read_bytes(rel, &mut out[..n]);
        }
        if let Some(at) = self
            .flip_at
            .filter(|at| (offset..offset + len).contains(at))
        {
            out[(at - offset) as usize] ^= 0x40;
        }
        out
    }

    /// All range locks of instance `i` are held: fill its write-back copies from flash.
    pub(crate) fn admit(
        &mut self,
        i: usize,
        dev: &mut Device,
        layout: &Layout,
        plans: &[KernelPlan],
    ) {
        let desc = &plans[self.plan_of[i]].desc;
        let mut shadows = Vec::with_capacity(desc.sections.len());
        for (s, sec) in desc.sections.iter().enumerate() {
            if sec.access == Access::Input || sec.bytes == 0 {
                shadows.push(Vec::new());
                continue;
            }
            let len = sec.bytes.div_ceil(layout.group_bytes) * layout.group_bytes;
            match dev.peek(layout.offsets[i][s], len) {
                Ok(bytes) => shadows.push(bytes),
                Err(e) => {
                    self.fail(format!("reading {} of instance {i}: {e}", sec.name));
                    shadows.push(vec![0; len as usize]);
                }
            }
        }
        self.shadows[i] = shadows;
    }

    fn fail(&mut self, what: String) {
        self.failure.get_or_insert(AccelError::Device(what));
    }

    fn unit_footprint(&self, i: usize, mb: usize, screen: u32) -> Vec<Extent> {
        footprint(self.kernels[self.plan_of[i]].as_ref(), mb, screen)
            .expect("units come from the kernel's own description")
    }

    /// Worker `w` submits the reads of its unit of instance `i`.
    pub(crate) fn begin_read(&mut self, w: usize, i: usize) {
        let prev = self.reads.insert(
            w,
            PendingRead {
                instance: i,
                snapshot: self.dirty[i].snapshot(),
                data: Vec::new(),
            },
        );
        assert!(prev.is_none(), "a worker reads for one unit at a time");
    }

    /// One read request of worker `w` completed with `data` from `offset`.
    pub(crate) fn read_data(&mut self, w: usize, offset: u64, data: Vec<u8>) {
        let r = self.reads.get_mut(&w).expect("the worker submitted reads");
        r.data.push((offset, data));
    }

    /// Every read of worker `w`'s unit completed: load its read extents into the image.
    pub(crate) fn finish_read(&mut self, w: usize, mb: usize, screen: u32, layout: &Layout) {
        let mut r = self.reads.remove(&w).expect("the worker submitted reads");
        let i = r.instance;
        r.data.sort_by_key(|(offset, _)| *offset);
        // Bytes whose newest value is in the image, not yet on flash, per section.
        let mut skip: BTreeMap<usize, Vec<Range<u64>>> = BTreeMap::new();
        for e in self.dirty[i].entries.range(r.snapshot..).map(|(_, e)| e) {
            for x in &e.writes {
                skip.entry(x.section).or_default().extend(x.intervals());
            }
        }
        for v in skip.values_mut() {
            *v = merged(std::mem::take(v));
        }
        let p = self.plan_of[i];
        for e in self
            .unit_footprint(i, mb, screen)
            .iter()
            .filter(|e| e.reads())
        {
            let base = layout.offsets[i][e.section];
            let data = self.images[i].data_mut(self.section_arrays[p][e.section]);
            let none = Vec::new();
            let skips = skip.get(&e.section).unwrap_or(&none);
            for range in e.intervals() {
                for piece in subtract(range, skips) {
                    copy_out(
                        &r.data,
                        base + piece.start..base + piece.end,
                        |at, bytes| data.write_bytes(at - base, bytes),
                    );
                }
            }
        }
        self.prune(i);
    }

    /// Worker `w`'s unit (`mb`, `screen`) of instance `i` computes on the image.
    pub(crate) fn compute(&mut self, w: usize, i: usize, mb: usize, screen: u32) {
        let k = self.kernels[self.plan_of[i]].as_ref();
        let image = &mut self.images[i];
        match k.desc().microblocks[mb].kind {
            MicroblockKind::Serial => run_serial(k, mb, image),
            MicroblockKind::Screens(_) => run_screen(k, mb, screen, image),
        }
        .expect("units come from the kernel's own description");
        let writes: Vec<Extent> = self
            .unit_footprint(i, mb, screen)
            .into_iter()
            .filter(|e| e.writes())
            .collect();
        if writes.is_empty() {
            return;
        }
        let log = &mut self.dirty[i];
        let seq = log.next_seq;
        log.next_seq += 1;
        log.entries.insert(
            seq,
            DirtyEntry {
                writes,
                done: false,
            },
        );
        self.computed.insert(w, (i, seq));
    }

    /// Worker `w` submits its unit's writes: merge its write extents into the write-back
    /// copies (the payloads come from `payload`).
    pub(crate) fn begin_write(&mut self, w: usize, mb: usize, screen: u32) {
        let (i, seq) = self.computed[&w];
        if self.drop_write == Some((i, mb, screen)) {
            return;
        }
        let p = self.plan_of[i];
        for e in &self.dirty[i].entries[&seq].writes {
            let data = &self.images[i].array(self.section_arrays[p][e.section]).data;
            let shadow = &mut self.shadows[i][e.section];
            for r in e.intervals() {
                data.read_bytes(r.start, &mut shadow[r.start as usize..r.end as usize]);
            }
        }
    }

    /// The payload of a write of `len` bytes at byte `rel` of `section` of instance `i`, as
    /// Flashvisor issues it to the FTL.
    pub(crate) fn payload(&self, i: usize, section: usize, rel: u64, len: u64) -> Vec<u8> {
        self.shadows[i][section][rel as usize..(rel + len) as usize].to_vec()
    }

    /// Every write of worker `w`'s unit was acknowledged.
    pub(crate) fn writes_done(&mut self, w: usize) {
        let (i, seq) = self
            .computed
            .remove(&w)
            .expect("the worker wrote a computed unit");
        self.dirty[i]
            .entries
            .get_mut(&seq)
            .expect("entries stay until acknowledged")
            .done = true;
        self.prune(i);
    }

    fn prune(&mut self, i: usize) {
        let keep_from = self
            .reads
            .values()
            .filter(|r| r.instance == i)
            .map(|r| r.snapshot)
            .min()
            .unwrap_or(u64::MAX);
        self.dirty[i].prune(keep_from);
    }

    /// Instance `i` finished: read its live-out sections back from flash and verify them.
    pub(crate) fn verify(&mut self, i: usize, dev: &mut Device, layout: &Layout) {
        let p = self.plan_of[i];
        let k = self.kernels[p].as_ref();
        let desc = k.desc();
        let reference = self.references[p].get_or_insert_with(|| k.reference(&self.inputs[p]));
        let mut got = State::new();
        for name in &desc.live_out {
            let s = desc
                .sections
                .iter()
                .position(|x| x.name == *name)
                .expect("checked in new");
            let array = self.inputs[p].array(self.section_arrays[p][s]);
            let mut data = array.data.zeroed();
            let len = desc.sections[s].bytes.div_ceil(512) * 512;
            match dev.peek(layout.offsets[i][s], len) {
                Ok(bytes) => data.write_bytes(0, &bytes[..data.byte_len() as usize]),
                Err(e) => {
                    self.failure.get_or_insert(AccelError::Device(format!(
                        "reading back {name} of instance {i}: {e}"
                    )));
                    return;
                }
            }
            got.push(name, &array.dims, data);
        }
        self.checks[i] = Some(InstanceCheck {
            instance: i,
            kernel: desc.name,
            app: self.apps[i],
            live_out: desc.live_out.clone(),
            result: verify(desc, &got, reference),
        });
    }

    /// Every instance's verdict, in instance order (all instances have finished).
    pub(crate) fn into_checks(self) -> Vec<InstanceCheck> {
        self.checks
            .into_iter()
            .map(|c| c.expect("every instance was verified when it finished"))
            .collect()
    }
}

/// Sorted, merged copy of `v`.
fn merged(mut v: Vec<Range<u64>>) -> Vec<Range<u64>> {
    v.retain(|r| !r.is_empty());
    v.sort_by_key(|r| r.start);
    let mut out: Vec<Range<u64>> = Vec::with_capacity(v.len());
    for r in v {
        match out.last_mut() {
            Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
            _ => out.push(r),
        }
    }
    out
}

/// The parts of `range` outside the sorted, disjoint `holes`.
fn subtract(range: Range<u64>, holes: &[Range<u64>]) -> Vec<Range<u64>> {
    let mut out = Vec::new();
    let mut at = range.start;
    for h in holes {
        if h.end <= at {
            continue;
        }
        if h.start >= range.end {
            break;
        }
        if h.start > at {
            out.push(at..h.start);
        }
        at = at.max(h.end);
    }
    if at < range.end {
        out.push(at..range.end);
    }
    out
}

/// Hands `sink` the bytes of the absolute range `want` from the completed reads `data`
/// (sorted by offset; together they cover every read extent's page groups).
fn copy_out(data: &[(u64, Vec<u8>)], want: Range<u64>, mut sink: impl FnMut(u64, &[u8])) {
    let mut at = want.start;
    let first = data.partition_point(|(o, d)| o + d.len() as u64 <= at);
    for (offset, bytes) in &data[first..] {
        if at >= want.end {
            break;
        }
        assert!(*offset <= at, "reads cover the unit's read extents");
        let end = want.end.min(offset + bytes.len() as u64);
        sink(at, &bytes[(at - offset) as usize..(end - offset) as usize]);
        at = end;
    }
    assert_eq!(at, want.end, "reads cover the unit's read extents");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_subtract_and_merge() {
        assert_eq!(merged(vec![5..8, 0..2, 1..3, 8..9]), vec![0..3, 5..9]);
        assert_eq!(subtract(0..10, &[2..3, 5..7]), vec![0..2, 3..5, 7..10]);
        assert_eq!(subtract(4..6, &[0..5, 5..9]), Vec::<Range<u64>>::new());
        assert_eq!(subtract(4..6, &[]), vec![4..6]);
    }

    #[test]
    fn reads_are_cut_out_of_the_completions() {
        let data = vec![(100, vec![1u8; 10]), (110, vec![2u8; 10])];
        let mut got = Vec::new();
        copy_out(&data, 105..115, |at, b| got.push((at, b.to_vec())));
        assert_eq!(got, vec![(105, vec![1; 5]), (110, vec![2; 5])]);
    }
}
