//! Real-time traffic: a constant-bit-rate UDP source with optionally jittered
//! inter-departure times, and the sink bookkeeping of every packet's fate.

use collateral_queue::Nanos;
use rand::RngExt;
use rand_distr::{Distribution, Normal};
use rand_pcg::Pcg64Mcg;
use serde::{Deserialize, Serialize};

use crate::scenario::Direction;

/// A CBR/VoIP-like flow: `packet_bytes` (IP length) every `interval_ns` on average.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CbrConfig {
    pub direction: Direction,
    pub packet_bytes: u32,
    pub interval_ns: Nanos,
    /// Standard deviation of the normal jitter added to each inter-departure time
    /// (0 = perfectly periodic). MMSys 2011 used 1 ms to avoid phase lock-in.
    pub jitter_ns: Nanos,
    /// First departure; `None` = a random phase in `[0, interval)` drawn from the seed.
    pub start_ns: Option<Nanos>,
    pub stop_ns: Option<Nanos>,
    /// DiffServ/tag byte the packets carry (0 = untagged); class-based disciplines (CBT,
    /// CBQ) treat a tagged UDP flow as multimedia.
    pub tag: u8,
}

impl Default for CbrConfig {
    fn default() -> Self {
        CbrConfig {
            direction: Direction::Down,
            packet_bytes: 186,
            interval_ns: 20_000_000,
            jitter_ns: 1_000_000,
            start_ns: None,
            stop_ns: None,
            tag: 0,
        }
    }
}

/// Marks in [`CbrFlow::arrived`] for packets that did not arrive.
pub const IN_FLIGHT: Nanos = Nanos::MAX;
pub const DROPPED: Nanos = Nanos::MAX - 1;

/// A CBR source and its sink's record of every packet.
#[derive(Debug, Clone)]
pub struct CbrFlow {
    pub flow: u32,
    pub cfg: CbrConfig,
    jitter: Option<Normal<f64>>,
    pub next_send: Nanos,
    /// Send time of packet `seq`.
    pub sent: Vec<Nanos>,
    /// Arrival time of packet `seq`, or [`IN_FLIGHT`] / [`DROPPED`].
    pub arrived: Vec<Nanos>,
}

impl CbrFlow {
    pub fn new(flow: u32, cfg: &CbrConfig, duration: Nanos, rng: &mut Pcg64Mcg) -> Self {
        let start = cfg
            .start_ns
            .unwrap_or_else(|| rng.random_range(0..cfg.interval_ns.max(1)));
        let jitter = (cfg.jitter_ns > 0)
            .then(|| Normal::new(cfg.interval_ns as f64, cfg.jitter_ns as f64).unwrap());
        let expect = (duration / cfg.interval_ns.max(1)) as usize + 16;
        CbrFlow {
            flow,
            cfg: cfg.clone(),
            jitter,
            next_send: start,
            sent: Vec::with_capacity(expect),
            arrived: Vec::with_capacity(expect),
        }
    }

    /// Records a departure at `now` and draws the next one. Returns the packet's seq.
    #[inline]
    pub fn send(&mut self, now: Nanos, rng: &mut Pcg64Mcg) -> u64 {
        let seq = self.sent.len() as u64;
        self.sent.push(now);
        self.arrived.push(IN_FLIGHT);
        let gap = match &self.jitter {
            // A negative draw (more than `interval / jitter` sigmas out) is clamped to
            // zero: the packet leaves immediately after the previous one.
            Some(n) => n.sample(rng).max(0.0).round() as Nanos,
            None => self.cfg.interval_ns,
        };
        self.next_send = now + gap;
        seq
    }

    #[inline]
    pub fn on_arrival(&mut self, now: Nanos, seq: u64) {
        self.arrived[seq as usize] = now;
    }

    #[inline]
    pub fn on_drop(&mut self, seq: u64) {
        self.arrived[seq as usize] = DROPPED;
    }

    /// Whether the source sends another packet at `t`.
    pub fn active_at(&self, t: Nanos, end: Nanos) -> bool {
        t < end && self.cfg.stop_ns.is_none_or(|s| t < s)
    }
}
