//! TCP as configuration: what a scenario says about a flow's stack (the congestion
//! control by name, its switches, ECN, loss recovery, timers), as plain data. The
//! behaviour these select (senders, receivers, the algorithms) is the simulator's
//! (`collateral_sim::tcp`); keeping the data beneath it lets the scenario, its limits and
//! the emulator name a flow's settings without depending on the TCP machinery.

pub mod cubic;
pub mod htcp;
pub mod profile;

use serde::{Deserialize, Serialize};

use crate::units::{Direction, Nanos, MS};

pub use profile::Profile;

/// A bulk TCP flow: where it goes, when it starts, and its stack settings. The defaults
/// are an RFC stack with Linux's timers.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TcpConfig {
    pub direction: Direction,
    pub start_ns: Nanos,
    /// A bulk flow starts at `start_ns` plus an offset uniform in `[0, start_spread_ns)`,
    /// drawn from the trial's seed and the flow's index ([`crate::rng::start_offset`]),
    /// so that flows started "together" do not run in lockstep; the same in the
    /// simulator and wherever else the scenario runs. Web connections ignore it.
    pub start_spread_ns: Nanos,
    /// When the application stops writing (`None` = never): data sent by then is still
    /// delivered, nothing new is sent. For phased experiments.
    pub stop_ns: Option<Nanos>,
    /// Added to the flow's forward path at the receiver (as the CBT study's per-receiver
    /// dummynet did), so its RTT grows by this much.
    pub extra_delay_ns: Nanos,
    pub cc: CcKind,
    /// The DSCP the flow's segments and ACKs carry (0..=63, 0 = best effort), as
    /// netperf's `-Y` marks both ends of a Flent RRUL flow: CAKE's diffserv modes put
    /// the flow in a tin by it.
    pub tag: u8,
    /// ECN (RFC 3168) and the codepoint the flow's data carries: `off`, `classic`
    /// (ECT(0), halve once per RTT on ECN-Echo) or `l4s` (ECT(1), RFC 9331, with the
    /// receiver's per-segment CE feedback of RFC 8257 §3.2; what `dctcp` and `prague`
    /// need). Both ends are configured alike, so negotiation always succeeds.
    pub ecn: TcpEcn,
    /// Pace at Linux's window-based rate (`tcp_update_pacing_rate`: 200 % of
    /// cwnd/srtt in slow start, 120 % after), as a Linux sender with the `fq` qdisc
    /// does; off by default (Linux's default qdiscs send a window's ACK-clocked burst
    /// at once). Prague paces whatever this says; BBR sets its own rate.
    pub pacing: bool,
    /// CUBIC's variant and switches (used when `cc` is cubic).
    pub cubic: cubic::CubicConfig,
    /// H-TCP's flavour and switches (used when `cc` is htcp).
    pub htcp: htcp::HtcpConfig,
    /// Payload bytes per segment (1448 = 1500 − 20 IP − 20 TCP − 12 timestamp option).
    pub mss: u32,
    /// IP length of a full data segment.
    pub data_bytes: u32,
    /// IP length of a pure ACK (52 with timestamps, 40 without).
    pub ack_bytes: u32,
    /// Delay ACKs (RFC 1122/5681 §4.2): ACK every `ack_every` segments or on the timer.
    pub delayed_ack: bool,
    pub ack_every: u32,
    /// Delayed-ACK timer (Linux's minimum ato is 40 ms; FreeBSD uses 100 ms). With
    /// `linux_ato` it is the starting (and minimum) value of the adaptive timeout.
    pub delack_ns: Nanos,
    /// Quick-ack budget: segments ACKed at once when the connection starts and (with
    /// `linux_ato`) after out-of-order data (Linux `tcp_incr_quickack`, at most 16).
    pub quickacks: u32,
    /// Linux's receiver: quick-ack mode on out-of-order data and an ACK timeout (`ato`)
    /// that adapts to the inter-arrival time (`tcp_event_data_recv`).
    pub linux_ato: bool,
    /// Linux ≥ 4.18's SACK compression (with `sack`): the first three duplicate ACKs
    /// for a hole go at once, later ones are held back up to 1 ms (5 % of the RTT) or
    /// 44 ACKs, and out-of-order data no longer refills the quick ACKs.
    pub sack_compression: bool,
    /// Congestion avoidance counts acked segments, not ACKs (RFC 3465 ABC; modern Linux).
    pub abc: bool,
    /// Slow-start growth per ACK.
    pub slow_start: SlowStart,
    /// Slow start while cwnd <= ssthresh (Linux) rather than cwnd < ssthresh.
    pub ss_inclusive: bool,
    /// A loss halves cwnd (Linux, FreeBSD) rather than FlightSize (RFC 5681).
    pub ssthresh_from_cwnd: bool,
    pub initial_cwnd: u32,
    /// Segments to transfer; `None` = a bulk flow that always has data.
    pub size_segments: Option<u64>,
    /// How fast recovery sets the window.
    pub recovery: RecoveryStyle,
    /// RFC 6582 "Slow-but-Steady": restart the RTO on every partial ACK (FreeBSD, and
    /// Linux, which re-arms on any ACK of data) instead of only the first ("Impatient").
    pub slow_but_steady: bool,
    /// RFC 3042 limited transmit: a new segment on each of the first two duplicate ACKs
    /// (FreeBSD; Linux's non-SACK accounting has the same effect by itself).
    pub limited_transmit: bool,
    /// Selective acknowledgments (RFC 2018) with SACK-based loss recovery (RFC 6675):
    /// the receiver reports up to three blocks of out-of-order data per ACK, and the sender
    /// keeps a scoreboard, retransmits only what is missing and counts SACKed segments out
    /// of the pipe. Loss detection and the window in recovery follow `recovery`: Linux
    /// 2.6.25's FACK with rate-halving, FreeBSD 7's SACK recovery for `newreno`, RFC 6675
    /// with PRR for `prr`. On in every real stack profile; off in `rfc`.
    pub sack: bool,
    /// Receiver window, in segments.
    pub rwnd_segments: u32,
    /// How the RTO is derived from SRTT and RTTVAR.
    pub rto_estimator: RtoEstimator,
    /// Minimum, initial and maximum RTO.
    pub rto_min_ns: Nanos,
    pub rto_initial_ns: Nanos,
    pub rto_max_ns: Nanos,
}

