//! BBR v1 as Linux ships it (`net/ipv4/tcp_bbr.c`; Cardwell et al., "BBR: Congestion-
//! Based Congestion Control", ACM Queue 14(5), 2016).
//!
//! BBR does not read loss as congestion. It models the path by two numbers — the
//! bottleneck bandwidth (the windowed maximum of delivery-rate samples over 10 rounds)
//! and the propagation RTT (the minimum RTT over 10 s) — and paces at a gain times the
//! bandwidth with cwnd at a gain times the bandwidth-delay product. Four modes choose the
//! gains:
//!
//! - STARTUP paces and windows at 2/ln 2 to double the delivery rate every round, until
//!   three rounds in a row fail to raise the bandwidth estimate by 25 % (the pipe is full);
//! - DRAIN paces at ln 2/2 until what is in flight fits one BDP again;
//! - PROBE_BW cycles its pacing gain through 1.25, 0.75 and six rounds of 1, starting at a
//!   random phase, with cwnd at 2·BDP;
//! - PROBE_RTT, when 10 s pass without a new minimum RTT, holds cwnd at 4 packets for at
//!   least 200 ms and one round so the queue drains and the RTT can be re-measured.
//!
//! Losses only trim cwnd: by the number lost, with packet conservation for the first round
//! of recovery, and the cwnd from before recovery comes back when it ends.
//!
//! The code follows current mainline (`torvalds/linux`), which is still v1; where v4.9 —
//! the first release with BBR — differs, mainline's bug fixes are taken: pacing 1 % below
//! the estimate on payload bytes (`bbr_pacing_margin_percent`; 4.9 used the IP length
//! and no margin), DRAIN setting ssthresh, the +2 probe allowance tied to the 1.25 phase
//! (`cycle_idx == 0`), cwnd restored directly on leaving recovery or PROBE_RTT.
//!
//! Simplifications (each one a part Linux has that this model omits):
//! - No long-term bandwidth (policer) model (`bbr_lt_bw_sampling`): `lt_use_bw` is
//!   always off, so RTOs and losses never switch BBR to `lt_bw`.
//! - No TSO: every segment is sent on its own. The burst size BBR plans for
//!   (`bbr_tso_segs_goal`, in the quantization budget) is still Linux's, which comes from
//!   the pacing rate alone, offloads or not (2 segments above 1.2 Mbit/s).
//! - Earliest-departure-time pacing (Linux ≥ 4.20) is collapsed to "now": the simulated
//!   sender never holds segments queued for a future departure, so the in-network
//!   estimate `bbr_packets_in_net_at_edt` is the in-flight count (plus the segment about
//!   to leave while probing with gain > 1).
//! - No idle restart (`CA_EVENT_TX_START`, `idle_restart`): bulk flows do not idle.
//! - No "ACK maybe delayed" test on min-RTT samples (`is_ack_delayed`, Linux ≥ 4.17).
//! - No undo (`bbr_undo_cwnd`): the sender never undoes a recovery.
//! - Before the first RTT sample the min-RTT filter cannot expire; Linux starts it at the
//!   handshake, which the simulator does not model (flows start established). For the
//!   same reason the initial pacing rate uses Linux's 1 ms nominal RTT until the first
//!   sample (`bbr_init_pacing_rate_from_rtt`).

pub mod ack_aggregation;
pub mod minmax;

use collateral_queue::Nanos;
use rand::RngExt;
use rand_pcg::Pcg64Mcg;

use self::ack_aggregation::AckAggregation;
use self::minmax::WindowedFilter;
use super::cc::{Ack, CaState, CongestionControl, Window};
use super::rate::{RateSample, BW_SCALE, BW_UNIT};
use super::TcpConfig;

const MS: Nanos = 1_000_000;
const SEC: Nanos = 1_000_000_000;

