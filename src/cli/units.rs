//! Durations and sizes on the command line: durations as kubectl reads `--request-timeout`
//! (a bare number of seconds, or Go's `time.ParseDuration` syntax such as `1m30s`, `1.5h`,
//! `300ms`, bounded as Go's are by 2^63-1 nanoseconds, about 292 years), sizes as a number with
//! an optional binary unit, checked for overflow.

use std::time::Duration;

/// Go's largest duration: 2^63-1 nanoseconds.
const MAX_NANOS: u64 = i64::MAX as u64;

/// A duration of zero or more: `5` (seconds), `1m30s`, `1.5h`, `300ms`, `0`.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let invalid =
        || format!("invalid duration {text:?}: use a number of seconds or Go's form such as 1m30s, 1.5h or 300ms");
    if text.starts_with('-') {
        return Err(format!("invalid duration {text:?}: must not be negative"));
    }
    // kubectl's ParseTimeout: a bare integer is seconds.
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        let seconds: u64 = text.parse().map_err(|_| too_long(text))?;
        return seconds
            .checked_mul(1_000_000_000)
            .filter(|n| *n <= MAX_NANOS)
            .map(Duration::from_nanos)
            .ok_or_else(|| too_long(text));
    }
    let rest = text.strip_prefix('+').unwrap_or(text);
    if rest == "0" {
        return Ok(Duration::ZERO);
    }
    if rest.is_empty() {
        return Err(invalid());
    }
    let mut total: u64 = 0;
    let mut rest = rest;
    while !rest.is_empty() {
        let (whole, after) = split_digits(rest);
        let (fraction, after) = match after.strip_prefix('.') {
            Some(after) => {
                let (fraction, after) = split_digits(after);
                (Some(fraction), after)
            }
            None => (None, after),
        };
        if whole.is_empty() && fraction.is_none_or(str::is_empty) {
            return Err(invalid());
        }
        let unit_length = after.find(|c: char| c == '.' || c.is_ascii_digit()).unwrap_or(after.len());
        let (unit, after) = after.split_at(unit_length);
        let nanos_per_unit = match unit {
            "ns" => 1,
            "us" | "µs" | "μs" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60 * 1_000_000_000,
            "h" => 3600 * 1_000_000_000,
            "" => {
                return Err(format!(
                    "invalid duration {text:?}: a number needs a unit (ns, us, ms, s, m or h); only a whole number of seconds goes without one"
                ));
            }
            other => {
                return Err(format!("invalid duration {text:?}: unknown unit {other:?} (use ns, us, ms, s, m or h)"));
            }
        };
        let whole: u64 = if whole.is_empty() { 0 } else { whole.parse().map_err(|_| too_long(text))? };
        let mut nanos = whole.checked_mul(nanos_per_unit).ok_or_else(|| too_long(text))?;
        if let Some(fraction) = fraction.filter(|f| !f.is_empty()) {
            // As Go: the fraction's digits that fit, scaled in floating point.
            let digits = &fraction[..fraction.len().min(18)];
            let value: u64 = digits.parse().expect("digits");
            let scale = 10f64.powi(digits.len() as i32);
            nanos = nanos
                .checked_add((value as f64 * (nanos_per_unit as f64 / scale)) as u64)
                .ok_or_else(|| too_long(text))?;
        }
        total = total.checked_add(nanos).filter(|t| *t <= MAX_NANOS).ok_or_else(|| too_long(text))?;
        rest = after;
    }
    Ok(Duration::from_nanos(total))
}

/// `--lua-timeout`: more than zero (zero would stop every script at once).
pub fn parse_lua_timeout(text: &str) -> Result<Duration, String> {
    let timeout = parse_duration(text)?;
    if timeout.is_zero() {
        return Err(format!("{text:?}: the script time limit must be more than 0 (the controller's is 1s)"));
    }
    Ok(timeout)
}

/// `--request-timeout`, as kubectl takes it: empty is not given (say `--request-timeout "$T"` with
/// T unset), so the default holds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RequestTimeout(pub Option<Duration>);

pub fn parse_request_timeout(text: &str) -> Result<RequestTimeout, String> {
    if text.is_empty() {
        return Ok(RequestTimeout(None));
    }
    parse_duration(text).map(|timeout| RequestTimeout(Some(timeout)))
}

