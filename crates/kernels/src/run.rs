//! Whole-kernel drivers for tests and the CLI: run every microblock in order with screens
//! in order or in a seeded shuffled order, then verify against the reference.

use crate::desc::MicroblockKind;
use crate::error::KernelError;
use crate::kernel::{run_screen, run_serial, Kernel};
use crate::state::State;
use crate::verify::verify;
use nearflash_sim::SimRng;

/// Run all microblocks in order on `state`; screens in index order.
pub fn run_all(k: &dyn Kernel, state: &mut State) -> Result<(), KernelError> {
    run_ordered(k, state, None)
}

/// Run all microblocks in order; within each microblock the screens run in an order
/// shuffled by a generator seeded with `seed` (Fisher–Yates).
pub fn run_shuffled(k: &dyn Kernel, state: &mut State, seed: u64) -> Result<(), KernelError> {
    let mut rng = SimRng::seed_from_u64(seed);
    run_ordered(k, state, Some(&mut rng))
}

fn run_ordered(
    k: &dyn Kernel,
    state: &mut State,
    mut rng: Option<&mut SimRng>,
) -> Result<(), KernelError> {
    for mb in 0..k.desc().microblocks.len() {
        match k.desc().microblocks[mb].kind {
            MicroblockKind::Serial => run_serial(k, mb, state)?,
            MicroblockKind::Screens(n) => {
                let mut order: Vec<u32> = (0..n).collect();
                if let Some(r) = rng.as_deref_mut() {
                    for i in (1..order.len()).rev() {
                        let j = r.below(i as u64 + 1) as usize;
                        order.swap(i, j);
                    }
                }
                for s in order {
                    run_screen(k, mb, s, state)?;
                }
            }
        }
    }
    Ok(())
}

/// Generate, run (screens shuffled with `seed`, or in order if `None`), verify; returns
/// the final state.
pub fn run_and_verify(k: &dyn Kernel, shuffle_seed: Option<u64>) -> Result<State, KernelError> {
    let input = k.init();
    let mut state = input.clone();
    match shuffle_seed {
        Some(seed) => run_shuffled(k, &mut state, seed)?,
        None => run_all(k, &mut state)?,
    }
    let reference = k.reference(&input);
    verify(k.desc(), &state, &reference)?;
    Ok(state)
}
