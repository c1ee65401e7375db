//! Program slots: Load Program downloads a program in chunks into a slot (PIND) with its type
//! (PTYPE) and unique id (PUID); Program Activation Management checks it (an eBPF object is
//! read and verified, a WebAssembly module compiled) and activates it, at most MAXACT at once;
//! Execute Program runs an activated one over a range set's memory.
//!
//! Running is the real computation — the interpreter produces the program's result and its
//! writes into the memory namespace — and answers the work it did ([`Work`]), which the
//! device charges on the engine's time (`device.rs`). A program that misbehaves (runs out of
//! budget, touches memory outside its ranges, traps) stops with a [`CommandError`].

use crate::ebpf::{elf, vm};
use crate::error::CommandError;
use crate::opcodes::ProgramType;
use std::sync::Arc;

/// Bytes of input a WebAssembly program is fed at once (the read buffer of the examples).
const WASM_CHUNK_BYTES: usize = 1 << 20;

/// The work one run did, for the engine's time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Work {
    /// Instructions (eBPF) or fuel (WebAssembly): one core instruction each
    /// (`nearflash_wasm::cost`).
    pub instructions: u64,
    /// Memory-namespace bytes the program read and wrote.
    pub slm_bytes: u64,
}

/// A finished run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ran {
    pub result: u64,
    pub work: Work,
    /// The program's log (eBPF `log`) or diagnostics (WebAssembly fd 2), bounded.
    pub log: Vec<u8>,
}

enum Compiled {
    Ebpf(Vec<u8>),
    Wasm(Box<nearflash_wasm::Program>),
}

struct Slot {
    ptype: ProgramType,
    puid: u64,
    size_bytes: u64,
    bytes: Vec<u8>,
    compiled: Option<Compiled>,
}

impl Slot {
    fn complete(&self) -> bool {
        self.bytes.len() as u64 == self.size_bytes
    }
}

/// A Load Program chunk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chunk {
    pub pind: u16,
    pub ptype: ProgramType,
    pub puid: u64,
    /// PSIZE: the whole program's size.
    pub size_bytes: u64,
    /// LOFF: where this chunk goes.
    pub offset_bytes: u64,
    pub data: Vec<u8>,
}

/// A slot's descriptor (the Program Information log's 64-byte entry, in part).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Descriptor {
    pub pind: u16,
    pub ptype: ProgramType,
    pub puid: u64,
    pub size_bytes: u64,
    pub complete: bool,
    pub activated: bool,
}

/// The device's program slots.
pub struct Programs {
    slots: Vec<Option<Slot>>,
    activated_max: u16,
    bytes_max: u64,
    granularity_bytes: u64,
    /// A run computed outside the device that the next run may use instead of interpreting
    /// (`expect`); taken by the next run whether it matches or not.
    known: Option<KnownRun>,
}

/// A run computed outside the device ([`run_detached`]: range 0 the input, range 1 an output
/// range of zeros), offered to the next Execute. A program run is a pure function of the
/// program, its parameters, its budget, and its ranges' lengths and bytes (the machines keep
/// no other state), so when all of these are equal — the ranges apart, the input's bytes
/// compared whole, the output range all zeros — the device's run would compute exactly this:
/// the device then writes `output` into range 1 and answers `ran` without running the program
/// a second time (`nearflash cs run` computes the host-only path's run on another core while
/// the offload is simulated; the two are the same run). Anything else runs as usual.
#[derive(Clone, Debug)]
pub struct KnownRun {
    pub ptype: ProgramType,
    pub program: Vec<u8>,
    pub params: [u64; 2],
    pub instructions_max: u64,
    /// Range 0's bytes, before the run and after it (a run that changed them is not offered).
    pub input: Arc<Vec<u8>>,
    /// Range 1's bytes after the run (zeros before it).
    pub output: Vec<u8>,
    pub ran: Ran,
}

