//! YAML out, byte for byte as serde_saphyr writes it with its default options (block style,
//! lists not indented under their key), in one pass over the value. serde_saphyr spends most of
//! a large plan's rendering deciding how to write each scalar; most scalars of a Kubernetes object
//! are words YAML cannot take for anything else, written here as they are. Any other scalar is
//! rendered by serde_saphyr on its own, and one it writes on more than one line (a block or
//! folded string, whose indentation depends on its place) gives `None`: the caller renders the
//! whole value with serde_saphyr. The tests compare the two on every YAML file of the repository
//! and on generated values.

use crate::gojson::GoNumbers;
use serde_json::{Map, Value};
use std::fmt::Write;

/// The entries of a map (in this order) as a YAML document, or None (see the module).
pub fn map(entries: &[(&str, &Value)]) -> Option<String> {
    if entries.is_empty() {
        return None;
    }
    let mut out = String::new();
    for (key, value) in entries {
        write_entry(&mut out, key, value, 0)?;
    }
    Some(out)
}

/// A value as a YAML document, or None (see the module).
pub fn value(value: &Value) -> Option<String> {
    let mut out = String::new();
    match value {
        Value::Object(m) if !m.is_empty() => write_map(&mut out, m, 0, false)?,
        Value::Array(items) if !items.is_empty() => write_list(&mut out, items, 0, false)?,
        scalar => {
            write_scalar(&mut out, scalar)?;
            out.push('\n');
        }
    }
    Some(out)
}

/// `key: value` lines at `indent`; the first on the current line when `inline` (after `- `).
fn write_map(out: &mut String, map: &Map<String, Value>, indent: usize, inline: bool) -> Option<()> {
    for (i, (key, value)) in map.iter().enumerate() {
        if i > 0 || !inline {
            push_indent(out, indent);
        }
        write_entry(out, key, value, indent)?;
    }
    Some(())
}

/// `key: value` from where the line stands, for a map at `indent`.
fn write_entry(out: &mut String, key: &str, value: &Value, indent: usize) -> Option<()> {
    write_key(out, key)?;
    out.push(':');
    match value {
        Value::Object(m) if !m.is_empty() => {
            out.push('\n');
            write_map(out, m, indent + 2, false)
        }
        // A list under a key starts at the key's own indentation.
        Value::Array(items) if !items.is_empty() => {
            out.push('\n');
            write_list(out, items, indent, false)
        }
        scalar => {
            out.push(' ');
            write_scalar(out, scalar)?;
            out.push('\n');
            Some(())
        }
    }
}

/// `- item` lines at `indent`; the first on the current line when `inline`.
fn write_list(out: &mut String, items: &[Value], indent: usize, inline: bool) -> Option<()> {
    for (i, item) in items.iter().enumerate() {
        if i > 0 || !inline {
            push_indent(out, indent);
        }
        out.push_str("- ");
        match item {
            Value::Object(m) if !m.is_empty() => write_map(out, m, indent + 2, true)?,
            Value::Array(inner) if !inner.is_empty() => write_list(out, inner, indent + 2, true)?,
            scalar => {
                write_scalar(out, scalar)?;
                out.push('\n');
            }
        }
    }
    Some(())
}

fn push_indent(out: &mut String, indent: usize) {
    out.extend(std::iter::repeat_n(' ', indent));
}

fn write_key(out: &mut String, key: &str) -> Option<()> {
    if is_word(key) {
        out.push_str(key);
        return Some(());
    }
    let entry = Map::from_iter([(key.to_string(), Value::Null)]);
    let text = serde_saphyr::to_string(&entry).ok()?;
    out.push_str(text.strip_suffix(": null\n").filter(|key| !key.contains('\n'))?);
    Some(())
}

