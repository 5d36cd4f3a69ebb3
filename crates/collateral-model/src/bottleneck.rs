//! One direction of the bottleneck, written once for both clocks: the rate clock with
//! its link-layer framing, the queue discipline, the propagation delay line, and what is
//! observed of them (drops, occupancy, per-class counters). The simulator's link drives
//! it in virtual time; the testbed's router (`collateral-emu router`) drives the same
//! type in real time, built from the same scenario JSON.
//!
//! Every method takes `now`. A transmission that ends at `t` starts the next one at
//! exactly `t`, however late the caller notices, so rate and delay are exact on average
//! in the real-time router too; a completion is handled before an arrival at the same
//! instant.

use std::collections::VecDeque;

use collateral_queue::{AnyQueue, Discipline, DropTail, Ecn, Framing, Nanos, Packet};
use rand_pcg::Pcg64Mcg;

use crate::clock::{RateClock, TraceClock};
use crate::delay_line::DelayLine;
use crate::docsis::DocsisClock;
use crate::leo::LeoConfig;
use crate::loss::WireLoss;
use crate::metrics::Meter;
use crate::path_delay::PathDelay;
use crate::rate::Rate;
use crate::rng;
use crate::scenario::Scenario;
use crate::units::{Direction, NEVER};

/// Drop-tail's transmissions fixed when each packet arrives.
///
/// A FIFO served at a constant rate starts an accepted packet at the later of its
/// arrival and the end of the packet before it, whatever arrives after it: its end of
/// transmission, its release from the delay line and its counters are all known when it
/// is accepted, so it goes straight into the delay line and no completion step follows.
/// The occupancy an arrival sees is what the step-by-step path would hold then: the
/// accepted packets not yet started, plus the one in transmission when the queue counts
/// it. The simulator's links use this when the queue is drop-tail, there is no wire loss
/// and no occupancy trace (which needs each dequeue in time order); the two paths give
/// the same results (`tests::fifo_clock_equals_the_step_by_step_link`).
#[derive(Debug)]
struct FifoClock {
    /// The configured queue, for its full rule (it holds no packets).
    rule: DropTail,
    /// Accepted packets not yet started: (start, end of transmission, length).
    waiting: VecDeque<(Nanos, Nanos, u32)>,
    waiting_bytes: u64,
    /// When the last accepted packet's transmission ends.
    tail_end: Nanos,
    /// The packet started last: its length and the end of its transmission.
    svc_len: u32,
    svc_end: Nanos,
}

impl FifoClock {
    /// Occupancy (bytes, packets) at `now`, once every start by `now` is taken off.
    #[inline]
    fn occupancy(&mut self, now: Nanos) -> (u64, u32) {
        while let Some(&(start, end, len)) = self.waiting.front() {
            if start > now {
                break;
            }
            self.waiting.pop_front();
            self.waiting_bytes -= len as u64;
            (self.svc_len, self.svc_end) = (len, end);
        }
        let svc = (self.svc_len, self.svc_end);
        self.with_in_service(now, self.waiting_bytes, self.waiting.len() as u32, svc)
    }

    /// The waiting `bytes` and `packets`, plus the packet started last (`svc`: its
    /// length and end) when it is still in transmission at `now` and the queue counts
    /// it. A transmission ending at `now` has ended: completions come before arrivals.
    #[inline]
    fn with_in_service(
        &self,
        now: Nanos,
        bytes: u64,
        packets: u32,
        svc: (u32, Nanos),
    ) -> (u64, u32) {
        if self.rule.count_in_service() && svc.1 > now {
            (bytes + svc.0 as u64, packets + 1)
        } else {
            (bytes, packets)
        }
    }

    /// Whether an arrival of `len` bytes at `at` (no other arrival before it) would be
    /// refused: [`occupancy`](Self::occupancy) without taking anything off.
    fn would_refuse(&self, at: Nanos, len: u32) -> bool {
        let (mut bytes, mut packets) = (self.waiting_bytes, self.waiting.len() as u32);
        let mut svc = (self.svc_len, self.svc_end);
        for &(_, end, l) in self.waiting.iter().take_while(|w| w.0 <= at) {
            bytes -= l as u64;
            packets -= 1;
            svc = (l, end);
        }
        let (b, p) = self.with_in_service(at, bytes, packets, svc);
        self.rule.is_full_at(b, p, len)
    }
}

