//! A fake Kubernetes API server for testing `kubectl-rollout-lua` end to end.
//!
//! It serves plain HTTP on `127.0.0.1` with Kubernetes semantics close enough that kube-rs
//! and kubectl behave as against a real cluster: legacy discovery, CRUD on namespaced and
//! cluster-scoped resources, the status subresource, optimistic concurrency with a global
//! resourceVersion, JSON / merge / apply patches, `dryRun=All`, deny rules and grants answered with
//! real 403 Status bodies and SelfSubjectAccessReviews, validating admission hooks, and
//! fault injection. Every request is logged for assertions.
//!
//! The server runs on its own thread and tokio runtime, so synchronous tests can start it,
//! run the CLI with [`std::process::Command`], and inspect the result:
//!
//! ```no_run
//! use fake_apiserver::{FakeApiServer, Rule};
//! use serde_json::json;
//!
//! let server = FakeApiServer::builder()
//!     .kruise_and_istio()
//!     .object(json!({
//!         "apiVersion": "rollouts.kruise.io/v1beta1",
//!         "kind": "Rollout",
//!         "metadata": { "name": "demo", "namespace": "demo" },
//!         "spec": {},
//!     }))
//!     .deny(Rule::new(["patch"]).resources(["rollouts/status"]))
//!     .start();
//! let dir = std::env::temp_dir();
//! server.write_kubeconfig(dir.join("kubeconfig"), "demo").unwrap();
//! // ... run the CLI with KUBECONFIG pointing there ...
//! assert!(server.writes().is_empty());
//! ```
//!
//! Faults are armed on the handle while the server runs, for the next or the k-th request
//! that a [`Requests`] selects (all, writes, or those a [`Rule`] matches), and apply before
//! the request is served or after it (a write stored, its outcome unknown to the client):
//! - [`FakeHandle::reply_fault`]: the reply lost (connection closed), garbled (a 200 with
//!   truncated JSON), never sent, dripping (a 200 whose body comes a byte at a time for a
//!   minute) or oversized (a 200 whose body of a given size comes as fast as it is read,
//!   chunked or with its length) ([`ReplyFault`]); [`FakeHandle::hang_all`]: a server that never answers again;
//! - [`FakeHandle::storm`]: 429/503 with `Retry-After` for the next N requests or until
//!   [`FakeHandle::clear_faults`]; `fail_next_writes`, `fail_request`, `conflict_next_writes`;
//! - [`FakeHandle::pause`]: hold a request until the test releases it, and wait until it is
//!   held (to signal the client exactly between two writes);
//! - [`FakeHandle::late_write`]: a 504 Timeout at once, the write stored later (when the
//!   test lands it), as kube-apiserver does with a write still processing after its timeout;
//! - [`FakeHandle::before_write`] / [`FakeHandle::after_write`]: a second writer's edit of
//!   the store around the k-th write;
//! - [`FakeHandle::controller_writes_status`]: a controller's status write right after each
//!   write of an object (a new resourceVersion the client did not make);
//! - [`Builder::latency_between`]: a seeded random delay per request, for races;
//! - [`FakeHandle::drop_watches`]: every open watch cut off mid-stream;
//!   [`FakeHandle::compact`]: watches from an older resourceVersion told it expired (410).
//!
//! Watches (`?watch=true`) stream every change after their `resourceVersion` (without one: an
//! ADDED event per object first) until their `timeoutSeconds`, with label and field selectors.
//!
//! Besides Kruise and Istio ([`kruise_and_istio`]), it serves Leases, Ingresses and HTTPRoutes
//! at v1 and v1beta1 ([`gateway_ingress_and_leases`]) with their server-side defaults, and
//! Services and Deployments ([`services`], [`deployments`]); [`plugin_kinds`] is all of them, as
//! the binary serves them.
//!
//! Authentication is not checked (kubectl sends no bearer token over plain HTTP) unless
//! [`Builder::expiring_tokens`] asks for tokens that expire; the `Authorization` header is
//! logged. [`Builder::clock_offset`] sets the server's clock (its replies' `Date`) apart from
//! the host's. The user is `fake-user` ([`Builder::user`]), or the `Impersonate-User`
//! header when sent; a SelfSubjectReview (`kubectl auth whoami`) names it.

