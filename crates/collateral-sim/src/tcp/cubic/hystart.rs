//! HyStart (Ha & Rhee, "Taming the elephants", 2011), CUBIC's hybrid slow start as
//! current Linux runs it (`tcp_cubic.c` @617e407c, `bictcp_hystart_reset`,
//! `hystart_update`): slow start ends when a round's ACKs arrive as a train longer than
//! half the minimum RTT, or when the round's minimum RTT rises by a clamped eighth of
//! the path's. Only the modern variant has it ([`super::CubicConfig::hystart`]).

use super::{usecs, Cubic};
use crate::tcp::cc::Ack;

/// HyStart runs only from this window on (`hystart_low_window`).
pub(super) const HYSTART_LOW_WINDOW: u32 = 16;
/// ACKs this close (µs) belong to one train (`hystart_ack_delta_us`).
const HYSTART_ACK_DELTA_US: i32 = 2000;
/// RTT samples per round before the delay test (`HYSTART_MIN_SAMPLES`).
const HYSTART_MIN_SAMPLES: u32 = 8;
/// Bounds of the delay-increase threshold, µs (`HYSTART_DELAY_MIN/MAX`).
const HYSTART_DELAY_MIN_US: u32 = 4000;
const HYSTART_DELAY_MAX_US: u32 = 16000;
/// `hystart_ack_delay()`: min(1 ms, 4·GSO-max / pacing rate). TCP always computes a
/// pacing rate, and with a 64 KB GSO limit the second term is below 1 ms only above
/// ~2 Gbit/s, so on the links simulated here it is the 1 ms cap.
const HYSTART_ACK_DELAY_US: u32 = 1000;

/// HyStart's per-round state (current `struct bictcp` tail). Rounds are counted in
/// segments because our ACKs carry no sequence numbers: a round ends once more has been
/// acked than was outstanding when it began (the kernel's `after(snd_una, end_seq)`).
#[derive(Debug, Clone, Default)]
pub(super) struct HyStart {
    pub(super) found: bool,
    /// `found` set `ssthresh = cwnd`; `pkts_acked` has no window, so `on_ack` applies it.
    pub(super) exit_pending: bool,
    pub(super) round_start: u32,
    pub(super) last_ack: u32,
    pub(super) curr_rtt: u32,
    pub(super) sample_cnt: u32,
    /// Segments outstanding when the round began (`end_seq − snd_una` then).
    pub(super) round_flight: u32,
    /// Segments acked since the round began.
    pub(super) round_acked: u32,
    /// Segments outstanding after the latest ACK or congestion event.
    pub(super) flight_now: u32,
}

impl Cubic {
    /// `bictcp_hystart_reset`: a new round starts now.
    pub(super) fn hystart_reset(&mut self, now_us: u32) {
        self.hy.round_start = now_us;
        self.hy.last_ack = now_us;
        self.hy.round_flight = self.hy.flight_now;
        self.hy.round_acked = 0;
        self.hy.curr_rtt = u32::MAX;
        self.hy.sample_cnt = 0;
    }

