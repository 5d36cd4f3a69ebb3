//! The dumbbell of SPEC §2 wired together and run.
//!
//! ```text
//!  A (TCP) ─┐                                  ┌─ C (TCP)
//!           ├─ R1 ══ bottleneck down / up ══ R2 ┤
//!  B (CBR) ─┘                                  └─ D (CBR)
//! ```
//! Host index 0 on each side carries TCP, index 1 carries CBR. Every host has a fast
//! access link (a FIFO serialiser at `access_rate_bps`, no propagation delay), so the
//! bottleneck queue is the only place packets wait.

mod media_call;
mod resp_test;
mod web_users;

use std::collections::VecDeque;
use std::time::Instant;

use collateral_queue::{Nanos, Packet, PacketKind};
use rand_pcg::Pcg64Mcg;

use crate::engine::{Alarm, Events, Wake, NEVER};
use crate::limits;
use crate::link::Link;
use crate::measure::{self, TcpRecords};
use crate::metrics::*;
use crate::rate::Rate;
use crate::rng::{stream, TCP_STREAMS};
use crate::scenario::{Direction, Scenario};
use crate::tcp::{Receiver, Sender};
use crate::traffic::{CbrFlow, CbrSource};

struct TcpFlow {
    dir: Direction,
    /// The path's RTT without the flow's extra delay (what a handshake would measure).
    rtt: Nanos,
    extra_delay: Nanos,
    sender: Sender,
    receiver: Receiver,
    rto: Alarm,
    delack: Alarm,
    /// The paced sender's next departure (only armed when the algorithm paces).
    pace: Alarm,
    /// Packets held by the flow's extra delay on their way to the receiving host.
    extra: VecDeque<(Nanos, Packet)>,
    extra_alarm: Alarm,
    last_traced: (u32, u32),
    completed: Option<Nanos>,
    /// Generation of the connection in this slot (web slots are reused; see
    /// `Packet::conn`). Always 0 for bulk flows.
    gen: u8,
}

impl TcpFlow {
    fn new(
        i: u32,
        cfg: &crate::tcp::TcpConfig,
        rng: Pcg64Mcg,
        count_from: Nanos,
        rtt: Nanos,
    ) -> Self {
        let mut receiver = Receiver::new(i, cfg, count_from);
        receiver.set_handshake_rtt(rtt.saturating_add(cfg.extra_delay_ns));
        TcpFlow {
            dir: cfg.direction,
            rtt,
            extra_delay: cfg.extra_delay_ns,
            sender: Sender::new(i, cfg, rng),
            receiver,
            rto: Alarm::default(),
            delack: Alarm::default(),
            pace: Alarm::default(),
            extra: VecDeque::new(),
            extra_alarm: Alarm::default(),
            last_traced: (0, 0),
            completed: None,
            gen: 0,
        }
    }
}

/// A single trial of a scenario.
pub struct Simulation {
    sc: Scenario,
    now: Nanos,
    events: Events,
    links: [Link; 2],
    /// When each host's access link is free: `[side][host]`, side 0 = left.
    access_busy: [[Nanos; 2]; 2],
    /// Bulk flows first (`n_bulk` of them), then the web groups' connection slots.
    tcp: Vec<TcpFlow>,
    n_bulk: usize,
    web: web_users::WebState,
    /// The responsiveness test's ramp and foreign probes (empty without it).
    resp: resp_test::RespState,
    cbr: Vec<CbrFlow>,
    media: media_call::MediaState,
    /// Per direction, the CBR flow that feeds its link's side ingress (see
    /// `Link::set_side`) instead of sending by events: a direction's only CBR flow.
    side_cbr: [Option<usize>; 2],
    /// Per direction, whether a host's packet is taken by the queue as it is sent
    /// (`Link::arrive_now`) rather than when the link next catches up: drop-tail, no
    /// CBR flow sending by events (the other host sends only through the side ingress),
    /// and no drops trace (whose rows follow the order the links note drops in).
    eager: [bool; 2],
    access: Rate,
    out: Vec<Packet>,
    traces: Traces,
    max_events: u64,
}

impl Simulation {
    pub fn new(sc: Scenario) -> Result<Self, String> {
        Self::with_cbr_events(sc, false)
    }

