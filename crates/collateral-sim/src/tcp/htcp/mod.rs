//! H-TCP (Leith & Shorten): the additive increase α grows with the time Δ since the last
//! congestion event, α = 1 + 10(Δ − Δ_L) + ((Δ − Δ_L)/2)² for Δ > Δ_L = 1 s, and the
//! backoff β = RTT_min/RTT_max in [0.5, 0.8] keeps the queue drained.
//!
//! Two implementations, in their own integer arithmetic:
//! - Linux `net/ipv4/tcp_htcp.c`: α and β ×128, time in jiffies (HZ = 1000). Read at
//!   `torvalds/linux` @66ca3ee9 (current) and `george-hopkins/Samsung-BD-C8000` @2d660725
//!   (2.6.24, standing in for 2.6.25, whose mirror in the index lacks `net/ipv4`; the
//!   guard on the Open-state restart came later, commit 8f65b5354b1).
//! - FreeBSD `sys/netinet/cc/cc_htcp.c` (`freebsd/freebsd-src` @eb5956fd): β ×256, α an
//!   integer, RTTs from the smoothed RTT in ticks ×32, growth in bytes (here in 1/256
//!   segment, the precision of its `(alpha << 8) / cwnd` step).
//!
//! Each implementation's state and arithmetic is in its own module ([`linux`],
//! [`freebsd`]); the hooks here dispatch on the flavour.
//!
//! Undo (`undo_cwnd`) is not modelled: the simulator never undoes a reduction.

use collateral_queue::Nanos;

pub use collateral_model::tcp::htcp::{HtcpConfig, HtcpFlavor};

use super::cc::{slow_start, Ack, CaState, CongestionControl, Growth, Window};
use freebsd::*;
use linux::*;

mod freebsd;
mod linux;

/// Ticks per second (Linux `HZ`, FreeBSD `hz`) of the studies' kernels.
const HZ: u32 = 1000;

fn jiffies(now: Nanos) -> u32 {
    (now / (1_000_000_000 / HZ as u64)) as u32
}

#[derive(Debug, Clone)]
enum Model {
    Linux(LinuxState),
    Bsd(BsdState),
}

/// H-TCP.
#[derive(Debug, Clone)]
pub struct Htcp {
    cfg: HtcpConfig,
    g: Growth,
    model: Model,
    /// Linux `snd_cwnd_cnt`; FreeBSD `t_bytes_acked` (in segments) with ABC.
    cwnd_cnt: u32,
    after_timeout: bool,
    /// The window as last seen by a hook (the throughput sampler reads cwnd).
    seen: Window,
    /// Latest time seen by any hook; `set_state` may be handed a stale one.
    clock: Nanos,
    /// The kernels start Δ when the connection is set up; we start it at the first hook.
    started: bool,
}

impl Htcp {
    pub fn new(cfg: HtcpConfig, g: Growth) -> Self {
        let model = match cfg.flavor {
            HtcpFlavor::Linux | HtcpFlavor::Linux2625 => Model::Linux(LinuxState {
                alpha: ALPHA_BASE,
                beta: BETA_MIN,
                modeswitch: false,
                pkts_acked: 1,
                packetcount: 0,
                min_rtt: 0,
                max_rtt: 0,
                last_cong: 0,
                undo_last_cong: None,
                min_b: 0,
                max_b: 0,
                old_max_b: 0,
                bi: 0,
                lasttime: 0,
            }),
            HtcpFlavor::FreeBsd | HtcpFlavor::FreeBsd7 => Model::Bsd(BsdState {
                alpha: 1,
                beta: BSD_MINBETA,
                minrtt: 0,
                maxrtt: 0,
                t_last_cong: 0,
                srtt_ns: None,
                rtt_updates: 0,
                rxtshift: 0,
                had_event: false,
                pending_maxrtt: None,
                frac: 0,
                nr_cnt: 0,
            }),
        };
        Htcp {
            cfg,
            g,
            model,
            cwnd_cnt: 0,
            after_timeout: false,
            seen: Window {
                cwnd: 0,
                ssthresh: u32::MAX,
            },
            clock: 0,
            started: false,
        }
    }

    /// Advances the clock (never backwards) and starts Δ on first use.
    fn tick(&mut self, now: Nanos) -> u32 {
        self.clock = self.clock.max(now);
        let j = jiffies(self.clock);
        if !self.started {
            self.started = true;
            match &mut self.model {
                Model::Linux(s) => s.last_cong = j,
                Model::Bsd(s) => s.t_last_cong = j as i64,
            }
        }
        j
    }

    /// The α a Linux H-TCP flow would now use (×128).
    #[cfg(test)]
    fn linux_alpha(&self) -> u32 {
        match &self.model {
            Model::Linux(s) => s.alpha,
            Model::Bsd(_) => unreachable!(),
        }
    }
}

