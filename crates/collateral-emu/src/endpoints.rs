//! Measurement endpoints that run inside the host namespaces: a CBR/VoIP source and sink
//! with sequence numbers and send timestamps (one-way delay from one shared kernel clock),
//! and a bulk TCP source and sink using the real kernel TCP, with TCP_INFO polled every
//! millisecond like Web100.

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::net::{TcpListener, TcpStream, UdpSocket};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::net::{
    enable_rx_timestamps, mono_ns, real_ns, recv_with_timestamp, set_congestion, sleep_until_mono,
    tcp_info,
};
use crate::router::STOP;
use collateral_model::traffic::{CbrSource, UDP_HEADERS};
use collateral_model::Scenario;

pub(crate) fn create(path: &str) -> Result<BufWriter<File>, String> {
    File::create(path)
        .map(|f| BufWriter::with_capacity(1 << 20, f))
        .map_err(|e| format!("{path}: {e}"))
}

/// Trial time: nanoseconds since the run's origin `t0` (CLOCK_REALTIME), negative
/// before it. Every endpoint logs in trial time, as the router does.
pub fn trial_ns(t0_real: u64) -> i64 {
    real_ns() as i64 - t0_real as i64
}

pub struct CbrSend {
    pub scenario: Scenario,
    /// The flow's index among the scenario's CBR flows.
    pub flow: usize,
    pub src: String,
    pub dst: String,
    pub t0_real: u64,
    pub out: String,
}

/// Bytes of UDP payload that carry the sequence number; a departure smaller than IP +
/// UDP headers + this is padded up to it (only thin-stream applications' tiniest
/// packets, e.g. VNC's 1-byte payloads), and the log records the length sent.
pub const SEQ_BYTES: u32 = 8;

/// The departures `(trial time, IP length)` of the scenario's CBR flow `flow`, as the
/// sender makes them: the simulator's source, sizes padded to carry the sequence number.
pub fn departures(sc: &Scenario, flow: usize) -> impl Iterator<Item = (u64, u32)> + '_ {
    let mut src = CbrSource::of_flow(&sc.cbr[flow], sc.seed, flow);
    std::iter::from_fn(move || src.next_departure(sc.duration_ns))
        .map(|(t, len)| (t, len.max(UDP_HEADERS + SEQ_BYTES)))
}

/// Sends the scenario's CBR flow `flow` on the schedule the simulator's source draws
/// from the same seed ([`CbrSource::of_flow`]): each packet carries its sequence
/// number; logs `seq,send_ns,len` (trial time, IP length).
pub fn cbr_send(c: CbrSend) -> Result<(), String> {
    let cfg = c.scenario.cbr.get(c.flow).ok_or_else(|| {
        format!(
            "--flow {}: the scenario has {} CBR flows",
            c.flow,
            c.scenario.cbr.len()
        )
    })?;
    let sock = UdpSocket::bind(&c.src).map_err(|e| format!("bind {}: {e}", c.src))?;
    sock.connect(&c.dst)
        .map_err(|e| format!("connect {}: {e}", c.dst))?;
    let tos = cfg.tag << 2 | cfg.ecn as u8;
    if tos != 0 {
        set_tos(&sock, tos)?;
    }
    let mut buf = vec![0u8; 65536];
    let mut out = create(&c.out)?;
    writeln!(out, "seq,send_ns,len").map_err(|e| e.to_string())?;
    let origin = crate::router::mono_of_real(c.t0_real);
    for (seq, (t, len)) in (0u64..).zip(departures(&c.scenario, c.flow)) {
        if STOP.load(Ordering::Relaxed) {
            break;
        }
        sleep_until_mono(origin + t);
        buf[..8].copy_from_slice(&seq.to_be_bytes());
        let sent = trial_ns(c.t0_real);
        let _ = sock.send(&buf[..(len - UDP_HEADERS) as usize]);
        writeln!(out, "{seq},{sent},{len}").map_err(|e| e.to_string())?;
    }
    out.flush().map_err(|e| e.to_string())
}

