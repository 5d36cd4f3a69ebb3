//! Adaptive real-time media (RMCAT): a video call whose sender runs a congestion
//! controller on the receiver's transport feedback. The parts are clock-agnostic (each
//! takes `now`), so the simulator drives them and the testbed's endpoints do too:
//! [`encoder`] (RFC 8593's synthetic codec), [`feedback`] (RFC 8888 reports), the
//! controllers [`gcc`] (draft-ietf-rmcat-gcc-02), [`nada`] (RFC 8698) and [`scream`]
//! (RFC 8298), [`sender`] (the sending end that runs them on each event),
//! [`summary`] (what is measured of a call), [`criteria`] (RFC 8868's criteria across
//! the calls) and [`testbed`] (the testbed's records of
//! a call, checked before they are measured).
//!
//! A scenario holds any number of calls ([`calls`]), each one video stream one way; no audio beside it, no retransmission (NACK) or
//! key-frame requests, no pacer (a frame's packets leave back to back).

pub mod calls;
pub mod criteria;
pub mod encoder;
pub mod feedback;
pub mod gcc;
pub mod nada;
pub mod scream;
pub mod sender;
pub mod summary;
pub mod testbed;

use collateral_queue::{Ecn, Nanos};
use serde::{Deserialize, Serialize};

