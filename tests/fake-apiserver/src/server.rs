//! HTTP/1.1 plumbing on hyper: one task per connection, latency, logging, dropped
//! connections.

use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::request::Parts;
use http::{HeaderValue, Request, Response, header};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::oneshot;

use crate::api::{self, ApiRequest, Config, Outcome, State};
use crate::log::LoggedRequest;

/// State shared by all connections and the test's [`crate::FakeHandle`].
pub(crate) struct Shared {
    pub config: Config,
    pub latency: Duration,
    pub state: Mutex<State>,
    pub started: Instant,
}

impl Shared {
    /// Locks the state. A panic in a test-supplied closure poisons the lock; the state is
    /// still consistent enough to keep serving and inspecting.
    pub fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Accepts connections until `shutdown` fires.
pub(crate) async fn serve(listener: TcpListener, shared: Arc<Shared>, mut shutdown: oneshot::Receiver<()>) {
    loop {
        let stream = tokio::select! {
            _ = &mut shutdown => return,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                // Transient (e.g. too many open files); keep accepting.
                Err(_) => continue,
            },
        };
        let shared = shared.clone();
        tokio::spawn(async move {
            let service = service_fn(move |req| respond(shared.clone(), req));
            // Errors are clients hanging up or injected drops: nothing to report.
            let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
        });
    }
}

/// Returned by the service to make hyper close the connection without responding.
#[derive(Debug)]
struct DropConnection;

impl fmt::Display for DropConnection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("connection dropped by fault injection")
    }
}

impl std::error::Error for DropConnection {}

async fn respond(shared: Arc<Shared>, req: Request<Incoming>) -> Result<Response<Full<Bytes>>, DropConnection> {
    let started = shared.started.elapsed();
    let (parts, body) = req.into_parts();
    // A body that fails to arrive is the client's problem; handle what we have.
    let body = body.collect().await.map(|b| b.to_bytes()).unwrap_or_default();
    let request = api_request(&parts, body);
    let outcome = api::handle(&shared.config, &mut shared.lock(), &request);
    delay(shared.latency).await;
    let status = match &outcome {
        Outcome::Reply(reply) => Some(reply.status),
        Outcome::Drop => None,
    };
    let entry = log_entry(request, status, started, shared.started.elapsed());
    if let Some(observer) = &shared.config.on_request {
        observer(&entry);
    }
    shared.lock().log.push(entry);
    match outcome {
        Outcome::Reply(reply) => Ok(json_response(reply.status, reply.body)),
        Outcome::Drop => Err(DropConnection),
    }
}

/// Waits `latency`, to within a fraction of a millisecond: tokio's timer rounds up to its
/// millisecond tick and wakes late, which added 1–3 ms to a 50 ms latency; a thread's sleep
/// uses the kernel's high-resolution timers.
async fn delay(latency: Duration) {
    if !latency.is_zero() {
        let _ = tokio::task::spawn_blocking(move || std::thread::sleep(latency)).await;
    }
}

fn json_response(status: u16, body: Vec<u8>) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = http::StatusCode::from_u16(status).unwrap_or(http::StatusCode::INTERNAL_SERVER_ERROR);
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

fn api_request(parts: &Parts, body: Bytes) -> ApiRequest {
    let header = |name: &str| parts.headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let query = parts.uri.query().unwrap_or_default().to_owned();
    ApiRequest {
        method: parts.method.as_str().to_owned(),
        path: parts.uri.path().to_owned(),
        params: api::parse_query(&query),
        query,
        content_type: header("content-type"),
        authorization: header("authorization"),
        impersonate_user: header("impersonate-user"),
        impersonate_groups: parts
            .headers
            .get_all("impersonate-group")
            .iter()
            .filter_map(|v| v.to_str().ok().map(str::to_owned))
            .collect(),
        body,
    }
}

fn log_entry(request: ApiRequest, status: Option<u16>, started: Duration, finished: Duration) -> LoggedRequest {
    let body = if request.body.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&request.body)
            .unwrap_or_else(|_| String::from_utf8_lossy(&request.body).into_owned().into())
    };
    LoggedRequest {
        method: request.method,
        path: request.path,
        query: request.query,
        query_params: request.params,
        content_type: request.content_type,
        body,
        status,
        authorization: request.authorization,
        impersonate_user: request.impersonate_user,
        impersonate_groups: request.impersonate_groups,
        started,
        finished,
    }
}
