//! The WASI preview 1 subset nearflash provides (`wasi_snapshot_preview1`), deterministic:
//! fd 0 is the bound file's bytes as the device streams them, fd 1 the output, fd 2 a bounded
//! diagnostics log; `args_*` give argv[0] = the module's file name, then each argument;
//! `environ_*` are empty; `clock_time_get` answers simulated time; `random_get` draws from the
//! run's seed; `proc_exit` ends the run with its code; and the calls wasi-libc makes at start-up
//! answer as for a process with no preopened directories (`fd_prestat_get` → EBADF,
//! `fd_seek` → ESPIPE, `fd_fdstat_get` describes the three character devices).
//!
//! Tolerates any pointer and length a guest passes: out-of-range memory is `EFAULT`, never a
//! host panic; every call is charged fuel for its work (`cost::HOST_CALL_FUEL` = 100 per call,
//! plus 4 per iovec and 1 per 8 bytes moved; `random_get` 11 per 8 bytes generated), so that
//! a loop of calls burns the default fuel within seconds, like a loop of instructions. `fd_read` with its chunk used up and more input to
//! come stops the run (`Stop::NeedInput`), which `run::Run` resumes when the device has read
//! the next chunk.

use crate::cost::{host_call_fuel, iovec_call_fuel, random_fuel};
use crate::limits::Limits;
use rand::RngCore;
use rand_xoshiro::rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use wasmi::ResourceLimiter;
use wasmi::{Caller, Extern, Linker, ValType};
use wasmi_core::LimiterError;

/// The module every import must come from.
pub const WASI_MODULE: &str = "wasi_snapshot_preview1";

const I32: ValType = ValType::I32;
const I64: ValType = ValType::I64;

/// Every function of the subset: name, parameters, results.
pub const WASI_FUNCTIONS: &[(&str, &[ValType], &[ValType])] = &[
    ("fd_read", &[I32, I32, I32, I32], &[I32]),
    ("fd_write", &[I32, I32, I32, I32], &[I32]),
    ("args_get", &[I32, I32], &[I32]),
    ("args_sizes_get", &[I32, I32], &[I32]),
    ("environ_get", &[I32, I32], &[I32]),
    ("environ_sizes_get", &[I32, I32], &[I32]),
    ("clock_time_get", &[I32, I64, I32], &[I32]),
    ("random_get", &[I32, I32], &[I32]),
    ("proc_exit", &[I32], &[]),
    ("fd_fdstat_get", &[I32, I32], &[I32]),
    ("fd_prestat_get", &[I32, I32], &[I32]),
    ("fd_prestat_dir_name", &[I32, I32, I32], &[I32]),
    ("fd_close", &[I32], &[I32]),
    ("fd_seek", &[I32, I64, I32, I32], &[I32]),
];

/// WASI errno values (preview 1 `errno`).
pub const ERRNO_SUCCESS: i32 = 0;
pub const ERRNO_BADF: i32 = 8;
pub const ERRNO_FAULT: i32 = 21;
pub const ERRNO_INVAL: i32 = 28;
pub const ERRNO_SPIPE: i32 = 70;

/// Why a WASI call stopped the guest (a wasmi host error).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// fd 0's chunk is used up and more input is coming.
    NeedInput,
    /// `proc_exit(code)`.
    Exit(i32),
    /// fd 1 passed the output allowance.
    OutputLimit,
    /// A call's fuel exceeded what was left.
    OutOfFuel,
    /// The module exports no `memory` (checked at load; kept for completeness of the match).
    NoMemory,
}

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{self:?}")
    }
}

impl wasmi::errors::HostError for Stop {}

/// fd_read arguments kept while the run waits for input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PendingRead {
    pub iovs: u32,
    pub iovs_len: u32,
    pub nread_ptr: u32,
}

