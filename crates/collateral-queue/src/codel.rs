//! CoDel: Controlled Delay (Nichols & Jacobson; RFC 8289), on one drop-tail FIFO.
//!
//! CoDel watches each packet's *sojourn time* — from its arrival at the queue
//! (`Packet::arrived`) to its dequeue — and drops at dequeue:
//!
//! * **Above target for an interval.** When a dequeued packet's sojourn time is at
//!   least `target` (5 ms) and more than one MTU stays queued, CoDel notes
//!   `first_above_time = now + interval` (100 ms) if it has not already; if the
//!   sojourn time stays above target until then, it is *ok to drop*. A sojourn under
//!   target, or at most an MTU left in the queue, resets it (RFC 8289 §5.3
//!   `dodequeue`; Linux `codel_should_drop`, which compares the backlog left after the
//!   dequeue with the device MTU).
//! * **Dropping state.** On entering it CoDel drops the packet, dequeues the next and
//!   schedules the next drop at `now + interval/√count`. `count` restarts at 1, or, if
//!   the last dropping state ended less than 16 intervals ago and dropped more than one
//!   packet since, at `count − lastcount` (the drop rate that controlled the queue last
//!   time is a good start now). While in the state, each time `now ≥ drop_next` it
//!   drops, increments `count`, dequeues again and sets `drop_next += interval/√count`
//!   (the control law: drops come closer together as the square root of their number,
//!   which gives a linear decrease of TCP's rate). A packet that is not ok to drop, or
//!   an empty queue, ends the state (RFC 8289 §5.5 `dequeue`; Linux `codel_dequeue`).
//! * **Hard limit** on arrival, with any [`FullRule`] (Linux `sch_codel`: 1000 packets).
//!
//! The control law uses `interval/√count` computed exactly; Linux approximates `1/√count`
//! with Newton steps in 32-bit fixed point and counts time in 1024 ns units, which moves
//! drop times by well under a microsecond.
//!
//! **ECN** (`ecn`, off by default as in `tc qdisc add … codel`; RFC 8289 §4.4): where the
//! control law would drop an ECN-capable packet it marks CE and sends it instead, and
//! the marked packet ends that dequeue's drops (Linux `codel_dequeue`: `goto end` after
//! `INET_ECN_set_ce`); a Not-ECT packet is dropped as before.

use serde::{Deserialize, Serialize};

use crate::check;
use crate::config::{Described, HardLimit};
use crate::{Discipline, DropTail, FullRule, Nanos, Packet};

pub(crate) fn default_target() -> Nanos {
    5_000_000
}
pub(crate) fn default_interval() -> Nanos {
    100_000_000
}
fn default_limit() -> u64 {
    1000
}
fn default_rule() -> FullRule {
    FullRule::Ps
}
pub(crate) fn default_mtu() -> u32 {
    1500
}

/// CoDel's parameters (RFC 8289 §4.3 defaults; Linux `sch_codel` limit).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CodelConfig {
    #[serde(default = "default_target")]
    pub target_ns: Nanos,
    #[serde(default = "default_interval")]
    pub interval_ns: Nanos,
    /// Hard limit of the FIFO, in the unit of `limit_rule`.
    #[serde(default = "default_limit")]
    pub limit: u64,
    #[serde(default = "default_rule")]
    pub limit_rule: FullRule,
    /// Backlog (bytes) at or below which CoDel never drops (Linux: the device MTU).
    #[serde(default = "default_mtu")]
    pub mtu: u32,
    /// Mark ECN-capable packets CE instead of dropping them.
    #[serde(default)]
    pub ecn: bool,
}

impl Described for CodelConfig {
    const DISPLAY: &'static str = "CoDel";
    const HARD_LIMIT: Option<HardLimit> = Some(HardLimit::packets("limit"));
}

impl Default for CodelConfig {
    fn default() -> Self {
        CodelConfig {
            target_ns: default_target(),
            interval_ns: default_interval(),
            limit: default_limit(),
            limit_rule: default_rule(),
            mtu: default_mtu(),
            ecn: false,
        }
    }
}

