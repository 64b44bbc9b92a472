//! The parts of Go's `strconv` the controller's string functions go through: `ParseInt`,
//! `ParseFloat` (`tonumber`), `FormatFloat` and `Quote` (`string.format`). Only what they
//! return is kept, not Go's error values: every caller turns an error into one outcome.

use super::gounicode::{RUNE_ERROR, decode_rune, is_print};

/// Go's `strconv.ParseInt(text, base, 64)`, `None` where Go returns an error (syntax, range,
/// or a base other than 0 and 2..=36). Base 0 reads the base from a prefix (`0b`, `0o`, `0x`,
/// `0`) and allows underscores between digits.
pub fn parse_int(text: &[u8], base: i64) -> Option<i64> {
    let (negative, digits) = match text.first()? {
        b'+' => (false, &text[1..]),
        b'-' => (true, &text[1..]),
        _ => (false, text),
    };
    let magnitude = parse_uint(digits, base)?;
    if negative { 0i64.checked_sub_unsigned(magnitude) } else { i64::try_from(magnitude).ok() }
}

/// Go's `strconv.ParseUint(text, base, 64)`.
fn parse_uint(text: &[u8], base: i64) -> Option<u64> {
    if text.is_empty() {
        return None;
    }
    let (radix, digits) = match base {
        2..=36 => (base as u64, text),
        0 => match text {
            [b'0', b'b' | b'B', _, ..] => (2, &text[2..]),
            [b'0', b'o' | b'O', _, ..] => (8, &text[2..]),
            [b'0', b'x' | b'X', _, ..] => (16, &text[2..]),
            [b'0', ..] => (8, &text[1..]),
            _ => (10, text),
        },
        _ => return None,
    };
    let mut value: u64 = 0;
    for &c in digits {
        if c == b'_' && base == 0 {
            continue;
        }
        let digit = u64::from((c as char).to_digit(36)?);
        if digit >= radix {
            return None;
        }
        value = value.checked_mul(radix)?.checked_add(digit)?;
    }
    (!digits.contains(&b'_') || underscores_ok(text)).then_some(value)
}

/// Go's `underscoreOK`: underscores only between digits, or between a base prefix and a digit.
fn underscores_ok(text: &[u8]) -> bool {
    let text = text.strip_prefix(b"+").or_else(|| text.strip_prefix(b"-")).unwrap_or(text);
    // What came last: '^' the start, '0' a digit or base prefix, '_' an underscore, '!' else.
    let mut saw = b'^';
    let mut rest = text;
    let mut hex = false;
    if let [b'0', prefix, tail @ ..] = text
        && matches!(prefix.to_ascii_lowercase(), b'b' | b'o' | b'x')
    {
        saw = b'0';
        hex = prefix.eq_ignore_ascii_case(&b'x');
        rest = tail;
    }
    for &c in rest {
        if c.is_ascii_digit() || hex && c.is_ascii_hexdigit() {
            saw = b'0';
        } else if c == b'_' {
            if saw != b'0' {
                return false;
            }
            saw = b'_';
        } else if saw == b'_' {
            return false;
        } else {
            saw = b'!';
        }
    }
    saw != b'_'
}

/// gopher-lua's `strings.Trim(text, " \t\n")` before it reads a number.
pub fn trim_lua_space(text: &[u8]) -> &[u8] {
    let space = |b: &u8| matches!(b, b' ' | b'\t' | b'\n');
    let start = text.iter().position(|b| !space(b)).unwrap_or(text.len());
    let end = text.iter().rposition(|b| !space(b)).map_or(start, |last| last + 1);
    &text[start..end]
}

/// gopher-lua's `parseNumber`, how it reads a string as a number everywhere but `tonumber` (in
/// arithmetic, a numeral in the source, `%d` of a string): the text trimmed of spaces, tabs and
/// newlines, as an integer in Go's syntax (any base prefix; "017" is octal), else as a float.
pub fn parse_number(text: &[u8]) -> Option<f64> {
    let text = trim_lua_space(text);
    parse_int(text, 0).map(|n| n as f64).or_else(|| parse_float(text))
}

