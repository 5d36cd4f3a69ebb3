//! Property tests for RED, FRED, CBT and CBQ: random arrival/departure sequences with a
//! link that dequeues only when idle, checking after every step that
//! * every packet offered was dropped, has departed or is waiting — each exactly once;
//! * `enqueue` returns true exactly when the arrival was queued;
//! * the occupancy the discipline reports matches what it holds (no negative or drifting
//!   accounting: the counters are unsigned and would panic on underflow in debug builds);
//! * hard limits hold (per class for CBQ);
//! * single-FIFO disciplines serve in arrival order (CBQ within each class);
//! * discipline-specific state stays consistent (RED's average, FRED's per-flow counts,
//!   CBT's per-class counts);
//! * no queue marks a Not-ECT packet or changes more of the TOS byte than the CE bits
//!   (RFC 3168 §5), whatever its ECN switches — CoDel, FQ-CoDel, PIE, RED, DualPI2 and
//!   CAKE included (DualPI2 and CAKE with the generic invariants here; their own
//!   modules test per-queue order and their state).

use std::collections::BTreeSet;

use collateral_queue::cbq::DEFAULT_QUANTUM;
use collateral_queue::cbt::CbtTcp;
use collateral_queue::{
    Cake, CakeConfig, Cbq, CbqConfig, Cbt, CbtConfig, Codel, CodelConfig, Discipline, DualPi2,
    DualPi2Config, FqCodel, FqCodelConfig, Fred, FredConfig, FullRule, Nanos, Packet, PacketKind,
    PerClass, Pie, PieConfig, Red, RedConfig, TcpAverage, TrafficClass,
};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    Arrive {
        kind: PacketKind,
        flow: u32,
        tag: u8,
        /// The ECN codepoint's two bits (CE included: a queue must take it too).
        ecn: u8,
        len: u32,
        dt: Nanos,
    },
    Depart {
        dt: Nanos,
    },
    Done {
        dt: Nanos,
    },
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    let kind = prop_oneof![
        Just(PacketKind::Data),
        Just(PacketKind::Ack),
        Just(PacketKind::Cbr)
    ];
    let len = prop_oneof![Just(1500u32), Just(186), Just(52), 1u32..=1500];
    let dt = prop_oneof![Just(0u64), 0u64..200_000, 0u64..20_000_000];
    let arrive = (
        kind,
        0u32..6,
        prop_oneof![Just(0u8), Just(46), Just(10)],
        prop_oneof![3 => Just(0u8), 1 => 0u8..4],
        len,
        dt.clone(),
    )
        .prop_map(|(kind, flow, tag, ecn, len, dt)| Op::Arrive {
            kind,
            flow,
            tag,
            ecn,
            len,
            dt,
        });
    let op = prop_oneof![
        5 => arrive,
        2 => dt.clone().prop_map(|dt| Op::Depart { dt }),
        2 => dt.prop_map(|dt| Op::Done { dt }),
    ];
    prop::collection::vec(op, 0..500)
}

fn rule() -> impl Strategy<Value = FullRule> {
    prop_oneof![
        Just(FullRule::Ps),
        Just(FullRule::FbStrict),
        Just(FullRule::FbLoose)
    ]
}

/// A limit that suits the rule: packets for PS, bytes otherwise.
fn limit_for(rule: FullRule, raw: u64) -> u64 {
    match rule {
        FullRule::Ps => raw % 60 + 1,
        _ => raw % 60_000 + 1,
    }
}

fn within(rule: FullRule, limit: u64, packets: u32, bytes: u64) -> bool {
    match rule {
        FullRule::Ps => packets as u64 <= limit,
        FullRule::FbStrict => bytes <= limit,
        FullRule::FbLoose => bytes <= limit + 1500,
    }
}

/// What the driver knows after each step.
struct Trace {
    offered: u64,
    drops: Vec<Packet>,
    departed: Vec<Packet>,
    in_service: Option<Packet>,
}

