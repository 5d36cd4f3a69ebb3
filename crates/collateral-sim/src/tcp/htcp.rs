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
//! Undo (`undo_cwnd`) is not modelled: the simulator never undoes a reduction.

use collateral_queue::Nanos;

pub use collateral_model::tcp::htcp::{HtcpConfig, HtcpFlavor};

use super::cc::{slow_start, Ack, CaState, CongestionControl, Growth, Window};

/// Ticks per second (Linux `HZ`, FreeBSD `hz`) of the studies' kernels.
const HZ: u32 = 1000;
/// Linux fixed point: 1.0 = 128 (`ALPHA_BASE`), β in [64, 102] (`BETA_MIN`, `BETA_MAX`).
const ALPHA_BASE: u32 = 128;
const BETA_MIN: u32 = 64;
const BETA_MAX: u32 = 102;
/// FreeBSD fixed point: 1.0 = 256 (`HTCP_SHIFT` 8); β in [128, 204]; RTT ratio for
/// scaling in [26, 512] (0.1..2); 8 RTT samples before SRTT is trusted.
const BSD_SHIFT: u32 = 8;
const BSD_MINBETA: i32 = 128;
const BSD_MAXBETA: i32 = 204;
const BSD_MINROWE: i32 = 26;
const BSD_MAXROWE: i32 = 512;
const BSD_MIN_RTT_SAMPLES: u32 = 8;
/// RTT_ref = 100 ms in FreeBSD's SRTT units (ticks ×32): `htcp_rtt_ref`.
const BSD_RTT_REF: i32 = 100 * 32 * HZ as i32 / 1000;
/// Past this many ticks after Δ_L, FreeBSD stops updating α (`htcp_max_diff`).
const BSD_MAX_DIFF: i64 = (i32::MAX / (16 * 10)) as i64;

fn jiffies(now: Nanos) -> u32 {
    (now / (1_000_000_000 / HZ as u64)) as u32
}

/// Linux `struct htcp` (without the undo copies).
#[derive(Debug, Clone)]
struct LinuxState {
    /// ×128.
    alpha: u32,
    /// ×128.
    beta: u32,
    /// Adaptive β only from the second congestion event (and not right after a switch).
    modeswitch: bool,
    /// Segments acked by the latest Open-state ACK (a `u16` in the kernel).
    pkts_acked: u32,
    packetcount: u32,
    /// Jiffies.
    min_rtt: u32,
    max_rtt: u32,
    last_cong: u32,
    /// Set on entry to a congestion state; current Linux restarts Δ on Open only then.
    undo_last_cong: Option<u32>,
    /// Throughput in segments/s: the EWMA, its peak, the peak at the previous event.
    min_b: u32,
    max_b: u32,
    old_max_b: u32,
    bi: u32,
    lasttime: u32,
}

/// FreeBSD `struct htcp` and the tcpcb fields it reads.
#[derive(Debug, Clone)]
struct BsdState {
    alpha: i32,
    /// ×256.
    beta: i32,
    /// SRTT in ticks ×32; 0 = not yet set (`TCPTV_SRTTBASE`).
    minrtt: i32,
    maxrtt: i32,
    /// Ticks.
    t_last_cong: i64,
    srtt_ns: Option<u64>,
    rtt_updates: u32,
    /// Consecutive timeouts (`t_rxtshift`).
    rxtshift: u32,
    /// ssthresh has been set by a congestion event (FreeBSD tests ssthresh against its
    /// initial value to give the first event β = 0.5).
    had_event: bool,
    /// maxrtt as decayed by `ssthresh`, committed if the event turns out to be a fast
    /// retransmit (`CC_NDUPACK`) rather than a timeout.
    pending_maxrtt: Option<i32>,
    /// Growth without ABC, in 1/256 segment.
    frac: u64,
    /// NewReno's per-ACK counter for α = 1 without ABC.
    nr_cnt: u32,
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

impl LinuxState {
    /// `measure_rtt`: min RTT always, max RTT only in Open and only by steps of at most
    /// 20 ms (so one delayed outlier does not set it).
    fn measure_rtt(&mut self, rtt: u32, state: CaState) {
        if self.min_rtt > rtt || self.min_rtt == 0 {
            self.min_rtt = rtt;
        }
        if state == CaState::Open {
            if self.max_rtt < self.min_rtt {
                self.max_rtt = self.min_rtt;
            }
            if self.max_rtt < rtt && rtt <= self.max_rtt.wrapping_add(20) {
                self.max_rtt = rtt;
            }
        }
    }

