//! RED: Random Early Detection (Floyd & Jacobson, "Random Early Detection Gateways for
//! Congestion Avoidance", IEEE/ACM ToN 1(4), 1993), on one drop-tail FIFO.
//!
//! What it does, and where each rule comes from:
//!
//! * **Average.** On every arrival, `avg ← (1 − w_q)·avg + w_q·q`, with `q` the
//!   occupancy the arrival sees (packets, or bytes with `queue_in_bytes`) — the paper's
//!   detailed algorithm (its Fig. 2).
//! * **Idle decay.** If the queue was idle (nothing waiting and nothing on the wire),
//!   the arrival first applies `avg ← (1 − w_q)^m·avg` with `m = ⌊idle / s⌋`, `s` the
//!   transmission time of a typical packet: the average decays as though `m` packets
//!   had found the queue empty during the idle time (same algorithm). We then also
//!   apply the ordinary update with `q = 0`, as ns-2 does (`queue/red.cc`,
//!   `REDQueue::enque` calls `estimator(q, m + 1, …)`); the paper's pseudocode applies
//!   only the decay, one factor `(1 − w_q)` less. The idle period starts when the link
//!   asks for a packet and finds none (ns-2 `REDQueue::deque`, ALTQ `red_getq`), i.e.
//!   when the last transmission ends. `s` is `mean_pkt_time_ns`, or `mean_pkt_size` at
//!   the link rate.
//! * **Drop curve.** `p_b = max_p·(avg − min_th)/(max_th − min_th)` for
//!   `min_th ≤ avg < max_th`; every arrival is dropped when `avg ≥ max_th` (Fig. 2).
//!   **Gentle** (Floyd's 2000 recommendation, as in ns-2 `gentle_`,
//!   `REDQueue::calculate_p_new`): between `max_th` and `2·max_th`, `p_b` rises
//!   linearly from `max_p` to 1, and only `avg ≥ 2·max_th` forces a drop.
//! * **Byte mode** (`bytes`): `p_b ← p_b·len/mean_pkt_size` before the spacing, as in
//!   the paper's algorithm, which divides by the maximum packet size (ns-2 `modify_p`
//!   scales after the spacing and divides by `mean_pktsize_`). Our default
//!   `mean_pkt_size` is 1500, the MTU, i.e. the paper's rule.
//! * **Spacing.** `count` is the number of arrivals since the last drop while the
//!   average stayed in the band; `p_a = p_b/(1 − count·p_b)` (1 once `count·p_b ≥ 1`),
//!   which makes the gap between drops uniform on `1 … 1/p_b` instead of geometric (the
//!   paper's reason for the count; a test below checks it). As in the paper's
//!   pseudocode, `count` is −1 below `min_th`, incremented before use in the band, and
//!   reset to 0 by any drop (ns-2 and ALTQ also reset it on a hard-limit drop).
//! * **Hard limit** on the FIFO, with any [`FullRule`] (packets or bytes), checked after
//!   the early decision (ns-2 `enque`; ALTQ `red_addq`: `qlen ≥ qlimit`).
//!
//! Randomness comes from a [`SplitMix64`] seeded from the configuration: runs are
//! reproducible and no OS entropy is used.
//!
//! Where implementations differ from the paper (we follow the paper; ns-2 `red.cc` and
//! ALTQ `altq_red.c` were read for this, Linux and dummynet were not):
//! * ns-2 and ALTQ never drop early when the instantaneous queue holds at most one
//!   packet (`qlen > 1` guard), and treat the first arrival in the band as a crossing
//!   that only sets `count = 1` (no drop possible): the first drop after a crossing then
//!   falls uniformly on arrivals 2 … 1/p_b − 1 instead of 1 … 1/p_b. After a drop both
//!   agree with the paper.
//! * ALTQ's `drop_early` uses `p_a = p_b/(2 − count·p_b)`: gaps uniform on
//!   1 … 2/p_b − 1, half the paper's drop rate for the same `p_b`. ns-2's `wait_`
//!   option is 0 while `count·p_b < 1` and `p_b/(2 − count·p_b)` after. Neither is the
//!   paper's formula.
//! * ALTQ counts the idle time from the failed dequeue minus one packet time
//!   (`n = t/pkttime − 1`) and zeroes the average after 60 s idle.
//! * Linux `sch_red` (2.6.25) has no gentle mode and is reported to draw a uniform `R`
//!   after each drop and drop when `count·p_b` exceeds it (the same uniform-gap law).

//!
//! **ECN** (`ecn`; RFC 3168 §7, Floyd's "TCP and Explicit Congestion Notification",
//! 1994): a random (band) decision marks an ECN-capable arrival CE and queues it; a
//! Not-ECT one is dropped. At or above the forced level an ECN-capable arrival is marked
//! too, unless `harddrop` (Linux `sch_red`: `TC_RED_HARDDROP`) makes those drops.