mod api;
mod discovery;
mod faults;
mod log;
mod rbac;
mod resource;
mod selector;
mod server;
mod status;
mod store;

use std::collections::BTreeMap;
use std::io;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::oneshot;

pub use api::AdmissionRequest;
pub use faults::{DRIP_EVERY, DRIP_FOR, LateWrite, Pause, ReplyFault, Requests, Stage};
pub use log::{LoggedRequest, count_round_trips};
pub use rbac::{DEFAULT_USER, Rule};
pub use resource::{
    ApiResourceDef, Defaults, configmaps, deployments, destinationrules, gateway_ingress_and_leases, httproutes,
    ingresses, kruise_and_istio, leases, plugin_kinds, rollouts, services, trafficroutings, virtualservices,
};
pub use store::Store;

use api::{AdmissionHook, Config, MutatingHook, RequestObserver, State};
use faults::{Effect, Faults};
use server::{Latency, Shared};

/// Entry point: `FakeApiServer::builder()...start()`.
pub struct FakeApiServer;

impl FakeApiServer {
    pub fn builder() -> Builder {
        Builder::default()
    }
}

/// Configures a server before [`Builder::start`].
#[derive(Default)]
pub struct Builder {
    resources: Vec<ApiResourceDef>,
    preferred: BTreeMap<String, String>,
    objects: Vec<Value>,
    rules: Vec<Rule>,
    grants: Option<Vec<Rule>>,
    webhooks: Vec<(String, AdmissionHook)>,
    mutations: Vec<MutatingHook>,
    latency: (Duration, Duration, u64),
    port: u16,
    on_request: Option<RequestObserver>,
    clock_offset: (Duration, bool),
    token_validity: Option<Duration>,
    enforce_owner_references: bool,
    user: Option<String>,
    without_self_subject_reviews: bool,
}

impl Builder {
    /// Serves a resource (discovery and CRUD). `authorization.k8s.io/v1`
    /// selfsubjectaccessreviews is always served.
    pub fn resource(mut self, def: ApiResourceDef) -> Self {
        if !self.resources.contains(&def) {
            self.resources.push(def);
        }
        self
    }

    pub fn resources(self, defs: impl IntoIterator<Item = ApiResourceDef>) -> Self {
        defs.into_iter().fold(self, Self::resource)
    }

    /// Serves [`kruise_and_istio`]: Rollouts, TrafficRoutings, VirtualServices,
    /// DestinationRules and ConfigMaps.
    pub fn kruise_and_istio(self) -> Self {
        self.resources(kruise_and_istio())
    }

    /// Makes `version` the group's preferred version in discovery. Without it the
    /// preferred version is the most stable and newest one (`v1` > `v1beta1` >
    /// `v1alpha1`), as kube-apiserver orders CRD versions.
    pub fn preferred_version(mut self, group: &str, version: &str) -> Self {
        self.preferred.insert(group.to_owned(), version.to_owned());
        self
    }

    /// Seeds an object. It needs `apiVersion`, `kind` and `metadata.name` of a served
    /// resource; a namespaced object without namespace goes to `default`. The server
    /// assigns resourceVersion, and uid, creationTimestamp and generation unless given.
    pub fn object(mut self, object: Value) -> Self {
        self.objects.push(object);
        self
    }

    /// Seeds every object of a multi-document YAML text (`kind: List` documents are
    /// expanded).
    ///
    /// # Panics
    /// If the YAML does not parse: fixtures are part of the test.
    pub fn objects_from_yaml(mut self, yaml: &str) -> Self {
        let objects = parse_objects(yaml).unwrap_or_else(|e| panic!("bad fixture YAML: {e}"));
        self.objects.extend(objects);
        self
    }

    /// Adds a deny rule: matching requests get 403 Forbidden and matching
    /// SelfSubjectAccessReviews `allowed: false`. Discovery and the access reviews
    /// themselves are never denied.
    pub fn deny(mut self, rule: Rule) -> Self {
        self.rules.push(rule);
        self
    }

