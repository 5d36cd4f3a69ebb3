//! Linux 2.6.25 rate-halving without SACK (`tcp_input.c`: `tcp_cwnd_down`, called from
//! `tcp_fastretrans_alert` on every ACK in recovery; `tcp_complete_cwr` at the end).
//!
//! Linux 2.6.25 does not inflate the window. It counts each duplicate ACK as a SACKed
//! segment (`tcp_add_reno_sack`) and the head as lost, so that packets in flight
//! (`tcp_packets_in_flight`, kept by the sender) fall as the ACKs come in; the sender
//! retransmits the lost head when in-flight drops below cwnd. Meanwhile cwnd itself:
//!
//! - falls by one segment on every second ACK (the toggle is Linux's reuse of
//!   `snd_cwnd_cnt`), but not below the algorithm's floor (`min_cwnd`: half of
//!   ssthresh for Reno, `tcp_reno_min_cwnd`);
//! - is never more than packets in flight + 1, on every ACK.
//!
//! Entering recovery resets the toggle; a partial ACK is one more such ACK (the sender
//! marks the new head lost). The full ACK ends recovery at min(cwnd, ssthresh)
//! (`tcp_complete_cwr`). With SACK, Linux 2.6.25 runs the same window rule with FACK's
//! loss detection: [`fack`](super::fack).

use super::AckInfo;
use crate::tcp::cc::{AnyCc, CongestionControl, Window};

/// Rate-halving's every-second-ACK toggle.
#[derive(Debug, Clone, Copy, Default)]
pub struct RateHalving {
    cnt: u32,
}

impl RateHalving {
    #[inline]
    pub fn enter(&mut self, w: &mut Window, cc: &AnyCc, a: &AckInfo) {
        self.reset();
        self.cwnd_down(w, cc, a.in_flight);
    }

    #[inline]
    pub fn dup_ack(&mut self, w: &mut Window, cc: &AnyCc, a: &AckInfo) {
        self.cwnd_down(w, cc, a.in_flight);
    }

    #[inline]
    pub fn partial_ack(&mut self, w: &mut Window, cc: &AnyCc, a: &AckInfo) {
        self.cwnd_down(w, cc, a.in_flight);
    }

    /// Recovery begins: the next ACK is the first of a pair.
    #[inline]
    pub fn reset(&mut self) {
        self.cnt = 0;
    }

    /// `tcp_cwnd_down`: on every second ACK take one segment off cwnd while it is above
    /// the algorithm's floor, and never let it exceed `in_flight` + 1.
    #[inline]
    pub fn cwnd_down(&mut self, w: &mut Window, cc: &AnyCc, in_flight: u32) {
        let decr = self.cnt + 1;
        self.cnt = decr & 1;
        if decr >> 1 == 1 && w.cwnd > cc.min_cwnd(w) {
            w.cwnd -= 1;
        }
        w.cwnd = w.cwnd.min(in_flight + 1).max(1);
    }
}

/// cwnd after the full ACK (`tcp_complete_cwr`): min(cwnd, ssthresh).
#[inline]
pub fn exit_cwnd(w: &Window) -> u32 {
    w.cwnd.min(w.ssthresh)
}