    /// [`new`](Self::new); with `by_events`, every CBR flow sends by events of its own,
    /// none through its link's side ingress (for the tests that compare the two).
    pub fn with_cbr_events(sc: Scenario, by_events: bool) -> Result<Self, String> {
        sc.validate()?;
        // A call sends from host 1 by events: no side-fed CBR there (see `media_call`).
        let by_events = by_events || !sc.media.is_empty();
        let links = [
            Link::new(&sc, Direction::Down)?,
            Link::new(&sc, Direction::Up)?,
        ];
        let mut events = Events::new();
        let n_bulk = sc.tcp.len();
        let mut tcp: Vec<TcpFlow> = sc
            .tcp
            .iter()
            .enumerate()
            .map(|(i, cfg)| {
                let i = i as u32;
                if !resp_test::deferred(&sc, i as usize) {
                    events.schedule(cfg.start_at(sc.seed, i as usize), Wake::TcpStart(i));
                }
                if let Some(stop) = cfg.stop_ns {
                    events.schedule(stop, Wake::TcpStop(i));
                }
                let mut f = TcpFlow::new(
                    i,
                    cfg,
                    stream(sc.seed, TCP_STREAMS + i as u64),
                    sc.warmup_ns,
                    sc.rtt_ns,
                );
                if let Some(w) = &sc.workload {
                    f.sender.rtt_log.every = w.probe_interval_ns;
                }
                f
            })
            .collect();
        let web = web_users::WebState::new(&sc, &mut tcp, &mut events);
        let resp = resp_test::RespState::new(&sc, &mut tcp, &mut events);
        let n_tcp = tcp.len() as u32;
        let cbr: Vec<CbrFlow> = (0..sc.cbr.len())
            .map(|j| {
                CbrFlow::new(
                    n_tcp + j as u32,
                    CbrSource::of_flow(&sc.cbr[j], sc.seed, j),
                    sc.duration_ns,
                )
            })
            .collect();
        let media = media_call::MediaState::new(&sc, n_tcp + cbr.len() as u32, &mut events);
        let mut side_cbr = [None; 2];
        for d in [Direction::Down, Direction::Up] {
            let mut of_d = (0..cbr.len()).filter(|&j| sc.cbr[j].direction == d);
            if let (Some(j), None, false) = (of_d.next(), of_d.next(), by_events) {
                side_cbr[d.index()] = Some(j);
            }
        }
        // Per direction, whether some CBR flow sends by events (on the other host).
        let mut cbr_events = [false; 2];
        for (j, c) in cbr.iter().enumerate() {
            let by_event = !side_cbr.contains(&Some(j));
            cbr_events[c.source.cfg.direction.index()] |= by_event;
            if by_event && c.source.active_at(c.source.next_send, sc.duration_ns) {
                events.schedule(c.source.next_send, Wake::CbrSend(j as u32));
            }
        }
        let eager = [0, 1].map(|d| {
            links[d].bottleneck.fixes_departures()
                && !cbr_events[d]
                && !sc.trace.drops
                && sc.media.is_empty()
        });
        let mut sim = Simulation {
            now: 0,
            events,
            links,
            access_busy: [[0; 2]; 2],
            tcp,
            n_bulk,
            web,
            resp,
            cbr,
            media,
            access: Rate::new(sc.access_rate_bps),
            out: Vec::with_capacity(64),
            traces: Traces::default(),
            max_events: u64::MAX,
            side_cbr,
            eager,
            sc,
        };
        for d in 0..2 {
            // CBR packets are taken from the delay line as they enter it
            // (`take_cbr_arrivals`) unless a drops trace is on: its rows follow the order
            // the links note drops in, which moves with the links' wake-ups.
            let taken = !sim.sc.trace.drops && sim.sc.media.is_empty();
            sim.links[d].take_cbr_at_entry(taken);
            let p = sim.next_side_cbr(d);
            sim.links[d].set_side(p);
            sim.arm_link(d);
        }
        Ok(sim)
    }

    /// The next packet of direction `d`'s side-fed CBR flow, sent from its host at the
    /// source's next departure and stamped with its arrival at the router; `None` when
    /// the direction has no such flow or the source has stopped.
    #[inline]
    fn next_side_cbr(&mut self, d: usize) -> Option<Packet> {
        let busy = &mut self.access_busy[d][1];
        side_feed(
            &mut self.cbr,
            busy,
            self.access,
            self.sc.duration_ns,
            self.side_cbr[d],
        )()
    }