/// Linear-memory growth limit: growing past it traps, and the limiter records that it refused
/// so that the trap is reported as a memory-limit hit.
#[derive(Debug)]
pub struct MemoryLimiter {
    pub memory_bytes_max: u64,
    pub hit: bool,
}

/// Table elements any module may have (function-pointer tables of C programs are small).
pub const TABLE_ELEMENTS_MAX: usize = 1 << 16;

impl ResourceLimiter for MemoryLimiter {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> Result<bool, LimiterError> {
        if desired as u64 > self.memory_bytes_max {
            // A trap, not -1 from memory.grow: hitting the limit is the run's typed error.
            self.hit = true;
            return Err(LimiterError::ResourceLimiterDeniedAllocation);
        }
        Ok(maximum.is_none_or(|m| desired <= m))
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> Result<bool, LimiterError> {
        Ok(desired <= TABLE_ELEMENTS_MAX && maximum.is_none_or(|m| desired <= m))
    }

    fn instances(&self) -> usize {
        1
    }

    fn tables(&self) -> usize {
        1
    }

    fn memories(&self) -> usize {
        1
    }
}

/// What one run's WASI calls see and change.
#[derive(Debug)]
pub struct WasiState {
    /// argv, without the terminating NULs.
    pub args: Vec<Vec<u8>>,
    /// The chunk being read and how far.
    pub input: Vec<u8>,
    pub input_at: usize,
    /// No chunk follows this one.
    pub input_last: bool,
    /// Input bytes the program read so far.
    pub input_read_bytes: u64,
    /// Output not yet taken by the caller.
    pub output: Vec<u8>,
    pub output_bytes: u64,
    pub diagnostics: Vec<u8>,
    pub diagnostics_dropped_bytes: u64,
    pub now_ns: u64,
    pub rng: Xoshiro256PlusPlus,
    pub limits: Limits,
    pub limiter: MemoryLimiter,
    pub pending_read: Option<PendingRead>,
}

impl WasiState {
    pub fn new(args: Vec<Vec<u8>>, seed: u64, limits: Limits) -> WasiState {
        WasiState {
            args,
            input: Vec::new(),
            input_at: 0,
            input_last: false,
            input_read_bytes: 0,
            output: Vec::new(),
            output_bytes: 0,
            diagnostics: Vec::new(),
            diagnostics_dropped_bytes: 0,
            now_ns: 0,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            limits,
            limiter: MemoryLimiter {
                memory_bytes_max: limits.memory_bytes_max(),
                hit: false,
            },
            pending_read: None,
        }
    }

    fn input_left(&self) -> usize {
        self.input.len() - self.input_at
    }
}

type Res<T> = Result<T, wasmi::Error>;

fn stop(s: Stop) -> wasmi::Error {
    wasmi::Error::host(s)
}

/// Charges `fuel` to the guest; a shortfall ends the run as out of fuel.
fn charge(caller: &mut Caller<'_, WasiState>, fuel: u64) -> Res<()> {
    let left = caller.get_fuel().expect("fuel metering is on");
    if left < fuel {
        caller.set_fuel(0).expect("fuel metering is on");
        return Err(stop(Stop::OutOfFuel));
    }
    caller.set_fuel(left - fuel).expect("fuel metering is on");
    Ok(())
}

fn memory_of<'a>(caller: &'a mut Caller<'_, WasiState>) -> Res<(&'a mut [u8], &'a mut WasiState)> {
    let mem = caller
        .get_export("memory")
        .and_then(Extern::into_memory)
        .ok_or_else(|| stop(Stop::NoMemory))?;
    Ok(mem.data_and_store_mut(caller))
}

/// A guest range, or `None` when it leaves memory.
fn range(mem: &[u8], ptr: u32, len: u64) -> Option<std::ops::Range<usize>> {
    let start = ptr as usize;
    let end = (ptr as u64).checked_add(len)?;
    (end <= mem.len() as u64).then_some(start..end as usize)
}

