//! The eBPF machine a compute namespace runs programs in: an interpreter of the eBPF
//! instruction set (the Linux kernel's `Documentation/bpf/standardization/instruction-set.rst`,
//! ISA v1 plus the JMP32 class) with an **instruction budget** and **bounds-checked memory**.
//!
//! The static checks (known opcodes, jump targets inside the code, whole LD_DW pairs, no
//! write to r10, last instruction a jump) are rbpf's verifier ([`verify`]). rbpf's own
//! interpreter is not used: it has no instruction budget (a runaway loop would never end),
//! and its helpers are stateless functions handed host addresses, with no way to reach the
//! range set. Execution here:
//!
//! * Memory is four kinds of region, told apart by the top 32 bits of an address:
//!   the stack (512 bytes per frame, 8 frames: `STACK_BASE`), the read-only context
//!   (`CTX_BASE`: the two parameters and each range's address and length), and range `i` of
//!   the range set at `(RANGE_REGION + i) << 32`. Every load and store checks that all its
//!   bytes lie inside one region — anything else is [`Fault::OutOfBounds`] naming the
//!   instruction.
//! * Every executed instruction counts against the budget ([`Fault::OutOfBudget`]); helpers
//!   count as the WebAssembly runtime's host calls do (`nearflash_wasm::cost::host_call_fuel`).
//! * Helpers (examples/cs/cs_helpers.h): 1 `slm_read`, 2 `slm_write`, 3 `get_param`, 4 `log`.
//!   Any other number is [`Fault::UnknownHelper`].
//! * Division by zero follows the kernel (quotient 0, remainder the dividend).

use std::fmt::Write as _;

/// Bytes of stack per frame (the kernel's MAX_BPF_STACK, rbpf's STACK_SIZE).
pub const STACK_FRAME_BYTES: u64 = 512;
/// Nested BPF-to-BPF calls (the kernel's MAX_CALL_FRAMES).
pub const FRAMES_MAX: usize = 8;
/// Ranges a program can see (the context's array; the SPDK CPCS default of 32 per set).
pub const RANGES_MAX: usize = 32;
/// Log bytes kept per run; the rest is counted and dropped.
pub const LOG_BYTES_MAX: usize = 4096;

const STACK_REGION: u64 = 1;
const CTX_REGION: u64 = 2;
const RANGE_REGION: u64 = 16;
pub const STACK_BASE: u64 = STACK_REGION << 32;
pub const CTX_BASE: u64 = CTX_REGION << 32;

/// Context layout: param1, param2 (u64 each), nranges, reserved (u32 each), then per range
/// its address and length (u64 each).
const CTX_HEADER_BYTES: usize = 24;
const CTX_BYTES: usize = CTX_HEADER_BYTES + 16 * RANGES_MAX;

/// The helpers' numbers (examples/cs/cs_helpers.h).
pub const HELPER_SLM_READ: i32 = 1;
pub const HELPER_SLM_WRITE: i32 = 2;
pub const HELPER_GET_PARAM: i32 = 3;
pub const HELPER_LOG: i32 = 4;

/// The address a program sees range `index` at.
pub fn range_address(index: usize) -> u64 {
    (RANGE_REGION + index as u64) << 32
}

/// One range of the range set: a window of the memory namespace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub start_bytes: u64,
    pub len_bytes: u64,
}

/// What a run may touch and how long it may run.
pub struct Machine<'a> {
    /// The memory namespace's bytes the ranges are windows of.
    pub slm: &'a mut [u8],
    pub ranges: &'a [Window],
    pub params: [u64; 2],
    pub instructions_max: u64,
}

/// A finished run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finished {
    /// r0 at the final exit: the 64-bit return value.
    pub result: u64,
    /// Instructions executed, helpers counted at their cost.
    pub instructions: u64,
    /// Bytes of the range set the program loaded and stored (helpers' moves included).
    pub slm_bytes: u64,
    pub log: Vec<u8>,
}

