//! What a trial measures: per-flow summaries after the warm-up, and optional time
//! series kept as columns (struct of arrays) so they cross to numpy/Arrow without copies
//! of rows.

use collateral_queue::{Nanos, Packet, PacketKind, TrafficClass};
use serde::{Deserialize, Serialize};

/// The class a packet is *measured* in: TCP (data, ACKs, set-up), tagged UDP (a
/// non-zero tag byte) or other UDP. Independent of how a class-based discipline is
/// configured to classify, so every discipline is measured alike.
#[inline]
pub fn measured_class(pkt: &Packet) -> TrafficClass {
    match pkt.kind {
        PacketKind::Cbr if pkt.dscp() != 0 => TrafficClass::Tagged,
        PacketKind::Cbr => TrafficClass::Other,
        _ => TrafficClass::Tcp,
    }
}

/// What a bottleneck direction counts for one class over a stretch of time.
#[derive(Debug, Clone, Copy, Default)]
pub struct ClassCount {
    /// Packets offered to the queue, and of those dropped (counted at arrival time).
    pub arrivals: u64,
    pub drops: u64,
    /// Packets that finished transmission, their bytes (IP lengths) and their summed
    /// latency through the bottleneck: queueing plus serialisation (counted at the end
    /// of transmission).
    pub departures: u64,
    pub bytes: u64,
    pub latency_ns: u128,
}

/// Per-class counters of one bottleneck direction, in fixed time bins and per phase.
/// Every method takes `now`. Counts may come in any order (the drop-tail link counts a
/// departure when the packet arrives); they are cheapest in time order.
#[derive(Debug, Clone)]
pub struct Meter {
    bin_ns: Nanos,
    /// The end of the run: the testbed's router keeps forwarding after it, uncounted.
    end: Nanos,
    /// Per-bin counters, only for the `classes` trace (empty without it: no per-packet
    /// cost for a trace the trial did not ask for).
    pub bins: Vec<[ClassCount; 3]>,
    /// Phase start times (increasing) and the counters of the phases that have ended.
    phase_starts: Vec<Nanos>,
    phases: Vec<[ClassCount; 3]>,
    /// The counters of the phase in progress, `phase` (`None` before the first phase and
    /// after the end: counted, then discarded), valid for `now` in `[from, until)`.
    /// Counts mostly come in time order, so a packet costs two comparisons and an add; the
    /// counters move to `phases` when a count falls outside the span.
    current: [ClassCount; 3],
    phase: Option<usize>,
    from: Nanos,
    until: Nanos,
}

impl ClassCount {
    fn add(&mut self, o: &ClassCount) {
        self.arrivals += o.arrivals;
        self.drops += o.drops;
        self.departures += o.departures;
        self.bytes += o.bytes;
        self.latency_ns += o.latency_ns;
    }
}

impl Meter {
    /// `bins`: keep the per-bin counters of the `classes` trace.
    pub fn new(duration: Nanos, bin_ns: Nanos, phase_starts: Vec<Nanos>, bins: bool) -> Self {
        let n = if bins {
            (duration / bin_ns) as usize + 1
        } else {
            0
        };
        Meter {
            bin_ns,
            end: duration,
            bins: vec![[ClassCount::default(); 3]; n],
            phases: vec![[ClassCount::default(); 3]; phase_starts.len()],
            phase_starts,
            current: [ClassCount::default(); 3],
            phase: None,
            // Empty: the first count finds its phase.
            from: 1,
            until: 0,
        }
    }

    /// The counters of phase `k` (one per class).
    pub fn phase_counts(&self, k: usize) -> [ClassCount; 3] {
        let mut c = self.phases[k];
        if self.phase == Some(k) {
            for (a, b) in c.iter_mut().zip(&self.current) {
                a.add(b);
            }
        }
        c
    }

