//! DCTCP (RFC 8257) and TCP Prague's RTT independence: the scalable congestion controls
//! of L4S (RFC 9331), which answer the *extent* of ECN marking rather than its presence.
//!
//! * **α** estimates the fraction of marked data: per window of data (from `snd_nxt`
//!   when the window began until it is acknowledged), `F = marked / acked` segments and
//!   `α ← (1 − g)·α + g·F`, `g = 1/16`, α starting at 1 (RFC 8257 §3.3 steps 1–6;
//!   Linux `dctcp_update_alpha`, `dctcp_alpha_on_init` = 1024/1024).
//! * **Reaction to ECE**, at most once per window (the sender's CWR period):
//!   `cwnd ← cwnd·(1 − α/2)`, at least 2 (RFC 8257 §3.3 step 8; Linux
//!   `dctcp_ssthresh`).
//! * **Loss** is answered as Reno does, halving (Linux `dctcp_react_to_loss`).
//! * Growth is Reno's slow start and additive increase.
//!
//! **Prague** (Linux `tcp_prague.c`, draft-briscoe-iccrg-prague-congestion-control
//! §2.3.5): the same, with additive increase scaled so that a flow whose RTT is below
//! the reference RTT (25 ms) gains rate as fast as one at 25 ms would — an increase of
//! `(srtt/25 ms)²` segments per RTT instead of one (the RATE heuristic); and it paces
//! at Linux's window-based rate (`SK_PACING_NEEDED`: 200 % of cwnd/srtt in slow start,
//! 120 % after), without which its bursts would cross a 1 ms step threshold on any link
//! where a packet takes about a millisecond. Its gradual switch into RTT independence
//! is not modelled.
//!
//! The receiver's feedback is DCTCP's (RFC 8257 §3.2): every ACK echoes the CE state of
//! the segments it covers, and a change of state is acknowledged at once, so the sender
//! learns exactly which segments were marked (see [`Receiver`](super::Receiver)).

use collateral_queue::Nanos;

use super::cc::{slow_start, Ack, CaState, CongestionControl, EcnAck, Growth, Window};

/// RFC 8257 §3.3: the estimation gain, 1/16 (Linux `dctcp_shift_g` = 4).
pub const G: f64 = 1.0 / 16.0;
/// Prague's reference RTT.
pub const PRAGUE_RTT_NS: Nanos = 25_000_000;

#[derive(Debug, Clone)]
pub struct Dctcp {
    g: Growth,
    /// The fraction of marked segments, smoothed.
    pub alpha: f64,
    acked: u32,
    marked: u32,
    /// The window in progress ends when this segment is acknowledged.
    window_end: u64,
    /// Additive-increase counter, in units of 1/1024 segment (Prague scales it).
    cnt: u64,
    after_timeout: bool,
    /// Prague's RTT independence, with the latest smoothed RTT.
    prague: bool,
    srtt: Option<Nanos>,
}

impl Dctcp {
    pub fn new(g: Growth, prague: bool) -> Self {
        Dctcp {
            g,
            alpha: 1.0,
            acked: 0,
            marked: 0,
            window_end: 0,
            cnt: 0,
            after_timeout: false,
            prague,
            srtt: None,
        }
    }

    /// The additive increase per RTT, in 1/1024 segment: one segment, or Prague's
    /// `(srtt / 25 ms)²` below the reference RTT.
    pub fn increase_per_rtt(&self) -> u64 {
        match (self.prague, self.srtt) {
            (true, Some(r)) if r < PRAGUE_RTT_NS => {
                let f = r as f64 / PRAGUE_RTT_NS as f64;
                ((f * f * 1024.0).round() as u64).max(1)
            }
            _ => 1024,
        }
    }
}

impl CongestionControl for Dctcp {
    fn on_ack(&mut self, w: &mut Window, ack: &Ack) {
        if self.g.in_slow_start(w) {
            slow_start(w, ack.acked, self.g.slow_start, self.after_timeout);
            return;
        }
        self.after_timeout = false;
        // cwnd += increase/cwnd per segment acked (per ACK without ABC).
        let n = if self.g.ca_per_segment { ack.acked } else { 1 } as u64;
        self.cnt += n * self.increase_per_rtt();
        let per = w.cwnd.max(1) as u64 * 1024;
        if self.cnt >= per {
            w.cwnd += (self.cnt / per) as u32;
            self.cnt %= per;
        }
    }

    fn pkts_acked(&mut self, ack: &Ack) {
        if let Some(r) = ack.rtt {
            // Linux's srtt moves by 1/8 of each sample.
            self.srtt = Some(match self.srtt {
                None => r,
                Some(s) => (s * 7 + r) / 8,
            });
        }
    }

    /// Loss: Reno's halving.
    fn ssthresh(&mut self, _now: Nanos, w: &Window, flight: u32) -> u32 {
        self.cnt = 0;
        (self.g.loss_base(w, flight) / 2).max(2)
    }