/// Marks every packet the socket sends with `tos` (IP_TOS).
pub(crate) fn set_tos(sock: &UdpSocket, tos: u8) -> Result<(), String> {
    set_tos_fd(sock.as_raw_fd(), tos)
}

/// IP_TOS on any socket: for TCP the kernel keeps the ECN bits its own, so `tos` is
/// the DSCP shifted left by two.
pub(crate) fn set_tos_fd(fd: std::os::fd::RawFd, tos: u8) -> Result<(), String> {
    let v = tos as libc::c_int;
    // SAFETY: a valid socket descriptor and a pointer to an int of the size passed.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            libc::IPPROTO_IP,
            libc::IP_TOS,
            &v as *const libc::c_int as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc != 0 {
        return Err(format!("IP_TOS {tos}: {}", std::io::Error::last_os_error()));
    }
    Ok(())
}

/// Receives CBR packets until trial time `until_ns`; logs `seq,recv_ns` with the
/// kernel's arrival timestamp in trial time.
pub fn cbr_recv(bind: &str, t0_real: u64, until_ns: u64, out_path: &str) -> Result<(), String> {
    let sock = UdpSocket::bind(bind).map_err(|e| format!("bind {bind}: {e}"))?;
    enable_rx_timestamps(sock.as_raw_fd()).map_err(|e| e.to_string())?;
    sock.set_read_timeout(Some(Duration::from_millis(50)))
        .map_err(|e| e.to_string())?;
    let mut out = create(out_path)?;
    writeln!(out, "seq,recv_ns").map_err(|e| e.to_string())?;
    let mut buf = [0u8; 65536];
    while trial_ns(t0_real) < until_ns as i64 && !STOP.load(Ordering::Relaxed) {
        match recv_with_timestamp(sock.as_raw_fd(), &mut buf) {
            Ok((n, t)) if n >= SEQ_BYTES as usize => {
                let seq = u64::from_be_bytes(buf[..8].try_into().unwrap());
                let at = t as i64 - t0_real as i64;
                writeln!(out, "{seq},{at}").map_err(|e| e.to_string())?;
            }
            _ => {}
        }
    }
    out.flush().map_err(|e| e.to_string())
}

/// A bulk sender: connects, selects the congestion control, writes as fast as TCP lets
/// it for `duration`, and polls TCP_INFO every `poll_ns` from a second thread.
pub struct TcpSend {
    pub src_ip: String,
    pub dst: String,
    pub cc: String,
    /// The IP TOS byte of its segments (the flow's DSCP, as the simulator marks them).
    pub tos: u8,
    pub t0_real: u64,
    /// When the flow connects, after the origin (its seeded start offset).
    pub start_ns: u64,
    /// When it stops (the simulator's `stop`: no new data after it); what its socket
    /// holds unsent then is dropped (see `abort`).
    pub stop_ns: Option<u64>,
    pub duration_ns: u64,
    pub poll_ns: u64,
    /// `t_ns,cwnd,ssthresh,srtt_us,total_retrans,ca_state`, a row per poll.
    pub out: String,
    /// `t_ns` of each congestion event: the kernel's entry into Recovery or Loss.
    pub congestion_out: String,
    /// A workload's self probes: their interval and `sent_ns,rtt_ns,acked_bytes` out.
    pub self_probes: Option<(u64, String)>,
}

/// Linux's `TCP_CA_Recovery`: fast recovery; `TCP_CA_Loss` (4) after a timeout.
const TCP_CA_RECOVERY: u8 = 3;

/// The times at which the polled congestion-avoidance state enters Recovery or Loss
/// from an open state: the kernel's congestion events, as the simulator counts fast
/// retransmits and timeouts.
pub fn congestion_events(rows: &[(i64, u8)]) -> Vec<i64> {
    let mut prev = 0u8;
    let mut out = Vec::new();
    for &(t, st) in rows {
        if st >= TCP_CA_RECOVERY && prev < TCP_CA_RECOVERY {
            out.push(t);
        }
        prev = st;
    }
    out
}

