//! One direction of the bottleneck: access ingress, the queue discipline, the serialiser,
//! propagation, and the egress access links to the hosts on the far side.
//!
//! The link is simulated lazily (Mahimahi's "catch up to now" shape): packets entering it
//! are appended to an ingress list stamped with their arrival time, and the link is
//! advanced to a time `t` only when something must be known at `t`. Because a FIFO
//! server's departures depend only on earlier arrivals, advancing in arrival/completion
//! order gives exactly the same decisions as an eager simulation, but the link needs one
//! event per *delivered packet* and none for arrivals or transmission starts.

use std::collections::VecDeque;

use collateral_queue::{AnyQueue, Discipline, Framing, Nanos, Packet};
use rand::RngExt;
use rand_pcg::Pcg64Mcg;

use crate::engine::NEVER;
use crate::metrics::Meter;

/// Serialisation time of `len` bytes at `rate_bps`, rounded up to a whole nanosecond so
/// the link never exceeds its rate.
#[inline]
pub fn ser_ns(len: u32, rate_bps: u64) -> Nanos {
    if rate_bps == 0 {
        return 0;
    }
    (len as u64 * 8_000_000_000).div_ceil(rate_bps)
}

/// A line rate with its nanoseconds-per-byte precomputed as a 64.64 fixed-point number,
/// so the per-packet serialisation time is multiplications instead of a division. The
/// estimate is corrected upwards to exactly [`ser_ns`]'s value.
#[derive(Debug, Clone, Copy)]
pub struct Rate {
    pub bps: u64,
    ns_per_byte: u128,
}

impl Rate {
    pub fn new(bps: u64) -> Self {
        let ns_per_byte = if bps == 0 {
            0
        } else {
            ((8_000_000_000u128) << 64) / bps as u128
        };
        Rate { bps, ns_per_byte }
    }

    #[inline]
    pub fn ser(&self, len: u32) -> Nanos {
        // The truncated factor makes q at most 1 below the exact floor; step up to the
        // ceiling (q·rate ≥ len·8e9), at most twice.
        let mut q = ((len as u128 * self.ns_per_byte) >> 64) as u64;
        let bits = len as u64 * 8_000_000_000;
        while self.bps > 0 && q * self.bps < bits {
            q += 1;
        }
        q
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_point_rate_matches_exact_division() {
        for bps in [
            1,
            56_000,
            256_000,
            1_000_000,
            1_500_000,
            24_000_000,
            1_000_000_000,
            3_333_333,
        ] {
            let r = Rate::new(bps);
            for len in [1u32, 40, 52, 186, 200, 1500, 9000, 65535] {
                let exact = ser_ns(len, bps);
                let fast = r.ser(len);
                assert_eq!(fast, exact, "{bps} bit/s, {len} B");
            }
        }
        // 1500 B at 1.5 Mbit/s is exactly 8 ms.
        assert_eq!(Rate::new(1_500_000).ser(1500), 8_000_000);
    }
}

/// A constant-delay FIFO towards one host: propagation, then that host's access link.
#[derive(Debug, Clone)]
pub struct Pipe {
    q: VecDeque<(Nanos, Packet)>,
    /// When the egress access link finishes its current packet.
    egress_busy: Nanos,
}

impl Pipe {
    fn new() -> Self {
        Pipe {
            q: VecDeque::with_capacity(256),
            egress_busy: 0,
        }
    }
}

/// Counters a link keeps for the summary.
#[derive(Debug, Clone, Default)]
pub struct LinkStats {
    /// Packets handed to the link by the hosts' access links.
    pub arrivals: u64,
    pub drops: u64,
    pub wire_losses: u64,
    pub max_bytes: u64,
    pub max_packets: u32,
    pub delivered: u64,
}

/// One direction of the bottleneck.
#[derive(Debug)]
pub struct Link {
    pub rate: Rate,
    /// What each packet adds on the wire (serialisation only; queues count IP lengths).
    pub framing: Framing,
    pub prop_ns: Nanos,
    pub access: Rate,
    pub queue: AnyQueue,
    /// Probability that a packet is lost on the wire after serialisation (tests).
    pub loss_rate: f64,
    rng: Pcg64Mcg,
    ingress: VecDeque<Packet>,
    in_tx: Option<Packet>,
    busy_until: Nanos,
    pipes: [Pipe; 2],
    scratch: Vec<Packet>,
    /// Drops since the owner last drained them: `(time, packet, on_wire)`.
    pub dropped: Vec<(Nanos, Packet, bool)>,
    /// Occupancy trace `(time, bytes, packets)` on every change, when enabled.
    pub trace: Option<Vec<(Nanos, u64, u32)>>,
    pub stats: LinkStats,
    /// Per-class arrivals, drops, throughput and latency, per time bin and phase.
    pub meter: Meter,
}

impl Link {
    pub fn new(
        rate_bps: u64,
        prop_ns: Nanos,
        access_bps: u64,
        queue: AnyQueue,
        loss_rate: f64,
        rng: Pcg64Mcg,
        trace: bool,
        meter: Meter,
        framing: Framing,
    ) -> Self {
        Link {
            rate: Rate::new(rate_bps),
            framing,
            prop_ns,
            access: Rate::new(access_bps),
            queue,
            loss_rate,
            rng,
            ingress: VecDeque::with_capacity(64),
            in_tx: None,
            busy_until: 0,
            pipes: [Pipe::new(), Pipe::new()],
            scratch: Vec::with_capacity(8),
            dropped: Vec::with_capacity(8),
            trace: trace.then(Vec::new),
            stats: LinkStats::default(),
            meter,
        }
    }

