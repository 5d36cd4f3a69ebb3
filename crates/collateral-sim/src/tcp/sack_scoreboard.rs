//! Selective acknowledgment: the option's blocks (RFC 2018), the records that carry them
//! beside the ACK packets, and the sender's scoreboard for SACK-based loss recovery
//! (RFC 6675; Linux `tcp_sacktag_write_queue`, `tcp_mark_head_lost`; FreeBSD
//! `tcp_sack.c`).
//!
//! Sequence numbers count segments (see [`super`]), so a block is a range of segment
//! numbers and every "octet" rule of RFC 6675 becomes a segment rule: `IsLost(S)` holds
//! when at least DupThresh = 3 SACKed segments lie above `S`.
//!
//! The blocks do not travel inside [`Packet`](collateral_queue::Packet), which every
//! queue copies: the receiver stores each SACK-carrying ACK's blocks in an [`AckRing`]
//! and the packet carries only the record's handle, while its IP length counts the
//! option as a real stack would send it ([`ack_len`]).

/// Blocks one ACK carries: with the timestamp option (10 bytes + 2 NOPs) 40 − 12 = 28
/// bytes of option space are left, room for 2 + 3·8 = 26 (RFC 2018 §3; Linux
/// `tcp_established_options` caps `num_sack_blocks` the same way).
pub const MAX_SACK_BLOCKS: usize = 3;

/// Segments `start .. end` (end exclusive), held by the receiver above its cumulative ACK.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SackBlock {
    pub start: u64,
    pub end: u64,
}

impl SackBlock {
    #[inline]
    pub fn contains(&self, seq: u64) -> bool {
        self.start <= seq && seq < self.end
    }
}

