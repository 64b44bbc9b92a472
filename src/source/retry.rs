//! The one retry policy of API requests: a busy API server (429, or 5xx on a request that is
//! safe to repeat) is asked again after its `Retry-After` (or a short backoff), and a read whose
//! connection was lost before its reply (closed or reset) after a second, as client-go does;
//! all within a total budget per request and its time limit (`super::deadline`), with each
//! retry announced on stderr (above a live view, if one is drawn, and not at all during shell
//! completion: `crate::stderr`). kube's own retry layer is off: it retried 429/503/504 silently
//! for minutes, writes included.

use super::causes::find_cause;
use super::deadline::RequestDeadline;
use crate::time::seconds;
use http::{HeaderMap, Method, Request, Response, StatusCode, header};
use kube::client::Body;
use std::time::Duration;
use tokio::time::Instant;
use tower::BoxError;
use tower::retry::Policy;

/// How long one request may spend waiting to be retried, in total.
pub const RETRY_BUDGET: Duration = Duration::from_secs(20);

/// The wait before the first retry when the server names none; it doubles up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(500);
const MAX_BACKOFF: Duration = Duration::from_secs(4);

/// Per request: when it was first refused, and how many times it was retried.
#[derive(Clone, Default)]
pub struct Retries {
    first_refused: Option<Instant>,
    retried: u32,
}

/// Whether a request refused with `status` may be sent again. A 429 means the server refused
/// the request before handling it (overload protection, priority and fairness), so any request
/// may be repeated. A 5xx may come after a write was stored: only reads (and access reviews,
/// which change nothing) are repeated; a write's 5xx goes back to the writer, which reads the
/// object again to learn whether the write landed.
pub fn may_retry(method: &Method, path: &str, status: StatusCode) -> bool {
    match status {
        StatusCode::TOO_MANY_REQUESTS => true,
        StatusCode::INTERNAL_SERVER_ERROR
        | StatusCode::BAD_GATEWAY
        | StatusCode::SERVICE_UNAVAILABLE
        | StatusCode::GATEWAY_TIMEOUT => safe_to_repeat(method, path),
        _ => false,
    }
}

/// Whether sending a request twice changes nothing a single send would not: a read, or an
/// access review.
fn safe_to_repeat(method: &Method, path: &str) -> bool {
    method == Method::GET || path.ends_with("/selfsubjectaccessreviews")
}

/// Whether `uri` opens a watch: `crate::source::watch` opens a lost one again itself, saying so.
fn is_watch(uri: &http::Uri) -> bool {
    uri.query().is_some_and(|query| query.split('&').any(|pair| pair == "watch=true" || pair == "watch=1"))
}

/// The wait before a read whose connection was lost is sent again: client-go's (it answers such
/// a GET itself with `Retry-After: 1`).
const LOST_CONNECTION_WAIT: Duration = Duration::from_secs(1);

/// Whether `error` is a connection closed or reset before the whole reply came (an API server
/// restarting, a load balancer dropping the connection): client-go's `IsConnectionReset` and
/// `IsProbableEOF`, which it retries for GETs. A refused connection, a timeout or a TLS
/// failure is not one.
fn connection_lost(error: &(dyn std::error::Error + 'static)) -> bool {
    use std::io::ErrorKind;
    find_cause::<hyper::Error>(error, hyper::Error::is_incomplete_message).is_some()
        || find_cause::<std::io::Error>(error, |e| {
            matches!(
                e.kind(),
                ErrorKind::ConnectionReset
                    | ErrorKind::ConnectionAborted
                    | ErrorKind::BrokenPipe
                    | ErrorKind::UnexpectedEof
            )
        })
        .is_some()
}

/// The wait the server asks for (`Retry-After` in seconds; an HTTP date is treated as absent).
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let seconds = headers.get(header::RETRY_AFTER)?.to_str().ok()?.trim().parse::<u64>().ok()?;
    Some(Duration::from_secs(seconds))
}

