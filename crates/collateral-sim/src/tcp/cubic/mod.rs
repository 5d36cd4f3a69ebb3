//! CUBIC as Linux runs it: the v2.1 code the studies' 2.6.25 kernels shipped, and the
//! current (v2.3+, RFC 9438) code with HyStart.
//!
//! Sources read (all `net/ipv4/tcp_cubic.c`):
//! - v2.1: `george-hopkins/Samsung-BD-C8000` @2d660725 (a 2.6.24 tree; the index's
//!   2.6.25 mirror, `comio/linux-2.6.25-cf547x`, holds no `net/ipv4`). It is
//!   `MODULE_VERSION("2.1")`, as 2.6.25's is; v2.2 (β = 717, commit 6b3d626321c) was
//!   first released in 2.6.26.
//! - current: `torvalds/linux` @617e407c.
//!
//! The arithmetic is the kernel's: `u32`/`u64` with the kernel's truncations and wraps,
//! time in jiffies at HZ = 1000 and, inside the curve, in 1/1024 s (`BICTCP_HZ`), so that
//! `K`, the target and `cnt` are the kernel's for the same jiffies. The cube root is the
//! kernel's table lookup plus one Newton–Raphson step, not an exact root.
//!
//! HyStart, the modern slow-start exit, is in [`hystart`].
//!
//! Not modelled: undo (`undo_cwnd`), the modern idle restart (`CA_EVENT_TX_START` shifts
//! the epoch; a bulk sender is never idle) and `snd_cwnd_clamp`.

use collateral_queue::Nanos;

pub use collateral_model::tcp::cubic::{CubicConfig, CubicVariant};

use super::cc::{slow_start, Ack, CaState, CongestionControl, Growth, SlowStart, Window};
use hystart::{HyStart, HYSTART_LOW_WINDOW};

mod hystart;

/// Ticks per second of the studies' kernels (`CONFIG_HZ=1000`).
const HZ: u32 = 1000;
/// β and the fast-convergence factor are in 1/1024 (`BICTCP_BETA_SCALE`).
const BETA_SCALE: u32 = 1024;
/// Time inside the cubic curve is in 1/2^10 s (`BICTCP_HZ`).
const BICTCP_HZ: u32 = 10;
/// The delayed-ACK ratio is kept ×16 (`ACK_RATIO_SHIFT`).
const ACK_RATIO_SHIFT: u32 = 4;
/// v2.1's cap on growth: at most 16 segments per 100 ms of RTT (`max_increment`).
const MAX_INCREMENT: u32 = 16;
fn jiffies(now: Nanos) -> u32 {
    (now / (1_000_000_000 / HZ as u64)) as u32
}

fn usecs(now: Nanos) -> u32 {
    (now / 1000) as u32
}

/// CUBIC (Linux `struct bictcp` plus the `snd_cwnd_cnt` it drives).
#[derive(Debug, Clone)]
pub struct Cubic {
    cfg: CubicConfig,
    g: Growth,
    beta: u32,
    /// `beta_scale` = 8(1024+β)/3/(1024−β): ACKs per Reno segment ×8 (23 for β = 819).
    beta_scale: u32,
    /// `cube_rtt_scale` = bic_scale·10 (C/RTT with RTT = 100 ms), in 1/1024.
    cube_rtt_scale: u32,
    /// `cube_factor` = 2^40 / cube_rtt_scale, so K = ∛(cube_factor·(W_max − cwnd)).
    cube_factor: u64,
    cnt: u32,
    last_max_cwnd: u32,
    loss_cwnd: u32,
    last_cwnd: u32,
    last_time: u32,
    origin: u32,
    k: u32,
    /// v2.1: jiffies ×8; modern: µs.
    delay_min: u32,
    /// `None` where the kernel has `epoch_start == 0`.
    epoch_start: Option<u32>,
    ack_cnt: u32,
    tcp_cwnd: u32,
    delayed_ack: u32,
    /// The last `bic_target` (the kernel keeps it local; kept here for inspection).
    target: u32,
    /// Linux `snd_cwnd_cnt`.
    cwnd_cnt: u32,
    after_timeout: bool,
    /// The window as last seen by a hook (HyStart's gate in `pkts_acked`).
    seen: Window,
    /// Latest time seen by any hook.
    clock: Nanos,
    hy: HyStart,
}

impl Cubic {
    pub fn new(cfg: CubicConfig, g: Growth) -> Self {
        let beta = cfg.beta.clamp(1, BETA_SCALE - 1);
        let bic_scale = cfg.bic_scale.max(1);
        let cube_rtt_scale = bic_scale * 10;
        let mut c = Cubic {
            cfg,
            g,
            beta,
            // cubictcp_register()
            beta_scale: 8 * (BETA_SCALE + beta) / 3 / (BETA_SCALE - beta),
            cube_rtt_scale,
            cube_factor: (1u64 << (10 + 3 * BICTCP_HZ)) / cube_rtt_scale as u64,
            cnt: 0,
            last_max_cwnd: 0,
            loss_cwnd: 0,
            last_cwnd: 0,
            last_time: 0,
            origin: 0,
            k: 0,
            delay_min: 0,
            epoch_start: None,
            ack_cnt: 0,
            tcp_cwnd: 0,
            delayed_ack: 2 << ACK_RATIO_SHIFT,
            target: 0,
            cwnd_cnt: 0,
            after_timeout: false,
            seen: Window {
                cwnd: 0,
                ssthresh: u32::MAX,
            },
            clock: 0,
            hy: HyStart::default(),
        };
        c.reset();
        c.hystart_reset(0);
        c
    }

