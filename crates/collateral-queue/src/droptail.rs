//! Drop-tail FIFO with the three definitions of "full" that real systems use.
//!
//! | rule       | drop the arrival when                     | found in                                   |
//! |------------|-------------------------------------------|--------------------------------------------|
//! | `Ps`       | `packets >= limit`                        | Linux `pfifo`, dummynet slot mode, ns-3    |
//! | `FbStrict` | `bytes + len > limit`                     | Linux `bfifo` (and `tbf`), ns-3, Mahimahi  |
//! | `FbLoose`  | `bytes > limit` (before adding)           | FreeBSD dummynet byte mode (`dn_enqueue`)  |
//!
//! FB-loose can therefore exceed its limit by up to one packet. Whether the packet being
//! transmitted still counts as occupancy is explicit (`count_in_service`): by default it
//! stops counting when its transmission starts, as in Linux qdiscs and dummynet, where
//! the packet has left the queue once it is handed to the wire.

use std::collections::VecDeque;

use crate::{Discipline, Nanos, Packet};

/// Which test decides that the queue is full. Spelled `ps`, `fb-strict`, `fb-loose`
/// everywhere (JSON, TOML, CLI, stored results); `fb_strict`/`fb_loose` are still read.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, strum::VariantNames,
)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum FullRule {
    /// Packet slots: `limit` is a packet count.
    Ps,
    /// Bytes, the arrival must fit: `limit` is bytes.
    #[serde(alias = "fb_strict")]
    FbStrict,
    /// Bytes, accept while the backlog is not over the limit: `limit` is bytes.
    #[serde(alias = "fb_loose")]
    FbLoose,
}

/// A drop-tail FIFO.
#[derive(Debug, Clone)]
pub struct DropTail {
    rule: FullRule,
    limit: u64,
    count_in_service: bool,
    q: VecDeque<Packet>,
    /// Bytes of the waiting packets.
    waiting_bytes: u64,
    /// Length of the packet in transmission, if any (0 = none).
    in_service: u32,
}

impl DropTail {
    /// The name papers and figures use. Drop-tail has no `kind`, and its limit's unit is
    /// its [`FullRule`]'s (packets for `ps`, bytes otherwise).
    pub const DISPLAY: &'static str = "drop-tail";

    /// `limit` is packets for [`FullRule::Ps`], bytes otherwise. Panics on a zero limit:
    /// a queue that can hold nothing is a configuration error the caller must catch.
    pub fn new(rule: FullRule, limit: u64, count_in_service: bool) -> Self {
        assert!(limit > 0, "drop-tail limit must be positive");
        DropTail {
            rule,
            limit,
            count_in_service,
            q: VecDeque::with_capacity(256),
            waiting_bytes: 0,
            in_service: 0,
        }
    }

    pub fn rule(&self) -> FullRule {
        self.rule
    }

    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// The packet that would be dequeued next.
    #[inline]
    pub fn head(&self) -> Option<&Packet> {
        self.q.front()
    }

    /// Removes the head packet without handing it to the link (drop-from-front).
    #[inline]
    pub fn pop_head(&mut self) -> Option<Packet> {
        let pkt = self.q.pop_front()?;
        self.waiting_bytes -= pkt.len as u64;
        Some(pkt)
    }

    /// Whether the packet in transmission counts as occupancy.
    pub fn count_in_service(&self) -> bool {
        self.count_in_service
    }

    /// The accept/drop decision for an arrival of `len` bytes, given the occupancy.
    #[inline]
    pub fn is_full(&self, len: u32) -> bool {
        self.is_full_at(self.bytes(), self.packets(), len)
    }

    /// The accept/drop decision for an arrival of `len` bytes when `bytes` and
    /// `packets` are the occupancy: for a caller that keeps the occupancy itself (the
    /// simulator's drop-tail link fixes each departure at arrival).
    #[inline]
    pub fn is_full_at(&self, bytes: u64, packets: u32, len: u32) -> bool {
        match self.rule {
            FullRule::Ps => packets as u64 >= self.limit,
            FullRule::FbStrict => bytes + len as u64 > self.limit,
            FullRule::FbLoose => bytes > self.limit,
        }
    }
}

impl Discipline for DropTail {
    #[inline]
    fn enqueue(&mut self, _now: Nanos, pkt: Packet, drops: &mut Vec<Packet>) -> bool {
        if self.is_full(pkt.bytes()) {
            drops.push(pkt);
            return false;
        }
        self.waiting_bytes += pkt.len as u64;
        self.q.push_back(pkt);
        true
    }

    #[inline]
    fn dequeue(&mut self, _now: Nanos, _drops: &mut Vec<Packet>) -> Option<Packet> {
        let pkt = self.q.pop_front()?;
        self.waiting_bytes -= pkt.len as u64;
        self.in_service = pkt.bytes();
        Some(pkt)
    }

    #[inline]
    fn transmit_done(&mut self, _now: Nanos) {
        self.in_service = 0;
    }

    #[inline]
    fn bytes(&self) -> u64 {
        if self.count_in_service {
            self.waiting_bytes + self.in_service as u64
        } else {
            self.waiting_bytes
        }
    }

    #[inline]
    fn packets(&self) -> u32 {
        let w = self.q.len() as u32;
        if self.count_in_service && self.in_service > 0 {
            w + 1
        } else {
            w
        }
    }

    #[inline]
    fn waiting(&self) -> usize {
        self.q.len()
    }