impl TcpConfig {
    /// When this flow, bulk flow `index` of a trial seeded with `seed`, starts.
    pub fn start_at(&self, seed: u64, index: usize) -> Nanos {
        self.start_ns
            .saturating_add(crate::rng::start_offset(seed, index, self.start_spread_ns))
    }
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            direction: Direction::Down,
            start_ns: 0,
            start_spread_ns: 0,
            stop_ns: None,
            extra_delay_ns: 0,
            cc: CcKind::Newreno,
            tag: 0,
            ecn: TcpEcn::Off,
            pacing: false,
            cubic: cubic::CubicConfig::modern(),
            htcp: htcp::HtcpConfig::linux(),
            mss: 1448,
            data_bytes: 1500,
            ack_bytes: 52,
            delayed_ack: true,
            ack_every: 2,
            delack_ns: 40 * MS,
            quickacks: 0,
            linux_ato: false,
            sack_compression: false,
            abc: false,
            slow_start: SlowStart::PerAck,
            ss_inclusive: false,
            ssthresh_from_cwnd: false,
            initial_cwnd: 3,
            size_segments: None,
            recovery: RecoveryStyle::Newreno,
            slow_but_steady: false,
            limited_transmit: false,
            sack: false,
            rwnd_segments: 10_000,
            rto_estimator: RtoEstimator::Linux,
            rto_min_ns: 200 * MS,
            rto_initial_ns: 1000 * MS,
            rto_max_ns: 60_000 * MS,
        }
    }
}

/// A flow's use of ECN.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, strum::VariantNames,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum TcpEcn {
    #[default]
    Off,
    Classic,
    L4s,
}

