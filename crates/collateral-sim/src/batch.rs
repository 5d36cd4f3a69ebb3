//! Many trials on a pool of OS threads. Each trial is independent and deterministic, so
//! results do not depend on the number of threads or on which thread ran what.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::{simulate, Scenario, TrialResult};

/// Runs every scenario, `threads` at a time (0 = as many as the machine has cores), and
/// returns the results in input order.
pub fn run_all(scenarios: Vec<Scenario>, threads: usize) -> Vec<Result<TrialResult, String>> {
    let n = scenarios.len();
    let threads = match threads {
        0 => std::thread::available_parallelism().map_or(1, |p| p.get()),
        t => t,
    }
    .min(n.max(1));
    let next = AtomicUsize::new(0);
    let slots: Vec<Mutex<Option<Result<TrialResult, String>>>> =
        (0..n).map(|_| Mutex::new(None)).collect();
    let work: Vec<Mutex<Option<Scenario>>> =
        scenarios.into_iter().map(|s| Mutex::new(Some(s))).collect();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                // Work stealing by a shared counter: fast trials do not wait for slow ones.
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    break;
                }
                let sc = work[i].lock().unwrap().take().unwrap();
                let r = simulate(sc);
                *slots[i].lock().unwrap() = Some(r);
            });
        }
    });
    slots
        .into_iter()
        .map(|m| m.into_inner().unwrap().unwrap())
        .collect()
}
