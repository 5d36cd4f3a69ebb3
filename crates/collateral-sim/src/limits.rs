//! What one trial may ask of the core, checked before anything is allocated.
//!
//! Every value a scenario carries is bounded so that the arithmetic on it cannot
//! overflow (times, rates and sizes stay far below `u64::MAX` when added or multiplied
//! the way the model does), and the memory a trial will hold (per-bin counters, each
//! real-time packet's record, per-flow state) is estimated from the scenario and refused
//! above [`MEMORY_BUDGET`] with the key that asked for it. What cannot be known in
//! advance (trace rows, queued packets, pending events) is watched while the trial runs
//! ([`Usage`]) and ends it with an error, never an abort.
//!
//! Errors start with the scenario's JSON key path (`cbr[0].interval_ns: …`), so the
//! Python side can name its own option for it.

use std::mem::size_of;

use collateral_queue::{Ecn, Nanos, Packet};

use crate::metrics::ClassCount;
use crate::scenario::{Queue, Scenario};
use crate::tcp::sack_scoreboard::Scoreboard;
use crate::tcp::TcpConfig;

/// Seconds in nanoseconds.
const S: Nanos = 1_000_000_000;

/// The longest time any field may hold: 10⁶ s (11.6 days). Sums of a few such times
/// and products with packet sizes stay far below `u64::MAX` (1.8·10¹⁹).
pub const MAX_TIME_NS: Nanos = 1_000_000 * S;
/// The fastest link: 10 Tbit/s.
pub const MAX_RATE_BPS: u64 = 10_000_000_000_000;
/// The largest IP packet (the 16-bit total length of RFC 791).
pub const MAX_PACKET_BYTES: u64 = 65_535;
/// Queue limits are 32-bit, as in Linux's qdiscs (`tc-pfifo(8)`, `tc-bfifo(8)`).
pub const MAX_QUEUE_LIMIT: u64 = u32::MAX as u64;
/// The largest TCP window: 2^30 bytes (RFC 7323 §2.3, window scale 14).
pub const MAX_WINDOW_BYTES: u64 = 1 << 30;
/// The largest initial window, segments (the scoreboard starts at four times it).
pub const MAX_INITIAL_CWND: u32 = 1 << 16;
/// Flows of each kind: beyond these a home-link trial is no longer about a home link,
/// and its run time grows past minutes.
pub const MAX_TCP_FLOWS: usize = 10_000;
pub const MAX_CBR_FLOWS: usize = 10_000;
/// Web users × parallel connections, summed over the groups.
pub const MAX_WEB_SLOTS: usize = 100_000;
/// What one trial may hold in memory: 4 GiB (two workers fit on an 8 GB machine beside
/// Python).
pub const MEMORY_BUDGET: u64 = 4 << 30;
/// How often (in events) a running trial compares its memory with the budget.
pub const USAGE_CHECK_EVERY: u64 = 1 << 16;

/// Bytes of one real-time packet's record (send time, fate, size).
const CBR_RECORD_BYTES: u64 = 8 + 8 + 4;
/// Per-flow state beside the scoreboard: sender, receiver, congestion control.
const FLOW_BYTES: u64 = 4096;

fn time(key: &str, v: Nanos) -> Result<(), String> {
    if v > MAX_TIME_NS {
        return Err(format!(
            "{key}: {} s is above the limit of {} s",
            v / S,
            MAX_TIME_NS / S
        ));
    }
    Ok(())
}

fn rate(key: &str, v: u64) -> Result<(), String> {
    if v == 0 || v > MAX_RATE_BPS {
        return Err(format!(
            "{key}: {v} bit/s is outside 1 bit/s … {} bit/s",
            MAX_RATE_BPS
        ));
    }
    Ok(())
}

fn size(key: &str, v: u64, min: u64) -> Result<(), String> {
    if v < min || v > MAX_PACKET_BYTES {
        return Err(format!(
            "{key}: {v} bytes is outside {min} … {MAX_PACKET_BYTES} (an IP packet)"
        ));
    }
    Ok(())
}

fn gib(b: u64) -> String {
    format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64)
}

