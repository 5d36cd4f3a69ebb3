//! FRED: Fair Random Early Drop (Lin & Morris, "Dynamics of Random Early Detection",
//! SIGCOMM '97), on one drop-tail FIFO.
//!
//! RED's average and drop curve, plus accounting for the flows that have packets in the
//! queue (`Packet::flow`): per active flow its queued packets `qlen_i` and `strike_i`,
//! the number of times it was caught over its allowance. Globally `nactive` and
//! `avgcq = avg / nactive` (avg when no flow is active), floored at 1 packet.
//!
//! Per arrival (the paper's pseudocode, as implemented block by block — "A", "B",
//! "C" — in J-Sim's `drcl/inet/core/queue/FRED.java`, `adviceOn`; the paper itself was
//! not retrievable here):
//! 1. update the average (as RED, with idle decay);
//! 2. `maxq = min_th`, or 2 packets when `avg ≥ max_th`;
//! 3. non-adaptive flows: if `qlen_i ≥ maxq`, or `avg ≥ max_th` and `qlen_i > 2·avgcq`,
//!    or `qlen_i ≥ avgcq` and `strike_i > 1`: `strike_i += 1` and drop;
//! 4. otherwise RED, but only against robust flows: `avg < min_th` → accept
//!    (`count = −1`); `avg ≥ max_th` → drop; in between `count += 1` and, **only if
//!    `qlen_i ≥ max(minq, avgcq)`**, drop with RED's `p_a` — so a flow with fewer than
//!    `minq` packets queued (a fragile, low-rate flow) is never dropped early;
//! 5. the hard limit of the FIFO (any [`FullRule`]).
//!
//! Any drop resets `count` to 0 (J-Sim does so for every FRED drop; we also do it at
//! the hard limit, as RED does in ns-2 and ALTQ). The average is sampled at every
//! arrival (occupancy before the packet, with RED's idle decay — as our RED does) and
//! at every departure (occupancy after it), so `avgcq` follows the queue down when
//! nothing arrives. J-Sim samples after each accepted enqueue and each dequeue and only
//! applies the idle decay at the arrival (`RED.run_estimator`); that the paper averages
//! at departures too is reported for FRED but could not be checked in the paper itself.
//!
//! `minq` defaults to 2 packets, the value J-Sim uses (`MINQ = 2`). The paper's
//! recommended parameters (as reproduced in a textbook summary: w_q = 0.002,
//! `min_th = min(buffer/4, RTT)`, `max_th = 2·min_th`, `max_p = 0.02`, `minq` = 2 for
//! small buffers and 4 for large ones) could not be checked against the paper itself.
//!
//! Everything is counted in packets (FRED's per-flow limits are packet counts); the
//! hard limit may still be in bytes. Per-flow state lives in a hash map keyed by flow
//! that only holds flows with packets queued: a flow's entry (and its strikes) is
//! removed when its last packet leaves, so the map never grows beyond the number of
//! packets the FIFO can hold, and steady-state operation does not allocate.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use serde::{Deserialize, Serialize};

use crate::check;
use crate::config::{Described, HardLimit};
use crate::link_defaults::{self, Given, Params};
use crate::red::{pkt_time_ns, spaced, Ewma, RedCurve};
use crate::rng::SplitMix64;
use crate::{Discipline, DropTail, FullRule, Nanos, Packet};

fn default_rule() -> FullRule {
    FullRule::Ps
}
fn default_mean_pkt_size() -> u32 {
    1500
}
fn default_min_q() -> f64 {
    2.0
}

