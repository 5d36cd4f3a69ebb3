//! A bulk TCP sender: slow start and congestion avoidance through [`CongestionControl`],
//! fast retransmit and NewReno fast recovery (RFC 6582), and a retransmission timer with
//! RFC 6298's estimator and exponential backoff.

use collateral_queue::{Nanos, Packet, PacketKind};

use super::cc::{Ack, AnyCc, CaState, CongestionControl, Window};
use super::{Congestion, RtoEstimator, SenderStats, TcpConfig};

/// RFC 5681 §3.2: fast retransmit on the third duplicate ACK.
const DUPACK_THRESHOLD: u32 = 3;

#[derive(Debug, Clone)]
pub struct Sender {
    pub flow: u32,
    cfg: TcpConfig,
    pub cc: AnyCc,
    pub w: Window,
    /// Oldest unacknowledged segment.
    pub snd_una: u64,
    /// Next segment to send.
    pub snd_nxt: u64,
    /// One past the highest segment ever sent (segments below it are retransmissions).
    high_sent: u64,
    dupacks: u32,
    /// RFC 6582 `recover`: highest segment outstanding when recovery (or an RTO) began.
    recover: Option<u64>,
    in_recovery: bool,
    /// A partial ACK has restarted the timer in this recovery (RFC 6582 "Impatient").
    partial_seen: bool,
    /// RFC 6298 state.
    srtt: Option<Nanos>,
    rttvar: Nanos,
    pub rto: Nanos,
    /// Consecutive timeouts without an ACK of new data in between.
    backoffs: u32,
    /// When the retransmission timer expires (`None` = stopped).
    pub rto_deadline: Option<Nanos>,
    pub stats: SenderStats,
    /// Congestion events since the owner last drained them.
    pub events: Vec<(Nanos, Congestion)>,
}

impl Sender {
    pub fn new(flow: u32, cfg: &TcpConfig) -> Self {
        Sender {
            flow,
            cc: AnyCc::new(cfg),
            w: Window { cwnd: cfg.initial_cwnd.max(1), ssthresh: u32::MAX },
            snd_una: 0,
            snd_nxt: 0,
            high_sent: 0,
            dupacks: 0,
            recover: None,
            in_recovery: false,
            partial_seen: false,
            srtt: None,
            rttvar: 0,
            rto: cfg.rto_initial_ns,
            backoffs: 0,
            rto_deadline: None,
            stats: SenderStats::default(),
            events: Vec::new(),
            cfg: cfg.clone(),
        }
    }

    /// Segments sent and not yet cumulatively acknowledged (RFC 5681 FlightSize).
    #[inline]
    pub fn flight(&self) -> u32 {
        (self.snd_nxt - self.snd_una) as u32
    }

    pub fn in_recovery(&self) -> bool {
        self.in_recovery
    }

    pub fn srtt(&self) -> Option<Nanos> {
        self.srtt
    }

    /// A finite transfer has been fully acknowledged.
    pub fn done(&self) -> bool {
        self.cfg.size_segments.is_some_and(|n| self.snd_una >= n)
    }

    /// Opens the connection: sends the initial window.
    pub fn start(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        self.send_allowed(now, out);
    }

    #[inline]
    fn segment(&mut self, now: Nanos, seq: u64, out: &mut Vec<Packet>) {
        self.stats.segments_sent += 1;
        if seq < self.high_sent {
            self.stats.retransmits += 1;
        } else {
            self.high_sent = seq + 1;
        }
        out.push(Packet::new(PacketKind::Data, self.flow, self.cfg.data_bytes, seq, now));
    }

    /// Sends new (or, after a timeout, re-sent) segments while the window allows.
    #[inline]
    fn send_allowed(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        let wnd = self.w.cwnd.min(self.cfg.rwnd_segments) as u64;
        let end = (self.snd_una + wnd).min(self.cfg.size_segments.unwrap_or(u64::MAX));
        while self.snd_nxt < end {
            let seq = self.snd_nxt;
            self.snd_nxt += 1;
            self.segment(now, seq, out);
        }
        if self.rto_deadline.is_none() && self.snd_nxt > self.snd_una {
            self.rto_deadline = Some(now + self.rto);
        }
    }

