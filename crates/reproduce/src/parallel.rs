//! Independent simulations side by side: `jobs` threads take tasks in order and the results
//! come back in task order, so the output is the same for every job count.
//!
//! Interrupts: the calling thread waits, asking its interrupt check
//! (`nearflash_sim::interrupt::requested`: Ctrl-C in the CLI or in Python) every
//! `RELAY_EVERY`; when it answers true it sets a cancel flag shared by every worker. A worker
//! looks at the flag before each task, and runs each task inside `interruptible` with the flag
//! as its check, so a running simulation stops within `POLL_EVENTS` events of it. Then nothing
//! is returned but `Interrupted`.

use nearflash_sim::interrupt::{interruptible, requested, Interrupted};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How often the waiting caller asks its interrupt check.
pub const RELAY_EVERY: Duration = Duration::from_millis(20);

/// Runs `jobs` closures side by side over `n` tasks and returns their results in task order
/// (each task is an independent deterministic simulation, so the order of completion does
/// not matter). `progress` is called after each task with the count done. If the caller's
/// interrupt check answers true meanwhile, every worker stops (between tasks, or inside one
/// at its next poll) and the answer is `Interrupted`.
pub fn parallel_map<T: Send>(
    n: usize,
    jobs: usize,
    task: impl Fn(usize) -> T + Sync,
    progress: impl Fn(usize) + Sync,
) -> Result<Vec<T>, Interrupted> {
    let cancel = Arc::new(AtomicBool::new(false));
    parallel_map_cancellable(n, jobs, &cancel, task, progress, requested)
}

/// `parallel_map` with its cancel flag and the caller's check given (tests set the flag).
fn parallel_map_cancellable<T: Send>(
    n: usize,
    jobs: usize,
    cancel: &Arc<AtomicBool>,
    task: impl Fn(usize) -> T + Sync,
    progress: impl Fn(usize) + Sync,
    mut interrupt_requested: impl FnMut() -> bool,
) -> Result<Vec<T>, Interrupted> {
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<T>>> = Mutex::new((0..n).map(|_| None).collect());
    // Each worker holds a sender and drops it when it ends: the channel closes with the last.
    let (running, ended) = channel::<()>();
    let (next, done, results, task, progress) = (&next, &done, &results, &task, &progress);
    std::thread::scope(|s| {
        for _ in 0..jobs.clamp(1, n.max(1)) {
            let running = running.clone();
            let cancel = Arc::clone(cancel);
            s.spawn(move || {
                let _running = running;
                while !cancel.load(Ordering::Relaxed) {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= n {
                        break;
                    }
                    let flag = Arc::clone(&cancel);
                    let Ok(r) = interruptible(move || flag.load(Ordering::Relaxed), || task(i))
                    else {
                        break;
                    };
                    results
                        .lock()
                        .expect("no task panics while holding the lock")[i] = Some(r);
                    progress(done.fetch_add(1, Ordering::Relaxed) + 1);
                }
            });
        }
        drop(running);
        while let Err(RecvTimeoutError::Timeout) = ended.recv_timeout(RELAY_EVERY) {
            if !cancel.load(Ordering::Relaxed) && interrupt_requested() {
                cancel.store(true, Ordering::Relaxed);
            }
        }
    });
    if cancel.load(Ordering::Relaxed) {
        return Err(Interrupted);
    }
    let results = results
        .lock()
        .expect("threads joined")
        .drain(..)
        .map(|r| r.expect("every task ran"))
        .collect::<Vec<_>>();
    assert_eq!(results.len(), n, "one result per task");
    Ok(results)
}

#[cfg(test)]
mod tests {
    use super::*;
    use nearflash_sim::{EventQueue, Model, Sim, SimDuration, SimRng, SimTime, TraceEvent};
    use std::time::Instant;

    #[test]
    fn parallel_map_keeps_task_order_whatever_the_job_count() {
        for jobs in [1, 2, 7] {
            let v = parallel_map(20, jobs, |i| i * i, |_| {}).unwrap();
            assert_eq!(v, (0..20).map(|i| i * i).collect::<Vec<_>>());
        }
    }

    struct Tick;
    impl TraceEvent for Tick {
        fn hash_word(&self) -> u64 {
            1
        }
    }
    /// A simulation that never ends: every tick schedules the next.
    struct Forever;
    impl Model for Forever {
        type Event = Tick;
        fn handle(&mut self, _: Tick, q: &mut EventQueue<Tick>, _: &mut SimRng) {
            q.schedule_in(SimDuration::from_ns(1), Tick);
        }
    }

    fn forever() {
        let mut sim = Sim::new(1);
        sim.queue().schedule_in(SimDuration::from_ns(1), Tick);
        // No goal and no limit: only an interrupt ends it.
        sim.run_until_by(SimTime(u64::MAX), &mut Forever, |_| false);
    }

    /// Story (issue 28): with `--jobs` above 1, Ctrl-C reached only the calling thread, which
    /// runs no simulation, so the workers ran on to the end. Now an interrupt asked of the
    /// caller stops every worker — those inside an endless simulation at their next poll, the
    /// others before their next task — and nothing but `Interrupted` comes back.
    #[test]
    fn an_interrupt_asked_of_the_caller_stops_every_worker_promptly() {
        for jobs in [1, 2, 4] {
            let cancel = Arc::new(AtomicBool::new(false));
            let started = AtomicUsize::new(0);
            let t0 = Instant::now();
            let r = parallel_map_cancellable(
                100,
                jobs,
                &cancel,
                |_| {
                    started.fetch_add(1, Ordering::Relaxed);
                    forever()
                },
                |_| panic!("no task finishes"),
                || t0.elapsed() > Duration::from_millis(100),
            );
            assert_eq!(r, Err(Interrupted), "{jobs} jobs");
            assert!(cancel.load(Ordering::Relaxed));
            assert_eq!(
                started.load(Ordering::Relaxed),
                jobs,
                "no task started after it"
            );
            let wall = t0.elapsed();
            assert!(
                wall < Duration::from_secs(5),
                "{jobs} jobs stopped after {wall:?}"
            );
        }
    }

    #[test]
    fn a_caller_inside_interruptible_passes_its_interrupt_on_to_the_workers() {
        let t0 = Instant::now();
        let r = interruptible(
            move || t0.elapsed() > Duration::from_millis(50),
            || parallel_map(10, 2, |_| forever(), |_| {}),
        );
        assert_eq!(r, Ok(Err(Interrupted)));
    }
}