/// Runs `ops` against `q`, checking the generic invariants after every step and
/// `check` for the discipline-specific ones. `fifo`: one FIFO (departures in arrival
/// order) rather than per-class FIFOs.
fn drive<Q: Discipline>(
    q: &mut Q,
    ops: Vec<Op>,
    count_in_service: bool,
    fifo: bool,
    mut check: impl FnMut(&Q, &Trace) -> Result<(), TestCaseError>,
) -> Result<(), TestCaseError> {
    let mut t = Trace {
        offered: 0,
        drops: Vec::new(),
        departed: Vec::new(),
        in_service: None,
    };
    let mut now: Nanos = 0;
    let mut seq = 0u64;
    let mut sent_tos = std::collections::HashMap::new();
    for op in ops {
        match op {
            Op::Arrive {
                kind,
                flow,
                tag,
                ecn,
                len,
                dt,
            } => {
                now += dt;
                let mut p = Packet::new(kind, flow, len, seq, now);
                p.set_dscp(tag);
                p.tos |= ecn;
                sent_tos.insert(seq, p.tos);
                p.arrived = now;
                seq += 1;
                t.offered += 1;
                let before = t.drops.len();
                let ok = q.enqueue(now, p, &mut t.drops);
                let arrival_dropped = t.drops[before..].iter().any(|d| d.seq == p.seq);
                prop_assert_eq!(ok, !arrival_dropped);
                let mut queued = false;
                q.visit(&mut |w| queued |= w.seq == p.seq);
                prop_assert_eq!(ok, queued);
            }
            Op::Depart { dt } => {
                now += dt;
                if t.in_service.is_none() {
                    if let Some(p) = q.dequeue(now, &mut t.drops) {
                        t.departed.push(p);
                        t.in_service = Some(p);
                    }
                }
            }
            Op::Done { dt } => {
                now += dt;
                if t.in_service.take().is_some() {
                    q.transmit_done(now);
                }
            }
        }
        // Conservation.
        prop_assert_eq!(
            t.offered,
            t.drops.len() as u64 + t.departed.len() as u64 + q.waiting() as u64
        );
        // Reported occupancy = what is held.
        let (mut n, mut b) = (0u32, 0u64);
        q.visit(&mut |p| {
            n += 1;
            b += p.len as u64;
        });
        prop_assert_eq!(n as usize, q.waiting());
        let svc = if count_in_service { t.in_service } else { None };
        prop_assert_eq!(q.packets(), n + svc.is_some() as u32);
        prop_assert_eq!(q.bytes(), b + svc.map_or(0, |p| p.len as u64));
        check(q, &t)?;
    }
    // Each packet exactly once: dropped, departed or waiting.
    let mut seen = BTreeSet::new();
    let mut all = t
        .drops
        .iter()
        .chain(t.departed.iter())
        .map(|p| p.seq)
        .collect::<Vec<_>>();
    q.visit(&mut |p| all.push(p.seq));
    for s in &all {
        prop_assert!(seen.insert(*s), "packet {} counted twice", s);
    }
    prop_assert_eq!(seen.len() as u64, t.offered);
    // RFC 3168 §5: a queue never marks a Not-ECT packet, and changes nothing else of
    // the TOS byte; a changed codepoint is CE.
    let tos_ok = |p: &Packet| {
        let was = sent_tos[&p.seq];
        p.tos == was || (was & 3 != 0 && p.tos == was | 3)
    };
    for p in t.drops.iter().chain(t.departed.iter()) {
        prop_assert!(
            tos_ok(p),
            "packet {} tos {:#x} was {:#x}",
            p.seq,
            p.tos,
            sent_tos[&p.seq]
        );
    }
    let mut bad = None;
    q.visit(&mut |p| {
        if !tos_ok(p) {
            bad = Some(p.seq)
        }
    });
    prop_assert!(bad.is_none(), "waiting packet {:?} re-marked", bad);
    // Service order.
    if fifo {
        prop_assert!(t.departed.windows(2).all(|w| w[0].seq < w[1].seq));
    }
    Ok(())
}

fn red_config() -> impl Strategy<Value = RedConfig> {
    (
        (
            0.0f64..20.0,
            0.5f64..30.0,
            0.001f64..=1.0,
            prop_oneof![Just(0.002f64), 0.001f64..=1.0],
        ),
        (rule(), any::<u64>()),
        (any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>()),
        (1u64..5_000_000, any::<u64>(), any::<bool>(), any::<bool>()),
    )
        .prop_map(
            |(
                (min, span, max_p, w_q),
                (rule, raw),
                (gentle, bytes, qib, cis),
                (s, seed, ecn, harddrop),
            )| {
                // Byte thresholds when the queue is measured in bytes.
                let k = if qib { 1000.0 } else { 1.0 };
                RedConfig {
                    min_th: Some(min * k),
                    max_th: Some((min + span) * k),
                    max_p: Some(max_p),
                    w_q: Some(w_q),
                    limit: Some(limit_for(rule, raw)),
                    limit_rule: rule,
                    gentle,
                    bytes,
                    queue_in_bytes: qib,
                    mean_pkt_size: 1500,
                    mean_pkt_time_ns: Some(s),
                    seed,
                    count_in_service: cis,
                    ecn,
                    harddrop,
                }
            },
        )
}

