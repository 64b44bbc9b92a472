//! Go's view of text, which the controller's string functions have: UTF-8 decoded as Go decodes
//! it (each byte of an invalid sequence is one U+FFFD), `unicode.ToUpper`/`ToLower` (simple,
//! one-rune case mapping, Unicode 13.0.0 as in the Go the controller's engine is built with) and
//! `strconv.IsPrint`. The tables are generated from that Go (`tables.rs`).

mod tables;

use tables::{CASE_RANGES, PRINTABLE, UPPER_LOWER};

/// What Go decodes for an invalid byte.
pub const RUNE_ERROR: char = '\u{FFFD}';

/// Go's `utf8.DecodeRune`: the rune at the start of `bytes` and its width, or U+FFFD and 1 where
/// the bytes there are not valid UTF-8 (Go's and Rust's validity are the same: no surrogates,
/// no overlong forms, nothing above U+10FFFF). `bytes` is not empty.
pub fn decode_rune(bytes: &[u8]) -> (char, usize) {
    let width = match bytes[0] {
        0x00..=0x7F => return (bytes[0] as char, 1),
        0xC2..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF4 => 4,
        _ => return (RUNE_ERROR, 1),
    };
    match bytes.get(..width).and_then(|b| std::str::from_utf8(b).ok()) {
        Some(text) => (text.chars().next().expect("one rune"), width),
        None => (RUNE_ERROR, 1),
    }
}

/// The runes of `bytes` as Go's `for range` walks them, with their byte offsets.
pub fn runes(bytes: &[u8]) -> impl Iterator<Item = (usize, char)> + '_ {
    let mut at = 0;
    std::iter::from_fn(move || {
        let start = at;
        let (rune, width) = decode_rune(bytes.get(at..).filter(|rest| !rest.is_empty())?);
        at += width;
        Some((start, rune))
    })
}

/// Go's `utf8.RuneCount`.
pub fn rune_count(bytes: &[u8]) -> usize {
    runes(bytes).count()
}

/// Go's `unicode.ToUpper`.
pub fn to_upper(rune: char) -> char {
    to_case(rune, true)
}

/// Go's `unicode.ToLower`.
pub fn to_lower(rune: char) -> char {
    to_case(rune, false)
}

/// Go's `unicode.to` over `CaseRanges`.
fn to_case(rune: char, upper: bool) -> char {
    let r = rune as u32;
    let Ok(at) = CASE_RANGES.binary_search_by(|&(lo, hi, _, _)| {
        if hi < r {
            std::cmp::Ordering::Less
        } else if lo > r {
            std::cmp::Ordering::Greater
        } else {
            std::cmp::Ordering::Equal
        }
    }) else {
        return rune;
    };
    let (lo, _, to_upper, to_lower) = CASE_RANGES[at];
    let delta = if upper { to_upper } else { to_lower };
    let mapped = if delta == UPPER_LOWER {
        // Even offsets in the run are upper case, odd ones lower case.
        lo + (((r - lo) & !1) | u32::from(!upper))
    } else {
        r.wrapping_add_signed(delta)
    };
    char::from_u32(mapped).expect("Go's tables map runes to runes")
}

/// Go's `strconv.IsPrint`.
pub fn is_print(rune: char) -> bool {
    let r = rune as u32;
    let after = PRINTABLE.partition_point(|&(_, last)| last < r);
    PRINTABLE.get(after).is_some_and(|&(first, _)| first <= r)
}

