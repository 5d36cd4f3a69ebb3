//! The DOCSIS upstream, outages, delay steps and the satellite link as the shared
//! bottleneck runs them (what both clocks drive), against hand-worked times.

use collateral_model::bottleneck::Bottleneck;
use collateral_model::docsis::DocsisConfig;
use collateral_model::leo::LeoConfig;
use collateral_model::path_delay::DelaySteps;
use collateral_model::queue::{FullRule, Packet, PacketKind};
use collateral_model::scenario::{LinkConfig, QueueConfig};
use collateral_model::schedule::Outages;
use collateral_model::{Direction, Nanos, Scenario};

const MS: Nanos = 1_000_000;
const S: Nanos = 1_000_000_000;

/// A 60 s scenario, 20 ms RTT (10 ms each way), the upstream `up_bps` with a deep FIFO,
/// shaped by `f`.
fn up_link(up_bps: u64, f: impl FnOnce(&mut LinkConfig)) -> Bottleneck {
    seeded(1, up_bps, f)
}

fn seeded(seed: u64, up_bps: u64, f: impl FnOnce(&mut LinkConfig)) -> Bottleneck {
    let mut sc = Scenario::builder()
        .seed(seed)
        .duration(60 * S)
        .warmup(1)
        .rtt(20 * MS)
        .link(
            10_000_000,
            up_bps,
            QueueConfig::drop_tail(FullRule::Ps, 1000),
        )
        .build();
    f(&mut sc.up);
    sc.validate().unwrap();
    Bottleneck::new(&sc, Direction::Up, None, false).unwrap()
}

/// Every transmission's end until `until`.
fn ends(b: &mut Bottleneck, until: Nanos) -> Vec<Nanos> {
    let mut out = Vec::new();
    while b.next_completion() <= until {
        let t = b.next_completion();
        b.complete(t);
        out.push(t);
    }
    out
}

fn pkt(len: u32, k: u64) -> Packet {
    Packet::new(PacketKind::Data, 0, len, k, 0)
}

/// Ten 1000-byte packets at 0 on an 8 Mbit/s DOCSIS upstream (1 B/µs; a 2 ms MAP
/// interval carries 2000 B). The first reaches the idle modem alone: its contention
/// request (1000 B) goes at r ∈ [2, 4) ms, the first interval starting at or after
/// r + 1.5 ms starts at kM ∈ {4, 6} ms, and its grant lies in [kM, kM + 2 ms]: it ends
/// at e1 ∈ [5, 8] ms. The other nine, queued then, ride a 9000-byte request on that
/// grant (sent at e1); from the first interval starting at or after e1 + 1.5 ms, K,
/// four whole-interval grants (2000 B fill an interval: no random offset) carry
/// packets 2–9, one per millisecond, K + 1 ms ... K + 8 ms, and a 1000-byte grant at a
/// random offset in the fifth carries the tenth: it ends in [K + 9 ms, K + 10 ms].
#[test]
fn a_docsis_burst_rides_a_piggybacked_request_in_whole_interval_grants() {
    for seed in 0..50 {
        let mut b = seeded(seed, 8_000_000, |l| {
            l.docsis = Some(DocsisConfig::default())
        });
        for k in 0..10 {
            b.arrive(0, pkt(1000, k));
        }
        let e = ends(&mut b, S);
        assert_eq!(e.len(), 10);
        assert!((5 * MS..=8 * MS).contains(&e[0]), "{}", e[0]);
        let k2 = (e[0] + 1_500_000).div_ceil(2 * MS) * 2 * MS;
        for (i, t) in e.iter().enumerate().take(9).skip(1) {
            assert_eq!(*t, k2 + i as u64 * MS);
        }
        assert!(
            (k2 + 9 * MS..=k2 + 10 * MS).contains(&e[9]),
            "{k2} {}",
            e[9]
        );
    }
}

/// 12 Mbit/s (1500 B in 1 ms), down from 10 ms for 5 ms: a packet arriving at 9.6 ms
/// sends 0.4 ms of bits, waits out the outage, and ends at 15.6 ms; the one queued
/// behind it ends 1 ms later; each reaches the far side 10 ms after.
#[test]
fn an_outage_holds_the_queue_and_the_packet_in_transmission() {
    let mut b = up_link(12_000_000, |l| {
        l.outages = Some(Outages {
            windows_ns: vec![(10 * MS, 5 * MS)],
            period_ns: 0,
        })
    });
    b.arrive(9_600_000, pkt(1500, 0));
    b.arrive(9_700_000, pkt(1500, 1));
    assert_eq!(ends(&mut b, S), [15_600_000, 16_600_000]);
    let released: Vec<Nanos> = std::iter::from_fn(|| b.pop_released(S).map(|p| p.0)).collect();
    assert_eq!(released, [25_600_000, 26_600_000]);
}