use serde::{Deserialize, Serialize};

use crate::check;
use crate::config::{Described, HardLimit};
use crate::link_defaults::{self, Given, Params};
use crate::rng::SplitMix64;
use crate::{Discipline, DropTail, FullRule, Nanos, Packet};

fn default_rule() -> FullRule {
    FullRule::Ps
}
fn default_mean_pkt_size() -> u32 {
    1500
}

/// RED parameters, as carried by a scenario (JSON):
/// `{"kind": "red", "min_th": 5, "max_th": 15, "max_p": 0.1, "w_q": 0.002, "limit": 60,
///   "gentle": true, "bytes": false}`. Each of the first five left out is derived from
/// the link ([`crate::link_defaults`]: Adaptive RED's thresholds and weight, Floyd &
/// Jacobson's `max_p`, iproute2's limit/threshold ratio), so `{"kind": "red"}` works.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RedConfig {
    /// Thresholds on the average, in packets (bytes with `queue_in_bytes`).
    #[serde(default)]
    pub min_th: Option<f64>,
    #[serde(default)]
    pub max_th: Option<f64>,
    /// Drop probability reached at `max_th` (0 < max_p ≤ 1).
    #[serde(default)]
    pub max_p: Option<f64>,
    /// EWMA weight (0 < w_q ≤ 1).
    #[serde(default)]
    pub w_q: Option<f64>,
    /// Hard limit of the FIFO, in the unit of `limit_rule` (packets for `ps`).
    #[serde(default)]
    pub limit: Option<u64>,
    #[serde(default = "default_rule")]
    pub limit_rule: FullRule,
    /// Gentle variant: p rises from max_p to 1 between max_th and 2·max_th.
    #[serde(default)]
    pub gentle: bool,
    /// Byte mode: scale p_b by len / mean_pkt_size.
    #[serde(default)]
    pub bytes: bool,
    /// Measure the queue (and so the average and the thresholds) in bytes.
    #[serde(default)]
    pub queue_in_bytes: bool,
    /// Packet size used by byte mode and, with the link rate, for the idle time `s`.
    #[serde(default = "default_mean_pkt_size")]
    pub mean_pkt_size: u32,
    /// Transmission time of a typical packet, for the idle decay. When absent it is
    /// `mean_pkt_size·8 / link_rate`.
    #[serde(default)]
    pub mean_pkt_time_ns: Option<u64>,
    /// Seed of the drop decisions.
    #[serde(default)]
    pub seed: u64,
    /// Whether the packet in transmission counts as occupancy (see [`DropTail`]).
    #[serde(default)]
    pub count_in_service: bool,
    /// Mark ECN-capable arrivals CE instead of dropping them.
    #[serde(default)]
    pub ecn: bool,
    /// With `ecn`: drop, not mark, at or above the forced level.
    #[serde(default)]
    pub harddrop: bool,
}

impl Described for RedConfig {
    const DISPLAY: &'static str = "RED";
    const HARD_LIMIT: Option<HardLimit> = Some(HardLimit::packets("limit"));
}

impl RedConfig {
    /// RED with every parameter of its curve, weight and limit given.
    pub fn with(min_th: f64, max_th: f64, max_p: f64, w_q: f64, limit: u64) -> Self {
        RedConfig {
            min_th: Some(min_th),
            max_th: Some(max_th),
            max_p: Some(max_p),
            w_q: Some(w_q),
            limit: Some(limit),
            limit_rule: default_rule(),
            gentle: false,
            bytes: false,
            queue_in_bytes: false,
            mean_pkt_size: default_mean_pkt_size(),
            mean_pkt_time_ns: None,
            seed: 0,
            count_in_service: false,
            ecn: false,
            harddrop: false,
        }
    }

    /// The curve, weight and limit in force on a link of `link_rate_bps`: as given, the
    /// rest derived from the link.
    pub fn params(&self, link_rate_bps: u64) -> Result<Params, String> {
        let units = link_defaults::units(self.mean_pkt_size, self.queue_in_bytes, self.limit_rule);
        self.given()
            .complete(link_defaults::red, link_rate_bps, self.mean_pkt_size, units)
    }

    fn given(&self) -> Given {
        Given {
            min_th: self.min_th,
            max_th: self.max_th,
            max_p: self.max_p,
            w_q: self.w_q,
            limit: self.limit,
        }
    }

