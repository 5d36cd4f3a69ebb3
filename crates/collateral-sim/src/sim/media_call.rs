//! The scenario's video call ([`crate::media`]) inside a simulation: the sender's
//! frames leave from host 1 of the video's side, the receiver's RFC 8888 feedback from
//! host 1 of the other side, both as UDP packets through the bottleneck (so the reverse
//! direction's queue delays and drops the feedback, as it would RTCP). The media stream
//! is flow `base`, its feedback flow `base + 1` (after the TCP and CBR flows).
//!
//! Host 1's other shortcuts (CBR packets fed through the links' side ingress, taken as
//! they enter the delay line, drop-tail links taking packets as they are sent) assume
//! that host sends nothing by events; a call does, so a scenario with one runs without
//! them.

use collateral_queue::{Packet, PacketKind};

use super::Simulation;
use crate::engine::{Events, Wake};
use crate::media::summary::{media_summary, MediaSummary, MediaTrace};
use crate::media::VideoCall;
use crate::metrics::TcpSummary;
use crate::scenario::Scenario;

/// The call and its flow ids.
pub(super) struct MediaState {
    pub call: Option<VideoCall>,
    /// Flow id of the media stream; its feedback's is the next.
    pub base: u32,
}

const FRAME: u32 = 0;
const FEEDBACK: u32 = 1;

impl MediaState {
    /// The scenario's call, its first frame and feedback timer scheduled.
    pub fn new(sc: &Scenario, base: u32, events: &mut Events) -> Self {
        let call = sc.media.as_ref().map(|cfg| {
            let c = VideoCall::new(cfg, sc.seed, sc.rtt_ns);
            for (t, w) in [(c.next_frame_at(), FRAME), (c.next_feedback_at(), FEEDBACK)] {
                if t < sc.duration_ns {
                    events.schedule(t, Wake::Media(w));
                }
            }
            c
        });
        MediaState { call, base }
    }

    /// Whether `flow` is the call's (media or feedback).
    #[inline]
    pub fn owns(&self, flow: u32) -> bool {
        self.call.is_some() && (flow == self.base || flow == self.base + 1)
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
    /// A frame is due (`which` = 0) or the receiver's feedback timer fired (1).
    pub(super) fn media_wake(&mut self, which: u32) {
        let now = self.now;
        let end = self.sc.duration_ns;
        let base = self.media.base;
        let Some(c) = self.media.call.as_mut() else {
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
            self.events.schedule(next, Wake::Media(which));
        }
        self.out = out;
        self.flush(d, 1);
    }

    /// A packet of the call reached its host.
    #[inline]
    pub(super) fn media_receive(&mut self, pkt: &Packet) {
        let now = self.now;
        if let Some(c) = self.media.call.as_mut() {
            if pkt.flow == self.media.base {
                c.on_media_arrival(now, pkt.seq, pkt.tos & 3);
            } else {
                // SCReAM's window may let queued packets go.
                let seqs = c.on_feedback(now, pkt.seq);
                if !seqs.is_empty() {
                    let dir = c.cfg().direction;
                    let mut out = std::mem::take(&mut self.out);
                    media_packets(c, seqs, self.media.base, now, &mut out);
                    self.out = out;
                    self.flush(dir, 1);
                }
            }
        }
    }

    /// A packet of the call was dropped (by a queue, or on the wire).
    pub(super) fn media_drop(&mut self, pkt: &Packet, on_wire: bool) {
        if let Some(c) = self.media.call.as_mut() {
            if pkt.flow == self.media.base {
                c.on_media_drop(pkt.seq, on_wire);
            } else {
                c.on_feedback_drop(pkt.seq);
            }
        }
    }

    /// The call's summary and trace (none without a call).
    pub(super) fn media_summaries(
        &self,
        tcp: &[TcpSummary],
        trace: &mut MediaTrace,
    ) -> Vec<MediaSummary> {
        let Some(c) = &self.media.call else {
            return Vec::new();
        };
        let tcp_bps = crate::metrics::goodput_of(tcp, c.cfg().direction.name());
        vec![media_summary(
            &self.sc,
            self.media.base,
            c.records(),
            tcp_bps,
            Some(trace),
        )]
    }

    /// Bytes the call's records hold (for the trial's memory budget).
    pub(super) fn media_record_bytes(&self) -> u64 {
        self.media.call.as_ref().map_or(0, |c| {
            let r = c.records();
            r.sent.len() as u64 * 24 + r.frames.len() as u64 * 20
        })
    }
}
