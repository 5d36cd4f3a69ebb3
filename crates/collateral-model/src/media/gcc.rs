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

use std::collections::VecDeque;

use collateral_queue::Nanos;

/// Packets sent within this of a group's first packet form one group (draft §5.2:
/// burst_time 5 ms).
pub const BURST_NS: Nanos = 5_000_000;
/// libwebrtc's trendline window (groups), smoothing coefficient and threshold gain.
pub const TRENDLINE_WINDOW: usize = 20;
pub const TRENDLINE_SMOOTHING: f64 = 0.9;
pub const TRENDLINE_GAIN: f64 = 4.0;
/// The trend is scaled by the number of deltas seen, up to this (libwebrtc
/// `kMinNumDeltas`).
pub const MAX_DELTAS: u32 = 60;
/// Adaptive threshold (draft §5.4): start 12.5 ms, clamped to [6, 600] ms, gains
/// K_u = 0.01 above it and K_d = 0.00018 below (libwebrtc's trendline now uses 0.0087 /
/// 0.039; the draft's are kept); not adapted when the signal is more than 15 ms beyond
/// it (a spike), and one step covers at most 100 ms.
pub const THRESHOLD_INIT_MS: f64 = 12.5;
pub const THRESHOLD_MIN_MS: f64 = 6.0;
pub const THRESHOLD_MAX_MS: f64 = 600.0;
pub const K_UP: f64 = 0.01;
pub const K_DOWN: f64 = 0.00018;
const MAX_ADAPT_OFFSET_MS: f64 = 15.0;
const MAX_THRESHOLD_STEP_MS: f64 = 100.0;
/// Over-use must last this long before it is signalled (draft §5.4: overuse_time_th).
pub const OVERUSE_TIME_MS: f64 = 10.0;
/// AIMD (draft §5.5): decrease to beta × received rate, increase ×1.08 per second far
/// from convergence, the estimate capped at 1.5 × the received rate.
pub const BETA: f64 = 0.85;
pub const ETA: f64 = 1.08;
pub const RATE_CAP_FACTOR: f64 = 1.5;
/// The received rate R_hat is measured over this window (draft §5.5: 0.5 to 1 s).
pub const RATE_WINDOW_NS: Nanos = 500_000_000;
/// Loss-based controller (draft §6): above 10 % loss ×(1 − 0.5 p), below 2 % ×1.05.
pub const LOSS_HIGH: f64 = 0.10;
pub const LOSS_LOW: f64 = 0.02;
/// Loss is judged over at least this many packets (libwebrtc's send-side estimator
/// waits for 20), not per report: a report of five packets would read one loss as 20 %.
pub const LOSS_MIN_PACKETS: u32 = 20;

/// What the over-use detector says of the path (draft §5.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Usage {
    Normal,
    Over,
    Under,
}

/// Least-squares trend of the smoothed accumulated delay over the last `window` groups
/// against their arrival times: the delay gradient, ms of queueing per ms.
#[derive(Debug, Clone)]
pub struct Trendline {
    window: usize,
    smoothing: f64,
    first_arrival_ms: Option<f64>,
    accumulated_ms: f64,
    smoothed_ms: f64,
    /// (arrival time since the first, smoothed delay) of the last `window` groups.
    history: VecDeque<(f64, f64)>,
    /// The slope of the last full window (0 until the window fills).
    pub trend: f64,
    /// Deltas seen so far.
    pub deltas: u32,
}

impl Trendline {
    pub fn new(window: usize, smoothing: f64) -> Self {
        Trendline {
            window: window.max(2),
            smoothing,
            first_arrival_ms: None,
            accumulated_ms: 0.0,
            smoothed_ms: 0.0,
            history: VecDeque::with_capacity(window + 1),
            trend: 0.0,
            deltas: 0,
        }
    }