/// Why a run stopped before its final exit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Fault {
    #[error("ran out of its budget of {instructions_max} instructions (a runaway loop?)")]
    OutOfBudget { instructions_max: u64 },
    #[error("instruction #{pc} ({insn}) {access} {len} byte(s) at {addr:#x}, outside the stack, the context and the range set")]
    OutOfBounds {
        pc: usize,
        insn: String,
        access: &'static str,
        addr: u64,
        len: u64,
    },
    #[error("instruction #{pc} calls helper {id}, which does not exist (1 slm_read, 2 slm_write, 3 get_param, 4 log)")]
    UnknownHelper { pc: usize, id: i64 },
    #[error("instruction #{pc}: helper {helper}: {reason}")]
    HelperArgument {
        pc: usize,
        helper: &'static str,
        reason: String,
    },
    #[error("instruction #{pc} ({insn}) is not supported by the compute namespace")]
    Unsupported { pc: usize, insn: String },
    #[error("instruction #{pc}: calls nested deeper than {FRAMES_MAX} frames")]
    CallDepth { pc: usize },
    #[error("the program ran past its last instruction")]
    FellOffEnd,
}

/// rbpf's verifier over `code`, with its message on refusal.
pub fn verify(code: &[u8]) -> Result<(), String> {
    rbpf::EbpfVmRaw::new(Some(code))
        .map(drop)
        .map_err(|e| e.to_string())
}

/// The text of instruction `pc` (rbpf's disassembler), for messages.
fn describe(code: &[u8], pc: usize) -> String {
    let at = pc * 8;
    let Some(one) = code.get(at..at + 16).or_else(|| code.get(at..at + 8)) else {
        return "?".into();
    };
    rbpf::disassembler::to_insn_vec(one)
        .first()
        .map_or_else(|| "?".into(), |i| i.desc.clone())
}

struct State<'m, 'a> {
    m: &'m mut Machine<'a>,
    ctx: [u8; CTX_BYTES],
    stack: Vec<u8>,
    log: Vec<u8>,
    /// Instructions charged for helpers' work (their call instruction is counted as any).
    helper_instructions: u64,
    slm_bytes: u64,
}

/// A resolved memory access: which buffer and at what offset.
enum Place {
    Stack(usize),
    Ctx(usize),
    Slm(usize),
}

impl State<'_, '_> {
    fn place(&self, addr: u64, len: u64, write: bool) -> Option<Place> {
        let region = addr >> 32;
        let offset = addr & 0xffff_ffff;
        let end = offset.checked_add(len)?;
        match region {
            STACK_REGION if end <= self.stack.len() as u64 => Some(Place::Stack(offset as usize)),
            CTX_REGION if !write && end <= CTX_BYTES as u64 => Some(Place::Ctx(offset as usize)),
            r if r >= RANGE_REGION => {
                let w = self.m.ranges.get((r - RANGE_REGION) as usize)?;
                (end <= w.len_bytes).then(|| Place::Slm((w.start_bytes + offset) as usize))
            }
            _ => None,
        }
    }

    /// Counts the range-set bytes an access moves.
    fn note(&mut self, p: &Place, len: usize) {
        if let Place::Slm(_) = p {
            self.slm_bytes += len as u64;
        }
    }

    fn bytes(&self, p: &Place, len: usize) -> &[u8] {
        match *p {
            Place::Stack(o) => &self.stack[o..o + len],
            Place::Ctx(o) => &self.ctx[o..o + len],
            Place::Slm(o) => &self.m.slm[o..o + len],
        }
    }

    fn bytes_mut(&mut self, p: &Place, len: usize) -> &mut [u8] {
        match *p {
            Place::Stack(o) => &mut self.stack[o..o + len],
            Place::Ctx(_) => unreachable!("the context is never a write's place"),
            Place::Slm(o) => &mut self.m.slm[o..o + len],
        }
    }

