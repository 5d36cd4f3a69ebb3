//! Loss on the wire after the queue: independent (each packet lost with one
//! probability) or in bursts by the Gilbert–Elliott model — a two-state Markov chain
//! stepped once per packet, Good and Bad, each with its own loss probability (Gilbert,
//! "Capacity of a burst-noise channel", 1960; Elliott, 1963; as RFC 6534 §4 and ns-3's
//! and netem's `gemodel` parameterise it: p = P(Good→Bad), r = P(Bad→Good), and
//! 1 − k, 1 − h the loss probabilities in Good and Bad).

use rand::RngExt;
use rand_pcg::Pcg64Mcg;
use serde::{Deserialize, Serialize};

/// The Gilbert–Elliott parameters. With `loss_good` 0 and `loss_bad` 1 (Gilbert's
/// model) the long-run loss is p / (p + r) and a burst of losses lasts 1 / r packets on
/// average.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GilbertElliott {
    /// P(Good → Bad) at each packet.
    pub p: f64,
    /// P(Bad → Good) at each packet.
    pub r: f64,
    /// Loss probability in Good (1 − k).
    #[serde(default)]
    pub loss_good: f64,
    /// Loss probability in Bad (1 − h).
    #[serde(default = "one")]
    pub loss_bad: f64,
}

fn one() -> f64 {
    1.0
}

impl GilbertElliott {
    pub fn validate(&self) -> Result<(), String> {
        for (key, v) in [("p", self.p), ("r", self.r)] {
            if !(v > 0.0 && v <= 1.0) {
                return Err(format!(
                    "{key}: {v} is not a probability above 0 and at most 1"
                ));
            }
        }
        for (key, v) in [("loss_good", self.loss_good), ("loss_bad", self.loss_bad)] {
            if !(0.0..=1.0).contains(&v) {
                return Err(format!("{key}: {v} is not a probability from 0 to 1"));
            }
        }
        Ok(())
    }

    /// The long-run share of packets lost: the stationary Bad share π_B = p / (p + r)
    /// weighting each state's loss.
    pub fn mean_loss(&self) -> f64 {
        let bad = self.p / (self.p + self.r);
        (1.0 - bad) * self.loss_good + bad * self.loss_bad
    }
}

/// A direction's wire loss, stepped once per packet that leaves the queue.
#[derive(Debug, Clone)]
pub enum WireLoss {
    None,
    Independent(f64),
    Burst { model: GilbertElliott, bad: bool },
}

impl WireLoss {
    pub fn new(rate: f64, burst: Option<GilbertElliott>) -> Self {
        match burst {
            Some(model) => WireLoss::Burst { model, bad: false },
            None if rate > 0.0 => WireLoss::Independent(rate),
            None => WireLoss::None,
        }
    }

    /// Whether the next packet is lost (draws only when a model is set, so a lossless
    /// link's random stream is untouched). The chain moves first, then the packet
    /// meets the state it is in.
    #[inline]
    pub fn lose(&mut self, rng: &mut Pcg64Mcg) -> bool {
        match self {
            WireLoss::None => false,
            WireLoss::Independent(p) => rng.random::<f64>() < *p,
            WireLoss::Burst { model, bad } => {
                let flip = if *bad { model.r } else { model.p };
                if rng.random::<f64>() < flip {
                    *bad = !*bad;
                }
                let p = if *bad {
                    model.loss_bad
                } else {
                    model.loss_good
                };
                p > 0.0 && rng.random::<f64>() < p
            }
        }
    }

    pub fn is_none(&self) -> bool {
        matches!(self, WireLoss::None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// Over 10⁶ packets the loss and the mean burst length are the closed forms' within
    /// 2 %: Gilbert's p = 0.05, r = 0.5 loses p / (p + r) = 9.09 % in bursts of 1 / r = 2
    /// packets; with loss_bad 0.5 and loss_good 0.001, the loss is π_G · 0.001 + π_B ·
    /// 0.5 = 0.9091 · 0.001 + 0.0909 · 0.5 = 4.636 %. (The chain's cycles, ~45 000 in
    /// 10⁶ packets, put one run's standard error near 0.6 %.)
    #[test]
    fn long_run_loss_and_burst_length_match_the_closed_forms() {
        let gilbert = GilbertElliott {
            p: 0.05,
            r: 0.5,
            loss_good: 0.0,
            loss_bad: 1.0,
        };
        let (loss, burst) = run(gilbert, 1_000_000);
        assert!((loss / (0.05 / 0.55) - 1.0).abs() < 0.02, "loss {loss}");
        assert!((burst / 2.0 - 1.0).abs() < 0.02, "burst {burst}");
        let ge = GilbertElliott {
            p: 0.05,
            r: 0.5,
            loss_good: 0.001,
            loss_bad: 0.5,
        };
        assert!((ge.mean_loss() - (0.5 / 0.55 * 0.001 + 0.05 / 0.55 * 0.5)).abs() < 1e-12);
        let (loss, _) = run(ge, 1_000_000);
        assert!((loss / ge.mean_loss() - 1.0).abs() < 0.02, "loss {loss}");
    }

    fn run(model: GilbertElliott, n: usize) -> (f64, f64) {
        let mut w = WireLoss::new(0.0, Some(model));
        let mut rng = Pcg64Mcg::seed_from_u64(42);
        let (mut lost, mut bursts, mut prev) = (0usize, 0usize, false);
        for _ in 0..n {
            let l = w.lose(&mut rng);
            lost += l as usize;
            bursts += (l && !prev) as usize;
            prev = l;
        }
        (lost as f64 / n as f64, lost as f64 / bursts.max(1) as f64)
    }

    #[test]
    fn bad_parameters_are_refused_at_their_key() {
        let ok = GilbertElliott {
            p: 0.1,
            r: 0.5,
            loss_good: 0.0,
            loss_bad: 1.0,
        };
        assert!(ok.validate().is_ok());
        let e = GilbertElliott { p: 0.0, ..ok }.validate().unwrap_err();
        assert!(e.starts_with("p: "), "{e}");
        let e = GilbertElliott {
            loss_bad: 1.5,
            ..ok
        }
        .validate()
        .unwrap_err();
        assert!(e.starts_with("loss_bad: "), "{e}");
        assert!(GilbertElliott { r: f64::NAN, ..ok }
            .validate()
            .unwrap_err()
            .starts_with("r: "));
    }
}
