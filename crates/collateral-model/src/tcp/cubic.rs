//! CUBIC's module parameters as a scenario gives them; the algorithm is
//! `collateral_sim::tcp::cubic`.

use serde::{Deserialize, Serialize};

/// Which kernel's CUBIC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, strum::VariantNames)]
pub enum CubicVariant {
    /// v2.1 (through Linux 2.6.25): `max_increment`, `cnt = 50` before the first loss,
    /// the delayed-ACK ratio, counting ACKs; no HyStart.
    #[serde(rename = "linux_2_6_25")]
    #[strum(serialize = "linux_2_6_25")]
    Linux2625,
    /// Current Linux (v2.3+, RFC 9438 behaviour): counts acked segments, `cnt ≤ 20`
    /// before the first loss, `cnt ≥ 2`, at most one curve update per jiffy, HyStart.
    #[serde(rename = "modern")]
    #[strum(serialize = "modern")]
    Modern,
}

/// CUBIC's module parameters. When deserialized, fields left out take the defaults of
/// the given `variant` (modern if none), so `{"variant": "linux_2_6_25"}` is v2.1 with
/// β = 819 and no HyStart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "CubicConfigSpec")]
pub struct CubicConfig {
    pub variant: CubicVariant,
    /// Multiplicative decrease in 1/1024: 819 (≈0.8) in v2.1, 717 (≈0.7) from 2.6.26.
    /// Clamped to 1..=1023 (the kernel divides by 1024 − β).
    pub beta: u32,
    pub fast_convergence: bool,
    /// Reno-friendly estimate (RFC 9438 §4.3).
    pub tcp_friendliness: bool,
    /// Hybrid slow start (delay-increase and ACK-train exits); only the modern variant
    /// has it and this flag is ignored for v2.1.
    pub hystart: bool,
    /// C in 1/1024 (divided by 10 for the built-in 100 ms RTT): 41 gives C ≈ 0.4.
    pub bic_scale: u32,
}

impl CubicConfig {
    /// CUBIC v2.1 as in Linux 2.6.25 (module defaults).
    pub fn linux_2_6_25() -> Self {
        CubicConfig {
            variant: CubicVariant::Linux2625,
            beta: 819,
            fast_convergence: true,
            tcp_friendliness: true,
            hystart: false,
            bic_scale: 41,
        }
    }

    /// Current Linux CUBIC (module defaults: β = 717, HyStart on).
    pub fn modern() -> Self {
        CubicConfig {
            variant: CubicVariant::Modern,
            beta: 717,
            fast_convergence: true,
            tcp_friendliness: true,
            hystart: true,
            bic_scale: 41,
        }
    }
}

impl Default for CubicConfig {
    fn default() -> Self {
        Self::modern()
    }
}

/// `CubicConfig` as written in a scenario: every field optional.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CubicConfigSpec {
    variant: Option<CubicVariant>,
    beta: Option<u32>,
    fast_convergence: Option<bool>,
    tcp_friendliness: Option<bool>,
    hystart: Option<bool>,
    bic_scale: Option<u32>,
}

impl From<CubicConfigSpec> for CubicConfig {
    fn from(s: CubicConfigSpec) -> Self {
        let d = match s.variant.unwrap_or(CubicVariant::Modern) {
            CubicVariant::Linux2625 => CubicConfig::linux_2_6_25(),
            CubicVariant::Modern => CubicConfig::modern(),
        };
        CubicConfig {
            variant: d.variant,
            beta: s.beta.unwrap_or(d.beta),
            fast_convergence: s.fast_convergence.unwrap_or(d.fast_convergence),
            tcp_friendliness: s.tcp_friendliness.unwrap_or(d.tcp_friendliness),
            hystart: s.hystart.unwrap_or(d.hystart),
            bic_scale: s.bic_scale.unwrap_or(d.bic_scale),
        }
    }
}
