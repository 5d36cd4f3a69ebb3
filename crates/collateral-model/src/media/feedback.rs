//! Transport feedback after RFC 8888 (RTCP feedback for congestion control): the
//! receiver reports, for a run of RTP sequence numbers, whether each packet arrived,
//! its ECN field and its arrival time as an offset before the report's timestamp.
//! Reports go back as real packets on the reverse path (their wire size is that of the
//! RFC's packet), so a queue upstream delays or drops them as it would RTCP.
//!
//! The packet (RFC 8888 §3.1), for one media stream:
//!
//! ```text
//!  |V=2|P| FMT=11 |   PT = 205    |          length               |
//!  |                 SSRC of RTCP packet sender                    |
//!  |                   SSRC of 1st RTP stream                      |
//!  |          begin_seq            |          num_reports          |
//!  |R|ECN|  Arrival time offset    | ...  (one 16-bit block a packet, padded to 32 bits)
//!  |                 Report Timestamp (32 bits)                    |
//! ```
//! The arrival time offset (ATO) counts 1/1024 s back from the report timestamp (the
//! middle 32 bits of an NTP timestamp: 16.16 fixed-point seconds); 0x1FFE stands for
//! that much or more, 0x1FFF for "not available"; R = 0 leaves ECN and ATO zero.

use collateral_queue::Nanos;

use crate::traffic::UDP_HEADERS;

/// RTCP packet type of transport-layer feedback (RFC 4585) and RFC 8888's format.
pub const PT_RTPFB: u8 = 205;
pub const FMT_CCFB: u8 = 11;
/// ATO codes for an offset too large to express and for one not available.
pub const ATO_MAX: u16 = 0x1FFE;
pub const ATO_UNAVAILABLE: u16 = 0x1FFF;
/// Packets one report covers at most (this model's cap: a report stays within 33 kB,
/// so its IP length fits in 16 bits); the rest wait for the next report.
pub const MAX_REPORTS: usize = 16_384;

/// One packet's 16-bit metric block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Metric {
    pub received: bool,
    /// The ECN bits it arrived with (RFC 3168 codepoint).
    pub ecn: u8,
    /// Arrival time offset, 1/1024 s before the report timestamp.
    pub ato: u16,
}

impl Metric {
    pub const LOST: Metric = Metric {
        received: false,
        ecn: 0,
        ato: 0,
    };

    pub fn to_bits(self) -> u16 {
        if !self.received {
            return 0;
        }
        0x8000 | (self.ecn as u16 & 3) << 13 | self.ato.min(ATO_UNAVAILABLE)
    }

    pub fn from_bits(b: u16) -> Metric {
        Metric {
            received: b & 0x8000 != 0,
            ecn: (b >> 13 & 3) as u8,
            ato: b & 0x1FFF,
        }
    }
}

/// One report for one media stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    pub begin_seq: u16,
    pub metrics: Vec<Metric>,
    /// When it was made: NTP's middle 32 bits (16.16 seconds).
    pub timestamp: u32,
}

/// `t` ns as NTP's middle 32 bits (seconds.fraction, 16.16), wrapping past 65 536 s.
pub fn ntp_middle(t: Nanos) -> u32 {
    ((t as u128 * 65_536 / 1_000_000_000) & 0xFFFF_FFFF) as u32
}

/// An arrival `offset_ns` before the report as an ATO (1/1024 s, rounded down).
pub fn ato_of(offset_ns: Nanos) -> u16 {
    let units = offset_ns as u128 * 1024 / 1_000_000_000;
    units.min(ATO_MAX as u128) as u16
}

/// An ATO back in nanoseconds (`None`: not available).
pub fn ato_ns(ato: u16) -> Option<Nanos> {
    (ato != ATO_UNAVAILABLE).then(|| ato as Nanos * 1_000_000_000 / 1024)
}

/// The time of NTP-middle timestamp `ts`, the latest at or before `now` (a report's
/// timestamp read by the sender: the 32 bits wrap every 65 536 s). Within 1/65 536 s
/// of the instant stamped; a stamp a little after `now` (rounding) reads as `now`.
pub fn ntp_at_or_before(now: Nanos, ts: u32) -> Nanos {
    let age = (ntp_middle(now).wrapping_sub(ts) as i32).max(0) as u128;
    now.saturating_sub((age * 1_000_000_000 / 65_536) as Nanos)
}

/// The full sequence number of a report's 16-bit `begin_seq` when it covers `n`
/// packets and `sent` have been sent: the latest whose run ends within them (a report
/// covers the newest packets, never more than [`MAX_REPORTS`] of them). `None` when no
/// such run fits.
pub fn widen_seq(begin_seq: u16, n: u64, sent: u64) -> Option<u64> {
    let last_start = sent.checked_sub(n)?;
    let back = (last_start as u16).wrapping_sub(begin_seq) as u64;
    last_start.checked_sub(back)
}