impl KnownRun {
    /// Whether a run of `slot` over `ranges` of `slm` is the run this one is.
    fn is_the_run_of(
        &self,
        slot: &Slot,
        slm: &[u8],
        ranges: &[vm::Window],
        params: [u64; 2],
        instructions_max: u64,
    ) -> bool {
        let [input, output] = ranges else {
            return false;
        };
        let bytes =
            |w: &vm::Window| &slm[w.start_bytes as usize..(w.start_bytes + w.len_bytes) as usize];
        let apart = input.start_bytes + input.len_bytes <= output.start_bytes
            || output.start_bytes + output.len_bytes <= input.start_bytes;
        slot.ptype == self.ptype
            && slot.bytes == self.program
            && params == self.params
            && instructions_max == self.instructions_max
            && apart
            && input.len_bytes == self.input.len() as u64
            && output.len_bytes == self.output.len() as u64
            && bytes(output).iter().all(|&b| b == 0)
            && bytes(input) == self.input.as_slice()
    }
}

impl Programs {
    pub fn new(slots: u16, activated_max: u16, bytes_max: u64, granularity_bytes: u64) -> Self {
        assert!(slots >= activated_max && activated_max > 0 && granularity_bytes > 0);
        Programs {
            slots: (0..slots).map(|_| None).collect(),
            activated_max,
            bytes_max,
            granularity_bytes,
            known: None,
        }
    }

    /// Offers `k` to the next run (see [`KnownRun`]).
    pub fn expect(&mut self, k: KnownRun) {
        self.known = Some(k);
    }

    fn slot_index(&self, pind: u16) -> Result<usize, CommandError> {
        let i = usize::from(pind);
        if i >= self.slots.len() {
            return Err(CommandError::BadProgramIndex {
                pind,
                slots: self.slots.len() as u16,
            });
        }
        Ok(i)
    }

    pub fn activated(&self) -> u16 {
        self.slots
            .iter()
            .flatten()
            .filter(|s| s.compiled.is_some())
            .count() as u16
    }

    /// Load Program (SEL 0): one chunk. The first chunk (LOFF 0) starts the program anew;
    /// chunks come in order and the last completes it.
    pub fn load(&mut self, c: Chunk) -> Result<(), CommandError> {
        let i = self.slot_index(c.pind)?;
        if c.size_bytes > self.bytes_max {
            return Err(CommandError::ProgramTooBig {
                bytes: c.size_bytes,
                bytes_max: self.bytes_max,
            });
        }
        if self.slots[i].as_ref().is_some_and(|s| s.compiled.is_some()) {
            return Err(CommandError::ProgramInUse { pind: c.pind });
        }
        let chunk_bad = |reason: String| Err(CommandError::BadChunk { reason });
        let g = self.granularity_bytes;
        let last = c.offset_bytes + c.data.len() as u64 == c.size_bytes;
        if c.data.is_empty()
            || !c.offset_bytes.is_multiple_of(g)
            || (!last && !(c.data.len() as u64).is_multiple_of(g))
        {
            return chunk_bad(format!(
                "{} bytes at offset {}: chunks are non-empty and offsets and sizes are multiples of LPG ({g} bytes)",
                c.data.len(),
                c.offset_bytes
            ));
        }
        if c.offset_bytes == 0 {
            self.slots[i] = Some(Slot {
                ptype: c.ptype,
                puid: c.puid,
                size_bytes: c.size_bytes,
                bytes: Vec::new(),
                compiled: None,
            });
        }
        let Some(slot) = self.slots[i].as_mut() else {
            return chunk_bad(format!(
                "offset {} in an empty slot: the first chunk has offset 0",
                c.offset_bytes
            ));
        };
        if slot.ptype != c.ptype || slot.puid != c.puid || slot.size_bytes != c.size_bytes {
            return chunk_bad("PTYPE, PUID and PSIZE differ from the first chunk's".into());
        }
        if c.offset_bytes != slot.bytes.len() as u64 {
            return chunk_bad(format!(
                "offset {} but {} bytes are loaded: chunks come in order",
                c.offset_bytes,
                slot.bytes.len()
            ));
        }
        if c.offset_bytes + c.data.len() as u64 > slot.size_bytes {
            return chunk_bad(format!(
                "{} bytes at offset {} run past PSIZE {}",
                c.data.len(),
                c.offset_bytes,
                slot.size_bytes
            ));
        }
        slot.bytes.extend_from_slice(&c.data);
        assert!(slot.bytes.len() as u64 <= slot.size_bytes);
        Ok(())
    }

