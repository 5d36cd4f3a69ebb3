//! Stack profiles: the non-congestion-control behaviour of a real TCP stack, bundled so a
//! study can say "Linux 2.6.25" or "FreeBSD 7". A flow names a profile and may override
//! any field; the profile fills in the rest.
//!
//! Sources (see `shared/reference/cc-aqm-facts.md` §A for line numbers):
//! Linux 2.6.25 `include/net/tcp.h`, `net/ipv4/tcp_input.c`, `tcp_cong.c`;
//! FreeBSD 7.3 `sys/netinet/tcp_input.c`, `tcp_timer.h`; Linux 6.x `tcp_input.c`,
//! `tcp_recovery`/PRR.

use serde::{Deserialize, Serialize};

use super::cubic::CubicConfig;
use super::htcp::HtcpConfig;
use super::{CcKind, RecoveryStyle, RtoEstimator, SlowStart, TcpConfig};
use crate::error::{ConfigError, PathPart};

const MS: u64 = 1_000_000;

/// A named stack.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    strum::VariantNames,
    strum::IntoStaticStr,
)]
pub enum Profile {
    /// RFC 5681/6582/6298 NewReno with Linux's 200 ms RTO floor and 40 ms delayed-ACK
    /// timer: the textbook sender, and `TcpConfig::default()`.
    #[serde(rename = "rfc")]
    #[strum(serialize = "rfc")]
    Rfc,
    /// The stack of the MMSys 2011 and Huebner 2008 studies: CUBIC v2.1 by default,
    /// SACK with FACK loss detection and rate-halving, no ABC, quick-ack start,
    /// RTO ≥ SRTT + 200 ms, initial RTO 3 s.
    #[serde(rename = "linux-2.6.25")]
    #[strum(serialize = "linux-2.6.25")]
    Linux2625,
    /// FreeBSD 7: inline NewReno with SACK recovery (`tcp_sack.c`) and limited transmit,
    /// no ABC, ACK every second segment with a 100 ms timer, RTO minimum 30 ms + 200 ms
    /// slop.
    #[serde(rename = "freebsd-7")]
    #[strum(serialize = "freebsd-7")]
    Freebsd7,
    /// Linux 6.x: CUBIC with HyStart, SACK (RFC 6675 loss detection standing in for
    /// RACK) with PRR, per-segment slow start and AIMD counting
    /// (`tcp_slow_start(tp, acked)`, `tcp_cong_avoid_ai`), initial window 10, RTO 1 s.
    #[serde(rename = "linux-6")]
    #[strum(serialize = "linux-6")]
    Linux6,
}

impl Profile {
    pub const ALL: [Profile; 4] = [
        Profile::Rfc,
        Profile::Linux2625,
        Profile::Freebsd7,
        Profile::Linux6,
    ];

