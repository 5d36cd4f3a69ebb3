//! Congestion control: a small trait of hooks that take `now`, and an enum over the
//! implementations for static dispatch (smoltcp's `AnyController`).
//!
//! Windows are counted in segments with a separate growth counter, as Linux does
//! (`snd_cwnd`, `snd_cwnd_cnt`); algorithms keep whatever else they need inside.

use collateral_queue::Nanos;
use rand_pcg::Pcg64Mcg;

use super::bbr::Bbr;
use super::cubic::Cubic;
use super::dctcp::Dctcp;
use super::htcp::Htcp;
pub use super::newreno::NewReno;
use super::rate::RateSample;
use super::TcpConfig;
pub use collateral_model::tcp::{CcKind, SlowStart};

/// The sender's window state that congestion control acts on, in segments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub cwnd: u32,
    pub ssthresh: u32,
}

/// The sender's congestion state, Linux's `tcp_ca_state`. Linux's CWR state (after an
/// ECN echo) is the sender's `cwr_until`, kept apart so every state below can hold it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaState {
    /// No loss suspected.
    Open,
    /// Duplicate ACKs seen, fewer than the fast-retransmit threshold.
    Disorder,
    /// Fast recovery after a fast retransmit.
    Recovery,
    /// After a retransmission timeout, until everything outstanding then is acked.
    Loss,
}

/// What the sender tells congestion control about an ACK that acknowledged new data.
#[derive(Debug, Clone, Copy)]
pub struct Ack {
    pub now: Nanos,
    /// Segments newly acknowledged by this ACK.
    pub acked: u32,
    /// Segments in flight before this ACK arrived.
    pub prior_in_flight: u32,
    /// RTT sample from the timestamp echo, if any.
    pub rtt: Option<Nanos>,
    /// The sender's state when the ACK arrived.
    pub state: CaState,
}

/// An ACK's ECN feedback, for algorithms that estimate the extent of marking (DCTCP).
#[derive(Debug, Clone, Copy)]
pub struct EcnAck {
    /// Segments newly acknowledged by this ACK.
    pub acked: u32,
    /// It carried ECN-Echo.
    pub ece: bool,
    /// Its cumulative ACK and the sender's `snd_nxt` when it arrived.
    pub ack: u64,
    pub snd_nxt: u64,
}

/// Congestion-control hooks, after Linux's `tcp_congestion_ops`. The sender handles
/// loss detection and recovery; these decide how the window grows and where `ssthresh`
/// goes after a congestion event. Every hook receives the time; none reads a clock.
pub trait CongestionControl {
    /// Window growth on an ACK of new data (Linux `cong_avoid`). The sender calls it only
    /// when the window may grow (not in Recovery) and the flow was cwnd-limited.
    fn on_ack(&mut self, w: &mut Window, ack: &Ack);
    /// Every ACK of new data, in any state, with its RTT sample (Linux `pkts_acked`).
    fn pkts_acked(&mut self, _ack: &Ack) {}
    /// The new `ssthresh` at a congestion event (fast retransmit or timeout), given the
    /// segments in flight (RFC 5681's FlightSize).
    fn ssthresh(&mut self, now: Nanos, w: &Window, flight: u32) -> u32;
    /// Every ACK of an ECN-capable flow, before the sender processes it (Linux
    /// `in_ack_event` with `CA_ACK_ECE`).
    fn on_ecn(&mut self, _e: &EcnAck) {}
    /// The new `ssthresh` when an ECN echo starts a window reduction (RFC 3168 §6.1.2:
    /// as for a loss, unless the algorithm answers marks differently, as DCTCP does).
    fn ecn_ssthresh(&mut self, now: Nanos, w: &Window, flight: u32) -> u32 {
        self.ssthresh(now, w, flight)
    }
    /// The sender changed state (Linux `set_state`); called after `ssthresh` on entry to
    /// Recovery or Loss.
    fn set_state(&mut self, _now: Nanos, _state: CaState) {}
    /// The floor for Linux rate-halving in recovery (`tcp_cwnd_min`): `ssthresh` unless
    /// the algorithm has a `min_cwnd` (Reno's is `ssthresh / 2`).
    fn min_cwnd(&self, w: &Window) -> u32 {
        w.ssthresh
    }
    /// Whether the algorithm has Linux's `cong_control` op and so owns cwnd and pacing:
    /// as in `tcp_cong_control`, the sender then skips `on_ack` and its recovery style's
    /// window rules, keeps delivery-rate samples and Linux's non-SACK scoreboard, and
    /// calls [`cong_control`](Self::cong_control) on every ACK. Off by default, so other
    /// algorithms pay nothing for sampling.
    fn has_cong_control(&self) -> bool {
        false
    }
    /// Linux `cong_control`: every ACK, after loss detection and the state machine have
    /// run, with its delivery-rate sample; sets `w` (and the pacing rate) itself.
    fn cong_control(&mut self, _w: &mut Window, _rs: &RateSample) {}
    /// The pacing rate in bit/s of payload (Linux `sk_pacing_rate`, which paces payload);
    /// `None` = no pacing.
    fn pacing_rate(&self) -> Option<u64> {
        None
    }
    /// Whether the sender paces at Linux's window-based rate (`tcp_update_pacing_rate`);
    /// TCP Prague sets `SK_PACING_NEEDED`, and its scalable response depends on it.
    fn paced_by_window(&self) -> bool {
        false
    }
    /// After `cong_control`: treat what is in flight now as application-limited (BBR's
    /// PROBE_RTT sets `tp->app_limited` so its low-rate samples are discounted).
    fn app_limited(&self) -> bool {
        false
    }
}

