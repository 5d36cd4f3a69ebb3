//! The simulator's side of a bottleneck direction: the shared [`Bottleneck`] (rate
//! clock, framing, queue, delay line, observation) fed from the hosts' access links.
//!
//! The link is simulated lazily (Mahimahi's "catch up to now" shape): packets entering it
//! are appended to an ingress list stamped with their arrival time, and the link is
//! advanced to a time `t` only when something must be known at `t`. Because a FIFO
//! server's departures depend only on earlier arrivals, advancing in arrival/completion
//! order gives exactly the same decisions as an eager simulation, but the link needs one
//! event per *delivered packet* and none for arrivals or transmission starts.
//!
//! Three shortcuts keep it there: a drop-tail queue fixes each packet's departure when
//! it arrives (`Bottleneck`'s `FifoClock`); a direction's CBR flow is a one-packet side
//! ingress whose next packet is drawn when the last one enters the queue, so it needs
//! no send events either; and when the other host sends only through that side, a
//! host's packet is taken by the queue as it is sent ([`Link::arrive_now`]), without
//! waiting in the ingress.

use std::collections::VecDeque;

use collateral_queue::{Nanos, Packet};

use crate::bottleneck::Bottleneck;
use crate::engine::NEVER;
use crate::rate::Rate;
use crate::scenario::{Direction, Scenario};

