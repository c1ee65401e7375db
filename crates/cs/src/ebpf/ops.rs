//! eBPF instructions decoded once per program into one variant per operation, so that the
//! interpreter's loop dispatches once per instruction (a single `match` on a dense enum) with
//! its operands already unpacked: sign-extended immediates, jump targets as absolute
//! instruction indexes, and anything the compute namespace does not run decoded as
//! [`Op::Unsupported`], refused only if executed (as the instruction-at-a-time decoder did).
//! The semantics are the Linux kernel's instruction set (ISA v1 plus JMP32), as in `vm`.
//!
//! The decoded program ends with one more slot, [`Op::End`], that every jump leaving the code
//! targets (so that the interpreter never looks past its operations), and [`straight_runs`]
//! gives, for every slot, how many instructions run from there to the next one that can
//! transfer control: the interpreter charges the instruction budget once per such run.

/// One decoded instruction. Arithmetic is `<Op><64|32><I|R>`: immediate or register operand;
/// conditional jumps `J<cond><64|32><I|R>` with their absolute target `to`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Op {
    Unsupported,
    /// The slot past the last instruction (and the target of every jump out of the code):
    /// reaching it ends the run as `FellOffEnd`. Not an instruction: it is not counted.
    End,
    /// Put by the interpreter (never by the decoder) where a run's budget ends inside a
    /// straight run: reaching it ends the run as `OutOfBudget`.
    Exhausted,
    /// LD_DW: the 64-bit immediate (two instruction slots; the second decodes as unsupported).
    LdImm64 {
        dst: u8,
        value: u64,
    },
    Ldx1 {
        dst: u8,
        src: u8,
        off: i16,
    },
    Ldx2 {
        dst: u8,
        src: u8,
        off: i16,
    },
    Ldx4 {
        dst: u8,
        src: u8,
        off: i16,
    },
    Ldx8 {
        dst: u8,
        src: u8,
        off: i16,
    },
    St1 {
        dst: u8,
        off: i16,
        imm: u64,
    },
    St2 {
        dst: u8,
        off: i16,
        imm: u64,
    },
    St4 {
        dst: u8,
        off: i16,
        imm: u64,
    },
    St8 {
        dst: u8,
        off: i16,
        imm: u64,
    },
    Stx1 {
        dst: u8,
        src: u8,
        off: i16,
    },
    Stx2 {
        dst: u8,
        src: u8,
        off: i16,
    },
    Stx4 {
        dst: u8,
        src: u8,
        off: i16,
    },
    Stx8 {
        dst: u8,
        src: u8,
        off: i16,
    },
    /// The atomic add (STX with mode 0xc0, imm 0), 4 or 8 bytes.
    XAdd4 {
        dst: u8,
        src: u8,
        off: i16,
    },
    XAdd8 {
        dst: u8,
        src: u8,
        off: i16,
    },
    Add64I {
        dst: u8,
        imm: u64,
    },
    Add64R {
        dst: u8,
        src: u8,
    },
    Add32I {
        dst: u8,
        imm: u32,
    },
    Add32R {
        dst: u8,
        src: u8,
    },
    Sub64I {
        dst: u8,
        imm: u64,
    },
    Sub64R {
        dst: u8,
        src: u8,
    },
    Sub32I {
        dst: u8,
        imm: u32,
    },
    Sub32R {
        dst: u8,
        src: u8,
    },
    Mul64I {
        dst: u8,
        imm: u64,
    },
    Mul64R {
        dst: u8,
        src: u8,
    },
    Mul32I {
        dst: u8,
        imm: u32,
    },
    Mul32R {
        dst: u8,
        src: u8,
    },
    Div64I {
        dst: u8,
        imm: u64,
    },
    Div64R {
        dst: u8,
        src: u8,
    },
    Div32I {
        dst: u8,
        imm: u32,
    },
    Div32R {
        dst: u8,
        src: u8,
    },
    Or64I {
        dst: u8,
        imm: u64,
    },
    Or64R {
        dst: u8,
        src: u8,
    },
    Or32I {
        dst: u8,
        imm: u32,
    },
    Or32R {
        dst: u8,
        src: u8,
    },
    And64I {
        dst: u8,
        imm: u64,
    },
    And64R {
        dst: u8,
        src: u8,
    },
    And32I {
        dst: u8,
        imm: u32,
    },
    And32R {
        dst: u8,
        src: u8,
    },
    Lsh64I {
        dst: u8,
        imm: u64,
    },
    Lsh64R {
        dst: u8,
        src: u8,
    },
    Lsh32I {
        dst: u8,
        imm: u32,
    },
    Lsh32R {
        dst: u8,
        src: u8,
    },
    Rsh64I {
        dst: u8,
        imm: u64,
    },
    Rsh64R {
        dst: u8,
        src: u8,
    },
    Rsh32I {
        dst: u8,
        imm: u32,
    },
    Rsh32R {
        dst: u8,
        src: u8,
    },
    Neg64 {
        dst: u8,
    },
    Neg32 {
        dst: u8,
    },
    Mod64I {
        dst: u8,
        imm: u64,
    },
    Mod64R {
        dst: u8,
        src: u8,
    },
    Mod32I {
        dst: u8,
        imm: u32,
    },
    Mod32R {
        dst: u8,
        src: u8,
    },
    Xor64I {
        dst: u8,
        imm: u64,
    },
    Xor64R {
        dst: u8,
        src: u8,
    },
    Xor32I {
        dst: u8,
        imm: u32,
    },
    Xor32R {
        dst: u8,
        src: u8,
    },
    Mov64I {
        dst: u8,
        imm: u64,
    },
    Mov64R {
        dst: u8,
        src: u8,
    },
    Mov32I {
        dst: u8,
        imm: u32,
    },
    Mov32R {
        dst: u8,
        src: u8,
    },
    Arsh64I {
        dst: u8,
        imm: u64,
    },
    Arsh64R {
        dst: u8,
        src: u8,
    },
    Arsh32I {
        dst: u8,
        imm: u32,
    },
    Arsh32R {
        dst: u8,
        src: u8,
    },
    JEq64I {
        dst: u8,
        imm: u64,
        to: u32,
    },
    JEq64R {
        dst: u8,
        src: u8,
        to: u32,
    },
    JEq32I {
        dst: u8,
        imm: u32,
        to: u32,
    },
    JEq32R {
        dst: u8,
        src: u8,
        to: u32,
    },
    JGt64I {
        dst: u8,
        imm: u64,
        to: u32,
    },
    JGt64R {
        dst: u8,
        src: u8,
        to: u32,
    },
    JGt32I {
        dst: u8,
        imm: u32,
        to: u32,
    },
    JGt32R {
        dst: u8,
        src: u8,
        to: u32,
    },
    JGe64I {
        dst: u8,
        imm: u64,
        to: u32,
    },
    JGe64R {
        dst: u8,
        src: u8,
        to: u32,
    },
    JGe32I {
        dst: u8,
        imm: u32,
        to: u32,
    },
    JGe32R {
        dst: u8,
        src: u8,
        to: u32,
    },
    JSet64I {
        dst: u8,
        imm: u64,
        to: u32,
    },
    JSet64R {
        dst: u8,
        src: u8,
        to: u32,
    },
    JSet32I {
        dst: u8,
        imm: u32,
        to: u32,
    },
    JSet32R {
        dst: u8,
        src: u8,
        to: u32,
    },
    JNe64I {
        dst: u8,
        imm: u64,
        to: u32,
    },
    JNe64R {
        dst: u8,
        src: u8,
        to: u32,
    },
    JNe32I {
        dst: u8,
        imm: u32,
        to: u32,
    },
    JNe32R {
        dst: u8,
        src: u8,
        to: u32,
    },
    JSgt64I {
        dst: u8,
        imm: u64,
        to: u32,
    },
    JSgt64R {
        dst: u8,
        src: u8,
        to: u32,
    },
    JSgt32I {
        dst: u8,
        imm: u32,
        to: u32,
    },
    JSgt32R {
        dst: u8,
        src: u8,
        to: u32,
    },
    JSge64I {
        dst: u8,
        imm: u64,
        to: u32,
    },
    JSge64R {
        dst: u8,
        src: u8,
        to: u32,
    },
    JSge32I {
        dst: u8,
        imm: u32,
        to: u32,
    },
    JSge32R {
        dst: u8,
        src: u8,
        to: u32,
    },
    JLt64I {
        dst: u8,
        imm: u64,
        to: u32,
    },
    JLt64R {
        dst: u8,
        src: u8,
        to: u32,
    },
    JLt32I {
        dst: u8,
        imm: u32,
        to: u32,
    },
    JLt32R {
        dst: u8,
        src: u8,
        to: u32,
    },
    JLe64I {
        dst: u8,
        imm: u64,
        to: u32,
    },
    JLe64R {
        dst: u8,
        src: u8,
        to: u32,
    },
    JLe32I {
        dst: u8,
        imm: u32,
        to: u32,
    },
    JLe32R {
        dst: u8,
        src: u8,
        to: u32,
    },
    JSlt64I {
        dst: u8,
        imm: u64,
        to: u32,
    },
    JSlt64R {
        dst: u8,
        src: u8,
        to: u32,
    },
    JSlt32I {
        dst: u8,
        imm: u32,
        to: u32,
    },
    JSlt32R {
        dst: u8,
        src: u8,
        to: u32,
    },
    JSle64I {
        dst: u8,
        imm: u64,
        to: u32,
    },
    JSle64R {
        dst: u8,
        src: u8,
        to: u32,
    },
    JSle32I {
        dst: u8,
        imm: u32,
        to: u32,
    },
    JSle32R {
        dst: u8,
        src: u8,
        to: u32,
    },
    /// Byte order (ALU class, opcode 0xd0): to little-endian is a truncation on this
    /// little-endian machine, to big-endian a swap.
    Le16 {
        dst: u8,
    },
    Le32 {
        dst: u8,
    },
    Le64 {
        dst: u8,
    },
    Be16 {
        dst: u8,
    },
    Be32 {
        dst: u8,
    },
    Be64 {
        dst: u8,
    },
    Ja {
        to: u32,
    },
    /// A helper call (src 0).
    Call {
        helper: i32,
    },
    /// A BPF-to-BPF call (src 1) to instruction `to`.
    CallLocal {
        to: u32,
    },
    Exit,
    // Super-instructions ([`fuse`]): slot `pc` runs its own instruction and then slot
    // `pc + 1`'s, which keeps its own operation (a jump into it runs it alone). Named after
    // their halves; the immediates are the 32-bit ones of the encoding, sign-extended when run.
    /// `Add64I { dst, imm }` then `JGt64R { dst: jdst, src: jsrc, to }`.
    FAdd64IJGt64R {
        dst: u8,
        imm: i32,
        jdst: u8,
        jsrc: u8,
        to: u32,
    },
    /// `Mov64R { dst, src }` then `Add64R { dst: bdst, src: bsrc }`.
    FMov64RAdd64R {
        dst: u8,
        src: u8,
        bdst: u8,
        bsrc: u8,
    },
    /// `Ldx1 { dst, src, off }` then `JNe64I { dst: jdst, imm, to }`.
    FLdx1JNe64I {
        dst: u8,
        src: u8,
        off: i16,
        jdst: u8,
        imm: i32,
        to: u32,
    },
    /// `Ldx8 { dst, src, off }` then `Lsh64R { dst: bdst, src: bsrc }`.
    FLdx8Lsh64R {
        dst: u8,
        src: u8,
        off: i16,
        bdst: u8,
        bsrc: u8,
    },
    /// `Rsh64I { dst, imm }` then `Or64R { dst: bdst, src: bsrc }`.
    FRsh64IOr64R {
        dst: u8,
        imm: i32,
        bdst: u8,
        bsrc: u8,
    },
    /// `Mov64R { dst, src }` then `JGt64R { dst: jdst, src: jsrc, to }`.
    FMov64RJGt64R {
        dst: u8,
        src: u8,
        jdst: u8,
        jsrc: u8,
        to: u32,
    },
}

