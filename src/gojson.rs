//! JSON written exactly as Go's `encoding/json` writes it for the controller's values: compact,
//! map keys sorted, `<`, `>`, `&`, U+2028 and U+2029 escaped, every number a float64 in Go's
//! format (the controller decodes objects into `interface{}`, where every number is one). The
//! controller compares and stores objects in this form (the original-spec annotation is one),
//! so byte-for-byte fidelity depends on it.

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::ser::{CompactFormatter, Formatter, PrettyFormatter};
use serde_json::{Number, Value};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::io;

/// Go's `json.Unmarshal` of a decoded JSON value into the `map[string]string` `map` (`into`
/// names it in messages: `Go value`, or `Go struct field Data.labels`). As Go does: null
/// empties the map, entries are added to it, a null element becomes "", and any other
/// non-string element becomes "" too and is reported (the first one), the rest still decoded.
pub fn unmarshal_string_map(map: &mut BTreeMap<String, String>, value: Value, into: &str) -> Result<(), String> {
    let entries = match value {
        Value::Null => {
            map.clear();
            return Ok(());
        }
        Value::Object(entries) => entries,
        other => {
            return Err(format!("json: cannot unmarshal {} into {into} of type map[string]string", kind(&other)));
        }
    };
    let mut first_error = Ok(());
    for (key, value) in entries {
        let text = match value {
            Value::String(text) => text,
            Value::Null => String::new(),
            other => {
                if first_error.is_ok() {
                    first_error = Err(format!("json: cannot unmarshal {} into {into} of type string", kind(&other)));
                }
                String::new()
            }
        };
        map.insert(key, text);
    }
    first_error
}

/// A JSON value's kind as Go's decoding errors name it.
pub fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Go's `json.Marshal` of a decoded JSON value.
pub fn to_string(value: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, value);
    out
}

/// Indented JSON for people and programs, numbers written as Go writes them
/// (`12345678901234567000`, `-0`; serde_json would write `1.2345678901234567e19`, `-0.0`).
pub fn to_string_pretty(value: &Value) -> String {
    with_go_floats(value, PrettyFormatter::new())
}

/// One line of JSON for people: Go's numbers, and strings as they are (`<`, where Go's encoder
/// writes `\u003c`).
pub fn to_string_for_people(value: &Value) -> String {
    with_go_floats(value, CompactFormatter)
}

fn with_go_floats(value: &Value, layout: impl Formatter) -> String {
    let mut out = Vec::new();
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, GoFloats(layout));
    value.serialize(&mut serializer).expect("JSON values serialize");
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

/// serde_json's layout `F` with Go's float format.
struct GoFloats<F>(F);

impl<F: Formatter> Formatter for GoFloats<F> {
    fn write_f64<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: f64) -> io::Result<()> {
        writer.write_all(format_float(value).as_bytes())
    }
    fn begin_array<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.begin_array(writer)
    }
    fn end_array<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.end_array(writer)
    }
    fn begin_array_value<W: ?Sized + io::Write>(&mut self, writer: &mut W, first: bool) -> io::Result<()> {
        self.0.begin_array_value(writer, first)
    }
    fn end_array_value<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.end_array_value(writer)
    }
    fn begin_object<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.begin_object(writer)
    }
    fn end_object<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.end_object(writer)
    }
    fn begin_object_key<W: ?Sized + io::Write>(&mut self, writer: &mut W, first: bool) -> io::Result<()> {
        self.0.begin_object_key(writer, first)
    }
    fn begin_object_value<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.begin_object_value(writer)
    }
    fn end_object_value<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.end_object_value(writer)
    }
}

/// A JSON value that serializes its numbers as Go writes them, for other formats (YAML): a
/// number Go writes as a whole number (`12345678901234567000`) is handed over as one. The rest
/// (fractions, exponents, `-0`) are handed over as floats, in the format's own float syntax.
pub struct GoNumbers<'a>(pub &'a Value);

