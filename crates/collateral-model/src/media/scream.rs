//! SCReAM, Self-Clocked Rate Adaptation for Multimedia (RFC 8298), at the sender on per-
//! packet feedback (RFC 8888): a congestion window in bytes (§4.1.2), LEDBAT-like
//! (RFC 6817) on the queuing delay against a target, cut by BETA_LOSS on loss, gates the
//! packets of an RTP queue (self-clocking: a packet leaves when the bytes in flight allow
//! it); a media rate controller (§4.1.3) sets the encoder's target from the window's
//! state and the RTP queue's delay. Times in seconds, sizes in bytes, rates in bit/s.
//!
//! Left out of RFC 8298: the target's rise towards QDELAY_TARGET_HI against loss-based
//! competitors (the target stays QDELAY_TARGET_LO, so a standing queue of a TCP flow
//! starves the call), ECN, packet pacing, and §4.1.3's rate controller beyond its loss,
//! RTP-queue and ramp terms (rate_transmit/rate_ack, PRE_CONGESTION_GUARD, scale_t,
//! rate_media_limit): outside fast increase the target rises by RAMP_UP_SPEED scaled by
//! the delay margin ([`Scream::adjust_rate`]). The RTP queue discards what waited past
//! the call's playout deadline (the RFC's SHOULD on excessively delayed packets; see
//! `VideoCall::release`).

use std::collections::VecDeque;

use collateral_queue::Nanos;

/// Constants of RFC 8298 (its recommended values).
pub const QDELAY_TARGET_LO: f64 = 0.1;
pub const QDELAY_WEIGHT: f64 = 0.1;
pub const QDELAY_TREND_TH: f64 = 0.2;
pub const QDELAY_TREND_LO: f64 = 0.2;
pub const MIN_CWND: f64 = 3000.0;
pub const MAX_BYTES_IN_FLIGHT_HEAD_ROOM: f64 = 1.1;
pub const GAIN: f64 = 1.0;
pub const BETA_LOSS: f64 = 0.8;
pub const BETA_R: f64 = 0.9;
pub const MSS: f64 = 1000.0;
pub const RATE_ADJUST_INTERVAL: f64 = 0.2;
pub const RAMP_UP_SPEED: f64 = 200_000.0;
pub const RTP_QDELAY_TH: f64 = 0.02;
pub const TARGET_RATE_SCALE_RTP_QDELAY: f64 = 0.95;
pub const T_RESUME_FAST_INCREASE: f64 = 5.0;
/// Samples of the fractional queuing delay kept for its trend.
pub const QDELAY_HIST: usize = 20;

fn secs(ns: Nanos) -> f64 {
    ns as f64 / 1e9
}

/// What one acknowledgement tells the window update: the queuing delay, its target and
/// trend (s, s, 0-1), the bytes newly acknowledged, in flight, and the most in flight
/// lately.
#[derive(Debug, Clone, Copy)]
pub struct Ack {
    pub qdelay: f64,
    pub qdelay_target: f64,
    pub qdelay_trend: f64,
    pub acked: f64,
    pub in_flight: f64,
    pub max_in_flight: f64,
}

/// The window update of §4.1.2 on one acknowledgement: in fast increase (no incipient
/// congestion: qdelay_trend below QDELAY_TREND_TH) the window grows by the bytes newly
/// acked when it is used (bytes in flight·1.5 + acked > cwnd); otherwise as LEDBAT:
/// off_target = (qdelay_target − qdelay)/qdelay_target, cwnd += GAIN·off_target·acked·
/// MSS/cwnd, no increase while the window is under-used (bytes in flight·1.25 + acked ≤
/// cwnd). Then cwnd ≤ max_bytes_in_flight·1.1 and ≥ MIN_CWND. Returns (cwnd, fast
/// increase still on).
pub fn update_cwnd(cwnd: f64, fast: bool, a: &Ack) -> (f64, bool) {
    let Ack {
        qdelay,
        qdelay_target,
        qdelay_trend,
        acked,
        in_flight,
        max_in_flight,
    } = *a;
    if fast && qdelay_trend < QDELAY_TREND_TH {
        let c = if in_flight * 1.5 + acked > cwnd {
            cwnd + acked
        } else {
            cwnd
        };
        return (c, true);
    }
    let off_target = (qdelay_target - qdelay) / qdelay_target;
    let mut delta = GAIN * off_target * acked * MSS / cwnd;
    if off_target > 0.0 && in_flight * 1.25 + acked <= cwnd {
        delta = 0.0;
    }
    let c = (cwnd + delta)
        .min(max_in_flight * MAX_BYTES_IN_FLIGHT_HEAD_ROOM)
        .max(MIN_CWND);
    (c, false)
}

