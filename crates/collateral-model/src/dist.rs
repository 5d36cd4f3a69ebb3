//! Random variates for traffic models (object sizes, think times, per-connection
//! delays), described as plain data so scenarios can carry them:
//! `{"kind": "lognormal", "median": 2000, "sigma": 1.2, "max": 2e6}`.
//!
//! Sampling uses `rand_distr` for the parametric families and inverse-transform
//! sampling with linear interpolation for empirical CDFs (the form in which Mah 1997
//! published his HTTP measurements).

use rand::RngExt;
use rand_distr::{Distribution, Exp, LogNormal, Normal, Pareto};
use rand_pcg::Pcg64Mcg;
use serde::{Deserialize, Serialize};

/// A distribution of non-negative values, optionally clamped to `[min, max]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Dist {
    Constant {
        value: f64,
    },
    Uniform {
        low: f64,
        high: f64,
    },
    /// `shift + Exp(mean)`, clamped at `max`.
    Exponential {
        mean: f64,
        #[serde(default)]
        shift: Option<f64>,
        #[serde(default)]
        max: Option<f64>,
    },
    /// `N(mean, sd²)` clamped to `[min, max]` (and at 0).
    Normal {
        mean: f64,
        sd: f64,
        #[serde(default)]
        min: Option<f64>,
        #[serde(default)]
        max: Option<f64>,
    },
    /// `exp(N(ln median, sigma²))`.
    Lognormal {
        median: f64,
        sigma: f64,
        #[serde(default)]
        min: Option<f64>,
        #[serde(default)]
        max: Option<f64>,
    },
    /// Pareto (type I): `P(X > x) = (scale/x)^shape` for `x ≥ scale`.
    Pareto {
        scale: f64,
        shape: f64,
        #[serde(default)]
        max: Option<f64>,
    },
    /// An empirical CDF: `points` are `(value, cumulative probability)` with both
    /// non-decreasing, the last probability 1; values between points are interpolated
    /// linearly (so the first point's probability is the mass at its value). With
    /// `max`, the distribution is truncated there: draws come from the part of the CDF
    /// at or below `max` (conditioned, not clamped, so no mass piles up at `max`).
    Empirical {
        points: Vec<(f64, f64)>,
        #[serde(default)]
        max: Option<f64>,
    },
}

