//! The responsiveness test's part of a trial's scores (draft-ietf-ippm-responsiveness;
//! [`crate::ramp`], [`crate::resp_probe`]): the foreign probes' three times, the self
//! probes' wait in the send buffer, the probe rates against the draft's limits, and
//! where the ramp saturated and how many flows it held.

use super::{Scores, SelfProbe};
use crate::ramp::Ramp;
use crate::resp_probe::{ForeignProbe, ProbeRate};
use crate::rrul::{Workload, WorkloadKind};
use crate::scenario::Scenario;
use crate::units::Nanos;

/// What the responsiveness test recorded beside the probes' and flows' records (all
/// empty for other workloads and for the testbed, which does not run it).
#[derive(Debug, Clone, Copy, Default)]
pub struct RespRecords<'a> {
    pub foreign: &'a [ForeignProbe],
    pub ramp: Option<&'a Ramp>,
    /// Foreign probes not launched because every probe connection was still busy.
    pub skipped: u64,
}

/// When the ramp saturated: the end of its saturation interval.
pub fn ramp_saturated_at(r: &Ramp, w: &Workload) -> Option<Nanos> {
    r.saturated_interval()
        .map(|k| w.idle_ns + (k as Nanos + 1) * w.saturation_interval_ns)
}

/// The self probes sent from `from` to `end`, ms: each flow's RTT sample plus, for the
/// responsiveness test, its wait behind the sender's unsent bytes.
pub fn self_probe_ms(w: &Workload, logs: &[&[SelfProbe]], from: Nanos, end: Nanos) -> Vec<f64> {
    let buffer = (w.kind == WorkloadKind::Responsiveness).then_some(w.send_buffer);
    logs.iter()
        .flat_map(|v| v.iter())
        .filter(|p| p.sent_ns >= from && p.sent_ns <= end)
        .map(|p| (p.rtt_ns + buffer.map_or(0, |b| b.wait_ns(p.rtt_ns))) as f64 / 1e6)
        .collect()
}

/// The foreign probes launched from `from` to `end` and the times, ms, of those that
/// completed each stage by `end`.
#[derive(Debug, Clone, Default)]
pub struct ForeignTimes {
    pub launched: u64,
    pub tcp: Vec<f64>,
    pub tls: Vec<f64>,
    pub http: Vec<f64>,
}

impl ForeignTimes {
    pub fn of(probes: &[ForeignProbe], from: Nanos, end: Nanos) -> Self {
        let mut t = ForeignTimes::default();
        let ms = |x: Nanos| x as f64 / 1e6;
        for p in probes
            .iter()
            .filter(|p| p.sent_ns >= from && p.sent_ns <= end)
        {
            t.launched += 1;
            t.tcp.extend(p.tcp_ns.map(ms));
            t.tls.extend(p.tls_ns.map(ms));
            t.http.extend(p.http_ns.map(ms));
        }
        t
    }

    pub fn times<'a>(&'a self, self_http: &'a [f64]) -> super::responsiveness::ProbeTimes<'a> {
        super::responsiveness::ProbeTimes {
            tcp: &self.tcp,
            tls: &self.tls,
            http: &self.http,
            self_http,
        }
    }
}

/// The probe rates of the loaded span (from `loaded_from` to the end), for the
/// responsiveness test against the draft's MPS and PTC (capacity: both directions' line
/// rates, which the load fills at once), and the ramp's figures; the rest of [`Scores`]
/// left empty.
pub fn probe_and_ramp_fields(
    sc: &Scenario,
    resp: &RespRecords,
    foreign: u64,
    self_: u64,
    loaded_from: Nanos,
) -> Scores {
    let span = sc.duration_ns.saturating_sub(loaded_from);
    let capacity = (sc.down.rate_bps + sc.up.rate_bps) as f64;
    let rate = (span > 0).then(|| ProbeRate::of(foreign, self_, span, capacity));
    // The draft's byte estimates and limits are its test's: RRUL's UDP pings are a few
    // hundred bytes, and its self probes the flows' own segments, which cost nothing.
    let draft = rate.filter(|_| {
        sc.workload
            .as_ref()
            .is_some_and(|w| w.kind == WorkloadKind::Responsiveness)
    });
    let ramp = resp.ramp;
    Scores {
        foreign_probes_per_s: rate.map(|r| r.foreign_per_s),
        self_probes_per_s: rate.map(|r| r.self_per_s),
        probe_capacity_share: draft.map(|r| r.capacity_share),
        probe_rate_within_limits: draft.map(|r| u8::from(r.within_limits())),
        foreign_probes_skipped: ramp.map(|_| resp.skipped),
        ramp_saturated_interval: ramp.and_then(|r| r.saturated_interval()).map(|k| k as u64),
        ramp_flows_down: ramp.map(|r| r.flows[0]),
        ramp_flows_up: ramp.map(|r| r.flows[1]),
        ramp_flows_per_interval: ramp.map(|r| r.history_text()),
        ..Scores::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;

    /// Three probes from 10 s: one complete (30, 30, 40 ms), one with only its
    /// handshake, one before 10 s (not counted). Self probes of 40 ms: with the draft's
    /// 5 ms low-water mark 45 ms, autotuned 80 ms, RRUL's bare 40 ms.
    #[test]
    fn foreign_times_and_self_probe_waits() {
        let p = [
            ForeignProbe {
                sent_ns: 9_000 * MS,
                tcp_ns: Some(MS),
                tls_ns: Some(MS),
                http_ns: Some(MS),
            },
            ForeignProbe {
                sent_ns: 10_000 * MS,
                tcp_ns: Some(30 * MS),
                tls_ns: Some(30 * MS),
                http_ns: Some(40 * MS),
            },
            ForeignProbe {
                sent_ns: 10_200 * MS,
                tcp_ns: Some(30 * MS),
                ..Default::default()
            },
        ];
        let t = ForeignTimes::of(&p, 10_000 * MS, 20_000 * MS);
        assert_eq!(t.launched, 2);
        assert_eq!((t.tcp.len(), t.tls.len(), t.http.len()), (2, 1, 1));
        assert_eq!(t.http, [40.0]);
        let log = [SelfProbe {
            sent_ns: 12_000 * MS,
            rtt_ns: 40 * MS,
            acked_bytes: 0,
        }];
        let mut w = Workload {
            kind: WorkloadKind::Responsiveness,
            ..Workload::default()
        };
        assert_eq!(self_probe_ms(&w, &[&log], 10_000 * MS, 20_000 * MS), [45.0]);
        w.send_buffer = crate::resp_probe::SendBuffer::Autotuned;
        assert_eq!(self_probe_ms(&w, &[&log], 10_000 * MS, 20_000 * MS), [80.0]);
        w.kind = WorkloadKind::Rrul;
        assert_eq!(self_probe_ms(&w, &[&log], 10_000 * MS, 20_000 * MS), [40.0]);
        assert!(self_probe_ms(&w, &[&log], 13_000 * MS, 20_000 * MS).is_empty());
    }
}
