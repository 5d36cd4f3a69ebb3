//! The bottleneck router: frames arriving on one interface go through the same
//! [`Bottleneck`] the simulator uses — queue discipline, rate clock with framing, delay
//! line, drop and occupancy observation, per-class meter — built from the same scenario
//! JSON, and are put on the other interface when the delay line releases them.
//!
//! The router's clock is trial time: nanoseconds since the run's origin `t0`, which the
//! endpoints share, so time-driven disciplines (CoDel, PIE), phases and bins line up
//! with the simulator's.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::sync::atomic::{AtomicBool, Ordering};

use collateral_sim::bottleneck::Bottleneck;
use collateral_sim::measure::{self, RouterReport};
use collateral_sim::queue::{Packet, PacketKind};
use collateral_sim::{Direction, Scenario};

use crate::net::{mono_ns, ppoll, real_ns, tight_timers, PacketSocket};

pub static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
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
    pub tos: u8,
    pub sport: u16,
    pub dport: u16,
    /// The first 8 bytes of a UDP payload (the CBR sequence number), else 0.
    pub useq: u64,
    pub tcp_payload: bool,
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
    let mut info = FrameInfo {
        ip_len,
        proto,
        tos: ip[1],
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
    if proto == 6 && l4.len() >= 13 {
        let doff = ((l4[12] >> 4) as u32) * 4;
        info.tcp_payload = ip_len > ihl as u32 + doff;
    }
    Some(info)
}

/// Frame buffers, indexed by `Packet::seq`, reused through a free list.
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
}

/// The router's log and the frames' header fields, by slab index.
struct Log {
    w: Option<BufWriter<File>>,
}

impl Log {
    /// ev: 0 = queued, 1 = dropped, 2 = left the router (after the delay).
    fn ev(&mut self, t: u64, ev: u8, dir: usize, i: &FrameInfo) {
        if let Some(w) = self.w.as_mut() {
            let _ = writeln!(
                w,
                "{t},{ev},{dir},{},{},{},{},{}",
                i.ip_len, i.proto, i.sport, i.dport, i.useq
            );
        }
    }
}

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
    let mut log = Log {
        w: match &cfg.log {
            Some(p) => {
                let mut w = BufWriter::with_capacity(
                    1 << 20,
                    File::create(p).map_err(|e| format!("{p}: {e}"))?,
                );
                writeln!(w, "t_ns,ev,dir,ip_len,proto,sport,dport,useq")
                    .map_err(|e| e.to_string())?;
                Some(w)
            }
            None => None,
        },
    };
    let mut slab = Slab {
        frames: Vec::new(),
        free: Vec::new(),
    };
    let mut infos: Vec<FrameInfo> = Vec::new();
    let mut buf = vec![0u8; 65536];
    let origin = mono_of_real(cfg.t0_real);
    let clock = || mono_ns().saturating_sub(origin);
    let fds = [socks[0].fd, socks[1].fd];
    // Packets the discipline dropped, or the wire lost: logged, their buffers freed.
    let drain =
        |b: &mut Bottleneck, d: usize, log: &mut Log, slab: &mut Slab, infos: &[FrameInfo]| {
            for (t, p, _wire) in b.dropped.drain(..) {
                let i = p.seq as usize;
                log.ev(t, 1, d, &infos[i]);
                slab.free.push(i);
            }
        };
    // The counters as they stand at the end of the run (the router keeps forwarding
    // after it, so that packets in flight then reach their receivers).
    let end = sc.duration_ns;
    let snapshot = |dirs: &[Bottleneck; 2]| RouterReport {
        down: measure::queue_summary(&dirs[0], dirs[0].in_flight() as u64),
        up: measure::queue_summary(&dirs[1], dirs[1].in_flight() as u64),
        phases: measure::phase_summaries(sc, [&dirs[0].meter, &dirs[1].meter]),
    };
    let mut report: Option<RouterReport> = None;
    while !STOP.load(Ordering::Relaxed) {
        let now = clock();
        if now >= cfg.until_ns {
            break;
        }
        if report.is_none() && now >= end {
            for b in dirs.iter_mut() {
                b.catch_up(end);
            }
            report = Some(snapshot(&dirs));
        }
        // Transmissions and releases due now.
        for (d, b) in dirs.iter_mut().enumerate() {
            b.catch_up(now);
            drain(b, d, &mut log, &mut slab, &infos);
            while let Some((release, pkt)) = b.pop_released(now) {
                let idx = pkt.seq as usize;
                let _ = socks[1 - d].send(&slab.frames[idx]);
                log.ev(release, 2, d, &infos[idx]);
                slab.free.push(idx);
            }
        }
        let deadline = dirs
            .iter()
            .map(|b| b.next_completion().min(b.delay.next_release()))
            .min()
            .unwrap()
            .min(now + 50_000_000)
            .min(if report.is_none() { end } else { u64::MAX });
        let ready = ppoll(&fds, deadline.saturating_sub(clock())).map_err(|e| e.to_string())?;
        for (d, &r) in ready.iter().enumerate() {
            if !r {
                continue;
            }
            while let Some(n) = socks[d].recv(&mut buf).map_err(|e| e.to_string())? {
                let t = clock();
                let frame = &buf[..n];
                let Some(info) = parse_frame(frame) else {
                    let _ = socks[1 - d].send(frame); // not IPv4: pass straight through
                    continue;
                };
                let idx = slab.put(frame);
                if infos.len() <= idx {
                    infos.resize(idx + 1, FrameInfo::default());
                }
                infos[idx] = info;
                let kind = match info.proto {
                    17 => PacketKind::Cbr,
                    6 if info.tcp_payload => PacketKind::Data,
                    _ => PacketKind::Ack,
                };
                let flow =
                    ((info.proto as u32) << 16) ^ ((info.sport as u32) << 8) ^ info.dport as u32;
                let mut pkt = Packet::new(kind, flow, info.ip_len + cfg.l2_overhead, idx as u64, t);
                pkt.tos = info.tos;
                pkt.arrived = t;
                let b = &mut dirs[d];
                b.catch_up(t);
                if b.arrive(t, pkt) {
                    log.ev(t, 0, d, &info);
                }
                drain(b, d, &mut log, &mut slab, &infos);
            }
        }
    }
    if let Some(mut w) = log.w {
        w.flush().map_err(|e| e.to_string())?;
    }
    if let Some(path) = &cfg.report {
        let report = report.unwrap_or_else(|| snapshot(&dirs));
        let js = serde_json::to_string(&report).map_err(|e| e.to_string())?;
        std::fs::write(path, js).map_err(|e| format!("{path}: {e}"))?;
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
}
