//! Web users, phases and the per-class measurements, checked against values worked out
//! by hand from the model's formulas.

use crate::support;

use collateral_sim::rate::ser_ns;
use collateral_sim::{simulate, Scenario};
use serde_json::{json, Value};

use support::{MS, S};

fn scenario(extra: Value) -> Scenario {
    let mut sc = json!({
        "seed": 7,
        "duration_ns": 20 * S,
        "warmup_ns": 0,
        "rtt_ns": 10 * MS,
        "down": {"rate_bps": 10_000_000, "queue": {"rule": "ps", "limit": 1000}},
        "up": {"rate_bps": 10_000_000, "queue": {"rule": "ps", "limit": 1000}},
        "trace": {"cwnd": false, "queue": false, "cbr": false, "drops": false, "classes": true},
    });
    for (k, v) in extra.as_object().unwrap() {
        sc[k] = v.clone();
    }
    Scenario::from_json(&sc.to_string()).unwrap()
}

fn constant(v: f64) -> Value {
    json!({"kind": "constant", "value": v})
}

/// One user, one object per page of one segment: the response time is the four
/// packets' trips (SYN, SYN-ACK, request, reply), each two access links, the
/// bottleneck's serialisation and 5 ms of propagation.
#[test]
fn one_segment_object_takes_two_rtts_plus_serialisation() {
    let sc = scenario(json!({
        "web": [{"users": 1, "parallel": 1,
                 "model": {"request_bytes": constant(300.0), "reply_bytes": constant(1000.0),
                           "objects_per_page": constant(1.0), "think_s": constant(1.0)},
                 "tcp": {"profile": "rfc"}}],
    }));
    let r = simulate(sc).unwrap();
    let w = &r.summary.web[0];
    let trip = |len: u32| 2 * ser_ns(len, 1_000_000_000) + ser_ns(len, 10_000_000) + 5 * MS;
    // SYN and SYN-ACK are a pure ACK (52 B) + 8 B of options; the request carries 300 B
    // and the reply 1000 B after 52 B of headers.
    let expect = trip(60) + trip(60) + trip(352) + trip(1052);
    assert!(w.objects_completed >= 10, "{w:?}");
    assert_eq!(w.response_median_s, expect as f64 / 1e9);
    assert_eq!(w.response_p95_s, expect as f64 / 1e9);
    assert_eq!(w.reply_bytes, 1000 * w.objects_completed);
    assert_eq!(w.retransmits, 0);
    assert_eq!(w.setup_retries, 0);
}

/// Pages of five objects fetched two at a time, on a lossy path in both directions
/// (SYNs, requests, data and ACKs are lost): when the users stop early enough, every
/// page started completes, every object is one connection and its bytes arrive.
#[test]
fn every_page_completes_through_loss() {
    for seed in 1..=4 {
        let mut sc = scenario(json!({
            "duration_ns": 120 * S,
            "web": [{"users": 20, "parallel": 2, "stop_ns": 40 * S,
                     "extra_delay_ms": {"kind": "uniform", "low": 0.0, "high": 50.0},
                     "model": {"objects_per_page": constant(5.0),
                               "think_s": {"kind": "exponential", "mean": 2.0}},
                     "tcp": {"profile": "freebsd-7"}}],
        }));
        sc.seed = seed;
        sc.down.loss_rate = 0.05;
        sc.up.loss_rate = 0.05;
        let r = simulate(sc).unwrap();
        let w = &r.summary.web[0];
        assert!(w.pages_started > 50, "{w:?}");
        assert_eq!(w.pages_completed, w.pages_started, "seed {seed}: {w:?}");
        assert_eq!(w.objects_completed, 5 * w.pages_completed, "seed {seed}");
        assert_eq!(w.connections, w.objects_completed, "seed {seed}");
        assert!(
            w.setup_retries > 0 && w.retransmits > 0,
            "the loss must bite: {w:?}"
        );
    }
}

/// Reply sizes that are not whole segments: the last segment carries only the rest, so
/// the bytes through the bottleneck are exactly the replies plus headers.
#[test]
fn partial_last_segments_are_short() {
    let sc = scenario(json!({
        "duration_ns": 10 * S,
        "web": [{"users": 1, "parallel": 1, "stop_ns": 5 * S,
                 "model": {"reply_bytes": constant(3000.0), "objects_per_page": constant(1.0),
                           "think_s": constant(0.5)},
                 "tcp": {"profile": "rfc"}}],
    }));
    let r = simulate(sc).unwrap();
    let w = &r.summary.web[0];
    let n = w.objects_completed;
    assert!(n >= 5);
    // 3000 B = 1448 + 1448 + 104: segments of 1500, 1500 and 156 B IP length, plus a
    // 60 B SYN-ACK per connection, all that goes down.
    let down_tcp: u64 = r
        .summary
        .phases
        .iter()
        .filter(|p| p.direction == "down" && p.class == "tcp")
        .map(|p| (p.throughput_bps * (p.end_s - p.start_s) / 8.0).round() as u64)
        .sum();
    assert_eq!(down_tcp, n * (1500 + 1500 + 156 + 60));
}

