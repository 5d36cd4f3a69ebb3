//! Congestion control: a small trait of hooks that take `now`, and an enum over the
//! implementations for static dispatch (smoltcp's `AnyController`).
//!
//! Windows are counted in segments with a separate growth counter, as Linux does
//! (`snd_cwnd`, `snd_cwnd_cnt`); algorithms keep whatever else they need inside.

use collateral_queue::Nanos;
use serde::{Deserialize, Serialize};

/// The sender's window state that congestion control acts on, in segments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub cwnd: u32,
    pub ssthresh: u32,
}

/// What the sender tells congestion control about an ACK that acknowledged new data.
#[derive(Debug, Clone, Copy)]
pub struct Ack {
    pub now: Nanos,
    /// Segments newly acknowledged by this ACK.
    pub acked: u32,
    /// Segments in flight before this ACK arrived.
    pub prior_in_flight: u32,
    /// RTT sample from the timestamp echo, if any.
    pub rtt: Option<Nanos>,
}

/// Congestion-control hooks. The sender handles loss detection and recovery; these
/// decide how the window grows and where `ssthresh` goes after a congestion event.
pub trait CongestionControl {
    /// Window growth on an ACK of new data outside loss recovery.
    fn on_ack(&mut self, w: &mut Window, ack: &Ack);
    /// The new `ssthresh` at a congestion event (fast retransmit or timeout), given the
    /// segments in flight (RFC 5681's FlightSize).
    fn ssthresh(&mut self, now: Nanos, w: &Window, flight: u32) -> u32;
    /// A retransmission timeout happened (after `ssthresh`).
    fn on_timeout(&mut self, _now: Nanos) {}
}

/// Which algorithm a flow uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CcKind {
    Newreno,
}

impl CcKind {
    pub fn name(self) -> &'static str {
        match self {
            CcKind::Newreno => "newreno",
        }
    }
}

/// Static dispatch over the algorithms.
#[derive(Debug, Clone)]
pub enum AnyCc {
    NewReno(NewReno),
}

impl AnyCc {
    pub fn new(kind: CcKind, abc: bool) -> Self {
        match kind {
            CcKind::Newreno => AnyCc::NewReno(NewReno::new(abc)),
        }
    }
}

impl CongestionControl for AnyCc {
    #[inline]
    fn on_ack(&mut self, w: &mut Window, ack: &Ack) {
        match self {
            AnyCc::NewReno(c) => c.on_ack(w, ack),
        }
    }
    #[inline]
    fn ssthresh(&mut self, now: Nanos, w: &Window, flight: u32) -> u32 {
        match self {
            AnyCc::NewReno(c) => c.ssthresh(now, w, flight),
        }
    }
    #[inline]
    fn on_timeout(&mut self, now: Nanos) {
        match self {
            AnyCc::NewReno(c) => c.on_timeout(now),
        }
    }
}

/// NewReno's window growth and reduction (RFC 5681 §3.1, with RFC 3465 ABC as an option).
///
/// Loss recovery (fast retransmit, RFC 6582 fast recovery, timeouts) is the sender's;
/// this is only the additive-increase / multiplicative-decrease rule.
#[derive(Debug, Clone)]
pub struct NewReno {
    /// Appropriate Byte Counting (RFC 3465): grow by segments acked, not ACKs received.
    pub abc: bool,
    /// ABC's slow-start limit L; RFC 3465 §2.3 says 1 in the slow start after an RTO.
    abc_limit: u32,
    /// Congestion-avoidance counter: ACKs (or segments with ABC) since the last increase.
    cnt: u32,
}

impl NewReno {
    pub fn new(abc: bool) -> Self {
        NewReno { abc, abc_limit: 2, cnt: 0 }
    }
}

impl CongestionControl for NewReno {
    fn on_ack(&mut self, w: &mut Window, ack: &Ack) {
        if w.cwnd < w.ssthresh {
            // Slow start (RFC 5681 eq. 2): one segment per ACK; with ABC, one per
            // segment acked, at most L per ACK (RFC 3465 §2.2).
            w.cwnd += if self.abc { ack.acked.min(self.abc_limit) } else { 1 };
            return;
        }
        self.abc_limit = 2;
        // Congestion avoidance: one segment per window's worth of ACKs (RFC 5681 eq. 3,
        // counted as Linux's snd_cwnd_cnt does) or of acked segments with ABC.
        self.cnt += if self.abc { ack.acked } else { 1 };
        if self.cnt >= w.cwnd {
            self.cnt -= w.cwnd;
            w.cwnd += 1;
        }
    }

    /// RFC 5681 eq. 4: ssthresh = max(FlightSize / 2, 2 segments).
    fn ssthresh(&mut self, _now: Nanos, _w: &Window, flight: u32) -> u32 {
        self.cnt = 0;
        (flight / 2).max(2)
    }

    fn on_timeout(&mut self, _now: Nanos) {
        self.abc_limit = 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(acked: u32) -> Ack {
        Ack { now: 0, acked, prior_in_flight: 100, rtt: None }
    }

    #[test]
    fn slow_start_adds_one_per_ack_without_abc_and_acked_segments_with_abc() {
        let mut w = Window { cwnd: 2, ssthresh: 100 };
        let mut c = NewReno::new(false);
        c.on_ack(&mut w, &ack(2)); // delayed ACK covering 2 segments: +1
        assert_eq!(w.cwnd, 3);
        let mut c = NewReno::new(true);
        c.on_ack(&mut w, &ack(2)); // ABC L=2: +2
        assert_eq!(w.cwnd, 5);
        c.on_ack(&mut w, &ack(5)); // capped at L = 2
        assert_eq!(w.cwnd, 7);
        c.on_timeout(0); // after an RTO, L = 1
        c.on_ack(&mut w, &ack(3));
        assert_eq!(w.cwnd, 8);
    }

    #[test]
    fn congestion_avoidance_adds_one_segment_per_window_of_acks() {
        // cwnd = ssthresh = 10: 10 ACKs make +1, the next 11 make another +1.
        let mut w = Window { cwnd: 10, ssthresh: 10 };
        let mut c = NewReno::new(false);
        for _ in 0..9 {
            c.on_ack(&mut w, &ack(1));
        }
        assert_eq!(w.cwnd, 10);
        c.on_ack(&mut w, &ack(1));
        assert_eq!(w.cwnd, 11);
        for _ in 0..10 {
            c.on_ack(&mut w, &ack(1));
        }
        assert_eq!(w.cwnd, 11);
        c.on_ack(&mut w, &ack(1));
        assert_eq!(w.cwnd, 12);
        // With ABC and delayed ACKs (2 segments each), 6 ACKs make the 12 segments.
        let mut c = NewReno::new(true);
        for _ in 0..5 {
            c.on_ack(&mut w, &ack(2));
        }
        assert_eq!(w.cwnd, 12);
        c.on_ack(&mut w, &ack(2));
        assert_eq!(w.cwnd, 13);
    }

    #[test]
    fn ssthresh_is_half_the_flight_at_least_two() {
        let mut c = NewReno::new(false);
        let w = Window { cwnd: 40, ssthresh: 100 };
        assert_eq!(c.ssthresh(0, &w, 40), 20);
        assert_eq!(c.ssthresh(0, &w, 31), 15);
        assert_eq!(c.ssthresh(0, &w, 3), 2);
    }
}
