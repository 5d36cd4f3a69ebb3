//! ATM framing on an ADSL bottleneck, against the cell arithmetic done by hand.

use crate::support;

use collateral_sim::rate::ser_ns;
use collateral_sim::{simulate, Scenario};
use serde_json::json;

use support::{MS, S};

fn adsl1(framing: serde_json::Value, tcp: bool) -> Scenario {
    let link = |rate: u64| json!({"rate_bps": rate, "queue": {"rule": "ps", "limit": 30}, "framing": framing});
    let sc = json!({
        "seed": 3, "duration_ns": 60 * S, "warmup_ns": 10 * S, "rtt_ns": 40 * MS,
        "down": link(1_500_000), "up": link(256_000),
        "tcp": if tcp { json!([{"profile": "linux-6"}]) } else { json!([]) },
        "cbr": [{"direction": "down", "jitter_ns": 0}],
        "trace": {"cwnd": false, "queue": false, "cbr": true, "drops": false, "classes": false},
    });
    Scenario::from_json(&sc.to_string()).unwrap()
}

#[test]
fn a_lone_voip_packet_takes_five_cells() {
    // PPPoA VC-MUX: 186 + 10 B = 196 B → 5 cells = 265 B on the wire at 1.5 Mbit/s.
    let pppoa = json!({"overhead_bytes": 10, "atm": true});
    let r = simulate(adsl1(pppoa, false)).unwrap();
    let c = &r.summary.cbr[0];
    let access = ser_ns(186, 1_000_000_000);
    let expect = access + ser_ns(265, 1_500_000) + 20 * MS + access;
    assert_eq!(c.base_owd_s, expect as f64 / 1e9);
    // Alone on the link every packet takes exactly that.
    assert_eq!(c.delay_max_s, 0.0);
    let plain = simulate(adsl1(json!({}), false)).unwrap();
    let d = c.base_owd_s - plain.summary.cbr[0].base_owd_s;
    assert_eq!(
        (d * 1e9).round() as u64,
        ser_ns(265, 1_500_000) - ser_ns(186, 1_500_000)
    );
}

#[test]
fn atm_cells_cap_the_goodput_at_the_cell_rate() {
    // A 1500 B segment is 32 cells = 1696 B: at most 1448 payload bytes per 1696 on the
    // wire, beside the CBR's 265 B every 20 ms.
    let pppoa = json!({"overhead_bytes": 10, "atm": true});
    let r = simulate(adsl1(pppoa, true)).unwrap();
    let g = r.summary.tcp[0].goodput_bps;
    let cbr = 265.0 * 8.0 / 0.020;
    let cap = (1.5e6 - cbr) * 1448.0 / 1696.0;
    assert!(g <= cap * 1.001 && g > 0.95 * cap, "goodput {g}, cap {cap}");
    let plain = simulate(adsl1(json!({}), true)).unwrap().summary.tcp[0].goodput_bps;
    assert!(plain > g * 1.1, "without cells {plain} vs {g}");
}
