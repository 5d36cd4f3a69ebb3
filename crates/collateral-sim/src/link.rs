//! The simulator's side of a bottleneck direction: the shared [`Bottleneck`] (rate
//! clock, framing, queue, delay line, observation) fed from the hosts' access links.
//!
//! The link is simulated lazily (Mahimahi's "catch up to now" shape): packets entering it
//! are appended to an ingress list stamped with their arrival time, and the link is
//! advanced to a time `t` only when something must be known at `t`. Because a FIFO
//! server's departures depend only on earlier arrivals, advancing in arrival/completion
//! order gives exactly the same decisions as an eager simulation, but the link needs one
//! event per *delivered packet* and none for arrivals or transmission starts.

use std::collections::VecDeque;

use collateral_queue::{Nanos, Packet};

use crate::bottleneck::{Bottleneck, Rate};
use crate::engine::NEVER;
use crate::scenario::{Direction, Scenario};

/// One direction of the bottleneck, as the simulator drives it.
#[derive(Debug)]
pub struct Link {
    pub bottleneck: Bottleneck,
    ingress: VecDeque<Packet>,
}

impl Link {
    /// Direction `d` of the scenario, delivering through the far-side hosts' access links.
    pub fn new(sc: &Scenario, d: Direction) -> Result<Self, String> {
        let mut bottleneck =
            Bottleneck::new(sc, d, Some(Rate::new(sc.access_rate_bps)), sc.trace.queue)?;
        bottleneck.fix_departures_at_arrival();
        Ok(Link {
            bottleneck,
            ingress: VecDeque::with_capacity(16),
        })
    }

    /// A packet from host `host` reaches the bottleneck router at `at`. Arrivals from
    /// different hosts may be handed over slightly out of order (their access links
    /// differ), so insert in arrival order; almost always this is a push at the back.
    ///
    /// The arrival time and hosts are written into the packet where it is stored, not
    /// into the caller's copy: a copy read right after narrow stores to it stalls the
    /// CPU (failed store-to-load forwarding), which `perf annotate` showed as the
    /// hottest instruction of the simulator.
    #[inline]
    pub fn arrive(&mut self, pkt: Packet, at: Nanos, host: u8) {
        let i = if self.ingress.back().is_none_or(|b| b.arrived <= at) {
            self.ingress.push_back(pkt);
            self.ingress.len() - 1
        } else {
            let mut i = self.ingress.len();
            while i > 0 && self.ingress[i - 1].arrived > at {
                i -= 1;
            }
            self.ingress.insert(i, pkt);
            i
        };
        let p = &mut self.ingress[i];
        p.arrived = at;
        // Host `host` on one side talks to host `host` on the other.
        p.dst = host;
        p.src = host;
    }

    /// Processes every arrival, transmission start and completion up to and including
    /// `t`, in time order (a completion before an arrival at the same instant).
    pub fn advance(&mut self, t: Nanos) {
        let b = &mut self.bottleneck;
        if b.fixes_departures() {
            // No completion steps: only the arrivals, in order.
            while let Some(p) = self.ingress.front() {
                if p.arrived > t {
                    break;
                }
                b.arrive_from(p.arrived, p);
                self.ingress.pop_front();
            }
            return;
        }
        loop {
            let t_done = b.next_completion();
            let t_arr = self.ingress.front().map_or(NEVER, |p| p.arrived);
            if t_done <= t_arr && t_done <= t {
                b.complete(t_done);
            } else if t_arr <= t {
                // Read in place, then dropped (see `DelayLine::take`).
                b.arrive_from(t_arr, &self.ingress[0]);
                self.ingress.pop_front();
            } else {
                break;
            }
        }
    }

    /// The earliest time at which a packet may reach a host. Exact for drop-tail; for
    /// disciplines that drop at dequeue it is a lower bound (an early wake-up is harmless).
    pub fn next_delivery(&self) -> Nanos {
        let b = &self.bottleneck;
        let mut t = b.delay.next_release();
        if let Some(r) = b.tx_release() {
            t = t.min(r);
        } else {
            // Idle, possibly with a shaper holding queued packets until its wake-up.
            t = t.min(b.next_completion().saturating_add(b.delay.prop_ns));
            if let Some(pkt) = self.ingress.front() {
                // The last transmission ended before anything in the ingress arrived.
                t = t.min(
                    b.delay
                        .release_time(pkt, b.earliest_end(pkt.arrived, pkt.bytes())),
                );
            }
        }
        t
    }

    /// The lane of a packet that has reached its host by `t`, if any, for
    /// [`take_delivered`](Self::take_delivered).
    #[inline]
    pub fn delivered_lane(&self, t: Nanos) -> Option<usize> {
        self.bottleneck.released(t)
    }

    /// Takes the packet at the head of `lane`, which [`delivered_lane`] named.
    ///
    /// [`delivered_lane`]: Self::delivered_lane
    #[inline]
    pub fn take_delivered(&mut self, lane: usize) -> Packet {
        self.bottleneck.take_released(lane)
    }

    /// Packets inside the link (ingress, queued, in transmission, propagating).
    pub fn in_flight(&self) -> usize {
        self.ingress.len() + self.bottleneck.in_flight()
    }

    /// Calls `f` on every packet still inside the link.
    pub fn for_each_in_flight(&self, mut f: impl FnMut(&Packet)) {
        self.ingress.iter().for_each(&mut f);
        self.bottleneck.for_each_in_flight(f);
    }
}