/// Counters a bottleneck direction keeps for the summary.
#[derive(Debug, Clone, Default)]
pub struct LinkStats {
    /// Packets offered to the queue.
    pub arrivals: u64,
    pub drops: u64,
    /// Packets that left with Congestion Experienced set by the queue (ECN marks).
    pub ce_marks: u64,
    pub wire_losses: u64,
    pub max_bytes: u64,
    pub max_packets: u32,
    /// Packets released to the far side.
    pub delivered: u64,
}

/// One direction of the bottleneck.
#[derive(Debug)]
pub struct Bottleneck {
    /// The nominal rate (a trace's mean): what the queue discipline is told.
    pub rate: Rate,
    /// When each transmission ends: at `rate`, or at a trace's delivery opportunities.
    clock: RateClock,
    /// What each packet adds on the wire (serialisation only; queues count IP lengths).
    pub framing: Framing,
    pub queue: AnyQueue,
    pub delay: DelayLine,
    /// Loss on the wire after serialisation: independent or in bursts.
    loss: WireLoss,
    /// A satellite link's loss at each reconfiguration.
    leo_loss: Option<LeoConfig>,
    rng: Pcg64Mcg,
    /// The packet in transmission, when `busy`. Not an `Option<Packet>`: one of those
    /// is copied around its niche byte in pieces (see `DelayLine::take`).
    in_tx: Packet,
    busy: bool,
    busy_until: Nanos,
    /// When the packet in transmission will reach its host: fixed when it starts, since
    /// nothing enters the delay line before it completes.
    tx_release: Nanos,
    /// Idle although packets wait: the discipline's shaper holds them until then.
    wake: Nanos,
    scratch: Vec<Packet>,
    /// Drops since the owner last drained them: `(time, packet, on_wire)`.
    pub dropped: Vec<(Nanos, Packet, bool)>,
    /// Occupancy trace `(time, bytes, packets)` on every change, when enabled.
    pub trace: Option<Vec<(Nanos, u64, u32)>>,
    pub stats: LinkStats,
    /// Per-class arrivals, drops, throughput and latency, per time bin and phase.
    pub meter: Meter,
    /// Set by [`fix_departures_at_arrival`](Self::fix_departures_at_arrival).
    fifo: Option<FifoClock>,
}

impl Bottleneck {
    /// Direction `d` of the scenario's bottleneck: its rate, framing, queue (seeded from
    /// the trial's seed), half the RTT of propagation and, when `egress` is given, the
    /// far-side hosts' access links. `trace`: keep the occupancy trace.
    pub fn new(
        sc: &Scenario,
        d: Direction,
        egress: Option<Rate>,
        trace: bool,
    ) -> Result<Self, String> {
        let l = sc.link(d);
        let k = d.index();
        let queue = l
            .queue
            .build(l.rate_bps, rng::queue_seed(sc.seed, k))
            .map_err(|e| format!("{}.queue: {e}", d.name()))?;
        // A satellite link's intervals, drawn once from the direction's own stream.
        let leo = l.leo.map(|c| {
            let mut rng = rng::stream(sc.seed, rng::LEO_STREAMS[k]);
            c.build(sc.duration_ns, &mut rng)
        });
        let phase_starts: Vec<Nanos> = if sc.phases.is_empty() {
            vec![sc.warmup_ns]
        } else {
            sc.phases.iter().map(|p| p.start_ns).collect()
        };
        Ok(Bottleneck {
            rate: Rate::new(l.rate_bps),
            clock: match (&l.trace, &l.docsis) {
                (Some(t), _) => RateClock::Trace(Box::new(TraceClock::new(t))),
                (None, Some(c)) => RateClock::Docsis(Box::new(DocsisClock::new(
                    c,
                    l.rate_bps,
                    rng::stream(sc.seed, rng::DOCSIS_STREAMS[k]),
                ))),
                (None, None) => match (&leo, &l.outages) {
                    (Some((r, _)), _) => RateClock::Schedule(Box::new(r.clone())),
                    (None, Some(o)) => RateClock::Schedule(Box::new(o.schedule(l.rate_bps))),
                    (None, None) => RateClock::Constant(Rate::new(l.rate_bps)),
                },
            },
            framing: l.framing,
            queue,
            delay: DelayLine::new(sc.rtt_ns / 2, egress).with_path(
                leo.as_ref()
                    .map(|(_, d)| d)
                    .or(l.delay.as_ref())
                    .map(PathDelay::new),
            ),
            leo_loss: l.leo.filter(|c| c.loss_for_ns > 0),
            loss: WireLoss::new(l.loss_rate, l.burst_loss),
            rng: rng::stream(sc.seed, rng::LINK_STREAMS[k]),
            in_tx: Packet::new(collateral_queue::PacketKind::Data, 0, 0, 0, 0),
            busy: false,
            busy_until: 0,
            tx_release: NEVER,
            wake: NEVER,
            scratch: Vec::with_capacity(8),
            dropped: Vec::with_capacity(8),
            trace: trace.then(Vec::new),
            stats: LinkStats::default(),
            meter: Meter::new(sc.duration_ns, sc.bin_ns, phase_starts, sc.trace.classes),
            fifo: None,
        })
    }

