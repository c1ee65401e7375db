//! Functional fidelity of the FlashAbacus device: the kernels compute real data that travel
//! through the simulated flash, and every instance's live-out arrays are read back from
//! flash and verified against the kernel's independent reference. The machine calls the
//! hooks below at the same events in both fidelities and they schedule nothing, so timing
//! (events, trace hash, makespan) is identical.
//!
//! The data path, per instance (the machine's `dataflow` decides when; this module moves
//! the bytes):
//! - **Preconditioning** writes the generated input file: each `Input`/`InOut` section holds
//!   the array of the same name, little-endian, row-major (`preload_payload`). The
//!   instance's DDR3L image is a `State` of the kernel's arrays with every element zero —
//!   the input exists only on flash. Arrays with no section (kernel parameters such as
//!   bfs's source node) come with the downloaded kernel description and are copied in.
//! - **Admission** (all range locks held): Flashvisor's write-back copy of each writable
//!   section (`shadows`) is filled from flash, untimed (`Device::peek`).
//! - **A page group enters DDR3L** (`fill`): read from flash, an `Input` group's bytes come
//!   from the read's completion — the flash data themselves; a writable section's group is
//!   copied from the write-back copy, which holds every result computed so far (flash may
//!   still lack those whose write-back is in flight). A group first written without being
//!   read is filled the same way, so every resident group of the image holds all its bytes.
//! - **Computed**: `run_screen` / `run_serial` on the image, and the unit's write extents
//!   are merged into the write-back copy at once.
//! - **Write-back** (eviction or kernel end): the payload is the write-back copy as the
//!   request is issued to the FTL (`payload`); the FTL applies writes to one group in issue
//!   order, so the last issued payload — holding every merge before it — wins.
//! - **Kernel end** (its write-backs acknowledged): its live-out sections are read back from
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
    footprint, run_screen, run_serial, verify, Access, Data, Extent, Kernel, KernelDesc,
    KernelError, MicroblockKind, State,
};
use std::collections::BTreeMap;

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
    checks: Vec<Option<InstanceCheck>>,
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
            assert_eq!(k.desc().name, plan.desc.name, "kernels and plans line up");
            let init = k.init();
            section_arrays.push(section_arrays_of(k.desc(), &init)?);
            inputs.push(init);
        }
        let images = plan_of
            .iter()
            .map(|&p| fresh_image(&inputs[p], &section_arrays[p]))
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
            checks: vec![None; n],
            plan_of,
            apps,
            images,
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
        image_bytes(data, rel, &mut out);
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
                    self.failure.get_or_insert(AccelError::ReadBack {
                        section: sec.name,
                        instance: i,
                        source: e,
                    });
                    shadows.push(vec![0; len as usize]);
                }
            }
        }
        self.shadows[i] = shadows;
    }

    fn unit_footprint(&self, i: usize, mb: usize, screen: u32) -> Vec<Extent> {
        footprint(self.kernels[self.plan_of[i]].as_ref(), mb, screen)
            .expect("units come from the kernel's own description")
    }

    /// Bytes `[rel, rel + len)` of `section` of instance `i` enter DDR3L: from `data` (a
    /// flash read's completion) for an input section, from the write-back copy otherwise.
    pub(crate) fn fill(
        &mut self,
        i: usize,
        section: usize,
        rel: u64,
        len: u64,
        data: Option<&[u8]>,
    ) {
        let p = self.plan_of[i];
        let a = self.section_arrays[p][section];
        let shadow = &self.shadows[i][section];
        let array = self.images[i].data_mut(a);
        let end = (rel + len).min(array.byte_len());
        if rel >= end {
            return;
        }
        let n = (end - rel) as usize;
        if shadow.is_empty() {
            let data = data.expect("input groups enter DDR3L only by a flash read");
            array.write_bytes(rel, &data[..n]);
        } else {
            array.write_bytes(rel, &shadow[rel as usize..rel as usize + n]);
        }
    }

    /// Unit (`mb`, `screen`) of instance `i` computes on the image; its results go into the
    /// write-back copy at once.
    pub(crate) fn compute(&mut self, i: usize, mb: usize, screen: u32) {
        let p = self.plan_of[i];
        let k = self.kernels[p].as_ref();
        let image = &mut self.images[i];
        match k.desc().microblocks[mb].kind {
            MicroblockKind::Serial => run_serial(k, mb, image),
            MicroblockKind::Screens(_) => run_screen(k, mb, screen, image),
        }
        .expect("units come from the kernel's own description");
        if self.drop_write == Some((i, mb, screen)) {
            return;
        }
        for e in self
            .unit_footprint(i, mb, screen)
            .iter()
            .filter(|e| e.writes())
        {
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

    /// Instance `i` finished: read its live-out sections back from flash and verify them.
    pub(crate) fn verify(&mut self, i: usize, dev: &mut Device, layout: &Layout) {
        let p = self.plan_of[i];
        let k = self.kernels[p].as_ref();
        let desc = k.desc();
        let reference = self.references[p].get_or_insert_with(|| k.reference(&self.inputs[p]));
        let (offsets, inputs) = (&layout.offsets[i], &self.inputs[p]);
        let got = live_out_of(desc, inputs, &self.section_arrays[p], |s| {
            let len = desc.sections[s].bytes.div_ceil(512) * 512;
            dev.peek(offsets[s], len)
                .map_err(|source| AccelError::ReadBack {
                    section: desc.sections[s].name,
                    instance: i,
                    source,
                })
        });
        let got = match got {
            Ok(got) => got,
            Err(e) => {
                self.failure.get_or_insert(e);
                return;
            }
        };
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

/// Which array each data section of `desc` holds (the array of the same name in `init`),
/// checking that every section is its array's byte image and every live-out array has a
/// section (to be read back from).
pub(crate) fn section_arrays_of(desc: &KernelDesc, init: &State) -> Result<Vec<usize>, AccelError> {
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
                reason: "a live-out array without a data section cannot be read back".into(),
            });
        }
    }
    Ok(arrays)
}

