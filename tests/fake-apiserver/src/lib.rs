//! A fake Kubernetes API server for testing `kubectl-rollout-lua` end to end.
//!
//! It serves plain HTTP on `127.0.0.1` with Kubernetes semantics close enough that kube-rs
//! and kubectl behave as against a real cluster: legacy discovery, CRUD on namespaced and
//! cluster-scoped resources, the status subresource, optimistic concurrency with a global
//! resourceVersion, JSON / merge / apply patches, `dryRun=All`, deny rules answered with
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
//! Authentication is not checked (kubectl sends no bearer token over plain HTTP); the
//! `Authorization` header is logged. The user is `fake-user`, or the `Impersonate-User`
//! header when sent.

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
pub use log::{LoggedRequest, count_round_trips};
pub use rbac::{DEFAULT_USER, Rule};
pub use resource::{
    ApiResourceDef, configmaps, destinationrules, kruise_and_istio, rollouts, trafficroutings, virtualservices,
};
pub use store::Store;

use api::{AdmissionHook, Config, MutatingHook, RequestObserver, State};
use faults::{Faults, RequestFault};
use server::Shared;

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
    webhooks: Vec<(String, AdmissionHook)>,
    mutations: Vec<MutatingHook>,
    latency: Duration,
    port: u16,
    on_request: Option<RequestObserver>,
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
        self.latency = latency;
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
                webhooks: self.webhooks,
                mutations: self.mutations,
                on_request: self.on_request,
                address: address.to_string(),
            },
            latency: self.latency,
            state: Mutex::new(State { store, faults: Faults::default(), log: Vec::new() }),
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

    /// A kubeconfig for this server: cluster `fake`, user `fake-user` with a bearer token,
    /// current context `fake` in `namespace`, and a context `other` for the same server
    /// and user in namespace `other`.
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
  user:
    token: fake-token
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
    /// For all write faults, a write is any POST, PUT, PATCH or DELETE except
    /// SelfSubjectAccessReviews, counted when it arrives (before authorization).
    pub fn conflict_next_writes(&self, n: usize) {
        self.shared.lock().faults.conflict_next_writes(n);
    }

    /// Runs `edit` on the store right before the `k`-th write from now (1 = the next) is
    /// handled, e.g. another actor modifying the object so the write genuinely conflicts.
    /// The server's state is locked meanwhile: `edit` must not call back into this handle.
    pub fn before_write(&self, k: usize, edit: impl FnOnce(&mut Store) + Send + 'static) {
        self.shared.lock().faults.before_write(k, Box::new(edit));
    }

    /// The next `n` writes fail with `status` (e.g. 500 InternalError) without being
    /// applied. Takes precedence over [`FakeHandle::conflict_next_writes`].
    pub fn fail_next_writes(&self, n: usize, status: u16) {
        self.shared.lock().faults.fail_next_writes(n, status);
    }

    /// The `k`-th request from now (1 = the next, any method) fails with `status`.
    pub fn fail_request(&self, k: usize, status: u16) {
        self.shared.lock().faults.request_fault(k, RequestFault::Fail(status));
    }

    /// The `k`-th request from now gets no response: the connection is closed.
    pub fn drop_connection_on_request(&self, k: usize) {
        self.shared.lock().faults.request_fault(k, RequestFault::Drop);
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