    /// A packet reaches the bottleneck router at `pkt.arrived`. Arrivals from different
    /// hosts may be handed over slightly out of order (their access links differ), so
    /// insert in arrival order; almost always this is a push at the back.
    #[inline]
    pub fn arrive(&mut self, pkt: Packet) {
        self.stats.arrivals += 1;
        if self.ingress.back().is_none_or(|b| b.arrived <= pkt.arrived) {
            self.ingress.push_back(pkt);
            return;
        }
        let mut i = self.ingress.len();
        while i > 0 && self.ingress[i - 1].arrived > pkt.arrived {
            i -= 1;
        }
        self.ingress.insert(i, pkt);
    }

    /// Processes every arrival, transmission start and completion up to and including
    /// `t`, in time order (a completion before an arrival at the same instant).
    pub fn advance(&mut self, t: Nanos) {
        loop {
            let t_done = if self.in_tx.is_some() {
                self.busy_until
            } else {
                NEVER
            };
            let t_arr = self.ingress.front().map_or(NEVER, |p| p.arrived);
            if t_done <= t_arr && t_done <= t {
                self.complete(t_done);
            } else if t_arr <= t {
                let pkt = self.ingress.pop_front().unwrap();
                self.enqueue(t_arr, pkt);
            } else {
                break;
            }
        }
    }

    #[inline]
    fn enqueue(&mut self, now: Nanos, pkt: Packet) {
        self.meter.on_arrival(now, &pkt);
        self.queue.enqueue(now, pkt, &mut self.scratch);
        self.note_drops(now);
        self.note_occupancy(now);
        if self.in_tx.is_none() {
            self.start_next(now);
        }
    }

    #[inline]
    fn complete(&mut self, now: Nanos) {
        let pkt = self.in_tx.take().unwrap();
        self.queue.transmit_done(now);
        self.meter.on_departure(now, &pkt);
        if self.loss_rate > 0.0 && self.rng.random::<f64>() < self.loss_rate {
            self.stats.wire_losses += 1;
            self.dropped.push((now, pkt, true));
        } else {
            let deliver = self.delivery_time(&pkt, now);
            let pipe = &mut self.pipes[Self::pipe_of(&pkt)];
            pipe.egress_busy = deliver;
            pipe.q.push_back((deliver, pkt));
        }
        self.start_next(now);
        self.note_occupancy(now);
    }

