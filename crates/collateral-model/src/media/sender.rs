//! The call's sending end: the encoder, GCC and what the sender knows of its packets.
//! Clock-agnostic like the rest of [`crate::media`]: the simulator calls it with its
//! event time, the testbed's `media-send` endpoint with real time since the run's
//! origin, so both run the same per-event code (one model, two clocks).
//!
//! A report reaches the sender in one of two ways: the simulator hands over the very
//! report the receiver made ([`MediaSender::on_report`]), the testbed reads it off the
//! wire as RFC 8888's packet ([`MediaSender::on_report_packet`]), whose 16-bit
//! `begin_seq` and 32-bit NTP timestamp the sender widens against what it knows.

use collateral_queue::Nanos;

use super::encoder::{self, Encoder, EncoderConfig};
use super::feedback::{self, Report};
use super::gcc::{Gcc, PacketResult};
use super::{MediaConfig, MediaRecords};
use crate::rng;
use crate::traffic::IN_FLIGHT;

/// The sender: ask it for each frame at its capture time, give it each report.
#[derive(Debug, Clone)]
pub struct MediaSender {
    pub cfg: MediaConfig,
    pub encoder: Encoder,
    pub gcc: Gcc,
    /// Its packets and frames (the arrivals are filled in by whoever knows them: the
    /// simulator; in the testbed, the measurement from the receiver's log).
    pub records: MediaRecords,
    /// The round-trip estimate (the scenario's RTT until feedback says).
    pub rtt_ns: Nanos,
}

impl MediaSender {
    pub fn new(cfg: &MediaConfig, seed: u64, rtt_ns: Nanos) -> Self {
        let (min, max) = (cfg.min_rate_bps as f64, cfg.max_rate_bps as f64);
        let start = cfg.start_rate_bps as f64;
        let enc = EncoderConfig {
            fps: cfg.fps,
            reaction_lag_ns: cfg.reaction_lag_ns,
            min_bps: min,
            max_bps: max,
            key_interval_ns: cfg.key_interval_ns,
            ..Default::default()
        };
        let gcc = Gcc::new(start, min, max);
        let records = MediaRecords {
            target: vec![(cfg.start_ns, gcc.target_bps())],
            ..Default::default()
        };
        MediaSender {
            encoder: Encoder::new(
                enc,
                cfg.start_ns,
                start,
                rng::stream(seed, rng::MEDIA_STREAM),
            ),
            gcc,
            records,
            rtt_ns,
            cfg: cfg.clone(),
        }
    }

    /// When the next frame is captured.
    pub fn next_frame_at(&self) -> Nanos {
        self.encoder.next_capture()
    }

    /// Encodes the frame due and records its packets as sent at `now`; returns their
    /// sequence numbers (their lengths are in `records.lens`).
    pub fn send_frame(&mut self, now: Nanos) -> std::ops::Range<u64> {
        let f = self.encoder.next_frame();
        let r = &mut self.records;
        let first = r.sent.len() as u64;
        for len in encoder::packetize(f.bytes) {
            r.sent.push(now);
            r.arrived.push(IN_FLIGHT);
            r.lens.push(len);
            r.frame.push(f.index as u32);
        }
        let last = r.sent.len() as u64;
        r.frames.push((f.captured, first, (last - first) as u32));
        first..last
    }

    /// A report made at `made` on media packets `first..` reached the sender at `now`:
    /// GCC reads it (arrival times as the report's 1/1024 s offsets give them) and the
    /// encoder gets the new target. The caller checks that it covers packets sent.
    pub fn on_report(&mut self, now: Nanos, made: Nanos, first: u64, report: &Report) {
        let mut results = Vec::with_capacity(report.metrics.len());
        for (k, m) in report.metrics.iter().enumerate() {
            let i = first as usize + k;
            let sent = self.records.sent[i];
            let arrived = m
                .received
                .then(|| feedback::ato_ns(m.ato).map(|o| made.saturating_sub(o)))
                .flatten();
            if let Some(a) = arrived {
                // Round trip: the time since it was sent, less the time it waited at
                // the receiver for the report.
                self.rtt_ns = now.saturating_sub(sent).saturating_sub(made - a);
            }
            results.push(PacketResult {
                sent,
                bytes: self.records.lens[i],
                arrived,
            });
        }
        let before = self.gcc.target_bps();
        let target = self.gcc.on_feedback(&results, self.rtt_ns, now);
        if target != before {
            self.encoder.set_target(now, target);
            self.records.target.push((now, target));
        }
    }