/// FRED parameters:
/// `{"kind": "fred", "min_th": 5, "max_th": 15, "max_p": 0.02, "w_q": 0.002,
///   "limit": 60, "min_q": 2}`. The first five, left out, are derived from the link
/// ([`crate::link_defaults`]: RED's `min_th` and `w_q`, Lin & Morris's `max_th = 2·min_th`,
/// `max_p` 0.02 and buffer `4·min_th`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FredConfig {
    /// RED thresholds on the average queue, in packets.
    #[serde(default)]
    pub min_th: Option<f64>,
    #[serde(default)]
    pub max_th: Option<f64>,
    #[serde(default)]
    pub max_p: Option<f64>,
    #[serde(default)]
    pub w_q: Option<f64>,
    /// Hard limit of the FIFO in the unit of `limit_rule`.
    #[serde(default)]
    pub limit: Option<u64>,
    #[serde(default = "default_rule")]
    pub limit_rule: FullRule,
    /// Packets a flow may always have queued without early drops.
    #[serde(default = "default_min_q")]
    pub min_q: f64,
    /// With the link rate, the idle-decay unit (see [`RedConfig`](crate::RedConfig)).
    #[serde(default = "default_mean_pkt_size")]
    pub mean_pkt_size: u32,
    #[serde(default)]
    pub mean_pkt_time_ns: Option<u64>,
    #[serde(default)]
    pub seed: u64,
    #[serde(default)]
    pub count_in_service: bool,
}

impl Described for FredConfig {
    const DISPLAY: &'static str = "FRED";
    const HARD_LIMIT: Option<HardLimit> = Some(HardLimit::packets("limit"));
}

impl FredConfig {
    /// The curve, weight and limit in force on a link of `link_rate_bps` (thresholds in
    /// packets; the limit in bytes under a byte rule).
    pub fn params(&self, link_rate_bps: u64) -> Result<Params, String> {
        let units = link_defaults::units(self.mean_pkt_size, false, self.limit_rule);
        let given = Given {
            min_th: self.min_th,
            max_th: self.max_th,
            max_p: self.max_p,
            w_q: self.w_q,
            limit: self.limit,
        };
        given.complete(
            link_defaults::fred,
            link_rate_bps,
            self.mean_pkt_size,
            units,
        )
    }

    pub fn validate(&self, link_rate_bps: u64) -> Result<(), String> {
        check::positive("mean_pkt_size", self.mean_pkt_size.into())?;
        let p = self.params(link_rate_bps)?;
        RedCurve {
            min_th: p.min_th,
            max_th: p.max_th,
            max_p: p.max_p,
            gentle: false,
        }
        .validate()?;
        check::fraction("w_q", p.w_q)?;
        check::limit("limit", p.limit)?;
        check::non_negative("min_q", self.min_q)?;
        pkt_time_ns(self.mean_pkt_time_ns, self.mean_pkt_size, link_rate_bps).map(|_| ())
    }
}

/// A cheap, deterministic hasher for `u32` flow ids (Fibonacci hashing). The standard
/// `RandomState` would seed itself from the OS; the map's iteration order never
/// matters here, but there is no reason to pay for SipHash or OS entropy.
#[derive(Debug, Clone, Copy, Default)]
pub struct FlowHasher(u64);

impl Hasher for FlowHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.0 = (self.0 ^ n as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

pub type FlowMap<V> = HashMap<u32, V, BuildHasherDefault<FlowHasher>>;

/// Per-active-flow state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FlowState {
    /// Packets of the flow in the FIFO (waiting, plus the one on the wire when
    /// `count_in_service`).
    pub qlen: u32,
    pub strike: u32,
}

/// Drop counters by cause.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FredStats {
    /// Step 3: flow over `maxq`/`avgcq` (a strike).
    pub flow_limit: u64,
    /// RED random drops (robust flows only).
    pub early: u64,
    /// `avg ≥ max_th`.
    pub forced: u64,
    /// Hard limit.
    pub overflow: u64,
}

/// FRED on a drop-tail FIFO.
#[derive(Debug, Clone)]
pub struct Fred {
    fifo: DropTail,
    est: Ewma,
    curve: RedCurve,
    min_q: f64,
    count: i64,
    rng: SplitMix64,
    flows: FlowMap<FlowState>,
    count_in_service: bool,
    /// Flow of the packet on the wire, when it counts as occupancy.
    in_service: Option<u32>,
    stats: FredStats,
}

