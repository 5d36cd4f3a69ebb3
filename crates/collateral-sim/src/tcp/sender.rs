//! A bulk TCP sender: slow start and congestion avoidance through [`CongestionControl`],
//! fast retransmit and NewReno fast recovery (RFC 6582), and a retransmission timer with
//! RFC 6298's estimator and exponential backoff.

use collateral_queue::{Nanos, Packet, PacketKind};

use super::cc::{Ack, AnyCc, CongestionControl, Window};
use super::{Congestion, SenderStats, TcpConfig};

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
            cc: AnyCc::new(cfg.cc, cfg.abc),
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
        while self.snd_nxt < self.snd_una + wnd {
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
        // RTO = SRTT + max(G, 4·RTTVAR), G = 1 ns here (the clock is exact).
        let rto = self.srtt.unwrap() + (4 * self.rttvar).max(1);
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
                    let a = Ack { now, acked, prior_in_flight, rtt };
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
        self.cc.on_timeout(now);
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
