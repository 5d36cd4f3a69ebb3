//! The scores people quote for a line under load, computed once for a trial that ran a
//! workload with round-trip probes ([`crate::rrul`]): idle and loaded latency and
//! jitter as speed tests report them ([`speedtest`]), RPM ([`responsiveness`]), the
//! DSLReports bufferbloat grade ([`grade`]), Cloudflare's AIM uses ([`aim`]) and QoO
//! for requirement profiles ([`qoo`]). The simulator and the testbed both call
//! [`trial_scores`] with their records, so a score means the same in both.

pub mod aim;
pub mod grade;
pub mod qoo;
pub mod resp_test;
pub mod responsiveness;
pub mod speedtest;

pub use resp_test::RespRecords;

use serde::{Deserialize, Serialize};

use crate::scenario::Scenario;
use crate::traffic::{RealtimeRecords, IN_FLIGHT, LOST_ON_WIRE};
use crate::units::{Direction, Nanos};

/// One RTT sample of a bulk TCP flow under a workload: when the segment left, its round
/// trip (a self probe: a round trip on a loaded connection), and the bytes the flow had
/// had acknowledged when the sample came (its progress, for the saturation criterion).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SelfProbe {
    pub sent_ns: Nanos,
    pub rtt_ns: Nanos,
    pub acked_bytes: u64,
}