    /// Moves to the phase of `now`: the current counters go to their phase.
    #[cold]
    fn switch(&mut self, now: Nanos) {
        if let Some(k) = self.phase {
            for (a, b) in self.phases[k].iter_mut().zip(&self.current) {
                a.add(b);
            }
        }
        self.current = [ClassCount::default(); 3];
        if now > self.end {
            (self.phase, self.from, self.until) = (None, self.end + 1, Nanos::MAX);
            return;
        }
        // `p` counts the phases started by `now`; phase p − 1 is the current one.
        let p = self.phase_starts.partition_point(|&s| s <= now);
        let until = self.phase_starts.get(p).copied().unwrap_or(Nanos::MAX);
        (self.phase, self.from, self.until) = match p {
            0 => (None, 0, until),
            _ => (
                Some(p - 1),
                self.phase_starts[p - 1],
                until.min(self.end + 1),
            ),
        };
    }

    /// Applies `f` to the counters of `pkt`'s class in the bin and the phase of `now`.
    #[inline]
    fn count(&mut self, now: Nanos, pkt: &Packet, f: impl Fn(&mut ClassCount)) {
        if now < self.from || now >= self.until {
            self.switch(now);
        }
        let c = measured_class(pkt).index();
        if !self.bins.is_empty() && now <= self.end {
            let b = ((now / self.bin_ns) as usize).min(self.bins.len() - 1);
            f(&mut self.bins[b][c]);
        }
        f(&mut self.current[c]);
    }

    #[inline]
    pub fn on_arrival(&mut self, now: Nanos, pkt: &Packet) {
        self.count(now, pkt, |c| c.arrivals += 1);
    }

    #[inline]
    pub fn on_drop(&mut self, now: Nanos, pkt: &Packet) {
        self.count(now, pkt, |c| c.drops += 1);
    }

    /// [`on_arrival`](Self::on_arrival) at `now` and [`on_departure`](Self::on_departure)
    /// at `end` in one step when both fall in the phase in progress and there are no
    /// bins (the common case: one class lookup and one span check).
    #[inline]
    pub fn on_arrival_and_departure(&mut self, now: Nanos, end: Nanos, pkt: &Packet) {
        if !self.bins.is_empty() || now < self.from || end >= self.until {
            self.on_arrival(now, pkt);
            self.on_departure(end, pkt);
            return;
        }
        let c = &mut self.current[measured_class(pkt).index()];
        c.arrivals += 1;
        c.departures += 1;
        c.bytes += pkt.len as u64;
        c.latency_ns += end.saturating_sub(pkt.arrived) as u128;
    }

    #[inline]
    pub fn on_departure(&mut self, now: Nanos, pkt: &Packet) {
        let lat = now.saturating_sub(pkt.arrived) as u128;
        let len = pkt.len as u64;
        self.count(now, pkt, |c| {
            c.departures += 1;
            c.bytes += len;
            c.latency_ns += lat;
        });
    }
}

/// JSON has no NaN: serde_json writes it as `null`; read `null` back as NaN.
fn nan_if_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

/// One class of one direction over one phase.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhaseSummary {
    pub phase: String,
    pub start_s: f64,
    pub end_s: f64,
    pub direction: String,
    pub class: String,
    pub arrivals: u64,
    pub drops: u64,
    /// drops / arrivals (NaN without arrivals).
    #[serde(deserialize_with = "nan_if_null")]
    pub drop_rate: f64,
    /// Bytes (IP lengths) through the bottleneck per second of the phase, as bit/s.
    pub throughput_bps: f64,
    /// Mean time from arrival at the bottleneck queue to the end of transmission.
    #[serde(deserialize_with = "nan_if_null")]
    pub latency_mean_s: f64,
}