/// A bulk sender: connects at the run's origin, selects the congestion control, writes
/// as fast as TCP lets it for the run's duration, and polls TCP_INFO every `poll_ns`
/// from a second thread.
pub fn tcp_send(c: TcpSend) -> Result<(), String> {
    let (cc, duration_ns, poll_ns, t0_real) = (c.cc.as_str(), c.duration_ns, c.poll_ns, c.t0_real);
    let origin = crate::router::mono_of_real(t0_real);
    sleep_until_mono(origin + c.start_ns.min(duration_ns));
    if STOP.load(Ordering::Relaxed) {
        return Ok(()); // stopped before its start: nothing sent, nothing to log
    }
    let end = origin + c.stop_ns.map_or(duration_ns, |s| s.min(duration_ns));
    let Some(stream) = connect_from(&c.src_ip, &c.dst, c.tos, Some(cc), end)? else {
        // No connection by its end: nothing sent, empty logs (0 goodput), as the
        // simulator's flow whose SYNs are all lost.
        eprintln!("tcp send: no connection to {} by the flow's end", c.dst);
        return empty_logs(&c);
    };
    let fd = stream.as_raw_fd();
    let done = Arc::new(AtomicBool::new(false));
    let poller = {
        let done = done.clone();
        std::thread::spawn(move || {
            let mut rows = Vec::with_capacity((duration_ns / poll_ns.max(1)) as usize + 16);
            let mut next = mono_ns();
            while !done.load(Ordering::Relaxed) {
                if let Ok(i) = tcp_info(fd) {
                    rows.push((
                        trial_ns(t0_real),
                        i.tcpi_snd_cwnd,
                        i.tcpi_snd_ssthresh,
                        i.tcpi_rtt,
                        i.tcpi_total_retrans,
                        i.tcpi_ca_state,
                    ));
                }
                next += poll_ns;
                sleep_until_mono(next);
            }
            rows
        })
    };
    let mut w = &stream;
    let chunk = vec![0x5au8; 1 << 16];
    stream
        .set_write_timeout(Some(Duration::from_millis(100)))
        .map_err(|e| e.to_string())?;
    let mut probes = match &c.self_probes {
        Some((every, _)) => Some(
            crate::self_probe::SelfProbes::enable(fd, *every, t0_real, mono_ns())
                .map_err(|e| format!("SO_TIMESTAMPING: {e}"))?,
        ),
        None => None,
    };
    while mono_ns() < end && !STOP.load(Ordering::Relaxed) {
        let sent = match probes.as_mut() {
            Some(p) => {
                p.drain();
                p.write(&chunk, mono_ns())
            }
            None => w.write(&chunk),
        };
        if let Err(e) = sent {
            if !matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ) {
                break;
            }
        }
    }
    done.store(true, Ordering::Relaxed);
    let rows = poller.join().map_err(|_| "TCP_INFO poller panicked")?;
    if c.stop_ns.is_some_and(|s| s < duration_ns) && probes.is_none() {
        // At its stop the flow sends no new data, as the simulator's: what its socket
        // still holds unsent (hundreds of kB with the kernel's autotuning: seconds on a
        // slow line) is dropped with a reset, not drained into the bottleneck; what is
        // already queued there still arrives.
        abort(stream);
    } else {
        let _ = stream.shutdown(std::net::Shutdown::Both);
    }
    let mut out = create(&c.out)?;
    let io = |e: std::io::Error| e.to_string();
    writeln!(out, "t_ns,cwnd,ssthresh,srtt_us,total_retrans,ca_state").map_err(io)?;
    for &(t, c, s, r, x, st) in &rows {
        writeln!(out, "{t},{c},{s},{r},{x},{st}").map_err(io)?;
    }
    out.flush().map_err(io)?;
    if let (Some(p), Some((_, path))) = (probes.as_mut(), &c.self_probes) {
        p.drain();
        let mut out = create(path)?;
        writeln!(out, "sent_ns,rtt_ns,acked_bytes").map_err(io)?;
        for &(t, r, b) in &p.samples {
            writeln!(out, "{t},{r},{b}").map_err(io)?;
        }
        out.flush().map_err(io)?;
    }
    let states: Vec<(i64, u8)> = rows.iter().map(|r| (r.0, r.5)).collect();
    let mut ev = create(&c.congestion_out)?;
    writeln!(ev, "t_ns").map_err(io)?;
    for t in congestion_events(&states) {
        writeln!(ev, "{t}").map_err(io)?;
    }
    ev.flush().map_err(io)
}