    /// `hystart_update` (current Linux): leave slow start when the ACKs of one round
    /// have arrived as a train longer than half the min RTT (the pipe is full), or when
    /// the round's minimum RTT has risen above delay_min + clamp(delay_min/8, 4, 16 ms)
    /// (a queue is building). Assumes no pacing (the train threshold is halved).
    pub(super) fn hystart_update(&mut self, delay: u32, ack: &Ack) {
        let now_us = usecs(ack.now);
        if self.hy.round_acked > self.hy.round_flight {
            self.hystart_reset(now_us);
        }
        if now_us.wrapping_sub(self.hy.last_ack) as i32 <= HYSTART_ACK_DELTA_US {
            self.hy.last_ack = now_us;
            let threshold = self.delay_min.wrapping_add(HYSTART_ACK_DELAY_US) >> 1;
            if now_us.wrapping_sub(self.hy.round_start) > threshold {
                self.hy.found = true;
                self.hy.exit_pending = true;
            }
        }
        self.hy.curr_rtt = self.hy.curr_rtt.min(delay);
        if self.hy.sample_cnt < HYSTART_MIN_SAMPLES {
            self.hy.sample_cnt += 1;
        } else {
            let thresh = (self.delay_min >> 3).clamp(HYSTART_DELAY_MIN_US, HYSTART_DELAY_MAX_US);
            if self.hy.curr_rtt > self.delay_min.wrapping_add(thresh) {
                self.hy.found = true;
                self.hy.exit_pending = true;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{ack, growth, MS};
    use super::super::*;

    /// Slow-start window for HyStart tests: cwnd 20, far from ssthresh.
    fn hystart_cubic() -> (Cubic, Window) {
        let mut c = Cubic::new(CubicConfig::modern(), growth());
        let w = Window {
            cwnd: 20,
            ssthresh: 10_000,
        };
        c.seen = w;
        (c, w)
    }

    #[test]
    fn hystart_leaves_slow_start_when_the_delay_rises() {
        let (mut c, mut w) = hystart_cubic();
        // ACKs 5 ms apart (no train). Round 1: 40 ms RTTs → delay_min = 40000 µs; the
        // first ACK starts a round with 100 − 1 = 99 segments outstanding.
        let mut t = 1000 * MS;
        for _ in 0..20 {
            c.pkts_acked(&ack(t, 1, Some(40 * MS)));
            t += 5 * MS;
        }
        assert!(!c.hy.found);
        // Threshold: delay_min + clamp(40000/8 = 5000, 4000, 16000) = 45000 µs, tested
        // against the round's minimum from its 9th sample on; 45 ms never exceeds it.
        for _ in 0..80 {
            c.pkts_acked(&ack(t, 1, Some(45 * MS)));
            t += 5 * MS;
        }
        assert!(!c.hy.found);
        // ACKs 2..=100 acked the 99 outstanding at the round start; ACK 101 (> 99)
        // starts round 2, whose 9th sample (all 46 ms > 45000) exits.
        assert_eq!((c.hy.round_acked, c.hy.round_flight), (99, 99));
        for i in 1..=9 {
            c.pkts_acked(&ack(t, 1, Some(46 * MS)));
            t += 5 * MS;
            assert_eq!(c.hy.found, i == 9, "sample {i}");
        }
        // The exit sets ssthresh = cwnd before this ACK's growth: congestion avoidance.
        c.on_ack(&mut w, &ack(t, 1, None));
        assert_eq!(w.ssthresh, 20);
        assert!(c.epoch_start.is_some());
    }

    #[test]
    fn hystart_leaves_slow_start_on_a_long_ack_train() {
        let (mut c, mut w) = hystart_cubic();
        // ACKs 1 ms apart, 40 ms RTT: threshold = (40000 + 1000) >> 1 = 20500 µs after
        // the round start (the first ACK). The ACK at +21 ms is past it.
        let t0 = 1000 * MS;
        for k in 0..=20u64 {
            c.pkts_acked(&ack(t0 + k * MS, 1, Some(40 * MS)));
            assert!(!c.hy.found, "ack {k}");
        }
        c.pkts_acked(&ack(t0 + 21 * MS, 1, Some(40 * MS)));
        assert!(c.hy.found);
        c.on_ack(&mut w, &ack(t0 + 21 * MS, 1, None));
        assert_eq!(w.ssthresh, 20);
        // Spaced ACKs (3 ms) never form a train.
        let (mut c, _) = hystart_cubic();
        for k in 0..30u64 {
            c.pkts_acked(&ack(t0 + 3 * k * MS, 1, Some(40 * MS)));
        }
        assert!(!c.hy.found);
        // Below 16 segments, or with HyStart off, nothing happens.
        let (mut c, _) = hystart_cubic();
        c.seen.cwnd = 15;
        for k in 0..=30u64 {
            c.pkts_acked(&ack(t0 + k * MS, 1, Some(40 * MS)));
        }
        assert!(!c.hy.found);
        let mut c = Cubic::new(
            CubicConfig {
                hystart: false,
                ..CubicConfig::modern()
            },
            growth(),
        );
        c.seen = Window {
            cwnd: 20,
            ssthresh: 10_000,
        };
        for k in 0..=30u64 {
            c.pkts_acked(&ack(t0 + k * MS, 1, Some(40 * MS)));
        }
        assert!(!c.hy.found);
    }
}
