//! The simulator's CBR flows send on the model's source schedule
//! (`CbrSource::of_flow`), the one the testbed's sender follows too (collateral-emu's
//! `endpoints` tests): so a trial's real-time packets leave at the same times, with the
//! same sizes, in both.

use collateral_sim::traffic::CbrSource;
use collateral_sim::{simulate, Scenario};

#[test]
fn the_simulators_cbr_packets_leave_on_the_models_schedule() {
    // 10 000 packets of a jittered VoIP flow (one every 20 ms on average, 1 ms jitter)
    // and a Quake 3 stream (50 ms), no TCP: 200 s.
    let sc = Scenario::from_json(
        r#"{"seed": 42, "duration_ns": 200000000000, "rtt_ns": 20000000,
            "down": {"rate_bps": 10000000, "queue": {"rule": "ps", "limit": 100}},
            "up": {"rate_bps": 10000000, "queue": {"rule": "ps", "limit": 100}},
            "cbr": [{"direction": "down"}, {"direction": "up", "app": "quake3", "tag": 46}],
            "trace": {"cwnd": false, "queue": false, "cbr": true, "drops": false,
                      "classes": false}}"#,
    )
    .unwrap();
    let sim = simulate(sc.clone()).unwrap();
    let tr = &sim.traces.cbr;
    for (j, flow) in [(0usize, 0u32), (1, 1)] {
        let mut src = CbrSource::of_flow(&sc.cbr[j], sc.seed, j);
        let model: Vec<(u64, u32)> =
            std::iter::from_fn(|| src.next_departure(sc.duration_ns)).collect();
        let sent: Vec<(u64, u32)> = (0..tr.flow.len())
            .filter(|&k| tr.flow[k] == flow)
            .map(|k| (tr.sent[k], tr.bytes[k]))
            .collect();
        assert!(
            model.len() >= if j == 0 { 9_900 } else { 3_900 },
            "{}",
            model.len()
        );
        assert_eq!(model, sent, "flow {j}");
    }
}