    /// The bytes from `addr` on, if `len` of them lie inside one region (the hot path of
    /// every load and store: one compare per region kind).
    #[inline(always)]
    fn region(&mut self, addr: u64, len: usize, write: bool) -> Option<&mut [u8]> {
        let off = (addr & 0xffff_ffff) as usize;
        let region = addr >> 32;
        if region >= RANGE_REGION {
            let w = self.m.ranges.get((region - RANGE_REGION) as usize)?;
            if (off + len) as u64 > w.len_bytes {
                return None;
            }
            self.slm_bytes += len as u64;
            let at = w.start_bytes as usize + off;
            return Some(&mut self.m.slm[at..at + len]);
        }
        if region == STACK_REGION && off + len <= self.stack.len() {
            return Some(&mut self.stack[off..off + len]);
        }
        if region == CTX_REGION && !write && off + len <= CTX_BYTES {
            return Some(&mut self.ctx[off..off + len]);
        }
        None
    }

    #[inline(always)]
    fn load(&mut self, code: &[u8], pc: usize, addr: u64, len: usize) -> Result<u64, Fault> {
        let Some(b) = self.region(addr, len, false) else {
            return Err(oob(code, pc, "reads", addr, len as u64));
        };
        Ok(match len {
            1 => u64::from(b[0]),
            2 => u64::from(u16::from_le_bytes([b[0], b[1]])),
            4 => u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            _ => u64::from_le_bytes(b[..8].try_into().expect("8 bytes")),
        })
    }

    #[inline(always)]
    fn store(
        &mut self,
        code: &[u8],
        pc: usize,
        addr: u64,
        len: usize,
        value: u64,
    ) -> Result<(), Fault> {
        let Some(b) = self.region(addr, len, true) else {
            return Err(oob(code, pc, "writes", addr, len as u64));
        };
        b.copy_from_slice(&value.to_le_bytes()[..len]);
        Ok(())
    }

    /// Copies `len` bytes between two places of the machine (a helper's move).
    fn copy(
        &mut self,
        pc: usize,
        helper: &'static str,
        from: u64,
        to: u64,
        len: u64,
    ) -> Result<(), Fault> {
        let bad = |what: &str, addr: u64| Fault::HelperArgument {
            pc,
            helper,
            reason: format!("{what} of {len} bytes at {addr:#x} is outside the memory it may use"),
        };
        let src = self
            .place(from, len, false)
            .ok_or_else(|| bad("source", from))?;
        let dst = self
            .place(to, len, true)
            .ok_or_else(|| bad("destination", to))?;
        self.note(&src, len as usize);
        self.note(&dst, len as usize);
        let data = self.bytes(&src, len as usize).to_vec();
        self.bytes_mut(&dst, len as usize).copy_from_slice(&data);
        Ok(())
    }

    fn helper(&mut self, pc: usize, id: i32, r: &[u64; 11]) -> Result<u64, Fault> {
        let (a1, a2, a3, a4) = (r[1], r[2], r[3], r[4]);
        let range_at = |helper: &'static str, index: u64, offset: u64| {
            if index as usize >= self.m.ranges.len() {
                return Err(Fault::HelperArgument {
                    pc,
                    helper,
                    reason: format!(
                        "range {index} does not exist (the range set has {})",
                        self.m.ranges.len()
                    ),
                });
            }
            Ok(range_address(index as usize) + offset.min(u64::from(u32::MAX)))
        };
        let moved = match id {
            HELPER_SLM_READ => {
                let from = range_at("slm_read", a1, a2)?;
                self.copy(pc, "slm_read", from, a3, a4)?;
                a4
            }
            HELPER_SLM_WRITE => {
                let to = range_at("slm_write", a1, a2)?;
                self.copy(pc, "slm_write", a3, to, a4)?;
                a4
            }
            HELPER_GET_PARAM => {
                self.charge(nearflash_wasm::cost::host_call_fuel(0));
                return match a1 {
                    1 | 2 => Ok(self.m.params[a1 as usize - 1]),
                    n => Err(Fault::HelperArgument {
                        pc,
                        helper: "get_param",
                        reason: format!("parameter {n} does not exist (1 is CPARAM1, 2 CPARAM2)"),
                    }),
                };
            }
            HELPER_LOG => {
                let len = a2.min(LOG_BYTES_MAX as u64);
                let p = self.place(a1, len, false).ok_or(Fault::HelperArgument {
                    pc,
                    helper: "log",
                    reason: format!("message of {a2} bytes at {a1:#x} is outside its memory"),
                })?;
                let room = LOG_BYTES_MAX - self.log.len();
                let text = self.bytes(&p, len as usize)[..(len as usize).min(room)].to_vec();
                self.log.extend(text);
                a2
            }
            other => {
                return Err(Fault::UnknownHelper {
                    pc,
                    id: i64::from(other),
                })
            }
        };
        self.charge(nearflash_wasm::cost::host_call_fuel(moved));
        Ok(0)
    }

    /// A helper's cost beyond its call instruction; the budget check of the next
    /// instruction sees it.
    fn charge(&mut self, instructions: u64) {
        self.helper_instructions = self.helper_instructions.saturating_add(instructions);
    }
}