/// Per-class counters of a phase: a tagged stream of 1000 B every 10 ms alone on an
/// idle 10 Mbit/s link: 100 packets a second, 800 kbit/s, each waiting only its own
/// serialisation (0.8 ms); an untagged one is counted as "other".
#[test]
fn phase_counters_match_a_known_stream() {
    let sc = scenario(json!({
        "duration_ns": 4 * S,
        "cbr": [
            {"direction": "down", "packet_bytes": 1000, "interval_ns": 10 * MS, "jitter_ns": 0,
             "start_ns": 500 * MS, "tag": 46},
            {"direction": "down", "packet_bytes": 500, "interval_ns": 20 * MS, "jitter_ns": 0,
             "start_ns": 505 * MS, "stop_ns": 3 * S},
        ],
        "phases": [{"name": "a", "start_ns": S}, {"name": "b", "start_ns": 3 * S}],
    }));
    let r = simulate(sc).unwrap();
    let get = |phase: &str, class: &str| {
        r.summary
            .phases
            .iter()
            .find(|p| p.phase == phase && p.direction == "down" && p.class == class)
            .unwrap()
            .clone()
    };
    let a = get("a", "tagged");
    assert_eq!(a.arrivals, 200); // 2 s at 100/s
    assert_eq!(a.drops, 0);
    assert_eq!(a.drop_rate, 0.0);
    assert!((a.throughput_bps - 800_000.0).abs() < 1e-6);
    assert!((a.latency_mean_s - 0.0008).abs() < 1e-12);
    let o = get("a", "other");
    assert_eq!(o.arrivals, 100);
    assert!((o.latency_mean_s - 0.0004).abs() < 1e-12);
    assert_eq!(get("b", "other").arrivals, 0, "stopped at 3 s");
    assert_eq!(get("b", "tagged").arrivals, 100);
    assert!(get("a", "tcp").drop_rate.is_nan());
    // The 1 s bins of the tagged class hold 100 packets each once the stream runs.
    let c = &r.traces.classes;
    let tagged: Vec<u64> = (0..c.time.len())
        .filter(|&k| c.direction[k] == 0 && c.class[k] == 1)
        .map(|k| c.arrivals[k])
        .collect();
    assert_eq!(tagged, vec![50, 100, 100, 100]);
}

/// An unresponsive stream at twice a drop-tail link's rate loses half its packets.
#[test]
fn overload_drop_rate_is_the_excess() {
    let sc = scenario(json!({
        "duration_ns": 12 * S,
        "down": {"rate_bps": 10_000_000, "queue": {"rule": "ps", "limit": 50}},
        "cbr": [{"direction": "down", "packet_bytes": 1500, "interval_ns": 600_000,
                 "jitter_ns": 0, "start_ns": 0}],
        "phases": [{"name": "steady", "start_ns": 2 * S}],
    }));
    let r = simulate(sc).unwrap();
    let p = r
        .summary
        .phases
        .iter()
        .find(|p| p.direction == "down" && p.class == "other")
        .unwrap();
    assert!((p.drop_rate - 0.5).abs() < 0.001, "{}", p.drop_rate);
    // Full queue: 50 packets ahead, each 1.2 ms, plus its own serialisation.
    assert!(
        (p.latency_mean_s - 0.0612).abs() < 0.0013,
        "{}",
        p.latency_mean_s
    );
}

/// A bulk flow that stops writing at 5 s sends nothing new afterwards: once the last
/// window has drained from the 50-packet queue (60 ms), the TCP bins are empty.
#[test]
fn bulk_flow_stops_at_its_stop_time() {
    let sc = scenario(json!({
        "duration_ns": 10 * S,
        "down": {"rate_bps": 10_000_000, "queue": {"rule": "ps", "limit": 50}},
        "tcp": [{"profile": "linux-6", "stop_ns": 5 * S}],
    }));
    let r = simulate(sc).unwrap();
    let c = &r.traces.classes;
    let tcp_down = |sec: u64| {
        (0..c.time.len())
            .find(|&k| c.direction[k] == 0 && c.class[k] == 0 && c.time[k] == sec * S)
            .map(|k| c.bytes[k])
            .unwrap()
    };
    assert!(tcp_down(4) > 1_100_000, "running: {}", tcp_down(4));
    assert_eq!(tcp_down(6), 0);
    assert!(r.summary.tcp[0].completed_s.unwrap() < 5.5);
}

