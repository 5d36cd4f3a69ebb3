//! Quality of Outcome (draft-ietf-ippm-qoo): how well a network meets an application's
//! requirement, 0 to 100. A requirement gives latency as (percentile, value) pairs at
//! two levels, the Requirement for Optimal Performance (ROP, scores 100) and the
//! Critical Performance Unacceptable Point (CPUP, scores 0), mean loss at both levels,
//! and optionally a minimum throughput. Per percentile `i` the measured latency `ML`
//! scores `m_i = clamp(1 − (ML_i − ROP_i)/(CPUP_i − ROP_i), 0, 1)`; latency's QoO is
//! `100 · min_i m_i`, loss is scored alike, throughput is 0 or 100, and the QoO is the
//! least of the three.
//!
//! The draft leaves requirements to applications; [`PROFILES`] are ours, as data, from
//! the sources each names, all on round-trip time (what the probes measure).

use crate::metrics::quantile;

/// One latency level pair at a percentile (0–100), ms.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LatencyPoint {
    pub percentile: f64,
    pub rop_ms: f64,
    pub cpup_ms: f64,
}

/// An application's network requirement.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Requirement {
    pub name: &'static str,
    pub latency: &'static [LatencyPoint],
    /// Mean loss (fraction) at the optimal and the unacceptable level.
    pub loss_rop: f64,
    pub loss_cpup: f64,
    /// Minimum throughput, bit/s (none: not scored).
    pub min_throughput_bps: Option<f64>,
}

const fn lp(percentile: f64, rop_ms: f64, cpup_ms: f64) -> LatencyPoint {
    LatencyPoint {
        percentile,
        rop_ms,
        cpup_ms,
    }
}

/// The requirement profiles the scores report, on round-trip time:
/// - `voip`: ITU-T G.114's one-way 150 ms (most users satisfied) and 400 ms
///   (unacceptable for planning) as round trips, at the median and p99; loss 1 % / 5 %
///   (G.711 with concealment, G.113 App. I, degrades steeply past a few per cent).
/// - `gaming`: the shooters' 100 ms one-way budget (SPEC §6, the CBR summary's
///   `over_100ms`) as a 200 ms round trip is unacceptable, 50 ms optimal, at the median
///   and p99; loss 1 % / 5 %.
/// - `video_conferencing`: as VoIP in delay, loss 1 % / 10 % (video codecs with FEC
///   and retransmission ride out more loss than a voice stream), at least 1 Mbit/s.
/// - `web`: the draft's worked-example levels at p99 and p99.9 (200/500 ms,
///   300/600 ms), loss 1 % / 5 %.
pub const PROFILES: &[Requirement] = &[
    Requirement {
        name: "voip",
        latency: &[lp(50.0, 300.0, 800.0), lp(99.0, 300.0, 800.0)],
        loss_rop: 0.01,
        loss_cpup: 0.05,
        min_throughput_bps: None,
    },
    Requirement {
        name: "gaming",
        latency: &[lp(50.0, 50.0, 200.0), lp(99.0, 50.0, 200.0)],
        loss_rop: 0.01,
        loss_cpup: 0.05,
        min_throughput_bps: None,
    },
    Requirement {
        name: "video_conferencing",
        latency: &[lp(50.0, 300.0, 800.0), lp(99.0, 300.0, 800.0)],
        loss_rop: 0.01,
        loss_cpup: 0.10,
        min_throughput_bps: Some(1e6),
    },
    Requirement {
        name: "web",
        latency: &[lp(99.0, 200.0, 500.0), lp(99.9, 300.0, 600.0)],
        loss_rop: 0.01,
        loss_cpup: 0.05,
        min_throughput_bps: None,
    },
];

/// One level's score in [0, 1]: 1 at or below `rop`, 0 at or beyond `cpup`.
fn level(measured: f64, rop: f64, cpup: f64) -> f64 {
    (1.0 - (measured - rop) / (cpup - rop)).clamp(0.0, 1.0)
}

/// The QoO of `req` from latencies at its percentiles (`at(p)` gives the measured
/// latency, ms, at percentile p), mean loss (fraction) and throughput (bit/s).
pub fn qoo_at(req: &Requirement, at: impl Fn(f64) -> f64, loss: f64, throughput_bps: f64) -> f64 {
    let lat = req
        .latency
        .iter()
        .map(|p| level(at(p.percentile), p.rop_ms, p.cpup_ms))
        .fold(1.0, f64::min);
    let loss = level(loss, req.loss_rop, req.loss_cpup);
    let tput = match req.min_throughput_bps {
        Some(m) if throughput_bps < m => 0.0,
        _ => 1.0,
    };
    100.0 * lat.min(loss).min(tput)
}

/// The QoO of `req` from round-trip samples (ms, any order); NaN without samples.
pub fn qoo(req: &Requirement, rtt_ms: &[f64], loss: f64, throughput_bps: f64) -> f64 {
    let mut v = rtt_ms.to_vec();
    v.sort_unstable_by(f64::total_cmp);
    if v.is_empty() || loss.is_nan() {
        return f64::NAN;
    }
    qoo_at(req, |p| quantile(&v, p / 100.0), loss, throughput_bps)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The draft's worked example: ROP {p99 200 ms, p99.9 300 ms, loss 1 %}, CPUP
    /// {500 ms, 600 ms, 5 %}; measured 350 ms, 375 ms, 2 %. Latency: 1 − 150/300 = 0.5
    /// and 1 − 75/300 = 0.75 → 50; loss 1 − 1/4 = 0.75 → 75; QoO = min = 50.
    #[test]
    fn the_drafts_worked_example() {
        const EXAMPLE: &[LatencyPoint] = &[lp(99.0, 200.0, 500.0), lp(99.9, 300.0, 600.0)];
        let req = Requirement {
            name: "example",
            latency: EXAMPLE,
            loss_rop: 0.01,
            loss_cpup: 0.05,
            min_throughput_bps: None,
        };
        let at = |p: f64| if p == 99.0 { 350.0 } else { 375.0 };
        assert!((qoo_at(&req, at, 0.02, 0.0) - 50.0).abs() < 1e-9);
        // Loss alone at 4 %: 1 − 3/4 = 0.25 → 25 (below latency's 50).
        assert!((qoo_at(&req, at, 0.04, 0.0) - 25.0).abs() < 1e-9);
        // The example is the web profile's levels.
        assert_eq!(PROFILES[3].latency, req.latency);
    }

    /// From samples: 100 RTTs 1..=100 ms against VoIP (p50/p99 300 → 800): p99 = 99.01
    /// ms ≤ 300, no loss → 100; the same + 500 ms: p50 550.5 → 1 − 250.5/500 = 0.499,
    /// p99 599.01 → 1 − 299.01/500 = 0.40198, the least → 40.198. Video conferencing
    /// below 1 Mbit/s: 0.
    #[test]
    fn profiles_from_samples() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        let voip = &PROFILES[0];
        assert_eq!(qoo(voip, &v, 0.0, 0.0), 100.0);
        let late: Vec<f64> = v.iter().map(|x| x + 500.0).collect();
        assert!((qoo(voip, &late, 0.0, 0.0) - 40.198).abs() < 1e-9);
        assert_eq!(qoo(&PROFILES[2], &v, 0.0, 0.5e6), 0.0);
        assert_eq!(qoo(&PROFILES[2], &v, 0.0, 2e6), 100.0);
        assert!(qoo(voip, &[], 0.0, 0.0).is_nan());
    }
}
