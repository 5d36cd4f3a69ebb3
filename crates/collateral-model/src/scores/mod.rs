//! The scores people quote for a line under load, computed once for a trial that ran a
//! workload with round-trip probes ([`crate::rrul`]): idle and loaded latency and
//! jitter as speed tests report them ([`speedtest`]), RPM ([`responsiveness`]), the
//! DSLReports bufferbloat grade ([`grade`]), Cloudflare's AIM uses ([`aim`]) and QoO
//! for requirement profiles ([`qoo`]). The simulator and the testbed both call
//! [`trial_scores`] with their records, so a score means the same in both.

pub mod aim;
pub mod grade;
pub mod qoo;
pub mod responsiveness;
pub mod speedtest;

use serde::Serialize;

use crate::scenario::Scenario;
use crate::traffic::{RealtimeRecords, LOST_ON_WIRE};
use crate::units::Nanos;

/// The trial's scores (fields of the summary; all `None` without a workload).
/// Latencies are round trips in seconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Scores {
    pub latency_idle_s: Option<f64>,
    pub latency_loaded_s: Option<f64>,
    pub latency_loaded_iqm_s: Option<f64>,
    pub latency_increase_s: Option<f64>,
    pub jitter_idle_s: Option<f64>,
    pub jitter_loaded_s: Option<f64>,
    pub probe_loss_rate: Option<f64>,
    pub rpm: Option<f64>,
    pub rpm_p90: Option<f64>,
    pub rpm_p99: Option<f64>,
    pub rpm_band: Option<&'static str>,
    pub bufferbloat_grade: Option<&'static str>,
    pub aim_streaming: Option<&'static str>,
    pub aim_streaming_points: Option<f64>,
    pub aim_gaming: Option<&'static str>,
    pub aim_gaming_points: Option<f64>,
    pub aim_rtc: Option<&'static str>,
    pub aim_rtc_points: Option<f64>,
    pub qoo_voip: Option<f64>,
    pub qoo_gaming: Option<f64>,
    pub qoo_video_conferencing: Option<f64>,
    pub qoo_web: Option<f64>,
}

/// Round-trip samples of the probes, split by when the request left.
#[derive(Debug, Default)]
struct Probes {
    /// (send time, RTT ms) of those sent before the load, in send order.
    idle: Vec<(Nanos, f64)>,
    /// The same for those sent after the load settled.
    loaded: Vec<(Nanos, f64)>,
    loaded_lost: u64,
}

/// Pairs each request (`up`) with its reply (`down`, the same sequence number): the
/// round trip is the sum of the two one-way delays; either lost, the probe is lost;
/// either still in flight at the end (or arriving after it), it is not counted.
fn probe_rtts(
    up: &RealtimeRecords,
    down: &RealtimeRecords,
    idle_until: Nanos,
    loaded_from: Nanos,
    end: Nanos,
    out: &mut Probes,
) {
    let n = up.sent.len().min(down.sent.len());
    for k in 0..n {
        let (s, a, d, b) = (up.sent[k], up.arrived[k], down.sent[k], down.arrived[k]);
        let idle = s < idle_until;
        if !idle && s < loaded_from {
            continue;
        }
        if (a > end && a < LOST_ON_WIRE) || (b > end && b < LOST_ON_WIRE) {
            continue; // in flight at the end
        }
        if a >= LOST_ON_WIRE || b >= LOST_ON_WIRE {
            if !idle {
                out.loaded_lost += 1;
            }
            continue;
        }
        let rtt_ms = ((a - s) + (b - d)) as f64 / 1e6;
        if idle {
            out.idle.push((s, rtt_ms));
        } else {
            out.loaded.push((s, rtt_ms));
        }
    }
}