    /// A group arrived `recv_delta_ms` after the previous one, which had been sent
    /// `send_delta_ms` before it; `arrival_ms` is its arrival. Returns the trend.
    pub fn update(&mut self, recv_delta_ms: f64, send_delta_ms: f64, arrival_ms: f64) -> f64 {
        self.deltas = (self.deltas + 1).min(1000);
        self.accumulated_ms += recv_delta_ms - send_delta_ms;
        self.smoothed_ms =
            self.smoothing * self.smoothed_ms + (1.0 - self.smoothing) * self.accumulated_ms;
        let first = *self.first_arrival_ms.get_or_insert(arrival_ms);
        self.history
            .push_back((arrival_ms - first, self.smoothed_ms));
        if self.history.len() > self.window {
            self.history.pop_front();
        }
        if self.history.len() == self.window {
            if let Some(s) = slope(&self.history) {
                self.trend = s;
            }
        }
        self.trend
    }
}

/// The least-squares slope of `y` on `x`; `None` when every `x` is the same.
pub fn slope(points: &VecDeque<(f64, f64)>) -> Option<f64> {
    let n = points.len() as f64;
    let (mx, my) = points
        .iter()
        .fold((0.0, 0.0), |(a, b), &(x, y)| (a + x / n, b + y / n));
    let (num, den) = points.iter().fold((0.0, 0.0), |(a, b), &(x, y)| {
        (a + (x - mx) * (y - my), b + (x - mx) * (x - mx))
    });
    (den != 0.0).then(|| num / den)
}

/// The over-use detector with its adaptive threshold (draft §5.4): the trend, scaled by
/// min(deltas, 60) and the gain, against ±threshold; over-use only once it has lasted
/// [`OVERUSE_TIME_MS`] over at least two groups and the trend is not falling.
#[derive(Debug, Clone)]
pub struct OveruseDetector {
    pub gain: f64,
    pub threshold_ms: f64,
    last_update_ms: Option<f64>,
    /// How long the signal has been above the threshold (`None`: it is not).
    over_ms: Option<f64>,
    over_count: u32,
    prev_trend: f64,
    pub state: Usage,
}

impl OveruseDetector {
    pub fn new(gain: f64) -> Self {
        OveruseDetector {
            gain,
            threshold_ms: THRESHOLD_INIT_MS,
            last_update_ms: None,
            over_ms: None,
            over_count: 0,
            prev_trend: 0.0,
            state: Usage::Normal,
        }
    }

    /// The trend after a group sent `send_delta_ms` after the one before, `deltas` groups
    /// into the flow, at `now_ms` (the group's arrival).
    pub fn detect(&mut self, trend: f64, send_delta_ms: f64, deltas: u32, now_ms: f64) -> Usage {
        if deltas < 2 {
            return Usage::Normal;
        }
        let m = deltas.min(MAX_DELTAS) as f64 * trend * self.gain;
        if m > self.threshold_ms {
            let t = match self.over_ms {
                None => send_delta_ms / 2.0,
                Some(t) => t + send_delta_ms,
            };
            self.over_ms = Some(t);
            self.over_count += 1;
            if t > OVERUSE_TIME_MS && self.over_count > 1 && trend >= self.prev_trend {
                self.over_ms = Some(0.0);
                self.over_count = 0;
                self.state = Usage::Over;
            }
        } else {
            self.over_ms = None;
            self.over_count = 0;
            self.state = if m < -self.threshold_ms {
                Usage::Under
            } else {
                Usage::Normal
            };
        }
        self.prev_trend = trend;
        self.adapt(m, now_ms);
        self.state
    }

    /// del_var_th += Δt · K · (|m| − del_var_th), K_u above, K_d below (draft §5.4).
    fn adapt(&mut self, m: f64, now_ms: f64) {
        let last = *self.last_update_ms.get_or_insert(now_ms);
        self.last_update_ms = Some(now_ms);
        if m.abs() > self.threshold_ms + MAX_ADAPT_OFFSET_MS {
            return;
        }
        let k = if m.abs() < self.threshold_ms {
            K_DOWN
        } else {
            K_UP
        };
        let dt = (now_ms - last).clamp(0.0, MAX_THRESHOLD_STEP_MS);
        self.threshold_ms = (self.threshold_ms + k * (m.abs() - self.threshold_ms) * dt)
            .clamp(THRESHOLD_MIN_MS, THRESHOLD_MAX_MS);
    }
}

