//! A measurement made elsewhere (irtt, iperf3, Flent, networkQuality, crusader), as a
//! trial of mode `"measured"` in the simulator's schema: the Python importers turn a
//! tool's file into plain records ([`MeasuredRecords`]), and this module computes every
//! figure from them, with the same functions the simulator and the testbed use
//! ([`crate::metrics::quantile_by`], [`crate::quality`], [`crate::scores::scores_of`]),
//! so a measured p95 or grade means what a simulated one does. What a tool does not
//! measure (queue counters, segments sent, packets through the bottleneck) stays out of
//! the summary: null in the store, never invented.

use serde::{Deserialize, Serialize};

mod one_way;
use one_way::one_way;
pub use one_way::MeasuredOneWay;

use crate::measure::{base_owd, ratio};
use crate::metrics::CbrTrace;
use crate::scenario::Scenario;
use crate::scores::{responsiveness::ProbeTimes, scores_of, RoundTrips, Scores};
use crate::units::{Direction, Nanos};

/// What loaded the link during a phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Load {
    Idle = 0,
    Down = 1,
    Up = 2,
    Both = 3,
}

/// Codes of the `load` column of the `rtt` trace, in order.
pub const LOADS: &[&str] = &["idle", "down", "up", "both"];
/// Codes of a probe's fate (the `rtt` trace's `fate`): arrived, lost on the way up, on
/// the way down, lost without saying which way (irtt's plain `true`, a ping).
pub const PROBE_FATES: &[&str] = &["arrived", "lost_up", "lost_down", "lost"];

/// Bytes one flow (or a direction's total) moved per interval: `bytes[k]` from
/// `end_ns[k-1]` (`start_ns` for the first) to `end_ns[k]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThroughputRecords {
    pub direction: Direction,
    pub start_ns: Nanos,
    pub end_ns: Vec<Nanos>,
    pub bytes: Vec<u64>,
    pub cc: Option<String>,
    pub retransmits: Option<u64>,
}

/// A stream of latency probes; delays in ns, -1 where lost or not measured.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProbeRecords {
    pub sent_ns: Vec<Nanos>,
    pub rtt_ns: Vec<i64>,
    pub owd_up_ns: Option<Vec<i64>>,
    pub owd_down_ns: Option<Vec<i64>>,
    pub fate: Vec<u8>,
    pub bytes: u32,
    /// "" for latency probes; networkQuality's "foreign_tcp", "foreign_tls",
    /// "foreign_http", "self_http" for its RPM.
    pub role: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhaseRecord {
    pub name: String,
    pub start_ns: Nanos,
    pub end_ns: Nanos,
    pub load: Load,
}

/// One measurement as the importers give it (`collateral.measured.records`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MeasuredRecords {
    pub tool: String,
    pub duration_ns: Nanos,
    pub throughput: Vec<ThroughputRecords>,
    pub probes: Vec<ProbeRecords>,
    pub phases: Vec<PhaseRecord>,
}

/// A measured flow's summary: the TCP group's columns the tools report.
#[derive(Debug, Clone, Serialize)]
pub struct MeasuredTcp {
    pub flow: u32,
    pub direction: &'static str,
    pub cc: Option<String>,
    pub goodput_bps: f64,
    pub bytes_delivered: u64,
    pub retransmits: Option<u64>,
}

/// A phase and direction: the phases' columns a measurement has.
#[derive(Debug, Clone, Serialize)]
pub struct MeasuredPhase {
    pub phase: String,
    pub start_s: f64,
    pub end_s: f64,
    pub direction: &'static str,
    pub class: &'static str,
    pub throughput_bps: f64,
}

/// The summary of a measured trial (serialised, the store's flat columns).
#[derive(Debug, Clone, Serialize)]
pub struct MeasuredSummary {
    pub mode: &'static str,
    pub duration_s: f64,
    pub warmup_s: f64,
    pub down_goodput_bps: f64,
    pub up_goodput_bps: f64,
    pub tcp: Vec<MeasuredTcp>,
    pub cbr: Vec<MeasuredOneWay>,
    pub phases: Vec<MeasuredPhase>,
    #[serde(flatten)]
    pub scores: Scores,
}

/// Every probe's round trip (the `rtt` trace).
#[derive(Debug, Clone, Default)]
pub struct RttTrace {
    pub time: Vec<Nanos>,
    pub probe: Vec<u32>,
    pub rtt_s: Vec<f64>,
    pub fate: Vec<u8>,
    pub load: Vec<u8>,
}

