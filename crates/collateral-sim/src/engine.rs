//! The discrete-event core: integer-nanosecond time and a binary heap of plain-data events.
//!
//! Events are ordered by `(time, sequence number)`, the sequence number being the order in
//! which they were scheduled, so ties are broken the same way on every run; the links'
//! deliveries come after the other events due at the same instant, down before up (see
//! [`Events`]). Packets are
//! not events: components (links, timers, sources) schedule one wake-up for themselves,
//! so the heap holds a handful of entries however many packets are in flight (the
//! htsim design).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use collateral_queue::Nanos;

/// What woke up. Plain data: an index into the simulation's components.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wake {
    /// A bottleneck direction (0 = down, 1 = up) has a delivery due.
    Link(u8),
    /// A TCP flow's retransmission timer.
    Rto(u32),
    /// A TCP flow's delayed-ACK timer.
    DelAck(u32),
    /// A paced TCP sender's next departure is due.
    Pace(u32),
    /// A TCP flow's extra-delay line has a delivery due.
    Extra(u32),
    /// A TCP flow opens its connection.
    TcpStart(u32),
    /// A CBR flow sends its next packet.
    CbrSend(u32),
    /// A bulk TCP flow's application stops writing.
    TcpStop(u32),
    /// A web user's think time is over: the next page.
    Think(u32),
    /// A web connection's set-up timer (SYN or request retransmission).
    Setup(u32),
    /// The video call: 0 = the sender's next frame, 1 = the receiver's feedback timer.
    Media(u32),
    /// The responsiveness test: 0 = the end of a ramp interval, 1 = the next foreign
    /// probe, `2 + s` = foreign probe slot `s`'s set-up timer.
    Resp(u32),
}

/// Bits of an entry's tie-breaker that hold the packed [`Wake`]; the rest, above them,
/// hold the scheduling sequence number (2⁴⁰ schedules: never wraps in a trial).
const WAKE_BITS: u32 = 24;
/// Bits of a packed wake's index (below its 4-bit kind).
const INDEX_BITS: u32 = 20;
// Every index a wake can carry (flows, web slots and users) fits.
const _: () = assert!(
    crate::limits::MAX_TCP_FLOWS + crate::limits::MAX_WEB_SLOTS + crate::limits::MAX_CBR_FLOWS
        < 1 << INDEX_BITS
);

impl Wake {
    /// The wake as 24 bits: its kind above a 20-bit index.
    #[inline]
    fn pack(self) -> u64 {
        let (kind, i) = match self {
            Wake::Link(d) => (0, d as u32),
            Wake::Rto(i) => (1, i),
            Wake::DelAck(i) => (2, i),
            Wake::Pace(i) => (3, i),
            Wake::Extra(i) => (4, i),
            Wake::TcpStart(i) => (5, i),
            Wake::CbrSend(i) => (6, i),
            Wake::TcpStop(i) => (7, i),
            Wake::Think(i) => (8, i),
            Wake::Setup(i) => (9, i),
            Wake::Media(i) => (10, i),
            Wake::Resp(i) => (11, i),
        };
        debug_assert!(i < 1 << INDEX_BITS);
        ((kind as u64) << INDEX_BITS) | i as u64
    }

    #[inline]
    fn unpack(code: u64) -> Wake {
        let i = (code & ((1 << INDEX_BITS) - 1)) as u32;
        match (code >> INDEX_BITS) & 0xf {
            0 => Wake::Link(i as u8),
            1 => Wake::Rto(i),
            2 => Wake::DelAck(i),
            3 => Wake::Pace(i),
            4 => Wake::Extra(i),
            5 => Wake::TcpStart(i),
            6 => Wake::CbrSend(i),
            7 => Wake::TcpStop(i),
            8 => Wake::Think(i),
            9 => Wake::Setup(i),
            10 => Wake::Media(i),
            _ => Wake::Resp(i),
        }
    }
}

/// A heap entry in 16 bytes (half the size of a `u128` key beside a `Wake`: the heap's
/// moves are most of its cost).
#[derive(Debug, Clone, Copy)]
struct Entry {
    time: Nanos,
    /// `seq << WAKE_BITS | wake`: orders equal times by scheduling order.
    tie: u64,
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        (self.time, self.tie) == (o.time, o.tie)
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    /// Reversed: `BinaryHeap` is a max-heap and we want the earliest first.
    #[inline]
    fn cmp(&self, o: &Self) -> Ordering {
        (o.time, o.tie).cmp(&(self.time, self.tie))
    }
}

/// Components woken so often that they keep their one pending wake-up beside the heap
/// instead of in it: the two bottleneck directions, about one wake-up per packet.
pub const SLOTS: usize = 2;