/// Extra delay 0 until 100 ms, then 40 ms: a packet ending at 50 ms arrives 10 ms
/// later (propagation only), one ending at 150 ms 50 ms later.
#[test]
fn delay_steps_add_to_the_propagation() {
    let mut b = up_link(12_000_000, |l| {
        l.delay = Some(DelaySteps {
            steps_ns: vec![(0, 0), (100 * MS, 40 * MS)],
            period_ns: 0,
        })
    });
    b.arrive(49 * MS, pkt(1500, 0));
    b.catch_up(149 * MS);
    b.arrive(149 * MS, pkt(1500, 1));
    ends(&mut b, S);
    let released: Vec<Nanos> = std::iter::from_fn(|| b.pop_released(S).map(|p| p.0)).collect();
    assert_eq!(released, [60 * MS, 200 * MS]);
}

/// A satellite upstream fixed at 12 Mbit/s (min = max: 1500 B in 1 ms) with no delay
/// spread: packets every 5 ms from 11.9 s to 12.1 s, each ending 1 ms after it arrives.
/// Those ending within 20 ms of the 12 s reconfiguration — arriving at 12.000, 12.005,
/// 12.010 and 12.015 s — are lost: 4 of 41. The spike adds 30 ms for 100 ms.
#[test]
fn a_reconfiguration_loses_a_burst_and_spikes_the_delay() {
    let mut b = up_link(12_000_000, |l| {
        l.leo = Some(LeoConfig {
            rate_min_bps: 12_000_000,
            rate_max_bps: 12_000_000,
            delay_min_ns: 0,
            delay_max_ns: 0,
            interval_ns: 15 * S,
            first_ns: 12 * S,
            spike_ns: 30 * MS,
            spike_for_ns: 100 * MS,
            loss_for_ns: 20 * MS,
        })
    });
    let mut released = Vec::new();
    for k in 0..41u64 {
        let t = 11_900 * MS + k * 5 * MS;
        b.catch_up(t);
        b.arrive(t, pkt(1500, k));
    }
    ends(&mut b, 13 * S);
    while let Some((at, p)) = b.pop_released(13 * S) {
        released.push((p.seq, at));
    }
    assert_eq!(b.stats.wire_losses, 4);
    let lost: Vec<u64> = (0..41)
        .filter(|k| !released.iter().any(|r| r.0 == *k))
        .collect();
    assert_eq!(lost, [20, 21, 22, 23]);
    // Sent at 11.995 s: ends 11.996 s, 10 ms to go. Sent at 12.020 s (after the loss):
    // ends 12.021 s, inside the spike: 10 + 30 ms.
    let at = |k: u64| released.iter().find(|r| r.0 == k).unwrap().1;
    assert_eq!(at(19), 12_006 * MS);
    assert_eq!(at(24), 12_061 * MS);
    // After the spike (sent 12.100 s, ends 12.101 s): 10 ms again.
    assert_eq!(at(40), 12_111 * MS);
}

/// A satellite link's intervals are drawn up front: a run holding more than a million
/// is refused at the key, as are two clocks on one direction.
#[test]
fn a_run_with_too_many_intervals_or_two_clocks_is_refused() {
    let leo = LeoConfig {
        rate_min_bps: 1_000_000,
        rate_max_bps: 2_000_000,
        delay_min_ns: 0,
        delay_max_ns: 0,
        interval_ns: MS,
        first_ns: 0,
        spike_ns: 0,
        spike_for_ns: 0,
        loss_for_ns: 0,
    };
    let mut sc = Scenario::builder().duration(2_000 * S).build();
    sc.up.leo = Some(leo);
    let e = sc.validate().unwrap_err();
    assert!(
        e.starts_with("up.leo.interval_ns: 2000000 intervals"),
        "{e}"
    );
    sc.duration_ns = 60 * S;
    assert!(sc.validate().is_ok());
    sc.up.docsis = Some(DocsisConfig::default());
    let e = sc.validate().unwrap_err();
    assert!(
        e.starts_with("up.leo: a satellite link sets its own rate"),
        "{e}"
    );
}