    /// Checks the parameters; `link_rate_bps` is needed unless `mean_pkt_time_ns` and
    /// every parameter with a link-derived default are given.
    pub fn validate(&self, link_rate_bps: u64) -> Result<(), String> {
        check::positive("mean_pkt_size", self.mean_pkt_size.into())?;
        let p = self.params(link_rate_bps)?;
        RedCurve {
            min_th: p.min_th,
            max_th: p.max_th,
            max_p: p.max_p,
            gentle: self.gentle,
        }
        .validate()?;
        check::fraction("w_q", p.w_q)?;
        check::limit("limit", p.limit)?;
        pkt_time_ns(self.mean_pkt_time_ns, self.mean_pkt_size, link_rate_bps).map(|_| ())
    }
}

/// The idle-decay time unit `s` in ns: explicit, or one `mean_pkt_size` at the link rate.
pub(crate) fn pkt_time_ns(
    explicit: Option<u64>,
    mean_pkt_size: u32,
    link_rate_bps: u64,
) -> Result<u64, String> {
    match explicit {
        Some(0) => Err("mean_pkt_time_ns: must be positive".into()),
        Some(t) => check::time("mean_pkt_time_ns", t).map(|()| t),
        None if link_rate_bps == 0 => {
            Err("mean_pkt_time_ns: needed for the idle decay where the link rate is not".into())
        }
        None => {
            Ok(((mean_pkt_size as u128 * 8 * 1_000_000_000) / link_rate_bps as u128).max(1) as u64)
        }
    }
}

/// `(1 − w)^m` by repeated squaring: only IEEE multiplications, so the result is the
/// same on every platform (unlike `powf`, which calls the system libm).
pub(crate) fn pow_one_minus(w: f64, mut m: u64) -> f64 {
    let mut base = 1.0 - w;
    let mut acc = 1.0;
    while m > 0 {
        if m & 1 == 1 {
            acc *= base;
        }
        base *= base;
        m >>= 1;
        if acc == 0.0 {
            break;
        }
    }
    acc
}

/// Exponentially weighted average of an occupancy, sampled at arrivals (and, for FRED,
/// departures), with RED's idle-time decay. Shared by RED, FRED and CBT.
#[derive(Debug, Clone)]
pub struct Ewma {
    w: f64,
    avg: f64,
    /// Idle-decay unit `s` in ns.
    pkt_time: u64,
    /// When the measured queue went idle, if it is idle.
    idle_since: Option<Nanos>,
}

impl Ewma {
    /// Starts idle at time 0 with average 0.
    pub fn new(w: f64, pkt_time_ns: u64) -> Self {
        Ewma {
            w,
            avg: 0.0,
            pkt_time: pkt_time_ns.max(1),
            idle_since: Some(0),
        }
    }

    pub fn avg(&self) -> f64 {
        self.avg
    }

    /// Sample at an arrival that sees occupancy `q`: decay for the idle time first.
    #[inline]
    pub fn arrival(&mut self, now: Nanos, q: f64) -> f64 {
        if let Some(t0) = self.idle_since.take() {
            let m = now.saturating_sub(t0) / self.pkt_time;
            self.avg *= pow_one_minus(self.w, m);
        }
        self.sample(q)
    }

    /// A plain sample (FRED's departure update), no idle handling.
    #[inline]
    pub fn sample(&mut self, q: f64) -> f64 {
        self.avg = (1.0 - self.w) * self.avg + self.w * q;
        self.avg
    }

    /// The measured queue became idle at `now` (kept if it already was).
    #[inline]
    pub fn set_idle(&mut self, now: Nanos) {
        if self.idle_since.is_none() {
            self.idle_since = Some(now);
        }
    }

    pub fn is_idle(&self) -> bool {
        self.idle_since.is_some()
    }
}

/// RED's drop-probability curve.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RedCurve {
    pub min_th: f64,
    pub max_th: f64,
    pub max_p: f64,
    pub gentle: bool,
}

impl RedCurve {
    pub fn validate(&self) -> Result<(), String> {
        check::non_negative("min_th", self.min_th)?;
        if !(self.max_th.is_finite() && self.max_th > self.min_th) {
            return Err(format!(
                "max_th: must be above min_th ({}), got {}",
                self.min_th, self.max_th
            ));
        }
        check::fraction("max_p", self.max_p)
    }

    /// Whether `avg` forces a drop: `avg ≥ max_th`, or `≥ 2·max_th` when gentle.
    #[inline]
    pub fn forced(&self, avg: f64) -> bool {
        if self.gentle {
            avg >= 2.0 * self.max_th
        } else {
            avg >= self.max_th
        }
    }

    /// `p_b` for `avg` (before byte scaling and spacing): 0 below `min_th`, linear to
    /// `max_p` at `max_th`, then (gentle) linear to 1 at `2·max_th`, else 1.
    #[inline]
    pub fn p_b(&self, avg: f64) -> f64 {
        if avg < self.min_th {
            0.0
        } else if avg < self.max_th {
            self.max_p * (avg - self.min_th) / (self.max_th - self.min_th)
        } else if self.gentle && avg < 2.0 * self.max_th {
            self.max_p + (1.0 - self.max_p) * (avg - self.max_th) / self.max_th
        } else {
            1.0
        }
    }
}

