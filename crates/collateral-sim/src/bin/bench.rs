//! `collateral-bench`: speed of the simulator on the MMSys 2011 scenarios.
//!
//! Prints events/s, events per delivered packet and wall time for a 180 s trial on ADSL1
//! (1.5 Mbit/s / 256 kbit/s) and ADSL2 (24 / 1 Mbit/s), 100 ms RTT, one NewReno bulk
//! flow down, bidirectional CBR (186 B / 20 ms, σ 1 ms), 60 000-byte FB-loose queues,
//! traces off. Each trial is repeated and the best (least disturbed) run reported.

use std::time::Instant;

use collateral_sim::queue::FullRule;
use collateral_sim::scenario::{LinkConfig, QueueConfig, TraceConfig};
use collateral_sim::tcp::TcpConfig;
use collateral_sim::traffic::CbrConfig;
use collateral_sim::{simulate, Direction, Scenario};

fn scenario(name: &str, down: u64, up: u64, seed: u64) -> Scenario {
    let _ = name;
    let q = QueueConfig {
        rule: FullRule::FbLoose,
        limit: 60_000,
        count_in_service: false,
    };
    Scenario {
        seed,
        duration_ns: 180_000_000_000,
        warmup_ns: 10_000_000_000,
        rtt_ns: 100_000_000,
        access_rate_bps: 1_000_000_000,
        down: LinkConfig {
            rate_bps: down,
            queue: q.clone().into(),
            loss_rate: 0.0,
        },
        up: LinkConfig {
            rate_bps: up,
            queue: q.into(),
            loss_rate: 0.0,
        },
        tcp: vec![TcpConfig::default()],
        cbr: vec![
            CbrConfig {
                direction: Direction::Down,
                ..Default::default()
            },
            CbrConfig {
                direction: Direction::Up,
                ..Default::default()
            },
        ],
        trace: TraceConfig::OFF,
    }
}

fn main() {
    let reps: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    println!(
        "{:<8} {:>10} {:>10} {:>12} {:>9} {:>10} {:>12}",
        "link", "wall_ms", "events", "events/s", "packets", "ev/packet", "goodput"
    );
    for (name, down, up) in [
        ("ADSL1", 1_500_000, 256_000),
        ("ADSL2", 24_000_000, 1_000_000),
    ] {
        let mut best = f64::INFINITY;
        let mut last = None;
        for r in 0..reps {
            let sc = scenario(name, down, up, 1 + r as u64);
            let t = Instant::now();
            let res = simulate(sc).expect("valid scenario");
            best = best.min(t.elapsed().as_secs_f64());
            last = Some(res);
        }
        let s = last.unwrap().summary;
        println!(
            "{:<8} {:>10.2} {:>10} {:>12.3e} {:>9} {:>10.2} {:>9.3} Mb/s",
            name,
            best * 1e3,
            s.events,
            s.events as f64 / best,
            s.packets_delivered,
            s.events as f64 / s.packets_delivered as f64,
            s.tcp[0].goodput_bps / 1e6
        );
    }
}
