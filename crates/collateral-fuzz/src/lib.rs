//! Structure-aware fuzzing of the scenario JSON the core accepts.
//!
//! Raw bytes rarely spell a valid scenario, so the fuzz input instead *edits* one: it
//! picks a base (a real scenario the Python front end built, `bases/`), then applies a
//! few mutations, each choosing a node of the JSON tree and replacing it with a value
//! from the places where bugs live (0, 1, 2³², 2⁶³, `u64::MAX`, 10³⁰⁰, empty arrays, a
//! name from the core's vocabulary, another discipline's configuration, a duplicated
//! flow, a deleted key). The result goes through [`Scenario::from_json`] and, when
//! accepted, is simulated for at most [`MAX_EVENTS`] events.
//!
//! The property is that of issue 16: whatever the JSON, the core returns `Ok` or `Err`;
//! it never panics, never aborts (allocation failure) and stays within its memory
//! budget. The harness calls [`Simulation`] directly, without the panic net of
//! `collateral_sim::simulate`, so a panic is a finding.
//!
//! [`run_aqm`] does the same for one discipline's configuration alone, as `--aqm` or a
//! TOML queue table reaches the core: an edited configuration is parsed, checked for a
//! link rate, built and fed packets; every refusal must carry the key path at fault
//! (issue 27), and nothing may panic.
//!
//! Two drivers share [`run`] and [`run_aqm`]: `tests/fuzz.rs` (proptest, a fixed seed and a bounded
//! number of cases, in CI) and `fuzz/fuzz_targets/scenario.rs` (cargo-fuzz/libFuzzer,
//! coverage-guided, for long runs; see `fuzz/README.md`).

use arbitrary::Unstructured;
use collateral_sim::error::ConfigError;
use collateral_sim::queue::{AnyQueue, Discipline, DisciplineConfig, Packet, PacketKind};
use collateral_sim::scenario::parse_aqm;
use collateral_sim::{Scenario, Simulation};
use serde_json::{json, Map, Value};

/// Events simulated per accepted input: enough to reach steady state on the bases'
/// links, few enough for thousands of inputs a minute.
pub const MAX_EVENTS: u64 = 200_000;

/// Real scenarios as the Python front end writes them.
pub const BASES: &[&str] = &[
    include_str!("../bases/adsl1_newreno_cbr.json"),
    include_str!("../bases/adsl2_cubic_linux.json"),
    include_str!("../bases/codel_app.json"),
    include_str!("../bases/fq_codel_web.json"),
    include_str!("../bases/pie_bbr.json"),
];