fn fred_config() -> impl Strategy<Value = FredConfig> {
    (
        (
            0.5f64..20.0,
            0.5f64..30.0,
            0.001f64..=1.0,
            prop_oneof![Just(0.002f64), 0.001f64..=1.0],
        ),
        (rule(), any::<u64>()),
        (0.0f64..5.0, any::<bool>(), 1u64..5_000_000, any::<u64>()),
    )
        .prop_map(
            |((min, span, max_p, w_q), (rule, raw), (min_q, cis, s, seed))| FredConfig {
                min_th: Some(min),
                max_th: Some(min + span),
                max_p: Some(max_p),
                w_q: Some(w_q),
                limit: Some(limit_for(rule, raw)),
                limit_rule: rule,
                min_q,
                mean_pkt_size: 1500,
                mean_pkt_time_ns: Some(s),
                seed,
                count_in_service: cis,
            },
        )
}

fn cbt_config() -> impl Strategy<Value = CbtConfig> {
    (
        (
            0.0f64..20.0,
            0.5f64..30.0,
            0.001f64..=1.0,
            0.001f64..=1.0,
            any::<bool>(),
        ),
        (0.0f64..10.0, 0.0f64..10.0, prop::option::of(0.001f64..=1.0)),
        (rule(), any::<u64>()),
        (any::<bool>(), 1u64..5_000_000, any::<u64>(), any::<bool>()),
    )
        .prop_map(
            |(
                (min, span, max_p, w_q, gentle),
                (tt, to, w_class),
                (rule, raw),
                (cis, s, seed, tags),
            )| {
                CbtConfig {
                    tcp: Some(CbtTcp {
                        min_th: min,
                        max_th: min + span,
                        max_p,
                        w_q,
                        gentle,
                    }),
                    tagged_th: Some(tt),
                    other_th: Some(to),
                    shares: None,
                    w_class,
                    limit: Some(limit_for(rule, raw)),
                    limit_rule: rule,
                    tagged_tags: tags.then(|| vec![46]),
                    tagged_flows: if tags { vec![5] } else { vec![] },
                    mean_pkt_size: 1500,
                    mean_pkt_time_ns: Some(s),
                    seed,
                    count_in_service: cis,
                    // Both readings of TCP's RED average, by the seed's parity.
                    tcp_average: if seed % 2 == 0 {
                        TcpAverage::Class
                    } else {
                        TcpAverage::Queue
                    },
                }
            },
        )
}

fn cbq_config() -> impl Strategy<Value = CbqConfig> {
    (
        (0.01f64..1.0, 0.01f64..1.0, 0.01f64..1.0),
        (rule(), any::<u64>(), any::<u64>(), any::<u64>()),
        (prop::option::of(1u64..20_000), any::<bool>()),
    )
        .prop_map(
            |((s0, s1, s2), (rule, a, b, c), (quantum, drop_head))| CbqConfig {
                shares: PerClass {
                    tcp: s0,
                    tagged: s1,
                    other: s2,
                },
                limits: Some(PerClass {
                    tcp: limit_for(rule, a),
                    tagged: limit_for(rule, b),
                    other: limit_for(rule, c),
                }),
                limit_rule: rule,
                quantum,
                drop_head,
                tagged_tags: None,
                tagged_flows: vec![],
            },
        )
}

fn codel_config() -> impl Strategy<Value = CodelConfig> {
    (
        (1u64..20_000_000, 1u64..200_000_000),
        (rule(), any::<u64>()),
        prop_oneof![Just(1500u32), 0u32..3000],
        any::<bool>(),
    )
        .prop_map(|((target, extra), (rule, raw), mtu, ecn)| CodelConfig {
            target_ns: target,
            interval_ns: target + extra,
            limit: limit_for(rule, raw),
            limit_rule: rule,
            mtu,
            ecn,
        })
}

fn fq_codel_config() -> impl Strategy<Value = FqCodelConfig> {
    (
        (1u32..64, 1u32..3000, 1u32..80),
        (1u64..20_000_000, 1u64..200_000_000, 1u32..80, any::<u64>()),
        any::<bool>(),
    )
        .prop_map(
            |((flows, quantum, limit), (target, extra, drop_batch, seed), ecn)| FqCodelConfig {
                flows,
                quantum,
                limit,
                target_ns: target,
                interval_ns: target + extra,
                mtu: 1500,
                drop_batch,
                ecn,
                seed,
            },
        )
}