/// Gains are fixed-point with 8 fractional bits (`BBR_SCALE`), as in Linux, so that the
/// same rounding happens.
const GAIN_SCALE: u32 = 8;
const UNIT: u32 = 1 << GAIN_SCALE;
/// 2/ln 2 ≈ 2.885: the smallest gain that doubles the sending rate every round, as slow
/// start does (`bbr_high_gain`, 739/256).
const HIGH_GAIN: u32 = UNIT * 2885 / 1000 + 1;
/// Its inverse, to drain in about one round what STARTUP queued (`bbr_drain_gain`,
/// 88/256).
const DRAIN_GAIN: u32 = UNIT * 1000 / 2885;
/// PROBE_BW's cwnd gain: room for delayed and stretched ACKs (`bbr_cwnd_gain`).
const CWND_GAIN: u32 = UNIT * 2;
/// PROBE_BW's pacing gains, one phase per min-RTT: probe, drain what probing queued,
/// then cruise (`bbr_pacing_gain`).
const CYCLE_LEN: usize = 8;
const PACING_GAIN: [u32; CYCLE_LEN] = [
    UNIT * 5 / 4,
    UNIT * 3 / 4,
    UNIT,
    UNIT,
    UNIT,
    UNIT,
    UNIT,
    UNIT,
];
/// The random start phase is drawn from this many phases, which excludes the 0.75 one
/// (`bbr_cycle_rand`).
const CYCLE_RAND: u32 = 7;
/// Bandwidth filter window, in rounds (`bbr_bw_rtts` = CYCLE_LEN + 2): long enough to
/// always hold a sample from a probing phase.
const BW_RTTS: u64 = CYCLE_LEN as u64 + 2;
/// Min-RTT filter window (`bbr_min_rtt_win_sec`).
const MIN_RTT_WIN: Nanos = 10 * SEC;
/// Least time at 4 packets in PROBE_RTT (`bbr_probe_rtt_mode_ms`): about 2 % of 10 s.
const PROBE_RTT_TIME: Nanos = 200 * MS;
/// Smallest cwnd BBR keeps: two delayed-ACK pairs in flight (`bbr_cwnd_min_target`).
const CWND_MIN_TARGET: u32 = 4;
/// STARTUP ends after `FULL_BW_CNT` rounds without `FULL_BW_THRESH` (1.25×) growth.
const FULL_BW_THRESH: u64 = UNIT as u64 * 5 / 4;
const FULL_BW_CNT: u32 = 3;
/// Pace this far below the estimate so queues drain (`bbr_pacing_margin_percent`).
const PACING_MARGIN_PERCENT: u128 = 1;
/// Linux `TCP_INIT_CWND`: the window BBR allows before it has any RTT sample, and the
/// delivered count under which it always grows.
const INIT_CWND: u32 = 10;
/// Below this pacing rate (bit/s) a send burst is one segment, above it two
/// (`bbr_min_tso_rate`, `bbr_min_tso_segs`).
const MIN_TSO_RATE_BPS: u64 = 1_200_000;
/// A burst is the bytes of 2^-10 s at the pacing rate (`sk_pacing_shift`'s default)...
const PACING_SHIFT: u32 = 10;
/// ...up to a legacy GSO packet less Linux's `MAX_TCP_HEADER` (320 bytes on x86-64
/// builds), and never over 127 segments.
const TSO_MAX_BYTES: u64 = 65_536 - 1 - 320;
const TSO_MAX_SEGS: u32 = 0x7f;
/// "No minimum RTT yet" (`min_rtt_us == ~0U`).
const NO_RTT: Nanos = Nanos::MAX;

/// BBR's state machine (`enum bbr_mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

/// In Recovery or Loss (Linux compares `icsk_ca_state >= TCP_CA_Recovery`).
#[inline]
fn recovering(s: CaState) -> bool {
    matches!(s, CaState::Recovery | CaState::Loss)
}

