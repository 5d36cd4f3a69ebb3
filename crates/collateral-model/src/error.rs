//! Errors in a configuration, with the JSON key path of what is wrong as data
//! (`cbr[0].interval_ns` = `[Key("cbr"), Index(0), Key("interval_ns")]`) beside the
//! text. Their text is `path: detail`, the form every semantic check of the model has
//! always written, so front ends can show it as it is or name their own option from
//! the path without parsing the text.
//!
//! serde's own errors (a wrong type, an unknown variant, an integer out of range) name
//! their key through `serde_path_to_error`. A few fields are parsed in two steps (a
//! queue dispatches on `kind`, a TCP flow merges a profile with overrides): their inner
//! errors travel through serde as text, with the inner path set off by [`NESTED`], and
//! [`from_json`] joins the two paths again.

use std::fmt;

use serde::de::DeserializeOwned;

/// One step of a key path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathPart {
    Key(String),
    Index(usize),
}

/// A configuration error: where (`path`, empty when the whole document is at fault)
/// and what (`detail`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub path: Vec<PathPart>,
    pub detail: String,
}

/// Sets an inner path off from its detail in an error that has to pass through serde
/// as text: it starts such a text (a user's value may hold it anywhere else).
pub const NESTED: char = '\u{1f}';

impl ConfigError {
    pub fn new(path: Vec<PathPart>, detail: impl Into<String>) -> Self {
        ConfigError {
            path,
            detail: detail.into(),
        }
    }

    /// Splits a `path: detail` message, as the model's checks write them, into its
    /// parts; a message that does not start with a key path has an empty path. Checks
    /// nest (`down.queue: ` + a discipline's `limit: must be positive`), so every
    /// leading `path: ` joins the path.
    pub fn parse(message: &str) -> Self {
        let mut path = Vec::new();
        let mut rest = message;
        while let Some((head, detail)) = rest.split_once(": ") {
            match parse_path(head) {
                Some(mut p) => {
                    path.append(&mut p);
                    rest = detail;
                }
                None => break,
            }
        }
        ConfigError::new(path, rest)
    }

    /// The path as the model writes it: `cbr[0].interval_ns`.
    pub fn path_text(&self) -> String {
        let mut s = String::new();
        for p in &self.path {
            match p {
                PathPart::Key(k) => {
                    if !s.is_empty() {
                        s.push('.');
                    }
                    s.push_str(k);
                }
                PathPart::Index(i) => s.push_str(&format!("[{i}]")),
            }
        }
        s
    }

    /// The same error below `prefix` (`[Key("down"), Key("queue")]`).
    pub fn within(mut self, prefix: &[PathPart]) -> Self {
        let mut path = prefix.to_vec();
        path.append(&mut self.path);
        self.path = path;
        self
    }

    /// The text to raise through serde's `custom` from a nested parse: [`from_json`]
    /// turns it back into this error below the outer path.
    pub fn nested(&self) -> String {
        format!("{NESTED}{}{NESTED}{}", self.path_text(), self.detail)
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.detail)
        } else {
            write!(f, "{}: {}", self.path_text(), self.detail)
        }
    }
}

impl std::error::Error for ConfigError {}

/// A key path in the model's spelling (`down.queue.flows`, `cbr[0].interval_ns`,
/// `[2]`), or `None` if `s` is not one. Keys are lower-case names (`a-z`, `0-9`, `_`).
pub fn parse_path(s: &str) -> Option<Vec<PathPart>> {
    let mut out = Vec::new();
    let mut rest = s;
    let key = |r: &str| -> usize {
        r.find(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'))
            .unwrap_or(r.len())
    };
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('[') {
            let end = r.find(']')?;
            out.push(PathPart::Index(r[..end].parse().ok()?));
            rest = &r[end + 1..];
        } else {
            let r = if out.is_empty() {
                rest
            } else {
                rest.strip_prefix('.')?
            };
            let n = key(r);
            if n == 0 || !r.starts_with(|c: char| c.is_ascii_lowercase() || c == '_') {
                return None;
            }
            out.push(PathPart::Key(r[..n].to_string()));
            rest = &r[n..];
        }
    }
    (!out.is_empty()).then_some(out)
}

/// serde_json's message without the " at line L column C" it adds to errors in the
/// data (the key path says where); a syntax error keeps it (there is no key).
fn detail_of(e: &serde_json::Error) -> String {
    let text = e.to_string();
    if e.is_data() {
        let at = format!(" at line {} column {}", e.line(), e.column());
        return in_words(text.strip_suffix(&at).unwrap_or(&text));
    }
    text
}