    /// An RFC 8888 packet read off the wire at `now`: decoded, its sequence numbers
    /// and timestamp widened, then as [`on_report`](Self::on_report). A packet that
    /// does not decode, or reports packets not sent, is refused (and changes nothing).
    pub fn on_report_packet(&mut self, now: Nanos, bytes: &[u8]) -> Result<(), String> {
        let r = Report::decode(bytes)?;
        let sent = self.records.sent.len() as u64;
        let first =
            feedback::widen_seq(r.begin_seq, r.metrics.len() as u64, sent).ok_or_else(|| {
                format!(
                    "feedback: {} packets from {} reported, {sent} sent",
                    r.metrics.len(),
                    r.begin_seq
                )
            })?;
        let made = feedback::ntp_at_or_before(now, r.timestamp);
        self.on_report(now, made, first, &r);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::media::feedback::{FeedbackReceiver, Metric};

    const MS: Nanos = 1_000_000;

    /// A frame of three packets sent at 0, arriving at 30, 31 and 32 ms; the report at
    /// 50 ms reaches the sender at 80 ms. Off the wire as from memory: the round trip
    /// is 80 ms less the last packet's wait, whose ATO is ⌊18 ms·1.024⌋ = 18 units =
    /// 17.578125 ms: 62.421875 ms. The report's timestamp carries 50 ms to 1/65536 s.
    #[test]
    fn a_report_off_the_wire_reads_as_the_one_in_memory() {
        let cfg = MediaConfig {
            start_rate_bps: 900_000, // a 15 000-byte first (key) frame: 13 packets
            ..Default::default()
        };
        let mut wire = MediaSender::new(&cfg, 1, 40 * MS);
        let mut mem = wire.clone();
        let seqs = wire.send_frame(0);
        assert_eq!(mem.send_frame(0), seqs);
        let mut rx = FeedbackReceiver::default();
        for s in seqs.clone() {
            rx.on_packet(s, 30 * MS + s.min(2) * MS, 0);
        }
        let (first, report) = rx.report(50 * MS).unwrap();
        assert_eq!((first, report.metrics.len() as u64), (0, seqs.end));
        let bytes = report.encode(1, 2);
        wire.on_report_packet(80 * MS, &bytes).unwrap();
        mem.on_report(80 * MS, 50 * MS, first, &report);
        assert_eq!(wire.rtt_ns, 62_421_875);
        assert_eq!(mem.rtt_ns, 62_421_875);
        assert_eq!(wire.gcc.target_bps(), mem.gcc.target_bps());
        assert_eq!(wire.records.target, mem.records.target);
    }

    /// Reports on packets never sent, and bytes that are not a report, are refused and
    /// leave the sender as it was.
    #[test]
    fn a_bad_report_packet_is_refused() {
        let mut s = MediaSender::new(&MediaConfig::default(), 1, 40 * MS);
        let sent = s.send_frame(0).end;
        let r = Report {
            begin_seq: 0,
            metrics: vec![Metric::LOST; sent as usize + 1],
            timestamp: 0,
        };
        let e = s.on_report_packet(60 * MS, &r.encode(1, 2)).unwrap_err();
        assert!(e.starts_with("feedback: ") && e.contains("sent"), "{e}");
        assert!(s.on_report_packet(60 * MS, &[0x80, 205, 0, 0]).is_err());
        assert_eq!(s.rtt_ns, 40 * MS);
        assert_eq!(s.records.target.len(), 1);
    }
}
