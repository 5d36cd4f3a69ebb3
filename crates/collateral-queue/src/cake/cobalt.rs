//! COBALT: CoDel and BLUE side by side on each flow queue (Piece of CAKE §3.3;
//! sch_cake `cobalt_should_drop`, `cobalt_queue_full`, `cobalt_queue_empty`).
//!
//! * **CoDel part.** A packet is *over target* when its sojourn time exceeds both the
//!   tin's target and four MTU serialisation times (`mtu_time`, which makes the target
//!   grow at low rates). Going over target starts the dropping state with
//!   `drop_next = now + interval/√count`; each dequeue at or after `drop_next` while
//!   dropping signals (CE mark if ECT and ECN is on, else drop), increments `count` and
//!   pushes `drop_next` by `interval/√count`. Unlike RFC 8289, leaving the dropping
//!   state keeps `count`: it *decays* — while not dropping, every `interval/√count`
//!   that passes takes one off `count` — so a flow that comes back soon resumes near its
//!   previous signalling rate without CoDel's `lastcount` heuristics. `drop_next` doubles
//!   as an activity timer (`now + interval` whenever `count` is 0), which keeps an empty
//!   flow in the decaying rotation for an interval after its last packet.
//! * **BLUE part.** `p_drop` rises by `p_inc` (1/256) when the flow overflows the
//!   memory limit, at most once per `target` (`cobalt_queue_full`), and falls by
//!   `p_dec` (1/4096) when the flow is found empty, at most once per `target`
//!   (`cobalt_queue_empty`); each dequeued packet is dropped with probability `p_drop`
//!   regardless of ECN — it exists for unresponsive flows, which marking cannot slow.
//!
//! Simplifications against Linux: `interval/√count` is computed exactly (Linux keeps
//! `1/√count` in Q0.32 from a cache for small counts and one Newton step beyond), and a
//! never-used flow enters its first dropping state with `drop_next = now + interval`
//! like a decayed one — in Linux its `rec_inv_sqrt` is still 0 from initialisation, so
//! its first episode signals on the second over-target packet instead. The
//! `bulk_flows · mtu_time · 2` term of the over-target test is 0 outside CAKE's ingress
//! mode, which is not modelled.

use crate::rng::SplitMix64;
use crate::{Nanos, Packet};

/// Per-tin COBALT parameters (sch_cake `struct cobalt_params`, set by `cake_set_rate`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct CobaltParams {
    pub(super) interval: Nanos,
    pub(super) target: Nanos,
    /// Serialisation time of an MTU-sized packet at the tin's threshold rate (0 when
    /// unshaped).
    pub(super) mtu_time: Nanos,
    /// BLUE increment and decrement of `p_drop`, in units of 2⁻³².
    pub(super) p_inc: u32,
    pub(super) p_dec: u32,
}

impl CobaltParams {
    /// sch_cake `cake_set_rate`: at low rates one MTU takes longer than `target` to
    /// send, so the target becomes 1.5 MTU times and the interval keeps its excess
    /// over the target (at least twice the target).
    pub(super) fn for_tin(mtu_time: Nanos, target: Nanos, interval: Nanos) -> Self {
        let eff = (mtu_time.saturating_mul(3) / 2).max(target);
        CobaltParams {
            interval: interval
                .saturating_add(eff - target)
                .max(eff.saturating_mul(2)),
            target: eff,
            mtu_time,
            p_inc: 1 << 24,
            p_dec: 1 << 20,
        }
    }
}

/// Per-flow COBALT state (sch_cake `struct cobalt_vars`, without `rec_inv_sqrt`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CobaltVars {
    pub count: u32,
    pub drop_next: Nanos,
    pub blue_timer: Nanos,
    /// BLUE drop probability in units of 2⁻³².
    pub p_drop: u32,
    pub dropping: bool,
}

/// What COBALT decided for a dequeued packet.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Verdict {
    /// The packet was CE-marked (it is delivered unless `blue` drops it anyway).
    pub(super) marked: bool,
    /// CoDel wants it dropped (not ECN-capable, or ECN off).
    pub(super) codel_drop: bool,
    /// BLUE's random drop.
    pub(super) blue_drop: bool,
}

impl Verdict {
    #[inline]
    pub(super) fn drop(&self) -> bool {
        self.codel_drop || self.blue_drop
    }
}

