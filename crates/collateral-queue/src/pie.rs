//! PIE: Proportional Integral controller Enhanced (Pan et al.; RFC 8033), following
//! Linux `net/sched/sch_pie.c` and `include/net/pie.h` with its default per-packet
//! timestamps.
//!
//! * **Delay.** `qdelay` is the sojourn time of the last packet dequeued (`now −
//!   Packet::arrived`), or 0 when that dequeue emptied the queue (Linux
//!   `pie_process_dequeue` without the departure-rate estimator).
//! * **Drop probability**, every `tupdate` (15 ms): `p += α·(qdelay − target) +
//!   β·(qdelay − qdelay_old)` with delays in seconds, `α = 0.125`, `β = 1.25` (RFC 8033
//!   §4.2). While `p < 10 %`, α and β are halved, and divided by 4 more for each decade
//!   `p` is below 1 %, down to 0.0001 % (÷2048: the auto-tuning of RFC 8033 §5.2). With
//!   `p ≥ 10 %` a step is capped at +2 %; a delay over 250 ms adds 2 %; `p` stays in
//!   [0, 1]. Two periods in a row with no delay decay `p` by 1/64. When `p` is 0 and
//!   both delays are under `target/2`, the burst allowance is restored.
//! * **Enqueue.** A full queue (`limit` packets) drops. Otherwise no early drop while
//!   burst allowance remains (150 ms, used up by the time between dequeues), while
//!   `qdelay < target/2` and `p < 20 %`, or while less than two MTUs are queued.
//!   Otherwise the *derandomised* drop of RFC 8033 §5.1: `accu += p`; no drop while
//!   `accu < 0.85`, a certain drop at `accu ≥ 8.5`, else a drop with probability `p`;
//!   any drop resets `accu`. Byte mode scales `p` by `len/mtu`.
//!
//! The periodic update runs lazily: before each enqueue or dequeue at `now`, every
//! update due at or before `now` is applied. `qdelay` and the backlog change only at
//! enqueues and dequeues, so this gives the same probabilities as a timer would.
//! Probabilities are `f64` (Linux: 32-bit fixed point).
//!
//! **ECN** (`ecn`, off by default as in `tc … pie`): an early drop of an ECN-capable
//! packet becomes a CE mark while `p ≤ 10 %`; above that it is dropped (RFC 8033 §5.1;
//! Linux `pie_qdisc_enqueue`, which leaves the derandomisation accumulator as it is
//! after a mark and resets it after a drop).

use serde::{Deserialize, Serialize};

use crate::check;
use crate::config::{Described, HardLimit};
use crate::rng::SplitMix64;
use crate::{Discipline, DropTail, FullRule, Nanos, Packet};

const MS: Nanos = 1_000_000;

fn default_target() -> Nanos {
    15 * MS
}
fn default_tupdate() -> Nanos {
    15 * MS
}
fn default_alpha() -> f64 {
    0.125
}
fn default_beta() -> f64 {
    1.25
}
fn default_burst() -> Nanos {
    150 * MS
}
fn default_limit() -> u64 {
    1000
}
fn default_mtu() -> u32 {
    1500
}

/// PIE's parameters (RFC 8033 / Linux defaults).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PieConfig {
    #[serde(default = "default_target")]
    pub target_ns: Nanos,
    #[serde(default = "default_tupdate")]
    pub tupdate_ns: Nanos,
    /// Gains per second of delay (RFC 8033: 0.125 and 1.25).
    #[serde(default = "default_alpha")]
    pub alpha: f64,
    #[serde(default = "default_beta")]
    pub beta: f64,
    #[serde(default = "default_burst")]
    pub max_burst_ns: Nanos,
    /// Packets held at most.
    #[serde(default = "default_limit")]
    pub limit: u64,
    #[serde(default = "default_mtu")]
    pub mtu: u32,
    #[serde(default)]
    pub bytemode: bool,
    /// Mark ECN-capable packets CE instead of dropping them while `p ≤ 10 %`.
    #[serde(default)]
    pub ecn: bool,
    #[serde(default)]
    pub seed: u64,
}