/// A group of web users over the measured part of the run (after the warm-up).
#[derive(Debug, Clone, Default, Serialize)]
pub struct WebSummary {
    pub users: u32,
    pub pages_started: u64,
    pub pages_completed: u64,
    pub objects_completed: u64,
    /// Connections opened (one per object).
    pub connections: u64,
    /// SYNs and requests sent again after the set-up timer expired.
    pub setup_retries: u64,
    /// Reply bytes of the completed objects.
    pub reply_bytes: u64,
    pub segments_sent: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    /// Object response time, from the first SYN to the last byte at the browser.
    pub response_mean_s: f64,
    pub response_median_s: f64,
    pub response_p95_s: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct TcpSummary {
    pub flow: u32,
    pub direction: &'static str,
    pub cc: &'static str,
    /// Application bytes delivered in order after the warm-up, per second.
    pub goodput_bps: f64,
    pub bytes_delivered: u64,
    /// Segments sent, retransmissions included (`None` where the stack does not say:
    /// the testbed's kernel TCP).
    pub segments_sent: Option<u64>,
    pub retransmits: u64,
    pub timeouts: Option<u64>,
    pub fast_retransmits: Option<u64>,
    /// When a finite transfer was fully acknowledged (None for bulk or unfinished).
    pub completed_s: Option<f64>,
    pub ecn_reductions: Option<u64>,
    pub ce_received: Option<u64>,
    /// Congestion events (fast retransmits and timeouts) after the warm-up.
    pub congestion_events: u64,
    /// Congestion epochs: times between consecutive congestion events after the warm-up.
    pub epoch_mean_s: f64,
    pub epoch_median_s: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct CbrSummary {
    pub flow: u32,
    pub direction: &'static str,
    /// Packets sent after the warm-up.
    pub sent: u64,
    pub received: u64,
    pub lost: u64,
    /// Of the lost packets, those a bottleneck queue dropped.
    pub lost_in_queue: u64,
    /// Still in the network when the trial ended (neither received nor lost).
    pub in_flight: u64,
    /// lost / (sent − in_flight).
    pub loss_rate: f64,
    /// One-way delay through empty queues.
    pub base_owd_s: f64,
    /// Additional (queueing) delay = OWD − base OWD, over the received packets.
    pub delay_median_s: f64,
    pub delay_p95_s: f64,
    pub delay_max_s: f64,
    /// Mean one-way delay of the received packets (base + queueing).
    pub owd_mean_s: f64,
    /// ITU-T G.107 rating and MOS of a G.711 (PLC) call with this mean one-way delay
    /// and loss (network only; see `quality`).
    pub r_factor: f64,
    pub mos: f64,
    /// Share of packets (lost ones included) whose one-way delay exceeded the games'
    /// budgets: 100 ms (first-person shooters), 500 ms (MMOs), 1000 ms (strategy).
    pub over_100ms: f64,
    pub over_500ms: f64,
    pub over_1000ms: f64,
    /// Share later than the flow's own `budget_ns` (NaN without one).
    pub over_budget: f64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueueSummary {
    pub arrivals: u64,
    pub delivered: u64,
    pub drops: u64,
    /// Packets that left with CE set by the queue (ECN marks).
    pub ce_marks: u64,
    pub wire_losses: u64,
    /// Packets still inside the link (queue, wire, propagation) at the end.
    pub in_flight: u64,
    pub max_bytes: u64,
    pub max_packets: u32,
}

#[derive(Debug, Clone, Serialize)]
pub struct Queues {
    pub down: QueueSummary,
    pub up: QueueSummary,
}

#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// "simulation" or "emulation" (the testbed).
    pub mode: &'static str,
    pub duration_s: f64,
    pub warmup_s: f64,
    /// Events processed (the benchmark's unit of work; `None` in the testbed).
    pub events: Option<u64>,
    /// Packets the bottleneck carried to the far side (for events per packet).
    pub packets_delivered: u64,
    /// Goodput of all TCP flows of a direction together: the link's useful share, one
    /// column however many flows a sweep has.
    pub down_goodput_bps: f64,
    pub up_goodput_bps: f64,
    pub tcp: Vec<TcpSummary>,
    pub cbr: Vec<CbrSummary>,
    pub web: Vec<WebSummary>,
    /// The video call, if the scenario has one (absent otherwise, so the summaries
    /// of trials without one read as they did before calls existed).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub media: Vec<crate::media::summary::MediaSummary>,
    pub queues: Queues,
    /// Per phase, direction and class (see [`PhaseSummary`]).
    pub phases: Vec<PhaseSummary>,
    /// The testbed's own timing, fields of the trial (all `None` in the simulator).
    #[serde(flatten)]
    pub timing: Timing,
    /// Responsiveness scores, fields of the trial (all `None` without a workload).
    #[serde(flatten)]
    pub scores: crate::scores::Scores,
}

/// How closely the testbed's router kept the model's clock during the trial: how late
/// frames left against the release times the model gave them, and how often the router
/// lost its CPU. A trial whose release error p99 exceeds the accuracy target
/// ([`crate::measure::RELEASE_ERROR_TARGET_NS`]) is `late`: its delays hold the
/// router's lateness as well as the queue's. `None` throughout in the simulator.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Timing {
    pub release_error_p50_s: Option<f64>,
    pub release_error_p99_s: Option<f64>,
    pub release_error_max_s: Option<f64>,
    /// Involuntary context switches of the router's thread (another task took its CPU).
    pub router_preemptions: Option<u64>,
    /// Voluntary ones (the router slept waiting for a frame or a release).
    pub router_voluntary_switches: Option<u64>,
    /// 1 when beyond the accuracy target, else 0.
    pub late: Option<u8>,
}

/// The sum of the goodput of `tcp`'s flows that go `direction` ("down" or "up"); 0
/// without any (`+ 0.0`: an empty `f64` sum is -0.0, which a table shows as "-0").
pub fn goodput_of(tcp: &[TcpSummary], direction: &str) -> f64 {
    tcp.iter()
        .filter(|t| t.direction == direction)
        .map(|t| t.goodput_bps)
        .sum::<f64>()
        + 0.0
}

/// cwnd and ssthresh (segments) of each TCP flow, a row per change.
#[derive(Debug, Clone, Default)]
pub struct CwndTrace {
    pub time: Vec<Nanos>,
    pub flow: Vec<u32>,
    pub cwnd: Vec<u32>,
    pub ssthresh: Vec<u32>,
}

/// Queue occupancy, a row per change.
#[derive(Debug, Clone, Default)]
pub struct QueueTrace {
    pub time: Vec<Nanos>,
    pub direction: Vec<u8>,
    pub bytes: Vec<u64>,
    pub packets: Vec<u32>,
}

/// Every CBR packet: when it was sent, its size, its one-way delay (NaN if it did not
/// arrive) and its fate (see [`crate::measure::Fate`]).
#[derive(Debug, Clone, Default)]
pub struct CbrTrace {
    pub flow: Vec<u32>,
    /// The flow's direction ([`crate::units::Direction::index`]): a trace read alone
    /// says which way each packet went.
    pub direction: Vec<u8>,
    pub seq: Vec<u64>,
    pub sent: Vec<Nanos>,
    pub bytes: Vec<u32>,
    pub owd_s: Vec<f64>,
    pub extra_delay_s: Vec<f64>,
    pub fate: Vec<u8>,
}

/// Every drop at a bottleneck queue (or on a lossy wire).
#[derive(Debug, Clone, Default)]
pub struct DropTrace {
    pub time: Vec<Nanos>,
    pub direction: Vec<u8>,
    pub flow: Vec<u32>,
    pub bytes: Vec<u32>,
}

/// Congestion events of the TCP senders: 0 = fast retransmit, 1 = timeout.
#[derive(Debug, Clone, Default)]
pub struct CongestionTrace {
    pub time: Vec<Nanos>,
    pub flow: Vec<u32>,
    pub kind: Vec<u8>,
}

/// Per-class counters of each bottleneck direction per time bin: a row per bin,
/// direction and class (0 TCP, 1 tagged, 2 other).
#[derive(Debug, Clone, Default)]
pub struct ClassTrace {
    pub time: Vec<Nanos>,
    pub direction: Vec<u8>,
    pub class: Vec<u8>,
    pub arrivals: Vec<u64>,
    pub drops: Vec<u64>,
    pub bytes: Vec<u64>,
    /// Mean bottleneck latency of the bin's departures (NaN without departures).
    pub latency_s: Vec<f64>,
}

#[derive(Debug, Clone, Default)]
pub struct Traces {
    pub cwnd: CwndTrace,
    pub queue: QueueTrace,
    pub cbr: CbrTrace,
    pub drops: DropTrace,
    pub congestion: CongestionTrace,
    pub classes: ClassTrace,
    pub media: crate::media::summary::MediaTrace,
}

#[derive(Debug, Clone)]
pub struct TrialResult {
    pub summary: Summary,
    pub traces: Traces,
    /// Wall-clock seconds the trial took: run metadata, not a result (it is not
    /// reproducible, so it stays out of the summary).
    pub wall_s: f64,
}

/// The `q`-quantile of sorted data (linear interpolation between closest ranks, numpy's
/// default), NaN when empty.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    quantile_by(sorted.len(), q, |i| sorted[i])
}

