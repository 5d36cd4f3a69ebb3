//! The sender's ECN (RFC 3168; L4S per RFC 9331 and RFC 8257's per-ACK feedback): the
//! codepoint and CWR flag its segments carry, and its answer to ECN-Echo, one window
//! reduction per window of data.

use collateral_queue::{tcp_flags, Ecn, Nanos, Packet};

use super::super::cc::{CaState, CongestionControl, EcnAck};
use super::super::TcpEcn;
use super::Sender;

impl Sender {
    /// The ECN codepoint and CWR flag of a data segment. Classic ECN sends
    /// retransmissions Not-ECT (RFC 3168 §6.1.5); L4S keeps ECT(1) on them (RFC 8311
    /// §4.3 lifts that rule for experiments; Linux with AccECN does the same).
    #[cold]
    pub(super) fn ecn_stamp(&mut self, p: &mut Packet, retransmit: bool) {
        let e = match (self.cfg.ecn, retransmit) {
            (TcpEcn::L4s, _) => Ecn::Ect1,
            (_, false) => Ecn::Ect0,
            (_, true) => Ecn::NotEct,
        };
        p.set_ecn(e);
        if self.send_cwr && !retransmit {
            p.flags |= tcp_flags::CWR;
            self.send_cwr = false;
            self.cwr_high = self.cwr_high.max(p.seq + 1);
        }
    }

    /// In the window after an ECN reduction (Linux's CWR state): no growth, no second
    /// reduction.
    #[inline]
    pub(super) fn in_cwr(&self) -> bool {
        self.snd_una < self.cwr_high
    }