/// Every interval of every flow (the `throughput` trace).
#[derive(Debug, Clone, Default)]
pub struct ThroughputTrace {
    pub time: Vec<Nanos>,
    pub interval_s: Vec<f64>,
    pub flow: Vec<u32>,
    pub direction: Vec<u8>,
    pub bytes: Vec<u64>,
}

#[derive(Debug, Clone)]
pub struct MeasuredResult {
    pub summary: MeasuredSummary,
    pub cbr: CbrTrace,
    pub rtt: RttTrace,
    pub throughput: ThroughputTrace,
}

const ARRIVED: u8 = 0;
const LOST_UP: u8 = 1;
const LOST_DOWN: u8 = 2;
const LOST: u8 = 3;

fn check(r: &MeasuredRecords) -> Result<(), String> {
    for (i, t) in r.throughput.iter().enumerate() {
        if t.end_ns.len() != t.bytes.len() {
            return Err(format!(
                "throughput[{i}]: end_ns and bytes differ in length"
            ));
        }
        let mut prev = t.start_ns;
        for &e in &t.end_ns {
            if e < prev {
                return Err(format!("throughput[{i}]: interval ends go backwards"));
            }
            prev = e;
        }
    }
    for (i, p) in r.probes.iter().enumerate() {
        let n = p.sent_ns.len();
        let owd = |o: &Option<Vec<i64>>| o.as_ref().is_none_or(|v| v.len() == n);
        if p.rtt_ns.len() != n || p.fate.len() != n || !owd(&p.owd_up_ns) || !owd(&p.owd_down_ns) {
            return Err(format!("probes[{i}]: its columns differ in length"));
        }
        if let Some(f) = p.fate.iter().find(|&&f| f > LOST) {
            return Err(format!("probes[{i}]: fate code {f} (0 to 3)"));
        }
    }
    for (i, ph) in r.phases.iter().enumerate() {
        if ph.end_ns < ph.start_ns {
            return Err(format!("phases[{i}] ({}): ends before it starts", ph.name));
        }
    }
    Ok(())
}

/// The phases the records give, or, without any, those their flows imply: idle until
/// the first flow starts, loaded (down, up or both) while flows run, idle after.
pub fn phases_of(r: &MeasuredRecords) -> Vec<PhaseRecord> {
    if !r.phases.is_empty() || r.throughput.is_empty() {
        return r.phases.clone();
    }
    let span = |d: Direction| {
        let of = r.throughput.iter().filter(|t| t.direction == d);
        let start = of.clone().map(|t| t.start_ns).min();
        let end = of.filter_map(|t| t.end_ns.last().copied()).max();
        start.zip(end)
    };
    let mut cuts: Vec<Nanos> = vec![0, r.duration_ns];
    for d in [Direction::Down, Direction::Up] {
        if let Some((s, e)) = span(d) {
            cuts.extend([s, e]);
        }
    }
    cuts.sort_unstable();
    cuts.dedup();
    let within = |d: Direction, t: Nanos| span(d).is_some_and(|(s, e)| s <= t && t < e);
    cuts.windows(2)
        .filter(|w| w[1] > w[0])
        .map(|w| {
            let load = match (within(Direction::Down, w[0]), within(Direction::Up, w[0])) {
                (true, true) => Load::Both,
                (true, false) => Load::Down,
                (false, true) => Load::Up,
                (false, false) => Load::Idle,
            };
            let name = LOADS[load as usize].to_string();
            PhaseRecord {
                name,
                start_ns: w[0],
                end_ns: w[1],
                load,
            }
        })
        .collect()
}

/// The load at `t`: the phase holding it (None outside every phase).
fn load_at(phases: &[PhaseRecord], t: Nanos) -> Option<Load> {
    phases
        .iter()
        .find(|p| p.start_ns <= t && t < p.end_ns)
        .map(|p| p.load)
}

fn secs(ns: i64) -> f64 {
    if ns < 0 {
        f64::NAN
    } else {
        ns as f64 / 1e9
    }
}

