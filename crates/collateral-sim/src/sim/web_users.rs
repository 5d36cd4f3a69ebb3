//! The web users of [`crate::web`] inside a simulation: users, their connection slots,
//! connection set-up and the page/object bookkeeping.
//!
//! Every user owns `parallel` connection *slots*; slot `s` is TCP flow `base + s`, and
//! a new connection in a slot gets fresh sender and receiver state and the next
//! generation number, which its packets carry (`Packet::conn`), so late packets of the
//! previous connection are recognised and dropped on arrival.
//!
//! Set-up, as HTTP/1.0 over TCP does it, with `Setup` packets distinguished by `seq`:
//! the browser sends a SYN; the server answers with a SYN-ACK; the browser sends the
//! request (its first data segment, which also ACKs the SYN-ACK); the server starts the
//! reply in slow start. A lost SYN, SYN-ACK or request is recovered by the browser's
//! set-up timer: the SYN or the request is sent again after the stack's initial RTO,
//! doubling on every expiry (RFC 6298 §5.7 / Linux `tcp_retransmit_timer`). FIN
//! exchanges are not modelled: the slot is free once the server has the reply
//! acknowledged.

use super::{Simulation, TcpFlow};
use crate::engine::{Alarm, Events, Wake};
use crate::metrics::WebSummary;
use crate::rng::{stream, CONN_STREAMS};
use crate::scenario::Scenario;
use crate::tcp::{Receiver, Sender, TcpConfig};
use crate::web::UserDraws;
use collateral_queue::{Nanos, Packet, PacketKind};
use rand_pcg::Pcg64Mcg;

/// `Packet::seq` of the set-up packets.
pub(super) const SYN: u64 = 0;
pub(super) const SYN_ACK: u64 = 1;
pub(super) const REQUEST: u64 = 2;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SlotState {
    Idle,
    SynSent,
    Requested,
    /// Reply data has arrived (the set-up timer no longer matters).
    Receiving,
}