    /// Adds a grant: once one is given, only the requests and SelfSubjectAccessReviews that a
    /// grant matches are allowed, as RBAC allows only what a Role grants (a grant's `names`
    /// are a Role's resourceNames); deny rules still deny. Discovery and the access reviews
    /// themselves are never denied.
    pub fn grant(mut self, rule: Rule) -> Self {
        self.grants.get_or_insert_with(Vec::new).push(rule);
        self
    }

    /// The user requests come from when they impersonate nobody (default [`DEFAULT_USER`]):
    /// what deny rules and grants match, forbidden messages name and a SelfSubjectReview
    /// answers.
    pub fn user(mut self, user: &str) -> Self {
        self.user = Some(user.to_owned());
        self
    }

    /// Serves no `authentication.k8s.io/v1` selfsubjectreviews (404), as before Kubernetes
    /// 1.28. Otherwise a review answers with the user ([`Builder::user`], or the impersonated
    /// one), unless a deny rule matches `create` on `selfsubjectreviews`.
    pub fn without_self_subject_reviews(mut self) -> Self {
        self.without_self_subject_reviews = true;
        self
    }

    /// Runs the OwnerReferencesPermissionEnforcement admission plugin (OpenShift enables it):
    /// a create or write that sets an owner reference with `blockOwnerDeletion: true` gets 403
    /// Forbidden unless the deny rules and grants allow `update` on the owner's `finalizers`.
    pub fn enforce_owner_references(mut self) -> Self {
        self.enforce_owner_references = true;
        self
    }

    /// Adds a validating admission webhook named `webhook` (e.g. `validation.istio.io`).
    /// `Err(message)` rejects the write with 422 Invalid and the message
    /// `admission webhook "<webhook>" denied the request: <message>`. Hooks also run for
    /// dry runs, in the order added.
    pub fn admission(
        mut self,
        webhook: &str,
        hook: impl Fn(&AdmissionRequest) -> Result<(), String> + Send + Sync + 'static,
    ) -> Self {
        self.webhooks.push((webhook.to_owned(), Arc::new(hook)));
        self
    }

    /// Adds a mutating admission webhook: it may change every object of a resource (by plural)
    /// that is created, updated or patched, before the validating hooks and storage, as a
    /// defaulting or policy webhook does. Status subresource writes are left alone.
    pub fn mutation(mut self, hook: impl Fn(&str, &mut Value) + Send + Sync + 'static) -> Self {
        self.mutations.push(Arc::new(hook));
        self
    }

    /// Delays every response by `latency` (without blocking other requests).
    pub fn latency(mut self, latency: Duration) -> Self {
        self.latency = (latency, latency, 0);
        self
    }

    /// Delays every response by a time drawn from `min..=max` (to the microsecond), from a
    /// generator seeded with `seed`: the same seed draws the same delays in the same request
    /// order, so a race that fails can be replayed. For race tests of concurrent clients.
    pub fn latency_between(mut self, min: Duration, max: Duration, seed: u64) -> Self {
        self.latency = (min, max, seed);
        self
    }

    /// Checks bearer tokens as a cluster whose tokens expire does: a request is answered only with
    /// `Authorization: Bearer fake-token-<unix seconds>` issued at most `validity` ago (an exec
    /// credential plugin hands such tokens out), and 401 Unauthorized otherwise. Without it no
    /// token is checked.
    pub fn expiring_tokens(mut self, validity: Duration) -> Self {
        self.token_validity = Some(validity);
        self
    }

    /// Sets the server's clock `seconds` ahead of the host's (negative: behind): the `Date`
    /// header of every reply says so, as a server whose clock differs from the client's would.
    pub fn clock_offset(mut self, seconds: i64) -> Self {
        self.clock_offset = (Duration::from_secs(seconds.unsigned_abs()), seconds < 0);
        self
    }

    /// Listens on this port instead of an ephemeral one.
    pub fn port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    /// Calls `observer` with every request once its response is ready.
    pub fn on_request(mut self, observer: impl Fn(&LoggedRequest) + Send + Sync + 'static) -> Self {
        self.on_request = Some(Arc::new(observer));
        self
    }

    /// Starts serving on `127.0.0.1` in a background thread.
    ///
    /// # Panics
    /// If a seeded object is not of a served kind, or the port cannot be bound.
    pub fn start(self) -> FakeHandle {
        self.try_start().unwrap_or_else(|e| panic!("cannot start the fake API server: {e}"))
    }

