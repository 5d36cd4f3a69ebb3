//! A constant line rate: serialisation time in integer nanoseconds, rounded up so a link
//! never exceeds its rate, with the per-byte time precomputed so that the per-packet cost
//! is one multiplication. The rate clocks (`crate::clock`) and the delay line's access
//! links are built on it.

use collateral_queue::Nanos;

/// Serialisation time of `len` bytes at `rate_bps`, rounded up to a whole nanosecond so
/// the link never exceeds its rate.
#[inline]
pub fn ser_ns(len: u32, rate_bps: u64) -> Nanos {
    if rate_bps == 0 {
        return 0;
    }
    (len as u64 * 8_000_000_000).div_ceil(rate_bps)
}

/// A line rate with its nanoseconds-per-byte precomputed as a 64.64 fixed-point number,
/// rounded up, so the per-packet serialisation time is one multiplication instead of a
/// division, and exactly [`ser_ns`]'s value:
///
/// with `C = ⌈8·10⁹·2⁶⁴ / bps⌉ = 8·10⁹·2⁶⁴/bps + ε` (0 ≤ ε < 1) and `x = len·8·10⁹/bps`,
/// `len·C = x·2⁶⁴ + len·ε`. If `x` is whole, the fraction of `len·C` is `len·ε < 2¹⁷`;
/// if not, `x`'s own fraction is at least `1/bps`, i.e. at least `2⁶⁴/10¹³ > 2²⁰` in
/// 2⁻⁶⁴ units, and `len·ε` cannot carry it past a whole number. So `⌈x⌉` is the integer
/// part plus one exactly when the fraction is at least 2¹⁹ (`len` < 2¹⁷ and
/// `bps` ≤ `limits::MAX_RATE_BPS`; other lengths take the division).
#[derive(Debug, Clone, Copy)]
pub struct Rate {
    pub bps: u64,
    ns_per_byte: u128,
}

impl Rate {
    pub fn new(bps: u64) -> Self {
        debug_assert!(bps <= crate::limits::MAX_RATE_BPS);
        let ns_per_byte = if bps == 0 {
            0
        } else {
            ((8_000_000_000u128) << 64).div_ceil(bps as u128)
        };
        Rate { bps, ns_per_byte }
    }

    #[inline]
    pub fn ser(&self, len: u32) -> Nanos {
        if len >= 1 << 17 {
            return ser_ns(len, self.bps);
        }
        let x = len as u128 * self.ns_per_byte;
        (x >> 64) as u64 + ((x as u64) >= 1 << 19) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_point_rate_matches_exact_division() {
        for bps in [
            1,
            56_000,
            256_000,
            1_000_000,
            1_500_000,
            24_000_000,
            1_000_000_000,
            3_333_333,
        ] {
            let r = Rate::new(bps);
            for len in [1u32, 40, 52, 186, 200, 1500, 9000, 65535] {
                let exact = ser_ns(len, bps);
                let fast = r.ser(len);
                assert_eq!(fast, exact, "{bps} bit/s, {len} B");
            }
        }
        // Every length at rates spread over the whole range (an LCG picks them).
        let mut v: u64 = 12345;
        for _ in 0..200_000 {
            v = v
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let bps = 1 + (v >> 20) % crate::limits::MAX_RATE_BPS;
            let bps = if v & 1 == 0 {
                bps
            } else {
                1 + bps % 10_000_000
            };
            let len = ((v >> 3) % (1 << 18)) as u32;
            assert_eq!(
                Rate::new(bps).ser(len),
                ser_ns(len, bps),
                "{bps} bit/s, {len} B"
            );
        }
        for bps in [
            1,
            3,
            crate::limits::MAX_RATE_BPS,
            crate::limits::MAX_RATE_BPS - 1,
        ] {
            for len in [0, 1, (1 << 17) - 1, 1 << 17, 65_535] {
                assert_eq!(
                    Rate::new(bps).ser(len),
                    ser_ns(len, bps),
                    "{bps} bit/s, {len} B"
                );
            }
        }
        // 1500 B at 1.5 Mbit/s is exactly 8 ms.
        assert_eq!(Rate::new(1_500_000).ser(1500), 8_000_000);
    }
}
