//! What is measured of a video call, from its records (RFC 8868's criteria in small):
//! the media's sending and receiving rates and the controller's target, the frame
//! delay from capture to the arrival of the frame's last packet, the share of frames
//! that miss their playout deadline, and the media's share of its direction beside
//! the TCP flows'. What compares the calls with the capacity and with each other
//! (RFC 8868's utilisation, fairness, convergence) is [`super::criteria`]'s.

use collateral_queue::Nanos;
use serde::Serialize;

use super::DISCARDED;
use super::{MediaConfig, MediaRecords};
use crate::measure::ratio;
use crate::metrics::quantile;
use crate::scenario::Scenario;
use crate::traffic::{DROPPED, LOST_ON_WIRE};

#[derive(Debug, Clone, Serialize)]
pub struct MediaSummary {
    pub flow: u32,
    pub direction: &'static str,
    /// The controller (a label, as a TCP flow's `cc`).
    pub cc: &'static str,
    /// Media bytes (IP) sent, and received, after the warm-up per second.
    pub sent_bps: f64,
    pub received_bps: f64,
    /// The controller's target, averaged over time after the warm-up.
    pub target_mean_bps: f64,
    pub loss_rate: f64,
    /// Share of the packets made that the sender discarded, never sent ([`DISCARDED`]).
    pub discarded: f64,
    /// Frames captured after the warm-up whose fate is known (complete or not).
    pub frames: u64,
    /// Share of them with a packet lost.
    pub frames_incomplete: f64,
    /// Capture to the arrival of the last packet, complete frames.
    pub frame_delay_p50_s: f64,
    pub frame_delay_p95_s: f64,
    pub frame_delay_p99_s: f64,
    /// Share of frames later than the playout deadline, incomplete ones included.
    pub frames_late: f64,
    /// received / (received + the TCP goodput of the same direction).
    pub rate_share: f64,
    pub feedback_sent: u64,
    pub feedback_lost: u64,
    /// RFC 8868's criteria, from [`super::criteria`] (NaN until it fills them).
    #[serde(flatten)]
    pub criteria: super::criteria::Criteria,
}

/// The call over time, a row per bin of the scenario's `bin_ns`.
#[derive(Debug, Clone, Default)]
pub struct MediaTrace {
    /// The call's media flow id (its summary's `flow`): which call a row is of.
    pub flow: Vec<u32>,
    pub time: Vec<Nanos>,
    pub target_bps: Vec<f64>,
    pub sent_bps: Vec<f64>,
    pub received_bps: Vec<f64>,
}

/// The time-weighted mean of the step function `steps` (time, value; sorted, the
/// first at or before `a`) over `[a, b)`.
fn step_mean(steps: &[(Nanos, f64)], a: Nanos, b: Nanos) -> f64 {
    if b <= a || steps.is_empty() {
        return f64::NAN;
    }
    let mut sum = 0.0;
    for (k, &(t, v)) in steps.iter().enumerate() {
        let end = steps.get(k + 1).map_or(b, |n| n.0).min(b);
        let start = t.max(a);
        if end > start {
            sum += v * (end - start) as f64;
        }
    }
    sum / (b - a) as f64
}

