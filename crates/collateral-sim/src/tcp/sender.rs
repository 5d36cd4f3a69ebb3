//! A bulk TCP sender: slow start and congestion avoidance through [`CongestionControl`],
//! fast retransmit and fast recovery by one of the styles in [`recovery`](super::recovery)
//! (chosen from [`RecoveryStyle`](super::RecoveryStyle) and SACK), and a retransmission
//! timer with the estimator of [`rto`] and backoff.
//!
//! The sender runs the state machine (Open, Disorder, Recovery, Loss), keeps the
//! accounting every style shares and calls the style's hooks where it acts: entering
//! recovery, a duplicate ACK, a partial ACK and the full ACK.
//!
//! For the Linux styles the sender keeps Linux's non-SACK scoreboard: `sacked_out`
//! counts duplicate ACKs (`tcp_add_reno_sack`), `lost_out`/`retrans_out` the head segment
//! marked lost and retransmitted, and packets in flight are
//! `packets_out − sacked_out − lost_out + retrans_out` (`tcp_packets_in_flight`).
//! NewReno uses RFC 6582's FlightSize with an inflated window instead.
//!
//! An algorithm with Linux's `cong_control` (BBR) owns the window: the sender then keeps
//! delivery-rate samples for it ([`RateSampler`]), always uses the Linux scoreboard
//! (BBR's rules are written in terms of `tcp_packets_in_flight`), applies none of the
//! recovery styles' window changes, and paces its departures at the algorithm's rate.
//!
//! With SACK (`TcpConfig::sack`) the sender keeps a real scoreboard instead
//! ([`Scoreboard`]) and runs the SACK half of this module (`sack_path`): the ACK path,
//! loss marking, `NextSeg()` and the timeout differ; the RTO estimator, the
//! congestion-control hooks and the recovery hooks are shared.

mod ecn;
mod pacing;
mod sack_path;

use collateral_queue::{Nanos, Packet, PacketKind};
use rand_pcg::Pcg64Mcg;

use super::cc::{Ack, AnyCc, CaState, CongestionControl, Window};
use super::rate::RateSampler;
use super::recovery::{AckInfo, Recovery, DUPTHRESH};
use super::rto::{self, RttEstimator};
use super::sack_scoreboard::{SackBlock, Scoreboard};
use super::{Congestion, SenderStats, TcpConfig, TcpEcn};
use crate::scores::SelfProbe;

/// RFC 5681 §3.2 (and Linux's `tcp_reordering` default): fast retransmit on the third
/// duplicate ACK.
const DUPACK_THRESHOLD: u32 = DUPTHRESH;

/// The first RTT sample of each interval of `every` ns (0: none kept): a workload's
/// self probes (a round trip on a loaded connection) and the flow's progress.
#[derive(Debug, Clone, Default)]
pub struct RttLog {
    pub every: Nanos,
    next: Nanos,
    pub samples: Vec<SelfProbe>,
}

impl RttLog {
    #[cold]
    fn note(&mut self, now: Nanos, rtt: Nanos, acked_bytes: u64) {
        if now >= self.next {
            self.samples.push(SelfProbe {
                sent_ns: now - rtt,
                rtt_ns: rtt,
                acked_bytes,
            });
            self.next = now + self.every;
        }
    }
}

#[derive(Debug, Clone)]
pub struct Sender {
    pub flow: u32,
    cfg: TcpConfig,
    pub cc: AnyCc,
    pub w: Window,
    pub state: CaState,
    /// Oldest unacknowledged segment.
    pub snd_una: u64,
    /// Next segment to send.
    pub snd_nxt: u64,
    /// One past the highest segment ever sent (segments below it are retransmissions).
    high_sent: u64,
    dupacks: u32,
    /// RFC 6582 `recover` (Linux `high_seq − 1`): the highest segment outstanding when
    /// recovery or a timeout began; duplicate ACKs below it start no new recovery.
    recover: Option<u64>,
    /// A partial ACK has restarted the timer in this recovery (RFC 6582 "Impatient").
    partial_seen: bool,
    /// Linux non-SACK scoreboard (rate-halving and PRR).
    sacked_out: u32,
    head_lost: bool,
    head_retx: bool,
    /// The recovery style and its state.
    recovery: Recovery,
    /// New segments sent by limited transmit in this dupACK series.
    limited_sent: u32,
    /// RFC 6298 state.
    rtt: RttEstimator,
    pub rto: Nanos,
    /// Consecutive timeouts without an ACK of new data in between.
    backoffs: u32,
    /// When the retransmission timer expires (`None` = stopped).
    pub rto_deadline: Option<Nanos>,
    /// Delivery-rate state, only for algorithms with `cong_control` (Linux `tcp_rate.c`);
    /// boxed so that other flows' senders stay small.
    rate: Option<Box<RateSampler>>,
    /// Pacing rate in bit/s (`None` = unpaced) and the earliest time the next segment
    /// may leave (Linux's `tcp_wstamp_ns`; see [`Sender::pace_after_send`]).
    pacing_bps: Option<u64>,
    pace_next: Nanos,
    /// When the sender wants to be woken to send a paced segment (`None` = not needed).
    pub pace_deadline: Option<Nanos>,
    /// The flow paces or samples: the hot paths are compiled twice (`const X: bool`),
    /// so that flows doing neither pay nothing for either.
    extras: bool,
    /// Pacing at Linux's window-based rate: asked for by the algorithm (TCP Prague) or
    /// by the flow (`pacing`, a sender with `fq`).
    window_paced: bool,
    /// Linux's non-SACK scoreboard is in use (Linux recovery styles, or an algorithm
    /// that owns the window).
    linux_acct: bool,
    /// The SACK scoreboard (`None` without SACK; boxed so SACK-less senders stay small).
    sb: Option<Box<Scoreboard>>,
    /// With SACK: the last attempt to send stopped because the window was full (Linux's
    /// `is_cwnd_limited`). FreeBSD's window is not Linux's in-flight count, so this is
    /// how a SACK sender knows it was cwnd-limited.
    window_full: bool,
    pub stats: SenderStats,
    /// Congestion events since the owner last drained them.
    pub events: Vec<(Nanos, Congestion)>,
    /// One RTT sample per interval, when a workload asks (its self probes).
    pub rtt_log: RttLog,
    /// IP length of the last segment of a finite transfer (a web reply rarely fills
    /// its last segment); `data_bytes` for bulk flows.
    last_bytes: u32,
    /// ECN: after a reduction for ECN-Echo, no other reduction (and no growth) until an
    /// ACK reaches this segment number: one past the segment that carried CWR. ECN-Echo
    /// on ACKs below it is the echo of marks the reduction already answered (the
    /// receiver sets it until CWR arrives, RFC 3168 §6.1.3); 0 = none yet.
    cwr_high: u64,
    /// Set CWR on the next new segment (RFC 3168 §6.1.2).
    send_cwr: bool,
}