/// One flow's BBR state (Linux `struct bbr`, without the long-term fields).
#[derive(Debug, Clone)]
pub struct Bbr {
    /// Payload bytes per segment: the pacing rate counts these (`mss_cache`).
    mss: u32,
    /// The random start phase of PROBE_BW comes from here, seeded by the scenario.
    rng: Pcg64Mcg,
    mode: Mode,
    /// Windowed maximum of delivery rates, segments/s × `BW_UNIT`, over rounds.
    bw: WindowedFilter,
    /// Packet-timed rounds so far, and the `delivered` count that ends the current one.
    rtt_cnt: u64,
    next_rtt_delivered: u64,
    round_start: bool,
    min_rtt: Nanos,
    min_rtt_stamp: Option<Nanos>,
    /// When PROBE_RTT may end (set once in flight is down to 4), and whether a round has
    /// passed since.
    probe_rtt_done: Option<Nanos>,
    probe_rtt_round_done: bool,
    packet_conservation: bool,
    /// The sender's state on the previous ACK.
    prev_state: CaState,
    /// cwnd to come back to after recovery or PROBE_RTT.
    prior_cwnd: u32,
    /// STARTUP's full-pipe detector.
    full_bw: u64,
    full_bw_cnt: u32,
    full_bw_reached: bool,
    cycle_idx: usize,
    /// `delivered_time` when the current gain phase began.
    cycle_stamp: Nanos,
    pacing_gain: u32,
    cwnd_gain: u32,
    has_seen_rtt: bool,
    /// Pacing rate, bit/s of payload (`sk_pacing_rate` × 8).
    pacing_bps: u64,
    /// PROBE_RTT marked this ACK's flight application-limited.
    app_limited: bool,
    /// The cwnd allowance for ACKs that arrive in bunches.
    aggregation: AckAggregation,
}

impl Bbr {
    /// A flow in STARTUP paced at high gain × initial window per 1 ms (`bbr_init`).
    pub fn new(cfg: &TcpConfig, rng: Pcg64Mcg) -> Self {
        let mut b = Bbr {
            mss: cfg.mss.max(1),
            rng,
            mode: Mode::Startup,
            bw: WindowedFilter::new(0, 0),
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            round_start: false,
            min_rtt: NO_RTT,
            min_rtt_stamp: None,
            probe_rtt_done: None,
            probe_rtt_round_done: false,
            packet_conservation: false,
            prev_state: CaState::Open,
            prior_cwnd: 0,
            full_bw: 0,
            full_bw_cnt: 0,
            full_bw_reached: false,
            cycle_idx: 0,
            cycle_stamp: 0,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            has_seen_rtt: false,
            pacing_bps: 0,
            app_limited: false,
            aggregation: AckAggregation::default(),
        };
        b.init_pacing_rate(cfg.initial_cwnd.max(1), None);
        b
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The bandwidth estimate, segments/s × [`BW_UNIT`].
    pub fn max_bw(&self) -> u64 {
        self.bw.get()
    }

    /// The min-RTT estimate, if any.
    pub fn min_rtt(&self) -> Option<Nanos> {
        (self.min_rtt != NO_RTT).then_some(self.min_rtt)
    }

    /// Current pacing and cwnd gains, in 1/256.
    pub fn gains(&self) -> (u32, u32) {
        (self.pacing_gain, self.cwnd_gain)
    }

    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }

    /// Rate `bw` (segments/s × `BW_UNIT`) times `gain` as bit/s, 1 % low
    /// (`bbr_rate_bytes_per_sec`, in the same order of operations).
    fn to_pacing_bps(&self, bw: u64, gain: u32) -> u64 {
        let mut r = bw as u128 * self.mss as u128 * gain as u128;
        r >>= GAIN_SCALE;
        r = r * (100 - PACING_MARGIN_PERCENT) / 100;
        r >>= BW_SCALE;
        (r * 8).min(u64::MAX as u128) as u64
    }

    /// High gain × cwnd per smoothed RTT, or per 1 ms before any RTT sample
    /// (`bbr_init_pacing_rate_from_rtt`).
    fn init_pacing_rate(&mut self, cwnd: u32, srtt: Option<Nanos>) {
        let rtt = match srtt {
            Some(s) => {
                self.has_seen_rtt = true;
                s.max(1)
            }
            None => MS,
        };
        let bw = (cwnd as u128 * BW_UNIT as u128 * SEC as u128 / rtt as u128) as u64;
        self.pacing_bps = self.to_pacing_bps(bw, HIGH_GAIN);
    }

    /// ⌈bw · min_rtt · gain⌉ segments, or the initial window before any RTT sample
    /// (`bbr_bdp`; the gain's fraction is truncated first, the division rounded up).
    fn bdp(&self, bw: u64, gain: u32) -> u32 {
        if self.min_rtt == NO_RTT {
            return INIT_CWND;
        }
        let w = bw as u128 * self.min_rtt as u128;
        let scaled = (w * gain as u128) >> GAIN_SCALE;
        let unit = BW_UNIT as u128 * SEC as u128;
        scaled.div_ceil(unit).min(u32::MAX as u128) as u32
    }