    /// RFC 6298 §2: update SRTT/RTTVAR from a sample and recompute the RTO (this also
    /// ends any backoff: the sample comes from a timestamp echo, valid even for
    /// retransmitted segments, RFC 7323 §4).
    fn rtt_sample(&mut self, r: Nanos) {
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = r / 2;
            }
            Some(s) => {
                // RTTVAR = 3/4 RTTVAR + 1/4 |SRTT − R|, then SRTT = 7/8 SRTT + 1/8 R.
                self.rttvar = (3 * self.rttvar + s.abs_diff(r)) / 4;
                self.srtt = Some((7 * s + r) / 8);
            }
        }
        let srtt = self.srtt.unwrap();
        let rto = match self.cfg.rto_estimator {
            // RTO = SRTT + max(G, 4·RTTVAR), G = 1 ns here (the clock is exact).
            RtoEstimator::Rfc6298 => srtt + (4 * self.rttvar).max(1),
            RtoEstimator::Linux => srtt + (4 * self.rttvar).max(self.cfg.rto_min_ns),
        };
        self.rto = rto.clamp(self.cfg.rto_min_ns, self.cfg.rto_max_ns);
        self.backoffs = 0;
    }

    fn restart_timer(&mut self, now: Nanos) {
        self.rto_deadline = (self.snd_nxt > self.snd_una).then_some(now + self.rto);
    }

    /// Processes an ACK (`ack` = next segment the receiver expects) at `now`, queueing
    /// any segments it releases into `out`.
    pub fn on_ack(&mut self, now: Nanos, ack: u64, echo: Nanos, out: &mut Vec<Packet>) {
        if ack > self.snd_una {
            let prior_in_flight = self.flight();
            let acked = (ack - self.snd_una) as u32;
            self.snd_una = ack;
            // After a timeout rewound snd_nxt, the receiver may already hold more.
            self.snd_nxt = self.snd_nxt.max(ack);
            let rtt = now.checked_sub(echo).filter(|_| echo > 0 || now > 0);
            if let Some(r) = rtt {
                self.rtt_sample(r);
            }
            let state = if self.in_recovery { CaState::Recovery } else { CaState::Open };
            let a = Ack { now, acked, prior_in_flight, rtt, state };
            self.cc.pkts_acked(&a);
            if self.in_recovery {
                if ack > self.recover.unwrap_or(0) {
                    // Full ACK (RFC 6582 §3.2 step 3): deflate to
                    // min(ssthresh, max(FlightSize, SMSS) + SMSS).
                    self.in_recovery = false;
                    self.dupacks = 0;
                    self.w.cwnd = self.w.ssthresh.min(self.flight().max(1) + 1);
                    self.restart_timer(now);
                } else {
                    // Partial ACK (step 4): retransmit the first unacknowledged segment,
                    // deflate by the amount acked and add back one segment.
                    let una = self.snd_una;
                    self.segment(now, una, out);
                    self.w.cwnd = (self.w.cwnd.saturating_sub(acked) + 1).max(1);
                    if !self.partial_seen {
                        self.partial_seen = true;
                        self.restart_timer(now);
                    }
                }
            } else {
                self.dupacks = 0;
                // Grow only when the window was the limit (RFC 7661's cwnd-limited rule,
                // Linux's tcp_is_cwnd_limited).
                if prior_in_flight >= self.w.cwnd.min(self.cfg.rwnd_segments) {
                    self.cc.on_ack(&mut self.w, &a);
                }
                self.restart_timer(now);
            }
        } else if ack == self.snd_una && self.snd_nxt > self.snd_una {
            self.dupacks += 1;
            if self.in_recovery {
                // Window inflation: each duplicate ACK means a segment has left.
                self.w.cwnd += 1;
            } else if self.dupacks == DUPACK_THRESHOLD
                && self.recover.is_none_or(|r| ack > r)
            {
                self.enter_recovery(now, out);
            }
        }
        self.send_allowed(now, out);
    }

    /// Fast retransmit and the start of fast recovery (RFC 6582 §3.2 steps 1–2).
    fn enter_recovery(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        let flight = self.flight();
        self.w.ssthresh = self.cc.ssthresh(now, &self.w, flight);
        self.recover = Some(self.snd_nxt - 1);
        self.in_recovery = true;
        self.partial_seen = false;
        let una = self.snd_una;
        self.segment(now, una, out);
        self.w.cwnd = self.w.ssthresh + DUPACK_THRESHOLD;
        self.stats.fast_retransmits += 1;
        self.events.push((now, Congestion::FastRetransmit));
    }

    /// The retransmission timer expired (RFC 6298 §5.4–5.6, RFC 5681 §3.1).
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
        self.cc.set_state(now, CaState::Loss);
        self.w.cwnd = 1;
        self.in_recovery = false;
        self.dupacks = 0;
        // Duplicate ACKs for data sent before the timeout must not start a fast
        // retransmit (RFC 6582 §4.2).
        self.recover = Some(self.snd_nxt - 1);
        // Go back N: resend from the first unacknowledged segment.
        self.snd_nxt = self.snd_una;
        self.backoffs += 1;
        self.rto = (self.rto * 2).min(self.cfg.rto_max_ns);
        self.rto_deadline = None;
        self.send_allowed(now, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;

    fn sender(initial_cwnd: u32) -> Sender {
        let cfg = TcpConfig {
            initial_cwnd,
            rto_estimator: RtoEstimator::Rfc6298,
            ..TcpConfig::default()
        };
        Sender::new(0, &cfg)
    }

    fn seqs(out: &mut Vec<Packet>) -> Vec<u64> {
        out.drain(..).map(|p| p.seq).collect()
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
        assert_eq!(seqs(&mut out), vec![1], "go back to the first unacked segment");
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
            s.on_ack(1000 * MS + k * MS, k, 1000 * MS + k * MS - 10 * MS, &mut out);
        }
        assert_eq!(s.rto, 200 * MS);
    }

    #[test]
    fn linux_rto_keeps_rto_min_above_srtt() {
        let cfg = TcpConfig { initial_cwnd: 10, ..TcpConfig::default() };
        assert_eq!(cfg.rto_estimator, RtoEstimator::Linux);
        let mut s = Sender::new(0, &cfg);
        let mut out = Vec::new();
        s.start(0, &mut out);
        // First sample 100 ms: SRTT 100, RTTVAR 50: RTO = 100 + max(200, 200) = 300 ms.
        s.on_ack(100 * MS, 1, 0, &mut out);
        assert_eq!(s.rto, 300 * MS);
        // A first sample of 30 ms gives 30 + max(60, 200) = 230 ms (RTT + rto_min).
        let mut s = Sender::new(0, &cfg);
        s.start(0, &mut out);
        s.on_ack(30 * MS, 1, 0, &mut out);
        assert_eq!(s.rto, 230 * MS);
        // Steady 10 ms samples: RTTVAR → 0, RTO → SRTT + 200 ms = 210 ms (to within
        // the estimator's integer decay), never the bare 200 ms minimum.
        for k in 2..400u64 {
            s.on_ack(1000 * MS + k * MS, k, 1000 * MS + k * MS - 10 * MS, &mut out);
        }
        assert!(s.rto >= 210 * MS && s.rto < 211 * MS, "{}", s.rto);
    }
}
