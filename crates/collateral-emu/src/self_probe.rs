//! A bulk flow's self probes on kernel TCP: once per probe interval the sender asks
//! the kernel to timestamp the last byte of one write when it leaves (the software
//! transmit timestamp, taken as the driver takes the segment) and when the peer's
//! cumulative ACK covers it (`SOF_TIMESTAMPING_TX_ACK`; Linux's
//! Documentation/networking/timestamping.rst). Their difference is a round trip of a
//! byte of the loaded connection, as the simulator's sender logs the first RTT sample
//! of each interval ([`collateral_model::scores::SelfProbe`]). A byte sent twice (a
//! retransmission stamps it again) gives no sample, by Karn's rule.

use std::collections::HashMap;
use std::io;
use std::os::fd::RawFd;

/// What the kernel stamps: software timestamps, keyed by byte offset (OPT_ID), with no
/// payload copied back (OPT_TSONLY).
const SOCKET_FLAGS: u32 = libc::SOF_TIMESTAMPING_SOFTWARE
    | libc::SOF_TIMESTAMPING_OPT_ID
    | libc::SOF_TIMESTAMPING_OPT_TSONLY;
/// Asked for on one write per interval: when it leaves, when it is acknowledged.
const WRITE_FLAGS: u32 = libc::SOF_TIMESTAMPING_TX_SOFTWARE | libc::SOF_TIMESTAMPING_TX_ACK;
/// `ee_info` of a timestamp report (linux/errqueue.h): sent, acknowledged.
const SCM_TSTAMP_SND: u32 = 0;
const SCM_TSTAMP_ACK: u32 = 2;

pub struct SelfProbes {
    fd: RawFd,
    every_ns: u64,
    /// The next write that is stamped, CLOCK_MONOTONIC ns.
    next_mono: u64,
    t0_real: u64,
    /// Per key (the stamped byte's offset): when it left (trial ns) and how often.
    sent: HashMap<u32, (i64, u32)>,
    /// `(sent_ns, rtt_ns, acked_bytes)`, trial time.
    pub samples: Vec<(i64, u64, u64)>,
    /// The last acknowledged key unwrapped to 64 bits (the kernel's keys are 32-bit
    /// byte offsets, which wrap after 4 GiB).
    last_acked: u64,
}