    /// Load Program (SEL 1): empties a slot.
    pub fn unload(&mut self, pind: u16) -> Result<(), CommandError> {
        let i = self.slot_index(pind)?;
        match &self.slots[i] {
            None => Err(CommandError::NoProgram { pind }),
            Some(s) if s.compiled.is_some() => Err(CommandError::ProgramInUse { pind }),
            Some(_) => {
                self.slots[i] = None;
                Ok(())
            }
        }
    }

    /// Program Activation Management: activate (checking the program) or deactivate.
    pub fn activate(&mut self, pind: u16, on: bool) -> Result<(), CommandError> {
        let i = self.slot_index(pind)?;
        let active = self.activated();
        let activated_max = self.activated_max;
        let slot = match self.slots[i].as_mut() {
            Some(s) if s.complete() => s,
            _ => return Err(CommandError::NoProgram { pind }),
        };
        if !on {
            if slot.compiled.take().is_none() {
                return Err(CommandError::NotActivated { pind });
            }
            return Ok(());
        }
        if slot.compiled.is_some() {
            return Ok(());
        }
        if active >= activated_max {
            return Err(CommandError::TooManyActive { active });
        }
        slot.compiled = Some(compile(pind, slot.ptype, &slot.bytes)?);
        assert!(self.activated() <= self.activated_max);
        Ok(())
    }

    pub fn descriptor(&self, pind: u16) -> Option<Descriptor> {
        let s = self.slots.get(usize::from(pind))?.as_ref()?;
        Some(Descriptor {
            pind,
            ptype: s.ptype,
            puid: s.puid,
            size_bytes: s.size_bytes,
            complete: s.complete(),
            activated: s.compiled.is_some(),
        })
    }

    /// Runs activated program `pind` over `ranges` of `slm` — or answers the run offered by
    /// `expect` if it is this run.
    pub fn run(
        &mut self,
        pind: u16,
        slm: &mut [u8],
        ranges: &[vm::Window],
        params: [u64; 2],
        instructions_max: u64,
    ) -> Result<Ran, CommandError> {
        let known = self.known.take();
        let i = self.slot_index(pind)?;
        let slot = self.slots[i]
            .as_ref()
            .ok_or(CommandError::NoProgram { pind })?;
        let compiled = slot
            .compiled
            .as_ref()
            .ok_or(CommandError::NotActivated { pind })?;
        if let Some(k) = known {
            if k.is_the_run_of(slot, slm, ranges, params, instructions_max) {
                let out = ranges[1];
                slm[out.start_bytes as usize..(out.start_bytes + out.len_bytes) as usize]
                    .copy_from_slice(&k.output);
                return Ok(k.ran);
            }
        }
        match compiled {
            Compiled::Ebpf(code) => {
                let mut m = vm::Machine {
                    slm,
                    ranges,
                    params,
                    instructions_max,
                };
                let f = vm::run(code, &mut m)
                    .map_err(|fault| CommandError::EbpfFault { pind, fault })?;
                Ok(Ran {
                    result: f.result,
                    work: Work {
                        instructions: f.instructions,
                        slm_bytes: f.slm_bytes,
                    },
                    log: f.log,
                })
            }
            Compiled::Wasm(p) => run_wasm(pind, p, slm, ranges, params, instructions_max),
        }
    }
}

fn compile(pind: u16, ptype: ProgramType, bytes: &[u8]) -> Result<Compiled, CommandError> {
    let invalid = |reason: String| CommandError::InvalidProgram {
        pind,
        ptype: ptype.name(),
        reason,
    };
    match ptype {
        ProgramType::Ebpf => {
            let code = elf::code(bytes).map_err(|source| CommandError::BadObject {
                pind,
                ptype: ptype.name(),
                source,
            })?;
            vm::verify(&code.bytes).map_err(invalid)?;
            Ok(Compiled::Ebpf(code.bytes))
        }
        ProgramType::Wasm => {
            let limits = nearflash_wasm::Limits {
                module_bytes_max: bytes.len() as u64,
                ..nearflash_wasm::Limits::default()
            };
            let name = format!("program-{pind}");
            nearflash_wasm::Program::load(&name, bytes, limits)
                .map(|p| Compiled::Wasm(Box::new(p)))
                .map_err(|e| invalid(e.to_string()))
        }
    }
}