/// Slow-start growth shared by the algorithms. `after_timeout` selects ABC's L = 1.
#[inline]
pub fn slow_start(w: &mut Window, acked: u32, mode: SlowStart, after_timeout: bool) {
    w.cwnd += match mode {
        SlowStart::PerAck => 1,
        SlowStart::Abc => acked.min(if after_timeout { 1 } else { 2 }),
        SlowStart::PerSegment => acked.min(w.ssthresh.saturating_sub(w.cwnd).max(1)),
    };
}

/// The parts of window growth that differ between stacks rather than algorithms; every
/// algorithm's slow start and Reno-style increase follow them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Growth {
    pub slow_start: SlowStart,
    /// Congestion avoidance counts segments acked (RFC 3465 ABC, modern Linux
    /// `tcp_cong_avoid_ai(tp, cwnd, acked)`) rather than ACKs (Linux 2.6.25, FreeBSD 7).
    pub ca_per_segment: bool,
    /// Slow start while `cwnd <= ssthresh` (Linux) instead of `cwnd < ssthresh` (RFC 5681
    /// allows either at equality).
    pub ss_inclusive: bool,
    /// Halve cwnd at a loss (Linux, FreeBSD) instead of FlightSize (RFC 5681 eq. 4).
    pub halve_cwnd: bool,
}

impl Growth {
    pub fn from_config(cfg: &TcpConfig) -> Self {
        Growth {
            slow_start: cfg.slow_start,
            ca_per_segment: cfg.abc,
            ss_inclusive: cfg.ss_inclusive,
            halve_cwnd: cfg.ssthresh_from_cwnd,
        }
    }

    #[inline]
    pub fn in_slow_start(&self, w: &Window) -> bool {
        if self.ss_inclusive {
            w.cwnd <= w.ssthresh
        } else {
            w.cwnd < w.ssthresh
        }
    }

    /// The additive increase by one segment once `cnt` reaches `per`: `cnt` counts ACKs
    /// or, with `ca_per_segment`, segments (Linux `tcp_cong_avoid_ai`).
    #[inline]
    pub fn additive_increase(&self, w: &mut Window, cnt: &mut u32, per: u32, acked: u32) {
        *cnt += if self.ca_per_segment { acked } else { 1 };
        if *cnt >= per {
            let n = *cnt / per.max(1);
            *cnt -= n * per.max(1);
            w.cwnd += if self.ca_per_segment { n } else { 1 };
        }
    }

    /// The base of a multiplicative decrease: cwnd or FlightSize.
    #[inline]
    pub fn loss_base(&self, w: &Window, flight: u32) -> u32 {
        if self.halve_cwnd {
            w.cwnd
        } else {
            flight
        }
    }
}

/// Static dispatch over the algorithms.
#[derive(Debug, Clone)]
pub enum AnyCc {
    NewReno(NewReno),
    Cubic(Cubic),
    Htcp(Htcp),
    Bbr(Box<Bbr>),
    Dctcp(Dctcp),
}

impl AnyCc {
    /// The flow's algorithm. `rng` is the flow's own random stream, derived from the
    /// scenario seed (BBR draws its PROBE_BW start phase from it; never the OS).
    pub fn new(cfg: &TcpConfig, rng: Pcg64Mcg) -> Self {
        let g = Growth::from_config(cfg);
        match cfg.cc {
            CcKind::Newreno => AnyCc::NewReno(NewReno::new(g)),
            CcKind::Cubic => AnyCc::Cubic(Cubic::new(cfg.cubic, g)),
            CcKind::Htcp => AnyCc::Htcp(Htcp::new(cfg.htcp, g)),
            CcKind::Bbr => AnyCc::Bbr(Box::new(Bbr::new(cfg, rng))),
            CcKind::Dctcp => AnyCc::Dctcp(Dctcp::new(g, false)),
            CcKind::Prague => AnyCc::Dctcp(Dctcp::new(g, true)),
        }
    }
}

