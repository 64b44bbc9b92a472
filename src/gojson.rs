//! JSON written exactly as Go's `encoding/json` writes it for the controller's values: compact,
//! map keys sorted, `<`, `>`, `&`, U+2028 and U+2029 escaped, floats in Go's format. The
//! controller compares and stores objects in this form (the original-spec annotation is one),
//! so byte-for-byte fidelity depends on it.

use serde_json::{Number, Value};
use std::fmt::Write;

/// Go's `json.Marshal` of a decoded JSON value.
pub fn to_string(value: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, value);
    out
}

/// A string as Go's encoder quotes it.
pub fn quote(s: &str) -> String {
    let mut out = String::new();
    write_string(&mut out, s);
    out
}

/// Go decodes every JSON number into a float64; re-reading a value this way makes numbers
/// compare and print as they would after a round trip through the controller.
pub fn normalize_numbers(value: Value) -> Value {
    match value {
        Value::Number(n) => n.as_f64().and_then(|f| number(f).ok()).unwrap_or(Value::Number(n)),
        Value::Array(items) => Value::Array(items.into_iter().map(normalize_numbers).collect()),
        Value::Object(map) => Value::Object(map.into_iter().map(|(k, v)| (k, normalize_numbers(v))).collect()),
        other => other,
    }
}

/// A double as JSON, as Go's encoder prints it: whole numbers below 2^53 (exact, and printed
/// with every digit either way) become integers so a weight is never `50.0`; everything else
/// stays a double, printed with Go's shortest digits (`-0`, `1152921504606847000`). NaN and
/// infinities are rejected, as Go's json.Marshal rejects them.
pub fn number(n: f64) -> Result<Value, String> {
    if n.is_nan() || n.is_infinite() {
        let shown = if n.is_nan() {
            "NaN"
        } else if n > 0.0 {
            "+Inf"
        } else {
            "-Inf"
        };
        return Err(format!("json: unsupported value: {shown}"));
    }
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    if n.fract() == 0.0 && n.abs() < EXACT && !(n == 0.0 && n.is_sign_negative()) {
        return Ok(Value::from(n as i64));
    }
    Ok(Value::Number(Number::from_f64(n).expect("finite")))
}

fn write_value(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => write_number(out, n),
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            // serde_json's map is a BTreeMap (no preserve_order), so keys come sorted as in Go.
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, key);
                out.push(':');
                write_value(out, item);
            }
            out.push('}');
        }
    }
}

fn write_number(out: &mut String, n: &Number) {
    if n.is_f64() {
        out.push_str(&format_float(n.as_f64().unwrap_or_default()));
    } else {
        out.push_str(&n.to_string());
    }
}

/// Go's float64 encoding: shortest digits, plain notation unless |f| < 1e-6 or |f| >= 1e21,
/// exponent with a sign and without a leading zero (`1e+21`, `1.5e-7`).
pub fn format_float(f: f64) -> String {
    // `{:e}` gives the shortest round-trip digits; Rust's plain `{}` would print every digit
    // of a large whole number, where Go pads the shortest digits with zeros.
    let scientific = format!("{f:e}");
    let (mantissa, exponent) = scientific.split_once('e').expect("{:e} has an exponent");
    let exponent: i32 = exponent.parse().expect("a decimal exponent");
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        let sign = if exponent < 0 { "" } else { "+" };
        return format!("{mantissa}e{sign}{exponent}");
    }
    let (sign, mantissa) = mantissa.strip_prefix('-').map_or(("", mantissa), |m| ("-", m));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let point = exponent + 1; // digits before the decimal point
    let body = if point <= 0 {
        format!("0.{}{digits}", "0".repeat(point.unsigned_abs() as usize))
    } else if point as usize >= digits.len() {
        format!("{digits}{}", "0".repeat(point as usize - digits.len()))
    } else {
        format!("{}.{}", &digits[..point as usize], &digits[point as usize..])
    };
    format!("{sign}{body}")
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
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn escapes_html_and_line_separators_like_go() {
        assert_eq!(
            to_string(&json!("<a>&\u{2028}\u{2029}\"\\\n\u{1}")),
            r#""\u003ca\u003e\u0026\u2028\u2029\"\\\n\u0001""#
        );
    }

    #[test]
    fn formats_floats_like_go() {
        for (f, want) in [
            (50.0, "50"),
            (0.5, "0.5"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (1.5e-7, "1.5e-7"),
            (1e-10, "1e-10"),
            (0.000001, "0.000001"),
            (9007199254740992.0, "9007199254740992"),
            (-2.25, "-2.25"),
            (-0.0, "-0"),
            (0.0, "0"),
            (1152921504606846976.0, "1152921504606847000"),
            (123.456, "123.456"),
            (0.001234, "0.001234"),
            (1e20 + 65536.0, "100000000000000070000"),
            (1e100, "1e+100"),
        ] {
            assert_eq!(format_float(f), want, "{f}");
        }
    }

    #[test]
    fn sorts_keys() {
        assert_eq!(to_string(&json!({"z": 1, "a": [1.5, null]})), r#"{"a":[1.5,null],"z":1}"#);
    }

    #[test]
    fn normalizes_numbers_as_go_decodes_them() {
        let v = normalize_numbers(json!({"a": 50.0, "b": 12345678901234567890u64, "c": 0.5}));
        assert_eq!(to_string(&v), r#"{"a":50,"b":12345678901234567000,"c":0.5}"#);
    }
}
