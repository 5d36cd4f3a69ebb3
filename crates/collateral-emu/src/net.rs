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
        {}
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
            for opt in [libc::SO_RCVBUF, libc::SO_SNDBUF] {
                libc::setsockopt(
                    fd,
                    libc::SOL_SOCKET,
                    opt,
                    &size as *const _ as *const libc::c_void,
                    4,
                );
            }
            Ok(PacketSocket { fd })
        }
    }

    /// Reads one incoming frame into `buf`; `Ok(None)` when none is waiting. Frames this
    /// socket itself sent (PACKET_OUTGOING) are skipped.
    pub fn recv(&self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        loop {
            // SAFETY: buf and sll are valid for writes of their sizes.
            let (n, pkttype) = unsafe {
                let mut sll: libc::sockaddr_ll = std::mem::zeroed();
                let mut len = std::mem::size_of::<libc::sockaddr_ll>() as u32;
                let n = libc::recvfrom(
                    self.fd,
                    buf.as_mut_ptr() as *mut libc::c_void,
                    buf.len(),
                    0,
                    &mut sll as *mut _ as *mut libc::sockaddr,
                    &mut len,
                );
                (n, sll.sll_pkttype)
            };
            if n < 0 {
                let e = io::Error::last_os_error();
                return if e.kind() == io::ErrorKind::WouldBlock {
                    Ok(None)
                } else {
                    Err(e)
                };
            }
            if pkttype == libc::PACKET_OUTGOING {
                continue;
            }
            return Ok(Some(n as usize));
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
        let mut t = real_ns();
        let mut c = libc::CMSG_FIRSTHDR(&msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_TIMESTAMPNS {
                let ts = std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const libc::timespec);
                t = ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64;
            }
            c = libc::CMSG_NXTHDR(&msg, c);
        }
        Ok((n as usize, t))
    }
}
