//! The bottleneck router: frames arriving on one interface go through the same
//! [`Bottleneck`] the simulator uses — queue discipline, rate clock with framing, delay
//! line, drop and occupancy observation, per-class meter — built from the same scenario
//! JSON, and are put on the other interface when the delay line releases them.
//!
//! The router's clock is trial time: nanoseconds since the run's origin `t0`, which the
//! endpoints share, so time-driven disciplines (CoDel, PIE), phases and bins line up
//! with the simulator's.

use std::fs::File;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

use collateral_model::bottleneck::Bottleneck;
use collateral_model::measure::{self, RouterReport, RouterTiming};

use crate::timing::{context_switches, trial_timing, Stats};
use collateral_model::queue::{Discipline, Ecn, Packet, PacketKind};
use collateral_model::{Direction, Scenario};

use crate::net::{
    mono_ns, pin_to_cpu, ppoll, real_ns, router_cpu, tight_timers, PacketSocket, RxBatch, TxBatch,
};

pub static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

/// An endpoint's SIGINT/SIGTERM: sets [`STOP`] and, unlike the router's, interrupts
/// a blocking call (no `SA_RESTART`), so a `connect` whose SYN the torn-down link no
/// longer carries returns at once instead of after its retransmissions (3 s).
pub fn install_stop_handlers() {
    // SAFETY: a zeroed sigaction with a handler that only stores to an atomic.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_signal as *const () as usize;
        libc::sigemptyset(&mut sa.sa_mask);
        for sig in [libc::SIGINT, libc::SIGTERM] {
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// Stops the loop cleanly on SIGINT/SIGTERM so the log is flushed.
pub fn install_signal_handlers() {
    // SAFETY: the handler only stores to an atomic.
    unsafe {
        libc::signal(libc::SIGINT, on_signal as *const () as usize);
        libc::signal(libc::SIGTERM, on_signal as *const () as usize);
    }
}

/// The monotonic-clock instant of the realtime instant `t0_real` (the namespaces share
/// one clock; the endpoints stamp packets with CLOCK_REALTIME).
pub fn mono_of_real(t0_real: u64) -> u64 {
    let (r, m) = (real_ns(), mono_ns());
    (t0_real as i128 - r as i128 + m as i128).max(0) as u64
}

/// What the log and the queue need to know about a frame.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct FrameInfo {
    pub ip_len: u32,
    pub proto: u8,
    /// The IP TOS byte as the frame arrived (DSCP and ECN codepoint).
    pub tos: u8,
    pub sport: u16,
    pub dport: u16,
    /// The first 8 bytes of a UDP payload (the CBR sequence number), else 0.
    pub useq: u64,
    pub tcp_payload: bool,
    /// The TCP flags byte (FIN 0x01 … ECE 0x40, CWR 0x80); 0 for other protocols.
    pub tcp_flags: u8,
    /// AccECN's AE bit (the former NS bit, the low bit of the data-offset byte).
    pub tcp_ae: bool,
    pub tcp_seq: u32,
    pub tcp_ack: u32,
    /// The segment carries a SACK option (kind 5).
    pub tcp_sack: bool,
    /// The timestamps option's TSecr (RFC 7323), 0 without the option.
    pub tcp_tsecr: u32,
    /// Host indices of the source and destination addresses ([`host_index`]).
    pub src_host: u8,
    pub dst_host: u8,
}

/// TCP header flag bits (RFC 9293 §3.1, RFC 3168 §6.1).
pub mod tcp_bits {
    pub const FIN: u8 = 0x01;
    pub const SYN: u8 = 0x02;
    pub const RST: u8 = 0x04;
    pub const ECE: u8 = 0x40;
    pub const CWR: u8 = 0x80;
}

/// Which host of its side of the dumbbell an address is, as the simulator numbers them
/// (host 0 carries TCP, host 1 CBR; host i on one side talks to host i on the other):
/// the testbed's TCP hosts 198.18.0.1 (left, A) and 198.18.0.2 (right, C) are 0, its
/// CBR hosts 198.18.0.3 (B) and 198.18.0.4 (D) are 1. Any other address is host 0.
pub fn host_index(addr: [u8; 4]) -> u8 {
    match addr {
        [198, 18, 0, x @ 1..=4] => (x - 1) / 2,
        _ => 0,
    }
}

/// Reads an Ethernet/IPv4 frame's header fields; `None` for anything else (ARP, IPv6),
/// which the router passes through without delay.
pub fn parse_frame(f: &[u8]) -> Option<FrameInfo> {
    if f.len() < 34 || f[12] != 0x08 || f[13] != 0x00 {
        return None;
    }
    let ip = &f[14..];
    let ihl = ((ip[0] & 0x0f) as usize) * 4;
    let ip_len = u16::from_be_bytes([ip[2], ip[3]]) as u32;
    let proto = ip[9];
    let addr = |k: usize| [ip[k], ip[k + 1], ip[k + 2], ip[k + 3]];
    let mut info = FrameInfo {
        ip_len,
        proto,
        tos: ip[1],
        src_host: host_index(addr(12)),
        dst_host: host_index(addr(16)),
        ..Default::default()
    };
    let l4 = ip.get(ihl..)?;
    if l4.len() >= 4 && (proto == 6 || proto == 17) {
        info.sport = u16::from_be_bytes([l4[0], l4[1]]);
        info.dport = u16::from_be_bytes([l4[2], l4[3]]);
    }
    if proto == 17 && l4.len() >= 16 {
        info.useq = u64::from_be_bytes(l4[8..16].try_into().unwrap());
    }
    if proto == 6 && l4.len() >= 14 {
        let doff = ((l4[12] >> 4) as usize) * 4;
        info.tcp_payload = ip_len > (ihl + doff) as u32;
        info.tcp_seq = u32::from_be_bytes(l4[4..8].try_into().unwrap());
        info.tcp_ack = u32::from_be_bytes(l4[8..12].try_into().unwrap());
        info.tcp_ae = l4[12] & 1 != 0;
        info.tcp_flags = l4[13];
        // Options: kind 0 ends them, kind 1 is one byte of padding, the rest carry a
        // length byte (a malformed length ends the walk).
        let opts = l4.get(20..doff.min(l4.len())).unwrap_or(&[]);
        let mut k = 0;
        while k < opts.len() {
            match opts[k] {
                0 => break,
                1 => k += 1,
                kind => {
                    let Some(&n) = opts.get(k + 1) else { break };
                    let n = n as usize;
                    if n < 2 || k + n > opts.len() {
                        break;
                    }
                    match (kind, n) {
                        (5, _) => info.tcp_sack = true,
                        (8, 10) => {
                            info.tcp_tsecr =
                                u32::from_be_bytes(opts[k + 6..k + 10].try_into().unwrap())
                        }
                        _ => {}
                    }
                    k += n;
                }
            }
        }
    }
    Some(info)
}

/// The 64-bit number nearest `prev` whose low 32 bits are `x`: a 32-bit TCP sequence
/// space (ACK numbers, timestamps) unwrapped, so that comparisons on `u64` (the ACK
/// filter's) hold across a wrap. `None` for a connection's first value.
pub fn unwrap32(prev: Option<u64>, x: u32) -> u64 {
    // The first value starts in the second lap, so a later, slightly smaller one (an
    // old ACK) does not go below zero.
    let Some(prev) = prev else {
        return (1u64 << 32) | x as u64;
    };
    let d = x.wrapping_sub(prev as u32) as i32 as i64;
    (prev as i64 + d).max(0) as u64
}

/// Bits of [`Packet::sent`] that hold the frame's buffer (slab index); the bits above
/// count arrivals, so `sent` grows with arrival order.
pub const SLOT_BITS: u32 = 24;

/// Per-connection state for unwrapping: the last ACK number and TSecr, as `u64`.
type Unwrap = std::collections::HashMap<(u32, u8, u8), (u64, u64)>;

/// The packet the queue sees for a frame: what the simulator's sources would have set.
///
/// * `kind`: UDP is `Cbr`; TCP with payload `Data`; TCP without payload `Ack`, unless
///   it carries SYN, FIN or RST — then `Setup`, which no queue treats as a redundant
///   ACK (CAKE's filter merges only pure ACKs); any other protocol (ICMP) `Cbr`, the
///   non-TCP class.
/// * `flow`: `sport << 16 | dport`, one id per TCP connection and direction between two
///   hosts (`src`, `dst`: [`host_index`] of the addresses).
/// * `tos`: the IP TOS byte; `flags`: ECE, CWR and AE as [`tcp_flags`].
/// * `seq`: Data and Setup, the TCP sequence number; a pure ACK, its cumulative ACK
///   number and `sack` = 1 if it has a SACK option; CBR, the sender's sequence number.
/// * `echo`: on a pure ACK, the timestamps option's TSecr (0 without it), unwrapped
///   like the ACK number.
/// * `sent`: `key`: an arrival counter above [`SLOT_BITS`] bits of buffer handle —
///   increasing in arrival order, so for the ACK filter's "not newer than the trigger"
///   test it orders ACKs as their TSvals do (one path, no reordering before the router).
pub fn to_packet(
    info: &FrameInfo,
    l2_overhead: u32,
    now: u64,
    key: u64,
    unwrap: &mut Unwrap,
) -> Packet {
    use collateral_model::queue::tcp_flags;
    let kind = match info.proto {
        6 if info.tcp_payload => PacketKind::Data,
        6 if info.tcp_flags & (tcp_bits::SYN | tcp_bits::FIN | tcp_bits::RST) != 0 => {
            PacketKind::Setup
        }
        6 => PacketKind::Ack,
        _ => PacketKind::Cbr,
    };
    let flow = ((info.sport as u32) << 16) | info.dport as u32;
    let mut pkt = Packet::new(kind, flow, info.ip_len + l2_overhead, 0, key);
    pkt.tos = info.tos;
    pkt.src = info.src_host;
    pkt.dst = info.dst_host;
    pkt.arrived = now;
    match kind {
        PacketKind::Cbr => pkt.seq = if info.proto == 17 { info.useq } else { 0 },
        PacketKind::Data | PacketKind::Setup => pkt.seq = info.tcp_seq as u64,
        PacketKind::Ack => {
            let e = unwrap.get(&(flow, pkt.src, pkt.dst)).copied();
            pkt.seq = unwrap32(e.map(|e| e.0), info.tcp_ack);
            pkt.echo = unwrap32(e.map(|e| e.1), info.tcp_tsecr);
            unwrap.insert((flow, pkt.src, pkt.dst), (pkt.seq, pkt.echo));
            pkt.sack = info.tcp_sack as u32;
        }
    }
    if info.proto == 6 {
        let f = info.tcp_flags;
        pkt.flags = if f & tcp_bits::ECE != 0 {
            tcp_flags::ECE
        } else {
            0
        } | if f & tcp_bits::CWR != 0 {
            tcp_flags::CWR
        } else {
            0
        } | if info.tcp_ae { tcp_flags::AE } else { 0 };
    }
    pkt
}

/// RFC 1624 eqn. 3: the header checksum `hc` after a 16-bit word of the header changes
/// from `m` to `m2`: HC' = ~(~HC + ~m + m'), in one's complement arithmetic.
pub fn checksum_update(hc: u16, m: u16, m2: u16) -> u16 {
    let mut s = (!hc) as u32 + (!m) as u32 + m2 as u32;
    while s >> 16 != 0 {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

/// Sets the ECN field of an Ethernet/IPv4 frame's TOS byte to CE (11) and updates the
/// header checksum incrementally; returns whether the frame changed (it was not CE).
pub fn mark_ce_in_frame(f: &mut [u8]) -> bool {
    let Some(ip) = f.get_mut(14..34) else {
        return false;
    };
    if ip[1] & 3 == 3 {
        return false;
    }
    let m = u16::from_be_bytes([ip[0], ip[1]]);
    ip[1] |= 3;
    let m2 = u16::from_be_bytes([ip[0], ip[1]]);
    let hc = u16::from_be_bytes([ip[10], ip[11]]);
    ip[10..12].copy_from_slice(&checksum_update(hc, m, m2).to_be_bytes());
    true
}

/// Frame buffers, indexed by the low [`SLOT_BITS`] of `Packet::sent`, reused through a
/// free list.
struct Slab {
    frames: Vec<Vec<u8>>,
    free: Vec<usize>,
}

impl Slab {
    fn put(&mut self, data: &[u8]) -> usize {
        let i = self.free.pop().unwrap_or_else(|| {
            self.frames.push(Vec::with_capacity(1600));
            self.frames.len() - 1
        });
        self.frames[i].clear();
        self.frames[i].extend_from_slice(data);
        i
    }
}

/// The slab index of a packet's frame.
#[inline]
fn slot(p: &Packet) -> usize {
    (p.sent & ((1 << SLOT_BITS) - 1)) as usize
}

pub struct RouterConfig {
    pub left: String,
    pub right: String,
    pub scenario: Scenario,
    /// Bytes added to each IP length for queue accounting and serialisation (0 = IP
    /// lengths, as the simulator counts; 14 = Ethernet frames, as Linux qdiscs count).
    pub l2_overhead: u32,
    /// Per-packet log (CSV): arrivals queued, drops, departures after the delay.
    pub log: Option<String>,
    /// End-of-run report (JSON, [`RouterReport`]).
    pub report: Option<String>,
    /// The run's origin, CLOCK_REALTIME ns.
    pub t0_real: u64,
    /// Stop at this trial time (or on SIGINT/SIGTERM).
    pub until_ns: u64,
    /// The router's own timing (JSON): how late frames left, how long they waited to be
    /// read, what the kernel dropped or refused outside the model.
    pub stats: Option<String>,
    /// The CPU to pin the router to; `None`: the last one allowed if there are two or
    /// more ([`router_cpu`]); negative: not pinned.
    pub cpu: Option<i64>,
    /// Spin (rather than sleep) when the next release is this close (ns): on this VM a
    /// timed sleep wakes 50 µs late at the median, 0.2-2 ms late at the 99th percentile.
    pub spin_ns: u64,
}

/// Router log events (the `ev` column).
pub mod ev {
    /// Accepted by the queue.
    pub const QUEUED: u8 = 0;
    /// Dropped by the queue.
    pub const DROPPED: u8 = 1;
    /// Left the router, after the delay.
    pub const LEFT: u8 = 2;
    /// Left the router marked Congestion Experienced by the queue: the frame's ECN
    /// field was rewritten to CE (logged just before its `LEFT`).
    pub const CE: u8 = 3;
    /// Lost on the emulated wire (the link's loss model), after its transmission.
    pub const LOST: u8 = 4;
}

/// The log's columns. `tos` is the TOS byte as the frame arrived; `qpkts`/`qbytes` what
/// the discipline held: after a queued arrival; for a drop at an arrival, before that
/// arrival (a drop with the queue at its limit is an overflow, below it the
/// discipline's choice); for a drop at a dequeue (CoDel's), at that moment.
pub const LOG_HEADER: &str = "t_ns,ev,dir,ip_len,proto,sport,dport,useq,tos,qpkts,qbytes";

/// Bytes of log text handed to the writer thread at a time.
const LOG_CHUNK: usize = 256 << 10;

/// The router's per-packet log (CSV, [`LOG_HEADER`]). Lines are formatted into a
/// buffer; full buffers go to a writer thread off the router's CPU, so a slow disk (a
/// write held up by dirty-page throttling takes milliseconds) never stalls forwarding.
struct Log {
    buf: Vec<u8>,
    to_writer: Option<std::sync::mpsc::Sender<Vec<u8>>>,
    spare: Option<std::sync::mpsc::Receiver<Vec<u8>>>,
    writer: Option<std::thread::JoinHandle<Result<(), String>>>,
}

impl Log {
    fn none() -> Log {
        Log {
            buf: Vec::new(),
            to_writer: None,
            spare: None,
            writer: None,
        }
    }

    fn create(path: &str) -> Result<Log, String> {
        let mut f = File::create(path).map_err(|e| format!("{path}: {e}"))?;
        let (tx, rx) = std::sync::mpsc::channel::<Vec<u8>>();
        let (back, spare) = std::sync::mpsc::channel::<Vec<u8>>();
        let path = path.to_string();
        let writer = std::thread::spawn(move || {
            crate::net::avoid_router_cpu();
            for mut chunk in rx {
                f.write_all(&chunk).map_err(|e| format!("{path}: {e}"))?;
                chunk.clear();
                let _ = back.send(chunk);
            }
            f.flush().map_err(|e| format!("{path}: {e}"))
        });
        let mut buf = Vec::with_capacity(LOG_CHUNK + 256);
        writeln!(buf, "{LOG_HEADER}").map_err(|e| e.to_string())?;
        Ok(Log {
            buf,
            to_writer: Some(tx),
            spare: Some(spare),
            writer: Some(writer),
        })
    }

    #[inline]
    fn ev(&mut self, t: u64, ev: u8, dir: usize, i: &FrameInfo, q: (u32, u64)) {
        let Some(tx) = &self.to_writer else { return };
        let _ = writeln!(
            self.buf,
            "{t},{ev},{dir},{},{},{},{},{},{},{},{}",
            i.ip_len, i.proto, i.sport, i.dport, i.useq, i.tos, q.0, q.1
        );
        if self.buf.len() >= LOG_CHUNK {
            let next = self
                .spare
                .as_ref()
                .and_then(|r| r.try_recv().ok())
                .unwrap_or_else(|| Vec::with_capacity(LOG_CHUNK + 256));
            let _ = tx.send(std::mem::replace(&mut self.buf, next));
        }
    }

    /// Hands over what is left and waits for the writer to finish.
    fn finish(mut self) -> Result<(), String> {
        if let Some(tx) = self.to_writer.take() {
            if !self.buf.is_empty() {
                let _ = tx.send(std::mem::take(&mut self.buf));
            }
        }
        match self.writer.take() {
            Some(w) => w.join().map_err(|_| "log writer panicked".to_string())?,
            None => Ok(()),
        }
    }
}

/// The discipline's occupancy `(packets, bytes)`.
fn occupancy(b: &Bottleneck) -> (u32, u64) {
    (b.queue.packets(), b.queue.bytes())
}

/// Packets the discipline dropped, or the wire lost: logged with occupancy `q`, their
/// buffers freed.
fn drain(
    b: &mut Bottleneck,
    d: usize,
    q: (u32, u64),
    log: &mut Log,
    slab: &mut Slab,
    infos: &[FrameInfo],
) {
    for (t, p, wire) in b.dropped.drain(..) {
        let i = slot(&p);
        log.ev(
            t,
            if wire { ev::LOST } else { ev::DROPPED },
            d,
            &infos[i],
            q,
        );
        slab.free.push(i);
    }
}

/// The trial time at which a frame reached the router: the kernel's arrival stamp
/// `kernel_real` (CLOCK_REALTIME ns; 0 if none) made trial time, but never before
/// `floor` (where the direction's model already is: its clock only goes forward) nor
/// after `read_at` (when we read it), and `read_at` if the stamp is missing or absurd.
pub fn arrival_time(kernel_real: u64, t0_real: u64, read_at: u64, floor: u64) -> u64 {
    let t = kernel_real as i128 - t0_real as i128;
    let t = if kernel_real == 0 || t < 0 || (read_at as i128 - t) > 1_000_000_000 {
        read_at
    } else {
        (t as u64).min(read_at)
    };
    t.max(floor)
}

/// Frames read per `recvmmsg`.
const RX_BATCH: usize = 64;

pub fn run(cfg: RouterConfig) -> Result<(), String> {
    tight_timers();
    install_signal_handlers();
    let sc = &cfg.scenario;
    let socks = [
        PacketSocket::open(&cfg.left).map_err(|e| format!("{}: {e}", cfg.left))?,
        PacketSocket::open(&cfg.right).map_err(|e| format!("{}: {e}", cfg.right))?,
    ];
    let mut dirs = [
        Bottleneck::new(sc, Direction::Down, None, false)?,
        Bottleneck::new(sc, Direction::Up, None, false)?,
    ];
    let mut log = match &cfg.log {
        Some(p) => Log::create(p)?,
        None => Log::none(),
    };
    // Pinned after the log's writer thread has started, so that it may keep off this CPU.
    let cpu = match cfg.cpu {
        Some(c) if c < 0 => None,
        Some(c) => Some(c as usize),
        None => router_cpu(),
    };
    if let Some(c) = cpu {
        pin_to_cpu(c).map_err(|e| format!("--cpu {c}: {e}"))?;
    }
    let mut slab = Slab {
        frames: Vec::new(),
        free: Vec::new(),
    };
    let mut infos: Vec<FrameInfo> = Vec::new();
    // Each held frame's release time (set when the delay line releases it).
    let mut released: Vec<u64> = Vec::new();
    let mut unwrap = Unwrap::new();
    let mut arrivals: u64 = 0;
    let mut rx = [RxBatch::new(RX_BATCH), RxBatch::new(RX_BATCH)];
    let mut tx = [TxBatch::default(), TxBatch::default()];
    // Slab indices of the frames to put on each socket this round.
    let mut out: [Vec<usize>; 2] = [Vec::new(), Vec::new()];
    let mut stats = Stats::new();
    // Where each direction's model is: arrivals are never placed before it.
    let mut floor = [0u64; 2];
    let origin = mono_of_real(cfg.t0_real);
    let clock = || mono_ns().saturating_sub(origin);
    let fds = [socks[0].fd, socks[1].fd];
    // The counters as they stand at the end of the run (the router keeps forwarding
    // after it, so that packets in flight then reach their receivers).
    let end = sc.duration_ns;
    let snapshot = |dirs: &[Bottleneck; 2], timing: RouterTiming| RouterReport {
        down: measure::queue_summary(&dirs[0], dirs[0].in_flight() as u64),
        up: measure::queue_summary(&dirs[1], dirs[1].in_flight() as u64),
        phases: measure::phase_summaries(sc, [&dirs[0].meter, &dirs[1].meter]),
        timing: Some(timing),
    };
    let mut report: Option<RouterReport> = None;
    // Context switches at the run's origin (the router starts before it).
    let mut switches_at_origin: Option<(u64, u64)> = None;
    while !STOP.load(Ordering::Relaxed) {
        stats.loops += 1;
        // Arrivals: everything waiting on both sides, each at the kernel's arrival time.
        let mut got = 0;
        for d in 0..2 {
            let n = socks[d].recv_batch(&mut rx[d]).map_err(|e| e.to_string())?;
            if n == 0 {
                continue;
            }
            got += n;
            stats.rx_calls += 1;
            stats.rx_frames += n as u64;
            let read_at = clock();
            for k in 0..n {
                let (frame, ts, ok) = rx[d].frame(k);
                if !ok {
                    continue;
                }
                let Some(info) = parse_frame(frame) else {
                    let _ = socks[1 - d].send(frame); // not IPv4: pass straight through
                    continue;
                };
                let t = arrival_time(ts, cfg.t0_real, read_at, floor[d]);
                stats.read_lag.add(read_at - t);
                floor[d] = t;
                let idx = slab.put(frame);
                if idx >= 1 << SLOT_BITS {
                    return Err(format!(
                        "more than {} frames held at once",
                        1u64 << SLOT_BITS
                    ));
                }
                if infos.len() <= idx {
                    infos.resize(idx + 1, FrameInfo::default());
                    released.resize(idx + 1, 0);
                }
                infos[idx] = info;
                arrivals += 1;
                let key = arrivals << SLOT_BITS | idx as u64;
                let pkt = to_packet(&info, cfg.l2_overhead, t, key, &mut unwrap);
                let b = &mut dirs[d];
                b.catch_up(t);
                let q = occupancy(b);
                drain(b, d, q, &mut log, &mut slab, &infos);
                let before = occupancy(b);
                if b.arrive(t, pkt) {
                    log.ev(t, ev::QUEUED, d, &info, occupancy(b));
                }
                drain(b, d, before, &mut log, &mut slab, &infos);
            }
        }
        let now = clock();
        if now >= cfg.until_ns {
            break;
        }
        if switches_at_origin.is_none() && now > 0 {
            switches_at_origin = Some(context_switches());
        }
        if report.is_none() && now >= end {
            for b in dirs.iter_mut() {
                b.catch_up(end);
            }
            let timing = trial_timing(&stats.trial_late, switches_at_origin.unwrap_or_default());
            report = Some(snapshot(&dirs, timing));
        }
        // Transmissions and releases due now, sent in one batch per side.
        for (d, b) in dirs.iter_mut().enumerate() {
            b.catch_up(now);
            floor[d] = now;
            let q = occupancy(b);
            drain(b, d, q, &mut log, &mut slab, &infos);
            while let Some((release, pkt)) = b.pop_released(now) {
                let idx = slot(&pkt);
                let q = occupancy(b);
                // Marked by the queue: the real frame says so too (RFC 3168 §5).
                if pkt.ecn() == Ecn::Ce && mark_ce_in_frame(&mut slab.frames[idx]) {
                    log.ev(release, ev::CE, d, &infos[idx], q);
                }
                log.ev(release, ev::LEFT, d, &infos[idx], q);
                released[idx] = release;
                out[d].push(idx);
            }
        }
        for d in 0..2 {
            if out[d].is_empty() {
                continue;
            }
            let sent_at = clock();
            let frames = out[d].iter().map(|&i| slab.frames[i].as_slice());
            let refused = socks[1 - d].send_batch(&mut tx[1 - d], frames);
            let st = &mut stats.dirs[d];
            stats.tx_calls += 1;
            st.refused += refused as u64;
            let in_window = sent_at >= sc.warmup_ns && sent_at < end;
            for &i in &out[d] {
                st.frames += 1;
                let late = sent_at.saturating_sub(released[i]);
                st.late.add(late);
                if sent_at < end {
                    stats.trial_late.add(late);
                }
                if in_window {
                    st.window_bytes += infos[i].ip_len as u64;
                }
                slab.free.push(i);
            }
            out[d].clear();
        }
        if got > 0 {
            continue; // more may have come meanwhile: read again before waiting
        }
        // Wait: sleep until shortly before the next release (or a completion, or a
        // frame), then spin to it, so frames leave on time and not a timer's wake-up
        // late.
        let release = dirs.iter().map(|b| b.delay.next_release()).min().unwrap();
        let now = clock();
        if release <= now + cfg.spin_ns {
            continue;
        }
        let wake = dirs
            .iter()
            .map(|b| b.next_completion())
            .min()
            .unwrap()
            .min(release - cfg.spin_ns)
            .min(now + 50_000_000)
            .min(if report.is_none() { end } else { u64::MAX });
        if wake > now {
            stats.sleeps += 1;
            let ready = ppoll(&fds, wake - now).map_err(|e| e.to_string())?;
            if !ready.iter().any(|&r| r) {
                stats.oversleep.add(clock().saturating_sub(wake));
            }
        }
    }
    log.finish()?;
    if let Some(path) = &cfg.report {
        let report = report.unwrap_or_else(|| {
            let timing = trial_timing(&stats.trial_late, switches_at_origin.unwrap_or_default());
            snapshot(&dirs, timing)
        });
        let js = serde_json::to_string(&report).map_err(|e| e.to_string())?;
        std::fs::write(path, js).map_err(|e| format!("{path}: {e}"))?;
    }
    if let Some(path) = &cfg.stats {
        stats.rx_drops = [socks[0].rx_drops(), socks[1].rx_drops()];
        let mut js = stats.json(end.saturating_sub(sc.warmup_ns), cpu);
        js["preempted"] = context_switches().1.into();
        std::fs::write(path, js.to_string()).map_err(|e| format!("{path}: {e}"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_udp_and_tcp_frames() {
        // Ethernet + IPv4 (IHL 5, total length 186, UDP) + UDP header + seq 7.
        let mut f = vec![0u8; 14 + 186];
        f[12] = 0x08;
        f[14] = 0x45;
        f[14 + 2..14 + 4].copy_from_slice(&186u16.to_be_bytes());
        f[14 + 9] = 17;
        f[34..36].copy_from_slice(&5000u16.to_be_bytes());
        f[36..38].copy_from_slice(&6000u16.to_be_bytes());
        f[42..50].copy_from_slice(&7u64.to_be_bytes());
        let i = parse_frame(&f).unwrap();
        assert_eq!(
            (i.ip_len, i.proto, i.sport, i.dport, i.useq),
            (186, 17, 5000, 6000, 7)
        );
        // A pure ACK: IP 52 = 20 + TCP header 32 (doff 8): no payload.
        let mut f = vec![0u8; 14 + 52];
        f[12] = 0x08;
        f[14] = 0x45;
        f[14 + 2..14 + 4].copy_from_slice(&52u16.to_be_bytes());
        f[14 + 9] = 6;
        f[34 + 12] = 8 << 4;
        assert!(!parse_frame(&f).unwrap().tcp_payload);
        f[14 + 2..14 + 4].copy_from_slice(&1500u16.to_be_bytes());
        assert!(parse_frame(&f).unwrap().tcp_payload);
        // ARP is not parsed (passed through).
        f[13] = 0x06;
        assert!(parse_frame(&f).is_none());
    }
    /// The IPv4 header checksum of `ip` computed from scratch (RFC 791), with the
    /// checksum field taken as zero.
    fn full_checksum(ip: &[u8]) -> u16 {
        let ihl = ((ip[0] & 0x0f) as usize) * 4;
        let mut s: u32 = 0;
        for k in (0..ihl).step_by(2) {
            if k != 10 {
                s += u16::from_be_bytes([ip[k], ip[k + 1]]) as u32;
            }
        }
        while s >> 16 != 0 {
            s = (s & 0xffff) + (s >> 16);
        }
        !(s as u16)
    }

    /// An Ethernet frame with an IPv4 header (IHL 5, or 6 with an option word) and a
    /// correct checksum.
    fn frame(tos: u8, id: u16, ttl: u8, src: [u8; 4], dst: [u8; 4], option: bool) -> Vec<u8> {
        let ihl = if option { 6 } else { 5 };
        let mut f = vec![0u8; 14 + ihl * 4 + 8];
        f[12] = 0x08;
        let ip = &mut f[14..];
        ip[0] = 0x40 | ihl as u8;
        ip[1] = tos;
        ip[2..4].copy_from_slice(&((ihl * 4 + 8) as u16).to_be_bytes());
        ip[4..6].copy_from_slice(&id.to_be_bytes());
        ip[6] = 0x40; // DF
        ip[8] = ttl;
        ip[9] = 17;
        ip[12..16].copy_from_slice(&src);
        ip[16..20].copy_from_slice(&dst);
        if option {
            ip[20..24].copy_from_slice(&[0x94, 0x04, 0, 0]); // router alert
        }
        let c = full_checksum(ip);
        ip[10..12].copy_from_slice(&c.to_be_bytes());
        f
    }

    #[test]
    fn ce_rewrite_updates_the_checksum_as_a_full_recomputation_does() {
        // Wikipedia's IPv4 checksum example (45 00 00 73 00 00 40 00 40 11 b8 61 c0 a8 00
        // 01 c0 a8 00 c7, checksum b861) with TOS 02, ECT(0): two more in the sum, so the
        // checksum is b85f.
        let mut f = vec![0u8; 14 + 20];
        f[12] = 0x08;
        f[14..34].copy_from_slice(&[
            0x45, 0x02, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xb8, 0x5f, 0xc0, 0xa8,
            0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
        ]);
        assert_eq!(full_checksum(&f[14..]), 0xb85f);
        assert!(mark_ce_in_frame(&mut f));
        assert_eq!(f[15], 0x03);
        // 0x4502 -> 0x4503: one less in the checksum.
        assert_eq!(u16::from_be_bytes([f[24], f[25]]), 0xb85e);
        assert_eq!(full_checksum(&f[14..]), 0xb85e);
        // Already CE: nothing changes.
        let before = f.clone();
        assert!(!mark_ce_in_frame(&mut f));
        assert_eq!(f, before);
        // Many headers, every TOS that is not CE, with and without an option: the
        // incremental update equals the recomputation, including where the one's
        // complement sum wraps (ids chosen so the checksum sweeps its range).
        let mut x: u32 = 12345;
        for n in 0..20_000u32 {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            let tos = ((x >> 8) as u8) & !3 | (n % 3) as u8;
            let id = (x >> 16) as u16 ^ n as u16;
            let ttl = (x >> 3) as u8;
            let src = [198, 18, (x >> 5) as u8, (x >> 13) as u8];
            let dst = [198, 19, (x >> 21) as u8, n as u8];
            let mut f = frame(tos, id, ttl, src, dst, n % 2 == 1);
            assert!(mark_ce_in_frame(&mut f));
            assert_eq!(f[15], tos | 3);
            let ihl = ((f[14] & 0x0f) as usize) * 4;
            assert_eq!(
                u16::from_be_bytes([f[24], f[25]]),
                full_checksum(&f[14..14 + ihl]),
                "tos {tos:#x} id {id:#x}"
            );
        }
    }

    #[test]
    fn checksum_update_is_rfc_1624_eqn_3() {
        // RFC 1624 §4's example: HC 0xDD2F, m 0x5555 -> m' 0x3285 gives 0x0000 (eqn. 3;
        // eqn. 2 would give the wrong 0xFFFF).
        assert_eq!(checksum_update(0xdd2f, 0x5555, 0x3285), 0x0000);
    }

    /// A TCP segment from `src` to `dst`: flags byte `flags`, ACK number `ack`,
    /// `payload` bytes, options `opts` (padded to a multiple of 4).
    fn tcp(
        src: [u8; 4],
        dst: [u8; 4],
        flags: u8,
        ack: u32,
        payload: usize,
        opts: &[u8],
    ) -> Vec<u8> {
        let olen = opts.len().div_ceil(4) * 4;
        let tcp_len = 20 + olen;
        let ip_len = 20 + tcp_len + payload;
        let mut f = vec![0u8; 14 + ip_len];
        f[12] = 0x08;
        f[14] = 0x45;
        f[15] = 0x02;
        f[16..18].copy_from_slice(&(ip_len as u16).to_be_bytes());
        f[14 + 9] = 6;
        f[26..30].copy_from_slice(&src);
        f[30..34].copy_from_slice(&dst);
        let t = &mut f[34..];
        t[0..2].copy_from_slice(&5001u16.to_be_bytes());
        t[2..4].copy_from_slice(&40000u16.to_be_bytes());
        t[4..8].copy_from_slice(&777u32.to_be_bytes());
        t[8..12].copy_from_slice(&ack.to_be_bytes());
        t[12] = ((tcp_len / 4) as u8) << 4;
        t[13] = flags;
        t[20..20 + opts.len()].copy_from_slice(opts);
        f
    }

    #[test]
    fn tcp_headers_fill_what_the_queues_read() {
        use collateral_model::queue::tcp_flags;
        let (c, a) = ([198, 18, 0, 2], [198, 18, 0, 1]);
        let mut uw = Unwrap::new();
        // A pure ACK with ECE, timestamps (TSecr 0x01020304) and a SACK block.
        let ts = [1, 1, 8, 10, 0, 0, 0, 9, 1, 2, 3, 4];
        let sack = [1, 1, 5, 10, 0, 0, 0, 1, 0, 0, 0, 2];
        let opts: Vec<u8> = ts.iter().chain(&sack).copied().collect();
        let f = tcp(c, a, 0x10 | tcp_bits::ECE, 0xffff_ffef, 0, &opts);
        let i = parse_frame(&f).unwrap();
        assert!(!i.tcp_payload && i.tcp_sack);
        assert_eq!((i.tcp_ack, i.tcp_tsecr), (0xffff_ffef, 0x0102_0304));
        assert_eq!((i.src_host, i.dst_host), (0, 0));
        let p = to_packet(&i, 0, 5, 3 << SLOT_BITS | 7, &mut uw);
        assert_eq!(p.kind, PacketKind::Ack);
        assert_eq!(p.seq as u32, 0xffff_ffef);
        assert_eq!(p.echo as u32, 0x0102_0304);
        assert_eq!((p.sack, p.flags, p.tos), (1, tcp_flags::ECE, 0x02));
        assert_eq!((slot(&p), p.arrived, p.flow), (7, 5, 5001 << 16 | 40000));
        // The next ACK, past a wrap of the ACK number, without SACK, with CWR: it is
        // after the previous one on u64 too.
        let f2 = tcp(c, a, 0x10 | tcp_bits::CWR, 0x10, 0, &ts);
        let p2 = to_packet(&parse_frame(&f2).unwrap(), 0, 6, 4 << SLOT_BITS, &mut uw);
        assert_eq!(
            (p2.seq - p.seq, p2.sack, p2.flags),
            (0x21, 0, tcp_flags::CWR)
        );
        assert!(p2.sent > p.sent);
        // An older ACK arriving later stays below.
        let f3 = tcp(c, a, 0x10, 0xffff_fff0, 0, &[]);
        let p3 = to_packet(&parse_frame(&f3).unwrap(), 0, 7, 5 << SLOT_BITS, &mut uw);
        assert!(p3.seq < p2.seq && p3.seq > p.seq);
        // FIN and SYN without payload: Setup, never a pure ACK.
        for fl in [0x11, 0x02, 0x12, 0x14] {
            let p = to_packet(
                &parse_frame(&tcp(a, c, fl, 0, 0, &[])).unwrap(),
                0,
                0,
                0,
                &mut uw,
            );
            assert_eq!(p.kind, PacketKind::Setup, "flags {fl:#x}");
        }
        // Data with a FIN is data; sequence number, AE bit.
        let mut f = tcp(a, c, 0x11, 0, 1448, &[]);
        f[34 + 12] |= 1;
        let p = to_packet(&parse_frame(&f).unwrap(), 14, 0, 0, &mut uw);
        assert_eq!(
            (p.kind, p.seq, p.flags, p.bytes()),
            (PacketKind::Data, 777, tcp_flags::AE, 1488 + 14)
        );
        // The CBR hosts are host 1 on both sides.
        let f = tcp([198, 18, 0, 3], [198, 18, 0, 4], 0x10, 0, 0, &[]);
        let i = parse_frame(&f).unwrap();
        assert_eq!((i.src_host, i.dst_host), (1, 1));
        assert_eq!(host_index([10, 0, 0, 3]), 0);
    }

    #[test]
    fn arrivals_take_the_kernel_stamp_within_the_models_clock() {
        let t0 = 1_000_000_000_000;
        // Stamped 30 µs before it was read at trial time 1 ms.
        assert_eq!(arrival_time(t0 + 970_000, t0, 1_000_000, 0), 970_000);
        // Never before where the model already is, nor after the read.
        assert_eq!(arrival_time(t0 + 970_000, t0, 1_000_000, 990_000), 990_000);
        assert_eq!(arrival_time(t0 + 1_200_000, t0, 1_000_000, 0), 1_000_000);
        // No stamp, one before the origin, or one absurdly old: the time of the read.
        assert_eq!(arrival_time(0, t0, 1_000_000, 0), 1_000_000);
        assert_eq!(arrival_time(t0 - 5, t0, 1_000_000, 0), 1_000_000);
        assert_eq!(arrival_time(t0 + 1, t0, 3_000_000_000, 0), 3_000_000_000);
    }

    #[test]
    fn unwrapping_follows_the_nearest_lap() {
        let a = unwrap32(None, 5);
        assert_eq!(a, (1 << 32) + 5);
        assert_eq!(unwrap32(Some(a), 3), (1 << 32) + 3);
        let b = unwrap32(Some((1 << 32) + 0xffff_fff0), 0x20);
        assert_eq!(b, (2 << 32) + 0x20);
    }
}
