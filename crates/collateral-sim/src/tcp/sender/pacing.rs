//! The sender's pacing: at the algorithm's own rate (BBR) or at Linux's window-based
//! rate (`tcp_update_pacing_rate`, for `pacing` and TCP Prague), with Linux's departure
//! clock (`tcp_update_skb_after_send`, mainline since EDT pacing, 4.20).

use collateral_queue::{Nanos, Packet};

use super::Sender;

const SEC: Nanos = 1_000_000_000;
/// Linux paces from the tenth data segment on, as the original `sch_fq` did.
const UNPACED_SEGMENTS: u64 = 10;

/// Time `len` bytes take at `bps`, rounded up so the rate is never exceeded.
#[inline(never)]
pub(super) fn pace_gap(len: u32, bps: u64) -> Nanos {
    (len as u128 * 8 * SEC as u128)
        .div_ceil(bps.max(1) as u128)
        .min(Nanos::MAX as u128) as Nanos
}

impl Sender {
    /// Linux's pacing rate for algorithms that ask for pacing without setting a rate
    /// (`tcp_update_pacing_rate`): `mss · max(cwnd, in flight) / srtt`, times 200 % while
    /// cwnd < ssthresh/2 (slow start) and 120 % after (`tcp_pacing_ss_ratio`,
    /// `tcp_pacing_ca_ratio`). The rate counts payload, as Linux's does. No RTT sample
    /// yet: no pacing.
    pub(super) fn window_pacing_rate(&self) -> Option<u64> {
        let srtt = self.rtt.srtt.filter(|&s| s > 0)?;
        let ratio = if self.w.cwnd < self.w.ssthresh / 2 {
            200
        } else {
            120
        };
        let segs = self.w.cwnd.max(self.in_flight()) as u128;
        let bps = self.cfg.mss as u128 * 8 * segs * ratio * 1_000_000_000 / (100 * srtt as u128);
        Some(bps.clamp(1, u64::MAX as u128) as u64)
    }

    /// Moves the departure clock on after a segment with `payload` bytes left at `now`,
    /// as Linux does (`tcp_update_skb_after_send`): the clock is at least `now`; from
    /// the tenth data segment on it advances by the *payload's* time at the rate (the
    /// rate counts payload and so does the clock: headers ride free), less the time
    /// the segment left after its slot, up to half the gap ("OS jitter" credit: a
    /// sender that was held back, by the window or a late wake-up, catches up).
    #[inline]
    pub(super) fn pace_after_send(&mut self, now: Nanos, payload: u32, bps: u64) {
        let late = now.saturating_sub(self.pace_next);
        let clock = self.pace_next.max(now);
        self.pace_next = if self.stats.segments_sent + 1 >= UNPACED_SEGMENTS {
            let gap = pace_gap(payload, bps);
            clock + gap - late.min(gap / 2)
        } else {
            clock
        };
    }

    /// Pacing holds the next segment until `pace_next`; then the sender asks to be woken.
    #[inline]
    pub(super) fn pace_blocked<const X: bool>(&mut self, now: Nanos) -> bool {
        if X && self.pacing_bps.is_some() && now < self.pace_next {
            self.pace_deadline = Some(self.pace_next);
            return true;
        }
        false
    }