impl Sender {
    /// A sender for `cfg`; `rng` is the flow's random stream (from the scenario seed).
    pub fn new(flow: u32, cfg: &TcpConfig, rng: Pcg64Mcg) -> Self {
        let cc = AnyCc::new(cfg, rng);
        // Room for a few initial windows; the ring doubles as the window grows.
        let rate = cc
            .has_cong_control()
            .then(|| Box::new(RateSampler::new(4 * cfg.initial_cwnd as usize)));
        let pacing_bps = cc.pacing_rate();
        let window_paced = cc.paced_by_window() || (cfg.pacing && !cc.has_cong_control());
        let extras = rate.is_some() || pacing_bps.is_some() || window_paced;
        let recovery = Recovery::new(cfg.recovery, cfg.sack);
        let linux_acct = recovery.linux_scoreboard() || rate.is_some();
        Sender {
            flow,
            cc,
            w: Window {
                cwnd: cfg.initial_cwnd.max(1),
                ssthresh: u32::MAX,
            },
            state: CaState::Open,
            snd_una: 0,
            snd_nxt: 0,
            high_sent: 0,
            dupacks: 0,
            recover: None,
            partial_seen: false,
            sacked_out: 0,
            head_lost: false,
            head_retx: false,
            recovery,
            limited_sent: 0,
            rtt: RttEstimator::default(),
            rto: cfg.rto_initial_ns,
            backoffs: 0,
            rto_deadline: None,
            rate,
            pacing_bps,
            pace_next: 0,
            pace_deadline: None,
            extras,
            window_paced,
            linux_acct,
            sb: cfg
                .sack
                .then(|| Box::new(Scoreboard::new(4 * cfg.initial_cwnd as usize))),
            window_full: false,
            stats: SenderStats::default(),
            events: Vec::new(),
            rtt_log: RttLog::default(),
            last_bytes: cfg.data_bytes,
            cwr_high: 0,
            send_cwr: false,
            cfg: cfg.clone(),
        }
    }

    /// Makes this a finite transfer of `bytes` application bytes: `ceil(bytes/mss)`
    /// segments (at least one), the last one only as long as its payload needs.
    pub fn set_transfer_bytes(&mut self, bytes: u64) {
        let mss = self.cfg.mss as u64;
        let segments = bytes.div_ceil(mss).max(1);
        let tail = bytes - (segments - 1) * mss;
        self.cfg.size_segments = Some(segments);
        self.last_bytes = self.cfg.data_bytes - self.cfg.mss + tail.max(1) as u32;
    }

    /// The application stops writing: what has been sent is still delivered (and
    /// retransmitted if need be), nothing new is sent. A bulk flow's stop time.
    pub fn stop_new_data(&mut self) {
        let sent = self.high_sent.max(self.snd_nxt);
        if self.cfg.size_segments.is_none_or(|n| n > sent) {
            self.cfg.size_segments = Some(sent);
        }
    }

    /// Segments of a finite transfer (`None` for bulk).
    pub fn size_segments(&self) -> Option<u64> {
        self.cfg.size_segments
    }

    /// Segments sent and not yet cumulatively acknowledged (RFC 5681 FlightSize, Linux
    /// `packets_out`).
    #[inline]
    pub fn flight(&self) -> u32 {
        (self.snd_nxt - self.snd_una) as u32
    }

    /// Packets believed to be in the network (Linux `tcp_packets_in_flight`); equal to
    /// FlightSize for NewReno, which accounts for duplicate ACKs by inflating cwnd. With
    /// SACK, from the scoreboard (RFC 6675 `SetPipe()`).
    #[inline]
    pub fn in_flight(&self) -> u32 {
        if let Some(sb) = &self.sb {
            return sb.in_flight(self.flight());
        }
        (self.flight() + self.head_retx as u32)
            .saturating_sub(self.sacked_out + self.head_lost as u32)
    }

    #[inline]
    fn linux_accounting(&self) -> bool {
        self.linux_acct
    }

    /// The algorithm sets cwnd itself (Linux `cong_control`); the sender keeps a rate
    /// sampler exactly then.
    #[inline]
    fn owns_window(&self) -> bool {
        self.rate.is_some()
    }

    /// The current pacing rate in bit/s, if the flow is paced.
    pub fn pacing_rate(&self) -> Option<u64> {
        self.pacing_bps
    }

    /// Segments delivered so far (Linux `tp->delivered`), if the sender keeps rate samples.
    pub fn delivered(&self) -> Option<u64> {
        self.rate.as_ref().map(|r| r.delivered)
    }

    pub fn in_recovery(&self) -> bool {
        self.state == CaState::Recovery
    }

    pub fn srtt(&self) -> Option<Nanos> {
        self.rtt.srtt
    }

    /// A finite transfer has been fully acknowledged.
    pub fn done(&self) -> bool {
        self.cfg.size_segments.is_some_and(|n| self.snd_una >= n)
    }

    /// Opens the connection: sends the initial window.
    pub fn start(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        self.send_allowed(now, out);
    }

    /// Sends segment `seq` (outside the window loops: NewReno's retransmissions).
    #[inline]
    fn segment(&mut self, now: Nanos, seq: u64, out: &mut Vec<Packet>) {
        if self.extras {
            self.segment_as::<true>(now, seq, out);
        } else {
            self.segment_as::<false>(now, seq, out);
        }
    }

    #[inline]
    fn segment_as<const X: bool>(&mut self, now: Nanos, seq: u64, out: &mut Vec<Packet>) {
        let len = if Some(seq + 1) == self.cfg.size_segments {
            self.last_bytes
        } else {
            self.cfg.data_bytes
        };
        if X {
            if self.rate.is_some() {
                self.rate_on_send(now, seq);
            }
            if let Some(bps) = self.pacing_bps {
                self.pace_after_send(now, len - (self.cfg.data_bytes - self.cfg.mss), bps);
            }
        }
        self.stats.segments_sent += 1;
        let retransmit = seq < self.high_sent;
        if retransmit {
            self.stats.retransmits += 1;
        } else {
            self.high_sent = seq + 1;
        }
        if self.state == CaState::Recovery {
            self.recovery.sent();
        }
        // Pushed as built and stamped in place: a copy of a packet read right after its
        // fields were stored one by one stalls the CPU (a failed store-to-load forward).
        out.push(Packet::new(PacketKind::Data, self.flow, len, seq, now));
        if self.cfg.ecn != TcpEcn::Off {
            let p = out.last_mut().expect("just pushed");
            self.ecn_stamp(p, retransmit);
        }
    }