    /// Every packet waits in its link's ingress until the link catches up, none is
    /// taken as it is sent (see `eager`): for the tests that compare the two.
    pub fn with_lazy_links(mut self) -> Self {
        self.eager = [false; 2];
        self
    }

    /// Every CBR packet reaches its host by a wake-up of its link at its release, none is
    /// taken as it enters the delay line (see `take_cbr_arrivals`): for the tests that
    /// compare the two.
    pub fn with_cbr_wake_ups(mut self) -> Self {
        for d in 0..2 {
            self.links[d].take_cbr_at_entry(false);
            // The wake-up set without them may be later than theirs.
            self.arm_link(d);
        }
        self
    }

    /// Ends the run with an error once about `n` events have been handled (checked with
    /// the memory, every `limits::USAGE_CHECK_EVERY` events): for fuzzing, where a
    /// case must take bounded time whatever its duration.
    pub fn with_event_limit(mut self, n: u64) -> Self {
        self.max_events = n;
        self
    }

    pub fn now(&self) -> Nanos {
        self.now
    }

    /// Runs to the end of the scenario and returns the measurements, or an error when
    /// the trial outgrows its memory budget (`crate::limits`).
    pub fn run(mut self) -> Result<TrialResult, String> {
        let t0 = Instant::now();
        let end = self.sc.duration_ns;
        let mut next_check = limits::USAGE_CHECK_EVERY;
        while let Some((t, wake)) = self.events.pop_until(end) {
            self.now = t;
            self.handle(wake);
            if self.events.popped >= next_check {
                next_check += limits::USAGE_CHECK_EVERY;
                self.usage().check(t)?;
                if self.events.popped >= self.max_events {
                    return Err(format!(
                        "events: the trial passed its limit of {} events at {:.3} s",
                        self.max_events,
                        t as f64 / 1e9
                    ));
                }
            }
        }
        self.now = end;
        for d in 0..2 {
            self.advance_link(d, end);
            self.note_drops(d);
            // What the side-fed source sent before the end is in flight, as it would be
            // sent by events.
            self.links[d].side_to_ingress();
            while let Some(p) = self.next_side_cbr(d) {
                self.links[d].arrive(p, p.arrived, 1);
            }
        }
        let wall = t0.elapsed().as_secs_f64();
        Ok(self.finish(wall))
    }

    /// What the running trial holds beyond what the scenario fixed in advance.
    fn usage(&self) -> limits::Usage {
        let t = &self.traces;
        let mut trace_bytes = t.cwnd.time.len() as u64 * 20
            + t.drops.time.len() as u64 * 17
            + t.congestion.time.len() as u64 * 13;
        for l in &self.links {
            trace_bytes += l
                .bottleneck
                .trace
                .as_ref()
                .map_or(0, |v| v.len() as u64 * 24);
        }
        let records: u64 = self
            .cbr
            .iter()
            .map(|c| c.records.sent.len() as u64)
            .sum::<u64>()
            + self.media_record_bytes() / 20;
        if self.sc.trace.cbr {
            trace_bytes += records * 41; // the cbr trace built from them at the end
        }
        limits::Usage {
            trace_bytes,
            queued_packets: self
                .links
                .iter()
                .map(|l| l.bottleneck.in_flight() as u64)
                .sum(),
            pending_events: self.events.pending() as u64,
            record_bytes: records * 20,
        }
    }

