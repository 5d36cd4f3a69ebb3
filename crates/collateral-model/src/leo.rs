//! A low-Earth-orbit satellite access link after the published Starlink measurements,
//! built from a rate schedule ([`crate::schedule`]), a delay trace
//! ([`crate::path_delay`]) and a loss window at each reconfiguration.
//!
//! What the studies report, and what is taken from them:
//! - Starlink's scheduler reassigns users to satellites every 15 s, globally in step,
//!   at 12, 27, 42 and 57 s past the minute (Tanveer et al., "Making Sense of
//!   Constellations", 2023; Mohan et al., "A Multifaceted Look at Starlink
//!   Performance", WWW 2024): `interval_ns` 15 s, `first_ns` 12 s for a trial that
//!   starts on the minute.
//! - Capacity and base latency change at those boundaries and hold between them (same
//!   studies): each interval draws its rate uniformly from [`rate_min_bps`,
//!   `rate_max_bps`] and its extra one-way delay from [`delay_min_ns`, `delay_max_ns`].
//! - At a boundary the latency spikes and a few packets are lost (the handover; APNIC's
//!   measurements as summarised by users report ~40 ms of jitter and ~1 % loss there):
//!   `spike_ns` more delay for `spike_for_ns`, and every packet leaving the queue within
//!   `loss_for_ns` of the boundary lost.
//!
//! The ranges are parameters; the Python preset (`starlink`) sets values within what
//! these studies report.

use rand::RngExt;
use rand_pcg::Pcg64Mcg;
use serde::{Deserialize, Serialize};

use crate::path_delay::DelaySteps;
use crate::schedule::RateSchedule;
use crate::units::Nanos;

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LeoConfig {
    pub rate_min_bps: u64,
    pub rate_max_bps: u64,
    /// Extra one-way delay, over the scenario's propagation, drawn per interval.
    #[serde(default)]
    pub delay_min_ns: Nanos,
    #[serde(default)]
    pub delay_max_ns: Nanos,
    #[serde(default = "interval")]
    pub interval_ns: Nanos,
    /// The first reconfiguration after the start of the trial.
    #[serde(default = "first")]
    pub first_ns: Nanos,
    #[serde(default)]
    pub spike_ns: Nanos,
    #[serde(default)]
    pub spike_for_ns: Nanos,
    #[serde(default)]
    pub loss_for_ns: Nanos,
}

/// The most reconfiguration intervals one run may hold (each is drawn up front).
pub const MAX_INTERVALS: u64 = 1_000_000;

fn interval() -> Nanos {
    15_000_000_000
}
fn first() -> Nanos {
    12_000_000_000
}

impl LeoConfig {
    pub fn validate(&self) -> Result<(), String> {
        use crate::limits::MAX_RATE_BPS;
        if self.rate_min_bps == 0 || self.rate_max_bps > MAX_RATE_BPS {
            return Err(format!(
                "rate_min_bps: rates must be from 1 to {MAX_RATE_BPS} bit/s"
            ));
        }
        if self.rate_max_bps < self.rate_min_bps {
            return Err("rate_max_bps: below rate_min_bps".into());
        }
        if self.delay_max_ns < self.delay_min_ns {
            return Err("delay_max_ns: below delay_min_ns".into());
        }
        let most = crate::path_delay::MAX_EXTRA_DELAY_NS;
        if self.delay_max_ns.saturating_add(self.spike_ns) > most {
            return Err("delay_max_ns: with spike_ns, above 10 s of delay".into());
        }
        if self.interval_ns < 1_000_000 {
            return Err("interval_ns: must be at least 1 ms".into());
        }
        for (key, v) in [
            ("spike_for_ns", self.spike_for_ns),
            ("loss_for_ns", self.loss_for_ns),
        ] {
            if v >= self.interval_ns {
                return Err(format!("{key}: must be shorter than the interval"));
            }
        }
        if self.first_ns > crate::limits::MAX_TIME_NS {
            return Err("first_ns: beyond the longest time a trial can hold".into());
        }
        Ok(())
    }

    /// The nominal rate: the middle of the range.
    pub fn mean_bps(&self) -> u64 {
        self.rate_min_bps / 2 + self.rate_max_bps / 2
    }