    /// `htcp_beta_update`, at a congestion event.
    fn beta_update(&mut self, cfg: &HtcpConfig) {
        if cfg.use_bandwidth_switch {
            let max_b = self.max_b;
            let old = self.old_max_b;
            self.old_max_b = max_b;
            // Linux `between(5·maxB, 4·old, 6·old)` in wrapping u32: maxB within ±20 %.
            let lo = old.wrapping_mul(4);
            let within =
                old.wrapping_mul(6).wrapping_sub(lo) >= max_b.wrapping_mul(5).wrapping_sub(lo);
            if !within {
                self.beta = BETA_MIN;
                self.modeswitch = false;
                return;
            }
        }
        // msecs_to_jiffies(10) = 10 at HZ = 1000.
        if self.modeswitch && self.min_rtt > 10 && self.max_rtt != 0 {
            self.beta = ((self.min_rtt << 7) / self.max_rtt).clamp(BETA_MIN, BETA_MAX);
        } else {
            self.beta = BETA_MIN;
            self.modeswitch = true;
        }
        if !cfg.adaptive_backoff {
            self.beta = BETA_MIN;
        }
    }

    /// `htcp_alpha_update`: α from Δ in whole-jiffy integer steps (the square term
    /// wraps in u32 after ~131 s without congestion, as in the kernel), times the RTT
    /// ratio, times 2(1 − β).
    fn alpha_update(&mut self, now: u32, cfg: &HtcpConfig) {
        let mut diff = now.wrapping_sub(self.last_cong);
        let mut factor: u32 = 1;
        if diff > HZ {
            diff -= HZ;
            let half = diff / 2;
            factor = 1
                + (10u32
                    .wrapping_mul(diff)
                    .wrapping_add(half.wrapping_mul(half) / HZ))
                    / HZ;
        }
        if cfg.use_rtt_scaling && self.min_rtt != 0 {
            // 8·(100 ms / minRTT), in [0.5, 10]·8, i.e. α × minRTT/100 ms within [0.1, 2].
            let scale = ((HZ << 3) / 10u32.wrapping_mul(self.min_rtt).max(1)).clamp(4, 80);
            factor = ((factor << 3) / scale).max(1);
        }
        self.alpha = 2u32.wrapping_mul(factor).wrapping_mul(128 - self.beta);
        if self.alpha == 0 {
            self.alpha = ALPHA_BASE;
        }
    }
}

impl BsdState {
    /// SRTT in ticks ×32 (`tcp_get_srtt(tp, TCP_TMR_GRANULARITY_TICKS)`).
    fn srtt(&self) -> i32 {
        let ns = self.srtt_ns.unwrap_or(0);
        (ns.saturating_mul(32) / (1_000_000_000 / HZ as u64)).min(i32::MAX as u64) as i32
    }

    /// `htcp_recalc_beta`.
    fn beta_with(&self, cfg: &HtcpConfig, maxrtt: i32) -> i32 {
        if cfg.adaptive_backoff && self.minrtt != 0 && maxrtt != 0 {
            (self.minrtt.wrapping_shl(BSD_SHIFT).wrapping_div(maxrtt))
                .clamp(BSD_MINBETA, BSD_MAXBETA)
        } else {
            BSD_MINBETA
        }
    }