impl Serialize for GoNumbers<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Value::Number(n) => match n.as_f64().filter(|_| n.is_f64()) {
                Some(f) => match format_float(f).parse::<i128>() {
                    Ok(whole) if !(f == 0.0 && f.is_sign_negative()) => serializer.serialize_i128(whole),
                    _ => serializer.serialize_f64(f),
                },
                None => n.serialize(serializer),
            },
            Value::Array(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(&GoNumbers(item))?;
                }
                seq.end()
            }
            Value::Object(map) => {
                let mut out = serializer.serialize_map(Some(map.len()))?;
                for (key, item) in map {
                    out.serialize_entry(key, &GoNumbers(item))?;
                }
                out.end()
            }
            other => other.serialize(serializer),
        }
    }
}

/// Go decodes every JSON number into a float64; re-reading a value this way makes numbers
/// compare and print as they would after a round trip through the controller.
pub fn normalize_numbers(mut value: Value) -> Value {
    normalize_in_place(&mut value, false);
    value
}

/// An object's numbers as the controller's client decodes them (apimachinery's
/// `UnmarshalCaseSensitivePreserveInts`): a whole number that fits an int64 stays one, which Go
/// prints exactly; every other number becomes a float64. This is what the controller stores as
/// an object's original; reading that annotation back gives float64s (`normalize_numbers`).
pub fn normalize_numbers_keeping_int64(mut value: Value) -> Value {
    normalize_in_place(&mut value, true);
    value
}

