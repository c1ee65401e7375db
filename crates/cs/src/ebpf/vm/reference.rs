//! The instruction-at-a-time interpreter the decoded one (`super::run`) replaced, kept as
//! the reference model its property test compares against: every instruction decoded as it
//! runs, its operands read from the opcode's fields.

use super::*;

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

/// Runs `code` (already verified) on `m`, decoding each instruction as it runs.
// Long: the reference interpreter is one `match` over raw opcodes on purpose — the property
// tests compare the decoded machine with this plain reading of the ISA.
pub(super) fn run(code: &[u8], m: &mut Machine<'_>) -> Result<Finished, Fault> {
    let mut st = State::new(code, m);
    let insns = code.len() / 8;
    let decoded: Vec<Insn> = code.chunks_exact(8).map(Insn::decode).collect();
    let mut r = [0u64; 11];
    r[1] = CTX_BASE;
    r[10] = STACK_BASE + STACK_FRAME_BYTES;
    // Return address and callee-saved r6–r9 of each caller frame.
    let mut frames: Vec<(usize, [u64; 4])> = Vec::with_capacity(FRAMES_MAX);
    let mut pc = 0usize;
    let budget = st.instructions_max;
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
