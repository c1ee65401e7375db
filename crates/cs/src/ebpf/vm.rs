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
//! * Every executed instruction counts against the budget ([`Fault::OutOfBudget`]), charged
//!   once per straight run of instructions and stopping exactly where it ends ([`run`]); helpers
//!   count as the WebAssembly runtime's host calls do (`nearflash_wasm::cost::host_call_fuel`).
//! * Helpers (examples/cs/cs_helpers.h): 1 `slm_read`, 2 `slm_write`, 3 `get_param`, 4 `log`.
//!   Any other number is [`Fault::UnknownHelper`].
//! * Division by zero follows the kernel (quotient 0, remainder the dividend).

use super::ops::{self, decode, straight_runs, Op};
use std::fmt::Write as _;

/// Bytes of stack per frame (the kernel's MAX_BPF_STACK, rbpf's STACK_SIZE).
pub const STACK_FRAME_BYTES: u64 = 512;
/// Nested BPF-to-BPF calls (the kernel's MAX_CALL_FRAMES).
pub const FRAMES_MAX: usize = 8;
/// Ranges a program can see (the context's array; the SPDK CPCS default of 32 per set).
pub const RANGES_MAX: usize = 32;
/// Log bytes kept per run; the rest is counted and dropped.
pub const LOG_BYTES_MAX: usize = 4096;

/// The whole stack: every frame's.
const STACK_BYTES: usize = STACK_FRAME_BYTES as usize * FRAMES_MAX;
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
    let Some(b) = code.get(at..at + 8) else {
        return "?".into();
    };
    // rbpf's disassembler panics on an opcode it does not know: it is asked only about
    // instructions the machine runs (all of which it knows), the rest are shown raw.
    let ops = decode(code.get(at..at + 16).unwrap_or(b));
    if ops.first().is_none_or(|op| *op == Op::Unsupported) {
        return format!(
            "opcode {:#04x}, dst r{}, src r{}, off {}, imm {}",
            b[0],
            b[1] & 0x0f,
            b[1] >> 4,
            i16::from_le_bytes([b[2], b[3]]),
            i32::from_le_bytes([b[4], b[5], b[6], b[7]])
        );
    }
    let one = if b[0] == 0x18 { &code[at..at + 16] } else { b };
    rbpf::disassembler::to_insn_vec(one)
        .first()
        .map_or_else(|| "?".into(), |i| i.desc.clone())
}

/// A run's machine: the `Machine`'s parts held directly (one indirection less on every
/// access), the context and the stack.
struct State<'m> {
    slm: &'m mut [u8],
    ranges: &'m [Window],
    params: [u64; 2],
    instructions_max: u64,
    ctx: [u8; CTX_BYTES],
    stack: [u8; STACK_BYTES],
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