/// The numbers of a manifest or test case as Go reads them: kubectl (for the API server) and the
/// controller's go test turn YAML (and kubectl JSON too) into JSON with sigs.k8s.io/yaml or Go's
/// encoder, printing each float as Go does, and a number so printed that fits an int64 is read
/// as one: `1.0` is stored as 1 (a `replicas: 1.0` is an integer), `-0.0` is printed `-0` and
/// read as 0, `1152921504606846976.0` is printed and read as 1152921504606847000.
pub fn as_go_reads_yaml(value: &mut Value) {
    match value {
        Value::Number(n) if n.is_f64() => {
            if let Some(whole) = n.as_f64().and_then(|f| format_float(f).parse::<i64>().ok()) {
                *value = Value::from(whole);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(as_go_reads_yaml),
        Value::Object(map) => map.values_mut().for_each(as_go_reads_yaml),
        _ => {}
    }
}

/// `normalize_numbers` without moving the value: only its numbers change.
fn normalize_in_place(value: &mut Value, keep_int64: bool) {
    match value {
        Value::Number(n) if keep_int64 && n.is_i64() => {}
        Value::Number(n) => {
            if let Some(normal) = n.as_f64().and_then(|f| number(f).ok()) {
                *value = normal;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| normalize_in_place(item, keep_int64)),
        Value::Object(map) => map.values_mut().for_each(|item| normalize_in_place(item, keep_int64)),
        _ => {}
    }
}

/// A whole number the controller writes back rounded (see `rounded_integers`).
#[derive(Debug, PartialEq)]
pub struct Rounded {
    /// Where it is, relative to the values compared (`.http[0].route[1].weight`).
    pub path: String,
    /// The number as the source holds it (`9007199254740993`).
    pub exact: String,
    /// The float64 it rounds to, as Go writes it (`9007199254740992`).
    pub written: String,
}

/// The whole numbers of `source` that a float64 cannot hold (beyond 2^53 and between two
/// float64s) where `planned` holds, at the same path, the float64 they round to: what the
/// controller, which reads an object's stored original back as float64s, changes when it
/// writes that original or a script's pass-through of it. Only the source is walked; `planned`
/// is looked into where such a number is found.
pub fn rounded_integers(source: &Value, planned: &Value) -> Vec<Rounded> {
    let mut found = Vec::new();
    find_rounded(source, &mut Vec::new(), planned, &mut found);
    found
}

/// One step of a path into a JSON value.
enum PathStep<'a> {
    Key(&'a str),
    Index(usize),
}

fn find_rounded<'a>(source: &'a Value, path: &mut Vec<PathStep<'a>>, planned: &Value, found: &mut Vec<Rounded>) {
    match source {
        Value::Number(n) => {
            let Some(float) = float64_rounding(n) else { return };
            let at = path.iter().try_fold(planned, |value, step| match step {
                PathStep::Key(key) => value.get(key),
                PathStep::Index(i) => value.get(i),
            });
            // The exact number itself (a restore from a backup writes it so) is not rounded, nor
            // one written as it reads already (`12345678901234567000`, beyond int64, which the
            // API server stored as a float64).
            let exact = n.to_string();
            if let Some(Value::Number(written)) = at
                && written != n
                && written.as_f64() == Some(float)
                && exact != format_float(float)
            {
                let path = path
                    .iter()
                    .map(|step| match step {
                        PathStep::Key(key) => format!(".{key}"),
                        PathStep::Index(i) => format!("[{i}]"),
                    })
                    .collect();
                found.push(Rounded { path, exact, written: format_float(float) });
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                path.push(PathStep::Index(i));
                find_rounded(item, path, planned, found);
                path.pop();
            }
        }
        Value::Object(map) => {
            for (key, item) in map {
                path.push(PathStep::Key(key));
                find_rounded(item, path, planned, found);
                path.pop();
            }
        }
        _ => {}
    }
}

/// The float64 a whole number (an int64 or uint64 as read) rounds to, when it is not exact.
fn float64_rounding(n: &Number) -> Option<f64> {
    let whole = n.as_i64().map(i128::from).or_else(|| n.as_u64().map(i128::from))?;
    // Rust's cast rounds to the nearest float64, ties to even, as Go's decoder does.
    let float = whole as f64;
    (float as i128 != whole).then_some(float)
}

/// Whether Go's JSON text may hold a whole number a float64 cannot hold: one has at least 16
/// digits (2^53 has 16), and most objects have no run of digits that long, so callers skip
/// parsing the text again for `rounded_integers`. A long run elsewhere (in a string, a
/// fraction) only costs that parse.
pub fn may_hold_inexact_integer(text: &str) -> bool {
    let mut digits = 0;
    text.bytes().any(|b| {
        digits = if b.is_ascii_digit() { digits + 1 } else { 0 };
        digits >= 16
    })
}

/// Whether two values are the same to Go, i.e. encode to the same JSON (`write_value`): as `==`,
/// except that numbers are compared as the float64s Go decodes them into, and, where one is an
/// int64 beyond 2^53 (an object's, which the controller's client keeps exact), as Go writes them:
/// `9007199254740993` and the float64 it rounds to differ.
pub fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let float = |n: &Number| n.as_f64().map(f64::to_bits);
            let beyond_2_53 = |n: &Number| n.as_i64().is_some_and(|i| i.unsigned_abs() > 1 << 53);
            let written = |n: &Number| {
                let mut text = String::new();
                write_number(&mut text, n);
                text
            };
            float(x) == float(y) && (!(beyond_2_53(x) || beyond_2_53(y)) || written(x) == written(y))
        }
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|((kx, vx), (ky, vy))| kx == ky && same(vx, vy))
        }
        _ => a == b,
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

/// Whether Go's JSON decoding takes `key` for the struct field `field` when no field is named
/// `key` exactly: equal under Unicode's simple case folding, which for ASCII field names is
/// ASCII's, and the Kelvin sign and long s.
pub fn go_fold_equal(key: &str, field: &str) -> bool {
    let fold = |c: char| match c {
        '\u{212A}' => 'k',
        '\u{17F}' => 's',
        c => c.to_ascii_lowercase(),
    };
    key.chars().map(fold).eq(field.chars().map(fold))
}