fn get_u32(mem: &[u8], ptr: u32) -> Option<u32> {
    let r = range(mem, ptr, 4)?;
    Some(u32::from_le_bytes(mem[r].try_into().expect("4 bytes")))
}

fn put(mem: &mut [u8], ptr: u32, bytes: &[u8]) -> Option<()> {
    let r = range(mem, ptr, bytes.len() as u64)?;
    mem[r].copy_from_slice(bytes);
    Some(())
}

/// The iovec array, checked to lie in memory (which bounds its length).
fn iovecs(mem: &[u8], iovs: u32, iovs_len: u32) -> Option<Vec<(u32, u32)>> {
    range(mem, iovs, u64::from(iovs_len) * 8)?;
    (0..iovs_len)
        .map(|i| {
            let at = iovs + i * 8;
            Some((get_u32(mem, at)?, get_u32(mem, at + 4)?))
        })
        .collect()
}

/// Copies input into the guest's iovecs: (errno, bytes moved).
pub fn read_input(mem: &mut [u8], st: &mut WasiState, p: PendingRead) -> (i32, u64) {
    let Some(iovs) = iovecs(mem, p.iovs, p.iovs_len) else {
        return (ERRNO_FAULT, 0);
    };
    let mut n: u64 = 0;
    for (ptr, len) in iovs {
        let take = (len as usize).min(st.input_left());
        let Some(r) = range(mem, ptr, take as u64) else {
            return (ERRNO_FAULT, n);
        };
        mem[r].copy_from_slice(&st.input[st.input_at..st.input_at + take]);
        st.input_at += take;
        n += take as u64;
        if st.input_left() == 0 {
            break;
        }
    }
    st.input_read_bytes += n;
    assert!(st.input_at <= st.input.len(), "read within the chunk");
    match put(mem, p.nread_ptr, &(n as u32).to_le_bytes()) {
        Some(()) => (ERRNO_SUCCESS, n),
        None => (ERRNO_FAULT, n),
    }
}

fn fd_read(
    mut caller: Caller<'_, WasiState>,
    fd: i32,
    iovs: i32,
    iovs_len: i32,
    nread: i32,
) -> Res<i32> {
    if fd != 0 {
        charge(&mut caller, host_call_fuel(0))?;
        return Ok(ERRNO_BADF);
    }
    let p = PendingRead {
        iovs: iovs as u32,
        iovs_len: iovs_len as u32,
        nread_ptr: nread as u32,
    };
    let st = caller.data_mut();
    if st.input_left() == 0 && !st.input_last {
        st.pending_read = Some(p);
        return Err(stop(Stop::NeedInput));
    }
    let (mem, st) = memory_of(&mut caller)?;
    let (errno, n) = read_input(mem, st, p);
    charge(&mut caller, iovec_call_fuel(u64::from(p.iovs_len), n))?;
    Ok(errno)
}

fn fd_write(
    mut caller: Caller<'_, WasiState>,
    fd: i32,
    iovs: i32,
    iovs_len: i32,
    nwritten: i32,
) -> Res<i32> {
    if fd != 1 && fd != 2 {
        charge(&mut caller, host_call_fuel(0))?;
        return Ok(ERRNO_BADF);
    }
    let (mem, st) = memory_of(&mut caller)?;
    let Some(iovs) = iovecs(mem, iovs as u32, iovs_len as u32) else {
        charge(&mut caller, host_call_fuel(0))?;
        return Ok(ERRNO_FAULT);
    };
    let mut n: u64 = 0;
    let mut errno = ERRNO_SUCCESS;
    for &(ptr, len) in &iovs {
        let Some(r) = range(mem, ptr, u64::from(len)) else {
            errno = ERRNO_FAULT;
            break;
        };
        if fd == 1 {
            let allowed = st.limits.output_bytes_max(st.input_read_bytes);
            if st.output_bytes + u64::from(len) > allowed {
                return Err(stop(Stop::OutputLimit));
            }
            st.output.extend_from_slice(&mem[r]);
            st.output_bytes += u64::from(len);
        } else {
            let room =
                (st.limits.diagnostics_bytes_max as usize).saturating_sub(st.diagnostics.len());
            let keep = room.min(len as usize);
            st.diagnostics
                .extend_from_slice(&mem[r.start..r.start + keep]);
            st.diagnostics_dropped_bytes += u64::from(len) - keep as u64;
        }
        n += u64::from(len);
    }
    if errno == ERRNO_SUCCESS && put(mem, nwritten as u32, &(n as u32).to_le_bytes()).is_none() {
        errno = ERRNO_FAULT;
    }
    charge(&mut caller, iovec_call_fuel(iovs.len() as u64, n))?;
    Ok(errno)
}