impl Retries {
    /// How long to wait before the next attempt, and the time that will be left after it; or
    /// why there is none: the budget, or the request's time limit, would not allow it.
    fn next_wait(
        &mut self,
        asked: Option<Duration>,
        now: Instant,
        deadline: Option<RequestDeadline>,
    ) -> Result<(Duration, Duration), String> {
        let first = *self.first_refused.get_or_insert(now);
        let budget_left = RETRY_BUDGET.saturating_sub(now - first);
        let backoff = FIRST_BACKOFF.saturating_mul(1 << self.retried.min(8)).min(MAX_BACKOFF);
        let wait = asked.unwrap_or(backoff);
        if wait > budget_left {
            return Err(format!("retries of a request are bounded to {} in all", seconds(RETRY_BUDGET)));
        }
        let mut left = budget_left;
        if let Some(deadline) = deadline {
            let time_left = deadline.at.saturating_duration_since(now);
            if wait >= time_left {
                return Err(format!(
                    "the request's time limit, {} (--request-timeout), would pass first",
                    seconds(deadline.limit)
                ));
            }
            left = left.min(time_left);
        }
        self.retried += 1;
        Ok((wait, left - wait))
    }
}

impl<B> Policy<Request<Body>, Response<B>, BoxError> for Retries {
    type Future = tokio::time::Sleep;

    fn retry(
        &mut self,
        request: &mut Request<Body>,
        result: &mut Result<Response<B>, BoxError>,
    ) -> Option<Self::Future> {
        let (why, asked) = match result {
            Ok(response) => {
                let status = response.status();
                if !may_retry(request.method(), request.uri().path(), status) {
                    return None;
                }
                (format!("API server busy ({})", status.as_u16()), retry_after(response.headers()))
            }
            Err(error) => {
                let uri = request.uri();
                if !safe_to_repeat(request.method(), uri.path()) || is_watch(uri) || !connection_lost(error.as_ref()) {
                    return None;
                }
                ("connection to the API server lost before the reply".to_string(), Some(LOST_CONNECTION_WAIT))
            }
        };
        match self.next_wait(asked, Instant::now(), request.extensions().get::<RequestDeadline>().copied()) {
            Ok((wait, left)) => {
                crate::stderr::line(&format!(
                    "{why}, retrying in {}, {} left",
                    seconds(wait),
                    seconds(Duration::from_secs(left.as_secs_f64().round() as u64))
                ));
                Some(tokio::time::sleep(wait))
            }
            Err(bound) => {
                crate::stderr::line(&format!("{why}: giving up ({bound})"));
                None
            }
        }
    }

    fn clone_request(&mut self, request: &Request<Body>) -> Option<Request<Body>> {
        copy_request(request)
    }
}