impl Dist {
    /// Checks the parameters; `what` names the field in the message.
    pub fn validate(&self, what: &str) -> Result<(), String> {
        let bad = |m: &str| Err(format!("{what}: {m}"));
        let finite_pos = |x: f64| x.is_finite() && x > 0.0;
        match *self {
            Dist::Constant { value } if !(value.is_finite() && value >= 0.0) => {
                bad("value must be finite and >= 0")
            }
            Dist::Uniform { low, high } if !(low >= 0.0 && high >= low && high.is_finite()) => {
                bad("need 0 <= low <= high")
            }
            Dist::Exponential { mean, shift, .. }
                if !finite_pos(mean) || shift.is_some_and(|s| !(s >= 0.0 && s.is_finite())) =>
            {
                bad("need mean > 0 and shift >= 0")
            }
            Dist::Normal { mean, sd, .. } if !(mean.is_finite() && sd.is_finite() && sd >= 0.0) => {
                bad("need a finite mean and sd >= 0")
            }
            Dist::Lognormal { median, sigma, .. }
                if !finite_pos(median) || sigma.is_nan() || sigma < 0.0 =>
            {
                bad("need median > 0 and sigma >= 0")
            }
            Dist::Pareto { scale, shape, .. } if !finite_pos(scale) || !finite_pos(shape) => {
                bad("need scale > 0 and shape > 0")
            }
            Dist::Empirical { ref points, max } => {
                let first = points.first().map_or(0.0, |p| p.0);
                // NaN on either side is "below" too.
                if max.is_some_and(|m| m.partial_cmp(&first).is_none_or(|o| o.is_lt())) {
                    return bad("max must not be below the first point");
                }
                if points.is_empty() {
                    return bad("points must not be empty");
                }
                let mut prev = (0.0f64, 0.0f64);
                for (i, &(v, p)) in points.iter().enumerate() {
                    if !(v.is_finite() && v >= 0.0 && (0.0..=1.0).contains(&p)) {
                        return bad(&format!("point {i}: need value >= 0 and 0 <= p <= 1"));
                    }
                    if i > 0 && (v < prev.0 || p < prev.1) {
                        return bad(&format!(
                            "point {i}: values and probabilities must not decrease"
                        ));
                    }
                    prev = (v, p);
                }
                if (prev.1 - 1.0).abs() > 1e-9 {
                    return bad("the last probability must be 1");
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// One draw.
    pub fn sample(&self, rng: &mut Pcg64Mcg) -> f64 {
        let clamp = |x: f64, lo: Option<f64>, hi: Option<f64>| {
            let x = lo.map_or(x, |l| x.max(l));
            hi.map_or(x, |h| x.min(h))
        };
        match *self {
            Dist::Constant { value } => value,
            Dist::Uniform { low, high } => {
                if high > low {
                    rng.random_range(low..high)
                } else {
                    low
                }
            }
            Dist::Exponential { mean, shift, max } => clamp(
                shift.unwrap_or(0.0) + Exp::new(1.0 / mean).unwrap().sample(rng),
                None,
                max,
            ),
            Dist::Normal { mean, sd, min, max } => {
                let x = Normal::new(mean, sd).unwrap().sample(rng);
                clamp(x, Some(min.unwrap_or(0.0).max(0.0)), max)
            }
            Dist::Lognormal {
                median,
                sigma,
                min,
                max,
            } => clamp(
                LogNormal::new(median.ln(), sigma).unwrap().sample(rng),
                min,
                max,
            ),
            Dist::Pareto { scale, shape, max } => {
                clamp(Pareto::new(scale, shape).unwrap().sample(rng), None, max)
            }
            Dist::Empirical { ref points, max } => {
                let top = max.map_or(1.0, |m| empirical_cdf(points, m));
                empirical_quantile(points, rng.random::<f64>() * top)
            }
        }
    }

    /// The largest value a draw can take, if bounded.
    pub fn upper_bound(&self) -> Option<f64> {
        match *self {
            Dist::Constant { value } => Some(value),
            Dist::Uniform { high, .. } => Some(high),
            Dist::Exponential { max, .. }
            | Dist::Normal { max, .. }
            | Dist::Lognormal { max, .. }
            | Dist::Pareto { max, .. } => max,
            Dist::Empirical { ref points, max } => {
                let last = points.last().map_or(0.0, |p| p.0);
                Some(max.map_or(last, |m| m.min(last)))
            }
        }
    }

    /// The *residual* of a renewal process with these intervals, seen at a random
    /// moment: `U·T` with `T` length-biased (density `t·f(t)/E[T]`: a random moment more
    /// likely falls in a long interval) and `U` uniform in [0, 1). `T` is drawn by
    /// rejection against the upper bound; without one, `T` is not length-biased.
    pub fn sample_residual(&self, rng: &mut Pcg64Mcg) -> f64 {
        let u = rng.random::<f64>();
        let Some(top) = self.upper_bound().filter(|&t| t > 0.0) else {
            return u * self.sample(rng);
        };
        for _ in 0..100_000 {
            let t = self.sample(rng);
            if rng.random::<f64>() * top < t {
                return u * t;
            }
        }
        u * top
    }
}

/// The value at cumulative probability `u` of a piecewise-linear CDF.
pub fn empirical_quantile(points: &[(f64, f64)], u: f64) -> f64 {
    let i = points.partition_point(|&(_, p)| p < u);
    if i == 0 {
        return points[0].0;
    }
    if i >= points.len() {
        return points[points.len() - 1].0;
    }
    let (v0, p0) = points[i - 1];
    let (v1, p1) = points[i];
    if p1 <= p0 {
        return v1;
    }
    v0 + (v1 - v0) * (u - p0) / (p1 - p0)
}

/// The cumulative probability at `x` of a piecewise-linear CDF.
pub fn empirical_cdf(points: &[(f64, f64)], x: f64) -> f64 {
    let i = points.partition_point(|&(v, _)| v <= x);
    if i == 0 {
        return 0.0;
    }
    if i >= points.len() {
        return 1.0;
    }
    let (v0, p0) = points[i - 1];
    let (v1, p1) = points[i];
    p0 + (p1 - p0) * (x - v0) / (v1 - v0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn empirical_quantiles_interpolate_linearly() {
        // Mass 0.2 at 1, then linear to 0.6 at 3 and to 1 at 11.
        let pts = [(1.0, 0.2), (3.0, 0.6), (11.0, 1.0)];
        assert_eq!(empirical_quantile(&pts, 0.1), 1.0);
        assert_eq!(empirical_quantile(&pts, 0.2), 1.0);
        assert!((empirical_quantile(&pts, 0.4) - 2.0).abs() < 1e-12);
        assert!((empirical_quantile(&pts, 0.8) - 7.0).abs() < 1e-12);
        assert_eq!(empirical_quantile(&pts, 1.0), 11.0);
        assert_eq!(empirical_cdf(&pts, 0.5), 0.0);
        assert_eq!(empirical_cdf(&pts, 1.0), 0.2);
        assert!((empirical_cdf(&pts, 2.0) - 0.4).abs() < 1e-12);
        assert!((empirical_cdf(&pts, 7.0) - 0.8).abs() < 1e-12);
        assert_eq!(empirical_cdf(&pts, 20.0), 1.0);
    }

    #[test]
    fn truncated_empirical_stays_below_max_with_the_conditional_shape() {
        // Uniform on [0, 10] truncated at 4: uniform on [0, 4], median 2.
        let d = Dist::Empirical {
            points: vec![(0.0, 0.0), (10.0, 1.0)],
            max: Some(4.0),
        };
        let mut rng = Pcg64Mcg::seed_from_u64(3);
        let mut v: Vec<f64> = (0..20_001).map(|_| d.sample(&mut rng)).collect();
        v.sort_by(f64::total_cmp);
        assert!(v[20_000] <= 4.0);
        assert!((v[10_000] - 2.0).abs() < 0.1, "median {}", v[10_000]);
    }

    #[test]
    fn sample_medians_match_the_formulas() {
        let mut rng = Pcg64Mcg::seed_from_u64(7);
        let median = |d: &Dist, rng: &mut Pcg64Mcg| {
            let mut v: Vec<f64> = (0..40_001).map(|_| d.sample(rng)).collect();
            v.sort_by(f64::total_cmp);
            v[20_000]
        };
        // Lognormal: median = exp(mu) = 2000.
        let m = median(
            &Dist::Lognormal {
                median: 2000.0,
                sigma: 1.5,
                min: None,
                max: None,
            },
            &mut rng,
        );
        assert!((m / 2000.0 - 1.0).abs() < 0.04, "lognormal median {m}");
        // Pareto: median = scale * 2^(1/shape) = 1000 * 2^(1/1.2) = 1781.8.
        let m = median(
            &Dist::Pareto {
                scale: 1000.0,
                shape: 1.2,
                max: None,
            },
            &mut rng,
        );
        assert!((m / 1781.8 - 1.0).abs() < 0.03, "pareto median {m}");
        // Exponential: median = mean * ln 2.
        let m = median(
            &Dist::Exponential {
                mean: 10.0,
                shift: None,
                max: None,
            },
            &mut rng,
        );
        assert!(
            (m / (10.0 * 2f64.ln()) - 1.0).abs() < 0.03,
            "exp median {m}"
        );
        // Clamps hold.
        let d = Dist::Pareto {
            scale: 1.0,
            shape: 0.5,
            max: Some(50.0),
        };
        assert!((0..10_000).all(|_| {
            let x = d.sample(&mut rng);
            (1.0..=50.0).contains(&x)
        }));
    }

    #[test]
    fn residuals_are_length_biased() {
        // Intervals of 1 or 9 s, equally likely: a random moment falls in a 9 s interval
        // with probability 9/10, so the residual's mean is (0.1·1 + 0.9·9)/2 = 4.1 s
        // (not half the 5 s mean interval).
        let d = Dist::Empirical {
            points: vec![(1.0, 0.5), (1.0, 0.5), (9.0, 0.5), (9.0, 1.0)],
            max: None,
        };
        let mut rng = Pcg64Mcg::seed_from_u64(5);
        let n = 200_000;
        let mean = (0..n).map(|_| d.sample_residual(&mut rng)).sum::<f64>() / n as f64;
        assert!((mean - 4.1).abs() < 0.05, "{mean}");
        // Uniform on [0, 10]: E[T²]/(2E[T]) = (100/3)/10 = 3.33.
        let d = Dist::Uniform {
            low: 0.0,
            high: 10.0,
        };
        let mean = (0..n).map(|_| d.sample_residual(&mut rng)).sum::<f64>() / n as f64;
        assert!((mean - 10.0 / 3.0).abs() < 0.05, "{mean}");
    }

    #[test]
    fn bad_parameters_are_named() {
        let e = Dist::Empirical {
            points: vec![(1.0, 0.5), (0.5, 1.0)],
            max: None,
        }
        .validate("reply_bytes")
        .unwrap_err();
        assert!(e.starts_with("reply_bytes: point 1"), "{e}");
        assert!(Dist::Empirical {
            points: vec![(1.0, 0.5)],
            max: None,
        }
        .validate("x")
        .is_err());
        assert!(Dist::Pareto {
            scale: 0.0,
            shape: 1.0,
            max: None
        }
        .validate("x")
        .is_err());
    }
}