fn too_long(text: &str) -> String {
    format!("invalid duration {text:?}: too long (at most 2562047h47m16.854775807s, about 292 years, as in Go)")
}

fn split_digits(text: &str) -> (&str, &str) {
    text.split_at(text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len()))
}

/// A size in bytes, as a Kubernetes quantity writes one: a whole number with an optional suffix,
/// `Ki`, `Mi`, `Gi` (binary) or `k`, `M`, `G` (decimal).
pub fn parse_size(text: &str) -> Result<usize, String> {
    let (number, unit) = split_digits(text);
    let too_large = || format!("{text:?} is too large (at most {} bytes)", usize::MAX);
    let value: usize = match number.parse() {
        Ok(value) => value,
        Err(e) if *e.kind() == std::num::IntErrorKind::PosOverflow => return Err(too_large()),
        Err(_) => return Err(format!("{text:?} is not a size like 64Mi or 1Gi")),
    };
    let multiplier: usize = match unit {
        "" => 1,
        "Ki" => 1 << 10,
        "Mi" => 1 << 20,
        "Gi" => 1 << 30,
        "k" => 1_000,
        "M" => 1_000_000,
        "G" => 1_000_000_000,
        _ if unit.starts_with('.') => {
            return Err(format!("{text:?}: a size is a whole number, of bytes or of a unit (1536Ki, not 1.5Mi)"));
        }
        _ => {
            return Err(format!(
                "{text:?}: unknown unit {unit:?} (as in a Kubernetes quantity: Ki, Mi or Gi, binary; k, M or G, decimal)"
            ));
        }
    };
    value.checked_mul(multiplier).ok_or_else(too_large)
}

/// `--lua-memory`: at least 1 MiB. A state with the sandbox's libraries takes 32 to 64 KiB, and
/// reserving the stack for an obj's nesting more: a smaller limit would fail before the script
/// runs, as a Lua stack error that does not name the limit. 1 MiB holds a small script and obj.
pub fn parse_lua_memory(text: &str) -> Result<usize, String> {
    match parse_size(text)? {
        size if size < MIN_LUA_MEMORY => {
            Err(format!("{text:?}: the script memory limit must be at least 1Mi (1,048,576 bytes)"))
        }
        size => Ok(size),
    }
}

/// The smallest `--lua-memory` (see `parse_lua_memory`).
const MIN_LUA_MEMORY: usize = 1 << 20;