fn args_sizes_get(mut caller: Caller<'_, WasiState>, argc_ptr: i32, size_ptr: i32) -> Res<i32> {
    charge(&mut caller, host_call_fuel(0))?;
    let (mem, st) = memory_of(&mut caller)?;
    let argc = st.args.len() as u32;
    let size: usize = st.args.iter().map(|a| a.len() + 1).sum();
    let ok = put(mem, argc_ptr as u32, &argc.to_le_bytes())
        .and_then(|()| put(mem, size_ptr as u32, &(size as u32).to_le_bytes()));
    Ok(ok.map_or(ERRNO_FAULT, |()| ERRNO_SUCCESS))
}

fn args_get(mut caller: Caller<'_, WasiState>, argv_ptr: i32, buf_ptr: i32) -> Res<i32> {
    let bytes: usize = caller.data().args.iter().map(|a| a.len() + 1).sum();
    charge(&mut caller, host_call_fuel(bytes as u64))?;
    let (mem, st) = memory_of(&mut caller)?;
    let mut at = buf_ptr as u32;
    for (i, a) in st.args.iter().enumerate() {
        let slot = (argv_ptr as u32).wrapping_add(4 * i as u32);
        let ok = put(mem, slot, &at.to_le_bytes())
            .and_then(|()| put(mem, at, a))
            .and_then(|()| put(mem, at.wrapping_add(a.len() as u32), &[0]));
        if ok.is_none() {
            return Ok(ERRNO_FAULT);
        }
        at = at.wrapping_add(a.len() as u32 + 1);
    }
    Ok(ERRNO_SUCCESS)
}

fn environ_sizes_get(mut caller: Caller<'_, WasiState>, count_ptr: i32, size_ptr: i32) -> Res<i32> {
    charge(&mut caller, host_call_fuel(0))?;
    let (mem, _) = memory_of(&mut caller)?;
    let ok = put(mem, count_ptr as u32, &0u32.to_le_bytes())
        .and_then(|()| put(mem, size_ptr as u32, &0u32.to_le_bytes()));
    Ok(ok.map_or(ERRNO_FAULT, |()| ERRNO_SUCCESS))
}

fn environ_get(mut caller: Caller<'_, WasiState>, _environ: i32, _buf: i32) -> Res<i32> {
    charge(&mut caller, host_call_fuel(0))?;
    Ok(ERRNO_SUCCESS)
}

/// Clock ids 0–3 (realtime, monotonic, process and thread CPU time) all read simulated time.
fn clock_time_get(
    mut caller: Caller<'_, WasiState>,
    id: i32,
    _precision: i64,
    time_ptr: i32,
) -> Res<i32> {
    charge(&mut caller, host_call_fuel(0))?;
    if !(0..=3).contains(&id) {
        return Ok(ERRNO_INVAL);
    }
    let (mem, st) = memory_of(&mut caller)?;
    Ok(put(mem, time_ptr as u32, &st.now_ns.to_le_bytes()).map_or(ERRNO_FAULT, |()| ERRNO_SUCCESS))
}

