//! GCC's rate controllers (draft-ietf-rmcat-gcc-02 §5.5, §6): the delay-based AIMD
//! controller driven by the over-use detector's signal, and the loss-based one.

use collateral_queue::Nanos;

use super::detector::Usage;

/// AIMD (draft §5.5): decrease to beta × received rate, increase ×1.08 per second far
/// from convergence, the estimate capped at 1.5 × the received rate.
pub const BETA: f64 = 0.85;
pub const ETA: f64 = 1.08;
pub const RATE_CAP_FACTOR: f64 = 1.5;
/// Loss-based controller (draft §6): above 10 % loss ×(1 − 0.5 p), below 2 % ×1.05.
pub const LOSS_HIGH: f64 = 0.10;
pub const LOSS_LOW: f64 = 0.02;

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

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
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
}
