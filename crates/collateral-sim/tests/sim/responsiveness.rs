//! The responsiveness test (draft-ietf-ippm-responsiveness) in whole trials: its
//! foreign probes' times on an empty path and its ramp's hold, worked out by hand.

use crate::support;

use collateral_sim::rate::ser_ns;
use collateral_sim::rrul::{Workload, WorkloadKind};
use collateral_sim::tcp::TcpConfig;
use collateral_sim::{simulate, Direction, Scenario};

use support::{packets, MS, S};

/// 10 Mbit/s each way, 10 ms RTT, the responsiveness workload (load from 5 s, loaded
/// from 10 s, 1 s ramp intervals) over 20 s, whose sixteen load flows each way carry
/// `segments` segments each.
fn scenario(segments: Option<u64>) -> Scenario {
    let w = Workload {
        kind: WorkloadKind::Responsiveness,
        ..Workload::default()
    };
    let mut sc = Scenario::builder()
        .duration(20 * S)
        .warmup(0)
        .rtt(10 * MS)
        .link(10_000_000, 10_000_000, packets(1000))
        .build();
    for (direction, _, start_ns) in w.tcp_flows() {
        sc.tcp.push(TcpConfig {
            direction,
            start_ns,
            size_segments: segments,
            ..TcpConfig::default()
        });
    }
    sc.cbr = w.cbr_flows();
    sc.workload = Some(w);
    sc
}

/// Each load flow moves one segment (1448 B) and stops, so every ramp interval moves
/// the same 1448 B each way: the first moving average covers intervals 0-3, the fourth
/// 3-6, so the four are first there to compare (and equal) at the end of interval 6;
/// the ramp has added a flow at the ends of intervals 0 to 5 and holds 7 each way, and
/// the load counts as saturated from 5 + 7 = 12 s. The path is then empty but for the probes: each foreign
/// probe's stage is two trips of a packet, each trip two access links (1 Gbit/s), the
/// bottleneck (10 Mbit/s) and 5 ms of propagation. SYN and SYN-ACK: 52 + 8 B; TLS: the
/// ClientHello 52 + 517 B and the server's flight 1500 B; HTTP: the GET 52 + 100 B and
/// the response 52 + 50 B. Loaded probes from 12.025 s every 200 ms: 40 in 8 s.
#[test]
fn foreign_probes_on_an_empty_path_and_a_ramp_that_holds_at_saturation() {
    let r = simulate(scenario(Some(1))).unwrap();
    let s = &r.summary.scores;
    assert_eq!(s.ramp_saturated_interval, Some(6), "{s:?}");
    assert_eq!((s.ramp_flows_down, s.ramp_flows_up), (Some(7), Some(7)));
    assert_eq!(
        s.ramp_flows_per_interval.as_deref(),
        Some("1+1 2+2 3+3 4+4 5+5 6+6 7+7 7+7 7+7 7+7 7+7 7+7 7+7 7+7 7+7")
    );
    assert_eq!(s.load_saturated_s, Some(12.0));
    // Only seven flows each way ever started (5 to 11 s).
    let started = r.summary.tcp.iter().filter(|t| t.goodput_bps > 0.0).count();
    assert_eq!(started, 14);
    let trip = |len: u32| 2 * ser_ns(len, 1_000_000_000) + ser_ns(len, 10_000_000) + 5 * MS;
    let tcp = trip(60) + trip(60);
    let tls = trip(569) + trip(1500);
    let http = trip(152) + trip(102);
    let ms = |x: u64| x as f64 / 1e6;
    let want = 60_000.0 / ((ms(tcp) + ms(tls) + ms(http)) / 3.0);
    assert!(
        (s.rpm_foreign.unwrap() - want).abs() < 1e-9 * want,
        "{s:?} {want}"
    );
    assert_eq!(s.foreign_probes_per_s, Some(5.0));
    assert_eq!(s.foreign_probes_skipped, Some(0));
    // No load flow sends after 12 s: no self probes, no RPM.
    assert_eq!(s.self_probes_per_s, Some(0.0));
    assert_eq!(s.rpm, None);
}

/// Endless load flows on the same path: the ramp holds fewer than sixteen each way
/// once 10 Mbit/s is filled, the self probes (one per flow every 200 ms) and foreign
/// probes stay within the draft's 100 a second, and a self probe waits the draft's
/// 5 ms in the send buffer beyond its round trip.
#[test]
fn a_saturating_load_holds_its_flows_and_probes_within_the_limits() {
    let r = simulate(scenario(None)).unwrap();
    let s = &r.summary.scores;
    let k = s.ramp_saturated_interval.expect("saturates") as u64;
    let (down, up) = (s.ramp_flows_down.unwrap(), s.ramp_flows_up.unwrap());
    assert!(down < 16 && up < 16, "{s:?}");
    assert!(down <= k + 1 && up <= k + 1, "{s:?}");
    let started = |d: Direction| {
        r.summary
            .tcp
            .iter()
            .filter(|t| t.direction == d.name() && t.goodput_bps > 0.0)
            .count() as u64
    };
    assert_eq!(
        (started(Direction::Down), started(Direction::Up)),
        (down, up)
    );
    let (f, l) = (
        s.foreign_probes_per_s.unwrap(),
        s.self_probes_per_s.unwrap(),
    );
    assert!(f <= 5.0 && l <= 5.0 * (down + up) as f64 + 1e-9, "{s:?}");
    assert_eq!(s.probe_rate_within_limits, Some(1), "{s:?}");
    assert!(
        s.rpm.is_some() && s.rpm_loaded.unwrap() < 60_000.0 / 15.0,
        "{s:?}"
    );
}

#[test]
fn same_seed_same_responsiveness_results() {
    let a = simulate(scenario(None)).unwrap().summary.scores;
    let b = simulate(scenario(None)).unwrap().summary.scores;
    assert_eq!(a, b);
}