#[test]
fn same_seed_same_web_results() {
    let mk = || {
        scenario(json!({
            "down": {"rate_bps": 10_000_000, "queue": {"rule": "ps", "limit": 30}},
            "web": [{"users": 300, "extra_delay_ms": {"kind": "uniform", "low": 5.0, "high": 75.0},
                     "tcp": {"profile": "freebsd-7"}}],
        }))
    };
    let a = serde_json::to_string(&simulate(mk()).unwrap().summary.web).unwrap();
    let b = serde_json::to_string(&simulate(mk()).unwrap().summary.web).unwrap();
    assert_eq!(a, b);
    let mut other = mk();
    other.seed = 8;
    let c = serde_json::to_string(&simulate(other).unwrap().summary.web).unwrap();
    assert_ne!(a, c);
}

#[test]
fn bad_web_settings_are_named() {
    let bad = json!({
        "seed": 1, "duration_ns": S,
        "down": {"rate_bps": 1, "queue": {"rule": "ps", "limit": 1}},
        "up": {"rate_bps": 1, "queue": {"rule": "ps", "limit": 1}},
        "web": [{"users": 10, "model": {"think_s": {"kind": "pareto", "scale": 0.0, "shape": 1.0}}}],
    });
    let e = Scenario::from_json(&bad.to_string()).unwrap_err();
    assert!(e.contains("web[0].think_s"), "{e}");
    let bad = json!({
        "seed": 1, "duration_ns": S,
        "down": {"rate_bps": 1, "queue": {"rule": "ps", "limit": 1}},
        "up": {"rate_bps": 1, "queue": {"rule": "ps", "limit": 1}},
        "phases": [{"name": "a", "start_ns": 5}, {"name": "b", "start_ns": 5}],
    });
    let e = Scenario::from_json(&bad.to_string()).unwrap_err();
    assert!(e.contains("phases[1]"), "{e}");
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    const QUEUES: [&str; 4] = [
        r#"{"rule": "ps", "limit": 40}"#,
        r#"{"kind": "red", "min_th": 5, "max_th": 15, "max_p": 0.1, "w_q": 0.002, "limit": 40}"#,
        r#"{"kind": "cbt", "tcp": {"min_th": 5, "max_th": 15, "max_p": 0.1, "w_q": 0.002}, "tagged_th": 3, "other_th": 2, "limit": 40}"#,
        r#"{"kind": "fred", "min_th": 5, "max_th": 15, "max_p": 0.1, "w_q": 0.002, "limit": 40}"#,
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        /// Whatever the population and the discipline: the bottleneck conserves packets,
        /// the per-class counters add up to the link's, and no page or object is counted
        /// twice.
        #[test]
        fn web_trials_account_for_every_packet(
            users in 1u32..400, parallel in 1u32..5, q in 0usize..4, seed in 0u64..1000,
        ) {
            let mut sc = scenario(json!({
                "duration_ns": 15 * S,
                "down": {"rate_bps": 10_000_000, "queue": serde_json::from_str::<Value>(QUEUES[q]).unwrap()},
                "web": [{"users": users, "parallel": parallel, "stop_ns": 10 * S,
                         "extra_delay_ms": {"kind": "uniform", "low": 0.0, "high": 40.0},
                         "tcp": {"profile": "freebsd-7"}}],
                "cbr": [{"direction": "down", "packet_bytes": 1000, "interval_ns": 5 * MS,
                         "jitter_ns": 0, "tag": 46}],
            }));
            sc.seed = seed;
            let r = simulate(sc).unwrap();
            for (d, q) in [("down", &r.summary.queues.down), ("up", &r.summary.queues.up)] {
                prop_assert_eq!(q.arrivals, q.delivered + q.drops + q.wire_losses + q.in_flight);
                let (mut arr, mut drops) = (0, 0);
                for p in r.summary.phases.iter().filter(|p| p.direction == d) {
                    arr += p.arrivals;
                    drops += p.drops;
                    prop_assert!(p.drops <= p.arrivals);
                }
                prop_assert_eq!(drops, q.drops);
                prop_assert!(arr <= q.arrivals && arr + q.in_flight >= q.arrivals);
            }
            let w = &r.summary.web[0];
            prop_assert!(w.objects_completed <= w.connections);
            prop_assert!(w.pages_completed <= w.pages_started);
            prop_assert!(w.objects_completed >= w.pages_completed);
        }
    }
}