impl CongestionControl for Htcp {
    /// Linux `htcp_cong_avoid`; FreeBSD `htcp_ack_received`.
    fn on_ack(&mut self, w: &mut Window, ack: &Ack) {
        let now = self.tick(ack.now);
        let ss = self.g.in_slow_start(w);
        match &mut self.model {
            Model::Linux(s) => {
                if ss {
                    slow_start(w, ack.acked, self.g.slow_start, self.after_timeout);
                } else {
                    self.after_timeout = false;
                    // One segment once cnt·α/128 ≥ cwnd: α segments per window, counting
                    // acked segments (H-TCP does so even where Reno counts ACKs).
                    if (self.cwnd_cnt.wrapping_mul(s.alpha) >> 7) >= w.cwnd {
                        w.cwnd = w.cwnd.saturating_add(1);
                        self.cwnd_cnt = 0;
                        s.alpha_update(now, &self.cfg);
                    } else {
                        self.cwnd_cnt = self.cwnd_cnt.wrapping_add(s.pkts_acked);
                    }
                    s.pkts_acked = 1;
                }
            }
            Model::Bsd(s) => {
                // tcp_input's ABC bookkeeping: a window's worth acked (≤ 2 per ACK).
                let abc = self.g.ca_per_segment;
                let mut sent_a_window = false;
                if abc {
                    if ss {
                        self.cwnd_cnt = 0;
                    } else {
                        self.cwnd_cnt = self.cwnd_cnt.saturating_add(ack.acked.min(2));
                        if self.cwnd_cnt >= w.cwnd {
                            self.cwnd_cnt -= w.cwnd;
                            sent_a_window = true;
                        }
                    }
                }
                if !abc || ss || sent_a_window {
                    s.beta = s.beta_with(&self.cfg, s.maxrtt);
                    s.recalc_alpha(now as i64, &self.cfg);
                    if ss {
                        slow_start(w, ack.acked, self.g.slow_start, self.after_timeout);
                    } else {
                        self.after_timeout = false;
                        if abc {
                            // α segments per window (NewReno's one when α = 1).
                            w.cwnd = w.cwnd.saturating_add(s.alpha.max(1) as u32);
                        } else if s.alpha == 1 {
                            // NewReno: one segment per window of ACKs.
                            let per = w.cwnd;
                            self.g.additive_increase(w, &mut s.nr_cnt, per, ack.acked);
                        } else {
                            // α/cwnd per ACK, in 1/256 segment; 0 once cwnd > 256·α.
                            s.frac += ((s.alpha as u64) << BSD_SHIFT) / w.cwnd.max(1) as u64;
                            let whole = (s.frac >> BSD_SHIFT).min(u32::MAX as u64) as u32;
                            w.cwnd = w.cwnd.saturating_add(whole);
                            s.frac &= (1 << BSD_SHIFT) - 1;
                        }
                    }
                }
            }
        }
        self.seen = *w;
    }

    /// Linux `measure_achieved_throughput` (RTT extremes, and the per-RTT throughput
    /// sampler behind the bandwidth switch); FreeBSD `htcp_record_rtt` on the SRTT.
    fn pkts_acked(&mut self, ack: &Ack) {
        let now = self.tick(ack.now);
        let flavor = self.cfg.flavor;
        let cwnd = self.seen.cwnd;
        match &mut self.model {
            Model::Linux(s) => {
                if ack.state == CaState::Open {
                    s.pkts_acked = ack.acked as u16 as u32;
                }
                if let Some(rtt) = ack.rtt {
                    let rtt_j = if flavor == HtcpFlavor::Linux2625 {
                        // Whole jiffies of the timestamp clock; 0 means no sample.
                        jiffies(ack.now).wrapping_sub(jiffies(ack.now.saturating_sub(rtt)))
                    } else {
                        // µs, then usecs_to_jiffies (rounds up); 0 µs means no sample.
                        let us = (rtt / 1000).min(u32::MAX as u64) as u32;
                        us.div_ceil(1000)
                    };
                    if rtt_j > 0 {
                        s.measure_rtt(rtt_j, ack.state);
                    }
                }
                if !self.cfg.use_bandwidth_switch {
                    return;
                }
                if !matches!(ack.state, CaState::Open | CaState::Disorder) {
                    s.packetcount = 0;
                    s.lasttime = now;
                    return;
                }
                s.packetcount = s.packetcount.wrapping_add(ack.acked);
                let a = (s.alpha >> 7).max(1);
                let elapsed = now.wrapping_sub(s.lasttime);
                // About a window's worth over at least one min RTT.
                if s.packetcount >= cwnd.wrapping_sub(a) && elapsed >= s.min_rtt && s.min_rtt > 0 {
                    let cur = s.packetcount.wrapping_mul(HZ) / elapsed;
                    // The first three min-RTTs after an event reset the estimate.
                    if now.wrapping_sub(s.last_cong) / s.min_rtt <= 3 {
                        s.min_b = cur;
                        s.max_b = cur;
                        s.bi = cur;
                    } else {
                        s.bi = (3u32.wrapping_mul(s.bi).wrapping_add(cur)) / 4;
                        s.max_b = s.max_b.max(s.bi);
                        s.min_b = s.min_b.min(s.max_b);
                    }
                    s.packetcount = 0;
                    s.lasttime = now;
                }
            }
            Model::Bsd(s) => {
                s.rxtshift = 0;
                if let Some(rtt) = ack.rtt {
                    // RFC 6298 SRTT, gain 1/8 (the kernel's fixed-point EWMA).
                    s.srtt_ns = Some(match s.srtt_ns {
                        None => rtt,
                        Some(v) => (v * 7 + rtt) / 8,
                    });
                    s.rtt_updates = s.rtt_updates.saturating_add(1);
                }
                if s.rtt_updates >= BSD_MIN_RTT_SAMPLES {
                    let srtt = s.srtt();
                    if srtt < s.minrtt || s.minrtt == 0 {
                        s.minrtt = srtt;
                    }
                    if srtt > s.maxrtt {
                        s.maxrtt = srtt;
                    }
                }
            }
        }
    }