    #[inline]
    fn send_allowed(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        if self.sb.is_some() {
            return self.sack_send(now, out);
        }
        if self.extras {
            self.send_allowed_as::<true>(now, out);
        } else {
            self.send_allowed_as::<false>(now, out);
        }
    }

    /// Sends what the window (and pacing) allows: the lost head first (Linux styles),
    /// then new data (or, after a timeout rewound `snd_nxt`, data again).
    #[inline]
    fn send_allowed_as<const X: bool>(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        let limit = self.cfg.size_segments.unwrap_or(u64::MAX);
        let rwnd_end = self.snd_una + self.cfg.rwnd_segments as u64;
        self.before_sending::<X>();
        if self.linux_accounting() {
            if self.head_lost
                && !self.head_retx
                && self.in_flight() < self.w.cwnd
                && !self.pace_blocked::<X>(now)
            {
                self.head_retx = true;
                let una = self.snd_una;
                self.segment_as::<X>(now, una, out);
            }
            while self.in_flight() < self.w.cwnd
                && self.snd_nxt < rwnd_end.min(limit)
                && !self.pace_blocked::<X>(now)
            {
                let seq = self.snd_nxt;
                self.snd_nxt += 1;
                self.segment_as::<X>(now, seq, out);
            }
        } else {
            let end = (self.snd_una + self.una_window()).min(rwnd_end).min(limit);
            while self.snd_nxt < end && !self.pace_blocked::<X>(now) {
                let seq = self.snd_nxt;
                self.snd_nxt += 1;
                if self.dupacks > 0 && self.state != CaState::Recovery {
                    self.limited_sent += 1;
                }
                self.segment_as::<X>(now, seq, out);
            }
        }
        self.after_sending::<X>(now, limit);
    }

    /// Before a send loop: no pacing wake-up pending, the window-based pacing rate
    /// brought up to date.
    #[inline]
    fn before_sending<const X: bool>(&mut self) {
        if X {
            self.pace_deadline = None;
            if self.window_paced {
                self.pacing_bps = self.window_pacing_rate();
            }
        }
    }

    /// After a send loop: an application-limited mark if the data ran out, and the
    /// retransmission timer armed if data is outstanding.
    #[inline]
    fn after_sending<const X: bool>(&mut self, now: Nanos, limit: u64) {
        if X && self.rate.is_some() && self.snd_nxt >= limit {
            self.check_app_limited();
        }
        if self.rto_deadline.is_none() && self.snd_nxt > self.snd_una {
            self.rto_deadline = Some(now + self.rto);
        }
    }

    /// The send window counted from `snd_una` (RFC 5681; FreeBSD): cwnd, plus, with RFC
    /// 3042 limited transmit, one segment for each of the first two duplicate ACKs.
    #[inline]
    fn una_window(&self) -> u64 {
        let mut wnd = self.w.cwnd as u64;
        if self.cfg.limited_transmit && matches!(self.state, CaState::Open | CaState::Disorder) {
            wnd += self.dupacks.min(2) as u64;
        }
        wnd
    }

    /// What the recovery hooks see of the sender now; the caller fills in the ACK's part.
    #[inline]
    fn ack_info(&self) -> AckInfo {
        AckInfo {
            flight: self.flight(),
            in_flight: self.in_flight(),
            limited_sent: self.limited_sent,
            snd_nxt: self.snd_nxt,
            snd_una: self.snd_una,
            ..AckInfo::default()
        }
    }

    /// An RTT sample: update the estimator and recompute the RTO (this also ends any
    /// backoff: the sample comes from a timestamp echo, valid even for retransmitted
    /// segments, RFC 7323 §4).
    fn rtt_sample(&mut self, now: Nanos, r: Nanos) {
        if self.rtt_log.every != 0 {
            let acked = self.snd_una * u64::from(self.cfg.mss);
            self.rtt_log.note(now, r, acked);
        }
        self.rtt.sample(r);
        let c = &self.cfg;
        self.rto = self.rtt.rto(c.rto_estimator, c.rto_min_ns, c.rto_max_ns);
        self.backoffs = 0;
    }

    /// Out of data with window to spare and no lost segment waiting: the coming samples
    /// measure the application, not the path (Linux `tcp_rate_check_app_limited`).
    #[cold]
    fn check_app_limited(&mut self) {
        let in_flight = self.in_flight();
        let lost_waiting = match self.sb.as_deref_mut() {
            Some(sb) => sb.next_lost(self.snd_una).is_some(),
            None => self.head_lost && !self.head_retx,
        };
        if in_flight < self.w.cwnd && !lost_waiting {
            if let Some(r) = &mut self.rate {
                r.mark_app_limited(in_flight);
            }
        }
    }

    /// Snapshots the delivery state into segment `seq`'s record. Out of line so that
    /// senders without a sampler keep a small, inlined `segment`.
    #[inline(never)]
    fn rate_on_send(&mut self, now: Nanos, seq: u64) {
        if let Some(r) = &mut self.rate {
            r.on_send(now, seq, self.snd_una, self.high_sent);
        }
    }

    /// The ACK being processed cumulatively acknowledges `snd_una .. ack`.
    #[inline(never)]
    fn rate_on_cum_ack(&mut self, ack: u64) {
        if let Some(r) = &mut self.rate {
            for seq in self.snd_una..ack {
                r.on_acked(seq);
            }
            r.cum_delivered(ack - self.snd_una, self.high_sent - ack);
        }
    }

    /// Marks the first unacknowledged segment lost (Linux `tcp_mark_head_lost`).
    #[inline]
    fn mark_head_lost(&mut self) {
        if !self.head_lost {
            self.head_lost = true;
            if let Some(r) = &mut self.rate {
                r.lost(1);
            }
        }
    }

    fn restart_timer(&mut self, now: Nanos) {
        self.rto_deadline = (self.snd_nxt > self.snd_una).then_some(now + self.rto);
    }

    /// Processes an ACK (`ack` = next segment the receiver expects) at `now`, queueing
    /// any segments it releases into `out`.
    pub fn on_ack(&mut self, now: Nanos, ack: u64, echo: Nanos, out: &mut Vec<Packet>) {
        if self.sb.is_some() {
            return self.on_ack_sack(now, ack, echo, &[], out);
        }
        if self.extras {
            self.on_ack_as::<true>(now, ack, echo, out);
        } else {
            self.on_ack_as::<false>(now, ack, echo, out);
        }
    }