    /// An ACK's ECN feedback, before [`on_ack`](Self::on_ack) processes it: the
    /// algorithm's estimate (DCTCP's α), then, on ECN-Echo, one window reduction per
    /// window of data (RFC 3168 §6.1.2) unless loss recovery has already reduced it.
    /// Algorithms that own the window (BBR v1) ignore ECN, as Linux's does.
    #[inline]
    pub fn on_ecn_echo(&mut self, now: Nanos, ack: u64, flags: u8) {
        if self.cfg.ecn == TcpEcn::Off || self.owns_window() {
            return;
        }
        let ece = flags & tcp_flags::ECE != 0;
        let acked = ack.saturating_sub(self.snd_una).min(u32::MAX as u64) as u32;
        self.cc.on_ecn(&EcnAck {
            acked,
            ece,
            ack,
            snd_nxt: self.snd_nxt,
        });
        if !ece || ack < self.cwr_high || matches!(self.state, CaState::Recovery | CaState::Loss) {
            return;
        }
        let flight = self.flight();
        self.w.ssthresh = self.cc.ecn_ssthresh(now, &self.w, flight);
        self.w.cwnd = self.w.cwnd.min(self.w.ssthresh).max(1);
        // The CWR segment will be new data, at snd_nxt or later (moved on when sent).
        self.cwr_high = self.snd_nxt.max(ack) + 1;
        self.send_cwr = true;
        self.stats.ecn_reductions += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{rng, MS};
    use super::super::*;
    use crate::tcp::{CcKind, TcpEcn};
    use collateral_queue::{tcp_flags, Ecn};

    fn ecn_sender(ecn: TcpEcn, cc: CcKind, initial_cwnd: u32) -> Sender {
        let cfg = TcpConfig {
            initial_cwnd,
            ecn,
            cc,
            ..TcpConfig::default()
        };
        Sender::new(0, &cfg, rng())
    }

    #[test]
    fn classic_ecn_halves_once_per_window_and_sets_cwr_on_new_data() {
        let mut s = ecn_sender(TcpEcn::Classic, CcKind::Newreno, 20);
        let mut out = Vec::new();
        s.start(0, &mut out);
        // Twenty segments 0..20, ECT(0), no CWR.
        assert_eq!(out.len(), 20);
        assert!(out
            .iter()
            .all(|p| p.ecn() == Ecn::Ect0 && p.flags & tcp_flags::CWR == 0));
        out.clear();
        // The ACK of segment 0 carries ECE: ssthresh = max(FlightSize/2, 2) = 10 (RFC
        // 5681 eq. 4 for the rfc stack; flight is 20 before the ACK is applied), cwnd =
        // 10; CWR goes on the next new segment. 19 in flight > cwnd: nothing is sent.
        s.on_ecn_echo(MS, 1, tcp_flags::ECE);
        s.on_ack(MS, 1, 0, &mut out);
        assert_eq!(
            (s.w.cwnd, s.w.ssthresh, s.stats.ecn_reductions),
            (10, 10, 1)
        );
        assert!(out.is_empty());
        // More ECE within the window (segments up to snd_nxt = 20): no second cut, and
        // no growth while in CWR.
        for ack in 2..=11u64 {
            s.on_ecn_echo(MS * ack, ack, tcp_flags::ECE);
            s.on_ack(MS * ack, ack, 0, &mut out);
        }
        assert_eq!((s.w.cwnd, s.stats.ecn_reductions), (10, 1));
        // The first new segment (20) carries CWR; the later ones do not.
        let first_new = out.iter().find(|p| p.seq == 20).unwrap();
        assert_ne!(first_new.flags & tcp_flags::CWR, 0);
        assert!(out
            .iter()
            .filter(|p| p.seq > 20)
            .all(|p| p.flags & tcp_flags::CWR == 0));
        out.clear();
        // Segments up to 20 acknowledged: the ACK of the old window's last segment
        // still echoes the marks already answered (the receiver has not seen CWR).
        s.on_ecn_echo(MS * 40, 20, tcp_flags::ECE);
        s.on_ack(MS * 40, 20, 0, &mut out);
        assert_eq!((s.w.cwnd, s.stats.ecn_reductions), (10, 1));
        // The ACK that covers the CWR segment (20) with ECE is a new mark: cut again,
        // flight = 30 − 20 = 10 (the ACK is not applied yet) → ssthresh 5.
        out.clear();
        s.on_ecn_echo(MS * 41, 21, tcp_flags::ECE);
        s.on_ack(MS * 41, 21, 0, &mut out);
        assert_eq!((s.w.cwnd, s.stats.ecn_reductions), (5, 2));
    }

    #[test]
    fn retransmissions_are_not_ect_in_classic_ecn_and_ect1_in_l4s() {
        for (ecn, cc, want) in [
            (TcpEcn::Classic, CcKind::Newreno, Ecn::NotEct),
            (TcpEcn::L4s, CcKind::Dctcp, Ecn::Ect1),
        ] {
            let mut s = ecn_sender(ecn, cc, 4);
            let mut out = Vec::new();
            s.start(0, &mut out);
            out.clear();
            s.on_timeout(MS * 1000, &mut out);
            let p = out.iter().find(|p| p.seq == 0).unwrap();
            assert_eq!(p.ecn(), want, "{ecn:?}");
        }
        // ECN off: nothing marked.
        let mut s = ecn_sender(TcpEcn::Off, CcKind::Newreno, 4);
        let mut out = Vec::new();
        s.start(0, &mut out);
        assert!(out.iter().all(|p| p.tos == 0 && p.flags == 0));
    }

    #[test]
    fn dctcp_cuts_by_alpha_over_two() {
        let mut s = ecn_sender(TcpEcn::L4s, CcKind::Dctcp, 40);
        let mut out = Vec::new();
        s.start(0, &mut out);
        out.clear();
        // α starts at 1 (RFC 8257 §3.3): the first ECE cuts cwnd 40 → 40·(1 − 1/2) = 20.
        // (The ACK closes the initial empty window first; α stays 1.)
        s.on_ecn_echo(MS, 1, tcp_flags::ECE);
        assert_eq!((s.w.cwnd, s.w.ssthresh), (20, 20));
        let AnyCc::Dctcp(d) = &s.cc else { panic!() };
        assert_eq!(d.alpha, 1.0);
    }
}
