//! The propagation delay line after the bottleneck: a constant delay (plus a delay that
//! changes over time, where the scenario has one), then, in the simulator, the access
//! link of the host on the far side.

use std::collections::VecDeque;

use collateral_queue::{Nanos, Packet};

use crate::path_delay::PathDelay;
use crate::rate::Rate;
use crate::units::NEVER;

/// A packet in the delay line with its release time; the packet first, so that it is
/// read whole from the start of its slot.
#[derive(Debug, Clone, Copy)]
#[repr(C)]
struct Held {
    pkt: Packet,
    release: Nanos,
}

/// Propagation: a constant delay after serialisation, then, in the simulator, the
/// access link of the host on the far side (a FIFO serialiser per host). The testbed's
/// far side is a real veth, so its delay line has no egress serialiser.
#[derive(Debug, Clone)]
pub struct DelayLine {
    pub prop_ns: Nanos,
    /// The far-side hosts' access links (a zero rate: none).
    egress: Rate,
    /// One lane per far-side host (`Packet::dst`); each a FIFO of packets with their
    /// release times.
    lanes: [VecDeque<Held>; 2],
    /// When each host's egress link finishes its current packet.
    egress_busy: [Nanos; 2],
    /// Extra delay that changes over time (`crate::path_delay`), if any.
    path: Option<PathDelay>,
}

impl DelayLine {
    pub fn new(prop_ns: Nanos, egress: Option<Rate>) -> Self {
        DelayLine {
            prop_ns,
            egress: egress.unwrap_or(Rate::new(0)),
            lanes: [VecDeque::with_capacity(16), VecDeque::with_capacity(16)],
            egress_busy: [0; 2],
            path: None,
        }
    }

    /// With an extra delay that changes over time.
    pub fn with_path(mut self, path: Option<PathDelay>) -> Self {
        self.path = path;
        self
    }

    /// When a packet whose serialisation ends at `done` is released to its host.
    #[inline]
    pub fn release_time(&self, pkt: &Packet, done: Nanos) -> Nanos {
        // Without an egress link `egress_busy` is the lane's previous release, never
        // later than this one (serialisation ends in order, and a path delay's arrivals
        // never decrease with it): the max changes nothing.
        // A link whose delivery trace has ended (`once`) ends nothing: NEVER stays NEVER.
        if done == NEVER {
            return NEVER;
        }
        let at = match &self.path {
            Some(p) => p.arrival(done),
            None => done,
        };
        (at + self.prop_ns).max(self.egress_busy[Self::lane(pkt)]) + self.egress.ser(pkt.bytes())
    }

    #[inline]
    fn lane(pkt: &Packet) -> usize {
        (pkt.dst & 1) as usize
    }

    #[inline]
    pub fn push(&mut self, done: Nanos, pkt: Packet) {
        self.push_at(self.release_time(&pkt, done), pkt);
    }

    /// [`push`](Self::push) with the release time already computed by `release_time`.
    #[inline]
    pub(crate) fn push_at(&mut self, t: Nanos, pkt: Packet) {
        let l = Self::lane(&pkt);
        self.egress_busy[l] = t;
        self.lanes[l].push_back(Held { pkt, release: t });
    }

    /// The earliest release among the packets in the line.
    #[inline]
    pub fn next_release(&self) -> Nanos {
        self.lane_release(0).min(self.lane_release(1))
    }

    /// The lane of a packet released by `t`, if any (lane 0 first).
    #[inline]
    pub fn released(&self, t: Nanos) -> Option<usize> {
        (0..2).find(|&l| self.lanes[l].front().is_some_and(|h| h.release <= t))
    }

    /// When the packet at the head of lane `l` is released ([`NEVER`]: the lane is empty).
    #[inline]
    pub fn lane_release(&self, l: usize) -> Nanos {
        self.lanes[l].front().map_or(NEVER, |h| h.release)
    }

    /// One packet released by `t`, if any (lane 0 first), with its release time.
    #[inline]
    pub fn pop_released(&mut self, t: Nanos) -> Option<(Nanos, Packet)> {
        let l = self.released(t)?;
        let release = self.lanes[l][0].release;
        Some((release, self.take(l)))
    }

    /// The packet at the head of lane `l` (which [`released`](Self::released) named),
    /// copied out by index and then dropped from the lane. Not as an `Option<Packet>`:
    /// that is copied around its niche byte in pieces, which the next 16-byte read of
    /// the packet cannot forward from (a stall on every delivery).
    #[inline]
    pub fn take(&mut self, l: usize) -> Packet {
        let pkt = self.lanes[l][0].pkt;
        self.lanes[l].pop_front();
        pkt
    }

    pub fn len(&self) -> usize {
        self.lanes.iter().map(VecDeque::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn iter(&self) -> impl Iterator<Item = &Packet> {
        self.lanes.iter().flatten().map(|h| &h.pkt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delay_line_adds_propagation_then_the_hosts_access_link() {
        use collateral_queue::PacketKind;
        let mut d = DelayLine::new(50_000_000, Some(Rate::new(1_000_000_000)));
        let mut a = Packet::new(PacketKind::Data, 0, 1500, 0, 0);
        let mut b = a;
        a.dst = 0;
        b.dst = 0;
        // 1500 B at 1 Gbit/s = 12 µs: released 50 ms + 12 µs after serialisation.
        d.push(8_000_000, a);
        // The second leaves serialisation 1 µs later but waits for the host's link.
        d.push(8_001_000, b);
        assert_eq!(d.next_release(), 58_012_000);
        assert_eq!(d.pop_released(58_011_999), None);
        assert_eq!(d.pop_released(58_012_000).unwrap().0, 58_012_000);
        assert_eq!(d.pop_released(NEVER).unwrap().0, 58_024_000);
        // Without an egress link (the testbed), only propagation.
        let mut d = DelayLine::new(50_000_000, None);
        d.push(8_000_000, a);
        assert_eq!(d.next_release(), 58_000_000);
    }
}
