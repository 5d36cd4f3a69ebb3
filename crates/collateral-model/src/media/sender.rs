//! The call's sending end: the encoder, the controller (GCC, NADA or SCReAM with its RTP
//! queue) and what the sender knows of its packets.
//! Clock-agnostic like the rest of [`crate::media`]: the simulator calls it with its
//! event time, the testbed's `media-send` endpoint with real time since the run's
//! origin, so both run the same per-event code (one model, two clocks).
//!
//! A report reaches the sender in one of two ways: the simulator hands over the very
//! report the receiver made ([`MediaSender::on_report`]), the testbed reads it off the
//! wire as RFC 8888's packet ([`MediaSender::on_report_packet`]), whose 16-bit
//! `begin_seq` and 32-bit NTP timestamp the sender widens against what it knows.

use collateral_queue::{Ecn, Nanos};

use super::encoder::{self, Encoder, EncoderConfig};
use super::feedback::{self, Report};
use super::gcc::{Gcc, PacketResult};
use super::nada::Nada;
use super::scream::Scream;
use super::{Controller, MediaConfig, MediaRecords, RateControl, DISCARDED};
use crate::rng;
use crate::traffic::IN_FLIGHT;

/// SCReAM's RTP queue and bytes-in-flight accounting (RFC 8298 §4.1.2: bytes in flight
/// run from the highest acknowledged sequence number, lost packets before it counted as
/// acknowledged, to the last sent).
#[derive(Debug, Clone, Default)]
struct SelfClock {
    /// Packets made but not yet sent: sequence numbers `sent_upto..made`.
    sent_upto: u64,
    /// Packets acknowledged (or given up): `..acked_upto`.
    acked_upto: u64,
    flight_bytes: u64,
    /// When the acknowledged point last moved.
    last_progress: Nanos,
    /// Packets discarded from the RTP queue (never sent) at or past `acked_upto`: the
    /// receiver reports them missing, which is no network loss.
    discarded: std::collections::BTreeSet<u64>,
}

/// With nothing acknowledged for this long, the packets in flight are taken as lost
/// (else a window whose every packet was dropped would never reopen; RFC 8298 leaves
/// this to the implementation).
pub const SCREAM_STALL_NS: Nanos = 1_000_000_000;

/// The sender: ask it for each frame at its capture time, give it each report.
#[derive(Debug, Clone)]
pub struct MediaSender {
    pub cfg: MediaConfig,
    pub encoder: Encoder,
    pub control: RateControl,
    clock: SelfClock,
    /// Its packets and frames (the arrivals are filled in by whoever knows them: the
    /// simulator; in the testbed, the measurement from the receiver's log).
    pub records: MediaRecords,
    /// The round-trip estimate (the scenario's RTT until feedback says).
    pub rtt_ns: Nanos,
}

impl MediaSender {
    pub fn new(cfg: &MediaConfig, seed: u64, rtt_ns: Nanos) -> Self {
        Self::new_call(cfg, seed, rtt_ns, 0)
    }

    /// The sender of call `index` of the scenario: its encoder draws from a stream of
    /// its own (the first call's is the one a lone call always used).
    pub fn new_call(cfg: &MediaConfig, seed: u64, rtt_ns: Nanos, index: usize) -> Self {
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
        let control = match cfg.controller {
            Controller::Gcc => RateControl::Gcc(Gcc::new(start, min, max)),
            Controller::Nada => RateControl::Nada(Nada::new(start, min, max)),
            Controller::Scream => {
                RateControl::Scream(Box::new(Scream::new(start, min, max, cfg.start_ns)))
            }
        };
        let records = MediaRecords {
            target: vec![(cfg.start_ns, control.target_bps())],
            ..Default::default()
        };
        MediaSender {
            encoder: Encoder::new(
                enc,
                cfg.start_ns,
                start,
                rng::stream(seed, rng::media_stream(index)),
            ),
            control,
            clock: SelfClock {
                last_progress: cfg.start_ns,
                ..Default::default()
            },
            records,
            rtt_ns,
            cfg: cfg.clone(),
        }
    }

    /// When the next frame is captured.
    pub fn next_frame_at(&self) -> Nanos {
        self.encoder.next_capture()
    }

    /// Encodes the frame due now and records its packets; returns the sequence numbers
    /// of those to send now (their lengths are in `records.lens`): all of them, or under
    /// SCReAM those its window lets out of the RTP queue.
    pub fn send_frame(&mut self, now: Nanos) -> std::ops::Range<u64> {
        let made = self.make_frame(now);
        if !matches!(self.control, RateControl::Scream(_)) {
            self.clock.sent_upto = made.end;
            return made;
        }
        let c = &mut self.clock;
        if c.flight_bytes > 0 && now.saturating_sub(c.last_progress) >= SCREAM_STALL_NS {
            c.acked_upto = c.sent_upto;
            c.flight_bytes = 0;
            c.last_progress = now;
            c.discarded.clear();
        }
        self.scream_adjust(now);
        self.release(now)
    }

