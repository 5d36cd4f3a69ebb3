//! A TCP receiver: cumulative ACKs, delayed ACKs (RFC 1122 §4.2.3.2, RFC 5681 §4.2),
//! immediate duplicate ACKs for out-of-order data (or, as Linux ≥ 4.18 does, the first
//! three at once and the rest compressed), timestamp echoes (RFC 7323) and, when the
//! flow has SACK, selective acknowledgment blocks (RFC 2018 §4).

use collateral_queue::{tcp_flags, Ecn, Nanos, Packet, PacketKind};

use super::sack_scoreboard::{ack_len, AckRing, SackBlock, MAX_SACK_BLOCKS};
use super::{TcpConfig, TcpEcn};

/// First blocks of recent ACKs remembered to repeat in later ones (Linux keeps four
/// blocks, `TCP_NUM_SACKS`).
const ANCHORS: usize = 4;
/// SACK compression (Linux `__tcp_ack_snd_check`): the first duplicate ACKs for a given
/// `rcv_nxt` go at once, as fast retransmit needs (`TCP_FASTRETRANS_THRESH`)...
const DUP_ACKS_AT_ONCE: u32 = 3;
/// ...after that one ACK goes when this many were held back (`tcp_comp_sack_nr`)...
const COMP_SACK_NR: u32 = 44;
/// ...or when the timer ends: 5 % of the RTT, at most 1 ms (`tcp_comp_sack_delay_ns`).
const COMP_SACK_DELAY_MAX: Nanos = 1_000_000;

/// The receiver's SACK state: which islands of out-of-order data it reported first most
/// recently, and the blocks of its ACKs in flight.
#[derive(Debug, Clone, Default)]
struct SackState {
    /// A segment of each recently reported first block, newest first. The island holding
    /// it is found again from the bitmap, so an anchor follows its block as it grows and
    /// merges.
    anchors: [u64; ANCHORS],
    n_anchors: usize,
    ring: AckRing,
}

impl SackState {
    fn retain(&mut self, mut keep: impl FnMut(u64) -> bool) {
        let mut k = 0;
        for i in 0..self.n_anchors {
            let a = self.anchors[i];
            if keep(a) {
                self.anchors[k] = a;
                k += 1;
            }
        }
        self.n_anchors = k;
    }

    fn push_front(&mut self, a: u64) {
        let n = self.n_anchors.min(ANCHORS - 1);
        self.anchors.copy_within(0..n, 1);
        self.anchors[0] = a;
        self.n_anchors = n + 1;
    }
}

#[derive(Debug, Clone)]
pub struct Receiver {
    pub flow: u32,
    ack_bytes: u32,
    delayed_ack: bool,
    ack_every: u32,
    pub delack_ns: Nanos,
    /// Remaining quick ACKs, and the budget a refill gives.
    quick: u32,
    quick_budget: u32,
    linux_ato: bool,
    /// Linux ≥ 4.18's receiver: out-of-order data neither refills the quick ACKs nor
    /// is acknowledged segment by segment once fast retransmit has its three duplicates.
    sack_compression: bool,
    /// The compression timer's length (5 % of the RTT the handshake measured, ≤ 1 ms);
    /// the `rcv_nxt` the duplicate ACKs counted were for, and how many; ACKs held back.
    comp_delay: Nanos,
    dup_rcv_nxt: u64,
    dup_acks: u32,
    compressed: u32,
    /// Linux's adaptive ACK timeout and the last arrival time it adapts to.
    ato: Nanos,
    last_rcv: Option<Nanos>,
    /// Next in-order segment expected.
    pub rcv_nxt: u64,
    /// Out-of-order segments above `rcv_nxt`, as a bitmap ring indexed by segment number.
    ooo: Vec<u64>,
    /// Of those, the ones that arrived at or after `count_from` (see `delivered`).
    ooo_late: Vec<u64>,
    ooo_count: u32,
    /// In-order segments received since the last ACK was sent.
    unacked: u32,
    /// RFC 7323 TS.Recent: the send time echoed in the next ACK.
    ts_recent: Nanos,
    /// When the delayed-ACK timer expires (`None` = not running).
    pub delack_deadline: Option<Nanos>,
    /// Segments that arrived at or after `count_from` and have been delivered to the
    /// application in order. Counting by arrival, not by release, keeps data that waited
    /// out of order across the warm-up boundary out of the goodput, which therefore
    /// cannot exceed what crossed the bottleneck in the measured window.
    pub delivered: u64,
    pub count_from: Nanos,
    /// SACK blocks and the records of ACKs carrying them (`None` without SACK); boxed so
    /// that SACK-less receivers stay small.
    sack: Option<Box<SackState>>,
    ecn: TcpEcn,
    /// The ECN-Echo the next ACK carries: classic, "CE seen, CWR not yet"; L4S, the CE
    /// state of the latest segment.
    ece: bool,
    /// Data segments that arrived with CE.
    pub ce_segments: u64,
}

