//! Every summary metric, computed in one place from records: the simulator's end of a
//! trial and the testbed's collection (through the bindings, from the endpoints' and
//! the router's logs) both call these functions, so a number means the same in both.

use collateral_queue::{Nanos, TrafficClass};
use serde::Deserialize;

use crate::bottleneck::Bottleneck;
pub use crate::media::summary::media_summary;
use crate::metrics::{
    quantile, quantile_by, CbrSummary, CbrTrace, ClassTrace, Meter, PhaseSummary, QueueSummary,
    Summary, TcpSummary, Timing, Traces, TrialResult,
};
use crate::quality;
use crate::rate::ser_ns;
use crate::scenario::Scenario;
pub use crate::traffic::{RealtimeRecords, DROPPED, IN_FLIGHT, LOST_ON_WIRE};
use crate::units::Direction;

/// One-way delay of a `len`-byte packet through empty queues in direction `d`: the
/// sender's access link, the bottleneck's serialisation (framing included), half the
/// RTT of propagation and the receiver's access link. The base that "additional delay"
/// is measured from, in the simulator and the testbed alike.
pub fn base_owd(sc: &Scenario, d: Direction, len: u32) -> Nanos {
    let access = ser_ns(len, sc.access_rate_bps);
    let l = sc.link(d);
    access + ser_ns(l.framing.wire_bytes(len), l.rate_bps) + sc.rtt_ns / 2 + access
}

/// The seconds measured: from the end of the warm-up to the end of the run.
fn measured_s(sc: &Scenario) -> f64 {
    (sc.duration_ns - sc.warmup_ns) as f64 / 1e9
}

/// `a / b`, NaN when `b` is 0.
pub fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        a / b
    } else {
        f64::NAN
    }
}

/// Additional delay in seconds of a packet sent at `s` that arrived at `a`: its one-way
/// delay minus `base`. Signed: a testbed packet may beat the model's base by a few µs.
#[inline]
fn extra_s(s: Nanos, a: Nanos, base: Nanos) -> f64 {
    (a as i64 - s as i64 - base as i64) as f64 / 1e9
}

/// The summary of the scenario's CBR flow `j` (flow id `flow`) from its records;
/// appends every packet to `trace` when given.
pub fn realtime_summary(
    sc: &Scenario,
    j: usize,
    flow: u32,
    rec: &RealtimeRecords,
    mut trace: Option<&mut CbrTrace>,
) -> CbrSummary {
    let cfg = &sc.cbr[j];
    let dir = cfg.direction;
    let fixed_base = base_owd(sc, dir, cfg.packet_bytes);
    let (mut sent, mut received, mut lost, mut in_queue, mut in_flight) = (0u64, 0, 0, 0, 0);
    let mut base_sum = 0u128;
    // One-way delays (ns) of the packets received, and, only when sizes differ, their
    // additional delays; with one size the additional delay is the one-way delay minus
    // a constant, so one integer sort orders both (the sort is most of this function).
    let mut owd_ns: Vec<Nanos> = Vec::with_capacity(rec.sent.len());
    let mut extra_ns: Vec<i64> = Vec::new();
    for (seq, (&s, &a)) in rec.sent.iter().zip(&rec.arrived).enumerate() {
        let len = rec.lens.get(seq).copied().unwrap_or(cfg.packet_bytes);
        // Applications' packets differ in size, and so in their base delay.
        let base = if rec.lens.is_empty() {
            fixed_base
        } else {
            base_owd(sc, dir, len)
        };
        let a = if a > sc.duration_ns && a < LOST_ON_WIRE {
            IN_FLIGHT
        } else {
            a
        };
        let arrived = a < LOST_ON_WIRE;
        if let Some(tr) = trace.as_deref_mut() {
            let (owd, extra) = if arrived {
                ((a - s) as f64 / 1e9, extra_s(s, a, base))
            } else {
                (f64::NAN, f64::NAN)
            };
            tr.flow.push(flow);
            tr.direction.push(dir.index() as u8);
            tr.seq.push(seq as u64);
            tr.sent.push(s);
            tr.bytes.push(len);
            tr.owd_s.push(owd);
            tr.extra_delay_s.push(extra);
            tr.fate.push(match a {
                IN_FLIGHT => Fate::InFlight,
                DROPPED => Fate::Dropped,
                LOST_ON_WIRE => Fate::Lost,
                _ => Fate::Arrived,
            } as u8);
        }
        if s < sc.warmup_ns {
            continue;
        }
        sent += 1;
        match a {
            IN_FLIGHT => in_flight += 1,
            DROPPED => {
                lost += 1;
                in_queue += 1;
            }
            LOST_ON_WIRE => lost += 1,
            a => {
                received += 1;
                base_sum += base as u128;
                owd_ns.push(a - s);
                if !rec.lens.is_empty() {
                    extra_ns.push(a as i64 - s as i64 - base as i64);
                }
            }
        }
    }
    owd_ns.sort_unstable();
    extra_ns.sort_unstable(); // empty with one size
                              // Read in place: no vector of seconds beside the integers (memory per packet).
    let base = fixed_base as i64;
    let delay = |i: usize| {
        if rec.lens.is_empty() {
            (owd_ns[i] as i64 - base) as f64 / 1e9
        } else {
            extra_ns[i] as f64 / 1e9
        }
    };
    let done = sent - in_flight;
    // The base delay of the packets' (mean) size.
    let base_s = if received > 0 && !rec.lens.is_empty() {
        base_sum as f64 / received as f64 / 1e9
    } else {
        fixed_base as f64 / 1e9
    };
    let n = owd_ns.len();
    let f = owd_figures(&owd_ns, lost, done);
    CbrSummary {
        flow,
        direction: dir.name(),
        sent,
        received,
        lost,
        lost_in_queue: in_queue,
        in_flight,
        loss_rate: f.loss_rate,
        base_owd_s: base_s,
        delay_median_s: quantile_by(n, 0.5, delay),
        delay_p95_s: quantile_by(n, 0.95, delay),
        delay_max_s: if n > 0 { delay(n - 1) } else { f64::NAN },
        owd_mean_s: f.owd_mean_s,
        r_factor: f.r_factor,
        mos: f.mos,
        over_100ms: f.over[0],
        over_500ms: f.over[1],
        over_1000ms: f.over[2],
        over_budget: cfg.budget_ns.map_or(f64::NAN, |b| {
            share_over(&owd_ns, lost, done, b as f64 / 1e9)
        }),
    }
}