/// [`quantile`] of `n` sorted values read through `at`, for values kept in another form.
pub fn quantile_by(n: usize, q: f64, at: impl Fn(usize) -> f64) -> f64 {
    if n == 0 {
        return f64::NAN;
    }
    let pos = q * (n - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    at(lo) + (at(hi) - at(lo)) * (pos - lo as f64)
}

#[cfg(test)]
mod tests {
    use super::{quantile, Meter};
    use collateral_queue::{Packet, PacketKind};

    #[test]
    fn bins_only_for_the_classes_trace_phases_always() {
        // 10 s in 1 s bins, phases from 0 and 5 s; two packets at 2 s and 7 s.
        let p = Packet::new(PacketKind::Data, 0, 1500, 0, 0);
        for bins in [false, true] {
            let mut m = Meter::new(10_000_000_000, 1_000_000_000, vec![0, 5_000_000_000], bins);
            m.on_arrival(2_000_000_000, &p);
            m.on_arrival(7_000_000_000, &p);
            let arrivals: Vec<u64> = (0..2).map(|k| m.phase_counts(k)[0].arrivals).collect();
            assert_eq!(arrivals, [1, 1]);
            if bins {
                assert_eq!(m.bins.len(), 11);
                assert_eq!((m.bins[2][0].arrivals, m.bins[7][0].arrivals), (1, 1));
            } else {
                assert!(m.bins.is_empty());
            }
        }
    }

    #[test]
    fn phases_count_their_span_only_in_any_order() {
        // Phases from 2 s and 6 s of a 10 s run: a count before 2 s or after 10 s is
        // nobody's; the counts may come out of order (each finds its phase).
        let p = Packet::new(PacketKind::Data, 0, 1500, 0, 0);
        let mut m = Meter::new(
            10_000_000_000,
            1_000_000_000,
            vec![2_000_000_000, 6_000_000_000],
            false,
        );
        let s = 1_000_000_000;
        for t in [
            s,
            2 * s,
            3 * s,
            7 * s,
            5 * s,
            10 * s,
            10 * s + 1,
            6 * s - 1,
            6 * s,
        ] {
            m.on_arrival(t, &p);
        }
        let arrivals: Vec<u64> = (0..2).map(|k| m.phase_counts(k)[0].arrivals).collect();
        // [2, 6): 2 s, 3 s, 5 s, 6 s − 1 ns; [6, 10]: 7 s, 10 s, 6 s.
        assert_eq!(arrivals, [4, 3]);
    }

    #[test]
    fn quantile_matches_numpy_linear() {
        // numpy.quantile([1, 2, 3, 4], 0.5) = 2.5; 0.95 -> 3.85; 0 -> 1; 1 -> 4.
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(quantile(&v, 0.5), 2.5);
        assert!((quantile(&v, 0.95) - 3.85).abs() < 1e-12);
        assert_eq!(quantile(&v, 0.0), 1.0);
        assert_eq!(quantile(&v, 1.0), 4.0);
        assert!(quantile(&[], 0.5).is_nan());
    }
}
