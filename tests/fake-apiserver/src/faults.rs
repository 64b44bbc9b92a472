//! Fault injection, armed from the test through [`crate::FakeHandle`].
//!
//! Every armed fault selects requests ([`Requests`]), counts the ones it selects from the
//! moment it is armed, and hits some of them: "the k-th from now" is 1-based, so `k = 1` is
//! the next one. A hit applies the fault's [`Effect`] before the request is served (nothing
//! is stored) or after (the write is stored, but the client does not learn it). When several
//! faults hit one request, they apply in the order they were armed, and the first one that
//! answers (or withholds the answer) decides the reply.

use std::collections::BTreeMap;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::watch;

use crate::api::ApiRequest;
use crate::log::{SSAR_PATH, is_write};
use crate::rbac::{Attributes, Rule};
use crate::store::Store;

/// A mutation run against the store right before or after a write is handled.
pub(crate) type StoreEdit = Box<dyn FnOnce(&mut Store) + Send>;

/// Which requests a fault counts.
#[derive(Clone, Debug)]
pub enum Requests {
    /// Every request, discovery and access reviews included.
    All,
    /// POST, PUT, PATCH and DELETE, except SelfSubjectAccessReviews (see
    /// [`crate::LoggedRequest::is_write`]).
    Writes,
    /// SelfSubjectAccessReviews (what the client asks it may do).
    AccessReviews,
    /// Requests for served resources that `rule` matches, as a deny rule would (so a rule
    /// selects by verb, resource, subresource, namespace, name and user).
    Matching(Rule),
    /// The discovery of one group/version: `"apps/v1"` is `GET /apis/apps/v1`, `"v1"` is
    /// `GET /api/v1`.
    Discovery(&'static str),
}

/// When a fault applies to the request it hits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Before the request is served: a write is not stored.
    BeforeStore,
    /// After the request is served: a write is stored, the client just does not hear it.
    AfterStore,
}

/// What happens to the reply of a request a fault hits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplyFault {
    /// The connection is closed without a response.
    Lost,
    /// `200 OK` with the first half of the real body: truncated, invalid JSON.
    Garbled,
    /// No response ever: the connection stays open until the client gives up or the server
    /// stops.
    NeverSent,
    /// `200 OK`, then a space every [`DRIP_EVERY`] for [`DRIP_FOR`], then the end of the body
    /// (spaces only: not JSON): each byte comes in time, the reply only after a minute (a slow
    /// proxy, or a server stuck mid-reply). Ends sooner when the client gives up.
    Drip,
    /// `200 OK` and a body of `bytes` bytes in all, `{` then spaces (not JSON), as fast as the
    /// client reads it: a server or proxy gone wrong, for the client's bound on a reply. With
    /// `content_length` it says its length up front; else it is chunked, saying nothing. Ends
    /// sooner when the client hangs up.
    Oversized { bytes: u64, content_length: bool },
}

/// How often a dripping reply ([`ReplyFault::Drip`]) sends a byte.
pub const DRIP_EVERY: Duration = Duration::from_millis(200);
/// How long a dripping reply lasts.
pub const DRIP_FOR: Duration = Duration::from_secs(60);

/// What a fault does to a request it hits.
#[derive(Clone, Debug)]
pub(crate) enum Effect {
    /// Answer with this status code and the Status body the apiserver sends for it, with a
    /// `Retry-After` header (and `details.retryAfterSeconds`) when given.
    Status {
        code: u16,
        retry_after: Option<u64>,
    },
    /// Answer 409 "the object has been modified" for the requested object.
    Conflict,
    Reply(ReplyFault),
    /// Hold the request until the test releases it.
    Hold(Arc<PauseShared>),
    /// Answer 504 Timeout at once and keep the request for the test to serve later.
    Late(Arc<LateShared>),
}

impl Effect {
    /// Whether the effect decides the reply (anything but a hold, which only delays it).
    fn answers(&self) -> bool {
        !matches!(self, Effect::Hold(_))
    }
}

/// What the server knows of a request when faults are matched.
pub(crate) struct RequestInfo<'a> {
    pub method: &'a str,
    pub path: &'a str,
    /// The authorization attributes, for requests to served resources.
    pub attributes: Option<Attributes>,
}

