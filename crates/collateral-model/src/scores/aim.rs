//! Cloudflare's Aggregated Internet Measurement (AIM) scores, as its speed test computes
//! them (`cloudflare/speedtest`: `config/internalConfig.ts` for the brackets,
//! `Results/ScoresCalculations.ts` for the sums): each measurement earns points by
//! bracket, each use gets the sum of its measurements' points (floored at 0), cut into
//! bad, poor, average, good, great. A bracket's bound belongs to the bracket above
//! (`scaleThreshold`: the value must be below a bound to stay beneath it).

/// Brackets: upper bounds (exclusive) and the points below each; beyond the last bound
/// the last points.
struct Scale {
    bounds: &'static [f64],
    points: &'static [f64],
}

impl Scale {
    fn of(&self, v: f64) -> f64 {
        let i = self.bounds.iter().take_while(|&&b| v >= b).count();
        self.points[i]
    }
}

/// Packet loss as a fraction (0.01 = 1 %).
const LOSS: Scale = Scale {
    bounds: &[0.01, 0.05, 0.25, 0.5],
    points: &[10.0, 5.0, 0.0, -10.0, -20.0],
};
/// Idle latency and loaded-latency increase, ms.
const LATENCY: Scale = Scale {
    bounds: &[10.0, 20.0, 50.0, 100.0, 500.0],
    points: &[20.0, 10.0, 5.0, 0.0, -10.0, -20.0],
};
/// Jitter, ms.
const JITTER: Scale = Scale {
    bounds: &[10.0, 20.0, 100.0, 500.0],
    points: &[10.0, 5.0, 0.0, -10.0, -20.0],
};
/// Download (or upload) rate, bit/s.
const RATE: Scale = Scale {
    bounds: &[1e6, 10e6, 50e6, 100e6],
    points: &[0.0, 5.0, 10.0, 20.0, 30.0],
};

/// The classification names, worst first.
pub const CLASSES: [&str; 5] = ["bad", "poor", "average", "good", "great"];

/// What AIM scores: idle latency and jitter (ms), loss (fraction), download rate
/// (bit/s), and the loaded latency increase (ms): the larger of the download and upload
/// loaded latencies minus the idle one.
#[derive(Debug, Clone, Copy)]
pub struct AimInput {
    pub latency_ms: f64,
    pub jitter_ms: f64,
    pub loss: f64,
    pub download_bps: f64,
    pub loaded_increase_ms: f64,
}

/// One use's score: its points and their class.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AimScore {
    pub points: f64,
    pub class: &'static str,
}

/// The three uses' scores: streaming, gaming, real-time communication.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Aim {
    pub streaming: AimScore,
    pub gaming: AimScore,
    pub rtc: AimScore,
}

fn class(points: f64, cuts: [f64; 4]) -> AimScore {
    let points = points.max(0.0);
    let i = cuts.iter().take_while(|&&c| points >= c).count();
    AimScore {
        points,
        class: CLASSES[i],
    }
}

/// The AIM scores of `m`. A NaN input (nothing measured) earns the first bracket's
/// points, as Cloudflare's `scaleThreshold` gives a value it cannot compare; callers
/// leave the scores out instead when a measurement is missing.
pub fn aim(m: &AimInput) -> Aim {
    let latency = LATENCY.of(m.latency_ms);
    let increase = LATENCY.of(m.loaded_increase_ms);
    let loss = LOSS.of(m.loss);
    let jitter = JITTER.of(m.jitter_ms);
    let down = RATE.of(m.download_bps);
    Aim {
        streaming: class(latency + loss + down + increase, [15.0, 20.0, 40.0, 60.0]),
        gaming: class(latency + loss + increase, [5.0, 15.0, 25.0, 30.0]),
        rtc: class(latency + jitter + loss + increase, [5.0, 15.0, 25.0, 40.0]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brackets_put_a_bound_in_the_bracket_above() {
        assert_eq!(LATENCY.of(9.99), 20.0);
        assert_eq!(LATENCY.of(10.0), 10.0);
        assert_eq!(LATENCY.of(499.0), -10.0);
        assert_eq!(LATENCY.of(500.0), -20.0);
        assert_eq!(LOSS.of(0.0), 10.0);
        assert_eq!(LOSS.of(0.01), 5.0);
        assert_eq!(LOSS.of(0.5), -20.0);
        assert_eq!(JITTER.of(20.0), 0.0);
        assert_eq!(RATE.of(50e6), 20.0);
        assert_eq!(RATE.of(999_999.0), 0.0);
    }

    /// A good line: idle 8 ms (20), jitter 3 ms (10), no loss (10), 120 Mbit/s (30),
    /// +15 ms loaded (10). Streaming 20 + 10 + 30 + 10 = 70 ≥ 60: great. Gaming
    /// 20 + 10 + 10 = 40 ≥ 30: great. RTC 20 + 10 + 10 + 10 = 50 ≥ 40: great.
    /// A bloated one: idle 30 ms (5), jitter 40 ms (0), 2 % loss (5), 1.5 Mbit/s (5),
    /// +600 ms (−20). Streaming 5 + 5 + 5 − 20 = −5 → 0: bad. Gaming −10 → 0: bad. RTC
    /// 5 + 0 + 5 − 20 = −10 → 0: bad. In between: idle 15 ms (10), jitter 12 ms (5),
    /// 0.5 % loss (10), 20 Mbit/s (10), +60 ms (0). Streaming 30: average (20 ≤ 30 < 40);
    /// gaming 20: average (15 ≤ 20 < 25); RTC 25: good (25 ≤ 25 < 40).
    #[test]
    fn categories_on_crafted_lines() {
        let good = aim(&AimInput {
            latency_ms: 8.0,
            jitter_ms: 3.0,
            loss: 0.0,
            download_bps: 120e6,
            loaded_increase_ms: 15.0,
        });
        assert_eq!(
            good.streaming,
            AimScore {
                points: 70.0,
                class: "great"
            }
        );
        assert_eq!(
            good.gaming,
            AimScore {
                points: 40.0,
                class: "great"
            }
        );
        assert_eq!(
            good.rtc,
            AimScore {
                points: 50.0,
                class: "great"
            }
        );
        let bloated = aim(&AimInput {
            latency_ms: 30.0,
            jitter_ms: 40.0,
            loss: 0.02,
            download_bps: 1.5e6,
            loaded_increase_ms: 600.0,
        });
        for s in [bloated.streaming, bloated.gaming, bloated.rtc] {
            assert_eq!(
                s,
                AimScore {
                    points: 0.0,
                    class: "bad"
                }
            );
        }
        let mid = aim(&AimInput {
            latency_ms: 15.0,
            jitter_ms: 12.0,
            loss: 0.005,
            download_bps: 20e6,
            loaded_increase_ms: 60.0,
        });
        assert_eq!(
            mid.streaming,
            AimScore {
                points: 30.0,
                class: "average"
            }
        );
        assert_eq!(
            mid.gaming,
            AimScore {
                points: 20.0,
                class: "average"
            }
        );
        assert_eq!(
            mid.rtc,
            AimScore {
                points: 25.0,
                class: "good"
            }
        );
    }
}