    #[inline]
    fn on_ack_as<const X: bool>(
        &mut self,
        now: Nanos,
        ack: u64,
        echo: Nanos,
        out: &mut Vec<Packet>,
    ) {
        let prior_unsacked = self.flight() - self.sacked_out;
        // Before anything changes: packets in flight when the ACK arrived (for the rate
        // sample; the window growth below takes the same count where it needs it).
        let prior_in_flight_all = if X { self.in_flight() } else { 0 };
        // Linux ignores ACKs older than snd_una; every other one reaches cong_control.
        let fresh = ack >= self.snd_una;
        let mut echo_rtt = None;
        if X {
            if let Some(r) = &mut self.rate {
                r.start_ack();
            }
        }
        if ack > self.snd_una {
            let prior_in_flight = self.in_flight();
            let acked = (ack - self.snd_una) as u32;
            if X && self.rate.is_some() {
                self.rate_on_cum_ack(ack);
            }
            self.snd_una = ack;
            // After a timeout rewound snd_nxt, the receiver may already hold more.
            self.snd_nxt = self.snd_nxt.max(ack);
            // The head segment (lost, maybe retransmitted) has been acked.
            self.head_lost = false;
            self.head_retx = false;
            // Linux `tcp_remove_reno_sacks`: the dupACKs stood for segments now acked;
            // then `tcp_limit_reno_sacked`: at least one hole stays among what is left
            // (without it a later partial ACK could find more "sacked" than outstanding).
            self.sacked_out -= self.sacked_out.min(acked - 1);
            self.sacked_out = self.sacked_out.min(self.flight().saturating_sub(1));
            self.limited_sent = 0;
            let rtt = Some(now.saturating_sub(echo));
            if let Some(r) = rtt {
                self.rtt_sample(now, r);
            }
            echo_rtt = rtt;
            let a = Ack {
                now,
                acked,
                prior_in_flight,
                rtt,
                state: self.state,
            };
            self.cc.pkts_acked(&a);
            match self.state {
                CaState::Recovery if ack > self.recover.unwrap_or(0) => {
                    self.exit_recovery(now);
                    self.restart_timer(now);
                }
                CaState::Recovery => {
                    let delivered = prior_unsacked - (self.flight() - self.sacked_out);
                    self.partial_ack(now, acked, delivered, out);
                }
                _ => {
                    if self.state == CaState::Loss && ack > self.recover.unwrap_or(0) {
                        self.set_state(now, CaState::Open);
                    }
                    if self.state == CaState::Disorder {
                        self.set_state(now, CaState::Open);
                    }
                    self.dupacks = 0;
                    self.sacked_out = 0;
                    // Grow only when the window was the limit (RFC 7661's cwnd-limited
                    // rule, Linux's tcp_is_cwnd_limited).
                    if prior_in_flight >= self.w.cwnd.min(self.cfg.rwnd_segments) && !self.in_cwr()
                    {
                        self.cc.on_ack(&mut self.w, &a);
                    }
                    self.restart_timer(now);
                }
            }
        } else if ack == self.snd_una && self.snd_nxt > self.snd_una {
            self.dupacks += 1;
            // After an RTO, Linux counts a duplicate ACK as a delivery only once new data
            // (beyond what was outstanding at the timeout) is out; before that it may
            // answer a needless retransmission (`tcp_process_loss`). Applied where the
            // algorithm owns the window, leaving the older stacks' accounting as it was.
            let counts = !(X
                && self.owns_window()
                && self.state == CaState::Loss
                && self.recover.is_some_and(|r| self.snd_nxt <= r + 1));
            if self.linux_accounting() && counts {
                // `tcp_add_reno_sack`, limited so a hole always remains; a segment that
                // got through counts as delivered.
                let holes = (self.head_lost as u32).max(1);
                let before = self.sacked_out;
                self.sacked_out = (self.sacked_out + 1).min(self.flight().saturating_sub(holes));
                if X && self.sacked_out > before {
                    if let Some(r) = &mut self.rate {
                        r.dup_delivered(self.high_sent - self.snd_una);
                    }
                }
            }
            match self.state {
                // The algorithm sets cwnd in cong_control below.
                CaState::Recovery if X && self.owns_window() => {}
                CaState::Recovery => {
                    let a = AckInfo {
                        delivered: prior_unsacked - (self.flight() - self.sacked_out),
                        is_dupack: true,
                        ..self.ack_info()
                    };
                    self.recovery.dup_ack(&mut self.w, &self.cc, None, &a);
                }
                CaState::Open | CaState::Disorder => {
                    if self.dupacks >= DUPACK_THRESHOLD && self.recover.is_none_or(|r| ack > r) {
                        let delivered = prior_unsacked - (self.flight() - self.sacked_out);
                        self.enter_recovery(now, delivered, out);
                    } else if self.state == CaState::Open {
                        self.set_state(now, CaState::Disorder);
                    }
                }
                CaState::Loss => {}
            }
        }
        if X && fresh && self.rate.is_some() {
            self.cong_control(now, echo_rtt, prior_in_flight_all);
        }
        self.send_allowed_as::<X>(now, out);
    }

    /// Closes the ACK's rate sample and lets the algorithm set cwnd and pacing from it
    /// (Linux `tcp_rate_gen` then `tcp_cong_control`, after the loss state machine).
    #[cold]
    fn cong_control(&mut self, now: Nanos, echo_rtt: Option<Nanos>, prior_in_flight: u32) {
        let in_flight = self.in_flight();
        let Some(r) = &mut self.rate else { return };
        let rs = r.finish_ack(
            now,
            echo_rtt,
            prior_in_flight,
            in_flight,
            self.state,
            self.rtt.srtt,
        );
        self.cc.cong_control(&mut self.w, &rs);
        if self.cc.app_limited() {
            r.mark_app_limited(in_flight);
        }
        self.pacing_bps = self.cc.pacing_rate();
    }

    fn set_state(&mut self, now: Nanos, state: CaState) {
        if self.state != state {
            self.state = state;
            self.cc.set_state(now, state);
        }
    }

