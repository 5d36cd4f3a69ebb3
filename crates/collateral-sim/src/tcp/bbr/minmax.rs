//! A windowed maximum (or minimum) in constant space: Kathleen Nichols' tracker, as Linux
//! keeps it in `lib/win_minmax.c` (`minmax_running_max`, `minmax_running_min`,
//! `minmax_subwin_update`) for BBR's bandwidth filter and for `tcp_min_rtt`.
//!
//! Only three samples are kept: the best in the window, and a second and third choice
//! taken later, so that when the best ages out a replacement from later in the window is
//! already at hand. Their times never decrease from first to third choice. A new best
//! clears the other two (it is both better and more recent than they are). The result
//! is always a sample from inside the window and never worse than the newest sample;
//! when old samples expire it may be worse than the exact windowed best, by at most what
//! the stream did within one quarter to one half of the window — the price of constant
//! space that BBR accepts.
//!
//! "Time" is whatever the caller counts in: packet-timed rounds for BBR's bandwidth,
//! nanoseconds for the minimum RTT.

/// One kept sample: when, and what.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Sample {
    t: u64,
    v: u64,
}

/// The windowed best of a stream of `(time, value)` samples with non-decreasing times.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WindowedFilter {
    /// Best, second and third choice.
    s: [Sample; 3],
}

impl WindowedFilter {
    /// A filter holding the single sample `v` at time `t` (Linux `minmax_reset`).
    pub fn new(t: u64, v: u64) -> Self {
        let s = Sample { t, v };
        WindowedFilter { s: [s; 3] }
    }

    /// The current windowed best.
    #[inline]
    pub fn get(&self) -> u64 {
        self.s[0].v
    }

    /// Forgets everything and holds only `v` at `t`.
    #[inline]
    pub fn reset(&mut self, t: u64, v: u64) -> u64 {
        *self = WindowedFilter::new(t, v);
        v
    }

    /// Adds a sample to a windowed maximum over the last `win` time units and returns the
    /// maximum (Linux `minmax_running_max`).
    #[inline]
    pub fn running_max(&mut self, win: u64, t: u64, v: u64) -> u64 {
        self.running(win, Sample { t, v }, |a, b| a >= b)
    }

    /// Adds a sample to a windowed minimum over the last `win` time units and returns the
    /// minimum (Linux `minmax_running_min`).
    #[inline]
    pub fn running_min(&mut self, win: u64, t: u64, v: u64) -> u64 {
        self.running(win, Sample { t, v }, |a, b| a <= b)
    }

    /// `no_worse(a, b)`: `a` is at least as good as `b`.
    #[inline]
    fn running(&mut self, win: u64, new: Sample, no_worse: impl Fn(u64, u64) -> bool) -> u64 {
        // A new best, or even the latest kept choice has left the window: start again
        // from this sample alone.
        if no_worse(new.v, self.s[0].v) || new.t.saturating_sub(self.s[2].t) > win {
            return self.reset(new.t, new.v);
        }
        // Otherwise it may displace the later choices (and everything after them).
        if no_worse(new.v, self.s[1].v) {
            self.s[1] = new;
            self.s[2] = new;
        } else if no_worse(new.v, self.s[2].v) {
            self.s[2] = new;
        }
        self.age(win, new)
    }