    fn modern(&self) -> bool {
        self.cfg.variant == CubicVariant::Modern
    }

    /// `bictcp_reset`: forget everything, including W_max (after a timeout).
    fn reset(&mut self) {
        self.cnt = 0;
        self.last_max_cwnd = 0;
        self.loss_cwnd = 0;
        self.last_cwnd = 0;
        self.last_time = 0;
        self.origin = 0;
        self.k = 0;
        self.delay_min = 0;
        self.epoch_start = None;
        self.delayed_ack = 2 << ACK_RATIO_SHIFT;
        self.ack_cnt = 0;
        self.tcp_cwnd = 0;
        self.hy.found = false;
        self.hy.exit_pending = false;
    }

    /// `bictcp_update`: recompute `cnt`, the ACKs (v2.1) or segments (modern) per one
    /// segment of growth, from the cubic curve and the Reno-friendly estimate.
    fn update(&mut self, cwnd: u32, acked: u32, now: Nanos) {
        let now_j = jiffies(now);
        let modern = self.modern();
        self.ack_cnt = self.ack_cnt.wrapping_add(if modern { acked } else { 1 });
        // Nothing to do if the window is unchanged and the curve was evaluated within
        // the last 1/32 s.
        if self.last_cwnd == cwnd && now_j.wrapping_sub(self.last_time) as i32 <= (HZ / 32) as i32 {
            return;
        }
        // Modern: the curve is evaluated at most once per jiffy.
        let skip_curve = modern && self.epoch_start.is_some() && now_j == self.last_time;
        if !skip_curve {
            self.last_cwnd = cwnd;
            self.last_time = now_j;
            let epoch = match self.epoch_start {
                Some(e) => e,
                None => {
                    // A new epoch: the curve starts at this window and, below W_max,
                    // reaches W_max after K.
                    self.epoch_start = Some(now_j);
                    self.ack_cnt = if modern { acked } else { 1 };
                    self.tcp_cwnd = cwnd;
                    if self.last_max_cwnd <= cwnd {
                        self.k = 0;
                        self.origin = cwnd;
                    } else {
                        let d = (self.last_max_cwnd - cwnd) as u64;
                        self.k = cubic_root(self.cube_factor.wrapping_mul(d), !modern);
                        self.origin = self.last_max_cwnd;
                    }
                    now_j
                }
            };
            // Elapsed time plus one min-RTT (the target is where the curve will be an
            // RTT from now, RFC 9438 §4.2), in 1/1024 s.
            let t: u64 = if modern {
                let t = now_j.wrapping_sub(epoch) as i32 as i64 as u64;
                (t.wrapping_add(self.delay_min.div_ceil(1000) as u64) << BICTCP_HZ) / HZ as u64
            } else {
                // All u32 in v2.1, so the shift wraps after ~70 min in one epoch.
                ((now_j.wrapping_add(self.delay_min >> 3).wrapping_sub(epoch)) << BICTCP_HZ) as u64
                    / HZ as u64
            };
            let k = self.k as u64;
            let offs = k.abs_diff(t);
            // C·(t − K)^3 in segments: cube_rtt_scale/2^10 · (offs/2^10)^3.
            let delta = (self.cube_rtt_scale as u64)
                .wrapping_mul(offs)
                .wrapping_mul(offs)
                .wrapping_mul(offs)
                >> (10 + 3 * BICTCP_HZ);
            let delta = delta as u32;
            self.target = if t < k {
                self.origin.wrapping_sub(delta)
            } else {
                self.origin.wrapping_add(delta)
            };
            self.cnt = if self.target > cwnd {
                cwnd / (self.target - cwnd)
            } else {
                100u32.wrapping_mul(cwnd) // very slow growth at or above the target
            };
            if modern {
                // Before the first loss the curve knows no W_max: grow at least 5 % per RTT.
                if self.last_max_cwnd == 0 && self.cnt > 20 {
                    self.cnt = 20;
                }
            } else {
                // v2.1's cap in the convex region: at most max_increment segments per
                // 100 ms of delay_min (delay_min is jiffies ×8, hence the 8).
                if self.delay_min > 0 {
                    let den = (10 * MAX_INCREMENT).wrapping_mul(self.delay_min);
                    if let Some(min_cnt) = cwnd.wrapping_mul(HZ * 8).checked_div(den) {
                        if self.cnt < min_cnt && t >= k {
                            self.cnt = min_cnt;
                        }
                    }
                }
                // v2.1 before the first loss (and after a timeout's reset): +2 % per RTT.
                if self.loss_cwnd == 0 {
                    self.cnt = 50;
                }
            }
        }
        if self.cfg.tcp_friendliness {
            // Reno with CUBIC's β would have grown one segment per beta_scale/8 windows'
            // worth of ACKs (RFC 9438 §4.3's α = 3(1−β)/(1+β)); if that estimate is
            // ahead, grow at least as fast as it.
            let per = (cwnd.wrapping_mul(self.beta_scale) >> 3).max(1);
            if self.ack_cnt > per {
                let n = (self.ack_cnt - 1) / per;
                self.ack_cnt -= n * per;
                self.tcp_cwnd = self.tcp_cwnd.wrapping_add(n);
            }
            if self.tcp_cwnd > cwnd {
                let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
                self.cnt = self.cnt.min(max_cnt);
            }
        }
        if modern {
            // At most one segment per two acked: 1.5× per RTT.
            self.cnt = self.cnt.max(2);
        } else {
            // cnt counts ACKs: scale by the measured segments per ACK.
            self.cnt = (self.cnt << ACK_RATIO_SHIFT) / self.delayed_ack.max(1);
            if self.cnt == 0 {
                self.cnt = 1;
            }
        }
    }

