//! NADA, Network-Assisted Dynamic Adaptation (RFC 8698), run at the sender on per-packet
//! feedback (RFC 8888): the receiver's statistics of §4.2 (queuing delay, loss and
//! marking ratios, receiving rate) are computed from each report's packets, then the
//! sender's reference rate is updated as §4.3 says, in accelerated ramp-up or gradual
//! update mode. Every time below is in milliseconds, as the RFC writes them; rates in
//! bit/s. Constants: the defaults of Table 3.
//!
//! Not modelled: the rate-shaping buffer is always empty (the encoder's frames leave
//! back to back, there is no pacer), so r_vin = r_send = r_ref (§4.3's buffer term is
//! [`shaped_rates`], called with zero); one stream, so PRIO = 1. Beyond the RFC:
//! the signal is capped at [`XMAX`] (cisco/ns3-rmcat's), and the loss interval that
//! MULTILOSS scales is counted in packets, as ns3-rmcat counts it.

use std::collections::VecDeque;

use collateral_queue::Nanos;

use super::gcc::PacketResult;

/// Table 3 of RFC 8698.
pub const PRIO: f64 = 1.0;
pub const XREF: f64 = 10.0;
pub const KAPPA: f64 = 0.5;
pub const ETA: f64 = 2.0;
pub const TAU: f64 = 500.0;
pub const DELTA: f64 = 100.0;
pub const LOGWIN: f64 = 500.0;
pub const QEPS: f64 = 10.0;
pub const DFILT: f64 = 120.0;
pub const GAMMA_MAX: f64 = 0.5;
pub const QBOUND: f64 = 50.0;
pub const MULTILOSS: f64 = 7.0;
pub const QTH: f64 = 50.0;
pub const LAMBDA: f64 = 0.5;
pub const PLRREF: f64 = 0.01;
pub const PMRREF: f64 = 0.01;
pub const DLOSS: f64 = 10.0;
pub const DMARK: f64 = 2.0;
pub const FPS: f64 = 30.0;
pub const BETA_V: f64 = 1.0;
pub const BETA_S: f64 = 1.0;
pub const ALPHA: f64 = 0.1;
/// Taps of the minimum filter over the raw queuing delay samples (§4.2).
pub const MIN_FILTER_TAPS: usize = 15;
/// The signal's ceiling, ms: not in RFC 8698's Table 3; cisco/ns3-rmcat's
/// `NADA_PARAM_XMAX`. Without it a loss ratio of 20 % reads as 4 s and the x_diff term
/// swings r_ref between RMIN and RMAX from one update to the next.
pub const XMAX: f64 = 500.0;

const LOGWIN_NS: Nanos = 500_000_000;

/// Non-linear warping of the queuing delay after recent loss (§4.2): unchanged below
/// QTH, decaying exponentially above it, so a loss-based competitor that keeps the queue
/// full does not drive NADA's rate down to RMIN.
pub fn warp(d_queuing: f64) -> f64 {
    if d_queuing < QTH {
        d_queuing
    } else {
        QTH * (-LAMBDA * (d_queuing - QTH) / QTH).exp()
    }
}

/// The aggregate congestion signal (§4.2): x_curr = d_tilde + DMARK·(p_mark/PMRREF)² +
/// DLOSS·(p_loss/PLRREF)², in ms.
pub fn aggregate_signal(d_tilde: f64, p_loss: f64, p_mark: f64) -> f64 {
    d_tilde + DMARK * (p_mark / PMRREF).powi(2) + DLOSS * (p_loss / PLRREF).powi(2)
}

/// Accelerated ramp-up (§4.3): γ = min(GAMMA_MAX, QBOUND/(rtt + DELTA + DFILT)) and
/// r_ref = max(r_ref, (1 + γ)·r_recv); `rtt` in ms.
pub fn ramp_up(r_ref: f64, r_recv: f64, rtt: f64) -> f64 {
    let gamma = GAMMA_MAX.min(QBOUND / (rtt + DELTA + DFILT));
    r_ref.max((1.0 + gamma) * r_recv)
}

