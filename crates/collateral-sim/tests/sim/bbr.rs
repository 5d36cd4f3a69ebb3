//! Whole trials with BBR: link use and queue compared with NewReno, PROBE_RTT under a
//! standing queue, seeding, and robustness under random loss and random dumbbells.

use crate::support;

use collateral_sim::scenario::TraceConfig;
use collateral_sim::tcp::{CcKind, Profile, TcpConfig};
use collateral_sim::traffic::CbrConfig;
use collateral_sim::{simulate, Direction, Scenario, TrialResult};
use proptest::prelude::*;
use support::{MS, S};

/// 10 Mbit/s both ways, 40 ms RTT, a packet-limited queue, the given flows down.
/// One BDP is 10 Mbit/s × 40 ms = 50,000 B = 33 packets of 1500 B.
fn ten_meg(flows: &[CcKind], queue_packets: u64, seed: u64) -> Scenario {
    support::ten_meg(40, queue_packets)
        .seed(seed)
        .duration(60 * S)
        .warmup(5 * S)
        .tcp_flows(flows.iter().map(|&cc| TcpConfig {
            cc,
            ..Profile::Linux6.config()
        }))
        .build()
}

/// Time-weighted median of the downlink queue (packets) over [from, to), from the
/// occupancy trace, which records every change.
fn median_queue(r: &TrialResult, from: u64, to: u64) -> u32 {
    let q = &r.traces.queue;
    let pts: Vec<(u64, u32)> = (0..q.time.len())
        .filter(|&i| q.direction[i] == 0)
        .map(|i| (q.time[i], q.packets[i]))
        .collect();
    let mut held: Vec<(u32, u64)> = Vec::new();
    for (k, &(t, p)) in pts.iter().enumerate() {
        let end = pts.get(k + 1).map_or(to, |x| x.0).min(to);
        let start = t.max(from);
        if end > start {
            held.push((p, end - start));
        }
    }
    held.sort_unstable();
    let total: u64 = held.iter().map(|h| h.1).sum();
    let mut acc = 0;
    for (p, d) in held {
        acc += d;
        if 2 * acc >= total {
            return p;
        }
    }
    0
}

/// Stretches during which flow `flow`'s cwnd was at most 4: `(start, end)`.
fn low_cwnd_spells(r: &TrialResult, flow: u32) -> Vec<(u64, u64)> {
    let c = &r.traces.cwnd;
    let mut spells = Vec::new();
    let mut start = None;
    for i in (0..c.time.len()).filter(|&i| c.flow[i] == flow) {
        match (c.cwnd[i] <= 4, start) {
            (true, None) => start = Some(c.time[i]),
            (false, Some(t0)) => {
                spells.push((t0, c.time[i]));
                start = None;
            }
            _ => {}
        }
    }
    spells
}

#[test]
fn one_bbr_flow_fills_the_link_and_keeps_the_queue_far_shorter_than_newreno() {
    // Payload capacity: 10 Mbit/s × 1448/1500 = 9.653 Mbit/s; BBR must use ≥ 90 % of it
    // (8.688 Mbit/s). It paces at its estimate, the largest delivery rate of the last
    // ten rounds, a little above the bottleneck's mean rate, so a queue builds until
    // cwnd (2 BDP + bursts) holds it: a few packets, at most a quarter BDP (8) at the
    // median. Linux's BBR on the testbed, same link, CBR both ways, 30 s: the call's
    // p50 8.3-8.4 ms, ~7 packets (the model: 7.8 ms). NewReno's window saw-tooths
    // between half of BDP + queue and all of it (33..66 packets): its queue spans
    // 0..33 with a median near the middle.
    let reno = simulate(ten_meg(&[CcKind::Newreno], 33, 1)).unwrap();
    let reno_median = median_queue(&reno, 5 * S, 60 * S);
    assert!(reno_median >= 10, "NewReno median queue {reno_median}");
    for seed in 1..4 {
        let r = simulate(ten_meg(&[CcKind::Bbr], 33, seed)).unwrap();
        let t = &r.summary.tcp[0];
        assert_eq!(t.cc, "bbr");
        let capacity = 10e6 * 1448.0 / 1500.0;
        assert!(
            t.goodput_bps >= 0.9 * capacity,
            "seed {seed}: {} bit/s",
            t.goodput_bps
        );
        let m = median_queue(&r, 5 * S, 60 * S);
        assert!(m <= 33 / 4, "seed {seed}: BBR median queue {m} packets");
        assert!(
            2 * m.max(1) <= reno_median,
            "seed {seed}: BBR {m} vs NewReno {reno_median}"
        );
    }
}