/// The summary of the call `cfg` of `sc`; `tcp_bps`: the goodput of the TCP flows of
/// its direction.
pub fn media_summary(
    sc: &Scenario,
    cfg: &MediaConfig,
    flow: u32,
    rec: &MediaRecords,
    tcp_bps: f64,
    trace: Option<&mut MediaTrace>,
) -> MediaSummary {
    let (from, end) = (sc.warmup_ns, sc.duration_ns);
    let secs = (end - from) as f64 / 1e9;
    let arrived = |a: Nanos| a <= end;
    let lost = |a: Nanos| (LOST_ON_WIRE..=DROPPED).contains(&a);
    let (mut sent_b, mut recv_b, mut lost_n, mut done_n) = (0u64, 0u64, 0u64, 0u64);
    let (mut made, mut discarded) = (0u64, 0u64);
    for (i, (&s, &a)) in rec.sent.iter().zip(&rec.arrived).enumerate() {
        if s < from {
            continue;
        }
        made += 1;
        // Never sent: neither the sending rate's nor the network's loss.
        if a == DISCARDED {
            discarded += 1;
            continue;
        }
        sent_b += rec.lens[i] as u64;
        if arrived(a) {
            recv_b += rec.lens[i] as u64;
            done_n += 1;
        } else if lost(a) {
            lost_n += 1;
            done_n += 1;
        }
    }
    let mut delays = Vec::with_capacity(rec.frames.len());
    let (mut incomplete, mut late) = (0u64, 0u64);
    for &(cap, first, n) in &rec.frames {
        if cap < from {
            continue;
        }
        let pk = first as usize..(first + n as u64) as usize;
        // A packet the sender discarded is missing from the frame as a lost one is.
        if rec.arrived[pk.clone()]
            .iter()
            .any(|&a| lost(a) || a == DISCARDED)
        {
            incomplete += 1;
            continue;
        }
        if !rec.arrived[pk.clone()].iter().all(|&a| arrived(a)) {
            continue; // in flight at the end
        }
        let last = rec.arrived[pk].iter().copied().max().unwrap_or(cap);
        let d = (last - cap) as f64 / 1e9;
        late += (d > cfg.playout_ns as f64 / 1e9) as u64;
        delays.push(d);
    }
    delays.sort_unstable_by(f64::total_cmp);
    let frames = delays.len() as u64 + incomplete;
    let received_bps = recv_b as f64 * 8.0 / secs;
    if let Some(tr) = trace {
        let bins = end.div_ceil(sc.bin_ns) as usize;
        let mut sent = vec![0u64; bins];
        let mut recv = vec![0u64; bins];
        for (i, (&s, &a)) in rec.sent.iter().zip(&rec.arrived).enumerate() {
            if a == DISCARDED {
                continue;
            }
            sent[((s / sc.bin_ns) as usize).min(bins - 1)] += rec.lens[i] as u64;
            if arrived(a) {
                recv[((a / sc.bin_ns) as usize).min(bins - 1)] += rec.lens[i] as u64;
            }
        }
        for b in 0..bins {
            let t0 = b as Nanos * sc.bin_ns;
            let t1 = (t0 + sc.bin_ns).min(end);
            let w = (t1 - t0) as f64 / 1e9;
            tr.flow.push(flow);
            tr.time.push(t0);
            tr.target_bps.push(step_mean(&rec.target, t0, t1));
            tr.sent_bps.push(sent[b] as f64 * 8.0 / w);
            tr.received_bps.push(recv[b] as f64 * 8.0 / w);
        }
    }
    MediaSummary {
        flow,
        direction: cfg.direction.name(),
        cc: cfg.controller.name(),
        sent_bps: sent_b as f64 * 8.0 / secs,
        received_bps,
        target_mean_bps: step_mean(&rec.target, from, end),
        loss_rate: ratio(lost_n as f64, done_n as f64),
        discarded: ratio(discarded as f64, made as f64),
        frames,
        frames_incomplete: ratio(incomplete as f64, frames as f64),
        frame_delay_p50_s: quantile(&delays, 0.5),
        frame_delay_p95_s: quantile(&delays, 0.95),
        frame_delay_p99_s: quantile(&delays, 0.99),
        frames_late: ratio((late + incomplete) as f64, frames as f64),
        rate_share: ratio(received_bps, received_bps + tcp_bps),
        feedback_sent: rec.feedback_sent,
        feedback_lost: rec.feedback_lost,
        criteria: super::criteria::Criteria::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::traffic::IN_FLIGHT;

    /// Four frames at 0, 100, 200, 300 ms of a 1 s run without warm-up, 150 ms
    /// deadline: one of two packets arriving 40 and 60 ms after capture (delay 60 ms);
    /// one at 200 ms (late); one with a packet dropped (incomplete); one still in flight.
    /// Delays 0.06 and 0.2: p50 0.13; 2 of 3 frames late; 1000-byte packets: 7 sent,
    /// 5 received in 1 s = 40 kbit/s, 1 of the 6 with a known fate lost; TCP
    /// 120 kbit/s: share 0.25.
    /// The same frames with a fifth at 400 ms whose one packet the sender discarded
    /// (SCReAM's RTP queue): an incomplete frame (2 of 4), one packet of 8 discarded, and
    /// no change to the rate sent (never sent) nor to the loss (not the network's).
    #[test]
    fn a_discarded_packet_is_neither_sent_nor_lost() {
        let (sc, mut rec) = by_hand();
        rec.sent.push(400 * MS);
        rec.arrived.push(DISCARDED);
        rec.lens.push(1000);
        rec.frame.push(4);
        rec.frames.push((400 * MS, 7, 1));
        let s = media_summary(&sc, &sc.media[0], 3, &rec, 120_000.0, None);
        assert_eq!((s.frames, s.frames_incomplete), (4, 0.5));
        assert_eq!(s.discarded, 1.0 / 8.0);
        assert_eq!((s.sent_bps, s.loss_rate), (56_000.0, 1.0 / 6.0));
    }

    const MS: Nanos = 1_000_000;

    fn by_hand() -> (Scenario, MediaRecords) {
        let mut sc = Scenario::builder().build();
        sc.duration_ns = 1_000_000_000;
        sc.warmup_ns = 0;
        sc.bin_ns = 500_000_000;
        sc.media = vec![MediaConfig::default()];
        let ms = MS;
        let rec = MediaRecords {
            sent: vec![0, 0, 100 * ms, 200 * ms, 200 * ms, 300 * ms, 300 * ms],
            arrived: vec![
                40 * ms,
                60 * ms,
                300 * ms,
                210 * ms,
                DROPPED,
                320 * ms,
                IN_FLIGHT,
            ],
            lens: vec![1000; 7],
            frame: vec![0, 0, 1, 2, 2, 3, 3],
            frames: vec![
                (0, 0, 2),
                (100 * ms, 2, 1),
                (200 * ms, 3, 2),
                (300 * ms, 5, 2),
            ],
            target: vec![(0, 300_000.0), (500 * ms, 500_000.0)],
            feedback_sent: 9,
            feedback_lost: 1,
        };
        (sc, rec)
    }

    #[test]
    fn frame_delay_lateness_and_share_by_hand() {
        let (sc, rec) = by_hand();
        let mut tr = MediaTrace::default();
        let s = media_summary(&sc, &sc.media[0], 3, &rec, 120_000.0, Some(&mut tr));
        assert_eq!(s.frames, 3);
        assert!((s.frame_delay_p50_s - 0.13).abs() < 1e-12);
        assert!((s.frames_late - 2.0 / 3.0).abs() < 1e-12);
        assert!((s.frames_incomplete - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(s.sent_bps, 56_000.0);
        assert_eq!(s.received_bps, 40_000.0);
        assert_eq!(s.rate_share, 0.25);
        assert_eq!(s.loss_rate, 1.0 / 6.0);
        assert_eq!(s.target_mean_bps, 400_000.0);
        assert_eq!(tr.target_bps, [300_000.0, 500_000.0]);
        assert_eq!(tr.sent_bps, [112_000.0, 0.0]);
        assert_eq!(tr.received_bps, [80_000.0, 0.0]);
    }
}
