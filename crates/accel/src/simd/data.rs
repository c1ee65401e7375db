//! SIMD in functional fidelity: the baseline's data path moves real bytes and every instance
//! is verified. SIMD calls these hooks at its phases in both fidelities' order and they
//! schedule nothing, so timing (events, trace hash, makespan) is that of a timing run.
//!
//! Per instance (the passes are `passes`'s):
//! - **Preconditioning** writes the input file: its sections' arrays back to back,
//!   little-endian, row-major (`input_file_bytes`; zeros to the end of the last page).
//! - **`ssd_read`**: the host's buffered reads return the SSD's bytes (`HostPages`); they
//!   land in the host's copy of the instance's arrays (`landed`), the user buffer.
//! - **`pcie_in`**: DDR3L starts each pass holding nothing of the instance: its input and
//!   in-out arrays are poison (every byte 0xFF: NaN, −1), its outputs zero (a kernel writes
//!   an output before reading it), so a byte a unit needs and the pass did not copy in
//!   shows in the results. The pass's copy-in ranges (all it reads or writes) come from the
//!   host's copy. A microblock streaming through DDR3L in parts is prepared by its first
//!   part and computed and copied back by its last.
//! - **`compute`**: `run_screen` / `run_serial` of the pass's units on the DDR3L image.
//! - **`pcie_out`**: one pass of the whole instance copies back whole output sections;
//!   a pass of some screens copies back exactly the bytes its units write (their
//!   footprints), so it cannot overwrite another pass's results with its own stale copy.
//! - **`ssd_write`**: the output file's bytes come from the host's copy (`output_file_bytes`)
//!   and go to the SSD through the page cache.
//! - **Instance end**: the output file (and the input file, for a live-out input) is read
//!   back from the SSD, untimed, deserialised and verified against the reference: a
//!   mismatch names kernel, array and index.
//!
//! Faults (`Fault`) are injected only by tests: a flipped input byte corrupts the
//! preconditioned file; a dropped write skips the unit, so its results never exist.

use super::passes::{Pass, PassUnits, SimdKernel};
use crate::error::AccelError;
use crate::functional::{
    fresh_image, image_bytes, live_out_of, section_arrays_of, Fault, InstanceCheck,
};
use nearflash_kernels::{footprint, run_screen, run_serial, verify, Access, MicroblockKind, State};
use std::collections::BTreeMap;

/// A kernel type's generated data.
struct KernelData {
    input: State,
    /// Per section: the index of its array.
    arrays: Vec<usize>,
    reference: Option<State>,
}

pub(crate) struct SimdData {
    kernels: BTreeMap<&'static str, KernelData>,
    fault: Option<Fault>,
    checks: Vec<InstanceCheck>,
    /// The instance running: its index, the host's copy of its arrays and DDR3L's.
    instance: usize,
    host: State,
    ddr: State,
}

impl SimdData {
    pub(crate) fn new(kernels: &BTreeMap<&'static str, SimdKernel>) -> Result<Self, AccelError> {
        let mut data = BTreeMap::new();
        for (name, k) in kernels {
            let input = k.kernel.init();
            let arrays = section_arrays_of(k.desc(), &input)?;
            data.insert(
                *name,
                KernelData {
                    input,
                    arrays,
                    reference: None,
                },
            );
        }
        Ok(SimdData {
            kernels: data,
            fault: None,
            checks: Vec::new(),
            instance: 0,
            host: State::new(),
            ddr: State::new(),
        })
    }

    pub(crate) fn inject(&mut self, fault: Fault) {
        self.fault = Some(fault);
    }

    /// Bytes `[at, at + out.len())` of instance `i`'s input file (kernel `k`).
    pub(crate) fn input_file_bytes(&self, i: usize, k: &SimdKernel, at: u64, out: &mut [u8]) {
        let d = &self.kernels[k.desc().name];
        out.fill(0);
        file_bytes(&k.files.input_at, k, at, out, |s, rel, buf| {
            image_bytes(&d.input.array(d.arrays[s]).data, rel, buf)
        });
        if let Some(Fault::FlipInputByte {
            instance,
            section,
            byte,
        }) = self.fault
        {
            let flip = k.files.input_at[section].expect("an input section") + byte;
            if instance == i && (at..at + out.len() as u64).contains(&flip) {
                out[(flip - at) as usize] ^= 0x40;
            }
        }
    }

