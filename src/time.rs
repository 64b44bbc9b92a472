//! Wall-clock time as Kubernetes writes it (RFC 3339, UTC), without a date crate.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Seconds since the Unix epoch of an RFC 3339 time (`2026-11-22T03:00:00Z`,
/// `…T03:00:00.123+01:00`).
pub fn parse_rfc3339(text: &str) -> Option<i64> {
    let (date, rest) = text.split_once(['T', 't'])?;
    let mut date_parts = date.splitn(3, '-').map(|p| p.parse::<i64>().ok());
    let (year, month, day) = (date_parts.next()??, date_parts.next()??, date_parts.next()??);
    let zone_at = rest.find(['Z', 'z', '+', '-'])?;
    let (clock, zone) = rest.split_at(zone_at);
    let clock = clock.split('.').next()?;
    let mut clock_parts = clock.splitn(3, ':').map(|p| p.parse::<i64>().ok());
    let (hour, minute, second) = (clock_parts.next()??, clock_parts.next()??, clock_parts.next()??);
    let offset = match zone {
        "Z" | "z" => 0,
        _ => {
            let sign = if zone.starts_with('-') { -1 } else { 1 };
            let (h, m) = zone[1..].split_once(':')?;
            sign * (h.parse::<i64>().ok()? * 3600 + m.parse::<i64>().ok()? * 60)
        }
    };
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    Some(days_from_civil(year, month as u32, day as u32) * 86_400 + hour * 3600 + minute * 60 + second - offset)
}

/// Seconds since the Unix epoch, now.
pub fn now_seconds(now: SystemTime) -> i64 {
    now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64)
}

/// UTC `YYYYMMDDTHHMMSS.mmmZ`: sortable, for file names.
pub fn file_timestamp(now: SystemTime) -> String {
    let since = now.duration_since(UNIX_EPOCH).unwrap_or_default();
    let (days, seconds) = (since.as_secs() / 86_400, since.as_secs() % 86_400);
    let (year, month, day) = civil_from_days(days as i64);
    let (h, m, s) = (seconds / 3600, seconds / 60 % 60, seconds % 60);
    format!("{year:04}{month:02}{day:02}T{h:02}{m:02}{s:02}.{:03}Z", since.subsec_millis())
}

/// UTC `YYYY-MM-DDTHH:MM:SSZ`.
pub fn rfc3339(now: SystemTime) -> String {
    let seconds = now_seconds(now);
    let (year, month, day) = civil_from_days(seconds.div_euclid(86_400));
    let of_day = seconds.rem_euclid(86_400);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", of_day / 3600, of_day / 60 % 60, of_day % 60)
}

/// `1h02m03s`, `4m05s`, `42s`.
pub fn human(duration: Duration) -> String {
    let total = duration.as_secs();
    match (total / 3600, total / 60 % 60, total % 60) {
        (0, 0, s) => format!("{s}s"),
        (0, m, s) => format!("{m}m{s:02}s"),
        (h, m, s) => format!("{h}h{m:02}m{s:02}s"),
    }
}

/// Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

/// The inverse of `civil_from_days`.
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let yoe = year.rem_euclid(400);
    let mp = i64::from((month + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_round_trip() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_414), (2025, 11, 22));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        for days in [-1000, 0, 11_016, 20_414, 40_000] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
    }

    #[test]
    fn parses_kubernetes_times() {
        assert_eq!(parse_rfc3339("1970-01-01T00:00:10Z"), Some(10));
        assert_eq!(parse_rfc3339("2026-11-22T03:00:00Z"), Some(1_795_316_400));
        assert_eq!(parse_rfc3339("2026-11-22T04:00:00.5+01:00"), Some(1_795_316_400));
        assert_eq!(parse_rfc3339("yesterday"), None);
        assert_eq!(rfc3339(UNIX_EPOCH + Duration::from_secs(1_795_316_400)), "2026-11-22T03:00:00Z");
    }

    #[test]
    fn durations_for_people() {
        assert_eq!(human(Duration::from_secs(42)), "42s");
        assert_eq!(human(Duration::from_secs(245)), "4m05s");
        assert_eq!(human(Duration::from_secs(3723)), "1h02m03s");
    }
}
