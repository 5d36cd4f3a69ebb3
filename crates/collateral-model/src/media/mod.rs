//! Adaptive real-time media (RMCAT): a video call whose sender runs a congestion
//! controller on the receiver's transport feedback. The parts are clock-agnostic (each
//! takes `now`), so the simulator drives them now and the testbed's endpoints can later:
//! [`encoder`] (RFC 8593's synthetic codec), [`feedback`] (RFC 8888 reports), the
//! controllers [`gcc`] (draft-ietf-rmcat-gcc-02), [`nada`] (RFC 8698) and [`scream`]
//! (RFC 8298), and [`summary`] (what is measured of a call).
//!
//! One video stream, one direction; no audio beside it, no retransmission (NACK) or
//! key-frame requests, no pacer (a frame's packets leave back to back; under SCReAM
//! they wait in its RTP queue until its window lets them go).

pub mod encoder;
pub mod feedback;
pub mod gcc;
pub mod nada;
pub mod scream;
pub mod summary;

use collateral_queue::{Ecn, Nanos};
use serde::{Deserialize, Serialize};

use crate::rng;
use crate::traffic::{DROPPED, IN_FLIGHT, LOST_ON_WIRE};
use crate::units::Direction;
use encoder::{Encoder, EncoderConfig};
use feedback::{FeedbackReceiver, Report};
use gcc::{Gcc, PacketResult};
use nada::Nada;
use scream::Scream;

/// The fastest call a scenario may ask for (the encoder's packets are records each).
pub const MAX_RATE_BPS: u64 = 1_000_000_000;

/// The congestion controllers a call can run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, strum::VariantNames)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Controller {
    Gcc,
    Nada,
    Scream,
}

impl Controller {
    /// Its name in the summaries.
    pub fn name(self) -> &'static str {
        match self {
            Controller::Gcc => "gcc",
            Controller::Nada => "nada",
            Controller::Scream => "scream",
        }
    }
}

/// The running controller of a call.
#[derive(Debug, Clone)]
pub enum RateControl {
    Gcc(Gcc),
    Nada(Nada),
    Scream(Box<Scream>),
}

impl RateControl {
    pub fn target_bps(&self) -> f64 {
        match self {
            RateControl::Gcc(g) => g.target_bps(),
            RateControl::Nada(n) => n.target_bps(),
            RateControl::Scream(s) => s.target_bps,
        }
    }
}

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

/// A video call: the scenario's `media`. Rates default to RFC 8867's test cases as
/// cisco/ns3-rmcat runs them (`test/rmcat-common-test.h`: R_init = R_min = 150 kbit/s,
/// R_max = 1.5 Mbit/s).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MediaConfig {
    /// The way the video goes; its feedback takes the other.
    pub direction: Direction,
    pub controller: Controller,
    pub start_ns: Nanos,
    pub start_rate_bps: u64,
    pub min_rate_bps: u64,
    pub max_rate_bps: u64,
    pub fps: f64,
    /// The encoder's reaction lag τ_v (RFC 8593 §4).
    pub reaction_lag_ns: Nanos,
    /// Key frames after the first (0: none).
    pub key_interval_ns: Nanos,
    /// How often the receiver sends feedback (RFC 8888 leaves it to the application,
    /// about once a frame to once an RTT; ns3-rmcat's receiver reports every 100 ms;
    /// 50 ms here).
    pub feedback_interval_ns: Nanos,
    /// A frame later than this after its capture misses its playout.
    pub playout_ns: Nanos,
    /// DSCP and ECN codepoint of the media and feedback packets.
    pub tag: u8,
    pub ecn: Ecn,
}

impl Default for MediaConfig {
    fn default() -> Self {
        MediaConfig {
            direction: Direction::Down,
            controller: Controller::Gcc,
            start_ns: 0,
            start_rate_bps: 150_000,
            min_rate_bps: 150_000,
            max_rate_bps: 1_500_000,
            fps: 30.0,
            reaction_lag_ns: 200_000_000,
            key_interval_ns: 0,
            feedback_interval_ns: 50_000_000,
            playout_ns: 150_000_000,
            tag: 0,
            ecn: Ecn::NotEct,
        }
    }
}

impl MediaConfig {
    /// One-line errors naming the field.
    pub fn validate(&self) -> Result<(), String> {
        let k = |f: &str| format!("media.{f}");
        if self.max_rate_bps > MAX_RATE_BPS {
            return Err(format!("{}: at most 1 Gbit/s", k("max_rate_bps")));
        }
        if self.min_rate_bps == 0 || self.min_rate_bps > self.max_rate_bps {
            return Err(format!(
                "{}: must be positive and at most max_rate_bps",
                k("min_rate_bps")
            ));
        }
        if !(self.fps.is_finite() && (1.0..=240.0).contains(&self.fps)) {
            return Err(format!("{}: must be 1 to 240 frames a second", k("fps")));
        }
        if !(1_000_000..=1_000_000_000).contains(&self.feedback_interval_ns) {
            return Err(format!(
                "{}: must be 1 ms to 1 s",
                k("feedback_interval_ns")
            ));
        }
        if self.playout_ns == 0 {
            return Err(format!("{}: must be positive", k("playout_ns")));
        }
        if self.tag > 63 {
            return Err(format!("{}: a DSCP is 0 to 63", k("tag")));
        }
        if self.ecn == Ecn::Ce {
            return Err(format!("{}: a source does not send CE", k("ecn")));
        }
        Ok(())
    }
}