    /// Instance `i` of kernel `k` starts: the host's copy of its arrays is empty.
    pub(crate) fn begin(&mut self, i: usize, k: &SimdKernel) {
        let d = &self.kernels[k.desc().name];
        self.instance = i;
        self.host = fresh_image(&d.input, &d.arrays);
    }

    /// Bytes `[at, at + bytes.len())` of the input file, read from the SSD, are in host
    /// memory.
    pub(crate) fn landed(&mut self, k: &SimdKernel, at: u64, bytes: &[u8]) {
        let d = &self.kernels[k.desc().name];
        let host = &mut self.host;
        for_sections(
            &k.files.input_at,
            k,
            at,
            bytes.len() as u64,
            |s, rel, range| {
                host.data_mut(d.arrays[s])
                    .write_bytes(rel, &bytes[range.start as usize..range.end as usize]);
            },
        );
    }

    /// `pcie_in` of `pass`: a DDR3L holding nothing of the instance receives the pass's
    /// copy-in ranges from the host's copy.
    pub(crate) fn copy_in(&mut self, k: &SimdKernel, pass: &Pass) {
        if !pass.is_first_part() {
            return;
        }
        let d = &self.kernels[k.desc().name];
        let mut ddr = fresh_image(&d.input, &d.arrays);
        for (s, sec) in k.desc().sections.iter().enumerate() {
            if sec.access != Access::Output {
                let poison = vec![0xFF; sec.bytes as usize];
                ddr.data_mut(d.arrays[s]).write_bytes(0, &poison);
            }
        }
        for (s, r) in &pass.copy_in {
            let a = d.arrays[*s];
            let mut buf = vec![0u8; (r.end - r.start) as usize];
            self.host.array(a).data.read_bytes(r.start, &mut buf);
            ddr.data_mut(a).write_bytes(r.start, &buf);
        }
        self.ddr = ddr;
    }

    /// `compute` of `pass`: its units on the DDR3L image.
    pub(crate) fn compute(&mut self, k: &SimdKernel, pass: &Pass) {
        if !pass.is_last_part() {
            return;
        }
        let kernel = k.kernel.as_ref();
        for (mb, screen) in units(k, pass) {
            if self.fault
                == Some(Fault::DropWrite {
                    instance: self.instance,
                    microblock: mb,
                    screen,
                })
            {
                continue;
            }
            match k.desc().microblocks[mb].kind {
                MicroblockKind::Serial => run_serial(kernel, mb, &mut self.ddr),
                MicroblockKind::Screens(_) => run_screen(kernel, mb, screen, &mut self.ddr),
            }
            .expect("units come from the kernel's own description");
        }
    }

    /// `pcie_out` of `pass`: results from DDR3L into the host's copy.
    pub(crate) fn copy_out(&mut self, k: &SimdKernel, pass: &Pass) {
        if !pass.is_last_part() {
            return;
        }
        let d = &self.kernels[k.desc().name];
        let mut moved: Vec<(usize, std::ops::Range<u64>)> = Vec::new();
        match pass.units {
            PassUnits::All => {
                for (s, sec) in k.desc().sections.iter().enumerate() {
                    if sec.access != Access::Input {
                        moved.push((s, 0..sec.bytes));
                    }
                }
            }
            PassUnits::Screens { .. } => {
                for (mb, screen) in units(k, pass) {
                    let extents = footprint(k.kernel.as_ref(), mb, screen)
                        .expect("units come from the kernel's own description");
                    for e in extents.iter().filter(|e| e.writes()) {
                        moved.extend(e.intervals().map(|r| (e.section, r)));
                    }
                }
            }
        }
        for (s, r) in moved {
            let a = d.arrays[s];
            let mut buf = vec![0u8; (r.end - r.start) as usize];
            self.ddr.array(a).data.read_bytes(r.start, &mut buf);
            self.host.data_mut(a).write_bytes(r.start, &buf);
        }
    }

