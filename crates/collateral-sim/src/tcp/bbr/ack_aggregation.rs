//! BBR's allowance for ACK aggregation (Linux ≥ 5.1: `bbr_update_ack_aggregation`,
//! `bbr_ack_aggregation_cwnd`).
//!
//! When ACKs arrive in bunches — behind other packets on a slow upstream, or delayed
//! ACKs — a window of `cwnd_gain · BDP` runs dry between bunches and the sender idles.
//! BBR measures how many segments were acknowledged beyond what the bandwidth
//! estimate predicts since the ACK rate last fell to the estimate (an "epoch"), keeps
//! the largest excess of the last 5–10 rounds, and adds it to the cwnd target, at most
//! 100 ms at the estimated bandwidth.

use collateral_queue::Nanos;

use crate::tcp::rate::{RateSample, BW_UNIT};

const SEC: Nanos = 1_000_000_000;
/// Rounds each of the two max-holding slots covers (`bbr_extra_acked_win_rtts`).
const WIN_RTTS: u32 = 5;
/// An epoch this many segments long starts over, however old (`bbr_ack_epoch_acked_reset_thresh`).
const EPOCH_RESET_SEGS: u32 = 1 << 20;
/// The excess is counted in 20 bits (`ack_epoch_acked:20`).
const EPOCH_ACKED_MAX: u32 = 0xf_ffff;
/// The allowance is at most this long at the estimated bandwidth (`bbr_extra_acked_max_us`).
const MAX_AGGR: Nanos = 100_000_000;

/// The aggregation estimator's state (Linux `struct bbr`'s `extra_acked*` and
/// `ack_epoch*` fields); the gain (`bbr_extra_acked_gain`) is Linux's 1.
#[derive(Debug, Clone, Default)]
pub struct AckAggregation {
    /// The largest excess in each of two windows of rounds; the current one is `idx`.
    extra_acked: [u32; 2],
    idx: usize,
    /// Rounds since the current window began (Linux caps it at 31).
    win_rtts: u32,
    /// When the epoch began (a `delivered_mstamp`), and the segments acknowledged since.
    epoch_start: Nanos,
    epoch_acked: u32,
}

impl AckAggregation {
    /// Takes one ACK's sample; `bw` is the bandwidth estimate (segments/s ×
    /// [`BW_UNIT`]) after it, `round_start` whether it began a round, `cwnd` the window
    /// (the excess is never counted above it).
    pub fn update(&mut self, rs: &RateSample, bw: u64, round_start: bool, cwnd: u32) {
        if rs.acked_sacked == 0 || !matches!(rs.interval, Some(i) if i > 0) {
            return;
        }
        if round_start {
            self.win_rtts = (self.win_rtts + 1).min(0x1f);
            if self.win_rtts >= WIN_RTTS {
                self.win_rtts = 0;
                self.idx ^= 1;
                self.extra_acked[self.idx] = 0;
            }
        }
        // What the estimate says should have been acknowledged since the epoch began.
        let epoch = rs.delivered_time.saturating_sub(self.epoch_start);
        let mut expected = (bw as u128 * epoch as u128 / (BW_UNIT as u128 * SEC as u128))
            .min(u32::MAX as u128) as u32;
        // ACKs at or below the estimated rate (or a very long epoch): start again.
        if self.epoch_acked <= expected
            || self.epoch_acked.saturating_add(rs.acked_sacked) >= EPOCH_RESET_SEGS
        {
            self.epoch_acked = 0;
            self.epoch_start = rs.delivered_time;
            expected = 0;
        }
        self.epoch_acked = (self.epoch_acked + rs.acked_sacked).min(EPOCH_ACKED_MAX);
        let extra = (self.epoch_acked - expected).min(cwnd);
        if extra > self.extra_acked[self.idx] {
            self.extra_acked[self.idx] = extra;
        }
    }

    /// Segments to add to the cwnd target: the larger window's excess, at most
    /// 100 ms at `bw`; none before the pipe is first full.
    pub fn cwnd(&self, bw: u64, full_bw_reached: bool) -> u32 {
        if !full_bw_reached {
            return 0;
        }
        let max = (bw as u128 * MAX_AGGR as u128 / (BW_UNIT as u128 * SEC as u128))
            .min(u32::MAX as u128) as u32;
        self.extra_acked[0].max(self.extra_acked[1]).min(max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;
    /// 1000 segments/s.
    const BW: u64 = 1000 * BW_UNIT;

    fn ack(at: Nanos, acked: u32) -> RateSample {
        RateSample {
            now: at,
            acked_sacked: acked,
            losses: 0,
            delivered: acked as u64,
            interval: Some(100 * MS),
            prior_delivered: 0,
            is_app_limited: false,
            is_retrans: false,
            prior_in_flight: 0,
            rtt: None,
            conn_delivered: 0,
            delivered_time: at,
            in_flight: 0,
            state: crate::tcp::cc::CaState::Open,
            srtt: None,
        }
    }

    #[test]
    fn acks_at_the_estimated_rate_allow_one_ack_of_extra() {
        let mut a = AckAggregation::default();
        // Two segments every 2 ms at 1000/s: each ACK finds the epoch's 2 segments no
        // more than the 2 expected, starts again and counts its own 2.
        for k in 1..=20 {
            a.update(&ack(k * 2 * MS, 2), BW, k % 5 == 0, 100);
        }
        assert_eq!(a.cwnd(BW, true), 2);
        assert_eq!(a.cwnd(BW, false), 0, "nothing before the pipe is full");
    }

    #[test]
    fn a_bunch_of_acks_is_allowed_for_until_two_windows_of_rounds_pass() {
        let mut a = AckAggregation::default();
        a.update(&ack(10 * MS, 2), BW, false, 100);
        // Four more ACKs in the same instant: 10 segments in an epoch of 0 ms.
        for _ in 0..4 {
            a.update(&ack(10 * MS, 2), BW, false, 100);
        }
        assert_eq!(a.cwnd(BW, true), 10);
        // 20 ms later 20 were expected, 10 came: a new epoch, the maximum stays.
        a.update(&ack(30 * MS, 2), BW, false, 100);
        assert_eq!(a.cwnd(BW, true), 10);
        // Never more than the window, nor than 100 ms at the estimate (5 at 50/s).
        let mut c = AckAggregation::default();
        c.update(&ack(10 * MS, 2), BW, false, 100);
        c.update(&ack(10 * MS, 20), BW, false, 6);
        assert_eq!(c.cwnd(BW, true), 6);
        assert_eq!(a.cwnd(50 * BW_UNIT, true), 5);
        // Rounds of smooth ACKs: the bunch's window is zeroed at the 5th round start
        // (the other one keeps it), forgotten at the 10th.
        let mut t = 30 * MS;
        for round in 1..=10 {
            t += 2 * MS;
            a.update(&ack(t, 2), BW, true, 100);
            let want = if round < 10 { 10 } else { 2 };
            assert_eq!(a.cwnd(BW, true), want, "round {round}");
        }
    }

    #[test]
    fn acks_without_a_rate_sample_change_nothing() {
        let mut a = AckAggregation::default();
        let mut rs = ack(10 * MS, 8);
        rs.interval = None;
        a.update(&rs, BW, false, 100);
        a.update(&ack(10 * MS, 0), BW, false, 100);
        assert_eq!(a.cwnd(BW, true), 0);
    }
}