    #[inline]
    fn handle(&mut self, wake: Wake) {
        let now = self.now;
        match wake {
            Wake::Link(d) => {
                // A slot's wake-up (`Events::set_slot`): never stale.
                let d = d as usize;
                self.advance_link(d, now);
                self.note_drops(d);
                while let Some(lane) = self.links[d].delivered_lane(now) {
                    let pkt = self.links[d].take_delivered(lane);
                    self.deliver(pkt);
                }
                self.arm_link(d);
            }
            Wake::TcpStart(i) => {
                let f = &mut self.tcp[i as usize];
                f.sender.start(now, &mut self.out);
                self.after_sender(i as usize);
            }
            Wake::Rto(i) => {
                let f = &mut self.tcp[i as usize];
                if f.rto.fire(now, &mut self.events, wake) {
                    f.sender.on_timeout(now, &mut self.out);
                    self.after_sender(i as usize);
                }
            }
            Wake::Pace(i) => {
                let f = &mut self.tcp[i as usize];
                if f.pace.fire(now, &mut self.events, wake) {
                    f.sender.on_pace(now, &mut self.out);
                    self.after_sender(i as usize);
                }
            }
            Wake::DelAck(i) => {
                let f = &mut self.tcp[i as usize];
                if f.delack.fire(now, &mut self.events, wake) {
                    f.receiver.on_delack_timer(now, &mut self.out);
                    self.after_receiver(i as usize);
                }
            }
            Wake::Extra(i) => {
                let f = &mut self.tcp[i as usize];
                if f.extra_alarm.fire(now, &mut self.events, wake) {
                    while let Some(&(t, pkt)) = self.tcp[i as usize].extra.front() {
                        if t > now {
                            break;
                        }
                        self.tcp[i as usize].extra.pop_front();
                        self.receive(pkt);
                    }
                    let f = &mut self.tcp[i as usize];
                    if let Some(&(t, _)) = f.extra.front() {
                        f.extra_alarm.set(t, &mut self.events, wake);
                    }
                }
            }
            Wake::TcpStop(i) => {
                self.tcp[i as usize].sender.stop_new_data();
                self.after_sender(i as usize);
            }
            Wake::Think(u) => self.web_think(u as usize),
            Wake::Setup(s) => self.web_setup_timer(s as usize, wake),
            Wake::Media(which) => self.media_wake(which),
            Wake::Resp(which) => self.resp_wake(which),
            Wake::CbrSend(i) => {
                let c = &mut self.cbr[i as usize];
                let pkt = cbr_packet(c, now);
                let dir = c.source.cfg.direction;
                if c.source.active_at(c.source.next_send, self.sc.duration_ns) {
                    self.events.schedule(c.source.next_send, wake);
                }
                self.inject(dir, 1, pkt);
            }
        }
    }

    /// A packet reached its destination host.
    #[inline]
    fn deliver(&mut self, pkt: Packet) {
        let now = self.now;
        if pkt.kind != PacketKind::Cbr {
            let i = pkt.flow as usize;
            let f = &mut self.tcp[i];
            if pkt.conn != f.gen {
                return; // a late packet of an earlier connection in this slot
            }
            // The flow's extra delay sits in front of the receiving host.
            let to_receiver = pkt.kind == PacketKind::Data
                || (pkt.kind == PacketKind::Setup && pkt.seq == web_users::SYN_ACK);
            if f.extra_delay > 0 && to_receiver {
                let t = now + f.extra_delay;
                f.extra.push_back((t, pkt));
                f.extra_alarm.set(
                    t.min(f.extra_alarm.deadline),
                    &mut self.events,
                    Wake::Extra(i as u32),
                );
                return;
            }
        }
        self.receive(pkt);
    }

    /// A packet is handed to its host's TCP, web or CBR endpoint (kinds in order of
    /// frequency).
    #[inline]
    fn receive(&mut self, pkt: Packet) {
        let now = self.now;
        let i = pkt.flow as usize;
        if pkt.kind == PacketKind::Data {
            // Late packets of an earlier connection were dropped in `deliver`; a
            // slot's delay line is emptied when a new connection takes it.
            let r = &mut self.tcp[i].receiver;
            r.on_ecn(now, pkt.tos, pkt.flags, &mut self.out);
            r.on_data(now, pkt.seq, pkt.sent, &mut self.out);
            self.after_receiver(i);
        } else if pkt.kind == PacketKind::Ack {
            let f = &mut self.tcp[i];
            // The SACK blocks travel beside the packet, kept by the receiver.
            f.sender.on_ecn_echo(now, pkt.seq, pkt.flags);
            let sack = f.receiver.sack_blocks(pkt.sack);
            f.sender
                .on_ack_sack(now, pkt.seq, pkt.echo, sack, &mut self.out);
            self.after_sender(i);
        } else if pkt.kind == PacketKind::Cbr {
            if self.media.owns(pkt.flow) {
                return self.media_receive(&pkt);
            }
            let n_tcp = self.tcp.len();
            self.cbr[i - n_tcp].on_arrival(now, pkt.seq);
        } else if self.resp.owns(i) {
            self.resp_setup_packet(pkt);
        } else {
            self.web_setup_packet(pkt);
        }
    }

    /// Stamps the packets a flow just queued with its connection generation.
    #[inline]
    fn stamp(&mut self, i: usize) {
        let gen = self.tcp[i].gen;
        if gen != 0 {
            for p in &mut self.out {
                p.conn = gen;
            }
        }
    }

