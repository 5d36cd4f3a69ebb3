//! H-TCP's flavour and switches as a scenario gives them; the algorithm is
//! `collateral_sim::tcp::htcp`.

use serde::{Deserialize, Serialize};

/// Which implementation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, strum::VariantNames)]
pub enum HtcpFlavor {
    /// Current Linux: returning to Open restarts Δ only after a congestion state.
    #[serde(rename = "linux")]
    #[strum(serialize = "linux")]
    Linux,
    /// Linux 2.6.25: every entry into Open restarts Δ, Disorder → Open included.
    #[serde(rename = "linux_2_6_25")]
    #[strum(serialize = "linux_2_6_25")]
    Linux2625,
    /// FreeBSD `cc_htcp` as today (`htcp_cong_signal`: the maxRTT decay, then β from
    /// the decayed maxRTT).
    #[serde(rename = "freebsd")]
    #[strum(serialize = "freebsd")]
    FreeBsd,
    /// The H-TCP module for FreeBSD 7 (CAIA's NewTCP patch, v0.9.1, later imported as
    /// `sys/netinet/cc_htcp.c` @33330ab5): `htcp_pre_fr` sets ssthresh with the β that
    /// `htcp_recalc_beta` last computed on an ACK, from the maxRTT before the decay,
    /// and only then decays maxRTT. The same arithmetic as `FreeBsd` otherwise.
    #[serde(rename = "freebsd_7")]
    #[strum(serialize = "freebsd_7")]
    FreeBsd7,
}

/// H-TCP's switches. When deserialized, fields left out take the defaults of the given
/// `flavor` (current Linux if none): `{"flavor": "freebsd"}` has every switch off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "HtcpConfigSpec")]
pub struct HtcpConfig {
    pub flavor: HtcpFlavor,
    /// Scale α by min RTT / 100 ms, within ×[0.1, 2] (Linux `use_rtt_scaling`, FreeBSD
    /// `rtt_scaling`).
    pub use_rtt_scaling: bool,
    /// Linux only: at a congestion event, fall back to β = 0.5 (and skip the next
    /// adaptive β) when the throughput peak moved by more than ±20 % since the previous
    /// event (`use_bandwidth_switch`). FreeBSD has no such switch and ignores it.
    pub use_bandwidth_switch: bool,
    /// β = RTT_min/RTT_max and α scaled by 2(1 − β) (FreeBSD `adaptive_backoff`). Linux
    /// has no switch and always adapts; setting it false there pins β at 0.5 (which
    /// makes the 2(1 − β) factor 1).
    pub adaptive_backoff: bool,
}

impl HtcpConfig {
    /// Current Linux module defaults.
    pub fn linux() -> Self {
        HtcpConfig {
            flavor: HtcpFlavor::Linux,
            use_rtt_scaling: true,
            use_bandwidth_switch: true,
            adaptive_backoff: true,
        }
    }

    /// Linux 2.6.25 module defaults.
    pub fn linux_2_6_25() -> Self {
        HtcpConfig {
            flavor: HtcpFlavor::Linux2625,
            ..Self::linux()
        }
    }

    /// FreeBSD sysctl defaults: `adaptive_backoff` 0, `rtt_scaling` 0.
    pub fn freebsd() -> Self {
        HtcpConfig {
            flavor: HtcpFlavor::FreeBsd,
            use_rtt_scaling: false,
            use_bandwidth_switch: false,
            adaptive_backoff: false,
        }
    }

    /// The FreeBSD 7 module's defaults (the same sysctls, off).
    pub fn freebsd_7() -> Self {
        HtcpConfig {
            flavor: HtcpFlavor::FreeBsd7,
            ..Self::freebsd()
        }
    }
}

impl Default for HtcpConfig {
    fn default() -> Self {
        Self::linux()
    }
}

/// `HtcpConfig` as written in a scenario: every field optional.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HtcpConfigSpec {
    flavor: Option<HtcpFlavor>,
    use_rtt_scaling: Option<bool>,
    use_bandwidth_switch: Option<bool>,
    adaptive_backoff: Option<bool>,
}

impl From<HtcpConfigSpec> for HtcpConfig {
    fn from(s: HtcpConfigSpec) -> Self {
        let d = match s.flavor.unwrap_or(HtcpFlavor::Linux) {
            HtcpFlavor::Linux => HtcpConfig::linux(),
            HtcpFlavor::Linux2625 => HtcpConfig::linux_2_6_25(),
            HtcpFlavor::FreeBsd => HtcpConfig::freebsd(),
            HtcpFlavor::FreeBsd7 => HtcpConfig::freebsd_7(),
        };
        HtcpConfig {
            flavor: d.flavor,
            use_rtt_scaling: s.use_rtt_scaling.unwrap_or(d.use_rtt_scaling),
            use_bandwidth_switch: s.use_bandwidth_switch.unwrap_or(d.use_bandwidth_switch),
            adaptive_backoff: s.adaptive_backoff.unwrap_or(d.adaptive_backoff),
        }
    }
}
