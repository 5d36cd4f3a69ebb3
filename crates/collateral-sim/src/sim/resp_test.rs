//! The responsiveness test inside a simulation (draft-ietf-ippm-responsiveness; the
//! model's [`crate::ramp`] and [`crate::resp_probe`]): the load ramp that adds a
//! connection per direction each interval until the goodput saturates, and the foreign
//! probes, each a new connection.
//!
//! The ramp's flows are the scenario's bulk flows of each direction in order; all but
//! the first of each wait (no start event) until the ramp, asked at the end of every
//! interval with the bytes each direction has delivered, starts them.
//!
//! A foreign probe runs over the web users' connection machinery (a slot flow with a
//! fresh sender and receiver per connection, its generation on every packet, set-up
//! packets told apart by `seq`): SYN and SYN-ACK, then the TLS 1.3 round trip
//! (ClientHello, the server's flight), then the GET, on which the server sends the
//! response as a TCP transfer. Lost set-up packets are sent again on the client's
//! set-up timer (initial RTO, doubling), as a browser's stack does. The client is the
//! receiving host of the downstream direction; the probes carry no DSCP.

use collateral_queue::{Nanos, Packet, PacketKind};

use super::web_users::{REQUEST, SYN, SYN_ACK};
use super::{Simulation, TcpFlow};
use crate::engine::{Alarm, Events, Wake};
use crate::ramp::{Ramp, MNP};
use crate::resp_probe::{self as rp, ForeignProbe};
use crate::rng::{stream, PROBE_STREAMS};
use crate::rrul::WorkloadKind;
use crate::scenario::{Direction, Scenario};
use crate::tcp::TcpConfig;

/// Set-up packets of a foreign probe beyond the web's SYN, SYN-ACK and request (GET).
const CLIENT_HELLO: u64 = 3;
const SERVER_FLIGHT: u64 = 4;
/// Foreign probe connections open at once; a probe due while all are busy is skipped
/// (and counted): 32 at one every 200 ms is 6.4 s of set-up.
const SLOTS: usize = 32;
/// `Wake::Resp` indices.
const TICK: u32 = 0;
const LAUNCH: u32 = 1;
const TIMER: u32 = 2;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Idle,
    Syn,
    Tls,
    Get,
    /// The client has the response; the slot frees when the server has it acknowledged.
    Done,
}

#[derive(Debug, Clone)]
struct Slot {
    stage: Stage,
    /// Index of its probe in `RespState::probes`.
    probe: usize,
    /// When the stage's first packet left.
    stage_sent: Nanos,
    server_started: bool,
    tries: u32,
    timer: Alarm,
}

#[derive(Debug, Default)]
pub(super) struct RespState {
    pub(super) ramp: Option<Ramp>,
    /// Per direction, the ramp's bulk flows in start order, and how many have started.
    flows: [Vec<usize>; 2],
    started: [usize; 2],
    /// TCP flow index of probe slot 0 (none without the test).
    base: usize,
    slots: Vec<Slot>,
    cfg: TcpConfig,
    pub(super) probes: Vec<ForeignProbe>,
    pub(super) skipped: u64,
}

/// The ramp's flows of `sc` per direction (none unless it runs the responsiveness test).
fn ramp_flows(sc: &Scenario) -> [Vec<usize>; 2] {
    let on = sc
        .workload
        .is_some_and(|w| w.kind == WorkloadKind::Responsiveness);
    [Direction::Down, Direction::Up].map(|d| {
        (0..sc.tcp.len())
            .filter(|&i| on && sc.tcp[i].direction == d)
            .take(MNP as usize)
            .collect()
    })
}

/// Whether bulk flow `i` waits for the ramp rather than starting on its own.
pub(super) fn deferred(sc: &Scenario, i: usize) -> bool {
    ramp_flows(sc)
        .iter()
        .any(|f| f.iter().skip(1).any(|&j| j == i))
}