/// The logs of a flow that never connected: their headers alone.
fn empty_logs(c: &TcpSend) -> Result<(), String> {
    let io = |e: std::io::Error| e.to_string();
    let mut out = create(&c.out)?;
    writeln!(out, "t_ns,cwnd,ssthresh,srtt_us,total_retrans,ca_state").map_err(io)?;
    out.flush().map_err(io)?;
    if let Some((_, path)) = &c.self_probes {
        let mut out = create(path)?;
        writeln!(out, "sent_ns,rtt_ns,acked_bytes").map_err(io)?;
        out.flush().map_err(io)?;
    }
    let mut ev = create(&c.congestion_out)?;
    writeln!(ev, "t_ns").map_err(io)?;
    ev.flush().map_err(io)
}

/// Closes `stream` with a reset (SO_LINGER of 0): its unsent and unacknowledged bytes
/// are discarded.
fn abort(stream: TcpStream) {
    let off = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: a valid socket descriptor and a pointer to a linger of the size passed.
    unsafe {
        libc::setsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            &off as *const libc::linger as *const libc::c_void,
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        );
    }
    drop(stream);
}

/// A TCP connection from `src_ip` to `dst`, its segments (the SYN too) marked `tos`,
/// with congestion control `cc` (else the system's default); `None` when none was made
/// by `deadline` (monotonic ns: the flow's end), its SYNs lost or unanswered — the flow
/// then sent nothing, as the simulator's would not. A refused connect (the receiver
/// still starting) is tried again, 50 times at most.
///
/// `cc` is chosen before connecting: the kernel runs the algorithm's init when the
/// connection is established, and BBR's init turns on the socket's internal pacing,
/// which a later switch to CUBIC or Reno keeps. With BBR as the system's default
/// (this project's machines), a CUBIC sender chosen after `connect` was paced at
/// Linux's window rate, which a stock CUBIC sender is not.
pub(crate) fn connect_from(
    src_ip: &str,
    dst: &str,
    tos: u8,
    cc: Option<&str>,
    deadline: u64,
) -> Result<Option<TcpStream>, String> {
    // Bind the source address so the flow leaves from the TCP host's address.
    let src: std::net::SocketAddr = format!("{src_ip}:0")
        .parse()
        .map_err(|e| format!("{src_ip}: {e}"))?;
    let dst: std::net::SocketAddr = dst.parse().map_err(|e| format!("{dst}: {e}"))?;
    let os = std::io::Error::last_os_error;
    // SAFETY: plain socket syscalls on a fresh fd that TcpStream then owns.
    unsafe {
        use std::os::fd::FromRawFd;
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0);
        if fd < 0 {
            return Err(os().to_string());
        }
        let stream = TcpStream::from_raw_fd(fd);
        if tos != 0 {
            set_tos_fd(fd, tos)?;
        }
        if let Some(cc) = cc {
            set_congestion(fd, cc).map_err(|e| format!("congestion control {cc}: {e}"))?;
        }
        let to_sa = |a: &std::net::SocketAddr| {
            let std::net::SocketAddr::V4(v4) = a else {
                unreachable!()
            };
            libc::sockaddr_in {
                sin_family: libc::AF_INET as u16,
                sin_port: v4.port().to_be(),
                sin_addr: libc::in_addr {
                    s_addr: u32::from(*v4.ip()).to_be(),
                },
                sin_zero: [0; 8],
            }
        };
        let s = to_sa(&src);
        if libc::bind(fd, &s as *const _ as *const libc::sockaddr, 16) < 0 {
            return Err(format!("bind {src}: {}", os()));
        }
        // Non-blocking while connecting: a blocking connect waits out the kernel's SYN
        // retries (over two minutes), past the flow's end.
        stream.set_nonblocking(true).map_err(|e| e.to_string())?;
        let d = to_sa(&dst);
        let mut refused = 0;
        loop {
            let err = if libc::connect(fd, &d as *const _ as *const libc::sockaddr, 16) == 0 {
                0
            } else {
                os().raw_os_error().unwrap_or(0)
            };
            let err = match err {
                libc::EINPROGRESS | libc::EALREADY => loop {
                    if STOP.load(Ordering::Relaxed) {
                        return Err(format!("connect {dst}: stopped (SIGINT/SIGTERM)"));
                    }
                    let now = mono_ns();
                    if now >= deadline {
                        return Ok(None);
                    }
                    let wait_ms = ((deadline - now) / 1_000_000).clamp(1, 100) as i32;
                    let mut p = libc::pollfd {
                        fd,
                        events: libc::POLLOUT,
                        revents: 0,
                    };
                    if libc::poll(&mut p, 1, wait_ms) > 0 {
                        let mut e: libc::c_int = 0;
                        let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
                        libc::getsockopt(
                            fd,
                            libc::SOL_SOCKET,
                            libc::SO_ERROR,
                            &mut e as *mut _ as *mut libc::c_void,
                            &mut len,
                        );
                        break e;
                    }
                },
                e => e,
            };
            match err {
                0 | libc::EISCONN => break,
                libc::ECONNREFUSED if refused < 50 && !STOP.load(Ordering::Relaxed) => {
                    refused += 1;
                    std::thread::sleep(Duration::from_millis(20)); // the receiver starting
                }
                e => {
                    return Err(format!(
                        "connect {dst}: {}",
                        std::io::Error::from_raw_os_error(e)
                    ))
                }
            }
        }
        stream.set_nonblocking(false).map_err(|e| e.to_string())?;
        Ok(Some(stream))
    }
}