    /// Packets leave the RTP queue while the bytes in flight are below the window.
    fn release(&mut self, now: Nanos) -> std::ops::Range<u64> {
        let RateControl::Scream(s) = &self.control else {
            return 0..0;
        };
        let c = &mut self.clock;
        let made = self.records.sent.len() as u64;
        // RFC 8298 §4.1.3: the sender SHOULD discard RTP packets that are excessively
        // delayed; here those that waited past the playout deadline (a frame that late
        // is of no use). The summary counts them apart from the network's losses.
        while c.sent_upto < made
            && now.saturating_sub(self.records.sent[c.sent_upto as usize]) > self.cfg.playout_ns
        {
            self.records.arrived[c.sent_upto as usize] = DISCARDED;
            c.discarded.insert(c.sent_upto);
            c.sent_upto += 1;
        }
        let first = c.sent_upto;
        while c.sent_upto < made && (c.flight_bytes as f64) < s.cwnd {
            let i = c.sent_upto as usize;
            self.records.sent[i] = now;
            c.flight_bytes += self.records.lens[i] as u64;
            c.sent_upto += 1;
        }
        first..c.sent_upto
    }

    /// SCReAM's rate controller, given the RTP queue's delay (its oldest packet's wait).
    fn scream_adjust(&mut self, now: Nanos) {
        let RateControl::Scream(s) = &mut self.control else {
            return;
        };
        let c = &self.clock;
        let wait = self
            .records
            .sent
            .get(c.sent_upto as usize)
            .map_or(0, |&t| now.saturating_sub(t));
        if let Some(t) = s.adjust_rate(wait as f64 / 1e9, now) {
            if self.records.target.last().is_none_or(|l| l.1 != t) {
                self.encoder.set_target(now, t);
                self.records.target.push((now, t));
            }
        }
    }

    /// Encodes the frame due now; its packets are recorded as made now.
    fn make_frame(&mut self, now: Nanos) -> std::ops::Range<u64> {
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
    /// the controller reads it (arrival times as the report's 1/1024 s offsets give
    /// them) and the encoder gets the new target. The caller checks that it covers
    /// packets sent. Returns the packets SCReAM's window now lets out of its RTP queue
    /// (none for the others).
    pub fn on_report(
        &mut self,
        now: Nanos,
        made: Nanos,
        first: u64,
        report: &Report,
    ) -> std::ops::Range<u64> {
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
                ce: m.received && m.ecn == Ecn::Ce as u8,
            });
        }
        let before = self.control.target_bps();
        let target = match &mut self.control {
            RateControl::Gcc(g) => g.on_feedback(&results, self.rtt_ns, now),
            RateControl::Nada(n) => n.on_feedback(&results, self.rtt_ns, now),
            RateControl::Scream(_) => return self.scream_feedback(&results, first, now),
        };
        if target != before {
            self.encoder.set_target(now, target);
            self.records.target.push((now, target));
        }
        0..0
    }

    /// SCReAM reads a report: the acknowledged point moves past its highest received
    /// packet (RFC 8298 §4.1.2), the window updates, the rate controller runs, and the
    /// window may let packets out.
    fn scream_feedback(
        &mut self,
        results: &[PacketResult],
        first: u64,
        now: Nanos,
    ) -> std::ops::Range<u64> {
        let last_got = results.iter().rposition(|p| p.arrived.is_some());
        let c = &mut self.clock;
        let loss = last_got.is_some_and(|k| {
            (0..k)
                .any(|j| results[j].arrived.is_none() && !c.discarded.contains(&(first + j as u64)))
        });
        let mut acked = 0u64;
        if let Some(k) = last_got {
            let upto = (first + k as u64 + 1).min(c.sent_upto);
            while c.acked_upto < upto {
                if !c.discarded.contains(&c.acked_upto) {
                    acked += self.records.lens[c.acked_upto as usize] as u64;
                }
                c.acked_upto += 1;
            }
            c.discarded = c.discarded.split_off(&c.acked_upto);
        }
        if acked > 0 {
            c.flight_bytes = c.flight_bytes.saturating_sub(acked);
            c.last_progress = now;
        }
        let delays: Vec<(Nanos, Nanos)> = last_got
            .map(|k| (results[k].sent, results[k].arrived.unwrap()))
            .into_iter()
            .collect();
        let flight = c.flight_bytes as f64;
        if let RateControl::Scream(s) = &mut self.control {
            s.on_feedback(&delays, loss, acked as f64, flight, self.rtt_ns, now);
        }
        self.scream_adjust(now);
        self.release(now)
    }

    /// An RFC 8888 packet read off the wire at `now`: decoded, its sequence numbers
    /// and timestamp widened, then as [`on_report`](Self::on_report). A packet that
    /// does not decode, or reports packets not sent, is refused (and changes nothing).
    pub fn on_report_packet(
        &mut self,
        now: Nanos,
        bytes: &[u8],
    ) -> Result<std::ops::Range<u64>, String> {
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
        Ok(self.on_report(now, made, first, &r))
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
        assert_eq!(wire.control.target_bps(), mem.control.target_bps());
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