    /// Linux `htcp_recalc_ssthresh` (β and α for the next epoch, maxRTT decay, then
    /// max(β·cwnd, 2)); FreeBSD `htcp_cong_signal(CC_NDUPACK)` and
    /// `htcp_ssthresh_update`. The β product is over cwnd or FlightSize, per the stack.
    fn ssthresh(&mut self, now: Nanos, w: &Window, flight: u32) -> u32 {
        let now = self.tick(now);
        let base = self.g.loss_base(w, flight);
        self.cwnd_cnt = 0;
        let ss = match &mut self.model {
            Model::Linux(s) => {
                let (min_rtt, max_rtt) = (s.min_rtt, s.max_rtt);
                s.beta_update(&self.cfg);
                s.alpha_update(now, &self.cfg);
                // Fading memory of maxRTT: keep 95 % of its excess over minRTT.
                if min_rtt > 0 && max_rtt > min_rtt {
                    s.max_rtt = min_rtt.wrapping_add((max_rtt - min_rtt).wrapping_mul(95) / 100);
                }
                base.wrapping_mul(s.beta) >> 7
            }
            Model::Bsd(s) => {
                // FreeBSD's "hysteresis" reads (minrtt + (maxrtt − minrtt)·95) / 100: the
                // whole sum is divided by 100, so maxrtt falls below minrtt whenever
                // maxrtt < ~2.3·minrtt (with adaptive backoff, β from it saturates at
                // 0.8). Reproduced as written.
                let decayed = s
                    .minrtt
                    .wrapping_add(s.maxrtt.wrapping_sub(s.minrtt).wrapping_mul(95))
                    / 100;
                s.pending_maxrtt = Some(decayed);
                let beta = if s.had_event {
                    // Today's order: β from the decayed maxRTT. FreeBSD 7's module used
                    // the β of the last ACK, from the maxRTT before the decay.
                    if self.cfg.flavor == HtcpFlavor::FreeBsd {
                        s.beta = s.beta_with(&self.cfg, decayed);
                    }
                    s.beta
                } else {
                    BSD_MINBETA // the first event always halves
                };
                s.had_event = true;
                ((base as u64 * beta as u64) >> BSD_SHIFT) as u32
            }
        };
        let ss = ss.max(2);
        self.seen = Window {
            cwnd: w.cwnd,
            ssthresh: ss,
        };
        ss
    }