    /// The `snd_cwnd_cnt` step after `bictcp_update`. v2.1 counts ACKs and compares
    /// before counting (so `cnt + 1` ACKs per segment); modern uses
    /// `tcp_cong_avoid_ai(tp, cnt, acked)`.
    fn increase(&mut self, w: &mut Window, acked: u32) {
        let cnt = self.cnt.max(1);
        if self.modern() {
            if self.cwnd_cnt >= cnt {
                self.cwnd_cnt = 0;
                w.cwnd = w.cwnd.saturating_add(1);
            }
            self.cwnd_cnt = self.cwnd_cnt.saturating_add(acked);
            if self.cwnd_cnt >= cnt {
                let n = self.cwnd_cnt / cnt;
                self.cwnd_cnt -= n * cnt;
                w.cwnd = w.cwnd.saturating_add(n);
            }
        } else if self.cwnd_cnt >= cnt {
            w.cwnd = w.cwnd.saturating_add(1);
            self.cwnd_cnt = 0;
        } else {
            self.cwnd_cnt += 1;
        }
    }
}

/// The kernel's `cubic_root`: a 64-entry table of cube roots for the top bits, then one
/// Newton–Raphson step (mean error ≈ 0.2 %). `shifted_div` is v2.1's `div64_64`, which
/// shifts a divisor above 32 bits down (and the dividend with it) before dividing; the
/// modern `div64_u64` is exact. They differ only for roots above 2^16 (K > 64 s).
fn cubic_root(a: u64, shifted_div: bool) -> u32 {
    // v[x] = ∛(x·2^18) − 1, hand-refined (Willy Tarreau's table in the kernel).
    const V: [u8; 64] = [
        0, 54, 54, 54, 118, 118, 118, 118, 123, 129, 134, 138, 143, 147, 151, 156, 157, 161, 164,
        168, 170, 173, 176, 179, 181, 185, 187, 190, 192, 194, 197, 199, 200, 202, 204, 206, 209,
        211, 213, 215, 217, 219, 221, 222, 224, 225, 227, 229, 231, 232, 234, 236, 237, 239, 240,
        242, 244, 245, 246, 248, 250, 251, 252, 254,
    ];
    let bits = 64 - a.leading_zeros(); // fls64
    if bits < 7 {
        return (V[a as usize] as u32 + 35) >> 6;
    }
    // b ≈ bits/3 − 1: keep the top ~6 bits for the table.
    let b = ((bits * 84) >> 8) - 1;
    let top = (a >> (b * 3)) as usize;
    let x = ((V[top] as u32 + 10) << b) >> 6;
    let div = (x as u64) * (x as u64 - 1);
    let q = if shifted_div && div >> 32 != 0 {
        let shift = 32 - ((div >> 32) as u32).leading_zeros();
        (a >> shift) / (div >> shift)
    } else {
        a / div
    };
    let x = (2 * x).wrapping_add(q as u32);
    (x.wrapping_mul(341)) >> 10 // ÷3
}

impl CongestionControl for Cubic {
    /// `bictcp_cong_avoid` / `cubictcp_cong_avoid`.
    fn on_ack(&mut self, w: &mut Window, ack: &Ack) {
        self.clock = self.clock.max(ack.now);
        if self.hy.exit_pending {
            self.hy.exit_pending = false;
            w.ssthresh = w.cwnd;
        }
        let mut acked = ack.acked;
        if self.g.in_slow_start(w) {
            let before = w.cwnd;
            slow_start(w, acked, self.g.slow_start, self.after_timeout);
            // Modern `tcp_slow_start` hands what it did not use to congestion avoidance.
            acked = match self.g.slow_start {
                SlowStart::PerSegment => acked.saturating_sub(w.cwnd - before),
                _ => 0,
            };
            if acked == 0 {
                self.seen = *w;
                return;
            }
        }
        self.after_timeout = false;
        self.update(w.cwnd, acked, ack.now);
        self.increase(w, acked);
        self.seen = *w;
    }