    /// The reconfigurations in `[0, until)`.
    fn boundaries(&self, until: Nanos) -> impl Iterator<Item = Nanos> + '_ {
        (0..)
            .map(move |k: u64| {
                self.first_ns
                    .saturating_add(k.saturating_mul(self.interval_ns))
            })
            .take_while(move |&b| b < until)
    }

    /// The rate and delay of a trial lasting `duration`, each interval drawn from `rng`:
    /// rate first, then delay, interval by interval from the start.
    pub fn build(&self, duration: Nanos, rng: &mut Pcg64Mcg) -> (RateSchedule, DelaySteps) {
        let mut rates = Vec::new();
        let mut delays = Vec::new();
        let starts = std::iter::once(0).chain(self.boundaries(duration).filter(|&b| b > 0));
        for b in starts {
            let bps = rng.random_range(self.rate_min_bps..=self.rate_max_bps);
            let d = rng.random_range(self.delay_min_ns..=self.delay_max_ns);
            rates.push((b, bps));
            let boundary = b > 0 || self.first_ns == 0;
            if boundary && self.spike_for_ns > 0 {
                delays.push((b, d + self.spike_ns));
                delays.push((b + self.spike_for_ns, d));
            } else {
                delays.push((b, d));
            }
        }
        (
            RateSchedule::new(rates, 0),
            DelaySteps {
                steps_ns: delays,
                period_ns: 0,
            },
        )
    }

    /// Whether a packet leaving the queue at `t` is lost to a reconfiguration.
    #[inline]
    pub fn loses(&self, t: Nanos) -> bool {
        self.loss_for_ns > 0
            && t >= self.first_ns
            && (t - self.first_ns) % self.interval_ns < self.loss_for_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::path_delay::PathDelay;
    use rand::SeedableRng;

    const MS: Nanos = 1_000_000;
    const S: Nanos = 1_000_000_000;

    fn starlink() -> LeoConfig {
        LeoConfig {
            rate_min_bps: 50_000_000,
            rate_max_bps: 200_000_000,
            delay_min_ns: 5 * MS,
            delay_max_ns: 15 * MS,
            interval_ns: 15 * S,
            first_ns: 12 * S,
            spike_ns: 40 * MS,
            spike_for_ns: 100 * MS,
            loss_for_ns: 20 * MS,
        }
    }

    /// A 60 s trial from the minute: intervals [0, 12), [12, 27), [27, 42), [42, 57),
    /// [57, 60) s, five rate steps at those starts, each within the range; the delay
    /// steps up by 40 ms for 100 ms at each of the four boundaries.
    #[test]
    fn reconfigurations_fall_every_15_s_from_12_s() {
        let c = starlink();
        c.validate().unwrap();
        let (rates, delays) = c.build(60 * S, &mut Pcg64Mcg::seed_from_u64(1));
        let starts: Vec<Nanos> = delays.steps_ns.iter().map(|s| s.0 / MS).collect();
        assert_eq!(
            starts,
            [0, 12_000, 12_100, 27_000, 27_100, 42_000, 42_100, 57_000, 57_100]
        );
        for w in delays.steps_ns[1..].chunks(2) {
            assert_eq!(w[0].1, w[1].1 + 40 * MS);
            assert!((5 * MS..=15 * MS).contains(&w[1].1));
        }
        // 1500 B at a rate in [50, 200] Mbit/s: 60 to 240 µs.
        for t in [0, 13 * S, 28 * S, 43 * S, 58 * S] {
            let ser = rates.end(t, 1500) - t;
            assert!((60_000..=240_000).contains(&ser), "{t}: {ser}");
        }
        // The spike is seen by a packet sent 50 ms after the boundary: 40 ms more than
        // one sent 150 ms after it (the same interval's base delay).
        let p = PathDelay::new(&delays);
        assert_eq!(
            p.arrival(27_050 * MS) - 27_050 * MS,
            p.arrival(27_150 * MS) - 27_150 * MS + 40 * MS
        );
        // Packets leaving within 20 ms of a boundary are lost.
        assert!(c.loses(12 * S) && c.loses(27 * S + 19 * MS));
        assert!(!c.loses(27 * S + 20 * MS) && !c.loses(11 * S) && !c.loses(30 * S));
        // The same seed, the same link.
        let (_, again) = c.build(60 * S, &mut Pcg64Mcg::seed_from_u64(1));
        assert_eq!(again, delays);
    }

    #[test]
    fn bad_parameters_are_refused_at_their_key() {
        let ok = starlink();
        let e = LeoConfig {
            rate_max_bps: 1,
            ..ok
        }
        .validate()
        .unwrap_err();
        assert!(e.starts_with("rate_max_bps: "), "{e}");
        let e = LeoConfig {
            loss_for_ns: 15 * S,
            ..ok
        }
        .validate()
        .unwrap_err();
        assert!(e.starts_with("loss_for_ns: "), "{e}");
        let e = LeoConfig {
            interval_ns: 0,
            ..ok
        }
        .validate()
        .unwrap_err();
        assert!(e.starts_with("interval_ns: "), "{e}");
    }
}