    /// Sends what a TCP sender queued, re-arms its timer and traces its window.
    #[inline]
    fn after_sender(&mut self, i: usize) {
        let f = &mut self.tcp[i];
        match f.sender.rto_deadline {
            Some(t) => f.rto.set(t, &mut self.events, Wake::Rto(i as u32)),
            None => f.rto.clear(),
        }
        if let Some(t) = f.sender.pace_deadline {
            f.pace.set(t, &mut self.events, Wake::Pace(i as u32));
        } else if f.pace.deadline != NEVER {
            f.pace.clear();
        }
        let dir = f.dir;
        if i >= self.n_bulk {
            // A web connection: no per-connection traces; its stats go to its group.
            f.sender.events.clear();
            self.stamp(i);
            self.flush(dir, 0);
            let f = &mut self.tcp[i];
            if f.completed.is_none() && f.sender.done() {
                f.completed = Some(self.now);
                if self.resp.owns(i) {
                    self.resp_server_done(i);
                } else {
                    self.web_server_done(i);
                }
            }
            return;
        }
        if f.completed.is_none() && f.sender.done() {
            f.completed = Some(self.now);
        }
        if self.sc.trace.cwnd {
            let w = (f.sender.w.cwnd, f.sender.w.ssthresh);
            if w != f.last_traced {
                f.last_traced = w;
                let tr = &mut self.traces.cwnd;
                tr.time.push(self.now);
                tr.flow.push(i as u32);
                tr.cwnd.push(w.0);
                tr.ssthresh.push(w.1);
            }
        }
        for (t, kind) in f.sender.events.drain(..) {
            let tr = &mut self.traces.congestion;
            tr.time.push(t);
            tr.flow.push(i as u32);
            tr.kind.push(kind as u8);
        }
        self.mark(i);
        self.flush(dir, 0);
    }

    /// Marks what bulk flow `i` just queued with its DSCP (segments and ACKs alike).
    #[inline]
    fn mark(&mut self, i: usize) {
        let tag = self.sc.tcp[i].tag;
        if tag != 0 {
            for p in &mut self.out {
                p.set_dscp(tag);
            }
        }
    }

    #[inline]
    fn after_receiver(&mut self, i: usize) {
        let f = &mut self.tcp[i];
        match f.receiver.delack_deadline {
            Some(t) => f.delack.set(t, &mut self.events, Wake::DelAck(i as u32)),
            None => f.delack.clear(),
        }
        let dir = f.dir.reverse();
        if i >= self.n_bulk {
            self.stamp(i);
            self.flush(dir, 0);
            if self.resp.owns(i) {
                self.resp_client_check(i);
            } else {
                self.web_client_check(i);
            }
            return;
        }
        self.mark(i);
        self.flush(dir, 0);
    }

    /// Injects every packet in `self.out` from host `host` of the side `dir` leaves.
    #[inline]
    fn flush(&mut self, dir: Direction, host: usize) {
        // Take the buffer to appease the borrow checker; it is put back, so the hot path
        // never allocates.
        // By reference, not `drain`: its `Option<Packet>` items are copied in pieces
        // (see `DelayLine::take`).
        let mut out = std::mem::take(&mut self.out);
        for &pkt in &out {
            self.inject(dir, host, pkt);
        }
        out.clear();
        self.out = out;
    }

    /// A host sends a packet: its access link serialises it to the router.
    #[inline]
    fn inject(&mut self, dir: Direction, host: usize, pkt: Packet) {
        let d = dir.index();
        let t = access_link(
            &mut self.access_busy[d][host],
            self.access,
            self.now,
            pkt.bytes(),
        );
        if self.eager[d] && t <= self.sc.duration_ns {
            let end = self.sc.duration_ns;
            let busy = &mut self.access_busy[d][1];
            let feed = side_feed(&mut self.cbr, busy, self.access, end, self.side_cbr[d]);
            self.links[d].arrive_now(pkt, t, host as u8, feed);
        } else {
            self.links[d].arrive(pkt, t, host as u8);
        }
        self.take_cbr_arrivals(d);
        // The packet cannot reach the far side before it has crossed the link, and an
        // arrival never brings another packet's delivery forward: when a wake-up is
        // already due by then, there is nothing to reschedule.
        if self.events.slot_time(d) > t + self.links[d].bottleneck.delay.prop_ns {
            self.arm_link(d);
        }
    }

