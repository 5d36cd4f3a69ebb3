//! One JSON-friendly description of the non-drop-tail disciplines, tagged by `kind`,
//! for the scenario to carry and build:
//!
//! ```json
//! {"kind": "red",  "min_th": 5, "max_th": 15, "max_p": 0.1, "w_q": 0.002, "limit": 60,
//!  "gentle": true, "bytes": false}
//! {"kind": "fred", "min_th": 5, "max_th": 15, "max_p": 0.02, "w_q": 0.002, "limit": 60}
//! {"kind": "cbt",  "tcp": {"min_th": 5, "max_th": 15, "max_p": 0.1, "w_q": 0.002},
//!  "tagged_th": 4, "other_th": 2, "limit": 60}
//! {"kind": "cbq",  "shares": {"tcp": 0.74, "tagged": 0.14, "other": 0.12},
//!  "limits": {"tcp": 40, "tagged": 20, "other": 20}}
//! {"kind": "codel", "target_ns": 5000000, "interval_ns": 100000000, "limit": 1000}
//! {"kind": "fq_codel", "flows": 1024, "quantum": 1500, "limit": 10240}
//! {"kind": "pie", "target_ns": 15000000, "tupdate_ns": 15000000, "limit": 1000}
//! {"kind": "dualpi2", "target_ns": 15000000, "step_thresh_ns": 1000000, "k": 2}
//! {"kind": "cake", "bandwidth_bps": 1500000, "overhead": 10, "atm": true,
//!  "diffserv": "diffserv4", "ack_filter": "normal"}
//! ```
//!
//! Unknown fields are errors. Optional fields and their defaults are documented on
//! [`RedConfig`], [`FredConfig`], [`CbtConfig`] and [`CbqConfig`].

use serde::{Deserialize, Serialize};

use crate::{
    AnyQueue, Cake, CakeConfig, Cbq, CbqConfig, Cbt, CbtConfig, Codel, CodelConfig, DualPi2,
    DualPi2Config, FqCodel, FqCodelConfig, Fred, FredConfig, Pie, PieConfig, Red, RedConfig,
};

/// What a discipline's hard limit counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitUnit {
    Packets,
    Bytes,
}

impl LimitUnit {
    pub fn name(self) -> &'static str {
        match self {
            LimitUnit::Packets => "packets",
            LimitUnit::Bytes => "bytes",
        }
    }
}

/// A discipline's one hard limit: the field of its configuration that a plain "queue
/// size" sets (the CLI's `--queue`), and what it counts (for fields whose unit follows a
/// `limit_rule`, the unit under the default rule, `ps`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HardLimit {
    pub field: &'static str,
    pub unit: LimitUnit,
}

impl HardLimit {
    pub const fn packets(field: &'static str) -> Self {
        HardLimit {
            field,
            unit: LimitUnit::Packets,
        }
    }
    pub const fn bytes(field: &'static str) -> Self {
        HardLimit {
            field,
            unit: LimitUnit::Bytes,
        }
    }
}

/// The names a discipline's configuration declares beside it, so that the front ends
/// take them from the core instead of keeping tables of their own.
pub trait Described {
    /// The name papers and figures use ("FQ-CoDel").
    const DISPLAY: &'static str;
    /// The hard limit, or `None` where there is no single one (CBQ's are per class).
    const HARD_LIMIT: Option<HardLimit>;
}

/// One `kind` of [`DisciplineConfig`] with its configuration's [`Described`] names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KindInfo {
    pub kind: &'static str,
    pub display: &'static str,
    pub hard_limit: Option<HardLimit>,
}

const fn info<C: Described>(kind: &'static str) -> KindInfo {
    KindInfo {
        kind,
        display: C::DISPLAY,
        hard_limit: C::HARD_LIMIT,
    }
}