impl Fred {
    pub fn new(cfg: &FredConfig, link_rate_bps: u64) -> Result<Self, String> {
        cfg.validate(link_rate_bps)?;
        let s = pkt_time_ns(cfg.mean_pkt_time_ns, cfg.mean_pkt_size, link_rate_bps)?;
        let p = cfg.params(link_rate_bps)?;
        let mut flows = FlowMap::default();
        flows.reserve(64);
        Ok(Fred {
            fifo: DropTail::new(cfg.limit_rule, p.limit, cfg.count_in_service),
            est: Ewma::new(p.w_q, s),
            curve: RedCurve {
                min_th: p.min_th,
                max_th: p.max_th,
                max_p: p.max_p,
                gentle: false,
            },
            min_q: cfg.min_q,
            count: -1,
            rng: SplitMix64::new(cfg.seed),
            flows,
            count_in_service: cfg.count_in_service,
            in_service: None,
            stats: FredStats::default(),
        })
    }

    pub fn avg(&self) -> f64 {
        self.est.avg()
    }

    pub fn count(&self) -> i64 {
        self.count
    }

    /// Flows with packets in the queue.
    pub fn active_flows(&self) -> usize {
        self.flows.len()
    }

    /// `avgcq`: the average per-active-flow queue, at least 1 packet.
    pub fn avgcq(&self) -> f64 {
        let n = self.flows.len();
        let a = if n > 0 {
            self.est.avg() / n as f64
        } else {
            self.est.avg()
        };
        a.max(1.0)
    }

    /// The state of `flow`, if it has packets queued.
    pub fn flow(&self, flow: u32) -> Option<FlowState> {
        self.flows.get(&flow).copied()
    }

    pub fn stats(&self) -> FredStats {
        self.stats
    }

    #[inline]
    fn release(&mut self, flow: u32) {
        if let Some(st) = self.flows.get_mut(&flow) {
            st.qlen -= 1;
            if st.qlen == 0 {
                self.flows.remove(&flow);
            }
        }
    }

    #[inline]
    fn drop_it(&mut self, pkt: Packet, drops: &mut Vec<Packet>) -> bool {
        self.count = 0;
        drops.push(pkt);
        false
    }
}

impl Discipline for Fred {
    fn enqueue(&mut self, now: Nanos, pkt: Packet, drops: &mut Vec<Packet>) -> bool {
        let avg = self.est.arrival(now, self.fifo.packets() as f64);
        let avgcq = self.avgcq();
        let st = self.flows.get(&pkt.flow).copied().unwrap_or_default();
        let qlen = st.qlen as f64;
        let over_max = avg >= self.curve.max_th;
        let maxq = if over_max { 2.0 } else { self.curve.min_th };

        // Block A/B: identify and manage non-adaptive flows.
        if qlen >= maxq || (over_max && qlen > 2.0 * avgcq) || (qlen >= avgcq && st.strike > 1) {
            if let Some(s) = self.flows.get_mut(&pkt.flow) {
                s.strike += 1;
            }
            self.stats.flow_limit += 1;
            return self.drop_it(pkt, drops);
        }
        // Block C: RED, against robust flows only.
        if avg < self.curve.min_th {
            self.count = -1;
        } else if over_max {
            self.stats.forced += 1;
            return self.drop_it(pkt, drops);
        } else {
            self.count += 1;
            if qlen >= self.min_q.max(avgcq) {
                let p = spaced(self.curve.p_b(avg), self.count);
                if self.rng.chance(p) {
                    self.stats.early += 1;
                    return self.drop_it(pkt, drops);
                }
            }
        }
        if self.fifo.is_full(pkt.bytes()) {
            self.stats.overflow += 1;
            return self.drop_it(pkt, drops);
        }
        let flow = pkt.flow;
        let ok = self.fifo.enqueue(now, pkt, drops);
        debug_assert!(ok);
        self.flows.entry(flow).or_default().qlen += 1;
        ok
    }