fn oob(code: &[u8], pc: usize, access: &'static str, addr: u64, len: u64) -> Fault {
    Fault::OutOfBounds {
        pc,
        insn: describe(code, pc),
        access,
        addr,
        len,
    }
}

fn unsupported(code: &[u8], pc: usize) -> Fault {
    Fault::Unsupported {
        pc,
        insn: describe(code, pc),
    }
}

/// Arithmetic and logic of one ALU instruction (`op` is the opcode's top four bits).
/// `None` for an operation the set does not have.
fn alu64(op: u8, a: u64, b: u64) -> Option<u64> {
    Some(match op {
        0x00 => a.wrapping_add(b),
        0x10 => a.wrapping_sub(b),
        0x20 => a.wrapping_mul(b),
        0x30 => a.checked_div(b).unwrap_or(0),
        0x40 => a | b,
        0x50 => a & b,
        0x60 => a.wrapping_shl((b & 63) as u32),
        0x70 => a.wrapping_shr((b & 63) as u32),
        0x80 => a.wrapping_neg(),
        0x90 => a.checked_rem(b).unwrap_or(a),
        0xa0 => a ^ b,
        0xb0 => b,
        0xc0 => ((a as i64) >> (b & 63)) as u64,
        _ => return None,
    })
}

fn alu32(op: u8, a: u32, b: u32) -> Option<u32> {
    Some(match op {
        0x00 => a.wrapping_add(b),
        0x10 => a.wrapping_sub(b),
        0x20 => a.wrapping_mul(b),
        0x30 => a.checked_div(b).unwrap_or(0),
        0x40 => a | b,
        0x50 => a & b,
        0x60 => a.wrapping_shl(b & 31),
        0x70 => a.wrapping_shr(b & 31),
        0x80 => a.wrapping_neg(),
        0x90 => a.checked_rem(b).unwrap_or(a),
        0xa0 => a ^ b,
        0xb0 => b,
        0xc0 => ((a as i32) >> (b & 31)) as u32,
        _ => return None,
    })
}

/// Whether a conditional jump of `op` is taken; `None` for a non-comparison.
fn taken(op: u8, a: u64, b: u64, wide: bool) -> Option<bool> {
    let (sa, sb) = if wide {
        (a as i64, b as i64)
    } else {
        (i64::from(a as i32), i64::from(b as i32))
    };
    let (a, b) = if wide {
        (a, b)
    } else {
        (a & 0xffff_ffff, b & 0xffff_ffff)
    };
    Some(match op {
        0x10 => a == b,
        0x20 => a > b,
        0x30 => a >= b,
        0x40 => a & b != 0,
        0x50 => a != b,
        0x60 => sa > sb,
        0x70 => sa >= sb,
        0xa0 => a < b,
        0xb0 => a <= b,
        0xc0 => sa < sb,
        0xd0 => sa <= sb,
        _ => return None,
    })
}

