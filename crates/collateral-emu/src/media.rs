//! The video call's two ends on the testbed: `media-send` runs the model's sender
//! ([`MediaSender`]: the RFC 8593 encoder and GCC) and `media-recv` its receiver
//! ([`MediaReceiver`]: RFC 8888 reports every feedback interval), the very code the
//! simulator runs, with `now` the trial time (real time since the run's origin) instead
//! of the event time. Between them real UDP packets through the router:
//!
//! * media: the IP length the encoder's packetisation gives; the payload begins with
//!   the sequence number (8 bytes, big-endian, where the router reads a CBR packet's)
//!   and the frame index (4 bytes): together the 12 bytes of the RTP header they
//!   stand in for;
//! * feedback: RFC 8888's packet as `Report::encode` writes it, alone in the payload
//!   (so its IP length is the one the simulator gives its reports).
//!
//! The receiver takes arrival times and ECN bits from the kernel (SO_TIMESTAMPNS,
//! IP_RECVTOS), the sender a report's arrival time likewise. Both log in trial time;
//! the measurement reads the logs back ([`collateral_model::media::testbed`]).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::net::UdpSocket;
use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering;

use collateral_model::media::feedback::MAX_REPORTS;
use collateral_model::media::{Controller, MediaConfig, MediaReceiver, MediaSender};
use collateral_model::traffic::UDP_HEADERS;
use collateral_model::Scenario;

use crate::endpoints::{create, set_tos};
use crate::net::{
    enable_rx_timestamps, enable_rx_tos, mono_ns, ppoll, recv_with_timestamp,
    recv_with_timestamp_tos, tight_timers,
};
use crate::router::{mono_of_real, STOP};

/// SSRCs in the feedback packets (one stream each way; nobody reads them).
const MEDIA_SSRC: u32 = 0x4D45_4449;
const RECEIVER_SSRC: u32 = 0x4645_4544;
/// A media packet numbered this far past the highest yet is not the call's (the
/// receiver would otherwise grow its table to any number a stray datagram carries).
const MAX_SEQ_JUMP: u64 = 4 * MAX_REPORTS as u64;

/// Bytes of a media payload that carry the sequence number and frame index.
pub const MEDIA_HEADER: usize = 12;

fn call(sc: &Scenario) -> Result<MediaConfig, String> {
    let cfg = match sc.media.as_slice() {
        [] => return Err("--scenario: it has no video call (media)".into()),
        [one] => one.clone(),
        _ => return Err("--scenario: media: the testbed runs one call".into()),
    };
    if cfg.controller == Controller::Scream {
        // The loop below sends no packets that a report releases (SCReAM's window).
        return Err("--scenario: media.controller scream is not run by the testbed yet".into());
    }
    Ok(cfg)
}

fn socket(bind: &str, peer: &str, tos: u8) -> Result<UdpSocket, String> {
    let sock = UdpSocket::bind(bind).map_err(|e| format!("bind {bind}: {e}"))?;
    sock.connect(peer)
        .map_err(|e| format!("connect {peer}: {e}"))?;
    if tos != 0 {
        set_tos(&sock, tos)?;
    }
    enable_rx_timestamps(sock.as_raw_fd()).map_err(|e| e.to_string())?;
    Ok(sock)
}

/// Trial time of a kernel timestamp (CLOCK_REALTIME ns), at least 0.
fn trial_of(real: u64, t0_real: u64) -> u64 {
    real.saturating_sub(t0_real)
}

/// One line of a CSV log.
fn row(out: &mut BufWriter<File>, line: std::fmt::Arguments) -> Result<(), String> {
    out.write_fmt(line)
        .and_then(|_| out.write_all(b"\n"))
        .map_err(|e| e.to_string())
}

pub struct MediaSend {
    pub scenario: Scenario,
    pub t0_real: u64,
    pub src: String,
    pub dst: String,
    /// Logs `OUT-send.csv` (`seq,send_ns,len,frame`), `OUT-frames.csv`
    /// (`captured_ns,first,count`), `OUT-target.csv` (`t_ns,bps`) and
    /// `OUT-reports.csv` (`t_ns,sent_before,bytes`: each report read, the packets sent
    /// by then and its size; a `#` line counts those refused).
    pub out: String,
}

