//! Independent simulations side by side: `jobs` threads take tasks in order and the results
//! come back in task order, so the output is the same for every job count.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Runs `jobs` closures side by side over `n` tasks and returns their results in task order
/// (each task is an independent deterministic simulation, so the order of completion does
/// not matter). `progress` is called after each task with the count done.
pub fn parallel_map<T: Send>(
    n: usize,
    jobs: usize,
    task: impl Fn(usize) -> T + Sync,
    progress: impl Fn(usize) + Sync,
) -> Vec<T> {
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<T>>> = Mutex::new((0..n).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..jobs.clamp(1, n.max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    break;
                }
                let r = task(i);
                results
                    .lock()
                    .expect("no task panics while holding the lock")[i] = Some(r);
                progress(done.fetch_add(1, Ordering::Relaxed) + 1);
            });
        }
    });
    results
        .into_inner()
        .expect("threads joined")
        .into_iter()
        .map(|r| r.expect("every task ran"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parallel_map_keeps_task_order_whatever_the_job_count() {
        for jobs in [1, 2, 7] {
            let v = parallel_map(20, jobs, |i| i * i, |_| {});
            assert_eq!(v, (0..20).map(|i| i * i).collect::<Vec<_>>());
        }
    }
}
