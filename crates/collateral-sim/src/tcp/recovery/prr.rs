//! Proportional Rate Reduction without SACK: RFC 6937 §3, computed as Linux ≥ 5.19
//! does in `tcp_cwnd_reduction` (`tcp_input.c`, since "tcp: improve PRR loss recovery";
//! entered from `tcp_init_cwnd_reduction`, ended at ssthresh by `tcp_end_cwnd_reduction`).
//!
//! Without SACK, packets in flight are counted with Linux's non-SACK scoreboard (each
//! duplicate ACK a SACKed segment, the head lost; kept by the sender) and DeliveredData
//! is what that count says left the network on this ACK. On every ACK in recovery:
//!
//! - while `pipe` > ssthresh, the proportional part: cwnd = pipe + ⌈prr_delivered ·
//!   ssthresh / RecoverFS⌉ − prr_out;
//! - otherwise the reduction bound: cwnd = pipe + min(ssthresh − pipe,
//!   max(prr_delivered − prr_out, DeliveredData) + b), where the slow-start segment `b`
//!   is 1 only when the ACK moved `snd_una` and marked nothing newly lost. RFC 6937's
//!   SSRB (and Linux 3.2, which first had it) adds it on every ACK; then an ACK that only
//!   SACKs new data while retransmissions are being lost sends two segments for the one
//!   delivered, back to back, and an AQM that drops the head of a two-packet flow queue
//!   (unshaped CAKE on a slow link) can drop the retransmission every time;
//!
//! and on the fast-retransmit ACK itself at least one segment may go. RecoverFS is
//! FlightSize when recovery begins. The full ACK ends recovery at cwnd = ssthresh.
//! With SACK the same window rule runs beside RFC 6675's loss detection:
//! [`rfc6675`](super::rfc6675).

use super::AckInfo;
use crate::tcp::cc::Window;

/// RFC 6937's per-recovery counters.
#[derive(Debug, Clone, Copy, Default)]
pub struct Prr {
    /// `prr_delivered`: segments delivered since recovery began.
    delivered: u32,
    /// `prr_out`: segments sent since recovery began.
    out: u32,
    /// `RecoverFS`: FlightSize at the start of recovery.
    recover_fs: u32,
}

impl Prr {
    #[inline]
    pub fn enter(&mut self, w: &mut Window, a: &AckInfo) {
        self.start(a.flight);
        self.reduce(w, a, true);
    }

    #[inline]
    pub fn dup_ack(&mut self, w: &mut Window, a: &AckInfo) {
        self.reduce(w, a, false);
    }

    #[inline]
    pub fn partial_ack(&mut self, w: &mut Window, a: &AckInfo) {
        self.reduce(w, a, false);
    }

    /// A segment left during recovery.
    #[inline]
    pub fn sent(&mut self) {
        self.out += 1;
    }

    /// RFC 6937 §3's initialisation at the start of recovery.
    #[inline]
    pub fn start(&mut self, flight: u32) {
        self.delivered = 0;
        self.out = 0;
        self.recover_fs = flight;
    }

    /// One ACK's reduction: `a.delivered` segments left the network, `a.in_flight`
    /// are still in it. `fast_rexmit`: the ACK that triggered the fast retransmission,
    /// which may always send one segment.
    pub fn reduce(&mut self, w: &mut Window, a: &AckInfo, fast_rexmit: bool) {
        self.delivered += a.delivered;
        let pipe = a.in_flight as i64;
        let ssthresh = w.ssthresh as i64;
        let sndcnt = if pipe > ssthresh {
            // Proportional part: ⌈prr_delivered · ssthresh / RecoverFS⌉ − prr_out.
            let fs = self.recover_fs.max(1) as i64;
            (self.delivered as i64 * ssthresh + fs - 1) / fs - self.out as i64
        } else {
            // min(ssthresh − pipe, max(prr_delivered − prr_out, DeliveredData) + b).
            let slow_start = (a.advanced && a.newly_lost == 0) as i64;
            (ssthresh - pipe)
                .min((self.delivered as i64 - self.out as i64).max(a.delivered as i64) + slow_start)
        };
        let sndcnt = sndcnt.max(fast_rexmit as i64);
        w.cwnd = (pipe + sndcnt).max(1) as u32;
    }
}

/// cwnd after the full ACK: ssthresh.
#[inline]
pub fn exit_cwnd(w: &Window) -> u32 {
    w.ssthresh
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An ACK in recovery with `pipe` segments left in flight, `delivered` newly
    /// delivered, whether it moved `snd_una`, and how many segments it newly marked lost.
    fn ack(pipe: u32, delivered: u32, advanced: bool, newly_lost: u32) -> AckInfo {
        AckInfo {
            in_flight: pipe,
            delivered,
            advanced,
            newly_lost,
            ..AckInfo::default()
        }
    }

    #[test]
    fn the_slow_start_segment_needs_snd_una_to_move_and_no_new_loss() {
        // Deep in a recovery whose retransmissions keep being lost: 20 delivered, 24 sent
        // (prr_delivered − prr_out < 0), ssthresh 9, pipe 7 ≤ ssthresh.
        let at = |w: &mut Window, a: AckInfo| {
            let mut p = Prr {
                delivered: 20,
                out: 24,
                recover_fs: 14,
            };
            p.reduce(w, &a, false);
            w.cwnd
        };
        let mut w = Window {
            cwnd: 9,
            ssthresh: 9,
        };
        // A SACK of one new segment that finds a retransmission lost again: prr_delivered
        // 21, max(21 − 24, 1) = 1, no slow-start segment: min(9 − 7, 1) = 1 → cwnd 8 (one
        // segment out for the one delivered; RFC 6937's SSRB would send 2: cwnd 9).
        assert_eq!(at(&mut w, ack(7, 1, false, 1)), 8);
        // The same SACK without a new loss: snd_una did not move, still 1 → cwnd 8.
        assert_eq!(at(&mut w, ack(7, 1, false, 0)), 8);
        // snd_una moves but the ACK marks a loss: 1 → cwnd 8.
        assert_eq!(at(&mut w, ack(7, 1, true, 1)), 8);
        // snd_una moves and nothing newly lost: max(…, 1) + 1 = 2 → cwnd 9.
        assert_eq!(at(&mut w, ack(7, 1, true, 0)), 9);
        // Capped by ssthresh − pipe: pipe 8 leaves room for 1 → cwnd 9.
        assert_eq!(at(&mut w, ack(8, 1, true, 0)), 9);
    }

    #[test]
    fn banked_sends_go_without_the_slow_start_segment() {
        // prr_delivered − prr_out = 30 − 27 = 3 banked (e.g. application-limited): a
        // SACK-only ACK delivering 1 at pipe 3, ssthresh 9: max(31 − 27, 1) = 4 →
        // min(6, 4) = 4 → cwnd 7.
        let mut p = Prr {
            delivered: 30,
            out: 27,
            recover_fs: 14,
        };
        let mut w = Window {
            cwnd: 9,
            ssthresh: 9,
        };
        p.reduce(&mut w, &ack(3, 1, false, 0), false);
        assert_eq!(w.cwnd, 7);
    }
}