impl SelfProbes {
    /// Turns the stamping on for a connected TCP socket that has sent nothing yet (the
    /// keys count its bytes from 0).
    pub fn enable(fd: RawFd, every_ns: u64, t0_real: u64, now_mono: u64) -> io::Result<Self> {
        let v = SOCKET_FLAGS;
        // SAFETY: a valid socket and a pointer to a u32 of the size passed.
        let rc = unsafe {
            libc::setsockopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_TIMESTAMPING,
                &v as *const u32 as *const libc::c_void,
                4,
            )
        };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(SelfProbes {
            fd,
            every_ns: every_ns.max(1),
            next_mono: now_mono,
            t0_real,
            sent: HashMap::new(),
            samples: Vec::new(),
            last_acked: 0,
        })
    }

    /// Writes `buf` (as `write` would), stamped when an interval has begun.
    pub fn write(&mut self, buf: &[u8], now_mono: u64) -> io::Result<usize> {
        let stamp = now_mono >= self.next_mono;
        let mut iov = libc::iovec {
            iov_base: buf.as_ptr() as *mut libc::c_void,
            iov_len: buf.len(),
        };
        // A u64 array keeps the control buffer aligned for cmsghdr.
        let mut ctrl = [0u64; 4];
        // SAFETY: msghdr and cmsg built over live local buffers of the sizes given.
        let n = unsafe {
            let mut msg: libc::msghdr = std::mem::zeroed();
            msg.msg_iov = &mut iov;
            msg.msg_iovlen = 1;
            if stamp {
                msg.msg_control = ctrl.as_mut_ptr() as *mut libc::c_void;
                msg.msg_controllen = libc::CMSG_SPACE(4) as usize;
                let c = libc::CMSG_FIRSTHDR(&msg);
                (*c).cmsg_level = libc::SOL_SOCKET;
                (*c).cmsg_type = libc::SO_TIMESTAMPING;
                (*c).cmsg_len = libc::CMSG_LEN(4) as usize;
                std::ptr::write_unaligned(libc::CMSG_DATA(c) as *mut u32, WRITE_FLAGS);
            }
            libc::sendmsg(self.fd, &msg, 0)
        };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        if stamp && n > 0 {
            self.next_mono = now_mono + self.every_ns;
        }
        Ok(n as usize)
    }

    /// Reads the timestamps the kernel has reported so far.
    pub fn drain(&mut self) {
        let mut ctrl = [0u64; 64];
        loop {
            // SAFETY: recvmsg into live local buffers of the sizes given; the cmsgs
            // are read within msg_controllen as the kernel filled it.
            let got = unsafe {
                let mut msg: libc::msghdr = std::mem::zeroed();
                msg.msg_control = ctrl.as_mut_ptr() as *mut libc::c_void;
                msg.msg_controllen = std::mem::size_of_val(&ctrl);
                if libc::recvmsg(self.fd, &mut msg, libc::MSG_ERRQUEUE | libc::MSG_DONTWAIT) < 0 {
                    return;
                }
                let (mut ts, mut err) = (None, None);
                let mut c = libc::CMSG_FIRSTHDR(&msg);
                while !c.is_null() {
                    let data = libc::CMSG_DATA(c);
                    if (*c).cmsg_level == libc::SOL_SOCKET
                        && (*c).cmsg_type == libc::SO_TIMESTAMPING
                    {
                        // struct scm_timestamping: ts[0] is the software stamp.
                        let t = std::ptr::read_unaligned(data as *const libc::timespec);
                        ts = Some(t.tv_sec as i64 * 1_000_000_000 + t.tv_nsec as i64);
                    } else if (*c).cmsg_level == libc::SOL_IP && (*c).cmsg_type == libc::IP_RECVERR
                    {
                        err = Some(std::ptr::read_unaligned(
                            data as *const libc::sock_extended_err,
                        ));
                    }
                    c = libc::CMSG_NXTHDR(&msg, c);
                }
                (ts, err)
            };
            if let (Some(t), Some(e)) = got {
                if e.ee_origin == libc::SO_EE_ORIGIN_TIMESTAMPING && t > 0 {
                    self.note(e.ee_info, e.ee_data, t - self.t0_real as i64);
                }
            }
        }
    }

    fn note(&mut self, what: u32, key: u32, at: i64) {
        match what {
            SCM_TSTAMP_SND => self.sent.entry(key).or_insert((at, 0)).1 += 1,
            SCM_TSTAMP_ACK => {
                // Acknowledgements come in order: the nearest 64-bit offset at or above
                // the last one that ends in `key`.
                let mut k = (self.last_acked & !0xffff_ffff) | key as u64;
                if k < self.last_acked {
                    k += 1 << 32;
                }
                self.last_acked = k;
                if let Some((sent, 1)) = self.sent.remove(&key) {
                    if at >= sent {
                        self.samples.push((sent, (at - sent) as u64, k + 1));
                    }
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probes() -> SelfProbes {
        SelfProbes {
            fd: -1,
            every_ns: 1,
            next_mono: 0,
            t0_real: 0,
            sent: HashMap::new(),
            samples: Vec::new(),
            last_acked: 0,
        }
    }

    /// A byte sent once gives its round trip and the bytes through it; one sent twice
    /// (retransmitted) gives none; keys past 4 GiB unwrap.
    #[test]
    fn round_trips_by_karn_and_keys_unwrapped() {
        let mut p = probes();
        p.note(SCM_TSTAMP_SND, 999, 1_000);
        p.note(SCM_TSTAMP_ACK, 999, 31_000);
        p.note(SCM_TSTAMP_SND, 5_000, 40_000);
        p.note(SCM_TSTAMP_SND, 5_000, 90_000);
        p.note(SCM_TSTAMP_ACK, 5_000, 120_000);
        assert_eq!(p.samples, [(1_000, 30_000, 1_000)]);
        p.note(SCM_TSTAMP_ACK, u32::MAX - 10, 130_000);
        p.note(SCM_TSTAMP_SND, 7, 140_000);
        p.note(SCM_TSTAMP_ACK, 7, 150_000);
        assert_eq!(p.samples[1], (140_000, 10_000, (1 << 32) + 8));
    }
}