/// What the one-way delays of a real-time flow's packets say of it: their mean, the
/// loss rate, the G.107 rating of a call at those, and the shares later than the game
/// budgets ([`quality::GAME_BUDGETS_S`]). `owd_ns`: the received packets' delays,
/// sorted; `lost` of `done` packets whose fate is known. The simulator's, the testbed's
/// and imported measurements' flows alike ([`crate::measured`]).
pub struct OwdFigures {
    pub owd_mean_s: f64,
    pub loss_rate: f64,
    pub r_factor: f64,
    pub mos: f64,
    pub over: [f64; 3],
}

pub fn owd_figures(owd_ns: &[Nanos], lost: u64, done: u64) -> OwdFigures {
    let n = owd_ns.len();
    let owd_mean_s = ratio(
        owd_ns.iter().map(|&o| o as f64 / 1e9).sum::<f64>(),
        n as f64,
    );
    let loss_rate = ratio(lost as f64, done as f64);
    let q = quality::voip_quality(owd_mean_s, loss_rate);
    OwdFigures {
        owd_mean_s,
        loss_rate,
        r_factor: q.r_factor,
        mos: q.mos,
        over: quality::GAME_BUDGETS_S.map(|b| share_over(owd_ns, lost, done, b)),
    }
}

/// The share of `done` packets lost or later than `budget_s` (`owd_ns` sorted).
pub fn share_over(owd_ns: &[Nanos], lost: u64, done: u64, budget_s: f64) -> f64 {
    let late = owd_ns.len() - owd_ns.partition_point(|&o| o as f64 / 1e9 <= budget_s);
    ratio((late as u64 + lost) as f64, done as f64)
}

/// What became of a real-time packet (the `fate` column of the `cbr` trace).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Fate {
    Arrived = 0,
    /// Dropped by a bottleneck queue.
    Dropped = 1,
    /// Lost elsewhere (on a lossy wire; in the testbed, anywhere but the router's queue).
    Lost = 2,
    /// Still in the network when the run ended.
    InFlight = 3,
}