/// A WebAssembly run: range 0 is standard input, range 1 receives standard output, the
/// parameters are argv[1] and argv[2]; the result is the number of output bytes.
fn run_wasm(
    pind: u16,
    p: &nearflash_wasm::Program,
    slm: &mut [u8],
    ranges: &[vm::Window],
    params: [u64; 2],
    fuel_max: u64,
) -> Result<Ran, CommandError> {
    let fault = |source| CommandError::WasmFault { pind, source };
    let args = [params[0].to_string(), params[1].to_string()];
    let mut run = p.start_with_fuel(&args, 0, fuel_max).map_err(fault)?;
    let input = ranges.first().map_or(0..0, |w| {
        w.start_bytes as usize..(w.start_bytes + w.len_bytes) as usize
    });
    let out_max = ranges.get(1).map_or(0, |w| w.len_bytes);
    let mut output = Vec::new();
    let mut code = None;
    let mut at = input.start;
    loop {
        let end = (at + WASM_CHUNK_BYTES).min(input.end);
        let step = run
            .feed(0, &slm[at..end], end == input.end)
            .map_err(fault)?;
        output.extend(run.take_output());
        if output.len() as u64 > out_max {
            return Err(CommandError::OutputOverflow {
                pind,
                bytes: output.len() as u64,
                bytes_max: out_max,
            });
        }
        at = end;
        if let nearflash_wasm::Status::Exited { code: c } = step.status {
            code = Some(c);
            break;
        }
        if at == input.end {
            break;
        }
    }
    let diagnostics = run.diagnostics().to_vec();
    match code {
        Some(0) => {}
        Some(code) => {
            return Err(CommandError::WasmExit {
                pind,
                code,
                diagnostics: String::from_utf8_lossy(&diagnostics).into_owned(),
            })
        }
        None => {
            return Err(CommandError::WasmExit {
                pind,
                code: -1,
                diagnostics: "the program was still reading after its last input".into(),
            })
        }
    }
    if let Some(w) = ranges.get(1) {
        let o = w.start_bytes as usize;
        slm[o..o + output.len()].copy_from_slice(&output);
    }
    Ok(Ran {
        result: output.len() as u64,
        work: Work {
            instructions: run.fuel_consumed(),
            slm_bytes: run.input_read_bytes() + output.len() as u64,
        },
        log: diagnostics,
    })
}

/// Runs a program outside any device — the host-only path runs the very program the drive
/// would, to count its work on a host core: `input` is range 0 and an output buffer of
/// `output_bytes` is range 1. Answers the run, range 1's bytes after it, and whether range 0's
/// are still the input's.
pub fn run_detached(
    ptype: ProgramType,
    bytes: &[u8],
    input: &[u8],
    output_bytes: u64,
    params: [u64; 2],
    instructions_max: u64,
) -> Result<Detached, CommandError> {
    let mut programs = Programs::new(1, 1, bytes.len().max(1) as u64, 1);
    programs.load(Chunk {
        pind: 0,
        ptype,
        puid: 0,
        size_bytes: bytes.len() as u64,
        offset_bytes: 0,
        data: bytes.to_vec(),
    })?;
    programs.activate(0, true)?;
    let input_len = input.len() as u64;
    // Allocated whole at once: growing a copy of a GiB-sized input would copy it again.
    let mut slm = Vec::with_capacity((input_len + output_bytes) as usize);
    slm.extend_from_slice(input);
    slm.resize((input_len + output_bytes) as usize, 0);
    let windows = [
        vm::Window {
            start_bytes: 0,
            len_bytes: input_len,
        },
        vm::Window {
            start_bytes: input_len,
            len_bytes: output_bytes,
        },
    ];
    let ran = programs.run(0, &mut slm, &windows, params, instructions_max)?;
    let output = slm.split_off(input.len());
    Ok(Detached {
        ran,
        output,
        input_unchanged: slm == input,
    })
}

