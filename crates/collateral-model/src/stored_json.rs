//! The text of a JSON column as the store keeps it (`phases`, [`crate::schema`]).
//!
//! Stores have always held this column as Python's `json.dumps` writes it with its
//! defaults: `", "` and `": "` between items; `"`, `\` and the C0 escapes by name,
//! every other character outside printable ASCII as `\uxxxx` (lower-case hex, surrogate
//! pairs above U+FFFF); a float as `repr` writes it, the shortest digits that read back
//! the same, with an exponent (signed, at least two digits) below 1e-4 and from 1e16.
//! The core writes the same text itself, so that a sweep's records never become Python
//! objects one by one, and a store's old and new rows compare equal.

use std::fmt::Write;

use serde_json::Value;

/// `v` as the store's text.
pub fn to_text(v: &Value) -> String {
    let mut out = String::with_capacity(256);
    write_value(&mut out, v);
    out
}

fn write_value(out: &mut String, v: &Value) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => {
            if let Some(i) = n.as_u64() {
                let _ = write!(out, "{i}");
            } else if let Some(i) = n.as_i64() {
                let _ = write!(out, "{i}");
            } else if let Some(x) = n.as_f64() {
                write_float(out, x);
            }
        }
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_value(out, x);
            }
            out.push(']');
        }
        Value::Object(fields) => {
            out.push('{');
            for (i, (k, x)) in fields.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_string(out, k);
                out.push_str(": ");
                write_value(out, x);
            }
            out.push('}');
        }
    }
}

/// Python's `repr(x)` of a finite float. Rust's `{:?}` has the same digits (shortest
/// round-trip) and switches to an exponent at the same bounds (below 1e-4, from 1e16);
/// only the exponent is written differently: `1e-5` and `1e16` against `1e-05` and
/// `1e+16`.
fn write_float(out: &mut String, x: f64) {
    let s = format!("{x:?}");
    match s.split_once('e') {
        None => out.push_str(&s),
        Some((mantissa, exp)) => {
            let (sign, digits) = match exp.strip_prefix('-') {
                Some(d) => ('-', d),
                None => ('+', exp),
            };
            let _ = write!(out, "{mantissa}e{sign}{digits:0>2}");
        }
    }
}

fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            _ => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{u:04x}");
                }
            }
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Each expected text is what Python 3's `json.dumps` gives for the same value
    /// (worked from its rules: `repr` of each float, `ensure_ascii` escapes).
    #[test]
    fn writes_what_python_json_dumps_writes() {
        let cases = [
            (json!(null), "null"),
            (json!([]), "[]"),
            (json!({}), "{}"),
            (json!(true), "true"),
            (json!(-3), "-3"),
            (json!(18_446_744_073_709_551_615u64), "18446744073709551615"),
            (json!(2.0), "2.0"),
            (json!(-0.0), "-0.0"),
            (json!(0.1), "0.1"),
            (json!(2910000.0), "2910000.0"),
            (json!(0.0001), "0.0001"),
            (json!(0.00001), "1e-05"),
            (json!(4.16e-5), "4.16e-05"),
            (json!(1.5e-300), "1.5e-300"),
            (json!(1e15), "1000000000000000.0"),
            (json!(1e16), "1e+16"),
            (json!(1.2345e20), "1.2345e+20"),
            (json!(0.04518664047151277), "0.04518664047151277"),
            (json!("a \"b\" \\ /"), r#""a \"b\" \\ /""#),
            (
                json!("\n\r\t\u{8}\u{c}\u{1}\u{1f}\u{7f}"),
                r#""\n\r\t\b\f\u0001\u001f\u007f""#,
            ),
            (json!("naïve €"), r#""na\u00efve \u20ac""#),
            (json!("😀"), r#""\ud83d\ude00""#),
            (
                json!([{"phase": "a", "start_s": 0.0, "drop_rate": null, "arrivals": 509}]),
                r#"[{"phase": "a", "start_s": 0.0, "drop_rate": null, "arrivals": 509}]"#,
            ),
        ];
        for (v, want) in cases {
            assert_eq!(to_text(&v), want, "{v}");
        }
    }

    /// The text reads back as the value it was written from.
    #[test]
    fn reads_back_as_written() {
        let v = json!([{"x": 1e-7, "y": [1, -2, 3.25e22], "z": "\u{0}é😀"}, null, true]);
        let back: Value = serde_json::from_str(&to_text(&v)).unwrap();
        assert_eq!(back, v);
    }
}