impl Requests {
    fn selects(&self, request: &RequestInfo) -> bool {
        match self {
            Requests::All => true,
            Requests::Writes => is_write(request.method, request.path),
            Requests::AccessReviews => request.path == SSAR_PATH,
            Requests::Matching(rule) => request.attributes.as_ref().is_some_and(|a| rule.matches(a)),
            Requests::Discovery(api_version) => {
                let path = match api_version.contains('/') {
                    true => format!("/apis/{api_version}"),
                    false => format!("/api/{api_version}"),
                };
                request.path == path
            }
        }
    }
}

struct Armed {
    requests: Requests,
    /// Selected requests seen since the fault was armed.
    seen: u64,
    /// The first selected request it hits (1-based).
    from: u64,
    /// Hits left; `None` until cleared.
    hits_left: Option<u64>,
    stage: Stage,
    effect: Effect,
}

/// The effects that hit one request, and the store edits to run around it.
#[derive(Default)]
pub(crate) struct Hits {
    pub before: Vec<Effect>,
    pub after: Vec<Effect>,
    pub edits_before: Vec<StoreEdit>,
    pub edits_after: Vec<StoreEdit>,
    /// Statuses a controller writes to the object once the request has stored it.
    pub statuses_after: Vec<Value>,
}

impl Hits {
    /// The effects of `stage` that apply: every hold up to and including the first effect
    /// that answers.
    pub fn at(&mut self, stage: Stage) -> Vec<Effect> {
        let effects = std::mem::take(match stage {
            Stage::BeforeStore => &mut self.before,
            Stage::AfterStore => &mut self.after,
        });
        let mut applied = Vec::new();
        for effect in effects {
            let answers = effect.answers();
            applied.push(effect);
            if answers {
                break;
            }
        }
        applied
    }
}

#[derive(Default)]
pub(crate) struct Faults {
    writes_seen: u64,
    armed: Vec<Armed>,
    edits_before: BTreeMap<u64, Vec<StoreEdit>>,
    edits_after: BTreeMap<u64, Vec<StoreEdit>>,
    /// The writes a controller answers with a status write of its own, and that status.
    status_writers: Vec<(Requests, Value)>,
    /// The write (counted as `writes_seen`) from which on no request is answered.
    hang_from_write: Option<u64>,
}

impl Faults {
    /// Arms `effect` for the `k`-th selected request from now.
    pub fn once(&mut self, requests: Requests, k: usize, stage: Stage, effect: Effect) {
        self.arm(requests, nth(k), Some(1), stage, effect);
    }

    /// Arms `effect` for the next `n` selected requests, or all of them until cleared.
    pub fn repeat(&mut self, requests: Requests, n: Option<usize>, stage: Stage, effect: Effect) {
        self.arm(requests, 1, n.map(|n| n as u64), stage, effect);
    }

    fn arm(&mut self, requests: Requests, from: u64, hits_left: Option<u64>, stage: Stage, effect: Effect) {
        self.armed.push(Armed { requests, seen: 0, from, hits_left, stage, effect });
    }

    /// Disarms every fault and pending store edit. Requests already held or hanging stay so.
    pub fn clear(&mut self) {
        self.armed.clear();
        self.edits_before.clear();
        self.edits_after.clear();
        self.status_writers.clear();
        self.hang_from_write = None;
    }

    /// After every write `requests` selects that is stored, its object gets `status`.
    pub fn write_status_after(&mut self, requests: Requests, status: Value) {
        self.status_writers.push((requests, status));
    }

    /// From the `k`-th write from now on, that write included, no request is answered.
    pub fn hang_from_write(&mut self, k: usize) {
        self.hang_from_write = Some(self.writes_seen + nth(k));
    }

    pub fn before_write(&mut self, k: usize, edit: StoreEdit) {
        self.edits_before.entry(self.writes_seen + nth(k)).or_default().push(edit);
    }

    pub fn after_write(&mut self, k: usize, edit: StoreEdit) {
        self.edits_after.entry(self.writes_seen + nth(k)).or_default().push(edit);
    }

