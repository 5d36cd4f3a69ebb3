//! The real-time quality columns of a CBR summary agree with its per-packet trace.

use crate::support;

use collateral_sim::quality::voip_quality;
use collateral_sim::{simulate, Scenario};
use serde_json::json;

use support::{MS, S};

#[test]
fn game_budgets_and_mos_follow_from_the_packets() {
    // ADSL1 with a 60 kB FB-loose queue beside a bulk download: downstream VoIP waits up
    // to ~330 ms, so some packets miss the 100 ms budget, none the 1000 ms one.
    let sc = json!({
        "seed": 5, "duration_ns": 60 * S, "warmup_ns": 10 * S, "rtt_ns": 100 * MS,
        "down": {"rate_bps": 1_500_000, "queue": {"rule": "fb-loose", "limit": 60_000}},
        "up": {"rate_bps": 256_000, "queue": {"rule": "fb-loose", "limit": 60_000}},
        "tcp": [{"profile": "linux-2.6.25", "cc": "cubic"}],
        "cbr": [{"direction": "down"}],
    });
    let r = simulate(Scenario::from_json(&sc.to_string()).unwrap()).unwrap();
    let c = &r.summary.cbr[0];
    let t = &r.traces.cbr;
    // The trace marks lost and still-in-flight packets alike (NaN); the summary says how
    // many were in flight at the end.
    let (mut n, mut late100, mut late1000, mut missing, mut sum) = (0u64, 0u64, 0u64, 0u64, 0.0);
    for k in 0..t.sent.len() {
        if t.sent[k] < 10 * S {
            continue;
        }
        let owd = t.owd_s[k];
        n += 1;
        if owd.is_nan() {
            missing += 1;
        } else {
            sum += owd;
            late100 += (owd > 0.1) as u64;
            late1000 += (owd > 1.0) as u64;
        }
    }
    assert_eq!(n, c.sent);
    let lost = missing - c.in_flight;
    assert_eq!(lost, c.lost);
    let n = n - c.in_flight;
    let (late100, late1000) = (late100 + lost, late1000 + lost);
    assert!(
        late100 > 0 && late1000 == lost,
        "{late100} {late1000} {lost}"
    );
    assert_eq!(c.over_100ms, late100 as f64 / n as f64);
    assert_eq!(c.over_1000ms, late1000 as f64 / n as f64);
    let mean = sum / (n - lost) as f64;
    assert!((c.owd_mean_s - mean).abs() < 1e-12);
    let q = voip_quality(mean, lost as f64 / n as f64);
    assert!((c.r_factor - q.r_factor).abs() < 1e-9 && (c.mos - q.mos).abs() < 1e-9);
    // The queue keeps the mean one-way delay over 250 ms, so the call rates below a
    // loss-free one at 250 ms (R 79.18, MOS 3.99).
    assert!(mean > 0.25, "{mean}");
    assert!(c.mos < 3.992519, "{}", c.mos);
}