    /// The name JSON, TOML and Python use (serde's and strum's spelling).
    pub fn name(self) -> &'static str {
        self.into()
    }

    /// The flow settings this stack uses.
    pub fn config(self) -> TcpConfig {
        let rfc = TcpConfig::default();
        match self {
            Profile::Rfc => rfc,
            Profile::Linux2625 => TcpConfig {
                cc: CcKind::Newreno,
                cubic: CubicConfig::linux_2_6_25(),
                htcp: HtcpConfig::linux_2_6_25(),
                // tcp_init_cwnd: 3 segments for an MSS of 1096–1460 bytes.
                initial_cwnd: 3,
                slow_start: SlowStart::PerAck,
                abc: false,
                ss_inclusive: true,
                ssthresh_from_cwnd: true,
                recovery: RecoveryStyle::RateHalving,
                slow_but_steady: true,
                limited_transmit: false,
                // sysctl tcp_sack = 1 and tcp_fack = 1 (tcp_input.c).
                sack: true,
                delayed_ack: true,
                ack_every: 2,
                delack_ns: 40 * MS,
                quickacks: 16,
                linux_ato: true,
                rto_estimator: RtoEstimator::Linux,
                rto_min_ns: 200 * MS,
                rto_initial_ns: 3000 * MS,
                rto_max_ns: 120_000 * MS,
                ..rfc
            },
            Profile::Freebsd7 => TcpConfig {
                cc: CcKind::Newreno,
                // FreeBSD 7 shipped no CUBIC; the modern one stands in if asked for.
                cubic: CubicConfig::modern(),
                htcp: HtcpConfig::freebsd_7(),
                // RFC 3390: min(4·MSS, max(2·MSS, 4380 B)) = 4380 B = 3 segments.
                initial_cwnd: 3,
                slow_start: SlowStart::PerAck,
                abc: false,
                // `if (cw > ssthresh)` selects congestion avoidance.
                ss_inclusive: true,
                ssthresh_from_cwnd: true,
                recovery: RecoveryStyle::Newreno,
                slow_but_steady: true,
                limited_transmit: true,
                // net.inet.tcp.sack.enable = 1 (tcp_sack.c).
                sack: true,
                delayed_ack: true,
                ack_every: 2,
                delack_ns: 100 * MS,
                quickacks: 0,
                linux_ato: false,
                rto_estimator: RtoEstimator::Rfc6298,
                rto_min_ns: 230 * MS,
                rto_initial_ns: 3000 * MS,
                rto_max_ns: 64_000 * MS,
                ..rfc
            },
            Profile::Linux6 => TcpConfig {
                cc: CcKind::Newreno,
                cubic: CubicConfig::modern(),
                htcp: HtcpConfig::linux(),
                initial_cwnd: 10,
                slow_start: SlowStart::PerSegment,
                abc: true,
                ss_inclusive: false,
                ssthresh_from_cwnd: true,
                recovery: RecoveryStyle::Prr,
                slow_but_steady: true,
                limited_transmit: false,
                sack: true,
                delayed_ack: true,
                ack_every: 2,
                delack_ns: 40 * MS,
                quickacks: 16,
                linux_ato: true,
                // net.ipv4.tcp_comp_sack_nr = 44, tcp_comp_sack_delay_ns = 1 ms.
                sack_compression: true,
                rto_estimator: RtoEstimator::Linux,
                rto_min_ns: 200 * MS,
                rto_initial_ns: 1000 * MS,
                rto_max_ns: 120_000 * MS,
                ..rfc
            },
        }
    }
}

/// Builds a flow's settings from JSON: `{"profile": "linux-2.6.25", ...overrides}`. The
/// profile's fields are the defaults; every other key overrides one of them (inside the
/// `cubic` and `htcp` objects, key by key), and an unknown key is an error naming it.
pub fn config_from_json(v: &serde_json::Value) -> Result<TcpConfig, String> {
    parse_config(v).map_err(|e| e.to_string())
}

/// [`config_from_json`] with the error's key path (within the flow) as data.
pub fn parse_config(v: &serde_json::Value) -> Result<TcpConfig, ConfigError> {
    let err = |detail: String| ConfigError::new(Vec::new(), detail);
    let obj = v
        .as_object()
        .ok_or_else(|| err("a TCP flow must be an object".into()))?;
    let profile = match obj.get("profile") {
        None => Profile::Rfc,
        Some(p) => serde_json::from_value(p.clone()).map_err(|_| {
            let names: Vec<_> = Profile::ALL.iter().map(|p| p.name()).collect();
            ConfigError::new(
                vec![PathPart::Key("profile".into())],
                format!("unknown {p}; expected one of {}", names.join(", ")),
            )
        })?,
    };
    let mut merged = serde_json::to_value(profile.config()).expect("serialisable");
    let m = merged.as_object_mut().unwrap();
    for (k, val) in obj {
        if k == "profile" {
            continue;
        }
        match (m.get_mut(k), val) {
            (None, _) => return Err(err(format!("unknown field `{k}`"))),
            // Naming another variant/flavour starts from that one's defaults instead.
            (Some(slot), serde_json::Value::Object(over))
                if over.contains_key("variant") || over.contains_key("flavor") =>
            {
                *slot = val.clone()
            }
            (Some(serde_json::Value::Object(base)), serde_json::Value::Object(over)) => {
                for (ik, iv) in over {
                    if !base.contains_key(ik) {
                        return Err(err(format!("unknown field `{k}.{ik}`")));
                    }
                    base.insert(ik.clone(), iv.clone());
                }
            }
            (Some(slot), _) => *slot = val.clone(),
        }
    }
    crate::error::from_value(merged)
}