    fn visit(&self, f: &mut dyn FnMut(&Packet)) {
        self.q.iter().for_each(f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PacketKind;

    fn pkt(len: u32) -> Packet {
        Packet::new(PacketKind::Data, 0, len, 0, 0)
    }

    /// Offers packets of the given sizes in order; returns the accept decisions.
    fn offer(q: &mut DropTail, sizes: &[u32]) -> Vec<bool> {
        let mut drops = Vec::new();
        sizes
            .iter()
            .map(|&l| q.enqueue(0, pkt(l), &mut drops))
            .collect()
    }

    #[test]
    fn fb_strict_fits_eight_voip_packets_into_the_1499_byte_gap() {
        // limit = 4·1500 + 1499 = 7499 B. Four 1500-byte packets fill 6000 B; a fifth
        // does not fit (7500 > 7499). The 1499 B left hold ⌊1499 / 186⌋ = 8 VoIP packets
        // (8·186 = 1488 B); the ninth would need 1674 B.
        let n = 4;
        let mut q = DropTail::new(FullRule::FbStrict, n * 1500 + 1499, false);
        assert_eq!(offer(&mut q, &[1500; 4]), vec![true; 4]);
        assert_eq!(offer(&mut q, &[1500]), vec![false]);
        let mut want = vec![true; 8];
        want.push(false);
        assert_eq!(offer(&mut q, &[186; 9]), want);
        assert_eq!(q.bytes(), 6000 + 1488);
        assert!(q.bytes() <= q.limit());
    }

    #[test]
    fn fb_strict_accepts_an_exact_fill() {
        let mut q = DropTail::new(FullRule::FbStrict, 3000, false);
        assert_eq!(offer(&mut q, &[1500, 1500, 1]), vec![true, true, false]);
        assert_eq!(q.bytes(), 3000);
    }

    #[test]
    fn fb_loose_accepts_while_not_over_the_limit_and_overshoots_by_one_packet() {
        // limit 7499: backlog 6000 + 1498 = 7498 = limit − 1, which is not over the
        // limit, so a 1500-byte arrival is accepted and the backlog ends at 8998 > 7499.
        let mut q = DropTail::new(FullRule::FbLoose, 7499, false);
        assert_eq!(offer(&mut q, &[1500, 1500, 1500, 1500]), vec![true; 4]);
        assert_eq!(offer(&mut q, &[1498]), vec![true]);
        assert_eq!(q.bytes(), 7498);
        assert_eq!(offer(&mut q, &[1500]), vec![true]);
        assert_eq!(q.bytes(), 8998);
        // Now over the limit: everything is refused, even a 1-byte packet.
        assert_eq!(offer(&mut q, &[186, 1]), vec![false, false]);
    }

    #[test]
    fn fb_loose_at_exactly_the_limit_still_accepts() {
        // "Over" is strict: backlog == limit is not over it.
        let mut q = DropTail::new(FullRule::FbLoose, 3000, false);
        assert_eq!(
            offer(&mut q, &[1500, 1500, 1500, 1]),
            vec![true, true, true, false]
        );
    }

    #[test]
    fn ps_counts_packets_and_ignores_sizes() {
        let mut q = DropTail::new(FullRule::Ps, 3, false);
        assert_eq!(
            offer(&mut q, &[1500, 40, 186, 1]),
            vec![true, true, true, false]
        );
        let mut q = DropTail::new(FullRule::Ps, 3, false);
        assert_eq!(
            offer(&mut q, &[40, 40, 40, 40]),
            vec![true, true, true, false]
        );
        assert_eq!(q.bytes(), 120);
    }

    #[test]
    fn the_packet_in_transmission_counts_only_when_asked() {
        for (count, want) in [(false, true), (true, false)] {
            let mut q = DropTail::new(FullRule::Ps, 2, count);
            let mut drops = Vec::new();
            assert_eq!(offer(&mut q, &[1500, 1500]), vec![true, true]);
            let head = q.dequeue(0, &mut drops).unwrap();
            assert_eq!(head.len, 1500);
            // One waiting + one in transmission.
            assert_eq!(q.packets(), 1 + count as u32);
            assert_eq!(offer(&mut q, &[186]), vec![want]);
            q.transmit_done(0);
            assert_eq!(q.packets(), 1 + want as u32);
        }
        // The same for bytes.
        let mut q = DropTail::new(FullRule::FbStrict, 3000, true);
        let mut drops = Vec::new();
        offer(&mut q, &[1500, 1500]);
        q.dequeue(0, &mut drops);
        assert_eq!(q.bytes(), 3000);
        assert_eq!(offer(&mut q, &[1]), vec![false]);
        q.transmit_done(0);
        assert_eq!(offer(&mut q, &[1500]), vec![true]);
    }

    #[test]
    fn dequeue_is_fifo_and_refused_arrivals_are_reported() {
        let mut q = DropTail::new(FullRule::Ps, 2, false);
        let mut drops = Vec::new();
        for seq in 0..4 {
            let mut p = pkt(100);
            p.seq = seq;
            q.enqueue(0, p, &mut drops);
        }
        assert_eq!(drops.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![2, 3]);
        assert_eq!(q.dequeue(0, &mut drops).unwrap().seq, 0);
        assert_eq!(q.dequeue(0, &mut drops).unwrap().seq, 1);
        assert!(q.dequeue(0, &mut drops).is_none());
        assert_eq!((q.bytes(), q.packets()), (0, 0));
    }
}