impl Described for PieConfig {
    const DISPLAY: &'static str = "PIE";
    const HARD_LIMIT: Option<HardLimit> = Some(HardLimit::packets("limit"));
}

impl Default for PieConfig {
    fn default() -> Self {
        PieConfig {
            target_ns: default_target(),
            tupdate_ns: default_tupdate(),
            alpha: default_alpha(),
            beta: default_beta(),
            max_burst_ns: default_burst(),
            limit: default_limit(),
            mtu: default_mtu(),
            bytemode: false,
            ecn: false,
            seed: 0,
        }
    }
}

impl PieConfig {
    pub fn validate(&self) -> Result<(), String> {
        check::positive("target_ns", self.target_ns)?;
        check::positive("tupdate_ns", self.tupdate_ns)?;
        for (key, v) in [
            ("target_ns", self.target_ns),
            ("tupdate_ns", self.tupdate_ns),
            ("max_burst_ns", self.max_burst_ns),
        ] {
            check::time(key, v)?;
        }
        check::non_negative("alpha", self.alpha)?;
        check::non_negative("beta", self.beta)?;
        check::limit("limit", self.limit)?;
        check::positive("mtu", self.mtu.into())
    }
}

/// PIE's state (Linux `pie_vars` names).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PieVars {
    pub prob: f64,
    pub qdelay: Nanos,
    pub qdelay_old: Nanos,
    pub burst_time: Nanos,
    pub accu_prob: f64,
    /// Time of the last dequeue (`None` until one, and after a reset).
    pub dq_tstamp: Option<Nanos>,
    /// When the next periodic update is due (0: the timer starts at the first event,
    /// as the qdisc's timer starts when it is created).
    pub next_update: Nanos,
}

/// Drops per cause.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PieStats {
    pub early: u64,
    pub overflow: u64,
    /// Early drops turned into CE marks.
    pub marked: u64,
}

/// PIE on one drop-tail FIFO.
#[derive(Debug, Clone)]
pub struct Pie {
    cfg: PieConfig,
    fifo: DropTail,
    vars: PieVars,
    rng: SplitMix64,
    stats: PieStats,
}

impl Pie {
    pub fn new(cfg: &PieConfig) -> Result<Self, String> {
        cfg.validate()?;
        Ok(Pie {
            cfg: *cfg,
            fifo: DropTail::new(FullRule::Ps, cfg.limit, false),
            vars: PieVars {
                prob: 0.0,
                qdelay: 0,
                qdelay_old: 0,
                burst_time: cfg.max_burst_ns,
                accu_prob: 0.0,
                dq_tstamp: None,
                next_update: 0,
            },
            rng: SplitMix64::new(cfg.seed),
            stats: PieStats::default(),
        })
    }

    pub fn vars(&self) -> PieVars {
        self.vars
    }

    /// Test access: set the state.
    pub fn set_vars(&mut self, v: PieVars) {
        self.vars = v;
    }

    pub fn stats(&self) -> PieStats {
        self.stats
    }