/// Gradual update (§4.3, eq. 5-7): x_offset = x_curr − PRIO·XREF·RMAX/r_ref,
/// x_diff = x_curr − x_prev, r_ref −= KAPPA·(δ/TAU)·(x_offset/TAU)·r_ref +
/// KAPPA·ETA·(x_diff/TAU)·r_ref; `delta` (the time since the last update) in ms.
pub fn gradual_update(r_ref: f64, rmax: f64, x_curr: f64, x_prev: f64, delta: f64) -> f64 {
    let x_offset = x_curr - PRIO * XREF * rmax / r_ref;
    let x_diff = x_curr - x_prev;
    r_ref - KAPPA * (delta / TAU) * (x_offset / TAU) * r_ref - KAPPA * ETA * (x_diff / TAU) * r_ref
}

/// The encoder's and the sender's rates from r_ref and the rate-shaping buffer (§4.3):
/// r_vin = max(RMIN, r_ref − BETA_V·8·buffer_len·FPS), r_send = min(RMAX, r_ref +
/// BETA_S·8·buffer_len·FPS).
pub fn shaped_rates(r_ref: f64, buffer_bytes: f64, rmin: f64, rmax: f64) -> (f64, f64) {
    let b = 8.0 * buffer_bytes * FPS;
    (rmin.max(r_ref - BETA_V * b), rmax.min(r_ref + BETA_S * b))
}

/// Which of §4.3's two modes the next update runs (§4.2: ramp-up while no loss within
/// LOGWIN and every queuing delay sample within it below QEPS).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    RampUp,
    Gradual,
}

/// NADA at the sender: feed it each report's packets, read the target (r_vin).
#[derive(Debug, Clone)]
pub struct Nada {
    pub r_ref: f64,
    pub rmin: f64,
    pub rmax: f64,
    pub x_curr: f64,
    pub x_prev: f64,
    pub p_loss: f64,
    pub p_mark: f64,
    pub mode: Mode,
    /// The smallest one-way delay seen (d_base), ns.
    d_base: Option<Nanos>,
    /// The last [`MIN_FILTER_TAPS`] raw queuing delays, ms.
    taps: VecDeque<f64>,
    /// Per packet judged within LOGWIN: (report time, queuing delay ms or None if lost,
    /// CE-marked, bytes).
    window: VecDeque<(Nanos, Option<f64>, bool, u32)>,
    /// Packets since the last loss, and the mean loss interval in packets (MULTILOSS:
    /// the delay is warped while the last loss is within MULTILOSS mean intervals).
    since_loss: Option<u64>,
    loss_int: Option<f64>,
    t_last: Option<Nanos>,
}

impl Nada {
    pub fn new(start_bps: f64, rmin: f64, rmax: f64) -> Self {
        Nada {
            r_ref: start_bps.clamp(rmin, rmax),
            rmin,
            rmax,
            x_curr: 0.0,
            x_prev: 0.0,
            p_loss: 0.0,
            p_mark: 0.0,
            mode: Mode::RampUp,
            d_base: None,
            taps: VecDeque::with_capacity(MIN_FILTER_TAPS),
            window: VecDeque::new(),
            since_loss: None,
            loss_int: None,
            t_last: None,
        }
    }

    /// The encoder's target r_vin (the shaping buffer is empty: r_ref).
    pub fn target_bps(&self) -> f64 {
        shaped_rates(self.r_ref, 0.0, self.rmin, self.rmax).0
    }

    /// r_recv: the bytes received within LOGWIN, per second.
    pub fn received_bps(&self) -> f64 {
        let b: u64 = self
            .window
            .iter()
            .filter(|w| w.1.is_some())
            .map(|w| w.3 as u64)
            .sum();
        b as f64 * 8.0 / (LOGWIN / 1e3)
    }