    /// The pacing wake-up: send what has become due.
    pub fn on_pace(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        self.send_allowed(now, out);
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{bbr_sender, pace_until, rng, sender, MS};
    use super::super::*;

    #[test]
    fn a_flow_with_pacing_paces_at_linux_window_rate() {
        let cfg = TcpConfig {
            initial_cwnd: 10,
            pacing: true,
            ..TcpConfig::default()
        };
        let mut s = Sender::new(0, &cfg, rng());
        let mut out = Vec::new();
        // No RTT sample yet: no pacing, the initial window goes at once.
        s.start(0, &mut out);
        assert_eq!(out.len(), 10);
        out.clear();
        // The ACK of segment 0 sent at 0, arriving at 100 ms: srtt = 100 ms; slow start
        // (per ACK) makes cwnd 11, 9 in flight. Rate = mss·8·max(11, 9)·200 % / 0.1 s =
        // 1448·8·11·2/0.1 = 2 548 480 bit/s (cwnd < ssthresh/2: the slow-start ratio).
        s.on_ack(100 * MS, 1, 0, &mut out);
        assert_eq!(s.pacing_rate(), Some(2_548_480));
        // One segment (the 11th: paced) leaves now. Its payload at that rate is
        // 1448·8 bit / 2 548 480 bit/s = 4 545 454.5 ns → 4 545 455; the clock stood at
        // 0 (nothing was paced before), so the send is 100 ms late and takes half the
        // gap as credit: the next may leave 4 545 455 − 2 272 727 = 2 272 728 ns on.
        assert_eq!(out.len(), 1);
        assert_eq!(s.pace_deadline, Some(100 * MS + 2_272_728));
        // Without the switch the same ACK releases two segments at once.
        let mut u = Sender::new(
            0,
            &TcpConfig {
                pacing: false,
                ..cfg
            },
            rng(),
        );
        u.start(0, &mut out);
        out.clear();
        u.on_ack(100 * MS, 1, 0, &mut out);
        assert_eq!((out.len(), u.pace_deadline), (2, None));
    }

    #[test]
    fn a_paced_sender_spaces_departures_by_payload_over_rate_from_the_tenth() {
        let mut s = bbr_sender(16);
        // BBR's first rate: 16 segments per 1 ms (no RTT yet) = 16,000/s, × 1448 B
        // × 739/256 × 0.99 = 66,210,705 B/s = 529,685,640 bit/s.
        assert_eq!(s.pacing_rate(), Some(529_685_640));
        // Headers ride free: a 1448-byte payload takes 11,584 bit / 529,685,640 bit/s =
        // 21,869.6 ns → 21,870 (the 1500-byte packet would take 22,655).
        let gap = 21_870;
        let mut out = Vec::new();
        s.start(0, &mut out);
        // The first nine leave unpaced, the tenth too but it starts the clock.
        assert_eq!(out.len(), 10, "ten leave at once");
        assert!(out.iter().all(|p| p.sent == 0));
        assert_eq!(s.pace_deadline, Some(gap));
        pace_until(&mut s, MS, &mut out);
        let sent: Vec<(Nanos, u64)> = out.iter().map(|p| (p.sent, p.seq)).collect();
        let want: Vec<(Nanos, u64)> = (0..16u64).map(|k| (k.saturating_sub(9) * gap, k)).collect();
        assert_eq!(sent, want);
        assert_eq!(
            s.pace_deadline, None,
            "the window, not pacing, holds the 17th"
        );
        // An unpaced (NewReno) sender sends its whole window at once.
        let mut r = sender(10);
        out.clear();
        r.start(0, &mut out);
        assert!(out.len() == 10 && out.iter().all(|p| p.sent == 0));
        assert_eq!((r.pacing_rate(), r.pace_deadline), (None, None));
    }

    #[test]
    fn a_late_send_takes_at_most_half_a_gap_of_credit() {
        let mut s = bbr_sender(16);
        let rate = 529_685_640; // as above: a 1448-byte payload takes 21,870 ns
        let mut out = Vec::new();
        s.start(0, &mut out);
        assert_eq!(s.pacing_rate(), Some(rate));
        // The 11th segment, due at 21,870, leaves 5,000 ns late: its gap is shortened by
        // the lateness, the next due 26,870 + 21,870 − 5,000 = 43,740 (not 48,740).
        s.on_pace(26_870, &mut out);
        assert_eq!(s.pace_deadline, Some(43_740));
        // The 12th leaves 1 ms late: the credit stops at half a gap (10,935).
        let t = 43_740 + MS;
        s.on_pace(t, &mut out);
        assert_eq!(s.pace_deadline, Some(t + 21_870 - 10_935));
        assert_eq!(
            out.iter().map(|p| p.sent).collect::<Vec<_>>()[10..],
            [26_870, t]
        );
    }
}