/// One direction of the bottleneck, as the simulator drives it.
#[derive(Debug)]
pub struct Link {
    pub bottleneck: Bottleneck,
    ingress: VecDeque<Packet>,
    /// A second ingress of one packet: the next packet of a source whose departures
    /// are known in advance (the direction's CBR flow), drawn when the one before it
    /// enters the queue rather than by an event of its own. Valid when `has_side`.
    side: Packet,
    has_side: bool,
    /// Host 1's lane of the delay line (host 1 only has CBR flows, whose receivers only
    /// note when each packet arrives) is emptied by the simulator as packets enter it
    /// (`Simulation::take_cbr_arrivals`): no wake-up is needed for them while host 0
    /// has packets on the way. Drop-tail links only, where `next_delivery` is exact.
    cbr_taken: bool,
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
            side: Packet::new(collateral_queue::PacketKind::Cbr, 0, 0, 0, 0),
            has_side: false,
            cbr_taken: false,
        })
    }

    /// Whether host 1's packets need no wake-up: the caller takes them from the delay
    /// line as they enter it (see `cbr_taken`). Ignored unless departures are fixed at
    /// arrival.
    pub fn take_cbr_at_entry(&mut self, taken: bool) {
        self.cbr_taken = taken && self.bottleneck.fixes_departures();
    }

    /// Whether the caller takes host 1's packets as they enter the delay line.
    #[inline]
    pub fn cbr_taken(&self) -> bool {
        self.cbr_taken
    }

    /// Sets the side packet (see `side`), its arrival time and hosts already written
    /// into it; `None`: the source has no more.
    #[inline]
    pub fn set_side(&mut self, pkt: Option<Packet>) {
        match pkt {
            Some(p) => {
                self.has_side = true;
                self.side = p;
            }
            None => self.has_side = false,
        }
    }

    /// The side packet, if any.
    #[inline]
    fn side(&self) -> Option<&Packet> {
        self.has_side.then_some(&self.side)
    }

    /// Whether the next arrival is the side packet rather than the ingress's first. At
    /// equal arrival times, the one its host sent first (ingress packets leave their
    /// host at `sent`); at equal send times too, the side packet.
    #[inline]
    fn side_first(&self) -> bool {
        self.side().is_some_and(|s| {
            self.ingress
                .front()
                .is_none_or(|p| (s.arrived, s.sent) <= (p.arrived, p.sent))
        })
    }

    /// The next arrival at the queue, if any: from the side or the ingress.
    #[inline]
    fn next_arrival(&self) -> Option<&Packet> {
        if self.side_first() {
            Some(&self.side)
        } else {
            self.ingress.front()
        }
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

    /// A packet from host `host` reaches the queue at `at`, and is taken (accepted or
    /// dropped) at once, the side packets that come first before it: the eager form of
    /// [`arrive`](Self::arrive) followed by [`advance`](Self::advance) to `at`. Only for
    /// drop-tail (departures fixed at arrival), with an empty ingress, and when every
    /// other packet of this direction comes from the side or from `host`'s own access
    /// link (which delivers in order): then nothing still to be sent can reach the queue
    /// before `at`, and the decision taken now is the one the link would take at `at`.
    #[inline]
    pub fn arrive_now(
        &mut self,
        pkt: Packet,
        at: Nanos,
        host: u8,
        mut next_side: impl FnMut() -> Option<Packet>,
    ) {
        debug_assert!(self.bottleneck.fixes_departures() && self.ingress.is_empty());
        while self.has_side && (self.side.arrived, self.side.sent) <= (at, pkt.sent) {
            self.bottleneck.arrive_from(self.side.arrived, &self.side);
            self.set_side(next_side());
        }
        let mut p = pkt;
        p.arrived = at;
        // Host `host` on one side talks to host `host` on the other.
        (p.dst, p.src) = (host, host);
        self.bottleneck.arrive_from(at, &p);
    }

    /// Processes every arrival, transmission start and completion up to and including
    /// `t`, in time order (a completion before an arrival at the same instant).
    /// `next_side` gives the side packet after the one that has just entered the queue.
    pub fn advance(&mut self, t: Nanos, mut next_side: impl FnMut() -> Option<Packet>) {
        let fifo = self.bottleneck.fixes_departures();
        loop {
            let side = self.side_first();
            let t_arr = if side {
                self.side.arrived
            } else {
                self.ingress.front().map_or(NEVER, |p| p.arrived)
            };
            // Drop-tail fixes departures at arrival: no completion steps.
            if !fifo {
                let t_done = self.bottleneck.next_completion();
                if t_done <= t_arr && t_done <= t {
                    self.bottleneck.complete(t_done);
                    continue;
                }
            }
            if t_arr > t {
                break;
            }
            if side {
                self.bottleneck.arrive_from(t_arr, &self.side);
                self.set_side(next_side());
            } else {
                // Read in place, then dropped (see `DelayLine::take`).
                self.bottleneck.arrive_from(t_arr, &self.ingress[0]);
                self.ingress.pop_front();
            }
        }
    }

    /// Moves the side packet into the ingress, where it counts as in flight: at the end
    /// of the run.
    pub fn side_to_ingress(&mut self) {
        if let Some(&p) = self.side() {
            self.has_side = false;
            self.arrive(p, p.arrived, p.src);
        }
    }

    /// The earliest time at which a packet may reach a host: exact for drop-tail without
    /// a queue trace, otherwise a lower bound (an early wake-up is harmless) with one
    /// known gap. On the step-by-step path, while a packet is in transmission, a packet
    /// queued behind it for the other host may reach that host first when the hosts'
    /// access links serialise the two sizes differently; the wake-up is then late by at
    /// most the difference (12 µs for 1500 B at 1 Gbit/s), which only matters where the
    /// bottleneck is nearly as fast as the access links.
    #[inline]
    pub fn next_delivery(&self) -> Nanos {
        let b = &self.bottleneck;
        let mut t = b.delay.next_release();
        if b.fixes_departures() {
            // Everything accepted is in the delay line; the next arrival cannot leave
            // before the accepted packets ahead of it.
            // Host 1's packets taken at entry (see `cbr_taken`) are left out; its lane
            // holds none released by the end of the run.
            let t = self.arrivals_bound(t, self.cbr_taken);
            if t == NEVER && self.cbr_taken {
                // Nothing on its way to host 0: the CBR packets get their wake-ups back,
                // so the link's work stays in step with the events, which bound a
                // trial (`limits`), and packets do not pile up.
                return self.cbr_wake_up();
            }
            return t;
        }
        if let Some(r) = b.tx_release() {
            t = t.min(r);
        } else {
            // Idle, possibly with a shaper holding queued packets until its wake-up.
            t = t.min(b.next_completion().saturating_add(b.delay.prop_ns));
            // The last transmission ended before anything in the ingress arrived.
            t = self.arrivals_bound(t, false);
        }
        t
    }

    /// The next delivery counting host 1's packets, when host 0 has none on the way.
    #[cold]
    #[inline(never)]
    fn cbr_wake_up(&self) -> Nanos {
        self.arrivals_bound(self.bottleneck.delay.next_release(), false)
    }

    /// `t`, or the earliest release of a packet not yet arrived at the queue if that is
    /// sooner. That is the next arrival's, unless
    /// - the queue may refuse it: a smaller packet behind a refused one may leave before
    ///   the refused one would have, so the earliest of every pending arrival's;
    /// - a packet behind it goes to the other host: it leaves the bottleneck after the
    ///   next arrival, but the hosts' access links serialise different sizes, so it may
    ///   reach its host first.
    ///
    /// `host0_only`: host 1's packets (taken at entry, see `cbr_taken`) are left out.
    fn arrivals_bound(&self, t: Nanos, host0_only: bool) -> Nanos {
        let b = &self.bottleneck;
        let Some(first) = self.next_arrival() else {
            return t;
        };
        // Nothing leaves before it has arrived and propagated (the usual case on a busy
        // link: a packet already in the delay line leaves first).
        if first.arrived.saturating_add(b.delay.prop_ns) >= t {
            return t;
        }
        let waits = |p: &&Packet| !(host0_only && p.dst & 1 == 1);
        let pending = self.side().into_iter().chain(&self.ingress).filter(waits);
        let bound = |p: &Packet| {
            b.delay
                .release_time(p, b.earliest_end(p.arrived, p.bytes()))
        };
        if !waits(&first) {
            // Whatever follows it leaves no sooner than it would alone.
            return pending.map(bound).fold(t, Nanos::min);
        }
        let end = b.earliest_end(first.arrived, first.bytes());
        let t = t.min(b.delay.release_time(first, end));
        if self.ingress.len() + self.has_side as usize == 1 {
            return t;
        }
        if b.may_refuse(first.arrived, first.bytes()) {
            return pending.map(bound).fold(t, Nanos::min);
        }
        // `first` is accepted: whatever follows ends its transmission after it.
        let lane = first.dst & 1;
        pending
            .filter(|p| p.dst & 1 != lane)
            .map(|p| b.delay.release_time(p, b.end_after(end, p.bytes())))
            .fold(t, Nanos::min)
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
        self.ingress.len() + self.has_side as usize + self.bottleneck.in_flight()
    }

    /// Calls `f` on every packet still inside the link.
    pub fn for_each_in_flight(&self, mut f: impl FnMut(&Packet)) {
        self.side().into_iter().for_each(&mut f);
        self.ingress.iter().for_each(&mut f);
        self.bottleneck.for_each_in_flight(f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{QueueConfig, TraceConfig};
    use collateral_queue::{FullRule, PacketKind};

    /// The down direction of a link at `bps` with a drop-tail queue, the queue trace on
    /// (the step-by-step path) or off.
    fn down_link(bps: u64, rule: FullRule, limit: u64, queue_trace: bool) -> Link {
        let sc = Scenario::builder()
            .link(bps, 256_000, QueueConfig::drop_tail(rule, limit))
            .trace(TraceConfig {
                queue: queue_trace,
                ..TraceConfig::OFF
            })
            .build();
        Link::new(&sc, Direction::Down).unwrap()
    }

    /// Every packet's release once the link has run dry, with its kind.
    fn drain(l: &mut Link) -> Vec<(Nanos, PacketKind)> {
        l.advance(NEVER - 1, || None);
        std::iter::from_fn(|| l.bottleneck.pop_released(NEVER))
            .map(|(t, p)| (t, p.kind))
            .collect()
    }

    /// Which of two packets arriving at the same instant enters the queue first: the
    /// one its host sent first, as when both are inserted into the ingress in the order
    /// they were sent; sent at the same instant too, the side packet. The same whether
    /// the link takes the host's packet when it catches up (step by step, or with
    /// departures fixed at arrival) or as it is sent (`arrive_now`).
    #[test]
    fn side_packet_takes_its_turn_by_arrival_then_send_time() {
        let cases = [(100, 50, true), (50, 100, false), (70, 70, true)];
        for ((tcp_sent, cbr_sent, cbr_first), path) in cases
            .into_iter()
            .flat_map(|c| ["step", "fifo", "now"].map(|p| (c, p)))
        {
            let mut l = down_link(1_500_000, FullRule::Ps, 100, path == "step");
            let mut cbr = Packet::new(PacketKind::Cbr, 1, 186, 0, cbr_sent);
            (cbr.arrived, cbr.src, cbr.dst) = (1000, 1, 1);
            l.set_side(Some(cbr));
            let tcp = Packet::new(PacketKind::Data, 0, 1500, 0, tcp_sent);
            if path == "now" {
                l.arrive_now(tcp, 1000, 0, || None);
            } else {
                l.arrive(tcp, 1000, 0);
            }
            let mut released = drain(&mut l);
            released.sort_by_key(|r| r.0);
            let first = released[0].1;
            assert_eq!(
                first == PacketKind::Cbr,
                cbr_first,
                "{path}: TCP sent at {tcp_sent}, CBR at {cbr_sent}: {released:?}"
            );
        }
    }

    /// An idle link, a packet the queue refuses (bigger than its byte limit), and a small
    /// one arriving during what would have been the first one's transmission: the small
    /// one must not be delivered later than its own transmission allows, so the wake-up
    /// the link asks for may not be later than its release.
    #[test]
    fn a_refused_packet_does_not_delay_the_wake_up_for_the_next() {
        for trace in [false, true] {
            let mut l = down_link(1_500_000, FullRule::FbStrict, 1000, trace);
            l.arrive(Packet::new(PacketKind::Data, 0, 1500, 0, 0), 0, 0);
            l.arrive(
                Packet::new(PacketKind::Cbr, 1, 186, 0, 1_000_000),
                1_000_000,
                1,
            );
            let wake = l.next_delivery();
            let released = drain(&mut l);
            assert_eq!(released.len(), 1);
            let (release, kind) = released[0];
            assert_eq!(kind, PacketKind::Cbr);
            assert_eq!(l.bottleneck.stats.drops, 1);
            assert!(
                wake <= release,
                "trace {trace}: wake-up at {wake} ns, the CBR packet released at {release} ns"
            );
        }
    }

    /// A fast bottleneck: a 1500-byte packet for host 0, then a 52-byte one for host 1
    /// right behind it. The small one leaves the bottleneck second but reaches its host
    /// first (the big one spends longer on its host's access link), so the wake-up must
    /// be for the small one. (Drop-tail without a queue trace; see the note on the
    /// step-by-step path in `next_delivery`.)
    #[test]
    fn a_packet_for_the_other_host_can_be_released_first() {
        let mut l = down_link(100_000_000, FullRule::Ps, 100, false);
        l.arrive(Packet::new(PacketKind::Data, 0, 1500, 0, 0), 0, 0);
        l.arrive(Packet::new(PacketKind::Ack, 1, 52, 0, 1), 1, 1);
        let wake = l.next_delivery();
        let first = drain(&mut l).iter().map(|r| r.0).min().unwrap();
        assert!(
            wake <= first,
            "wake-up at {wake} ns, a packet released at {first} ns"
        );
    }
}