    fn dequeue(&mut self, now: Nanos, drops: &mut Vec<Packet>) -> Option<Packet> {
        let Some(pkt) = self.fifo.dequeue(now, drops) else {
            self.est.set_idle(now);
            return None;
        };
        if self.count_in_service {
            // The flow keeps the packet until its transmission ends.
            if let Some(prev) = self.in_service.replace(pkt.flow) {
                self.release(prev);
            }
        } else {
            self.release(pkt.flow);
        }
        self.est.sample(self.fifo.packets() as f64);
        Some(pkt)
    }

    fn transmit_done(&mut self, now: Nanos) {
        self.fifo.transmit_done(now);
        if let Some(flow) = self.in_service.take() {
            self.release(flow);
        }
        if self.fifo.waiting() == 0 {
            self.est.set_idle(now);
        }
    }

    occupancy_of_inner_fifo!();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PacketKind;

    const MS: Nanos = 1_000_000;

    /// w_q = 1 makes the average the occupancy last sampled, so every decision below
    /// can be worked by hand. max_p = 1e-12 keeps RED's random drops out of the way
    /// (p_a ≤ ~1e-11 for every count reached here).
    fn cfg() -> FredConfig {
        FredConfig {
            min_th: Some(4.0),
            max_th: Some(8.0),
            max_p: Some(1e-12),
            w_q: Some(1.0),
            limit: Some(100),
            limit_rule: FullRule::Ps,
            min_q: 2.0,
            mean_pkt_size: 1500,
            mean_pkt_time_ns: Some(MS),
            seed: 1,
            count_in_service: false,
        }
    }

    fn pkt(flow: u32, seq: u64) -> Packet {
        Packet::new(PacketKind::Cbr, flow, 1000, seq, 0)
    }

    const A: u32 = 1;
    const B: u32 = 2;
    const C: u32 = 3;

