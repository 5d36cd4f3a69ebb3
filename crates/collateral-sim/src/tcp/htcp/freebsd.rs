//! FreeBSD H-TCP (`sys/netinet/cc/cc_htcp.c`, `freebsd/freebsd-src` @eb5956fd, and
//! the FreeBSD 7 module): β ×256, α an integer, RTTs from the smoothed RTT in ticks ×32.

use super::{HtcpConfig, HZ};

/// FreeBSD fixed point: 1.0 = 256 (`HTCP_SHIFT` 8); β in [128, 204]; RTT ratio for
/// scaling in [26, 512] (0.1..2); 8 RTT samples before SRTT is trusted.
pub(super) const BSD_SHIFT: u32 = 8;
pub(super) const BSD_MINBETA: i32 = 128;
pub(super) const BSD_MAXBETA: i32 = 204;
pub(super) const BSD_MINROWE: i32 = 26;
pub(super) const BSD_MAXROWE: i32 = 512;
pub(super) const BSD_MIN_RTT_SAMPLES: u32 = 8;
/// RTT_ref = 100 ms in FreeBSD's SRTT units (ticks ×32): `htcp_rtt_ref`.
pub(super) const BSD_RTT_REF: i32 = 100 * 32 * HZ as i32 / 1000;
/// Past this many ticks after Δ_L, FreeBSD stops updating α (`htcp_max_diff`).
pub(super) const BSD_MAX_DIFF: i64 = (i32::MAX / (16 * 10)) as i64;

/// FreeBSD `struct htcp` and the tcpcb fields it reads.
#[derive(Debug, Clone)]
pub(super) struct BsdState {
    pub(super) alpha: i32,
    /// ×256.
    pub(super) beta: i32,
    /// SRTT in ticks ×32; 0 = not yet set (`TCPTV_SRTTBASE`).
    pub(super) minrtt: i32,
    pub(super) maxrtt: i32,
    /// Ticks.
    pub(super) t_last_cong: i64,
    pub(super) srtt_ns: Option<u64>,
    pub(super) rtt_updates: u32,
    /// Consecutive timeouts (`t_rxtshift`).
    pub(super) rxtshift: u32,
    /// ssthresh has been set by a congestion event (FreeBSD tests ssthresh against its
    /// initial value to give the first event β = 0.5).
    pub(super) had_event: bool,
    /// maxrtt as decayed by `ssthresh`, committed if the event turns out to be a fast
    /// retransmit (`CC_NDUPACK`) rather than a timeout.
    pub(super) pending_maxrtt: Option<i32>,
    /// Growth without ABC, in 1/256 segment.
    pub(super) frac: u64,
    /// NewReno's per-ACK counter for α = 1 without ABC.
    pub(super) nr_cnt: u32,
}

impl BsdState {
    /// SRTT in ticks ×32 (`tcp_get_srtt(tp, TCP_TMR_GRANULARITY_TICKS)`).
    pub(super) fn srtt(&self) -> i32 {
        let ns = self.srtt_ns.unwrap_or(0);
        (ns.saturating_mul(32) / (1_000_000_000 / HZ as u64)).min(i32::MAX as u64) as i32
    }

    /// `htcp_recalc_beta`.
    pub(super) fn beta_with(&self, cfg: &HtcpConfig, maxrtt: i32) -> i32 {
        if cfg.adaptive_backoff && self.minrtt != 0 && maxrtt != 0 {
            (self.minrtt.wrapping_shl(BSD_SHIFT).wrapping_div(maxrtt))
                .clamp(BSD_MINBETA, BSD_MAXBETA)
        } else {
            BSD_MINBETA
        }
    }

    /// `htcp_recalc_alpha`.
    pub(super) fn recalc_alpha(&mut self, now: i64, cfg: &HtcpConfig) {
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

#[cfg(test)]
mod tests {
    use super::super::tests::*;
    use super::super::*;

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
}