/// Go's `strconv.ParseFloat(text, 64)`: decimal, or hexadecimal with a `p` exponent,
/// underscores between digits, or "inf", "infinity" (signed) and "nan" in any case. `None` where
/// Go returns an error: a syntax error, or a value out of range (Go's ±Inf with `ErrRange`).
pub fn parse_float(text: &[u8]) -> Option<f64> {
    let word = text.to_ascii_lowercase();
    match &word[..] {
        b"inf" | b"+inf" | b"infinity" | b"+infinity" => return Some(f64::INFINITY),
        b"-inf" | b"-infinity" => return Some(f64::NEG_INFINITY),
        b"nan" => return Some(f64::NAN),
        _ => {}
    }
    let (negative, unsigned) = match text.first()? {
        b'+' => (false, &text[1..]),
        b'-' => (true, &text[1..]),
        _ => (false, text),
    };
    // One sign: Rust would read a second one below.
    if matches!(unsigned.first(), Some(b'+' | b'-')) {
        return None;
    }
    if text.contains(&b'_') && !underscores_ok(text) {
        return None;
    }
    let value = match unsigned {
        [b'0', b'x' | b'X', _, ..] => parse_hex_float(&unsigned[2..])?,
        _ => {
            let digits: String = unsigned.iter().filter(|&&c| c != b'_').map(|&c| c as char).collect();
            // Rust reads the same decimal syntax, and words ("inf") that Go reads above.
            if !digits.bytes().all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'E' | b'+' | b'-')) {
                return None;
            }
            digits.parse::<f64>().ok()?
        }
    };
    (!value.is_infinite()).then_some(if negative { -value } else { value })
}

/// Go's `readFloat` and `atofHex` for what follows "0x": hex digits with an optional point,
/// then a required binary exponent; rounded to nearest, ties to even.
fn parse_hex_float(text: &[u8]) -> Option<f64> {
    const MANTISSA_BITS: u32 = 52;
    let mut mantissa: u64 = 0;
    let (mut digits, mut kept_digits, mut point, mut saw_point, mut saw_digits, mut truncated) =
        (0i64, 0i64, 0i64, false, false, false);
    let mut at = 0;
    while let Some(&c) = text.get(at) {
        match c {
            b'_' => {}
            b'.' if !saw_point => {
                saw_point = true;
                point = digits;
            }
            _ if c.is_ascii_hexdigit() => {
                saw_digits = true;
                if c == b'0' && digits == 0 {
                    // Leading zeros.
                    point -= 1;
                } else {
                    digits += 1;
                    if kept_digits < 16 {
                        mantissa = mantissa * 16 + u64::from((c as char).to_digit(16).expect("a hex digit"));
                        kept_digits += 1;
                    } else if c != b'0' {
                        truncated = true;
                    }
                }
            }
            _ => break,
        }
        at += 1;
    }
    if !saw_digits {
        return None;
    }
    if !saw_point {
        point = digits;
    }
    let (point, kept_bits) = (point * 4, kept_digits * 4);
    // The exponent, required.
    let rest = &text[at..];
    let [b'p' | b'P', rest @ ..] = rest else { return None };
    let (sign, rest) = match rest {
        [b'+', tail @ ..] => (1, tail),
        [b'-', tail @ ..] => (-1, tail),
        _ => (1, rest),
    };
    if !rest.first().is_some_and(u8::is_ascii_digit) {
        return None;
    }
    let mut exponent: i64 = 0;
    for &c in rest {
        match c {
            b'_' => {}
            b'0'..=b'9' if exponent < 10000 => exponent = exponent * 10 + i64::from(c - b'0'),
            b'0'..=b'9' => {}
            _ => return None,
        }
    }
    let mut exp = if mantissa != 0 { point + sign * exponent - kept_bits } else { 0 };

    // atofHex, for float64: bias -1023, 11 exponent bits.
    let (max_exp, min_exp) = (1023i64, -1022i64);
    exp += i64::from(MANTISSA_BITS);
    while mantissa != 0 && mantissa >> (MANTISSA_BITS + 2) == 0 {
        mantissa <<= 1;
        exp -= 1;
    }
    if truncated {
        mantissa |= 1;
    }
    while mantissa >> (1 + MANTISSA_BITS + 2) != 0 {
        mantissa = mantissa >> 1 | mantissa & 1;
        exp += 1;
    }
    while mantissa > 1 && exp < min_exp - 2 {
        mantissa = mantissa >> 1 | mantissa & 1;
        exp += 1;
    }
    let mut round = mantissa & 3;
    mantissa >>= 2;
    round |= mantissa & 1;
    exp += 2;
    if round == 3 {
        mantissa += 1;
        if mantissa == 1 << (1 + MANTISSA_BITS) {
            mantissa >>= 1;
            exp += 1;
        }
    }
    if mantissa >> MANTISSA_BITS == 0 {
        exp = -1023;
    }
    if exp > max_exp {
        return None;
    }
    let bits = (mantissa & ((1 << MANTISSA_BITS) - 1)) | (((exp + 1023) as u64) & 0x7FF) << MANTISSA_BITS;
    Some(f64::from_bits(bits))
}

