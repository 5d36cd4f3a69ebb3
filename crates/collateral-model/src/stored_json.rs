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

/// Python's `repr(x)` of a finite float: the fewest significant digits that read back
/// as `x` (as Rust's shortest form has them), and of those the digits nearest `x`, a tie
/// to the even digit (Rust's shortest form breaks a tie upwards: `1e15 + 0.25` is
/// `1000000000000000.2` in Python, `….3` in Rust); fixed-point from 1e-4 to below 1e16,
/// else `d.ddde±XX`.
fn write_float(out: &mut String, x: f64) {
    let shortest = format!("{x:e}");
    let digits = shortest
        .split('e')
        .next()
        .map_or(1, |m| m.bytes().filter(u8::is_ascii_digit).count());
    // Correctly rounded to that many digits (exact, ties to even); kept only if it reads
    // back as `x` (it may not where the gap below `x` is half the gap above).
    let nearest = format!("{:.*e}", digits.saturating_sub(1), x);
    let sci = if nearest.parse::<f64>() == Ok(x) {
        nearest
    } else {
        shortest
    };
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let d: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    out.push_str(sign);
    if (-4..16).contains(&exp) {
        if exp >= 0 {
            let point = exp as usize + 1;
            if d.len() > point {
                let _ = write!(out, "{}.{}", &d[..point], &d[point..]);
            } else {
                let _ = write!(out, "{d}{}.0", "0".repeat(point - d.len()));
            }
        } else {
            let _ = write!(out, "0.{}{d}", "0".repeat((-exp - 1) as usize));
        }
    } else {
        let (first, rest) = d.split_at(1);
        let frac = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let esign = if exp < 0 { '-' } else { '+' };
        let _ = write!(out, "{first}{frac}e{esign}{:02}", exp.abs());
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
            // Ties between two shortest forms go to the even digit, as in Python.
            (json!(1e15 + 0.25), "1000000000000000.2"),
            (json!(-(1e15 + 0.25)), "-1000000000000000.2"),
            (json!((1u64 << 46) as f64 + 0.125), "70368744177664.12"),
            (json!(234524095827.57812), "234524095827.57812"),
            (json!(5e-324), "5e-324"),
            (json!(1.7976931348623157e308), "1.7976931348623157e+308"),
            (json!(123.456), "123.456"),
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