/// The absolute target of a jump at `this` by `by` instructions past the next one; a target
/// outside the code is the `End` slot (`slots`).
fn target(this: usize, by: i64, slots: usize) -> u32 {
    let to = this as i64 + 1 + by;
    let to = if (0..slots as i64).contains(&to) {
        to as usize
    } else {
        slots
    };
    u32::try_from(to).expect("programs are bounded well below 2^32 instructions")
}

/// Decodes `code` (whole 8-byte instructions), one `Op` per instruction slot, then `End`.
pub(super) fn decode(code: &[u8]) -> Vec<Op> {
    let slots = code.len() / 8;
    let mut ops: Vec<Op> = (0..slots).map(|pc| decode_one(code, pc, slots)).collect();
    ops.push(Op::End);
    ops
}

/// Whether `op` runs and goes on to the next slot (the second slot too for `LdImm64`), or
/// faults: anything that may jump, call, return or stop is not.
fn falls_through(op: Op) -> bool {
    !matches!(
        op,
        Op::Unsupported
            | Op::End
            | Op::Exhausted
            | Op::Ja { .. }
            | Op::Call { .. }
            | Op::CallLocal { .. }
            | Op::Exit
            | Op::JEq64I { .. }
            | Op::JEq64R { .. }
            | Op::JEq32I { .. }
            | Op::JEq32R { .. }
            | Op::JGt64I { .. }
            | Op::JGt64R { .. }
            | Op::JGt32I { .. }
            | Op::JGt32R { .. }
            | Op::JGe64I { .. }
            | Op::JGe64R { .. }
            | Op::JGe32I { .. }
            | Op::JGe32R { .. }
            | Op::JSet64I { .. }
            | Op::JSet64R { .. }
            | Op::JSet32I { .. }
            | Op::JSet32R { .. }
            | Op::JNe64I { .. }
            | Op::JNe64R { .. }
            | Op::JNe32I { .. }
            | Op::JNe32R { .. }
            | Op::JSgt64I { .. }
            | Op::JSgt64R { .. }
            | Op::JSgt32I { .. }
            | Op::JSgt32R { .. }
            | Op::JSge64I { .. }
            | Op::JSge64R { .. }
            | Op::JSge32I { .. }
            | Op::JSge32R { .. }
            | Op::JLt64I { .. }
            | Op::JLt64R { .. }
            | Op::JLt32I { .. }
            | Op::JLt32R { .. }
            | Op::JLe64I { .. }
            | Op::JLe64R { .. }
            | Op::JLe32I { .. }
            | Op::JLe32R { .. }
            | Op::JSlt64I { .. }
            | Op::JSlt64R { .. }
            | Op::JSlt32I { .. }
            | Op::JSlt32R { .. }
            | Op::JSle64I { .. }
            | Op::JSle64R { .. }
            | Op::JSle32I { .. }
            | Op::JSle32R { .. }
            // Super-instructions are not asked about: `straight_runs` and `after` read the
            // program as decoded, before `fuse`.
            | Op::FAdd64IJGt64R { .. }
            | Op::FMov64RAdd64R { .. }
            | Op::FLdx1JNe64I { .. }
            | Op::FLdx8Lsh64R { .. }
            | Op::FRsh64IOr64R { .. }
            | Op::FMov64RJGt64R { .. }
    )
}

