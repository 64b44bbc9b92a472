//! Wall-clock time as Kubernetes writes it (RFC 3339, UTC), through jiff (in the tree through
//! k8s-openapi).

use k8s_openapi::jiff::Timestamp;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Seconds since the Unix epoch of an RFC 3339 time (`2026-11-22T03:00:00Z`,
/// `…T03:00:00.123+01:00`).
pub fn parse_rfc3339(text: &str) -> Option<i64> {
    text.parse::<Timestamp>().ok().map(|t| t.as_second())
}

/// An HTTP `Date` header's time (`Tue, 24 Nov 2026 06:21:03 GMT`, RFC 9110's IMF-fixdate).
pub fn parse_http_date(text: &str) -> Option<SystemTime> {
    let timestamp = k8s_openapi::jiff::fmt::rfc2822::DateTimeParser::new().parse_timestamp(text).ok()?;
    Some(SystemTime::from(timestamp))
}

/// Seconds since the Unix epoch of `now`.
pub fn now_seconds(now: SystemTime) -> i64 {
    now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64)
}

/// UTC `YYYYMMDDTHHMMSS.mmmZ`: sortable, for file names.
pub fn file_timestamp(now: SystemTime) -> String {
    utc(now, "%Y%m%dT%H%M%S%.3fZ")
}

/// UTC `YYYY-MM-DDTHH:MM:SSZ`.
pub fn rfc3339(now: SystemTime) -> String {
    utc(now, "%Y-%m-%dT%H:%M:%SZ")
}

/// An RFC 3339 time as kubectl prints one, UTC to the second (a Lease's MicroTime
/// `2026-12-02T22:50:00.123456Z` as `2026-12-02T22:50:00Z`); the text as it is when it is not
/// one.
pub fn to_seconds(text: &str) -> String {
    match text.parse::<Timestamp>() {
        Ok(time) => rfc3339(SystemTime::from(time)),
        Err(_) => text.to_string(),
    }
}

fn utc(now: SystemTime, format: &str) -> String {
    Timestamp::try_from(now).unwrap_or(Timestamp::UNIX_EPOCH).strftime(format).to_string()
}

/// `2s`, or `0.5s` below a second.
pub fn seconds(duration: Duration) -> String {
    if duration < Duration::from_secs(1) && !duration.is_zero() {
        format!("{:.1}s", duration.as_secs_f64())
    } else {
        human(duration)
    }
}