/// The loss reaction (§4.1.2): cwnd·BETA_LOSS, not below MIN_CWND.
pub fn on_loss(cwnd: f64) -> f64 {
    (cwnd * BETA_LOSS).max(MIN_CWND)
}

/// SCReAM's sender state: the window and the rate controller.
#[derive(Debug, Clone)]
pub struct Scream {
    pub cwnd: f64,
    pub in_fast_increase: bool,
    pub qdelay_target: f64,
    pub qdelay: f64,
    pub qdelay_fraction_avg: f64,
    pub qdelay_trend: f64,
    pub target_bps: f64,
    pub min_bps: f64,
    pub max_bps: f64,
    /// Smoothed RTT (RFC 6298's gains), s.
    pub s_rtt: f64,
    hist: VecDeque<f64>,
    d_base: Option<Nanos>,
    last_congestion: Option<Nanos>,
    /// A loss seen since the last rate adjustment.
    loss_pending: bool,
    last_adjust: Nanos,
    /// (time, bytes in flight) over the last second, for max_bytes_in_flight.
    flight_hist: VecDeque<(Nanos, f64)>,
}

impl Scream {
    pub fn new(start_bps: f64, min_bps: f64, max_bps: f64, now: Nanos) -> Self {
        Scream {
            cwnd: MIN_CWND,
            in_fast_increase: true,
            qdelay_target: QDELAY_TARGET_LO,
            qdelay: 0.0,
            qdelay_fraction_avg: 0.0,
            qdelay_trend: 0.0,
            target_bps: start_bps.clamp(min_bps, max_bps),
            min_bps,
            max_bps,
            s_rtt: 0.0,
            hist: VecDeque::with_capacity(QDELAY_HIST),
            d_base: None,
            last_congestion: None,
            loss_pending: false,
            last_adjust: now,
            flight_hist: VecDeque::new(),
        }
    }

    /// The largest bytes in flight over the last second (and now).
    fn max_in_flight(&self, now_flight: f64) -> f64 {
        self.flight_hist
            .iter()
            .map(|f| f.1)
            .fold(now_flight, f64::max)
    }

