//! RFC 8868's evaluation criteria for a trial's calls, beside what [`super::summary`]
//! measures of each alone: the media rate against the capacity available to it (RFC
//! 8868 §4.1's utilisation), its share among the calls and Jain's fairness index over
//! them (§4.1, fairness), how long a call takes to reach its share of the capacity
//! after it starts and to come under it after the capacity falls (§4.1, convergence
//! and reaction to a decrease, RFC 8867 §5.1's "adapt to the decrease"), and the
//! instability of its rate (§4.1, the coefficient of variation over time).
//!
//! The capacity of a direction is what its link can deliver: a delivery trace's
//! opportunities counted (1504 B each, [`crate::clock`]), otherwise the line rate
//! (a DOCSIS or satellite link's nominal rate; outages not taken off). A call's fair
//! share at a time is min(its encoder's ceiling, the capacity / the calls of its
//! direction that have started); TCP flows beside it are not counted in it, so a call
//! that yields to TCP does not converge by this measure (NaN), as RFC 8867 §5.6
//! expects of a call that cannot hold its share against a loss-based flow.

use serde::Serialize;

use super::summary::{media_summary, MediaSummary, MediaTrace};
use super::{MediaConfig, MediaRecords};
use crate::clock::OPPORTUNITY_BYTES;
use crate::scenario::{LinkConfig, Scenario};
use crate::units::{Direction, Nanos};

/// A call has converged once a bin's received rate is this share of its fair share.
pub const CONVERGED: f64 = 0.8;
/// A capacity change between bins larger than this share of the earlier is a step.
pub const STEP: f64 = 0.2;
/// A call has adapted to a fall once a bin's sending rate is at most this times its new
/// fair share: a self-clocked sender (SCReAM) sends at the capacity itself, a bin's
/// count of packets a few per cent either side of it.
pub const ADAPTED: f64 = 1.1;

/// The criteria of one call (flattened into its [`MediaSummary`]).
#[derive(Debug, Clone, Serialize)]
pub struct Criteria {
    /// Mean capacity of the call's direction after the warm-up.
    pub capacity_bps: f64,
    /// received_bps / capacity_bps.
    pub utilisation: f64,
    /// received_bps / the received rate of all calls of its direction.
    pub call_share: f64,
    /// Jain's index over the received rates of the calls of its direction.
    pub jain_index: f64,
    /// From the call's start to the end of the first bin whose received rate is
    /// [`CONVERGED`] of its fair share, a share above zero (NaN: never).
    pub convergence_s: f64,
    /// The longest, over the capacity's falls after the call's start, from the fall to
    /// the end of the first bin whose sending rate is at most [`ADAPTED`] times the new
    /// fair share (the rest of the step where it never is; NaN: no fall).
    pub adapt_down_s: f64,
    /// Standard deviation / mean of the received rate over the whole bins after the
    /// warm-up and the call's start.
    pub rate_cov: f64,
}

impl Default for Criteria {
    fn default() -> Self {
        Criteria {
            capacity_bps: f64::NAN,
            utilisation: f64::NAN,
            call_share: f64::NAN,
            jain_index: f64::NAN,
            convergence_s: f64::NAN,
            adapt_down_s: f64::NAN,
            rate_cov: f64::NAN,
        }
    }
}

/// Jain's fairness index (Σx)² / (n Σx²): 1 when all are equal, 1/n when one takes
/// all; NaN for none or all zero.
pub fn jain(x: &[f64]) -> f64 {
    let (s, s2) = x.iter().fold((0.0, 0.0), |(s, s2), v| (s + v, s2 + v * v));
    if x.is_empty() || s2 == 0.0 {
        return f64::NAN;
    }
    s * s / (x.len() as f64 * s2)
}

/// Bits the link can deliver in `[a, b)`.
pub fn capacity_bits(link: &LinkConfig, a: Nanos, b: Nanos) -> f64 {
    let Some(tr) = &link.trace else {
        return link.rate_bps as f64 * b.saturating_sub(a) as f64 / 1e9;
    };
    const MS: Nanos = 1_000_000;
    let period = tr.ms.last().copied().unwrap_or(0).max(1) * MS;
    let mut n = 0u64;
    let mut round = a / period;
    while round * period < b && !(tr.once && round > 0) {
        let base = round * period;
        let lo = tr.ms.partition_point(|&m| base + m * MS < a);
        let hi = tr.ms.partition_point(|&m| base + m * MS < b);
        n += (hi - lo) as u64;
        round += 1;
    }
    n as f64 * OPPORTUNITY_BYTES as f64 * 8.0
}

/// One call of a trial: its flow id, configuration and records.
pub struct Call<'a> {
    pub flow: u32,
    pub cfg: &'a MediaConfig,
    pub rec: &'a MediaRecords,
}