/// The sender: each frame at its capture time (the model's schedule from the seed), its
/// packets back to back; between frames, each report as it arrives. Runs to the end of
/// the scenario's duration.
pub fn media_send(c: MediaSend) -> Result<(), String> {
    let cfg = call(&c.scenario)?;
    let sock = socket(&c.src, &c.dst, cfg.tag << 2 | cfg.ecn as u8)?;
    let fd = sock.as_raw_fd();
    tight_timers();
    let mut s = MediaSender::new(&cfg, c.scenario.seed, c.scenario.rtt_ns);
    let (t0, end) = (c.t0_real, c.scenario.duration_ns);
    let origin = mono_of_real(t0);
    let mut buf = vec![0u8; 65536];
    let mut reports: Vec<(u64, u64, usize)> = Vec::new();
    let mut refused = (0u64, String::new());
    while !STOP.load(Ordering::Relaxed) {
        let due = s.next_frame_at();
        if due >= end {
            break;
        }
        // Reports until the frame is due.
        loop {
            let m = mono_ns();
            if m >= origin + due || STOP.load(Ordering::Relaxed) {
                break;
            }
            if !ppoll(&[fd], origin + due - m).map_err(|e| e.to_string())?[0] {
                continue;
            }
            let Ok((n, at)) = recv_with_timestamp(fd, &mut buf) else {
                continue;
            };
            let now = trial_of(at, t0);
            let before = s.records.sent.len();
            match s.on_report_packet(now, &buf[..n]) {
                // GCC and NADA release nothing on a report (SCReAM, which would, is
                // refused by the testbed's checks).
                Ok(_) => reports.push((now, before as u64, n)),
                Err(e) => refused = (refused.0 + 1, e),
            }
        }
        let now = trial_of(crate::net::real_ns(), t0).max(due);
        for seq in s.send_frame(now) {
            let i = seq as usize;
            buf[..8].copy_from_slice(&seq.to_be_bytes());
            buf[8..12].copy_from_slice(&s.records.frame[i].to_be_bytes());
            let _ = sock.send(&buf[..(s.records.lens[i] - UDP_HEADERS) as usize]);
        }
    }
    let r = &s.records;
    let p = &c.out;
    let mut out = create(&format!("{p}-send.csv"))?;
    row(&mut out, format_args!("seq,send_ns,len,frame"))?;
    for i in 0..r.sent.len() {
        row(
            &mut out,
            format_args!("{i},{},{},{}", r.sent[i], r.lens[i], r.frame[i]),
        )?;
    }
    let mut fr = create(&format!("{p}-frames.csv"))?;
    row(&mut fr, format_args!("captured_ns,first,count"))?;
    for &(cap, first, n) in &r.frames {
        row(&mut fr, format_args!("{cap},{first},{n}"))?;
    }
    let mut tg = create(&format!("{p}-target.csv"))?;
    row(&mut tg, format_args!("t_ns,bps"))?;
    for &(t, bps) in &r.target {
        row(&mut tg, format_args!("{t},{bps}"))?;
    }
    let mut rp = create(&format!("{p}-reports.csv"))?;
    row(&mut rp, format_args!("t_ns,sent_before,bytes"))?;
    for &(t, k, n) in &reports {
        row(&mut rp, format_args!("{t},{k},{n}"))?;
    }
    if refused.0 > 0 {
        row(
            &mut rp,
            format_args!("# {} refused (last: {})", refused.0, refused.1),
        )?;
    }
    for f in [&mut out, &mut fr, &mut tg, &mut rp] {
        f.flush().map_err(|e| e.to_string())?;
    }
    Ok(())
}

pub struct MediaRecv {
    pub scenario: Scenario,
    pub t0_real: u64,
    pub until_ns: u64,
    pub bind: String,
    /// The sender's address, where the reports go.
    pub peer: String,
    /// Logs `OUT-recv.csv` (`seq,recv_ns,ecn`) and `OUT-feedback.csv`
    /// (`t_ns,first,n,len`: each report sent, `len` its IP length).
    pub out: String,
}

