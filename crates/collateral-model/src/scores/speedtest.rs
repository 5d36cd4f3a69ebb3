//! Latency and jitter as speed tests report them, from round-trip samples in the order
//! they were taken.
//!
//! - Cloudflare's speed test (`cloudflare/speedtest`, `MeasurementCalculations.ts`):
//!   latency = the median of the pings; jitter = the mean absolute difference between
//!   consecutive pings; the loaded figures are the same over the pings taken during the
//!   transfers.
//! - Ookla's: loaded latency = the interquartile mean (IQM) of the pings of a phase.
//! - DSLReports' bufferbloat grade (see [`super::grade`]) rates the *average* increase
//!   under load, so the mean is kept as well.

use crate::metrics::quantile;

/// The median of `samples` (numpy's linear interpolation); NaN when empty.
pub fn median(samples: &[f64]) -> f64 {
    let mut v = samples.to_vec();
    v.sort_unstable_by(f64::total_cmp);
    quantile(&v, 0.5)
}

/// The arithmetic mean; NaN when empty.
pub fn mean(samples: &[f64]) -> f64 {
    if samples.is_empty() {
        return f64::NAN;
    }
    samples.iter().sum::<f64>() / samples.len() as f64
}

/// The interquartile mean: the mean of the sorted samples without the lowest and the
/// highest ⌊n/4⌋; NaN when empty.
pub fn iqm(samples: &[f64]) -> f64 {
    let mut v = samples.to_vec();
    v.sort_unstable_by(f64::total_cmp);
    let cut = v.len() / 4;
    mean(&v[cut..v.len() - cut])
}

/// The mean absolute difference between consecutive samples (in the order taken);
/// NaN with fewer than two.
pub fn jitter(samples: &[f64]) -> f64 {
    if samples.len() < 2 {
        return f64::NAN;
    }
    let sum: f64 = samples.windows(2).map(|w| (w[1] - w[0]).abs()).sum();
    sum / (samples.len() - 1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn speed_test_figures_by_hand() {
        // 8 pings: 10, 12, 11, 50, 13, 9, 10, 100 ms.
        let p = [10.0, 12.0, 11.0, 50.0, 13.0, 9.0, 10.0, 100.0];
        // Sorted 9, 10, 10, 11, 12, 13, 50, 100: median (11 + 12)/2.
        assert_eq!(median(&p), 11.5);
        // IQM: drop 2 each side → 10, 11, 12, 13: 11.5.
        assert_eq!(iqm(&p), 11.5);
        // |Δ|: 2, 1, 39, 37, 4, 1, 90 = 174 over 7.
        assert!((jitter(&p) - 174.0 / 7.0).abs() < 1e-12);
        assert_eq!(mean(&p), 215.0 / 8.0);
        assert!(jitter(&[5.0]).is_nan() && median(&[]).is_nan() && iqm(&[]).is_nan());
        // Three samples: ⌊3/4⌋ = 0 dropped.
        assert_eq!(iqm(&[1.0, 2.0, 6.0]), 3.0);
    }
}