/// What is known of a bulk TCP flow at the end of a run. The testbed's kernel TCP does
/// not report every counter the simulator keeps; those are `None` there.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TcpRecords {
    /// Application bytes delivered in order after the warm-up.
    pub bytes_delivered: u64,
    /// Times of the congestion events (fast retransmits, timeouts; in the testbed, the
    /// kernel's entries into Recovery or Loss), the warm-up included.
    pub congestion_times: Vec<Nanos>,
    pub retransmits: u64,
    pub segments_sent: Option<u64>,
    pub timeouts: Option<u64>,
    pub fast_retransmits: Option<u64>,
    /// When a finite transfer was fully acknowledged.
    pub completed: Option<Nanos>,
    /// Window reductions for ECN-Echo (the testbed's kernel does not say).
    #[serde(default)]
    pub ecn_reductions: Option<u64>,
    /// Data segments that reached the receiver with CE.
    #[serde(default)]
    pub ce_received: Option<u64>,
    /// The sender's RTT samples, one per probe interval of a workload: the self probes
    /// of the responsiveness score and the flow's progress (empty without one).
    #[serde(default)]
    pub rtt_samples: Vec<crate::scores::SelfProbe>,
}

/// The summary of the scenario's bulk TCP flow `i`.
pub fn tcp_summary(sc: &Scenario, i: usize, rec: &TcpRecords) -> TcpSummary {
    let times: Vec<f64> = rec
        .congestion_times
        .iter()
        .filter(|&&t| t >= sc.warmup_ns && t <= sc.duration_ns)
        .map(|&t| t as f64 / 1e9)
        .collect();
    let mut epochs: Vec<f64> = times.windows(2).map(|w| w[1] - w[0]).collect();
    epochs.sort_unstable_by(f64::total_cmp);
    let cfg = &sc.tcp[i];
    TcpSummary {
        flow: i as u32,
        direction: cfg.direction.name(),
        cc: cfg.cc.name(),
        goodput_bps: rec.bytes_delivered as f64 * 8.0 / measured_s(sc),
        bytes_delivered: rec.bytes_delivered,
        segments_sent: rec.segments_sent,
        retransmits: rec.retransmits,
        timeouts: rec.timeouts,
        fast_retransmits: rec.fast_retransmits,
        completed_s: rec.completed.map(|t| t as f64 / 1e9),
        ecn_reductions: rec.ecn_reductions,
        ce_received: rec.ce_received,
        congestion_events: times.len() as u64,
        epoch_mean_s: ratio(epochs.iter().sum::<f64>(), epochs.len() as f64),
        epoch_median_s: quantile(&epochs, 0.5),
    }
}

/// A bottleneck direction's counters; `in_flight`: packets still inside it at the end
/// (with the simulator's ingress).
pub fn queue_summary(b: &Bottleneck, in_flight: u64) -> QueueSummary {
    QueueSummary {
        arrivals: b.stats.arrivals,
        delivered: b.stats.delivered,
        drops: b.stats.drops,
        ce_marks: b.stats.ce_marks,
        wire_losses: b.stats.wire_losses,
        in_flight,
        max_bytes: b.stats.max_bytes,
        max_packets: b.stats.max_packets,
    }
}

/// The named phases: each from its start to the next one's (the last to the end of the
/// run); none given, one phase, "all", from the warm-up.
fn phases(sc: &Scenario) -> Vec<(String, Nanos, Nanos)> {
    let named: Vec<(String, Nanos)> = if sc.phases.is_empty() {
        vec![("all".into(), sc.warmup_ns)]
    } else {
        sc.phases
            .iter()
            .map(|p| (p.name.clone(), p.start_ns))
            .collect()
    };
    (0..named.len())
        .map(|k| {
            let end = named.get(k + 1).map_or(sc.duration_ns, |n| n.1);
            (named[k].0.clone(), named[k].1, end)
        })
        .collect()
}

/// Per phase, direction and class: drops, throughput and latency at the bottleneck,
/// from the two directions' meters (down, up).
pub fn phase_summaries(sc: &Scenario, meters: [&Meter; 2]) -> Vec<PhaseSummary> {
    let mut out = Vec::new();
    for (k, (name, start, end)) in phases(sc).into_iter().enumerate() {
        let secs = (end - start) as f64 / 1e9;
        for d in [Direction::Down, Direction::Up] {
            let counts = meters[d.index()].phase_counts(k);
            for c in TrafficClass::ALL {
                let n = &counts[c.index()];
                out.push(PhaseSummary {
                    phase: name.clone(),
                    start_s: start as f64 / 1e9,
                    end_s: end as f64 / 1e9,
                    direction: d.name().into(),
                    class: c.name().into(),
                    arrivals: n.arrivals,
                    drops: n.drops,
                    drop_rate: ratio(n.drops as f64, n.arrivals as f64),
                    throughput_bps: n.bytes as f64 * 8.0 / secs,
                    latency_mean_s: ratio(n.latency_ns as f64 / 1e9, n.departures as f64),
                });
            }
        }
    }
    out
}

