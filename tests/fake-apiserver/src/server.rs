//! HTTP/1.1 plumbing on hyper: one task per connection, injected faults, latency, logging.

use std::fmt;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context as TaskContext, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::request::Parts;
use http::{HeaderValue, Request, Response, header};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::{Frame, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::{mpsc, oneshot};

use crate::api::{self, ApiRequest, Config, Reply, State, Watch};
use crate::faults::{DRIP_EVERY, DRIP_FOR, Effect, ReplyFault, Stage};
use crate::log::LoggedRequest;
use crate::status::ApiError;

/// State shared by all connections and the test's [`crate::FakeHandle`].
pub(crate) struct Shared {
    pub config: Config,
    pub latency: Latency,
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

/// What the client gets.
enum Delivery {
    Reply(Reply),
    /// The connection is closed without a response.
    Lost,
    /// Nothing, ever.
    NeverSent,
    /// `200 OK` and a body that takes a minute.
    Drip,
    /// `200 OK` and a body of this many bytes, chunked unless its length is given.
    Oversized {
        bytes: u64,
        content_length: bool,
    },
}

/// A response body: a whole reply, or a watch's stream of events.
type Body = BoxBody<Bytes, io::Error>;

async fn respond(shared: Arc<Shared>, req: Request<Incoming>) -> Result<Response<Body>, DropConnection> {
    let started = shared.started.elapsed();
    let (parts, body) = req.into_parts();
    // A body that fails to arrive is the client's problem; handle what we have.
    let body = body.collect().await.map(|b| b.to_bytes()).unwrap_or_default();
    let request = api_request(&parts, body);
    let mut hits = shared.lock().faults.on_request(&api::request_info(&shared.config, &request));
    let delivery = match inject(&shared.config, &request, hits.at(Stage::BeforeStore), None).await {
        Some(delivery) => delivery,
        None => {
            let reply = {
                let mut state = shared.lock();
                hits.edits_before.drain(..).for_each(|edit| edit(&mut state.store));
                let reply = api::handle(&shared.config, &mut state.store, &request);
                if (200..300).contains(&reply.status) && request.param("dryRun").is_none() {
                    let written: Value = serde_json::from_slice(&reply.body).unwrap_or_default();
                    hits.statuses_after.drain(..).for_each(|status| state.store.write_status(&written, status));
                }
                hits.edits_after.drain(..).for_each(|edit| edit(&mut state.store));
                reply
            };
            let injected = inject(&shared.config, &request, hits.at(Stage::AfterStore), Some(&reply)).await;
            injected.unwrap_or(Delivery::Reply(reply))
        }
    };
    if !matches!(delivery, Delivery::NeverSent) {
        delay(shared.latency.next()).await;
    }
    let status = match &delivery {
        Delivery::Reply(reply) => Some(reply.status),
        Delivery::Drip | Delivery::Oversized { .. } => Some(200),
        Delivery::Lost | Delivery::NeverSent => None,
    };
    let entry = log_entry(request, status, started, shared.started.elapsed());
    if let Some(observer) = &shared.config.on_request {
        observer(&entry);
    }
    shared.lock().log.push(entry);
    match delivery {
        Delivery::Reply(mut reply) => match reply.watch.take() {
            Some(watch) => Ok(watch_response(shared, reply, *watch)),
            None => Ok(json_response(reply, &shared.config).map(|body| body.map_err(|never| match never {}).boxed())),
        },
        Delivery::Lost => Err(DropConnection),
        Delivery::NeverSent => std::future::pending().await,
        Delivery::Drip => Ok(drip()),
        Delivery::Oversized { bytes, content_length } => Ok(oversized(bytes, content_length)),
    }
}

/// How often an open watch looks for new changes.
const WATCH_POLL: Duration = Duration::from_millis(10);

/// A watch's response: its reply's body (the initial events), then each change it selects as
/// it is stored, until its timeout (a clean end) or `FakeHandle::drop_watches` (the
/// connection cut mid-stream).
fn watch_response(shared: Arc<Shared>, reply: Reply, watch: Watch) -> Response<Body> {
    let (sender, receiver) = mpsc::channel(64);
    let drops = shared.lock().watch_drops;
    let deadline = watch.timeout.map(|timeout| Instant::now() + timeout);
    tokio::spawn(async move {
        if !reply.body.is_empty() && sender.send(Ok(Bytes::from(reply.body))).await.is_err() {
            return;
        }
        let mut after = watch.after;
        loop {
            let (lines, dropped) = {
                let state = shared.lock();
                let lines: Vec<Vec<u8>> = watch.lines(state.store.events_after(after)).collect();
                after = state.store.resource_version().parse().unwrap_or(after);
                (lines, state.watch_drops != drops)
            };
            if dropped {
                let _ = sender.send(Err(io::Error::other("watch cut off by the test"))).await;
                return;
            }
            for line in lines {
                if sender.send(Ok(Bytes::from(line))).await.is_err() {
                    return;
                }
            }
            if sender.is_closed() || deadline.is_some_and(|d| Instant::now() >= d) {
                return;
            }
            tokio::time::sleep(WATCH_POLL).await;
        }
    });
    let mut response = Response::new(WatchBody(receiver).boxed());
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// The body of a watch, of a dripping or of an oversized reply: what its task sends, an error cutting the
/// connection.
struct WatchBody(mpsc::Receiver<io::Result<Bytes>>);

impl hyper::body::Body for WatchBody {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<io::Result<Frame<Bytes>>>> {
        self.0.poll_recv(cx).map(|next| next.map(|chunk| chunk.map(Frame::data)))
    }
}

/// A reply whose body is a space every [`DRIP_EVERY`] for [`DRIP_FOR`], or until the client
/// hangs up.
fn drip() -> Response<Body> {
    let (sender, receiver) = mpsc::channel(1);
    let end = Instant::now() + DRIP_FOR;
    tokio::spawn(async move {
        while Instant::now() < end && sender.send(Ok(Bytes::from_static(b" "))).await.is_ok() {
            tokio::time::sleep(DRIP_EVERY).await;
        }
    });
    let mut response = Response::new(WatchBody(receiver).boxed());
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// A reply whose body is `{` and then spaces, `bytes` bytes in all, sent as fast as the client
/// reads it (or until it hangs up); chunked unless `content_length`.
fn oversized(bytes: u64, content_length: bool) -> Response<Body> {
    static SPACES: [u8; 1 << 16] = [b' '; 1 << 16];
    let (sender, receiver) = mpsc::channel(4);
    tokio::spawn(async move {
        let mut left = bytes;
        let mut chunk = Bytes::from_static(b"{");
        while left > 0 {
            chunk.truncate(left.min(chunk.len() as u64) as usize);
            left -= chunk.len() as u64;
            if sender.send(Ok(chunk)).await.is_err() {
                return;
            }
            chunk = Bytes::from_static(&SPACES);
        }
    });
    let mut response = Response::new(WatchBody(receiver).boxed());
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    if content_length {
        response.headers_mut().insert(header::CONTENT_LENGTH, HeaderValue::from(bytes));
    }
    response
}

/// Applies injected effects in order: holds wait for their release; the first other effect
/// decides what the client gets instead of `reply` (the request's real reply, `None` before
/// it is served).
async fn inject(
    config: &Config,
    request: &ApiRequest,
    effects: Vec<Effect>,
    reply: Option<&Reply>,
) -> Option<Delivery> {
    for effect in effects {
        return Some(match effect {
            Effect::Hold(pause) => {
                pause.hold().await;
                continue;
            }
            Effect::Status { code, retry_after } => Delivery::Reply(ApiError::injected(code, retry_after).into()),
            Effect::Conflict => Delivery::Reply(api::injected_conflict(config, request)),
            Effect::Late(late) => {
                late.keep(request);
                Delivery::Reply(ApiError::injected(504, None).into())
            }
            Effect::Reply(ReplyFault::Lost) => Delivery::Lost,
            Effect::Reply(ReplyFault::NeverSent) => Delivery::NeverSent,
            Effect::Reply(ReplyFault::Garbled) => Delivery::Reply(garbled(reply)),
            Effect::Reply(ReplyFault::Drip) => Delivery::Drip,
            Effect::Reply(ReplyFault::Oversized { bytes, content_length }) => {
                Delivery::Oversized { bytes, content_length }
            }
        });
    }
    None
}

/// `200 OK` with the first half of `reply`'s body (or of an empty Status): invalid JSON.
fn garbled(reply: Option<&Reply>) -> Reply {
    let body = reply.map_or_else(|| br#"{"kind":"Status"}"#.to_vec(), |r| r.body.clone());
    Reply { status: 200, body: body[..body.len() / 2].to_vec(), retry_after: None, watch: None, warnings: Vec::new() }
}

/// Waits `latency`, to within a fraction of a millisecond: tokio's timer rounds up to its
/// millisecond tick and wakes late, which added 1–3 ms to a 50 ms latency; a thread's sleep
/// uses the kernel's high-resolution timers.
async fn delay(latency: Duration) {
    if !latency.is_zero() {
        let _ = tokio::task::spawn_blocking(move || std::thread::sleep(latency)).await;
    }
}

/// The delay added to every response: fixed, or drawn per request from a seeded range.
pub(crate) struct Latency {
    pub min: Duration,
    pub max: Duration,
    /// The state of a splitmix64 generator: the same seed gives the same delays in the same
    /// request order.
    pub state: Mutex<u64>,
}

impl Latency {
    fn next(&self) -> Duration {
        if self.max <= self.min {
            return self.min;
        }
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        let span = (self.max - self.min).as_micros() as u64 + 1;
        self.min + Duration::from_micros(z % span)
    }
}

fn json_response(reply: Reply, config: &Config) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(reply.body)));
    *response.status_mut() =
        http::StatusCode::from_u16(reply.status).unwrap_or(http::StatusCode::INTERNAL_SERVER_ERROR);
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    let now = std::time::SystemTime::now();
    let clock = if config.clock_behind { now - config.clock_offset } else { now + config.clock_offset };
    if let Ok(date) = HeaderValue::from_str(&httpdate::fmt_http_date(clock)) {
        headers.insert(header::DATE, date);
    }
    if let Some(seconds) = reply.retry_after {
        headers.insert(header::RETRY_AFTER, HeaderValue::from(seconds));
    }
    for warning in &reply.warnings {
        let quoted = format!("299 - \"{}\"", warning.replace('\\', "\\\\").replace('"', "\\\""));
        if let Ok(value) = HeaderValue::from_str(&quoted) {
            headers.append(header::WARNING, value);
        }
    }
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
        impersonate_uid: header("impersonate-uid"),
        impersonate_groups: parts
            .headers
            .get_all("impersonate-group")
            .iter()
            .filter_map(|v| v.to_str().ok().map(str::to_owned))
            .collect(),
        user_agent: header("user-agent"),
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
        impersonate_uid: request.impersonate_uid,
        impersonate_groups: request.impersonate_groups,
        user_agent: request.user_agent,
        started,
        finished,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_latency_is_in_range_and_repeats_with_its_seed() {
        let latency =
            |seed| Latency { min: Duration::from_millis(10), max: Duration::from_millis(20), state: Mutex::new(seed) };
        let draw = |l: &Latency| (0..50).map(|_| l.next()).collect::<Vec<_>>();
        let (a, b, c) = (draw(&latency(1)), draw(&latency(1)), draw(&latency(2)));
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert!(a.iter().all(|d| (Duration::from_millis(10)..=Duration::from_millis(20)).contains(d)));
        let fixed = Latency { min: Duration::from_millis(5), max: Duration::from_millis(5), state: Mutex::new(0) };
        assert_eq!(fixed.next(), Duration::from_millis(5));
    }
}
