//! The small seeded generator the randomised disciplines (RED, FRED, CBT) draw from.
//!
//! SplitMix64 (Steele, Lea & Flood, "Fast splittable pseudorandom number generators",
//! OOPSLA 2014): one 64-bit state word, an additive Weyl sequence and a 64-bit finaliser.
//! It is enough for drop decisions, needs no dependency, and gives the same stream on
//! every platform, so a trial is reproducible from its seed. Never seeded from the OS.

/// The SplitMix64 finaliser (Stafford's "Mix13" variant): a bijection of 64-bit words
/// whose every output bit depends on every input bit. The one copy in the project: the
/// generator below, FQ-CoDel's flow hash and the simulator's per-component seed streams
/// (`collateral_model::rng`) all use it.
#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The golden-ratio increment of SplitMix64's Weyl sequence.
pub const GOLDEN_GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// SplitMix64 generator.
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GOLDEN_GAMMA);
        mix64(self.state)
    }

    /// Uniform in [0, 1), from the top 53 bits (every value is an exact multiple of 2⁻⁵³).
    #[inline]
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// True with probability `p` (exactly: `p <= 0` never, `p >= 1` always).
    #[inline]
    pub fn chance(&mut self, p: f64) -> bool {
        self.uniform() < p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_reference_stream() {
        // First outputs of SplitMix64 from seed 0, as published with the reference
        // implementation (Vigna's splitmix64.c) and reproduced by many ports.
        let mut r = SplitMix64::new(0);
        assert_eq!(r.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(r.next_u64(), 0x6e78_9e6a_a1b9_65f4);
        assert_eq!(r.next_u64(), 0x06c4_5d18_8009_454f);
    }

    #[test]
    fn uniform_is_in_range_and_roughly_uniform() {
        let mut r = SplitMix64::new(42);
        let n = 100_000;
        let mut below_tenth = 0;
        for _ in 0..n {
            let u = r.uniform();
            assert!((0.0..1.0).contains(&u));
            if u < 0.1 {
                below_tenth += 1;
            }
        }
        // Binomial(100000, 0.1): sd ≈ 95, so ±600 is over 6 sd.
        assert!((below_tenth as i64 - 10_000).abs() < 600, "{below_tenth}");
        assert!(!r.chance(0.0));
        assert!(r.chance(1.0));
    }
}