    /// Fast retransmit and the start of fast recovery (RFC 6582 §3.2 steps 1–2; Linux
    /// `tcp_fastretrans_alert` entering TCP_CA_Recovery).
    fn enter_recovery(&mut self, now: Nanos, delivered: u32, out: &mut Vec<Packet>) {
        let flight = self.start_recovery(now);
        if self.owns_window() {
            // Linux marks the head lost and lets cong_control size the window; the
            // retransmission goes out when the window and pacing allow.
            self.mark_head_lost();
            return;
        }
        self.repair_head(now, out);
        let a = AckInfo {
            flight,
            delivered,
            is_dupack: true,
            ..self.ack_info()
        };
        self.recovery.enter(&mut self.w, &self.cc, &a);
    }

    /// What every style does at a fast retransmit: ssthresh from the algorithm, `recover`
    /// set, the Recovery state, the event counted. Returns FlightSize at that moment.
    fn start_recovery(&mut self, now: Nanos) -> u32 {
        let flight = self.flight();
        // Linux `tcp_enter_recovery`: a loss inside an ECN reduction's window does not
        // reduce again.
        if !self.in_cwr() {
            self.w.ssthresh = self.cc.ssthresh(now, &self.w, flight);
        }
        self.recover = Some(self.snd_nxt - 1);
        self.set_state(now, CaState::Recovery);
        self.partial_seen = false;
        self.stats.fast_retransmits += 1;
        self.events.push((now, Congestion::FastRetransmit));
        flight
    }

    /// The head segment is lost: Linux's styles mark it so (it goes when the window
    /// allows); NewReno retransmits it at once (RFC 6582 §3.2 steps 2 and 4).
    #[inline]
    fn repair_head(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        if self.linux_accounting() {
            self.head_lost = true;
        } else {
            let una = self.snd_una;
            self.segment(now, una, out);
        }
    }

    /// A partial ACK in recovery (RFC 6582 §3.2 step 4; Linux marks the new head lost).
    fn partial_ack(&mut self, now: Nanos, acked: u32, delivered: u32, out: &mut Vec<Packet>) {
        if self.owns_window() {
            self.mark_head_lost();
        } else {
            // Linux `tcp_newreno_mark_lost`: the new head is newly lost.
            let was_lost = self.head_lost;
            self.repair_head(now, out);
            let a = AckInfo {
                acked,
                delivered,
                advanced: true,
                newly_lost: (self.head_lost && !was_lost) as u32,
                ..self.ack_info()
            };
            self.recovery.partial_ack(&mut self.w, &self.cc, None, &a);
        }
        if self.cfg.slow_but_steady || !self.partial_seen {
            self.partial_seen = true;
            self.restart_timer(now);
        }
    }

    /// The full ACK: recovery ends with the style's window (RFC 6582 step 3; Linux
    /// `tcp_complete_cwr`; PRR ends at ssthresh).
    fn exit_recovery(&mut self, now: Nanos) {
        if !self.owns_window() {
            self.w.cwnd = self.recovery.full_ack(&self.w, self.flight());
        }
        self.dupacks = 0;
        self.sacked_out = 0;
        self.head_lost = false;
        self.head_retx = false;
        self.state = CaState::Open;
        self.cc.set_state(now, CaState::Open);
    }