    /// Advances direction `d`'s link to `t`, feeding it its side-fed CBR packets.
    #[inline]
    fn advance_link(&mut self, d: usize, t: Nanos) {
        let end = self.sc.duration_ns;
        let busy = &mut self.access_busy[d][1];
        let feed = side_feed(&mut self.cbr, busy, self.access, end, self.side_cbr[d]);
        self.links[d].advance(t, feed);
        self.take_cbr_arrivals(d);
    }

    /// Direction `d`'s CBR packets that have entered its delay line (host 1's lane):
    /// their receivers only note when each arrives, which is its release from the line,
    /// known as it enters; so they are taken now, not each by a wake-up of the link.
    /// Those released after the end of the run stay in the line, in flight.
    #[inline]
    fn take_cbr_arrivals(&mut self, d: usize) {
        if !self.links[d].cbr_taken() {
            return;
        }
        let end = self.sc.duration_ns;
        let n_tcp = self.tcp.len();
        while let Some((t, pkt)) = self.links[d].bottleneck.take_lane_by(1, end) {
            self.cbr[pkt.flow as usize - n_tcp].on_arrival(t, pkt.seq);
        }
    }

    #[inline]
    fn arm_link(&mut self, d: usize) {
        let t = self.links[d].next_delivery();
        if t < self.events.slot_time(d) {
            self.events.set_slot(d, t);
        }
    }

    #[inline]
    fn note_drops(&mut self, d: usize) {
        if !self.links[d].bottleneck.dropped.is_empty() {
            self.note_drops_slow(d);
        }
    }

    #[cold]
    fn note_drops_slow(&mut self, d: usize) {
        let n_tcp = self.tcp.len();
        let dropped = std::mem::take(&mut self.links[d].bottleneck.dropped);
        for &(t, pkt, wire) in &dropped {
            if pkt.kind == PacketKind::Cbr && self.media.owns(pkt.flow) {
                self.media_drop(&pkt, wire);
            } else if pkt.kind == PacketKind::Cbr {
                self.cbr[pkt.flow as usize - n_tcp].on_drop(pkt.seq, wire);
            }
            if self.sc.trace.drops {
                let tr = &mut self.traces.drops;
                tr.time.push(t);
                tr.direction.push(d as u8);
                tr.flow.push(pkt.flow);
                tr.bytes.push(pkt.bytes());
            }
        }
        // Put the (emptied) buffer back: the hot path does not allocate.
        let mut dropped = dropped;
        dropped.clear();
        self.links[d].bottleneck.dropped = dropped;
    }

    fn finish(mut self, wall_s: f64) -> TrialResult {
        let sc = &self.sc;
        let ct = &self.traces.congestion;
        let tcp: Vec<crate::metrics::TcpSummary> = self.tcp[..self.n_bulk]
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let st = &f.sender.stats;
                let rec = TcpRecords {
                    bytes_delivered: f.receiver.delivered * sc.tcp[i].mss as u64,
                    congestion_times: (0..ct.time.len())
                        .filter(|&k| ct.flow[k] == i as u32)
                        .map(|k| ct.time[k])
                        .collect(),
                    retransmits: st.retransmits,
                    segments_sent: Some(st.segments_sent),
                    timeouts: Some(st.timeouts),
                    fast_retransmits: Some(st.fast_retransmits),
                    completed: f.completed,
                    ecn_reductions: Some(st.ecn_reductions),
                    ce_received: Some(f.receiver.ce_segments),
                    rtt_samples: Vec::new(),
                };
                measure::tcp_summary(sc, i, &rec)
            })
            .collect();
        let down_goodput_bps = crate::metrics::goodput_of(&tcp, "down");
        let scores = crate::scores::trial_scores_with(
            sc,
            &self.cbr.iter().map(|c| &c.records).collect::<Vec<_>>(),
            &self.tcp[..self.n_bulk]
                .iter()
                .map(|f| f.sender.rtt_log.samples.as_slice())
                .collect::<Vec<_>>(),
            &crate::scores::RespRecords {
                foreign: &self.resp.probes,
                ramp: self.resp.ramp.as_ref(),
                skipped: self.resp.skipped,
            },
            down_goodput_bps,
        );
        let mut cbr_trace = sc.trace.cbr.then(CbrTrace::default);
        let cbr = self
            .cbr
            .iter()
            .enumerate()
            .map(|(j, c)| measure::realtime_summary(sc, j, c.flow, &c.records, cbr_trace.as_mut()))
            .collect();
        let mut traces = std::mem::take(&mut self.traces);
        if let Some(tr) = cbr_trace {
            traces.cbr = tr;
        }
        for (d, l) in self.links.iter_mut().enumerate() {
            if let Some(tr) = l.bottleneck.trace.take() {
                for (t, b, p) in tr {
                    traces.queue.time.push(t);
                    traces.queue.direction.push(d as u8);
                    traces.queue.bytes.push(b);
                    traces.queue.packets.push(p);
                }
            }
        }
        let web = self.web_summaries();
        let media = self.media_summaries(&tcp, &mut traces.media);
        let sc = &self.sc;
        let meters = [
            &self.links[0].bottleneck.meter,
            &self.links[1].bottleneck.meter,
        ];
        let phases = measure::phase_summaries(sc, meters);
        if sc.trace.classes {
            measure::class_trace(sc, meters, &mut traces.classes);
        }
        let q = |l: &Link| measure::queue_summary(&l.bottleneck, l.bottleneck.in_flight() as u64);
        let summary = Summary {
            mode: "simulation",
            duration_s: sc.duration_ns as f64 / 1e9,
            warmup_s: sc.warmup_ns as f64 / 1e9,
            events: Some(self.events.popped),
            packets_delivered: self
                .links
                .iter()
                .map(|l| l.bottleneck.stats.delivered)
                .sum(),
            down_goodput_bps,
            up_goodput_bps: crate::metrics::goodput_of(&tcp, "up"),
            tcp,
            cbr,
            web,
            media,
            queues: Queues {
                down: q(&self.links[0]),
                up: q(&self.links[1]),
            },
            phases,
            timing: Default::default(),
            scores,
        };
        TrialResult {
            summary,
            traces,
            wall_s,
        }
    }

    /// Test access: the links and flows as they stand.
    pub fn links(&self) -> &[Link; 2] {
        &self.links
    }
}