    /// Like [`Builder::start`], returning errors instead of panicking.
    pub fn try_start(self) -> io::Result<FakeHandle> {
        let started = Instant::now();
        let mut store = Store::new(self.resources.clone());
        for object in self.objects {
            store.try_put(object).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        }
        let listener = std::net::TcpListener::bind(("127.0.0.1", self.port))?;
        listener.set_nonblocking(true)?;
        let address = listener.local_addr()?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("fake-apiserver-worker")
            .enable_all()
            .build()?;
        let listener = {
            let _context = runtime.enter();
            tokio::net::TcpListener::from_std(listener)?
        };
        let shared = Arc::new(Shared {
            config: Config {
                resources: self.resources,
                preferred: self.preferred,
                rules: self.rules,
                grants: self.grants,
                webhooks: self.webhooks,
                mutations: self.mutations,
                on_request: self.on_request,
                address: address.to_string(),
                token_validity: self.token_validity,
                clock_offset: self.clock_offset.0,
                clock_behind: self.clock_offset.1,
                enforce_owner_references: self.enforce_owner_references,
                user: self.user.unwrap_or_else(|| DEFAULT_USER.to_owned()),
                self_subject_reviews: !self.without_self_subject_reviews,
            },
            latency: Latency { min: self.latency.0, max: self.latency.1, state: Mutex::new(self.latency.2) },
            state: Mutex::new(State { store, faults: Faults::default(), log: Vec::new(), watch_drops: 0 }),
            started,
        });
        let (shutdown, shutdown_rx) = oneshot::channel();
        let serving = shared.clone();
        let thread = std::thread::Builder::new().name("fake-apiserver".into()).spawn(move || {
            runtime.block_on(server::serve(listener, serving, shutdown_rx));
            // Connections still open (keep-alive) are simply abandoned.
            runtime.shutdown_background();
        })?;
        Ok(FakeHandle { shared, address, shutdown: Some(shutdown), thread: Some(thread) })
    }
}