impl CodelConfig {
    pub fn validate(&self) -> Result<(), String> {
        check::positive("target_ns", self.target_ns)?;
        check::positive("interval_ns", self.interval_ns)?;
        check::time("interval_ns", self.interval_ns)?;
        check::below("target_ns", self.target_ns, "interval", self.interval_ns)?;
        check::limit("limit", self.limit)
    }
}

/// Why CoDel dropped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CodelStats {
    /// Drops at dequeue by the control law.
    pub dropped: u64,
    /// Drops at the hard limit.
    pub overflow: u64,
    /// CE marks the control law set instead of dropping.
    pub marked: u64,
}

/// CoDel's state variables (RFC 8289 §5.1 names).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CodelVars {
    pub first_above_time: Nanos,
    pub drop_next: Nanos,
    pub count: u32,
    pub lastcount: u32,
    pub dropping: bool,
}

/// The control law and state machine, apart from any queue, so that FQ-CoDel can run
/// one per flow. `dequeue` is the caller's FIFO pop; `backlog` its bytes after a pop.
#[derive(Debug, Clone, Copy)]
pub struct CodelCore {
    pub target: Nanos,
    pub interval: Nanos,
    pub mtu: u32,
    /// Mark ECN-capable packets instead of dropping them.
    pub ecn: bool,
    /// CE marks set so far.
    pub marks: u64,
    pub vars: CodelVars,
}

impl CodelCore {
    pub fn new(target: Nanos, interval: Nanos, mtu: u32) -> Self {
        CodelCore {
            target,
            interval,
            mtu,
            ecn: false,
            marks: 0,
            vars: CodelVars::default(),
        }
    }

    /// `t + interval/√count`.
    #[inline]
    pub fn control_law(&self, t: Nanos) -> Nanos {
        t + (self.interval as f64 / (self.vars.count.max(1) as f64).sqrt()) as Nanos
    }

    /// RFC 8289 `dodequeue`'s test on a packet just dequeued (`None`: the queue was
    /// empty), with `backlog` bytes left behind it.
    #[inline]
    fn ok_to_drop(&mut self, now: Nanos, pkt: Option<&Packet>, backlog: u64) -> bool {
        let Some(p) = pkt else {
            self.vars.first_above_time = 0;
            return false;
        };
        let sojourn = now.saturating_sub(p.arrived);
        if sojourn < self.target || backlog <= self.mtu as u64 {
            self.vars.first_above_time = 0;
            return false;
        }
        if self.vars.first_above_time == 0 {
            self.vars.first_above_time = now + self.interval;
            false
        } else {
            now > self.vars.first_above_time
        }
    }

    /// With ECN on, marks `pkt` CE if it is ECN-capable (then it is sent, not dropped).
    #[inline]
    fn mark(&mut self, pkt: &mut Option<Packet>) -> bool {
        let marked = self.ecn && pkt.as_mut().is_some_and(|p| p.mark_ce());
        self.marks += marked as u64;
        marked
    }

    /// CoDel's dequeue over a FIFO given by `pop` (the next packet) and `backlog` (its
    /// bytes): returns the packet to send; pushes what it dropped into `drops`.
    #[inline]
    pub fn dequeue<Q>(
        &mut self,
        now: Nanos,
        q: &mut Q,
        pop: impl Fn(&mut Q) -> Option<Packet>,
        backlog: impl Fn(&Q) -> u64,
        drops: &mut Vec<Packet>,
    ) -> Option<Packet> {
        let mut pkt = pop(q);
        if pkt.is_none() {
            self.vars.dropping = false;
            self.vars.first_above_time = 0;
            return None;
        }
        let drop = self.ok_to_drop(now, pkt.as_ref(), backlog(q));
        if self.vars.dropping {
            if !drop {
                self.vars.dropping = false;
            } else {
                while self.vars.dropping && now >= self.vars.drop_next {
                    self.vars.count += 1;
                    if self.mark(&mut pkt) {
                        self.vars.drop_next = self.control_law(self.vars.drop_next);
                        break;
                    }
                    drops.push(pkt.take().unwrap());
                    pkt = pop(q);
                    if !self.ok_to_drop(now, pkt.as_ref(), backlog(q)) {
                        self.vars.dropping = false;
                    } else {
                        self.vars.drop_next = self.control_law(self.vars.drop_next);
                    }
                }
            }
        } else if drop {
            if !self.mark(&mut pkt) {
                drops.push(pkt.take().unwrap());
                pkt = pop(q);
                self.ok_to_drop(now, pkt.as_ref(), backlog(q));
            }
            self.vars.dropping = true;
            let delta = self.vars.count.wrapping_sub(self.vars.lastcount);
            self.vars.count = if delta > 1
                && delta < u32::MAX / 2
                && now.saturating_sub(self.vars.drop_next) < 16 * self.interval
            {
                delta
            } else {
                1
            };
            self.vars.lastcount = self.vars.count;
            self.vars.drop_next = self.control_law(now);
        }
        pkt
    }
}

