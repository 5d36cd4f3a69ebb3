//! One property-test harness for the congestion-control algorithms: random ACK streams
//! and congestion events, applied to an algorithm the way the sender applies them
//! (`pkts_acked` then `on_ack` outside recovery, `ssthresh` and `set_state` at a fast
//! retransmit or timeout). The caller adds its algorithm's own invariants.

use collateral_queue::Nanos;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

use super::cc::{Ack, CaState, CongestionControl, Growth, SlowStart, Window};

const MS: Nanos = 1_000_000;

/// One step of the sender's life as an algorithm sees it.
#[derive(Debug, Clone)]
pub enum Op {
    Ack { acked: u32, rtt_ms: u64, dt_ms: u64 },
    FastRetransmit,
    RecoveryDone,
    Timeout,
    Disorder,
}

/// Mostly ACKs (of 1–63 segments, RTT samples up to 1 s, gaps up to `max_dt_ms`), now
/// and then a congestion event or a state change.
pub fn op(max_dt_ms: u64) -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => (1u32..64, 0u64..3000, 0u64..max_dt_ms)
            .prop_map(|(acked, rtt_ms, dt_ms)| Op::Ack { acked, rtt_ms, dt_ms }),
        1 => Just(Op::FastRetransmit),
        1 => Just(Op::RecoveryDone),
        1 => Just(Op::Timeout),
        1 => Just(Op::Disorder),
    ]
}

/// Any of the stacks' window-growth switches.
pub fn any_growth() -> impl Strategy<Value = Growth> {
    (0usize..3, any::<bool>(), any::<bool>(), any::<bool>()).prop_map(|(s, a, i, h)| Growth {
        slow_start: [SlowStart::PerAck, SlowStart::Abc, SlowStart::PerSegment][s],
        ca_per_segment: a,
        ss_inclusive: i,
        halve_cwnd: h,
    })
}

/// Runs `ops` on `c` from a window of 3 segments at `start_ms`, checking after every op
/// that cwnd ≥ 1 and ssthresh ≥ 2, then `check`. `stale_recovery_end`: the end of
/// recovery is reported at time 0 (a stale time the algorithm must not go back to)
/// instead of now.
pub fn drive<C: CongestionControl>(
    c: &mut C,
    ops: Vec<Op>,
    start_ms: u64,
    stale_recovery_end: bool,
    mut check: impl FnMut(&C) -> Result<(), TestCaseError>,
) -> Result<(), TestCaseError> {
    let mut w = Window {
        cwnd: 3,
        ssthresh: u32::MAX,
    };
    let mut now = start_ms * MS;
    let mut state = CaState::Open;
    for op in ops {
        match op {
            Op::Ack {
                acked,
                rtt_ms,
                dt_ms,
            } => {
                now += dt_ms * MS;
                let a = Ack {
                    now,
                    acked,
                    prior_in_flight: w.cwnd,
                    rtt: Some(rtt_ms * MS / 3),
                    state,
                };
                c.pkts_acked(&a);
                if state != CaState::Recovery {
                    c.on_ack(&mut w, &a);
                }
                if state == CaState::Disorder || state == CaState::Loss {
                    state = CaState::Open;
                    c.set_state(now, state);
                }
            }
            Op::FastRetransmit if state != CaState::Recovery => {
                w.ssthresh = c.ssthresh(now, &w, w.cwnd);
                state = CaState::Recovery;
                c.set_state(now, state);
                w.cwnd = w.ssthresh;
            }
            Op::RecoveryDone if state == CaState::Recovery => {
                state = CaState::Open;
                c.set_state(if stale_recovery_end { 0 } else { now }, state);
            }
            Op::Timeout => {
                w.ssthresh = c.ssthresh(now, &w, w.cwnd);
                state = CaState::Loss;
                c.set_state(now, state);
                w.cwnd = 1;
            }
            Op::Disorder if state == CaState::Open => {
                state = CaState::Disorder;
                c.set_state(now, state);
            }
            _ => {}
        }
        prop_assert!(w.cwnd >= 1);
        prop_assert!(w.ssthresh >= 2);
        check(c)?;
    }
    Ok(())
}