impl Report {
    /// The RTCP packet's bytes.
    pub fn encode(&self, sender_ssrc: u32, media_ssrc: u32) -> Vec<u8> {
        let n = self.metrics.len();
        let words = 2 + 2 + n.div_ceil(2) + 1; // header+sender, ssrc+seq, blocks, RTS
        let mut b = Vec::with_capacity(words * 4);
        b.push(0x80 | FMT_CCFB);
        b.push(PT_RTPFB);
        b.extend_from_slice(&((words - 1) as u16).to_be_bytes());
        b.extend_from_slice(&sender_ssrc.to_be_bytes());
        b.extend_from_slice(&media_ssrc.to_be_bytes());
        b.extend_from_slice(&self.begin_seq.to_be_bytes());
        b.extend_from_slice(&(n as u16).to_be_bytes());
        for m in &self.metrics {
            b.extend_from_slice(&m.to_bits().to_be_bytes());
        }
        if n % 2 == 1 {
            b.extend_from_slice(&[0, 0]);
        }
        b.extend_from_slice(&self.timestamp.to_be_bytes());
        b
    }

    /// Reads a packet [`encode`](Self::encode) wrote (one stream).
    pub fn decode(b: &[u8]) -> Result<Report, String> {
        let word = |i: usize| -> Result<[u8; 4], String> {
            b.get(i * 4..i * 4 + 4)
                .map(|s| [s[0], s[1], s[2], s[3]])
                .ok_or_else(|| format!("feedback: truncated at word {i}"))
        };
        let h = word(0)?;
        if h[0] >> 6 != 2 || h[0] & 0x1F != FMT_CCFB || h[1] != PT_RTPFB {
            return Err("feedback: not an RFC 8888 packet".into());
        }
        let len = u16::from_be_bytes([h[2], h[3]]) as usize;
        let s = word(3)?;
        let begin_seq = u16::from_be_bytes([s[0], s[1]]);
        let n = u16::from_be_bytes([s[2], s[3]]) as usize;
        if len + 1 != 5 + n.div_ceil(2) || b.len() < (len + 1) * 4 {
            return Err("feedback: length does not match num_reports".into());
        }
        let metrics = (0..n)
            .map(|i| Metric::from_bits(u16::from_be_bytes([b[16 + 2 * i], b[17 + 2 * i]])))
            .collect();
        Ok(Report {
            begin_seq,
            metrics,
            timestamp: u32::from_be_bytes(word(len)?),
        })
    }

    /// The packet's IP length: its RTCP bytes over UDP/IP.
    pub fn wire_bytes(&self) -> u32 {
        (4 * (5 + self.metrics.len().div_ceil(2))) as u32 + UDP_HEADERS
    }
}

/// The receiver's side: notes each media packet's arrival and, every interval, reports
/// every sequence number from the first not yet reported to the highest received.
#[derive(Debug, Clone, Default)]
pub struct FeedbackReceiver {
    /// (arrival, ECN) by sequence number; `None`: not (yet) arrived.
    arrivals: Vec<Option<(Nanos, u8)>>,
    next_unreported: usize,
}

impl FeedbackReceiver {
    pub fn on_packet(&mut self, seq: u64, now: Nanos, ecn: u8) {
        let i = seq as usize;
        if i >= self.arrivals.len() {
            self.arrivals.resize(i + 1, None);
        }
        self.arrivals[i] = Some((now, ecn));
    }