    /// Moves the choices along as time passes (Linux `minmax_subwin_update`).
    #[inline]
    fn age(&mut self, win: u64, new: Sample) -> u64 {
        let dt = new.t.saturating_sub(self.s[0].t);
        if dt > win {
            // The best has expired: the second and third choices move up and the new
            // sample becomes the third. The (old) second may have expired too, in which
            // case move up once more; the third was checked on entry to be in the window.
            self.s = [self.s[1], self.s[2], new];
            if new.t.saturating_sub(self.s[0].t) > win {
                self.s = [self.s[1], self.s[2], new];
            }
        } else if self.s[1].t == self.s[0].t && dt > win / 4 {
            // A quarter of the window without a second choice distinct from the best:
            // take one (and a third) from now, so the window stays covered.
            self.s[1] = new;
            self.s[2] = new;
        } else if self.s[2].t == self.s[1].t && dt > win / 2 {
            // Half the window gone without a distinct third choice: take this sample.
            self.s[2] = new;
        }
        self.s[0].v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_new_maximum_takes_over_at_once_and_lasts_the_window() {
        let mut f = WindowedFilter::new(0, 0);
        assert_eq!(f.running_max(10, 0, 5), 5);
        assert_eq!(f.running_max(10, 1, 9), 9, "a higher sample wins at once");
        // (2, 7) is below the second choice (still the best itself, 9) and too early for
        // a sub-window refresh (dt 1 ≤ 10/4): not kept.
        assert_eq!(f.running_max(10, 2, 7), 9);
        // dt 4 > 10/4 with no distinct second choice: second = third = (5, 6).
        assert_eq!(f.running_max(10, 5, 6), 9);
        // dt 7 > 10/2 with no distinct third choice: third = (8, 4).
        assert_eq!(f.running_max(10, 8, 4), 9);
        // 9 was taken at t = 1; it stays while t − 1 ≤ 10, i.e. up to t = 11.
        assert_eq!(f.running_max(10, 11, 3), 9);
        // At t = 12 it has expired and the second choice (5, 6) takes over. The exact
        // windowed maximum would be 7 (t = 2): the filter's approximation.
        assert_eq!(f.running_max(10, 12, 3), 6);
        // At t = 16, (5, 6) has expired too: (8, 4) is best.
        assert_eq!(f.running_max(10, 16, 1), 4);
    }

    #[test]
    fn sub_window_choices_are_refreshed_after_a_quarter_and_a_half_window() {
        // Window 100. The best (0, 50) stays; samples below it are only taken as second
        // choice once a quarter of the window (t > 25) has passed without one...
        let mut f = WindowedFilter::new(0, 50);
        f.running_max(100, 10, 40); // 40 ≥ second (50)? no; ≥ third (50)? no; dt 10
        assert_eq!(f.s[1], Sample { t: 0, v: 50 });
        f.running_max(100, 30, 20); // dt 30 > 25, second == best: second = third = (30, 20)
        assert_eq!(
            (f.s[1], f.s[2]),
            (Sample { t: 30, v: 20 }, Sample { t: 30, v: 20 })
        );
        f.running_max(100, 40, 10); // dt 40 ≤ 50: nothing
        assert_eq!(f.s[2], Sample { t: 30, v: 20 });
        // ...and a third choice once half the window (t > 50) has passed.
        f.running_max(100, 60, 10); // dt 60 > 50, third == second: third = (60, 10)
        assert_eq!(f.s[2], Sample { t: 60, v: 10 });
        // At t = 101 the best (t = 0) expires and (30, 20) takes over.
        assert_eq!(f.running_max(100, 101, 5), 20);
    }

    #[test]
    fn the_minimum_mirrors_the_maximum() {
        // Window 10 s in ns; an RTT filter starting empty (Linux initialises it to ~0).
        let s = 1_000_000_000;
        let mut f = WindowedFilter::new(0, u64::MAX);
        assert_eq!(f.running_min(10 * s, 0, 40), 40);
        assert_eq!(f.running_min(10 * s, s, 60), 40);
        assert_eq!(
            f.running_min(10 * s, 2 * s, 30),
            30,
            "a lower RTT wins at once"
        );
        // Expired after 10 s; by then (8 s, 45) had been taken as a later choice
        // (8 s − 2 s = 6 s > 2.5 s with no distinct second).
        assert_eq!(f.running_min(10 * s, 8 * s, 45), 30);
        assert_eq!(f.running_min(10 * s, 12 * s + 1, 50), 45);
    }

    #[test]
    fn everything_expired_restarts_from_the_new_sample() {
        let mut f = WindowedFilter::new(0, 100);
        // Even the third choice (t = 0) is more than a window old.
        assert_eq!(f.running_max(10, 50, 3), 3);
        assert_eq!(f, WindowedFilter::new(50, 3));
    }

    proptest! {
        /// Against a brute-force window: the result is a value seen within the window (so
        /// never above the true windowed maximum) and never below the newest sample.
        #[test]
        fn result_is_a_sample_from_the_window(
            steps in prop::collection::vec((0u64..5, 0u64..1000), 1..300),
            win in 1u64..40,
        ) {
            let mut f = WindowedFilter::new(0, 0);
            let mut seen: Vec<(u64, u64)> = vec![(0, 0)];
            let mut t = 0;
            for (dt, v) in steps {
                t += dt;
                seen.push((t, v));
                let got = f.running_max(win, t, v);
                let in_window: Vec<u64> =
                    seen.iter().filter(|&&(ts, _)| t - ts <= win).map(|&(_, x)| x).collect();
                prop_assert!(got >= v);
                prop_assert!(got <= *in_window.iter().max().unwrap());
                prop_assert!(in_window.contains(&got));
            }
        }
    }
}