/// One TCP flow's settings from a profile name and overrides (`deserialize_with`).
pub(crate) fn tcp_flow<'de, D: serde::Deserializer<'de>>(d: D) -> Result<TcpConfig, D::Error> {
    let v = serde_json::Value::deserialize(d)?;
    parse_config(&v).map_err(|e| serde::de::Error::custom(e.nested()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_profile_fills_what_the_flow_does_not_say() {
        let c = config_from_json(&json!({"profile": "freebsd-7", "initial_cwnd": 4})).unwrap();
        assert_eq!(c.initial_cwnd, 4, "override wins");
        assert_eq!(c.delack_ns, 100 * MS, "profile fills the rest");
        assert_eq!(c.recovery, RecoveryStyle::Newreno);
        let c = config_from_json(&json!({"profile": "linux-2.6.25", "direction": "up"})).unwrap();
        assert_eq!(c.recovery, RecoveryStyle::RateHalving);
        assert_eq!(c.direction, crate::units::Direction::Up);
        let c = config_from_json(&json!({})).unwrap();
        assert_eq!(c.recovery, TcpConfig::default().recovery);
    }

    #[test]
    fn every_real_stack_has_sack_and_a_flow_may_turn_it_off() {
        let on: Vec<bool> = Profile::ALL.iter().map(|p| p.config().sack).collect();
        assert_eq!(on, vec![false, true, true, true]);
        assert!(!TcpConfig::default().sack, "rfc, the default, is unchanged");
        let c = config_from_json(&json!({"profile": "linux-2.6.25", "sack": false})).unwrap();
        assert!(!c.sack);
        assert_eq!(c.recovery, RecoveryStyle::RateHalving);
    }

    #[test]
    fn nested_algorithm_settings_merge_key_by_key() {
        let c = config_from_json(&json!({
            "profile": "linux-2.6.25", "cc": "cubic", "cubic": {"fast_convergence": false}
        }))
        .unwrap();
        assert_eq!(c.cc, CcKind::Cubic);
        assert!(!c.cubic.fast_convergence);
        assert_eq!(c.cubic.beta, 819, "the profile's CUBIC v2.1 beta stays");
        assert_eq!(
            config_from_json(&json!({"profile": "linux-6"}))
                .unwrap()
                .cubic
                .beta,
            717
        );
        // Naming a variant takes that variant's defaults, not the profile's values.
        let c =
            config_from_json(&json!({"profile": "linux-2.6.25", "cubic": {"variant": "modern"}}))
                .unwrap();
        assert_eq!((c.cubic.beta, c.cubic.hystart), (717, true));
        let c = config_from_json(&json!({"profile": "linux-6", "htcp": {"flavor": "freebsd"}}))
            .unwrap();
        assert!(!c.htcp.adaptive_backoff);
        let e = config_from_json(&json!({"cubic": {"bogus": 1}})).unwrap_err();
        assert!(e.contains("cubic.bogus"), "{e}");
    }

    #[test]
    fn unknown_profiles_and_fields_are_named() {
        let e = config_from_json(&json!({"profile": "windows-xp"})).unwrap_err();
        assert!(
            e.contains("windows-xp") && e.contains("linux-2.6.25"),
            "{e}"
        );
        let e = config_from_json(&json!({"profile": "rfc", "cwnd_bogus": 3})).unwrap_err();
        assert!(e.contains("cwnd_bogus"), "{e}");
    }
}