    fn paced_by_window(&self) -> bool {
        self.prague
    }

    fn on_ecn(&mut self, e: &EcnAck) {
        self.acked += e.acked;
        if e.ece {
            self.marked += e.acked;
        }
        if e.ack > self.window_end {
            // The window that began at `window_end` is acknowledged: fold it into α.
            if self.acked > 0 {
                let f = self.marked as f64 / self.acked as f64;
                self.alpha = (1.0 - G) * self.alpha + G * f;
            }
            self.acked = 0;
            self.marked = 0;
            self.window_end = e.snd_nxt;
        }
    }

    /// ECE: `cwnd·(1 − α/2)`, at least 2.
    fn ecn_ssthresh(&mut self, _now: Nanos, w: &Window, _flight: u32) -> u32 {
        self.cnt = 0;
        let cut = (w.cwnd as f64 * self.alpha / 2.0) as u32;
        w.cwnd.saturating_sub(cut).max(2)
    }

    fn set_state(&mut self, _now: Nanos, state: CaState) {
        if state == CaState::Loss {
            self.after_timeout = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::TcpConfig;

    fn dctcp(prague: bool) -> Dctcp {
        let c = TcpConfig {
            abc: true,
            ..TcpConfig::default()
        };
        Dctcp::new(Growth::from_config(&c), prague)
    }

    fn ecn(acked: u32, ece: bool, ack: u64, snd_nxt: u64) -> EcnAck {
        EcnAck {
            acked,
            ece,
            ack,
            snd_nxt,
        }
    }

    #[test]
    fn alpha_follows_the_marked_fraction_per_window() {
        let mut d = dctcp(false);
        // The first ACK closes the (empty) window before any data: α stays 1 and the
        // next window ends at snd_nxt = 20.
        d.on_ecn(&ecn(0, false, 1, 20));
        assert_eq!(d.alpha, 1.0);
        // 20 segments acked, 5 of them with ECE: F = 0.25; α = 15/16 + 0.25/16.
        for i in 0..20u64 {
            d.on_ecn(&ecn(1, i % 4 == 0, 2 + i, 40));
        }
        // The ACK of segment 21 passed window_end = 20 after 20 segments.
        let want = 15.0 / 16.0 + 0.25 / 16.0;
        assert!((d.alpha - want).abs() < 1e-12, "{} vs {want}", d.alpha);
        // A window without marks: α ← 15/16·α.
        for i in 0..20u64 {
            d.on_ecn(&ecn(1, false, 22 + i, 60));
        }
        assert!((d.alpha - want * 15.0 / 16.0).abs() < 1e-12);
    }

    #[test]
    fn ece_cuts_by_half_alpha_and_loss_halves() {
        let mut d = dctcp(false);
        let w = Window {
            cwnd: 100,
            ssthresh: 50,
        };
        d.alpha = 0.2;
        // 100·(1 − 0.1) = 90.
        assert_eq!(d.ecn_ssthresh(0, &w, 100), 90);
        d.alpha = 1.0;
        assert_eq!(d.ecn_ssthresh(0, &w, 100), 50);
        d.alpha = 0.0;
        assert_eq!(d.ecn_ssthresh(0, &w, 100), 100);
        assert_eq!(d.ssthresh(0, &w, 100), 50);
        let small = Window {
            cwnd: 2,
            ssthresh: 2,
        };
        d.alpha = 1.0;
        assert_eq!(d.ecn_ssthresh(0, &small, 2), 2);
    }

    #[test]
    fn prague_grows_slower_below_its_reference_rtt() {
        let mut p = dctcp(true);
        let mut d = dctcp(false);
        let a = |rtt| Ack {
            now: 0,
            acked: 1,
            prior_in_flight: 10,
            rtt: Some(rtt),
            state: CaState::Open,
        };
        // 5 ms RTT: (5/25)² = 0.04 → 41/1024 of a segment per RTT.
        p.pkts_acked(&a(5_000_000));
        assert_eq!(p.increase_per_rtt(), 41);
        assert_eq!(d.increase_per_rtt(), 1024);
        let mut wp = Window {
            cwnd: 10,
            ssthresh: 5,
        };
        let mut wd = wp;
        // One RTT = 10 segments acked: DCTCP gains one segment, Prague none yet; 25
        // RTTs (250 segments) give Prague 250·41/10240 = 1.0009 → one segment.
        for _ in 0..10 {
            d.on_ack(&mut wd, &a(5_000_000));
            p.on_ack(&mut wp, &a(5_000_000));
        }
        assert_eq!((wd.cwnd, wp.cwnd), (11, 10));
        for _ in 0..240 {
            p.on_ack(&mut wp, &a(5_000_000));
        }
        assert_eq!(wp.cwnd, 11);
        // At or above 25 ms Prague is DCTCP.
        let mut q = dctcp(true);
        q.pkts_acked(&a(40_000_000));
        assert_eq!(q.increase_per_rtt(), 1024);
    }
}