    /// One report: the one-way delays of the packets it says arrived (send, arrival),
    /// whether it reports a loss, the bytes newly acknowledged (lost ones included) and
    /// the bytes still in flight; `rtt_ns` is the latest round trip.
    pub fn on_feedback(
        &mut self,
        delays: &[(Nanos, Nanos)],
        loss: bool,
        acked: f64,
        in_flight: f64,
        rtt_ns: Nanos,
        now: Nanos,
    ) {
        let r = secs(rtt_ns);
        self.s_rtt = if self.s_rtt == 0.0 {
            r
        } else {
            0.875 * self.s_rtt + 0.125 * r
        };
        // qdelay as RFC 6817: the one-way delay less the smallest seen; one sample per
        // report, its latest packet's.
        for &(s, a) in delays {
            let d = a.saturating_sub(s);
            self.d_base = Some(self.d_base.map_or(d, |b| b.min(d)));
            self.qdelay = secs(d - self.d_base.unwrap());
        }
        self.update_trend();
        let congested_ago = self.last_congestion.map(|t| secs(now - t));
        if loss && congested_ago.is_none_or(|a| a > self.s_rtt) {
            self.cwnd = on_loss(self.cwnd);
            self.in_fast_increase = false;
            self.last_congestion = Some(now);
            self.loss_pending = true;
        } else if acked > 0.0 {
            let max = self.max_in_flight(in_flight);
            let a = Ack {
                qdelay: self.qdelay,
                qdelay_target: self.qdelay_target,
                qdelay_trend: self.qdelay_trend,
                acked,
                in_flight,
                max_in_flight: max,
            };
            (self.cwnd, self.in_fast_increase) = update_cwnd(self.cwnd, self.in_fast_increase, &a);
        }
        if !self.in_fast_increase
            && self
                .last_congestion
                .is_none_or(|t| secs(now - t) > T_RESUME_FAST_INCREASE)
            && self.qdelay_trend < QDELAY_TREND_LO
        {
            self.in_fast_increase = true;
        }
        while self
            .flight_hist
            .front()
            .is_some_and(|f| f.0 + 1_000_000_000 <= now)
        {
            self.flight_hist.pop_front();
        }
        self.flight_hist.push_back((now, in_flight));
    }

    /// The fractional queuing delay's EWMA and its trend: the lag-1 autocorrelation of
    /// the last [`QDELAY_HIST`] samples times the average, in [0, 1] (§4.1.2).
    fn update_trend(&mut self) {
        let f = self.qdelay / self.qdelay_target;
        self.qdelay_fraction_avg =
            (1.0 - QDELAY_WEIGHT) * self.qdelay_fraction_avg + QDELAY_WEIGHT * f;
        if self.hist.len() == QDELAY_HIST {
            self.hist.pop_front();
        }
        self.hist.push_back(f);
        let n = self.hist.len() as f64;
        let avg = self.hist.iter().sum::<f64>() / n;
        let (mut a0, mut a1) = (0.0, 0.0);
        for (i, &h) in self.hist.iter().enumerate() {
            a0 += (h - avg).powi(2);
            if i > 0 {
                a1 += (h - avg) * (self.hist[i - 1] - avg);
            }
        }
        let a = if a0 > 0.0 { a1 / a0 } else { 0.0 };
        self.qdelay_trend = (a * self.qdelay_fraction_avg).clamp(0.0, 1.0);
    }