/// The 32-bit immediate `imm` was decoded from, if it was one (sign-extended to 64 bits).
fn imm32(imm: u64) -> Option<i32> {
    i32::try_from(imm as i64).ok()
}

/// The super-instruction running `a` and then `b` (the operation of the slot after `a`'s), if
/// the pair is one of those fused: the adjacent pairs the filter example (clang's output for
/// `examples/cs/ebpf/filter.c`) executes most, one dispatch instead of two.
pub(super) fn fused(a: Op, b: Op) -> Option<Op> {
    Some(match (a, b) {
        (
            Op::Add64I { dst, imm },
            Op::JGt64R {
                dst: jdst,
                src: jsrc,
                to,
            },
        ) => Op::FAdd64IJGt64R {
            dst,
            imm: imm32(imm)?,
            jdst,
            jsrc,
            to,
        },
        (
            Op::Mov64R { dst, src },
            Op::Add64R {
                dst: bdst,
                src: bsrc,
            },
        ) => Op::FMov64RAdd64R {
            dst,
            src,
            bdst,
            bsrc,
        },
        (Op::Ldx1 { dst, src, off }, Op::JNe64I { dst: jdst, imm, to }) => Op::FLdx1JNe64I {
            dst,
            src,
            off,
            jdst,
            imm: imm32(imm)?,
            to,
        },
        (
            Op::Ldx8 { dst, src, off },
            Op::Lsh64R {
                dst: bdst,
                src: bsrc,
            },
        ) => Op::FLdx8Lsh64R {
            dst,
            src,
            off,
            bdst,
            bsrc,
        },
        (
            Op::Rsh64I { dst, imm },
            Op::Or64R {
                dst: bdst,
                src: bsrc,
            },
        ) => Op::FRsh64IOr64R {
            dst,
            imm: imm32(imm)?,
            bdst,
            bsrc,
        },
        (
            Op::Mov64R { dst, src },
            Op::JGt64R {
                dst: jdst,
                src: jsrc,
                to,
            },
        ) => Op::FMov64RJGt64R {
            dst,
            src,
            jdst,
            jsrc,
            to,
        },
        _ => return None,
    })
}