/// IP length of a pure ACK of `ack_bytes` with `n` SACK blocks: kind and length (2 bytes)
/// plus 8 bytes a block, padded to a 4-byte boundary (Linux writes NOP, NOP, kind, length:
/// 4 + 8·n bytes, `tcp_options_write`).
#[inline]
pub fn ack_len(ack_bytes: u32, n: usize) -> u32 {
    if n == 0 {
        ack_bytes
    } else {
        ack_bytes + (2 + 8 * n as u32).next_multiple_of(4)
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct AckRecord {
    id: u32,
    n: u8,
    blocks: [SackBlock; MAX_SACK_BLOCKS],
}

/// The SACK blocks of a flow's ACKs while they are in the network, by handle.
///
/// Handles count up from 1 (0 means "no SACK option"). A flow's ACKs reach the sender in
/// the order they were sent (every queue here keeps a flow's packets in order), so once
/// the sender has read handle `h`, no record at or below it is needed again; the ring only
/// has to span the ACKs sent since, and doubles when it does not. A record overwritten
/// anyway (an absurd number of ACKs lost in a row) reads as no blocks, like a lost option.
#[derive(Debug, Clone)]
pub struct AckRing {
    recs: Vec<AckRecord>,
    next: u32,
    read_hi: u32,
}

/// The ring stops growing here (64 Ki records, 3.7 MB).
const RING_MAX: usize = 1 << 16;

impl AckRing {
    pub fn new() -> Self {
        AckRing {
            recs: vec![AckRecord::default(); 64],
            next: 0,
            read_hi: 0,
        }
    }

    /// Stores `blocks` (at most [`MAX_SACK_BLOCKS`]) and returns their handle.
    pub fn push(&mut self, blocks: &[SackBlock]) -> u32 {
        self.next = self.next.wrapping_add(1).max(1);
        let id = self.next;
        let unread = id.wrapping_sub(self.read_hi) as usize;
        if unread >= self.recs.len() && self.recs.len() < RING_MAX {
            self.grow(unread + 1);
        }
        let mut r = AckRecord {
            id,
            n: blocks.len() as u8,
            ..AckRecord::default()
        };
        r.blocks[..blocks.len()].copy_from_slice(blocks);
        let mask = self.recs.len() - 1;
        self.recs[id as usize & mask] = r;
        id
    }

    #[cold]
    fn grow(&mut self, need: usize) {
        let len = need.next_power_of_two().min(RING_MAX);
        let mut recs = vec![AckRecord::default(); len];
        let old = self.recs.len() as u32;
        for r in &self.recs {
            // Only the latest `old` handles can still be live.
            if r.id != 0 && self.next.wrapping_sub(r.id) < old {
                recs[r.id as usize & (len - 1)] = *r;
            }
        }
        self.recs = recs;
    }

    /// The blocks of handle `id` as the ACK reaches the sender.
    pub fn read(&mut self, id: u32) -> &[SackBlock] {
        if id == 0 {
            return &[];
        }
        let r = &self.recs[id as usize & (self.recs.len() - 1)];
        if r.id != id {
            return &[];
        }
        // Later than anything read so far (within half the handle space).
        if id.wrapping_sub(self.read_hi) < u32::MAX / 2 {
            self.read_hi = id;
        }
        &r.blocks[..r.n as usize]
    }
}

impl Default for AckRing {
    fn default() -> Self {
        Self::new()
    }
}

/// Per-segment state bits for 64 consecutive segments.
#[derive(Debug, Clone, Copy, Default)]
struct Word {
    /// Reported received by a SACK block (Linux `TCPCB_SACKED_ACKED`).
    sacked: u64,
    /// Deemed lost (`TCPCB_LOST`; RFC 6675 `IsLost`).
    lost: u64,
    /// Retransmitted and not known to have left the network since (`TCPCB_SACKED_RETRANS`).
    retrans: u64,
}

#[inline]
fn ones(n: u64) -> u64 {
    if n >= 64 {
        !0
    } else {
        (1u64 << n) - 1
    }
}

/// The sender's SACK scoreboard over the outstanding segments `snd_una .. snd_nxt`, with
/// Linux's counters: packets in flight are `packets_out − (sacked_out + lost_out) +
/// retrans_out` (`tcp_packets_in_flight`), which is also RFC 6675's `SetPipe()` in
/// segments: an un-SACKed segment counts once unless it is lost, and once more if it was
/// retransmitted.
///
/// Bits live in a ring of 64-segment words indexed by segment number, grown (rarely) as
/// the window does; every range operation works a word at a time.
#[derive(Debug, Clone)]
pub struct Scoreboard {
    w: Vec<Word>,
    /// `snd_nxt` when each retransmission left (Linux keeps it in the skb's `ack_seq`):
    /// a SACK for anything sent at or after that point means the retransmission was lost.
    rexmit_nxt: Vec<u64>,
    pub sacked_out: u32,
    pub lost_out: u32,
    pub retrans_out: u32,
    /// One past the highest segment ever SACKed (Linux `highest_sack` + 1, FreeBSD
    /// `snd_fack`); at or below `snd_una` once all of those are acknowledged.
    pub high_sacked: u64,
    /// Every un-SACKed segment below this has been marked lost (Linux's `lost_skb_hint`).
    lost_upto: u64,
    /// No segment below this waits for a retransmission (Linux `retransmit_skb_hint`).
    rtx_hint: u64,
    /// The lowest `rexmit_nxt` of an outstanding retransmission (`lost_retrans_low`).
    retrans_low: u64,
}

impl Scoreboard {
    fn words_for(capacity: usize) -> usize {
        capacity.div_ceil(64).next_power_of_two().max(2)
    }

    /// The memory of a scoreboard for `capacity` outstanding segments. The trial's
    /// memory estimate (`collateral_model::limits::scoreboard_bytes`) repeats this
    /// figure without the type; a test keeps the two equal.
    pub fn bytes_for(capacity: usize) -> u64 {
        let words = Self::words_for(capacity) as u64;
        words * (std::mem::size_of::<Word>() as u64 + 64 * 8)
    }

    /// A scoreboard with room for `capacity` outstanding segments to start with.
    pub fn new(capacity: usize) -> Self {
        let words = Self::words_for(capacity);
        Scoreboard {
            w: vec![Word::default(); words],
            rexmit_nxt: vec![0; words * 64],
            sacked_out: 0,
            lost_out: 0,
            retrans_out: 0,
            high_sacked: 0,
            lost_upto: 0,
            rtx_hint: 0,
            retrans_low: u64::MAX,
        }
    }

    #[inline]
    fn bits(&self) -> u64 {
        self.w.len() as u64 * 64
    }

    /// Word index, bit index and the segment number of bit 0 of `seq`'s word.
    #[inline]
    fn at(&self, seq: u64) -> (usize, u64, u64) {
        let i = seq & (self.bits() - 1);
        let b = i & 63;
        ((i >> 6) as usize, b, seq - b)
    }

    /// Calls `f(word, mask, seq of bit 0)` for the words covering `from .. to`.
    #[inline]
    fn words(&mut self, from: u64, to: u64, mut f: impl FnMut(&mut Word, u64, u64)) {
        let mut s = from;
        while s < to {
            let (wi, b, base) = self.at(s);
            let n = (64 - b).min(to - s);
            f(&mut self.w[wi], ones(n) << b, base);
            s += n;
        }
    }

    /// Makes room for segments `snd_una .. end`.
    #[inline]
    pub fn reserve(&mut self, snd_una: u64, snd_nxt: u64, end: u64) {
        if end - snd_una > self.bits() {
            self.grow(snd_una, snd_nxt, end);
        }
    }

    #[cold]
    fn grow(&mut self, snd_una: u64, snd_nxt: u64, end: u64) {
        let mut new = Scoreboard::new(((end - snd_una) as usize * 2).next_power_of_two());
        for seq in snd_una..snd_nxt {
            let (wi, b, _) = self.at(seq);
            let (nwi, nb, _) = new.at(seq);
            let old = self.w[wi];
            let w = &mut new.w[nwi];
            w.sacked |= (old.sacked >> b & 1) << nb;
            w.lost |= (old.lost >> b & 1) << nb;
            w.retrans |= (old.retrans >> b & 1) << nb;
            let (ni, oi) = (seq & (new.bits() - 1), seq & (self.bits() - 1));
            new.rexmit_nxt[ni as usize] = self.rexmit_nxt[oi as usize];
        }
        self.w = new.w;
        self.rexmit_nxt = new.rexmit_nxt;
    }

    /// Packets in the network, `flight` being `snd_nxt − snd_una`.
    #[inline]
    pub fn in_flight(&self, flight: u32) -> u32 {
        (flight + self.retrans_out).saturating_sub(self.sacked_out + self.lost_out)
    }

    /// Segments from `snd_una` up to and including the highest SACKed one (Linux
    /// `fackets_out`).
    #[inline]
    pub fn fackets(&self, snd_una: u64) -> u64 {
        self.high_sacked.saturating_sub(snd_una)
    }

    #[inline]
    pub fn is_sacked(&self, seq: u64) -> bool {
        let (wi, b, _) = self.at(seq);
        self.w[wi].sacked >> b & 1 == 1
    }

    #[inline]
    pub fn is_lost(&self, seq: u64) -> bool {
        let (wi, b, _) = self.at(seq);
        self.w[wi].lost >> b & 1 == 1
    }

    #[inline]
    pub fn is_retransmitted(&self, seq: u64) -> bool {
        let (wi, b, _) = self.at(seq);
        self.w[wi].retrans >> b & 1 == 1
    }

    /// A SACK block reports `start .. end` received (already clipped to the outstanding
    /// segments). Newly SACKed segments stop being lost or retransmitted-in-flight (Linux
    /// `tcp_sacktag_one`); `each` sees them in ascending order. Returns how many.
    pub fn sack(&mut self, start: u64, end: u64, mut each: impl FnMut(u64)) -> u32 {
        let (mut n, mut lost, mut rtx) = (0, 0, 0);
        self.words(start, end, |w, m, base| {
            let new = m & !w.sacked;
            if new != 0 {
                n += new.count_ones();
                lost += (new & w.lost).count_ones();
                rtx += (new & w.retrans).count_ones();
                w.sacked |= new;
                w.lost &= !new;
                w.retrans &= !new;
                let mut x = new;
                while x != 0 {
                    each(base + x.trailing_zeros() as u64);
                    x &= x - 1;
                }
            }
        });
        self.sacked_out += n;
        self.lost_out -= lost;
        self.retrans_out -= rtx;
        self.high_sacked = self.high_sacked.max(end);
        n
    }

    /// The cumulative ACK moved `snd_una` from `from` to `to`: forget those segments.
    /// Returns how many of them had been SACKed (already delivered).
    pub fn ack(&mut self, from: u64, to: u64) -> u32 {
        let mut was_sacked = 0;
        if self.sacked_out | self.lost_out | self.retrans_out != 0 {
            let (mut lost, mut rtx) = (0, 0);
            self.words(from, to, |w, m, _| {
                was_sacked += (w.sacked & m).count_ones();
                lost += (w.lost & m).count_ones();
                rtx += (w.retrans & m).count_ones();
                w.sacked &= !m;
                w.lost &= !m;
                w.retrans &= !m;
            });
            self.sacked_out -= was_sacked;
            self.lost_out -= lost;
            self.retrans_out -= rtx;
        }
        self.lost_upto = self.lost_upto.max(to);
        self.rtx_hint = self.rtx_hint.max(to);
        was_sacked
    }

    /// Marks every segment in `snd_una .. to` that is neither SACKed nor already lost as
    /// lost (Linux `tcp_mark_head_lost`); returns how many were newly marked. The
    /// boundaries the callers compute only move forward, so the work is incremental.
    pub fn mark_lost(&mut self, snd_una: u64, to: u64) -> u32 {
        let from = self.lost_upto.max(snd_una);
        if to <= from {
            return 0;
        }
        let mut n = 0;
        self.words(from, to, |w, m, _| {
            let new = m & !w.sacked & !w.lost;
            w.lost |= new;
            n += new.count_ones();
        });
        self.lost_out += n;
        self.lost_upto = to;
        n
    }

    /// The `n`-th highest SACKed segment, if at least `n` are SACKed: every un-SACKed
    /// segment below it has `n` SACKed segments above it, so with `n` = DupThresh it is
    /// where RFC 6675's `IsLost()` starts to hold.
    pub fn nth_highest_sacked(&self, snd_una: u64, n: u32) -> Option<u64> {
        if self.sacked_out < n || n == 0 {
            return None;
        }
        let mut need = n;
        let mut top = self.high_sacked;
        while top > snd_una {
            let (wi, b, base) = self.at(top - 1);
            let start = base.max(snd_una);
            let m = ones(top - start) << (start - base);
            debug_assert!(b >= start - base);
            let mut x = self.w[wi].sacked & m;
            let c = x.count_ones();
            if c >= need {
                for _ in 1..need {
                    x &= !(1u64 << (63 - x.leading_zeros()));
                }
                return Some(base + (63 - x.leading_zeros()) as u64);
            }
            need -= c;
            top = start;
        }
        None
    }

    /// The lowest lost segment not yet retransmitted (RFC 6675 `NextSeg()` rule 1; Linux
    /// `tcp_xmit_retransmit_queue`'s first pass).
    pub fn next_lost(&mut self, snd_una: u64) -> Option<u64> {
        if self.lost_out == 0 {
            return None;
        }
        let from = self.rtx_hint.max(snd_una);
        let to = self.lost_upto;
        let mut found = None;
        let mut s = from;
        while s < to {
            let (wi, b, base) = self.at(s);
            let n = (64 - b).min(to - s);
            let w = self.w[wi];
            let x = w.lost & !w.retrans & (ones(n) << b);
            if x != 0 {
                found = Some(base + x.trailing_zeros() as u64);
                break;
            }
            s += n;
        }
        self.rtx_hint = found.unwrap_or(to);
        found
    }

    /// The lowest segment below the highest SACKed one that is neither SACKed, lost nor
    /// retransmitted (RFC 6675 `NextSeg()` rule 3; Linux's forward retransmission).
    pub fn next_forward(&self, snd_una: u64) -> Option<u64> {
        let mut s = snd_una;
        let to = self.high_sacked;
        while s < to {
            let (wi, b, base) = self.at(s);
            let n = (64 - b).min(to - s);
            let w = self.w[wi];
            let x = !(w.sacked | w.lost | w.retrans) & (ones(n) << b);
            if x != 0 {
                return Some(base + x.trailing_zeros() as u64);
            }
            s += n;
        }
        None
    }

    /// Segment `seq` is retransmitted while `snd_nxt` is the next new segment.
    pub fn retransmitted(&mut self, seq: u64, snd_nxt: u64) {
        let (wi, b, _) = self.at(seq);
        let w = &mut self.w[wi];
        if w.retrans >> b & 1 == 0 {
            w.retrans |= 1 << b;
            self.retrans_out += 1;
        }
        let i = (seq & (self.bits() - 1)) as usize;
        self.rexmit_nxt[i] = snd_nxt;
        self.retrans_low = self.retrans_low.min(snd_nxt);
    }

    /// A SACK for segment `highest` (newly the highest SACKed) proves lost every
    /// retransmission sent before it left: they are lost again and may go once more
    /// (Linux 2.6.25 `tcp_mark_lost_retrans` under FACK; modern Linux's RACK reaches the
    /// same verdict by send time). Returns how many segments became lost anew.
    pub fn lost_retransmits(&mut self, snd_una: u64, snd_nxt: u64, highest: u64) -> u32 {
        if self.retrans_out == 0 || highest < self.retrans_low {
            return 0;
        }
        let mut low = u64::MAX;
        let (mut cleared, mut newly_lost) = (0, 0);
        let mut rtx_hint = self.rtx_hint;
        let mask = self.bits() - 1;
        let rexmit_nxt = &self.rexmit_nxt;
        let mut s = snd_una;
        while s < snd_nxt {
            let i = s & mask;
            let (wi, b, base) = ((i >> 6) as usize, i & 63, s - (i & 63));
            let n = (64 - b).min(snd_nxt - s);
            let w = &mut self.w[wi];
            let mut x = w.retrans & (ones(n) << b);
            while x != 0 {
                let bit = x.trailing_zeros() as u64;
                x &= x - 1;
                let seq = base + bit;
                let mark = rexmit_nxt[(seq & mask) as usize];
                if mark <= highest {
                    w.retrans &= !(1 << bit);
                    cleared += 1;
                    if w.lost >> bit & 1 == 0 {
                        w.lost |= 1 << bit;
                        newly_lost += 1;
                    }
                    rtx_hint = rtx_hint.min(seq);
                } else {
                    low = low.min(mark);
                }
            }
            s += n;
        }
        self.retrans_out -= cleared;
        self.lost_out += newly_lost;
        self.rtx_hint = rtx_hint;
        self.retrans_low = low;
        newly_lost
    }

    /// A retransmission timeout: every un-SACKed outstanding segment is lost and no
    /// retransmission is in flight any more; SACKed ones keep their mark, so they are not
    /// sent again (Linux `tcp_enter_loss` without reneging). Returns how many segments
    /// became lost.
    pub fn timeout(&mut self, snd_una: u64, snd_nxt: u64) -> u32 {
        let mut newly = 0;
        self.words(snd_una, snd_nxt, |w, m, _| {
            newly += (m & !w.sacked & !w.lost).count_ones();
            w.lost |= m & !w.sacked;
            w.retrans &= !m;
        });
        self.retrans_out = 0;
        self.lost_out = (snd_nxt - snd_una) as u32 - self.sacked_out;
        self.lost_upto = snd_nxt;
        self.rtx_hint = snd_una;
        self.retrans_low = u64::MAX;
        newly
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_models_memory_estimate_is_the_scoreboards() {
        for n in [0, 1, 63, 64, 65, 1000, 10_000, 741_534, 1 << 20] {
            assert_eq!(
                Scoreboard::bytes_for(n),
                collateral_model::limits::scoreboard_bytes(n),
                "{n}"
            );
        }
    }

    #[test]
    fn option_length_is_padded_to_four_bytes() {
        // 2 + 8 = 10 → 12; 2 + 16 = 18 → 20; 2 + 24 = 26 → 28: Linux's NOP, NOP, kind,
        // length then the blocks.
        assert_eq!(ack_len(52, 0), 52);
        assert_eq!(ack_len(52, 1), 64);
        assert_eq!(ack_len(52, 2), 72);
        assert_eq!(ack_len(52, 3), 80);
    }

    #[test]
    fn the_ring_hands_back_blocks_by_handle_and_grows_for_unread_acks() {
        let mut r = AckRing::new();
        let b = |s, e| SackBlock { start: s, end: e };
        // 200 ACKs sent, none read yet: the ring must hold them all.
        let ids: Vec<u32> = (0..200u64).map(|k| r.push(&[b(k + 2, k + 3)])).collect();
        assert_eq!(ids[0], 1);
        for (k, &id) in ids.iter().enumerate() {
            assert_eq!(r.read(id), &[b(k as u64 + 2, k as u64 + 3)]);
        }
        assert_eq!(r.read(0), &[]);
        // Once read, old slots are reused without growing.
        let len = r.recs.len();
        for k in 0..1000u64 {
            let id = r.push(&[b(k, k + 1), b(k + 5, k + 6)]);
            assert_eq!(r.read(id).len(), 2);
        }
        assert_eq!(r.recs.len(), len);
    }

    #[test]
    fn scoreboard_counts_follow_sacks_acks_and_losses() {
        // 20 segments out; 0 and 5 lost, 1–4 and 6–9 SACKed, 10–19 still in flight.
        let mut sb = Scoreboard::new(16);
        sb.reserve(0, 0, 20);
        let mut seen = Vec::new();
        assert_eq!(sb.sack(1, 5, |s| seen.push(s)), 4);
        assert_eq!(sb.sack(6, 10, |s| seen.push(s)), 4);
        assert_eq!(sb.sack(1, 5, |s| seen.push(s)), 0, "nothing new");
        assert_eq!(seen, vec![1, 2, 3, 4, 6, 7, 8, 9]);
        assert_eq!((sb.sacked_out, sb.high_sacked, sb.fackets(0)), (8, 10, 10));
        // Third highest SACKed segment: 9, 8, 7 → 7; below it 0 and 5 are IsLost.
        assert_eq!(sb.nth_highest_sacked(0, 3), Some(7));
        assert_eq!(sb.mark_lost(0, 7), 2);
        assert!(sb.is_lost(0) && sb.is_lost(5) && !sb.is_lost(6));
        // in flight = 20 − (8 + 2) + 0 = 10.
        assert_eq!(sb.in_flight(20), 10);
        assert_eq!(sb.next_lost(0), Some(0));
        sb.retransmitted(0, 20);
        assert_eq!(sb.in_flight(20), 11);
        assert_eq!(sb.next_lost(0), Some(5));
        sb.retransmitted(5, 20);
        assert_eq!(sb.next_lost(0), None);
        // Segment 20 is sent and SACKed: both retransmissions left before it (mark 20 ≤
        // 20), so both are lost again.
        sb.reserve(0, 20, 21);
        sb.sack(20, 21, |_| {});
        assert_eq!(sb.lost_retransmits(0, 21, 20), 0, "they were lost already");
        assert_eq!((sb.retrans_out, sb.lost_out), (0, 2));
        assert_eq!(sb.next_lost(0), Some(0));
        // The cumulative ACK for 0..5 removes four SACKed and one lost segment.
        assert_eq!(sb.ack(0, 5), 4);
        assert_eq!((sb.sacked_out, sb.lost_out), (5, 1));
        assert_eq!(sb.next_lost(5), Some(5));
        // A timeout: 10–19 become lost too (5 was already); SACKed ones stay.
        assert_eq!(sb.timeout(5, 21), 10);
        assert_eq!((sb.lost_out, sb.sacked_out), (11, 5));
        assert_eq!(sb.in_flight(16), 0);
    }

    #[test]
    fn the_scoreboard_grows_and_keeps_its_marks() {
        let mut sb = Scoreboard::new(16);
        sb.reserve(100, 100, 228);
        sb.sack(150, 160, |_| {});
        sb.mark_lost(100, 150);
        sb.retransmitted(100, 228);
        sb.reserve(100, 228, 1000);
        assert!(sb.bits() >= 900);
        assert!(sb.is_sacked(155) && sb.is_lost(149) && sb.is_retransmitted(100));
        assert_eq!(sb.rexmit_nxt[(100 & (sb.bits() - 1)) as usize], 228);
        assert_eq!(sb.nth_highest_sacked(100, 10), Some(150));
        assert_eq!(sb.nth_highest_sacked(100, 11), None);
        // Every un-SACKed segment below 160 is lost or retransmitted: no forward
        // retransmission; once 120 is not lost (a fresh board), it is the candidate.
        assert_eq!(sb.next_forward(100), None);
        let mut sb = Scoreboard::new(16);
        sb.sack(125, 126, |_| {});
        sb.mark_lost(120, 121);
        assert_eq!(sb.next_forward(120), Some(121));
    }
}