/// Go's `strings.ToUpper` (`upper`) or `strings.ToLower`: every rune mapped, each byte of an
/// invalid sequence becoming U+FFFD (`strings.Map`). `None` where the result would be longer than
/// `limit` bytes: it is measured before it is built.
pub fn change_case(text: &[u8], upper: bool, limit: usize) -> Option<Vec<u8>> {
    if text.is_ascii() {
        let changed = if upper { text.to_ascii_uppercase() } else { text.to_ascii_lowercase() };
        return (changed.len() <= limit).then_some(changed);
    }
    let map = if upper { to_upper } else { to_lower };
    let length: usize = runes(text).map(|(_, rune)| map(rune).len_utf8()).sum();
    if length > limit {
        return None;
    }
    let mut changed = String::with_capacity(length);
    changed.extend(runes(text).map(|(_, rune)| map(rune)));
    Some(changed.into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    // Expected values from Go 1.19 (the controller's engine), rune by rune.

    #[test]
    fn decoding_is_gos_each_invalid_byte_one_replacement() {
        let decoded: Vec<(usize, char)> = runes(b"a\xC3\xA9\xE2\x82z\xED\xA0\x80\xF0\x9F\x98\x80\xFF").collect();
        assert_eq!(
            decoded,
            [
                (0, 'a'),
                (1, 'é'),
                (3, RUNE_ERROR),
                (4, RUNE_ERROR),
                (5, 'z'),
                // A surrogate's encoding is invalid: three bytes, three replacements.
                (6, RUNE_ERROR),
                (7, RUNE_ERROR),
                (8, RUNE_ERROR),
                (9, '😀'),
                (13, RUNE_ERROR)
            ]
        );
        assert_eq!(rune_count(b"\xC0\x80"), 2); // overlong
        assert_eq!(rune_count(b""), 0);
    }

    #[test]
    fn case_mapping_is_gos_simple_one_rune_mapping() {
        let upper = |s: &str| String::from_utf8(change_case(s.as_bytes(), true, usize::MAX).unwrap()).unwrap();
        let lower = |s: &str| String::from_utf8(change_case(s.as_bytes(), false, usize::MAX).unwrap()).unwrap();
        assert_eq!(upper("héllo ǆ ß ŉ ǰ ﬀ ı ſ ꞵ"), "HÉLLO Ǆ ß ŉ ǰ ﬀ I S Ꞵ");
        assert_eq!(lower("ÉCOLE Ǆ İ Ω K Å"), "école ǆ i ω k å");
        // Where the full mapping gives several runes, Go keeps the rune or takes its simple
        // mapping: ᾀ has a title-case upper form, ᾈ is its own upper case.
        assert_eq!(
            upper("\u{1F80}\u{1F88}\u{1FB3}\u{1FC3}\u{1FF3}\u{0390}"),
            "\u{1F88}\u{1F88}\u{1FBC}\u{1FCC}\u{1FFC}\u{0390}"
        );
        assert_eq!(lower("\u{1F88}\u{1FBC}ǅ"), "\u{1F80}\u{1FB3}ǆ");
        // Alternating runs (Ā ā Ă ă …), and a letter newer than Unicode 13 left alone.
        assert_eq!(upper("āăą"), "ĀĂĄ");
        assert_eq!(lower("ĀĂĄ"), "āăą");
        assert_eq!(upper("\u{2C2F}\u{A7C1}"), "\u{2C2F}\u{A7C1}");
        // Invalid bytes become U+FFFD; ASCII-only text is mapped byte by byte.
        assert_eq!(change_case(b"a\xFFb", true, usize::MAX).unwrap(), "A\u{FFFD}B".as_bytes());
        assert_eq!(change_case(b"Mixed 123", false, usize::MAX).unwrap(), b"mixed 123");
    }

    #[test]
    fn a_result_past_the_limit_is_refused_before_it_is_built() {
        // Each invalid byte grows to three.
        assert_eq!(change_case(b"\xFF\xFF", true, 5), None);
        assert_eq!(change_case(b"\xFF\xFF", true, 6).map(|v| v.len()), Some(6));
        assert_eq!(change_case(b"abc", true, 2), None);
    }

    #[test]
    fn printable_is_strconvs() {
        for (rune, printable) in [
            (' ', true),
            ('~', true),
            ('\u{7F}', false),
            ('\u{A0}', false),
            ('\u{AD}', false),
            ('é', true),
            ('\u{200B}', false),
            ('\u{FEFF}', false),
            ('😀', true),
            ('\u{E000}', false),
            ('\u{10FFFF}', false),
        ] {
            assert_eq!(is_print(rune), printable, "{rune:?}");
        }
    }
}
