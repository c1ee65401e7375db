//! The SIMD baseline's compute phase: a kernel run OpenMP-style over the worker LWPs (seed
//! 000 §5 "Accelerators"). Screen s of a parallel microblock runs on worker s mod workers, a
//! serial microblock on worker 0 while the others wait; an implicit barrier ends every
//! microblock. A unit reads its inputs from DDR3L, computes, writes its outputs to DDR3L;
//! the shared DDR3L port and each worker are FIFO servers, so their requests are issued in
//! time order from a local agenda (a FIFO server must see arrivals in order).

use crate::plan::UnitPlan;
use crate::server::{transfer, FifoServer};
use crate::simd::part as share;
use nearflash_sim::{SimDuration, SimTime};
use std::collections::{BTreeMap, VecDeque};

#[derive(Clone, Copy)]
enum Step {
    Read,
    Compute,
    Write,
    Done,
}

/// Runs every microblock (`units[mb]`: the units of one microblock, or some of its screens)
/// from `from`, each unit's share `part` of `parts` (a unit streaming through DDR3L moves
/// and computes its data in parts; `(0, 1)`: whole); returns when the last barrier passes.
/// `occupied_ns[w]` grows by the time worker w is occupied in each microblock: from its
/// start until w's last unit there is done (waiting for DDR3L included, the barrier wait
/// not).
pub fn run(
    units: &[&[UnitPlan]],
    (part, parts): (u64, u64),
    workers: &mut [FifoServer],
    occupied_ns: &mut [u64],
    ddr: &mut FifoServer,
    ddr_mb_s: f64,
    from: SimTime,
) -> SimTime {
    assert_eq!(occupied_ns.len(), workers.len(), "one tally per worker");
    let mut barrier = from;
    for mb in units {
        let mut queues: Vec<VecDeque<&UnitPlan>> =
            (0..workers.len()).map(|_| VecDeque::new()).collect();
        for (s, u) in mb.iter().enumerate() {
            queues[s % workers.len()].push_back(u);
        }
        let mut agenda: BTreeMap<(SimTime, u64), (usize, Step)> = BTreeMap::new();
        let mut seq = 0u64;
        let mut push = |agenda: &mut BTreeMap<_, _>, at: SimTime, w: usize, step: Step| {
            agenda.insert((at, seq), (w, step));
            seq += 1;
        };
        for (w, q) in queues.iter().enumerate() {
            if !q.is_empty() {
                push(&mut agenda, barrier, w, Step::Read);
            }
        }
        let start = barrier;
        while let Some(((at, _), (w, step))) = agenda.pop_first() {
            let u = queues[w].front().expect("a worker with a step has a unit");
            match step {
                Step::Read => {
                    let t = ddr.serve(
                        at,
                        transfer(share(u.read_line_bytes, parts, part), ddr_mb_s),
                    );
                    push(&mut agenda, t, w, Step::Compute);
                }
                Step::Compute => {
                    let t = workers[w]
                        .serve(at, SimDuration::from_ns(share(u.compute_ns, parts, part)));
                    push(&mut agenda, t, w, Step::Write);
                }
                Step::Write => {
                    let t = ddr.serve(
                        at,
                        transfer(share(u.write_line_bytes, parts, part), ddr_mb_s),
                    );
                    push(&mut agenda, t, w, Step::Done);
                }
                Step::Done => {
                    queues[w].pop_front();
                    if queues[w].is_empty() {
                        occupied_ns[w] += at.since(start).as_ns();
                    } else {
                        push(&mut agenda, at, w, Step::Read);
                    }
                    barrier = barrier.max(at);
                }
            }
        }
        debug_assert!(barrier >= start);
    }
    barrier
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::GroupRuns;

    fn unit(compute_ns: u64) -> UnitPlan {
        UnitPlan {
            compute_ns,
            reads: GroupRuns::default(),
            writes: GroupRuns::default(),
            read_line_bytes: 1000,
            write_line_bytes: 0,
        }
    }

    #[test]
    fn screens_run_in_parallel_and_serial_microblocks_alone() {
        let mut workers = vec![FifoServer::default(); 2];
        let mut ddr = FifoServer::default();
        // m0: 3 screens of 10 on 2 workers (20 on worker 0), m1: serial 5 after the barrier.
        let units = [vec![unit(10), unit(10), unit(10)], vec![unit(5)]];
        let units: Vec<&[UnitPlan]> = units.iter().map(Vec::as_slice).collect();
        let mut occupied = vec![0; 2];
        let end = run(
            &units,
            (0, 1),
            &mut workers,
            &mut occupied,
            &mut ddr,
            1000.0,
            SimTime::ZERO,
        );
        // DDR3L at 1000 MB/s: 1000 B = 1000 ns per read, shared FIFO.
        // w0: read 0-1000, compute -1010; w1: read 1000-2000, compute -2010;
        // w0 second: read 2000-3000 (port busy until 2000), compute -3010. m1: 3010 + 1000 + 5.
        assert_eq!(end.as_ns(), 4015);
        assert_eq!(workers[0].busy_ns(), 25);
        assert_eq!(workers[1].busy_ns(), 10);
        assert_eq!(ddr.busy_ns(), 4000);
        // Occupied: w0 until 3010 in m0 and 3010..4015 in m1; w1 computes until 2010, then
        // its (empty) write queues behind w0's read on the port until 3000; idle in m1.
        assert_eq!(occupied, vec![3010 + 1005, 3000], "{occupied:?}");
    }
}