/// A copy of `request` to send again (None when its body cannot be copied, a stream).
pub(super) fn copy_request(request: &Request<Body>) -> Option<Request<Body>> {
    let mut copy = Request::new(request.body().try_clone()?);
    *copy.method_mut() = request.method().clone();
    *copy.uri_mut() = request.uri().clone();
    *copy.version_mut() = request.version();
    *copy.headers_mut() = request.headers().clone();
    *copy.extensions_mut() = request.extensions().clone();
    Some(copy)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_requests_safe_to_repeat_are_retried_after_a_5xx() {
        let path = "/apis/networking.istio.io/v1beta1/namespaces/a/virtualservices/vs";
        let ssar = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";
        for status in [500, 502, 503, 504] {
            let status = StatusCode::from_u16(status).unwrap();
            assert!(may_retry(&Method::GET, path, status));
            assert!(may_retry(&Method::POST, ssar, status));
            for write in [Method::PUT, Method::PATCH, Method::POST, Method::DELETE] {
                assert!(!may_retry(&write, path, status), "{write} {status}");
            }
        }
        for method in [Method::GET, Method::PUT, Method::PATCH, Method::POST, Method::DELETE] {
            assert!(may_retry(&method, path, StatusCode::TOO_MANY_REQUESTS), "{method}");
        }
        for status in [400, 403, 404, 409, 422, 501] {
            assert!(!may_retry(&Method::GET, path, StatusCode::from_u16(status).unwrap()));
        }
    }

    #[test]
    fn waits_follow_retry_after_or_back_off_within_the_budget() {
        let start = Instant::now();
        let secs = Duration::from_secs;
        let mut retries = Retries::default();
        assert_eq!(retries.next_wait(Some(secs(2)), start, None), Ok((secs(2), secs(18))));
        let later = start + secs(2);
        assert_eq!(retries.next_wait(None, later, None), Ok((secs(1), secs(17))));
        assert_eq!(retries.next_wait(None, later + secs(1), None), Ok((secs(2), secs(15))));
        // Backoff doubles up to its cap.
        let mut capped = Retries { retried: 9, ..Retries::default() };
        assert_eq!(capped.next_wait(None, start, None).map(|(wait, _)| wait), Ok(MAX_BACKOFF));
        // A wait beyond what is left of the budget ends the retries.
        let budget = Err("retries of a request are bounded to 20s in all".to_string());
        assert_eq!(retries.next_wait(Some(secs(2)), start + secs(19), None), budget);
        assert_eq!(retries.next_wait(None, start + RETRY_BUDGET, None), budget);
    }

    #[test]
    fn waits_end_before_the_requests_time_limit() {
        let start = Instant::now();
        let secs = Duration::from_secs;
        let deadline = Some(RequestDeadline { at: start + secs(5), limit: secs(5) });
        let mut retries = Retries::default();
        // What is left is the time limit's, when it ends before the budget.
        assert_eq!(retries.next_wait(Some(secs(1)), start + secs(1), deadline), Ok((secs(1), secs(3))));
        let limit = Err("the request's time limit, 5s (--request-timeout), would pass first".to_string());
        assert_eq!(retries.next_wait(Some(secs(2)), start + secs(3), deadline), limit);
        assert_eq!(retries.next_wait(Some(secs(1)), start + secs(6), deadline), limit);
        // A limit past the budget leaves the budget to bound the retries.
        let far = Some(RequestDeadline { at: start + secs(60), limit: secs(60) });
        assert_eq!(Retries::default().next_wait(Some(secs(1)), start, far), Ok((secs(1), secs(19))));
    }

    #[test]
    fn a_watch_is_told_from_a_read() {
        let uri = |text: &str| text.parse::<http::Uri>().unwrap();
        assert!(is_watch(&uri("/apis/g/v1/namespaces/a/rollouts?resourceVersion=5&watch=true")));
        assert!(is_watch(&uri("/apis/g/v1/rollouts?watch=1")));
        assert!(!is_watch(&uri("/apis/g/v1/namespaces/a/rollouts/watch")));
        assert!(!is_watch(&uri("/apis/g/v1/rollouts?labelSelector=watch%3Dtrue")));
        assert!(!is_watch(&uri("/apis/g/v1/rollouts")));
    }

    #[test]
    fn only_a_connection_closed_or_reset_is_lost() {
        use std::io::{Error, ErrorKind};
        for kind in
            [ErrorKind::ConnectionReset, ErrorKind::ConnectionAborted, ErrorKind::BrokenPipe, ErrorKind::UnexpectedEof]
        {
            let wrapped: BoxError = Box::new(Error::other(Error::from(kind)));
            assert!(connection_lost(&Error::from(kind)), "{kind:?}");
            assert!(connection_lost(wrapped.as_ref()), "{kind:?} as a cause");
        }
        for kind in [ErrorKind::ConnectionRefused, ErrorKind::TimedOut, ErrorKind::InvalidData] {
            assert!(!connection_lost(&Error::from(kind)), "{kind:?}");
        }
    }

    #[test]
    fn retry_after_is_read_in_seconds() {
        let mut headers = HeaderMap::new();
        assert_eq!(retry_after(&headers), None);
        headers.insert(header::RETRY_AFTER, "3".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(3)));
        headers.insert(header::RETRY_AFTER, "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap());
        assert_eq!(retry_after(&headers), None);
    }
}