#[derive(Debug, Clone)]
struct Slot {
    user: u32,
    state: SlotState,
    /// The server has the request and is sending.
    server_started: bool,
    /// The browser has the whole reply.
    client_done: bool,
    reply_bytes: u64,
    reply_segments: u64,
    request_len: u32,
    opened: Nanos,
    tries: u32,
    timer: Alarm,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PageState {
    Thinking,
    /// Fetching the primary object: the embedded ones wait for it.
    Primary,
    Embedded,
    Stopped,
}

#[derive(Debug, Clone)]
struct User {
    group: u32,
    rng: UserDraws,
    first_slot: u32,
    state: PageState,
    /// Objects of the page not yet started, and started but not yet arrived.
    to_start: u32,
    outstanding: u32,
}

#[derive(Debug, Clone, Default)]
struct GroupStats {
    s: WebSummary,
    responses: Vec<f64>,
}

#[derive(Debug, Default)]
pub(super) struct WebState {
    /// TCP flow index of slot 0.
    base: usize,
    slots: Vec<Slot>,
    users: Vec<User>,
    groups: Vec<GroupStats>,
    /// Each group's TCP settings for its connections (direction set), built once.
    conn_cfg: Vec<TcpConfig>,
    conns: u64,
}

impl WebState {
    /// Creates every group's users and slots (appending the slots' flows to `tcp`) and
    /// schedules each user's first page.
    pub(super) fn new(sc: &Scenario, tcp: &mut Vec<TcpFlow>, events: &mut Events) -> Self {
        let mut w = WebState {
            base: tcp.len(),
            ..Default::default()
        };
        for (g, cfg) in sc.web.iter().enumerate() {
            w.groups.push(GroupStats {
                s: WebSummary {
                    users: cfg.users,
                    ..Default::default()
                },
                responses: Vec::new(),
            });
            let mut conn_cfg = cfg.tcp.clone();
            conn_cfg.direction = cfg.direction;
            conn_cfg.extra_delay_ns = 0;
            w.conn_cfg.push(conn_cfg.clone());
            for _ in 0..cfg.users {
                let u = w.users.len() as u32;
                let first_slot = w.slots.len() as u32;
                for _ in 0..cfg.parallel {
                    let i = tcp.len() as u32;
                    // Placeholder state; every connection gets its own on opening.
                    tcp.push(TcpFlow::new(
                        i,
                        &conn_cfg,
                        stream(0, 0),
                        sc.warmup_ns,
                        sc.rtt_ns,
                    ));
                    w.slots.push(Slot {
                        user: u,
                        state: SlotState::Idle,
                        server_started: false,
                        client_done: false,
                        reply_bytes: 0,
                        reply_segments: 0,
                        request_len: 0,
                        opened: 0,
                        tries: 0,
                        timer: Alarm::default(),
                    });
                }
                let mut rng = UserDraws::new(sc.seed, u);
                // Users have been browsing before the run began: each is part-way
                // through a think time, as a renewal process seen at a random moment.
                let first = rng.first_think_ns(cfg);
                events.schedule(cfg.start_ns + first, Wake::Think(u));
                w.users.push(User {
                    group: g as u32,
                    rng,
                    first_slot,
                    state: PageState::Thinking,
                    to_start: 0,
                    outstanding: 0,
                });
            }
        }
        w
    }
}

impl TcpFlow {
    /// A new connection in slot flow `i` (a web object's, a foreign probe's): fresh
    /// sender and receiver for a `reply` of that many bytes, timers and delay line
    /// emptied, the next generation so the old connection's late packets are dropped.
    pub(super) fn reopen(
        &mut self,
        i: usize,
        cfg: &TcpConfig,
        rng: Pcg64Mcg,
        count_from: Nanos,
        reply: u64,
        extra: Nanos,
    ) {
        self.sender = Sender::new(i as u32, cfg, rng);
        self.sender.set_transfer_bytes(reply);
        self.receiver = Receiver::new(i as u32, cfg, count_from);
        self.receiver
            .set_handshake_rtt(self.rtt.saturating_add(extra));
        self.rto = Alarm::default();
        self.delack = Alarm::default();
        self.pace = Alarm::default();
        self.extra.clear();
        self.extra_alarm = Alarm::default();
        self.extra_delay = extra;
        self.completed = None;
        self.gen = self.gen.wrapping_add(1).max(1);
    }
}

impl Simulation {
    /// IP length of a SYN or SYN-ACK: a pure ACK plus the SYN options (MSS, window
    /// scale, SACK-permitted).
    fn syn_len(&self, group: usize) -> u32 {
        self.sc.web[group].tcp.ack_bytes + 8
    }

    /// A user's think time is over: the next page, unless the group has stopped.
    pub(super) fn web_think(&mut self, u: usize) {
        let now = self.now;
        let user = &mut self.web.users[u];
        let cfg = &self.sc.web[user.group as usize];
        if cfg.stop_ns.is_some_and(|s| now >= s) {
            user.state = PageState::Stopped;
            return;
        }
        let n = user.rng.objects(cfg);
        user.to_start = n;
        user.outstanding = 0;
        user.state = PageState::Primary;
        if now >= self.sc.warmup_ns {
            self.web.groups[user.group as usize].s.pages_started += 1;
        }
        self.web_start_objects(u);
    }

    /// Starts what the page allows: the primary object alone, then embedded objects on
    /// every free slot.
    fn web_start_objects(&mut self, u: usize) {
        loop {
            let user = &self.web.users[u];
            let can = match user.state {
                PageState::Primary => user.outstanding == 0,
                PageState::Embedded => true,
                _ => false,
            };
            if !can || user.to_start == 0 {
                return;
            }
            let parallel = self.sc.web[user.group as usize].parallel;
            let first = user.first_slot as usize;
            let Some(s) = (first..first + parallel as usize)
                .find(|&s| self.web.slots[s].state == SlotState::Idle)
            else {
                return; // waits for a slot to free up
            };
            let user = &mut self.web.users[u];
            user.to_start -= 1;
            user.outstanding += 1;
            self.web_open(s);
        }
    }