    /// Linux `htcp_state`: a congestion state restarts Δ; so does Open, always in 2.6.25
    /// and only after a congestion state in current Linux. FreeBSD: a fast retransmit
    /// restarts Δ (and commits the maxrtt decay); a timeout only from the second in a row.
    fn set_state(&mut self, now: Nanos, state: CaState) {
        let now = self.tick(now);
        if state == CaState::Loss {
            self.after_timeout = true;
            self.cwnd_cnt = 0;
            self.seen.cwnd = 1;
        }
        let flavor = self.cfg.flavor;
        match &mut self.model {
            Model::Linux(s) => match state {
                CaState::Open => {
                    if flavor == HtcpFlavor::Linux2625 || s.undo_last_cong.take().is_some() {
                        s.last_cong = now;
                    }
                }
                CaState::Recovery | CaState::Loss => {
                    s.undo_last_cong = Some(s.last_cong);
                    s.last_cong = now;
                }
                CaState::Disorder => {}
            },
            Model::Bsd(s) => match state {
                CaState::Recovery => {
                    if let Some(m) = s.pending_maxrtt.take() {
                        s.maxrtt = m;
                        s.t_last_cong = now as i64;
                    }
                }
                CaState::Loss => {
                    s.pending_maxrtt = None;
                    s.rxtshift += 1;
                    if s.rxtshift >= 2 {
                        s.t_last_cong = now as i64;
                    }
                    s.frac = 0;
                }
                CaState::Open | CaState::Disorder => {}
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::cc::SlowStart;
    use crate::tcp::cc_op_harness::{any_growth, drive, op};
    use proptest::prelude::*;

    pub(super) const MS: Nanos = 1_000_000;

    pub(super) fn growth(abc: bool) -> Growth {
        Growth {
            slow_start: SlowStart::PerAck,
            ca_per_segment: abc,
            ss_inclusive: false,
            halve_cwnd: true,
        }
    }

    pub(super) fn ack(now: Nanos, acked: u32, rtt: Option<Nanos>, state: CaState) -> Ack {
        Ack {
            now,
            acked,
            prior_in_flight: 100,
            rtt,
            state,
        }
    }

    pub(super) fn linux(cfg: HtcpConfig) -> Htcp {
        let mut h = Htcp::new(cfg, growth(false));
        h.tick(0); // Δ counts from t = 0
        h
    }

    pub(super) fn lin(h: &mut Htcp) -> &mut LinuxState {
        match &mut h.model {
            Model::Linux(s) => s,
            Model::Bsd(_) => unreachable!(),
        }
    }

    pub(super) fn bsd(h: &mut Htcp) -> &mut BsdState {
        match &mut h.model {
            Model::Bsd(s) => s,
            Model::Linux(_) => unreachable!(),
        }
    }

    /// Linux α (×128) at Δ ms after the last congestion event, without RTT scaling.
    pub(super) fn linux_alpha_at(delta_ms: u32, beta: u32) -> u32 {
        let cfg = HtcpConfig {
            use_rtt_scaling: false,
            ..HtcpConfig::linux()
        };
        let mut h = linux(cfg);
        lin(&mut h).beta = beta;
        lin(&mut h).alpha_update(delta_ms, &cfg);
        h.linux_alpha()
    }

    #[test]
    fn serde_defaults_and_unknown_fields() {
        let c: HtcpConfig = serde_json::from_str("{}").unwrap();
        assert_eq!(c, HtcpConfig::linux());
        let c: HtcpConfig =
            serde_json::from_str(r#"{"flavor": "freebsd", "adaptive_backoff": true}"#).unwrap();
        assert_eq!(
            c,
            HtcpConfig {
                adaptive_backoff: true,
                ..HtcpConfig::freebsd()
            }
        );
        let c: HtcpConfig = serde_json::from_str(r#"{"flavor": "linux_2_6_25"}"#).unwrap();
        assert_eq!(c, HtcpConfig::linux_2_6_25());
        let back: HtcpConfig = serde_json::from_str(&serde_json::to_string(&c).unwrap()).unwrap();
        assert_eq!(back, c);
        assert!(serde_json::from_str::<HtcpConfig>(r#"{"beta": 1}"#).is_err());
    }

    fn any_cfg() -> impl Strategy<Value = HtcpConfig> {
        (0usize..4, any::<bool>(), any::<bool>(), any::<bool>()).prop_map(|(f, r, b, a)| {
            HtcpConfig {
                flavor: [
                    HtcpFlavor::Linux,
                    HtcpFlavor::Linux2625,
                    HtcpFlavor::FreeBsd,
                    HtcpFlavor::FreeBsd7,
                ][f],
                use_rtt_scaling: r,
                use_bandwidth_switch: b,
                adaptive_backoff: a,
            }
        })
    }

    proptest! {
        /// Random ACKs (with long gaps, so α gets large and its u32 square term wraps)
        /// and congestion events as the sender drives them: cwnd ≥ 1, ssthresh ≥ 2,
        /// α ≥ 1, β within its bounds, no panics.
        #[test]
        fn windows_stay_sane(
            cfg in any_cfg(),
            g in any_growth(),
            ops in prop::collection::vec(op(3000), 1..400),
            start_ms in 0u64..100_000_000,
        ) {
            let mut h = Htcp::new(cfg, g);
            // A stale time at the end of recovery must not move Δ back.
            drive(&mut h, ops, start_ms, true, |h| {
                match &h.model {
                    Model::Linux(s) => {
                        prop_assert!(s.alpha >= 1);
                        prop_assert!((BETA_MIN..=BETA_MAX).contains(&s.beta));
                    }
                    Model::Bsd(s) => {
                        prop_assert!(s.alpha >= 1);
                        prop_assert!((BSD_MINBETA..=BSD_MAXBETA).contains(&s.beta));
                    }
                }
                Ok(())
            })?;
        }
    }
}