/// Writes a decoded JSON value as Go's `json.Marshal` does.
pub fn write_value(out: &mut String, value: &Value) {
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

/// A number as Go holds it: an int64 (a whole number of an object as its client decoded it, see
/// `normalize_numbers_keeping_int64`) exactly, anything else as a float64 (see `number`).
fn write_number(out: &mut String, n: &Number) {
    if n.is_i64() {
        let _ = write!(out, "{n}");
        return;
    }
    match n.as_f64().map(number) {
        Some(Ok(Value::Number(n))) if !n.is_f64() => {
            let _ = write!(out, "{n}");
        }
        Some(Ok(_)) | None => out.push_str(&format_float(n.as_f64().unwrap_or_default())),
        // Not from JSON, which has no NaN or infinity.
        Some(Err(_)) => out.push_str("null"),
    }
}

/// Go's float64 encoding: shortest digits, plain notation unless |f| < 1e-6 or |f| >= 1e21,
/// exponent with a sign and without a leading zero (`1e+21`, `1.5e-7`).
pub fn format_float(f: f64) -> String {
    // Rust's plain `{}` would print every digit of a large whole number, where Go pads the
    // shortest digits with zeros.
    let scientific = shortest_scientific(f);
    let (mantissa, exponent) = scientific_parts(&scientific);
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        let sign = if exponent < 0 { "" } else { "+" };
        return format!("{mantissa}e{sign}{exponent}");
    }
    plain_notation(mantissa, exponent)
}

/// Go's `strconv.FormatFloat(f, 'g', -1, 32)`, how sigs.k8s.io/yaml writes a YAML float for a
/// Go string field: the shortest float32 digits, in %e form (an exponent of two digits at
/// least) when the exponent is below -4 or 6 or more.
pub fn format_float32_g(f: f64) -> String {
    let f = f as f32;
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+Inf" } else { "-Inf" }.into();
    }
    let scientific = shortest_scientific(f);
    let (mantissa, exponent) = scientific_parts(&scientific);
    if !(-4..6).contains(&exponent) {
        let sign = if exponent < 0 { '-' } else { '+' };
        return format!("{mantissa}e{sign}{:02}", exponent.unsigned_abs());
    }
    plain_notation(mantissa, exponent)
}

/// The shortest digits that read back as `f` (a float64 or float32), as Go's `strconv` chooses
/// them, in Rust's `{:e}` layout (`-1.25e3`). Where two candidates as short are as near
/// (952324001229139.25: …392 and …393), Rust's shortest takes the upper one and Go the even one,
/// which is `f` rounded to as many digits (Rust rounds exactly, ties to even) when that reads
/// back.
pub fn shortest_scientific<F>(f: F) -> String
where
    F: std::fmt::LowerExp + std::str::FromStr + PartialEq,
{
    let shortest = format!("{f:e}");
    let digits = shortest.bytes().take_while(|&c| c != b'e').filter(u8::is_ascii_digit).count();
    let rounded = format!("{f:.*e}", digits - 1);
    if rounded.parse::<F>().is_ok_and(|read| read == f) { rounded } else { shortest }
}

/// A float written in Rust's `{:e}` layout (`-1.25e3`): the mantissa and the decimal exponent.
pub fn scientific_parts(scientific: &str) -> (&str, i32) {
    let (mantissa, exponent) = scientific.split_once('e').expect("{:e} has an exponent");
    (mantissa, exponent.parse().expect("a decimal exponent"))
}

