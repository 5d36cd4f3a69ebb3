//! Whole trials with active queue management and scheduling on the bottleneck.

use crate::support;

use collateral_sim::queue::DisciplineConfig;
use collateral_sim::scenario::Queue;
use collateral_sim::tcp::{Profile, TcpConfig};
use collateral_sim::traffic::CbrConfig;
use collateral_sim::{simulate, Direction, Scenario};
use proptest::prelude::*;
use support::{MS, S};

/// 10 Mbit/s each way, 60 ms RTT, `down` on the bottleneck (100 packets drop-tail up),
/// `flows` Linux 6 flows down 100 ms apart and one CBR flow down.
fn scenario(down: Queue, seed: u64, flows: usize) -> Scenario {
    support::ten_meg(60, 100)
        .down_queue(down)
        .seed(seed)
        .duration(40 * S)
        .warmup(5 * S)
        .tcp_flows((0..flows).map(|i| TcpConfig {
            start_ns: i as u64 * 100 * MS,
            ..Profile::Linux6.config()
        }))
        .cbr(CbrConfig {
            direction: Direction::Down,
            ..Default::default()
        })
        .build()
}

fn aqm(json: &str) -> Queue {
    Queue::Aqm(serde_json::from_str::<DisciplineConfig>(json).unwrap())
}

fn median_queue(r: &collateral_sim::TrialResult) -> u32 {
    let mut q: Vec<u32> = (0..r.traces.queue.time.len())
        .filter(|&i| r.traces.queue.direction[i] == 0 && r.traces.queue.time[i] > 5 * S)
        .map(|i| r.traces.queue.packets[i])
        .collect();
    q.sort_unstable();
    q[q.len() / 2]
}