impl RespState {
    /// The test's state for `sc` (empty without it): appends the probe slots' flows to
    /// `tcp` and schedules the first ramp interval's end and the first probe.
    pub(super) fn new(sc: &Scenario, tcp: &mut Vec<TcpFlow>, events: &mut Events) -> Self {
        let flows = ramp_flows(sc);
        let Some(w) = sc
            .workload
            .filter(|_| !flows[0].is_empty() || !flows[1].is_empty())
        else {
            return RespState::default();
        };
        let mut cfg = sc.tcp.first().cloned().unwrap_or_default();
        cfg.direction = Direction::Down;
        cfg.extra_delay_ns = 0;
        cfg.tag = 0;
        let base = tcp.len();
        let slots = (0..SLOTS)
            .map(|s| {
                // Placeholder state; every connection gets its own on opening.
                tcp.push(TcpFlow::new(
                    (base + s) as u32,
                    &cfg,
                    stream(0, 0),
                    sc.warmup_ns,
                    sc.rtt_ns,
                ));
                Slot {
                    stage: Stage::Idle,
                    probe: 0,
                    stage_sent: 0,
                    server_started: false,
                    tries: 0,
                    timer: Alarm::default(),
                }
            })
            .collect();
        events.schedule(w.idle_ns + w.saturation_interval_ns, Wake::Resp(TICK));
        // An eighth of an interval after the UDP probes' first, so they do not coincide.
        events.schedule(w.probe_interval_ns / 8, Wake::Resp(LAUNCH));
        RespState {
            ramp: Some(Ramp::new(
                w.saturation_interval_ns,
                flows.clone().map(|f| !f.is_empty()),
            )),
            started: flows.clone().map(|f| f.len().min(1)),
            flows,
            base,
            slots,
            cfg,
            probes: Vec::new(),
            skipped: 0,
        }
    }

    /// Whether TCP flow `i` is a foreign probe's.
    #[inline]
    pub(super) fn owns(&self, i: usize) -> bool {
        i >= self.base && i < self.base + self.slots.len()
    }
}

impl Simulation {
    pub(super) fn resp_wake(&mut self, which: u32) {
        match which {
            TICK => self.resp_ramp_tick(),
            LAUNCH => self.resp_launch(),
            _ => self.resp_timer((which - TIMER) as usize),
        }
    }

    /// The end of a ramp interval: the ramp decides, the flows it adds start now.
    fn resp_ramp_tick(&mut self) {
        let r = &mut self.resp;
        let acked = [0, 1].map(|d| {
            r.flows[d][..r.started[d]]
                .iter()
                .map(|&i| self.tcp[i].receiver.rcv_nxt * self.sc.tcp[i].mss as u64)
                .sum::<u64>()
        });
        let Some(ramp) = r.ramp.as_mut() else { return };
        let want = ramp.end_interval(acked);
        let mut start = Vec::new();
        for (d, &want) in want.iter().enumerate() {
            while r.started[d] < (want as usize).min(r.flows[d].len()) {
                start.push(r.flows[d][r.started[d]]);
                r.started[d] += 1;
            }
        }
        for i in start {
            self.tcp[i].sender.start(self.now, &mut self.out);
            self.after_sender(i);
        }
        let id = self.sc.workload.map_or(0, |w| w.saturation_interval_ns);
        if self.now + id < self.sc.duration_ns {
            self.events.schedule(self.now + id, Wake::Resp(TICK));
        }
    }

    /// The next foreign probe: a new connection in a free slot, its SYN.
    fn resp_launch(&mut self) {
        let now = self.now;
        let every = self.sc.workload.map_or(0, |w| w.probe_interval_ns);
        if now + every < self.sc.duration_ns {
            self.events.schedule(now + every, Wake::Resp(LAUNCH));
        }
        let r = &mut self.resp;
        let Some(s) = r.slots.iter().position(|s| s.stage == Stage::Idle) else {
            r.skipped += 1;
            return;
        };
        let i = r.base + s;
        let rng = stream(self.sc.seed, PROBE_STREAMS + r.probes.len() as u64);
        self.tcp[i].reopen(i, &r.cfg, rng, self.sc.warmup_ns, rp::RESPONSE_BYTES, 0);
        r.slots[s] = Slot {
            stage: Stage::Syn,
            probe: r.probes.len(),
            stage_sent: now,
            server_started: false,
            tries: 0,
            timer: Alarm::default(),
        };
        r.probes.push(ForeignProbe {
            sent_ns: now,
            ..Default::default()
        });
        self.resp_send(s, SYN);
    }