/// A bulk receiver: accepts one connection and logs, every 10 ms until the sender closes
/// or trial time `until_ns`, `t_ns,bytes,in_order,segs_in,mss`: trial time, bytes read,
/// and from the kernel's TCP_INFO the bytes received in order (`tcpi_bytes_received`),
/// the data segments received in or out of order (`tcpi_data_segs_in`) and the receive
/// MSS (0, 0, 0 where the kernel does not say): what the goodput counts from (see
/// `collateral.emulate.logs`). Its ACKs carry
/// `tos` (set on the listener, which the accepted connection inherits), as the
/// simulator marks a flow's ACKs with its DSCP.
pub fn tcp_recv(
    bind: &str,
    tos: u8,
    t0_real: u64,
    until_ns: u64,
    out_path: &str,
) -> Result<(), String> {
    let l = TcpListener::bind(bind).map_err(|e| format!("bind {bind}: {e}"))?;
    if tos != 0 {
        set_tos_fd(l.as_raw_fd(), tos)?;
    }
    l.set_nonblocking(true).map_err(|e| e.to_string())?;
    let end = crate::router::mono_of_real(t0_real) + until_ns;
    let mut out = create(out_path)?;
    writeln!(out, "t_ns,bytes,in_order,segs_in,mss").map_err(|e| e.to_string())?;
    let mut s = loop {
        match l.accept() {
            Ok((s, _)) => break s,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                if mono_ns() >= end || STOP.load(Ordering::Relaxed) {
                    // Nobody connected (the sender's SYNs lost): nothing received.
                    return out.flush().map_err(|e| e.to_string());
                }
                std::thread::sleep(Duration::from_millis(5))
            }
            Err(e) => return Err(format!("accept: {e}")),
        }
    };
    s.set_nonblocking(false).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(Duration::from_millis(10)))
        .map_err(|e| e.to_string())?;
    let mut total = 0u64;
    let mut buf = vec![0u8; 1 << 16];
    let mut next_log = mono_ns();
    let fd = s.as_raw_fd();
    let log = |out: &mut std::io::BufWriter<std::fs::File>, total: u64| {
        let (in_order, segs, mss) = tcp_info(fd).map_or((0, 0, 0), |i| {
            (i.tcpi_bytes_received, i.tcpi_data_segs_in, i.tcpi_rcv_mss)
        });
        writeln!(out, "{},{total},{in_order},{segs},{mss}", trial_ns(t0_real))
            .map_err(|e| e.to_string())
    };
    while mono_ns() < end && !STOP.load(Ordering::Relaxed) {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => total += n as u64,
            // A sender that stopped resets the connection (see `abort`).
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break,
            Err(_) => {}
        }
        if mono_ns() >= next_log {
            log(&mut out, total)?;
            next_log += 10_000_000;
        }
    }
    log(&mut out, total)?;
    out.flush().map_err(|e| e.to_string())
}