/// The per-class bins of both directions as trace rows.
pub fn class_trace(sc: &Scenario, meters: [&Meter; 2], tr: &mut ClassTrace) {
    for (d, m) in meters.iter().enumerate() {
        for (b, counts) in m.bins.iter().enumerate() {
            let t = b as Nanos * sc.bin_ns;
            if t >= sc.duration_ns {
                break;
            }
            for c in TrafficClass::ALL {
                let n = &counts[c.index()];
                tr.time.push(t);
                tr.direction.push(d as u8);
                tr.class.push(c.index() as u8);
                tr.arrivals.push(n.arrivals);
                tr.drops.push(n.drops);
                tr.bytes.push(n.bytes);
                tr.latency_s
                    .push(ratio(n.latency_ns as f64 / 1e9, n.departures as f64));
            }
        }
    }
}

/// What the testbed's router reports at the end of a run: its two directions'
/// counters and the per-phase figures, computed by the functions above, and its own
/// timing (absent from reports of routers before it).
#[derive(Debug, Clone, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct RouterReport {
    pub down: QueueSummary,
    pub up: QueueSummary,
    pub phases: Vec<PhaseSummary>,
    #[serde(default)]
    pub timing: Option<RouterTiming>,
}

/// The testbed's accuracy target (README, "Emulation testbed"): the router puts 99 % of
/// frames on the wire within this of the release time the model gave them. Beyond it a
/// trial's delays are partly the router's own lateness, and the trial is flagged `late`.
pub const RELEASE_ERROR_TARGET_NS: Nanos = 500_000;

/// The router's timing from the run's origin to its end, both directions together:
/// the release error (when a frame was handed to the kernel minus its release time in
/// the model) and the router thread's context switches.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct RouterTiming {
    pub frames: u64,
    pub release_error_p50_ns: Nanos,
    pub release_error_p99_ns: Nanos,
    pub release_error_max_ns: Nanos,
    pub preemptions: u64,
    pub voluntary_switches: u64,
}

/// The trial's timing fields from the router's: seconds, and `late` against
/// [`RELEASE_ERROR_TARGET_NS`].
pub fn timing(t: &RouterTiming) -> Timing {
    let s = |ns: Nanos| Some(ns as f64 / 1e9);
    Timing {
        release_error_p50_s: s(t.release_error_p50_ns),
        release_error_p99_s: s(t.release_error_p99_ns),
        release_error_max_s: s(t.release_error_max_ns),
        router_preemptions: Some(t.preemptions),
        router_voluntary_switches: Some(t.voluntary_switches),
        late: Some((t.release_error_p99_ns > RELEASE_ERROR_TARGET_NS) as u8),
    }
}