/// The AIMD controller's state (draft §5.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateState {
    Hold,
    Increase,
    Decrease,
}

/// The delay-based rate controller (draft §5.5): the state machine of the draft's table
/// (over-use → Decrease; normal: Hold → Increase, Decrease → Hold; under-use → Hold),
/// multiplicative increase far from the last decrease's rate and additive near it.
/// Near convergence is libwebrtc's test (`aimd_rate_control.cc`): the received rate
/// within three standard deviations of the moving average of the rates at decreases.
#[derive(Debug, Clone)]
pub struct Aimd {
    pub rate_bps: f64,
    pub state: RateState,
    min_bps: f64,
    max_bps: f64,
    last_update: Option<Nanos>,
    last_decrease: Option<Nanos>,
    /// Moving average (kbit/s) and normalised variance of the received rate at decreases.
    avg_max_kbps: Option<f64>,
    var_max: f64,
}

impl Aimd {
    pub fn new(start_bps: f64, min_bps: f64, max_bps: f64) -> Self {
        Aimd {
            rate_bps: start_bps.clamp(min_bps, max_bps),
            state: RateState::Hold,
            min_bps,
            max_bps,
            last_update: None,
            last_decrease: None,
            avg_max_kbps: None,
            var_max: 0.4,
        }
    }

    /// The state after `usage` (the draft's table).
    pub fn next_state(state: RateState, usage: Usage) -> RateState {
        match (usage, state) {
            (Usage::Over, _) => RateState::Decrease,
            (Usage::Normal, RateState::Hold) => RateState::Increase,
            (Usage::Normal, RateState::Decrease) => RateState::Hold,
            (Usage::Normal, s) => s,
            (Usage::Under, _) => RateState::Hold,
        }
    }

    fn near_convergence(&self, recv_kbps: f64) -> bool {
        self.avg_max_kbps.is_some_and(|avg| {
            let sd = (self.var_max * avg).sqrt();
            (recv_kbps - avg).abs() <= 3.0 * sd
        })
    }

    fn note_decrease(&mut self, recv_kbps: f64) {
        let avg = match self.avg_max_kbps {
            Some(a) if recv_kbps >= a - 3.0 * (self.var_max * a).sqrt() => {
                0.95 * a + 0.05 * recv_kbps
            }
            _ => recv_kbps,
        };
        let err = avg - recv_kbps;
        self.var_max = (0.95 * self.var_max + 0.05 * err * err / avg.max(1.0)).clamp(0.4, 2.5);
        self.avg_max_kbps = Some(avg);
    }

    /// Updates the estimate at `now` on the detector's `usage`, with the received rate
    /// `recv_bps` (R_hat) and the round trip `rtt_ns`. Returns the estimate.
    pub fn update(&mut self, usage: Usage, recv_bps: f64, rtt_ns: Nanos, now: Nanos) -> f64 {
        let dt_ms = self
            .last_update
            .map_or(0.0, |t| now.saturating_sub(t) as f64 / 1e6);
        self.last_update = Some(now);
        let prev = self.state;
        self.state = Self::next_state(self.state, usage);
        let recv_kbps = recv_bps / 1e3;
        match self.state {
            RateState::Hold => {}
            RateState::Increase => {
                if self
                    .avg_max_kbps
                    .is_some_and(|a| recv_kbps > a + 3.0 * (self.var_max * a).sqrt())
                {
                    self.avg_max_kbps = None; // far above: the capacity has grown
                }
                let inc = if self.near_convergence(recv_kbps) {
                    additive_increase(self.rate_bps, dt_ms, rtt_ns)
                } else {
                    multiplicative_increase(self.rate_bps, dt_ms)
                };
                let cap = RATE_CAP_FACTOR * recv_bps;
                // The cap stops an increase; it does not lower the estimate.
                self.rate_bps = (self.rate_bps + inc).min(cap.max(self.rate_bps));
            }
            RateState::Decrease => {
                // Once per over-use episode, then again only a round trip later.
                let rtt = rtt_ns.clamp(10_000_000, 200_000_000);
                let due = prev != RateState::Decrease
                    || self.last_decrease.is_none_or(|t| now >= t + rtt);
                if due && recv_bps > 0.0 {
                    self.rate_bps = (BETA * recv_bps).min(self.rate_bps);
                    self.note_decrease(recv_kbps);
                    self.last_decrease = Some(now);
                }
            }
        }
        self.rate_bps = self.rate_bps.clamp(self.min_bps, self.max_bps);
        self.rate_bps
    }
}

