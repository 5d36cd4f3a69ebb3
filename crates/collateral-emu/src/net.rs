//! Thin, safe wrappers over the few Linux calls the testbed needs: clocks, AF_PACKET raw
//! sockets, ppoll with a nanosecond timeout, and TCP socket options.

use std::ffi::CString;
use std::io;
use std::os::fd::RawFd;

/// CLOCK_MONOTONIC in nanoseconds: the emulator's `now`.
pub fn mono_ns() -> u64 {
    clock(libc::CLOCK_MONOTONIC)
}

/// CLOCK_REALTIME in nanoseconds: shared by every namespace (one kernel), so a send
/// timestamp from one host and a receive timestamp on another give the one-way delay.
pub fn real_ns() -> u64 {
    clock(libc::CLOCK_REALTIME)
}

fn clock(id: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid out-pointer.
    unsafe { libc::clock_gettime(id, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Sleeps until CLOCK_MONOTONIC reaches `t` (absolute, so no drift accumulates).
pub fn sleep_until_mono(t: u64) {
    let ts = libc::timespec {
        tv_sec: (t / 1_000_000_000) as _,
        tv_nsec: (t % 1_000_000_000) as _,
    };
    // SAFETY: valid timespec; a null remainder is allowed with TIMER_ABSTIME.
    unsafe {
        while libc::clock_nanosleep(
            libc::CLOCK_MONOTONIC,
            libc::TIMER_ABSTIME,
            &ts,
            std::ptr::null_mut(),
        ) == libc::EINTR
        {
            // SIGINT/SIGTERM: the run is being torn down; do not sleep on to the start.
            if crate::router::STOP.load(std::sync::atomic::Ordering::Relaxed) {
                return;
            }
        }
    }
}

/// Asks the kernel to wake us as precisely as it can (the default timer slack is 50 µs).
pub fn tight_timers() {
    // SAFETY: plain prctl with an integer argument.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
}

fn check(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// A raw AF_PACKET socket bound to one interface: every frame that arrives on it, and a
/// way to put frames on its wire. The router namespace forwards nothing by itself; frames
/// cross it only through the emulator.
pub struct PacketSocket {
    pub fd: RawFd,
}

impl PacketSocket {
    pub fn open(ifname: &str) -> io::Result<Self> {
        let cname = CString::new(ifname)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "interface name"))?;
        let proto = (libc::ETH_P_ALL as u16).to_be();
        // SAFETY: FFI calls with valid arguments; the fd is owned by the returned value.
        unsafe {
            let fd = check(libc::socket(
                libc::AF_PACKET,
                libc::SOCK_RAW | libc::SOCK_NONBLOCK,
                proto as i32,
            ))?;
            let idx = libc::if_nametoindex(cname.as_ptr());
            if idx == 0 {
                libc::close(fd);
                return Err(io::Error::new(
                    io::ErrorKind::NotFound,
                    format!("no interface {ifname}"),
                ));
            }
            let mut sll: libc::sockaddr_ll = std::mem::zeroed();
            sll.sll_family = libc::AF_PACKET as u16;
            sll.sll_protocol = proto;
            sll.sll_ifindex = idx as i32;
            check(libc::bind(
                fd,
                &sll as *const _ as *const libc::sockaddr,
                std::mem::size_of::<libc::sockaddr_ll>() as u32,
            ))?;
            let size: libc::c_int = 8 << 20;
            // As root the FORCE variants pass net.core.rmem_max/wmem_max (4 MB here):
            // at 1 Gbit/s a few ms of frames must fit while the router is busy.
            for (force, opt) in [
                (libc::SO_RCVBUFFORCE, libc::SO_RCVBUF),
                (libc::SO_SNDBUFFORCE, libc::SO_SNDBUF),
            ] {
                if setsockopt_int(fd, libc::SOL_SOCKET, force, size).is_err() {
                    let _ = setsockopt_int(fd, libc::SOL_SOCKET, opt, size);
                }
            }
            // Our own transmissions are not copied back to us (Linux 4.20), so a frame
            // costs one read, not two; frames go straight to the veth's driver.
            let _ = setsockopt_int(fd, libc::SOL_PACKET, PACKET_IGNORE_OUTGOING, 1);
            let _ = setsockopt_int(fd, libc::SOL_PACKET, PACKET_QDISC_BYPASS, 1);
            // The kernel's arrival time of each frame (CLOCK_REALTIME), read with it.
            let _ = setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, 1);
            Ok(PacketSocket { fd })
        }
    }

    /// Reads up to a batch of incoming frames (one `recvmmsg`) into `rx`; returns how
    /// many; 0 when none is waiting.
    pub fn recv_batch(&self, rx: &mut RxBatch) -> io::Result<usize> {
        rx.reset();
        // SAFETY: every header points into rx's buffers, which live as long as rx and
        // were sized for it ([`RxBatch::new`]); MSG_DONTWAIT: never blocks.
        let n = unsafe {
            libc::recvmmsg(
                self.fd,
                rx.hdrs.as_mut_ptr(),
                rx.hdrs.len() as libc::c_uint,
                libc::MSG_DONTWAIT,
                std::ptr::null_mut(),
            )
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            return match e.kind() {
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(0),
                _ => Err(e),
            };
        }
        rx.n = n as usize;
        Ok(rx.n)
    }

    /// Sends `frames` (one `sendmmsg` for as many as the kernel takes at once, more
    /// calls for the rest); returns how many the kernel refused (a full backlog on the
    /// veth's other end: lost outside the model, counted by the caller).
    pub fn send_batch<'a>(
        &self,
        tx: &mut TxBatch,
        frames: impl IntoIterator<Item = &'a [u8]>,
    ) -> usize {
        let total = tx.fill(frames);
        let mut done = 0;
        let mut refused = 0;
        while done < total {
            // SAFETY: the headers point to iovecs that point into `frames`, valid for
            // reads of their lengths for the duration of the call.
            let n = unsafe {
                libc::sendmmsg(
                    self.fd,
                    tx.hdrs[done..].as_mut_ptr(),
                    (total - done) as libc::c_uint,
                    0,
                )
            };
            if n <= 0 {
                if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                // This frame is refused (ENOBUFS); go on with the next.
                refused += 1;
                done += 1;
            } else {
                done += n as usize;
            }
        }
        refused
    }

    /// Frames the kernel dropped because our receive buffer was full, since the last
    /// call (PACKET_STATISTICS, which resets on read).
    pub fn rx_drops(&self) -> u64 {
        let mut st = [0u32; 2];
        let mut len = 8u32;
        // SAFETY: st is a valid out-buffer of `len` bytes (struct tpacket_stats).
        let r = unsafe {
            libc::getsockopt(
                self.fd,
                libc::SOL_PACKET,
                PACKET_STATISTICS,
                st.as_mut_ptr() as *mut libc::c_void,
                &mut len,
            )
        };
        if r < 0 {
            0
        } else {
            st[1] as u64
        }
    }

    pub fn send(&self, frame: &[u8]) -> io::Result<()> {
        // SAFETY: frame is valid for reads of its length.
        let n = unsafe {
            libc::send(
                self.fd,
                frame.as_ptr() as *const libc::c_void,
                frame.len(),
                0,
            )
        };
        if n < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    }
}