impl Receiver {
    pub fn new(flow: u32, cfg: &TcpConfig, count_from: Nanos) -> Self {
        // The ring must cover the largest window a sender can have outstanding.
        let words = (cfg.rwnd_segments as usize)
            .div_ceil(64)
            .next_power_of_two()
            .max(4)
            * 2;
        Receiver {
            flow,
            ack_bytes: cfg.ack_bytes,
            delayed_ack: cfg.delayed_ack && cfg.ack_every > 1,
            ack_every: cfg.ack_every.max(1),
            delack_ns: cfg.delack_ns,
            quick: cfg.quickacks,
            quick_budget: cfg.quickacks,
            linux_ato: cfg.linux_ato,
            sack_compression: cfg.sack_compression && cfg.sack,
            comp_delay: COMP_SACK_DELAY_MAX,
            dup_rcv_nxt: 0,
            dup_acks: 0,
            compressed: 0,
            ato: cfg.delack_ns,
            last_rcv: None,
            rcv_nxt: 0,
            ooo: vec![0; words],
            ooo_late: vec![0; words],
            ooo_count: 0,
            unacked: 0,
            ts_recent: 0,
            delack_deadline: None,
            delivered: 0,
            count_from,
            sack: cfg.sack.then(Box::default),
            ecn: cfg.ecn,
            ece: false,
            ce_segments: 0,
        }
    }

    /// The RTT the connection's handshake measured: a pure receiver's smoothed RTT,
    /// which sets the SACK-compression timer (5 % of it, at most 1 ms).
    pub fn set_handshake_rtt(&mut self, rtt: Nanos) {
        self.comp_delay = (rtt / 20).min(COMP_SACK_DELAY_MAX);
    }

    #[inline]
    fn bit(&self, seq: u64) -> (usize, u64) {
        let bits = self.ooo.len() as u64 * 64;
        let i = seq % bits;
        ((i / 64) as usize, 1u64 << (i % 64))
    }

    /// Linux `tcp_event_data_recv`: the ACK timeout follows the inter-arrival time `m`:
    /// halved towards the minimum for back-to-back segments, `ato/2 + m` for gaps
    /// shorter than it; the 2.6.25 ceiling is the RTO, here the 200 ms TCP_DELACK_MAX
    /// (a receiver-only flow has no RTT estimate of its own).
    #[inline]
    fn adapt_ato(&mut self, now: Nanos) {
        let min = self.delack_ns;
        if let Some(last) = self.last_rcv {
            let m = now - last;
            if m <= min / 2 {
                self.ato = self.ato / 2 + min / 2;
            } else if m < self.ato {
                self.ato = (self.ato / 2 + m).min(200_000_000);
            }
        }
        self.last_rcv = Some(now);
    }

    /// Sends an ACK; `trigger` is the out-of-order segment that caused it, if any.
    #[inline]
    fn ack(&mut self, now: Nanos, trigger: Option<u64>, out: &mut Vec<Packet>) {
        // Linux `tcp_dec_quickack_mode`: an ACK spends the quick ACKs of what it covers.
        self.quick = self.quick.saturating_sub(self.unacked.max(1));
        self.unacked = 0;
        self.compressed = 0;
        self.delack_deadline = None;
        // Built where it is kept (see `Sender::segment_as`).
        let mut p = Packet::new(
            PacketKind::Ack,
            self.flow,
            self.ack_bytes,
            self.rcv_nxt,
            now,
        );
        p.echo = self.ts_recent;
        out.push(p);
        let sack = self.sack.is_some() && self.ooo_count > 0;
        if self.ece || sack {
            let p = out.last_mut().expect("just pushed");
            if self.ece {
                p.flags |= tcp_flags::ECE;
            }
            if sack {
                self.attach_sack(p, trigger);
            }
        }
    }