/// A scalar (or an empty map or list) in a value's place.
fn write_scalar(out: &mut String, value: &Value) -> Option<()> {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::String(s) if is_word(s) => out.push_str(s),
        Value::Number(n) if n.is_i64() || n.is_u64() => {
            let _ = write!(out, "{n}");
        }
        // Numbers read as Go reads them are floats; GoNumbers writes the whole ones as integers.
        Value::Number(n) if n.as_f64().is_some_and(is_small_whole) => {
            let _ = write!(out, "{}", n.as_f64()? as i64);
        }
        Value::Object(m) if m.is_empty() => out.push_str("{}"),
        Value::Array(items) if items.is_empty() => out.push_str("[]"),
        other => {
            let text = serde_saphyr::to_string(&GoNumbers(other)).ok()?;
            out.push_str(text.strip_suffix('\n').filter(|line| !line.contains('\n'))?);
        }
    }
    Some(())
}

/// A whole number a float holds exactly, as an i64 (not -0, which stays a float).
fn is_small_whole(f: f64) -> bool {
    f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0 && !(f == 0.0 && f.is_sign_negative())
}

/// A string serde_saphyr writes plain wherever it stands: a letter or `/` first, then letters,
/// digits, `-`, `.`, `_` and `/`; none of the words YAML reads as something else (`null`,
/// `true`, YAML 1.1's `yes`, `on`, `n`…); at most 80 bytes (longer ones are folded).
fn is_word(s: &str) -> bool {
    const WORDS: [&str; 11] = ["null", "true", "false", "nan", "inf", "yes", "y", "on", "no", "n", "off"];
    let bytes = s.as_bytes();
    bytes.len() <= 80
        && matches!(bytes.first(), Some(b'a'..=b'z' | b'A'..=b'Z' | b'/'))
        && bytes.iter().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'/'))
        && !WORDS.iter().any(|word| s.eq_ignore_ascii_case(word))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// serde_saphyr's YAML of a value: what `value` must write whenever it writes anything.
    fn saphyr(value: &Value) -> String {
        serde_saphyr::to_string(&GoNumbers(value)).unwrap()
    }

    /// Checks `value` against serde_saphyr; true when it wrote the value itself.
    fn agrees(value: &Value) -> bool {
        match super::value(value) {
            Some(text) => {
                assert_eq!(text, saphyr(value), "{value}");
                true
            }
            None => false,
        }
    }

    const STRINGS: &[&str] = &[
        "",
        " ",
        "a",
        "reviews",
        "v1",
        "/api/10",
        "a-b.c_d/e",
        "A",
        "y",
        "Y",
        "n",
        "yes",
        "No",
        "on",
        "OFF",
        "null",
        "Null",
        "~",
        "true",
        "False",
        "nan",
        "inf",
        ".inf",
        "-inf",
        "1",
        "-1",
        "1.5",
        "0x1F",
        "0o7",
        "1e3",
        "1_000",
        "1:20",
        "2001-12-14",
        "2001-12-14t21:59:43.10-05:00",
        "---",
        "...",
        "--- a",
        "<<",
        "=",
        " a",
        "a ",
        "a: b",
        "a:b",
        "a:",
        ":a",
        "a #b",
        "a#b",
        "#a",
        "-",
        "- a",
        "-a",
        "?",
        "? a",
        "?a",
        "@a",
        "`a",
        "%a",
        "a,b",
        "[a]",
        "{a}",
        "*a",
        "&a",
        "!a",
        "|",
        ">",
        "'",
        "\"",
        "a'b",
        "a\"b",
        "a\\b",
        "é",
        "日本",
        "\t",
        "a\tb",
        "a\nb",
        "a\n",
        "\n",
        "a\n\nb\n\n",
        " a\nb",
        "a\r\nb",
        "\u{85}",
        "\u{feff}a",
        "\u{7f}",
        "\u{1b}",
        "stored (sha256 1a2b, 3 bytes)",
        "reviews.shop.svc.cluster.local",
        "app.kubernetes.io/name",
        "x-canary",
        "Bearer abc",
        "/",
        "//",
        "a/",
        "a.",
        "a-",
        "a_",
        "A1",
        "x..y",
        "e5",
        "E",
        "NO",
        "Off",
        "oN",
        "nULL",
        "TRUE",
        "Inf",
        "NaN",
        "yES",
    ];

    fn numbers() -> Vec<Value> {
        let floats = [
            0.0,
            -0.0,
            72.0,
            -3.0,
            0.5,
            1e21,
            1e-7,
            1e20,
            12345678901234567000.0,
            9007199254740992.0,
            9007199254740991.0,
            -9007199254740991.0,
        ];
        let mut numbers: Vec<Value> = floats.iter().map(|f| Value::from(*f)).collect();
        numbers.extend([json!(0), json!(7), json!(-7), json!(u64::MAX), json!(i64::MIN)]);
        numbers
    }

    #[test]
    fn writes_what_serde_saphyr_writes_for_every_scalar_as_value_key_and_list_item() {
        let long_word = "a".repeat(81);
        let fitting_word = "a".repeat(80);
        let mut scalars: Vec<Value> = STRINGS.iter().map(|s| json!(s)).collect();
        scalars.extend([
            json!(long_word),
            json!(fitting_word),
            json!(null),
            json!(true),
            json!(false),
            json!({}),
            json!([]),
        ]);
        scalars.extend(numbers());
        let mut written = 0;
        for scalar in &scalars {
            for value in [
                scalar.clone(),
                json!({"k": scalar}),
                json!([scalar]),
                json!([[scalar, 1]]),
                json!({"a": [{"b": scalar}]}),
            ] {
                written += usize::from(agrees(&value));
            }
        }
        for key in STRINGS.iter().copied().chain([long_word.as_str(), fitting_word.as_str()]) {
            for value in [json!({key: 1}), json!({key: {key: [key]}}), json!([{key: "x", "z": 2}])] {
                written += usize::from(agrees(&value));
            }
        }
        // Most of them are written here; the multi-line and folded ones go to serde_saphyr.
        assert!(written > scalars.len() * 4, "{written}");
    }

    #[test]
    fn writes_what_serde_saphyr_writes_for_generated_values() {
        // A fixed pseudo-random walk over nesting, empty collections, strings and numbers.
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        fn generate(next: &mut dyn FnMut(usize) -> usize, depth: usize, numbers: &[Value]) -> Value {
            match if depth == 0 { 3 + next(3) } else { next(6) } {
                0 | 1 => Value::Object(
                    (0..next(4))
                        .map(|_| (STRINGS[next(STRINGS.len())].to_string(), generate(next, depth - 1, numbers)))
                        .collect(),
                ),
                2 => Value::Array((0..next(4)).map(|_| generate(next, depth - 1, numbers)).collect()),
                3 => json!(STRINGS[next(STRINGS.len())]),
                4 => numbers[next(numbers.len())].clone(),
                _ => [json!(null), json!(true), json!({}), json!([])][next(4)].clone(),
            }
        }
        let numbers = numbers();
        let written = (0..3000).filter(|_| agrees(&generate(&mut next, 5, &numbers))).count();
        assert!(written > 1000, "{written}");
    }

    #[test]
    fn writes_what_serde_saphyr_writes_for_the_repositorys_objects() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let (mut documents, mut written) = (0, 0);
        let mut dirs =
            vec![root.join("tests"), root.join("examples"), root.join("lua_configuration"), root.join("docs")];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).unwrap().map(Result::unwrap) {
                let path = entry.path();
                if entry.file_type().unwrap().is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml" || e == "json") {
                    let text = std::fs::read_to_string(&path).unwrap();
                    for document in crate::yaml::parse_documents(&text, "file").unwrap_or_default() {
                        documents += 1;
                        written += usize::from(agrees(&document.value));
                    }
                }
            }
        }
        assert!(documents > 50 && written * 2 > documents, "{written} of {documents}");
    }

    #[test]
    fn writes_entries_in_their_order() {
        let (spec, kind) = (json!({"hosts": ["a"]}), json!("VirtualService"));
        assert_eq!(map(&[("kind", &kind), ("spec", &spec)]).unwrap(), saphyr(&json!({"kind": kind, "spec": spec})));
        assert_eq!(map(&[("spec", &spec), ("kind", &kind)]).unwrap(), "spec:\n  hosts:\n  - a\nkind: VirtualService\n");
        assert_eq!(map(&[]), None);
        assert_eq!(map(&[("k", &json!("a\nb"))]), None, "a block string depends on its place");
    }
}