const PACKET_STATISTICS: libc::c_int = 6;
const PACKET_QDISC_BYPASS: libc::c_int = 20;
const PACKET_IGNORE_OUTGOING: libc::c_int = 23;

fn setsockopt_int(
    fd: RawFd,
    level: libc::c_int,
    opt: libc::c_int,
    v: libc::c_int,
) -> io::Result<()> {
    // SAFETY: a pointer to an int of the size passed.
    check(unsafe {
        libc::setsockopt(
            fd,
            level,
            opt,
            &v as *const libc::c_int as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as u32,
        )
    })
    .map(|_| ())
}

/// The largest frame a batch slot holds (a jumbo frame; the testbed's veths carry 1514).
pub const FRAME_MAX: usize = 9216;

/// Buffers for one `recvmmsg`: `cap` frames with their link-layer address (to skip our
/// own outgoing frames, should the kernel still show them) and their kernel arrival
/// time. Pointers into the buffers are set once; the buffers never move.
pub struct RxBatch {
    data: Vec<u8>,
    addrs: Vec<libc::sockaddr_ll>,
    ctl: Vec<[u64; 8]>,
    iovs: Vec<libc::iovec>,
    hdrs: Vec<libc::mmsghdr>,
    n: usize,
}

impl RxBatch {
    pub fn new(cap: usize) -> Box<RxBatch> {
        // SAFETY: sockaddr_ll and mmsghdr are plain C structs; all-zero is valid.
        let mut b = Box::new(RxBatch {
            data: vec![0u8; cap * FRAME_MAX],
            addrs: vec![unsafe { std::mem::zeroed() }; cap],
            ctl: vec![[0u64; 8]; cap],
            iovs: Vec::with_capacity(cap),
            hdrs: Vec::with_capacity(cap),
            n: 0,
        });
        for k in 0..cap {
            let base = b.data[k * FRAME_MAX..].as_mut_ptr();
            b.iovs.push(libc::iovec {
                iov_base: base as *mut libc::c_void,
                iov_len: FRAME_MAX,
            });
        }
        for k in 0..cap {
            // SAFETY: as above.
            let mut h: libc::mmsghdr = unsafe { std::mem::zeroed() };
            h.msg_hdr.msg_iov = &mut b.iovs[k];
            h.msg_hdr.msg_iovlen = 1;
            h.msg_hdr.msg_name = &mut b.addrs[k] as *mut _ as *mut libc::c_void;
            h.msg_hdr.msg_control = b.ctl[k].as_mut_ptr() as *mut libc::c_void;
            b.hdrs.push(h);
        }
        b.reset();
        b
    }

