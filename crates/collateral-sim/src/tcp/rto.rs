//! The retransmission timer's estimator: RFC 6298 §2 (SRTT, RTTVAR and the RTO from
//! them) and §5.5 (exponential backoff), or Linux's variant of §2 (`tcp_rtt_estimator`
//! and `tcp_set_rto` in `tcp_input.c`), chosen by [`RtoEstimator`]. The timer itself
//! (when it is armed, what expiry does) is the sender's.

use collateral_queue::Nanos;

pub use collateral_model::tcp::RtoEstimator;

/// Smoothed RTT and its variation (RFC 6298 §2).
#[derive(Debug, Clone, Copy, Default)]
pub struct RttEstimator {
    /// `None` until the first sample.
    pub srtt: Option<Nanos>,
    pub rttvar: Nanos,
}

impl RttEstimator {
    /// Takes one RTT sample: the first sets SRTT = R, RTTVAR = R/2 (§2.2); later ones
    /// RTTVAR = 3/4 RTTVAR + 1/4 |SRTT − R|, then SRTT = 7/8 SRTT + 1/8 R (§2.3).
    #[inline]
    pub fn sample(&mut self, r: Nanos) {
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = r / 2;
            }
            Some(s) => {
                self.rttvar = (3 * self.rttvar + s.abs_diff(r)) / 4;
                self.srtt = Some((7 * s + r) / 8);
            }
        }
    }

    /// The RTO from the current estimate (after at least one sample), within
    /// `min ..= max`.
    #[inline]
    pub fn rto(&self, kind: RtoEstimator, min: Nanos, max: Nanos) -> Nanos {
        let srtt = self.srtt.expect("an RTT sample first");
        let rto = match kind {
            // RTO = SRTT + max(G, 4·RTTVAR), G = 1 ns here (the clock is exact).
            RtoEstimator::Rfc6298 => srtt + (4 * self.rttvar).max(1),
            RtoEstimator::Linux => srtt + (4 * self.rttvar).max(min),
        };
        rto.clamp(min, max)
    }
}

/// §5.5: each expiry doubles the RTO, up to `max`.
#[inline]
pub fn backoff(rto: Nanos, max: Nanos) -> Nanos {
    (rto * 2).min(max)
}