    /// Fixes each packet's departure when it arrives (`FifoClock`) when the queue is
    /// drop-tail, the rate constant, nothing is lost on the wire and there is no
    /// occupancy trace; a no-op otherwise. Call before the first arrival. The simulator does; the testbed's
    /// router, which logs the occupancy at every departure, does not.
    pub fn fix_departures_at_arrival(&mut self) {
        if let AnyQueue::DropTail(q) = &self.queue {
            let plain = self.loss.is_none() && self.trace.is_none() && self.clock.is_constant();
            if plain && self.stats.arrivals == 0 {
                self.fifo = Some(FifoClock {
                    rule: q.clone(),
                    waiting: VecDeque::with_capacity(16),
                    waiting_bytes: 0,
                    tail_end: 0,
                    svc_len: 0,
                    svc_end: 0,
                });
            }
        }
    }

    /// Whether each departure is fixed at arrival (`FifoClock`): then there is never a
    /// completion to step through.
    #[inline]
    pub fn fixes_departures(&self) -> bool {
        self.fifo.is_some()
    }

    /// Whether a packet of `len` bytes arriving at `at`, the next arrival, may be
    /// refused or dropped before it leaves: exactly for drop-tail (on an idle link the
    /// occupancy does not change before the arrival), `true` for the other disciplines
    /// on an idle link (an AQM may drop at either end), `false` while a transmission is
    /// under way (the caller's bound is the transmission's release then).
    pub fn may_refuse(&self, at: Nanos, len: u32) -> bool {
        if let Some(f) = &self.fifo {
            return f.would_refuse(at, len);
        }
        if self.busy || self.wake != NEVER {
            return false;
        }
        match &self.queue {
            AnyQueue::DropTail(q) => q.is_full(len),
            _ => true,
        }
    }

    /// The earliest a packet of `len` bytes arriving at `at` can end its transmission,
    /// given what the link has accepted so far.
    #[inline]
    pub fn earliest_end(&self, at: Nanos, len: u32) -> Nanos {
        let start = match &self.fifo {
            Some(f) => at.max(f.tail_end),
            None => at,
        };
        self.clock.earliest_end(start, self.framing.wire_bytes(len))
    }

    /// A lower bound on the end of a packet of `len` bytes queued behind one that ends
    /// at `end`.
    #[inline]
    pub fn end_after(&self, end: Nanos, len: u32) -> Nanos {
        self.clock.after(end, self.framing.wire_bytes(len))
    }