    fn reset(&mut self) {
        self.n = 0;
        for h in &mut self.hdrs {
            h.msg_hdr.msg_namelen = std::mem::size_of::<libc::sockaddr_ll>() as u32;
            h.msg_hdr.msg_controllen = std::mem::size_of::<[u64; 8]>();
            h.msg_hdr.msg_flags = 0;
            h.msg_len = 0;
        }
    }

    /// The `k`th frame of the last read: its bytes, its kernel arrival time
    /// (CLOCK_REALTIME ns, 0 if the kernel gave none), and whether to take it (not one
    /// of our own outgoing frames, not cut short).
    pub fn frame(&self, k: usize) -> (&[u8], u64, bool) {
        assert!(k < self.n);
        let h = &self.hdrs[k];
        let len = (h.msg_len as usize).min(FRAME_MAX);
        let ok = self.addrs[k].sll_pkttype != libc::PACKET_OUTGOING
            && h.msg_hdr.msg_flags & libc::MSG_TRUNC == 0;
        let mut ts = 0;
        // SAFETY: the kernel filled msg_control/msg_controllen for this message.
        unsafe {
            let mut c = libc::CMSG_FIRSTHDR(&h.msg_hdr);
            while !c.is_null() {
                if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_TIMESTAMPNS {
                    let t = std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const libc::timespec);
                    ts = t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64;
                }
                c = libc::CMSG_NXTHDR(&h.msg_hdr, c);
            }
        }
        (&self.data[k * FRAME_MAX..k * FRAME_MAX + len], ts, ok)
    }
}

/// Headers for one `sendmmsg`, reused from call to call.
#[derive(Default)]
pub struct TxBatch {
    iovs: Vec<libc::iovec>,
    hdrs: Vec<libc::mmsghdr>,
}

impl TxBatch {
    /// Headers for `frames`; returns how many.
    fn fill<'a>(&mut self, frames: impl IntoIterator<Item = &'a [u8]>) -> usize {
        self.iovs.clear();
        self.iovs.extend(frames.into_iter().map(|f| libc::iovec {
            iov_base: f.as_ptr() as *mut libc::c_void,
            iov_len: f.len(),
        }));
        self.hdrs.clear();
        for iov in &mut self.iovs {
            // SAFETY: all-zero is a valid mmsghdr.
            let mut h: libc::mmsghdr = unsafe { std::mem::zeroed() };
            h.msg_hdr.msg_iov = iov;
            h.msg_hdr.msg_iovlen = 1;
            self.hdrs.push(h);
        }
        self.hdrs.len()
    }
}

/// Pins the calling thread to CPU `cpu`.
pub fn pin_to_cpu(cpu: usize) -> io::Result<()> {
    set_affinity(&[cpu])
}

fn set_affinity(cpus: &[usize]) -> io::Result<()> {
    // SAFETY: a zeroed cpu_set_t filled with CPU_SET, passed with its size.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus {
            libc::CPU_SET(c, &mut set);
        }
        check(libc::sched_setaffinity(
            0,
            std::mem::size_of::<libc::cpu_set_t>(),
            &set,
        ))
        .map(|_| ())
    }
}

/// The CPUs this thread may run on.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: a zeroed cpu_set_t out-buffer of the size passed.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) < 0 {
            return Vec::new();
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect()
    }
}

/// The CPU the router takes by default: the last one allowed, if there are at least
/// two (the endpoints and the kernel's TCP keep the others); `None` on one CPU.
pub fn router_cpu() -> Option<usize> {
    let cpus = allowed_cpus();
    (cpus.len() >= 2).then(|| *cpus.last().unwrap())
}

/// Keeps an endpoint off the router's CPU ([`router_cpu`]), where the router spins.
pub fn avoid_router_cpu() {
    let cpus = allowed_cpus();
    if cpus.len() >= 2 {
        let _ = set_affinity(&cpus[..cpus.len() - 1]);
    }
}