fn pie_config() -> impl Strategy<Value = PieConfig> {
    (
        (1u64..40_000_000, 1u64..40_000_000, 0.0f64..1.0, 0.0f64..4.0),
        (0u64..300_000_000, 1u64..200, any::<bool>(), any::<u64>()),
        any::<bool>(),
    )
        .prop_map(
            |((target, tupdate, alpha, beta), (burst, limit, bytemode, seed), ecn)| PieConfig {
                target_ns: target,
                tupdate_ns: tupdate,
                alpha,
                beta,
                max_burst_ns: burst,
                limit,
                mtu: 1500,
                bytemode,
                ecn,
                seed,
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn pie_invariants(cfg in pie_config(), ops in ops()) {
        let mut q = Pie::new(&cfg).unwrap();
        drive(&mut q, ops, false, true, |q, t| {
            prop_assert!(q.packets() as u64 <= cfg.limit);
            let v = q.vars();
            prop_assert!((0.0..=1.0).contains(&v.prob), "p = {}", v.prob);
            prop_assert!(v.accu_prob >= 0.0 && v.burst_time <= cfg.max_burst_ns);
            prop_assert_eq!(q.stats().early + q.stats().overflow, t.drops.len() as u64);
            Ok(())
        })?;
    }

    #[test]
    fn fq_codel_invariants(cfg in fq_codel_config(), ops in ops()) {
        let mut q = FqCodel::new(&cfg).unwrap();
        drive(&mut q, ops, false, false, |q, t| {
            prop_assert!(q.packets() <= cfg.limit);
            prop_assert_eq!(q.stats().codel + q.stats().overflow, t.drops.len() as u64);
            // FIFO within each flow; every bucket with packets is on exactly one list.
            let mut last = std::collections::BTreeMap::<u32, u64>::new();
            for p in &t.departed {
                if let Some(prev) = last.insert(p.flow, p.seq) {
                    prop_assert!(prev < p.seq);
                }
            }
            let (new, old) = q.lists();
            let mut on = new.clone();
            on.extend(&old);
            let n = on.len();
            on.sort_unstable();
            on.dedup();
            prop_assert_eq!(on.len(), n, "a bucket on two lists");
            for b in 0..cfg.flows {
                if q.bucket_state(b).0 > 0 {
                    prop_assert!(on.contains(&b), "backlogged bucket {} on no list", b);
                }
            }
            // Work conservation.
            if q.waiting() > 0 {
                let mut probe = q.clone();
                prop_assert!(probe.dequeue(0, &mut Vec::new()).is_some() || probe.waiting() == 0);
            }
            Ok(())
        })?;
    }

    #[test]
    fn dualpi2_invariants(
        (limit, scheduler, overload, early, step_pkts, seed) in (
            1u64..80,
            prop_oneof![Just("ts_fifo"), Just("wrr")],
            any::<bool>(),
            any::<bool>(),
            0u32..4,
            any::<u64>(),
        ),
        ops in ops(),
    ) {
        let cfg: DualPi2Config = serde_json::from_value(serde_json::json!({
            "limit": limit, "scheduler": scheduler, "drop_overload": overload,
            "drop_early": early, "min_qlen_step": step_pkts, "seed": seed,
            "tupdate_ns": 1_000_000, "target_ns": 2_000_000,
        })).unwrap();
        let mut q = DualPi2::new(&cfg).unwrap();
        drive(&mut q, ops, false, false, |q, t| {
            prop_assert!(q.packets() as u64 <= limit);
            prop_assert_eq!(q.stats().drops(), t.drops.len() as u64);
            Ok(())
        })?;
    }

    #[test]
    fn cake_invariants(
        (bw, diffserv, isolation, ack, ecn, seed) in (
            prop_oneof![Just(0u64), 100_000u64..20_000_000],
            prop_oneof![Just("besteffort"), Just("diffserv3"), Just("diffserv4"),
                        Just("diffserv8")],
            prop_oneof![Just("flows"), Just("triple_isolate"), Just("dual_dsthost"),
                        Just("flowblind")],
            prop_oneof![Just("off"), Just("normal"), Just("aggressive")],
            any::<bool>(),
            any::<u64>(),
        ),
        (overhead, atm, memory) in (-20i32..60, any::<bool>(), 3000u64..60_000),
        ops in ops(),
    ) {
        let cfg: CakeConfig = serde_json::from_value(serde_json::json!({
            "bandwidth_bps": bw, "diffserv": diffserv, "isolation": isolation,
            "ack_filter": ack, "ecn": ecn, "seed": seed, "overhead": overhead, "atm": atm,
            "memory_limit": memory,
        })).unwrap();
        let mut q = Cake::new(&cfg).unwrap();
        drive(&mut q, ops, false, false, |q, _t| {
            prop_assert!(q.bytes() <= memory + 1500);
            Ok(())
        })?;
    }

    #[test]
    fn codel_invariants(cfg in codel_config(), ops in ops()) {
        let mut q = Codel::new(&cfg).unwrap();
        drive(&mut q, ops, false, true, |q, t| {
            prop_assert!(within(cfg.limit_rule, cfg.limit, q.packets(), q.bytes()));
            let v = q.vars();
            // A dropping state always has a count and a next drop time.
            prop_assert!(!v.dropping || (v.count >= 1 && v.drop_next > 0));
            prop_assert_eq!(
                q.stats().dropped + q.stats().overflow,
                t.drops.len() as u64
            );
            Ok(())
        })?;
    }

    #[test]
    fn red_invariants(cfg in red_config(), ops in ops()) {
        let mut q = Red::new(&cfg, 0).unwrap();
        drive(&mut q, ops, cfg.count_in_service, true, |q, _| {
            prop_assert!(within(cfg.limit_rule, cfg.limit.unwrap(), q.packets(), q.bytes()));
            prop_assert!(q.avg().is_finite() && q.avg() >= 0.0);
            prop_assert!(q.count() >= -1);
            Ok(())
        })?;
    }

    #[test]
    fn fred_invariants(cfg in fred_config(), ops in ops()) {
        let mut q = Fred::new(&cfg, 0).unwrap();
        let cis = cfg.count_in_service;
        drive(&mut q, ops, cis, true, |q, t| {
            prop_assert!(within(cfg.limit_rule, cfg.limit.unwrap(), q.packets(), q.bytes()));
            prop_assert!(q.avg().is_finite() && q.avg() >= 0.0);
            prop_assert!(q.avgcq() >= 1.0);
            // Per-flow counts = the packets each flow has in the queue (plus on the wire
            // when it counts); only flows with packets have state.
            let mut per_flow = std::collections::BTreeMap::<u32, u32>::new();
            q.visit(&mut |p| *per_flow.entry(p.flow).or_default() += 1);
            if let (true, Some(p)) = (cis, t.in_service) {
                *per_flow.entry(p.flow).or_default() += 1;
            }
            prop_assert_eq!(q.active_flows(), per_flow.len());
            for (flow, n) in per_flow {
                prop_assert_eq!(q.flow(flow).map(|s| s.qlen), Some(n));
            }
            Ok(())
        })?;
    }

    #[test]
    fn cbt_invariants(cfg in cbt_config(), ops in ops()) {
        let mut q = Cbt::new(&cfg, 0).unwrap();
        let cis = cfg.count_in_service;
        drive(&mut q, ops, cis, true, |q, t| {
            prop_assert!(within(cfg.limit_rule, cfg.limit.unwrap(), q.packets(), q.bytes()));
            let mut per_class = [0u32; 3];
            q.visit(&mut |p| per_class[q.classify(p).index()] += 1);
            if let (true, Some(p)) = (cis, t.in_service) {
                per_class[q.classify(&p).index()] += 1;
            }
            for c in TrafficClass::ALL {
                prop_assert_eq!(q.class_packets(c), per_class[c.index()]);
                prop_assert!(q.avg(c).is_finite() && q.avg(c) >= 0.0);
            }
            Ok(())
        })?;
    }

    #[test]
    fn cbq_invariants(cfg in cbq_config(), ops in ops()) {
        let mut q = Cbq::new(&cfg, 0).unwrap();
        let quanta = q.quanta();
        prop_assert!(quanta.iter().all(|&x| x >= 1));
        prop_assert!(quanta.iter().sum::<u64>().abs_diff(cfg.quantum.unwrap_or(DEFAULT_QUANTUM)) <= 3);
        drive(&mut q, ops, false, false, |q, t| {
            for c in TrafficClass::ALL {
                prop_assert!(within(cfg.limit_rule, cfg.limits.unwrap().get(c), q.class_packets(c), q.class_bytes(c)));
            }
            // FIFO within each class.
            for c in TrafficClass::ALL {
                let seqs: Vec<u64> =
                    t.departed.iter().filter(|p| q.classify(p) == c).map(|p| p.seq).collect();
                prop_assert!(seqs.windows(2).all(|w| w[0] < w[1]));
            }
            // Work conservation: if anything waits, a free link gets a packet.
            if q.waiting() > 0 {
                let mut probe = q.clone();
                prop_assert!(probe.dequeue(0, &mut Vec::new()).is_some());
            }
            Ok(())
        })?;
    }
}