use crate::traffic::{DROPPED, LOST_ON_WIRE};
use crate::units::Direction;
use feedback::{FeedbackReceiver, Report};
use gcc::Gcc;
use nada::Nada;
use scream::Scream;
pub use sender::MediaSender;

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
        self.validate_as("media")
    }

    /// As [`Self::validate`], the fields named under `name` (`media[1]` in a list).
    pub fn validate_as(&self, name: &str) -> Result<(), String> {
        let k = |f: &str| format!("{name}.{f}");
        if self.max_rate_bps > MAX_RATE_BPS {
            return Err(format!("{}: at most 1 Gbit/s", k("max_rate_bps")));
        }
        if self.min_rate_bps == 0 || self.min_rate_bps > self.max_rate_bps {
            return Err(format!(
                "{}: must be positive and at most max_rate_bps",
                k("min_rate_bps")
            ));
        }
        // A start outside the range would be clamped into it: not what was asked for.
        if !(self.min_rate_bps..=self.max_rate_bps).contains(&self.start_rate_bps) {
            return Err(format!(
                "{}: must be from min_rate_bps to max_rate_bps",
                k("start_rate_bps")
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

/// The mark of a media packet the sender discarded from its RTP queue, never sending
/// it (SCReAM's, past the playout deadline): beside the traffic module's marks of
/// packets that did not arrive, below them, so a packet so marked is neither sent nor
/// lost in the network.
pub const DISCARDED: Nanos = LOST_ON_WIRE - 1;

/// What is known of a call's packets and frames: the measurements read these.
#[derive(Debug, Clone, Default)]
pub struct MediaRecords {
    /// Per media packet (by sequence number): send time, arrival (or the traffic
    /// module's IN_FLIGHT / DROPPED / LOST_ON_WIRE marks, or [`DISCARDED`]; its send
    /// time then stays its frame's capture), IP length, frame index.
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

/// The call's receiving end: notes each media packet's arrival and reports every
/// feedback interval.
#[derive(Debug, Clone)]
pub struct MediaReceiver {
    pub feedback: FeedbackReceiver,
    interval: Nanos,
    next_feedback: Nanos,
}

impl MediaReceiver {
    pub fn new(cfg: &MediaConfig) -> Self {
        MediaReceiver {
            feedback: FeedbackReceiver::default(),
            interval: cfg.feedback_interval_ns,
            next_feedback: cfg.start_ns + cfg.feedback_interval_ns,
        }
    }

    /// When the receiver next sends feedback.
    pub fn next_feedback_at(&self) -> Nanos {
        self.next_feedback
    }

    /// The feedback timer fired at `now`: the report and the first sequence number it
    /// covers, if there is anything to report. The timer keeps its period (as a
    /// periodic timer does): the next is an interval after this one was due, not after
    /// `now`, so a real clock's late wake-ups do not drift it; one missed altogether
    /// (a wake-up later than an interval) is skipped.
    pub fn make_report(&mut self, now: Nanos) -> Option<(u64, Report)> {
        while self.next_feedback <= now {
            self.next_feedback += self.interval;
        }
        self.feedback.report(now)
    }
}

/// Both ends of a call as the simulator holds them: the reports travel as packets that
/// carry only their sequence number, the report itself waiting here.
#[derive(Debug, Clone)]
pub struct VideoCall {
    pub sender: MediaSender,
    pub receiver: MediaReceiver,
    /// Reports on their way back, by feedback sequence number: (when made, first
    /// media sequence number, report).
    reports: Vec<Option<(Nanos, u64, Report)>>,
}

impl VideoCall {
    /// Call `index` of the scenario (its encoder's draws a stream of their own).
    pub fn new(cfg: &MediaConfig, seed: u64, rtt_ns: Nanos, index: usize) -> Self {
        VideoCall {
            sender: MediaSender::new_call(cfg, seed, rtt_ns, index),
            receiver: MediaReceiver::new(cfg),
            reports: Vec::new(),
        }
    }

    pub fn cfg(&self) -> &MediaConfig {
        &self.sender.cfg
    }

    pub fn records(&self) -> &MediaRecords {
        &self.sender.records
    }

    /// When the next frame is captured.
    pub fn next_frame_at(&self) -> Nanos {
        self.sender.next_frame_at()
    }

    /// When the receiver next sends feedback.
    pub fn next_feedback_at(&self) -> Nanos {
        self.receiver.next_feedback_at()
    }

    /// Encodes the frame due now and records its packets; returns the sequence numbers
    /// of those to send now (their lengths are in `records().lens`): all of them, or
    /// under SCReAM those its window lets out of the RTP queue.
    pub fn send_frame(&mut self, now: Nanos) -> std::ops::Range<u64> {
        self.sender.send_frame(now)
    }

    pub fn on_media_arrival(&mut self, now: Nanos, seq: u64, ecn: u8) {
        self.sender.records.arrived[seq as usize] = now;
        self.receiver.feedback.on_packet(seq, now, ecn);
    }

    pub fn on_media_drop(&mut self, seq: u64, on_wire: bool) {
        self.sender.records.arrived[seq as usize] = if on_wire { LOST_ON_WIRE } else { DROPPED };
    }

    /// The receiver's feedback timer: the report's sequence number and IP length, if
    /// there is anything to report; the next timer is set.
    pub fn make_feedback(&mut self, now: Nanos) -> Option<(u64, u32)> {
        let (first, report) = self.receiver.make_report(now)?;
        let seq = self.reports.len() as u64;
        let bytes = report.wire_bytes();
        self.reports.push(Some((now, first, report)));
        self.sender.records.feedback_sent += 1;
        Some((seq, bytes))
    }

    pub fn on_feedback_drop(&mut self, seq: u64) {
        self.reports[seq as usize] = None;
        self.sender.records.feedback_lost += 1;
    }

    /// Report `seq` reached the sender at `now`. Returns the packets SCReAM's window
    /// now lets out of its RTP queue (none for the others).
    pub fn on_feedback(&mut self, now: Nanos, seq: u64) -> std::ops::Range<u64> {
        match self.reports[seq as usize].take() {
            Some((made, first, report)) => self.sender.on_report(now, made, first, &report),
            None => 0..0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Due at 50, 100, 150 ms...: fired 3 ms late at 103 ms, the next is still due at
    /// 150 ms; fired at 262 ms (200 ms missed), the next is due at 300 ms.
    #[test]
    fn the_feedback_timer_keeps_its_period() {
        let ms = 1_000_000;
        let mut r = MediaReceiver::new(&MediaConfig::default());
        assert_eq!(r.next_feedback_at(), 50 * ms);
        r.make_report(50 * ms);
        assert_eq!(r.next_feedback_at(), 100 * ms);
        r.make_report(103 * ms);
        assert_eq!(r.next_feedback_at(), 150 * ms);
        r.make_report(262 * ms);
        assert_eq!(r.next_feedback_at(), 300 * ms);
    }

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
            (
                bad(&|c| c.start_rate_bps = 5_000_000),
                "media.start_rate_bps",
            ),
            (bad(&|c| c.start_rate_bps = 100_000), "media.start_rate_bps"),
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