    /// Opens a connection for the user's next object in slot `s`: fresh TCP state, the
    /// next generation, and a SYN.
    fn web_open(&mut self, s: usize) {
        let now = self.now;
        let u = self.web.slots[s].user as usize;
        let g = self.web.users[u].group as usize;
        let cfg = &self.sc.web[g];
        let user = &mut self.web.users[u];
        let o = user.rng.object(cfg);
        let (request, reply, extra) = (o.request_bytes, o.reply_bytes, o.extra_delay_ns);
        let tcp_cfg = &self.web.conn_cfg[g];
        let i = self.web.base + s;
        let rng = stream(self.sc.seed, CONN_STREAMS + self.web.conns);
        self.web.conns += 1;
        let f = &mut self.tcp[i];
        f.reopen(i, tcp_cfg, rng, self.sc.warmup_ns, reply, extra);
        let segments = f.sender.size_segments().unwrap_or(1);
        let header = tcp_cfg.data_bytes - tcp_cfg.mss;
        let slot = &mut self.web.slots[s];
        *slot = Slot {
            user: u as u32,
            state: SlotState::SynSent,
            server_started: false,
            client_done: false,
            reply_bytes: reply,
            reply_segments: segments,
            request_len: header + request.max(1) as u32,
            opened: now,
            tries: 0,
            timer: Alarm::default(),
        };
        if now >= self.sc.warmup_ns {
            self.web.groups[g].s.connections += 1;
        }
        self.web_send_setup(s, SYN);
        self.web_arm_setup_timer(s);
    }

    /// The browser sends a SYN or a request for slot `s`.
    fn web_send_setup(&mut self, s: usize, what: u64) {
        let i = self.web.base + s;
        let slot = &self.web.slots[s];
        let g = self.web.users[slot.user as usize].group as usize;
        let len = if what == SYN {
            self.syn_len(g)
        } else {
            slot.request_len
        };
        let mut p = Packet::new(PacketKind::Setup, i as u32, len, what, self.now);
        p.conn = self.tcp[i].gen;
        let dir = self.sc.web[g].direction.reverse();
        self.inject(dir, 0, p);
    }

    fn web_arm_setup_timer(&mut self, s: usize) {
        let g = self.web.users[self.web.slots[s].user as usize].group as usize;
        let tcp = &self.sc.web[g].tcp;
        let slot = &mut self.web.slots[s];
        let rto = tcp
            .rto_initial_ns
            .saturating_mul(1 << slot.tries.min(16))
            .min(tcp.rto_max_ns);
        slot.timer
            .set(self.now + rto, &mut self.events, Wake::Setup(s as u32));
    }

    /// The browser's set-up timer: send the SYN or the request again.
    pub(super) fn web_setup_timer(&mut self, s: usize, wake: Wake) {
        let slot = &mut self.web.slots[s];
        if !slot.timer.fire(self.now, &mut self.events, wake) {
            return;
        }
        let what = match slot.state {
            SlotState::SynSent => SYN,
            SlotState::Requested => REQUEST,
            _ => return,
        };
        slot.tries += 1;
        let g = self.web.users[slot.user as usize].group as usize;
        if self.now >= self.sc.warmup_ns {
            self.web.groups[g].s.setup_retries += 1;
        }
        self.web_send_setup(s, what);
        self.web_arm_setup_timer(s);
    }