/// What is known of a call's packets and frames: the measurements read these.
#[derive(Debug, Clone, Default)]
pub struct MediaRecords {
    /// Per media packet (by sequence number): send time, arrival (or the traffic
    /// module's IN_FLIGHT / DROPPED / LOST_ON_WIRE marks), IP length, frame index.
    pub sent: Vec<Nanos>,
    pub arrived: Vec<Nanos>,
    pub lens: Vec<u32>,
    pub frame: Vec<u32>,
    /// Per frame: capture time and its packets' first sequence number and count.
    pub frames: Vec<(Nanos, u64, u32)>,
    /// Each change of the controller's target: (time, bit/s), the start first.
    pub target: Vec<(Nanos, f64)>,
    pub feedback_sent: u64,
    pub feedback_lost: u64,
}

/// Both ends of a call as the simulator holds them.
#[derive(Debug, Clone)]
pub struct VideoCall {
    pub cfg: MediaConfig,
    pub encoder: Encoder,
    pub control: RateControl,
    clock: SelfClock,
    pub receiver: FeedbackReceiver,
    pub records: MediaRecords,
    /// Reports on their way back, by feedback sequence number: (when made, first
    /// media sequence number, report).
    reports: Vec<Option<(Nanos, u64, Report)>>,
    /// The sender's round-trip estimate (the scenario's RTT until feedback says).
    pub rtt_ns: Nanos,
    next_feedback: Nanos,
}

impl VideoCall {
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
        VideoCall {
            encoder: Encoder::new(
                enc,
                cfg.start_ns,
                start,
                rng::stream(seed, rng::MEDIA_STREAM),
            ),
            control,
            clock: SelfClock {
                last_progress: cfg.start_ns,
                ..Default::default()
            },
            receiver: FeedbackReceiver::default(),
            records,
            reports: Vec::new(),
            rtt_ns,
            next_feedback: cfg.start_ns + cfg.feedback_interval_ns,
            cfg: cfg.clone(),
        }
    }

    /// When the next frame is captured.
    pub fn next_frame_at(&self) -> Nanos {
        self.encoder.next_capture()
    }

    /// When the receiver next sends feedback.
    pub fn next_feedback_at(&self) -> Nanos {
        self.next_feedback
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
        // is of no use). They count as lost in the summary.
        while c.sent_upto < made
            && now.saturating_sub(self.records.sent[c.sent_upto as usize]) > self.cfg.playout_ns
        {
            self.records.arrived[c.sent_upto as usize] = DROPPED;
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

    pub fn on_media_arrival(&mut self, now: Nanos, seq: u64, ecn: u8) {
        self.records.arrived[seq as usize] = now;
        self.receiver.on_packet(seq, now, ecn);
    }

    pub fn on_media_drop(&mut self, seq: u64, on_wire: bool) {
        self.records.arrived[seq as usize] = if on_wire { LOST_ON_WIRE } else { DROPPED };
    }

    /// The receiver's feedback timer: the report's sequence number and IP length, if
    /// there is anything to report; the next timer is set.
    pub fn make_feedback(&mut self, now: Nanos) -> Option<(u64, u32)> {
        self.next_feedback = now + self.cfg.feedback_interval_ns;
        let (first, report) = self.receiver.report(now)?;
        let seq = self.reports.len() as u64;
        let bytes = report.wire_bytes();
        self.reports.push(Some((now, first, report)));
        self.records.feedback_sent += 1;
        Some((seq, bytes))
    }

    pub fn on_feedback_drop(&mut self, seq: u64) {
        self.reports[seq as usize] = None;
        self.records.feedback_lost += 1;
    }

    /// Report `seq` reached the sender at `now`: the controller reads it (arrival times
    /// as the report's 1/1024 s offsets give them) and the encoder gets the new target.
    /// Returns the packets SCReAM's window now lets out of its RTP queue (none for the
    /// others).
    pub fn on_feedback(&mut self, now: Nanos, seq: u64) -> std::ops::Range<u64> {
        let Some((made, first, report)) = self.reports[seq as usize].take() else {
            return 0..0;
        };
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
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each bad field is refused in one line that names it.
    #[test]
    fn a_bad_media_field_is_named() {
        let bad = |f: &dyn Fn(&mut MediaConfig)| {
            let mut c = MediaConfig::default();
            f(&mut c);
            c.validate().unwrap_err()
        };
        assert!(MediaConfig::default().validate().is_ok());
        for (e, field) in [
            (
                bad(&|c| c.max_rate_bps = 2_000_000_000),
                "media.max_rate_bps",
            ),
            (bad(&|c| c.min_rate_bps = 0), "media.min_rate_bps"),
            (bad(&|c| c.min_rate_bps = 2_000_000), "media.min_rate_bps"),
            (bad(&|c| c.fps = f64::NAN), "media.fps"),
            (bad(&|c| c.fps = 0.5), "media.fps"),
            (
                bad(&|c| c.feedback_interval_ns = 0),
                "media.feedback_interval_ns",
            ),
            (
                bad(&|c| c.feedback_interval_ns = 2_000_000_000),
                "media.feedback_interval_ns",
            ),
            (bad(&|c| c.playout_ns = 0), "media.playout_ns"),
            (bad(&|c| c.tag = 64), "media.tag"),
            (bad(&|c| c.ecn = Ecn::Ce), "media.ecn"),
        ] {
            assert!(
                e.starts_with(&format!("{field}: ")) && !e.contains('\n'),
                "{e}"
            );
        }
    }
}