    /// `htcp_recalc_alpha`.
    fn recalc_alpha(&mut self, now: i64, cfg: &HtcpConfig) {
        let hz = HZ as i64;
        if now < self.t_last_cong {
            self.t_last_cong = now - hz;
        }
        let diff = now - self.t_last_cong - hz;
        if diff >= BSD_MAX_DIFF {
            return; // α frozen: the formula would overflow an int
        }
        let mut alpha = if diff > 0 {
            // HTCP_CALC_ALPHA: (16 + 160·d/hz + (d/hz)·(16d/(4hz))) >> 4, i.e. the
            // formula ×16 with whole seconds in the square term's first factor.
            ((16 + (160 * diff) / hz + (diff / hz) * ((diff << 4) / (4 * hz))) >> 4) as i32
        } else {
            1
        };
        if diff > 0 {
            if cfg.adaptive_backoff {
                alpha =
                    1.max((2 * ((1 << BSD_SHIFT) - self.beta)).wrapping_mul(alpha) >> BSD_SHIFT);
            }
            if cfg.use_rtt_scaling {
                let ratio = (self.srtt().wrapping_shl(BSD_SHIFT) / BSD_RTT_REF)
                    .clamp(BSD_MINROWE, BSD_MAXROWE);
                alpha = 1.max(ratio.wrapping_mul(alpha) >> BSD_SHIFT);
            }
        }
        self.alpha = alpha;
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

    const MS: Nanos = 1_000_000;

    fn growth(abc: bool) -> Growth {
        Growth {
            slow_start: SlowStart::PerAck,
            ca_per_segment: abc,
            ss_inclusive: false,
            halve_cwnd: true,
        }
    }

    fn ack(now: Nanos, acked: u32, rtt: Option<Nanos>, state: CaState) -> Ack {
        Ack {
            now,
            acked,
            prior_in_flight: 100,
            rtt,
            state,
        }
    }

    fn linux(cfg: HtcpConfig) -> Htcp {
        let mut h = Htcp::new(cfg, growth(false));
        h.tick(0); // Δ counts from t = 0
        h
    }

    fn lin(h: &mut Htcp) -> &mut LinuxState {
        match &mut h.model {
            Model::Linux(s) => s,
            Model::Bsd(_) => unreachable!(),
        }
    }

    fn bsd(h: &mut Htcp) -> &mut BsdState {
        match &mut h.model {
            Model::Bsd(s) => s,
            Model::Linux(_) => unreachable!(),
        }
    }

    /// Linux α (×128) at Δ ms after the last congestion event, without RTT scaling.
    fn linux_alpha_at(delta_ms: u32, beta: u32) -> u32 {
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
    fn linux_alpha_grows_with_time_since_congestion() {
        // β = 0.5 (64): α = 2·factor·(128 − 64) = 128·factor, i.e. factor ×1.0.
        // Δ = 0.5 s ≤ Δ_L: factor 1.
        assert_eq!(linux_alpha_at(500, 64), 128);
        // Δ = 1.5 s: d = 500, 1 + (10·500 + 250·250/1000)/1000 = 1 + (5000 + 62)/1000 = 6
        // (formula: 1 + 5 + 0.0625 = 6.06).
        assert_eq!(linux_alpha_at(1500, 64), 6 * 128);
        // Δ = 2 s: d = 1000, 1 + (10000 + 500·500/1000)/1000 = 1 + 10250/1000 = 11
        // (formula 11.25).
        assert_eq!(linux_alpha_at(2000, 64), 11 * 128);
        // Δ = 3 s: d = 2000, 1 + (20000 + 1000·1000/1000)/1000 = 1 + 21 = 22 (formula 22).
        assert_eq!(linux_alpha_at(3000, 64), 22 * 128);
        // Adaptive backoff scales by 2(1 − β): β = 102 (0.797) → 2·(128 − 102) = 52 per
        // unit of factor: Δ = 0.5 s → 52 (0.41), Δ = 2 s → 11·52 = 572 (4.47).
        assert_eq!(linux_alpha_at(500, 102), 52);
        assert_eq!(linux_alpha_at(2000, 102), 572);
        // β = 0.7 (89): 2·39 = 78 per unit: Δ = 3 s → 22·78 = 1716 (13.4).
        assert_eq!(linux_alpha_at(3000, 89), 1716);
    }

    #[test]
    fn linux_rtt_scaling() {
        let cfg = HtcpConfig::linux();
        let mut h = linux(cfg);
        let s = lin(&mut h);
        // minRTT 50 ms: scale = 8000/500 = 16; Δ = 2 s: factor 11 → 88/16 = 5 → α 640.
        s.min_rtt = 50;
        s.alpha_update(2000, &cfg);
        assert_eq!(s.alpha, 640);
        // minRTT 10 ms: scale = 8000/100 = 80 (the ×0.1 end); Δ = 3 s: 176/80 = 2 → 256.
        s.min_rtt = 10;
        s.alpha_update(3000, &cfg);
        assert_eq!(s.alpha, 256);
        // minRTT 5 ms: scale 160 → clamped 80; Δ = 0.5 s: 8/80 = 0 → 1 → α 128.
        s.min_rtt = 5;
        s.alpha_update(500, &cfg);
        assert_eq!(s.alpha, 128);
        // minRTT 300 ms: scale 2 → clamped 4 (×2); Δ = 2 s: 88/4 = 22 → 2816.
        s.min_rtt = 300;
        s.alpha_update(2000, &cfg);
        assert_eq!(s.alpha, 2816);
    }

    #[test]
    fn linux_beta_from_rtts_clamped() {
        let cfg = HtcpConfig {
            use_bandwidth_switch: false,
            ..HtcpConfig::linux()
        };
        let mut h = linux(cfg);
        let s = lin(&mut h);
        // The first event always gives 0.5 and arms the adaptive mode.
        s.min_rtt = 70;
        s.max_rtt = 100;
        s.beta_update(&cfg);
        assert_eq!((s.beta, s.modeswitch), (64, true));
        // 70/100: (70 << 7)/100 = 8960/100 = 89 (0.695).
        s.beta_update(&cfg);
        assert_eq!(s.beta, 89);
        // 40/100: 5120/100 = 51 → 64 (0.5).
        s.min_rtt = 40;
        s.beta_update(&cfg);
        assert_eq!(s.beta, 64);
        // 90/100: 11520/100 = 115 → 102 (0.797).
        s.min_rtt = 90;
        s.beta_update(&cfg);
        assert_eq!(s.beta, 102);
        // minRTT must exceed 10 ms: 10/12 → 0.5 (modeswitch stays armed).
        s.min_rtt = 10;
        s.max_rtt = 12;
        s.beta_update(&cfg);
        assert_eq!(s.beta, 64);
        // Without adaptive backoff β stays 0.5.
        let cfg = HtcpConfig {
            adaptive_backoff: false,
            ..cfg
        };
        s.min_rtt = 90;
        s.max_rtt = 100;
        s.beta_update(&cfg);
        s.beta_update(&cfg);
        assert_eq!(s.beta, 64);
    }

    #[test]
    fn linux_ssthresh_and_max_rtt_decay() {
        let cfg = HtcpConfig {
            use_bandwidth_switch: false,
            ..HtcpConfig::linux()
        };
        let mut h = linux(cfg);
        lin(&mut h).min_rtt = 70;
        lin(&mut h).max_rtt = 100;
        let w = Window {
            cwnd: 100,
            ssthresh: 1000,
        };
        // First event: β 0.5 → 100·64 >> 7 = 50; maxRTT → 70 + 30·95/100 = 70 + 28 = 98.
        assert_eq!(h.ssthresh(5000 * MS, &w, 100), 50);
        assert_eq!(lin(&mut h).max_rtt, 98);
        // Second: β = (70 << 7)/98 = 8960/98 = 91 → 100·91 >> 7 = 71; maxRTT → 70 +
        // 28·95/100 = 96.
        assert_eq!(h.ssthresh(9000 * MS, &w, 100), 71);
        assert_eq!(lin(&mut h).max_rtt, 96);
        // Floor of 2: β = (70 << 7)/96 = 93, 1·93 >> 7 = 0 → 2.
        assert_eq!(
            h.ssthresh(
                9000 * MS,
                &Window {
                    cwnd: 1,
                    ssthresh: 2
                },
                1
            ),
            2
        );
    }

    #[test]
    fn linux_bandwidth_switch_resets_beta_on_a_20_percent_change() {
        let cfg = HtcpConfig::linux();
        let mut h = linux(cfg);
        let s = lin(&mut h);
        s.min_rtt = 70;
        s.max_rtt = 100;
        s.modeswitch = true;
        // Throughput peak 100 → 120: 5·120 = 600 ≤ 6·100 = 600, inside → adaptive 89.
        s.old_max_b = 100;
        s.max_b = 120;
        s.beta_update(&cfg);
        assert_eq!((s.beta, s.old_max_b), (89, 120));
        // 120 → 145 (+20.8 %): 725 > 720 → β 0.5 and the adaptive mode disarmed.
        s.max_b = 145;
        s.beta_update(&cfg);
        assert_eq!((s.beta, s.modeswitch, s.old_max_b), (64, false, 145));
        // Next event steady (145): no switch, but modeswitch was off → 0.5, re-armed.
        s.beta_update(&cfg);
        assert_eq!((s.beta, s.modeswitch), (64, true));
        // 145 → 116 (−20 %): 580 ≥ 4·145 = 580, inside → adaptive again.
        s.max_b = 116;
        s.beta_update(&cfg);
        assert_eq!(s.beta, 89);
        // 116 → 92 (−20.7 %): 460 < 464 → reset.
        s.max_b = 92;
        s.beta_update(&cfg);
        assert_eq!(s.beta, 64);
    }

    #[test]
    fn linux_throughput_sampler() {
        let mut h = linux(HtcpConfig::linux());
        h.seen = Window {
            cwnd: 20,
            ssthresh: 10,
        };
        let s = lin(&mut h);
        s.min_rtt = 50;
        s.last_cong = 0;
        s.lasttime = 10_000;
        // At 10.06 s, 19 segments (≥ cwnd − α/128 = 19) over 60 ms ≥ minRTT:
        // cur = 19·1000/60 = 316 segments/s; Δ/minRTT = 10060/50 > 3 → EWMA from 0:
        // Bi = (0 + 316)/4 = 79, maxB = 79.
        h.pkts_acked(&ack(10_040 * MS, 10, Some(50 * MS), CaState::Open));
        h.pkts_acked(&ack(10_060 * MS, 9, Some(50 * MS), CaState::Open));
        let s = lin(&mut h);
        assert_eq!(
            (s.bi, s.max_b, s.packetcount, s.lasttime),
            (79, 79, 0, 10_060)
        );
        // Within 3 min-RTTs of an event the estimate restarts at the sample:
        // last_cong = 10.02 s; at 10.13 s (Δ 110 ms / 50 = 2 ≤ 3), 20 segments over
        // 70 ms: 20000/70 = 285.
        s.last_cong = 10_020;
        h.pkts_acked(&ack(10_130 * MS, 20, Some(50 * MS), CaState::Open));
        let s = lin(&mut h);
        assert_eq!((s.bi, s.max_b, s.min_b), (285, 285, 285));
        // In Recovery the sampler restarts.
        h.pkts_acked(&ack(10_150 * MS, 20, Some(50 * MS), CaState::Recovery));
        assert_eq!((lin(&mut h).packetcount, lin(&mut h).lasttime), (0, 10_150));
    }

    #[test]
    fn linux_growth_alpha_segments_per_window() {
        // cwnd 10 in CA, α = 2.0 (256): a segment once cnt·256 >> 7 ≥ 10, i.e. cnt ≥ 5.
        let mut h = linux(HtcpConfig::linux());
        lin(&mut h).alpha = 256;
        let mut w = Window {
            cwnd: 10,
            ssthresh: 5,
        };
        // Δ < 1 s, so the α recomputed at the increase is 1.0 (β 0.5, no minRTT).
        let now = 500 * MS;
        // Open-state ACKs of 2 segments: the counter is tested before it counts, so
        // 0, 2, 4 fail (it becomes 2, 4, 6) and the fourth ACK finds 6 ≥ 5 → +1.
        for _ in 0..3 {
            h.pkts_acked(&ack(now, 2, None, CaState::Open));
            h.on_ack(&mut w, &ack(now, 2, None, CaState::Open));
        }
        assert_eq!((w.cwnd, h.cwnd_cnt), (10, 6));
        h.pkts_acked(&ack(now, 2, None, CaState::Open));
        h.on_ack(&mut w, &ack(now, 2, None, CaState::Open));
        assert_eq!((w.cwnd, h.cwnd_cnt, h.linux_alpha()), (11, 0, 128));
        // Outside Open the ACK counts 1 whatever it acked.
        h.pkts_acked(&ack(now, 5, None, CaState::Disorder));
        h.on_ack(&mut w, &ack(now, 5, None, CaState::Disorder));
        assert_eq!(h.cwnd_cnt, 1);
    }

    #[test]
    fn linux_open_restarts_delta_in_2_6_25_only() {
        for (cfg, reset) in [
            (HtcpConfig::linux_2_6_25(), true),
            (HtcpConfig::linux(), false),
        ] {
            let mut h = linux(cfg);
            h.set_state(3000 * MS, CaState::Disorder);
            h.set_state(3001 * MS, CaState::Open);
            assert_eq!(lin(&mut h).last_cong, if reset { 3001 } else { 0 });
            // After a congestion state both restart Δ on Open.
            h.set_state(5000 * MS, CaState::Recovery);
            h.set_state(5600 * MS, CaState::Open);
            assert_eq!(lin(&mut h).last_cong, 5600);
            // A stale `now` (0) does not move Δ back.
            h.set_state(0, CaState::Loss);
            assert_eq!(lin(&mut h).last_cong, 5600);
        }
    }

    #[test]
    fn freebsd_alpha() {
        let cfg = HtcpConfig::freebsd();
        let mut h = Htcp::new(cfg, growth(true));
        h.tick(0);
        let s = bsd(&mut h);
        // HTCP_CALC_ALPHA(d) = (16 + 160d/1000 + (d/1000)·(16d/4000)) >> 4:
        // Δ = 0.5 s: d = −500 → 1.
        s.recalc_alpha(500, &cfg);
        assert_eq!(s.alpha, 1);
        // Δ = 1.5 s: d = 500: (16 + 80 + 0·2) >> 4 = 96 >> 4 = 6.
        s.recalc_alpha(1500, &cfg);
        assert_eq!(s.alpha, 6);
        // Δ = 2 s: d = 1000: (16 + 160 + 1·4) >> 4 = 180 >> 4 = 11 (formula 11.25).
        s.recalc_alpha(2000, &cfg);
        assert_eq!(s.alpha, 11);
        // Δ = 3 s: d = 2000: (16 + 320 + 2·8) >> 4 = 352 >> 4 = 22.
        s.recalc_alpha(3000, &cfg);
        assert_eq!(s.alpha, 22);
        // Adaptive backoff with β = 204 (0.8): max(1, 2·52·α >> 8): Δ = 3 s →
        // 104·22 = 2288 >> 8 = 8; Δ = 2 s → 1144 >> 8 = 4; with β = 128 α is unchanged.
        let ab = HtcpConfig {
            adaptive_backoff: true,
            ..cfg
        };
        s.beta = 204;
        s.recalc_alpha(3000, &ab);
        assert_eq!(s.alpha, 8);
        s.recalc_alpha(2000, &ab);
        assert_eq!(s.alpha, 4);
        s.beta = 128;
        s.recalc_alpha(2000, &ab);
        assert_eq!(s.alpha, 11);
        // RTT scaling, SRTT 50 ms = 1600 ticks×32: ratio = (1600 << 8)/3200 = 128 (×0.5):
        // Δ = 3 s → 22·128 >> 8 = 11. SRTT 1 ms = 32: (32 << 8)/3200 = 2 → clamped 26:
        // 22·26 >> 8 = 572 >> 8 = 2.
        let rs = HtcpConfig {
            use_rtt_scaling: true,
            ..cfg
        };
        s.srtt_ns = Some(50 * MS);
        s.recalc_alpha(3000, &rs);
        assert_eq!(s.alpha, 11);
        s.srtt_ns = Some(MS);
        s.recalc_alpha(3000, &rs);
        assert_eq!(s.alpha, 2);
    }

    #[test]
    fn freebsd_beta_and_ssthresh() {
        let cfg = HtcpConfig {
            adaptive_backoff: true,
            ..HtcpConfig::freebsd()
        };
        let mut h = Htcp::new(cfg, growth(true));
        h.tick(0);
        // minrtt/maxrtt in ticks ×32: 40 ms = 1280, 70 ms = 2240, 90 ms = 2880, 100 ms = 3200.
        let s = bsd(&mut h);
        s.maxrtt = 3200;
        s.minrtt = 1280; // (1280 << 8)/3200 = 102 → 128 (0.5)
        assert_eq!(s.beta_with(&cfg, s.maxrtt), 128);
        s.minrtt = 2880; // 737280/3200 = 230 → 204 (0.8)
        assert_eq!(s.beta_with(&cfg, s.maxrtt), 204);
        s.minrtt = 2240; // 573440/3200 = 179 (0.70)
        assert_eq!(s.beta_with(&cfg, s.maxrtt), 179);
        assert_eq!(s.beta_with(&HtcpConfig::freebsd(), s.maxrtt), 128);
        // First event halves: 100·128 >> 8 = 50. The decay as written:
        // (2240 + 960·95)/100 = (2240 + 91200)/100 = 934.
        let w = Window {
            cwnd: 100,
            ssthresh: 1000,
        };
        assert_eq!(h.ssthresh(1000 * MS, &w, 100), 50);
        h.set_state(1000 * MS, CaState::Recovery);
        assert_eq!((bsd(&mut h).maxrtt, bsd(&mut h).t_last_cong), (934, 1000));
        // Second event with maxrtt back at 3200: decayed 934 again → β = (2240 << 8)/934
        // = 613 → 204 → 100·204 >> 8 = 79.
        bsd(&mut h).maxrtt = 3200;
        assert_eq!(h.ssthresh(5000 * MS, &w, 100), 79);
        // A timeout does not commit the decay nor (the first one) restart Δ; the second
        // consecutive one does.
        h.set_state(5000 * MS, CaState::Loss);
        assert_eq!((bsd(&mut h).maxrtt, bsd(&mut h).t_last_cong), (3200, 1000));
        h.set_state(6000 * MS, CaState::Loss);
        assert_eq!(bsd(&mut h).t_last_cong, 6000);
    }

    /// FreeBSD 7's module: the second event takes the β its last ACK computed from the
    /// undecayed maxRTT (70/100 ms: 179, 0.70), not the 0.8 of the decayed one, and the
    /// decay still follows.
    #[test]
    fn freebsd_7_takes_beta_before_the_decay() {
        let cfg = HtcpConfig {
            adaptive_backoff: true,
            ..HtcpConfig::freebsd_7()
        };
        let mut h = Htcp::new(cfg, growth(true));
        h.tick(0);
        let w = Window {
            cwnd: 100,
            ssthresh: 1000,
        };
        let s = bsd(&mut h);
        (s.maxrtt, s.minrtt) = (3200, 2240);
        assert_eq!(h.ssthresh(1000 * MS, &w, 100), 50); // the first event halves
        h.set_state(1000 * MS, CaState::Recovery);
        let s = bsd(&mut h);
        assert_eq!(s.maxrtt, 934); // (2240 + 960·95)/100, as today's module
        s.maxrtt = 3200;
        s.beta = s.beta_with(&cfg, s.maxrtt); // what the last ACK computed: 179
                                              // 100·179 >> 8 = 69 (today's order gives 79, from β 204).
        assert_eq!(h.ssthresh(5000 * MS, &w, 100), 69);
        assert_eq!(bsd(&mut h).pending_maxrtt, Some(934));
    }

    #[test]
    fn freebsd_growth() {
        // ABC: α segments once a window (≤ 2 per ACK counted) has been acked.
        let cfg = HtcpConfig::freebsd();
        let mut h = Htcp::new(cfg, growth(true));
        h.tick(0);
        let mut w = Window {
            cwnd: 10,
            ssthresh: 5,
        };
        let now = 3000 * MS; // Δ = 3 s → α = 22
        for _ in 0..4 {
            h.on_ack(&mut w, &ack(now, 3, None, CaState::Open)); // counts 2 each
        }
        assert_eq!((w.cwnd, h.cwnd_cnt), (10, 8));
        h.on_ack(&mut w, &ack(now, 3, None, CaState::Open)); // 10 ≥ 10 → +22
        assert_eq!((w.cwnd, h.cwnd_cnt), (32, 0));
        // No ABC: (22 << 8)/32 = 176 per ACK in 1/256 segment: 176, 352 → +1 (96 left).
        let mut h = Htcp::new(cfg, growth(false));
        h.tick(0);
        h.on_ack(&mut w, &ack(now, 1, None, CaState::Open));
        assert_eq!(w.cwnd, 32);
        h.on_ack(&mut w, &ack(now, 1, None, CaState::Open));
        assert_eq!((w.cwnd, bsd(&mut h).frac), (33, 96));
        // α = 1 (Δ < 1 s after an event): NewReno, one segment per cwnd ACKs.
        let mut h = Htcp::new(cfg, growth(false));
        let mut w = Window {
            cwnd: 4,
            ssthresh: 2,
        };
        for _ in 0..3 {
            h.on_ack(&mut w, &ack(100 * MS, 1, None, CaState::Open));
        }
        assert_eq!(w.cwnd, 4);
        h.on_ack(&mut w, &ack(100 * MS, 1, None, CaState::Open));
        assert_eq!(w.cwnd, 5);
    }

    #[test]
    fn freebsd_rtt_tracking_waits_for_8_samples() {
        let mut h = Htcp::new(HtcpConfig::freebsd(), growth(true));
        for i in 0..7 {
            h.pkts_acked(&ack(i * MS, 1, Some(40 * MS), CaState::Open));
        }
        assert_eq!((bsd(&mut h).minrtt, bsd(&mut h).maxrtt), (0, 0));
        // 8th sample: SRTT 40 ms = 1280 ticks×32.
        h.pkts_acked(&ack(8 * MS, 1, Some(40 * MS), CaState::Open));
        assert_eq!((bsd(&mut h).minrtt, bsd(&mut h).maxrtt), (1280, 1280));
        // A 120 ms sample: SRTT (40·7 + 120)/8 = 50 ms = 1600 → maxrtt.
        h.pkts_acked(&ack(9 * MS, 1, Some(120 * MS), CaState::Open));
        assert_eq!((bsd(&mut h).minrtt, bsd(&mut h).maxrtt), (1280, 1600));
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