/// The event list. One per simulation (no global state), so many simulations can run in
/// one process and on several threads.
///
/// Besides the heap, each of the [`SLOTS`] components has a slot for its single pending
/// wake-up ([`Wake::Link`]`(k)` for slot `k`): setting it is a store and popping compares
/// the slots with the heap's top, where a heap entry would cost a sift up and a sift
/// down. At equal times the heap's events come first, then the slots in index order: a
/// timer due at the instant a packet arrives fires before the packet is handed over.
/// That order does not depend on when a slot was last set, so a link may skip wake-ups
/// that deliver nothing to a host that acts on it (the simulator's CBR arrivals) without
/// changing the order of anything else.
#[derive(Debug)]
pub struct Events {
    heap: BinaryHeap<Entry>,
    slots: [Entry; SLOTS],
    seq: u64,
    /// Events popped, stale ones included: the figure the benchmark reports.
    pub popped: u64,
}

impl Default for Events {
    fn default() -> Self {
        Self::new()
    }
}

/// A slot's tie-breaker (plus its index): after every heap entry's, whose sequence
/// number stays below 2⁴⁰.
const SLOT_TIE: u64 = u64::MAX - SLOTS as u64;

/// An empty slot: after every event.
const EMPTY: Entry = Entry {
    time: NEVER,
    tie: u64::MAX,
};

impl Events {
    pub fn new() -> Self {
        Events {
            heap: BinaryHeap::with_capacity(64),
            slots: [EMPTY; SLOTS],
            seq: 0,
            popped: 0,
        }
    }

    #[inline]
    fn entry(&mut self, time: Nanos, wake: Wake) -> Entry {
        let tie = (self.seq << WAKE_BITS) | wake.pack();
        self.seq += 1;
        Entry { time, tie }
    }

    #[inline]
    pub fn schedule(&mut self, time: Nanos, wake: Wake) {
        let e = self.entry(time, wake);
        self.heap.push(e);
    }

    /// Sets slot `k`'s wake-up ([`Wake::Link`]`(k)`) to `time`, replacing the one pending.
    #[inline]
    pub fn set_slot(&mut self, k: usize, time: Nanos) {
        self.slots[k] = Entry {
            time,
            tie: SLOT_TIE + k as u64,
        };
    }

    /// When slot `k` fires next ([`NEVER`]: not set).
    #[inline]
    pub fn slot_time(&self, k: usize) -> Nanos {
        self.slots[k].time
    }

    /// The next event, if any, with its time.
    #[inline]
    pub fn pop(&mut self) -> Option<(Nanos, Wake)> {
        self.pop_until(NEVER - 1)
    }

    /// The next event if it is due at or before `end`.
    #[inline]
    pub fn pop_until(&mut self, end: Nanos) -> Option<(Nanos, Wake)> {
        // The earliest slot (`Ord` is reversed: the greater entry is the earlier one).
        let mut k = 0;
        for j in 1..SLOTS {
            if self.slots[j] > self.slots[k] {
                k = j;
            }
        }
        let e = match self.heap.peek() {
            Some(top) if *top > self.slots[k] => {
                if top.time > end {
                    return None;
                }
                let e = self.heap.pop()?;
                (e.time, Wake::unpack(e.tie))
            }
            _ => {
                let t = self.slots[k].time;
                if t > end {
                    return None;
                }
                self.slots[k] = EMPTY;
                (t, Wake::Link(k as u8))
            }
        };
        self.popped += 1;
        Some(e)
    }

    /// When the next event is due ([`None`]: nothing pending).
    #[inline]
    pub fn peek_time(&self) -> Option<Nanos> {
        let slot = self.slots.iter().map(|e| e.time).min().unwrap_or(NEVER);
        let t = self.heap.peek().map_or(slot, |e| e.time.min(slot));
        (t != NEVER).then_some(t)
    }

    pub fn pending(&self) -> usize {
        self.heap.len() + self.slots.iter().filter(|e| e.time != NEVER).count()
    }
}

/// A component's single pending wake-up, re-armed lazily.
///
/// Timers move later far more often than they fire (an RTO is restarted on every ACK), so
/// instead of removing events from the heap we keep the *wanted* deadline here and leave
/// the old event in place: when it fires early it is re-armed for the deadline, and when
/// it no longer matches any wanted time it is ignored.
#[derive(Debug, Clone, Copy)]
pub struct Alarm {
    /// When the component wants to be woken (`NEVER` = not at all).
    pub deadline: Nanos,
    /// When the event already in the heap fires (`NEVER` = none pending).
    pub pending: Nanos,
}

pub use collateral_model::units::NEVER;

impl Default for Alarm {
    fn default() -> Self {
        Alarm {
            deadline: NEVER,
            pending: NEVER,
        }
    }
}

impl Alarm {
    /// Sets the deadline, scheduling an event only if none is pending early enough.
    #[inline]
    pub fn set(&mut self, deadline: Nanos, events: &mut Events, wake: Wake) {
        self.deadline = deadline;
        if deadline < self.pending {
            self.pending = deadline;
            events.schedule(deadline, wake);
        }
    }