    /// The media rate controller, every RATE_ADJUST_INTERVAL (§4.1.3): after a loss the
    /// target falls by BETA_R; a RTP queue delay above RTP_QDELAY_TH scales it by
    /// TARGET_RATE_SCALE_RTP_QDELAY; otherwise it rises by RAMP_UP_SPEED per second,
    /// scaled down as the queuing delay trends up (fast increase) or nears its target.
    /// Returns the target if it was adjusted now.
    pub fn adjust_rate(&mut self, rtp_queue_delay: f64, now: Nanos) -> Option<f64> {
        if secs(now.saturating_sub(self.last_adjust)) < RATE_ADJUST_INTERVAL {
            return None;
        }
        self.last_adjust = now;
        let t = self.target_bps;
        let t = if self.loss_pending {
            t * BETA_R
        } else if rtp_queue_delay > RTP_QDELAY_TH {
            t * TARGET_RATE_SCALE_RTP_QDELAY
        } else {
            let step = RAMP_UP_SPEED * RATE_ADJUST_INTERVAL;
            let scale = if self.in_fast_increase {
                1.0 - (self.qdelay_trend / QDELAY_TREND_LO).min(1.0)
            } else {
                ((self.qdelay_target - self.qdelay) / self.qdelay_target).clamp(0.0, 1.0)
            };
            t + step * scale
        };
        self.loss_pending = false;
        self.target_bps = t.clamp(self.min_bps, self.max_bps);
        Some(self.target_bps)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(qdelay: f64, target: f64, trend: f64, acked: f64, flight: f64, max: f64) -> Ack {
        Ack {
            qdelay,
            qdelay_target: target,
            qdelay_trend: trend,
            acked,
            in_flight: flight,
            max_in_flight: max,
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    /// Under the target (not in fast increase): cwnd = 10 000, qdelay 25 ms of 100 ms
    /// (off_target 0.75), 2 000 bytes acked, 9 000 in flight (used: 9 000·1.25 + 2 000 >
    /// 10 000): cwnd += 1·0.75·2 000·1 000/10 000 = 150 → 10 150 (the cap,
    /// 12 000·1.1 = 13 200, does not bind).
    #[test]
    fn window_grows_under_the_target() {
        let (c, fast) = update_cwnd(
            10_000.0,
            false,
            &ack(0.025, 0.1, 0.0, 2000.0, 9000.0, 12_000.0),
        );
        assert!(close(c, 10_150.0) && !fast);
        // Under-used (4 000 in flight: 4 000·1.25 + 2 000 ≤ 10 000): no increase.
        let (c, _) = update_cwnd(
            10_000.0,
            false,
            &ack(0.025, 0.1, 0.0, 2000.0, 4000.0, 12_000.0),
        );
        assert!(close(c, 10_000.0));
        // Capped by the most bytes in flight: 9 000·1.1 = 9 900.
        let (c, _) = update_cwnd(
            10_000.0,
            false,
            &ack(0.025, 0.1, 0.0, 2000.0, 9000.0, 9000.0),
        );
        assert!(close(c, 9_900.0));
    }

    /// Over the target: qdelay 150 ms of 100 ms is off_target −0.5: cwnd −= 0.5·2 000·
    /// 1 000/10 000 = 100 → 9 900, under-used or not. Fast increase adds the acked bytes
    /// (10 000 + 2 000) until the trend reaches QDELAY_TREND_TH, then it ends.
    #[test]
    fn window_shrinks_over_the_target_and_fast_increase() {
        let (c, _) = update_cwnd(
            10_000.0,
            false,
            &ack(0.15, 0.1, 0.0, 2000.0, 1000.0, 12_000.0),
        );
        assert!(close(c, 9_900.0));
        let (c, fast) = update_cwnd(
            10_000.0,
            true,
            &ack(0.0, 0.1, 0.1, 2000.0, 9000.0, 12_000.0),
        );
        assert!(close(c, 12_000.0) && fast);
        let (c, fast) = update_cwnd(
            10_000.0,
            true,
            &ack(0.15, 0.1, 0.3, 2000.0, 9000.0, 12_000.0),
        );
        assert!(close(c, 9_900.0) && !fast);
    }

    /// Loss: 10 000 · 0.8 = 8 000; never below MIN_CWND (3 000 · 0.8 → 3 000). Through
    /// the controller: a report with loss cuts the window once, and the next rate
    /// adjustment cuts the target by BETA_R (1 Mbit/s → 900 kbit/s).
    #[test]
    fn loss_cuts_window_and_rate() {
        assert!(close(on_loss(10_000.0), 8_000.0));
        assert!(close(on_loss(3_000.0), 3_000.0));
        let ms = 1_000_000;
        let mut s = Scream::new(1e6, 150e3, 1.5e6, 0);
        s.cwnd = 10_000.0;
        s.on_feedback(&[(0, 20 * ms)], true, 2000.0, 9000.0, 40 * ms, 100 * ms);
        assert!(close(s.cwnd, 8_000.0) && !s.in_fast_increase);
        // Within one s_rtt (40 ms) a second loss does not cut again: the window updates
        // as usual (qdelay 0, off_target 1): 8 000 + 2 000·1 000/8 000 = 8 250.
        s.on_feedback(&[(0, 20 * ms)], true, 2000.0, 9000.0, 40 * ms, 120 * ms);
        assert!(close(s.cwnd, 8_250.0) && !s.in_fast_increase);
        assert_eq!(s.adjust_rate(0.0, 250 * ms), Some(900_000.0));
    }
}
