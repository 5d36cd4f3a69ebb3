//! A rate that changes in steps over time — a rate of 0 is an outage — as a rate
//! clock. On/off outages of a constant-rate link and a satellite link's capacity redrawn
//! each reconfiguration interval ([`crate::leo`]) are both such schedules.
//!
//! During an outage nothing is sent: the packet in transmission stops where it is and
//! goes on when the link comes back (its remaining bits at the new rate), and the queue
//! holds or drops arrivals as its discipline does. This is how `tc netem`'s rate would
//! behave if its rate were set to zero and back, and what a link-layer retransmitting
//! radio shows its IP layer; a link that loses what is in flight is the loss burst of
//! [`crate::leo`], not this.

use serde::{Deserialize, Serialize};

use crate::units::{Nanos, NEVER};

/// On/off outages of a direction: `windows_ns` are (start, duration) pairs in time
/// order, not overlapping; with a `period_ns` they repeat every period (each window
/// then lies within it), otherwise they happen once.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Outages {
    pub windows_ns: Vec<(Nanos, Nanos)>,
    #[serde(default)]
    pub period_ns: Nanos,
}

/// The most outage windows one direction may list.
pub const MAX_OUTAGES: usize = 100_000;

impl Outages {
    pub fn validate(&self) -> Result<(), String> {
        if self.windows_ns.is_empty() {
            return Err("windows_ns: empty; give at least one (start, duration)".into());
        }
        if self.windows_ns.len() > MAX_OUTAGES {
            return Err(format!(
                "windows_ns: {} windows, above the limit of {MAX_OUTAGES}",
                self.windows_ns.len()
            ));
        }
        let mut end = 0;
        for (i, &(start, dur)) in self.windows_ns.iter().enumerate() {
            if dur == 0 {
                return Err(format!("windows_ns[{i}]: the duration must be positive"));
            }
            if i > 0 && start < end {
                return Err(format!(
                    "windows_ns[{i}]: starts at {start} ns, before the previous ends ({end} ns)"
                ));
            }
            end = start.saturating_add(dur);
            if end > crate::limits::MAX_TIME_NS {
                return Err(format!(
                    "windows_ns[{i}]: ends beyond the longest time a trial can hold"
                ));
            }
        }
        if self.period_ns > 0 && end > self.period_ns {
            return Err(format!(
                "period_ns: {} ns is shorter than the windows ({end} ns)",
                self.period_ns
            ));
        }
        if self.period_ns > 0 && self.windows_ns == [(0, self.period_ns)] {
            return Err("windows_ns: the link would never be up".into());
        }
        Ok(())
    }

    /// The schedule of a link of `bps` with these outages.
    pub fn schedule(&self, bps: u64) -> RateSchedule {
        let mut steps = Vec::with_capacity(2 * self.windows_ns.len() + 1);
        let mut up_from = 0;
        for &(start, dur) in &self.windows_ns {
            if start > up_from {
                steps.push((up_from, bps));
            }
            steps.push((start, 0));
            up_from = start + dur;
        }
        if self.period_ns == 0 || up_from < self.period_ns {
            steps.push((up_from, bps));
        }
        RateSchedule::new(steps, self.period_ns)
    }
}

/// A rate in steps: `(from, bps)` with `from` increasing, the first 0; with a period
/// the steps repeat, otherwise the last holds for ever.
#[derive(Debug, Clone)]
pub struct RateSchedule {
    steps: Vec<(Nanos, u64)>,
    period: Nanos,
    max_bps: u64,
    /// What one whole period sends, in bit·10⁹ (0 without a period).
    per_period: u128,
}

impl RateSchedule {
    /// `steps` as above (a first step not at 0 is taken from 0).
    pub fn new(mut steps: Vec<(Nanos, u64)>, period: Nanos) -> Self {
        if let Some(first) = steps.first_mut() {
            first.0 = 0;
        } else {
            steps.push((0, 0));
        }
        let max_bps = steps.iter().map(|s| s.1).max().unwrap_or(0);
        let per_period = if period == 0 {
            0
        } else {
            let ends = steps.iter().skip(1).map(|s| s.0).chain([period]);
            steps
                .iter()
                .zip(ends)
                .map(|(s, end)| end.saturating_sub(s.0) as u128 * s.1 as u128)
                .sum()
        };
        RateSchedule {
            steps,
            period,
            max_bps,
            per_period,
        }
    }

    /// The step in force at `t`: its rate and when it ends ([`NEVER`] for the last step
    /// of a schedule that does not repeat).
    fn step_at(&self, t: Nanos) -> (u64, Nanos) {
        let (base, within) = match t.checked_div(self.period) {
            Some(round) => (round * self.period, t % self.period),
            None => (0, t),
        };
        let i = self.steps.partition_point(|s| s.0 <= within) - 1;
        let end = match self.steps.get(i + 1) {
            Some(next) => base + next.0,
            None if self.period > 0 => base + self.period,
            None => NEVER,
        };
        (self.steps[i].1, end)
    }