    /// The retransmission timer expired (RFC 6298 §5.4–5.6, RFC 5681 §3.1; Linux
    /// `tcp_enter_loss`).
    pub fn on_timeout(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        if self.snd_nxt == self.snd_una {
            self.rto_deadline = None;
            return;
        }
        self.stats.timeouts += 1;
        self.events.push((now, Congestion::Timeout));
        // ssthresh is not lowered again for a segment that was already retransmitted
        // by a timeout (RFC 5681 §3.1, eq. 4 note).
        if self.backoffs == 0 {
            let flight = self.flight();
            self.w.ssthresh = self.cc.ssthresh(now, &self.w, flight);
        }
        self.state = CaState::Open; // so that set_state reports the change
        self.set_state(now, CaState::Loss);
        self.w.cwnd = 1;
        self.dupacks = 0;
        self.limited_sent = 0;
        // Duplicate ACKs for data sent before the timeout must not start a fast
        // retransmit (RFC 6582 §4.2).
        self.recover = Some(self.snd_nxt - 1);
        if let Some(sb) = self.sb.as_deref_mut() {
            // Everything not SACKed is lost and goes again, lowest first, as the window
            // allows; SACKed segments are skipped (Linux `tcp_enter_loss`, FreeBSD
            // `tcp_sack_adjust`). snd_nxt stays.
            let n = sb.timeout(self.snd_una, self.snd_nxt);
            if let Some(r) = &mut self.rate {
                r.lost(n as u64);
            }
        } else {
            self.sacked_out = 0;
            self.head_lost = false;
            self.head_retx = false;
            // Go back N: resend from the first unacknowledged segment.
            self.snd_nxt = self.snd_una;
        }
        self.backoffs += 1;
        self.rto = rto::backoff(self.rto, self.cfg.rto_max_ns);
        self.rto_deadline = None;
        self.send_allowed(now, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::{CcKind, RecoveryStyle, RtoEstimator};

    pub(super) const MS: Nanos = 1_000_000;

    pub(super) fn rng() -> Pcg64Mcg {
        use rand::SeedableRng;
        Pcg64Mcg::seed_from_u64(1)
    }

    pub(super) fn sender(initial_cwnd: u32) -> Sender {
        let cfg = TcpConfig {
            initial_cwnd,
            rto_estimator: RtoEstimator::Rfc6298,
            ..TcpConfig::default()
        };
        Sender::new(0, &cfg, rng())
    }

    pub(super) fn seqs(out: &mut Vec<Packet>) -> Vec<u64> {
        out.drain(..).map(|p| p.seq).collect()
    }

    pub(super) fn bbr_sender(initial_cwnd: u32) -> Sender {
        let cfg = TcpConfig {
            cc: CcKind::Bbr,
            initial_cwnd,
            ..TcpConfig::default()
        };
        Sender::new(0, &cfg, rng())
    }

    /// Runs the sender's pacing wake-ups that fall due up to `t`.
    pub(super) fn pace_until(s: &mut Sender, t: Nanos, out: &mut Vec<Packet>) {
        while let Some(d) = s.pace_deadline.filter(|&d| d <= t) {
            s.on_pace(d, out);
        }
    }

    #[test]
    fn without_sack_each_duplicate_ack_is_one_delivery_and_the_hole_one_more() {
        let mut s = bbr_sender(10);
        let mut out = Vec::new();
        s.start(0, &mut out);
        pace_until(&mut s, MS, &mut out);
        assert_eq!(s.delivered(), Some(0));
        // Segment 0 is lost; 1..9 arrive, each drawing a duplicate ACK: 9 delivered.
        for k in 0..9 {
            s.on_ack(100 * MS + k * MS, 0, 0, &mut out);
            pace_until(&mut s, 100 * MS + k * MS + MS / 2, &mut out);
        }
        assert_eq!(s.delivered(), Some(9));
        assert!(s.in_recovery());
        // The retransmission fills the hole: ACK 10 covers 10 segments, 9 of them
        // already counted, so 1 more (Linux `tcp_remove_reno_sacks`).
        s.on_ack(200 * MS, 10, 100 * MS, &mut out);
        assert_eq!(s.delivered(), Some(10));
        assert_eq!(sender(10).delivered(), None, "NewReno keeps no samples");
    }

    #[test]
    fn after_a_timeout_duplicate_acks_count_only_once_new_data_is_out() {
        let mut s = bbr_sender(10);
        let mut out = Vec::new();
        s.start(0, &mut out);
        pace_until(&mut s, MS, &mut out);
        out.clear();
        // No ACK at all: the RTO (1 s) fires; go back to segment 0 with cwnd 1.
        s.on_timeout(1000 * MS, &mut out);
        assert_eq!((seqs(&mut out), s.w.cwnd), (vec![0], 1));
        // A duplicate ACK now may answer a needless retransmission (nothing beyond the
        // 10 segments outstanding at the timeout has been sent): not a delivery
        // (Linux `tcp_process_loss`).
        s.on_ack(1001 * MS, 0, 0, &mut out);
        assert_eq!(s.delivered(), Some(0));
    }

    #[test]
    fn fast_retransmit_halves_the_window_and_newreno_recovers() {
        let mut s = sender(10);
        let mut out = Vec::new();
        s.start(0, &mut out);
        assert_eq!(seqs(&mut out), (0..10).collect::<Vec<_>>());
        // Segment 0 is lost; 1..9 arrive and each draws a duplicate ACK for 0.
        for _ in 0..2 {
            s.on_ack(100 * MS, 0, 0, &mut out);
        }
        assert!(out.is_empty() && !s.in_recovery());
        s.on_ack(100 * MS, 0, 0, &mut out);
        // Third dupACK: ssthresh = max(FlightSize/2, 2) = 10/2 = 5, retransmit 0,
        // cwnd = ssthresh + 3 = 8 (RFC 6582 step 2).
        assert!(s.in_recovery());
        assert_eq!(seqs(&mut out), vec![0]);
        assert_eq!((s.w.ssthresh, s.w.cwnd), (5, 8));
        assert_eq!(s.stats.fast_retransmits, 1);
        // Six more dupACKs inflate cwnd to 14: with 10 in flight, 10..13 go out.
        for _ in 0..6 {
            s.on_ack(101 * MS, 0, 0, &mut out);
        }
        assert_eq!(s.w.cwnd, 14);
        assert_eq!(seqs(&mut out), vec![10, 11, 12, 13]);
        // The retransmission is acked together with 1..9: ACK 10 covers recover = 9,
        // a full ACK: cwnd = min(ssthresh, max(FlightSize, 1) + 1) = min(5, 4 + 1) = 5,
        // half the window before the loss.
        s.on_ack(200 * MS, 10, 100 * MS, &mut out);
        assert!(!s.in_recovery());
        assert_eq!(s.w.cwnd, 5);
        // FlightSize is 4 < cwnd 5: one new segment goes out.
        assert_eq!(seqs(&mut out), vec![14]);
    }

    #[test]
    fn partial_ack_retransmits_the_next_hole_and_deflates() {
        let mut s = sender(10);
        let mut out = Vec::new();
        s.start(0, &mut out);
        out.clear();
        // Segments 0 and 4 lost. 1,2,3 → three dupACKs → fast retransmit of 0.
        for _ in 0..3 {
            s.on_ack(MS, 0, 0, &mut out);
        }
        assert_eq!(seqs(&mut out), vec![0]);
        // 5..9 → five more dupACKs: cwnd 8 + 5 = 13, new segments 10, 11, 12.
        for _ in 0..5 {
            s.on_ack(MS, 0, 0, &mut out);
        }
        assert_eq!(seqs(&mut out), vec![10, 11, 12]);
        // The retransmitted 0 arrives: ACK 4 is partial (recover = 9). Retransmit 4;
        // cwnd = 13 − 4 acked + 1 = 10 (RFC 6582 step 4). FlightSize = 13 − 4 = 9 < 10:
        // one new segment (13) may also go.
        s.on_ack(2 * MS, 4, MS, &mut out);
        assert!(s.in_recovery());
        assert_eq!(s.w.cwnd, 10);
        assert_eq!(seqs(&mut out), vec![4, 13]);
        // Retransmitted 4 arrives: the receiver holds 5..12, ACK 13 > recover: full ACK.
        // cwnd = min(ssthresh 5, FlightSize (14 − 13 = 1) + 1) = 2.
        s.on_ack(3 * MS, 13, 2 * MS, &mut out);
        assert!(!s.in_recovery());
        assert_eq!(s.w.cwnd, 2);
        assert_eq!(s.stats.retransmits, 2);
    }

    #[test]
    fn timeout_collapses_to_one_segment_and_backs_off_exponentially() {
        let mut s = sender(10);
        let mut out = Vec::new();
        s.start(0, &mut out);
        out.clear();
        // One RTT sample of 100 ms: SRTT = 100, RTTVAR = 50, RTO = 100 + 4·50 = 300 ms.
        s.on_ack(100 * MS, 1, 0, &mut out);
        assert_eq!(s.rto, 300 * MS);
        out.clear();
        let flight = s.flight();
        s.on_timeout(400 * MS, &mut out);
        assert_eq!(s.w.cwnd, 1);
        assert_eq!(s.w.ssthresh, flight / 2);
        assert_eq!(
            seqs(&mut out),
            vec![1],
            "go back to the first unacked segment"
        );
        assert_eq!(s.rto, 600 * MS);
        assert_eq!(s.rto_deadline, Some(1000 * MS));
        // A second timeout doubles again and leaves ssthresh alone.
        s.on_timeout(1000 * MS, &mut out);
        assert_eq!(s.rto, 1200 * MS);
        assert_eq!(s.w.ssthresh, flight / 2);
        assert_eq!(s.stats.timeouts, 2);
        // Backoff stops at the maximum RTO.
        for _ in 0..20 {
            s.on_timeout(0, &mut out);
        }
        assert_eq!(s.rto, TcpConfig::default().rto_max_ns);
    }

    #[test]
    fn rto_estimator_follows_rfc6298_and_respects_the_minimum() {
        let mut s = sender(10);
        let mut out = Vec::new();
        s.start(0, &mut out);
        // Samples 100 then 60 ms. After the 2nd: RTTVAR = 3/4·50 + 1/4·|100 − 60| = 47.5,
        // SRTT = 7/8·100 + 1/8·60 = 95, RTO = 95 + 4·47.5 = 285 ms.
        s.on_ack(100 * MS, 1, 0, &mut out);
        s.on_ack(160 * MS, 2, 100 * MS, &mut out);
        assert_eq!(s.srtt(), Some(95 * MS));
        assert_eq!(s.rto, 285 * MS);
        // Many 10 ms samples drive SRTT + 4·RTTVAR below the 200 ms minimum.
        for k in 3..200u64 {
            s.on_ack(
                1000 * MS + k * MS,
                k,
                1000 * MS + k * MS - 10 * MS,
                &mut out,
            );
        }
        assert_eq!(s.rto, 200 * MS);
    }

    #[test]
    fn linux_rto_keeps_rto_min_above_srtt() {
        let cfg = TcpConfig {
            initial_cwnd: 10,
            ..TcpConfig::default()
        };
        assert_eq!(cfg.rto_estimator, RtoEstimator::Linux);
        let mut s = Sender::new(0, &cfg, rng());
        let mut out = Vec::new();
        s.start(0, &mut out);
        // First sample 100 ms: SRTT 100, RTTVAR 50: RTO = 100 + max(200, 200) = 300 ms.
        s.on_ack(100 * MS, 1, 0, &mut out);
        assert_eq!(s.rto, 300 * MS);
        // A first sample of 30 ms gives 30 + max(60, 200) = 230 ms (RTT + rto_min).
        let mut s = Sender::new(0, &cfg, rng());
        s.start(0, &mut out);
        s.on_ack(30 * MS, 1, 0, &mut out);
        assert_eq!(s.rto, 230 * MS);
        // Steady 10 ms samples: RTTVAR → 0, RTO → SRTT + 200 ms = 210 ms (to within
        // the estimator's integer decay), never the bare 200 ms minimum.
        for k in 2..400u64 {
            s.on_ack(
                1000 * MS + k * MS,
                k,
                1000 * MS + k * MS - 10 * MS,
                &mut out,
            );
        }
        assert!(s.rto >= 210 * MS && s.rto < 211 * MS, "{}", s.rto);
    }

    /// Drives a sender through a loss episode: `acks` are the cumulative ACK numbers in
    /// arrival order. Returns cwnd after each ACK and the segments each ACK released.
    fn episode(cfg: TcpConfig, acks: &[u64]) -> (Vec<u32>, Vec<Vec<u64>>) {
        let mut s = Sender::new(0, &cfg, rng());
        let mut out = Vec::new();
        s.start(0, &mut out);
        assert_eq!(seqs(&mut out), (0..10).collect::<Vec<_>>());
        let mut cwnd = Vec::new();
        let mut sent = Vec::new();
        for (i, &a) in acks.iter().enumerate() {
            s.on_ack((100 + i as u64) * MS, a, 0, &mut out);
            cwnd.push(s.w.cwnd);
            sent.push(seqs(&mut out));
        }
        (cwnd, sent)
    }

    fn linux_cfg(recovery: RecoveryStyle) -> TcpConfig {
        TcpConfig {
            initial_cwnd: 10,
            recovery,
            ssthresh_from_cwnd: true,
            ..TcpConfig::default()
        }
    }

    // Window of 10 (segments 0–9), segment 0 lost. The receiver answers 1–9 with
    // duplicate ACKs for 0, then (Linux styles) the two segments sent on the first two
    // dupACKs, 10 and 11, draw two more; then the retransmission is acked.
    const ONE_LOSS_LINUX: [u64; 12] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 12];

    #[test]
    fn rate_halving_one_loss_worked_episode() {
        // Linux 2.6.25 non-SACK accounting: in_flight = packets_out − sacked_out
        //   − lost_out + retrans_out. ssthresh = 10/2 = 5, Reno's floor min_cwnd = 2.
        // dupACK 1, 2: sacked 1, 2 → in_flight 9 < 10: new segments 10, 11 (P = 12).
        // dupACK 3: Recovery. lost_out = 1, in_flight = 12−3−1 = 8. tcp_cwnd_down:
        //   toggle 0→1, no decrement, cwnd = min(10, 8+1) = 9; retransmit 0 (9 in flight).
        // Then each dupACK takes one off in_flight; every second one also takes one off
        //   cwnd, and every other one lets a new segment out:
        //   4: 8 (cap 9) · 5: 8, send 12 · 6: 7 · 7: 7, send 13 · 8: 6 · 9: 6, send 14 ·
        //   10 (for seg 10): 5 · 11 (for seg 11): 5, send 15.
        // ACK 12 > recover (11): tcp_complete_cwr, cwnd = min(5, ssthresh 5) = 5;
        //   FlightSize 16−12 = 4 < 5: send 16.
        let (cwnd, sent) = episode(linux_cfg(RecoveryStyle::RateHalving), &ONE_LOSS_LINUX);
        assert_eq!(cwnd, vec![10, 10, 9, 8, 8, 7, 7, 6, 6, 5, 5, 5]);
        let want: Vec<Vec<u64>> = vec![
            vec![10],
            vec![11],
            vec![0],
            vec![],
            vec![12],
            vec![],
            vec![13],
            vec![],
            vec![14],
            vec![],
            vec![15],
            vec![16],
        ];
        assert_eq!(sent, want);
    }

    #[test]
    fn rate_halving_two_losses_worked_episode() {
        // Segments 0 and 4 lost. dupACKs for 1, 2, 3, 5, 6, 7, 8, 9, 10, 11 (10 of them)
        // exactly as in the one-loss case up to cwnd 5 (sends 10, 11, 0, 12, 13, 14).
        // Retransmitted 0 arrives: ACK 4, partial. P = 15−4 = 11, sacked_out −= 4−1 → 7,
        //   new head (4) marked lost: in_flight = 11−7−1 = 3; toggle 0→1, cwnd =
        //   min(5, 3+1) = 4; retransmit 4 (in_flight 4).
        // dupACKs for 12, 13, 14: sacked 8, 9, 10 → in_flight 3, 2, 2 (one new
        //   segment, 15, after the second): cwnd 3 (decrement), 3 (send 15), 2 (decrement,
        //   still above the floor 5/2 = 2).
        // ACK 15 > recover: cwnd = min(2, 5) = 2; FlightSize 16−15 = 1: send 16.
        let acks = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 4, 4, 4, 15];
        let (cwnd, sent) = episode(linux_cfg(RecoveryStyle::RateHalving), &acks);
        assert_eq!(cwnd, vec![10, 10, 9, 8, 8, 7, 7, 6, 6, 5, 4, 3, 3, 2, 2]);
        assert_eq!(sent[10], vec![4]);
        assert_eq!(sent[12], vec![15]);
        assert_eq!(sent[14], vec![16]);
    }