/// Every hook reaches every algorithm (DCTCP's ECN hooks included): see
/// `collateral_queue::forward_to_variants`.
#[deny(clippy::missing_trait_methods)]
impl CongestionControl for AnyCc {
    collateral_queue::forward_to_variants! {
        AnyCc { NewReno, Cubic, Htcp, Bbr, Dctcp }
        &mut fn on_ack(w: &mut Window, ack: &Ack);
        &mut fn pkts_acked(ack: &Ack);
        &mut fn ssthresh(now: Nanos, w: &Window, flight: u32) -> u32;
        &mut fn on_ecn(e: &EcnAck);
        &mut fn ecn_ssthresh(now: Nanos, w: &Window, flight: u32) -> u32;
        &mut fn set_state(now: Nanos, state: CaState);
        &mut fn cong_control(w: &mut Window, rs: &RateSample);
        &fn min_cwnd(w: &Window) -> u32;
        &fn has_cong_control() -> bool;
        &fn pacing_rate() -> Option<u64>;
        &fn paced_by_window() -> bool;
        &fn app_limited() -> bool;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(acked: u32) -> Ack {
        Ack {
            now: 0,
            acked,
            prior_in_flight: 100,
            rtt: None,
            state: CaState::Open,
        }
    }

    fn growth(slow_start: SlowStart, abc: bool) -> Growth {
        Growth {
            slow_start,
            ca_per_segment: abc,
            ss_inclusive: false,
            halve_cwnd: false,
        }
    }

    /// The ECN hooks reach every algorithm; those without ECN-specific behaviour keep the
    /// trait's defaults, which are what the enum gave them before it forwarded every
    /// hook: no-op `on_ecn`, a loss's `ssthresh` for ECN, no window-based pacing.
    #[test]
    fn every_algorithm_gets_every_hook_with_the_defaults_where_it_has_none() {
        use rand::SeedableRng;
        for kind in CcKind::ALL {
            let cfg = TcpConfig {
                cc: kind,
                ..TcpConfig::default()
            };
            let w = Window {
                cwnd: 40,
                ssthresh: 1000,
            };
            let mut a = AnyCc::new(&cfg, Pcg64Mcg::seed_from_u64(1));
            let mut b = a.clone();
            a.on_ecn(&EcnAck {
                acked: 1,
                ece: true,
                ack: 10,
                snd_nxt: 50,
            });
            let ecn = a.ecn_ssthresh(0, &w, 40);
            let loss = b.ssthresh(0, &w, 40);
            match kind {
                CcKind::Dctcp | CcKind::Prague => {
                    assert!(ecn >= loss, "{kind:?}: DCTCP reduces by alpha/2 at most")
                }
                _ => assert_eq!(ecn, loss, "{kind:?}"),
            }
            assert_eq!(a.paced_by_window(), kind == CcKind::Prague, "{kind:?}");
        }
    }

    #[test]
    fn slow_start_adds_one_per_ack_without_abc_and_acked_segments_with_abc() {
        let mut w = Window {
            cwnd: 2,
            ssthresh: 100,
        };
        let mut c = NewReno::new(growth(SlowStart::PerAck, false));
        c.on_ack(&mut w, &ack(2)); // delayed ACK covering 2 segments: +1
        assert_eq!(w.cwnd, 3);
        let mut c = NewReno::new(growth(SlowStart::Abc, true));
        c.on_ack(&mut w, &ack(2)); // ABC L=2: +2
        assert_eq!(w.cwnd, 5);
        c.on_ack(&mut w, &ack(5)); // capped at L = 2
        assert_eq!(w.cwnd, 7);
        c.set_state(0, CaState::Loss); // after an RTO, L = 1
        c.on_ack(&mut w, &ack(3));
        assert_eq!(w.cwnd, 8);
        // Modern Linux: every acked segment counts, but slow start stops at ssthresh.
        let mut w = Window {
            cwnd: 10,
            ssthresh: 14,
        };
        let mut c = NewReno::new(growth(SlowStart::PerSegment, true));
        c.on_ack(&mut w, &ack(3));
        assert_eq!(w.cwnd, 13);
        c.on_ack(&mut w, &ack(3));
        assert_eq!(w.cwnd, 14);
    }

    #[test]
    fn linux_slow_start_includes_the_boundary() {
        let mut g = growth(SlowStart::PerAck, false);
        let w = Window {
            cwnd: 10,
            ssthresh: 10,
        };
        assert!(!g.in_slow_start(&w));
        g.ss_inclusive = true;
        assert!(g.in_slow_start(&w));
    }

    #[test]
    fn congestion_avoidance_adds_one_segment_per_window_of_acks() {
        // cwnd = ssthresh = 10: 10 ACKs make +1, the next 11 make another +1.
        let mut w = Window {
            cwnd: 10,
            ssthresh: 10,
        };
        let mut c = NewReno::new(growth(SlowStart::PerAck, false));
        for _ in 0..9 {
            c.on_ack(&mut w, &ack(1));
        }
        assert_eq!(w.cwnd, 10);
        c.on_ack(&mut w, &ack(1));
        assert_eq!(w.cwnd, 11);
        for _ in 0..10 {
            c.on_ack(&mut w, &ack(1));
        }
        assert_eq!(w.cwnd, 11);
        c.on_ack(&mut w, &ack(1));
        assert_eq!(w.cwnd, 12);
        // With ABC and delayed ACKs (2 segments each), 6 ACKs make the 12 segments.
        let mut c = NewReno::new(growth(SlowStart::Abc, true));
        for _ in 0..5 {
            c.on_ack(&mut w, &ack(2));
        }
        assert_eq!(w.cwnd, 12);
        c.on_ack(&mut w, &ack(2));
        assert_eq!(w.cwnd, 13);
    }

    #[test]
    fn ssthresh_is_half_the_flight_or_the_window_at_least_two() {
        let mut c = NewReno::new(growth(SlowStart::PerAck, false));
        let w = Window {
            cwnd: 40,
            ssthresh: 100,
        };
        assert_eq!(c.ssthresh(0, &w, 40), 20);
        assert_eq!(c.ssthresh(0, &w, 31), 15);
        assert_eq!(c.ssthresh(0, &w, 3), 2);
        let mut g = growth(SlowStart::PerAck, false);
        g.halve_cwnd = true;
        let mut c = NewReno::new(g);
        assert_eq!(
            c.ssthresh(0, &w, 31),
            20,
            "Linux halves cwnd, not FlightSize"
        );
        assert_eq!(
            c.min_cwnd(&Window {
                cwnd: 20,
                ssthresh: 20
            }),
            10
        );
    }

    mod fuzz {
        use super::super::*;
        use proptest::prelude::*;

        #[derive(Debug, Clone)]
        enum Op {
            Ack { acked: u32, limited: bool },
            Loss,
            Timeout,
        }

        fn ops() -> impl Strategy<Value = Vec<Op>> {
            let op = prop_oneof![
                8 => (1u32..64, any::<bool>()).prop_map(|(acked, limited)| Op::Ack { acked, limited }),
                1 => Just(Op::Loss),
                1 => Just(Op::Timeout),
            ];
            prop::collection::vec(op, 0..3000)
        }

        fn growth() -> impl Strategy<Value = Growth> {
            (
                prop_oneof![
                    Just(SlowStart::PerAck),
                    Just(SlowStart::Abc),
                    Just(SlowStart::PerSegment)
                ],
                any::<bool>(),
                any::<bool>(),
                any::<bool>(),
            )
                .prop_map(|(slow_start, ca_per_segment, ss_inclusive, halve_cwnd)| {
                    Growth {
                        slow_start,
                        ca_per_segment,
                        ss_inclusive,
                        halve_cwnd,
                    }
                })
        }

        proptest! {
            /// NewReno driven the way the sender drives it: cwnd ≥ 1, ssthresh ≥ 2 after
            /// any loss, no overflow (debug builds panic on it).
            #[test]
            fn newreno_stays_in_bounds(g in growth(), ops in ops()) {
                let mut c = NewReno::new(g);
                let mut w = Window { cwnd: 3, ssthresh: u32::MAX };
                for (i, op) in ops.into_iter().enumerate() {
                    let now = i as u64 * 1_000_000;
                    match op {
                        Op::Ack { acked, limited } => {
                            let a = Ack { now, acked, prior_in_flight: w.cwnd, rtt: Some(50_000_000), state: CaState::Open };
                            c.pkts_acked(&a);
                            if limited {
                                c.on_ack(&mut w, &a);
                            }
                        }
                        Op::Loss => {
                            w.ssthresh = c.ssthresh(now, &w, w.cwnd);
                            w.cwnd = w.ssthresh;
                            c.set_state(now, CaState::Recovery);
                            c.set_state(now, CaState::Open);
                        }
                        Op::Timeout => {
                            w.ssthresh = c.ssthresh(now, &w, w.cwnd);
                            w.cwnd = 1;
                            c.set_state(now, CaState::Loss);
                        }
                    }
                    prop_assert!(w.cwnd >= 1);
                    prop_assert!(w.ssthresh >= 2);
                    prop_assert!(w.cwnd < 1 << 30, "runaway window {}", w.cwnd);
                }
            }
        }
    }
}
