//! The request log tests assert on, and round-trip counting over it.

use std::time::Duration;

use serde_json::Value;

/// One request as the server saw it.
#[derive(Clone, Debug)]
pub struct LoggedRequest {
    pub method: String,
    /// Percent-encoded path as sent, e.g. `/apis/rollouts.kruise.io/v1beta1/namespaces/demo/rollouts/r`.
    pub path: String,
    /// Raw query string without `?` (`""` when absent).
    pub query: String,
    /// Decoded query parameters in order.
    pub query_params: Vec<(String, String)>,
    pub content_type: Option<String>,
    /// The body: parsed JSON when it is JSON, a string otherwise, `Null` when empty.
    pub body: Value,
    /// Response status; `None` when the connection was dropped without a response.
    pub status: Option<u16>,
    /// `Authorization` header (`Bearer <token>`); never required. Over plain HTTP kubectl
    /// sends none; through TLS in front of this server (the plugin's tests) it does.
    pub authorization: Option<String>,
    /// `Impersonate-User` header (kube's `--as`).
    pub impersonate_user: Option<String>,
    /// `Impersonate-Uid` header (kubectl's `--as-uid`).
    pub impersonate_uid: Option<String>,
    /// `Impersonate-Group` headers (kube's `--as-group`).
    pub impersonate_groups: Vec<String>,
    /// `User-Agent` header.
    pub user_agent: Option<String>,
    /// When the request arrived, relative to server start.
    pub started: Duration,
    /// When the response was ready (after any latency), relative to server start.
    pub finished: Duration,
}

impl LoggedRequest {
    /// The first value of a decoded query parameter.
    pub fn query_param(&self, name: &str) -> Option<&str> {
        self.query_params.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    /// A request that may change state: POST, PUT, PATCH or DELETE, except
    /// SelfSubjectAccessReview and SelfSubjectReview POSTs (which only ask a question).
    pub fn is_write(&self) -> bool {
        is_write(&self.method, &self.path)
    }

    /// A write sent with `dryRun=All` (query, or the DeleteOptions body of a DELETE).
    pub fn is_dry_run(&self) -> bool {
        self.query_param("dryRun") == Some("All")
            || self.body["dryRun"].as_array().is_some_and(|d| d.iter().any(|v| v == "All"))
    }
}

pub(crate) const SSAR_PATH: &str = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";
pub(crate) const SSR_PATH: &str = "/apis/authentication.k8s.io/v1/selfsubjectreviews";

pub(crate) fn is_write(method: &str, path: &str) -> bool {
    matches!(method, "POST" | "PUT" | "PATCH" | "DELETE") && path != SSAR_PATH && path != SSR_PATH
}

/// The number of sequential round trips in `requests`: requests are grouped into waves,
/// and a request starts a new wave when it starts after every request of the current wave
/// has finished. Concurrent requests therefore share a wave.
pub fn count_round_trips(requests: &[LoggedRequest]) -> usize {
    let mut spans: Vec<(Duration, Duration)> = requests.iter().map(|r| (r.started, r.finished)).collect();
    spans.sort();
    let mut waves = 0;
    let mut wave_end = None;
    for (start, end) in spans {
        match wave_end {
            Some(current) if start < current => wave_end = Some(end.max(current)),
            _ => {
                waves += 1;
                wave_end = Some(end);
            }
        }
    }
    waves
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(start_ms: u64, end_ms: u64) -> LoggedRequest {
        LoggedRequest {
            method: "GET".into(),
            path: "/".into(),
            query: String::new(),
            query_params: Vec::new(),
            content_type: None,
            body: Value::Null,
            status: Some(200),
            authorization: None,
            impersonate_user: None,
            impersonate_uid: None,
            impersonate_groups: Vec::new(),
            user_agent: None,
            started: Duration::from_millis(start_ms),
            finished: Duration::from_millis(end_ms),
        }
    }

    #[test]
    fn waves() {
        assert_eq!(count_round_trips(&[]), 0);
        // Sequential: three waves.
        assert_eq!(count_round_trips(&[span(0, 10), span(10, 20), span(25, 30)]), 3);
        // Two concurrent, then one after both: two waves, in any log order.
        assert_eq!(count_round_trips(&[span(12, 20), span(0, 10), span(1, 12)]), 2);
        // A long request keeps its wave open while shorter ones start inside it.
        assert_eq!(count_round_trips(&[span(0, 50), span(1, 5), span(6, 9), span(50, 60)]), 2);
    }
}