/// Sends a crafted train back to back: one UDP packet per entry of `sizes` (IP lengths),
/// numbered from `first_seq`, as fast as the socket takes them. For checking queue rules:
/// a train sent faster than the bottleneck drains is judged by the rule alone.
pub fn train(src: &str, dst: &str, sizes: &[usize], first_seq: u64) -> Result<(), String> {
    let sock = UdpSocket::bind(src).map_err(|e| format!("bind {src}: {e}"))?;
    sock.connect(dst)
        .map_err(|e| format!("connect {dst}: {e}"))?;
    let mut buf = vec![0u8; 65536];
    for (k, &size) in sizes.iter().enumerate() {
        let payload = size
            .checked_sub(28)
            .filter(|&p| p >= 16)
            .ok_or("sizes must be at least 44 bytes")?;
        let seq = first_seq + k as u64;
        buf[..8].copy_from_slice(&seq.to_be_bytes());
        buf[8..16].copy_from_slice(&real_ns().to_be_bytes());
        sock.send(&buf[..payload])
            .map_err(|e| format!("send: {e}"))?;
    }
    Ok(())
}

/// Packets of a flood sent in one burst, and how often bursts leave: `(burst, gap_ns)`
/// for `rate_bps` of `size`-byte (IP) packets, bursts about every 100 µs (a timed sleep
/// is tens of µs late; the queue absorbs a burst).
pub fn flood_bursts(rate_bps: u64, size: u32) -> (u64, u64) {
    let pps = rate_bps as f64 / (size as f64 * 8.0);
    let burst = (pps * 100e-6).round().max(1.0);
    (burst as u64, (burst / pps * 1e9) as u64)
}