    /// The client sends set-up packet `what` of slot `s` (upstream) and arms its timer.
    fn resp_send(&mut self, s: usize, what: u64) {
        let c = &self.resp.cfg;
        let header = c.data_bytes - c.mss;
        let len = match what {
            SYN => c.ack_bytes + 8,
            CLIENT_HELLO => header + rp::CLIENT_HELLO_BYTES,
            _ => header + rp::GET_BYTES,
        };
        let (rto0, rto_max) = (c.rto_initial_ns, c.rto_max_ns);
        let i = self.resp.base + s;
        let mut p = Packet::new(PacketKind::Setup, i as u32, len, what, self.now);
        p.conn = self.tcp[i].gen;
        self.inject(Direction::Up, 0, p);
        let slot = &mut self.resp.slots[s];
        let rto = rto0.saturating_mul(1 << slot.tries.min(16)).min(rto_max);
        slot.timer.set(
            self.now + rto,
            &mut self.events,
            Wake::Resp(TIMER + s as u32),
        );
    }

    /// Slot `s`'s set-up timer: the stage's packet again.
    fn resp_timer(&mut self, s: usize) {
        let wake = Wake::Resp(TIMER + s as u32);
        let slot = &mut self.resp.slots[s];
        if !slot.timer.fire(self.now, &mut self.events, wake) {
            return;
        }
        let what = match slot.stage {
            Stage::Syn => SYN,
            Stage::Tls => CLIENT_HELLO,
            Stage::Get => REQUEST,
            _ => return,
        };
        slot.tries += 1;
        self.resp_send(s, what);
    }

    /// A probe's set-up packet reached its host: the server answers the SYN and the
    /// ClientHello and starts the response on the GET; the client moves on a stage on
    /// the SYN-ACK and on the server's flight, noting the stage's time.
    pub(super) fn resp_setup_packet(&mut self, pkt: Packet) {
        let i = pkt.flow as usize;
        let s = i - self.resp.base;
        let now = self.now;
        let c = &self.resp.cfg;
        let (syn_len, flight_len) = (
            c.ack_bytes + 8,
            c.data_bytes - c.mss + rp::SERVER_FLIGHT_BYTES,
        );
        let reply = |len: u32, what: u64| {
            let mut p = Packet::new(PacketKind::Setup, i as u32, len, what, now);
            p.conn = pkt.conn;
            p
        };
        match pkt.seq {
            SYN => self.inject(Direction::Down, 0, reply(syn_len, SYN_ACK)),
            CLIENT_HELLO => self.inject(Direction::Down, 0, reply(flight_len, SERVER_FLIGHT)),
            REQUEST => {
                let slot = &mut self.resp.slots[s];
                if !slot.server_started {
                    slot.server_started = true;
                    self.tcp[i].sender.start(now, &mut self.out);
                    self.after_sender(i);
                }
            }
            SYN_ACK | SERVER_FLIGHT => {
                let (next, what) = match pkt.seq {
                    SYN_ACK => (Stage::Tls, CLIENT_HELLO),
                    _ => (Stage::Get, REQUEST),
                };
                let slot = &mut self.resp.slots[s];
                let due = if pkt.seq == SYN_ACK {
                    Stage::Syn
                } else {
                    Stage::Tls
                };
                if slot.stage != due {
                    return; // a duplicate answer to a retransmission
                }
                let took = now - slot.stage_sent;
                let p = &mut self.resp.probes[slot.probe];
                if due == Stage::Syn {
                    p.tcp_ns = Some(took);
                } else {
                    p.tls_ns = Some(took / rp::TLS13_ROUND_TRIPS as Nanos);
                }
                (slot.stage, slot.stage_sent, slot.tries) = (next, now, 0);
                self.resp_send(s, what);
            }
            _ => {}
        }
    }

    /// After the client's receiver ran: the response (one segment) may be complete.
    pub(super) fn resp_client_check(&mut self, i: usize) {
        let s = i - self.resp.base;
        let slot = &mut self.resp.slots[s];
        if slot.stage == Stage::Get && self.tcp[i].receiver.rcv_nxt >= 1 {
            self.resp.probes[slot.probe].http_ns = Some(self.now - slot.stage_sent);
            slot.stage = Stage::Done;
            slot.timer.clear();
        }
    }

    /// The server has the response acknowledged: the slot is free.
    pub(super) fn resp_server_done(&mut self, i: usize) {
        let slot = &mut self.resp.slots[i - self.resp.base];
        slot.stage = Stage::Idle;
        slot.timer.clear();
    }
}