    /// One report's packets (in send order) reached the sender at `now`; `rtt_ns` is its
    /// round-trip estimate. r_ref is updated once DELTA has passed since the last update
    /// (§4.3: the sender updates on feedback about every DELTA). Returns the target.
    pub fn on_feedback(&mut self, packets: &[PacketResult], rtt_ns: Nanos, now: Nanos) -> f64 {
        for p in packets {
            let Some(a) = p.arrived else {
                if let Some(g) = self.since_loss.filter(|&g| g > 0) {
                    let g = g as f64;
                    self.loss_int = Some(self.loss_int.map_or(g, |i| i + ALPHA * (g - i)));
                }
                self.since_loss = Some(0);
                self.window.push_back((now, None, false, p.bytes));
                continue;
            };
            if let Some(g) = self.since_loss.as_mut() {
                *g += 1;
            }
            let d_fwd = a.saturating_sub(p.sent);
            let base = self.d_base.map_or(d_fwd, |b| b.min(d_fwd));
            self.d_base = Some(base);
            let dq = (d_fwd - base) as f64 / 1e6;
            if self.taps.len() == MIN_FILTER_TAPS {
                self.taps.pop_front();
            }
            self.taps.push_back(dq);
            self.window.push_back((now, Some(dq), p.ce, p.bytes));
        }
        while let Some(w) = self.window.front() {
            if w.0 + LOGWIN_NS > now {
                break;
            }
            self.window.pop_front();
        }
        match self.t_last {
            None => {
                self.t_last = Some(now);
                return self.target_bps();
            }
            Some(t) if ((now - t) as f64) < DELTA * 1e6 => return self.target_bps(),
            _ => {}
        }
        // Loss and marking ratios over LOGWIN, smoothed by ALPHA (§4.2).
        let n = self.window.len() as f64;
        if n > 0.0 {
            let lost = self.window.iter().filter(|w| w.1.is_none()).count() as f64;
            let marked = self.window.iter().filter(|w| w.2).count() as f64;
            self.p_loss += ALPHA * (lost / n - self.p_loss);
            if n > lost {
                self.p_mark += ALPHA * (marked / (n - lost) - self.p_mark);
            }
        }
        self.update(rtt_ns, now)
    }

    /// §4.2's signal and mode, then §4.3's update of r_ref.
    fn update(&mut self, rtt_ns: Nanos, now: Nanos) -> f64 {
        let d_raw = self.taps.iter().copied().fold(f64::INFINITY, f64::min);
        let d_raw = if d_raw.is_finite() { d_raw } else { 0.0 };
        // Warp while the last loss is more recent than MULTILOSS mean loss intervals (a
        // first loss: while it is within LOGWIN).
        let recent_loss = match (self.since_loss, self.loss_int) {
            (Some(g), Some(i)) => (g as f64) < MULTILOSS * i,
            (Some(_), None) => self.window.iter().any(|w| w.1.is_none()),
            _ => false,
        };
        let d_tilde = if recent_loss { warp(d_raw) } else { d_raw };
        self.x_curr = aggregate_signal(d_tilde, self.p_loss, self.p_mark).min(XMAX);
        let quiet = self
            .window
            .iter()
            .all(|w| w.1.is_some_and(|d| d < QEPS) && !w.2);
        self.mode = if quiet { Mode::RampUp } else { Mode::Gradual };
        let delta = self
            .t_last
            .map_or(DELTA, |t| now.saturating_sub(t) as f64 / 1e6);
        let rtt = rtt_ns as f64 / 1e6;
        let r = match self.mode {
            Mode::RampUp => ramp_up(self.r_ref, self.received_bps(), rtt),
            Mode::Gradual => gradual_update(self.r_ref, self.rmax, self.x_curr, self.x_prev, delta),
        };
        self.r_ref = r.clamp(self.rmin, self.rmax);
        self.x_prev = self.x_curr;
        self.t_last = Some(now);
        self.target_bps()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-6 * b.abs().max(1.0)
    }

    /// Gradual update, worked by hand: r_ref = 1 Mbit/s, RMAX = 1.5 Mbit/s, x_curr = 25
    /// ms, x_prev = 20 ms, δ = 100 ms. x_offset = 25 − 1·10·1.5/1 = 10 ms; x_diff = 5 ms;
    /// r_ref = 1e6 − 0.5·(100/500)·(10/500)·1e6 − 0.5·2·(5/500)·1e6
    ///       = 1e6 − 2 000 − 10 000 = 988 000 bit/s.
    /// Below the reference (x_curr = 12, x_prev = 12: x_offset = −3, x_diff = 0) it grows:
    /// 1e6 + 0.5·0.2·(3/500)·1e6 = 1 000 600 bit/s.
    #[test]
    fn gradual_update_by_hand() {
        assert!(close(
            gradual_update(1e6, 1.5e6, 25.0, 20.0, 100.0),
            988_000.0
        ));
        assert!(close(
            gradual_update(1e6, 1.5e6, 12.0, 12.0, 100.0),
            1_000_600.0
        ));
    }