    /// Counts an arriving request; returns what hits it.
    pub fn on_request(&mut self, request: &RequestInfo) -> Hits {
        let mut hits = Hits::default();
        if is_write(request.method, request.path) {
            self.writes_seen += 1;
            hits.edits_before = self.edits_before.remove(&self.writes_seen).unwrap_or_default();
            hits.edits_after = self.edits_after.remove(&self.writes_seen).unwrap_or_default();
            let statuses = self.status_writers.iter().filter(|(requests, _)| requests.selects(request));
            hits.statuses_after = statuses.map(|(_, status)| status.clone()).collect();
            if self.hang_from_write == Some(self.writes_seen) {
                self.repeat(Requests::All, None, Stage::BeforeStore, Effect::Reply(ReplyFault::NeverSent));
            }
        }
        for armed in &mut self.armed {
            if !armed.requests.selects(request) {
                continue;
            }
            armed.seen += 1;
            if armed.seen < armed.from {
                continue;
            }
            match &mut armed.hits_left {
                Some(0) => continue,
                Some(left) => *left -= 1,
                None => {}
            }
            match armed.stage {
                Stage::BeforeStore => hits.before.push(armed.effect.clone()),
                Stage::AfterStore => hits.after.push(armed.effect.clone()),
            }
        }
        self.armed.retain(|a| a.hits_left != Some(0));
        hits
    }
}

fn nth(k: usize) -> u64 {
    assert!(k >= 1, "fault positions are 1-based: k = 1 is the next one");
    k as u64
}

/// A request held by the server until the test releases it: the test can wait until the
/// request is held, act (send a signal to the client, say), then let it go on. Dropping the
/// pause releases it, so a test never leaves a request held.
#[derive(Debug)]
#[must_use = "dropping the pause releases it"]
pub struct Pause {
    shared: Arc<PauseShared>,
}

/// The server's side of a [`Pause`].
#[derive(Debug)]
pub(crate) struct PauseShared {
    /// Requests held so far.
    held: Mutex<usize>,
    arrived: Condvar,
    released: watch::Sender<bool>,
}

impl Pause {
    pub(crate) fn new() -> Self {
        let shared = PauseShared { held: Mutex::new(0), arrived: Condvar::new(), released: watch::Sender::new(false) };
        Self { shared: Arc::new(shared) }
    }

    /// The effect that holds requests at this pause.
    pub(crate) fn effect(&self) -> Effect {
        Effect::Hold(self.shared.clone())
    }

    /// Waits until a request is held (at most `timeout`); returns whether one is.
    pub fn wait_until_held(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut held = self.shared.held.lock().unwrap_or_else(PoisonError::into_inner);
        while *held == 0 {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            held = self.shared.arrived.wait_timeout(held, left).unwrap_or_else(PoisonError::into_inner).0;
        }
        true
    }

    /// Lets held requests (and any that reach the pause later) go on.
    pub fn release(&self) {
        self.shared.released.send_replace(true);
    }
}

impl Drop for Pause {
    fn drop(&mut self) {
        self.release();
    }
}

/// A request answered 504 Timeout at once and served only when the test says so: a write the
/// API server goes on with after its timeout filter told the client it timed out (see
/// [`crate::FakeHandle::late_write`]).
#[must_use = "the write lands only through `LateWrite::land`"]
pub struct LateWrite {
    pub(crate) shared: Arc<LateShared>,
    pub(crate) server: Arc<crate::server::Shared>,
}

/// The server's side of a [`LateWrite`]: the request kept.
#[derive(Default)]
pub(crate) struct LateShared {
    request: Mutex<Option<ApiRequest>>,
    arrived: Condvar,
}

impl std::fmt::Debug for LateShared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LateShared")
    }
}

impl LateShared {
    /// Keeps `request` for the test to serve.
    pub(crate) fn keep(&self, request: &ApiRequest) {
        *self.request.lock().unwrap_or_else(PoisonError::into_inner) = Some(request.clone());
        self.arrived.notify_all();
    }
}

impl LateWrite {
    /// Serves the request kept (waiting at most `timeout` for it to arrive), as the API server
    /// would have: returns the status of the reply nobody hears, None when no request came.
    pub fn land(&self, timeout: Duration) -> Option<u16> {
        let deadline = Instant::now() + timeout;
        let mut kept = self.shared.request.lock().unwrap_or_else(PoisonError::into_inner);
        while kept.is_none() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return None;
            }
            kept = self.shared.arrived.wait_timeout(kept, left).unwrap_or_else(PoisonError::into_inner).0;
        }
        let request = kept.take()?;
        let mut state = self.server.lock();
        Some(crate::api::handle(&self.server.config, &mut state.store, &request).status)
    }
}