/// The receiver: notes each media packet's arrival (kernel time, ECN field) and sends a
/// report on the feedback timer, up to the scenario's duration; logs arrivals until
/// `until_ns` (packets in flight at the end still arrive).
pub fn media_recv(c: MediaRecv) -> Result<(), String> {
    let cfg = call(&c.scenario)?;
    let sock = socket(&c.bind, &c.peer, cfg.tag << 2 | cfg.ecn as u8)?;
    let fd = sock.as_raw_fd();
    enable_rx_tos(fd).map_err(|e| e.to_string())?;
    tight_timers();
    let mut rx = MediaReceiver::new(&cfg);
    let (t0, end) = (c.t0_real, c.scenario.duration_ns);
    let origin = mono_of_real(t0);
    let mut recv = create(&format!("{}-recv.csv", c.out))?;
    let mut fb = create(&format!("{}-feedback.csv", c.out))?;
    row(&mut recv, format_args!("seq,recv_ns,ecn"))?;
    row(&mut fb, format_args!("t_ns,first,n,len"))?;
    let mut buf = vec![0u8; 65536];
    let (mut highest, mut latest) = (None::<u64>, 0u64);
    while !STOP.load(Ordering::Relaxed) {
        let m = mono_ns();
        let next = rx.next_feedback_at();
        if m >= origin + c.until_ns {
            break;
        }
        if next < end && m >= origin + next {
            // Not before an arrival it reports (the kernel stamped it before this read).
            let now = trial_of(crate::net::real_ns(), t0).max(next).max(latest);
            if let Some((first, report)) = rx.make_report(now) {
                let _ = sock.send(&report.encode(RECEIVER_SSRC, MEDIA_SSRC));
                let (n, len) = (report.metrics.len(), report.wire_bytes());
                row(&mut fb, format_args!("{now},{first},{n},{len}"))?;
            }
            continue;
        }
        let wake = if next < end {
            origin + next
        } else {
            origin + c.until_ns
        };
        if !ppoll(&[fd], wake.saturating_sub(m).max(1)).map_err(|e| e.to_string())?[0] {
            continue;
        }
        let Ok((n, at, tos)) = recv_with_timestamp_tos(fd, &mut buf) else {
            continue;
        };
        if n < MEDIA_HEADER {
            continue;
        }
        let seq = u64::from_be_bytes(buf[..8].try_into().unwrap());
        if seq > highest.map_or(MAX_SEQ_JUMP, |h| h + MAX_SEQ_JUMP) {
            continue;
        }
        highest = Some(highest.map_or(seq, |h| h.max(seq)));
        let at = trial_of(at, t0);
        latest = latest.max(at);
        rx.feedback.on_packet(seq, at, tos & 3);
        row(&mut recv, format_args!("{seq},{at},{}", tos & 3))?;
    }
    recv.flush().map_err(|e| e.to_string())?;
    fb.flush().map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A media packet's payload holds the 12 bytes the receiver reads even for the
    /// smallest packet the encoder makes (a 1-byte frame: RTP header + 1 byte).
    #[test]
    fn the_smallest_media_packet_carries_its_header() {
        let smallest = collateral_model::media::encoder::packetize(1)
            .next()
            .unwrap();
        assert!((smallest - UDP_HEADERS) as usize > MEDIA_HEADER);
    }

    #[test]
    fn a_scenario_without_a_call_is_refused_naming_it() {
        let sc = Scenario::from_json(
            r#"{"seed": 1, "duration_ns": 1000000000, "rtt_ns": 20000000,
                "down": {"rate_bps": 1000000, "queue": {"rule": "ps", "limit": 10}},
                "up": {"rate_bps": 1000000, "queue": {"rule": "ps", "limit": 10}}}"#,
        )
        .unwrap();
        assert!(call(&sc).unwrap_err().starts_with("--scenario: "));
        let mut scream = sc.clone();
        scream.media = vec![MediaConfig {
            controller: Controller::Scream,
            ..Default::default()
        }];
        let e = call(&scream).unwrap_err();
        assert!(e.starts_with("--scenario: media.controller scream"), "{e}");
    }
}