/// The trial's scores (fields of the summary; all `None` without a workload).
/// Latencies are round trips in seconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Scores {
    pub latency_idle_s: Option<f64>,
    pub latency_loaded_s: Option<f64>,
    pub latency_loaded_iqm_s: Option<f64>,
    pub latency_loaded_down_s: Option<f64>,
    pub latency_loaded_up_s: Option<f64>,
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
    pub load_saturated_s: Option<f64>,
    pub rpm_foreign: Option<f64>,
    pub rpm_loaded: Option<f64>,
    pub foreign_probes_per_s: Option<f64>,
    pub self_probes_per_s: Option<f64>,
    pub probe_capacity_share: Option<f64>,
    pub probe_rate_within_limits: Option<u8>,
    pub foreign_probes_skipped: Option<u64>,
    pub ramp_saturated_interval: Option<u64>,
    pub ramp_flows_down: Option<u64>,
    pub ramp_flows_up: Option<u64>,
    pub ramp_flows_per_interval: Option<String>,
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
        // In flight at the end: marked so (as the simulator's records are), or arriving
        // after it (as the testbed's may).
        let flying = |x: Nanos| x == IN_FLIGHT || (x > end && x < LOST_ON_WIRE);
        if flying(a) || flying(b) {
            continue;
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

/// Bytes the bulk flows of direction `d` had acknowledged in each interval of `id` from
/// `start` to `end`, from their samples: a flow's count at a boundary is that of its last
/// sample acknowledged by then (samples come every probe interval).
fn acked_per_interval(
    sc: &Scenario,
    logs: &[&[SelfProbe]],
    d: Direction,
    start: Nanos,
    end: Nanos,
    id: Nanos,
) -> Vec<f64> {
    let n = (end.saturating_sub(start) / id) as usize;
    let mut bytes = vec![0.0; n];
    for (i, log) in logs.iter().enumerate() {
        if sc.tcp.get(i).is_none_or(|t| t.direction != d) {
            continue;
        }
        let at = |t: Nanos| {
            log.iter()
                .take_while(|p| p.sent_ns + p.rtt_ns <= t)
                .last()
                .map_or(0, |p| p.acked_bytes)
        };
        let mut before = at(start);
        for (k, b) in bytes.iter_mut().enumerate() {
            let now = at(start + (k as Nanos + 1) * id);
            *b += now.saturating_sub(before) as f64;
            before = now;
        }
    }
    bytes
}

/// When the load saturated (the draft's criterion on both directions' goodput, each
/// direction with flows): the end of the later direction's first stable interval.
fn saturated_at(sc: &Scenario, logs: &[&[SelfProbe]], start: Nanos, id: Nanos) -> Option<Nanos> {
    let mut at = None;
    for d in [Direction::Down, Direction::Up] {
        if !sc.tcp.iter().any(|t| t.direction == d) {
            continue;
        }
        let bytes = acked_per_interval(sc, logs, d, start, sc.duration_ns, id);
        let (first, _) = responsiveness::saturation(&bytes, id as f64 / 1e9);
        let t = start + (first? as Nanos + 1) * id;
        at = Some(at.map_or(t, |a: Nanos| a.max(t)));
    }
    at
}

/// The scores of a trial of `sc` from its CBR flows' records (`cbr[j]` is flow j's)
/// and each bulk TCP flow's logged samples (the self probes and its progress), with
/// the downstream goodput; all `None` when the scenario runs no workload.
pub fn trial_scores(
    sc: &Scenario,
    cbr: &[&RealtimeRecords],
    tcp_rtts: &[&[SelfProbe]],
    down_goodput_bps: f64,
) -> Scores {
    trial_scores_with(sc, cbr, tcp_rtts, &RespRecords::default(), down_goodput_bps)
}

/// [`trial_scores`] with the records of the responsiveness test (its foreign probe
/// connections and its ramp), which replace the UDP probes in the foreign half of the
/// RPM and the goodput logs in the saturation point.
pub fn trial_scores_with(
    sc: &Scenario,
    cbr: &[&RealtimeRecords],
    tcp_rtts: &[&[SelfProbe]],
    resp: &RespRecords,
    down_goodput_bps: f64,
) -> Scores {
    let Some(w) = &sc.workload else {
        return Scores::default();
    };
    // Loaded: after the settling time, or once the load saturated if that came later
    // (the draft scores the intervals after saturation); never saturated, the former.
    let saturated = match resp.ramp {
        Some(r) => resp_test::ramp_saturated_at(r, w),
        None => saturated_at(sc, tcp_rtts, w.idle_ns, w.saturation_interval_ns),
    };
    let loaded_from = (w.idle_ns + w.settle_ns).max(saturated.unwrap_or(0));
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
    let self_ms = resp_test::self_probe_ms(w, tcp_rtts, loaded_from, sc.duration_ns);
    let loss = crate::measure::ratio(
        p.loaded_lost as f64,
        (p.loaded_lost + loaded.len() as u64) as f64,
    );
    let foreign = resp_test::ForeignTimes::of(resp.foreign, loaded_from, sc.duration_ns);
    let probes = if resp.foreign.is_empty() {
        responsiveness::ProbeTimes {
            tcp: &loaded,
            tls: &[],
            http: &loaded,
            self_http: &self_ms,
        }
    } else {
        foreign.times(&self_ms)
    };
    let rest = resp_test::probe_and_ramp_fields(
        sc,
        resp,
        if resp.foreign.is_empty() {
            loaded.len() as u64
        } else {
            foreign.launched
        },
        self_ms.len() as u64,
        loaded_from,
    );
    scores_of(&RoundTrips {
        idle: &idle,
        loaded: &loaded,
        phases: None,
        loss,
        probes,
        down_goodput_bps,
        saturated_s: saturated.map(|t| t as f64 / 1e9),
        rest,
    })
}

/// Round trips (ms, in the order taken) that the scores are computed from: those of
/// the idle and of the loaded probes, the loaded probes' loss, the probe times RPM takes
/// and the downstream goodput; `rest`: the fields only a responsiveness test fills
/// (its probe rates and ramp). The simulator's and the testbed's trials
/// ([`trial_scores_with`]) and imported measurements ([`crate::measured`]) alike.
pub struct RoundTrips<'a> {
    pub idle: &'a [f64],
    pub loaded: &'a [f64],
    /// The loaded round trips of a download phase and of an upload phase, when a test
    /// loaded the directions one after the other (an imported speed test); `None` when
    /// it loaded both at once (RRUL), whose one loaded set stands for both. The grade
    /// averages the two phases' increases, AIM takes the larger (Cloudflare's rule).
    pub phases: Option<[&'a [f64]; 2]>,
    pub loss: f64,
    pub probes: responsiveness::ProbeTimes<'a>,
    pub down_goodput_bps: f64,
    pub saturated_s: Option<f64>,
    pub rest: Scores,
}

/// The scores of a set of round trips (NaN figures are `None`).
pub fn scores_of(r: &RoundTrips) -> Scores {
    let (idle, loaded, loss, down_goodput_bps) = (r.idle, r.loaded, r.loss, r.down_goodput_bps);
    let probes = &r.probes;
    let some = |x: f64| (!x.is_nan()).then_some(x);
    let s = |ms: f64| some(ms / 1e3);
    let (idle_med, loaded_med) = (speedtest::median(idle), speedtest::median(loaded));
    let increase = speedtest::mean(loaded) - speedtest::mean(idle);
    let phases = r.phases.filter(|p| p.iter().all(|l| !l.is_empty()));
    let (graded, aim_increase) = match phases {
        Some([down, up]) => {
            let inc = |l: &[f64]| speedtest::mean(l) - speedtest::mean(idle);
            let median = |l: &[f64]| speedtest::median(l);
            (
                grade::graded_increase_ms(inc(down), inc(up)),
                median(down).max(median(up)) - idle_med,
            )
        }
        None => (
            grade::graded_increase_ms(increase, increase),
            loaded_med - idle_med,
        ),
    };
    use responsiveness::{rpm, Stat};
    let rpm_parts = rpm(probes, Stat::TrimmedMean);
    let rpm_tm = rpm_parts.rpm;
    // The bulk flows' downstream goodput stands for a speed test's download rate (AIM's
    // streaming use, QoO's minimum throughput); the probes' loss under load for its
    // packet loss.
    let known = !idle.is_empty() && !loaded.is_empty();
    let aim = known.then(|| {
        aim::aim(&aim::AimInput {
            latency_ms: idle_med,
            jitter_ms: speedtest::jitter(idle),
            loss,
            download_bps: down_goodput_bps,
            loaded_increase_ms: aim_increase,
        })
    });
    let q = |name: &str| {
        let req = qoo::PROFILES
            .iter()
            .find(|r| r.name == name)
            .expect("a profile");
        some(qoo::qoo(req, loaded, loss, down_goodput_bps))
    };
    Scores {
        latency_idle_s: s(idle_med),
        latency_loaded_s: s(loaded_med),
        latency_loaded_iqm_s: s(speedtest::iqm(loaded)),
        // A speed test's download and upload latencies, as it reports them one by one.
        latency_loaded_down_s: r.phases.and_then(|[d, _]| s(speedtest::median(d))),
        latency_loaded_up_s: r.phases.and_then(|[_, u]| s(speedtest::median(u))),
        latency_increase_s: s(increase),
        jitter_idle_s: s(speedtest::jitter(idle)),
        jitter_loaded_s: s(speedtest::jitter(loaded)),
        probe_loss_rate: some(loss),
        rpm: some(rpm_tm),
        rpm_p90: some(rpm(probes, Stat::Quantile(0.9)).rpm),
        rpm_p99: some(rpm(probes, Stat::Quantile(0.99)).rpm),
        rpm_band: some(rpm_tm).map(responsiveness::band),
        bufferbloat_grade: some(graded).map(grade::bufferbloat_grade),
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
        load_saturated_s: r.saturated_s,
        rpm_foreign: some(rpm_parts.foreign),
        rpm_loaded: some(rpm_parts.loaded),
        ..r.rest.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rrul::Workload;
    use crate::traffic::DROPPED;

    const MS: Nanos = 1_000_000;

    /// Records of the workload's probe flows in `sc`: each packet sent at `s` (request
    /// up or reply down) arrives `owd(s, up, k)` later (`None`: dropped).
    fn probe_records(
        sc: &Scenario,
        owd: impl Fn(Nanos, bool, Nanos) -> Option<Nanos>,
    ) -> Vec<RealtimeRecords> {
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
                r.sent.push(s);
                r.arrived.push(owd(s, up, k).map_or(DROPPED, |d| s + d));
                k += 1;
            }
            recs.push(r);
        }
        recs
    }

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
        let recs = probe_records(&sc, |s, up, k| {
            if up && s >= 10_000 * MS && k % 10 == 0 {
                return None;
            }
            Some(match (s < 5_000 * MS, up) {
                (true, true) => 10 * MS,
                (true, false) => 20 * MS,
                (false, true) => 60 * MS,
                (false, false) => 140 * MS,
            })
        });
        let refs: Vec<&RealtimeRecords> = recs.iter().collect();
        let selfs: Vec<SelfProbe> = (0..50)
            .map(|k| SelfProbe {
                sent_ns: 10_000 * MS + k * 200 * MS,
                rtt_ns: 250 * MS,
                acked_bytes: 0,
            })
            .collect();
        let sc_ = trial_scores(&sc, &refs, &[&selfs], 20e6);
        assert_eq!(sc_.latency_idle_s, Some(0.03));
        assert_eq!(sc_.latency_loaded_s, Some(0.2));
        assert_eq!(sc_.jitter_idle_s, Some(0.0));
        // 10 s of loaded probes: 50 per probe (starts 0, 50, 100, 150 ms), 5 of each
        // dropped; the last of the pairs starting at 100 and 150 ms (sent 19.9 and 19.95
        // s, replies due after 20 s) are in flight at the end and not counted: 20/198.
        assert!((sc_.probe_loss_rate.unwrap() - 20.0 / 198.0).abs() < 1e-12);
        // The same with those two marked in flight, as the simulator leaves them.
        let mut marked = recs.clone();
        for r in &mut marked {
            for a in &mut r.arrived {
                if *a > sc.duration_ns && *a < LOST_ON_WIRE {
                    *a = IN_FLIGHT;
                }
            }
        }
        let refs_marked: Vec<&RealtimeRecords> = marked.iter().collect();
        let loss = trial_scores(&sc, &refs_marked, &[&selfs], 20e6).probe_loss_rate;
        assert!((loss.unwrap() - 20.0 / 198.0).abs() < 1e-12, "{loss:?}");
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

    /// Saturation from the flows' progress: the load starts at 5 s, intervals of 1 s. The
    /// download acknowledges 1, 2, 4, 8, then 10 MB per interval (the responsiveness
    /// module's worked series: stable at the end of interval 9, so at 5 + 10 = 15 s); the
    /// upload 1 MB in every interval (four equal moving averages once there are four:
    /// interval 6, 12 s). The load is saturated when both are: 15 s. Samples every
    /// 200 ms, acknowledged 50 ms after they left, the count growing evenly within an
    /// interval.
    #[test]
    fn the_load_saturates_when_both_directions_do() {
        let mut sc = Scenario::builder().duration(20_000 * MS).build();
        for d in [crate::units::Direction::Down, crate::units::Direction::Up] {
            sc.tcp.push(crate::tcp::TcpConfig {
                direction: d,
                ..Default::default()
            });
        }
        let log = |per_interval: &dyn Fn(usize) -> f64| -> Vec<SelfProbe> {
            let mut total = 0.0;
            let mut out = Vec::new();
            for k in 0..15 {
                for j in 1..=5 {
                    let acked = total + per_interval(k) * j as f64 / 5.0;
                    let t = 5_000 * MS + k as Nanos * 1_000 * MS + j * 200 * MS;
                    out.push(SelfProbe {
                        sent_ns: t - 50 * MS,
                        rtt_ns: 50 * MS,
                        acked_bytes: acked as u64,
                    });
                }
                total += per_interval(k);
            }
            out
        };
        let ramp = [1.0, 2.0, 4.0, 8.0];
        let down = log(&|k| 1e6 * ramp.get(k).copied().unwrap_or(10.0));
        let up = log(&|_| 1e6);
        let bytes = acked_per_interval(
            &sc,
            &[&down, &up],
            Direction::Down,
            5_000 * MS,
            20_000 * MS,
            1_000 * MS,
        );
        assert_eq!(bytes[..5], [1e6, 2e6, 4e6, 8e6, 10e6]);
        assert_eq!(
            saturated_at(&sc, &[&down, &up], 5_000 * MS, 1_000 * MS),
            Some(15_000 * MS)
        );
        assert_eq!(
            saturated_at(&sc, &[&up, &up], 5_000 * MS, 1_000 * MS),
            Some(12_000 * MS)
        );
        // The loaded probes are those after saturation (15 s), not after the settling
        // time (10 s): round trips of 100 ms before 15 s and 200 ms after give a loaded
        // median of 200 ms (from 10 s it would be 150, halfway).
        let w = Workload::default();
        sc.cbr = w.cbr_flows();
        sc.workload = Some(w);
        let recs = probe_records(&sc, |s, _, _| {
            Some(if s < 15_000 * MS { 50 * MS } else { 100 * MS })
        });
        let refs: Vec<&RealtimeRecords> = recs.iter().collect();
        let s = trial_scores(&sc, &refs, &[&down, &up], 0.0);
        assert_eq!(s.load_saturated_s, Some(15.0));
        assert_eq!(s.latency_loaded_s, Some(0.2));
    }
}