/// A run outside any device ([`run_detached`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Detached {
    pub ran: Ran,
    /// Range 1's bytes after the run.
    pub output: Vec<u8>,
    /// Whether the run left range 0 (the input) as it was.
    pub input_unchanged: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ebpf_object(text: &str) -> Vec<u8> {
        // A minimal ELF object around assembled code, as clang writes one: a header, the
        // code section "cs", the section name table.
        let code = rbpf::assembler::assemble(text).unwrap();
        let names = b"\0cs\0.shstrtab\0";
        let mut f = vec![0u8; 64];
        f[..4].copy_from_slice(b"\x7fELF");
        f[4] = 2;
        f[5] = 1;
        f[6] = 1;
        f[16] = 1;
        f[18] = 247;
        let code_at = f.len() as u64;
        f.extend(&code);
        let names_at = f.len() as u64;
        f.extend(names);
        let shoff = f.len() as u64;
        f[40..48].copy_from_slice(&shoff.to_le_bytes());
        f[52] = 64;
        f[58] = 64;
        f[60] = 3;
        f[62] = 2;
        let header = |name: u32, kind: u32, flags: u64, at: u64, size: u64| {
            let mut h = vec![0u8; 64];
            h[0..4].copy_from_slice(&name.to_le_bytes());
            h[4..8].copy_from_slice(&kind.to_le_bytes());
            h[8..16].copy_from_slice(&flags.to_le_bytes());
            h[24..32].copy_from_slice(&at.to_le_bytes());
            h[32..40].copy_from_slice(&size.to_le_bytes());
            h
        };
        f.extend(header(0, 0, 0, 0, 0));
        f.extend(header(1, 1, 0x6, code_at, code.len() as u64));
        f.extend(header(4, 3, 0, names_at, names.len() as u64));
        f
    }

    fn loaded(p: &mut Programs, pind: u16, object: &[u8]) -> Result<(), CommandError> {
        p.load(Chunk {
            pind,
            ptype: ProgramType::Ebpf,
            puid: u64::from(pind),
            size_bytes: object.len() as u64,
            offset_bytes: 0,
            data: object.to_vec(),
        })
    }

    #[test]
    fn a_program_loaded_in_chunks_runs_once_activated() {
        let object = ebpf_object("ldxdw r0, [r1+8]\nexit");
        let mut p = Programs::new(4, 2, 1 << 20, 4);
        let cut = 40;
        for (offset, part) in [(0, &object[..cut]), (cut, &object[cut..])] {
            p.load(Chunk {
                pind: 1,
                ptype: ProgramType::Ebpf,
                puid: 7,
                size_bytes: object.len() as u64,
                offset_bytes: offset as u64,
                data: part.to_vec(),
            })
            .unwrap();
        }
        let e = p.run(1, &mut [], &[], [0, 5], 100).unwrap_err();
        assert_eq!(e.status(), crate::Status::ProgramNotActivated);
        p.activate(1, true).unwrap();
        assert_eq!(p.run(1, &mut [], &[], [0, 5], 100).unwrap().result, 5);
        assert!(p.descriptor(1).unwrap().activated);
    }

    #[test]
    fn a_chunk_out_of_order_or_off_granularity_is_refused() {
        let object = ebpf_object("mov r0, 0\nexit");
        let mut p = Programs::new(2, 1, 1 << 20, 4);
        let mut c = Chunk {
            pind: 0,
            ptype: ProgramType::Ebpf,
            puid: 1,
            size_bytes: object.len() as u64,
            offset_bytes: 8,
            data: object[8..16].to_vec(),
        };
        assert_eq!(
            p.load(c.clone()).unwrap_err().status(),
            crate::Status::InvalidField
        );
        c.offset_bytes = 0;
        c.data = object[..6].to_vec();
        assert_eq!(p.load(c).unwrap_err().status(), crate::Status::InvalidField);
    }

    #[test]
    fn each_status_of_the_program_commands_has_its_cause() {
        let object = ebpf_object("mov r0, 0\nexit");
        let mut p = Programs::new(3, 1, 1 << 20, 4);
        // Bad index.
        assert_eq!(
            loaded(&mut p, 9, &object).unwrap_err().status(),
            crate::Status::InvalidProgramIndex
        );
        // Program too big.
        let mut small = Programs::new(1, 1, 64, 4);
        assert_eq!(
            loaded(&mut small, 0, &object).unwrap_err().status(),
            crate::Status::ProgramTooBig
        );
        // No program.
        assert_eq!(
            p.activate(0, true).unwrap_err().status(),
            crate::Status::NoProgram
        );
        // Too many active.
        loaded(&mut p, 0, &object).unwrap();
        loaded(&mut p, 1, &object).unwrap();
        p.activate(0, true).unwrap();
        assert_eq!(
            p.activate(1, true).unwrap_err().status(),
            crate::Status::MaxProgramsActivated
        );
        // In use.
        assert_eq!(
            p.unload(0).unwrap_err().status(),
            crate::Status::ProgramInUse
        );
        // Not activated.
        assert_eq!(
            p.activate(1, false).unwrap_err().status(),
            crate::Status::ProgramNotActivated
        );
        // Bad data.
        let mut junk = object.clone();
        junk[0] = b'X';
        loaded(&mut p, 2, &junk).unwrap();
        p.activate(0, false).unwrap();
        assert_eq!(
            p.activate(2, true).unwrap_err().status(),
            crate::Status::InvalidProgramData
        );
    }

    #[test]
    fn a_detached_run_reads_range_0_and_writes_range_1() {
        // r0 = first input byte; store it at output[0].
        let object =
            ebpf_object("ldxdw r2, [r1+24]\nldxb r0, [r2]\nldxdw r3, [r1+40]\nstxb [r3], r0\nexit");
        let d = run_detached(ProgramType::Ebpf, &object, &[42, 1], 4, [0, 0], 1000).unwrap();
        assert_eq!((d.ran.result, d.output), (42, vec![42, 0, 0, 0]));
        assert_eq!(d.ran.work.slm_bytes, 2);
        assert!(d.input_unchanged);
    }

    /// A program that copies its input's first byte to its output and returns it.
    fn copier() -> Vec<u8> {
        ebpf_object("ldxdw r2, [r1+24]\nldxb r0, [r2]\nldxdw r3, [r1+40]\nstxb [r3], r0\nexit")
    }

    fn known(program: &[u8], input: &[u8], output: Vec<u8>, result: u64) -> KnownRun {
        KnownRun {
            ptype: ProgramType::Ebpf,
            program: program.to_vec(),
            params: [0, 0],
            instructions_max: 1000,
            input: Arc::new(input.to_vec()),
            output,
            ran: Ran {
                result,
                work: Work {
                    instructions: 5,
                    slm_bytes: 2,
                },
                log: Vec::new(),
            },
        }
    }

    /// Runs `copier` as a device would: input [42, 1] at SLM 0, a 4-byte output at SLM 8.
    fn device_run(p: &mut Programs, slm: &mut [u8]) -> u64 {
        let windows = [
            vm::Window {
                start_bytes: 0,
                len_bytes: 2,
            },
            vm::Window {
                start_bytes: 8,
                len_bytes: 4,
            },
        ];
        p.run(0, slm, &windows, [0, 0], 1000).unwrap().result
    }

    #[test]
    fn a_run_known_in_advance_is_answered_only_for_the_same_program_and_bytes() {
        let object = copier();
        let mut p = Programs::new(1, 1, 1 << 20, 1);
        loaded(&mut p, 0, &object).unwrap();
        p.activate(0, true).unwrap();
        let fresh = || {
            let mut slm = vec![0u8; 12];
            slm[..2].copy_from_slice(&[42, 1]);
            slm
        };
        // The same run: its answer is used (a made-up one, so that using it shows).
        let mut slm = fresh();
        p.expect(known(&object, &[42, 1], vec![7, 7, 7, 7], 7));
        assert_eq!(device_run(&mut p, &mut slm), 7);
        assert_eq!(&slm[8..12], &[7, 7, 7, 7]);
        // Taken by that run: the next one interprets.
        let mut slm = fresh();
        assert_eq!(device_run(&mut p, &mut slm), 42);
        // Other input bytes, another program, a dirty output range: interpreted.
        let mut slm = fresh();
        p.expect(known(&object, &[42, 2], vec![7, 7, 7, 7], 7));
        assert_eq!(device_run(&mut p, &mut slm), 42);
        let mut slm = fresh();
        let other = ebpf_object("mov r0, 1\nexit");
        p.expect(known(&other, &[42, 1], vec![7, 7, 7, 7], 7));
        assert_eq!(device_run(&mut p, &mut slm), 42);
        let mut slm = fresh();
        slm[9] = 1;
        p.expect(known(&object, &[42, 1], vec![7, 7, 7, 7], 7));
        assert_eq!(device_run(&mut p, &mut slm), 42);
    }
}
