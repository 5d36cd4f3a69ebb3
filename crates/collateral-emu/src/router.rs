//! The bottleneck router: frames arriving on one interface wait in the same queue
//! discipline the simulator uses, are serialised at the configured rate, held for the
//! propagation delay and put on the other interface.
//!
//! Timekeeping follows the simulator's lazy link: a transmission that completes at `t`
//! starts the next one at exactly `t` (not when the loop happens to notice), so rate and
//! delay are exact on average however late the process wakes; only the moment a frame is
//! written to the wire carries the wake-up jitter.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::sync::atomic::{AtomicBool, Ordering};

use collateral_queue::{
    AnyQueue, Discipline, DisciplineConfig, DropTail, Framing, FullRule, Packet, PacketKind,
};

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

/// One direction's settings.
#[derive(Debug, Clone)]
pub struct DirConfig {
    pub rate_bps: u64,
    pub delay_ns: u64,
    pub queue: QueueSpec,
    /// Link-layer overhead and ATM cells: serialisation only, as in the simulator.
    pub framing: Framing,
}

/// The queue discipline: drop-tail with one of the three rules, or an AQM/scheduler
/// described by the queue crate's JSON (`{"kind": "red", ...}`).
#[derive(Debug, Clone)]
pub enum QueueSpec {
    DropTail {
        rule: FullRule,
        limit: u64,
        count_in_service: bool,
    },
    Aqm(DisciplineConfig),
}

impl QueueSpec {
    pub fn build(&self, rate_bps: u64) -> Result<AnyQueue, String> {
        match self {
            QueueSpec::DropTail {
                rule,
                limit,
                count_in_service,
            } => Ok(AnyQueue::DropTail(DropTail::new(
                *rule,
                *limit,
                *count_in_service,
            ))),
            QueueSpec::Aqm(c) => c.build(rate_bps),
        }
    }
}

/// Parses a queue: `RULE:LIMIT[:count]` or a discipline's JSON object.
pub fn parse_queue_spec(s: &str) -> Result<QueueSpec, String> {
    if s.trim_start().starts_with('{') {
        let c: DisciplineConfig =
            serde_json::from_str(s).map_err(|e| format!("queue {s:?}: {e}"))?;
        return Ok(QueueSpec::Aqm(c));
    }
    let (rule, limit, count_in_service) = parse_queue(s)?;
    Ok(QueueSpec::DropTail {
        rule,
        limit,
        count_in_service,
    })
}