    /// Accelerated ramp-up: RTT 80 ms gives γ = 50/(80 + 100 + 120) = 1/6, so from
    /// r_recv = 900 kbit/s r_ref becomes max(1e6, 7/6·900e3) = 1.05 Mbit/s; the rate is
    /// bounded by the received rate, not by r_ref: with r_recv = 600 kbit/s (7/6 of it is
    /// 700 kbit/s) r_ref stays 1 Mbit/s. γ never exceeds GAMMA_MAX: with a 0 ms RTT
    /// 50/220 = 0.227.
    #[test]
    fn ramp_up_by_hand() {
        assert!(close(ramp_up(1e6, 900e3, 80.0), 1_050_000.0));
        assert!(close(ramp_up(1e6, 600e3, 80.0), 1e6));
        assert!(close(ramp_up(0.0, 1e6, 0.0), 1e6 * (1.0 + 50.0 / 220.0)));
    }

    /// The signal: 20 ms of queue, 1 % loss (DLOSS·1² = 10 ms), 0.5 % marks (DMARK·0.25 =
    /// 0.5 ms): 30.5 ms. Warping: 100 ms of queue after loss reads as 50·e^(−0.5) = 30.33
    /// ms; below QTH it is unchanged.
    #[test]
    fn signal_and_warp_by_hand() {
        assert!(close(aggregate_signal(20.0, 0.01, 0.005), 30.5));
        assert!(close(warp(100.0), 50.0 * (-0.5f64).exp()));
        assert_eq!(warp(40.0), 40.0);
        // Shaping: 1000 bytes buffered at 30 fps is 240 kbit/s either way.
        let (v, s) = shaped_rates(1e6, 1000.0, 150e3, 1.5e6);
        assert!(close(v, 760e3) && close(s, 1.24e6));
    }

    /// A whole update from reports: no queue and no loss keep NADA in ramp-up (x_curr =
    /// 0); a report of 20 packets with a 30 ms queue fills the 15-tap filter, so x_curr =
    /// 30 ms, and switches it to gradual update with x_prev = 0, δ = 100 ms: x_offset =
    /// 30 − 10·1.5/1 = 15, x_diff = 30, r_ref = 1e6 − 0.5·0.2·(15/500)·1e6 −
    /// 0.5·2·(30/500)·1e6 = 1e6 − 3 000 − 60 000 = 937 000 bit/s.
    #[test]
    fn mode_follows_the_queue() {
        let ms = 1_000_000;
        let mut n = Nada::new(1e6, 150e3, 1.5e6);
        let pkts = |t0: u64, q: u64, count: u64| -> Vec<PacketResult> {
            (0..count)
                .map(|k| PacketResult {
                    sent: t0 + k * 5 * ms,
                    bytes: 1000,
                    arrived: Some(t0 + k * 5 * ms + 20 * ms + q * ms),
                    ce: false,
                })
                .collect()
        };
        // 10 kB in LOGWIN is 160 kbit/s: 7/6 of it is below r_ref, which stays.
        n.on_feedback(&[], 40 * ms, 0); // starts the update clock
        n.on_feedback(&pkts(0, 0, 10), 40 * ms, 100 * ms);
        assert_eq!((n.mode, n.x_curr, n.r_ref), (Mode::RampUp, 0.0, 1e6));
        n.on_feedback(&pkts(100 * ms, 30, 20), 40 * ms, 200 * ms);
        assert_eq!(n.mode, Mode::Gradual);
        assert!(
            close(n.x_curr, 30.0) && close(n.r_ref, 937_000.0),
            "{} {}",
            n.x_curr,
            n.r_ref
        );
    }
}