    /// Bytes `[at, at + out.len())` of the output file, from the host's copy.
    pub(crate) fn output_file_bytes(&self, k: &SimdKernel, at: u64, out: &mut [u8]) {
        let d = &self.kernels[k.desc().name];
        out.fill(0);
        file_bytes(&k.files.output_at, k, at, out, |s, rel, buf| {
            image_bytes(&self.host.array(d.arrays[s]).data, rel, buf)
        });
    }

    /// Instance `i` (application `app`) finished: its live-out arrays, from the files as
    /// read back from the SSD (`output`, and `input` for a live-out input), against the
    /// reference.
    pub(crate) fn verify(&mut self, app: usize, k: &SimdKernel, output: &[u8], input: &[u8]) {
        let desc = k.desc();
        let d = self
            .kernels
            .get_mut(desc.name)
            .expect("a kernel of the run");
        let reference = d
            .reference
            .get_or_insert_with(|| k.kernel.reference(&d.input));
        let files = &k.files;
        let got = live_out_of(desc, &d.input, &d.arrays, |s| {
            let (file, at) = match (files.output_at[s], files.input_at[s]) {
                (Some(at), _) => (output, at),
                (None, Some(at)) => (input, at),
                (None, None) => unreachable!("every section is in a file"),
            };
            let at = at as usize;
            Ok::<_, AccelError>(file[at..at + desc.sections[s].bytes as usize].to_vec())
        })
        .expect("the files hold every section");
        self.checks.push(InstanceCheck {
            instance: self.instance,
            kernel: desc.name,
            app,
            live_out: desc.live_out.clone(),
            result: verify(desc, &got, reference),
        });
        self.host = State::new();
        self.ddr = State::new();
    }

    /// Every instance's verdict, in instance order.
    pub(crate) fn into_checks(self) -> Vec<InstanceCheck> {
        self.checks
    }
}

/// The units of `pass`, as (microblock, screen) pairs in execution order (a serial
/// microblock's unit is screen 0).
fn units(k: &SimdKernel, pass: &Pass) -> Vec<(usize, u32)> {
    let desc = k.desc();
    let screens = |mb: usize| match desc.microblocks[mb].kind {
        MicroblockKind::Serial => 0..1,
        MicroblockKind::Screens(n) => 0..n,
    };
    match &pass.units {
        PassUnits::All => (0..desc.microblocks.len())
            .flat_map(|mb| screens(mb).map(move |s| (mb, s)))
            .collect(),
        PassUnits::Screens { mb, screens } => screens.clone().map(|s| (*mb, s)).collect(),
    }
}

/// Calls `f(section, byte within the section, range of the file window)` for each section
/// of a file (at `offsets`) overlapping the window `[at, at + len)`.
fn for_sections(
    offsets: &[Option<u64>],
    k: &SimdKernel,
    at: u64,
    len: u64,
    mut f: impl FnMut(usize, u64, std::ops::Range<u64>),
) {
    for (s, start) in offsets.iter().enumerate() {
        let Some(start) = *start else { continue };
        let end = start + k.desc().sections[s].bytes;
        let (lo, hi) = (start.max(at), end.min(at + len));
        if lo < hi {
            f(s, lo - start, lo - at..hi - at);
        }
    }
}

/// Fills `out`, the window at `at` of a file whose sections lie at `offsets`, with each
/// section's bytes as `section(s, byte within the section, buffer)` gives them (the rest,
/// past the last section, stays as it is).
fn file_bytes(
    offsets: &[Option<u64>],
    k: &SimdKernel,
    at: u64,
    out: &mut [u8],
    mut section: impl FnMut(usize, u64, &mut [u8]),
) {
    let len = out.len() as u64;
    for_sections(offsets, k, at, len, |s, rel, r| {
        section(s, rel, &mut out[r.start as usize..r.end as usize])
    });
}