/// A running server. Dropping it stops the server.
pub struct FakeHandle {
    shared: Arc<Shared>,
    address: SocketAddr,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl FakeHandle {
    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.address)
    }

    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// A kubeconfig for this server: cluster `fake`, user `fake-user` without credentials
    /// (over plain HTTP kubectl sends none), current context `fake` in `namespace`, and a
    /// context `other` for the same server and user in namespace `other`.
    pub fn kubeconfig(&self, namespace: &str) -> String {
        // JSON strings are valid YAML scalars, which quotes the namespace safely.
        let namespace = Value::from(namespace);
        format!(
            "apiVersion: v1
kind: Config
clusters:
- name: fake
  cluster:
    server: {url}
contexts:
- name: fake
  context:
    cluster: fake
    user: fake-user
    namespace: {namespace}
- name: other
  context:
    cluster: fake
    user: fake-user
    namespace: other
current-context: fake
users:
- name: fake-user
  user: {{}}
preferences: {{}}
",
            url = self.url(),
        )
    }

    /// Writes [`FakeHandle::kubeconfig`] to `path`.
    pub fn write_kubeconfig(&self, path: impl AsRef<Path>, namespace: &str) -> io::Result<()> {
        std::fs::write(path, self.kubeconfig(namespace))
    }

    /// The stored object. `version` sets the `apiVersion` it is returned with, as a GET at
    /// that version would; `"*"` returns it as last written. `namespace` is `""` for
    /// cluster-scoped resources.
    /// A second handle on the same server for another thread (a stand-in controller, say); it
    /// does not own the server, which stops when the original handle is dropped.
    pub fn clone_handle(&self) -> FakeHandle {
        FakeHandle { shared: self.shared.clone(), address: self.address, shutdown: None, thread: None }
    }

    pub fn object(&self, group: &str, version: &str, plural: &str, namespace: &str, name: &str) -> Option<Value> {
        let mut object = self.shared.lock().store.get(group, plural, namespace, name)?.clone();
        if version != "*" {
            object["apiVersion"] = resource::group_version(group, version).into();
        }
        Some(object)
    }

    /// All objects of a resource in every namespace, sorted by namespace and name.
    pub fn objects(&self, group: &str, plural: &str) -> Vec<Value> {
        self.shared.lock().store.list(group, plural)
    }

    /// Creates or replaces an object as another client would, unconditionally; bumps the
    /// resourceVersion. See [`Store::put`].
    pub fn put_object(&self, object: Value) -> Value {
        self.shared.lock().store.put(object)
    }

    /// Patches an object as `kubectl patch` does, as another client would: `patch` is a JSON
    /// patch when it is a list (`--type json`), else a JSON merge patch (`--type merge`; the
    /// status subresource is part of the object here). Bumps the resourceVersion.
    pub fn patch_object(&self, group: &str, plural: &str, namespace: &str, name: &str, patch: &Value) -> Value {
        let mut shared = self.shared.lock();
        let mut object = shared.store.get(group, plural, namespace, name).expect("the object to patch").clone();
        match patch {
            Value::Array(_) => {
                let patch: json_patch::Patch = serde_json::from_value(patch.clone()).expect("a JSON patch");
                json_patch::patch(&mut object, &patch).expect("the JSON patch applies");
            }
            _ => json_patch::merge(&mut object, patch),
        }
        shared.store.put(object)
    }

    /// Deletes an object; returns it when it existed.
    pub fn delete_object(&self, group: &str, plural: &str, namespace: &str, name: &str) -> Option<Value> {
        self.shared.lock().store.delete(group, plural, namespace, name)
    }

    /// The current global resourceVersion; it only moves when something is written.
    pub fn resource_version(&self) -> String {
        self.shared.lock().store.resource_version()
    }

    /// Every request since start or [`FakeHandle::clear_log`], in arrival order.
    pub fn requests(&self) -> Vec<LoggedRequest> {
        let mut log = self.shared.lock().log.clone();
        log.sort_by_key(|r| r.started);
        log
    }

    /// The logged requests that may change state (see [`LoggedRequest::is_write`]).
    pub fn writes(&self) -> Vec<LoggedRequest> {
        self.requests().into_iter().filter(LoggedRequest::is_write).collect()
    }

    pub fn clear_log(&self) {
        self.shared.lock().log.clear();
    }

    /// Sequential round trips in the log; see [`count_round_trips`].
    pub fn round_trips(&self) -> usize {
        count_round_trips(&self.shared.lock().log)
    }

    /// The next `n` writes answer 409 Conflict (the usual "object has been modified"
    /// Status) without being applied, whatever their resourceVersion.
    ///
    /// Faults count requests from the moment they are armed, in arrival order; positions are
    /// 1-based (`k = 1` is the next one). A write is any POST, PUT, PATCH or DELETE except
    /// SelfSubjectAccessReviews. When several faults hit one request they apply in the order
    /// they were armed: holds first wait, then the first other fault decides the reply.
    pub fn conflict_next_writes(&self, n: usize) {
        self.shared.lock().faults.repeat(Requests::Writes, Some(n), Stage::BeforeStore, Effect::Conflict);
    }

    /// Runs `edit` on the store right before the `k`-th write from now (1 = the next) is
    /// handled, as another client writing between two of the client's writes (after any reads
    /// in between), so the `k`-th write genuinely conflicts.
    /// The server's state is locked meanwhile: `edit` must not call back into this handle.
    pub fn before_write(&self, k: usize, edit: impl FnOnce(&mut Store) + Send + 'static) {
        self.shared.lock().faults.before_write(k, Box::new(edit));
    }

    /// Runs `edit` on the store right after the `k`-th write from now is handled (stored or
    /// refused), before its reply is sent: another client's edit lands before the client can
    /// read anything again.
    pub fn after_write(&self, k: usize, edit: impl FnOnce(&mut Store) + Send + 'static) {
        self.shared.lock().faults.after_write(k, Box::new(edit));
    }

    /// From now on (until [`FakeHandle::clear_faults`]), right after each write that `requests`
    /// selects is stored (answered 2xx, not a dry run), the object it wrote gets `status`, in a
    /// write of its own under a new resourceVersion, before the reply is sent: a gateway or
    /// ingress controller acting on every change (an HTTPRoute's `status.parents`, an
    /// Ingress's `status.loadBalancer`). The client's next write conditional on the
    /// resourceVersion of its own write conflicts. A deletion leaves nothing to write to.
    ///
    /// ```no_run
    /// # let server = fake_apiserver::FakeApiServer::builder().start();
    /// use fake_apiserver::{Requests, Rule};
    /// let route_writes = Requests::Matching(Rule::new(["create", "update", "patch"]).resources(["httproutes"]));
    /// server.controller_writes_status(route_writes, serde_json::json!({"parents": []}));
    /// ```
    pub fn controller_writes_status(&self, requests: Requests, status: Value) {
        self.shared.lock().faults.write_status_after(requests, status);
    }

    /// The next `n` writes fail with `status` (e.g. 500 InternalError) without being applied.
    pub fn fail_next_writes(&self, n: usize, status: u16) {
        let effect = Effect::Status { code: status, retry_after: None };
        self.shared.lock().faults.repeat(Requests::Writes, Some(n), Stage::BeforeStore, effect);
    }

    /// The `k`-th request from now (1 = the next, any method) fails with `status`.
    pub fn fail_request(&self, k: usize, status: u16) {
        let effect = Effect::Status { code: status, retry_after: None };
        self.shared.lock().faults.once(Requests::All, k, Stage::BeforeStore, effect);
    }

    /// The `k`-th request selected by `requests` from now is served (a write is stored), and
    /// answered `status` (e.g. 503 ServiceUnavailable) instead of its reply: an API server, or a
    /// proxy before it, that failed after the write was stored.
    pub fn fail_after_store(&self, requests: Requests, k: usize, status: u16) {
        let effect = Effect::Status { code: status, retry_after: None };
        self.shared.lock().faults.once(requests, k, Stage::AfterStore, effect);
    }

    /// The `k`-th request from now gets no response: the connection is closed before the
    /// request is served.
    pub fn drop_connection_on_request(&self, k: usize) {
        self.reply_fault(Requests::All, k, Stage::BeforeStore, ReplyFault::Lost);
    }

    /// The `k`-th request selected by `requests` from now gets `fault` instead of its reply,
    /// before it is served (nothing is stored) or after (a write is stored, and the client
    /// cannot know it).
    ///
    /// ```no_run
    /// # let server = fake_apiserver::FakeApiServer::builder().start();
    /// use fake_apiserver::{ReplyFault, Requests, Rule, Stage};
    /// // The status patch is applied, but its reply is lost.
    /// let status_patch = Requests::Matching(Rule::new(["patch"]).resources(["rollouts/status"]));
    /// server.reply_fault(status_patch, 1, Stage::AfterStore, ReplyFault::Lost);
    /// ```
    pub fn reply_fault(&self, requests: Requests, k: usize, stage: Stage, fault: ReplyFault) {
        self.shared.lock().faults.once(requests, k, stage, Effect::Reply(fault));
    }

    /// From now on no request is ever answered (until [`FakeHandle::clear_faults`]; requests
    /// already hanging stay so): a server that accepts connections and never replies.
    pub fn hang_all(&self) {
        let effect = Effect::Reply(ReplyFault::NeverSent);
        self.shared.lock().faults.repeat(Requests::All, None, Stage::BeforeStore, effect);
    }

    /// From the `k`-th write from now on (that write included) no request is ever answered: a
    /// server that stops mid-run (until [`FakeHandle::clear_faults`]).
    pub fn hang_from_write(&self, k: usize) {
        self.shared.lock().faults.hang_from_write(k);
    }

    /// A storm: the next `count` requests selected by `requests` (`None`: all of them until
    /// [`FakeHandle::clear_faults`]) answer `status` (429 TooManyRequests, 503
    /// ServiceUnavailable, ...) with the apiserver's Status body, unserved. With
    /// `retry_after` (seconds) the reply has a `Retry-After` header and
    /// `details.retryAfterSeconds`, as the apiserver's overload protection sends.
    pub fn storm(&self, requests: Requests, count: Option<usize>, status: u16, retry_after: Option<u64>) {
        let effect = Effect::Status { code: status, retry_after };
        self.shared.lock().faults.repeat(requests, count, Stage::BeforeStore, effect);
    }

    /// Holds the `k`-th request selected by `requests` from now, before it is served or after
    /// (with its reply ready), until the returned [`Pause`] is released or dropped. A test
    /// waits with [`Pause::wait_until_held`] to act exactly between two writes:
    ///
    /// ```no_run
    /// # let server = fake_apiserver::FakeApiServer::builder().start();
    /// # let mut cli = std::process::Command::new("true").spawn().unwrap();
    /// use fake_apiserver::{Requests, Stage};
    /// use std::time::Duration;
    /// let second_write = server.pause(Requests::Writes, 2, Stage::BeforeStore);
    /// // ... start the CLI ...
    /// assert!(second_write.wait_until_held(Duration::from_secs(30)));
    /// // ... send it SIGTERM: the first write is stored, the second not yet ...
    /// second_write.release();
    /// ```
    pub fn pause(&self, requests: Requests, k: usize, stage: Stage) -> Pause {
        let pause = Pause::new();
        self.shared.lock().faults.once(requests, k, stage, pause.effect());
        pause
    }

    /// Answers the `k`-th request selected by `requests` from now `504 Timeout` at once ("the
    /// server was unable to return a response in the time allotted, but may still be
    /// processing the request"), unserved, and serves it when the test calls
    /// [`LateWrite::land`]: kube-apiserver's timeout filter answers so while the handler goes
    /// on, and the write may be stored after the client has read the object again. The late
    /// request is judged against the store as it is then (a resourceVersion precondition
    /// included) and is not logged again.
    ///
    /// ```no_run
    /// # let server = fake_apiserver::FakeApiServer::builder().start();
    /// use fake_apiserver::{Requests, Rule};
    /// use std::time::Duration;
    /// let approval = server.late_write(Requests::Matching(Rule::new(["patch"]).resources(["rollouts/status"])), 1);
    /// // ... run the CLI: it hears 504, reads the Rollout, sees it unapproved ...
    /// assert_eq!(approval.land(Duration::from_secs(30)), Some(200));
    /// ```
    pub fn late_write(&self, requests: Requests, k: usize) -> LateWrite {
        let late = Arc::new(faults::LateShared::default());
        self.shared.lock().faults.once(requests, k, Stage::BeforeStore, Effect::Late(late.clone()));
        LateWrite { shared: late, server: self.shared.clone() }
    }

    /// Cuts every open watch off mid-stream (the connection closed without the end of the
    /// response), as a restarting apiserver or a proxy does; watches opened later go on.
    pub fn drop_watches(&self) {
        self.shared.lock().watch_drops += 1;
    }

    /// Forgets the history of changes up to now, as etcd's compaction does: a watch from an
    /// older resourceVersion gets an ERROR event, 410 Expired.
    pub fn compact(&self) {
        self.shared.lock().store.compact();
    }

    /// Disarms every fault and pending store edit. Requests already held, hanging or delayed
    /// are not affected.
    pub fn clear_faults(&self) {
        self.shared.lock().faults.clear();
    }
}

impl Drop for FakeHandle {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            // The server may already be gone if its thread panicked.
            let _ = shutdown.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Parses multi-document YAML (or JSON) into objects, skipping empty documents and
/// expanding `kind: List` / `*List` documents into their items.
pub fn parse_objects(yaml: &str) -> Result<Vec<Value>, String> {
    let documents: Vec<Value> = serde_saphyr::from_multiple(yaml).map_err(|e| e.to_string())?;
    let mut objects = Vec::new();
    for document in documents {
        match document {
            Value::Null => {}
            Value::Object(_) if document["kind"].as_str().is_some_and(|k| k.ends_with("List")) => {
                let items = document["items"].as_array().cloned().unwrap_or_default();
                objects.extend(items);
            }
            Value::Object(_) => objects.push(document),
            other => return Err(format!("a YAML document is not an object: {other}")),
        }
    }
    Ok(objects)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_documents_and_lists() {
        let objects = parse_objects(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n---\n\
             apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: b}}\n",
        )
        .unwrap();
        let names: Vec<&str> = objects.iter().map(|o| o["metadata"]["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["a", "b"]);
        assert!(parse_objects("- 1\n").is_err());
    }
}
