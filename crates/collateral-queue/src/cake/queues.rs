//! Packet storage for CAKE: one slab of packet slots shared by every flow queue, each
//! flow queue a singly linked FIFO threaded through it (as sch_cake threads `sk_buff`s
//! through `cake_flow.head/tail`), and the three flow rotations of a tin (new, old,
//! decaying: `cake_tin_data.new_flows/old_flows/decaying_flows`) as intrusive doubly
//! linked lists over the tin's flow array.
//!
//! Why a slab: the ACK filter unlinks a packet from the middle of a flow queue, which a
//! linked list does in O(1) given its predecessor; and the slab grows only when the
//! backlog reaches a new high-water mark (amortised doubling), so the steady state
//! allocates nothing per packet. Why intrusive chains: a flow moves between rotations
//! from any position (a decaying flow that gets a packet joins *new flows*), which a
//! `VecDeque` of indices could only do by searching.

use crate::Packet;

/// "No slot" / "no flow".
pub(super) const NIL: u32 = u32::MAX;
const NIL16: u16 = u16::MAX;

#[derive(Debug, Clone, Copy)]
struct Slot {
    pkt: Packet,
    next: u32,
}

/// Packet slots with a free list.
#[derive(Debug, Clone)]
pub(super) struct Slab {
    slots: Vec<Slot>,
    free: u32,
}

impl Slab {
    pub(super) fn with_capacity(n: usize) -> Self {
        Slab {
            slots: Vec::with_capacity(n),
            free: NIL,
        }
    }

    fn alloc(&mut self, pkt: Packet) -> u32 {
        let s = Slot { pkt, next: NIL };
        if let Some(slot) = self.slots.get_mut(self.free as usize) {
            let i = self.free;
            self.free = slot.next;
            *slot = s;
            i
        } else {
            self.slots.push(s);
            (self.slots.len() - 1) as u32
        }
    }

    fn release(&mut self, i: u32) -> Option<Packet> {
        let free = self.free;
        let slot = self.slots.get_mut(i as usize)?;
        slot.next = free;
        self.free = i;
        Some(slot.pkt)
    }

    #[inline]
    pub(super) fn pkt(&self, i: u32) -> Option<&Packet> {
        self.slots.get(i as usize).map(|s| &s.pkt)
    }

    #[inline]
    pub(super) fn next(&self, i: u32) -> u32 {
        self.slots.get(i as usize).map_or(NIL, |s| s.next)
    }

    fn set_next(&mut self, i: u32, next: u32) {
        if let Some(s) = self.slots.get_mut(i as usize) {
            s.next = next;
        }
    }
}

/// One flow's FIFO in the slab, with its backlog in bytes (IP lengths).
#[derive(Debug, Clone, Copy)]
pub(super) struct Fifo {
    pub(super) head: u32,
    pub(super) tail: u32,
    pub(super) len: u32,
    pub(super) bytes: u64,
}

impl Default for Fifo {
    fn default() -> Self {
        Fifo {
            head: NIL,
            tail: NIL,
            len: 0,
            bytes: 0,
        }
    }
}

impl Fifo {
    #[inline]
    pub(super) fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub(super) fn push(&mut self, slab: &mut Slab, pkt: Packet) {
        let i = slab.alloc(pkt);
        if self.tail == NIL {
            self.head = i;
        } else {
            slab.set_next(self.tail, i);
        }
        self.tail = i;
        self.len += 1;
        self.bytes += pkt.len as u64;
    }

    pub(super) fn pop(&mut self, slab: &mut Slab) -> Option<Packet> {
        if self.head == NIL {
            return None;
        }
        let i = self.head;
        self.head = slab.next(i);
        if self.head == NIL {
            self.tail = NIL;
        }
        let p = slab.release(i)?;
        self.len -= 1;
        self.bytes -= p.len as u64;
        Some(p)
    }

    /// Removes slot `i`, whose predecessor in this FIFO is `prev` (`NIL`: `i` is the
    /// head).
    pub(super) fn unlink(&mut self, slab: &mut Slab, prev: u32, i: u32) -> Option<Packet> {
        let next = slab.next(i);
        if prev == NIL {
            self.head = next;
        } else {
            slab.set_next(prev, next);
        }
        if self.tail == i {
            self.tail = prev;
        }
        let p = slab.release(i)?;
        self.len -= 1;
        self.bytes -= p.len as u64;
        Some(p)
    }

    /// The packets from head to tail.
    pub(super) fn iter<'a>(&self, slab: &'a Slab) -> impl Iterator<Item = &'a Packet> + 'a {
        let mut i = self.head;
        std::iter::from_fn(move || {
            let p = slab.pkt(i)?;
            i = slab.next(i);
            Some(p)
        })
    }
}

/// Which accounting set a flow is in (sch_cake's `CAKE_SET_*`): it decides the sparse
/// and bulk flow counts of the tin and the per-host bulk counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FlowSet {
    /// Not in any rotation: the slot is free for the set-associative hash.
    None,
    /// In *new flows* (or in *old flows* with deficit left): a sparse flow.
    Sparse,
    /// Empty, counted as sparse, but already in the old (bulk) rotation.
    SparseWait,
    /// Backlogged and in the old rotation: counts towards its hosts' load.
    Bulk,
    /// Empty, kept in the decaying rotation until its COBALT state is at rest.
    Decaying,
}

/// The three rotations of a tin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Chain {
    New = 0,
    Old = 1,
    Decaying = 2,
}