/// A float's decimal digits as Go's `strconv` rounds them: `digits` without trailing zeros (none
/// for zero), the decimal point after `point` of them.
struct Decimal {
    digits: Vec<u8>,
    point: i32,
}

impl Decimal {
    /// From Rust's `{:e}` text of a non-negative finite value ("1.25e-3"), exact to the digits it
    /// was asked for (Rust and Go both round exactly, ties to even).
    fn from_exponent_text(text: &str) -> Decimal {
        let (mantissa, exponent) = text.split_once('e').expect("{:e} has an exponent");
        let mut digits: Vec<u8> = mantissa.bytes().filter(u8::is_ascii_digit).collect();
        while digits.last() == Some(&b'0') {
            digits.pop();
        }
        let point = if digits.is_empty() { 0 } else { exponent.parse::<i32>().expect("an exponent") + 1 };
        Decimal { digits, point }
    }

    /// The shortest digits that read back as `value`, as Go chooses them.
    fn shortest(value: f64) -> Decimal {
        Decimal::from_exponent_text(&crate::gojson::shortest_scientific(value))
    }

    /// `value` rounded to `significant` digits (at least 1). A double is exact in 767 significant
    /// digits, zeros after them; Rust's formatting takes at most 65535.
    fn significant(value: f64, significant: usize) -> Decimal {
        Decimal::from_exponent_text(&format!("{value:.*e}", significant.min(800) - 1))
    }

    /// `value` rounded to `decimals` digits after the point. A double is exact in 1074 decimals,
    /// zeros after them; Rust's formatting takes at most 65535.
    fn fixed(value: f64, decimals: usize) -> Decimal {
        let decimals = decimals.min(1100);
        let text = format!("{value:.decimals$}");
        let (whole, fraction) = text.split_once('.').unwrap_or((&text, ""));
        let whole = whole.trim_start_matches('0');
        let mut digits: Vec<u8> = whole.bytes().chain(fraction.bytes()).collect();
        let mut point = whole.len() as i32;
        let leading = digits.iter().take_while(|&&d| d == b'0').count();
        digits.drain(..leading);
        point -= leading as i32;
        while digits.last() == Some(&b'0') {
            digits.pop();
        }
        if digits.is_empty() {
            point = 0;
        }
        Decimal { digits, point }
    }

    /// Go's `fmtE`: `d.ddde±dd` with `decimals` digits after the point.
    fn write_exponent(&self, out: &mut Vec<u8>, decimals: usize, e: u8) {
        out.push(self.digits.first().copied().unwrap_or(b'0'));
        if decimals > 0 {
            out.push(b'.');
            let shown = self.digits.get(1..).unwrap_or_default();
            let shown = &shown[..shown.len().min(decimals)];
            out.extend_from_slice(shown);
            out.resize(out.len() + decimals - shown.len(), b'0');
        }
        out.push(e);
        let exponent = if self.digits.is_empty() { 0 } else { self.point - 1 };
        out.push(if exponent < 0 { b'-' } else { b'+' });
        out.extend_from_slice(format!("{:02}", exponent.unsigned_abs()).as_bytes());
    }