fn grafts() -> Vec<Value> {
    vec![
        json!({"kind": "red", "min_th": 5, "max_th": 15, "max_p": 0.1, "w_q": 0.002,
               "limit": 60, "gentle": true, "bytes": false}),
        json!({"kind": "red", "min_th": 5000, "max_th": 15000, "max_p": 0.1, "w_q": 0.002,
               "limit": 60000, "queue_in_bytes": true, "limit_rule": "fb-loose"}),
        json!({"kind": "fred", "min_th": 5, "max_th": 15, "max_p": 0.02, "w_q": 0.002,
               "limit": 60}),
        json!({"kind": "cbt", "tcp": {"min_th": 5, "max_th": 15, "max_p": 0.1, "w_q": 0.002},
               "tagged_th": 4, "other_th": 2, "limit": 60, "tagged_tags": [46]}),
        json!({"kind": "cbt", "tcp": {"min_th": 5, "max_th": 30, "max_p": 0.1, "w_q": 0.002},
               "shares": {"link_rate_bps": 10_000_000, "tagged_bps": 1_280_000,
                          "other_bps": 1_200_000, "backlog_bytes": 60_000,
                          "tagged_pkt_len": 1000, "other_pkt_len": 1500}, "limit": 60}),
        json!({"kind": "cbq", "shares": {"tcp": 0.74, "tagged": 0.14, "other": 0.12},
               "limits": {"tcp": 40, "tagged": 20, "other": 20}}),
        json!({"kind": "codel", "target_ns": 5_000_000, "interval_ns": 100_000_000,
               "limit": 1000}),
        json!({"kind": "fq_codel", "flows": 1024, "quantum": 1500, "limit": 10240}),
        json!({"kind": "pie", "target_ns": 15_000_000, "tupdate_ns": 15_000_000,
               "limit": 1000}),
        json!({"kind": "pie", "ecn": true, "limit": 100}),
        json!({"kind": "fq_codel", "ecn": false}),
        json!({"kind": "codel", "ecn": true}),
        json!({"kind": "red", "min_th": 5, "max_th": 15, "max_p": 0.1, "w_q": 0.002,
               "limit": 60, "ecn": true, "harddrop": true}),
        json!({"kind": "dualpi2"}),
        json!({"kind": "dualpi2", "limit": 50, "scheduler": "wrr", "c_protection": 50,
               "drop_overload": false, "drop_early": true, "min_qlen_step": 2}),
        json!({"kind": "cake", "bandwidth_bps": 1_400_000, "overhead": 10, "atm": true,
               "diffserv": "diffserv4", "ack_filter": "aggressive"}),
        json!({"kind": "cake", "isolation": "dual_dsthost", "ack_filter": "normal",
               "memory_limit": 20000}),
        json!({"profile": "linux-6", "cc": "prague", "ecn": "l4s"}),
        json!({"profile": "linux-6", "cc": "cubic", "ecn": "classic"}),
        json!({"profile": "rfc", "cc": "dctcp", "ecn": "l4s"}),
        json!({"direction": "up", "app": "g711", "tag": 46, "ecn": "ect1"}),
        json!({"rule": "ps", "limit": 20}),
        json!({"rule": "fb-loose", "limit": 30000, "count_in_service": true}),
        json!({"overhead_bytes": 10, "atm": true}),
        json!({"kind": "pareto", "scale": 1000.0, "shape": 1.2}),
        json!({"kind": "exponential", "mean": 2.0}),
        json!({"profile": "linux-2.6.25", "cc": "htcp"}),
        json!({"profile": "freebsd-7", "cc": "htcp", "size_segments": 20}),
        json!({"profile": "linux-6", "cc": "bbr", "stop_ns": 2_000_000_000u64}),
        json!({"direction": "up", "app": "vnc"}),
        json!({"name": "late", "start_ns": 2_000_000_000u64}),
        json!({"users": 2, "parallel": 2, "direction": "down"}),
    ]
}

const INTS: &[u64] = &[
    0,
    1,
    2,
    3,
    40,
    41,
    64,
    255,
    256,
    1500,
    65_535,
    65_536,
    1 << 20,
    (1 << 31) - 1,
    1 << 31,
    u32::MAX as u64,
    1 << 32,
    1 << 40,
    1_000_000_000_000_000,
    1 << 53,
    (1 << 53) + 1,
    1 << 63,
    u64::MAX - 2,
    u64::MAX,
];
const FLOATS: &[f64] = &[
    0.0, -0.0, 1e-300, 1e-9, 0.001, 0.5, 0.999_999, 1.0, 1.000_001, 2.0, 1e9, 1e19, 1e300, -1.0,
    -1e300,
];
const NAMES: &[&str] = &[
    "",
    "down",
    "up",
    "ps",
    "fb-strict",
    "fb-loose",
    "fb_strict",
    "newreno",
    "cubic",
    "htcp",
    "bbr",
    "rfc",
    "linux-6",
    "linux-2.6.25",
    "freebsd-7",
    "prr",
    "fack",
    "rfc6675",
    "quake3",
    "vnc",
    "g711",
    "red",
    "codel",
    "fq_codel",
    "pie",
    "dualpi2",
    "cake",
    "dctcp",
    "prague",
    "off",
    "classic",
    "l4s",
    "not_ect",
    "ect0",
    "ect1",
    "ce",
    "besteffort",
    "diffserv4",
    "triple_isolate",
    "aggressive",
    "empirical",
    "pareto",
    "constant",
    "uniform",
    "lognormal",
    "tcp",
    "tagged",
    "other",
    "all",
];