    #[test]
    fn prr_one_loss_worked_episode() {
        // RFC 6937 as Linux computes it: RecoverFS = cwnd at entry (10), ssthresh 5.
        // dupACKs 1, 2 as above (send 10, 11). dupACK 3: prr_delivered 1, pipe
        //   12−3−1 = 8 > 5: sndcnt = ⌈1·5/10⌉ − 0 = 1 → cwnd = 8+1 = 9, retransmit 0.
        // 4: pd 2, pipe 8: ⌈10/10⌉ − 1 = 0 → cwnd 8.
        // 5: pd 3, pipe 7: ⌈15/10⌉ − 1 = 1 → cwnd 8, send 12 (prr_out 2).
        // 6: pd 4, pipe 7: 2 − 2 = 0 → 7.   7: pd 5, pipe 6: 3 − 2 = 1 → 7, send 13.
        // 8: pd 6, pipe 6: 3 − 3 = 0 → 6.
        // 9: pd 7, pipe 5 ≤ ssthresh, SSRB: min(5−5, max(7−3, 1)+1) = 0 → 5.
        // 10: pd 8, pipe 4: min(1, 6) = 1 → 5, send 14.   11: pd 9, pipe 4: 1 → 5, send 15.
        // ACK 12: recovery ends at cwnd = ssthresh = 5; send 16.
        let (cwnd, sent) = episode(linux_cfg(RecoveryStyle::Prr), &ONE_LOSS_LINUX);
        assert_eq!(cwnd, vec![10, 10, 9, 8, 8, 7, 7, 6, 5, 5, 5, 5]);
        let want: Vec<Vec<u64>> = vec![
            vec![10],
            vec![11],
            vec![0],
            vec![],
            vec![12],
            vec![],
            vec![13],
            vec![],
            vec![],
            vec![14],
            vec![15],
            vec![16],
        ];
        assert_eq!(sent, want);
    }