/// Far from convergence: ×η^min(Δt, 1 s) (draft §5.5), at least 1 kbit/s.
pub fn multiplicative_increase(rate_bps: f64, dt_ms: f64) -> f64 {
    let alpha = ETA.powf((dt_ms / 1000.0).min(1.0));
    (rate_bps * (alpha - 1.0)).max(1000.0)
}

/// Near convergence: about half a packet per response time (100 ms + RTT), the packet
/// size that of a 30 fps frame split into 1200-byte packets (draft §5.5).
pub fn additive_increase(rate_bps: f64, dt_ms: f64, rtt_ns: Nanos) -> f64 {
    let response_ms = 100.0 + rtt_ns as f64 / 1e6;
    let alpha = 0.5 * (dt_ms / response_ms).min(1.0);
    let bits_per_frame = rate_bps / 30.0;
    let packets = (bits_per_frame / (1200.0 * 8.0)).ceil().max(1.0);
    (alpha * bits_per_frame / packets).max(1000.0)
}

/// The loss-based controller (draft §6): the estimate moves on the loss fraction `p` of
/// each judged batch of packets.
pub fn loss_update(rate_bps: f64, p: f64) -> f64 {
    if p > LOSS_HIGH {
        rate_bps * (1.0 - 0.5 * p)
    } else if p < LOSS_LOW {
        rate_bps * 1.05
    } else {
        rate_bps
    }
}