/// Count-based spacing: `p_a = p_b/(1 − count·p_b)`, 1 once `count·p_b ≥ 1`.
#[inline]
pub fn spaced(p_b: f64, count: i64) -> f64 {
    let c = count.max(0) as f64;
    let d = 1.0 - c * p_b;
    if d <= 0.0 {
        1.0
    } else {
        (p_b / d).min(1.0)
    }
}

/// Outcome of RED's early test for one arrival.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    /// Random drop in the band.
    Early,
    /// Average at or over the forced-drop level.
    Forced,
}

/// RED's decision state: curve, byte mode, `count` and the generator. The average is
/// kept by the caller (RED: the whole queue; CBT: the TCP class).
#[derive(Debug, Clone)]
pub(crate) struct RedCore {
    pub curve: RedCurve,
    pub bytes: bool,
    pub mean_pkt_size: u32,
    pub count: i64,
    pub rng: SplitMix64,
}

impl RedCore {
    pub fn new(curve: RedCurve, bytes: bool, mean_pkt_size: u32, seed: u64) -> Self {
        RedCore {
            curve,
            bytes,
            mean_pkt_size,
            count: -1,
            rng: SplitMix64::new(seed),
        }
    }

    /// The probability an arrival of `len` bytes is dropped at `avg` given the current
    /// `count` (already incremented for this arrival).
    #[inline]
    pub fn p_a(&self, avg: f64, len: u32) -> f64 {
        let mut p_b = self.curve.p_b(avg);
        if self.bytes {
            p_b = (p_b * len as f64 / self.mean_pkt_size as f64).min(1.0);
        }
        spaced(p_b, self.count)
    }

    /// Paper Fig. 2 for one arrival. Resets `count` on a drop.
    #[inline]
    pub fn decide(&mut self, avg: f64, len: u32) -> Verdict {
        if avg < self.curve.min_th {
            self.count = -1;
            Verdict::Pass
        } else if self.curve.forced(avg) {
            self.count = 0;
            Verdict::Forced
        } else {
            self.count += 1;
            let p = self.p_a(avg, len);
            if self.rng.chance(p) {
                self.count = 0;
                Verdict::Early
            } else {
                Verdict::Pass
            }
        }
    }
}

/// Drop counters by cause.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RedStats {
    /// Random drops in the band.
    pub early: u64,
    /// Drops because the average was at or over the forced level.
    pub forced: u64,
    /// Drops at the hard limit.
    pub overflow: u64,
    /// CE marks in the band, and at or above the forced level.
    pub early_marked: u64,
    pub forced_marked: u64,
}

/// RED on a drop-tail FIFO.
#[derive(Debug, Clone)]
pub struct Red {
    fifo: DropTail,
    est: Ewma,
    core: RedCore,
    queue_in_bytes: bool,
    ecn: bool,
    harddrop: bool,
    stats: RedStats,
}

impl Red {
    /// Builds RED for a link of `link_rate_bps` (used for the idle decay unless the
    /// configuration gives `mean_pkt_time_ns`).
    pub fn new(cfg: &RedConfig, link_rate_bps: u64) -> Result<Self, String> {
        cfg.validate(link_rate_bps)?;
        let s = pkt_time_ns(cfg.mean_pkt_time_ns, cfg.mean_pkt_size, link_rate_bps)?;
        let p = cfg.params(link_rate_bps)?;
        let curve = RedCurve {
            min_th: p.min_th,
            max_th: p.max_th,
            max_p: p.max_p,
            gentle: cfg.gentle,
        };
        Ok(Red {
            fifo: DropTail::new(cfg.limit_rule, p.limit, cfg.count_in_service),
            est: Ewma::new(p.w_q, s),
            core: RedCore::new(curve, cfg.bytes, cfg.mean_pkt_size, cfg.seed),
            queue_in_bytes: cfg.queue_in_bytes,
            ecn: cfg.ecn,
            harddrop: cfg.harddrop,
            stats: RedStats::default(),
        })
    }

    /// The average queue as of the last arrival.
    pub fn avg(&self) -> f64 {
        self.est.avg()
    }

    /// Arrivals since the last drop in the band (−1 below `min_th`).
    pub fn count(&self) -> i64 {
        self.core.count
    }

    pub fn stats(&self) -> RedStats {
        self.stats
    }

    pub fn curve(&self) -> RedCurve {
        self.core.curve
    }