/// `t + interval/√count`, with count 0 read as 1 (Linux: both cache entries are ~1.0).
#[inline]
fn control(t: Nanos, interval: Nanos, count: u32) -> Nanos {
    t.saturating_add((interval as f64 / (count.max(1) as f64).sqrt()) as Nanos)
}

impl CobaltVars {
    /// The flow overflowed the memory limit (sch_cake `cobalt_queue_full`): raise BLUE's
    /// probability (at most once per target) and make CoDel signal on the next
    /// over-target dequeue.
    pub(super) fn queue_full(&mut self, p: &CobaltParams, now: Nanos) {
        if now.saturating_sub(self.blue_timer) > p.target {
            self.p_drop = self.p_drop.saturating_add(p.p_inc);
            self.blue_timer = now;
        }
        self.dropping = true;
        self.drop_next = now;
        if self.count == 0 {
            self.count = 1;
        }
    }

    /// The flow was served but found empty (sch_cake `cobalt_queue_empty`): lower BLUE's
    /// probability (at most once per target), leave the dropping state, and let `count`
    /// decay by one if its schedule has passed.
    pub(super) fn queue_empty(&mut self, p: &CobaltParams, now: Nanos) {
        if self.p_drop > 0 && now.saturating_sub(self.blue_timer) > p.target {
            self.p_drop = self.p_drop.saturating_sub(p.p_dec);
            self.blue_timer = now;
        }
        self.dropping = false;
        if self.count > 0 && now >= self.drop_next {
            self.count -= 1;
            self.drop_next = control(self.drop_next, p.interval, self.count);
        }
    }

    /// Whether the state still has to decay before the flow may leave the rotations.
    #[inline]
    pub(super) fn active(&self, now: Nanos) -> bool {
        self.p_drop > 0 || self.count > 0 || now < self.drop_next
    }