/// The scores of a trial of `sc` from its CBR flows' records (`cbr[j]` is flow j's)
/// and each bulk TCP flow's logged RTT samples (send time, RTT: the self probes),
/// with the downstream goodput; all `None` when the scenario runs no workload.
pub fn trial_scores(
    sc: &Scenario,
    cbr: &[&RealtimeRecords],
    tcp_rtts: &[&[(Nanos, Nanos)]],
    down_goodput_bps: f64,
) -> Scores {
    let Some(w) = &sc.workload else {
        return Scores::default();
    };
    let loaded_from = w.idle_ns + w.settle_ns;
    let mut p = Probes::default();
    for pair in cbr.chunks_exact(2).take(w.probes().len()) {
        probe_rtts(
            pair[0],
            pair[1],
            w.idle_ns,
            loaded_from,
            sc.duration_ns,
            &mut p,
        );
    }
    // The probes interleave: one series in send order, as a speed test's pings.
    p.idle.sort_by_key(|x| x.0);
    p.loaded.sort_by_key(|x| x.0);
    let idle: Vec<f64> = p.idle.iter().map(|x| x.1).collect();
    let loaded: Vec<f64> = p.loaded.iter().map(|x| x.1).collect();
    let self_ms: Vec<f64> = tcp_rtts
        .iter()
        .flat_map(|v| v.iter())
        .filter(|(s, _)| *s >= loaded_from && *s <= sc.duration_ns)
        .map(|(_, r)| *r as f64 / 1e6)
        .collect();
    let loss = crate::measure::ratio(
        p.loaded_lost as f64,
        (p.loaded_lost + loaded.len() as u64) as f64,
    );
    let some = |x: f64| (!x.is_nan()).then_some(x);
    let s = |ms: f64| some(ms / 1e3);
    let (idle_med, loaded_med) = (speedtest::median(&idle), speedtest::median(&loaded));
    let increase = speedtest::mean(&loaded) - speedtest::mean(&idle);
    let probes = responsiveness::ProbeTimes {
        tcp: &loaded,
        tls: &[],
        http: &loaded,
        self_http: &self_ms,
    };
    use responsiveness::{rpm, Stat};
    let rpm_tm = rpm(&probes, Stat::TrimmedMean).rpm;
    let known = !idle.is_empty() && !loaded.is_empty();
    let aim = known.then(|| {
        aim::aim(&aim::AimInput {
            latency_ms: idle_med,
            jitter_ms: speedtest::jitter(&idle),
            loss,
            download_bps: down_goodput_bps,
            loaded_increase_ms: loaded_med - idle_med,
        })
    });
    let q = |name: &str| {
        let req = qoo::PROFILES
            .iter()
            .find(|r| r.name == name)
            .expect("a profile");
        some(qoo::qoo(req, &loaded, loss, down_goodput_bps))
    };
    Scores {
        latency_idle_s: s(idle_med),
        latency_loaded_s: s(loaded_med),
        latency_loaded_iqm_s: s(speedtest::iqm(&loaded)),
        latency_increase_s: s(increase),
        jitter_idle_s: s(speedtest::jitter(&idle)),
        jitter_loaded_s: s(speedtest::jitter(&loaded)),
        probe_loss_rate: some(loss),
        rpm: some(rpm_tm),
        rpm_p90: some(rpm(&probes, Stat::Quantile(0.9)).rpm),
        rpm_p99: some(rpm(&probes, Stat::Quantile(0.99)).rpm),
        rpm_band: some(rpm_tm).map(responsiveness::band),
        bufferbloat_grade: some(increase)
            .map(|i| grade::bufferbloat_grade(grade::graded_increase_ms(i, i))),
        aim_streaming: aim.map(|a| a.streaming.class),
        aim_streaming_points: aim.map(|a| a.streaming.points),
        aim_gaming: aim.map(|a| a.gaming.class),
        aim_gaming_points: aim.map(|a| a.gaming.points),
        aim_rtc: aim.map(|a| a.rtc.class),
        aim_rtc_points: aim.map(|a| a.rtc.points),
        qoo_voip: q("voip"),
        qoo_gaming: q("gaming"),
        qoo_video_conferencing: q("video_conferencing"),
        qoo_web: q("web"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rrul::Workload;
    use crate::traffic::DROPPED;

    const MS: Nanos = 1_000_000;

    /// A 20 s trial, probes every 200 ms: idle until 5 s, loaded from 10 s. Crafted
    /// records: every request takes 10 ms up and the reply 20 ms down before 5 s (RTT
    /// 30 ms); from 10 s, 60 ms up and 140 ms down (200 ms), one loaded request in ten
    /// dropped. Self probes: 250 ms each from 10 s.
    #[test]
    fn scores_from_crafted_probe_records() {
        let w = Workload::default();
        let mut sc = Scenario::builder().duration(20_000 * MS).build();
        sc.cbr = w.cbr_flows();
        sc.workload = Some(w);
        let mut recs = Vec::new();
        for cfg in &sc.cbr {
            let start = cfg.start_ns.unwrap();
            let mut r = RealtimeRecords::default();
            let mut k = 0;
            loop {
                let s = start + k * 200 * MS;
                if s >= sc.duration_ns {
                    break;
                }
                let up = cfg.direction == crate::units::Direction::Up;
                let owd = match (s < 5_000 * MS, up) {
                    (true, true) => 10 * MS,
                    (true, false) => 20 * MS,
                    (false, true) => 60 * MS,
                    (false, false) => 140 * MS,
                };
                r.sent.push(s);
                r.arrived.push(if up && s >= 10_000 * MS && k % 10 == 0 {
                    DROPPED
                } else {
                    s + owd
                });
                k += 1;
            }
            recs.push(r);
        }
        let refs: Vec<&RealtimeRecords> = recs.iter().collect();
        let selfs: Vec<(Nanos, Nanos)> = (0..50)
            .map(|k| (10_000 * MS + k * 200 * MS, 250 * MS))
            .collect();
        let sc_ = trial_scores(&sc, &refs, &[&selfs], 20e6);
        assert_eq!(sc_.latency_idle_s, Some(0.03));
        assert_eq!(sc_.latency_loaded_s, Some(0.2));
        assert_eq!(sc_.jitter_idle_s, Some(0.0));
        // 10 s of loaded probes: 50 per probe (starts 0, 50, 100, 150 ms), 5 of each
        // dropped; the last of the pairs starting at 100 and 150 ms (sent 19.9 and 19.95
        // s, replies due after 20 s) are in flight at the end and not counted: 20/198.
        assert!((sc_.probe_loss_rate.unwrap() - 20.0 / 198.0).abs() < 1e-12);
        // Foreign 60000/200 = 300, loaded 60000/250 = 240: RPM 270 (poor).
        assert!((sc_.rpm.unwrap() - 270.0).abs() < 1e-9);
        assert_eq!(sc_.rpm_band, Some("poor"));
        // Increase 170 ms (both directions loaded at once): C.
        assert_eq!(sc_.bufferbloat_grade, Some("C"));
        // AIM: idle 30 ms (5), jitter 0 (10), loss 10.1 % (0), 20 Mbit/s (10), +170 ms
        // (−10): streaming 5 + 0 + 10 − 10 = 5 → bad; gaming −5 → 0 bad; RTC 5 → poor.
        assert_eq!(sc_.aim_streaming, Some("bad"));
        assert_eq!(sc_.aim_rtc_points, Some(5.0));
        assert_eq!(sc_.aim_rtc, Some("poor"));
        // QoO VoIP: RTT 200 ms ≤ 300 → 100 on delay; loss 10 % ≥ 5 % → 0.
        assert_eq!(sc_.qoo_voip, Some(0.0));
        // Without a workload: nothing.
        sc.workload = None;
        assert_eq!(trial_scores(&sc, &refs, &[], 0.0), Scores::default());
    }
}