/// Checks every bound above; the first one broken is the error.
pub fn check(sc: &Scenario) -> Result<(), String> {
    time("duration_ns", sc.duration_ns)?;
    time("rtt_ns", sc.rtt_ns)?;
    if sc.rtt_ns == 0 {
        // No path has zero propagation delay; the Python side refuses it too, so both
        // entry points answer alike.
        return Err("rtt_ns: must be positive".into());
    }
    time("bin_ns", sc.bin_ns)?;
    rate("access_rate_bps", sc.access_rate_bps)?;
    for (name, l) in [("down", &sc.down), ("up", &sc.up)] {
        rate(&format!("{name}.rate_bps"), l.rate_bps)?;
        if let Queue::DropTail(q) = &l.queue {
            if q.limit > MAX_QUEUE_LIMIT {
                return Err(format!(
                    "{name}.queue.limit: {} is above the limit of {MAX_QUEUE_LIMIT}",
                    q.limit
                ));
            }
        }
        if !l.loss_rate.is_finite() {
            return Err(format!("{name}.loss_rate: must be a number in [0, 1)"));
        }
    }
    if sc.tcp.len() > MAX_TCP_FLOWS {
        return Err(format!(
            "tcp: {} flows is above the limit of {MAX_TCP_FLOWS}",
            sc.tcp.len()
        ));
    }
    if sc.cbr.len() > MAX_CBR_FLOWS {
        return Err(format!(
            "cbr: {} flows is above the limit of {MAX_CBR_FLOWS}",
            sc.cbr.len()
        ));
    }
    let slots: usize = sc.web.iter().map(|w| w.slots()).sum();
    if slots > MAX_WEB_SLOTS {
        return Err(format!(
            "web: {slots} users × parallel connections is above the limit of {MAX_WEB_SLOTS}"
        ));
    }
    for (i, t) in sc.tcp.iter().enumerate() {
        tcp(&format!("tcp[{i}]"), t)?;
    }
    for (i, w) in sc.web.iter().enumerate() {
        time(&format!("web[{i}].start_ns"), w.start_ns)?;
        if let Some(s) = w.stop_ns {
            time(&format!("web[{i}].stop_ns"), s)?;
        }
        tcp(&format!("web[{i}].tcp"), &w.tcp)?;
    }
    for (i, c) in sc.cbr.iter().enumerate() {
        let k = |f: &str| format!("cbr[{i}].{f}");
        size(&k("packet_bytes"), c.packet_bytes as u64, 1)?;
        time(&k("interval_ns"), c.interval_ns)?;
        time(&k("jitter_ns"), c.jitter_ns)?;
        if c.tag > 63 {
            return Err(format!("{}: {} is not a DSCP (0..=63)", k("tag"), c.tag));
        }
        if c.ecn == Ecn::Ce {
            return Err(format!(
                "{}: a source sends not_ect, ect0 or ect1, not ce",
                k("ecn")
            ));
        }
        if let Some(s) = c.start_ns {
            time(&k("start_ns"), s)?;
        }
        if let Some(b) = c.budget_ns {
            time(&k("budget_ns"), b)?;
        }
        if let Some(s) = c.stop_ns {
            time(&k("stop_ns"), s)?;
        }
    }
    for (i, p) in sc.phases.iter().enumerate() {
        time(&format!("phases[{i}].start_ns"), p.start_ns)?;
    }
    memory(sc)
}

/// A TCP flow's times, sizes and window.
fn tcp(key: &str, t: &TcpConfig) -> Result<(), String> {
    let k = |f: &str| format!("{key}.{f}");
    time(&k("start_ns"), t.start_ns)?;
    if let Some(s) = t.stop_ns {
        time(&k("stop_ns"), s)?;
    }
    time(&k("extra_delay_ns"), t.extra_delay_ns)?;
    time(&k("delack_ns"), t.delack_ns)?;
    time(&k("rto_min_ns"), t.rto_min_ns)?;
    time(&k("rto_max_ns"), t.rto_max_ns)?;
    time(&k("rto_initial_ns"), t.rto_initial_ns)?;
    size(&k("data_bytes"), t.data_bytes as u64, 41)?;
    size(&k("ack_bytes"), t.ack_bytes as u64, 1)?;
    if t.mss as u64 >= t.data_bytes as u64 {
        return Err(format!("{}: must be below data_bytes", k("mss")));
    }
    if t.cc.scalable() && t.ecn != crate::tcp::TcpEcn::L4s {
        return Err(format!(
            "{}: {} is a scalable congestion control and needs ecn = l4s",
            k("cc"),
            t.cc.name()
        ));
    }
    let window = t.rwnd_segments as u64 * t.mss as u64;
    if window > MAX_WINDOW_BYTES {
        return Err(format!(
            "{}: {} segments of {} bytes is above TCP's largest window, 2^30 bytes",
            k("rwnd_segments"),
            t.rwnd_segments,
            t.mss
        ));
    }
    if t.initial_cwnd > MAX_INITIAL_CWND {
        return Err(format!(
            "{}: {} is above the limit of {MAX_INITIAL_CWND} segments",
            k("initial_cwnd"),
            t.initial_cwnd
        ));
    }
    Ok(())
}