/// CoDel on one drop-tail FIFO.
#[derive(Debug, Clone)]
pub struct Codel {
    fifo: DropTail,
    core: CodelCore,
    stats: CodelStats,
}

impl Codel {
    pub fn new(cfg: &CodelConfig) -> Result<Self, String> {
        cfg.validate()?;
        Ok(Codel {
            fifo: DropTail::new(cfg.limit_rule, cfg.limit, false),
            core: CodelCore {
                ecn: cfg.ecn,
                ..CodelCore::new(cfg.target_ns, cfg.interval_ns, cfg.mtu)
            },
            stats: CodelStats::default(),
        })
    }

    pub fn vars(&self) -> CodelVars {
        self.core.vars
    }

    pub fn stats(&self) -> CodelStats {
        CodelStats {
            marked: self.core.marks,
            ..self.stats
        }
    }
}

impl Discipline for Codel {
    fn enqueue(&mut self, now: Nanos, pkt: Packet, drops: &mut Vec<Packet>) -> bool {
        let ok = self.fifo.enqueue(now, pkt, drops);
        self.stats.overflow += !ok as u64;
        ok
    }

    fn dequeue(&mut self, now: Nanos, drops: &mut Vec<Packet>) -> Option<Packet> {
        let before = drops.len();
        let pkt = self
            .core
            .dequeue(now, &mut self.fifo, |f| f.pop_head(), |f| f.bytes(), drops);
        self.stats.dropped += (drops.len() - before) as u64;
        pkt
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

    const MS: Nanos = 1_000_000;

    fn pkt(seq: u64, arrived: Nanos) -> Packet {
        let mut p = Packet::new(PacketKind::Data, 0, 1500, seq, 0);
        p.arrived = arrived;
        p
    }

    /// A queue of `n` packets that all arrived at time 0: each dequeue at `t` sees a
    /// sojourn of `t`.
    fn loaded(n: u64) -> Codel {
        let mut q = Codel::new(&CodelConfig::default()).unwrap();
        let mut d = Vec::new();
        for i in 0..n {
            assert!(q.enqueue(0, pkt(i, 0), &mut d));
        }
        q
    }

    #[test]
    fn control_law_spaces_drops_by_interval_over_root_count() {
        let mut c = CodelCore::new(5 * MS, 100 * MS, 1500);
        for (count, gap) in [
            (1, 100_000_000),
            (2, 70_710_678),
            (4, 50_000_000),
            (9, 33_333_333),
        ] {
            c.vars.count = count;
            assert_eq!(c.control_law(1_000), 1_000 + gap, "count {count}");
        }
    }

    #[test]
    fn no_drop_until_sojourn_stays_above_target_for_an_interval() {
        let mut q = loaded(200);
        let mut d = Vec::new();
        // 10 ms sojourn at t = 10 ms: above target, first_above_time = 110 ms.
        assert_eq!(q.dequeue(10 * MS, &mut d).unwrap().seq, 0);
        assert_eq!(q.vars().first_above_time, 110 * MS);
        // Still above at 110 ms but not *after* first_above_time: no drop yet.
        assert_eq!(q.dequeue(110 * MS, &mut d).unwrap().seq, 1);
        assert!(d.is_empty() && !q.vars().dropping);
        // At 111 ms: ok to drop → packet 2 is dropped, packet 3 sent, count 1,
        // drop_next = 111 + 100 ms.
        assert_eq!(q.dequeue(111 * MS, &mut d).unwrap().seq, 3);
        assert_eq!(d.iter().map(|p| p.seq).collect::<Vec<_>>(), [2]);
        let v = q.vars();
        assert!(v.dropping);
        assert_eq!((v.count, v.lastcount, v.drop_next), (1, 1, 211 * MS));
        // Before drop_next nothing more is dropped.
        assert_eq!(q.dequeue(150 * MS, &mut d).unwrap().seq, 4);
        assert_eq!(d.len(), 1);
        // At drop_next: count 2, drop packet 5, send 6, next drop 100/√2 ms later.
        assert_eq!(q.dequeue(211 * MS, &mut d).unwrap().seq, 6);
        assert_eq!(d.len(), 2);
        assert_eq!(q.vars().count, 2);
        assert_eq!(q.vars().drop_next, 211 * MS + 70_710_678);
        // Then count 3: the gap shrinks to 100/√3 ms.
        let t = 211 * MS + 70_710_678;
        assert_eq!(q.dequeue(t, &mut d).unwrap().seq, 8);
        assert_eq!(q.vars().drop_next, t + 57_735_026);
        assert_eq!(q.stats().dropped, 3);
    }

    #[test]
    fn a_short_sojourn_or_a_small_backlog_leaves_the_dropping_state() {
        let mut q = loaded(50);
        let mut d = Vec::new();
        q.dequeue(10 * MS, &mut d);
        q.dequeue(111 * MS, &mut d);
        assert!(q.vars().dropping);
        // A fresh packet (arrived just now) at the head: sojourn 0 < target.
        let mut fresh = Codel::new(&CodelConfig::default()).unwrap();
        fresh.core = q.core;
        fresh.enqueue(300 * MS, pkt(99, 300 * MS), &mut d);
        fresh.enqueue(300 * MS, pkt(100, 300 * MS), &mut d);
        assert_eq!(fresh.dequeue(300 * MS, &mut d).unwrap().seq, 99);
        assert!(!fresh.vars().dropping);
        assert_eq!(fresh.vars().first_above_time, 0);
        // Old packets but one MTU or less left behind: never ok to drop.
        let mut q = loaded(2);
        q.dequeue(10 * MS, &mut d);
        assert_eq!(
            q.vars().first_above_time,
            0,
            "1500 B left is not above the MTU"
        );
    }

    #[test]
    fn re_entering_soon_resumes_the_previous_drop_rate() {
        // RFC 8289 §5.5: delta = count − lastcount > 1 and within 16 intervals of
        // drop_next → count starts at delta.
        let mut c = CodelCore::new(5 * MS, 100 * MS, 1500);
        c.vars = CodelVars {
            first_above_time: 10 * MS,
            drop_next: 900 * MS,
            count: 7,
            lastcount: 2,
            dropping: false,
        };
        let mut fifo: std::collections::VecDeque<Packet> = (0..10).map(|i| pkt(i, 0)).collect();
        let mut d = Vec::new();
        let out = c.dequeue(
            1_000 * MS,
            &mut fifo,
            |f| f.pop_front(),
            |f| f.len() as u64 * 1500,
            &mut d,
        );
        assert_eq!(out.unwrap().seq, 1);
        assert_eq!((c.vars.count, c.vars.lastcount), (5, 5));
        assert_eq!(c.vars.drop_next, 1_000 * MS + 44_721_359); // 100 ms / √5
                                                               // Long after the last state (more than 16 intervals): count restarts at 1.
        c.vars.dropping = false;
        c.vars.count = 9;
        c.vars.lastcount = 2;
        c.vars.drop_next = 0;
        c.vars.first_above_time = 10 * MS;
        c.dequeue(
            5_000 * MS,
            &mut fifo,
            |f| f.pop_front(),
            |f| f.len() as u64 * 1500,
            &mut d,
        );
        assert_eq!(c.vars.count, 1);
    }

    #[test]
    fn the_hard_limit_holds() {
        let mut q = Codel::new(&CodelConfig {
            limit: 3,
            ..Default::default()
        })
        .unwrap();
        let mut d = Vec::new();
        let ok: Vec<bool> = (0..5).map(|i| q.enqueue(0, pkt(i, 0), &mut d)).collect();
        assert_eq!(ok, [true, true, true, false, false]);
        assert_eq!(q.stats().overflow, 2);
    }
}