    /// Linux `pie_calculate_probability` (timestamp mode), `backlog` in bytes.
    pub fn calculate_probability(&mut self, backlog: u64) {
        let c = &self.cfg;
        let v = &mut self.vars;
        let secs = |ns: Nanos| ns as f64 / 1e9;
        let mut update_prob = !(v.qdelay == 0 && backlog != 0);
        let (mut alpha, mut beta) = (c.alpha, c.beta);
        if v.prob < 0.1 {
            alpha /= 2.0;
            beta /= 2.0;
            let mut power = 100.0;
            while v.prob < 1.0 / power && power <= 1e6 {
                alpha /= 4.0;
                beta /= 4.0;
                power *= 10.0;
            }
        }
        let mut delta = alpha * (secs(v.qdelay) - secs(c.target_ns))
            + beta * (secs(v.qdelay) - secs(v.qdelay_old));
        if delta > 0.02 && v.prob >= 0.1 {
            delta = 0.02;
        }
        if v.qdelay > 250 * MS {
            delta += 0.02;
        }
        v.prob += delta;
        if v.prob >= 1.0 {
            v.prob = 1.0;
            update_prob = false;
        } else if v.prob < 0.0 {
            v.prob = 0.0;
        }
        if v.qdelay == 0 && v.qdelay_old == 0 && update_prob {
            v.prob -= v.prob / 64.0;
        }
        if v.qdelay < c.target_ns / 2 && v.qdelay_old < c.target_ns / 2 && v.prob == 0.0 {
            v.burst_time = c.max_burst_ns;
            v.dq_tstamp = None;
            v.accu_prob = 0.0;
        }
        v.qdelay_old = v.qdelay;
    }

    /// Runs every periodic update due by `now`. After a very long quiet spell (over
    /// 10 000 periods, 150 s at the default) the rest are skipped: by then an empty
    /// queue has decayed `p` to nothing and reset the state anyway.
    #[inline]
    fn catch_up(&mut self, now: Nanos) {
        if self.vars.next_update == 0 {
            self.vars.next_update = now + self.cfg.tupdate_ns;
        }
        let mut n = 0;
        while self.vars.next_update <= now {
            self.calculate_probability(self.fifo.bytes());
            self.vars.next_update += self.cfg.tupdate_ns;
            n += 1;
            if n == 10_000 {
                self.vars.next_update = now + self.cfg.tupdate_ns;
            }
        }
    }

    /// Linux `pie_drop_early`.
    fn drop_early(&mut self, len: u32) -> bool {
        let c = &self.cfg;
        let v = &mut self.vars;
        if v.burst_time > 0 {
            return false;
        }
        if v.qdelay < c.target_ns / 2 && v.prob < 0.2 {
            return false;
        }
        if self.fifo.bytes() < 2 * c.mtu as u64 {
            return false;
        }
        let p = if c.bytemode && len <= c.mtu {
            v.prob * len as f64 / c.mtu as f64
        } else {
            v.prob
        };
        if p == 0.0 {
            v.accu_prob = 0.0;
        } else {
            v.accu_prob += p;
        }
        if v.accu_prob < 0.85 {
            return false;
        }
        if v.accu_prob >= 8.5 {
            return true;
        }
        self.rng.uniform() < p
    }
}

impl Discipline for Pie {
    fn enqueue(&mut self, now: Nanos, mut pkt: Packet, drops: &mut Vec<Packet>) -> bool {
        self.catch_up(now);
        if self.fifo.is_full(pkt.bytes()) {
            self.stats.overflow += 1;
            self.vars.accu_prob = 0.0;
            drops.push(pkt);
            return false;
        }
        if self.drop_early(pkt.bytes()) {
            if self.cfg.ecn && self.vars.prob <= 0.1 && pkt.mark_ce() {
                self.stats.marked += 1;
            } else {
                self.stats.early += 1;
                self.vars.accu_prob = 0.0;
                drops.push(pkt);
                return false;
            }
        }
        self.fifo.enqueue(now, pkt, drops)
    }

    fn dequeue(&mut self, now: Nanos, drops: &mut Vec<Packet>) -> Option<Packet> {
        self.catch_up(now);
        let pkt = self.fifo.dequeue(now, drops)?;
        let v = &mut self.vars;
        v.qdelay = if self.fifo.waiting() == 0 {
            0
        } else {
            now.saturating_sub(pkt.arrived)
        };
        let dtime = v.dq_tstamp.map_or(0, |t| now - t);
        v.dq_tstamp = Some(now);
        v.burst_time = v.burst_time.saturating_sub(dtime);
        Some(pkt)
    }

    fn transmit_done(&mut self, now: Nanos) {
        self.fifo.transmit_done(now);
    }

    occupancy_of_inner_fifo!();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PacketKind;