    /// Chooses the ACK's SACK blocks by RFC 2018 §4: first the contiguous block holding
    /// the segment that triggered it (unless that segment advanced the cumulative ACK),
    /// then the blocks reported first most recently that are not already included, up to
    /// [`MAX_SACK_BLOCKS`]. The blocks go to the flow's record ring; the packet carries
    /// the handle and the option's bytes.
    #[cold]
    fn attach_sack(&mut self, p: &mut Packet, trigger: Option<u64>) {
        let rcv_nxt = self.rcv_nxt;
        if let Some(seq) = trigger {
            self.put_first(seq);
        }
        let mut st = self.sack.take().expect("SACK receiver");
        st.retain(|a| a > rcv_nxt);
        let mut blocks = [SackBlock::default(); MAX_SACK_BLOCKS];
        let mut n = 0;
        for &a in &st.anchors[..st.n_anchors] {
            if n == MAX_SACK_BLOCKS {
                break;
            }
            let b = self.island(a);
            if !blocks[..n].contains(&b) {
                blocks[n] = b;
                n += 1;
            }
        }
        if n > 0 {
            p.sack = st.ring.push(&blocks[..n]);
            p.len = ack_len(self.ack_bytes, n) as u16;
        }
        self.sack = Some(st);
    }

    /// The block holding out-of-order segment `seq` becomes the first one reported.
    fn put_first(&mut self, seq: u64) {
        if seq <= self.rcv_nxt {
            return;
        }
        let first = self.island(seq);
        let st = self.sack.as_mut().expect("SACK receiver");
        st.retain(|a| !first.contains(a));
        st.push_front(seq);
    }

    /// Whether an ACK for out-of-order segment `seq` goes now; if not, it is held back
    /// (SACK compression, Linux `__tcp_ack_snd_check`): its block still goes first in
    /// the ACK that follows, and the timer is started unless it runs.
    fn ack_ooo_now(&mut self, now: Nanos, seq: u64) -> bool {
        if !self.sack_compression || self.quick > 0 || self.compressed >= COMP_SACK_NR {
            return true;
        }
        if self.dup_rcv_nxt != self.rcv_nxt {
            (self.dup_rcv_nxt, self.dup_acks) = (self.rcv_nxt, 0);
        }
        if self.dup_acks < DUP_ACKS_AT_ONCE {
            self.dup_acks += 1;
            return true;
        }
        self.compressed += 1;
        self.put_first(seq);
        let due = now + self.comp_delay;
        self.delack_deadline = Some(self.delack_deadline.map_or(due, |d| d.min(due)));
        false
    }

    /// The SACK blocks an ACK carrying handle `id` reported (none for 0), read when it
    /// reaches the sender.
    #[inline]
    pub fn sack_blocks(&mut self, id: u32) -> &[SackBlock] {
        match &mut self.sack {
            Some(st) if id != 0 => st.ring.read(id),
            _ => &[],
        }
    }

    /// The run of held out-of-order segments around `seq` (which must be held).
    fn island(&self, seq: u64) -> SackBlock {
        debug_assert!(seq > self.rcv_nxt && self.holds(seq));
        let bits = self.ooo.len() as u64 * 64;
        // Upwards: the segment at rcv_nxt + bits (same slot as rcv_nxt) is never held.
        let mut end = seq;
        loop {
            let i = end % bits;
            let b = i % 64;
            let run = (!(self.ooo[(i / 64) as usize] >> b)).trailing_zeros() as u64;
            end += run;
            if run < 64 - b {
                break;
            }
        }
        // Downwards: rcv_nxt itself is never held.
        let mut start = seq;
        loop {
            let i = start % bits;
            let b = i % 64;
            let run = (!(self.ooo[(i / 64) as usize] << (63 - b))).leading_zeros() as u64;
            if run <= b {
                start = start + 1 - run;
                break;
            }
            start -= b + 1;
        }
        SackBlock { start, end }
    }

    #[inline]
    fn holds(&self, seq: u64) -> bool {
        let (w, m) = self.bit(seq);
        self.ooo[w] & m != 0
    }

