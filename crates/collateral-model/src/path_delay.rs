//! A one-way delay that changes over time, added to a direction's propagation delay:
//! a delay trace of steps (`from`, extra delay), as a path's latency moves when a
//! satellite link is reconfigured or a mobile path changes.
//!
//! Why a trace of steps and not a seeded per-packet jitter: a per-packet draw either
//! reorders packets (netem's jitter does, which real access paths rarely do) or, held
//! in order, no longer follows the distribution it was drawn from; a delay that is a
//! function of time keeps packets in order by itself wherever it falls no faster than
//! time passes, is the same in both clocks, and is what measurements give (delay over
//! time).
//!
//! Where the delay falls faster than time passes (a step down), a packet sent just
//! before the step would arrive after one sent just after it. Order is kept by letting
//! the earlier packet arrive with the later one: a packet leaving at `t` arrives at
//! `min over s ≥ t of (s + d(s))`, the lower envelope. Arrival times then never
//! decrease with the sending time, which the simulator's look-ahead bounds rely on.

use serde::{Deserialize, Serialize};

use crate::units::{Nanos, NEVER};

/// Steps of extra one-way delay: `steps_ns` are (from, delay) pairs with `from`
/// increasing from 0; with a `period_ns` (after the last `from`) they repeat, otherwise
/// the last delay holds.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DelaySteps {
    pub steps_ns: Vec<(Nanos, Nanos)>,
    #[serde(default)]
    pub period_ns: Nanos,
}

/// The most steps one direction may list.
pub const MAX_DELAY_STEPS: usize = 10_000_000;
/// The largest extra delay of a step: 10 s.
pub const MAX_EXTRA_DELAY_NS: Nanos = 10_000_000_000;

impl DelaySteps {
    pub fn validate(&self) -> Result<(), String> {
        let Some(&(last, _)) = self.steps_ns.last() else {
            return Err("steps_ns: empty; give at least one (from, delay)".into());
        };
        if self.steps_ns.len() > MAX_DELAY_STEPS {
            return Err(format!(
                "steps_ns: {} steps, above the limit of {MAX_DELAY_STEPS}",
                self.steps_ns.len()
            ));
        }
        if self.steps_ns[0].0 != 0 {
            return Err("steps_ns[0]: the first step starts at 0".into());
        }
        for (i, w) in self.steps_ns.windows(2).enumerate() {
            if w[1].0 <= w[0].0 {
                return Err(format!(
                    "steps_ns[{}]: starts at {} ns, not after the step before ({} ns)",
                    i + 1,
                    w[1].0,
                    w[0].0
                ));
            }
        }
        if let Some(i) = self.steps_ns.iter().position(|s| s.1 > MAX_EXTRA_DELAY_NS) {
            return Err(format!(
                "steps_ns[{i}]: {} ns of delay, above the limit of 10 s",
                self.steps_ns[i].1
            ));
        }
        if last > crate::limits::MAX_TIME_NS {
            return Err("steps_ns: beyond the longest time a trial can hold".into());
        }
        if self.period_ns > 0 && self.period_ns <= last {
            return Err(format!(
                "period_ns: {} ns does not come after the last step ({last} ns)",
                self.period_ns
            ));
        }
        Ok(())
    }
}

/// [`DelaySteps`] ready to answer each packet's arrival time.
#[derive(Debug, Clone)]
pub struct PathDelay {
    from: Vec<Nanos>,
    delay: Vec<Nanos>,
    /// `suffix[i]`: the least `from[j] + delay[j]` over `j ≥ i` within one period
    /// (`NEVER` past the end).
    suffix: Vec<Nanos>,
    period: Nanos,
}

impl PathDelay {
    pub fn new(d: &DelaySteps) -> Self {
        let from: Vec<Nanos> = d.steps_ns.iter().map(|s| s.0).collect();
        let delay: Vec<Nanos> = d.steps_ns.iter().map(|s| s.1).collect();
        let mut suffix = vec![NEVER; from.len() + 1];
        for i in (0..from.len()).rev() {
            suffix[i] = suffix[i + 1].min(from[i] + delay[i]);
        }
        PathDelay {
            from,
            delay,
            suffix,
            period: d.period_ns,
        }
    }

