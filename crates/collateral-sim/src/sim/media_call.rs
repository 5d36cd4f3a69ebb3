//! The scenario's video calls ([`crate::media`]) inside a simulation: a sender's
//! frames leave from host 1 of the video's side, the receiver's RFC 8888 feedback from
//! host 1 of the other side, both as UDP packets through the bottleneck (so the reverse
//! direction's queue delays and drops the feedback, as it would RTCP). Call `k`'s media
//! stream is flow `base + 2k`, its feedback flow `base + 2k + 1` (after the TCP and CBR
//! flows); its wake-ups are `Wake::Media(2k)` (a frame) and `2k + 1` (feedback).
//!
//! Host 1's other shortcuts (CBR packets fed through the links' side ingress, taken as
//! they enter the delay line, drop-tail links taking packets as they are sent) assume
//! that host sends nothing by events; a call does, so a scenario with one runs without
//! them.

use collateral_queue::{Packet, PacketKind};

use super::Simulation;
use crate::engine::{Events, Wake};
use crate::media::criteria::{media_summaries, Call};
use crate::media::summary::{MediaSummary, MediaTrace};
use crate::media::VideoCall;
use crate::metrics::TcpSummary;
use crate::scenario::Scenario;

/// The calls and their flow ids.
pub(super) struct MediaState {
    pub calls: Vec<VideoCall>,
    /// Flow id of the first call's media stream.
    pub base: u32,
}

const FRAME: u32 = 0;
const FEEDBACK: u32 = 1;

impl MediaState {
    /// The scenario's calls, their first frames and feedback timers scheduled.
    pub fn new(sc: &Scenario, base: u32, events: &mut Events) -> Self {
        let calls = (sc.media.iter().enumerate())
            .map(|(k, cfg)| {
                let c = VideoCall::new(cfg, sc.seed, sc.rtt_ns, k);
                let w = 2 * k as u32;
                for (t, w) in [
                    (c.next_frame_at(), w + FRAME),
                    (c.next_feedback_at(), w + FEEDBACK),
                ] {
                    if t < sc.duration_ns {
                        events.schedule(t, Wake::Media(w));
                    }
                }
                c
            })
            .collect();
        MediaState { calls, base }
    }

    /// Whether `flow` is a call's (media or feedback).
    #[inline]
    pub fn owns(&self, flow: u32) -> bool {
        flow >= self.base && ((flow - self.base) as usize) < 2 * self.calls.len()
    }
}

/// The media packets `seqs` of the call, sent now.
fn media_packets(
    c: &VideoCall,
    seqs: std::ops::Range<u64>,
    base: u32,
    now: u64,
    out: &mut Vec<Packet>,
) {
    let tos = c.cfg().tag << 2 | c.cfg().ecn as u8;
    for seq in seqs {
        let len = c.records().lens[seq as usize];
        let mut p = Packet::new(PacketKind::Cbr, base, len, seq, now);
        p.tos = tos;
        out.push(p);
    }
}

impl Simulation {
    /// Call `wake / 2`'s frame is due (`wake` even) or its receiver's feedback timer
    /// fired (odd).
    pub(super) fn media_wake(&mut self, wake: u32) {
        let now = self.now;
        let end = self.sc.duration_ns;
        let (k, which) = (wake / 2, wake % 2);
        let base = self.media.base + 2 * k;
        let Some(c) = self.media.calls.get_mut(k as usize) else {
            return;
        };
        let tos = c.cfg().tag << 2 | c.cfg().ecn as u8;
        let dir = c.cfg().direction;
        let mut out = std::mem::take(&mut self.out);
        let (next, d) = if which == FRAME {
            let seqs = c.send_frame(now);
            media_packets(c, seqs, base, now, &mut out);
            (c.next_frame_at(), dir)
        } else {
            if let Some((seq, len)) = c.make_feedback(now) {
                let mut p = Packet::new(PacketKind::Cbr, base + 1, len, seq, now);
                p.tos = tos;
                out.push(p);
            }
            (c.next_feedback_at(), dir.reverse())
        };
        if next < end {
            self.events.schedule(next, Wake::Media(wake));
        }
        self.out = out;
        self.flush(d, 1);
    }

    /// A packet of a call reached its host.
    #[inline]
    pub(super) fn media_receive(&mut self, pkt: &Packet) {
        let now = self.now;
        let k = (pkt.flow - self.media.base) / 2;
        let base = self.media.base + 2 * k;
        if let Some(c) = self.media.calls.get_mut(k as usize) {
            if pkt.flow == base {
                c.on_media_arrival(now, pkt.seq, pkt.tos & 3);
            } else {
                // SCReAM's window may let queued packets go.
                let seqs = c.on_feedback(now, pkt.seq);
                if !seqs.is_empty() {
                    let dir = c.cfg().direction;
                    let mut out = std::mem::take(&mut self.out);
                    media_packets(c, seqs, base, now, &mut out);
                    self.out = out;
                    self.flush(dir, 1);
                }
            }
        }
    }

    /// A packet of a call was dropped (by a queue, or on the wire).
    pub(super) fn media_drop(&mut self, pkt: &Packet, on_wire: bool) {
        let k = (pkt.flow - self.media.base) / 2;
        if let Some(c) = self.media.calls.get_mut(k as usize) {
            if pkt.flow % 2 == self.media.base % 2 {
                c.on_media_drop(pkt.seq, on_wire);
            } else {
                c.on_feedback_drop(pkt.seq);
            }
        }
    }

    /// The calls' summaries (with RFC 8868's criteria) and trace (none without one).
    pub(super) fn media_summaries(
        &self,
        tcp: &[TcpSummary],
        trace: &mut MediaTrace,
    ) -> Vec<MediaSummary> {
        if self.media.calls.is_empty() {
            return Vec::new();
        }
        let calls: Vec<Call> = (self.media.calls.iter().enumerate())
            .map(|(k, c)| Call {
                flow: self.media.base + 2 * k as u32,
                cfg: c.cfg(),
                rec: c.records(),
            })
            .collect();
        let tcp_bps = |d: crate::units::Direction| crate::metrics::goodput_of(tcp, d.name());
        media_summaries(&self.sc, &calls, tcp_bps, Some(trace))
    }

    /// Bytes the calls' records hold (for the trial's memory budget).
    pub(super) fn media_record_bytes(&self) -> u64 {
        (self.media.calls.iter())
            .map(|c| {
                let r = c.records();
                r.sent.len() as u64 * 24 + r.frames.len() as u64 * 20
            })
            .sum()
    }
}
