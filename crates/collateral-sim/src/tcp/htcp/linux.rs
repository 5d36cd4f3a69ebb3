//! Linux H-TCP (`net/ipv4/tcp_htcp.c`, `torvalds/linux` @66ca3ee9; 2.6.24 at
//! `george-hopkins/Samsung-BD-C8000` @2d660725 for 2.6.25): α and β ×128, time in
//! jiffies.

use super::{HtcpConfig, HZ};
use crate::tcp::cc::CaState;

/// Linux fixed point: 1.0 = 128 (`ALPHA_BASE`), β in [64, 102] (`BETA_MIN`, `BETA_MAX`).
pub(super) const ALPHA_BASE: u32 = 128;
pub(super) const BETA_MIN: u32 = 64;
pub(super) const BETA_MAX: u32 = 102;

/// Linux `struct htcp` (without the undo copies).
#[derive(Debug, Clone)]
pub(super) struct LinuxState {
    /// ×128.
    pub(super) alpha: u32,
    /// ×128.
    pub(super) beta: u32,
    /// Adaptive β only from the second congestion event (and not right after a switch).
    pub(super) modeswitch: bool,
    /// Segments acked by the latest Open-state ACK (a `u16` in the kernel).
    pub(super) pkts_acked: u32,
    pub(super) packetcount: u32,
    /// Jiffies.
    pub(super) min_rtt: u32,
    pub(super) max_rtt: u32,
    pub(super) last_cong: u32,
    /// Set on entry to a congestion state; current Linux restarts Δ on Open only then.
    pub(super) undo_last_cong: Option<u32>,
    /// Throughput in segments/s: the EWMA, its peak, the peak at the previous event.
    pub(super) min_b: u32,
    pub(super) max_b: u32,
    pub(super) old_max_b: u32,
    pub(super) bi: u32,
    pub(super) lasttime: u32,
}

impl LinuxState {
    /// `measure_rtt`: min RTT always, max RTT only in Open and only by steps of at most
    /// 20 ms (so one delayed outlier does not set it).
    pub(super) fn measure_rtt(&mut self, rtt: u32, state: CaState) {
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
    pub(super) fn beta_update(&mut self, cfg: &HtcpConfig) {
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
    pub(super) fn alpha_update(&mut self, now: u32, cfg: &HtcpConfig) {
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

#[cfg(test)]
mod tests {
    use super::super::tests::*;
    use super::super::*;

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
}