    #[inline]
    fn start_next(&mut self, now: Nanos) {
        if let Some(pkt) = self.queue.dequeue(now, &mut self.scratch) {
            self.busy_until = now + self.wire_time(pkt.len);
            self.in_tx = Some(pkt);
        }
        self.note_drops(now);
    }

    /// Serialisation time at the bottleneck of an IP packet of `len` bytes.
    #[inline]
    pub fn wire_time(&self, len: u32) -> Nanos {
        self.rate.ser(self.framing.wire_bytes(len))
    }

    /// Which far-side host a packet goes to (the dumbbell has two per side).
    #[inline]
    fn pipe_of(pkt: &Packet) -> usize {
        pkt.dst as usize
    }

    /// When a packet whose serialisation ends at `done` reaches its host: propagation,
    /// then the egress access link (a FIFO per host).
    #[inline]
    fn delivery_time(&self, pkt: &Packet, done: Nanos) -> Nanos {
        let pipe = &self.pipes[Self::pipe_of(pkt)];
        (done + self.prop_ns).max(pipe.egress_busy) + self.access.ser(pkt.len)
    }

    #[inline]
    fn note_drops(&mut self, now: Nanos) {
        for pkt in self.scratch.drain(..) {
            self.meter.on_drop(now, &pkt);
            self.stats.drops += 1;
            self.dropped.push((now, pkt, false));
        }
    }

    #[inline]
    fn note_occupancy(&mut self, now: Nanos) {
        let b = self.queue.bytes();
        let p = self.queue.packets();
        self.stats.max_bytes = self.stats.max_bytes.max(b);
        self.stats.max_packets = self.stats.max_packets.max(p);
        if let Some(tr) = &mut self.trace {
            if tr.last().is_none_or(|&(_, lb, lp)| lb != b || lp != p) {
                tr.push((now, b, p));
            }
        }
    }

    /// The earliest time at which a packet may reach a host. Exact for drop-tail; for
    /// disciplines that drop at dequeue it is a lower bound (an early wake-up is harmless).
    pub fn next_delivery(&self) -> Nanos {
        let mut t = NEVER;
        for p in &self.pipes {
            if let Some(&(d, _)) = p.q.front() {
                t = t.min(d);
            }
        }
        if let Some(pkt) = &self.in_tx {
            t = t.min(self.delivery_time(pkt, self.busy_until));
        } else if let Some(pkt) = self.ingress.front() {
            let start = pkt.arrived.max(self.busy_until);
            t = t.min(self.delivery_time(pkt, start + self.wire_time(pkt.len)));
        }
        t
    }

    /// Pops one packet that has reached its host by `t`, if any.
    #[inline]
    pub fn pop_delivered(&mut self, t: Nanos) -> Option<Packet> {
        for p in &mut self.pipes {
            if let Some(&(d, _)) = p.q.front() {
                if d <= t {
                    self.stats.delivered += 1;
                    return p.q.pop_front().map(|(_, pkt)| pkt);
                }
            }
        }
        None
    }

    /// Packets inside the link (ingress, queued, in transmission, propagating).
    pub fn in_flight(&self) -> usize {
        self.ingress.len()
            + self.queue.waiting()
            + self.in_tx.is_some() as usize
            + self.pipes.iter().map(|p| p.q.len()).sum::<usize>()
    }

    /// Calls `f` on every packet still inside the link.
    pub fn for_each_in_flight(&self, mut f: impl FnMut(&Packet)) {
        self.ingress.iter().for_each(&mut f);
        self.queue.visit(&mut f);
        if let Some(p) = &self.in_tx {
            f(p);
        }
        for pipe in &self.pipes {
            pipe.q.iter().for_each(|(_, p)| f(p));
        }
    }
}