impl PauseShared {
    /// Holds the calling request until released.
    pub(crate) async fn hold(&self) {
        let mut released = self.released.subscribe();
        *self.held.lock().unwrap_or_else(PoisonError::into_inner) += 1;
        self.arrived.notify_all();
        // The sender lives in `self`, so the channel cannot close while we wait.
        let _ = released.wait_for(|released| *released).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request<'a>(method: &'a str, path: &'a str) -> RequestInfo<'a> {
        RequestInfo { method, path, attributes: None }
    }

    fn status(code: u16) -> Effect {
        Effect::Status { code, retry_after: None }
    }

    fn codes(effects: &[Effect]) -> Vec<u16> {
        effects
            .iter()
            .map(|e| match e {
                Effect::Status { code, .. } => *code,
                Effect::Conflict => 409,
                _ => 0,
            })
            .collect()
    }

    #[test]
    fn positions_are_relative_to_now_and_count_selected_requests() {
        let mut f = Faults::default();
        f.on_request(&request("GET", "/api"));
        f.once(Requests::Writes, 2, Stage::AfterStore, Effect::Reply(ReplyFault::Lost));
        f.once(Requests::All, 2, Stage::BeforeStore, status(500));
        assert!(f.on_request(&request("PUT", "/x")).after.is_empty());
        let second = f.on_request(&request("GET", "/x"));
        assert_eq!((codes(&second.before), second.after.len()), (vec![500], 0));
        let hit = f.on_request(&request("PATCH", "/x"));
        assert!(matches!(hit.after[..], [Effect::Reply(ReplyFault::Lost)]));
        assert!(f.armed.is_empty(), "spent faults are disarmed");
    }

    #[test]
    fn access_reviews_are_selected_apart_from_writes() {
        let mut f = Faults::default();
        f.once(Requests::AccessReviews, 1, Stage::BeforeStore, status(500));
        f.once(Requests::Writes, 1, Stage::BeforeStore, status(503));
        assert_eq!(codes(&f.on_request(&request("POST", SSAR_PATH)).before), [500]);
        assert_eq!(codes(&f.on_request(&request("POST", "/x")).before), [503]);
        assert!(f.armed.is_empty());
    }

    #[test]
    fn repeated_faults_hit_n_times_or_until_cleared() {
        let mut f = Faults::default();
        f.repeat(Requests::Writes, Some(2), Stage::BeforeStore, status(503));
        f.repeat(Requests::Writes, None, Stage::BeforeStore, Effect::Conflict);
        let mut seen = Vec::new();
        for _ in 0..3 {
            seen.push(codes(&f.on_request(&request("PUT", "/x")).at(Stage::BeforeStore)));
        }
        // The storm armed first answers while it lasts; the endless conflicts then take over.
        assert_eq!(seen, [vec![503], vec![503], vec![409]]);
        f.clear();
        assert!(f.on_request(&request("PUT", "/x")).before.is_empty());
    }

    #[test]
    fn holds_come_before_the_effect_that_answers() {
        let mut f = Faults::default();
        let pause = Pause::new();
        f.once(Requests::Writes, 1, Stage::BeforeStore, pause.effect());
        f.once(Requests::Writes, 1, Stage::BeforeStore, status(500));
        f.once(Requests::Writes, 1, Stage::BeforeStore, status(503));
        let applied = f.on_request(&request("POST", "/x")).at(Stage::BeforeStore);
        assert!(matches!(applied[0], Effect::Hold(_)));
        assert_eq!(codes(&applied[1..]), [500]);
    }

    #[test]
    fn store_edits_run_around_the_kth_write() {
        let mut f = Faults::default();
        f.before_write(2, Box::new(|_| {}));
        f.after_write(1, Box::new(|_| {}));
        let first = f.on_request(&request("PUT", "/x"));
        assert_eq!((first.edits_before.len(), first.edits_after.len()), (0, 1));
        f.on_request(&request("GET", "/x"));
        assert_eq!(f.on_request(&request("DELETE", "/x")).edits_before.len(), 1);
    }

    #[test]
    fn a_pause_is_released_when_the_test_drops_it() {
        let pause = Pause::new();
        let Effect::Hold(armed) = pause.effect() else { unreachable!() };
        assert!(!pause.wait_until_held(Duration::from_millis(10)));
        drop(pause);
        assert!(*armed.released.borrow());
    }
}
