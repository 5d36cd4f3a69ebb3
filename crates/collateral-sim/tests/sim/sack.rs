//! Whole trials with SACK: a slow-start overshoot repaired in a few round trips instead of
//! one lost segment per round trip.

use crate::support;

use collateral_sim::tcp::{Profile, TcpConfig};
use collateral_sim::{simulate, TrialResult};
use support::{MS, S};

/// One Linux 2.6.25 flow down a 10 Mbit/s link with 80 ms RTT and a 67-packet queue.
fn overshoot(sack: bool) -> TrialResult {
    let sc = support::ten_meg(80, 67)
        .duration(20 * S)
        .tcp(TcpConfig {
            sack,
            ..Profile::Linux2625.config()
        })
        .build();
    simulate(sc).unwrap()
}

/// The first fast retransmit, the number of packets the bottleneck dropped up to it, and
/// when cwnd first rose again after it. With Linux 2.6.25's rate-halving cwnd never rises
/// during recovery; recovery ends with cwnd ≤ ssthresh, so the next ACK of the slow start
/// that follows raises it: the rise marks the end of the first recovery (to within an
/// ACK).
fn first_recovery(r: &TrialResult) -> (u64, usize, u64) {
    let ct = &r.traces.congestion;
    assert_eq!(
        ct.kind[0], 0,
        "the first congestion event is a fast retransmit"
    );
    let fr = ct.time[0];
    let d = &r.traces.drops;
    let drops = (0..d.time.len())
        .filter(|&i| d.direction[i] == 0 && d.time[i] <= fr)
        .count();
    let c = &r.traces.cwnd;
    let mut prev = u32::MAX;
    let mut end = None;
    for i in 0..c.time.len() {
        if c.time[i] > fr && c.cwnd[i] > prev {
            end = Some(c.time[i]);
            break;
        }
        prev = c.cwnd[i];
    }
    (fr, drops, end.expect("cwnd rises again"))
}

#[test]
fn sack_repairs_a_slow_start_overshoot_within_a_few_round_trips() {
    // One BDP is 10 Mbit/s × 80 ms = 100 kB ≈ 67 packets, so the path holds about 134.
    // Slow start (one segment per ACK, delayed ACKs) overshoots that within a round
    // trip and the full queue drops dozens of segments. All of them are sent before the
    // first duplicate ACKs return: from the fast retransmit at T on, rate-halving only
    // shrinks the window, so the queue drains.
    //
    // A round trip through the full queue takes R = 80 ms + 67 × 1.2 ms (1500 B at
    // 10 Mbit/s) + 2 × 1.2 ms for the packet in service and its own transmission
    // ≈ 163 ms. With SACK, every segment sent before T is SACKed or seen missing by
    // T + R; FACK calls a hole lost once three segments above it are SACKed, which for
    // the last holes takes the SACKs of segments sent in recovery: one more R at most.
    // The retransmissions go out with the ACK clock in that time and each is
    // acknowledged within R (the queue never holds more than 67 packets), so recovery
    // ends by T + 3R < T + 500 ms.
    let sack = overshoot(true);
    let (fr, drops, end) = first_recovery(&sack);
    let r = 163 * MS;
    assert!(drops >= 30, "a real overshoot: {drops} drops");
    assert!(
        end - fr <= 3 * r,
        "SACK recovery took {} ms",
        (end - fr) / MS
    );
    assert_eq!(sack.summary.tcp[0].timeouts, Some(0));

    // Without SACK the same stack repairs one lost segment per partial ACK, and each
    // retransmission needs at least the base round trip (80 ms) before the partial ACK
    // that reveals the next one: at least (drops − 1) × 80 ms.
    let plain = overshoot(false);
    let (fr0, drops0, end0) = first_recovery(&plain);
    assert_eq!((fr0 / MS, drops0), (fr / MS, drops), "same overshoot");
    assert!(
        end0 - fr0 >= (drops0 as u64 - 1) * 80 * MS,
        "recovery without SACK took {} ms for {drops0} losses",
        (end0 - fr0) / MS
    );
    assert!(end0 - fr0 > 10 * 3 * r);
    assert!(sack.summary.tcp[0].goodput_bps > plain.summary.tcp[0].goodput_bps);
}
