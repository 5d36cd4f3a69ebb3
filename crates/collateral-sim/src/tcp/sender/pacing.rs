//! The sender's pacing: at the algorithm's own rate (BBR) or at Linux's window-based
//! rate (`tcp_update_pacing_rate`, for `pacing` and TCP Prague), whole IP packets
//! spaced so that the rate is never exceeded.

use collateral_queue::{Nanos, Packet};

use super::Sender;

const SEC: Nanos = 1_000_000_000;

/// Time a `len`-byte packet takes at `bps`, rounded up so the rate is never exceeded.
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
    /// `tcp_pacing_ca_ratio`). The rate counts payload and paces whole IP packets, as
    /// Linux's does. No RTT sample yet: no pacing.
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
        // One segment leaves now, the next is held for 1500 B at that rate.
        assert_eq!(out.len(), 1);
        assert_eq!(s.pace_deadline, Some(100 * MS + pace_gap(1500, 2_548_480)));
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
    fn a_paced_sender_spaces_departures_by_length_over_rate() {
        let mut s = bbr_sender(10);
        // BBR's first rate: 10 segments per 1 ms (no RTT yet) = 10,000/s, × 1448 B
        // × 739/256 × 0.99 = 41,381,690 B/s = 331,053,520 bit/s.
        assert_eq!(s.pacing_rate(), Some(331_053_520));
        // A 1500-byte packet takes 12,000 bit / 331,053,520 bit/s = 36,247.8 ns → 36,248.
        let gap = 36_248;
        let mut out = Vec::new();
        s.start(0, &mut out);
        assert_eq!(out.len(), 1, "only the first leaves at once");
        assert_eq!(s.pace_deadline, Some(gap));
        pace_until(&mut s, MS, &mut out);
        let sent: Vec<(Nanos, u64)> = out.iter().map(|p| (p.sent, p.seq)).collect();
        let want: Vec<(Nanos, u64)> = (0..10).map(|k| (k * gap, k)).collect();
        assert_eq!(sent, want);
        assert_eq!(
            s.pace_deadline, None,
            "the window, not pacing, holds the 11th"
        );
        // An unpaced (NewReno) sender sends its whole window at once.
        let mut r = sender(10);
        out.clear();
        r.start(0, &mut out);
        assert!(out.len() == 10 && out.iter().all(|p| p.sent == 0));
        assert_eq!((r.pacing_rate(), r.pace_deadline), (None, None));
    }
}