/// Fuses `ops` (as `decode` gives them) at decode: every slot whose operation and the next
/// slot's form a super-instruction ([`fused`]) becomes it, left to right, a slot fused as a
/// second half not fused again as a first. The second half's slot keeps its own operation,
/// so a jump to it runs it alone; `End` is never a half. Fusing changes no instruction's
/// effect nor the budget: the straight runs are those of the unfused program (`straight_runs`
/// is computed before), and the interpreter puts back the unfused operation of a slot whose
/// second half is where a budget ends (`vm::run`).
pub(super) fn fuse(ops: &mut [Op]) {
    let mut pc = 0;
    while pc + 1 < ops.len() {
        match fused(ops[pc], ops[pc + 1]) {
            Some(f) => {
                ops[pc] = f;
                pc += 2;
            }
            None => pc += 1,
        }
    }
}

/// The slot after `op` at `pc` when it falls through.
pub(super) fn next(op: Op, pc: usize) -> usize {
    match op {
        Op::LdImm64 { .. } => pc + 2,
        _ => pc + 1,
    }
}

/// For every slot of `ops` (as `decode` gives them, `End` last): the instructions a run
/// executes from that slot up to and including the first that does not fall through — the
/// straight run whose budget the interpreter checks once on entering it. `End` counts 0
/// (it is not an instruction), so a run that reaches it counts only what precedes it.
pub(super) fn straight_runs(ops: &[Op]) -> Vec<u64> {
    assert_eq!(ops.last(), Some(&Op::End), "decoded programs end with End");
    let mut runs = vec![0u64; ops.len()];
    for pc in (0..ops.len() - 1).rev() {
        let op = ops[pc];
        runs[pc] = if falls_through(op) {
            // LdImm64 is decoded only with its second slot inside the code, so `next` is at
            // most the End slot.
            1 + runs[next(op, pc)]
        } else {
            1
        };
    }
    runs
}