/// The calls' summaries with their criteria; `tcp_bps(d)`: the TCP goodput of
/// direction `d`. `trace` gets each call's bins, the calls one after the other in
/// their order (each `duration / bin_ns` rows, rounded up).
pub fn media_summaries(
    sc: &Scenario,
    calls: &[Call],
    tcp_bps: impl Fn(Direction) -> f64,
    trace: Option<&mut MediaTrace>,
) -> Vec<MediaSummary> {
    let mut traces = vec![MediaTrace::default(); calls.len()];
    let mut out: Vec<MediaSummary> = calls
        .iter()
        .zip(&mut traces)
        .map(|(c, tr)| {
            let d = c.cfg.direction;
            media_summary(sc, c.cfg, c.flow, c.rec, tcp_bps(d), Some(tr))
        })
        .collect();
    for d in [Direction::Down, Direction::Up] {
        let of_d: Vec<usize> = (0..calls.len())
            .filter(|&k| calls[k].cfg.direction == d)
            .collect();
        if of_d.is_empty() {
            continue;
        }
        let link = sc.link(d);
        let bins = &traces[of_d[0]].time;
        let cap: Vec<f64> = bins
            .iter()
            .map(|&t0| {
                let t1 = (t0 + sc.bin_ns).min(sc.duration_ns);
                capacity_bits(link, t0, t1) / ((t1 - t0) as f64 / 1e9)
            })
            .collect();
        let secs = sc.duration_ns.saturating_sub(sc.warmup_ns) as f64 / 1e9;
        let capacity = capacity_bits(link, sc.warmup_ns, sc.duration_ns) / secs;
        let rates: Vec<f64> = of_d.iter().map(|&k| out[k].received_bps).collect();
        let all: f64 = rates.iter().sum();
        let fairness = jain(&rates);
        for &k in &of_d {
            // The calls of this direction started by each bin's start.
            let fair: Vec<f64> = bins
                .iter()
                .zip(&cap)
                .map(|(&t0, &c)| {
                    let n = of_d
                        .iter()
                        .filter(|&&j| calls[j].cfg.start_ns <= t0)
                        .count();
                    (c / n.max(1) as f64).min(calls[k].cfg.max_rate_bps as f64)
                })
                .collect();
            let s = &mut out[k];
            s.criteria = Criteria {
                capacity_bps: capacity,
                utilisation: s.received_bps / capacity,
                call_share: s.received_bps / all,
                jain_index: fairness,
                convergence_s: convergence(sc, calls[k].cfg.start_ns, &traces[k], &fair),
                adapt_down_s: adapt_down(sc, calls[k].cfg.start_ns, &traces[k], &cap, &fair),
                rate_cov: rate_cov(sc, calls[k].cfg.start_ns, &traces[k]),
            };
        }
    }
    if let Some(t) = trace {
        for tr in traces {
            t.flow.extend(tr.flow);
            t.time.extend(tr.time);
            t.target_bps.extend(tr.target_bps);
            t.sent_bps.extend(tr.sent_bps);
            t.received_bps.extend(tr.received_bps);
        }
    }
    out
}

fn convergence(sc: &Scenario, start: Nanos, tr: &MediaTrace, fair: &[f64]) -> f64 {
    (0..tr.time.len())
        // A bin without capacity (a cellular trace's outage) has no share to reach.
        .find(|&b| {
            tr.time[b] >= start && fair[b] > 0.0 && tr.received_bps[b] >= CONVERGED * fair[b]
        })
        .map_or(f64::NAN, |b| {
            let end = (tr.time[b] + sc.bin_ns).min(sc.duration_ns);
            (end - start) as f64 / 1e9
        })
}

fn adapt_down(sc: &Scenario, start: Nanos, tr: &MediaTrace, cap: &[f64], fair: &[f64]) -> f64 {
    let step = |b: usize| b > 0 && (cap[b] - cap[b - 1]).abs() > STEP * cap[b - 1];
    let mut worst = f64::NAN;
    for b in 1..cap.len() {
        if tr.time[b] < start || !step(b) || cap[b] >= cap[b - 1] {
            continue;
        }
        let seg_end = (b + 1..cap.len()).find(|&j| step(j)).unwrap_or(cap.len());
        let done = (b..seg_end).find(|&j| tr.sent_bps[j] <= ADAPTED * fair[j]);
        let end = done.map_or_else(
            || tr.time.get(seg_end).copied().unwrap_or(sc.duration_ns),
            |j| (tr.time[j] + sc.bin_ns).min(sc.duration_ns),
        );
        let took = (end - tr.time[b]) as f64 / 1e9;
        worst = if worst.is_nan() {
            took
        } else {
            worst.max(took)
        };
    }
    worst
}

