//! The discrete-event core: integer-nanosecond time and a binary heap of plain-data events.
//!
//! Events are ordered by `(time, sequence number)`, the sequence number being the order in
//! which they were scheduled, so ties are broken the same way on every run. Packets are
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
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    /// `(time << 64) | seq`: one comparison orders by time, then scheduling order.
    key: u128,
    wake: Wake,
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.key == o.key
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
    fn cmp(&self, o: &Self) -> Ordering {
        o.key.cmp(&self.key)
    }
}

/// The event list. One per simulation (no global state), so many simulations can run in
/// one process and on several threads.
#[derive(Debug, Default)]
pub struct Events {
    heap: BinaryHeap<Entry>,
    seq: u64,
    /// Events popped, stale ones included: the figure the benchmark reports.
    pub popped: u64,
}

impl Events {
    pub fn new() -> Self {
        Events {
            heap: BinaryHeap::with_capacity(64),
            seq: 0,
            popped: 0,
        }
    }

    #[inline]
    pub fn schedule(&mut self, time: Nanos, wake: Wake) {
        let key = ((time as u128) << 64) | self.seq as u128;
        self.seq += 1;
        self.heap.push(Entry { key, wake });
    }

    /// The next event, if any, with its time.
    #[inline]
    pub fn pop(&mut self) -> Option<(Nanos, Wake)> {
        let e = self.heap.pop()?;
        self.popped += 1;
        Some(((e.key >> 64) as Nanos, e.wake))
    }

    /// The next event if it is due at or before `end`.
    #[inline]
    pub fn pop_until(&mut self, end: Nanos) -> Option<(Nanos, Wake)> {
        if self.peek_time()? > end {
            return None;
        }
        self.pop()
    }

    #[inline]
    pub fn peek_time(&self) -> Option<Nanos> {
        self.heap.peek().map(|e| (e.key >> 64) as Nanos)
    }

    pub fn pending(&self) -> usize {
        self.heap.len()
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

pub const NEVER: Nanos = Nanos::MAX;

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