/// A RED, FRED, CBT, CBQ, CoDel, FQ-CoDel, PIE, DualPI2 or CAKE configuration.
/// `strum::VariantNames` lists the `kind`s.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, strum::VariantNames)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum DisciplineConfig {
    Red(RedConfig),
    Fred(FredConfig),
    Cbt(CbtConfig),
    Cbq(CbqConfig),
    Codel(CodelConfig),
    FqCodel(FqCodelConfig),
    Pie(PieConfig),
    #[serde(rename = "dualpi2")]
    #[strum(serialize = "dualpi2")]
    DualPi2(DualPi2Config),
    Cake(CakeConfig),
}

impl DisciplineConfig {
    /// Every `kind` in the order of [`strum::VariantNames`], each with what its
    /// configuration declares (a test checks the kinds against the variants).
    pub const KINDS: [KindInfo; 9] = [
        info::<RedConfig>("red"),
        info::<FredConfig>("fred"),
        info::<CbtConfig>("cbt"),
        info::<CbqConfig>("cbq"),
        info::<CodelConfig>("codel"),
        info::<FqCodelConfig>("fq_codel"),
        info::<PieConfig>("pie"),
        info::<DualPi2Config>("dualpi2"),
        info::<CakeConfig>("cake"),
    ];

    /// The [`KindInfo`] of a `kind` name, `None` if it is not one.
    pub fn kind_info(kind: &str) -> Option<&'static KindInfo> {
        Self::KINDS.iter().find(|k| k.kind == kind)
    }

    /// Checks the configuration for a link of `link_rate_bps` (RED, FRED and CBT use it
    /// for the idle decay unless `mean_pkt_time_ns` is given, and the RED family for the
    /// parameters left out, [`crate::link_defaults`]).
    pub fn validate(&self, link_rate_bps: u64) -> Result<(), String> {
        match self {
            DisciplineConfig::Red(c) => c.validate(link_rate_bps),
            DisciplineConfig::Fred(c) => c.validate(link_rate_bps),
            DisciplineConfig::Cbt(c) => c.validate(link_rate_bps),
            DisciplineConfig::Cbq(c) => c.validate(link_rate_bps),
            DisciplineConfig::Codel(c) => c.validate(),
            DisciplineConfig::FqCodel(c) => c.validate(),
            DisciplineConfig::Pie(c) => c.validate(),
            DisciplineConfig::DualPi2(c) => c.validate(),
            DisciplineConfig::Cake(c) => c.validate(),
        }
    }

    /// Builds the discipline for a link of `link_rate_bps`.
    pub fn build(&self, link_rate_bps: u64) -> Result<AnyQueue, String> {
        Ok(match self {
            DisciplineConfig::Red(c) => AnyQueue::Red(Red::new(c, link_rate_bps)?),
            DisciplineConfig::Fred(c) => AnyQueue::Fred(Fred::new(c, link_rate_bps)?),
            DisciplineConfig::Cbt(c) => AnyQueue::Cbt(Cbt::new(c, link_rate_bps)?),
            DisciplineConfig::Cbq(c) => AnyQueue::Cbq(Cbq::new(c, link_rate_bps)?),
            DisciplineConfig::Codel(c) => AnyQueue::Codel(Codel::new(c)?),
            DisciplineConfig::FqCodel(c) => AnyQueue::FqCodel(FqCodel::new(c)?),
            DisciplineConfig::Pie(c) => AnyQueue::Pie(Pie::new(c)?),
            DisciplineConfig::DualPi2(c) => AnyQueue::DualPi2(DualPi2::for_link(c, link_rate_bps)?),
            DisciplineConfig::Cake(c) => AnyQueue::Cake(Cake::new(c)?),
        })
    }

    /// The same configuration with its seed replaced (CBQ has none), so a runner can
    /// derive one per trial and direction.
    pub fn with_seed(&self, seed: u64) -> Self {
        let mut c = self.clone();
        match &mut c {
            DisciplineConfig::Red(r) => r.seed = seed,
            DisciplineConfig::Fred(f) => f.seed = seed,
            DisciplineConfig::Cbt(t) => t.seed = seed,
            DisciplineConfig::FqCodel(f) => f.seed = seed,
            DisciplineConfig::Pie(p) => p.seed = seed,
            DisciplineConfig::DualPi2(p) => p.seed = seed,
            DisciplineConfig::Cake(p) => p.seed = seed,
            DisciplineConfig::Cbq(_) | DisciplineConfig::Codel(_) => {}
        }
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Discipline, FullRule, Packet, PacketKind};

    fn parse(s: &str) -> Result<DisciplineConfig, String> {
        serde_json::from_str(s).map_err(|e| e.to_string())
    }

    #[test]
    fn the_documented_shapes_parse_and_build() {
        let red = parse(
            r#"{"kind": "red", "min_th": 5, "max_th": 15, "max_p": 0.1, "w_q": 0.002,
                "limit": 60, "gentle": true, "bytes": false}"#,
        )
        .unwrap();
        let DisciplineConfig::Red(r) = &red else {
            panic!()
        };
        assert_eq!(
            (r.min_th, r.max_th, r.max_p, r.w_q, r.limit),
            (Some(5.0), Some(15.0), Some(0.1), Some(0.002), Some(60))
        );
        assert!(r.gentle && !r.bytes && !r.queue_in_bytes);
        assert_eq!(r.limit_rule, FullRule::Ps);
        assert_eq!(r.mean_pkt_size, 1500);
        assert!(matches!(red.build(1_500_000).unwrap(), AnyQueue::Red(_)));
        // Without a link rate or mean_pkt_time_ns the idle decay has no unit.
        assert!(red.build(0).is_err());

        let fred = parse(
            r#"{"kind": "fred", "min_th": 5, "max_th": 15, "max_p": 0.02, "w_q": 0.002,
                "limit": 60}"#,
        )
        .unwrap();
        let DisciplineConfig::Fred(f) = &fred else {
            panic!()
        };
        assert_eq!(f.min_q, 2.0);
        assert!(matches!(fred.build(1_500_000).unwrap(), AnyQueue::Fred(_)));

        let cbt = parse(
            r#"{"kind": "cbt", "tcp": {"min_th": 5, "max_th": 15, "max_p": 0.1, "w_q": 0.002},
                "tagged_th": 4, "other_th": 2, "limit": 60, "tagged_tags": [46]}"#,
        )
        .unwrap();
        assert!(matches!(cbt.build(1_500_000).unwrap(), AnyQueue::Cbt(_)));
        let cbt_shares = parse(
            r#"{"kind": "cbt", "tcp": {"min_th": 5, "max_th": 15, "max_p": 0.1, "w_q": 0.002},
                "shares": {"link_rate_bps": 1500000, "tagged_bps": 210000,
                           "other_bps": 180000, "backlog_bytes": 22500,
                           "tagged_pkt_len": 186, "other_pkt_len": 1000},
                "limit": 60}"#,
        )
        .unwrap();
        assert!(cbt_shares.build(1_500_000).is_ok());

        let cbq = parse(
            r#"{"kind": "cbq", "shares": {"tcp": 0.74, "tagged": 0.14, "other": 0.12},
                "limits": {"tcp": 40, "tagged": 20, "other": 20}}"#,
        )
        .unwrap();
        let mut q = cbq.build(0).unwrap();
        let mut d = Vec::new();
        assert!(q.enqueue(0, Packet::new(PacketKind::Cbr, 0, 186, 0, 0), &mut d));
        assert_eq!(q.dequeue(0, &mut d).unwrap().len, 186);
    }

    #[test]
    fn unknown_fields_and_kinds_are_errors() {
        assert!(parse(
            r#"{"kind": "red", "min_th": 5, "max_th": 15, "max_p": 0.1,
                          "w_q": 0.002, "limit": 60, "maxp": 0.1}"#
        )
        .is_err());
        assert!(parse(r#"{"kind": "blue", "limit": 60}"#).is_err());
        assert!(parse(
            r#"{"kind": "cbq", "shares": {"tcp": 1, "tagged": 1, "other": 1},
                          "limits": {"tcp": 1, "tagged": 1, "other": 1, "video": 1}}"#
        )
        .is_err());
    }

    /// The RED family by name alone: everything left out comes from the link, so the
    /// kind builds on a link with a rate and is refused, naming the first parameter it
    /// could not derive, without one.
    #[test]
    fn the_red_family_builds_from_its_name_and_the_link() {
        for kind in ["red", "fred", "cbt", "cbq"] {
            let c = parse(&format!(r#"{{"kind": "{kind}"}}"#)).unwrap();
            assert!(c.build(1_500_000).is_ok(), "{kind}");
            let e = c.validate(0).unwrap_err();
            assert!(
                e.contains("not given, and there is no link rate"),
                "{kind}: {e}"
            );
        }
        let DisciplineConfig::Red(r) = parse(r#"{"kind": "red", "min_th": 8}"#).unwrap() else {
            panic!()
        };
        let p = r.params(1_500_000).unwrap();
        assert_eq!((p.min_th, p.max_th, p.limit), (8.0, 24.0, 96));
        // A half-given pair of class thresholds is still an error.
        let c = parse(r#"{"kind": "cbt", "tagged_th": 3}"#).unwrap();
        assert!(c
            .validate(1_500_000)
            .unwrap_err()
            .starts_with("tagged_th: give either"));
    }

    #[test]
    fn round_trips_through_json() {
        let c = parse(
            r#"{"kind": "fred", "min_th": 5, "max_th": 15, "max_p": 0.02, "w_q": 0.002,
                "limit": 30000, "limit_rule": "fb_strict", "seed": 9}"#,
        )
        .unwrap();
        let back = parse(&serde_json::to_string(&c).unwrap()).unwrap();
        assert_eq!(back, c);
        let DisciplineConfig::Fred(f) = c.with_seed(11) else {
            panic!()
        };
        assert_eq!((f.seed, f.limit_rule), (11, FullRule::FbStrict));
    }

    #[test]
    fn invalid_values_are_reported_not_panicked() {
        let c = parse(
            r#"{"kind": "red", "min_th": 15, "max_th": 5, "max_p": 0.1, "w_q": 0.002,
                "limit": 60}"#,
        )
        .unwrap();
        assert!(c.validate(1_000_000).is_err());
        assert!(c.build(1_000_000).is_err());
        let c = parse(
            r#"{"kind": "cbq", "shares": {"tcp": 1, "tagged": 0, "other": 1},
                "limits": {"tcp": 1, "tagged": 1, "other": 1}}"#,
        )
        .unwrap();
        assert!(c.build(0).is_err());
    }

    /// The declared kinds are the enum's, in its order, and each declared hard limit is
    /// a numeric field of that kind's configuration.
    #[test]
    fn every_kind_declares_its_names_and_a_real_limit_field() {
        use strum::VariantNames;
        let kinds: Vec<&str> = DisciplineConfig::KINDS.iter().map(|k| k.kind).collect();
        assert_eq!(kinds, DisciplineConfig::VARIANTS);
        for k in DisciplineConfig::KINDS {
            assert!(!k.display.is_empty(), "{}", k.kind);
            let Some(h) = k.hard_limit else {
                assert_eq!(k.kind, "cbq");
                continue;
            };
            let json = format!(r#"{{"kind": "{}", "{}": 1000}}"#, k.kind, h.field);
            if let Err(e) = parse(&json) {
                let e = e.to_string();
                assert!(e.starts_with("missing field"), "{}: {e}", k.kind);
            }
        }
        assert_eq!(
            DisciplineConfig::kind_info("fq_codel").unwrap().display,
            "FQ-CoDel"
        );
        assert_eq!(
            DisciplineConfig::kind_info("cake").unwrap().hard_limit,
            Some(HardLimit::bytes("memory_limit"))
        );
        assert!(DisciplineConfig::kind_info("drop-tail").is_none());
    }
}
