//! Responsiveness in round trips per minute (RPM), as draft-ietf-ippm-responsiveness
//! (draft -09, network-quality/draft-ietf-ippm-responsiveness) defines it, and the
//! draft's moving-average saturation criterion.
//!
//! The draft reduces each set of probe times with a single-sided trimmed mean that
//! drops the worst 5 % (the slowest probes), then combines them:
//! `Foreign = 60000 / ((TM(tcp_f) + TM(tls_f) + TM(http_f)) / 3)` over the foreign
//! probes' handshake, TLS round trip and request times (without TLS: the mean of the
//! two), `Loaded = 60000 / TM(http_l)` over the self probes on the load connections,
//! and `RPM = (Foreign + Loaded) / 2`, times in ms. Its discussion (and issues #133,
//! #78 there, goresponsiveness#46) notes that trimming the tail is the opposite of what
//! a tail-latency metric wants, so [`Stat::Quantile`] gives the same formula at p90 or
//! p99 beside it.

/// The share of the slowest samples the trimmed mean drops (the draft's 5 %).
pub const TRIM: f64 = 0.05;
/// Moving-average distance: intervals in each moving average, and moving averages
/// whose spread decides saturation (the draft's MAD = 4).
pub const MAD: usize = 4;
/// Standard-deviation tolerance: saturated when the spread of the last [`MAD`] moving
/// averages is below this share of the current one (the draft's SDT = 5 %).
pub const SDT: f64 = 0.05;
/// The draft's interval duration ID: 5 s in -09 (drafts -02 to -08: 1 s).
pub const INTERVAL_NS: u64 = 5_000_000_000;

/// How a set of probe times is reduced to one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stat {
    /// The draft's single-sided trimmed mean (the slowest [`TRIM`] dropped).
    TrimmedMean,
    /// A quantile (0.9 for p90), numpy's linear interpolation.
    Quantile(f64),
}

impl Stat {
    /// The set reduced; NaN when it is empty.
    pub fn of(self, samples: &[f64]) -> f64 {
        let mut v: Vec<f64> = samples.iter().copied().filter(|x| x.is_finite()).collect();
        v.sort_unstable_by(f64::total_cmp);
        match self {
            Stat::TrimmedMean => trimmed_mean_sorted(&v),
            Stat::Quantile(q) => crate::metrics::quantile(&v, q),
        }
    }
}

/// The mean of sorted `v` without its slowest ⌊5 % · n⌋ values (fewer than 20
/// samples: none dropped); NaN when empty.
fn trimmed_mean_sorted(v: &[f64]) -> f64 {
    let keep = v.len() - (v.len() as f64 * TRIM).floor() as usize;
    if keep == 0 {
        return f64::NAN;
    }
    v[..keep].iter().sum::<f64>() / keep as f64
}

/// The draft's single-sided trimmed mean of `samples`.
pub fn trimmed_mean(samples: &[f64]) -> f64 {
    Stat::TrimmedMean.of(samples)
}

/// Probe times in ms. Foreign probes: `tcp` (handshake), `tls` (per TLS round trip;
/// empty without TLS), `http` (the request on the new connection); self probes:
/// `self_http` (a request on a load connection).
#[derive(Debug, Clone, Default)]
pub struct ProbeTimes<'a> {
    pub tcp: &'a [f64],
    pub tls: &'a [f64],
    pub http: &'a [f64],
    pub self_http: &'a [f64],
}

/// The two halves of the score and their mean, in RPM.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rpm {
    pub foreign: f64,
    pub loaded: f64,
    pub rpm: f64,
}

/// The draft's RPM from `p`, each set reduced by `stat`: NaN when a set it needs is empty.
pub fn rpm(p: &ProbeTimes, stat: Stat) -> Rpm {
    let mut parts = vec![stat.of(p.tcp)];
    if !p.tls.is_empty() {
        parts.push(stat.of(p.tls));
    }
    parts.push(stat.of(p.http));
    let foreign = 60_000.0 / (parts.iter().sum::<f64>() / parts.len() as f64);
    let loaded = 60_000.0 / stat.of(p.self_http);
    Rpm {
        foreign,
        loaded,
        rpm: (foreign + loaded) / 2.0,
    }
}