/// The fast-recovery algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, strum::VariantNames)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum RecoveryStyle {
    /// RFC 6582 NewReno: cwnd = ssthresh + 3, inflated by one per duplicate ACK,
    /// deflated on partial ACKs (FreeBSD 7's `tcp_newreno_partial_ack`).
    Newreno,
    /// Linux 2.6.25 rate-halving (`tcp_cwnd_down`): cwnd drops by one every second ACK
    /// down to the algorithm's `min_cwnd`, capped at packets in flight + 1 on every ACK.
    RateHalving,
    /// RFC 6937 Proportional Rate Reduction as Linux ≥ 5.19 bounds it: the slow-start
    /// segment only on ACKs that move snd_una and mark no new loss.
    Prr,
}

/// How slow start grows the window per ACK.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SlowStart {
    /// One segment per ACK however much it acks (RFC 5681 without ABC; Linux 2.6.25's
    /// `tcp_slow_start` with `tcp_abc = 0`; FreeBSD 7).
    PerAck,
    /// RFC 3465 ABC: one segment per segment acked, at most L = 2 per ACK (1 in the slow
    /// start right after a timeout).
    Abc,
    /// One segment per segment acked, no per-ACK limit, stopping at ssthresh (modern
    /// Linux `tcp_slow_start(tp, acked)`).
    PerSegment,
}

/// Which algorithm a flow uses.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    strum::VariantNames,
    strum::IntoStaticStr,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum CcKind {
    Newreno,
    /// CUBIC (`tcp_cubic.c`); its variant and switches are in `TcpConfig::cubic`.
    Cubic,
    /// H-TCP (Linux `tcp_htcp.c`, FreeBSD `cc_htcp.c`); settings in `TcpConfig::htcp`.
    Htcp,
    /// BBR v1 as in Linux (`tcp_bbr.c`).
    Bbr,
    /// DCTCP (RFC 8257, Linux `tcp_dctcp.c`): needs `ecn` = `l4s`.
    Dctcp,
    /// TCP Prague's RTT-independent DCTCP (Linux `tcp_prague.c`): needs `ecn` = `l4s`.
    Prague,
}

impl CcKind {
    pub const ALL: [CcKind; 6] = [
        CcKind::Newreno,
        CcKind::Cubic,
        CcKind::Htcp,
        CcKind::Bbr,
        CcKind::Dctcp,
        CcKind::Prague,
    ];

    /// The Linux module that implements the algorithm (`net.ipv4.tcp_congestion_control`,
    /// `TCP_CONGESTION`), for the testbed; `None` where Linux has none. Linux's `reno` is
    /// NewReno (RFC 6582 recovery in `tcp_input.c`); `prague` is the L4S team's
    /// out-of-tree `tcp_prague`.
    pub fn kernel(self) -> Option<&'static str> {
        Some(match self {
            CcKind::Newreno => "reno",
            CcKind::Cubic => "cubic",
            CcKind::Htcp => "htcp",
            CcKind::Bbr => "bbr",
            CcKind::Dctcp => "dctcp",
            CcKind::Prague => "prague",
        })
    }

    /// A scalable congestion control (RFC 9331 §4.3): it needs L4S ECN.
    pub fn scalable(self) -> bool {
        matches!(self, CcKind::Dctcp | CcKind::Prague)
    }

    /// The name JSON, TOML and Python use (serde's and strum's spelling).
    pub fn name(self) -> &'static str {
        self.into()
    }
}

/// The retransmission-timeout formula.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RtoEstimator {
    /// RFC 6298 §2: RTO = max(rto_min, SRTT + max(G, 4·RTTVAR)). With a 200 ms minimum
    /// instead of the RFC's 1 s, a queue of one BDP makes this fire spuriously after
    /// every fast retransmit: the retransmission waits a full queue more than SRTT.
    Rfc6298,
    /// Linux: the variance term never drops below `rto_min` (`tcp_rtt_estimator` keeps
    /// `rttvar >= tcp_rto_min`), so RTO = SRTT + max(4·RTTVAR, rto_min) ≥ SRTT + 200 ms.
    /// Linux's 1/32 gain for samples below SRTT − mdev and its per-RTT decay of
    /// `mdev_max` are not modelled.
    Linux,
}

/// A congestion event, for epoch statistics and traces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Congestion {
    FastRetransmit = 0,
    Timeout = 1,
}