    /// A data segment's ECN codepoint (`tos`) and flags, before [`on_data`](Self::on_data)
    /// takes it.
    ///
    /// * Classic (RFC 3168 §6.1.3): CE sets ECN-Echo on every ACK until a segment with
    ///   CWR arrives; the first CE acknowledges at once (Linux `tcp_ecn_check_ce` enters
    ///   quick-ACK mode).
    /// * L4S (RFC 8257 §3.2): each ACK echoes the CE state of the segments it covers;
    ///   when the state changes, the segments received before are acknowledged at once
    ///   with the old state, so the sender learns the marked fraction exactly.
    #[inline]
    pub fn on_ecn(&mut self, now: Nanos, tos: u8, flags: u8, out: &mut Vec<Packet>) {
        if self.ecn == TcpEcn::Off {
            return;
        }
        let ce = tos & 3 == Ecn::Ce as u8;
        self.ce_segments += ce as u64;
        match self.ecn {
            TcpEcn::Classic => {
                if flags & tcp_flags::CWR != 0 {
                    self.ece = false;
                }
                if ce && !self.ece {
                    self.ece = true;
                    self.quick = self.quick.max(2);
                }
            }
            _ => {
                if ce != self.ece {
                    if self.unacked > 0 {
                        self.ack(now, None, out);
                    }
                    self.ece = ce;
                }
            }
        }
    }