/// The memory the scenario fixes in advance, against [`MEMORY_BUDGET`]; an error names
/// the largest part.
fn memory(sc: &Scenario) -> Result<(), String> {
    let bins = if sc.trace.classes {
        (sc.duration_ns / sc.bin_ns.max(1) + 1) * 2 * 3 * size_of::<ClassCount>() as u64
    } else {
        0
    };
    let mut parts: Vec<(String, u64, String)> = vec![(
        "bin_ns".into(),
        bins,
        format!(
            "{} bins of per-class counters",
            sc.duration_ns / sc.bin_ns.max(1) + 1
        ),
    )];
    for (i, c) in sc.cbr.iter().enumerate() {
        if c.app.is_none() {
            let n = sc.duration_ns / c.interval_ns.max(1);
            parts.push((
                format!("cbr[{i}].interval_ns"),
                n.saturating_mul(CBR_RECORD_BYTES),
                format!("{n} packets' records"),
            ));
        }
    }
    let tcp: u64 = sc
        .tcp
        .iter()
        .map(|t| FLOW_BYTES + Scoreboard::bytes_for(t.rwnd_segments as usize))
        .sum();
    parts.push(("tcp".into(), tcp, format!("{} flows", sc.tcp.len())));
    let web: u64 = sc.web.iter().map(|w| w.slots() as u64 * FLOW_BYTES).sum();
    parts.push(("web".into(), web, "connection slots".into()));
    let total = parts.iter().fold(0u64, |a, p| a.saturating_add(p.1));
    if total > MEMORY_BUDGET {
        let (key, bytes, what) = parts.iter().max_by_key(|p| p.1).expect("parts");
        return Err(format!(
            "{key}: the trial would hold {what} ({}, {} in all), above the limit of {} per trial",
            gib(*bytes),
            gib(total),
            gib(MEMORY_BUDGET)
        ));
    }
    Ok(())
}

/// What a running trial holds that grows with what happens in it: trace rows, queued
/// packets, pending events, real-time records.
#[derive(Debug, Default, Clone, Copy)]
pub struct Usage {
    pub trace_bytes: u64,
    pub queued_packets: u64,
    pub pending_events: u64,
    pub record_bytes: u64,
}

impl Usage {
    pub fn bytes(&self) -> u64 {
        self.trace_bytes
            + self.record_bytes
            + self.queued_packets * size_of::<Packet>() as u64
            + self.pending_events * 32
    }