    /// Serialisation time of an IP packet of `len` bytes, framing included, at the
    /// nominal rate (what the drop-tail fast path uses; a trace's clock is asked instead).
    #[inline]
    pub fn wire_time(&self, len: u32) -> Nanos {
        self.rate.ser(self.framing.wire_bytes(len))
    }

    /// When the transmission in progress ends, or, when idle because the discipline's
    /// shaper holds its packets, when it will release one ([`NEVER`] when idle and empty).
    #[inline]
    pub fn next_completion(&self) -> Nanos {
        if self.busy {
            self.busy_until
        } else {
            self.wake
        }
    }

    /// When the packet in transmission, if any, will be released to its host.
    #[inline]
    pub fn tx_release(&self) -> Option<Nanos> {
        self.busy.then_some(self.tx_release)
    }

    /// Completes every transmission that ends by `t`, each next one starting when the
    /// previous ended. Call before an arrival at `t`.
    #[inline]
    pub fn catch_up(&mut self, t: Nanos) {
        while self.next_completion() <= t {
            self.complete(self.next_completion());
        }
    }

    /// A packet arrives at the queue at `now`; every completion due by `now` must have
    /// been handled ([`catch_up`](Self::catch_up)). Returns whether it was queued.
    #[inline]
    pub fn arrive(&mut self, now: Nanos, pkt: Packet) -> bool {
        self.arrive_from(now, &pkt)
    }

    /// [`arrive`](Self::arrive) of a packet read where it lies (the simulator's ingress):
    /// copied once, into the queue.
    #[inline(never)]
    pub fn arrive_from(&mut self, now: Nanos, pkt: &Packet) -> bool {
        self.stats.arrivals += 1;
        if self.fifo.is_some() {
            return self.arrive_fifo(now, pkt);
        }
        self.meter.on_arrival(now, pkt);
        let queued = self.queue.enqueue(now, *pkt, &mut self.scratch);
        self.note_drops(now);
        // Occupancy only grows by an enqueue: the maxima are taken here, not per dequeue.
        let (b, p) = (self.queue.bytes(), self.queue.packets());
        self.stats.max_bytes = self.stats.max_bytes.max(b);
        self.stats.max_packets = self.stats.max_packets.max(p);
        self.note_occupancy(now);
        if !self.busy {
            self.start_next(now);
        }
        queued
    }

    /// [`arrive_from`](Self::arrive_from) with `FifoClock`: accepted or dropped now,
    /// and when accepted, transmitted and put in the delay line at once.
    #[inline]
    fn arrive_fifo(&mut self, now: Nanos, pkt: &Packet) -> bool {
        let wire = self.wire_time(pkt.bytes());
        let Some(f) = self.fifo.as_mut() else {
            return false; // only called with a clock
        };
        let (bytes, packets) = f.occupancy(now);
        let len = pkt.bytes();
        if f.rule.is_full_at(bytes, packets, len) {
            self.meter.on_arrival(now, pkt);
            self.meter.on_drop(now, pkt);
            self.stats.drops += 1;
            self.dropped.push((now, *pkt, false));
            return false;
        }
        self.stats.max_bytes = self.stats.max_bytes.max(bytes + len as u64);
        self.stats.max_packets = self.stats.max_packets.max(packets + 1);
        let start = now.max(f.tail_end);
        let end = start + wire;
        f.tail_end = end;
        if start > now {
            f.waiting.push_back((start, end, len));
            f.waiting_bytes += len as u64;
        } else {
            (f.svc_len, f.svc_end) = (len, end);
        }
        // Drop-tail never marks and no source sends CE: `ce_marks` stays 0. A departure
        // after the end of the run falls outside every phase and bin of the meter.
        self.meter.on_arrival_and_departure(now, end, pkt);
        self.delay.push_at(self.delay.release_time(pkt, end), *pkt);
        true
    }

