//! A TCP receiver: cumulative ACKs, delayed ACKs (RFC 1122 §4.2.3.2, RFC 5681 §4.2),
//! immediate duplicate ACKs for out-of-order data, and timestamp echoes (RFC 7323).

use collateral_queue::{Nanos, Packet, PacketKind};

use super::TcpConfig;

#[derive(Debug, Clone)]
pub struct Receiver {
    pub flow: u32,
    ack_bytes: u32,
    delayed_ack: bool,
    ack_every: u32,
    pub delack_ns: Nanos,
    quickacks: u32,
    /// Next in-order segment expected.
    pub rcv_nxt: u64,
    /// Out-of-order segments above `rcv_nxt`, as a bitmap ring indexed by segment number.
    ooo: Vec<u64>,
    ooo_count: u32,
    /// In-order segments received since the last ACK was sent.
    unacked: u32,
    /// RFC 7323 TS.Recent: the send time echoed in the next ACK.
    ts_recent: Nanos,
    /// When the delayed-ACK timer expires (`None` = not running).
    pub delack_deadline: Option<Nanos>,
    /// In-order segments delivered to the application at or after `count_from`.
    pub delivered: u64,
    pub count_from: Nanos,
}

impl Receiver {
    pub fn new(flow: u32, cfg: &TcpConfig, count_from: Nanos) -> Self {
        // The ring must cover the largest window a sender can have outstanding.
        let words = (cfg.rwnd_segments as usize).div_ceil(64).next_power_of_two().max(4) * 2;
        Receiver {
            flow,
            ack_bytes: cfg.ack_bytes,
            delayed_ack: cfg.delayed_ack && cfg.ack_every > 1,
            ack_every: cfg.ack_every.max(1),
            delack_ns: cfg.delack_ns,
            quickacks: cfg.quickacks,
            rcv_nxt: 0,
            ooo: vec![0; words],
            ooo_count: 0,
            unacked: 0,
            ts_recent: 0,
            delack_deadline: None,
            delivered: 0,
            count_from,
        }
    }

    #[inline]
    fn bit(&self, seq: u64) -> (usize, u64) {
        let bits = self.ooo.len() as u64 * 64;
        let i = seq % bits;
        ((i / 64) as usize, 1u64 << (i % 64))
    }

    #[inline]
    fn ack(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        self.unacked = 0;
        self.delack_deadline = None;
        let mut p = Packet::new(PacketKind::Ack, self.flow, self.ack_bytes, self.rcv_nxt, now);
        p.echo = self.ts_recent;
        out.push(p);
    }

    /// A data segment `seq`, sent at `sent`, arrives at `now`.
    pub fn on_data(&mut self, now: Nanos, seq: u64, sent: Nanos, out: &mut Vec<Packet>) {
        if seq == self.rcv_nxt {
            if self.unacked == 0 {
                // First segment since the last ACK: its timestamp is the one to echo.
                self.ts_recent = sent;
            }
            self.rcv_nxt += 1;
            let mut n = 1;
            let filled_hole = self.ooo_count > 0;
            while self.ooo_count > 0 {
                let (w, m) = self.bit(self.rcv_nxt);
                if self.ooo[w] & m == 0 {
                    break;
                }
                self.ooo[w] &= !m;
                self.ooo_count -= 1;
                self.rcv_nxt += 1;
                n += 1;
            }
            if now >= self.count_from {
                self.delivered += n;
            }
            self.unacked += 1;
            // RFC 5681 §4.2: ACK at once when a segment fills (part of) a gap.
            if filled_hole || !self.delayed_ack || self.quickacks > 0 {
                self.quickacks = self.quickacks.saturating_sub(1);
                self.ack(now, out);
            } else if self.unacked >= self.ack_every {
                self.ack(now, out);
            } else if self.delack_deadline.is_none() {
                self.delack_deadline = Some(now + self.delack_ns);
            }
        } else {
            if seq < self.rcv_nxt {
                // A duplicate lies below the last ACK sent, so its timestamp becomes
                // TS.Recent (RFC 7323 §4.3): the sender then measures the RTT of its
                // retransmission, not the time since the original was acknowledged.
                self.ts_recent = self.ts_recent.max(sent);
            }
            if seq > self.rcv_nxt {
                let (w, m) = self.bit(seq);
                if self.ooo[w] & m == 0 {
                    assert!(
                        seq - self.rcv_nxt < self.ooo.len() as u64 * 64,
                        "segment beyond the receiver window"
                    );
                    self.ooo[w] |= m;
                    self.ooo_count += 1;
                }
            }
            // Out-of-order or duplicate data: an immediate (duplicate) ACK.
            self.ack(now, out);
        }
    }

    /// The delayed-ACK timer expired.
    pub fn on_delack_timer(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        if self.unacked > 0 {
            self.ack(now, out);
        }
        self.delack_deadline = None;
    }
}