/// Parses `RULE:LIMIT[:count]`, e.g. `fb_strict:40000` or `ps:27:count`.
pub fn parse_queue(s: &str) -> Result<(FullRule, u64, bool), String> {
    let parts: Vec<&str> = s.split(':').collect();
    let rule = match parts.first().copied() {
        Some("ps") => FullRule::Ps,
        Some("fb_strict") => FullRule::FbStrict,
        Some("fb_loose") => FullRule::FbLoose,
        _ => {
            return Err(format!(
                "queue {s:?}: rule must be ps, fb_strict or fb_loose"
            ))
        }
    };
    let limit: u64 = parts
        .get(1)
        .and_then(|l| l.parse().ok())
        .filter(|&l| l > 0)
        .ok_or_else(|| format!("queue {s:?}: limit must be a positive integer"))?;
    let count = matches!(parts.get(2), Some(&"count"));
    Ok((rule, limit, count))
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

struct Direction {
    cfg: DirConfig,
    queue: AnyQueue,
    in_tx: Option<(Packet, u64)>,
    delay: VecDeque<(u64, Packet)>,
    drops: Vec<Packet>,
}

impl Direction {
    fn ser(&self, len: u32) -> u64 {
        let wire = self.cfg.framing.wire_bytes(len) as u64;
        (wire * 8_000_000_000).div_ceil(self.cfg.rate_bps)
    }

    /// Completes every transmission due by `t`, each next one starting exactly when the
    /// previous ended.
    fn catch_up(&mut self, t: u64) {
        while let Some((pkt, done)) = self.in_tx {
            if done > t {
                break;
            }
            self.queue.transmit_done(done);
            self.delay.push_back((done + self.cfg.delay_ns, pkt));
            self.in_tx = None;
            self.start(done);
        }
    }

    fn start(&mut self, t: u64) {
        if self.in_tx.is_none() {
            if let Some(p) = self.queue.dequeue(t, &mut self.drops) {
                self.in_tx = Some((p, t + self.ser(p.len)));
            }
        }
    }

    fn next_deadline(&self) -> u64 {
        let a = self.in_tx.map_or(u64::MAX, |(_, d)| d);
        let b = self.delay.front().map_or(u64::MAX, |&(r, _)| r);
        a.min(b)
    }
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
    /// Index 0: left → right ("down"), 1: right → left ("up").
    pub dirs: [DirConfig; 2],
    /// Bytes added to each IP length for queue accounting and serialisation (0 = IP
    /// lengths, as the simulator counts; 14 = Ethernet frames, as Linux qdiscs count).
    pub l2_overhead: u32,
    pub log: Option<String>,
    pub duration_ns: Option<u64>,
}

pub fn run(cfg: RouterConfig) -> Result<(), String> {
    tight_timers();
    install_signal_handlers();
    let socks = [
        PacketSocket::open(&cfg.left).map_err(|e| format!("{}: {e}", cfg.left))?,
        PacketSocket::open(&cfg.right).map_err(|e| format!("{}: {e}", cfg.right))?,
    ];
    let mut dirs: Vec<Direction> = cfg
        .dirs
        .iter()
        .map(|d| -> Result<Direction, String> {
            Ok(Direction {
                cfg: d.clone(),
                queue: d.queue.build(d.rate_bps)?,
                in_tx: None,
                delay: VecDeque::new(),
                drops: Vec::new(),
            })
        })
        .collect::<Result<_, String>>()?;
    let mut log = match &cfg.log {
        Some(p) => {
            let mut w = BufWriter::with_capacity(
                1 << 20,
                File::create(p).map_err(|e| format!("{p}: {e}"))?,
            );
            let offset = real_ns() as i128 - mono_ns() as i128;
            writeln!(
                w,
                "# collateral-emu router; realtime_minus_monotonic_ns={offset}"
            )
            .unwrap();
            // ev: 0 = queued, 1 = dropped, 2 = left the router (after the delay).
            writeln!(w, "t_ns,ev,dir,ip_len,proto,sport,dport,useq").unwrap();
            Some(w)
        }
        None => None,
    };
    let mut slab = Slab {
        frames: Vec::new(),
        free: Vec::new(),
    };
    let mut infos: Vec<FrameInfo> = Vec::new();
    let mut buf = vec![0u8; 65536];
    let t_end = cfg.duration_ns.map(|d| mono_ns() + d);
    let fds = [socks[0].fd, socks[1].fd];
    macro_rules! logev {
        ($t:expr, $ev:expr, $d:expr, $i:expr) => {
            if let Some(w) = log.as_mut() {
                let i: &FrameInfo = $i;
                let _ = writeln!(
                    w,
                    "{},{},{},{},{},{},{},{}",
                    $t, $ev, $d, i.ip_len, i.proto, i.sport, i.dport, i.useq
                );
            }
        };
    }
    while !STOP.load(Ordering::Relaxed) {
        let now = mono_ns();
        if t_end.is_some_and(|e| now >= e) {
            break;
        }
        // Transmissions and deliveries due now.
        for (d, dir) in dirs.iter_mut().enumerate() {
            dir.catch_up(now);
            while let Some(&(release, pkt)) = dir.delay.front() {
                if release > now {
                    break;
                }
                dir.delay.pop_front();
                let idx = pkt.seq as usize;
                let _ = socks[1 - d].send(&slab.frames[idx]);
                logev!(release, 2, d, &infos[idx]);
                slab.free.push(idx);
            }
        }
        let deadline = dirs
            .iter()
            .map(|d| d.next_deadline())
            .min()
            .unwrap()
            .min(now + 50_000_000);
        let ready = ppoll(&fds, deadline.saturating_sub(mono_ns())).map_err(|e| e.to_string())?;
        for (d, &r) in ready.iter().enumerate() {
            if !r {
                continue;
            }
            while let Some(n) = socks[d].recv(&mut buf).map_err(|e| e.to_string())? {
                let t = mono_ns();
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
                pkt.tag = info.tos >> 2;
                pkt.arrived = t;
                let dir = &mut dirs[d];
                dir.catch_up(t);
                let mut drops = std::mem::take(&mut dir.drops);
                let accepted = dir.queue.enqueue(t, pkt, &mut drops);
                if accepted {
                    logev!(t, 0, d, &info);
                }
                for p in drops.drain(..) {
                    let i = p.seq as usize;
                    logev!(t, 1, d, &infos[i]);
                    slab.free.push(i);
                }
                dir.drops = drops;
                dir.start(t);
            }
        }
    }
    if let Some(mut w) = log {
        w.flush().map_err(|e| e.to_string())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_queue_specs() {
        assert_eq!(
            parse_queue("fb_strict:40000").unwrap(),
            (FullRule::FbStrict, 40000, false)
        );
        assert_eq!(
            parse_queue("ps:27:count").unwrap(),
            (FullRule::Ps, 27, true)
        );
        assert!(parse_queue("red:10").is_err());
        assert!(parse_queue("ps:0").is_err());
        let red = r#"{"kind":"red","min_th":5,"max_th":15,"max_p":0.1,"w_q":0.002,"limit":60}"#;
        assert!(matches!(parse_queue_spec(red).unwrap(), QueueSpec::Aqm(_)));
        assert!(parse_queue_spec(red).unwrap().build(10_000_000).is_ok());
        assert!(parse_queue_spec(r#"{"kind":"red","bogus":1}"#).is_err());
        assert!(matches!(
            parse_queue_spec("ps:5").unwrap(),
            QueueSpec::DropTail { limit: 5, .. }
        ));
    }

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