/// A DDR3L image before any data section is loaded: the kernel's arrays, every element
/// zero, except the arrays with no section (kernel parameters such as bfs's source node),
/// which come with the downloaded kernel description.
pub(crate) fn fresh_image(input: &State, section_arrays: &[usize]) -> State {
    let mut image = input.zeroed();
    for (a, array) in input.arrays().iter().enumerate() {
        if !section_arrays.contains(&a) {
            *image.data_mut(a) = array.data.clone();
        }
    }
    image
}

/// Bytes `[rel, rel + out.len())` of `data`'s image (little-endian, row-major), zeros past
/// its end: what a section's storage holds, padded to whole pages.
pub(crate) fn image_bytes(data: &Data, rel: u64, out: &mut [u8]) {
    out.fill(0);
    if rel < data.byte_len() {
        let n = (out.len() as u64).min(data.byte_len() - rel) as usize;
        data.read_bytes(rel, &mut out[..n]);
    }
}

/// The live-out arrays of `desc` deserialised from their sections' stored bytes: `read(s)`
/// returns at least section `s`'s bytes; shapes and types come from the generated `input`.
pub(crate) fn live_out_of<E>(
    desc: &KernelDesc,
    input: &State,
    section_arrays: &[usize],
    mut read: impl FnMut(usize) -> Result<Vec<u8>, E>,
) -> Result<State, E> {
    let mut got = State::new();
    for name in &desc.live_out {
        let s = desc
            .sections
            .iter()
            .position(|x| x.name == *name)
            .expect("checked by section_arrays_of");
        let array = input.array(section_arrays[s]);
        let bytes = read(s)?;
        let mut data = array.data.zeroed();
        assert!(bytes.len() as u64 >= data.byte_len(), "the section's bytes");
        data.write_bytes(0, &bytes[..data.byte_len() as usize]);
        got.push(name, &array.dims, data);
    }
    Ok(got)
}