/// The measured trial from its records. `sc`, when given, is the scenario of the link
/// the measurement is compared with: its warm-up is left out of every figure (as the
/// simulator leaves it out) and its base one-way delay is what "additional delay" is
/// measured from; without it, there is no warm-up and the base is the smallest one-way
/// delay seen.
pub fn measured_result(
    r: &MeasuredRecords,
    sc: Option<&Scenario>,
) -> Result<MeasuredResult, String> {
    check(r)?;
    let warmup = sc.map_or(0, |s| s.warmup_ns);
    let phases = phases_of(r);
    let mut throughput = ThroughputTrace::default();
    let mut tcp = Vec::new();
    for (i, t) in r.throughput.iter().enumerate() {
        let (mut bytes, mut from, mut to) = (0u64, None, t.start_ns);
        let mut prev = t.start_ns;
        for (&e, &b) in t.end_ns.iter().zip(&t.bytes) {
            throughput.time.push(e);
            throughput.interval_s.push((e - prev) as f64 / 1e9);
            throughput.flow.push(i as u32);
            throughput.direction.push(t.direction.index() as u8);
            throughput.bytes.push(b);
            // Intervals from the warm-up on: a flow's goodput over the time it ran.
            if prev >= warmup {
                bytes += b;
                from.get_or_insert(prev);
                to = e;
            }
            prev = e;
        }
        let secs = from.map_or(0.0, |f| (to - f) as f64 / 1e9);
        tcp.push(MeasuredTcp {
            flow: i as u32,
            direction: t.direction.name(),
            cc: t.cc.clone(),
            goodput_bps: ratio(bytes as f64 * 8.0, secs),
            bytes_delivered: bytes,
            retransmits: t.retransmits,
        });
    }
    let goodput = |d: Direction| -> f64 {
        tcp.iter()
            .filter(|t| t.direction == d.name())
            .map(|t| t.goodput_bps)
            .filter(|g| !g.is_nan())
            .sum::<f64>()
            + 0.0 // not -0.0 without any flow
    };
    let (down_goodput_bps, up_goodput_bps) = (goodput(Direction::Down), goodput(Direction::Up));

    let mut rtt = RttTrace::default();
    let mut cbr_trace = CbrTrace::default();
    let mut cbr = Vec::new();
    let (mut idle, mut loaded, mut loaded_lost) = (Vec::new(), Vec::new(), 0u64);
    // The loaded round trips of download-only and upload-only phases.
    let mut by_phase: [Vec<f64>; 2] = Default::default();
    let mut role_ms: [Vec<f64>; 4] = Default::default();
    let roles = ["foreign_tcp", "foreign_tls", "foreign_http", "self_http"];
    let flows = r.throughput.len() as u32;
    for (j, p) in r.probes.iter().enumerate() {
        for (k, &s) in p.sent_ns.iter().enumerate() {
            let load = load_at(&phases, s);
            rtt.time.push(s);
            rtt.probe.push(j as u32);
            rtt.rtt_s.push(if p.fate[k] == ARRIVED {
                secs(p.rtt_ns[k])
            } else {
                f64::NAN
            });
            rtt.fate.push(p.fate[k]);
            rtt.load.push(load.unwrap_or(Load::Idle) as u8);
            // The warm-up leaves out loaded samples (the load's start, as the simulator
            // leaves it out); idle ones are the baseline whenever they were taken.
            let idle_load = matches!(load, None | Some(Load::Idle));
            if s < warmup && !idle_load {
                continue;
            }
            let ms = (p.fate[k] == ARRIVED && p.rtt_ns[k] >= 0).then(|| p.rtt_ns[k] as f64 / 1e6);
            // networkQuality's probes feed its RPM by role, and are round trips too.
            if let Some(x) = roles.iter().position(|&n| n == p.role) {
                role_ms[x].extend(ms);
            }
            match (load, ms) {
                (Some(Load::Idle) | None, Some(m)) => idle.push(m),
                (Some(Load::Idle) | None, None) => {}
                (Some(l), Some(m)) => {
                    loaded.push(m);
                    match l {
                        Load::Down => by_phase[0].push(m),
                        Load::Up => by_phase[1].push(m),
                        _ => {}
                    }
                }
                (Some(_), None) => loaded_lost += 1,
            }
        }
        // Each direction with one-way delays: a CBR flow (down first, as the
        // simulator numbers a probe's two directions).
        for (d, owd) in [
            (Direction::Down, &p.owd_down_ns),
            (Direction::Up, &p.owd_up_ns),
        ] {
            if let Some(o) = owd {
                let base = sc.map(|sc| base_owd(sc, d, p.bytes));
                let flow = flows + cbr.len() as u32;
                cbr.push(one_way(p, o, d, flow, base, warmup, &mut cbr_trace));
            }
        }
    }
    // Without any load, every probe is idle and there is nothing loaded to score.
    let loss = ratio(
        loaded_lost as f64,
        (loaded_lost + loaded.len() as u64) as f64,
    );
    let has_roles = role_ms.iter().any(|v| !v.is_empty());
    let probes = if has_roles {
        ProbeTimes {
            tcp: &role_ms[0],
            tls: &role_ms[1],
            http: &role_ms[2],
            self_http: &role_ms[3],
        }
    } else {
        ProbeTimes {
            tcp: &loaded,
            tls: &[],
            http: &loaded,
            self_http: &[],
        }
    };
    let scores = scores_of(&RoundTrips {
        idle: &idle,
        loaded: &loaded,
        phases: Some([&by_phase[0], &by_phase[1]]),
        loss,
        probes,
        down_goodput_bps,
        saturated_s: None,
        rest: Scores::default(),
    });
    let mut phase_rows = Vec::new();
    for ph in &phases {
        for d in [Direction::Down, Direction::Up] {
            let bytes: u64 = r
                .throughput
                .iter()
                .filter(|t| t.direction == d)
                .flat_map(|t| t.end_ns.iter().zip(&t.bytes))
                .filter(|(&e, _)| e > ph.start_ns && e <= ph.end_ns)
                .map(|(_, &b)| b)
                .sum();
            phase_rows.push(MeasuredPhase {
                phase: ph.name.clone(),
                start_s: ph.start_ns as f64 / 1e9,
                end_s: ph.end_ns as f64 / 1e9,
                direction: d.name(),
                class: "tcp",
                throughput_bps: ratio(bytes as f64 * 8.0, (ph.end_ns - ph.start_ns) as f64 / 1e9),
            });
        }
    }
    Ok(MeasuredResult {
        summary: MeasuredSummary {
            mode: "measured",
            duration_s: r.duration_ns as f64 / 1e9,
            warmup_s: warmup as f64 / 1e9,
            down_goodput_bps,
            up_goodput_bps,
            tcp,
            cbr,
            phases: phase_rows,
            scores,
        },
        cbr: cbr_trace,
        rtt,
        throughput,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;

    fn records(js: &str) -> MeasuredRecords {
        serde_json::from_str(js).unwrap()
    }

    /// Five irtt-like probes, 100 ms apart, RTTs 20, 30, 10, lost (down), 50 ms with
    /// one-way delays up 5 ms each and the rest down; a download from 0.15 s to 0.45 s
    /// of 3 intervals of 100 ms carrying 125 000 B each (10 Mbit/s). Phases implied:
    /// idle to 0.15 s, down to 0.45 s, idle after.
    #[test]
    fn a_measurement_by_hand() {
        let r = records(
            r#"{"tool": "irtt", "duration_ns": 500000000,
            "throughput": [{"direction": "down", "start_ns": 150000000,
              "end_ns": [250000000, 350000000, 450000000], "bytes": [125000, 125000, 125000],
              "cc": "cubic", "retransmits": 3}],
            "probes": [{"sent_ns": [0, 100000000, 200000000, 300000000, 400000000],
              "rtt_ns": [20000000, 30000000, 10000000, -1, 50000000],
              "owd_up_ns": [5000000, 5000000, 5000000, 5000000, 5000000],
              "owd_down_ns": [15000000, 25000000, 5000000, -1, 45000000],
              "fate": [0, 0, 0, 2, 0], "bytes": 88, "role": ""}],
            "phases": []}"#,
        );
        let m = measured_result(&r, None).unwrap();
        let s = &m.summary;
        assert_eq!(s.mode, "measured");
        assert_eq!(s.tcp[0].goodput_bps, 10e6);
        assert_eq!(s.down_goodput_bps, 10e6);
        assert_eq!(s.up_goodput_bps.to_bits(), 0, "no upload: +0, not -0.0");
        assert_eq!(s.tcp[0].retransmits, Some(3));
        let p = phases_of(&r);
        let loads: Vec<Load> = p.iter().map(|x| x.load).collect();
        assert_eq!(loads, [Load::Idle, Load::Down, Load::Idle]);
        assert_eq!(p[1].start_ns, 150 * MS);
        // Idle probes: at 0 and 0.1 s (20, 30 ms: median 25 ms); loaded: 0.2 s (10 ms),
        // 0.3 s (lost), 0.4 s (50 ms): median 30 ms, one lost of three.
        assert_eq!(s.scores.latency_idle_s, Some(0.025));
        assert_eq!(s.scores.latency_loaded_s, Some(0.030));
        assert_eq!(s.scores.probe_loss_rate, Some(1.0 / 3.0));
        // No upload phase: no upload latency.
        assert_eq!(s.scores.latency_loaded_down_s, Some(0.030));
        assert_eq!(s.scores.latency_loaded_up_s, None);
        // Mean increase (10 + 50)/2 − 25 = 5 ms: grade A (5 to 30 ms).
        assert_eq!(s.scores.bufferbloat_grade, Some("A"));
        // Downstream: replies of 5 probes, one lost: base 5 ms, extra 10, 20, 0, 40 ms;
        // median (10 + 20)/2 = 15 ms; loss 1/5.
        let down = &s.cbr[0];
        assert_eq!(down.direction, "down");
        assert_eq!((down.sent, down.received, down.lost), (5, 4, 1));
        assert!((down.delay_median_s - 0.015).abs() < 1e-12);
        assert!((down.delay_max_s - 0.040).abs() < 1e-12);
        assert_eq!(down.base_owd_s, 0.005);
        let up = &s.cbr[1];
        assert_eq!((up.sent, up.lost, up.delay_max_s), (5, 0, 0.0));
        // Traces: 5 RTT rows, the lost one NaN; 3 throughput rows.
        assert_eq!(m.rtt.rtt_s.len(), 5);
        assert!(m.rtt.rtt_s[3].is_nan());
        assert_eq!(m.rtt.load, [0, 0, 1, 1, 1]);
        assert_eq!(m.throughput.bytes, [125000, 125000, 125000]);
        assert_eq!(m.cbr.owd_s.len(), 10);
        // Phase throughput: the download phase, 375 kB in 0.3 s.
        let dl = s
            .phases
            .iter()
            .find(|x| x.phase == "down" && x.direction == "down")
            .unwrap();
        assert!((dl.throughput_bps - 10e6).abs() < 1e-6);
    }

    /// A speed test's phases one after the other: idle (20 ms), a download (four probes
    /// at 30 ms), an upload (two at 440 ms). DSLReports averages the phases' increases,
    /// (10 + 420)/2 = 215 ms: grade D (200 to 400); pooled, the mean increase would be
    /// (4 x 30 + 2 x 440)/6 − 20 = 146.7 ms, a C. AIM's increase is the larger phase's,
    /// 440 − 20 = 420 ms (−10 points; pooled, the median 30 ms gave +10): gaming is
    /// idle 20 ms (5) + no loss (10) − 10 = 5 points.
    #[test]
    fn download_and_upload_phases_are_scored_apart() {
        let r = records(
            r#"{"tool": "irtt", "duration_ns": 900000000,
            "throughput": [
              {"direction": "down", "start_ns": 200000000,
               "end_ns": [300000000, 400000000, 500000000], "bytes": [1000, 1000, 1000]},
              {"direction": "up", "start_ns": 500000000,
               "end_ns": [600000000, 700000000, 800000000], "bytes": [1000, 1000, 1000]}],
            "probes": [{"sent_ns": [0, 100000000, 250000000, 300000000, 350000000,
                450000000, 600000000, 700000000],
              "rtt_ns": [20000000, 20000000, 30000000, 30000000, 30000000, 30000000,
                440000000, 440000000],
              "owd_up_ns": null, "owd_down_ns": null,
              "fate": [0, 0, 0, 0, 0, 0, 0, 0], "bytes": 88, "role": ""}],
            "phases": []}"#,
        );
        let s = measured_result(&r, None).unwrap().summary.scores;
        assert_eq!(s.latency_idle_s, Some(0.020));
        assert_eq!(s.bufferbloat_grade, Some("D"));
        assert_eq!(s.aim_gaming_points, Some(5.0));
        // Each phase's own latency, as the test reports them: 30 ms down, 440 ms up;
        // pooled, the loaded median is 30 ms and hides the upload's.
        assert_eq!(s.latency_loaded_down_s, Some(0.030));
        assert_eq!(s.latency_loaded_up_s, Some(0.440));
        assert_eq!(s.latency_loaded_s, Some(0.030));
    }

    #[test]
    fn records_that_disagree_are_refused_by_name() {
        let r = records(
            r#"{"tool": "x", "duration_ns": 1, "throughput": [],
            "probes": [{"sent_ns": [0, 1], "rtt_ns": [1], "owd_up_ns": null,
              "owd_down_ns": null, "fate": [0, 0], "bytes": 0, "role": ""}], "phases": []}"#,
        );
        assert_eq!(
            measured_result(&r, None).unwrap_err(),
            "probes[0]: its columns differ in length"
        );
    }
}