    /// Go's `fmtF`: the whole part, then `decimals` digits after the point.
    fn write_fixed(&self, out: &mut Vec<u8>, decimals: usize) {
        let digit = |i: i64| usize::try_from(i).ok().and_then(|i| self.digits.get(i)).copied().unwrap_or(b'0');
        if self.point > 0 {
            out.extend((0..i64::from(self.point)).map(digit));
        } else {
            out.push(b'0');
        }
        if decimals > 0 {
            out.push(b'.');
            out.extend((0..decimals as i64).map(|i| digit(i64::from(self.point) + i)));
        }
    }
}

/// Go's `strconv.AppendFloat(out, value, verb, precision, 64)` for the verbs `e`, `E`, `f`, `g`
/// and `G`; a negative precision asks for the shortest digits that read back as `value`.
pub fn format_float(out: &mut Vec<u8>, value: f64, verb: u8, precision: i64) {
    if value.is_nan() {
        return out.extend_from_slice(b"NaN");
    }
    if value.is_infinite() {
        return out.extend_from_slice(if value > 0.0 { b"+Inf" } else { b"-Inf" });
    }
    if value.is_sign_negative() {
        out.push(b'-');
    }
    let value = value.abs();
    let shortest = precision < 0;
    let precision = precision.max(0) as usize;
    let e = if verb.is_ascii_uppercase() { b'E' } else { b'e' };
    match verb.to_ascii_lowercase() {
        b'e' if shortest => {
            let decimal = Decimal::shortest(value);
            decimal.write_exponent(out, decimal.digits.len().saturating_sub(1), e);
        }
        b'e' => Decimal::significant(value, precision + 1).write_exponent(out, precision, e),
        b'f' if shortest => {
            let decimal = Decimal::shortest(value);
            let decimals = (decimal.digits.len() as i64 - i64::from(decimal.point)).max(0) as usize;
            decimal.write_fixed(out, decimals);
        }
        b'f' => Decimal::fixed(value, precision).write_fixed(out, precision),
        _ => {
            // 'g': %e for large and small exponents, else %f, without trailing zeros.
            let (decimal, mut precision) = if shortest {
                let decimal = Decimal::shortest(value);
                let digits = decimal.digits.len();
                (decimal, digits)
            } else {
                let precision = precision.max(1);
                (Decimal::significant(value, precision), precision)
            };
            let (digits, point) = (decimal.digits.len() as i64, i64::from(decimal.point));
            let mut exponent_precision = precision as i64;
            if exponent_precision > digits && digits >= point {
                exponent_precision = digits;
            }
            if shortest {
                exponent_precision = 6;
            }
            let exponent = point - 1;
            if exponent < -4 || exponent >= exponent_precision {
                precision = precision.min(digits as usize);
                decimal.write_exponent(out, precision.saturating_sub(1), e);
            } else {
                if precision as i64 > point {
                    precision = digits as usize;
                }
                decimal.write_fixed(out, (precision as i64 - point).max(0) as usize);
            }
        }
    }
}

/// Go's `strconv.Quote` (`ascii_only`: `QuoteToASCII`) of a string's bytes.
pub fn quote(out: &mut Vec<u8>, text: &[u8], ascii_only: bool) {
    out.push(b'"');
    let mut rest = text;
    while !rest.is_empty() {
        let (rune, width) = decode_rune(rest);
        if width == 1 && rune == RUNE_ERROR {
            out.extend_from_slice(format!("\\x{:02x}", rest[0]).as_bytes());
        } else {
            escape_rune(out, rune, ascii_only);
        }
        rest = &rest[width..];
    }
    out.push(b'"');
}

/// Go's `appendEscapedRune` with the quote `"`.
fn escape_rune(out: &mut Vec<u8>, rune: char, ascii_only: bool) {
    let printable = if ascii_only { rune.is_ascii() && is_print(rune) } else { is_print(rune) };
    let escape: &[u8] = match rune {
        '"' => b"\\\"",
        '\\' => b"\\\\",
        _ if printable => {
            let mut buffer = [0; 4];
            return out.extend_from_slice(rune.encode_utf8(&mut buffer).as_bytes());
        }
        '\u{07}' => b"\\a",
        '\u{08}' => b"\\b",
        '\u{0C}' => b"\\f",
        '\n' => b"\\n",
        '\r' => b"\\r",
        '\t' => b"\\t",
        '\u{0B}' => b"\\v",
        _ => {
            let code = rune as u32;
            let text = if code < 0x20 || code == 0x7F {
                format!("\\x{code:02x}")
            } else if code < 0x10000 {
                format!("\\u{code:04x}")
            } else {
                format!("\\U{code:08x}")
            };
            return out.extend_from_slice(text.as_bytes());
        }
    };
    out.extend_from_slice(escape);
}