    #[inline]
    pub fn clear(&mut self) {
        self.deadline = NEVER;
    }

    /// Called when an event for this alarm fires at `now`. Returns true if the deadline
    /// is due; re-arms the alarm if the deadline moved later; ignores stale events.
    #[inline]
    pub fn fire(&mut self, now: Nanos, events: &mut Events, wake: Wake) -> bool {
        if now != self.pending {
            return false; // superseded by an earlier event that has already run
        }
        self.pending = NEVER;
        if self.deadline == NEVER {
            return false;
        }
        if self.deadline <= now {
            self.deadline = NEVER;
            return true;
        }
        let d = self.deadline;
        self.set(d, events, wake);
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wakes_survive_packing() {
        let top = (1 << INDEX_BITS) - 1;
        for w in [
            Wake::Link(1),
            Wake::Rto(top),
            Wake::DelAck(3),
            Wake::Pace(4),
            Wake::Extra(5),
            Wake::TcpStart(6),
            Wake::CbrSend(7),
            Wake::TcpStop(8),
            Wake::Think(9),
            Wake::Setup(top),
        ] {
            assert_eq!(Wake::unpack(w.pack()), w);
        }
    }

    #[test]
    fn pops_in_time_then_schedule_order() {
        let mut ev = Events::new();
        ev.schedule(5, Wake::Rto(0));
        ev.schedule(3, Wake::Rto(1));
        ev.schedule(5, Wake::Rto(2));
        ev.schedule(3, Wake::Rto(3));
        let order: Vec<_> = std::iter::from_fn(|| ev.pop()).collect();
        assert_eq!(
            order,
            vec![
                (3, Wake::Rto(1)),
                (3, Wake::Rto(3)),
                (5, Wake::Rto(0)),
                (5, Wake::Rto(2))
            ]
        );
    }

    #[test]
    fn slots_pop_after_the_heap_events_of_their_instant_in_index_order() {
        let plan: [(Nanos, Wake); 9] = [
            (5, Wake::Link(1)),
            (5, Wake::Rto(0)),
            (3, Wake::Link(0)),
            (5, Wake::CbrSend(2)),
            (3, Wake::Rto(3)),
            (7, Wake::Link(0)), // replaces (3, Link(0))
            (1, Wake::DelAck(4)),
            (7, Wake::Pace(5)),
            (5, Wake::Link(1)), // set again at the same time: still after the heap's
        ];
        let mut slotted = Events::new();
        for &(t, w) in &plan {
            match w {
                Wake::Link(k) => slotted.set_slot(k as usize, t),
                _ => slotted.schedule(t, w),
            }
        }
        let from_slots: Vec<_> = std::iter::from_fn(|| slotted.pop()).collect();
        assert_eq!(
            from_slots,
            vec![
                (1, Wake::DelAck(4)),
                (3, Wake::Rto(3)),
                (5, Wake::Rto(0)),
                (5, Wake::CbrSend(2)),
                (5, Wake::Link(1)),
                (7, Wake::Pace(5)),
                (7, Wake::Link(0)),
            ]
        );
        let mut both = Events::new();
        both.set_slot(1, 4);
        both.set_slot(0, 4);
        assert_eq!(both.pop(), Some((4, Wake::Link(0))), "down before up");
        assert_eq!(both.pop(), Some((4, Wake::Link(1))));
        assert_eq!(slotted.pending(), 0);
        slotted.set_slot(1, 9);
        assert_eq!((slotted.peek_time(), slotted.pop_until(8)), (Some(9), None));
    }

    #[test]
    fn alarm_rearms_when_deadline_moves_later_and_skips_stale() {
        let mut ev = Events::new();
        let mut a = Alarm::default();
        let w = Wake::Rto(0);
        a.set(10, &mut ev, w);
        a.set(20, &mut ev, w); // later: no new event
        assert_eq!(ev.pending(), 1);
        let (t, _) = ev.pop().unwrap();
        assert_eq!(t, 10);
        assert!(
            !a.fire(t, &mut ev, w),
            "deadline moved to 20, not due at 10"
        );
        let (t, _) = ev.pop().unwrap();
        assert_eq!(t, 20);
        assert!(a.fire(t, &mut ev, w));
        // An earlier deadline schedules a second event; the old one becomes stale.
        a.set(50, &mut ev, w);
        a.set(30, &mut ev, w);
        let (t, _) = ev.pop().unwrap();
        assert_eq!(t, 30);
        assert!(a.fire(t, &mut ev, w));
        let (t, _) = ev.pop().unwrap();
        assert_eq!(t, 50);
        assert!(!a.fire(t, &mut ev, w), "stale event must be ignored");
    }
}
