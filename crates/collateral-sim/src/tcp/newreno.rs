//! NewReno's congestion avoidance: RFC 5681 §3.1's additive increase and multiplicative
//! decrease, with RFC 3465 ABC as an option (Linux `tcp_reno_cong_avoid`,
//! `tcp_reno_ssthresh`, `tcp_reno_min_cwnd` in `tcp_cong.c`). NewReno's loss recovery
//! (RFC 6582) is in [`recovery::newreno_inflation`](super::recovery::newreno_inflation)
//! and, with SACK, [`recovery::freebsd_sack`](super::recovery::freebsd_sack).

use collateral_queue::Nanos;

use super::cc::{slow_start, Ack, CaState, CongestionControl, Growth, Window};

/// NewReno's window growth and reduction (RFC 5681 §3.1; Linux `tcp_reno_*`).
///
/// Loss recovery (fast retransmit, fast recovery, timeouts) is the sender's; this is only
/// the additive-increase / multiplicative-decrease rule.
#[derive(Debug, Clone)]
pub struct NewReno {
    g: Growth,
    /// Congestion-avoidance counter (Linux `snd_cwnd_cnt`).
    cnt: u32,
    /// In the slow start that follows a timeout (ABC's L = 1).
    after_timeout: bool,
}

impl NewReno {
    pub fn new(g: Growth) -> Self {
        NewReno {
            g,
            cnt: 0,
            after_timeout: false,
        }
    }
}

impl CongestionControl for NewReno {
    fn on_ack(&mut self, w: &mut Window, ack: &Ack) {
        if self.g.in_slow_start(w) {
            slow_start(w, ack.acked, self.g.slow_start, self.after_timeout);
            return;
        }
        self.after_timeout = false;
        // One segment per window's worth of ACKs (RFC 5681 eq. 3, counted as Linux's
        // snd_cwnd_cnt does) or of acked segments with ABC.
        let per = w.cwnd;
        self.g.additive_increase(w, &mut self.cnt, per, ack.acked);
    }

    /// max(cwnd / 2, 2) (Linux `tcp_reno_ssthresh`, FreeBSD) or max(FlightSize / 2, 2)
    /// (RFC 5681 eq. 4).
    fn ssthresh(&mut self, _now: Nanos, w: &Window, flight: u32) -> u32 {
        self.cnt = 0;
        (self.g.loss_base(w, flight) / 2).max(2)
    }

    fn set_state(&mut self, _now: Nanos, state: CaState) {
        if state == CaState::Loss {
            self.after_timeout = true;
        }
    }

    /// Linux `tcp_reno_min_cwnd`: rate-halving may go down to half of ssthresh.
    fn min_cwnd(&self, w: &Window) -> u32 {
        (w.ssthresh / 2).max(2)
    }
}