    /// The report due at `now` and the first sequence number it covers (full, not
    /// wrapped to 16 bits); `None` when nothing new has arrived.
    pub fn report(&mut self, now: Nanos) -> Option<(u64, Report)> {
        let end = self.arrivals.len().min(self.next_unreported + MAX_REPORTS);
        if end <= self.next_unreported {
            return None;
        }
        let first = self.next_unreported;
        let metrics = self.arrivals[first..end]
            .iter()
            .map(|a| match *a {
                Some((t, ecn)) => Metric {
                    received: true,
                    ecn,
                    ato: ato_of(now - t),
                },
                None => Metric::LOST,
            })
            .collect();
        self.next_unreported = end;
        Some((
            first as u64,
            Report {
                begin_seq: first as u16,
                metrics,
                timestamp: ntp_middle(now),
            },
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bit layout, byte by byte, of a report on sequence numbers 0x1234.. 0x1236:
    /// received with ECT(0) 1 s before the report (ATO 1024 = 0x400), lost, received
    /// with CE 2 ms before (⌊2.048⌋ = 2); report time 2.5 s (NTP middle 0x0002_8000).
    #[test]
    fn report_matches_the_rfc_8888_layout() {
        let r = Report {
            begin_seq: 0x1234,
            metrics: vec![
                Metric {
                    received: true,
                    ecn: 0b10,
                    ato: ato_of(1_000_000_000),
                },
                Metric::LOST,
                Metric {
                    received: true,
                    ecn: 0b11,
                    ato: ato_of(2_000_000),
                },
            ],
            timestamp: ntp_middle(2_500_000_000),
        };
        let b = r.encode(0xAABB_CCDD, 0x0102_0304);
        #[rustfmt::skip]
        let expect = [
            0x8B, 205, 0x00, 0x06,            // V=2 P=0 FMT=11, PT 205, length 7 words − 1
            0xAA, 0xBB, 0xCC, 0xDD,           // sender SSRC
            0x01, 0x02, 0x03, 0x04,           // media SSRC
            0x12, 0x34, 0x00, 0x03,           // begin_seq, num_reports
            0xC4, 0x00,                       // R=1 ECN=10 ATO=0x400: 1100 0100 0000 0000
            0x00, 0x00,                       // R=0: all zero
            0xE0, 0x02,                       // R=1 ECN=11 ATO=2: 1110 0000 0000 0010
            0x00, 0x00,                       // padding to 32 bits
            0x00, 0x02, 0x80, 0x00,           // report timestamp 2.5 s
        ];
        assert_eq!(b, expect);
        assert_eq!(r.wire_bytes(), 28 + 28);
        assert_eq!(Report::decode(&b).unwrap(), r);
        assert!(Report::decode(&b[..20]).is_err());
    }

    #[test]
    fn ato_saturates_and_the_unavailable_code_reads_as_none() {
        assert_eq!(ato_of(0), 0);
        assert_eq!(ato_of(999_999), 1); // 1.023 units
        assert_eq!(ato_of(7_997_070_313), 0x1FFE - 1); // just past 8189 / 1024 s
        assert_eq!(ato_of(60_000_000_000), ATO_MAX);
        assert_eq!(ato_ns(1024), Some(1_000_000_000));
        assert_eq!(ato_ns(ATO_UNAVAILABLE), None);
        let m = Metric::from_bits(0xFFFF);
        assert_eq!((m.received, m.ecn, m.ato), (true, 3, 0x1FFF));
    }

    /// Wrapped fields widened by hand: 2.5 s stamped (0x0002_8000) reads back exactly
    /// from 3 s; a stamp from before the 65 536 s wrap read just after it; begin_seq
    /// 0xFFFE on 5 packets with 65 540 sent: 65 534 (ends at 65 539); 3 packets with
    /// 10 sent starting at 4: 4; more packets than were sent: none.
    #[test]
    fn wrapped_timestamps_and_sequence_numbers_widen_to_the_latest_fit() {
        let s = 1_000_000_000;
        assert_eq!(
            ntp_at_or_before(3 * s, ntp_middle(2 * s + s / 2)),
            2 * s + s / 2
        );
        let just_after_wrap = 65_536 * s + s / 4;
        assert_eq!(
            ntp_at_or_before(just_after_wrap, 0xFFFF_8000),
            65_535 * s + s / 2
        );
        assert_eq!(ntp_at_or_before(s, ntp_middle(s) + 1), s);
        assert_eq!(widen_seq(0xFFFE, 5, 65_540), Some(65_534));
        assert_eq!(widen_seq(4, 3, 10), Some(4));
        assert_eq!(widen_seq(9, 3, 10), None);
        assert_eq!(widen_seq(0, 11, 10), None);
    }

    /// Each report covers from the first sequence number not reported before to the
    /// highest received; a gap is reported lost; nothing new, no report.
    #[test]
    fn receiver_reports_each_packet_once() {
        let ms = 1_000_000;
        let mut f = FeedbackReceiver::default();
        f.on_packet(0, 10 * ms, 0);
        f.on_packet(2, 20 * ms, 0);
        let (first, r) = f.report(50 * ms).unwrap();
        assert_eq!(first, 0);
        let got: Vec<(bool, u16)> = r.metrics.iter().map(|m| (m.received, m.ato)).collect();
        // 40 ms = 40.96 units → 40; 30 ms → 30.72 → 30.
        assert_eq!(got, [(true, 40), (false, 0), (true, 30)]);
        assert!(f.report(100 * ms).is_none());
        f.on_packet(3, 110 * ms, 2);
        let (first, r) = f.report(150 * ms).unwrap();
        assert_eq!((first, r.begin_seq, r.metrics.len()), (3, 3, 1));
        // More than a report holds: the rest go in the next one.
        f.on_packet(4 + MAX_REPORTS as u64, 160 * ms, 0);
        let (first, r) = f.report(200 * ms).unwrap();
        assert_eq!((first, r.metrics.len()), (4, MAX_REPORTS));
        assert!(r.wire_bytes() <= u16::MAX as u32);
        let (first, r) = f.report(250 * ms).unwrap();
        assert_eq!((first, r.metrics.len()), (4 + MAX_REPORTS as u64, 1));
    }
}