fn rate_cov(sc: &Scenario, start: Nanos, tr: &MediaTrace) -> f64 {
    let from = sc.warmup_ns.max(start);
    let v: Vec<f64> = (0..tr.time.len())
        .filter(|&b| tr.time[b] >= from && tr.time[b] + sc.bin_ns <= sc.duration_ns)
        .map(|b| tr.received_bps[b])
        .collect();
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    if v.len() < 2 || mean == 0.0 {
        return f64::NAN;
    }
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n;
    var.sqrt() / mean
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::DeliveryTrace;
    use crate::media::MediaConfig;

    /// 1 and 3: (4)² / (2 · 10) = 0.8; equal rates 1; one of four takes all: 1/4.
    #[test]
    fn jain_by_hand() {
        assert_eq!(jain(&[1.0, 3.0]), 0.8);
        assert_eq!(jain(&[2.0, 2.0, 2.0]), 1.0);
        assert_eq!(jain(&[5.0, 0.0, 0.0, 0.0]), 0.25);
        assert!(jain(&[]).is_nan() && jain(&[0.0, 0.0]).is_nan());
    }

    /// A trace of one opportunity at 1 and 2 ms of a 4 ms period: in [0, 10 ms) the
    /// opportunities at 1, 2, 5, 6, 9 ms: 5 · 1504 · 8 bits; [3, 5) ms has none.
    #[test]
    fn a_trace_capacity_counts_its_opportunities() {
        let mut link = Scenario::builder().build().down;
        link.trace = Some(DeliveryTrace {
            ms: vec![1, 2, 4],
            once: false,
        });
        let ms = 1_000_000;
        // Period 4 ms: opportunities at 1, 2, 4, 5, 6, 8, 9 ms within [0, 10).
        assert_eq!(capacity_bits(&link, 0, 10 * ms), 7.0 * 1504.0 * 8.0);
        assert_eq!(capacity_bits(&link, 3 * ms, 4 * ms), 0.0);
        link.trace = None;
        link.rate_bps = 2_000_000;
        assert_eq!(capacity_bits(&link, 0, 500 * ms), 1_000_000.0);
    }

    /// Two calls down a 1 Mbit/s link in 1 s bins over 4 s: call 0 from 0 s sends
    /// 0.3, 0.45, 0.5, 0.5 Mbit/s; call 1 from 1 s 0, 0.2, 0.5, 0.5 (received =
    /// sent). Fair shares: 1 Mbit/s capped at the 0.6 Mbit/s ceiling in bin 0, then
    /// 0.5. Call 0 reaches 0.8 · 0.5 in bin 1: converged 2 s after its start; call 1 in
    /// bin 2: 2 s after its start at 1 s. Means 0.4375 and 0.3 Mbit/s over 4 s: Jain
    /// 0.7375² / (2 · (0.4375² + 0.3²)) = 0.9701...; shares 0.593 and 0.407.
    #[test]
    fn two_calls_by_hand() {
        let mut sc = Scenario::builder().build();
        sc.down.rate_bps = 1_000_000;
        sc.duration_ns = 4_000_000_000;
        sc.warmup_ns = 0;
        sc.bin_ns = 1_000_000_000;
        let s = 1_000_000_000;
        let call = |start| MediaConfig {
            start_ns: start,
            max_rate_bps: 600_000,
            ..Default::default()
        };
        sc.media = vec![call(0), call(s)];
        // One 1250-byte packet = 10 kbit: n packets a second = n · 10 kbit/s.
        let (r0, r1) = (
            records(&[30, 45, 50, 50], 500_000.0),
            records(&[0, 20, 50, 50], 500_000.0),
        );
        let calls = [
            Call {
                flow: 5,
                cfg: &sc.media[0],
                rec: &r0,
            },
            Call {
                flow: 7,
                cfg: &sc.media[1],
                rec: &r1,
            },
        ];
        let mut tr = MediaTrace::default();
        let out = media_summaries(&sc, &calls, |_| 0.0, Some(&mut tr));
        let (a, b) = (&out[0].criteria, &out[1].criteria);
        assert_eq!(a.capacity_bps, 1_000_000.0);
        assert!((out[0].received_bps - 437_500.0).abs() < 1e-6);
        assert!((a.utilisation - 0.4375).abs() < 1e-12);
        assert_eq!(a.convergence_s, 2.0);
        assert_eq!(b.convergence_s, 2.0);
        let j = 0.7375f64.powi(2) / (2.0 * (0.4375f64.powi(2) + 0.3f64.powi(2)));
        assert!((a.jain_index - j).abs() < 1e-12 && a.jain_index == b.jain_index);
        assert!((a.call_share - 0.4375 / 0.7375).abs() < 1e-12);
        assert!(a.adapt_down_s.is_nan(), "no fall of the capacity");
        // Call 0's bins 0.3, 0.45, 0.5, 0.5: mean 0.4375, sd sqrt(0.0061.../4).
        let v = [0.3f64, 0.45, 0.5, 0.5];
        let sd = (v.iter().map(|x| (x - 0.4375).powi(2)).sum::<f64>() / 4.0).sqrt();
        assert!((a.rate_cov - sd / 0.4375).abs() < 1e-9);
        assert_eq!(tr.time.len(), 8, "the calls' bins one after the other");
        assert_eq!(tr.time[4], 0);
    }

    /// A call's records when it sends `per_s[b]` packets of 1250 B (10 kbit), evenly
    /// spread, in second `b`, each arriving 1 ns after it is sent, aiming at `target`.
    fn records(per_s: &[u64], target: f64) -> MediaRecords {
        let s = 1_000_000_000;
        let mut r = MediaRecords::default();
        for (b, &n) in per_s.iter().enumerate() {
            for i in 0..n {
                let at = b as u64 * s + i * (s / n);
                r.frames.push((at, r.sent.len() as u64, 1));
                r.frame.push(r.frames.len() as u32 - 1);
                r.sent.push(at);
                r.arrived.push(at + 1);
                r.lens.push(1250);
            }
        }
        r.target = vec![(0, target)];
        r
    }

    /// The summary of `sc`'s one call sending as [`records`] (target 1 Mbit/s).
    fn lone_call(sc: &Scenario, per_s: &[u64]) -> Vec<MediaSummary> {
        let r = records(per_s, 1_000_000.0);
        let calls = [Call {
            flow: 0,
            cfg: &sc.media[0],
            rec: &r,
        }];
        media_summaries(sc, &calls, |_| 0.0, None)
    }

    /// A downstream of the delivery trace `ms` (played once) for `duration_ms`, bins of
    /// 1 s from 0, no warm-up, and one call with a 2 Mbit/s ceiling.
    fn traced(ms: Vec<u64>, duration_ms: u64) -> Scenario {
        let mut sc = Scenario::builder().build();
        sc.down.trace = Some(DeliveryTrace { ms, once: true });
        sc.duration_ns = duration_ms * 1_000_000;
        sc.warmup_ns = 0;
        sc.bin_ns = 1_000_000_000;
        sc.media = vec![MediaConfig {
            max_rate_bps: 2_000_000,
            ..Default::default()
        }];
        sc
    }

    /// A trace with no opportunity for its first 2 s (an outage), then 1.2 Mbit/s (one
    /// every 10 ms); a lone call (ceiling 2 Mbit/s) receiving nothing, then 1 Mbit/s:
    /// the empty bins have no share to reach, so it converges at the end of bin 2, 3 s.
    #[test]
    fn an_outage_is_not_convergence() {
        let sc = traced((2010..=4000).step_by(10).collect(), 4000);
        // 1 Mbit/s (100 packets of 1250 B a second) from 2 s.
        let c = &lone_call(&sc, &[0u64, 0, 100, 100])[0].criteria;
        // Bin 2's share: 1.2032 Mbit/s; 1 Mbit/s received is over 0.8 of it.
        assert_eq!(c.convergence_s, 3.0);
    }

    /// A trace whose capacity falls from 2.4 to 0.6 Mbit/s at 2 s (bins of 1 s over
    /// 5 s); a lone call sending 1.5 Mbit/s until 3 s and 0.5 after: its fair share
    /// after the fall is the capacity (its ceiling is 2 Mbit/s), 0.61 Mbit/s, which it
    /// first meets (within 10 %: 0.67) in the bin 3-4 s: 2 s after the fall.
    #[test]
    fn adapt_down_by_hand() {
        // Capacity 2.4064 Mbit/s (two opportunities every 10 ms) for 2 s, then
        // 0.6016 Mbit/s (one every 20 ms) from 2 s.
        let mut t = Vec::new();
        for m in (10..=2000).step_by(10) {
            t.extend([m, m]);
        }
        t.extend((2020..=5000).step_by(20));
        let sc = traced(t, 5000);
        // 1.5 Mbit/s (150 packets of 1250 B a second) for 3 s, then 0.5 Mbit/s.
        let c = &lone_call(&sc, &[150u64, 150, 150, 50, 50])[0].criteria;
        // The fall at 2 s; bin 2 (2-3 s) still sends 1.5 > 0.6016; bin 3 sends 0.5:
        // under at the end of bin 3, 4 s: 2 s after the fall.
        assert_eq!(c.adapt_down_s, 2.0);
        // Capacity over 5 s: 400 + 149 opportunities (the one at 5 s is past the end).
        assert!((c.capacity_bps - 549.0 * 1504.0 * 8.0 / 5.0).abs() < 1e-6);
    }
}