/// Those digits in plain notation: `-1250`, `0.00125`.
pub fn plain_notation(mantissa: &str, exponent: i32) -> String {
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

/// Writes a string as Go's encoder quotes it.
pub fn write_string(out: &mut String, s: &str) {
    out.push('"');
    write_string_body(out, s);
    out.push('"');
}

/// `write_string` without the quotes.
pub fn write_string_body(out: &mut String, s: &str) {
    let mut rest = s;
    // Runs without anything to escape are copied whole. 0xE2 starts U+2028 and U+2029 (and
    // other characters, copied as they are).
    while let Some(at) = rest.bytes().position(|b| b < b' ' || matches!(b, b'"' | b'\\' | b'<' | b'>' | b'&' | 0xE2)) {
        out.push_str(&rest[..at]);
        let c = rest[at..].chars().next().expect("a character starts here");
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' | '\0'..='\u{1f}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
        rest = &rest[at + c.len_utf8()..];
    }
    out.push_str(rest);
}

/// JSON text as Go's decoder reads it where serde_json fails: a `\u` escape of a surrogate that
/// does not pair with the escape after it is U+FFFD (Go's `unquote`), which serde_json refuses.
pub fn lone_surrogates_replaced(text: &str) -> Cow<'_, str> {
    let escape = |at: usize| -> Option<u32> {
        let hex = text.get(at..at + 6)?.strip_prefix("\\u")?;
        u32::from_str_radix(hex, 16).ok().filter(|_| hex.bytes().all(|b| b.is_ascii_hexdigit()))
    };
    let mut out = String::new();
    let (mut copied, mut at) = (0, 0);
    while let Some(found) = text[at..].find('\\') {
        at += found;
        match escape(at) {
            Some(0xD800..=0xDBFF) if matches!(escape(at + 6), Some(0xDC00..=0xDFFF)) => at += 12,
            Some(0xD800..=0xDFFF) => {
                out.push_str(&text[copied..at]);
                out.push_str("\\ufffd");
                at += 6;
                copied = at;
            }
            // Any other escape is the backslash and a character (`\\` is one, not the start of
            // another escape).
            _ => at += 1 + text[at + 1..].chars().next().map_or(0, char::len_utf8),
        }
    }
    if copied == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_float_for_a_string_field_is_written_as_sigs_yaml_writes_it() {
        // strconv.FormatFloat(f, 'g', -1, 32), as Go (1.19) prints them.
        for (f, go) in [
            (0.0, "0"),
            (1.0, "1"),
            (1.5, "1.5"),
            (0.1, "0.1"),
            (1e6, "1e+06"),
            (123456.0, "123456"),
            (1234567.0, "1.234567e+06"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1.2345678901, "1.2345679"),
            (1e21, "1e+21"),
            (-2.5, "-2.5"),
            (100000.0, "100000"),
            (16777217.0, "1.6777216e+07"),
            (1e-7, "1e-07"),
        ] {
            assert_eq!(format_float32_g(f), go, "{f}");
        }
    }

    #[test]
    fn a_test_cases_numbers_are_read_as_go_test_reads_them() {
        let mut value = json!({"z": -0.0, "half": 0.5, "w": 50.0, "big": 1152921504606846976.0, "huge": 1e21, "n": [-3, 18446744073709551615u64]});
        as_go_reads_yaml(&mut value);
        assert_eq!(
            value,
            json!({"z": 0, "half": 0.5, "w": 50, "big": 1152921504606847000i64, "huge": 1e21, "n": [-3, 18446744073709551615u64]})
        );
        assert!(value["z"].is_i64() && value["huge"].is_f64());
    }

    #[test]
    fn an_objects_int64s_stay_exact_and_other_numbers_become_float64s() {
        let object = json!({"int64": 9007199254740993_i64, "past": 18446744073709551615_u64, "float": 0.5, "list": [-9007199254740993_i64]});
        assert_eq!(
            to_string(&normalize_numbers_keeping_int64(object.clone())),
            r#"{"float":0.5,"int64":9007199254740993,"list":[-9007199254740993],"past":18446744073709552000}"#
        );
        assert_eq!(
            to_string(&normalize_numbers(object)),
            r#"{"float":0.5,"int64":9007199254740992,"list":[-9007199254740992],"past":18446744073709552000}"#
        );
    }

    /// `(path, exact, written)` of each rounded number.
    fn rounded(source: &Value, planned: &Value) -> Vec<(String, String, String)> {
        rounded_integers(source, planned).into_iter().map(|r| (r.path, r.exact, r.written)).collect()
    }

    fn found(path: &str, exact: &str, written: &str) -> (String, String, String) {
        (path.into(), exact.into(), written.into())
    }

    #[test]
    fn whole_numbers_a_float64_cannot_hold_are_found_where_the_plan_holds_them_rounded() {
        // Nothing beyond 2^53, and 2^53 itself, which a float64 holds: nothing to find.
        let small =
            json!({"weight": 20, "list": [1, -3, 0.5], "max": 9007199254740992_i64, "min": -9007199254740992_i64});
        assert_eq!(rounded(&small, &normalize_numbers(small.clone())), []);

        // Passed through (read back as float64s): found at every depth, in lists and maps.
        let source = json!({
            "a": 9007199254740993_i64,
            "http": [{"route": [{"weight": 50}, {"weight": -9007199254740993_i64}]}],
            "nested": {"deeper": {"max": i64::MAX, "u64": u64::MAX}},
        });
        let passed_through = normalize_numbers(source.clone());
        assert_eq!(
            rounded(&source, &passed_through),
            [
                found(".a", "9007199254740993", "9007199254740992"),
                found(".http[0].route[1].weight", "-9007199254740993", "-9007199254740992"),
                found(".nested.deeper.max", "9223372036854775807", "9223372036854776000"),
                found(".nested.deeper.u64", "18446744073709551615", "18446744073709552000"),
            ]
        );
        // The rounded number held as a whole number is rounded all the same.
        assert_eq!(
            rounded(&json!([9007199254740993_i64]), &json!([9007199254740992_i64])),
            [found("[0]", "9007199254740993", "9007199254740992")]
        );

        // Changed by the script, gone, moved, or written exactly: not rounded.
        for planned in [
            json!({"a": 7}),
            json!({"a": 9007199254740994_i64}),
            json!({"a": "9007199254740992"}),
            json!({}),
            json!({"b": 9007199254740992.0}),
            json!([9007199254740992.0]),
            json!(null),
            json!({"a": 9007199254740993_i64}),
        ] {
            assert_eq!(rounded(&json!({"a": 9007199254740993_i64}), &planned), [], "{planned}");
        }
        // A list item that moves is looked for at its old index only.
        let source = json!({"list": [1, 9007199254740993_i64]});
        assert_eq!(rounded(&source, &json!({"list": [9007199254740992.0, 1]})), []);
        // A number read as a float64 already (a fraction or an exponent in the text) is the
        // float64 the controller writes.
        assert_eq!(rounded(&json!({"a": 9007199254740993.0}), &json!({"a": 9007199254740992.0})), []);
        // Nor is one whose text is already what Go writes for the float64 it rounds to.
        assert_eq!(rounded(&json!({"a": 12345678901234567000u64}), &json!({"a": 12345678901234567000.0})), []);
    }

    #[test]
    fn text_without_a_run_of_16_digits_holds_no_inexact_whole_number() {
        assert!(may_hold_inexact_integer(r#"{"spec":{"a":9007199254740993}}"#));
        assert!(may_hold_inexact_integer(r#"{"spec":{"a":[-9007199254740993]}}"#));
        assert!(may_hold_inexact_integer("9007199254740992"), "2^53 has 16 digits too: parsed, found exact");
        assert!(!may_hold_inexact_integer(r#"{"spec":{"a":900719925474099,"b":0.5,"c":"12345-67890"}}"#));
        assert!(!may_hold_inexact_integer(""));
    }

    #[test]
    fn string_maps_are_unmarshalled_as_go_fills_a_map() {
        let mut map = BTreeMap::from([("old".to_string(), "kept".to_string())]);
        let result = unmarshal_string_map(&mut map, json!({"a": "x", "b": null, "c": 1, "d": [true]}), "Go value");
        assert_eq!(result, Err("json: cannot unmarshal number into Go value of type string".into()));
        let strings = |pairs: &[(&str, &str)]| pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        assert_eq!(map, strings(&[("a", "x"), ("b", ""), ("c", ""), ("d", ""), ("old", "kept")]));
        let result = unmarshal_string_map(&mut map, json!(["a"]), "Go struct field Data.labels");
        assert_eq!(
            result,
            Err("json: cannot unmarshal array into Go struct field Data.labels of type map[string]string".into())
        );
        assert_eq!(unmarshal_string_map(&mut map, Value::Null, "Go value"), Ok(()));
        assert!(map.is_empty());
    }

    #[test]
    fn escapes_html_and_line_separators_like_go() {
        assert_eq!(
            to_string(&json!("<a>&\u{2028}\u{2029}\"\\\n\u{1}")),
            r#""\u003ca\u003e\u0026\u2028\u2029\"\\\n\u0001""#
        );
        // Other characters starting with the byte 0xE2 are kept.
        assert_eq!(to_string(&json!("5\u{20ac} \u{2027}\u{202a}")), "\"5\u{20ac} \u{2027}\u{202a}\"");
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
            // Two shortest candidates as near: Go takes the even one (Rust's shortest the upper).
            (952324001229139.2, "952324001229139.2"),
            (-672868728819925.2, "-672868728819925.2"),
        ] {
            assert_eq!(format_float(f), want, "{f}");
        }
        // Below a power of two the nearest candidate may not read back while the other does.
        assert_eq!(shortest_scientific(2f64.powi(-24)), "5.960464477539063e-8");
        assert_eq!(shortest_scientific(2f64.powi(89)), "6.189700196426902e26");
        assert_eq!(shortest_scientific(16777217f32), "1.6777216e7");
    }

    #[test]
    fn pretty_json_and_other_formats_get_gos_numbers() {
        let value = json!({"big": 12345678901234567890.0, "zero": -0.0, "half": 0.5, "n": 7, "huge": 1e21});
        assert_eq!(
            to_string_pretty(&value),
            "{\n  \"big\": 12345678901234567000,\n  \"half\": 0.5,\n  \"huge\": 1e+21,\n  \"n\": 7,\n  \"zero\": -0\n}"
        );
        assert_eq!(
            serde_json::to_string(&GoNumbers(&value)).unwrap(),
            r#"{"big":12345678901234567000,"half":0.5,"huge":1e+21,"n":7,"zero":-0.0}"#,
            "whole numbers as Go writes them; the format's own syntax for the rest"
        );
    }

    #[test]
    fn sorts_keys() {
        assert_eq!(to_string(&json!({"z": 1, "a": [1.5, null]})), r#"{"a":[1.5,null],"z":1}"#);
    }

    #[test]
    fn normalizes_numbers_as_go_decodes_them() {
        let raw = json!({"a": 50.0, "b": [12345678901234567890u64], "c": 0.5, "d": -0.0});
        let v = normalize_numbers(raw.clone());
        assert_eq!(v, json!({"a": 50, "b": [12345678901234567000.0], "c": 0.5, "d": -0.0}));
        // Go's encoding of a value does not depend on how its numbers were read.
        assert_eq!(to_string(&v), r#"{"a":50,"b":[12345678901234567000],"c":0.5,"d":-0}"#);
        assert_eq!(to_string(&raw), to_string(&v));
    }

    #[test]
    fn values_are_the_same_when_go_encodes_them_alike() {
        for (a, b) in [
            (json!({"a": [50, 0.5]}), json!({"a": [50.0, 0.5]})),
            (json!(12345678901234567890u64), json!(12345678901234567000.0)),
            // An int64 beyond 2^53 is written with its digits: the same as a float64 only where
            // Go writes that with the same digits.
            (json!(9007199254740993_i64), json!(9007199254740993_i64)),
            (json!(9007199254740994_i64), json!(9007199254740994.0)),
            (json!(-9007199254740994_i64), json!(-9007199254740994.0)),
            (json!(1152921504606847000_i64), json!(1152921504606846976.0)),
        ] {
            assert!(same(&a, &b), "{a} {b}");
            assert_eq!(to_string(&a), to_string(&b));
        }
        for (a, b) in [
            (json!(0), json!(-0.0)),
            (json!({"a": 1}), json!({"b": 1})),
            (json!({"a": 1}), json!({"a": 1, "b": 2})),
            (json!([1]), json!([1, 1])),
            (json!(null), json!({})),
            (json!("1"), json!(1)),
            (json!(9007199254740993_i64), json!(9007199254740992.0)),
            (json!([-9007199254740993_i64]), json!([-9007199254740992_i64])),
            (json!(1152921504606846976_i64), json!(1152921504606846976.0)),
            (json!(i64::MAX), json!(9223372036854775807.0)),
        ] {
            assert!(!same(&a, &b), "{a} {b}");
            assert_ne!(to_string(&a), to_string(&b));
        }
    }
}