    /// A data segment `seq`, sent at `sent`, arrives at `now`.
    pub fn on_data(&mut self, now: Nanos, seq: u64, sent: Nanos, out: &mut Vec<Packet>) {
        if seq == self.rcv_nxt {
            if self.unacked == 0 {
                // First segment since the last ACK: its timestamp is the one to echo.
                self.ts_recent = sent;
            }
            self.rcv_nxt += 1;
            let mut n = (now >= self.count_from) as u64;
            let filled_hole = self.ooo_count > 0;
            while self.ooo_count > 0 {
                let (w, m) = self.bit(self.rcv_nxt);
                if self.ooo[w] & m == 0 {
                    break;
                }
                self.ooo[w] &= !m;
                n += (self.ooo_late[w] & m != 0) as u64;
                self.ooo_late[w] &= !m;
                self.ooo_count -= 1;
                self.rcv_nxt += 1;
            }
            self.delivered += n;
            if self.linux_ato {
                self.adapt_ato(now);
            }
            self.unacked += 1;
            // RFC 5681 §4.2: ACK at once when a segment fills (part of) a gap.
            if filled_hole || !self.delayed_ack || self.quick > 0 || self.unacked >= self.ack_every
            {
                self.ack(now, None, out);
            } else if self.delack_deadline.is_none() {
                let ato = if self.linux_ato {
                    self.ato
                } else {
                    self.delack_ns
                };
                self.delack_deadline = Some(now + ato);
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
                    if now >= self.count_from {
                        self.ooo_late[w] |= m;
                    }
                    self.ooo_count += 1;
                }
            }
            let duplicate = seq < self.rcv_nxt;
            if self.linux_ato && (duplicate || !self.sack_compression) {
                // `tcp_enter_quickack_mode`: refill the quick ACKs, reset the timeout
                // (for out-of-order data too before Linux 4.18).
                self.quick = self.quick.max(self.quick_budget);
                self.ato = self.delack_ns;
            }
            // Out-of-order or duplicate data: an immediate (duplicate) ACK, unless
            // compressed.
            if duplicate || self.ack_ooo_now(now, seq) {
                self.ack(now, Some(seq), out);
            }
        }
    }

    /// The delayed-ACK timer (or SACK compression's) expired.
    pub fn on_delack_timer(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        if self.unacked > 0 || self.compressed > 0 {
            self.ack(now, None, out);
        }
        self.delack_deadline = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;

    fn recv(cfg: TcpConfig) -> Receiver {
        Receiver::new(0, &cfg, 0)
    }

    /// Feeds in-order segments at the given times; returns the ACK numbers sent.
    fn feed(r: &mut Receiver, times: &[Nanos]) -> Vec<Option<u64>> {
        times
            .iter()
            .map(|&t| {
                let mut out = Vec::new();
                let seq = r.rcv_nxt;
                r.on_data(t, seq, t, &mut out);
                out.last().map(|p| p.seq)
            })
            .collect()
    }

    #[test]
    fn acks_every_second_segment_and_times_out_the_odd_one() {
        let mut r = recv(TcpConfig::default());
        assert_eq!(feed(&mut r, &[0, MS, 2 * MS]), vec![None, Some(2), None]);
        assert_eq!(r.delack_deadline, Some(2 * MS + 40 * MS));
        let mut out = Vec::new();
        r.on_delack_timer(42 * MS, &mut out);
        assert_eq!(out.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![3]);
    }

    #[test]
    fn goodput_counts_segments_by_arrival_not_by_release() {
        // Counting starts at t = 10. Segment 1 arrives at 5 (out of order: 0 is lost),
        // segment 0's retransmission at 12 releases both: only 0 arrived in the window.
        let mut r = Receiver::new(0, &TcpConfig::default(), 10);
        let mut out = Vec::new();
        r.on_data(5, 1, 5, &mut out);
        r.on_data(12, 0, 12, &mut out);
        assert_eq!((r.rcv_nxt, r.delivered), (2, 1));
        // Segment 3 arrives (late) out of order, then 2: both count.
        r.on_data(13, 3, 13, &mut out);
        r.on_data(14, 2, 14, &mut out);
        assert_eq!((r.rcv_nxt, r.delivered), (4, 3));
    }

    #[test]
    fn quick_acks_at_the_start_then_delayed() {
        let cfg = TcpConfig {
            quickacks: 3,
            ..TcpConfig::default()
        };
        let mut r = recv(cfg);
        let acks = feed(&mut r, &[0, 1, 2, 3, 4, 5]);
        assert_eq!(acks, vec![Some(1), Some(2), Some(3), None, Some(5), None]);
    }

    #[test]
    fn sack_blocks_follow_rfc_2018_order() {
        // ACK every segment; the blocks an ACK carries, as (start, end) with end exclusive.
        let cfg = TcpConfig {
            sack: true,
            delayed_ack: false,
            ..TcpConfig::default()
        };
        let mut r = recv(cfg);
        let mut step = |seq: u64| {
            let mut out = Vec::new();
            r.on_data(0, seq, 0, &mut out);
            let p = out[0];
            let blocks: Vec<(u64, u64)> = r
                .sack_blocks(p.sack)
                .iter()
                .map(|b| (b.start, b.end))
                .collect();
            (p.seq, blocks, p.len)
        };
        // In order: no option, the plain 52-byte ACK.
        assert_eq!(step(0), (1, vec![], 52));
        // 2 arrives above the hole at 1: one block, 52 + 12 bytes.
        assert_eq!(step(2), (1, vec![(2, 3)], 64));
        // 3 extends that block.
        assert_eq!(step(3), (1, vec![(2, 4)], 64));
        // 6: the newest block first, then the one reported before (52 + 20).
        assert_eq!(step(6), (1, vec![(6, 7), (2, 4)], 72));
        assert_eq!(step(8), (1, vec![(8, 9), (6, 7), (2, 4)], 80));
        // 10: three blocks fit; the oldest, 2–3, drops out of the option.
        assert_eq!(step(10), (1, vec![(10, 11), (8, 9), (6, 7)], 80));
        // A duplicate of 8: its block is reported first again.
        assert_eq!(step(8), (1, vec![(8, 9), (10, 11), (6, 7)], 80));
        // 7 joins 6 and 8 into 6–8: that block first; the earlier reports of 6 and 8 are
        // subsets of it, so 10 and then the remembered 2–3 follow.
        assert_eq!(step(7), (1, vec![(6, 9), (10, 11), (2, 4)], 80));
        // 1 fills the first hole: the ACK moves to 4; a segment that advanced the ACK
        // puts no block first, so the most recent reports still above it follow.
        assert_eq!(step(1), (4, vec![(6, 9), (10, 11)], 72));
        assert_eq!(step(4), (5, vec![(6, 9), (10, 11)], 72));
        assert_eq!(step(5), (9, vec![(10, 11)], 64));
        assert_eq!(step(9), (11, vec![], 52));
        // A receiver without SACK sends none.
        let mut r = recv(TcpConfig::default());
        let mut out = Vec::new();
        r.on_data(0, 3, 0, &mut out);
        assert_eq!((out[0].sack, out[0].len), (0, 52));
    }

    #[test]
    fn linux_ato_adapts_and_out_of_order_data_refills_quick_acks() {
        let cfg = TcpConfig {
            linux_ato: true,
            quickacks: 2,
            ..TcpConfig::default()
        };
        let mut r = recv(cfg);
        // Quick ACKs for segments 0 and 1 (at 10 ms: m = 10 ≤ 40/2, ato = 20 + 20 =
        // 40 ms). Segment 2 at 35 ms: 20 < m = 25 < 40 → ato = 40/2 + 25 = 45 ms, so
        // the ACK is delayed until 80 ms.
        feed(&mut r, &[0, 10 * MS]);
        assert_eq!(feed(&mut r, &[35 * MS]), vec![None]);
        assert_eq!(r.delack_deadline, Some(80 * MS));
        // Back-to-back (m = 1 ms ≤ 20 ms): ato = 45/2 + 40/2 = 42.5 ms; two segments
        // unacked, so the ACK goes now.
        assert_eq!(feed(&mut r, &[36 * MS]), vec![Some(4)]);
        assert_eq!(r.ato, 42_500_000);
        // A gap: segment 6 before 5 → immediate dupACK and quick-ack mode again.
        let mut out = Vec::new();
        r.on_data(40 * MS, 6, 40 * MS, &mut out);
        assert_eq!(out[0].seq, 4);
        assert_eq!(r.ato, 40 * MS);
        out.clear();
        // Segment 4 arrives while 6 waits above a hole: ACK at once (RFC 5681 §4.2).
        r.on_data(41 * MS, 4, 41 * MS, &mut out);
        assert_eq!(out[0].seq, 5);
    }

    /// A Linux receiver with SACK, with or without SACK compression.
    fn linux_sack_recv(sack_compression: bool, quickacks: u32) -> Receiver {
        recv(TcpConfig {
            sack: true,
            sack_compression,
            linux_ato: true,
            quickacks,
            ..TcpConfig::default()
        })
    }

    #[test]
    fn linux_6_compresses_sacks_after_three_duplicates() {
        let mut r = linux_sack_recv(true, 2);
        // A 100 ms path: the timer is min(1 ms, 5 % of 100 ms) = 1 ms (0.5 ms at 10 ms).
        r.set_handshake_rtt(100 * MS);
        assert_eq!(r.comp_delay, MS);
        // Segments 0 and 1 spend the quick ACKs; 2 is lost; 3..=12 arrive 0.1 ms apart.
        feed(&mut r, &[0, MS]);
        let mut acks = Vec::new();
        for k in 3..=12u64 {
            let mut out = Vec::new();
            r.on_data(10 * MS + (k - 3) * MS / 10, k, 0, &mut out);
            acks.push(out.first().map(|p| p.seq));
        }
        // The first three duplicates go at once (fast retransmit needs them), the other
        // seven are held; out-of-order data no longer refills the quick ACKs.
        let mut want = vec![Some(2); 3];
        want.extend([None; 7]);
        assert_eq!(acks, want);
        assert_eq!((r.quick, r.compressed), (0, 7));
        // The timer started with the first one held (segment 6, at 10.3 ms).
        assert_eq!(r.delack_deadline, Some(10 * MS + 3 * MS / 10 + MS));
        let mut out = Vec::new();
        r.on_delack_timer(11 * MS + 3 * MS / 10, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].seq, 2);
        let blocks = r.sack_blocks(out[0].sack).to_vec();
        assert_eq!(blocks, [SackBlock { start: 3, end: 13 }]);
        // The retransmission fills the hole: acknowledged at once.
        out.clear();
        r.on_data(12 * MS, 2, 0, &mut out);
        assert_eq!(out[0].seq, 13);
        // A duplicate still refills the quick ACKs and is acknowledged at once.
        out.clear();
        r.on_data(13 * MS, 5, 0, &mut out);
        assert_eq!((out[0].seq, r.quick), (13, 1));
    }

    #[test]
    fn a_compressed_run_sends_one_ack_per_44_held() {
        let mut r = linux_sack_recv(true, 0);
        r.set_handshake_rtt(10 * MS);
        assert_eq!(r.comp_delay, MS / 2);
        // Segment 0 is lost; 1..=100 arrive within 0.1 ms: 3 at once, then 44 held, the
        // 48th goes (and resets the count), 44 more held, the 93rd goes.
        let mut sent = Vec::new();
        for k in 1..=100u64 {
            let mut out = Vec::new();
            r.on_data(k * 1000, k, 0, &mut out);
            if !out.is_empty() {
                sent.push(k);
            }
        }
        assert_eq!(sent, [1, 2, 3, 48, 93]);
        assert_eq!(r.compressed, 7);
    }

    #[test]
    fn older_linux_acks_every_out_of_order_segment() {
        let mut r = linux_sack_recv(false, 0);
        let mut n = 0;
        for k in 1..=10u64 {
            let mut out = Vec::new();
            r.on_data(k * 1000, k, 0, &mut out);
            n += out.len();
        }
        assert_eq!(n, 10);
    }
}