    /// The transmission in progress ends at `now` (= its completion time): the packet
    /// enters the delay line, or is lost on the wire, and the next one starts. When idle,
    /// `now` is the shaper's wake-up time: the discipline is asked again.
    #[inline(never)]
    pub fn complete(&mut self, now: Nanos) {
        if !self.busy {
            self.wake = NEVER;
            self.start_next(now);
            self.note_occupancy(now);
            return;
        }
        self.busy = false;
        let pkt = self.in_tx;
        self.queue.transmit_done(now);
        self.meter.on_departure(now, &pkt);
        // Sources never send CE and each direction has one queue: a CE packet leaving
        // was marked here.
        self.stats.ce_marks += (pkt.ecn() == Ecn::Ce) as u64;
        let reconfigured = self.leo_loss.is_some_and(|c| c.loses(now));
        if self.loss.lose(&mut self.rng) || reconfigured {
            self.stats.wire_losses += 1;
            self.dropped.push((now, pkt, true));
        } else {
            self.delay.push_at(self.tx_release, pkt);
        }
        self.start_next_after(now, true);
        self.note_occupancy(now);
    }

    #[inline]
    fn start_next(&mut self, now: Nanos) {
        self.start_next_after(now, false);
    }

    /// The next packet, if any, starts at `now`; `queued`: it was waiting when the
    /// transmission before it ended at `now` (a trace's opportunity may carry both).
    #[inline]
    fn start_next_after(&mut self, now: Nanos, queued: bool) {
        if let Some(pkt) = self.queue.dequeue(now, &mut self.scratch) {
            let wire = self.framing.wire_bytes(pkt.bytes());
            let backlog = if self.clock.is_docsis() {
                self.waiting_wire_bytes(pkt.bytes())
            } else {
                0
            };
            self.busy_until = self.clock.end(now, wire, queued, backlog);
            self.tx_release = self.delay.release_time(&pkt, self.busy_until);
            self.in_tx = pkt;
            self.busy = true;
        } else if self.queue.waiting() > 0 {
            // A shaper's hold: never in the past, so the loop always advances.
            self.wake = self.queue.ready_at().max(now + 1);
        }
        self.note_drops(now);
    }

    /// What waits behind a packet of `sent` IP bytes just dequeued, in wire bytes: what a
    /// DOCSIS modem requests, in the unit of the packet's own `len` (a request counts
    /// the MAC frames). The queue counts IP lengths, and a drop-tail queue counting the
    /// packet in transmission still holds it (then `packets` exceeds `waiting`).
    fn waiting_wire_bytes(&self, sent: u32) -> u64 {
        let q = &self.queue;
        let n = q.waiting() as u64;
        if self.framing.atm {
            // Cells round each packet: add them up (DOCSIS over ATM is a test case only).
            let mut wire = 0;
            q.visit(&mut |p| wire += self.framing.wire_bytes(p.bytes()) as u64);
            return wire;
        }
        let in_service = (q.packets() as u64 > n) as u64 * sent as u64;
        q.bytes().saturating_sub(in_service) + n * self.framing.overhead_bytes as u64
    }

    /// One packet that has left the delay line by `t`, with its release time.
    #[inline]
    pub fn pop_released(&mut self, t: Nanos) -> Option<(Nanos, Packet)> {
        let p = self.delay.pop_released(t);
        self.stats.delivered += p.is_some() as u64;
        p
    }

    /// The delay-line lane with a packet released by `t`, if any; take it with
    /// [`take_released`](Self::take_released) (the simulator's pair of
    /// [`pop_released`](Self::pop_released), without an `Option<Packet>`).
    #[inline]
    pub fn released(&self, t: Nanos) -> Option<usize> {
        self.delay.released(t)
    }

    #[inline]
    pub fn take_released(&mut self, lane: usize) -> Packet {
        self.stats.delivered += 1;
        self.delay.take(lane)
    }

    /// The packet at the head of delay-line lane `lane` with its release time, if it is
    /// released by `t`: for a host that only notes when its packets arrive, whose
    /// packets the simulator takes as soon as their release is known.
    #[inline]
    pub fn take_lane_by(&mut self, lane: usize, t: Nanos) -> Option<(Nanos, Packet)> {
        let release = self.delay.lane_release(lane);
        if release > t {
            return None;
        }
        Some((release, self.take_released(lane)))
    }