/// A host's access link (a FIFO serialiser, free from `busy`) takes a packet of `len`
/// bytes sent at `sent`: when it reaches the router.
#[inline]
fn access_link(busy: &mut Nanos, access: Rate, sent: Nanos, len: u32) -> Nanos {
    *busy = (*busy).max(sent) + access.ser(len);
    *busy
}

/// The packet CBR flow `c` sends at `now` (its source's next departure).
#[inline]
fn cbr_packet(c: &mut CbrFlow, now: Nanos) -> Packet {
    let (seq, len) = c.send(now);
    let mut pkt = Packet::new(PacketKind::Cbr, c.flow, len, seq, now);
    pkt.tos = c.source.cfg.tag << 2 | c.source.cfg.ecn as u8;
    pkt
}

/// The next packet of a side-fed CBR flow (`None` once its source has stopped): sent at
/// the source's next departure through its host's access link (`busy`: when that link
/// is free) and stamped with its arrival at the router, as `Simulation::inject` does
/// for a packet sent by an event.
#[inline]
fn cbr_departure(c: &mut CbrFlow, busy: &mut Nanos, access: Rate, end: Nanos) -> Option<Packet> {
    let s = c.source.next_send;
    if !c.source.active_at(s, end) {
        return None;
    }
    let mut pkt = cbr_packet(c, s);
    pkt.arrived = access_link(busy, access, s, pkt.bytes());
    (pkt.src, pkt.dst) = (1, 1);
    Some(pkt)
}

/// The side ingress's source for a link (`Link::advance`, `Link::arrive_now`): the next
/// packet of CBR flow `side` (none without one), through its host's access link.
#[inline]
fn side_feed<'a>(
    cbr: &'a mut [CbrFlow],
    busy: &'a mut Nanos,
    access: Rate,
    end: Nanos,
    side: Option<usize>,
) -> impl FnMut() -> Option<Packet> + 'a {
    move || side.and_then(|j| cbr_departure(&mut cbr[j], busy, access, end))
}

/// Runs one trial of `sc`. A panic would be a bug of the core (every input is checked
/// first, and the fuzz targets look for any that slips through); if one happens anyway
/// it becomes this trial's error rather than the end of the process running a sweep.
pub fn simulate(sc: Scenario) -> Result<TrialResult, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| Simulation::new(sc)?.run()))
        .unwrap_or_else(|p| {
            let msg = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            Err(format!(
                "internal error of the simulator (please report it with the scenario): {msg}"
            ))
        })
}