    /// An error naming the largest part when the total is above the budget.
    pub fn check(&self, now: Nanos) -> Result<(), String> {
        let total = self.bytes();
        if total <= MEMORY_BUDGET {
            return Ok(());
        }
        let parts = [
            ("trace", self.trace_bytes, "trace rows; turn traces off"),
            (
                "queue",
                self.queued_packets * size_of::<Packet>() as u64,
                "queued packets; lower the queue limit",
            ),
            ("events", self.pending_events * 32, "pending events"),
            (
                "cbr",
                self.record_bytes,
                "real-time packets' records; fewer or slower real-time flows",
            ),
        ];
        let (key, _, what) = parts.iter().max_by_key(|p| p.1).expect("parts");
        Err(format!(
            "{key}: at {:.3} s the trial held {} in {what}; the limit is {} per trial",
            now as f64 / 1e9,
            gib(total),
            gib(MEMORY_BUDGET)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A one-flow ADSL1 scenario with one CBR flow, edited by `f` as JSON.
    fn check_json(f: impl FnOnce(&mut serde_json::Value)) -> Result<(), String> {
        let mut v = serde_json::json!({
            "seed": 1, "duration_ns": 60_000_000_000u64, "warmup_ns": 10_000_000_000u64,
            "down": {"rate_bps": 1_500_000, "queue": {"rule": "fb-strict", "limit": 20_000}},
            "up": {"rate_bps": 256_000, "queue": {"rule": "fb-strict", "limit": 20_000}},
            "tcp": [{"profile": "linux-6", "cc": "cubic"}],
            "cbr": [{"direction": "down"}],
        });
        f(&mut v);
        Scenario::from_json(&v.to_string()).map(|_| ())
    }

    #[test]
    fn a_plain_scenario_is_within_every_limit() {
        check_json(|_| {}).unwrap();
    }

    #[test]
    fn times_rates_and_sizes_are_bounded_and_named() {
        let e = check_json(|v| v["duration_ns"] = 10_000_000_000_000_000_000u64.into());
        assert_eq!(
            e.unwrap_err(),
            "duration_ns: 10000000000 s is above the limit of 1000000 s"
        );
        let e = check_json(|v| v["down"]["rate_bps"] = 20_000_000_000_000u64.into());
        assert!(e.unwrap_err().starts_with("down.rate_bps: "));
        let e = check_json(|v| v["cbr"][0]["packet_bytes"] = 65_536.into());
        assert!(e
            .unwrap_err()
            .starts_with("cbr[0].packet_bytes: 65536 bytes"));
        check_json(|v| v["cbr"][0]["packet_bytes"] = 65_535.into()).unwrap();
        let e = check_json(|v| v["up"]["queue"]["limit"] = (1u64 << 32).into());
        assert!(e.unwrap_err().starts_with("up.queue.limit: 4294967296"));
        check_json(|v| v["up"]["queue"]["limit"] = u32::MAX.into()).unwrap();
        let e = check_json(|v| v["tcp"][0]["rto_max_ns"] = (MAX_TIME_NS + 1).into());
        assert!(e.unwrap_err().starts_with("tcp[0].rto_max_ns: "));
    }

    #[test]
    fn a_zero_rtt_is_refused_as_in_python() {
        let e = check_json(|v| v["rtt_ns"] = 0.into());
        assert_eq!(e.unwrap_err(), "rtt_ns: must be positive");
        check_json(|v| v["rtt_ns"] = 1.into()).unwrap();
    }

    #[test]
    fn flow_counts_are_bounded() {
        let e = check_json(|v| {
            let f = v["tcp"][0].clone();
            v["tcp"] = serde_json::Value::Array(vec![f; MAX_TCP_FLOWS + 1]);
        });
        assert_eq!(
            e.unwrap_err(),
            "tcp: 10001 flows is above the limit of 10000"
        );
        let e = check_json(|v| {
            v["web"] = serde_json::json!([{"users": 50_001, "parallel": 2}]);
        });
        assert!(e.unwrap_err().starts_with("web: 100002 users"));
    }

    #[test]
    fn the_window_is_tcps_largest() {
        // 2^30 / 1448 = 741 534.8: 741 534 segments fit, 741 535 do not.
        check_json(|v| v["tcp"][0]["rwnd_segments"] = 741_534.into()).unwrap();
        let e = check_json(|v| v["tcp"][0]["rwnd_segments"] = 741_535.into());
        assert!(e
            .unwrap_err()
            .starts_with("tcp[0].rwnd_segments: 741535 segments"));
    }

    #[test]
    fn memory_names_what_would_not_fit() {
        // 1 µs bins over 60 s: 6·10⁷ + 1 bins × 2 directions × 3 classes × 48 bytes
        // = 17.3·10⁹ bytes, above 4 GiB.
        assert_eq!(size_of::<ClassCount>(), 48);
        let e = check_json(|v| v["bin_ns"] = 1_000.into()).unwrap_err();
        assert!(
            e.starts_with("bin_ns: the trial would hold 60000001 bins"),
            "{e}"
        );
        assert!(e.contains("(16.1 GiB"), "{e}");
        // 1 ms bins: 60 001 × 288 bytes = 17 MB, fine.
        check_json(|v| v["bin_ns"] = 1_000_000.into()).unwrap();
        // A CBR packet every 10 ns for 60 s: 6·10⁹ records × 20 bytes = 111.8 GiB.
        let e = check_json(|v| v["cbr"][0]["interval_ns"] = 10.into()).unwrap_err();
        assert!(
            e.starts_with(
                "cbr[0].interval_ns: the trial would hold 6000000000 packets' records (111.8 GiB"
            ),
            "{e}"
        );
        // Every 20 µs: 3·10⁶ records, 60 MB, fine.
        check_json(|v| v["cbr"][0]["interval_ns"] = 20_000.into()).unwrap();
    }

    #[test]
    fn a_running_trial_that_outgrows_the_budget_ends_with_an_error() {
        let u = Usage {
            trace_bytes: 3 << 30,
            queued_packets: (2u64 << 30) / size_of::<Packet>() as u64,
            pending_events: 10,
            record_bytes: 0,
        };
        let e = u.check(1_500_000_000).unwrap_err();
        assert!(
            e.starts_with("trace: at 1.500 s the trial held 5.0 GiB in trace rows"),
            "{e}"
        );
        // 1 GiB of trace rows beside the 2 GiB queue: 3 GiB, within the budget.
        let within = Usage {
            trace_bytes: 1 << 30,
            ..u
        };
        assert!(within.check(0).is_ok());
    }
}
