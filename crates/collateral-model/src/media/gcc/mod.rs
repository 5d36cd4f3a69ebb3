//! Google Congestion Control (draft-ietf-rmcat-gcc-02, expired), run at the sender on
//! per-packet feedback (RFC 8888): a delay-based controller (arrival groups, trendline
//! filter, over-use detector with an adaptive threshold, AIMD rate controller) beside a
//! loss-based one; the target is the smaller of the two (draft §5, §6).
//!
//! The draft filters the delay gradient with a Kalman filter; libwebrtc, where GCC is
//! maintained, replaced it with a least-squares trendline over the smoothed accumulated
//! delay (`goog_cc/trendline_estimator.cc`), which is what runs here, with libwebrtc's
//! window (20 groups), smoothing (0.9) and gain (4) and the draft's threshold constants.
//! Every time below is in milliseconds (as the draft writes them), rates in bit/s.
//!
//! [`detector`] holds the trendline and the over-use detector, [`rate`] the AIMD and
//! loss-based controllers; [`Gcc`] feeds them each report's packets.

pub mod detector;
pub mod rate;

use std::collections::VecDeque;

use collateral_queue::Nanos;

pub use detector::{
    OveruseDetector, Trendline, Usage, TRENDLINE_GAIN, TRENDLINE_SMOOTHING, TRENDLINE_WINDOW,
};
pub use rate::{loss_update, Aimd, RateState};

/// Packets sent within this of a group's first packet form one group (draft §5.2:
/// burst_time 5 ms).
pub const BURST_NS: Nanos = 5_000_000;
/// The received rate R_hat is measured over this window (draft §5.5: 0.5 to 1 s).
pub const RATE_WINDOW_NS: Nanos = 500_000_000;
/// Loss is judged over at least this many packets (libwebrtc's send-side estimator
/// waits for 20), not per report: a report of five packets would read one loss as 20 %.
pub const LOSS_MIN_PACKETS: u32 = 20;

/// One packet as the feedback reports it, matched with what the sender knows of it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PacketResult {
    pub sent: Nanos,
    pub bytes: u32,
    /// Arrival on the receiver's clock; `None`: reported missing (lost).
    pub arrived: Option<Nanos>,
    /// Reported CE-marked (RFC 8888's ECN field); NADA reads it.
    pub ce: bool,
}

/// An arrival group (draft §5.2): its first send time and its last packet's send and
/// arrival times.
#[derive(Debug, Clone, Copy)]
struct Group {
    first_sent: Nanos,
    last_sent: Nanos,
    last_arrived: Nanos,
}

/// GCC at the sender: feed it each feedback report's packets, read the target.
#[derive(Debug, Clone)]
pub struct Gcc {
    pub trendline: Trendline,
    pub detector: OveruseDetector,
    pub aimd: Aimd,
    /// The loss-based estimate As_hat.
    pub loss_bps: f64,
    min_bps: f64,
    max_bps: f64,
    open: Option<Group>,
    prev: Option<Group>,
    /// (arrival, bytes) of the packets received within the last [`RATE_WINDOW_NS`].
    received: VecDeque<(Nanos, u32)>,
    received_bytes: u64,
    /// Packets judged for loss since the last loss update, and how many were lost.
    loss_count: (u32, u32),
}

impl Gcc {
    pub fn new(start_bps: f64, min_bps: f64, max_bps: f64) -> Self {
        Gcc {
            trendline: Trendline::new(TRENDLINE_WINDOW, TRENDLINE_SMOOTHING),
            detector: OveruseDetector::new(TRENDLINE_GAIN),
            aimd: Aimd::new(start_bps, min_bps, max_bps),
            loss_bps: start_bps.clamp(min_bps, max_bps),
            min_bps,
            max_bps,
            open: None,
            prev: None,
            received: VecDeque::new(),
            received_bytes: 0,
            loss_count: (0, 0),
        }
    }

    /// The target rate: min(delay-based, loss-based) (draft §6).
    pub fn target_bps(&self) -> f64 {
        self.aimd.rate_bps.min(self.loss_bps)
    }

    /// R_hat: bytes received in the window ending at the latest arrival.
    pub fn received_bps(&self) -> f64 {
        self.received_bytes as f64 * 8.0 / (RATE_WINDOW_NS as f64 / 1e9)
    }

    /// One report's packets (in send order) reached the sender at `now`; `rtt_ns` is its
    /// current round-trip estimate. Returns the new target.
    pub fn on_feedback(&mut self, packets: &[PacketResult], rtt_ns: Nanos, now: Nanos) -> f64 {
        for p in packets {
            self.loss_count.0 += 1;
            let Some(a) = p.arrived else {
                self.loss_count.1 += 1;
                continue;
            };
            self.received.push_back((a, p.bytes));
            self.received_bytes += p.bytes as u64;
            while let Some(&(t, b)) = self.received.front() {
                if t + RATE_WINDOW_NS > a {
                    break;
                }
                self.received.pop_front();
                self.received_bytes -= b as u64;
            }
            self.on_arrival(p.sent, a);
        }
        let usage = self.detector.state;
        self.aimd.update(usage, self.received_bps(), rtt_ns, now);
        let (n, lost) = self.loss_count;
        if n >= LOSS_MIN_PACKETS {
            self.loss_bps = loss_update(self.loss_bps, lost as f64 / n as f64)
                .clamp(self.min_bps, self.max_bps);
            self.loss_count = (0, 0);
        }
        self.target_bps()
    }

    /// A received packet joins its arrival group; a group completed by it updates the
    /// trendline and the detector.
    fn on_arrival(&mut self, sent: Nanos, arrived: Nanos) {
        match &mut self.open {
            Some(g) if sent.saturating_sub(g.first_sent) <= BURST_NS => {
                g.last_sent = g.last_sent.max(sent);
                g.last_arrived = g.last_arrived.max(arrived);
                return;
            }
            _ => {}
        }
        let done = self.open.replace(Group {
            first_sent: sent,
            last_sent: sent,
            last_arrived: arrived,
        });
        if let Some(g) = done {
            if let Some(p) = self.prev {
                let ms = |a: Nanos, b: Nanos| (a as f64 - b as f64) / 1e6;
                let send_delta = ms(g.last_sent, p.last_sent);
                let recv_delta = ms(g.last_arrived, p.last_arrived);
                let at = g.last_arrived as f64 / 1e6;
                let trend = self.trendline.update(recv_delta, send_delta, at);
                self.detector
                    .detect(trend, send_delta, self.trendline.deltas, at);
            }
            self.prev = Some(g);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    /// The target is the smaller estimate; loss is judged per 20 packets: 20 packets
    /// with 4 lost (20 %) take the loss-based estimate from 1 Mbit/s to 0.9 Mbit/s.
    #[test]
    fn target_is_the_smaller_estimate() {
        let mut g = Gcc::new(1e6, 1e5, 1e7);
        let ms = 1_000_000;
        let pkts: Vec<PacketResult> = (0..20u64)
            .map(|k| PacketResult {
                sent: k * 10 * ms,
                bytes: 1000,
                arrived: (k % 5 != 0).then_some(k * 10 * ms + 20 * ms),
                ce: false,
            })
            .collect();
        // 10 packets: not judged yet.
        g.on_feedback(&pkts[..10], 40 * ms, 300 * ms);
        assert_eq!(g.loss_bps, 1e6);
        let t = g.on_feedback(&pkts[10..], 40 * ms, 400 * ms);
        assert!(close(g.loss_bps, 900_000.0, 1e-6));
        assert_eq!(t, g.loss_bps.min(g.aimd.rate_bps));
    }
}