/// A UDP flood for loading the bottleneck with small packets: `size`-byte (IP length)
/// datagrams at `rate_bps`, paced in bursts ([`flood_bursts`]), from now for
/// `duration_ns`. Each carries a sequence number like CBR packets. Sends to whatever
/// listens at `dst` (nothing need: the packets are for the router's queue). Ends with
/// one line on stdout, `flood: sent N of M packets (R bit/s)`; an error if a tenth or
/// more of the sends failed (a namespace without its route, a socket that was refused),
/// so a benchmark cannot take a flood that never ran for one that did.
pub fn flood(
    src: &str,
    dst: &str,
    size: u32,
    rate_bps: u64,
    duration_ns: u64,
) -> Result<(), String> {
    let payload = size
        .checked_sub(UDP_HEADERS)
        .filter(|&p| p >= SEQ_BYTES)
        .ok_or("--size: at least 36 bytes")? as usize;
    // The namespace's address may still be being set up: retry for 2 s.
    let mut tries = 0;
    let sock = loop {
        match UdpSocket::bind(src) {
            Ok(s) => break s,
            Err(_) if tries < 100 => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => return Err(format!("bind {src}: {e}")),
        }
    };
    // Its route may still be being set up too: the same 2 s.
    loop {
        match sock.connect(dst) {
            Ok(()) => break,
            Err(_) if tries < 100 => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => return Err(format!("connect {dst}: {e}")),
        }
    }
    let (burst, gap) = flood_bursts(rate_bps, size);
    let mut buf = vec![0u8; payload];
    let start = mono_ns();
    let mut next = start;
    let mut seq = 0u64;
    let (mut sent, mut last_err) = (0u64, None);
    while next < start + duration_ns && !STOP.load(Ordering::Relaxed) {
        sleep_until_mono(next);
        for _ in 0..burst {
            buf[..8].copy_from_slice(&seq.to_be_bytes());
            match sock.send(&buf) {
                Ok(_) => sent += 1,
                Err(e) => last_err = Some(e),
            }
            seq += 1;
        }
        next += gap;
    }
    let secs = (mono_ns() - start) as f64 / 1e9;
    println!(
        "flood: sent {sent} of {seq} packets ({:.0} bit/s)",
        sent as f64 * f64::from(size) * 8.0 / secs.max(1e-9)
    );
    match last_err {
        Some(e) if (seq - sent) * 10 >= seq => {
            Err(format!("{} of {seq} sends failed (last: {e})", seq - sent))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sender_departs_as_the_models_source() {
        // 10 000 packets of a jittered VoIP flow (one every 20 ms on average, 1 ms
        // jitter) and a Quake 3 stream (50 ms): 200 s. The simulator's CBR flows send
        // on this same source's schedule (collateral-sim's `tests/sim/cbr_schedule.rs`), so
        // the testbed's packets leave when the simulator's do.
        let sc = Scenario::from_json(
            r#"{"seed": 42, "duration_ns": 200000000000, "rtt_ns": 20000000,
                "down": {"rate_bps": 10000000, "queue": {"rule": "ps", "limit": 100}},
                "up": {"rate_bps": 10000000, "queue": {"rule": "ps", "limit": 100}},
                "cbr": [{"direction": "down"}, {"direction": "up", "app": "quake3", "tag": 46}]}"#,
        )
        .unwrap();
        for j in [0usize, 1] {
            let ours: Vec<(u64, u32)> = departures(&sc, j).collect();
            let mut src = CbrSource::of_flow(&sc.cbr[j], sc.seed, j);
            let model: Vec<(u64, u32)> =
                std::iter::from_fn(|| src.next_departure(sc.duration_ns)).collect();
            assert!(
                ours.len() >= if j == 0 { 9_900 } else { 3_900 },
                "{}",
                ours.len()
            );
            // The same gaps packet by packet; sizes only padded to carry the sequence.
            assert_eq!(ours.len(), model.len(), "flow {j}");
            for (o, m) in ours.iter().zip(&model) {
                assert_eq!(*o, (m.0, m.1.max(UDP_HEADERS + SEQ_BYTES)), "flow {j}");
            }
        }
    }

    #[test]
    fn flood_bursts_keep_the_rate() {
        // 130 Mbit/s of 200-byte packets: 81 250 packets/s, 8 every 98.46 µs.
        let (b, gap) = flood_bursts(130_000_000, 200);
        assert_eq!(b, 8);
        let rate = b as f64 * 200.0 * 8.0 / (gap as f64 / 1e9);
        assert!((rate / 130e6 - 1.0).abs() < 1e-4, "{rate}"); // whole ns gaps
                                                              // Slower than a packet per 100 µs: one at a time.
        let (b, gap) = flood_bursts(1_000_000, 1500);
        assert_eq!((b, gap), (1, 12_000_000));
    }

    #[test]
    fn congestion_events_are_entries_into_recovery_or_loss() {
        // Open, Disorder (1), Recovery (3) twice in a row, Open, Loss (4), CWR (2), Recovery.
        let rows = [
            (0, 0),
            (1, 1),
            (2, 3),
            (3, 3),
            (4, 0),
            (5, 4),
            (6, 2),
            (7, 3),
        ];
        assert_eq!(congestion_events(&rows), vec![2, 5, 7]);
    }
}