/// One instruction, decoded once per run.
#[derive(Clone, Copy)]
struct Insn {
    opc: u8,
    dst: u8,
    src: u8,
    off: i16,
    imm: i32,
}

impl Insn {
    fn decode(b: &[u8]) -> Insn {
        Insn {
            opc: b[0],
            dst: b[1] & 0x0f,
            src: b[1] >> 4,
            off: i16::from_le_bytes([b[2], b[3]]),
            imm: i32::from_le_bytes([b[4], b[5], b[6], b[7]]),
        }
    }
}

/// Runs `code` (already verified) on `m`.
pub fn run(code: &[u8], m: &mut Machine<'_>) -> Result<Finished, Fault> {
    assert!(code.len().is_multiple_of(8), "code is whole instructions");
    assert!(m.ranges.len() <= RANGES_MAX, "range sets are bounded");
    for w in m.ranges {
        assert!(
            w.start_bytes + w.len_bytes <= m.slm.len() as u64 && w.len_bytes <= u64::from(u32::MAX),
            "ranges are checked against the memory namespace when the set is made"
        );
    }
    let mut ctx = [0u8; CTX_BYTES];
    ctx[0..8].copy_from_slice(&m.params[0].to_le_bytes());
    ctx[8..16].copy_from_slice(&m.params[1].to_le_bytes());
    ctx[16..20].copy_from_slice(&(m.ranges.len() as u32).to_le_bytes());
    for (i, w) in m.ranges.iter().enumerate() {
        let at = CTX_HEADER_BYTES + 16 * i;
        ctx[at..at + 8].copy_from_slice(&range_address(i).to_le_bytes());
        ctx[at + 8..at + 16].copy_from_slice(&w.len_bytes.to_le_bytes());
    }
    let mut st = State {
        m,
        ctx,
        stack: vec![0; STACK_FRAME_BYTES as usize * FRAMES_MAX],
        log: Vec::new(),
        helper_instructions: 0,
        slm_bytes: 0,
    };
    let insns = code.len() / 8;
    let decoded: Vec<Insn> = code.chunks_exact(8).map(Insn::decode).collect();
    let mut r = [0u64; 11];
    r[1] = CTX_BASE;
    r[10] = STACK_BASE + STACK_FRAME_BYTES;
    // Return address and callee-saved r6–r9 of each caller frame.
    let mut frames: Vec<(usize, [u64; 4])> = Vec::with_capacity(FRAMES_MAX);
    let mut pc = 0usize;
    let budget = st.m.instructions_max;
    let mut executed = 0u64;
    loop {
        if pc >= insns {
            return Err(Fault::FellOffEnd);
        }
        executed += 1;
        if executed.saturating_add(st.helper_instructions) > budget {
            return Err(Fault::OutOfBudget {
                instructions_max: budget,
            });
        }
        let Insn {
            opc,
            dst,
            src,
            off,
            imm,
        } = decoded[pc];
        let (dst, src) = (usize::from(dst), usize::from(src));
        let this = pc;
        pc += 1;
        let class = opc & 0x07;
        let size = match opc & 0x18 {
            0x00 => 4,
            0x08 => 2,
            0x10 => 1,
            _ => 8,
        };
        let addr = |base: u64| base.wrapping_add(off as i64 as u64);
        match class {
            // LD: only the 64-bit immediate (LD_DW with src 0).
            0x00 => {
                if opc != 0x18 || src != 0 || pc >= insns {
                    return Err(unsupported(code, this));
                }
                let hi = u32::from_le_bytes(code[pc * 8 + 4..pc * 8 + 8].try_into().expect("4"));
                r[dst] = u64::from(imm as u32) | u64::from(hi) << 32;
                pc += 1;
            }
            // LDX MEM
            0x01 => {
                if opc & 0xe0 != 0x60 {
                    return Err(unsupported(code, this));
                }
                r[dst] = st.load(code, this, addr(r[src]), size)?;
            }
            // ST MEM (immediate)
            0x02 => {
                if opc & 0xe0 != 0x60 {
                    return Err(unsupported(code, this));
                }
                st.store(code, this, addr(r[dst]), size, imm as i64 as u64)?;
            }
            // STX MEM, and the atomic add
            0x03 => match opc & 0xe0 {
                0x60 => st.store(code, this, addr(r[dst]), size, r[src])?,
                0xc0 if imm == 0 && (size == 4 || size == 8) => {
                    let a = addr(r[dst]);
                    let old = st.load(code, this, a, size)?;
                    st.store(code, this, a, size, old.wrapping_add(r[src]))?;
                }
                _ => return Err(unsupported(code, this)),
            },
            // ALU (32-bit) and ALU64
            0x04 | 0x07 => {
                let op = opc & 0xf0;
                let wide = class == 0x07;
                if op == 0xd0 {
                    // Byte order: LE is a truncation on this little-endian machine, BE a swap.
                    let v = r[dst];
                    r[dst] = match (opc & 0x08 != 0, imm) {
                        (false, 16) => v & 0xffff,
                        (false, 32) => v & 0xffff_ffff,
                        (false, 64) => v,
                        (true, 16) => u64::from((v as u16).swap_bytes()),
                        (true, 32) => u64::from((v as u32).swap_bytes()),
                        (true, 64) => v.swap_bytes(),
                        _ => return Err(unsupported(code, this)),
                    };
                    if wide {
                        return Err(unsupported(code, this));
                    }
                } else {
                    if off != 0 {
                        // Signed division and sign-extending moves (ISA v4): not in v1.
                        return Err(unsupported(code, this));
                    }
                    let b = if opc & 0x08 != 0 {
                        r[src]
                    } else {
                        imm as i64 as u64
                    };
                    r[dst] = if wide {
                        alu64(op, r[dst], b).ok_or_else(|| unsupported(code, this))?
                    } else {
                        u64::from(
                            alu32(op, r[dst] as u32, b as u32)
                                .ok_or_else(|| unsupported(code, this))?,
                        )
                    };
                }
            }
            // JMP and JMP32
            0x05 | 0x06 => {
                let op = opc & 0xf0;
                let wide = class == 0x05;
                match op {
                    0x00 if wide => pc = (pc as i64 + i64::from(off)) as usize,
                    0x80 if wide => match src {
                        0 => {
                            let v = st.helper(this, imm, &r)?;
                            r[0] = v;
                            // Helpers clobber r1–r5, as the calling convention says.
                            r[1..=5].fill(0);
                        }
                        1 => {
                            if frames.len() + 1 >= FRAMES_MAX {
                                return Err(Fault::CallDepth { pc: this });
                            }
                            frames.push((pc, [r[6], r[7], r[8], r[9]]));
                            r[10] += STACK_FRAME_BYTES;
                            pc = (pc as i64 + i64::from(imm)) as usize;
                        }
                        _ => return Err(unsupported(code, this)),
                    },
                    0x90 if wide => match frames.pop() {
                        Some((back, saved)) => {
                            pc = back;
                            r[6..=9].copy_from_slice(&saved);
                            r[10] -= STACK_FRAME_BYTES;
                        }
                        None => {
                            return Ok(Finished {
                                result: r[0],
                                instructions: executed + st.helper_instructions,
                                slm_bytes: st.slm_bytes,
                                log: st.log,
                            });
                        }
                    },
                    _ => {
                        let b = if opc & 0x08 != 0 {
                            r[src]
                        } else {
                            imm as i64 as u64
                        };
                        if taken(op, r[dst], b, wide).ok_or_else(|| unsupported(code, this))? {
                            pc = (pc as i64 + i64::from(off)) as usize;
                        }
                    }
                }
            }
            _ => return Err(unsupported(code, this)),
        }
    }
}

