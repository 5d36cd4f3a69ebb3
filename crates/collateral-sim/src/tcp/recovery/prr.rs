//! Proportional Rate Reduction without SACK: RFC 6937 §3 with the slow-start reduction
//! bound (SSRB), computed as Linux ≥ 3.2 does in `tcp_cwnd_reduction` (`tcp_input.c`;
//! entered from `tcp_init_cwnd_reduction`, ended at ssthresh by `tcp_end_cwnd_reduction`).
//!
//! Without SACK, packets in flight are counted with Linux's non-SACK scoreboard (each
//! duplicate ACK a SACKed segment, the head lost; kept by the sender) and DeliveredData
//! is what that count says left the network on this ACK. On every ACK in recovery:
//!
//! - while `pipe` > ssthresh, the proportional part: cwnd = pipe + ⌈prr_delivered ·
//!   ssthresh / RecoverFS⌉ − prr_out;
//! - otherwise SSRB: cwnd = pipe + min(ssthresh − pipe, max(prr_delivered − prr_out,
//!   DeliveredData) + 1);
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
        self.reduce(w, a.in_flight, a.delivered, true);
    }

    #[inline]
    pub fn dup_ack(&mut self, w: &mut Window, a: &AckInfo) {
        self.reduce(w, a.in_flight, a.delivered, false);
    }

    #[inline]
    pub fn partial_ack(&mut self, w: &mut Window, a: &AckInfo) {
        self.reduce(w, a.in_flight, a.delivered, false);
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

    /// One ACK's reduction: `delivered` segments left the network, `pipe` are still in
    /// it. `fast_rexmit`: the ACK that triggered the fast retransmission, which may
    /// always send one segment.
    pub fn reduce(&mut self, w: &mut Window, pipe: u32, delivered: u32, fast_rexmit: bool) {
        self.delivered += delivered;
        let pipe = pipe as i64;
        let ssthresh = w.ssthresh as i64;
        let sndcnt = if pipe > ssthresh {
            // Proportional part: ⌈prr_delivered · ssthresh / RecoverFS⌉ − prr_out.
            let fs = self.recover_fs.max(1) as i64;
            (self.delivered as i64 * ssthresh + fs - 1) / fs - self.out as i64
        } else {
            // SSRB: min(ssthresh − pipe, max(prr_delivered − prr_out, DeliveredData) + 1).
            (ssthresh - pipe)
                .min((self.delivered as i64 - self.out as i64).max(delivered as i64) + 1)
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
