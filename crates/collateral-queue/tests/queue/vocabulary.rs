//! The names strum lists (what `_native.vocabulary()` exports to Python) are exactly the
//! names serde reads and writes, so the two cannot drift apart.

use collateral_queue::{DisciplineConfig, FullRule};
use strum::VariantNames;

#[test]
fn every_rule_name_round_trips_through_serde() {
    assert_eq!(FullRule::VARIANTS, ["ps", "fb-strict", "fb-loose"]);
    for name in FullRule::VARIANTS {
        let json = format!("\"{name}\"");
        let rule: FullRule = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(serde_json::to_string(&rule).unwrap(), json);
    }
}

#[test]
fn the_old_rule_spellings_still_parse_and_are_written_kebab_case() {
    for (old, rule, new) in [
        ("fb_strict", FullRule::FbStrict, "fb-strict"),
        ("fb_loose", FullRule::FbLoose, "fb-loose"),
    ] {
        let r: FullRule = serde_json::from_str(&format!("\"{old}\"")).unwrap();
        assert_eq!(r, rule);
        assert_eq!(serde_json::to_string(&r).unwrap(), format!("\"{new}\""));
    }
    assert!(serde_json::from_str::<FullRule>("\"FB-strict\"").is_err());
}

/// The least each kind needs besides `kind` (the documented shapes of `config.rs`).
fn minimal(kind: &str) -> &'static str {
    match kind {
        "red" | "fred" => r#""min_th": 5, "max_th": 15, "max_p": 0.1, "w_q": 0.002, "limit": 60"#,
        "cbt" => {
            r#""tcp": {"min_th": 5, "max_th": 15, "max_p": 0.1, "w_q": 0.002},
               "tagged_th": 4, "other_th": 2, "limit": 60"#
        }
        "cbq" => {
            r#""shares": {"tcp": 0.74, "tagged": 0.14, "other": 0.12},
               "limits": {"tcp": 40, "tagged": 20, "other": 20}"#
        }
        _ => "",
    }
}

#[test]
fn every_aqm_kind_round_trips_through_serde() {
    let names = DisciplineConfig::VARIANTS;
    assert_eq!(
        names,
        ["red", "fred", "cbt", "cbq", "codel", "fq_codel", "pie", "dualpi2", "cake"]
    );
    for kind in names {
        let extra = minimal(kind);
        let sep = if extra.is_empty() { "" } else { ", " };
        let json = format!(r#"{{"kind": "{kind}"{sep}{extra}}}"#);
        let c: DisciplineConfig =
            serde_json::from_str(&json).unwrap_or_else(|e| panic!("{kind}: {e}"));
        let back = serde_json::to_value(&c).unwrap();
        assert_eq!(back["kind"], *kind, "{kind} is written as {}", back["kind"]);
        let again: DisciplineConfig = serde_json::from_value(back).unwrap();
        assert_eq!(again, c);
    }
}
