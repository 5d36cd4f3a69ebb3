//! The summary the simulator writes is the schema the model declares
//! (`collateral_model::schema`): these need a trial run, so they live beside the simulator.

use collateral_sim::schema::{Column, SUMMARY, TRIAL};
use collateral_sim::{simulate, Scenario};

fn names(cols: &[Column]) -> Vec<&'static str> {
    cols.iter().map(|c| c.name).collect()
}

fn keys(v: &serde_json::Value) -> Vec<String> {
    v.as_object().unwrap().keys().cloned().collect()
}

/// The summary of 4 s over a 4/1 Mbit/s link with the TCP flows `tcp` (JSON).
fn with_flows(tcp: &str) -> collateral_sim::metrics::Summary {
    let sc = Scenario::from_json(&format!(
        r#"{{"seed": 3, "duration_ns": 4000000000, "warmup_ns": 1000000000,
            "down": {{"rate_bps": 4000000, "queue": {{"rule": "ps", "limit": 30}}}},
            "up": {{"rate_bps": 1000000, "queue": {{"rule": "ps", "limit": 30}}}},
            "tcp": {tcp}}}"#
    ))
    .unwrap();
    simulate(sc).unwrap().summary
}

/// The aggregate goodput columns are the sums of their direction's flows (two down,
/// one up), not of all flows.
#[test]
fn aggregate_goodput_sums_each_directions_flows() {
    let s = with_flows(r#"[{}, {}, {"direction": "up"}]"#);
    let g: Vec<f64> = s.tcp.iter().map(|t| t.goodput_bps).collect();
    assert!(g.iter().all(|&x| x > 0.0), "{g:?}");
    assert_eq!(s.down_goodput_bps, g[0] + g[1]);
    assert_eq!(s.up_goodput_bps, g[2]);
}

/// A direction without TCP flows has goodput +0, not the -0.0 of an empty float sum
/// (which tables and JSON show as "-0").
#[test]
fn a_direction_without_flows_has_positive_zero_goodput() {
    let s = with_flows("[{}]");
    assert!(s.down_goodput_bps > 0.0);
    assert_eq!(s.up_goodput_bps.to_bits(), 0.0f64.to_bits());
}

/// Every field the core writes is declared, in order, and nothing else is: a trial
/// with TCP, CBR, web users, a video call and phases.
#[test]
fn the_summary_structs_are_the_declared_schema() {
    let sc = Scenario::from_json(
        r#"{"seed": 1, "duration_ns": 3000000000, "warmup_ns": 1000000000,
            "down": {"rate_bps": 10000000, "queue": {"rule": "ps", "limit": 50}},
            "up": {"rate_bps": 10000000, "queue": {"rule": "ps", "limit": 50}},
            "tcp": [{}], "cbr": [{}], "web": [{"users": 5}], "media": {},
            "phases": [{"name": "a", "start_ns": 0}, {"name": "b", "start_ns": 2000000000}]}"#,
    )
    .unwrap();
    let r = simulate(sc).unwrap();
    let v = serde_json::to_value(&r.summary).unwrap();
    let mut top: Vec<String> = names(TRIAL).iter().map(|s| s.to_string()).collect();
    top.extend(SUMMARY[1..].iter().map(|g| g.key.to_string()));
    let mut got = keys(&v);
    got.sort();
    top.sort();
    assert_eq!(got, top);
    let obj = v.as_object().unwrap();
    // serde_json keeps struct order only with preserve_order; compare as sets.
    let set = |mut x: Vec<String>| {
        x.sort();
        x
    };
    for g in &SUMMARY[1..] {
        let want = set(names(g.columns).iter().map(|s| s.to_string()).collect());
        let items: Vec<&serde_json::Value> = match &obj[g.key] {
            serde_json::Value::Array(a) => a.iter().collect(),
            serde_json::Value::Object(o) => o.values().collect(),
            _ => panic!("{}", g.key),
        };
        assert!(!items.is_empty(), "{}", g.key);
        for it in items {
            assert_eq!(set(keys(it)), want, "{}", g.key);
        }
    }
    assert_eq!(
        set(keys(&obj["queues"])),
        set(vec!["down".into(), "up".into()])
    );
}