    /// `bictcp_acked` / `cubictcp_acked`: v2.1's packets-per-ACK EWMA (Open state only),
    /// the minimum RTT (ignoring the first second of an epoch, when the queue built
    /// before the loss may still be draining) and, modern only, HyStart.
    fn pkts_acked(&mut self, ack: &Ack) {
        self.clock = self.clock.max(ack.now);
        self.hy.flight_now = ack.prior_in_flight.saturating_sub(ack.acked);
        self.hy.round_acked = self.hy.round_acked.saturating_add(ack.acked);
        let now_j = jiffies(ack.now);
        let young_epoch = self
            .epoch_start
            .is_some_and(|e| (now_j.wrapping_sub(e) as i32) < HZ as i32);
        if !self.modern() {
            if ack.state == CaState::Open {
                // ratio += sample − ratio/16, i.e. ratio = 15/16·ratio + sample (×16).
                self.delayed_ack = self
                    .delayed_ack
                    .wrapping_sub(self.delayed_ack >> ACK_RATIO_SHIFT)
                    .wrapping_add(ack.acked);
            }
            let Some(rtt) = ack.rtt else { return };
            // 2.6.25 passes the RTT in whole jiffies of the timestamp clock, and none at
            // all when that is 0 (`ca_seq_rtt > 0` in tcp_clean_rtx_queue).
            let rtt_j = now_j.wrapping_sub(jiffies(ack.now.saturating_sub(rtt)));
            // With no epoch the kernel compares against epoch_start = 0, i.e. against the
            // uptime; we take a machine up more than 5 minutes and under 24 days, which
            // accepts the sample.
            if rtt_j == 0 || young_epoch {
                return;
            }
            let delay = (rtt_j << 3).max(1);
            if self.delay_min == 0 || self.delay_min > delay {
                self.delay_min = delay;
            }
            return;
        }
        let Some(rtt) = ack.rtt else { return };
        if young_epoch {
            return;
        }
        let delay = (rtt / 1000).min(u32::MAX as u64).max(1) as u32;
        if self.delay_min == 0 || self.delay_min > delay {
            self.delay_min = delay;
        }
        if self.cfg.hystart
            && !self.hy.found
            && self.g.in_slow_start(&self.seen)
            && self.seen.cwnd >= HYSTART_LOW_WINDOW
        {
            self.hystart_update(delay, ack);
        }
    }

    /// `bictcp_recalc_ssthresh`: end the epoch, remember W_max (lowered by fast
    /// convergence when this loss came below the previous one, RFC 9438 §4.7) and return
    /// max(β·cwnd, 2). The β product is over cwnd (Linux) or FlightSize, per the stack.
    fn ssthresh(&mut self, now: Nanos, w: &Window, flight: u32) -> u32 {
        self.clock = self.clock.max(now);
        self.epoch_start = None;
        let cwnd = w.cwnd;
        self.last_max_cwnd = if cwnd < self.last_max_cwnd && self.cfg.fast_convergence {
            cwnd.wrapping_mul(BETA_SCALE + self.beta) / (2 * BETA_SCALE)
        } else {
            cwnd
        };
        self.loss_cwnd = cwnd;
        self.cwnd_cnt = 0;
        self.hy.exit_pending = false;
        self.hy.flight_now = flight;
        let ss = (self.g.loss_base(w, flight).wrapping_mul(self.beta) / BETA_SCALE).max(2);
        self.seen = Window { cwnd, ssthresh: ss };
        ss
    }

