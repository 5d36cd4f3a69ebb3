//! `collateral-bench`: speed of the simulator on the MMSys 2011 scenarios.
//!
//! Prints events/s, events per delivered packet and wall time for a 180 s trial on ADSL1
//! (1.5 Mbit/s / 256 kbit/s) and ADSL2 (24 / 1 Mbit/s), 100 ms RTT, one bulk flow down
//! (NewReno on the default stack, then NewReno, CUBIC and H-TCP on Linux 2.6.25 and BBR
//! on Linux 6), bidirectional CBR (186 B / 20 ms, σ 1 ms), 60 000-byte FB-loose queues,
//! traces off. Each trial is repeated and the best (least disturbed) run reported:
//! `wall_ms` is the whole call (set-up, event loop, summaries), `loop_ms` the event loop.
//! The last lines time the floor the issue set: an event loop on a binary heap doing
//! nothing but popping and re-scheduling, as many events as the ADSL1 and ADSL2 NewReno
//! trials with as many pending, and how far the trial is above it.
//!
//!     cargo run --release -p collateral-sim --bin collateral-bench [REPS] [FILTER]
//!
//! `FILTER` keeps the rows whose link and stack contain it (e.g. `ADSL1`, `cubic`), for
//! profiling one scenario.

use std::time::Instant;

/// A line on stdout; a reader that closed the pipe (`collateral-bench | head`) ends the
/// run quietly, as a Unix filter does, instead of a panic with a backtrace.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write;
        if writeln!(std::io::stdout(), $($arg)*).is_err() {
            std::process::exit(0);
        }
    }};
}

use collateral_sim::queue::FullRule;
use collateral_sim::scenario::{QueueConfig, TraceConfig};
use collateral_sim::tcp::{CcKind, Profile, TcpConfig};
use collateral_sim::{simulate, Scenario};

fn scenario(tcp: TcpConfig, down: u64, up: u64, seed: u64) -> Scenario {
    Scenario::builder()
        .seed(seed)
        .duration(180_000_000_000)
        .warmup(10_000_000_000)
        .rtt(100_000_000)
        .link(down, up, QueueConfig::drop_tail(FullRule::FbLoose, 60_000))
        .tcp(tcp)
        .cbr_both_ways()
        .trace(TraceConfig::OFF)
        .build()
}

fn main() {
    let reps: usize = match std::env::args().nth(1) {
        None => 20,
        Some(s) => match s.parse() {
            Ok(n) if n > 0 => n,
            _ => {
                eprintln!("collateral-bench: REPS: {s:?} is not a positive integer");
                std::process::exit(2);
            }
        },
    };
    let filter = std::env::args().nth(2).unwrap_or_default();
    let mut floors = Vec::new();
    let stacks = [
        ("newreno (rfc)", TcpConfig::default()),
        ("newreno (linux-2.6.25)", Profile::Linux2625.config()),
        (
            "cubic (linux-2.6.25)",
            TcpConfig {
                cc: CcKind::Cubic,
                ..Profile::Linux2625.config()
            },
        ),
        (
            "htcp (linux-2.6.25)",
            TcpConfig {
                cc: CcKind::Htcp,
                ..Profile::Linux2625.config()
            },
        ),
        (
            "bbr (linux-6)",
            TcpConfig {
                cc: CcKind::Bbr,
                ..Profile::Linux6.config()
            },
        ),
    ];
    let rows: Vec<_> = [
        ("ADSL1", 1_500_000, 256_000),
        ("ADSL2", 24_000_000, 1_000_000),
    ]
    .into_iter()
    .flat_map(|l| std::iter::repeat(l).zip(stacks.iter()))
    .filter(|((n, _, _), (label, _))| format!("{n} {label}").contains(&filter))
    .collect();
    if rows.is_empty() {
        eprintln!(
            "collateral-bench: FILTER: {filter:?} matches no row (link and stack, e.g. \"ADSL1 cubic\")"
        );
        std::process::exit(2);
    }
    out!(
        "{:<8} {:<22} {:>8} {:>8} {:>9} {:>12} {:>9} {:>9} {:>12}",
        "link",
        "tcp",
        "wall_ms",
        "loop_ms",
        "events",
        "events/s",
        "packets",
        "ev/pkt",
        "goodput"
    );
    for ((name, down, up), (label, tcp)) in rows {
        let mut best = f64::INFINITY;
        let mut best_loop = f64::INFINITY;
        let mut last = None;
        for r in 0..reps {
            let sc = scenario(tcp.clone(), down, up, 1 + r as u64);
            let t = Instant::now();
            let res = simulate(sc).expect("valid scenario");
            best = best.min(t.elapsed().as_secs_f64());
            best_loop = best_loop.min(res.wall_s);
            last = Some(res);
        }
        let s = last.unwrap().summary;
        let events = s.events.unwrap_or(0);
        out!(
            "{:<8} {:<22} {:>8.2} {:>8.2} {:>9} {:>12.3e} {:>9} {:>9.2} {:>7.3} Mb/s",
            name,
            label,
            best * 1e3,
            best_loop * 1e3,
            events,
            events as f64 / best,
            s.packets_delivered,
            events as f64 / s.packets_delivered as f64,
            s.tcp[0].goodput_bps / 1e6
        );
        if label.starts_with("newreno (rfc)") {
            floors.push((name, events, best_loop));
        }
    }
    for (name, events, trial) in floors {
        let floor = (0..reps.max(3))
            .map(|_| heap_floor(events))
            .fold(f64::INFINITY, f64::min);
        out!(
            "{name} heap floor: {events} events popped and re-scheduled on a binary heap of \
             {FLOOR_PENDING} in {:.2} ms ({:.1} ns/event); the NewReno trial's loop is {:.2}x that",
            floor * 1e3,
            floor * 1e9 / events as f64,
            trial / floor
        );
    }
}

/// Entries pending in the floor's heap: about what a one-flow trial keeps (the links,
/// the CBR sources, the timers and their stale wake-ups).
const FLOOR_PENDING: u64 = 8;

/// Seconds for `n` events of an event loop that only pops the earliest of
/// [`FLOOR_PENDING`] `(time, sequence)` entries and schedules one a pseudo-random
/// 0–10 ms later.
fn heap_floor(n: u64) -> f64 {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let mut heap = BinaryHeap::with_capacity(64);
    let mut x: u64 = 88172645463325252;
    let mut seq = 0u64;
    for _ in 0..FLOOR_PENDING {
        heap.push(Reverse((x % 10_000_000, seq)));
        seq += 1;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    let t = Instant::now();
    let mut sum = 0u64;
    for _ in 0..n {
        let Reverse((now, s)) = heap.pop().expect("never empty");
        sum = sum.wrapping_add(s);
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        heap.push(Reverse((now + x % 10_000_000, seq)));
        seq += 1;
    }
    std::hint::black_box(sum);
    t.elapsed().as_secs_f64()
}