    /// The probability RED would drop an arrival of `len` bytes at average `avg` with
    /// `count` arrivals since the last drop (for inspection and tests).
    pub fn drop_probability(&self, avg: f64, count: i64, len: u32) -> f64 {
        let mut core = self.core.clone();
        core.count = count;
        core.p_a(avg, len)
    }

    #[inline]
    fn occupancy(&self) -> f64 {
        if self.queue_in_bytes {
            self.fifo.bytes() as f64
        } else {
            self.fifo.packets() as f64
        }
    }
}

impl Discipline for Red {
    fn enqueue(&mut self, now: Nanos, mut pkt: Packet, drops: &mut Vec<Packet>) -> bool {
        let q = self.occupancy();
        let avg = self.est.arrival(now, q);
        let ecn = self.ecn;
        match self.core.decide(avg, pkt.bytes()) {
            Verdict::Early if ecn && pkt.mark_ce() => self.stats.early_marked += 1,
            Verdict::Forced if ecn && !self.harddrop && pkt.mark_ce() => {
                self.stats.forced_marked += 1
            }
            Verdict::Early => {
                self.stats.early += 1;
                drops.push(pkt);
                return false;
            }
            Verdict::Forced => {
                self.stats.forced += 1;
                drops.push(pkt);
                return false;
            }
            Verdict::Pass => {}
        }
        if self.fifo.is_full(pkt.bytes()) {
            self.core.count = 0;
            self.stats.overflow += 1;
            drops.push(pkt);
            return false;
        }
        self.fifo.enqueue(now, pkt, drops)
    }

    fn dequeue(&mut self, now: Nanos, drops: &mut Vec<Packet>) -> Option<Packet> {
        let p = self.fifo.dequeue(now, drops);
        if p.is_none() {
            // The link asked for work and found none: the idle period starts.
            self.est.set_idle(now);
        }
        p
    }