fn random_get(mut caller: Caller<'_, WasiState>, buf: i32, len: i32) -> Res<i32> {
    charge(&mut caller, random_fuel(u64::from(len as u32)))?;
    let (mem, st) = memory_of(&mut caller)?;
    match range(mem, buf as u32, u64::from(len as u32)) {
        Some(r) => {
            st.rng.fill_bytes(&mut mem[r]);
            Ok(ERRNO_SUCCESS)
        }
        None => Ok(ERRNO_FAULT),
    }
}

fn proc_exit(_caller: Caller<'_, WasiState>, code: i32) -> Res<()> {
    Err(stop(Stop::Exit(code)))
}

/// fdstat of the three character devices: filetype 2, no flags, read rights on fd 0
/// (`fd_read` = bit 1), write rights on fds 1 and 2 (`fd_write` = bit 6).
fn fd_fdstat_get(mut caller: Caller<'_, WasiState>, fd: i32, buf: i32) -> Res<i32> {
    charge(&mut caller, host_call_fuel(24))?;
    let rights: u64 = match fd {
        0 => 1 << 1,
        1 | 2 => 1 << 6,
        _ => return Ok(ERRNO_BADF),
    };
    let mut stat = [0u8; 24];
    stat[0] = 2;
    stat[8..16].copy_from_slice(&rights.to_le_bytes());
    let (mem, _) = memory_of(&mut caller)?;
    Ok(put(mem, buf as u32, &stat).map_or(ERRNO_FAULT, |()| ERRNO_SUCCESS))
}

fn fd_prestat_get(mut caller: Caller<'_, WasiState>, _fd: i32, _buf: i32) -> Res<i32> {
    charge(&mut caller, host_call_fuel(0))?;
    Ok(ERRNO_BADF)
}

fn fd_prestat_dir_name(
    mut caller: Caller<'_, WasiState>,
    _fd: i32,
    _path: i32,
    _len: i32,
) -> Res<i32> {
    charge(&mut caller, host_call_fuel(0))?;
    Ok(ERRNO_BADF)
}

fn fd_close(mut caller: Caller<'_, WasiState>, fd: i32) -> Res<i32> {
    charge(&mut caller, host_call_fuel(0))?;
    Ok(if (0..=2).contains(&fd) {
        ERRNO_SUCCESS
    } else {
        ERRNO_BADF
    })
}

fn fd_seek(
    mut caller: Caller<'_, WasiState>,
    _fd: i32,
    _offset: i64,
    _whence: i32,
    _new: i32,
) -> Res<i32> {
    charge(&mut caller, host_call_fuel(0))?;
    Ok(ERRNO_SPIPE)
}

/// A linker defining every function of `WASI_FUNCTIONS`.
pub fn linker(engine: &wasmi::Engine) -> Linker<WasiState> {
    let mut l = Linker::new(engine);
    let m = WASI_MODULE;
    let defined = (|| -> Result<(), wasmi::errors::LinkerError> {
        l.func_wrap(m, "fd_read", fd_read)?;
        l.func_wrap(m, "fd_write", fd_write)?;
        l.func_wrap(m, "args_get", args_get)?;
        l.func_wrap(m, "args_sizes_get", args_sizes_get)?;
        l.func_wrap(m, "environ_get", environ_get)?;
        l.func_wrap(m, "environ_sizes_get", environ_sizes_get)?;
        l.func_wrap(m, "clock_time_get", clock_time_get)?;
        l.func_wrap(m, "random_get", random_get)?;
        l.func_wrap(m, "proc_exit", proc_exit)?;
        l.func_wrap(m, "fd_fdstat_get", fd_fdstat_get)?;
        l.func_wrap(m, "fd_prestat_get", fd_prestat_get)?;
        l.func_wrap(m, "fd_prestat_dir_name", fd_prestat_dir_name)?;
        l.func_wrap(m, "fd_close", fd_close)?;
        l.func_wrap(m, "fd_seek", fd_seek)?;
        Ok(())
    })();
    defined.expect("each WASI function is defined once");
    l
}