/// serde's Rust type names in the words of the range they stand for: "expected u32"
/// reads "expected a whole number 0 … 4294967295".
fn in_words(detail: &str) -> String {
    const TYPES: [(&str, &str); 6] = [
        ("expected u8", "expected a whole number 0 … 255"),
        ("expected u16", "expected a whole number 0 … 65535"),
        ("expected u32", "expected a whole number 0 … 4294967295"),
        (
            "expected u64",
            "expected a whole number 0 … 18446744073709551615",
        ),
        (
            "expected i32",
            "expected a whole number -2147483648 … 2147483647",
        ),
        ("expected f64", "expected a number"),
    ];
    for (rust, words) in TYPES {
        if let Some(head) = detail.strip_suffix(rust) {
            return format!("{head}{words}");
        }
    }
    detail.to_string()
}

/// A `serde_path_to_error` error as a [`ConfigError`]: its path, joined with the
/// path of a nested parse whose error came through as text ([`ConfigError::nested`]).
fn from_path_error(e: serde_path_to_error::Error<serde_json::Error>) -> ConfigError {
    let mut path = Vec::new();
    for seg in e.path().iter() {
        match seg {
            serde_path_to_error::Segment::Seq { index } => path.push(PathPart::Index(*index)),
            serde_path_to_error::Segment::Map { key } => path.push(PathPart::Key(key.clone())),
            serde_path_to_error::Segment::Enum { variant } => {
                path.push(PathPart::Key(variant.clone()))
            }
            serde_path_to_error::Segment::Unknown => {}
        }
    }
    let detail = detail_of(e.inner());
    // A nested error's text starts with the marker; one a user's value merely holds
    // (serde echoes unknown variants and strings) does not, and stays text.
    if let Some(inner) = detail.strip_prefix(NESTED) {
        if let Some((p, d)) = inner.split_once(NESTED) {
            let mut nested = if p.is_empty() {
                Vec::new()
            } else {
                parse_path(p).unwrap_or_else(|| vec![PathPart::Key(p.to_string())])
            };
            path.append(&mut nested);
            return ConfigError::new(path, d);
        }
    }
    // serde says a required key is missing at its parent; the key is where to look.
    if let Some(key) = detail
        .strip_prefix("missing field `")
        .and_then(|r| r.strip_suffix('`'))
    {
        path.push(PathPart::Key(key.to_string()));
        return ConfigError::new(path, "missing: this parameter has no default");
    }
    ConfigError::new(path, detail)
}

/// Parses JSON text into `T`, an error naming the key path of what is wrong.
pub fn from_json<T: DeserializeOwned>(s: &str) -> Result<T, ConfigError> {
    let mut de = serde_json::Deserializer::from_str(s);
    let v: T = serde_path_to_error::deserialize(&mut de).map_err(from_path_error)?;
    de.end()
        .map_err(|e| ConfigError::new(Vec::new(), e.to_string()))?;
    Ok(v)
}

/// Parses a JSON value into `T`, as [`from_json`] does text.
pub fn from_value<T: DeserializeOwned>(v: serde_json::Value) -> Result<T, ConfigError> {
    serde_path_to_error::deserialize(v).map_err(from_path_error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_type_names_read_as_ranges() {
        assert_eq!(
            in_words("invalid value: integer `-1`, expected u32"),
            "invalid value: integer `-1`, expected a whole number 0 … 4294967295"
        );
        assert_eq!(in_words("expected a boolean"), "expected a boolean");
        assert_eq!(in_words("expected u8 or more"), "expected u8 or more");
    }

    #[test]
    fn paths_read_and_write_in_the_models_spelling() {
        for s in [
            "cbr[0].interval_ns",
            "down.queue.flows",
            "tcp[12]",
            "web[0].tcp.cubic.beta",
        ] {
            let p = parse_path(s).unwrap();
            assert_eq!(ConfigError::new(p, "x").path_text(), s);
        }
        for s in ["", "scenario 3", "Down.rate", "a..b", "a[x]", "a[1"] {
            assert_eq!(parse_path(s), None, "{s}");
        }
        let e = ConfigError::parse("cbr[0].interval_ns: must be positive");
        assert_eq!(
            e.path,
            [
                PathPart::Key("cbr".into()),
                PathPart::Index(0),
                PathPart::Key("interval_ns".into())
            ]
        );
        assert_eq!(e.detail, "must be positive");
        assert_eq!(e.to_string(), "cbr[0].interval_ns: must be positive");
        let e = ConfigError::parse("too many flows (users × parallel connections)");
        assert!(e.path.is_empty());
        assert_eq!(
            e.to_string(),
            "too many flows (users × parallel connections)"
        );
    }
}
