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

fn create(path: &str) -> Result<BufWriter<File>, String> {
    File::create(path)
        .map(|f| BufWriter::with_capacity(1 << 20, f))
        .map_err(|e| format!("{path}: {e}"))
}

/// A small deterministic generator (SplitMix64 → Box–Muller) for the CBR jitter, seeded
/// by the caller: no OS randomness.
struct Jitter {
    state: u64,
}

impl Jitter {
    fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn uniform(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
    fn normal(&mut self) -> f64 {
        (-2.0 * self.uniform().ln()).sqrt() * (2.0 * std::f64::consts::PI * self.uniform()).cos()
    }
}

pub struct CbrSend {
    pub src: String,
    pub dst: String,
    /// IP length of each packet (28 bytes of IP/UDP header included).
    pub size: usize,
    pub interval_ns: u64,
    pub jitter_ns: u64,
    pub seed: u64,
    pub start_delay_ns: u64,
    pub duration_ns: u64,
    pub out: String,
    /// IP TOS byte (DSCP << 2): how a tagged flow is marked for CBT/CBQ at the router.
    pub tos: u8,
}

/// Sends `[seq u64][send time u64, CLOCK_REALTIME ns]` padded to the packet size, on a
/// schedule of `interval ± N(0, jitter)` gaps; logs `seq,send_ns`.
pub fn cbr_send(c: CbrSend) -> Result<(), String> {
    let sock = UdpSocket::bind(&c.src).map_err(|e| format!("bind {}: {e}", c.src))?;
    sock.connect(&c.dst)
        .map_err(|e| format!("connect {}: {e}", c.dst))?;
    if c.tos != 0 {
        set_tos(&sock, c.tos)?;
    }
    let payload = c
        .size
        .checked_sub(28)
        .filter(|&p| p >= 16)
        .ok_or("size must be at least 44 bytes")?;
    let mut buf = vec![0u8; payload];
    let mut out = create(&c.out)?;
    writeln!(out, "seq,send_ns").unwrap();
    let mut rng = Jitter { state: c.seed };
    let t0 = mono_ns() + c.start_delay_ns;
    let end = mono_ns() + c.duration_ns;
    let mut next = t0;
    let mut seq = 0u64;
    while next < end && !STOP.load(Ordering::Relaxed) {
        sleep_until_mono(next);
        let t = real_ns();
        buf[..8].copy_from_slice(&seq.to_be_bytes());
        buf[8..16].copy_from_slice(&t.to_be_bytes());
        let _ = sock.send(&buf);
        writeln!(out, "{seq},{t}").unwrap();
        seq += 1;
        let gap = if c.jitter_ns > 0 {
            (c.interval_ns as f64 + c.jitter_ns as f64 * rng.normal()).max(0.0) as u64
        } else {
            c.interval_ns
        };
        next += gap;
    }
    out.flush().map_err(|e| e.to_string())
}

/// Marks every packet the socket sends with `tos` (IP_TOS).
fn set_tos(sock: &UdpSocket, tos: u8) -> Result<(), String> {
    use std::os::fd::AsRawFd;
    let v = tos as libc::c_int;
    // SAFETY: a valid socket descriptor and a pointer to an int of the size passed.
    let rc = unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
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

/// Receives CBR packets until `duration` ends; logs `seq,send_ns,recv_ns` with the
/// kernel's arrival timestamp.
pub fn cbr_recv(bind: &str, duration_ns: u64, out_path: &str) -> Result<(), String> {
    let sock = UdpSocket::bind(bind).map_err(|e| format!("bind {bind}: {e}"))?;
    enable_rx_timestamps(sock.as_raw_fd()).map_err(|e| e.to_string())?;
    sock.set_read_timeout(Some(Duration::from_millis(50)))
        .unwrap();
    let mut out = create(out_path)?;
    writeln!(out, "seq,send_ns,recv_ns").unwrap();
    let end = mono_ns() + duration_ns;
    let mut buf = [0u8; 65536];
    while mono_ns() < end && !STOP.load(Ordering::Relaxed) {
        match recv_with_timestamp(sock.as_raw_fd(), &mut buf) {
            Ok((n, t)) if n >= 16 => {
                let seq = u64::from_be_bytes(buf[..8].try_into().unwrap());
                let sent = u64::from_be_bytes(buf[8..16].try_into().unwrap());
                writeln!(out, "{seq},{sent},{t}").unwrap();
            }
            _ => {}
        }
    }
    out.flush().map_err(|e| e.to_string())
}

/// A bulk sender: connects, selects the congestion control, writes as fast as TCP lets
/// it for `duration`, and polls TCP_INFO every `poll_ns` from a second thread.
pub fn tcp_send(
    src_ip: &str,
    dst: &str,
    cc: &str,
    duration_ns: u64,
    poll_ns: u64,
    out_path: &str,
) -> Result<(), String> {
    let stream = connect_from(src_ip, dst)?;
    set_congestion(stream.as_raw_fd(), cc).map_err(|e| format!("congestion control {cc}: {e}"))?;
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
                        real_ns(),
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
    let end = mono_ns() + duration_ns;
    stream
        .set_write_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    while mono_ns() < end && !STOP.load(Ordering::Relaxed) {
        if let Err(e) = w.write(&chunk) {
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
    let _ = stream.shutdown(std::net::Shutdown::Both);
    let mut out = create(out_path)?;
    writeln!(out, "t_ns,cwnd,ssthresh,srtt_us,total_retrans,ca_state").unwrap();
    for (t, c, s, r, x, st) in rows {
        writeln!(out, "{t},{c},{s},{r},{x},{st}").unwrap();
    }
    out.flush().map_err(|e| e.to_string())
}

fn connect_from(src_ip: &str, dst: &str) -> Result<TcpStream, String> {
    // Bind the source address so the flow leaves from the TCP host's address.
    let src: std::net::SocketAddr = format!("{src_ip}:0")
        .parse()
        .map_err(|e| format!("{src_ip}: {e}"))?;
    let dst: std::net::SocketAddr = dst.parse().map_err(|e| format!("{dst}: {e}"))?;
    // SAFETY: plain socket syscalls on a fresh fd that TcpStream then owns.
    unsafe {
        use std::os::fd::FromRawFd;
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0);
        if fd < 0 {
            return Err(std::io::Error::last_os_error().to_string());
        }
        let stream = TcpStream::from_raw_fd(fd);
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
            return Err(format!("bind {src}: {}", std::io::Error::last_os_error()));
        }
        let d = to_sa(&dst);
        for _ in 0..50 {
            if libc::connect(fd, &d as *const _ as *const libc::sockaddr, 16) == 0 {
                return Ok(stream);
            }
            std::thread::sleep(Duration::from_millis(20)); // the receiver may still be starting
        }
        Err(format!(
            "connect {dst}: {}",
            std::io::Error::last_os_error()
        ))
    }
}

/// A bulk receiver: accepts one connection and logs `t_ns,bytes` (cumulative, realtime
/// clock) every 10 ms until the sender closes or `duration` ends.
pub fn tcp_recv(bind: &str, duration_ns: u64, out_path: &str) -> Result<(), String> {
    let l = TcpListener::bind(bind).map_err(|e| format!("bind {bind}: {e}"))?;
    l.set_nonblocking(true).unwrap();
    let end = mono_ns() + duration_ns;
    let mut s = loop {
        match l.accept() {
            Ok((s, _)) => break s,
            Err(_) if mono_ns() < end && !STOP.load(Ordering::Relaxed) => {
                std::thread::sleep(Duration::from_millis(5))
            }
            Err(e) => return Err(format!("accept: {e}")),
        }
    };
    s.set_nonblocking(false).unwrap();
    s.set_read_timeout(Some(Duration::from_millis(10))).unwrap();
    let mut out = create(out_path)?;
    writeln!(out, "t_ns,bytes").unwrap();
    let mut total = 0u64;
    let mut buf = vec![0u8; 1 << 16];
    let mut next_log = mono_ns();
    while mono_ns() < end && !STOP.load(Ordering::Relaxed) {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => total += n as u64,
            Err(_) => {}
        }
        if mono_ns() >= next_log {
            writeln!(out, "{},{total}", real_ns()).unwrap();
            next_log += 10_000_000;
        }
    }
    writeln!(out, "{},{total}", real_ns()).unwrap();
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