    /// When `len` bytes starting at `start` are sent: bit by bit at each step's rate,
    /// paused while the rate is 0 ([`NEVER`] if it never comes back).
    pub fn end(&self, start: Nanos, len: u32) -> Nanos {
        // Work in bit·ns per second: a step of rate r sends r units per ns.
        let mut need = len as u128 * 8_000_000_000;
        let mut t = start;
        loop {
            // Whole periods at once: a long packet behind long outages is not walked
            // through step by step.
            if self.per_period > 0 && t.is_multiple_of(self.period) && need > self.per_period {
                let k = (need - 1) / self.per_period;
                need -= k * self.per_period;
                t = t.saturating_add((k as u64).saturating_mul(self.period));
            }
            if t >= crate::limits::MAX_TIME_NS {
                return NEVER;
            }
            let (bps, until) = self.step_at(t);
            if bps > 0 {
                let ends = t as u128 + need.div_ceil(bps as u128);
                if until == NEVER || ends <= until as u128 {
                    return ends.min(NEVER as u128) as Nanos;
                }
                need -= (until - t) as u128 * bps as u128;
            } else if until == NEVER {
                return NEVER;
            }
            t = until;
        }
    }

    /// A lower bound on the end of `len` bytes starting at `at`: never faster than the
    /// highest rate.
    pub fn earliest_end(&self, at: Nanos, len: u32) -> Nanos {
        at + crate::rate::ser_ns(len, self.max_bps)
    }

    /// The highest rate of the schedule.
    pub fn max_bps(&self) -> u64 {
        self.max_bps
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;

    #[test]
    fn an_outage_pauses_the_packet_in_transmission() {
        // 12 Mbit/s: 1500 B take 1 ms. Down from 10 ms for 5 ms, every 100 ms.
        let s = Outages {
            windows_ns: vec![(10 * MS, 5 * MS)],
            period_ns: 100 * MS,
        }
        .schedule(12_000_000);
        // Before the outage: plain serialisation.
        assert_eq!(s.end(0, 1500), MS);
        // Starting 0.4 ms before it: 0.4 ms of bits, a 5 ms pause, then the other 0.6 ms.
        assert_eq!(s.end(9_600_000, 1500), 15 * MS + 600_000);
        // Starting inside it: from its end.
        assert_eq!(s.end(12 * MS, 1500), 16 * MS);
        // The next period's outage, 100 ms later.
        assert_eq!(s.end(109_600_000, 1500), 115 * MS + 600_000);
        // The lower bound is the plain serialisation.
        assert_eq!(s.earliest_end(9_600_000, 1500), 10_600_000);
    }

    #[test]
    fn outages_at_zero_and_once() {
        // Down for the first 3 ms only; up for ever after.
        let s = Outages {
            windows_ns: vec![(0, 3 * MS), (20 * MS, MS)],
            period_ns: 0,
        }
        .schedule(8_000_000);
        // 1000 B at 8 Mbit/s: 1 ms.
        assert_eq!(s.end(0, 1000), 4 * MS);
        assert_eq!(s.end(19_500_000, 1000), 21_500_000);
        assert_eq!(s.end(1_000 * MS, 1000), 1_001 * MS);
    }

    #[test]
    fn rates_in_steps_and_a_link_that_never_returns() {
        // 8 Mbit/s until 1 ms, then 4 Mbit/s: 1500 B from 0.5 ms send 500 B by 1 ms and
        // the other 1000 B in 2 ms.
        let s = RateSchedule::new(vec![(0, 8_000_000), (MS, 4_000_000)], 0);
        assert_eq!(s.end(MS / 2, 1500), 3 * MS);
        let dead = RateSchedule::new(vec![(0, 8_000_000), (MS, 0)], 0);
        assert_eq!(dead.end(MS / 2, 1500), NEVER);
    }

    #[test]
    fn whole_periods_are_skipped_at_once() {
        // Up 1 µs in every 1 s at 8 Mbit/s: 1 byte per period. 1500 B take 1500
        // periods: the last byte goes in the 1500th up-time, ending 1499 s + 1 µs.
        let s = Outages {
            windows_ns: vec![(1_000, 999_999_000)],
            period_ns: 1_000_000_000,
        }
        .schedule(8_000_000);
        assert_eq!(s.end(0, 1500), 1_499_000_001_000);
    }

    #[test]
    fn bad_outages_are_refused_at_their_key() {
        let bad = |w: Vec<(Nanos, Nanos)>, p| {
            Outages {
                windows_ns: w,
                period_ns: p,
            }
            .validate()
            .unwrap_err()
        };
        assert!(bad(vec![], 0).starts_with("windows_ns: empty"));
        assert!(bad(vec![(5, 0)], 0).starts_with("windows_ns[0]: the duration"));
        assert!(bad(vec![(5, 10), (8, 1)], 0).starts_with("windows_ns[1]: starts"));
        assert!(bad(vec![(5, 10)], 12).starts_with("period_ns: "));
        assert!(bad(vec![(0, 12)], 12).contains("never be up"));
        assert!(bad(vec![(u64::MAX - 1, 10)], 0).contains("longest time"));
    }
}