/// Every path of the tree (keys and indices), containers included.
fn paths(v: &Value, here: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
    out.push(here.clone());
    match v {
        Value::Object(m) => {
            for (k, c) in m {
                here.push(Step::Key(k.clone()));
                paths(c, here, out);
                here.pop();
            }
        }
        Value::Array(a) => {
            for (i, c) in a.iter().enumerate() {
                here.push(Step::Index(i));
                paths(c, here, out);
                here.pop();
            }
        }
        _ => {}
    }
}

#[derive(Clone, Debug)]
enum Step {
    Key(String),
    Index(usize),
}

fn at<'a>(v: &'a mut Value, path: &[Step]) -> &'a mut Value {
    path.iter().fold(v, |v, s| match s {
        Step::Key(k) => &mut v[k.as_str()],
        Step::Index(i) => &mut v[*i],
    })
}

/// One edit of the node at a chosen path.
fn mutate(u: &mut Unstructured, root: &mut Value) -> arbitrary::Result<()> {
    let mut all = Vec::new();
    paths(root, &mut Vec::new(), &mut all);
    let path = u.choose(&all)?.clone();
    let grafts = grafts();
    let (parent, last) = path.split_at(path.len().saturating_sub(1));
    let node = at(root, &path);
    // Three edits in four keep the node's type (a number stays a number), so most cases
    // get past the parser to the checks and the simulation.
    let typed = u.ratio(3u8, 4u8)?;
    let op = match node {
        Value::Number(n) if typed && n.is_u64() => *u.choose(&[0u8, 0, 6, 6, 11])?,
        Value::Number(_) if typed => *u.choose(&[1u8, 1, 6])?,
        Value::String(_) if typed => 2,
        Value::Bool(_) if typed => 7,
        Value::Array(_) if typed => *u.choose(&[4u8, 8, 9])?,
        Value::Object(_) if typed => *u.choose(&[3u8, 9, 10])?,
        _ => u.int_in_range(0..=11u8)?,
    };
    match op {
        0 => *node = json!(*u.choose(INTS)?),
        1 => *node = json!(*u.choose(FLOATS)?),
        2 => *node = json!(*u.choose(NAMES)?),
        3 => *node = u.choose(&grafts)?.clone(),
        4 => *node = json!([]),
        5 => *node = Value::Null,
        6 => {
            // Scale a number by a power of two, up or down.
            if let Some(x) = node.as_u64() {
                let k = u.int_in_range(0..=40u32)?;
                *node = json!(if u.arbitrary()? {
                    x.saturating_mul(1 << k.min(63))
                } else {
                    x >> k
                });
            } else if let Some(x) = node.as_f64() {
                *node = json!(x * 2f64.powi(u.int_in_range(-60..=60)?));
            }
        }
        7 => *node = json!(u.arbitrary::<bool>()?),
        8 => {
            // Duplicate an array's element many times (more flows, more phases).
            if let Value::Array(a) = node {
                if let Some(first) = a.first().cloned() {
                    let n = *u.choose(&[1usize, 2, 7, 64, 300])?;
                    a.extend(std::iter::repeat_n(first, n));
                }
            }
        }
        9 => {
            // Add a grafted element to an array, or a key to an object.
            let g = u.choose(&grafts)?.clone();
            match node {
                Value::Array(a) => a.push(g),
                Value::Object(m) => {
                    let k = u.choose(NAMES)?.to_string();
                    m.insert(k, g);
                }
                _ => *node = g,
            }
        }
        10 => {
            // Delete this key from its object (defaults or "missing field").
            if let (Some(Step::Key(k)), false) =
                (last.first(), parent.is_empty() && last.is_empty())
            {
                if let Value::Object(m) = at(root, parent) {
                    m.remove(k);
                }
            }
        }
        _ => *node = json!(u.arbitrary::<i64>()?),
    }
    Ok(())
}

