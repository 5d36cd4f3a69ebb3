//! Every enumeration a scenario spells by name: the names strum lists (what
//! `_native.vocabulary()` exports to Python) are exactly the names serde reads and
//! writes, each once, so the two cannot drift apart.

use collateral_sim::queue::{DisciplineConfig, Ecn, FullRule};
use collateral_sim::scenario::{LINK_PRESETS, VOCABULARY};
use collateral_sim::tcp::cubic::CubicVariant;
use collateral_sim::tcp::htcp::HtcpFlavor;
use collateral_sim::tcp::{CcKind, Profile, RecoveryStyle, TcpEcn};
use collateral_sim::traffic::AppProfile;
use collateral_sim::Direction;
use serde::de::DeserializeOwned;
use serde::Serialize;
use strum::VariantNames;

/// Each name deserialises and serialises back to itself; no name is listed twice.
fn round_trips<T: VariantNames + Serialize + DeserializeOwned>() -> &'static [&'static str] {
    let names = T::VARIANTS;
    assert!(!names.is_empty());
    for (i, name) in names.iter().enumerate() {
        assert!(!names[..i].contains(name), "{name} listed twice");
        let json = format!("\"{name}\"");
        let v: T = serde_json::from_str(&json)
            .unwrap_or_else(|e| panic!("{} {name}: {e}", std::any::type_name::<T>()));
        assert_eq!(serde_json::to_string(&v).unwrap(), json);
    }
    names
}

#[test]
fn every_name_of_every_unit_enum_round_trips_through_serde() {
    assert_eq!(round_trips::<FullRule>(), ["ps", "fb-strict", "fb-loose"]);
    assert_eq!(
        round_trips::<RecoveryStyle>(),
        ["newreno", "rate_halving", "prr"]
    );
    assert_eq!(round_trips::<CubicVariant>(), ["linux_2_6_25", "modern"]);
    assert_eq!(
        round_trips::<HtcpFlavor>(),
        ["linux", "linux_2_6_25", "freebsd", "freebsd_7"]
    );
    assert_eq!(
        round_trips::<CcKind>(),
        ["newreno", "cubic", "htcp", "bbr", "dctcp", "prague"]
    );
    assert_eq!(round_trips::<TcpEcn>(), ["off", "classic", "l4s"]);
    assert_eq!(round_trips::<Ecn>(), ["not_ect", "ect1", "ect0", "ce"]);
    // A source sends any codepoint but CE.
    assert_eq!(collateral_sim::traffic::SOURCE_ECN, &Ecn::VARIANTS[..3]);
    assert_eq!(
        round_trips::<Profile>(),
        ["rfc", "linux-2.6.25", "freebsd-7", "linux-6"]
    );
    assert_eq!(
        round_trips::<AppProfile>(),
        ["rdp", "vnc", "g711", "skype_udp", "wow", "quake3"]
    );
    assert_eq!(round_trips::<Direction>(), ["down", "up"]);
}

#[test]
fn the_variant_arrays_and_names_agree_with_strum() {
    let cc: Vec<_> = CcKind::ALL.iter().map(|c| c.name()).collect();
    assert_eq!(cc, CcKind::VARIANTS);
    let profiles: Vec<_> = Profile::ALL.iter().map(|p| p.name()).collect();
    assert_eq!(profiles, Profile::VARIANTS);
    let apps: Vec<_> = AppProfile::ALL
        .iter()
        .map(|a| serde_json::to_value(a).unwrap())
        .collect();
    assert_eq!(apps, AppProfile::VARIANTS);
    for d in [Direction::Down, Direction::Up] {
        assert_eq!(serde_json::to_value(d).unwrap(), d.name());
    }
}

#[test]
fn the_vocabulary_lists_each_enumeration_once() {
    let keys: Vec<_> = VOCABULARY.iter().map(|(k, _)| *k).collect();
    assert_eq!(
        keys,
        [
            "rule",
            "aqm",
            "recovery",
            "cubic_variant",
            "htcp_flavor",
            "cc",
            "tcp_ecn",
            "cbr_ecn",
            "profile",
            "app",
            "direction",
            "media_controller",
            "workload",
            "send_buffer"
        ]
    );
    let get = |k: &str| VOCABULARY.iter().find(|(n, _)| *n == k).unwrap().1;
    // The send buffers: "draft" is the default, left out of a scenario's JSON; the
    // others are serde's own names.
    let sb = get("send_buffer");
    assert_eq!(sb[0], "draft");
    for name in &sb[1..] {
        let json = format!("\"{name}\"");
        let v: collateral_sim::resp_probe::SendBuffer = serde_json::from_str(&json).unwrap();
        assert_eq!(serde_json::to_string(&v).unwrap(), json);
    }
    assert_eq!(get("rule"), FullRule::VARIANTS);
    assert_eq!(get("aqm"), DisciplineConfig::VARIANTS);
    assert_eq!(get("app"), AppProfile::VARIANTS);
}

#[test]
fn every_aqm_kind_is_the_tag_serde_reads() {
    for kind in DisciplineConfig::VARIANTS {
        let err = serde_json::from_str::<DisciplineConfig>(&format!(r#"{{"kind": "{kind}"}}"#))
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(!err.contains("unknown variant"), "{kind}: {err}");
    }
}

#[test]
fn link_presets_are_named_once_with_positive_rates() {
    let names: Vec<_> = LINK_PRESETS.iter().map(|p| p.name).collect();
    assert_eq!(names, ["adsl1", "adsl2"]);
    for p in LINK_PRESETS {
        assert!(
            p.down_bps > 0 && p.up_bps > 0 && p.up_bps <= p.down_bps,
            "{p:?}"
        );
    }
    assert_eq!(
        (LINK_PRESETS[0].down_bps, LINK_PRESETS[0].up_bps),
        (1_500_000, 256_000)
    );
}

/// `_native.vocabulary()`'s `aqm_info` and `cc_info` have an entry for every `aqm` and
/// `cc` name it lists, with the names each discipline and controller declares.
#[test]
fn every_discipline_and_congestion_control_in_the_vocabulary_has_its_info() {
    let list = |key: &str| VOCABULARY.iter().find(|(k, _)| *k == key).unwrap().1;
    for kind in list("aqm") {
        let info = DisciplineConfig::kind_info(kind).unwrap_or_else(|| panic!("{kind}"));
        assert!(!info.display.is_empty(), "{kind}");
    }
    assert_eq!(DisciplineConfig::KINDS.len(), list("aqm").len());
    let display: Vec<&str> = DisciplineConfig::KINDS.iter().map(|k| k.display).collect();
    assert_eq!(
        display,
        ["RED", "FRED", "CBT", "CBQ", "CoDel", "FQ-CoDel", "PIE", "DualPI2", "CAKE"]
    );
    let names: Vec<&str> = CcKind::ALL.iter().map(|c| c.name()).collect();
    assert_eq!(names, list("cc"));
    let kernel: Vec<Option<&str>> = CcKind::ALL.iter().map(|c| c.kernel()).collect();
    assert_eq!(
        kernel,
        ["reno", "cubic", "htcp", "bbr", "dctcp", "prague"].map(Some)
    );
}