/// As Go writes a duration (`1.5s`, `250ms`, `1m30s`, `2h0m0s`): a limit given in that syntax
/// (`--timeout`, `--request-timeout`), said back as given rather than rounded to seconds.
pub fn go_duration(duration: Duration) -> String {
    // `whole.fraction` with the fraction's trailing zeros cut, of `digits` decimal places.
    let decimal = |whole: u128, fraction: u128, digits: usize| match fraction {
        0 => whole.to_string(),
        _ => format!("{whole}.{}", format!("{fraction:0digits$}").trim_end_matches('0')),
    };
    let nanos = duration.as_nanos();
    match nanos {
        0 => "0s".into(),
        1..1_000 => format!("{nanos}ns"),
        1_000..1_000_000 => format!("{}µs", decimal(nanos / 1_000, nanos % 1_000, 3)),
        1_000_000..1_000_000_000 => format!("{}ms", decimal(nanos / 1_000_000, nanos % 1_000_000, 6)),
        _ => {
            let total = duration.as_secs();
            let seconds = decimal(u128::from(total % 60), u128::from(duration.subsec_nanos()), 9);
            match (total / 3600, total / 60 % 60) {
                (0, 0) => format!("{seconds}s"),
                (0, m) => format!("{m}m{seconds}s"),
                (h, m) => format!("{h}h{m}m{seconds}s"),
            }
        }
    }
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

/// A moment on this host, by both its clocks: what has passed since is the longer of their
/// counts. The monotonic clock stands still while the machine sleeps (a laptop closed mid-run),
/// the wall clock does not; a wall clock set back counts nothing.
#[derive(Clone, Copy, Debug)]
pub struct Moment {
    monotonic: Instant,
    wall: SystemTime,
}

impl Moment {
    pub fn now() -> Moment {
        Moment { monotonic: Instant::now(), wall: SystemTime::now() }
    }

    pub fn elapsed(&self) -> Duration {
        self.elapsed_at(Instant::now(), SystemTime::now())
    }

    fn elapsed_at(&self, monotonic: Instant, wall: SystemTime) -> Duration {
        let wall = wall.duration_since(self.wall).unwrap_or_default();
        monotonic.saturating_duration_since(self.monotonic).max(wall)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_moments_elapsed_time_counts_the_time_the_machine_slept() {
        let then = Moment::now();
        let (later, slept) = (then.monotonic + Duration::from_secs(5), then.wall + Duration::from_secs(3600));
        assert_eq!(then.elapsed_at(later, slept), Duration::from_secs(3600), "asleep an hour: the wall clock's");
        assert_eq!(then.elapsed_at(later, then.wall), Duration::from_secs(5), "awake: the monotonic clock's");
        let set_back = then.wall - Duration::from_secs(600);
        assert_eq!(then.elapsed_at(later, set_back), Duration::from_secs(5), "a wall clock set back counts nothing");
    }

    #[test]
    fn durations_are_said_back_as_go_writes_them() {
        let said = |nanos: u64| go_duration(Duration::from_nanos(nanos));
        assert_eq!(said(0), "0s");
        assert_eq!(said(999), "999ns");
        assert_eq!(said(1_500), "1.5µs");
        assert_eq!(said(1_000_000), "1ms");
        assert_eq!(said(200_000_000), "200ms");
        assert_eq!(said(1_500_000_000), "1.5s");
        assert_eq!(said(90_000_000_000), "1m30s");
        assert_eq!(said(120_000_000_000), "2m0s");
        assert_eq!(said(3_723_004_000_000), "1h2m3.004s");
        assert_eq!(said(7_200_000_000_000), "2h0m0s");
    }

    #[test]
    fn short_waits_are_shown_in_tenths() {
        assert_eq!(seconds(Duration::from_millis(500)), "0.5s");
        assert_eq!(seconds(Duration::from_secs(14)), "14s");
        assert_eq!(seconds(Duration::ZERO), "0s");
    }

    #[test]
    fn parses_kubernetes_times() {
        assert_eq!(parse_rfc3339("1970-01-01T00:00:10Z"), Some(10));
        assert_eq!(parse_rfc3339("2026-11-22T03:00:00Z"), Some(1_795_316_400));
        assert_eq!(parse_rfc3339("2026-11-22T04:00:00.5+01:00"), Some(1_795_316_400));
        assert_eq!(parse_rfc3339("yesterday"), None);
        let date = parse_http_date("Sun, 22 Nov 2026 03:00:00 GMT");
        assert_eq!(date, Some(UNIX_EPOCH + Duration::from_secs(1_795_316_400)));
        assert_eq!(parse_http_date("soon"), None);
        assert_eq!(rfc3339(UNIX_EPOCH + Duration::from_secs(1_795_316_400)), "2026-11-22T03:00:00Z");
        assert_eq!(file_timestamp(UNIX_EPOCH + Duration::from_millis(1_795_316_400_042)), "20261122T030000.042Z");
        assert_eq!(rfc3339(UNIX_EPOCH + Duration::from_secs(951_782_400)), "2000-02-29T00:00:00Z");
    }

    #[test]
    fn times_print_to_the_second_in_utc() {
        assert_eq!(to_seconds("2026-12-02T22:50:00.999999Z"), "2026-12-02T22:50:00Z");
        assert_eq!(to_seconds("2026-12-02T23:50:00+01:00"), "2026-12-02T22:50:00Z");
        assert_eq!(to_seconds("2026-12-02T22:50:00Z"), "2026-12-02T22:50:00Z");
        assert_eq!(to_seconds("yesterday"), "yesterday");
    }

    #[test]
    fn durations_for_people() {
        assert_eq!(human(Duration::from_secs(42)), "42s");
        assert_eq!(human(Duration::from_secs(245)), "4m05s");
        assert_eq!(human(Duration::from_secs(3723)), "1h02m03s");
    }
}