/// A step number (`--expect-step`, `--until-step`): 1 or more, as the controller's status counts.
pub fn parse_step(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(0) => Err("steps count from 1, as the Rollout's status does".into()),
        Ok(step) => Ok(step),
        Err(_) => Err(format!("{text:?} is not a step number (1 or more)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_numbers_count_from_1() {
        assert_eq!(parse_step("3"), Ok(3));
        assert_eq!(parse_step("0").unwrap_err(), "steps count from 1, as the Rollout's status does");
        assert_eq!(parse_step("-1").unwrap_err(), "\"-1\" is not a step number (1 or more)");
    }

    #[test]
    fn durations_read_as_kubectl_reads_them() {
        let ok = |text: &str| parse_duration(text).unwrap();
        assert_eq!(ok("1s"), Duration::from_secs(1));
        assert_eq!(ok("250ms"), Duration::from_millis(250));
        assert_eq!(ok("2"), Duration::from_secs(2), "a bare number is seconds");
        assert_eq!(ok("0"), Duration::ZERO);
        assert_eq!(ok("1m30s"), Duration::from_secs(90));
        assert_eq!(ok("1.5h"), Duration::from_secs(5400));
        assert_eq!(ok(".5s"), Duration::from_millis(500));
        assert_eq!(ok("1h2m3s4ms5us6ns"), Duration::new(3723, 4_005_006));
        assert_eq!(ok("3µs"), Duration::from_micros(3));
        assert_eq!(ok("+5m"), Duration::from_secs(300));
        assert_eq!(ok("2562047h47m16.854775807s"), Duration::from_nanos(i64::MAX as u64), "Go's largest");
        let err = |text: &str| parse_duration(text).unwrap_err();
        for bad in ["", "1d", "1.5", "s", "1..5s", ".s", "abc", "1s2"] {
            assert!(err(bad).starts_with(&format!("invalid duration {bad:?}")), "{bad}: {}", err(bad));
        }
        assert!(err("1d").contains("unknown unit \"d\""));
        let syntax = ": use a number of seconds or Go's form such as 1m30s, 1.5h or 300ms";
        for bad in ["", "abc", ".s", "+"] {
            assert_eq!(err(bad), format!("invalid duration {bad:?}{syntax}"));
        }
        for unitless in ["1.5", "1s2", "1..5s"] {
            assert_eq!(
                err(unitless),
                format!(
                    "invalid duration {unitless:?}: a number needs a unit (ns, us, ms, s, m or h); only a whole number of seconds goes without one"
                )
            );
        }
        assert!(err("-1s").contains("must not be negative"));
        for huge in
            ["99999999999999999999h", "2562048h", "99999999999999999999", "9223372037s", "2562047h47m16.854775808s"]
        {
            assert!(err(huge).contains("too long (at most 2562047h"), "{huge}: {}", err(huge));
        }
    }

    #[test]
    fn an_empty_request_timeout_is_not_given() {
        assert_eq!(parse_request_timeout(""), Ok(RequestTimeout(None)));
        assert_eq!(parse_request_timeout("0"), Ok(RequestTimeout(Some(Duration::ZERO))));
        assert_eq!(parse_request_timeout("5s"), Ok(RequestTimeout(Some(Duration::from_secs(5)))));
        assert!(parse_request_timeout("-5s").unwrap_err().contains("must not be negative"));
    }

    #[test]
    fn the_lua_timeout_is_never_zero() {
        assert_eq!(parse_lua_timeout("200ms").unwrap(), Duration::from_millis(200));
        assert!(parse_lua_timeout("0").unwrap_err().contains("must be more than 0"));
        assert!(parse_lua_timeout("0s").unwrap_err().contains("must be more than 0"));
    }

    #[test]
    fn sizes_are_checked_for_overflow() {
        assert_eq!(parse_size("64Mi").unwrap(), 64 << 20);
        assert_eq!(parse_size("1024").unwrap(), 1024);
        for bad in ["lots", "Mi", "", "-1Mi"] {
            assert_eq!(parse_size(bad).unwrap_err(), format!("{bad:?} is not a size like 64Mi or 1Gi"));
        }
        // As a Kubernetes quantity reads them: Mi binary, M decimal.
        assert_eq!(parse_size("2Gi").unwrap(), 2 << 30);
        assert_eq!(parse_size("64M").unwrap(), 64_000_000);
        assert_eq!(parse_size("512k").unwrap(), 512_000);
        assert_eq!(parse_size("1G").unwrap(), 1_000_000_000);
        for unknown in ["1Ti", "64MB", "64MiB", "512K", "64m", "1024B"] {
            assert!(parse_size(unknown).unwrap_err().contains("unknown unit"), "{unknown}");
        }
        assert!(
            parse_size("512K")
                .unwrap_err()
                .ends_with("(as in a Kubernetes quantity: Ki, Mi or Gi, binary; k, M or G, decimal)")
        );
        assert_eq!(
            parse_size("1.5Mi").unwrap_err(),
            "\"1.5Mi\": a size is a whole number, of bytes or of a unit (1536Ki, not 1.5Mi)"
        );
        for huge in ["17179869184Gi", "99999999999999999999999", "99999999999999999999999Mi"] {
            assert_eq!(parse_size(huge).unwrap_err(), format!("{huge:?} is too large (at most {} bytes)", usize::MAX));
        }
        for small in ["0Mi", "1", "32Ki", "1023Ki"] {
            assert_eq!(
                parse_lua_memory(small).unwrap_err(),
                format!("{small:?}: the script memory limit must be at least 1Mi (1,048,576 bytes)")
            );
        }
        assert_eq!(parse_lua_memory("1024Ki").unwrap(), 1 << 20);
        assert_eq!(parse_lua_memory("1Gi").unwrap(), 1 << 30);
    }
}