/// A flow queue: its packets, DRR deficit, COBALT state and hosts.
#[derive(Debug, Clone, Copy)]
pub(super) struct Flow {
    pub(super) q: Fifo,
    pub(super) deficit: i64,
    pub(super) cvars: super::cobalt::CobaltVars,
    pub(super) srchost: u8,
    pub(super) dsthost: u8,
    pub(super) set: FlowSet,
    prev: u16,
    next: u16,
    chain: Option<Chain>,
}

impl Default for Flow {
    fn default() -> Self {
        Flow {
            q: Fifo::default(),
            deficit: 0,
            cvars: Default::default(),
            srchost: 0,
            dsthost: 0,
            set: FlowSet::None,
            prev: NIL16,
            next: NIL16,
            chain: None,
        }
    }
}

/// Head and tail of each rotation (flow indices within one tin).
#[derive(Debug, Clone, Copy)]
pub(super) struct Chains {
    ends: [(u16, u16); 3],
}

impl Default for Chains {
    fn default() -> Self {
        Chains {
            ends: [(NIL16, NIL16); 3],
        }
    }
}

impl Chains {
    #[inline]
    pub(super) fn front(&self, c: Chain) -> Option<usize> {
        let h = self.ends[c as usize].0;
        (h != NIL16).then_some(h as usize)
    }

    #[inline]
    pub(super) fn is_empty(&self, c: Chain) -> bool {
        self.front(c).is_none()
    }

    /// Takes flow `i` out of whatever rotation it is in.
    pub(super) fn remove(&mut self, flows: &mut [Flow], i: usize) {
        let Some(f) = flows.get(i) else { return };
        let Some(c) = f.chain else { return };
        let (prev, next) = (f.prev, f.next);
        match flows.get_mut(prev as usize) {
            Some(p) => p.next = next,
            None => self.ends[c as usize].0 = next,
        }
        match flows.get_mut(next as usize) {
            Some(n) => n.prev = prev,
            None => self.ends[c as usize].1 = prev,
        }
        if let Some(f) = flows.get_mut(i) {
            f.prev = NIL16;
            f.next = NIL16;
            f.chain = None;
        }
    }

    /// Moves flow `i` to the tail of rotation `c` (Linux `list_move_tail`).
    pub(super) fn move_tail(&mut self, flows: &mut [Flow], i: usize, c: Chain) {
        self.remove(flows, i);
        let tail = self.ends[c as usize].1;
        let Some(f) = flows.get_mut(i) else { return };
        f.prev = tail;
        f.next = NIL16;
        f.chain = Some(c);
        match flows.get_mut(tail as usize) {
            Some(t) => t.next = i as u16,
            None => self.ends[c as usize].0 = i as u16,
        }
        self.ends[c as usize].1 = i as u16;
    }

    /// The flows of rotation `c`, head first.
    pub(super) fn iter<'a>(&self, flows: &'a [Flow], c: Chain) -> impl Iterator<Item = usize> + 'a {
        let mut i = self.ends[c as usize].0;
        std::iter::from_fn(move || {
            let f = flows.get(i as usize)?;
            let cur = i as usize;
            i = f.next;
            Some(cur)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PacketKind;

    fn p(seq: u64) -> Packet {
        Packet::new(PacketKind::Ack, 1, 40, seq, 0)
    }

    #[test]
    fn fifo_push_pop_unlink_and_slot_reuse() {
        let mut slab = Slab::with_capacity(2);
        let mut q = Fifo::default();
        for s in 0..4 {
            q.push(&mut slab, p(s));
        }
        // Unlink the second (predecessor = head) and the tail.
        let head = q.head;
        let second = slab.next(head);
        assert_eq!(q.unlink(&mut slab, head, second).unwrap().seq, 1);
        let third = slab.next(head);
        assert_eq!(q.unlink(&mut slab, third, q.tail).unwrap().seq, 3);
        assert_eq!(q.iter(&slab).map(|p| p.seq).collect::<Vec<_>>(), [0, 2]);
        assert_eq!((q.len, q.bytes), (2, 80));
        // Freed slots are reused: no growth.
        q.push(&mut slab, p(4));
        q.push(&mut slab, p(5));
        assert_eq!(slab.slots.len(), 4);
        let out: Vec<u64> = std::iter::from_fn(|| q.pop(&mut slab))
            .map(|p| p.seq)
            .collect();
        assert_eq!(out, [0, 2, 4, 5]);
        assert!(q.is_empty() && q.head == NIL && q.tail == NIL);
    }

    #[test]
    fn chains_move_flows_between_rotations() {
        let mut flows = vec![Flow::default(); 4];
        let mut c = Chains::default();
        for i in 0..3 {
            c.move_tail(&mut flows, i, Chain::New);
        }
        c.move_tail(&mut flows, 1, Chain::Decaying);
        c.move_tail(&mut flows, 0, Chain::Old);
        assert_eq!(c.iter(&flows, Chain::New).collect::<Vec<_>>(), [2]);
        assert_eq!(c.iter(&flows, Chain::Old).collect::<Vec<_>>(), [0]);
        c.move_tail(&mut flows, 1, Chain::New);
        assert_eq!(c.iter(&flows, Chain::New).collect::<Vec<_>>(), [2, 1]);
        assert!(c.is_empty(Chain::Decaying));
        c.remove(&mut flows, 2);
        c.remove(&mut flows, 2);
        assert_eq!(c.front(Chain::New), Some(1));
    }
}