/// A one-line listing of `code`, for diagnostics.
pub fn listing(code: &[u8]) -> String {
    let mut s = String::new();
    for (i, insn) in rbpf::disassembler::to_insn_vec(code).iter().enumerate() {
        let _ = writeln!(s, "{i:4}: {}", insn.desc);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asm(text: &str) -> Vec<u8> {
        rbpf::assembler::assemble(text).unwrap()
    }

    fn run_on(code: &[u8], slm: &mut [u8], ranges: &[Window]) -> Result<Finished, Fault> {
        verify(code).unwrap();
        run(
            code,
            &mut Machine {
                slm,
                ranges,
                params: [7, 9],
                instructions_max: 10_000,
            },
        )
    }

    #[test]
    fn a_program_reads_its_parameters_from_the_context() {
        let code = asm("ldxdw r0, [r1]\nldxdw r2, [r1+8]\nadd r0, r2\nexit");
        let got = run_on(&code, &mut [], &[]).unwrap();
        assert_eq!((got.result, got.instructions), (16, 4));
    }

    #[test]
    fn a_program_sums_the_bytes_of_its_range() {
        let code = asm("ldxdw r2, [r1+24]\nldxdw r3, [r1+32]\nmov r0, 0\n\
             jeq r3, 0, +5\nldxb r4, [r2]\nadd r0, r4\nadd r2, 1\nsub r3, 1\nja -6\nexit");
        let mut slm = vec![0u8; 64];
        slm[10..20].copy_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
        let w = [Window {
            start_bytes: 10,
            len_bytes: 10,
        }];
        assert_eq!(run_on(&code, &mut slm, &w).unwrap().result, 55);
    }

    #[test]
    fn a_load_one_byte_past_the_range_is_out_of_bounds() {
        let code = asm("ldxdw r2, [r1+24]\nldxb r0, [r2+10]\nexit");
        let mut slm = vec![0u8; 64];
        let w = [Window {
            start_bytes: 0,
            len_bytes: 10,
        }];
        let e = run_on(&code, &mut slm, &w).unwrap_err();
        assert!(matches!(e, Fault::OutOfBounds { pc: 1, .. }), "{e}");
    }

    #[test]
    fn a_store_into_the_context_is_out_of_bounds() {
        let e = run_on(&asm("stdw [r1], 1\nexit"), &mut [], &[]).unwrap_err();
        assert!(
            matches!(
                e,
                Fault::OutOfBounds {
                    access: "writes",
                    ..
                }
            ),
            "{e}"
        );
    }

    #[test]
    fn a_loop_without_end_stops_at_its_budget() {
        let e = run_on(&asm("mov r0, 0\nadd r0, 1\nja -2\nexit"), &mut [], &[]).unwrap_err();
        assert_eq!(
            e,
            Fault::OutOfBudget {
                instructions_max: 10_000
            }
        );
    }

    #[test]
    fn an_unknown_helper_is_named() {
        let e = run_on(&asm("call 99\nexit"), &mut [], &[]).unwrap_err();
        assert_eq!(e, Fault::UnknownHelper { pc: 0, id: 99 });
    }

    #[test]
    fn helpers_move_bytes_between_the_stack_and_a_range_and_return_parameters() {
        // Write 8 bytes of r6 (CPARAM2) from the stack into range 0 at offset 4.
        let code = asm(
            "mov r1, 2\ncall 3\nstxdw [r10-8], r0\nmov r1, 0\nmov r2, 4\nmov r3, r10\n\
             add r3, -8\nmov r4, 8\ncall 2\nmov r0, 0\nexit",
        );
        let mut slm = vec![0u8; 16];
        let w = [Window {
            start_bytes: 0,
            len_bytes: 16,
        }];
        run_on(&code, &mut slm, &w).unwrap();
        assert_eq!(&slm[4..12], &9u64.to_le_bytes());
    }

    #[test]
    fn division_by_zero_follows_the_kernel() {
        let code = asm("mov r0, 5\nmov r2, 0\ndiv r0, r2\nmov r3, 7\nmod r3, r2\nadd r0, r3\nexit");
        assert_eq!(run_on(&code, &mut [], &[]).unwrap().result, 7);
    }
}