    /// A set-up packet reached its host: the server answers a SYN and starts the reply
    /// on the request; the browser answers a SYN-ACK with the request.
    pub(super) fn web_setup_packet(&mut self, pkt: Packet) {
        let i = pkt.flow as usize;
        let s = i - self.web.base;
        let g = self.web.users[self.web.slots[s].user as usize].group as usize;
        let dir = self.sc.web[g].direction;
        match pkt.seq {
            SYN => {
                let mut p = Packet::new(
                    PacketKind::Setup,
                    i as u32,
                    self.syn_len(g),
                    SYN_ACK,
                    self.now,
                );
                p.conn = self.tcp[i].gen;
                self.inject(dir, 0, p);
            }
            SYN_ACK => {
                let slot = &mut self.web.slots[s];
                if slot.state == SlotState::SynSent {
                    slot.state = SlotState::Requested;
                    slot.tries = 0;
                    self.web_send_setup(s, REQUEST);
                    self.web_arm_setup_timer(s);
                }
            }
            _ => {
                let slot = &mut self.web.slots[s];
                if !slot.server_started {
                    slot.server_started = true;
                    self.tcp[i].sender.start(self.now, &mut self.out);
                    self.after_sender(i);
                }
            }
        }
    }

    /// After the browser's receiver ran: the reply may now be complete.
    pub(super) fn web_client_check(&mut self, i: usize) {
        let s = i - self.web.base;
        let slot = &mut self.web.slots[s];
        if slot.state == SlotState::Requested {
            slot.state = SlotState::Receiving;
            slot.timer.clear();
        }
        if slot.client_done || self.tcp[i].receiver.rcv_nxt < slot.reply_segments {
            return;
        }
        slot.client_done = true;
        let now = self.now;
        let u = slot.user as usize;
        let (opened, bytes) = (slot.opened, slot.reply_bytes);
        let user = &mut self.web.users[u];
        let st = &mut self.web.groups[user.group as usize];
        if opened >= self.sc.warmup_ns {
            st.s.objects_completed += 1;
            st.s.reply_bytes += bytes;
            st.responses.push((now - opened) as f64 / 1e9);
        }
        user.outstanding -= 1;
        if user.state == PageState::Primary {
            user.state = PageState::Embedded;
        }
        if user.to_start == 0 && user.outstanding == 0 {
            if now >= self.sc.warmup_ns {
                st.s.pages_completed += 1;
            }
            user.state = PageState::Thinking;
            let think = user.rng.think_ns(&self.sc.web[user.group as usize]);
            self.events.schedule(now + think, Wake::Think(u as u32));
        } else {
            self.web_start_objects(u);
        }
    }

    /// The server has the whole reply acknowledged: the slot is free for the user's
    /// next object.
    pub(super) fn web_server_done(&mut self, i: usize) {
        let s = i - self.web.base;
        let slot = &mut self.web.slots[s];
        slot.state = SlotState::Idle;
        slot.timer.clear();
        let u = slot.user as usize;
        let opened = slot.opened;
        let g = self.web.users[u].group as usize;
        if opened >= self.sc.warmup_ns {
            let st = &self.tcp[i].sender.stats;
            let gs = &mut self.web.groups[g].s;
            gs.segments_sent += st.segments_sent;
            gs.retransmits += st.retransmits;
            gs.timeouts += st.timeouts;
        }
        self.web_start_objects(u);
    }

    /// Each group's summary (connections still open at the end count their segments).
    pub(super) fn web_summaries(&self) -> Vec<WebSummary> {
        let mut out: Vec<WebSummary> = self.web.groups.iter().map(|g| g.s.clone()).collect();
        for (s, slot) in self.web.slots.iter().enumerate() {
            if slot.state != SlotState::Idle && slot.opened >= self.sc.warmup_ns {
                let st = &self.tcp[self.web.base + s].sender.stats;
                let g = &mut out[self.web.users[slot.user as usize].group as usize];
                g.segments_sent += st.segments_sent;
                g.retransmits += st.retransmits;
                g.timeouts += st.timeouts;
            }
        }
        for (o, g) in out.iter_mut().zip(&self.web.groups) {
            crate::web_records::finish_responses(o, g.responses.clone());
        }
        out
    }
}