/// One packet as the feedback reports it, matched with what the sender knows of it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PacketResult {
    pub sent: Nanos,
    pub bytes: u32,
    /// Arrival on the receiver's clock; `None`: reported missing (lost).
    pub arrived: Option<Nanos>,
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

    /// Groups sent every 10 ms arriving every 11 ms: the delay grows 1 ms per group, 1/11
    /// ms per ms of arrival time. Without smoothing the accumulated delay k lies on
    /// the line x = 11 k exactly: slope 1/11. With smoothing 0.9 it is
    /// s_k = k − 9 + 9·0.9^k (s_k = 0.9 s_{k−1} + 0.1 k, s_0 = 0), whose last term has
    /// vanished (< 1e-8) after 200 groups: slope 1/11 again. A steady delay: slope 0.
    #[test]
    fn trendline_slope_of_a_growing_delay() {
        let mut t = Trendline::new(20, 0.0);
        for k in 1..=19 {
            assert_eq!(
                t.update(11.0, 10.0, 11.0 * k as f64),
                0.0,
                "window not full"
            );
        }
        assert!(close(t.update(11.0, 10.0, 220.0), 1.0 / 11.0, 1e-12));
        let mut t = Trendline::new(20, 0.9);
        let mut trend = 0.0;
        for k in 1..=200 {
            trend = t.update(11.0, 10.0, 11.0 * k as f64);
        }
        assert!(close(trend, 1.0 / 11.0, 1e-9), "{trend}");
        let mut t = Trendline::new(20, 0.9);
        for k in 1..=40 {
            trend = t.update(10.0, 10.0, 10.0 * k as f64);
        }
        assert_eq!(trend, 0.0);
    }

    /// With 60 deltas a trend of 0.06 reads 60 · 0.06 · 4 = 14.4 ms against 12.5 ms.
    /// Groups 5 ms apart: over for 2.5 ms (half the first gap), then 7.5 ms: still
    /// normal; then 12.5 ms > 10 ms, second group, trend not falling: over-use. The
    /// threshold: unchanged on the first call (no time step), then
    /// + 0.01 · (14.4 − 12.5) · 5 = 12.595, + 0.01 · (14.4 − 12.595) · 5 = 12.68525.
    #[test]
    fn over_use_needs_10_ms_and_two_groups_and_the_threshold_follows() {
        let mut d = OveruseDetector::new(4.0);
        assert_eq!(d.detect(0.06, 5.0, 60, 0.0), Usage::Normal);
        assert_eq!(d.threshold_ms, 12.5);
        assert_eq!(d.detect(0.06, 5.0, 60, 5.0), Usage::Normal);
        assert!(close(d.threshold_ms, 12.595, 1e-12));
        assert_eq!(d.detect(0.06, 5.0, 60, 10.0), Usage::Over);
        assert!(close(d.threshold_ms, 12.68525, 1e-12));
        // −14.4 ms: under-use at once; the threshold moves up again, by
        // 0.01 · (14.4 − 12.68525) · 5.
        assert_eq!(d.detect(-0.06, 5.0, 60, 15.0), Usage::Under);
        assert!(close(
            d.threshold_ms,
            12.68525 + 0.01 * (14.4 - 12.68525) * 5.0,
            1e-12
        ));
        let th = d.threshold_ms;
        // 0: normal, and the threshold falls by K_d: 0.00018 · (0 − th) · 5.
        assert_eq!(d.detect(0.0, 5.0, 60, 20.0), Usage::Normal);
        assert!(close(d.threshold_ms, th - 0.00018 * th * 5.0, 1e-12));
        // A spike more than 15 ms beyond the threshold does not move it.
        let th = d.threshold_ms;
        d.detect(0.2, 5.0, 60, 25.0); // 48 ms
        assert_eq!(d.threshold_ms, th);
        // Fewer than 60 deltas scale the trend down: 30 · 0.06 · 4 = 7.2 ms < th.
        let mut d = OveruseDetector::new(4.0);
        for k in 0..5 {
            assert_eq!(d.detect(0.06, 5.0, 30, 5.0 * k as f64), Usage::Normal);
        }
        // A falling trend is not over-use, however long it lasts above the threshold.
        let mut d = OveruseDetector::new(4.0);
        for (k, tr) in [0.1, 0.09, 0.08, 0.07, 0.065].into_iter().enumerate() {
            assert_eq!(d.detect(tr, 5.0, 60, 5.0 * k as f64), Usage::Normal);
        }
    }

    /// The draft's state table.
    #[test]
    fn aimd_state_table() {
        use RateState::*;
        let cases = [
            (Hold, Usage::Over, Decrease),
            (Increase, Usage::Over, Decrease),
            (Decrease, Usage::Over, Decrease),
            (Hold, Usage::Normal, Increase),
            (Increase, Usage::Normal, Increase),
            (Decrease, Usage::Normal, Hold),
            (Hold, Usage::Under, Hold),
            (Increase, Usage::Under, Hold),
            (Decrease, Usage::Under, Hold),
        ];
        for (s, u, next) in cases {
            assert_eq!(Aimd::next_state(s, u), next, "{s:?} on {u:?}");
        }
    }

    /// The rate in each state, by hand: start 1 Mbit/s, received 1 Mbit/s, RTT 100 ms.
    #[test]
    fn aimd_rate_in_each_state() {
        let ms = 1_000_000;
        let mut a = Aimd::new(1e6, 1e5, 1e7);
        // First update: Hold → Increase, no time has passed: the 1 kbit/s floor.
        assert_eq!(a.update(Usage::Normal, 1e6, 100 * ms, 0), 1e6 + 1000.0);
        // 500 ms later, far from convergence: ×1.08^0.5.
        let r = a.update(Usage::Normal, 1e6, 100 * ms, 500 * ms);
        assert!(close(r, 1_001_000.0 * 1.08f64.sqrt(), 1e-6), "{r}");
        // Capped at 1.5 × received: received 0.6 Mbit/s → 0.9 Mbit/s is below the
        // estimate, which the cap does not lower.
        assert_eq!(a.update(Usage::Normal, 0.6e6, 100 * ms, 1000 * ms), r);
        // Over-use: 0.85 × received.
        let r = a.update(Usage::Over, 1e6, 100 * ms, 1050 * ms);
        assert_eq!(r, 850_000.0);
        assert_eq!(a.state, RateState::Decrease);
        // Still over-using 50 ms later, under one RTT: no second decrease.
        assert_eq!(a.update(Usage::Over, 0.9e6, 100 * ms, 1100 * ms), 850_000.0);
        // A round trip after the decrease: again, 0.85 × 0.9 Mbit/s.
        assert_eq!(a.update(Usage::Over, 0.9e6, 100 * ms, 1150 * ms), 765_000.0);
        // Normal: Decrease → Hold, unchanged; under-use: Hold, unchanged.
        assert_eq!(
            a.update(Usage::Normal, 0.9e6, 100 * ms, 1200 * ms),
            765_000.0
        );
        assert_eq!(a.state, RateState::Hold);
        assert_eq!(
            a.update(Usage::Under, 0.9e6, 100 * ms, 1250 * ms),
            765_000.0
        );
        // The second decrease's 900 kbit/s was more than 3σ (3·√(0.4 · 1000) ≈ 60 kbit/s)
        // below the first's 1000: the average restarts at 900, σ = √(0.4 · 900) ≈ 19.
        // Normal again, received 920 kbit/s, within 3σ of it: additive. 50 ms of a 200 ms
        // response time: α = 0.125; a 30 fps frame of 765 kbit/s is 25 500 bits in 3
        // packets of 8500 bits: 0.125 · 8500 = 1062.5 bit/s.
        let r = a.update(Usage::Normal, 0.92e6, 100 * ms, 1300 * ms);
        assert!(close(r, 765_000.0 + 1062.5, 1e-6), "{r}");
        // Received 990 kbit/s, beyond avg + 3σ: the capacity grew, multiplicative again
        // (50 ms: ×1.08^0.05).
        let r2 = a.update(Usage::Normal, 0.99e6, 100 * ms, 1350 * ms);
        assert!(close(r2, r * 1.08f64.powf(0.05), 1e-6), "{r2}");
    }

    #[test]
    fn increase_formulas() {
        // One second or more: ×1.08.
        assert!(close(multiplicative_increase(1e6, 1000.0), 80_000.0, 1e-6));
        assert!(close(multiplicative_increase(1e6, 3000.0), 80_000.0, 1e-6));
        // 300 kbit/s: 10 000 bits a frame, 2 packets of 5000; a full response time:
        // α = 0.5 → 2500 bit/s.
        assert!(close(
            additive_increase(3e5, 1000.0, 50_000_000),
            2500.0,
            1e-9
        ));
        // Tiny steps get the 1 kbit/s floor.
        assert_eq!(additive_increase(3e5, 1.0, 50_000_000), 1000.0);
    }

    /// Above 10 %: ×(1 − 0.5 p); below 2 %: ×1.05; between: unchanged.
    #[test]
    fn loss_controller_thresholds() {
        assert!(close(loss_update(1e6, 0.2), 900_000.0, 1e-6));
        assert!(close(loss_update(1e6, 0.5), 750_000.0, 1e-6));
        assert_eq!(loss_update(1e6, 0.10), 1e6);
        assert_eq!(loss_update(1e6, 0.05), 1e6);
        assert_eq!(loss_update(1e6, 0.02), 1e6);
        assert!(close(loss_update(1e6, 0.019), 1_050_000.0, 1e-6));
        assert!(close(loss_update(1e6, 0.0), 1_050_000.0, 1e-6));
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
