//! The interface every workload implements, and the checked entry points a device model
//! calls (`run_screen`, `run_serial`, `cost`), which validate microblock and screen indices
//! before dispatching.

use crate::cost::Cost;
use crate::desc::{KernelDesc, MicroblockKind};
use crate::error::KernelError;
use crate::io::Extent;
use crate::state::State;

pub trait Kernel {
    fn desc(&self) -> &KernelDesc;

    /// Generate the dataset (deterministic: closed-form formulas or a fixed seed).
    fn init(&self) -> State;

    /// Compute screen `screen` of screened microblock `mb`. Indices are already validated.
    fn compute_screen(&self, mb: usize, screen: u32, state: &mut State);

    /// Compute serial microblock `mb`. Index already validated.
    fn compute_serial(&self, mb: usize, state: &mut State);

    /// Instructions, loads and stores of one screen (or of the serial microblock when
    /// `screen` is 0 and `mb` is serial). Needs no data.
    fn screen_cost(&self, mb: usize, screen: u32) -> Cost;

    /// The bytes of each data section the screen (or serial microblock, screen 0) reads
    /// and writes. Needs no data.
    fn screen_io(&self, mb: usize, screen: u32) -> Vec<Extent>;

    /// The independent sequential reference: from the initial state, the live-out arrays.
    fn reference(&self, input: &State) -> State;
}

fn check_mb(k: &dyn Kernel, mb: usize) -> Result<MicroblockKind, KernelError> {
    let d = k.desc();
    d.microblocks
        .get(mb)
        .map(|m| m.kind)
        .ok_or_else(|| KernelError::NoSuchMicroblock {
            kernel: d.name.into(),
            microblock: mb,
            count: d.microblocks.len(),
        })
}

/// Run screen `screen` of microblock `mb`.
pub fn run_screen(
    k: &dyn Kernel,
    mb: usize,
    screen: u32,
    state: &mut State,
) -> Result<(), KernelError> {
    match check_mb(k, mb)? {
        MicroblockKind::Serial => Err(KernelError::NotScreened {
            kernel: k.desc().name.into(),
            microblock: mb,
        }),
        MicroblockKind::Screens(n) if screen >= n => Err(KernelError::NoSuchScreen {
            kernel: k.desc().name.into(),
            microblock: mb,
            screen,
            screens: n,
        }),
        MicroblockKind::Screens(_) => {
            k.compute_screen(mb, screen, state);
            Ok(())
        }
    }
}

/// Run serial microblock `mb`.
pub fn run_serial(k: &dyn Kernel, mb: usize, state: &mut State) -> Result<(), KernelError> {
    match check_mb(k, mb)? {
        MicroblockKind::Serial => {
            k.compute_serial(mb, state);
            Ok(())
        }
        MicroblockKind::Screens(_) => Err(KernelError::NotSerial {
            kernel: k.desc().name.into(),
            microblock: mb,
        }),
    }
}

/// Cost of one unit of work: screen `screen` of `mb`, or the whole of a serial `mb`
/// (pass screen 0).
pub fn cost(k: &dyn Kernel, mb: usize, screen: u32) -> Result<Cost, KernelError> {
    match check_mb(k, mb)? {
        MicroblockKind::Serial => Ok(k.screen_cost(mb, 0)),
        MicroblockKind::Screens(n) if screen >= n => Err(KernelError::NoSuchScreen {
            kernel: k.desc().name.into(),
            microblock: mb,
            screen,
            screens: n,
        }),
        MicroblockKind::Screens(_) => Ok(k.screen_cost(mb, screen)),
    }
}

/// Cost of a whole microblock (all its screens).
pub fn microblock_cost(k: &dyn Kernel, mb: usize) -> Result<Cost, KernelError> {
    match check_mb(k, mb)? {
        MicroblockKind::Serial => Ok(k.screen_cost(mb, 0)),
        MicroblockKind::Screens(n) => Ok((0..n).map(|s| k.screen_cost(mb, s)).sum()),
    }
}

/// Cost of the whole kernel.
pub fn total_cost(k: &dyn Kernel) -> Cost {
    (0..k.desc().microblocks.len())
        .map(|mb| microblock_cost(k, mb).expect("valid index"))
        .sum()
}

/// Data footprint of one unit of work: screen `screen` of `mb`, or the serial `mb`
/// (pass screen 0).
pub fn footprint(k: &dyn Kernel, mb: usize, screen: u32) -> Result<Vec<Extent>, KernelError> {
    let mut v = match check_mb(k, mb)? {
        MicroblockKind::Serial => k.screen_io(mb, 0),
        MicroblockKind::Screens(n) if screen >= n => {
            return Err(KernelError::NoSuchScreen {
                kernel: k.desc().name.into(),
                microblock: mb,
                screen,
                screens: n,
            })
        }
        MicroblockKind::Screens(_) => k.screen_io(mb, screen),
    };
    // empty extents (an edge screen's empty halo, say) carry no bytes.
    v.retain(|e| e.total_bytes() > 0);
    Ok(v)
}