    /// `bictcp_state`: a timeout forgets everything (W_max included, so v2.1's `cnt = 50`
    /// and modern's `cnt ≤ 20` apply again) and starts a new HyStart round.
    fn set_state(&mut self, now: Nanos, state: CaState) {
        self.clock = self.clock.max(now);
        if state == CaState::Loss {
            self.reset();
            if self.modern() {
                self.hystart_reset(usecs(self.clock));
            }
            self.after_timeout = true;
            self.cwnd_cnt = 0;
            self.seen.cwnd = 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::cc_op_harness::{any_growth, drive, op};
    use proptest::prelude::*;

    pub(super) const MS: Nanos = 1_000_000;

    pub(super) fn growth() -> Growth {
        Growth {
            slow_start: SlowStart::PerAck,
            ca_per_segment: false,
            ss_inclusive: false,
            halve_cwnd: true,
        }
    }

    pub(super) fn ack(now: Nanos, acked: u32, rtt: Option<Nanos>) -> Ack {
        Ack {
            now,
            acked,
            prior_in_flight: 100,
            rtt,
            state: CaState::Open,
        }
    }

    #[test]
    fn constants_match_the_kernel_precomputation() {
        // beta_scale = 8(1024+β)/3/(1024−β), integer steps left to right:
        //   β=819: 8·1843 = 14744; /3 = 4914; /205 = 23.97 → 23
        //   β=717: 8·1741 = 13928; /3 = 4642; /307 = 15.12 → 15
        // cube_factor = 2^40/410 = 1099511627776/410 = 2681735677.5 → 2681735677
        let c = Cubic::new(CubicConfig::linux_2_6_25(), growth());
        assert_eq!(
            (c.beta_scale, c.cube_rtt_scale, c.cube_factor),
            (23, 410, 2_681_735_677)
        );
        let c = Cubic::new(CubicConfig::modern(), growth());
        assert_eq!(c.beta_scale, 15);
    }

    #[test]
    fn cube_root_is_the_kernels_table_plus_one_newton_step() {
        // a = 21·2681735677 = 56316449217, in [2^35, 2^36): fls64 = 36.
        //   b = (36·84 >> 8) − 1 = (3024 >> 8) − 1 = 10; a >> 30 = 52; v[52] = 237
        //   x = (247 << 10) >> 6 = 3952; x(x−1) = 15614352; a / that = 3606
        //   x = (2·3952 + 3606)·341 >> 10 = 11510·341 >> 10 = 3924910 >> 10 = 3832
        // (exact: 3833^3 = 56314010537 ≤ a < 3834^3, so the table is one low).
        assert_eq!(cubic_root(56_316_449_217, true), 3832);
        // a = 30·2681735677 = 80452070310, fls64 = 37: b = (3108 >> 8) − 1 = 11,
        //   a >> 33 = 9, v[9] = 129, x = (139 << 11) >> 6 = 4448, x(x−1) = 19780256,
        //   a / that = 4067, (8896 + 4067)·341 >> 10 = 4420383 >> 10 = 4316.
        assert_eq!(cubic_root(80_452_070_310, false), 4316);
        // Small values use the table alone: (v[8] + 35) >> 6 = 158 >> 6 = 2 = ∛8.
        assert_eq!(cubic_root(8, true), 2);
        assert_eq!(cubic_root(0, true), 0);
    }

    #[test]
    fn v2_1_after_a_loss_at_100_segments_k_and_the_curve() {
        let mut c = Cubic::new(CubicConfig::linux_2_6_25(), growth());
        // Loss at cwnd 100 (no earlier W_max): W_max = 100, ssthresh = 100·819/1024 =
        // 81900/1024 = 79.98 → 79.
        let w = Window {
            cwnd: 100,
            ssthresh: 50,
        };
        assert_eq!(c.ssthresh(0, &w, 100), 79);
        assert_eq!((c.last_max_cwnd, c.loss_cwnd), (100, 100));
        // First CA ACK at 10 s: K = cubic_root(2681735677·21) = 3832 (3.742 s), origin
        // 100. No RTT sample yet (delay_min = 0), so t = 0, offs = 3832:
        //   3832^3 = 56269946368; ·410 = 23070678010880; >> 40 = 20.98 → 20
        //   target = 100 − 20 = 80; cnt = 79/(80 − 79) = 79
        //   friendliness: 79·23 >> 3 = 227 ACKs per Reno segment, ack_cnt = 1: no change
        //   ×16/delayed_ack = 79·16/32 = 39 ACKs per segment.
        let t0 = 10_000 * MS;
        c.update(79, 1, t0);
        assert_eq!((c.k, c.origin, c.target, c.cnt), (3832, 100, 80, 39));
        // One second later with cwnd 80: t = (1000 << 10)/1000 = 1024, offs = 2808:
        //   2808^3 = 22140698112; ·410 = 9077686225920; >> 40 = 8.26 → 8
        //   target = 92; cnt = 80/12 = 6; ×16/32 = 3.
        c.update(80, 1, t0 + 1000 * MS);
        assert_eq!((c.target, c.cnt), (92, 3));
        // At t = K: (3743 << 10)/1000 = 3832.8 → 3832 = K, target = W_max = 100;
        // cwnd 95 → cnt = 95/5 = 19, ×16/32 = 9.
        c.update(95, 1, t0 + 3743 * MS);
        assert_eq!((c.target, c.cnt), (100, 9));
        // 1 s past K: t = (4743 << 10)/1000 = 4856, offs = 1024: 410·2^30 >> 40 = 0.4
        // → 0: the curve is flat around W_max (target 100 = cwnd → cnt = 100·100·16/32).
        c.update(100, 1, t0 + 4743 * MS);
        assert_eq!((c.target, c.cnt), (100, 5000));
    }

    #[test]
    fn modern_after_a_loss_at_100_segments() {
        let mut c = Cubic::new(CubicConfig::modern(), growth());
        // ssthresh = 100·717/1024 = 71700/1024 = 70.02 → 70.
        assert_eq!(
            c.ssthresh(
                0,
                &Window {
                    cwnd: 100,
                    ssthresh: 50
                },
                100
            ),
            70
        );
        // K = cubic_root(2681735677·30) = 4316 (4.215 s; exact ∛(30/0.4004) = 4.2153 s).
        // t = 0: offs = 4316, 4316^3 = 80397826496, ·410 >> 40 = 29.98 → 29,
        // target = 71, cnt = 70/1 = 70 (no ACK-ratio scaling, floor 2).
        let t0 = 10_000 * MS;
        c.update(70, 1, t0);
        assert_eq!((c.k, c.target, c.cnt), (4316, 71, 70));
    }

    #[test]
    fn cnt_and_target_over_a_sequence_of_acks() {
        // v2.1, per-ACK counting, as in the test above: cwnd 79 after the loss at 100.
        let mut c = Cubic::new(CubicConfig::linux_2_6_25(), growth());
        let mut w = Window {
            cwnd: 100,
            ssthresh: 1000,
        };
        w.ssthresh = c.ssthresh(0, &w, 100);
        w.cwnd = w.ssthresh;
        let t0 = 10_000 * MS;
        // ACK 1 starts the epoch: cnt = 39. The counter is compared before it counts, so
        // ACKs 1..=39 bring snd_cwnd_cnt to 39 and ACK 40 adds the segment.
        for i in 1..=39 {
            c.on_ack(&mut w, &ack(t0, 1, None));
            assert_eq!((w.cwnd, c.cwnd_cnt, c.cnt), (79, i, 39));
        }
        c.on_ack(&mut w, &ack(t0, 1, None));
        assert_eq!((w.cwnd, c.cwnd_cnt), (80, 0));
        // ACK 41, same instant: the window changed, so the curve is re-evaluated: t = 0,
        // target still 80 = cwnd → cnt = 100·80 = 8000 → ×16/32 = 4000. The Reno
        // estimate needs 80·23 >> 3 = 230 ACKs per segment and has seen ack_cnt = 41.
        c.on_ack(&mut w, &ack(t0, 1, None));
        assert_eq!(
            (w.cwnd, c.cnt, c.target, c.ack_cnt, c.tcp_cwnd),
            (80, 4000, 80, 41, 79)
        );
        // 20 ms later (< HZ/32 = 31 jiffies, cwnd unchanged): cnt is kept, only counted.
        c.on_ack(&mut w, &ack(t0 + 20 * MS, 1, None));
        assert_eq!((c.cnt, c.ack_cnt, c.cwnd_cnt), (4000, 42, 2));
        // 1 s after the epoch began: target 92 (see above), cnt = 80/12·16/32 = 3; the
        // counter (2) is below 3, so this ACK only counts; the next one adds a segment.
        c.on_ack(&mut w, &ack(t0 + 1000 * MS, 1, None));
        assert_eq!((w.cwnd, c.cnt, c.cwnd_cnt), (80, 3, 3));
        c.on_ack(&mut w, &ack(t0 + 1000 * MS, 1, None));
        assert_eq!((w.cwnd, c.cwnd_cnt), (81, 0));
    }

    #[test]
    fn fast_convergence_lowers_w_max_when_a_loss_comes_early() {
        for (cfg, fc_wmax, ss) in [
            // 90·(1024+819)/2048 = 165870/2048 = 80.99 → 80; ssthresh 90·819/1024 = 71
            (CubicConfig::linux_2_6_25(), 80, 71),
            // 90·1741/2048 = 156690/2048 = 76.5 → 76; ssthresh 90·717/1024 = 63.02 → 63
            (CubicConfig::modern(), 76, 63),
        ] {
            let mut c = Cubic::new(cfg, growth());
            c.ssthresh(
                0,
                &Window {
                    cwnd: 100,
                    ssthresh: 1,
                },
                100,
            );
            assert_eq!(
                c.ssthresh(
                    0,
                    &Window {
                        cwnd: 90,
                        ssthresh: 1
                    },
                    90
                ),
                ss
            );
            assert_eq!(c.last_max_cwnd, fc_wmax);
            // A loss above the old W_max, or with fast convergence off, keeps cwnd.
            c.ssthresh(
                0,
                &Window {
                    cwnd: 120,
                    ssthresh: 1,
                },
                120,
            );
            assert_eq!(c.last_max_cwnd, 120);
            let mut c = Cubic::new(
                CubicConfig {
                    fast_convergence: false,
                    ..cfg
                },
                growth(),
            );
            c.ssthresh(
                0,
                &Window {
                    cwnd: 100,
                    ssthresh: 1,
                },
                100,
            );
            c.ssthresh(
                0,
                &Window {
                    cwnd: 90,
                    ssthresh: 1,
                },
                90,
            );
            assert_eq!(c.last_max_cwnd, 90);
        }
        // The floor: 2·717/1024 = 1 → 2.
        let mut c = Cubic::new(CubicConfig::modern(), growth());
        assert_eq!(
            c.ssthresh(
                0,
                &Window {
                    cwnd: 2,
                    ssthresh: 1
                },
                2
            ),
            2
        );
    }

    #[test]
    fn reno_estimate_takes_over_on_a_1ms_path() {
        // Modern, loss at 100 → cwnd 70, K = 4316 (4.2 s): for seconds the curve sits
        // near 71, but on a 1 ms path 70 segments are acked every millisecond.
        let mut c = Cubic::new(CubicConfig::modern(), growth());
        c.ssthresh(
            0,
            &Window {
                cwnd: 100,
                ssthresh: 1,
            },
            100,
        );
        let t0 = 10_000 * MS;
        c.update(70, 2, t0); // epoch: ack_cnt = 2, tcp_cwnd = 70, target 71, cnt 70
        assert_eq!((c.cnt, c.ack_cnt, c.tcp_cwnd), (70, 2, 70));
        // 1118 more delayed ACKs of 2 segments within the next 31 ms (cwnd unchanged, so
        // they are only counted): ack_cnt = 2 + 2236 = 2238.
        for i in 0..1118u64 {
            c.update(70, 2, t0 + i * 31 * MS / 1118);
        }
        assert_eq!(c.ack_cnt, 2238);
        // The ACK at 32 ms brings it to 2240 and the curve is evaluated (delay_min is
        // unset): t = (32 << 10)/1000 = 32, offs = 4316 − 32 = 4284,
        //   4284^3 = 78622778304; ·410 = 32235339104640; >> 40 = 29.3 → 29
        //   target = 71; cnt = 70/(71 − 70) = 70.
        // Reno estimate: one segment per 70·15 >> 3 = 131 segments acked:
        //   n = (2240 − 1)/131 = 17 → tcp_cwnd = 87, ack_cnt = 2240 − 17·131 = 13
        //   87 > 70 → cnt = min(70, 70/17 = 4) = 4.
        c.update(70, 2, t0 + 32 * MS);
        assert_eq!((c.target, c.tcp_cwnd, c.ack_cnt, c.cnt), (71, 87, 13, 4));
        // Without friendliness the curve alone says 70.
        let cfg = CubicConfig {
            tcp_friendliness: false,
            ..CubicConfig::modern()
        };
        let mut c = Cubic::new(cfg, growth());
        c.ssthresh(
            0,
            &Window {
                cwnd: 100,
                ssthresh: 1,
            },
            100,
        );
        c.update(70, 2, t0);
        for i in 0..1118u64 {
            c.update(70, 2, t0 + i * 31 * MS / 1118);
        }
        c.update(70, 2, t0 + 32 * MS);
        assert_eq!(c.cnt, 70);
    }

    #[test]
    fn v2_1_grows_50_acks_per_segment_until_the_first_loss() {
        // Fresh v2.1 with ssthresh below cwnd: W_max = 0 ≤ 20 → K = 0, origin 20, t = 0
        // → target = cwnd → cnt = 2000; loss_cwnd == 0 → cnt = 50; ×16/32 = 25.
        let mut c = Cubic::new(CubicConfig::linux_2_6_25(), growth());
        c.update(20, 1, 5000 * MS);
        assert_eq!(c.cnt, 25);
        // Modern instead caps at 20 while W_max is 0: min(2000, 20) = 20.
        let mut m = Cubic::new(CubicConfig::modern(), growth());
        m.update(20, 1, 5000 * MS);
        assert_eq!(m.cnt, 20);
        // After a loss at 40 the rule is off. cwnd 32: a = 8·2681735677 = 21453885416,
        //   fls64 = 35, b = (2940 >> 8) − 1 = 10, a >> 30 = 19, v[19] = 168,
        //   x = 178 << 4 = 2848, a/(2848·2847 = 8108256) = 2645,
        //   K = (5696 + 2645)·341 >> 10 = 2844281 >> 10 = 2777
        //   2777^3 = 21415471433; ·410 >> 40 = 7.99 → 7; target = 40 − 7 = 33
        //   cnt = 32/1 = 32; Reno needs 32·23 >> 3 = 92 ACKs; ×16/32 = 16.
        c.ssthresh(
            6000 * MS,
            &Window {
                cwnd: 40,
                ssthresh: 1,
            },
            40,
        );
        c.update(32, 1, 6100 * MS);
        assert_eq!((c.k, c.target, c.cnt), (2777, 33, 16));
        // A timeout resets loss_cwnd, and the rule is back.
        c.set_state(7000 * MS, CaState::Loss);
        c.update(20, 1, 7100 * MS);
        assert_eq!(c.cnt, 25);
    }

    #[test]
    fn v2_1_caps_growth_at_16_segments_per_100ms() {
        // delay_min = 100 jiffies ×8 = 800 (100 ms RTT), cwnd 200 above W_max 100.
        //   min_cnt = 200·1000·8/(10·16·800) = 1600000/128000 = 12.5 → 12
        // First update at 10 s: K = 0, origin 200, t = ((0 + 100) << 10)/1000 = 102,
        //   delta = 410·102^3 >> 40 = 0 → target 200 → cnt 20000 (above min_cnt).
        // 10 s later: t = (10100 << 10)/1000 = 10342, 10342^3 = 1106148921688,
        //   ·410 >> 40 = 412.5 → 412 → target 612 → cnt = 200/412 = 0 → min_cnt 12
        //   (t ≥ K) → ×16/32 = 6 ACKs (12 segments) per segment: 200/12 ≈ 16 per RTT.
        let mut c = Cubic::new(CubicConfig::linux_2_6_25(), growth());
        c.last_max_cwnd = 100;
        c.loss_cwnd = 100;
        c.delay_min = 800;
        c.update(200, 1, 10_000 * MS);
        assert_eq!((c.target, c.cnt), (200, 10_000));
        c.update(200, 1, 20_000 * MS);
        assert_eq!((c.target, c.cnt), (612, 6));
        // Modern has no cap: cnt 0 → floor 2 (same curve via usecs_to_jiffies(100000)).
        let mut m = Cubic::new(CubicConfig::modern(), growth());
        m.last_max_cwnd = 100;
        m.delay_min = 100_000;
        m.update(200, 1, 10_000 * MS);
        m.update(200, 1, 20_000 * MS);
        assert_eq!((m.target, m.cnt), (612, 2));
    }

    #[test]
    fn v2_1_ack_ratio_and_delay_min() {
        let mut c = Cubic::new(CubicConfig::linux_2_6_25(), growth());
        // Ratio starts at 2 (32/16). Two-segment ACKs keep it: 32 − 2 + 2 = 32.
        c.pkts_acked(&ack(MS, 2, None));
        assert_eq!(c.delayed_ack, 32);
        // Four-segment ACKs: 32 − 2 + 4 = 34, 34 − 2 + 4 = 36.
        c.pkts_acked(&ack(MS, 4, None));
        c.pkts_acked(&ack(MS, 4, None));
        assert_eq!(c.delayed_ack, 36);
        // Not in Open: untouched.
        c.pkts_acked(&Ack {
            state: CaState::Recovery,
            ..ack(MS, 9, None)
        });
        assert_eq!(c.delayed_ack, 36);
        // RTT 40.5 ms ending at 1000.2 ms: jiffies 1000 − 959 = 41 → delay 328.
        c.pkts_acked(&ack(1_000_200_000, 2, Some(40_500_000)));
        assert_eq!(c.delay_min, 41 * 8);
        // A 0.3 ms RTT inside one jiffy (2000.2 to 2000.5 ms) gives no sample at all.
        c.pkts_acked(&ack(2_000_500_000, 2, Some(300_000)));
        assert_eq!(c.delay_min, 328);
        // Within 1 s of an epoch start samples are ignored; from 1 s on they count.
        c.epoch_start = Some(5000);
        c.pkts_acked(&ack(5999 * MS, 2, Some(30 * MS)));
        assert_eq!(c.delay_min, 328);
        c.pkts_acked(&ack(6000 * MS, 2, Some(30 * MS)));
        assert_eq!(c.delay_min, 240);
    }

    #[test]
    fn modern_slow_start_hands_leftover_segments_to_avoidance() {
        // PerSegment slow start from 18 to ssthresh 20 with 5 acked: +2, 3 left over go
        // to tcp_cong_avoid_ai with cnt = 20 (W_max 0 cap): counter 3.
        let g = Growth {
            slow_start: SlowStart::PerSegment,
            ca_per_segment: true,
            ..growth()
        };
        let mut c = Cubic::new(
            CubicConfig {
                hystart: false,
                ..CubicConfig::modern()
            },
            g,
        );
        let mut w = Window {
            cwnd: 18,
            ssthresh: 20,
        };
        c.on_ack(&mut w, &ack(MS, 5, None));
        assert_eq!((w.cwnd, c.cwnd_cnt, c.cnt), (20, 3, 20));
    }

    #[test]
    fn serde_defaults_and_unknown_fields() {
        let c: CubicConfig = serde_json::from_str("{}").unwrap();
        assert_eq!(c, CubicConfig::modern());
        let c: CubicConfig = serde_json::from_str(r#"{"variant": "linux_2_6_25"}"#).unwrap();
        assert_eq!(c, CubicConfig::linux_2_6_25());
        let c: CubicConfig =
            serde_json::from_str(r#"{"variant": "linux_2_6_25", "fast_convergence": false}"#)
                .unwrap();
        assert_eq!(
            c,
            CubicConfig {
                fast_convergence: false,
                ..CubicConfig::linux_2_6_25()
            }
        );
        let back: CubicConfig = serde_json::from_str(&serde_json::to_string(&c).unwrap()).unwrap();
        assert_eq!(back, c);
        assert!(serde_json::from_str::<CubicConfig>(r#"{"betta": 3}"#).is_err());
    }

    fn any_cfg() -> impl Strategy<Value = CubicConfig> {
        (
            any::<bool>(),
            1u32..1100,
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
            0u32..200,
        )
            .prop_map(|(m, beta, fc, tf, hy, bs)| CubicConfig {
                variant: if m {
                    CubicVariant::Modern
                } else {
                    CubicVariant::Linux2625
                },
                beta,
                fast_convergence: fc,
                tcp_friendliness: tf,
                hystart: hy,
                bic_scale: bs,
            })
    }

    proptest! {
        /// Random ACK streams and congestion events, driven as the sender does: the
        /// window stays ≥ 1, ssthresh ≥ 2, nothing overflows or divides by zero.
        #[test]
        fn windows_stay_sane(
            cfg in any_cfg(),
            g in any_growth(),
            ops in prop::collection::vec(op(400), 1..400),
            start_ms in 0u64..100_000_000,
        ) {
            let mut c = Cubic::new(cfg, g);
            drive(&mut c, ops, start_ms, false, |c| {
                prop_assert!(c.delayed_ack >= 1);
                Ok(())
            })?;
        }

        /// The kernel's root is within 1 % (plus one unit) of the exact one.
        #[test]
        fn cube_root_is_close(a in any::<u64>()) {
            for shifted in [false, true] {
                let r = cubic_root(a, shifted) as f64;
                let exact = (a as f64).cbrt();
                prop_assert!((r - exact).abs() <= exact * 0.01 + 1.0, "{a}: {r} vs {exact}");
            }
        }
    }
}