    /// Segments per send burst (`bbr_tso_segs_goal`). Linux sizes it from the pacing
    /// rate alone, with or without offloads: 2 segments on a 1.5 Mbit/s line, 8 at
    /// 100 Mbit/s.
    fn tso_segs_goal(&self) -> u32 {
        let bytes = ((self.pacing_bps / 8) >> PACING_SHIFT).min(TSO_MAX_BYTES);
        let min_segs = if self.pacing_bps < MIN_TSO_RATE_BPS {
            1
        } else {
            2
        };
        ((bytes / self.mss.max(1) as u64) as u32).clamp(min_segs, TSO_MAX_SEGS)
    }

    /// Room for send bursts at both ends, rounded up to even for delayed ACKs, plus two
    /// while probing so that even a tiny BDP's probe rises above it
    /// (`bbr_quantization_budget`).
    fn quantization_budget(&self, cwnd: u32) -> u32 {
        let mut c = cwnd.saturating_add(3 * self.tso_segs_goal());
        c = c.saturating_add(1) & !1;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            c = c.saturating_add(2);
        }
        c
    }

    /// The in-flight target for `gain` (`bbr_inflight`).
    fn inflight(&self, bw: u64, gain: u32) -> u32 {
        self.quantization_budget(self.bdp(bw, gain))
    }

    /// Packets in the network when the next segment leaves; that is now here, plus the
    /// segment itself while raising in-flight (`bbr_packets_in_net_at_edt`).
    fn in_net_at_edt(&self, in_flight: u32) -> u32 {
        if self.pacing_gain > UNIT {
            in_flight.saturating_add(self.tso_segs_goal())
        } else {
            in_flight
        }
    }

    /// Remembers the last good cwnd: the current one, unless recovery or PROBE_RTT have
    /// already cut it (`bbr_save_cwnd`).
    fn save_cwnd(&mut self, w: &Window) {
        if !recovering(self.prev_state) && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = w.cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(w.cwnd);
        }
    }

    /// Counts rounds and feeds the bandwidth filter (`bbr_update_bw`).
    fn update_bw(&mut self, rs: &RateSample) {
        self.round_start = false;
        let Some(bw) = rs.rate() else {
            return;
        };
        // A round ends when a segment sent after the previous round ended is delivered.
        if rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = rs.conn_delivered;
            self.rtt_cnt += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        // An application-limited sample measures the application, not the path: only
        // let it raise the estimate.
        if !rs.is_app_limited || bw >= self.bw.get() {
            self.bw.running_max(BW_RTTS, self.rtt_cnt, bw);
        }
    }

    /// Whether the current gain phase is over (`bbr_is_next_cycle_phase`).
    fn is_next_cycle_phase(&self, rs: &RateSample) -> bool {
        let full_length = rs.delivered_time.saturating_sub(self.cycle_stamp) > self.min_rtt;
        if self.pacing_gain == UNIT {
            return full_length;
        }
        let inflight = self.in_net_at_edt(rs.prior_in_flight);
        let bw = self.bw.get();
        if self.pacing_gain > UNIT {
            // Probe for at least a min-RTT and until in-flight reaches gain × BDP —
            // unless losses say the buffer cannot hold that much.
            full_length && (rs.losses > 0 || inflight >= self.inflight(bw, self.pacing_gain))
        } else {
            // Drain for a min-RTT, or less if in-flight is already down to one BDP.
            full_length || inflight <= self.inflight(bw, UNIT)
        }
    }

    fn advance_cycle_phase(&mut self, delivered_time: Nanos) {
        self.cycle_idx = (self.cycle_idx + 1) % CYCLE_LEN;
        self.cycle_stamp = delivered_time;
    }

    /// Enters PROBE_BW at a random phase other than the draining one, so that flows
    /// sharing a link do not probe in step (`bbr_reset_probe_bw_mode`).
    fn reset_probe_bw_mode(&mut self, delivered_time: Nanos) {
        self.mode = Mode::ProbeBw;
        let r = self.rng.random_range(0..CYCLE_RAND) as usize;
        self.cycle_idx = CYCLE_LEN - 1 - r;
        self.advance_cycle_phase(delivered_time);
    }

    fn reset_mode(&mut self, delivered_time: Nanos) {
        if self.full_bw_reached {
            self.reset_probe_bw_mode(delivered_time);
        } else {
            self.mode = Mode::Startup;
        }
    }

    /// STARTUP's exit test, once per round on non-application-limited samples
    /// (`bbr_check_full_bw_reached`).
    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.is_app_limited {
            return;
        }
        let max = self.bw.get();
        let thresh = ((self.full_bw as u128 * FULL_BW_THRESH as u128) >> GAIN_SCALE) as u64;
        if max >= thresh {
            self.full_bw = max;
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= FULL_BW_CNT;
    }

    /// STARTUP → DRAIN once the pipe is full; DRAIN → PROBE_BW once in-flight fits one
    /// BDP (`bbr_check_drain`).
    fn check_drain(&mut self, w: &mut Window, rs: &RateSample) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            w.ssthresh = self.inflight(self.bw.get(), UNIT);
        }
        if self.mode == Mode::Drain
            && self.in_net_at_edt(rs.in_flight) <= self.inflight(self.bw.get(), UNIT)
        {
            self.reset_probe_bw_mode(rs.delivered_time);
        }
    }

    /// Leaves PROBE_RTT once its time is up: restart the min-RTT clock and restore the
    /// window (`bbr_check_probe_rtt_done`).
    fn check_probe_rtt_done(&mut self, w: &mut Window, rs: &RateSample) {
        if self.probe_rtt_done.is_none_or(|d| rs.now <= d) {
            return;
        }
        self.min_rtt_stamp = Some(rs.now);
        w.cwnd = w.cwnd.max(self.prior_cwnd);
        self.reset_mode(rs.delivered_time);
    }

    /// The min-RTT filter and PROBE_RTT (`bbr_update_min_rtt`).
    fn update_min_rtt(&mut self, w: &mut Window, rs: &RateSample) {
        let expired = self.min_rtt_stamp.is_some_and(|s| rs.now > s + MIN_RTT_WIN);
        if let Some(rtt) = rs.rtt {
            if rtt <= self.min_rtt || expired {
                self.min_rtt = rtt;
                self.min_rtt_stamp = Some(rs.now);
            }
        }
        if expired && self.mode != Mode::ProbeRtt {
            // Drain the queue to see the path's own RTT again.
            self.mode = Mode::ProbeRtt;
            self.save_cwnd(w);
            self.probe_rtt_done = None;
        }
        if self.mode == Mode::ProbeRtt {
            // Samples taken at 4 packets say nothing about the path's bandwidth.
            self.app_limited = true;
            if self.probe_rtt_done.is_none() && rs.in_flight <= CWND_MIN_TARGET {
                // Down to 4: hold for 200 ms and a full round from now.
                self.probe_rtt_done = Some(rs.now + PROBE_RTT_TIME);
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = rs.conn_delivered;
            } else if self.probe_rtt_done.is_some() {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(w, rs);
                }
            }
        }
    }

    /// The gains of the mode (`bbr_update_gains`).
    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (HIGH_GAIN, HIGH_GAIN),
            Mode::Drain => (DRAIN_GAIN, HIGH_GAIN),
            Mode::ProbeBw => (PACING_GAIN[self.cycle_idx], CWND_GAIN),
            Mode::ProbeRtt => (UNIT, UNIT),
        };
    }

    /// `bbr_update_model`.
    fn update_model(&mut self, w: &mut Window, rs: &RateSample) {
        self.update_bw(rs);
        let bw = self.bw.get();
        self.aggregation.update(rs, bw, self.round_start, w.cwnd);
        self.update_cycle_phase(rs);
        self.check_full_bw_reached(rs);
        self.check_drain(w, rs);
        self.update_min_rtt(w, rs);
        self.update_gains();
    }

    fn update_cycle_phase(&mut self, rs: &RateSample) {
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(rs) {
            self.advance_cycle_phase(rs.delivered_time);
        }
    }

    /// Before the pipe is full the pacing rate only rises, so one low sample cannot
    /// stall STARTUP (`bbr_set_pacing_rate`).
    fn set_pacing_rate(&mut self, w: &Window, rs: &RateSample, bw: u64, gain: u32) {
        let rate = self.to_pacing_bps(bw, gain);
        if !self.has_seen_rtt && rs.srtt.is_some() {
            self.init_pacing_rate(w.cwnd, rs.srtt);
        }
        if self.full_bw_reached || rate > self.pacing_bps {
            self.pacing_bps = rate;
        }
    }

    /// Loss and recovery adjustments to `cwnd`; true while packet conservation decides it
    /// alone (`bbr_set_cwnd_to_recover_or_restore`).
    fn recover_or_restore(&mut self, rs: &RateSample, cwnd: &mut u32) -> bool {
        let (prev, state) = (self.prev_state, rs.state);
        let acked = rs.acked_sacked;
        // An ACK for P packets should release at most 2P: take the losses off first,
        // slow-start back towards the target after.
        if rs.losses > 0 {
            *cwnd = cwnd.saturating_sub(rs.losses).max(1);
        }
        if state == CaState::Recovery && prev != CaState::Recovery {
            // First round of recovery: send one packet per packet delivered, from what
            // is actually in flight, and start the round now.
            self.packet_conservation = true;
            self.next_rtt_delivered = rs.conn_delivered;
            *cwnd = rs.in_flight.saturating_add(acked);
        } else if recovering(prev) && !recovering(state) {
            // Recovery (or an RTO's Loss state) is over: back to the cwnd from before.
            *cwnd = (*cwnd).max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_state = state;
        if self.packet_conservation {
            *cwnd = (*cwnd).max(rs.in_flight.saturating_add(acked));
            return true;
        }
        false
    }

    /// Grows cwnd by what was acked towards the target — gain × BDP, plus the ACK
    /// aggregation allowance, plus the quantization budget — (only after the pipe is
    /// full may it also fall to the target); never below 4, and 4 at most in PROBE_RTT
    /// (`bbr_set_cwnd`).
    fn set_cwnd(&mut self, w: &mut Window, rs: &RateSample, bw: u64, gain: u32) {
        let acked = rs.acked_sacked;
        let mut cwnd = w.cwnd;
        if acked > 0 && !self.recover_or_restore(rs, &mut cwnd) {
            let aggregation = self.aggregation.cwnd(bw, self.full_bw_reached);
            let target = self.quantization_budget(self.bdp(bw, gain).saturating_add(aggregation));
            if self.full_bw_reached {
                cwnd = cwnd.saturating_add(acked).min(target);
            } else if cwnd < target || rs.conn_delivered < INIT_CWND as u64 {
                cwnd = cwnd.saturating_add(acked);
            }
            cwnd = cwnd.max(CWND_MIN_TARGET);
        }
        w.cwnd = cwnd;
        if self.mode == Mode::ProbeRtt {
            w.cwnd = w.cwnd.min(CWND_MIN_TARGET);
        }
    }
}