    #[test]
    fn prr_two_losses_worked_episode() {
        // Segments 0 and 4 lost; dupACKs for 1–3, 5–11 as in the one-loss case through
        // dupACK 10 (cwnd 5, 14 sent).
        // ACK 4 (partial): P 11, sacked 10 → 7, delivered = (15−10) − (11−7) = 1, pd 9;
        //   head 4 lost: pipe = 11−7−1 = 3 ≤ 5, SSRB: min(5−3, max(9−4, 1)+1) = 2 →
        //   cwnd 5: retransmit 4 and send 15.
        // dupACKs for 12, 13, 14: pd 10, 11, 12; pipe 4 each time: min(1, …) = 1 →
        //   cwnd 5, sending 16, 17, 18.
        // ACK 15 > recover (11): cwnd = ssthresh = 5; FlightSize 19−15 = 4: send 19.
        let acks = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 4, 4, 4, 15];
        let (cwnd, sent) = episode(linux_cfg(RecoveryStyle::Prr), &acks);
        assert_eq!(cwnd, vec![10, 10, 9, 8, 8, 7, 7, 6, 5, 5, 5, 5, 5, 5, 5]);
        assert_eq!(sent[10], vec![4, 15]);
        assert_eq!(&sent[11..], &[vec![16], vec![17], vec![18], vec![19]]);
    }

    #[test]
    fn newreno_inflation_one_and_two_loss_worked_episodes() {
        let cfg = TcpConfig {
            initial_cwnd: 10,
            ..TcpConfig::default()
        };
        // One loss (0): dupACKs 1–9, no limited transmit. 3rd: ssthresh = FlightSize/2
        //   = 5, cwnd 5+3 = 8; then +1 per dupACK: 9, 10, 11 (send 10), 12 (11), 13 (12),
        //   14 (13). Retransmission acked with 1–9: ACK 10 > recover 9: cwnd =
        //   min(5, FlightSize 4 + 1) = 5; send 14.
        let acks = [0, 0, 0, 0, 0, 0, 0, 0, 0, 10];
        let (cwnd, sent) = episode(cfg.clone(), &acks);
        assert_eq!(cwnd, vec![10, 10, 8, 9, 10, 11, 12, 13, 14, 5]);
        assert_eq!(sent[2], vec![0]);
        assert_eq!(sent[5..].concat(), vec![10, 11, 12, 13, 14]);
        // Two losses (0, 4): 8 dupACKs (1–3, 5–9): cwnd 8 … 13, sending 10, 11, 12.
        //   ACK 4 (partial): retransmit 4, cwnd = 13 − 4 + 1 = 10, FlightSize 13−4 = 9:
        //   send 13. dupACKs for 10, 11, 12 inflate to 11, 12, 13 (sending 14, 15, 16).
        //   The retransmitted 4 arrives before 13: ACK 13 > recover 9, full: cwnd =
        //   min(5, FlightSize (17−13 = 4) + 1) = 5; send 17.
        let acks = [0, 0, 0, 0, 0, 0, 0, 0, 4, 4, 4, 4, 13];
        let (cwnd, sent) = episode(cfg, &acks);
        assert_eq!(cwnd, vec![10, 10, 8, 9, 10, 11, 12, 13, 10, 11, 12, 13, 5]);
        assert_eq!(sent[8], vec![4, 13]);
        assert_eq!(sent[9..12].concat(), vec![14, 15, 16]);
        assert_eq!(sent[12], vec![17]);
    }

    #[test]
    fn freebsd_limited_transmit_reduces_the_inflation() {
        // RFC 3042: dupACKs 1 and 2 each send a new segment (10, 11); on the 3rd,
        // cwnd = ssthresh + 3 − 2 = 6 (FreeBSD: ssthresh + mss·(dupacks − snd_limited)).
        let cfg = TcpConfig {
            initial_cwnd: 10,
            limited_transmit: true,
            ..TcpConfig::default()
        };
        let (cwnd, sent) = episode(cfg, &[0, 0, 0]);
        assert_eq!(sent, vec![vec![10], vec![11], vec![0]]);
        // FlightSize at the 3rd dupACK is 12: ssthresh 6, cwnd 6 + 3 − 2 = 7.
        assert_eq!(cwnd, vec![10, 10, 7]);
    }
}
