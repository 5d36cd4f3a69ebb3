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

/// Which test decides that the queue is full.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FullRule {
    /// Packet slots: `limit` is a packet count.
    Ps,
    /// Bytes, the arrival must fit: `limit` is bytes.
    FbStrict,
    /// Bytes, accept while the backlog is not over the limit: `limit` is bytes.
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

    /// The accept/drop decision for an arrival of `len` bytes, given the occupancy.
    #[inline]
    pub fn is_full(&self, len: u32) -> bool {
        match self.rule {
            FullRule::Ps => self.packets() as u64 >= self.limit,
            FullRule::FbStrict => self.bytes() + len as u64 > self.limit,
            FullRule::FbLoose => self.bytes() > self.limit,
        }
    }
}

impl Discipline for DropTail {
    #[inline]
    fn enqueue(&mut self, _now: Nanos, pkt: Packet, drops: &mut Vec<Packet>) -> bool {
        if self.is_full(pkt.len) {
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
        self.in_service = pkt.len;
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