    #[test]
    fn strikes_and_per_flow_limits_on_a_crafted_sequence() {
        let mut q = Fred::new(&cfg(), 0).unwrap();
        let mut d = Vec::new();
        let mut seq = 0;
        let mut offer = |q: &mut Fred, flow: u32| {
            seq += 1;
            q.enqueue(0, pkt(flow, seq), &mut d)
        };
        // Flow A alone. Arrival k sees q = k−1 = qlen_A, avg = q, nactive = 1 (0 for the
        // first), avgcq = max(1, avg/nactive), maxq = min_th = 4.
        //   a1: qlen 0, avg 0                         → accept
        //   a2: qlen 1, avg 1, avgcq 1, strike 0      → accept
        //   a3, a4: qlen 2, 3 < maxq 4, avg < min_th  → accept
        //   a5: qlen 4 ≥ maxq 4                        → strike 1, drop
        //   a6: qlen 4 ≥ 4                             → strike 2, drop
        let got: Vec<bool> = (0..6).map(|_| offer(&mut q, A)).collect();
        assert_eq!(got, [true, true, true, true, false, false]);
        assert_eq!(q.flow(A), Some(FlowState { qlen: 4, strike: 2 }));
        assert_eq!(q.stats().flow_limit, 2);

        // Flow B arrives: avg 4 (in the band), nactive 1, avgcq 4. qlen_B = 0 passes the
        // non-adaptive test; RED applies only if qlen_B ≥ max(minq 2, avgcq 4): no.
        assert!(offer(&mut q, B));
        assert_eq!(q.active_flows(), 2);
        // The strike drops of a5 and a6 reset count to 0; B is the first arrival in the
        // band since, so count = 1.
        assert_eq!(q.count(), 1);

        // a7: q = 5, avg 5, avgcq 5/2 = 2.5; qlen_A 4 ≥ maxq 4 → strike 3, drop.
        assert!(!offer(&mut q, A));
        assert_eq!(q.flow(A).unwrap().strike, 3);

        // One departure (A's first packet): qlen_A = 3, q = 4, and the departure updates
        // the average to 4, so avgcq = 4/2 = 2.
        let p = q.dequeue(MS, &mut Vec::new()).unwrap();
        assert_eq!(p.flow, A);
        assert_eq!(q.avg(), 4.0);
        assert_eq!(q.avgcq(), 2.0);
        // a8: avg 4, qlen_A 3 < maxq 4, but qlen_A 3 ≥ avgcq 2 and strike 3 > 1: a flow
        // with strikes is held to the average per-flow share → strike 4, drop.
        assert!(!offer(&mut q, A));
        assert_eq!(q.flow(A), Some(FlowState { qlen: 3, strike: 4 }));

        // B has no strikes: b2 sees avg 4, avgcq 2, qlen_B 1 < max(2, 2) → accepted
        // without a RED test; b3 sees q 5, avgcq 2.5, qlen_B 2 < 2.5 → accepted;
        // b4 sees q 6, avgcq 3, qlen_B 3 ≥ 3 → RED test (p ≈ 1e-12) → accepted;
        // b5 sees q 7, avgcq 3.5, qlen_B 4 ≥ maxq 4 → B's first strike, drop.
        assert!(offer(&mut q, B));
        assert!(offer(&mut q, B));
        assert!(offer(&mut q, B));
        assert_eq!(q.flow(B), Some(FlowState { qlen: 4, strike: 0 }));
        assert!(!offer(&mut q, B));
        assert_eq!(q.flow(B), Some(FlowState { qlen: 4, strike: 1 }));

        // A newcomer C with nothing queued is still accepted at avg 7 < max_th.
        assert!(offer(&mut q, C));
        assert_eq!(q.active_flows(), 3);
        assert_eq!(q.waiting(), 3 + 4 + 1);
        assert_eq!(q.stats().early, 0);
    }

    #[test]
    fn over_max_th_maxq_drops_to_two_and_newcomers_are_forced_out() {
        // Eight flows with one packet each: arrivals see q = 0…7, all below maxq, avg < 8.
        let mut q = Fred::new(&cfg(), 0).unwrap();
        let mut d = Vec::new();
        for f in 0..8 {
            assert!(q.enqueue(0, pkt(10 + f, f as u64), &mut d), "flow {f}");
        }
        // avg = 8 ≥ max_th: maxq = 2, avgcq = 8/8 = 1.
        // A flow with 1 queued: 1 < maxq 2; 1 > 2·avgcq = 2? no; strike 0 → passes
        // the flow test, then avg ≥ max_th → forced drop (no strike).
        assert!(!q.enqueue(0, pkt(10, 100), &mut d));
        assert_eq!(q.stats().forced, 1);
        assert_eq!(q.flow(10), Some(FlowState { qlen: 1, strike: 0 }));
        assert_eq!(q.count(), 0);
        // A new flow is forced out as well.
        assert!(!q.enqueue(0, pkt(99, 101), &mut d));
        assert_eq!(q.stats().forced, 2);
        assert_eq!(q.flow(99), None);
    }

    #[test]
    fn flow_state_is_forgotten_when_its_last_packet_leaves() {
        let mut q = Fred::new(&cfg(), 0).unwrap();
        let mut d = Vec::new();
        for i in 0..6 {
            q.enqueue(0, pkt(A, i), &mut d); // 4 accepted, 2 strikes
        }
        assert_eq!(q.flow(A).unwrap().strike, 2);
        for t in 1..=4 {
            q.dequeue(t * MS, &mut d).unwrap();
        }
        assert_eq!(q.flow(A), None);
        assert_eq!(q.active_flows(), 0);
        // Departures sampled q = 3, 2, 1, 0: the average is 0 again.
        assert_eq!(q.avg(), 0.0);
        // A comes back with a clean slate.
        assert!(q.enqueue(5 * MS, pkt(A, 10), &mut d));
        assert_eq!(q.flow(A), Some(FlowState { qlen: 1, strike: 0 }));
    }