    fn transmit_done(&mut self, now: Nanos) {
        self.fifo.transmit_done(now);
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

    fn cfg() -> RedConfig {
        RedConfig {
            mean_pkt_time_ns: Some(MS),
            seed: 1,
            ..RedConfig::with(5.0, 15.0, 0.1, 0.002, 60)
        }
    }

    fn pkt(len: u32, seq: u64) -> Packet {
        Packet::new(PacketKind::Data, 0, len, seq, 0)
    }

    #[test]
    fn average_after_arrivals_and_an_idle_period() {
        // w_q = 1/2 keeps every value dyadic, so the comparisons are exact.
        // Thresholds far away: nothing is dropped.
        let mut c = cfg();
        c.w_q = Some(0.5);
        c.min_th = Some(100.0);
        c.max_th = Some(200.0);
        c.limit = Some(1000);
        let mut q = Red::new(&c, 0).unwrap();
        let mut d = Vec::new();
        // Four arrivals at t = 0 with no departure see q = 0, 1, 2, 3:
        //   avg = 0.5·0 + 0.5·0 = 0
        //   avg = 0.5·0 + 0.5·1 = 0.5
        //   avg = 0.5·0.5 + 0.5·2 = 1.25
        //   avg = 0.5·1.25 + 0.5·3 = 2.125
        let want = [0.0, 0.5, 1.25, 2.125];
        for (i, w) in want.iter().enumerate() {
            assert!(q.enqueue(0, pkt(1500, i as u64), &mut d));
            assert_eq!(q.avg(), *w);
        }
        // Departures do not move RED's average.
        for t in 1..=4 {
            q.dequeue(t * MS, &mut d).unwrap();
            q.transmit_done((t + 1) * MS);
        }
        assert_eq!(q.avg(), 2.125);
        // The last transmission ended at 5 ms with nothing waiting: idle from 5 ms.
        // An arrival at 8.5 ms: m = ⌊3.5 ms / 1 ms⌋ = 3, avg = 2.125·0.5³ = 0.265625,
        // then the ordinary update with q = 0: 0.5·0.265625 = 0.1328125.
        assert!(q.enqueue(8 * MS + MS / 2, pkt(1500, 9), &mut d));
        assert_eq!(q.avg(), 0.1328125);
        assert!(d.is_empty());
    }

    #[test]
    fn idle_starts_when_the_link_finds_nothing_to_send() {
        // The same, but the link polls an empty queue at 6 ms (dequeue → None) without a
        // transmit_done: idle from 6 ms. Arrival at 8 ms: m = 2, avg = 1·0.5²·0.5.
        let mut c = cfg();
        c.w_q = Some(0.5);
        c.min_th = Some(100.0);
        c.max_th = Some(200.0);
        let mut q = Red::new(&c, 0).unwrap();
        let mut d = Vec::new();
        q.enqueue(0, pkt(1500, 0), &mut d); // avg 0
        q.enqueue(0, pkt(1500, 1), &mut d); // avg 0.5·1 = 0.5
        q.enqueue(0, pkt(1500, 2), &mut d); // avg 0.25 + 1 = 1.25
        q.dequeue(MS, &mut d).unwrap();
        q.dequeue(2 * MS, &mut d).unwrap();
        q.dequeue(3 * MS, &mut d).unwrap();
        // Not idle yet: an arrival at 4 ms sees an empty queue but a busy link,
        // so no decay: avg = 0.5·1.25 + 0 = 0.625.
        q.enqueue(4 * MS, pkt(1500, 3), &mut d);
        assert_eq!(q.avg(), 0.625);
        q.dequeue(5 * MS, &mut d).unwrap();
        assert!(q.dequeue(6 * MS, &mut d).is_none());
        q.enqueue(8 * MS, pkt(1500, 4), &mut d);
        // 0.625·0.25 = 0.15625, then ·0.5 = 0.078125.
        assert_eq!(q.avg(), 0.078125);
    }

    #[test]
    fn idle_decay_unit_from_the_link_rate() {
        // 1500 B at 1.5 Mbit/s: s = 1500·8/1.5e6 s = 8 ms.
        let mut c = cfg();
        c.mean_pkt_time_ns = None;
        assert_eq!(
            pkt_time_ns(c.mean_pkt_time_ns, c.mean_pkt_size, 1_500_000),
            Ok(8 * MS)
        );
        assert!(Red::new(&c, 0).is_err());
        c.w_q = Some(0.5);
        c.min_th = Some(100.0);
        c.max_th = Some(200.0);
        let mut q = Red::new(&c, 1_500_000).unwrap();
        let mut d = Vec::new();
        q.enqueue(0, pkt(1500, 0), &mut d); // 0
        q.enqueue(0, pkt(1500, 1), &mut d); // 0.5
        q.dequeue(0, &mut d);
        q.dequeue(0, &mut d);
        assert!(q.dequeue(0, &mut d).is_none());
        // 20 ms idle: m = ⌊20/8⌋ = 2 → 0.5·0.25 = 0.125, then ·0.5 = 0.0625.
        q.enqueue(20 * MS, pkt(1500, 2), &mut d);
        assert_eq!(q.avg(), 0.0625);
    }

    #[test]
    fn pow_one_minus_is_exact_for_dyadic_weights() {
        assert_eq!(pow_one_minus(0.5, 0), 1.0);
        assert_eq!(pow_one_minus(0.5, 1), 0.5);
        assert_eq!(pow_one_minus(0.5, 10), 1.0 / 1024.0);
        assert_eq!(pow_one_minus(0.25, 3), 27.0 / 64.0);
        assert_eq!(pow_one_minus(1.0, 5), 0.0);
        // (1 − 1/512)^512 ≈ e^(−1)·(1 − 1/1024) ≈ 0.367520; check against the series.
        let v = pow_one_minus(1.0 / 512.0, 512);
        assert!((v - 0.367_520).abs() < 1e-5, "{v}");
        assert_eq!(pow_one_minus(0.002, u64::MAX), 0.0);
    }

    #[test]
    fn p_b_and_p_a_for_given_average_and_count() {
        let q = Red::new(&cfg(), 0).unwrap();
        // min 5, max 15, max_p 0.1. avg = 10: p_b = 0.1·(10 − 5)/(15 − 5) = 0.05.
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        assert!(close(q.curve().p_b(10.0), 0.05));
        // count 0 → p_a = p_b = 0.05.
        assert!(close(q.drop_probability(10.0, 0, 1500), 0.05));
        // count 10 → 0.05/(1 − 0.5) = 0.1.
        assert!(close(q.drop_probability(10.0, 10, 1500), 0.1));
        // count 18 → 0.05/(1 − 0.9) = 0.5.
        assert!(close(q.drop_probability(10.0, 18, 1500), 0.5));
        // count 20: count·p_b = 1 → certain drop; 25 likewise.
        assert_eq!(q.drop_probability(10.0, 20, 1500), 1.0);
        assert_eq!(q.drop_probability(10.0, 25, 1500), 1.0);
        // avg = 7.5: p_b = 0.1·2.5/10 = 0.025; count 20 → 0.025/(1 − 0.5) = 0.05.
        assert!(close(q.drop_probability(7.5, 20, 1500), 0.05));
        // Below min_th nothing; at min_th exactly p_b = 0.
        assert_eq!(q.curve().p_b(4.99), 0.0);
        assert_eq!(q.curve().p_b(5.0), 0.0);
        // Without gentle, avg ≥ max_th forces a drop.
        assert!(q.curve().forced(15.0));
        assert!(!q.curve().forced(14.99));
    }

    #[test]
    fn gentle_region() {
        let mut c = cfg();
        c.gentle = true;
        let q = Red::new(&c, 0).unwrap();
        let curve = q.curve();
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        // At max_th = 15: p_b = max_p = 0.1 (continuous with the band).
        assert!(close(curve.p_b(15.0), 0.1));
        // Halfway to 2·max_th (22.5): 0.1 + 0.9·7.5/15 = 0.55.
        assert!(close(curve.p_b(22.5), 0.55));
        // 27: 0.1 + 0.9·12/15 = 0.82.
        assert!(close(curve.p_b(27.0), 0.82));
        // Forced only from 2·max_th = 30 on.
        assert!(!curve.forced(29.99));
        assert!(curve.forced(30.0));
        assert_eq!(curve.p_b(30.0), 1.0);
        // Spacing applies in the gentle region too: avg 16.5 → p_b = 0.1 + 0.9·1.5/15
        // = 0.19; count 1 → 0.19/(1 − 0.19) = 0.19/0.81. At 22.5 with count 1,
        // 0.55/(1 − 0.55) > 1, so the drop is certain.
        assert!(close(curve.p_b(16.5), 0.19));
        assert!(close(q.drop_probability(16.5, 1, 1500), 0.19 / 0.81));
        assert_eq!(q.drop_probability(22.5, 1, 1500), 1.0);
        // Non-gentle: everything from 15 on is forced.
        assert!(Red::new(&cfg(), 0).unwrap().curve().forced(15.0));
    }

    #[test]
    fn byte_mode_scales_p_b_by_size() {
        let mut c = cfg();
        c.bytes = true;
        c.mean_pkt_size = 1500;
        let q = Red::new(&c, 0).unwrap();
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        // avg 10 → p_b = 0.05. A 1500-byte packet: ×1500/1500 → 0.05.
        assert!(close(q.drop_probability(10.0, 0, 1500), 0.05));
        // A 186-byte VoIP packet: 0.05·186/1500 = 0.0062.
        assert!(close(q.drop_probability(10.0, 0, 186), 0.0062));
        // …spaced with count 10: 0.0062/(1 − 10·0.0062) = 0.0062/0.938.
        assert!(close(q.drop_probability(10.0, 10, 186), 0.0062 / 0.938));
        // A 52-byte ACK: 0.05·52/1500 = 0.0017333…
        assert!(close(q.drop_probability(10.0, 0, 52), 0.05 * 52.0 / 1500.0));
        // Packet mode ignores the size.
        let p = Red::new(&cfg(), 0).unwrap();
        assert!(close(p.drop_probability(10.0, 0, 186), 0.05));
    }

    #[test]
    fn drop_gaps_are_uniform_up_to_one_over_p_b() {
        // p_b = 1/16 (min 0, max 16, max_p 1/8, avg 8). After a drop, the k-th arrival
        // is dropped with p_b/(1 − k·p_b), so the gap is uniform on 1…15 (each with
        // probability p_b/(1 − p_b) = 1/15): mean 8, never more than 15.
        let curve = RedCurve {
            min_th: 0.0,
            max_th: 16.0,
            max_p: 0.125,
            gentle: false,
        };
        assert_eq!(curve.p_b(8.0), 0.0625);
        let mut core = RedCore::new(curve, false, 1500, 7);
        let mut gaps = Vec::new();
        let mut since = 0u32;
        let mut first = true;
        for _ in 0..200_000 {
            since += 1;
            if core.decide(8.0, 1500) == Verdict::Early {
                if !first {
                    gaps.push(since);
                }
                first = false;
                since = 0;
            }
        }
        assert!(gaps.iter().all(|&g| (1..=15).contains(&g)));
        let mean = gaps.iter().map(|&g| g as f64).sum::<f64>() / gaps.len() as f64;
        // ~25 000 gaps, sd of the mean ≈ 4.3/158 ≈ 0.03.
        assert!((mean - 8.0).abs() < 0.15, "{mean}");
        for g in 1..=15 {
            let n = gaps.iter().filter(|&&x| x == g).count() as f64 / gaps.len() as f64;
            assert!((n - 1.0 / 15.0).abs() < 0.01, "gap {g}: {n}");
        }
    }

    #[test]
    fn decisions_on_a_crafted_sequence() {
        // w_q = 1: the average is the occupancy the arrival sees. min 2, max 4, limit 10,
        // max_p tiny so the band never drops in practice (p ≤ 1e-12 for these counts).
        let mut c = cfg();
        c.w_q = Some(1.0);
        c.min_th = Some(2.0);
        c.max_th = Some(4.0);
        c.max_p = Some(1e-12);
        c.limit = Some(10);
        let mut q = Red::new(&c, 0).unwrap();
        let mut d = Vec::new();
        // Arrivals see q = 0, 1 (below min: count −1), 2, 3 (band: count 0, 1),
        // then 4 = max_th: forced, and every later arrival too (q stays 4).
        let got: Vec<bool> = (0..6).map(|i| q.enqueue(0, pkt(1500, i), &mut d)).collect();
        assert_eq!(got, [true, true, true, true, false, false]);
        assert_eq!(
            q.stats(),
            RedStats {
                early: 0,
                forced: 2,
                overflow: 0,
                ..RedStats::default()
            }
        );
        assert_eq!(q.count(), 0);
        // One departure: q = 3 is back in the band, count 0 → 1.
        q.dequeue(MS, &mut d).unwrap();
        assert!(q.enqueue(MS, pkt(1500, 6), &mut d));
        assert_eq!(q.count(), 1);
    }

    #[test]
    fn gentle_decisions_are_random_not_forced_below_twice_max_th() {
        // min 2, max 4, max_p 0.1, gentle: between 4 and 8 the core draws, from 8 on it
        // forces. At 4.4: p_b = 0.1 + 0.9·0.4/4 = 0.19.
        let curve = RedCurve {
            min_th: 2.0,
            max_th: 4.0,
            max_p: 0.1,
            gentle: true,
        };
        assert!((curve.p_b(4.4) - 0.19).abs() < 1e-12);
        let mut core = RedCore::new(curve, false, 1500, 3);
        let (mut pass, mut early) = (0, 0);
        for i in 0..10_000 {
            let avg = 4.0 + (i % 400) as f64 / 100.0; // 4.00 … 7.99
            match core.decide(avg, 1500) {
                Verdict::Forced => panic!("forced at {avg} < 2·max_th"),
                Verdict::Pass => pass += 1,
                Verdict::Early => early += 1,
            }
        }
        assert!(pass > 0 && early > 0);
        assert_eq!(core.decide(8.0, 1500), Verdict::Forced);
        assert_eq!(core.decide(9.0, 1500), Verdict::Forced);
        assert_eq!(core.count, 0);
        // Without gentle the same averages are all forced.
        let mut hard = RedCore::new(
            RedCurve {
                gentle: false,
                ..curve
            },
            false,
            1500,
            3,
        );
        assert_eq!(hard.decide(4.0, 1500), Verdict::Forced);
        assert_eq!(hard.decide(7.99, 1500), Verdict::Forced);
    }

    #[test]
    fn hard_limit_in_bytes_and_count_reset() {
        // Thresholds out of reach; FB-strict 3000-byte limit.
        let mut c = cfg();
        c.min_th = Some(100.0);
        c.max_th = Some(200.0);
        c.limit = Some(3000);
        c.limit_rule = FullRule::FbStrict;
        let mut q = Red::new(&c, 0).unwrap();
        let mut d = Vec::new();
        let got: Vec<bool> = [1500, 1500, 186]
            .iter()
            .enumerate()
            .map(|(i, &l)| q.enqueue(0, pkt(l, i as u64), &mut d))
            .collect();
        assert_eq!(got, [true, true, false]);
        assert_eq!(q.stats().overflow, 1);
        assert_eq!(q.count(), 0);
        assert_eq!(q.bytes(), 3000);
    }

    #[test]
    fn queue_in_bytes_uses_bytes_for_the_average() {
        let mut c = cfg();
        c.queue_in_bytes = true;
        c.w_q = Some(0.5);
        c.min_th = Some(100_000.0);
        c.max_th = Some(200_000.0);
        let mut q = Red::new(&c, 0).unwrap();
        let mut d = Vec::new();
        q.enqueue(0, pkt(1500, 0), &mut d); // sees 0 B: avg 0
        q.enqueue(0, pkt(186, 1), &mut d); // sees 1500 B: avg 750
        q.enqueue(0, pkt(52, 2), &mut d); // sees 1686 B: avg 375 + 843 = 1218
        assert_eq!(q.avg(), 1218.0);
    }

    #[test]
    fn invalid_configurations_are_refused() {
        let bad = |f: &dyn Fn(&mut RedConfig)| {
            let mut c = cfg();
            f(&mut c);
            Red::new(&c, 1_000_000).is_err()
        };
        assert!(bad(&|c| c.max_th = c.min_th));
        assert!(bad(&|c| c.max_p = Some(0.0)));
        assert!(bad(&|c| c.max_p = Some(1.5)));
        assert!(bad(&|c| c.w_q = Some(0.0)));
        assert!(bad(&|c| c.w_q = Some(2.0)));
        assert!(bad(&|c| c.limit = Some(0)));
        assert!(bad(&|c| c.mean_pkt_time_ns = Some(0)));
        assert!(!bad(&|_| ()));
    }
}