    /// The decision for `pkt`, just dequeued at `now` (sch_cake `cobalt_should_drop`).
    /// Marks `pkt` CE when signalling an ECN-capable packet with `ecn` on.
    pub(super) fn should_drop(
        &mut self,
        p: &CobaltParams,
        now: Nanos,
        pkt: &mut Packet,
        ecn: bool,
        rng: &mut SplitMix64,
    ) -> Verdict {
        let sojourn = now.saturating_sub(pkt.arrived);
        let over_target = sojourn > p.target && sojourn > p.mtu_time.saturating_mul(4);
        let mut next_due = self.count > 0 && now >= self.drop_next;
        let mut v = Verdict::default();

        if over_target {
            if !self.dropping {
                self.dropping = true;
                self.drop_next = control(now, p.interval, self.count);
            }
            if self.count == 0 {
                self.count = 1;
            }
        } else {
            self.dropping = false;
        }

        if next_due && self.dropping {
            v.marked = ecn && pkt.mark_ce();
            v.codel_drop = !v.marked;
            self.count = self.count.saturating_add(1);
            self.drop_next = control(self.drop_next, p.interval, self.count);
        } else {
            // Not signalling: every schedule point already passed takes one off count.
            while next_due {
                self.count -= 1;
                self.drop_next = control(self.drop_next, p.interval, self.count);
                next_due = self.count > 0 && now >= self.drop_next;
            }
        }

        if self.p_drop > 0 {
            v.blue_drop = ((rng.next_u64() >> 32) as u32) < self.p_drop;
        }

        if self.count == 0 {
            self.drop_next = now.saturating_add(p.interval);
        } else if now > self.drop_next && !v.drop() {
            // Behind schedule after a mark: do not let marks bunch up to catch up.
            self.drop_next = now;
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Ecn, PacketKind};

    const MS: Nanos = 1_000_000;

    fn pkt(arrived: Nanos, ecn: Ecn) -> Packet {
        let mut p = Packet::new(PacketKind::Data, 1, 1500, 0, 0);
        p.arrived = arrived;
        p.set_ecn(ecn);
        p
    }

    #[test]
    fn params_grow_with_the_mtu_time_at_low_rates() {
        // Unshaped: target and interval as configured.
        let p = CobaltParams::for_tin(0, 5 * MS, 100 * MS);
        assert_eq!((p.target, p.interval, p.mtu_time), (5 * MS, 100 * MS, 0));
        // 1500 B at 1 Mbit/s = 12 ms: target = 18 ms, interval = 100 + 18 − 5 = 113 ms.
        let p = CobaltParams::for_tin(12 * MS, 5 * MS, 100 * MS);
        assert_eq!((p.target, p.interval), (18 * MS, 113 * MS));
        // A tiny interval: at least twice the target.
        let p = CobaltParams::for_tin(12 * MS, 5 * MS, 10 * MS);
        assert_eq!(p.interval, 36 * MS);
        assert_eq!((p.p_inc, p.p_dec), (1 << 24, 1 << 20));
    }

    #[test]
    fn first_signal_one_interval_after_going_over_target_then_faster() {
        let p = CobaltParams::for_tin(0, 5 * MS, 100 * MS);
        let mut v = CobaltVars::default();
        let mut rng = SplitMix64::new(0);
        // Sojourn 10 ms > 5 ms at t = 10 ms: dropping, drop_next = 110 ms, count 1.
        let r = v.should_drop(&p, 10 * MS, &mut pkt(0, Ecn::NotEct), true, &mut rng);
        assert!(!r.drop() && v.dropping);
        assert_eq!((v.count, v.drop_next), (1, 110 * MS));
        // Not yet due at 109 ms.
        assert!(!v
            .should_drop(&p, 109 * MS, &mut pkt(0, Ecn::NotEct), true, &mut rng)
            .drop());
        // Due at 110 ms: Not-ECT is dropped; count 2; next 100/√2 ms later.
        let r = v.should_drop(&p, 110 * MS, &mut pkt(0, Ecn::NotEct), true, &mut rng);
        assert!(r.codel_drop && !r.marked);
        assert_eq!((v.count, v.drop_next), (2, 110 * MS + 70_710_678));
        // The next due one is ECT(0): marked, not dropped; count 3.
        let mut e = pkt(0, Ecn::Ect0);
        let r = v.should_drop(&p, 181 * MS, &mut e, true, &mut rng);
        assert!(r.marked && !r.drop() && e.ecn() == Ecn::Ce);
        assert_eq!(v.count, 3);
        assert_eq!(v.drop_next, 110 * MS + 70_710_678 + 57_735_026);
        // With ECN off the ECT packet is dropped instead.
        let mut w = v;
        let mut e = pkt(0, Ecn::Ect0);
        let r = w.should_drop(&p, 300 * MS, &mut e, false, &mut rng);
        assert!(r.codel_drop && e.ecn() == Ecn::Ect0);
    }

    #[test]
    fn count_decays_while_under_target() {
        let p = CobaltParams::for_tin(0, 5 * MS, 100 * MS);
        let mut v = CobaltVars {
            count: 4,
            drop_next: 0,
            ..Default::default()
        };
        let mut rng = SplitMix64::new(0);
        // A fresh packet at t = 100 ms: schedule points 0 → (count 3) 57.7 ms →
        // (count 2) 128.4 ms: two decrements, then not due any more.
        let r = v.should_drop(
            &p,
            100 * MS,
            &mut pkt(100 * MS, Ecn::NotEct),
            true,
            &mut rng,
        );
        assert!(!r.drop() && !v.dropping);
        assert_eq!(v.count, 2);
        assert_eq!(v.drop_next, 57_735_026 + 70_710_678);
    }

    #[test]
    fn blue_rises_on_overflow_and_falls_when_empty_once_per_target() {
        let p = CobaltParams::for_tin(0, 5 * MS, 100 * MS);
        let mut v = CobaltVars::default();
        v.queue_full(&p, 10 * MS);
        v.queue_full(&p, 12 * MS); // within a target of the last rise
        assert_eq!(v.p_drop, 1 << 24);
        assert!(v.dropping && v.count == 1 && v.drop_next == 12 * MS);
        v.queue_full(&p, 16 * MS);
        assert_eq!(v.p_drop, 2 << 24);
        v.queue_empty(&p, 18 * MS); // within a target of the last change
        assert_eq!(v.p_drop, 2 << 24);
        v.queue_empty(&p, 22 * MS);
        assert_eq!(v.p_drop, (2 << 24) - (1 << 20));
        assert!(!v.dropping);
        // Saturates instead of wrapping.
        v.p_drop = u32::MAX - 5;
        v.queue_full(&p, 100 * MS);
        assert_eq!(v.p_drop, u32::MAX);
    }
}