/// Where a straight run entered at `pc` stands after `instructions` of its instructions
/// (fewer than the run has): the slot at which a budget of `instructions` runs out.
pub(super) fn after(ops: &[Op], mut pc: usize, instructions: u64) -> usize {
    for _ in 0..instructions {
        assert!(
            falls_through(ops[pc]),
            "only a straight run's instructions are skipped over"
        );
        pc = next(ops[pc], pc);
    }
    pc
}

// Long: one `match` over the eBPF instruction set, an arm per opcode class, read side by side
// with the ISA table (RFC 9669); splitting it would scatter the encoding.
fn decode_one(code: &[u8], pc: usize, slots: usize) -> Op {
    let b = &code[pc * 8..pc * 8 + 8];
    let opc = b[0];
    let dst = b[1] & 0x0f;
    let src = b[1] >> 4;
    let off = i16::from_le_bytes([b[2], b[3]]);
    let imm = i32::from_le_bytes([b[4], b[5], b[6], b[7]]);
    if dst > 10 || src > 10 {
        // r0–r10 only (the verifier refuses others; decoded here so that nothing indexes
        // past the register file even if it did not run).
        return Op::Unsupported;
    }
    let class = opc & 0x07;
    let size = opc & 0x18;
    let reg = opc & 0x08 != 0;
    match class {
        // LD: only the 64-bit immediate (LD_DW with src 0).
        0x00 => {
            if opc != 0x18 || src != 0 || pc + 1 >= slots {
                return Op::Unsupported;
            }
            let n = &code[(pc + 1) * 8 + 4..(pc + 1) * 8 + 8];
            let hi = u32::from_le_bytes([n[0], n[1], n[2], n[3]]);
            Op::LdImm64 {
                dst,
                value: u64::from(imm as u32) | u64::from(hi) << 32,
            }
        }
        0x01 if opc & 0xe0 == 0x60 => match size {
            0x00 => Op::Ldx4 { dst, src, off },
            0x08 => Op::Ldx2 { dst, src, off },
            0x10 => Op::Ldx1 { dst, src, off },
            _ => Op::Ldx8 { dst, src, off },
        },
        0x02 if opc & 0xe0 == 0x60 => {
            let imm = imm as i64 as u64;
            match size {
                0x00 => Op::St4 { dst, off, imm },
                0x08 => Op::St2 { dst, off, imm },
                0x10 => Op::St1 { dst, off, imm },
                _ => Op::St8 { dst, off, imm },
            }
        }
        0x03 => match (opc & 0xe0, size) {
            (0x60, 0x00) => Op::Stx4 { dst, src, off },
            (0x60, 0x08) => Op::Stx2 { dst, src, off },
            (0x60, 0x10) => Op::Stx1 { dst, src, off },
            (0x60, _) => Op::Stx8 { dst, src, off },
            (0xc0, 0x00) if imm == 0 => Op::XAdd4 { dst, src, off },
            (0xc0, 0x18) if imm == 0 => Op::XAdd8 { dst, src, off },
            _ => Op::Unsupported,
        },
        // ALU (32-bit): the byte-order operations, then arithmetic (off must be 0: signed
        // division and sign-extending moves are ISA v4).
        0x04 if opc & 0xf0 == 0xd0 => match (reg, imm) {
            (false, 16) => Op::Le16 { dst },
            (false, 32) => Op::Le32 { dst },
            (false, 64) => Op::Le64 { dst },
            (true, 16) => Op::Be16 { dst },
            (true, 32) => Op::Be32 { dst },
            (true, 64) => Op::Be64 { dst },
            _ => Op::Unsupported,
        },
        0x04 if off == 0 => match (opc & 0xf0, reg) {
            (0x00, false) => Op::Add32I {
                dst,
                imm: imm as u32,
            },
            (0x00, true) => Op::Add32R { dst, src },
            (0x10, false) => Op::Sub32I {
                dst,
                imm: imm as u32,
            },
            (0x10, true) => Op::Sub32R { dst, src },
            (0x20, false) => Op::Mul32I {
                dst,
                imm: imm as u32,
            },
            (0x20, true) => Op::Mul32R { dst, src },
            (0x30, false) => Op::Div32I {
                dst,
                imm: imm as u32,
            },
            (0x30, true) => Op::Div32R { dst, src },
            (0x40, false) => Op::Or32I {
                dst,
                imm: imm as u32,
            },
            (0x40, true) => Op::Or32R { dst, src },
            (0x50, false) => Op::And32I {
                dst,
                imm: imm as u32,
            },
            (0x50, true) => Op::And32R { dst, src },
            (0x60, false) => Op::Lsh32I {
                dst,
                imm: imm as u32,
            },
            (0x60, true) => Op::Lsh32R { dst, src },
            (0x70, false) => Op::Rsh32I {
                dst,
                imm: imm as u32,
            },
            (0x70, true) => Op::Rsh32R { dst, src },
            (0x80, _) => Op::Neg32 { dst },
            (0x90, false) => Op::Mod32I {
                dst,
                imm: imm as u32,
            },
            (0x90, true) => Op::Mod32R { dst, src },
            (0xa0, false) => Op::Xor32I {
                dst,
                imm: imm as u32,
            },
            (0xa0, true) => Op::Xor32R { dst, src },
            (0xb0, false) => Op::Mov32I {
                dst,
                imm: imm as u32,
            },
            (0xb0, true) => Op::Mov32R { dst, src },
            (0xc0, false) => Op::Arsh32I {
                dst,
                imm: imm as u32,
            },
            (0xc0, true) => Op::Arsh32R { dst, src },
            _ => Op::Unsupported,
        },
        0x07 if off == 0 => match (opc & 0xf0, reg) {
            (0x00, false) => Op::Add64I {
                dst,
                imm: imm as i64 as u64,
            },
            (0x00, true) => Op::Add64R { dst, src },
            (0x10, false) => Op::Sub64I {
                dst,
                imm: imm as i64 as u64,
            },
            (0x10, true) => Op::Sub64R { dst, src },
            (0x20, false) => Op::Mul64I {
                dst,
                imm: imm as i64 as u64,
            },
            (0x20, true) => Op::Mul64R { dst, src },
            (0x30, false) => Op::Div64I {
                dst,
                imm: imm as i64 as u64,
            },
            (0x30, true) => Op::Div64R { dst, src },
            (0x40, false) => Op::Or64I {
                dst,
                imm: imm as i64 as u64,
            },
            (0x40, true) => Op::Or64R { dst, src },
            (0x50, false) => Op::And64I {
                dst,
                imm: imm as i64 as u64,
            },
            (0x50, true) => Op::And64R { dst, src },
            (0x60, false) => Op::Lsh64I {
                dst,
                imm: imm as i64 as u64,
            },
            (0x60, true) => Op::Lsh64R { dst, src },
            (0x70, false) => Op::Rsh64I {
                dst,
                imm: imm as i64 as u64,
            },
            (0x70, true) => Op::Rsh64R { dst, src },
            (0x80, _) => Op::Neg64 { dst },
            (0x90, false) => Op::Mod64I {
                dst,
                imm: imm as i64 as u64,
            },
            (0x90, true) => Op::Mod64R { dst, src },
            (0xa0, false) => Op::Xor64I {
                dst,
                imm: imm as i64 as u64,
            },
            (0xa0, true) => Op::Xor64R { dst, src },
            (0xb0, false) => Op::Mov64I {
                dst,
                imm: imm as i64 as u64,
            },
            (0xb0, true) => Op::Mov64R { dst, src },
            (0xc0, false) => Op::Arsh64I {
                dst,
                imm: imm as i64 as u64,
            },
            (0xc0, true) => Op::Arsh64R { dst, src },
            _ => Op::Unsupported,
        },
        0x05 => {
            let to = target(pc, i64::from(off), slots);
            match (opc & 0xf0, reg) {
                (0x00, _) => Op::Ja { to },
                (0x80, _) => match src {
                    0 => Op::Call { helper: imm },
                    1 => Op::CallLocal {
                        to: target(pc, i64::from(imm), slots),
                    },
                    _ => Op::Unsupported,
                },
                (0x90, _) => Op::Exit,
                (0x10, false) => Op::JEq64I {
                    dst,
                    imm: imm as i64 as u64,
                    to,
                },
                (0x10, true) => Op::JEq64R { dst, src, to },
                (0x20, false) => Op::JGt64I {
                    dst,
                    imm: imm as i64 as u64,
                    to,
                },
                (0x20, true) => Op::JGt64R { dst, src, to },
                (0x30, false) => Op::JGe64I {
                    dst,
                    imm: imm as i64 as u64,
                    to,
                },
                (0x30, true) => Op::JGe64R { dst, src, to },
                (0x40, false) => Op::JSet64I {
                    dst,
                    imm: imm as i64 as u64,
                    to,
                },
                (0x40, true) => Op::JSet64R { dst, src, to },
                (0x50, false) => Op::JNe64I {
                    dst,
                    imm: imm as i64 as u64,
                    to,
                },
                (0x50, true) => Op::JNe64R { dst, src, to },
                (0x60, false) => Op::JSgt64I {
                    dst,
                    imm: imm as i64 as u64,
                    to,
                },
                (0x60, true) => Op::JSgt64R { dst, src, to },
                (0x70, false) => Op::JSge64I {
                    dst,
                    imm: imm as i64 as u64,
                    to,
                },
                (0x70, true) => Op::JSge64R { dst, src, to },
                (0xa0, false) => Op::JLt64I {
                    dst,
                    imm: imm as i64 as u64,
                    to,
                },
                (0xa0, true) => Op::JLt64R { dst, src, to },
                (0xb0, false) => Op::JLe64I {
                    dst,
                    imm: imm as i64 as u64,
                    to,
                },
                (0xb0, true) => Op::JLe64R { dst, src, to },
                (0xc0, false) => Op::JSlt64I {
                    dst,
                    imm: imm as i64 as u64,
                    to,
                },
                (0xc0, true) => Op::JSlt64R { dst, src, to },
                (0xd0, false) => Op::JSle64I {
                    dst,
                    imm: imm as i64 as u64,
                    to,
                },
                (0xd0, true) => Op::JSle64R { dst, src, to },
                _ => Op::Unsupported,
            }
        }
        0x06 => {
            let to = target(pc, i64::from(off), slots);
            match (opc & 0xf0, reg) {
                (0x10, false) => Op::JEq32I {
                    dst,
                    imm: imm as u32,
                    to,
                },
                (0x10, true) => Op::JEq32R { dst, src, to },
                (0x20, false) => Op::JGt32I {
                    dst,
                    imm: imm as u32,
                    to,
                },
                (0x20, true) => Op::JGt32R { dst, src, to },
                (0x30, false) => Op::JGe32I {
                    dst,
                    imm: imm as u32,
                    to,
                },
                (0x30, true) => Op::JGe32R { dst, src, to },
                (0x40, false) => Op::JSet32I {
                    dst,
                    imm: imm as u32,
                    to,
                },
                (0x40, true) => Op::JSet32R { dst, src, to },
                (0x50, false) => Op::JNe32I {
                    dst,
                    imm: imm as u32,
                    to,
                },
                (0x50, true) => Op::JNe32R { dst, src, to },
                (0x60, false) => Op::JSgt32I {
                    dst,
                    imm: imm as u32,
                    to,
                },
                (0x60, true) => Op::JSgt32R { dst, src, to },
                (0x70, false) => Op::JSge32I {
                    dst,
                    imm: imm as u32,
                    to,
                },
                (0x70, true) => Op::JSge32R { dst, src, to },
                (0xa0, false) => Op::JLt32I {
                    dst,
                    imm: imm as u32,
                    to,
                },
                (0xa0, true) => Op::JLt32R { dst, src, to },
                (0xb0, false) => Op::JLe32I {
                    dst,
                    imm: imm as u32,
                    to,
                },
                (0xb0, true) => Op::JLe32R { dst, src, to },
                (0xc0, false) => Op::JSlt32I {
                    dst,
                    imm: imm as u32,
                    to,
                },
                (0xc0, true) => Op::JSlt32R { dst, src, to },
                (0xd0, false) => Op::JSle32I {
                    dst,
                    imm: imm as u32,
                    to,
                },
                (0xd0, true) => Op::JSle32R { dst, src, to },
                _ => Op::Unsupported,
            }
        }
        _ => Op::Unsupported,
    }
}