/// The scenario JSON a fuzz input stands for.
pub fn scenario_json(data: &[u8]) -> String {
    let mut u = Unstructured::new(data);
    let base = u.choose_index(BASES.len()).unwrap_or(0);
    let mut v: Value = serde_json::from_str(BASES[base]).expect("bases are valid JSON");
    let n = u.int_in_range(0..=6u8).unwrap_or(0);
    for _ in 0..n {
        if mutate(&mut u, &mut v).is_err() {
            break;
        }
    }
    if let Value::Object(m) = &mut v {
        // Cover the traces too: every base asks for them half of the time.
        if u.arbitrary::<bool>().unwrap_or(false) {
            m.insert("trace".into(), Value::Object(Map::new()));
        }
    }
    v.to_string()
}

/// One fuzz case: parse and check the scenario; if accepted, simulate it for at most
/// [`MAX_EVENTS`] events. Returns what the core said (`Ok` for a finished trial).
/// Panics only on a bug.
pub fn run(data: &[u8]) -> Result<(), String> {
    let js = scenario_json(data);
    let sc = Scenario::from_json(&js)?;
    Simulation::new(sc)?
        .with_event_limit(MAX_EVENTS)
        .run()
        .map(|_| ())
}

/// Link rates a discipline is checked and built for: from a modem's to the fastest.
const RATES: &[u64] = &[
    1,
    9_600,
    256_000,
    1_500_000,
    100_000_000,
    10_000_000_000_000,
];

/// The configuration an AQM fuzz input stands for: a discipline's (from the grafts),
/// edited a few times, and the link rate it is built for.
pub fn aqm_json(data: &[u8]) -> (String, u64) {
    let mut u = Unstructured::new(data);
    let kinds: Vec<Value> = grafts()
        .into_iter()
        .filter(|g| {
            g.get("kind")
                .and_then(Value::as_str)
                .is_some_and(|k| DisciplineConfig::kind_info(k).is_some())
        })
        .collect();
    let mut v = u
        .choose(&kinds)
        .cloned()
        .unwrap_or_else(|_| kinds[0].clone());
    for _ in 0..u.int_in_range(0..=4u8).unwrap_or(0) {
        if mutate(&mut u, &mut v).is_err() {
            break;
        }
    }
    let rate = u.choose(RATES).copied().unwrap_or(1_500_000);
    (v.to_string(), rate)
}

/// One AQM case (see the crate's doc): parse, check, build, then a few hundred packets
/// in and out. Returns what the core said; panics only on a bug.
pub fn run_aqm(data: &[u8]) -> Result<(), ConfigError> {
    let (js, rate) = aqm_json(data);
    let c = parse_aqm(&js)?;
    c.validate(rate).map_err(|e| ConfigError::parse(&e))?;
    let mut q: AnyQueue = c.build(rate).map_err(|e| ConfigError::parse(&e))?;
    let mut drops = Vec::new();
    let mut now = 0u64;
    for i in 0..400u64 {
        // Bulk data, ACKs and small real-time packets from a few flows, arriving faster
        // than a 1.5 Mbit/s link drains them, so the queue fills and its AQM acts.
        let (kind, len) = match i % 5 {
            0 => (PacketKind::Ack, 40),
            1 => (PacketKind::Cbr, 186),
            _ => (PacketKind::Data, 1500),
        };
        let _ = q.enqueue(
            now,
            Packet::new(kind, (i % 7) as u32, len, i, now),
            &mut drops,
        );
        if i % 3 == 0 {
            let _ = q.dequeue(now, &mut drops);
            q.transmit_done(now);
        }
        now += 2_000_000;
    }
    while q.dequeue(now, &mut drops).is_some() {
        now += 1_000_000;
    }
    Ok(())
}