/// The draft's words for an RPM: Poor below 300 (a round trip over 200 ms), Fair below
/// 1000 (60 ms), Good below 6000 (10 ms), Excellent from there.
pub fn band(rpm: f64) -> &'static str {
    match rpm {
        r if r.is_nan() => "",
        r if r < 300.0 => "poor",
        r if r < 1000.0 => "fair",
        r if r < 6000.0 => "good",
        _ => "excellent",
    }
}

/// The draft's moving averages over a series of bytes moved per interval: entry `k`
/// (from interval `MAD − 1` on) is the bytes of intervals `k − MAD + 1 ..= k` over
/// `MAD · interval`, in bit/s.
pub fn moving_averages(bytes_per_interval: &[f64], interval_s: f64) -> Vec<f64> {
    bytes_per_interval
        .windows(MAD)
        .map(|w| w.iter().sum::<f64>() * 8.0 / (MAD as f64 * interval_s))
        .collect()
}

/// Whether the last [`MAD`] values of `series` (moving averages of goodput, or RPM
/// values) are stable: their standard deviation (population) below [`SDT`] of the last.
pub fn stable(series: &[f64]) -> bool {
    if series.len() < MAD {
        return false;
    }
    let last = &series[series.len() - MAD..];
    let mean = last.iter().sum::<f64>() / MAD as f64;
    let sd = (last.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / MAD as f64).sqrt();
    sd < SDT * series[series.len() - 1]
}

/// The draft's confidence in a measurement after the intervals so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Confidence {
    /// Fewer than [`MAD`] intervals: no moving average yet.
    Low,
    /// Moving averages, but not yet stable.
    Medium,
    /// Stable: saturated.
    High,
}