/// Go's `strconv.CanBackquote`: one line of valid UTF-8 without a backquote, a control
/// character other than tab, or a byte order mark.
pub fn can_backquote(text: &[u8]) -> bool {
    let mut rest = text;
    while !rest.is_empty() {
        let (rune, width) = decode_rune(rest);
        rest = &rest[width..];
        if width > 1 {
            if rune == '\u{FEFF}' {
                return false;
            }
            continue;
        }
        if rune == RUNE_ERROR || (rune < ' ' && rune != '\t') || rune == '`' || rune == '\u{7F}' {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    // Expected values from Go 1.19's strconv.

    #[test]
    fn parse_int_is_gos() {
        for (text, base, want) in [
            ("42", 10, Some(42)),
            ("+42", 10, Some(42)),
            ("-ff", 16, Some(-255)),
            ("FF", 16, Some(255)),
            ("z", 36, Some(35)),
            ("2", 2, None),
            ("", 10, None),
            ("-", 10, None),
            ("+-1", 10, None),
            ("9223372036854775807", 10, Some(i64::MAX)),
            ("9223372036854775808", 10, None),
            ("-9223372036854775808", 10, Some(i64::MIN)),
            ("-9223372036854775809", 10, None),
            ("ffffffffffffffffff", 16, None),
            ("1_000", 10, None),
            ("1_000", 0, Some(1000)),
            ("0x_1f", 0, Some(31)),
            ("0x", 0, None),
            ("017", 0, Some(15)),
            ("0", 0, Some(0)),
            ("0b101", 0, Some(5)),
            ("0o17", 0, Some(15)),
            ("1__0", 0, None),
            ("_1", 0, None),
            ("1_", 0, None),
            ("10", 1, None),
            ("10", 37, None),
            (" 1", 10, None),
        ] {
            assert_eq!(parse_int(text.as_bytes(), base), want, "{text:?} base {base}");
        }
    }

    #[test]
    fn parse_float_is_gos() {
        for (text, want) in [
            ("1.5", Some(1.5)),
            ("-1.5e3", Some(-1500.0)),
            (".5", Some(0.5)),
            ("5.", Some(5.0)),
            ("+.5E-1", Some(0.05)),
            (".", None),
            ("1.5e", None),
            ("1.e500", None),
            ("-1.e500", None),
            ("1.e-400", Some(0.0)),
            ("1_000.5", Some(1000.5)),
            ("1__0.5", None),
            ("_1.5", None),
            ("1.5_", None),
            ("1.5e_5", None),
            ("0x1.8p1", Some(3.0)),
            ("0x1.p1", Some(2.0)),
            ("0x_1p0", Some(1.0)),
            ("-0x.8p0", Some(-0.5)),
            ("0x1.8", None),
            ("0x1.fffffffffffff8p0", Some(2.0)),
            ("0x1.fffffffffffff7p0", Some(1.9999999999999998)),
            ("0x1p-1074", Some(5e-324)),
            ("0x1p-1075", Some(0.0)),
            ("0x1.8p-1075", Some(5e-324)),
            ("0x1p1024", None),
            ("inf.", None),
            ("+nan", None),
            ("-Infinity", Some(f64::NEG_INFINITY)),
            ("INF", Some(f64::INFINITY)),
            ("infin", None),
            ("1.5x", None),
            ("1.5.", None),
            ("--5.5", None),
            ("-+5.5", None),
            ("+-.9", None),
        ] {
            assert_eq!(parse_float(text.as_bytes()), want, "{text:?}");
        }
        assert!(parse_float(b"-0.0").unwrap().is_sign_negative());
        assert!(parse_float(b"NaN").unwrap().is_nan());
        assert_eq!(trim_lua_space(b" \t\n1 \r\n"), b"1 \r");
        assert_eq!(trim_lua_space(b" \t "), b"");
    }

    #[test]
    fn parse_number_is_gopher_luas() {
        for (text, want) in [
            ("017", Some(15.0)),
            (" 0b101\n", Some(5.0)),
            ("0o17", Some(15.0)),
            ("1_000", Some(1000.0)),
            ("0x10", Some(16.0)),
            ("009", Some(9.0)),
            ("9223372036854775808", Some(9223372036854775808.0)),
            ("1e3", Some(1000.0)),
            ("\u{c}5", None),
            ("5\r", None),
            ("5\0", None),
            ("1e400", None),
            ("0x1.8", None),
            ("0x8000000000000000", None),
            ("-nan", None),
            ("", None),
        ] {
            assert_eq!(parse_number(text.as_bytes()), want, "{text:?}");
        }
    }

    fn formatted(value: f64, verb: u8, precision: i64) -> String {
        let mut out = Vec::new();
        format_float(&mut out, value, verb, precision);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn format_float_is_gos() {
        for (value, verb, precision, want) in [
            (1.0, b'e', 6, "1.000000e+00"),
            (0.0, b'e', 2, "0.00e+00"),
            (-0.0, b'f', 1, "-0.0"),
            (125.0, b'e', 1, "1.2e+02"),
            (1e100, b'E', -1, "1E+100"),
            (2.5, b'f', 0, "2"),
            (0.125, b'f', 2, "0.12"),
            (1234.5678, b'f', -1, "1234.5678"),
            (1e21, b'f', -1, "1000000000000000000000"),
            (1e6, b'g', -1, "1e+06"),
            (123456.0, b'g', -1, "123456"),
            (0.0001, b'g', -1, "0.0001"),
            (0.00001, b'g', -1, "1e-05"),
            (0.0, b'g', -1, "0"),
            (100.0, b'g', 2, "1e+02"),
            (123.456, b'g', 4, "123.5"),
            (123.456, b'G', 0, "1E+02"),
            (0.000012345, b'g', 3, "1.23e-05"),
            (1.5, b'g', 10, "1.5"),
            (f64::NAN, b'f', 2, "NaN"),
            (f64::NEG_INFINITY, b'g', -1, "-Inf"),
            (5e-324, b'e', -1, "5e-324"),
            // Two shortest candidates as near: Go takes the even one.
            (952324001229139.2, b'g', -1, "9.523240012291392e+14"),
            (2003301232359826.2, b'e', -1, "2.0033012323598262e+15"),
            (-672868728819925.2, b'g', -1, "-6.728687288199252e+14"),
        ] {
            assert_eq!(formatted(value, verb, precision), want, "{value} {} {precision}", verb as char);
        }
        // Past Rust's largest precision (65535): the exact digits, then zeros.
        let fixed = formatted(1.5, b'f', 1_000_000);
        assert_eq!((fixed.len(), &fixed[..4], fixed.trim_end_matches('0')), (1_000_002, "1.50", "1.5"));
        let tiny = formatted(5e-324, b'e', 70_000);
        assert_eq!((tiny.len(), &tiny[..10], &tiny[tiny.len() - 8..]), (70_007, "4.94065645", "000e-324"));
        assert_eq!(formatted(5e-324, b'f', 1100), formatted(5e-324, b'f', 70_000)[..1102]);
        assert_eq!(formatted(1.0, b'g', 70_000), "1");
    }

    #[test]
    fn quote_is_gos() {
        let quoted = |text: &[u8], ascii_only| {
            let mut out = Vec::new();
            quote(&mut out, text, ascii_only);
            String::from_utf8(out).unwrap()
        };
        assert_eq!(quoted(b"a\"b\\c\n\t\x07\x7f", false), r#""a\"b\\c\n\t\a\x7f""#);
        assert_eq!(quoted("é\u{200B}😀\u{FEFF}".as_bytes(), false), "\"é\\u200b😀\\ufeff\"");
        assert_eq!(quoted("é😀".as_bytes(), true), r#""\u00e9\U0001f600""#);
        assert_eq!(quoted(b"\xff\xe2\x82", false), r#""\xff\xe2\x82""#);
        assert!(can_backquote(b"a\tb\"c"));
        for text in [&b"a`b"[..], b"a\nb", b"\xff", "\u{FEFF}".as_bytes(), b"\x7f"] {
            assert!(!can_backquote(text), "{text:?}");
        }
    }
}