    /// When a packet that leaves at `t` arrives, before the fixed propagation delay:
    /// `t` plus the delay in force, or earlier when the delay falls (see the module).
    pub fn arrival(&self, t: Nanos) -> Nanos {
        let (base, within) = if self.period > 0 {
            (t - t % self.period, t % self.period)
        } else {
            (0, t)
        };
        let i = self.from.partition_point(|&f| f <= within).max(1) - 1;
        let mut best = t.saturating_add(self.delay[i]);
        let later = self.suffix[i + 1];
        if later != NEVER {
            best = best.min(base + later);
        }
        if self.period > 0 {
            // The next period's steps start no earlier than its first.
            best = best.min((base + self.period).saturating_add(self.suffix[0]));
        }
        best
    }

    /// The least extra delay of any step: a lower bound for every packet's.
    pub fn least(&self) -> Nanos {
        self.delay.iter().copied().min().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;

    fn path(steps: &[(u64, u64)], period: u64) -> PathDelay {
        let d = DelaySteps {
            steps_ns: steps.iter().map(|&(f, x)| (f * MS, x * MS)).collect(),
            period_ns: period * MS,
        };
        d.validate().unwrap();
        PathDelay::new(&d)
    }

    #[test]
    fn a_step_up_delays_later_packets_and_a_step_down_keeps_order() {
        // 10 ms until 100 ms, 50 ms until 200 ms, then 20 ms.
        let p = path(&[(0, 10), (100, 50), (200, 20)], 0);
        assert_eq!(p.arrival(0), 10 * MS);
        assert_eq!(p.arrival(99 * MS), 109 * MS);
        assert_eq!(p.arrival(100 * MS), 150 * MS);
        // At 190 ms the 50 ms step would arrive at 240 ms, but one sent at 200 ms
        // arrives at 220 ms: the earlier packet arrives with it, at 220 ms.
        assert_eq!(p.arrival(190 * MS), 220 * MS);
        // At 165 ms: 215 ms, before anything sent later could arrive (≥ 220 ms).
        assert_eq!(p.arrival(165 * MS), 215 * MS);
        assert_eq!(p.arrival(1_000 * MS), 1_020 * MS);
        // Arrivals never decrease with the sending time.
        let mut last = 0;
        for t in (0..400).map(|k| k * MS / 2) {
            let a = p.arrival(t);
            assert!(a >= last && a >= t + 10 * MS);
            last = a;
        }
        assert_eq!(p.least(), 10 * MS);
    }

    #[test]
    fn a_repeating_trace_wraps_into_the_next_period() {
        // 30 ms for the first 50 ms of each 100 ms, then 0.
        let p = path(&[(0, 30), (50, 0)], 100);
        assert_eq!(p.arrival(10 * MS), 40 * MS);
        // 40 ms + 30 = 70 ms, but at 50 ms it is 50 ms: the envelope gives 50 ms.
        assert_eq!(p.arrival(40 * MS), 50 * MS);
        assert_eq!(p.arrival(60 * MS), 60 * MS);
        // Just before the next period (30 ms delay from 100 ms), the 0 ms step holds.
        assert_eq!(p.arrival(99 * MS), 99 * MS);
        assert_eq!(p.arrival(110 * MS), 140 * MS);
    }

    #[test]
    fn bad_steps_are_refused_at_their_key() {
        let bad = |s: Vec<(u64, u64)>, p| {
            DelaySteps {
                steps_ns: s,
                period_ns: p,
            }
            .validate()
            .unwrap_err()
        };
        assert!(bad(vec![], 0).starts_with("steps_ns: empty"));
        assert!(bad(vec![(5, 1)], 0).starts_with("steps_ns[0]: the first"));
        assert!(bad(vec![(0, 1), (0, 2)], 0).starts_with("steps_ns[1]: starts"));
        assert!(bad(vec![(0, 20_000_000_000)], 0).starts_with("steps_ns[0]: "));
        assert!(bad(vec![(0, 1), (10, 2)], 10).starts_with("period_ns: "));
    }
}
