//! What the whole-trial tests share: time units and the dumbbells several of them build.
//! Each test file takes what it needs (`mod support;`), so some items go unused in some.
#![allow(dead_code)]

use collateral_sim::queue::FullRule;
use collateral_sim::scenario::{QueueConfig, ScenarioBuilder, TraceConfig};
use collateral_sim::tcp::TcpConfig;
use collateral_sim::{simulate, Scenario, TrialResult};

pub const MS: u64 = 1_000_000;
pub const S: u64 = 1_000_000_000;

/// A drop-tail queue of `limit` packets.
pub fn packets(limit: u64) -> QueueConfig {
    QueueConfig::drop_tail(FullRule::Ps, limit)
}

/// 10 Mbit/s each way with `rtt_ms` and a `queue_packets`-packet drop-tail queue in
/// both directions.
pub fn ten_meg(rtt_ms: u64, queue_packets: u64) -> ScenarioBuilder {
    Scenario::builder()
        .rtt(rtt_ms * MS)
        .link(10_000_000, 10_000_000, packets(queue_packets))
}

/// One finite transfer of `tcp` (its `size_segments` set) over 10 Mbit/s, 40 ms, a
/// 50-packet queue and random loss `loss` of data and ACKs alike; up to 600 s, no
/// traces.
pub fn lossy_transfer(seed: u64, loss: f64, tcp: TcpConfig) -> TrialResult {
    let sc = ten_meg(40, 50)
        .seed(seed)
        .duration(600 * S)
        .loss(loss)
        .tcp(tcp)
        .trace(TraceConfig::OFF)
        .build();
    simulate(sc).unwrap()
}