#[test]
fn probe_rtt_drains_to_4_packets_for_200_ms_when_a_standing_queue_hides_the_rtt() {
    // A NewReno flow keeps a 200-packet (6 BDP) queue from ever emptying, so BBR sees no
    // new minimum RTT and must go to PROBE_RTT: cwnd 4 for at least 200 ms (and a
    // round), and then not again for 10 s after it left.
    let r = simulate(ten_meg(&[CcKind::Bbr, CcKind::Newreno], 200, 1)).unwrap();
    let spells: Vec<(u64, u64)> = low_cwnd_spells(&r, 0)
        .into_iter()
        .filter(|&(a, b)| b - a >= 200 * MS)
        .collect();
    assert!(spells.len() >= 2, "{spells:?}");
    for w in spells.windows(2) {
        assert!(
            w[1].0 - w[0].1 >= 10 * S,
            "PROBE_RTT again too soon: {spells:?}"
        );
    }
    assert_eq!(
        r.summary.tcp[0].timeouts,
        Some(0),
        "the spells are PROBE_RTT, not RTOs"
    );
}

#[test]
fn bbr_trials_repeat_exactly_and_the_seed_moves_the_gain_cycle() {
    let run = |seed| simulate(ten_meg(&[CcKind::Bbr], 33, seed)).unwrap();
    let (a, b, c) = (run(7), run(7), run(8));
    let strip = |r: &TrialResult| {
        // The summary holds no wall-clock time: it is reproducible as it stands.
        serde_json::to_string(&r.summary).unwrap()
    };
    assert_eq!(strip(&a), strip(&b));
    assert_eq!(a.traces.cwnd.time, b.traces.cwnd.time);
    assert_eq!(a.traces.queue.packets, b.traces.queue.packets);
    // No CBR and no wire loss: BBR's random start phase is the only randomness.
    assert_ne!(a.traces.cwnd.time, c.traces.cwnd.time);
}

fn lossy_bbr_transfer(seed: u64, loss: f64, segments: u64, profile: Profile) -> TrialResult {
    let tcp = TcpConfig {
        cc: CcKind::Bbr,
        size_segments: Some(segments),
        ..profile.config()
    };
    support::lossy_transfer(seed, loss, tcp)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Under random loss of data and ACKs a BBR transfer completes, paced and with its
    /// rate sampling, delivering every segment exactly once.
    #[test]
    fn bbr_delivers_every_byte_exactly_once_under_random_loss(
        seed in 0u64..1000, loss in 0.0f64..0.1, segments in 1u64..2000,
        profile in prop::sample::select(Profile::ALL.to_vec()),
    ) {
        let r = lossy_bbr_transfer(seed, loss, segments, profile);
        let t = &r.summary.tcp[0];
        prop_assert!(t.completed_s.is_some(), "transfer did not complete: {:?}", t);
        prop_assert_eq!(t.bytes_delivered, segments * 1448);
        prop_assert_eq!(t.segments_sent.unwrap() - segments, t.retransmits);
    }

    /// Random dumbbells with BBR flows (and NewReno beside them): packets are conserved,
    /// queues keep their limits, goodput stays within capacity; in a debug build any
    /// overflow in the sampling or pacing arithmetic would panic.
    #[test]
    fn bbr_dumbbells_conserve_packets(
        seed in 0u64..1000,
        limit in 2u64..120,
        down in 200_000u64..30_000_000,
        up in 64_000u64..2_000_000,
        rtt in 1u64..300,
        flows in prop::collection::vec(any::<bool>(), 1..4),
        loss in prop_oneof![Just(0.0), 0.0f64..0.03],
    ) {
        // No warm-up: every byte counted crossed the link within the trial (data held
        // out of order at a warm-up boundary could otherwise be counted after it).
        let sc = Scenario::builder()
            .seed(seed)
            .duration(20 * S)
            .rtt(rtt * MS)
            .link(down, up, support::packets(limit))
            .loss(loss)
            .tcp_flows(flows.iter().enumerate().map(|(i, &bbr)| TcpConfig {
                cc: if bbr || i == 0 { CcKind::Bbr } else { CcKind::Newreno },
                direction: if i % 2 == 0 { Direction::Down } else { Direction::Up },
                start_ns: i as u64 * 300 * MS,
                ..Profile::Linux6.config()
            }))
            .cbr(CbrConfig { direction: Direction::Down, ..Default::default() })
            .trace(TraceConfig::OFF)
            .build();
        let r = simulate(sc).unwrap();
        for q in [&r.summary.queues.down, &r.summary.queues.up] {
            prop_assert_eq!(q.arrivals, q.delivered + q.drops + q.wire_losses + q.in_flight);
            prop_assert!(q.max_packets as u64 <= limit);
        }
        for t in &r.summary.tcp {
            let rate = if t.direction == "down" { down } else { up } as f64;
            prop_assert!(t.goodput_bps <= rate * 1448.0 / 1500.0 * 1.0001);
        }
    }
}
