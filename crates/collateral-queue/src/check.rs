//! Checks of a discipline's parameters. Each error starts with the key at fault as the
//! configuration spells it (`limit: …`, `tcp.max_th: …`), so the model's `ConfigError`
//! carries it as a key path and a front end names its own option without reading the
//! text.

/// Queue limits are 32-bit, as in Linux's qdiscs (`tc-pfifo(8)`, `tc-codel(8)`'s
/// `limit PACKETS`, CAKE's `memlimit`): the largest limit any discipline takes.
pub const MAX_LIMIT: u64 = u32::MAX as u64;

/// The longest time any parameter may hold: 10⁶ s (11.6 days); sums and products of a
/// few such times stay far below `u64::MAX` ns (the model's `limits::MAX_TIME_NS`).
pub const MAX_TIME_NS: u64 = 1_000_000 * 1_000_000_000;
/// The fastest rate: 10 Tbit/s (the model's `limits::MAX_RATE_BPS`).
pub const MAX_RATE_BPS: u64 = 10_000_000_000_000;

/// A time in nanoseconds: at most [`MAX_TIME_NS`] (a control law adds it to `now`).
pub fn time(key: &str, v: u64) -> Result<(), String> {
    if v > MAX_TIME_NS {
        return Err(format!(
            "{key}: {} s is above the limit of {} s",
            v / 1_000_000_000,
            MAX_TIME_NS / 1_000_000_000
        ));
    }
    Ok(())
}

/// A rate in bit/s: at most [`MAX_RATE_BPS`].
pub fn rate(key: &str, v: u64) -> Result<(), String> {
    if v > MAX_RATE_BPS {
        return Err(format!(
            "{key}: {v} bit/s is above the limit of {MAX_RATE_BPS} bit/s"
        ));
    }
    Ok(())
}

/// A hard limit (packets or bytes): at least 1, at most [`MAX_LIMIT`].
pub fn limit(key: &str, v: u64) -> Result<(), String> {
    if v == 0 {
        return Err(format!("{key}: must be positive"));
    }
    if v > MAX_LIMIT {
        return Err(format!(
            "{key}: {v} is above the limit of {MAX_LIMIT} (32-bit, as Linux's qdiscs)"
        ));
    }
    Ok(())
}

/// A count, size or time that must not be zero.
pub fn positive(key: &str, v: u64) -> Result<(), String> {
    if v == 0 {
        return Err(format!("{key}: must be positive"));
    }
    Ok(())
}

/// A finite number ≥ 0 (gains, thresholds).
pub fn non_negative(key: &str, v: f64) -> Result<(), String> {
    if !(v.is_finite() && v >= 0.0) {
        return Err(format!("{key}: must be a finite number >= 0, got {v}"));
    }
    Ok(())
}

/// A weight or probability in (0, 1].
pub fn fraction(key: &str, v: f64) -> Result<(), String> {
    if !(v > 0.0 && v <= 1.0) {
        return Err(format!("{key}: must be in (0, 1], got {v}"));
    }
    Ok(())
}

/// `a` (at `key`) strictly below `b` (named `other` as users write it, e.g. `interval`).
pub fn below(key: &str, a: u64, other: &str, b: u64) -> Result<(), String> {
    if a >= b {
        return Err(format!(
            "{key}: must be shorter than {other} ({} ms >= {} ms)",
            a as f64 / 1e6,
            b as f64 / 1e6
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_check_names_its_key_and_bounds() {
        assert_eq!(limit("limit", 1), Ok(()));
        assert_eq!(limit("limit", MAX_LIMIT), Ok(()));
        assert_eq!(limit("limit", 0).unwrap_err(), "limit: must be positive");
        let e = limit("limit", MAX_LIMIT + 1).unwrap_err();
        assert!(
            e.starts_with("limit: 4294967296 is above the limit of 4294967295"),
            "{e}"
        );
        assert!(positive("mtu", 0).unwrap_err().starts_with("mtu: "));
        assert!(non_negative("alpha", f64::NAN).is_err());
        assert!(non_negative("alpha", -0.5).is_err());
        assert_eq!(non_negative("alpha", 0.0), Ok(()));
        assert!(fraction("w_q", 0.0).is_err());
        assert_eq!(fraction("w_q", 1.0), Ok(()));
        assert!(below("target_ns", 5, "interval", 5)
            .unwrap_err()
            .starts_with("target_ns: "));
        assert_eq!(below("target_ns", 4, "interval", 5), Ok(()));
        assert_eq!(time("interval_ns", MAX_TIME_NS), Ok(()));
        assert!(time("interval_ns", MAX_TIME_NS + 1)
            .unwrap_err()
            .starts_with("interval_ns: "));
        assert_eq!(rate("bandwidth_bps", MAX_RATE_BPS), Ok(()));
        assert!(rate("bandwidth_bps", u64::MAX).is_err());
    }
}