impl Drop for PacketSocket {
    fn drop(&mut self) {
        // SAFETY: we own the fd.
        unsafe { libc::close(self.fd) };
    }
}

/// Waits until one of `fds` is readable or `timeout_ns` passes; returns the readable mask.
pub fn ppoll(fds: &[RawFd], timeout_ns: u64) -> io::Result<Vec<bool>> {
    let mut p: Vec<libc::pollfd> = fds
        .iter()
        .map(|&fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    let ts = libc::timespec {
        tv_sec: (timeout_ns / 1_000_000_000) as _,
        tv_nsec: (timeout_ns % 1_000_000_000) as _,
    };
    // SAFETY: p is a valid array of pollfd; ts is valid; no signal mask change.
    let r = unsafe {
        libc::ppoll(
            p.as_mut_ptr(),
            p.len() as libc::nfds_t,
            &ts,
            std::ptr::null(),
        )
    };
    if r < 0 {
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::Interrupted {
            return Ok(vec![false; fds.len()]);
        }
        return Err(e);
    }
    Ok(p.iter().map(|x| x.revents & libc::POLLIN != 0).collect())
}

/// Selects the congestion control of a TCP socket (Linux TCP_CONGESTION).
pub fn set_congestion(fd: RawFd, cc: &str) -> io::Result<()> {
    // SAFETY: cc bytes are valid for reads of their length.
    check(unsafe {
        libc::setsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_CONGESTION,
            cc.as_ptr() as *const libc::c_void,
            cc.len() as u32,
        )
    })
    .map(|_| ())
}

/// The kernel's TCP_INFO for a socket (the Web100-style view of cwnd, ssthresh, RTT).
pub fn tcp_info(fd: RawFd) -> io::Result<libc::tcp_info> {
    // SAFETY: info is a valid out-buffer of the length passed.
    unsafe {
        let mut info: libc::tcp_info = std::mem::zeroed();
        let mut len = std::mem::size_of::<libc::tcp_info>() as u32;
        check(libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            &mut info as *mut _ as *mut libc::c_void,
            &mut len,
        ))?;
        Ok(info)
    }
}

/// Turns on kernel receive timestamps (SO_TIMESTAMPNS, CLOCK_REALTIME) on a socket.
pub fn enable_rx_timestamps(fd: RawFd) -> io::Result<()> {
    let one: libc::c_int = 1;
    check(unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_TIMESTAMPNS,
            &one as *const _ as *const libc::c_void,
            4,
        )
    })
    .map(|_| ())
}

/// Receives one datagram with its kernel arrival time (CLOCK_REALTIME ns).
pub fn recv_with_timestamp(fd: RawFd, buf: &mut [u8]) -> io::Result<(usize, u64)> {
    recv_with_timestamp_tos(fd, buf).map(|(n, t, _)| (n, t))
}

/// Asks for each datagram's IP TOS byte with it (IP_RECVTOS): the ECN field as it
/// arrived, which a receiver reports (RFC 8888).
pub fn enable_rx_tos(fd: RawFd) -> io::Result<()> {
    let one: libc::c_int = 1;
    // SAFETY: a pointer to an int of the length passed.
    check(unsafe {
        libc::setsockopt(
            fd,
            libc::IPPROTO_IP,
            libc::IP_RECVTOS,
            &one as *const _ as *const libc::c_void,
            4,
        )
    })
    .map(|_| ())
}

/// As [`recv_with_timestamp`], with the TOS byte when [`enable_rx_tos`] asked for it
/// (else 0).
pub fn recv_with_timestamp_tos(fd: RawFd, buf: &mut [u8]) -> io::Result<(usize, u64, u8)> {
    // SAFETY: iov/msg/cmsg buffers are valid for the kernel to fill.
    unsafe {
        let mut iov = libc::iovec {
            iov_base: buf.as_mut_ptr() as *mut libc::c_void,
            iov_len: buf.len(),
        };
        let mut cbuf = [0u8; 128];
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = cbuf.as_mut_ptr() as *mut libc::c_void;
        msg.msg_controllen = cbuf.len();
        let n = libc::recvmsg(fd, &mut msg, 0);
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        let (mut t, mut tos) = (real_ns(), 0u8);
        let mut c = libc::CMSG_FIRSTHDR(&msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_TIMESTAMPNS {
                let ts = std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const libc::timespec);
                t = ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64;
            }
            if (*c).cmsg_level == libc::IPPROTO_IP && (*c).cmsg_type == libc::IP_TOS {
                tos = *libc::CMSG_DATA(c);
            }
            c = libc::CMSG_NXTHDR(&msg, c);
        }
        Ok((n as usize, t, tos))
    }
}