/// The first interval (0-based) at whose end the goodput is saturated, and the
/// confidence at the end of the series.
pub fn saturation(bytes_per_interval: &[f64], interval_s: f64) -> (Option<usize>, Confidence) {
    let ma = moving_averages(bytes_per_interval, interval_s);
    // After interval k there are k − MAD + 2 moving averages.
    let first = (0..ma.len())
        .find(|&m| stable(&ma[..=m]))
        .map(|m| m + MAD - 1);
    let conf = if bytes_per_interval.len() < MAD {
        Confidence::Low
    } else if stable(&ma) {
        Confidence::High
    } else {
        Confidence::Medium
    };
    (first, conf)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9 * b.abs().max(1.0)
    }

    /// 20 probes: 19 of 10 ms and one of 1000 ms. ⌊5 % · 20⌋ = 1 dropped, the slowest:
    /// TM = 10 ms. With 19 probes ⌊0.95⌋ = 0 are dropped: TM = (18·10 + 1000)/19.
    #[test]
    fn the_trimmed_mean_drops_the_slowest_five_percent() {
        let mut v = vec![10.0; 19];
        v.push(1000.0);
        assert!(close(trimmed_mean(&v), 10.0));
        v.remove(0);
        assert!(close(trimmed_mean(&v), (18.0 * 10.0 + 1000.0) / 19.0));
        assert!(trimmed_mean(&[]).is_nan());
        // 40 probes 1..=40 ms: ⌊2⌋ dropped (39, 40): mean of 1..=38 = 19.5.
        let v: Vec<f64> = (1..=40).map(f64::from).collect();
        assert!(close(trimmed_mean(&v), 19.5));
    }

    /// Worked by hand. Foreign handshakes 20 × 40 ms, TLS 20 × 40 ms, requests 19 × 40
    /// and one 400 ms (trimmed): each TM 40 ms, Foreign = 60000/40 = 1500. Self probes
    /// 1..=40 × 5 ms (5, 10, ..., 200): drop 2 (195, 200), TM = 5 · 19.5 = 97.5 ms,
    /// Loaded = 60000/97.5 = 615.38...; RPM = (1500 + 615.385)/2 = 1057.69.
    /// Without TLS the foreign mean is (40 + 40)/2: the same 1500.
    #[test]
    fn rpm_combines_foreign_and_self_probes_as_the_draft_does() {
        let tcp = vec![40.0; 20];
        let tls = vec![40.0; 20];
        let mut http = vec![40.0; 19];
        http.push(400.0);
        let self_http: Vec<f64> = (1..=40).map(|k| 5.0 * k as f64).collect();
        let p = ProbeTimes {
            tcp: &tcp,
            tls: &tls,
            http: &http,
            self_http: &self_http,
        };
        let r = rpm(&p, Stat::TrimmedMean);
        assert!(close(r.foreign, 1500.0));
        assert!(close(r.loaded, 60_000.0 / 97.5));
        assert!(close(r.rpm, (1500.0 + 60_000.0 / 97.5) / 2.0));
        assert_eq!(band(r.rpm), "good");
        let no_tls = ProbeTimes {
            tls: &[],
            ..p.clone()
        };
        assert!(close(rpm(&no_tls, Stat::TrimmedMean).foreign, 1500.0));
        // p90: handshakes and TLS 40; requests: position 0.9·19 = 17.1 between the
        // sorted 18th and 19th values (40, 40) = 40... the 400 is the 20th: p90 = 40.
        // Self p90: 0.9·39 = 35.1 → 180 + 0.1·5 = 180.5 ms.
        let r90 = rpm(&p, Stat::Quantile(0.9));
        assert!(close(r90.foreign, 1500.0));
        assert!(close(r90.loaded, 60_000.0 / 180.5));
        // p99: requests 0.99·19 = 18.81 → 40 + 0.81·360 = 331.6; foreign mean
        // (40 + 40 + 331.6)/3 = 137.2 ms → 437.317...
        let r99 = rpm(&p, Stat::Quantile(0.99));
        assert!(close(r99.foreign, 60_000.0 / ((40.0 + 40.0 + 331.6) / 3.0)));
    }

    #[test]
    fn bands_at_their_boundaries() {
        assert_eq!(band(299.9), "poor");
        assert_eq!(band(300.0), "fair");
        assert_eq!(band(999.9), "fair");
        assert_eq!(band(1000.0), "good");
        assert_eq!(band(5999.0), "good");
        assert_eq!(band(6000.0), "excellent");
    }

    /// Bytes per 1 s interval: a ramp 1, 2, 4, 8, then 10, 10, 10, 10 MB. Moving averages
    /// (MB over 4 s): 15/4, 24/4, 32/4, 38/4, 40/4 (× 8 Mbit). The last four at interval
    /// 7 are 24, 32, 38, 40 (/4): mean 33.5, sd √((9.5² + 1.5² + 4.5² + 6.5²)/4) = 6.22,
    /// above 5 % of 40 = 2: not yet. At interval 8 (32, 38, 40, 40) sd = √10.75 = 3.28: not
    /// yet; at interval 9 (38, 40, 40, 40) sd = √0.75 = 0.87 < 2: saturated there.
    #[test]
    fn saturation_waits_for_four_stable_moving_averages() {
        let mb = |v: &[f64]| v.iter().map(|x| x * 1e6).collect::<Vec<_>>();
        let ramp = mb(&[1.0, 2.0, 4.0, 8.0, 10.0, 10.0, 10.0, 10.0]);
        let ma = moving_averages(&ramp, 1.0);
        assert_eq!(ma.len(), 5);
        assert!(close(ma[0], 15e6 * 8.0 / 4.0));
        assert!(close(ma[4], 40e6 * 8.0 / 4.0));
        assert_eq!(saturation(&ramp, 1.0), (None, Confidence::Medium));
        let longer = mb(&[1.0, 2.0, 4.0, 8.0, 10.0, 10.0, 10.0, 10.0, 10.0, 10.0, 10.0]);
        assert_eq!(saturation(&longer, 1.0), (Some(9), Confidence::High));
        assert_eq!(
            saturation(&mb(&[1.0, 1.0, 1.0]), 1.0),
            (None, Confidence::Low)
        );
        // Within tolerance: 100, 104, 100, 104 → sd 2 < 5 % of 104 = 5.2.
        assert!(stable(&[100.0, 104.0, 100.0, 104.0]));
        // 100, 112, 100, 112: sd 6 > 5.6.
        assert!(!stable(&[100.0, 112.0, 100.0, 112.0]));
    }
}