    #[inline]
    fn note_drops(&mut self, now: Nanos) {
        // Almost always empty: skip building the drain iterator.
        if self.scratch.is_empty() {
            return;
        }
        self.note_drops_slow(now);
    }

    #[cold]
    fn note_drops_slow(&mut self, now: Nanos) {
        for pkt in self.scratch.drain(..) {
            self.meter.on_drop(now, &pkt);
            self.stats.drops += 1;
            self.dropped.push((now, pkt, false));
        }
    }

    /// Appends the occupancy to the trace when it changed (nothing without the trace).
    #[inline]
    fn note_occupancy(&mut self, now: Nanos) {
        if let Some(tr) = &mut self.trace {
            let (b, p) = (self.queue.bytes(), self.queue.packets());
            if tr.last().is_none_or(|&(_, lb, lp)| lb != b || lp != p) {
                tr.push((now, b, p));
            }
        }
    }

    /// Packets inside: queued, in transmission, propagating.
    pub fn in_flight(&self) -> usize {
        self.queue.waiting() + self.busy as usize + self.delay.len()
    }

    /// Calls `f` on every packet still inside.
    pub fn for_each_in_flight(&self, mut f: impl FnMut(&Packet)) {
        self.queue.visit(&mut f);
        if self.busy {
            f(&self.in_tx);
        }
        self.delay.iter().for_each(f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A saturated link on the trace `1` (one opportunity per millisecond) delivers
    /// one 1500-byte packet (1504 with the TUN header) per millisecond, 12 Mbit/s of IP;
    /// 184-byte packets fit eight to an opportunity (8 · 188 = 1504); 1501-byte ones
    /// carry over what each leaves, so 10 s of opportunities carry ⌊10 000 · 1504 /
    /// 1505⌋ = 9 993 of them.
    #[test]
    fn a_trace_link_delivers_its_opportunities() {
        use crate::clock::DeliveryTrace;
        use crate::scenario::QueueConfig;
        use collateral_queue::{FullRule, PacketKind};
        for (len, expected) in [(1500u32, 10_000), (184, 80_000), (1501, 9_993)] {
            let mut sc = Scenario::builder()
                .duration(20_000_000_000)
                .warmup(1)
                .rtt(2_000_000)
                .link(
                    12_032_000,
                    1_000_000,
                    QueueConfig::drop_tail(FullRule::Ps, 100_000),
                )
                .build();
            sc.down.trace = Some(DeliveryTrace {
                ms: vec![1],
                once: false,
            });
            let mut b = Bottleneck::new(&sc, Direction::Down, None, false).unwrap();
            b.fix_departures_at_arrival(); // a no-op: a trace is stepped through
            assert!(!b.fixes_departures());
            for k in 0..100_000u32 {
                b.arrive(0, Packet::new(PacketKind::Data, 0, len, k as u64, 0));
            }
            let mut ends = Vec::new();
            while b.next_completion() <= 10_000_000_000 {
                let t = b.next_completion();
                b.complete(t);
                ends.push(t);
            }
            assert_eq!(ends.len(), expected, "{len} B");
            let sent = ends.len() as f64;
            assert!(
                ends.iter().all(|t| t % 1_000_000 == 0),
                "only at whole milliseconds"
            );
            let bps = sent * len as f64 * 8.0 / 10.0;
            if len == 1500 {
                assert_eq!(bps, 12_000_000.0);
            }
        }
    }

    /// The drop-tail link with departures fixed at arrival and the step-by-step link,
    /// fed the same random arrivals (bursts, idle gaps, mixed sizes and classes, across
    /// the warm-up and past the end of the run), release the same packets at the same
    /// times, drop the same ones and count the same in every phase: for each full rule,
    /// with and without the packet in transmission counted, with and without framing.
    #[test]
    fn fifo_clock_equals_the_step_by_step_link() {
        use crate::scenario::{PhaseConfig, QueueConfig};
        use collateral_queue::{FullRule, PacketKind};
        let mut v: u64 = 7;
        let mut next = |m: u64| {
            v = v
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (v >> 33) % m
        };
        let mut fixed_runs = 0;
        for (rule, limit) in [
            (FullRule::Ps, 6),
            (FullRule::FbStrict, 7499),
            (FullRule::FbLoose, 5000),
            // Room for one packet: whether the one just sent still counts decides.
            (FullRule::Ps, 1),
            (FullRule::FbStrict, 1500),
        ] {
            for count_in_service in [false, true] {
                for atm in [false, true] {
                    let mut q = QueueConfig::drop_tail(rule, limit);
                    q.count_in_service = count_in_service;
                    let mut sc = Scenario::builder()
                        .duration(2_000_000_000)
                        .warmup(500_000_000)
                        .rtt(40_000_000)
                        .link(8_000_000, 256_000, q)
                        .build();
                    sc.phases = vec![
                        PhaseConfig {
                            name: "a".into(),
                            start_ns: 500_000_000,
                        },
                        PhaseConfig {
                            name: "b".into(),
                            start_ns: 1_200_000_000,
                        },
                    ];
                    sc.down.framing = Framing {
                        overhead_bytes: 10 * atm as u32,
                        atm,
                    };
                    let egress = Some(Rate::new(10_000_000));
                    let mut step = Bottleneck::new(&sc, Direction::Down, egress, false).unwrap();
                    let mut fixed = Bottleneck::new(&sc, Direction::Down, egress, false).unwrap();
                    fixed.fix_departures_at_arrival();
                    assert!(fixed.fifo.is_some());
                    fixed_runs += 1;
                    let (mut out_s, mut out_f) = (Vec::new(), Vec::new());
                    let mut t: Nanos = 0;
                    for seq in 0..6000 {
                        // Mostly back-to-back bursts, now and then an idle gap. At
                        // 8 Mbit/s a byte takes 1 µs: in whole microseconds, arrivals
                        // often meet the end of a transmission exactly.
                        t += 1000
                            * match next(50) {
                                0 => next(20_000),
                                1..=15 => 0,
                                _ => next(600),
                            };
                        let (kind, len) = match next(4) {
                            0 => (PacketKind::Cbr, 186),
                            1 => (PacketKind::Ack, 52),
                            _ => (PacketKind::Data, 40 + next(1461) as u32),
                        };
                        let mut pkt = Packet::new(kind, next(3) as u32, len, seq, t);
                        pkt.arrived = t;
                        pkt.dst = next(2) as u8;
                        step.catch_up(t);
                        // Asked in advance, the fixed link foresees its own decision.
                        let refuse = fixed.may_refuse(t, len);
                        let a = step.arrive(t, pkt);
                        let b = fixed.arrive(t, pkt);
                        assert_eq!(refuse, !b, "{rule:?} {count_in_service} foresight {seq}");
                        assert_eq!(a, b, "{rule:?} {count_in_service} arrival {seq}");
                        while let Some(p) = step.pop_released(t) {
                            out_s.push(p);
                        }
                        while let Some(p) = fixed.pop_released(t) {
                            out_f.push(p);
                        }
                    }
                    step.catch_up(NEVER - 1);
                    while let Some(p) = step.pop_released(NEVER) {
                        out_s.push(p);
                    }
                    while let Some(p) = fixed.pop_released(NEVER) {
                        out_f.push(p);
                    }
                    let what = format!("{rule:?}, in service {count_in_service}, atm {atm}");
                    assert!(t > sc.duration_ns, "{what}: arrivals end after the run");
                    assert!(step.stats.drops > 100, "{what}: {} drops", step.stats.drops);
                    assert_eq!(out_s, out_f, "{what}: releases");
                    assert_eq!(step.dropped, fixed.dropped, "{what}: drops");
                    assert_eq!(
                        format!("{:?}", step.stats),
                        format!("{:?}", fixed.stats),
                        "{what}: counters"
                    );
                    for k in 0..2 {
                        assert_eq!(
                            format!("{:?}", step.meter.phase_counts(k)),
                            format!("{:?}", fixed.meter.phase_counts(k)),
                            "{what}: phase {k}"
                        );
                    }
                }
            }
        }
        assert_eq!(fixed_runs, 20);
    }
}