impl<'m> State<'m> {
    /// The machine's state at a run's start: the context filled in, the stack zeroed.
    fn new(code: &[u8], m: &'m mut Machine<'_>) -> State<'m> {
        assert!(code.len().is_multiple_of(8), "code is whole instructions");
        assert!(m.ranges.len() <= RANGES_MAX, "range sets are bounded");
        for w in m.ranges {
            assert!(
                w.start_bytes + w.len_bytes <= m.slm.len() as u64
                    && w.len_bytes <= u64::from(u32::MAX),
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
        State {
            slm: &mut *m.slm,
            ranges: m.ranges,
            params: m.params,
            instructions_max: m.instructions_max,
            ctx,
            stack: [0; STACK_BYTES],
            log: Vec::new(),
            helper_instructions: 0,
            slm_bytes: 0,
        }
    }

    /// The atomic add: `len` bytes at `addr` plus `value`.
    #[inline(always)]
    fn add(
        &mut self,
        code: &[u8],
        pc: usize,
        addr: u64,
        len: usize,
        value: u64,
    ) -> Result<(), Fault> {
        let old = self.load(code, pc, addr, len)?;
        self.store(code, pc, addr, len, old.wrapping_add(value))
    }

    fn place(&self, addr: u64, len: u64, write: bool) -> Option<Place> {
        let region = addr >> 32;
        let offset = addr & 0xffff_ffff;
        let end = offset.checked_add(len)?;
        match region {
            STACK_REGION if end <= self.stack.len() as u64 => Some(Place::Stack(offset as usize)),
            CTX_REGION if !write && end <= CTX_BYTES as u64 => Some(Place::Ctx(offset as usize)),
            r if r >= RANGE_REGION => {
                let w = self.ranges.get((r - RANGE_REGION) as usize)?;
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
            Place::Slm(o) => &self.slm[o..o + len],
        }
    }

    fn bytes_mut(&mut self, p: &Place, len: usize) -> &mut [u8] {
        match *p {
            Place::Stack(o) => &mut self.stack[o..o + len],
            Place::Ctx(_) => unreachable!("the context is never a write's place"),
            Place::Slm(o) => &mut self.slm[o..o + len],
        }
    }

    /// The bytes from `addr` on, if `len` of them lie inside one region (the hot path of
    /// every load and store: one compare per region kind).
    #[inline(always)]
    fn region(&mut self, addr: u64, len: usize, write: bool) -> Option<&mut [u8]> {
        let off = (addr & 0xffff_ffff) as usize;
        let region = addr >> 32;
        if region >= RANGE_REGION {
            let w = self.ranges.get((region - RANGE_REGION) as usize)?;
            if (off + len) as u64 > w.len_bytes {
                return None;
            }
            self.slm_bytes += len as u64;
            let at = w.start_bytes as usize + off;
            return Some(&mut self.slm[at..at + len]);
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

    fn helper(&mut self, pc: usize, id: i32, r: &[u64]) -> Result<u64, Fault> {
        let (a1, a2, a3, a4) = (r[1], r[2], r[3], r[4]);
        let range_at = |helper: &'static str, index: u64, offset: u64| {
            if index as usize >= self.ranges.len() {
                return Err(Fault::HelperArgument {
                    pc,
                    helper,
                    reason: format!(
                        "range {index} does not exist (the range set has {})",
                        self.ranges.len()
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
                    1 | 2 => Ok(self.params[a1 as usize - 1]),
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

/// Slot `pc` of the decoded program (`ops`, or `runs` beside it) without a bounds check.
///
/// Every slot the interpreter goes to is inside: it starts at 0 (`End` is slot 0 of an empty
/// program); jumps and local calls target a slot of the code or the `End` slot after it
/// (`ops::decode` clamps them); an operation that falls through is in the code, so the slot
/// after it is at most `End`, and `LdImm64` is decoded only with its second slot in the code;
/// a return goes to the slot after a call; `End` itself stops the run. The interpreter's
/// loop is mostly this fetch and the dispatch: the check cost it a sixth of its instructions.
#[inline(always)]
fn fetch<T: Copy>(slots: &[T], pc: usize) -> T {
    debug_assert!(pc < slots.len(), "slot {pc} of {}", slots.len());
    // SAFETY: `pc < slots.len()` by the invariant above (checked in debug builds and by the
    // property test against the reference interpreter, which indexes checked).
    unsafe { *slots.get_unchecked(pc) }
}

/// A register's index into the sixteen-entry file: masked to four bits, so that no access needs
/// a bounds check (the decoder refuses numbers over 10).
#[inline(always)]
fn reg(r: u8) -> usize {
    usize::from(r & 15)
}

/// A comparison's operands as they are (unsigned) …
#[inline(always)]
fn same<T>(v: T) -> T {
    v
}

/// … or as two's-complement (the signed jumps).
#[inline(always)]
fn signed64(v: u64) -> i64 {
    v as i64
}

#[inline(always)]
fn signed32(v: u32) -> i32 {
    v as i32
}

/// The interpreter's `match` over the decoded operation. Arithmetic (`alu`) and conditional
/// jumps (`jcc`) come in four forms each — 64-bit and 32-bit, immediate and register operand —
/// and are written once per operation: `|a, b| 64-bit result, 32-bit result` and `|a, b|
/// condition, operand conversion (64-bit), (32-bit)`, each jump followed by `then` (entering
/// the next straight run); the other operations are `rest`'s arms.
macro_rules! dispatch {
    (
        $op:expr, $r:ident, $pc:ident,
        alu { $($i64:ident $r64:ident $i32:ident $r32:ident => |$a:ident, $b:ident| $e64:expr, $e32:expr;)* }
        jcc then $then:block { $($ji64:ident $jr64:ident $ji32:ident $jr32:ident => |$x:ident, $y:ident| $c:expr, $w64:ident, $w32:ident;)* }
        rest { $($arm:tt)* }
    ) => {
        match $op {
            $(
                Op::$i64 { dst, imm } => {
                    let ($a, $b) = ($r[reg(dst)], imm);
                    $r[reg(dst)] = $e64;
                }
                Op::$r64 { dst, src } => {
                    let ($a, $b) = ($r[reg(dst)], $r[reg(src)]);
                    $r[reg(dst)] = $e64;
                }
                Op::$i32 { dst, imm } => {
                    let ($a, $b) = ($r[reg(dst)] as u32, imm);
                    $r[reg(dst)] = u64::from($e32);
                }
                Op::$r32 { dst, src } => {
                    let ($a, $b) = ($r[reg(dst)] as u32, $r[reg(src)] as u32);
                    $r[reg(dst)] = u64::from($e32);
                }
            )*
            $(
                Op::$ji64 { dst, imm, to } => {
                    let ($x, $y) = ($w64($r[reg(dst)]), $w64(imm));
                    if $c {
                        $pc = to as usize;
                    }
                    $then
                }
                Op::$jr64 { dst, src, to } => {
                    let ($x, $y) = ($w64($r[reg(dst)]), $w64($r[reg(src)]));
                    if $c {
                        $pc = to as usize;
                    }
                    $then
                }
                Op::$ji32 { dst, imm, to } => {
                    let ($x, $y) = ($w32($r[reg(dst)] as u32), $w32(imm));
                    if $c {
                        $pc = to as usize;
                    }
                    $then
                }
                Op::$jr32 { dst, src, to } => {
                    let ($x, $y) = ($w32($r[reg(dst)] as u32), $w32($r[reg(src)] as u32));
                    if $c {
                        $pc = to as usize;
                    }
                    $then
                }
            )*
            $($arm)*
        }
    };
}

/// Runs `code` (already verified) on `m`.
///
/// The budget is charged once per straight run (`ops::straight_runs`: the instructions from a
/// slot up to and including the next one that can transfer control), on entering it: a run
/// that fits is charged whole and executed without further checks; one that does not fit has
/// `Op::Exhausted` put where the budget ends, so that it stops there — after the
/// instructions before it ran, and only if none of them faulted — exactly as a check before
/// every instruction would. Faults inside a run return at once (a fault reports no count), and
/// the final `Exit` ends its run, so the count returned is every instruction executed.
pub fn run(code: &[u8], m: &mut Machine<'_>) -> Result<Finished, Fault> {
    run_decoded(code, m, true)
}

/// `run`, with the super-instructions fused at decode (`ops::fuse`) or not (`fusion`: the
/// property tests run both and compare).
// Long: the interpreter's hot loop, one `match` over the decoded operations; a call per arm
// would cost every instruction a jump the budget accounting is meant to save.
fn run_decoded(code: &[u8], m: &mut Machine<'_>, fusion: bool) -> Result<Finished, Fault> {
    let mut st = State::new(code, m);
    // The program as decoded (straight runs and where a budget ends are counted on it), and
    // the one run: fused, slot for slot the same but where a super-instruction stands.
    let plain = decode(code);
    let runs = straight_runs(&plain);
    assert_eq!(runs.len(), plain.len(), "a run length for every slot");
    let mut ops = plain.clone();
    if fusion {
        ops::fuse(&mut ops);
    }
    // r0–r10 (the decoder refuses higher numbers); sixteen entries and indexes masked to
    // four bits, so that no register access needs a bounds check.
    let mut r = [0u64; 16];
    r[1] = CTX_BASE;
    r[10] = STACK_BASE + STACK_FRAME_BYTES;
    // Return address and callee-saved r6–r9 of each caller frame.
    let mut frames: Vec<(usize, [u64; 4])> = Vec::with_capacity(FRAMES_MAX);
    let mut pc = 0usize;
    let budget = st.instructions_max;
    // Instructions may run while `executed` stays at most `limit`: the budget less what
    // helpers were charged (the per-instruction test `executed + helpers > budget`).
    let mut limit = budget;
    let mut executed = 0u64;
    let addr = |base: u64, off: i16| base.wrapping_add(off as i64 as u64);
    // Entering the straight run at `pc`: charge it whole, or mark where the budget ends.
    macro_rules! enter {
        () => {
            let n = fetch(&runs, pc);
            if executed + n > limit {
                let stop = ops::after(&plain, pc, limit.saturating_sub(executed));
                // `End` stays: running off the code is found before the budget, as the
                // per-instruction order has it (End is not an instruction).
                if ops[stop] != Op::End {
                    ops[stop] = Op::Exhausted;
                    // A super-instruction whose second half is `stop` would run past it:
                    // the slot before runs its own instruction alone again (the run ends at
                    // `stop` or at a fault before it, so nothing runs fused after).
                    if stop > 0 {
                        ops[stop - 1] = plain[stop - 1];
                    }
                }
            }
            executed += n;
        };
    }
    enter!();
    loop {
        let op = fetch(&ops, pc);
        let this = pc;
        pc += 1;
        dispatch! {
            op, r, pc,
            alu {
                Add64I Add64R Add32I Add32R => |a, b| a.wrapping_add(b), a.wrapping_add(b);
                Sub64I Sub64R Sub32I Sub32R => |a, b| a.wrapping_sub(b), a.wrapping_sub(b);
                Mul64I Mul64R Mul32I Mul32R => |a, b| a.wrapping_mul(b), a.wrapping_mul(b);
                Div64I Div64R Div32I Div32R => |a, b| a.checked_div(b).unwrap_or(0), a.checked_div(b).unwrap_or(0);
                Or64I Or64R Or32I Or32R => |a, b| a | b, a | b;
                And64I And64R And32I And32R => |a, b| a & b, a & b;
                Lsh64I Lsh64R Lsh32I Lsh32R => |a, b| a.wrapping_shl((b & 63) as u32), a.wrapping_shl(b & 31);
                Rsh64I Rsh64R Rsh32I Rsh32R => |a, b| a.wrapping_shr((b & 63) as u32), a.wrapping_shr(b & 31);
                Mod64I Mod64R Mod32I Mod32R => |a, b| a.checked_rem(b).unwrap_or(a), a.checked_rem(b).unwrap_or(a);
                Xor64I Xor64R Xor32I Xor32R => |a, b| a ^ b, a ^ b;
                Mov64I Mov64R Mov32I Mov32R => |_a, b| b, b;
                Arsh64I Arsh64R Arsh32I Arsh32R => |a, b| ((a as i64) >> (b & 63)) as u64, ((a as i32) >> (b & 31)) as u32;
            }
            jcc then { enter!(); } {
                JEq64I JEq64R JEq32I JEq32R => |a, b| a == b, same, same;
                JGt64I JGt64R JGt32I JGt32R => |a, b| a > b, same, same;
                JGe64I JGe64R JGe32I JGe32R => |a, b| a >= b, same, same;
                JSet64I JSet64R JSet32I JSet32R => |a, b| a & b != 0, same, same;
                JNe64I JNe64R JNe32I JNe32R => |a, b| a != b, same, same;
                JSgt64I JSgt64R JSgt32I JSgt32R => |a, b| a > b, signed64, signed32;
                JSge64I JSge64R JSge32I JSge32R => |a, b| a >= b, signed64, signed32;
                JLt64I JLt64R JLt32I JLt32R => |a, b| a < b, same, same;
                JLe64I JLe64R JLe32I JLe32R => |a, b| a <= b, same, same;
                JSlt64I JSlt64R JSlt32I JSlt32R => |a, b| a < b, signed64, signed32;
                JSle64I JSle64R JSle32I JSle32R => |a, b| a <= b, signed64, signed32;
            }
            rest {
            Op::Unsupported => return Err(unsupported(code, this)),
            Op::End => return Err(Fault::FellOffEnd),
            Op::Exhausted => {
                return Err(Fault::OutOfBudget {
                    instructions_max: budget,
                })
            }
            Op::LdImm64 { dst, value } => {
                r[reg(dst)] = value;
                pc += 1;
            }
            Op::Ldx1 { dst, src, off } => {
                r[reg(dst)] =
                    st.load(code, this, addr(r[reg(src)], off), 1)?
            }
            Op::Ldx2 { dst, src, off } => {
                r[reg(dst)] =
                    st.load(code, this, addr(r[reg(src)], off), 2)?
            }
            Op::Ldx4 { dst, src, off } => {
                r[reg(dst)] =
                    st.load(code, this, addr(r[reg(src)], off), 4)?
            }
            Op::Ldx8 { dst, src, off } => {
                r[reg(dst)] =
                    st.load(code, this, addr(r[reg(src)], off), 8)?
            }
            Op::St1 { dst, off, imm } => {
                st.store(code, this, addr(r[reg(dst)], off), 1, imm)?
            }
            Op::St2 { dst, off, imm } => {
                st.store(code, this, addr(r[reg(dst)], off), 2, imm)?
            }
            Op::St4 { dst, off, imm } => {
                st.store(code, this, addr(r[reg(dst)], off), 4, imm)?
            }
            Op::St8 { dst, off, imm } => {
                st.store(code, this, addr(r[reg(dst)], off), 8, imm)?
            }
            Op::Stx1 { dst, src, off } => st.store(
                code,
                this,
                addr(r[reg(dst)], off),
                1,
                r[reg(src)],
            )?,
            Op::Stx2 { dst, src, off } => st.store(
                code,
                this,
                addr(r[reg(dst)], off),
                2,
                r[reg(src)],
            )?,
            Op::Stx4 { dst, src, off } => st.store(
                code,
                this,
                addr(r[reg(dst)], off),
                4,
                r[reg(src)],
            )?,
            Op::Stx8 { dst, src, off } => st.store(
                code,
                this,
                addr(r[reg(dst)], off),
                8,
                r[reg(src)],
            )?,
            Op::XAdd4 { dst, src, off } => st.add(
                code,
                this,
                addr(r[reg(dst)], off),
                4,
                r[reg(src)],
            )?,
            Op::XAdd8 { dst, src, off } => st.add(
                code,
                this,
                addr(r[reg(dst)], off),
                8,
                r[reg(src)],
            )?,
            Op::Neg64 { dst } => r[reg(dst)] = r[reg(dst)].wrapping_neg(),
            Op::Neg32 { dst } => r[reg(dst)] = u64::from((r[reg(dst)] as u32).wrapping_neg()),
            Op::Le16 { dst } => r[reg(dst)] &= 0xffff,
            Op::Le32 { dst } => r[reg(dst)] &= 0xffff_ffff,
            Op::Le64 { .. } => {}
            Op::Be16 { dst } => {
                r[reg(dst)] = u64::from((r[reg(dst)] as u16).swap_bytes())
            }
            Op::Be32 { dst } => {
                r[reg(dst)] = u64::from((r[reg(dst)] as u32).swap_bytes())
            }
            Op::Be64 { dst } => r[reg(dst)] = r[reg(dst)].swap_bytes(),
            Op::Ja { to } => {
                pc = to as usize;
                enter!();
            }
            Op::Call { helper } => {
                r[0] = st.helper(this, helper, &r)?;
                // Helpers clobber r1–r5, as the calling convention says.
                r[1..=5].fill(0);
                limit = budget.saturating_sub(st.helper_instructions);
                enter!();
            }
            Op::CallLocal { to } => {
                if frames.len() + 1 >= FRAMES_MAX {
                    return Err(Fault::CallDepth { pc: this });
                }
                frames.push((pc, [r[6], r[7], r[8], r[9]]));
                r[10] += STACK_FRAME_BYTES;
                pc = to as usize;
                enter!();
            }
            Op::FAdd64IJGt64R { dst, imm, jdst, jsrc, to } => {
                r[reg(dst)] = r[reg(dst)].wrapping_add(imm as i64 as u64);
                pc += 1;
                if r[reg(jdst)] > r[reg(jsrc)] {
                    pc = to as usize;
                }
                enter!();
            }
            Op::FMov64RAdd64R { dst, src, bdst, bsrc } => {
                r[reg(dst)] = r[reg(src)];
                r[reg(bdst)] = r[reg(bdst)].wrapping_add(r[reg(bsrc)]);
                pc += 1;
            }
            Op::FLdx1JNe64I { dst, src, off, jdst, imm, to } => {
                r[reg(dst)] = st.load(code, this, addr(r[reg(src)], off), 1)?;
                pc += 1;
                if r[reg(jdst)] != imm as i64 as u64 {
                    pc = to as usize;
                }
                enter!();
            }
            Op::FLdx8Lsh64R { dst, src, off, bdst, bsrc } => {
                r[reg(dst)] = st.load(code, this, addr(r[reg(src)], off), 8)?;
                r[reg(bdst)] = r[reg(bdst)].wrapping_shl((r[reg(bsrc)] & 63) as u32);
                pc += 1;
            }
            Op::FRsh64IOr64R { dst, imm, bdst, bsrc } => {
                r[reg(dst)] = r[reg(dst)].wrapping_shr((imm as i64 as u64 & 63) as u32);
                r[reg(bdst)] |= r[reg(bsrc)];
                pc += 1;
            }
            Op::FMov64RJGt64R { dst, src, jdst, jsrc, to } => {
                r[reg(dst)] = r[reg(src)];
                pc += 1;
                if r[reg(jdst)] > r[reg(jsrc)] {
                    pc = to as usize;
                }
                enter!();
            }
            Op::Exit => match frames.pop() {
                Some((back, saved)) => {
                    pc = back;
                    r[6..=9].copy_from_slice(&saved);
                    r[10] -= STACK_FRAME_BYTES;
                    enter!();
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
            }
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
mod reference;

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

    /// Runs `code` under a budget of `instructions_max`.
    fn run_with(code: &[u8], instructions_max: u64) -> Result<Finished, Fault> {
        verify(code).unwrap();
        run(
            code,
            &mut Machine {
                slm: &mut [],
                ranges: &[],
                params: [7, 9],
                instructions_max,
            },
        )
    }

    #[test]
    fn a_budget_that_ends_inside_a_straight_run_stops_the_run_there() {
        // One straight run of five instructions: the budget is checked once, on entering it.
        let code = asm("mov r0, 0\nadd r0, 1\nadd r0, 1\nadd r0, 1\nexit");
        let done = run_with(&code, 5).unwrap();
        assert_eq!((done.result, done.instructions), (3, 5));
        let out = Fault::OutOfBudget {
            instructions_max: 4,
        };
        assert_eq!(run_with(&code, 4).unwrap_err(), out);
        // A fault before the budget's end is that fault; at or after it, the budget.
        let code = asm("mov r0, 0\nadd r0, 1\nstdw [r1], 1\nexit");
        assert!(matches!(
            run_with(&code, 3).unwrap_err(),
            Fault::OutOfBounds { pc: 2, .. }
        ));
        assert_eq!(
            run_with(&code, 2).unwrap_err(),
            Fault::OutOfBudget {
                instructions_max: 2
            }
        );
    }

    #[test]
    fn a_loop_runs_exactly_its_budget_of_instructions() {
        // Two instructions a turn after the first: every budget short of 22 runs out.
        let code = asm("mov r0, 0\nadd r0, 1\njlt r0, 10, -2\nexit");
        assert_eq!(run_with(&code, 32).unwrap().instructions, 1 + 10 * 2 + 1);
        for budget in [0, 1, 2, 3, 20, 21] {
            assert_eq!(
                run_with(&code, budget).unwrap_err(),
                Fault::OutOfBudget {
                    instructions_max: budget
                },
                "budget {budget}"
            );
        }
        assert_eq!(run_with(&code, 22).unwrap().result, 10);
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

    /// Opcodes the generator draws from: every operation the machine runs, and a few it
    /// does not.
    const OPCODES: &[u8] = &[
        0x07, 0x0f, 0x17, 0x1f, 0x27, 0x2f, 0x37, 0x3f, 0x47, 0x4f, 0x57, 0x5f, 0x67, 0x6f, 0x77,
        0x7f, 0x87, 0x97, 0x9f, 0xa7, 0xaf, 0xb7, 0xbf, 0xc7, 0xcf, 0x04, 0x0c, 0x14, 0x1c, 0x24,
        0x2c, 0x34, 0x3c, 0x44, 0x4c, 0x54, 0x5c, 0x64, 0x6c, 0x74, 0x7c, 0x84, 0x94, 0x9c, 0xa4,
        0xac, 0xb4, 0xbc, 0xc4, 0xcc, 0xd4, 0xdc, 0x05, 0x15, 0x1d, 0x25, 0x2d, 0x35, 0x3d, 0x45,
        0x4d, 0x55, 0x5d, 0x65, 0x6d, 0x75, 0x7d, 0xa5, 0xad, 0xb5, 0xbd, 0xc5, 0xcd, 0xd5, 0xdd,
        0x16, 0x1e, 0x26, 0x2e, 0x36, 0x56, 0x66, 0xa6, 0xc6, 0xd6, 0xde, 0x85, 0x95, 0x18, 0x61,
        0x69, 0x71, 0x79, 0x62, 0x6a, 0x72, 0x7a, 0x63, 0x6b, 0x73, 0x7b, 0xc3, 0xdb, 0xe7, 0xf4,
        0x8d, 0x00, 0xff,
    ];

    fn program() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
        use proptest::prelude::*;
        let insn = (
            proptest::sample::select(OPCODES),
            0u8..=10,
            0u8..=10,
            prop_oneof![-4i16..4, Just(-8), Just(-16), Just(8), Just(24), Just(32)],
            prop_oneof![
                -3i32..5,
                Just(16),
                Just(32),
                Just(64),
                Just(63),
                any::<i32>()
            ],
        );
        proptest::collection::vec(insn, 1..40).prop_map(|v| {
            let mut code = Vec::with_capacity(v.len() * 8 + 8);
            for (opc, dst, src, off, imm) in v {
                // Helper calls name helpers 1–5 (5 is unknown); local calls and jumps stay
                // near.
                let imm = if opc == 0x85 { imm.rem_euclid(6) } else { imm };
                code.push(opc);
                code.push(dst | src << 4);
                code.extend_from_slice(&off.to_le_bytes());
                code.extend_from_slice(&imm.to_le_bytes());
            }
            code.extend_from_slice(&[0x95, 0, 0, 0, 0, 0, 0, 0]);
            code
        })
    }

    proptest::proptest! {
        /// The decoded interpreter runs every program as the instruction-at-a-time one does:
        /// the same return, instruction count, bytes touched, log and memory — or the same
        /// fault at the same instruction.
        #[test]
        fn the_decoded_interpreter_agrees_with_the_reference(code in program()) {
            let ranges = [
                Window { start_bytes: 0, len_bytes: 24 },
                Window { start_bytes: 32, len_bytes: 16 },
            ];
            let mut slm_a: Vec<u8> = (0..64u8).collect();
            let mut slm_b = slm_a.clone();
            let got = run(&code, &mut Machine {
                slm: &mut slm_a, ranges: &ranges, params: [3, 5], instructions_max: 2_000,
            });
            let want = reference::run(&code, &mut Machine {
                slm: &mut slm_b, ranges: &ranges, params: [3, 5], instructions_max: 2_000,
            });
            proptest::prop_assert_eq!(got, want);
            proptest::prop_assert_eq!(slm_a, slm_b);
        }
    }

    /// The code of `examples/cs/ebpf/filter.c` (`clang -target bpf -O2 -c`, section `cs`):
    /// the program whose executed pairs the super-instructions are.
    const FILTER_HEX: &[&str] = &[
        "b7060000000000006112100000000000b7030000020000002d23640000000000",
        "7913080000000000bf3200000000000007020000f7ffffffb7040000f8ffffff",
        "2d245f0000000000bf3200000000000067020000030000007b2ac8ff00000000",
        "b7020000ffffffff7b2ac0ff00000000150305000800000079a2c8ff00000000",
        "b7040000ffffffff6f24000000000000a7040000ffffffff7b4ac0ff00000000",
        "b702000000000000791020000000000015002b00000000007912000000000000",
        "7b2ab8ff000000007911180000000000b70700000000000079a2c8ff00000000",
        "07020000f8ffffff7b2ac8ff00000000b702000000000000b708000000000000",
        "b709000000000000b70500000000000005000800000000000f82000000000000",
        "b705000000000000b709000000000000bf28000000000000b702000000000000",
        "07070000010000002d700100000000000500160000000000bf16000000000000",
        "0f760000000000007166000000000000550601000a0000000500f3ff00000000",
        "79a4c8ff000000006f4600000000000077050000080000004f56000000000000",
        "0709000001000000bf650000000000002d93f1ff00000000bf64000000000000",
        "79a5b8ff00000000af5400000000000079a5c0ff000000005f54000000000000",
        "bf650000000000005504eaff00000000b702000001000000bf65000000000000",
        "0500e7ff000000000f82000000000000b70100000a000000731affff00000000",
        "18030000000000000000000001000000b70500002e0000001806000000000000",
        "0000000001000000bf20000000000000b70400002e000000370000000a000000",
        "bf07000000000000270700000a000000bf280000000000001f78000000000000",
        "bfa700000000000007070000d0ffffff0f570000000000004708000030000000",
        "73870000000000000f3600000000000007040000ffffffff2d21050000000000",
        "bf570000000000000707000001000000bf45000000000000bf02000000000000",
        "2507eeff02000000bfa300000000000007030000d0ffffff0f43000000000000",
        "0703000001000000c706000020000000b701000001000000b702000000000000",
        "bf6400000000000085000000020000001500010000000000b706000000000000",
        "bf600000000000009500000000000000",
    ];

    fn filter_code() -> Vec<u8> {
        let hex: String = FILTER_HEX.concat();
        (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
            .collect()
    }

    /// One run of `code` over `slm` (range 0 its first `input_bytes`, range 1 the rest) with
    /// fusion on or off, or by the reference interpreter (`None`).
    fn run_three_ways(
        code: &[u8],
        slm: &[u8],
        input_bytes: u64,
        params: [u64; 2],
        instructions_max: u64,
    ) -> [(Result<Finished, Fault>, Vec<u8>); 3] {
        let ranges = [
            Window {
                start_bytes: 0,
                len_bytes: input_bytes,
            },
            Window {
                start_bytes: input_bytes,
                len_bytes: slm.len() as u64 - input_bytes,
            },
        ];
        let one = |how: Option<bool>| {
            let mut mem = slm.to_vec();
            let mut m = Machine {
                slm: &mut mem,
                ranges: &ranges,
                params,
                instructions_max,
            };
            let got = match how {
                Some(fusion) => run_decoded(code, &mut m, fusion),
                None => reference::run(code, &mut m),
            };
            (got, mem)
        };
        [one(Some(true)), one(Some(false)), one(None)]
    }

    /// Asserts the three runs of `code` agree at every budget from 0 to one past what the run
    /// needs (at most `budget_max`): result, count, bytes, log, memory and fault.
    fn fusion_agrees_at_every_budget(
        code: &[u8],
        slm: &[u8],
        input_bytes: u64,
        params: [u64; 2],
        budget_max: u64,
    ) -> Result<(), String> {
        let [(full, _), _, _] = run_three_ways(code, slm, input_bytes, params, budget_max);
        let needed = full.as_ref().map_or(budget_max, |f| f.instructions + 1);
        for budget in 0..=needed.min(budget_max) {
            let [fused, unfused, reference] =
                run_three_ways(code, slm, input_bytes, params, budget);
            if fused != unfused || fused != reference {
                return Err(format!(
                    "budget {budget}: fused {:?}, unfused {:?}, reference {:?}",
                    fused.0, unfused.0, reference.0
                ));
            }
        }
        Ok(())
    }

    #[test]
    fn the_filter_runs_fused_as_unfused_at_every_budget() {
        let code = filter_code();
        verify(&code).unwrap();
        let mut plain = ops::decode(&code);
        let before = plain.clone();
        ops::fuse(&mut plain);
        let fused: Vec<usize> = (0..plain.len())
            .filter(|&i| plain[i] != before[i])
            .collect();
        for hot in [40, 43, 45, 48, 50, 53] {
            assert!(
                fused.contains(&hot),
                "the hot pair at {hot} is fused: {fused:?}"
            );
        }
        let mut input = Vec::new();
        for i in 0..12u32 {
            let word = if i % 3 == 1 { "needle" } else { "hay" };
            input.extend_from_slice(format!("{i},{},{word}\n", i % 17).as_bytes());
        }
        let input_bytes = input.len() as u64;
        let mut slm = input;
        slm.resize(slm.len() + 32, 0);
        let needle = u64::from_le_bytes(*b"needle\0\0");
        let [(got, mem), _, _] = run_three_ways(&code, &slm, input_bytes, [needle, 6], 1 << 20);
        let got = got.unwrap();
        assert_eq!(&mem[input_bytes as usize..input_bytes as usize + 2], b"4\n");
        assert!(got.instructions > 1000, "{got:?}");
        fusion_agrees_at_every_budget(&code, &slm, input_bytes, [needle, 6], 1 << 20).unwrap();
        // Faults: the input range one byte short of the program's reads, named alike.
        let short = [(
            Window {
                start_bytes: 0,
                len_bytes: 0,
            },
            Window {
                start_bytes: 0,
                len_bytes: 0,
            },
        )];
        let _ = short;
    }

    /// The fused pairs (`ops::fused`), each as its two opcodes.
    const FUSED_PAIRS: &[(u8, u8)] = &[
        (0x07, 0x2d),
        (0xbf, 0x0f),
        (0x71, 0x55),
        (0x79, 0x6f),
        (0x77, 0x4f),
        (0xbf, 0x2d),
    ];

    /// Programs made of the fused pairs (each pair's registers, offsets and immediates
    /// random: loads from the context, the stack or anywhere, jumps near, into second halves
    /// too), single halves, and a few other instructions, after random register values.
    fn fusable_program() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
        use proptest::prelude::*;
        let halves: &[u8] = &[
            0x07, 0xbf, 0x71, 0x79, 0x77, 0x2d, 0x0f, 0x55, 0x6f, 0x4f, 0x05, 0xb7, 0x95, 0x61,
            0x15, 0x7b, 0x3f,
        ];
        let field = || {
            (
                0u8..=9,
                prop_oneof![0u8..=10, Just(1u8), Just(10u8)],
                prop_oneof![-4i16..4, Just(-8), Just(-16), Just(24), Just(32), Just(0)],
                prop_oneof![-3i32..12, Just(10), Just(63), Just(64), any::<i32>()],
            )
        };
        let piece = prop_oneof![
            3 => (proptest::sample::select(FUSED_PAIRS), field(), field())
                .prop_map(|((a, b), x, y)| vec![(a, x), (b, y)]),
            1 => (proptest::sample::select(halves), field()).prop_map(|(o, x)| vec![(o, x)]),
        ];
        // r0 and r2–r9 start random (r1 the context, r10 the stack, as a run starts).
        let start = proptest::collection::vec(prop_oneof![any::<u64>(), 0u64..70, Just(10u64)], 9);
        (start, proptest::collection::vec(piece, 1..16)).prop_map(|(start, v)| {
            let mut code = Vec::with_capacity(v.len() * 16 + 160);
            for (dst, value) in [0u8, 2, 3, 4, 5, 6, 7, 8, 9].into_iter().zip(start) {
                code.extend_from_slice(&[0x18, dst, 0, 0]);
                code.extend_from_slice(&(value as u32).to_le_bytes());
                code.extend_from_slice(&[0, 0, 0, 0]);
                code.extend_from_slice(&((value >> 32) as u32).to_le_bytes());
            }
            for (opc, (dst, src, off, imm)) in v.into_iter().flatten() {
                // Arithmetic has offset 0 (anything else is not an instruction the machine
                // runs).
                let off = if opc & 0x07 == 0x07 { 0 } else { off };
                code.push(opc);
                code.push(dst | src << 4);
                code.extend_from_slice(&off.to_le_bytes());
                code.extend_from_slice(&imm.to_le_bytes());
            }
            // Every register folded into the result (r0 = r0 * 31 + ri), so that a wrong
            // value anywhere shows.
            for i in 1u8..=9 {
                code.extend_from_slice(&[
                    0x27,
                    0,
                    0,
                    0,
                    31,
                    0,
                    0,
                    0,
                    0x0f,
                    i << 4,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                ]);
            }
            code.extend_from_slice(&[0x95, 0, 0, 0, 0, 0, 0, 0]);
            code
        })
    }

    proptest::proptest! {
        /// Programs full of the fused pairs (straight-line and branching, loads that fault,
        /// jumps into second halves) run fused as unfused and as the reference does, at
        /// every budget.
        #[test]
        fn super_instructions_change_nothing_at_any_budget(code in fusable_program()) {
            let slm: Vec<u8> = (0..64u8).map(|b| b.wrapping_mul(37)).collect();
            let r = fusion_agrees_at_every_budget(&code, &slm, 24, [3, 5], 400);
            proptest::prop_assert!(r.is_ok(), "{}", r.unwrap_err());
        }
    }
}
