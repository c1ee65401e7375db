//! The kernel description a device model consumes: data sections (what Flashvisor maps onto
//! flash under range locks) and the microblocks in execution order, each serial or split
//! into screens.
//!
//! Time-stepped kernels (ADI, FDTD-2D, and the data-dependent level/diagonal/row loops of
//! bfs, nw and pathfinder) are *unrolled*: `microblocks` lists every executed microblock in
//! order, each tagged with the `phase` it instantiates and its `step`. `phases` holds the
//! distinct microblocks of one step — that is what FlashAbacus Table 2 counts as MBLKs and
//! serial MBLKs. A device model only walks `microblocks`; a report counts `phases`.

use crate::dataset::Dataset;
use serde::Serialize;

/// How a kernel uses a data section.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Access {
    /// Read only (mapped for reads).
    Input,
    /// Written only; scratch arrays whose every element is written before it is read are
    /// outputs too.
    Output,
    /// Read and written (mapped for writes).
    InOut,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Section {
    pub name: &'static str,
    pub bytes: u64,
    pub access: Access,
}

/// One distinct microblock of a step (Table 2's unit).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Phase {
    pub name: &'static str,
    pub serial: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MicroblockKind {
    Serial,
    /// Independent screens `0..n`, n ≥ 1.
    Screens(u32),
}

/// One executed microblock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Microblock {
    /// Index into `KernelDesc::phases`.
    pub phase: usize,
    /// Time step / level / diagonal this instance belongs to (0 for one-shot kernels).
    pub step: u32,
    pub kind: MicroblockKind,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KernelDesc {
    pub name: &'static str,
    pub dataset: Dataset,
    /// Human-readable dimensions, e.g. "M=38 N=42".
    pub dims: String,
    pub sections: Vec<Section>,
    pub phases: Vec<Phase>,
    pub microblocks: Vec<Microblock>,
    /// Arrays compared with the reference and written by the dump (PolyBench's dumped arrays).
    pub live_out: Vec<&'static str>,
}

impl KernelDesc {
    /// Table 2's "MBLKs".
    pub fn mblk_count(&self) -> usize {
        self.phases.len()
    }

    /// Table 2's "Serial MBLK".
    pub fn serial_mblk_count(&self) -> usize {
        self.phases.iter().filter(|p| p.serial).count()
    }

    /// Bytes of the sections the kernel reads (input and in-out): Table 2's "Input".
    pub fn input_bytes(&self) -> u64 {
        self.sections
            .iter()
            .filter(|s| s.access != Access::Output)
            .map(|s| s.bytes)
            .sum()
    }

    pub fn total_screens(&self) -> u64 {
        self.microblocks
            .iter()
            .map(|m| match m.kind {
                MicroblockKind::Serial => 0,
                MicroblockKind::Screens(n) => n as u64,
            })
            .sum()
    }

    pub fn phase_name(&self, mb: usize) -> &'static str {
        self.phases[self.microblocks[mb].phase].name
    }
}

/// Builds `phases` and the unrolled `microblocks` from per-step screen counts.
pub struct DescBuilder {
    phases: Vec<Phase>,
    microblocks: Vec<Microblock>,
}

impl DescBuilder {
    pub fn new(phases: &[(&'static str, bool)]) -> Self {
        DescBuilder {
            phases: phases
                .iter()
                .map(|&(name, serial)| Phase { name, serial })
                .collect(),
            microblocks: Vec::new(),
        }
    }

    /// Append one executed instance of `phase` in `step` (screens ignored for serial phases).
    pub fn push(&mut self, phase: usize, step: u32, screens: u32) -> &mut Self {
        let kind = if self.phases[phase].serial {
            MicroblockKind::Serial
        } else {
            MicroblockKind::Screens(screens)
        };
        self.microblocks.push(Microblock { phase, step, kind });
        self
    }

    pub fn finish(
        self,
        name: &'static str,
        dataset: Dataset,
        dims: String,
        sections: Vec<Section>,
        live_out: Vec<&'static str>,
    ) -> KernelDesc {
        KernelDesc {
            name,
            dataset,
            dims,
            sections,
            phases: self.phases,
            microblocks: self.microblocks,
            live_out,
        }
    }
}

/// Section of `elems` elements of `elem_bytes` each.
pub fn section(name: &'static str, elems: u64, elem_bytes: u64, access: Access) -> Section {
    Section {
        name,
        bytes: elems * elem_bytes,
        access,
    }
}

impl KernelDesc {
    /// Screens of microblock `mb` (0 for a serial microblock).
    pub fn screens(&self, mb: usize) -> u32 {
        match self.microblocks[mb].kind {
            MicroblockKind::Serial => 0,
            MicroblockKind::Screens(n) => n,
        }
    }
}