    #[test]
    fn red_random_drops_hit_only_flows_at_or_over_their_share() {
        // min_th 6, max_th 12, max_p 1, w_q 1: in the band p_b = (avg − 6)/6, and the
        // spacing makes p_a = 1 once count·p_b ≥ 1, so the outcome is certain.
        let mut c = cfg();
        c.min_th = Some(6.0);
        c.max_th = Some(12.0);
        c.max_p = Some(1.0);
        let mut q = Fred::new(&c, 0).unwrap();
        let mut d = Vec::new();
        let mut seq = 0;
        let mut offer = |q: &mut Fred, flow: u32| {
            seq += 1;
            q.enqueue(0, pkt(flow, seq), &mut d)
        };
        // A×3, then B, C, D: arrivals see q = 0…5 < min_th → all accepted (count −1).
        for f in [A, A, A, B, C, 4] {
            assert!(offer(&mut q, f));
        }
        assert_eq!(q.count(), -1);
        // A at avg 6: band, count 0, avgcq 6/4 = 1.5, qlen_A 3 ≥ max(2, 1.5) → tested,
        // but p_b = 0 at min_th → accepted (qlen_A 4).
        assert!(offer(&mut q, A));
        // B at avg 7: count 1, avgcq 1.75, qlen_B 1 < max(2, 1.75) → not tested.
        assert!(offer(&mut q, B));
        // A at avg 8: count 2, avgcq 2, qlen_A 4 ≥ 2 → tested: p_b = 2/6, count·p_b =
        // 2/3, p_a = (1/3)/(1/3) = 1 → dropped; count 0.
        assert!(!offer(&mut q, A));
        assert_eq!(q.count(), 0);
        // C at avg 8: count 1, qlen_C 1 < 2 → not tested, accepted.
        assert!(offer(&mut q, C));
        // A at avg 9: count 2, avgcq 9/4 = 2.25, qlen_A 4 ≥ 2.25 → p_b = 0.5,
        // count·p_b = 1 → p_a = 1 → dropped.
        assert!(!offer(&mut q, A));
        // D (qlen 1) and B (qlen 2 < avgcq 2.5 at avg 10) at the same or a higher
        // average are never tested: accepted.
        assert!(offer(&mut q, 4));
        assert!(offer(&mut q, B));
        assert_eq!(q.stats().early, 2);
        assert_eq!(q.stats().flow_limit, 0);
        assert_eq!(q.flow(A), Some(FlowState { qlen: 4, strike: 0 }));
        assert_eq!(q.flow(B), Some(FlowState { qlen: 3, strike: 0 }));
    }

    #[test]
    fn count_in_service_keeps_the_flow_active_until_transmission_ends() {
        let mut c = cfg();
        c.count_in_service = true;
        let mut q = Fred::new(&c, 0).unwrap();
        let mut d = Vec::new();
        q.enqueue(0, pkt(A, 0), &mut d);
        q.dequeue(0, &mut d).unwrap();
        assert_eq!(q.flow(A), Some(FlowState { qlen: 1, strike: 0 }));
        assert_eq!(q.packets(), 1);
        q.transmit_done(MS);
        assert_eq!(q.flow(A), None);
        assert_eq!(q.packets(), 0);
    }

    #[test]
    fn hasher_is_deterministic() {
        let h = |n: u32| {
            let mut s = FlowHasher::default();
            s.write_u32(n);
            s.finish()
        };
        assert_eq!(h(7), h(7));
        assert_ne!(h(7), h(8));
    }
}