#[test]
fn red_keeps_the_queue_shorter_than_drop_tail_of_the_same_size() {
    // Four NewReno flows into a 60-packet queue: drop-tail fills it before each loss;
    // RED (min 5, max 15) drops early and keeps the occupancy near its thresholds.
    let dt = simulate(scenario(support::packets(60).into(), 1, 4)).unwrap();
    let red = simulate(scenario(
        aqm(r#"{"kind":"red","min_th":5,"max_th":15,"max_p":0.1,"w_q":0.002,"limit":60,"gentle":true}"#),
        1,
        4,
    ))
    .unwrap();
    let (q_dt, q_red) = (median_queue(&dt), median_queue(&red));
    assert!(
        q_red < 20 && q_dt > 2 * q_red,
        "median queue: drop-tail {q_dt}, RED {q_red}"
    );
    assert!(red.summary.cbr[0].delay_median_s < dt.summary.cbr[0].delay_median_s);
    // The price of a short queue against a 50-packet BDP: some goodput, not most of it.
    let goodput =
        |r: &collateral_sim::TrialResult| r.summary.tcp.iter().map(|t| t.goodput_bps).sum::<f64>();
    let (g_dt, g_red) = (goodput(&dt), goodput(&red));
    assert!(
        g_red < g_dt && g_red > 0.7 * g_dt,
        "goodput: drop-tail {g_dt}, RED {g_red}"
    );
}

#[test]
fn a_bad_discipline_is_refused_with_its_field_named() {
    let sc = scenario(
        aqm(r#"{"kind":"red","min_th":15,"max_th":5,"max_p":0.1,"w_q":0.002,"limit":60}"#),
        1,
        1,
    );
    let e = simulate(sc).err().unwrap();
    assert!(e.starts_with("down.queue:"), "{e}");
    let bad = serde_json::from_str::<Scenario>(
        r#"{"seed":1,"duration_ns":1,"down":{"rate_bps":1,"queue":{"kind":"red","bogus":1}},
            "up":{"rate_bps":1,"queue":{"rule":"ps","limit":1}}}"#,
    );
    assert!(bad.unwrap_err().to_string().contains("bogus"));
}

fn disciplines() -> impl Strategy<Value = String> {
    prop_oneof![
        (1u32..10, 10u32..40, 0.01f64..0.5, any::<bool>(), 20u32..120).prop_map(|(lo, hi, p, g, lim)| format!(
            r#"{{"kind":"red","min_th":{lo},"max_th":{hi},"max_p":{p},"w_q":0.002,"limit":{lim},"gentle":{g}}}"#
        )),
        (1u32..10, 10u32..40, 20u32..120).prop_map(|(lo, hi, lim)| format!(
            r#"{{"kind":"fred","min_th":{lo},"max_th":{hi},"max_p":0.02,"w_q":0.002,"limit":{lim}}}"#
        )),
        (1u32..10, 10u32..40, 1u32..10, 1u32..10, 20u32..120).prop_map(|(lo, hi, t, o, lim)| format!(
            r#"{{"kind":"cbt","tcp":{{"min_th":{lo},"max_th":{hi},"max_p":0.1,"w_q":0.002}},"tagged_th":{t},"other_th":{o},"limit":{lim}}}"#
        )),
        (5u32..60, 2u32..30, 2u32..30).prop_map(|(a, b, c)| format!(
            r#"{{"kind":"cbq","shares":{{"tcp":0.74,"tagged":0.14,"other":0.12}},"limits":{{"tcp":{a},"tagged":{b},"other":{c}}}}}"#
        )),
        (1u64..20, 20u64..200, 10u32..1000).prop_map(|(t, i, lim)| format!(
            r#"{{"kind":"codel","target_ns":{},"interval_ns":{},"limit":{lim}}}"#,
            t * 1_000_000, i * 1_000_000
        )),
        (1u32..256, 100u32..3000, 10u32..1000).prop_map(|(f, qu, lim)| format!(
            r#"{{"kind":"fq_codel","flows":{f},"quantum":{qu},"limit":{lim}}}"#
        )),
        (5u64..30, 5u64..30, 10u32..1000).prop_map(|(t, u, lim)| format!(
            r#"{{"kind":"pie","target_ns":{},"tupdate_ns":{},"limit":{lim}}}"#,
            t * 1_000_000, u * 1_000_000
        )),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    /// Every packet offered to the bottleneck is delivered, dropped or still inside, and
    /// every CBR packet is accounted for, whatever the discipline.
    #[test]
    fn packets_are_conserved_under_every_discipline(json in disciplines(), seed in 0u64..1000, flows in 0usize..4) {
        let r = simulate(scenario(aqm(&json), seed, flows)).unwrap();
        let q = &r.summary.queues.down;
        prop_assert_eq!(q.arrivals, q.delivered + q.drops + q.wire_losses + q.in_flight);
        for c in &r.summary.cbr {
            prop_assert_eq!(c.sent, c.received + c.lost + c.in_flight);
        }
        for t in &r.summary.tcp {
            prop_assert!(t.goodput_bps <= 10e6 * 1448.0 / 1500.0 * 1.0001);
        }
    }
}

#[test]
fn cbt_tells_tagged_multimedia_from_other_udp() {
    // Two identical 4 Mbit/s UDP streams (1000 B every 2 ms) beside bulk TCP, one tagged.
    // CBT gives the tagged class a threshold of 8 packets on its average and "other" only
    // 1: the untagged stream loses far more than the tagged one.
    let cbt = aqm(
        r#"{"kind":"cbt","tcp":{"min_th":5,"max_th":15,"max_p":0.1,"w_q":0.002},"tagged_th":8,"other_th":1,"limit":60}"#,
    );
    let mut sc = scenario(cbt, 3, 3);
    let stream = |tag| CbrConfig {
        direction: Direction::Down,
        packet_bytes: 1000,
        interval_ns: 2 * MS,
        jitter_ns: 0,
        tag,
        ..Default::default()
    };
    sc.cbr = vec![stream(1), stream(0)];
    let r = simulate(sc).unwrap();
    let (tagged, other) = (&r.summary.cbr[0], &r.summary.cbr[1]);
    assert!(
        other.loss_rate > 2.0 * tagged.loss_rate.max(0.001),
        "tagged {} vs other {}",
        tagged.loss_rate,
        other.loss_rate
    );
}

/// CoDel on a 1000-packet buffer: bulk TCP would fill a drop-tail buffer of that size
/// (1.2 s of queue at 10 Mbit/s); CoDel holds the VoIP packets' queueing delay near its
/// 5 ms target while four TCP flows still fill the link (one or two Reno flows at 60 ms
/// do not quite: a 5 ms standing queue is far below their BDP, a known CoDel trait).
#[test]
fn codel_keeps_the_standing_queue_near_target() {
    let big = support::packets(1000);
    let codel = aqm(r#"{"kind":"codel","target_ns":5000000,"interval_ns":100000000,"limit":1000}"#);
    let tail = simulate(scenario(big.into(), 1, 4)).unwrap();
    let cd = simulate(scenario(codel, 1, 4)).unwrap();
    let (t, c) = (&tail.summary.cbr[0], &cd.summary.cbr[0]);
    assert!(
        t.delay_median_s > 0.3,
        "drop-tail fills the buffer: {}",
        t.delay_median_s
    );
    assert!(c.delay_median_s < 0.02, "CoDel median {}", c.delay_median_s);
    let goodput: f64 = cd.summary.tcp.iter().map(|f| f.goodput_bps).sum();
    assert!(goodput > 0.9 * 10e6 * 1448.0 / 1500.0, "{goodput}");
}

/// FQ-CoDel gives the sparse VoIP flow its own queue: its packets skip the bulk flows'
/// backlog, so their delay is below what CoDel alone (one shared FIFO) allows.
#[test]
fn fq_codel_isolates_voip_from_bulk_tcp() {
    let codel = aqm(r#"{"kind":"codel","limit":1000}"#);
    let fq = aqm(r#"{"kind":"fq_codel","limit":1000}"#);
    let c = simulate(scenario(codel, 1, 4)).unwrap();
    let f = simulate(scenario(fq, 1, 4)).unwrap();
    let (dc, df) = (&c.summary.cbr[0], &f.summary.cbr[0]);
    assert!(
        df.delay_p95_s < 0.002 && df.delay_p95_s < dc.delay_p95_s / 2.0,
        "fq_codel p95 {} vs codel {}",
        df.delay_p95_s,
        dc.delay_p95_s
    );
    assert_eq!(df.lost, 0);
    let goodput: f64 = f.summary.tcp.iter().map(|t| t.goodput_bps).sum();
    assert!(goodput > 0.9 * 10e6 * 1448.0 / 1500.0, "{goodput}");
}

/// PIE on a 1000-packet buffer drives the queueing delay towards its 15 ms target:
/// the VoIP median sits near it, far below drop-tail's full buffer.
#[test]
fn pie_holds_the_delay_near_its_target() {
    let pie = aqm(r#"{"kind":"pie","limit":1000}"#);
    let r = simulate(scenario(pie, 1, 4)).unwrap();
    let c = &r.summary.cbr[0];
    assert!(
        (0.005..0.030).contains(&c.delay_median_s),
        "PIE median {}",
        c.delay_median_s
    );
    let goodput: f64 = r.summary.tcp.iter().map(|t| t.goodput_bps).sum();
    assert!(goodput > 0.9 * 10e6 * 1448.0 / 1500.0, "{goodput}");
}