/// The testbed's trial result, in the simulator's schema: every metric from the
/// endpoints' records and the router's report. `cbr[j]` and `tcp[i]` follow the
/// scenario's flows.
pub fn testbed_result(
    sc: &Scenario,
    tcp: &[TcpRecords],
    cbr: &[RealtimeRecords],
    router: Option<RouterReport>,
) -> Result<TrialResult, String> {
    if tcp.len() != sc.tcp.len() || cbr.len() != sc.cbr.len() {
        return Err(format!(
            "records for {} TCP and {} CBR flows; the scenario has {} and {}",
            tcp.len(),
            cbr.len(),
            sc.tcp.len(),
            sc.cbr.len()
        ));
    }
    for (j, r) in cbr.iter().enumerate() {
        if r.sent.len() != r.arrived.len() || !(r.lens.is_empty() || r.lens.len() == r.sent.len()) {
            return Err(format!("cbr[{j}]: sent, arrived and lens differ in length"));
        }
    }
    let mut traces = Traces::default();
    let n_tcp = sc.tcp.len() as u32;
    let tcp_summaries: Vec<TcpSummary> = tcp
        .iter()
        .enumerate()
        .map(|(i, r)| tcp_summary(sc, i, r))
        .collect();
    let cbr_summaries = cbr
        .iter()
        .enumerate()
        .map(|(j, r)| realtime_summary(sc, j, n_tcp + j as u32, r, Some(&mut traces.cbr)))
        .collect();
    let down_goodput_bps = crate::metrics::goodput_of(&tcp_summaries, "down");
    let scores = crate::scores::trial_scores(
        sc,
        &cbr.iter().collect::<Vec<_>>(),
        &tcp.iter()
            .map(|r| r.rtt_samples.as_slice())
            .collect::<Vec<_>>(),
        down_goodput_bps,
    );
    let router = router.unwrap_or(RouterReport {
        down: QueueSummary::default(),
        up: QueueSummary::default(),
        phases: Vec::new(),
        timing: None,
    });
    let summary = Summary {
        mode: "emulation",
        duration_s: sc.duration_ns as f64 / 1e9,
        warmup_s: sc.warmup_ns as f64 / 1e9,
        events: None,
        packets_delivered: router.down.delivered + router.up.delivered,
        down_goodput_bps,
        up_goodput_bps: crate::metrics::goodput_of(&tcp_summaries, "up"),
        tcp: tcp_summaries,
        cbr: cbr_summaries,
        web: Vec::new(),
        media: Vec::new(),
        queues: crate::metrics::Queues {
            down: router.down,
            up: router.up,
        },
        phases: router.phases,
        timing: router.timing.as_ref().map(timing).unwrap_or_default(),
        scores,
    };
    Ok(TrialResult {
        summary,
        traces,
        wall_s: 0.0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(timing: &str) -> RouterReport {
        let q = r#"{"arrivals": 0, "delivered": 0, "drops": 0, "ce_marks": 0, "wire_losses": 0,
                    "in_flight": 0, "max_bytes": 0, "max_packets": 0}"#;
        let js = format!(r#"{{"down": {q}, "up": {q}, "phases": []{timing}}}"#);
        serde_json::from_str(&js).unwrap()
    }

    fn scenario() -> Scenario {
        Scenario::from_json(
            r#"{"seed": 1, "duration_ns": 2000000000, "warmup_ns": 0,
                "down": {"rate_bps": 1000000, "queue": {"rule": "ps", "limit": 10}},
                "up": {"rate_bps": 1000000, "queue": {"rule": "ps", "limit": 10}}}"#,
        )
        .unwrap()
    }

    /// The router's figures become the trial's, in seconds; `late` is strictly beyond
    /// the target: 0.5 ms at p99 is on time, 1 ns more is late.
    #[test]
    fn a_trial_is_late_when_its_release_error_p99_passes_the_target() {
        let t = RouterTiming {
            frames: 3010,
            release_error_p50_ns: 3_000,
            release_error_p99_ns: 500_000,
            release_error_max_ns: 13_350_571,
            preemptions: 28,
            voluntary_switches: 4857,
        };
        let s = timing(&t);
        assert_eq!(s.release_error_p50_s, Some(0.000_003));
        assert_eq!(s.release_error_p99_s, Some(0.000_5));
        assert_eq!(s.release_error_max_s, Some(0.013_350_571));
        assert_eq!(
            (s.router_preemptions, s.router_voluntary_switches),
            (Some(28), Some(4857))
        );
        assert_eq!(s.late, Some(0));
        let t = RouterTiming {
            release_error_p99_ns: 500_001,
            ..t
        };
        assert_eq!(timing(&t).late, Some(1));
    }

    /// A report with the router's timing flags the testbed trial; one from a router
    /// before it (no `timing`) still reads, and the trial's timing fields are empty.
    #[test]
    fn the_testbed_summary_carries_the_routers_timing() {
        let sc = scenario();
        let late = r#", "timing": {"frames": 10, "release_error_p50_ns": 2000,
            "release_error_p99_ns": 7800000, "release_error_max_ns": 20000000,
            "preemptions": 2245, "voluntary_switches": 9}"#;
        let r = testbed_result(&sc, &[], &[], Some(report(late))).unwrap();
        assert_eq!(r.summary.timing.late, Some(1));
        assert_eq!(r.summary.timing.release_error_p99_s, Some(0.0078));
        assert_eq!(r.summary.timing.router_preemptions, Some(2245));
        let r = testbed_result(&sc, &[], &[], Some(report(""))).unwrap();
        assert_eq!(r.summary.timing, Timing::default());
        assert_eq!(r.summary.timing.late, None);
    }
}
