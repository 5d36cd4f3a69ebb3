//! The router's own timing: how late frames left against the model's release times,
//! how long they waited to be read, how late timed sleeps woke, and the router
//! thread's context switches. `--stats` writes all of it; the run's report carries the
//! trial's release error and switches ([`RouterTiming`]), which flag a trial late.

use collateral_model::measure::RouterTiming;

/// Durations in 1 µs bins (the last bin takes everything beyond), with the exact
/// maximum: the router's own timing, reported in `--stats`.
#[derive(Debug, Clone)]
pub struct Hist {
    bins: Vec<u64>,
    n: u64,
    max: u64,
}

impl Hist {
    /// Bins of 1 µs up to `us` µs.
    pub fn new(us: usize) -> Hist {
        Hist {
            bins: vec![0; us.max(1)],
            n: 0,
            max: 0,
        }
    }

    #[inline]
    pub fn add(&mut self, ns: u64) {
        let k = ((ns / 1000) as usize).min(self.bins.len() - 1);
        self.bins[k] += 1;
        self.n += 1;
        self.max = self.max.max(ns);
    }

    /// The `q` quantile, as the upper edge of its bin (never above the maximum); 0 when
    /// empty.
    pub fn quantile_ns(&self, q: f64) -> u64 {
        if self.n == 0 {
            return 0;
        }
        let rank = ((q * self.n as f64).ceil() as u64).clamp(1, self.n);
        let mut seen = 0;
        for (k, &c) in self.bins.iter().enumerate() {
            seen += c;
            if seen >= rank {
                // The last bin holds everything beyond: only the maximum bounds it.
                if k + 1 == self.bins.len() {
                    return self.max;
                }
                return ((k as u64 + 1) * 1000).min(self.max);
            }
        }
        self.max
    }

    fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "n": self.n,
            "p50_ns": self.quantile_ns(0.5),
            "p99_ns": self.quantile_ns(0.99),
            "p999_ns": self.quantile_ns(0.999),
            "max_ns": self.max,
        })
    }
}

/// One direction's transmissions as they really happened.
pub struct DirStats {
    pub frames: u64,
    /// IP bytes put on the wire between the warm-up's end and the run's end, by the
    /// time they really left.
    pub window_bytes: u64,
    /// How late each frame left: the time of the `sendmmsg` minus its release time.
    pub late: Hist,
    /// Frames the kernel refused (the receiving end's backlog full): lost outside the
    /// model.
    pub refused: u64,
}

/// What `--stats` writes: the router's own timing, to check it keeps up.
pub struct Stats {
    pub dirs: [DirStats; 2],
    /// The release error of the frames sent during the trial (before its end), both
    /// directions: what the report's [`RouterTiming`] holds.
    pub trial_late: Hist,
    /// From the kernel's arrival stamp to our reading the frame.
    pub read_lag: Hist,
    /// How late a timed sleep (ppoll timing out) woke up.
    pub oversleep: Hist,
    pub rx_calls: u64,
    pub rx_frames: u64,
    pub tx_calls: u64,
    pub sleeps: u64,
    pub loops: u64,
    pub rx_drops: [u64; 2],
}

impl Stats {
    pub fn new() -> Stats {
        let d = || DirStats {
            frames: 0,
            window_bytes: 0,
            late: Hist::new(20_000),
            refused: 0,
        };
        Stats {
            dirs: [d(), d()],
            trial_late: Hist::new(20_000),
            read_lag: Hist::new(20_000),
            oversleep: Hist::new(20_000),
            rx_calls: 0,
            rx_frames: 0,
            tx_calls: 0,
            sleeps: 0,
            loops: 0,
            rx_drops: [0; 2],
        }
    }

    pub fn json(&self, window_ns: u64, cpu: Option<usize>) -> serde_json::Value {
        let dir = |d: &DirStats| {
            serde_json::json!({
                "frames": d.frames,
                "window_bytes": d.window_bytes,
                "window_rate_bps": d.window_bytes as f64 * 8.0 / (window_ns.max(1) as f64 / 1e9),
                "late": d.late.json(),
                "refused": d.refused,
            })
        };
        serde_json::json!({
            "down": dir(&self.dirs[0]),
            "up": dir(&self.dirs[1]),
            "read_lag": self.read_lag.json(),
            "oversleep": self.oversleep.json(),
            "rx_calls": self.rx_calls,
            "rx_frames": self.rx_frames,
            "tx_calls": self.tx_calls,
            "sleeps": self.sleeps,
            "loops": self.loops,
            "rx_drops": self.rx_drops,
            "cpu": cpu,
        })
    }
}

/// This thread's context switches so far, `(voluntary, involuntary)`: it slept, or the
/// scheduler took its CPU (another task on the router's CPU: each is a stall of up to a
/// few ms, which the accuracy cannot survive).
pub fn context_switches() -> (u64, u64) {
    // SAFETY: ru is a valid out-buffer.
    unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        if libc::getrusage(libc::RUSAGE_THREAD, &mut ru) < 0 {
            return (0, 0);
        }
        (ru.ru_nvcsw as u64, ru.ru_nivcsw as u64)
    }
}

/// The report's timing: the trial's release errors, and the context switches since
/// `base` (the counts at the run's origin).
pub fn trial_timing(h: &Hist, base: (u64, u64)) -> RouterTiming {
    let (v, i) = context_switches();
    RouterTiming {
        frames: h.n,
        release_error_p50_ns: h.quantile_ns(0.5),
        release_error_p99_ns: h.quantile_ns(0.99),
        release_error_max_ns: h.max,
        preemptions: i.saturating_sub(base.1),
        voluntary_switches: v.saturating_sub(base.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_quantiles_are_bin_upper_edges_capped_at_the_maximum() {
        let mut h = Hist::new(100);
        assert_eq!(h.quantile_ns(0.5), 0);
        for us in 1..=99u64 {
            h.add(us * 1000 - 500); // 0.5, 1.5, ... 98.5 µs
        }
        assert_eq!(h.quantile_ns(0.5), 50_000);
        assert_eq!(h.quantile_ns(0.98), 98_000);
        assert_eq!(h.quantile_ns(1.0), 98_500);
        // Beyond the last bin: counted there, the maximum kept exactly.
        h.add(5_000_000);
        assert_eq!(h.quantile_ns(1.0), 5_000_000);
        assert_eq!(h.max, 5_000_000);
        assert_eq!(h.n, 100);
    }

    /// The report's timing is the trial histogram's: bin upper edges for p50 and p99,
    /// the exact maximum; switches counted from the base (here beyond any count: none).
    #[test]
    fn the_reports_timing_is_the_trials_release_error() {
        let mut h = Hist::new(20_000);
        for us in 1..=100u64 {
            h.add(us * 1000 - 500); // 0.5, 1.5, ... 99.5 µs
        }
        let t = trial_timing(&h, (u64::MAX, u64::MAX));
        assert_eq!(
            (t.frames, t.release_error_p50_ns, t.release_error_p99_ns),
            (100, 50_000, 99_000)
        );
        assert_eq!(t.release_error_max_ns, 99_500);
        assert_eq!((t.preemptions, t.voluntary_switches), (0, 0));
        // From a base of zero: this thread's own counts, which include the sleep below.
        std::thread::sleep(std::time::Duration::from_millis(2));
        assert!(trial_timing(&h, (0, 0)).voluntary_switches >= 1);
    }
}
