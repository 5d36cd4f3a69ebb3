//! GCC's delay-based detection (draft-ietf-rmcat-gcc-02 §5.3, §5.4): the trendline
//! filter over the inter-group delay variation (libwebrtc's, which replaced the draft's
//! Kalman filter: `goog_cc/trendline_estimator.cc`) and the over-use detector with its
//! adaptive threshold. Times in milliseconds, as the draft writes them.

use std::collections::VecDeque;

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
}
