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
//! The walk over a scenario that applies these is `Scenario::validate`'s (this module
//! knows bounds, not scenarios, so the scenario can use it without a cycle).
//!
//! Errors start with the scenario's JSON key path (`cbr[0].interval_ns: …`), so the
//! Python side can name its own option for it.

use std::mem::size_of;

use collateral_queue::{Nanos, Packet};

use crate::tcp::{TcpConfig, TcpEcn};

/// The longest time any field may hold: 10⁶ s (11.6 days). Sums of a few such times
/// and products with packet sizes stay far below `u64::MAX` (1.8·10¹⁹).
pub const MAX_TIME_NS: Nanos = collateral_queue::check::MAX_TIME_NS;
/// The fastest link: 10 Tbit/s.
pub const MAX_RATE_BPS: u64 = collateral_queue::check::MAX_RATE_BPS;
/// The largest IP packet (the 16-bit total length of RFC 791).
pub const MAX_PACKET_BYTES: u64 = 65_535;
/// Queue limits are 32-bit, as in Linux's qdiscs (`tc-pfifo(8)`, `tc-bfifo(8)`).
pub const MAX_QUEUE_LIMIT: u64 = collateral_queue::check::MAX_LIMIT;
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
pub const CBR_RECORD_BYTES: u64 = 8 + 8 + 4;
/// The memory of a sender's SACK scoreboard for `capacity` outstanding segments: words
/// of 64 segments, each three bitmaps plus 64 retransmission marks, in a power of two of
/// at least two words (`collateral_sim::tcp::sack_scoreboard`, whose tests check that
/// this is its own figure).
pub fn scoreboard_bytes(capacity: usize) -> u64 {
    let words = capacity.div_ceil(64).next_power_of_two().max(2) as u64;
    words * (3 * 8 + 64 * 8)
}

/// Per-flow state beside the scoreboard: sender, receiver, congestion control.
pub const FLOW_BYTES: u64 = 4096;

/// A time field of the scenario: the same bound (and words) as a discipline's.
pub use collateral_queue::check::time;

pub fn rate(key: &str, v: u64) -> Result<(), String> {
    if v == 0 || v > MAX_RATE_BPS {
        return Err(format!(
            "{key}: {v} bit/s is outside 1 bit/s … {} bit/s",
            MAX_RATE_BPS
        ));
    }
    Ok(())
}

pub fn size(key: &str, v: u64, min: u64) -> Result<(), String> {
    if v < min || v > MAX_PACKET_BYTES {
        return Err(format!(
            "{key}: {v} bytes is outside {min} … {MAX_PACKET_BYTES} (an IP packet)"
        ));
    }
    Ok(())
}

pub fn gib(b: u64) -> String {
    format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64)
}

/// A TCP flow's times, sizes and window.
pub fn tcp(key: &str, t: &TcpConfig) -> Result<(), String> {
    let k = |f: &str| format!("{key}.{f}");
    time(&k("start_ns"), t.start_ns)?;
    time(&k("start_spread_ns"), t.start_spread_ns)?;
    if let Some(s) = t.stop_ns {
        time(&k("stop_ns"), s)?;
        if s < t.start_ns.saturating_add(t.start_spread_ns) {
            return Err(format!(
                "{}: must be after start_ns + start_spread_ns ({} ns), the latest start",
                k("stop_ns"),
                t.start_ns.saturating_add(t.start_spread_ns)
            ));
        }
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
    if t.cc.scalable() && t.ecn != TcpEcn::L4s {
        return Err(format!(
            "{}: {} is a scalable congestion control and needs ecn = l4s",
            k("cc"),
            t.cc.name()
        ));
    }
    // ECT(1) says the sender answers each mark in proportion (RFC 9331 §4.1); a classic
    // control halves on each one and starves in an L queue that marks at 1 ms.
    if !t.cc.scalable() && t.ecn == TcpEcn::L4s {
        return Err(format!(
            "{}: l4s (ECT(1)) is for scalable congestion controls (dctcp, prague); {} \
             would halve its window on every mark: give ecn = classic",
            k("ecn"),
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
    use crate::metrics::ClassCount;
    use crate::scenario::Scenario;

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
