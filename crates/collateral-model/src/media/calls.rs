//! A scenario's video calls: `media` is one call (an object, as before several calls
//! existed) or a list of them. RFC 8867's wired cases need two and three calls sharing
//! the bottleneck (§5.2, §5.4) and calls both ways (§5.3). A single call is written back
//! as an object, so its scenario reads, validates and serialises as it always did.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::MediaConfig;

/// The most calls a scenario may hold (each is two flows and its records).
pub const MAX_CALLS: usize = 64;

#[derive(Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(Box<MediaConfig>),
    Many(Vec<MediaConfig>),
}

/// `media`: null, one call, or a list of calls.
pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<MediaConfig>, D::Error> {
    Ok(match Option::<OneOrMany>::deserialize(d)? {
        None => Vec::new(),
        Some(OneOrMany::One(c)) => vec![*c],
        Some(OneOrMany::Many(v)) => v,
    })
}

/// One call as an object (as before several existed), several as a list.
pub fn serialize<S: Serializer>(calls: &[MediaConfig], s: S) -> Result<S::Ok, S::Error> {
    match calls {
        [one] => one.serialize(s),
        many => many.serialize(s),
    }
}

/// Each call valid, its errors named `media.FIELD` (one call) or `media[i].FIELD`.
pub fn validate(calls: &[MediaConfig]) -> Result<(), String> {
    if calls.len() > MAX_CALLS {
        return Err(format!(
            "media: {} calls, above the limit of {MAX_CALLS}",
            calls.len()
        ));
    }
    if let [one] = calls {
        return one.validate_as("media");
    }
    for (i, c) in calls.iter().enumerate() {
        c.validate_as(&format!("media[{i}]"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Scenario;

    fn scenario(media: &str) -> Result<Scenario, String> {
        let text = format!(
            r#"{{"seed": 1, "duration_ns": 1000000000,
                "down": {{"rate_bps": 1000000, "queue": {{"rule": "ps", "limit": 10}}}},
                "up": {{"rate_bps": 1000000, "queue": {{"rule": "ps", "limit": 10}}}}
                {media}}}"#
        );
        let sc: Scenario = serde_json::from_str(&text).map_err(|e| e.to_string())?;
        sc.validate()?;
        Ok(sc)
    }

    /// None, one object, a list: 0, 1 and 2 calls; one call serialises as an object.
    #[test]
    fn one_call_or_a_list() {
        assert!(scenario("").unwrap().media.is_empty());
        assert!(scenario(r#", "media": null"#).unwrap().media.is_empty());
        let one = scenario(r#", "media": {"controller": "nada"}"#).unwrap();
        assert_eq!(one.media.len(), 1);
        let json = serde_json::to_value(&one).unwrap();
        assert_eq!(json["media"]["controller"], "nada");
        let two = scenario(r#", "media": [{"controller": "gcc"}, {"direction": "up"}]"#).unwrap();
        assert_eq!(two.media.len(), 2);
        assert!(serde_json::to_value(&two).unwrap()["media"].is_array());
    }

    /// A bad field of a listed call is named with its index; of a lone call, as before.
    #[test]
    fn a_bad_call_is_named_by_its_index() {
        let e = scenario(r#", "media": [{}, {"fps": 0.5}]"#).unwrap_err();
        assert!(e.starts_with("media[1].fps: "), "{e}");
        let e = scenario(r#", "media": {"fps": 0.5}"#).unwrap_err();
        assert!(e.starts_with("media.fps: "), "{e}");
        let many = format!(", \"media\": [{}]", vec!["{}"; MAX_CALLS + 1].join(","));
        assert!(scenario(&many).unwrap_err().starts_with("media: 65 calls"));
    }
}