    fn pie() -> Pie {
        Pie::new(&PieConfig::default()).unwrap()
    }

    fn with(prob: f64, qdelay: Nanos, qdelay_old: Nanos) -> Pie {
        let mut p = pie();
        let v = p.vars();
        p.set_vars(PieVars {
            prob,
            qdelay,
            qdelay_old,
            burst_time: 0,
            ..v
        });
        p
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn probability_update_by_hand() {
        // p = 0.2 (no scaling): Δ = 0.125·(0.030 − 0.015) + 1.25·(0.030 − 0.020).
        let mut q = with(0.2, 30 * MS, 20 * MS);
        q.calculate_probability(10_000);
        assert!(
            close(q.vars().prob, 0.2 + 0.001875 + 0.0125),
            "{}",
            q.vars().prob
        );
        assert_eq!(q.vars().qdelay_old, 30 * MS);
        // A step over +2 % with p >= 10 % is capped at 2 %.
        let mut q = with(0.2, 40 * MS, 20 * MS);
        q.calculate_probability(10_000);
        assert!(close(q.vars().prob, 0.22));
        // Over 250 ms of delay: +2 % more (here on top of the capped step).
        let mut q = with(0.2, 300 * MS, 300 * MS);
        q.calculate_probability(10_000);
        assert!(close(q.vars().prob, 0.2 + 0.02 + 0.02));
        // p < 10 %: α, β halved; p < 1 %: ÷8 in all.
        let mut q = with(0.05, 30 * MS, 20 * MS);
        q.calculate_probability(10_000);
        assert!(close(q.vars().prob, 0.05 + 0.014375 / 2.0));
        let mut q = with(0.005, 30 * MS, 20 * MS);
        q.calculate_probability(10_000);
        assert!(close(q.vars().prob, 0.005 + 0.014375 / 8.0));
        // p = 0: below 0.0001 % every decade has applied: ÷2048.
        let mut q = with(0.0, 30 * MS, 20 * MS);
        q.calculate_probability(10_000);
        assert!(close(q.vars().prob, 0.014375 / 2048.0));
        // Two delay-free periods on an empty queue: the step (−0.125·0.015) and then
        // a decay by 1/64.
        let mut q = with(0.3, 0, 0);
        q.calculate_probability(0);
        let p = 0.3 - 0.001875;
        assert!(close(q.vars().prob, p - p / 64.0));
        // Probability never leaves [0, 1].
        let mut q = with(0.001, 0, 100 * MS);
        q.calculate_probability(0);
        assert_eq!(q.vars().prob, 0.0);
    }

    #[test]
    fn burst_allowance_is_restored_when_quiet_and_used_up_by_dequeues() {
        let mut q = with(0.0, MS, 2 * MS);
        q.calculate_probability(0);
        assert_eq!(q.vars().burst_time, 150 * MS);
        // With drops under way (p > 0, no update to restore it), dequeues 40 ms apart
        // use it up: 150 − 40 − 40 − 40 = 30 ms left.
        let mut v = q.vars();
        v.prob = 0.5;
        v.next_update = u64::MAX;
        q.set_vars(v);
        let mut d = Vec::new();
        for k in 0..4 {
            let mut p = Packet::new(PacketKind::Data, 0, 1500, k, 0);
            p.arrived = k * 40 * MS;
            assert!(
                q.enqueue(k * 40 * MS, p, &mut d),
                "no early drop during a burst"
            );
            q.dequeue(k * 40 * MS, &mut d);
        }
        assert_eq!(q.vars().burst_time, 30 * MS);
    }

    #[test]
    fn derandomised_drops_wait_for_the_accumulated_probability() {
        // p = 0.1 with the queue well over target: the first eight arrivals cannot be
        // dropped (accu 0.1 … 0.8 < 0.85); later ones may be.
        let mut q = with(0.1, 40 * MS, 40 * MS);
        let mut v = q.vars();
        v.next_update = u64::MAX; // hold p still
        q.set_vars(v);
        let mut d = Vec::new();
        for k in 0..3 {
            q.fifo.enqueue(
                0,
                Packet::new(PacketKind::Data, 0, 1500, 100 + k, 0),
                &mut d,
            );
        }
        for k in 0..8 {
            assert!(q.enqueue(0, Packet::new(PacketKind::Data, 0, 1500, k, 0), &mut d));
            assert!(close(q.vars().accu_prob, 0.1 * (k + 1) as f64));
        }
        let mut dropped_at = None;
        for k in 8..200 {
            if !q.enqueue(0, Packet::new(PacketKind::Data, 0, 1500, k, 0), &mut d) {
                dropped_at = Some(k);
                break;
            }
        }
        assert!(dropped_at.is_some());
        assert_eq!(q.vars().accu_prob, 0.0, "a drop resets the accumulator");
        // A certain drop once the accumulator reaches 8.5, whatever the dice say.
        let mut v = q.vars();
        v.accu_prob = 8.45;
        q.set_vars(v);
        assert!(!q.enqueue(0, Packet::new(PacketKind::Data, 0, 1500, 999, 0), &mut d));
    }

    #[test]
    fn no_early_drop_below_half_target_or_two_mtus() {
        let mut q = with(0.15, 5 * MS, 5 * MS); // qdelay < 7.5 ms and p < 20 %
        let mut v = q.vars();
        v.next_update = u64::MAX;
        v.accu_prob = 100.0;
        q.set_vars(v);
        let mut d = Vec::new();
        for k in 0..20 {
            assert!(q.enqueue(0, Packet::new(PacketKind::Data, 0, 1500, k, 0), &mut d));
        }
        // Delay high but under two MTUs queued: still no early drop.
        let mut q = with(0.9, 100 * MS, 100 * MS);
        let mut v = q.vars();
        v.next_update = u64::MAX;
        v.accu_prob = 100.0;
        q.set_vars(v);
        assert!(q.enqueue(0, Packet::new(PacketKind::Data, 0, 1500, 0, 0), &mut d));
        assert!(q.enqueue(0, Packet::new(PacketKind::Data, 0, 1500, 1, 0), &mut d));
        assert!(!q.enqueue(0, Packet::new(PacketKind::Data, 0, 1500, 2, 0), &mut d));
        assert_eq!(q.stats().early, 1);
    }

    #[test]
    fn updates_catch_up_period_by_period() {
        // The timer starts with the first event (at 0); three periods elapse before
        // the next event: three updates, each with the same delays (nothing was
        // dequeued in between).
        let mut a = with(0.2, 30 * MS, 30 * MS);
        let mut b = a.clone();
        let mut d = Vec::new();
        let p = |seq| Packet::new(PacketKind::Data, 0, 1500, seq, 0);
        a.enqueue(0, p(0), &mut d);
        assert_eq!(a.vars().next_update, 15 * MS);
        a.enqueue(45 * MS, p(1), &mut d);
        for _ in 0..3 {
            b.calculate_probability(1500);
        }
        assert!(close(a.vars().prob, b.vars().prob));
        assert_eq!(a.vars().next_update, 60 * MS);
    }

    #[test]
    fn a_late_first_event_starts_the_timer_then() {
        // The emulator's clock is the machine's monotonic time: no backlog of updates
        // from boot.
        let mut q = pie();
        let mut d = Vec::new();
        let t0 = 3_600 * 1_000 * MS;
        q.enqueue(t0, Packet::new(PacketKind::Data, 0, 1500, 0, t0), &mut d);
        assert_eq!(q.vars().next_update, t0 + 15 * MS);
        // A quiet hour later: the updates are capped, the timer resumes on schedule.
        let t1 = t0 + 3_600 * 1_000 * MS;
        q.enqueue(t1, Packet::new(PacketKind::Data, 0, 1500, 1, t1), &mut d);
        assert_eq!(q.vars().next_update, t1 + 15 * MS);
    }
}