impl CongestionControl for Bbr {
    /// BBR sets cwnd in [`cong_control`](CongestionControl::cong_control); it has no
    /// `cong_avoid`.
    fn on_ack(&mut self, _w: &mut Window, _ack: &Ack) {}

    /// Entering recovery or an RTO: note cwnd to restore later; ssthresh stays as BBR set
    /// it (`bbr_ssthresh`).
    fn ssthresh(&mut self, _now: Nanos, w: &Window, _flight: u32) -> u32 {
        self.save_cwnd(w);
        w.ssthresh
    }

    /// An RTO forgets the full-pipe reference bandwidth (`bbr_set_state`; its round
    /// restart there serves only the omitted long-term model).
    fn set_state(&mut self, _now: Nanos, state: CaState) {
        if state == CaState::Loss {
            self.prev_state = CaState::Loss;
            self.full_bw = 0;
        }
    }

    fn has_cong_control(&self) -> bool {
        true
    }

    /// `bbr_main`: update the model, then pace and size cwnd from it.
    fn cong_control(&mut self, w: &mut Window, rs: &RateSample) {
        self.app_limited = false;
        self.update_model(w, rs);
        let bw = self.bw.get();
        self.set_pacing_rate(w, rs, bw, self.pacing_gain);
        self.set_cwnd(w, rs, bw, self.cwnd_gain);
    }

    fn pacing_rate(&self) -> Option<u64> {
        Some(self.pacing_bps)
    }

    fn app_limited(&self) -> bool {
        self.app_limited
    }
}

#[cfg(test)]
mod tests;
