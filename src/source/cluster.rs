//! The cluster edge: a kube client built the way kubectl builds its own (kubeconfig, context,
//! namespace, impersonation, timeout), targeted discovery cached on disk, and the few reads and
//! writes the commands need. Everything returned is plain JSON for the pure core.

use super::causes::find_cause;
use super::deadline::DeadlineLayer;
pub use super::exec_plugin::Terminal;
use super::exec_plugin::{Authenticate, Credential, PluginToken};
use super::files::{self, Existing};
use super::overrides::{Overrides, Selected};
use super::proxy::ProxyEnv;
use super::retry::Retries;
use super::token_file::TokenFile;
use crate::change::{Change, Request, being_deleted};
use crate::error::{ApiFailure, CONNECTION_REFUSED, Error, NOT_A_STATUS, NOT_JSON, TIMED_OUT, TOO_LARGE};
use crate::model::{ObjectKey, Permission};
use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use http::Uri;
use http_body_util::{LengthLimitError, Limited};
use k8s_openapi::api::authentication::v1::SelfSubjectReview;
use k8s_openapi::api::authorization::v1::{ResourceAttributes, SelfSubjectAccessReview, SelfSubjectAccessReviewSpec};
use kube::Client;
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams, Preconditions};
use kube::client::ClientBuilder;
use kube::config::AuthInfo;
use kube::core::{ApiResource, GroupVersionKind};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};
use tokio::sync::OnceCell;
use tower::buffer::BufferLayer;
use tower::retry::RetryLayer;
use tower::util::{MapRequestLayer, MapResponseLayer};

/// The field manager named in writes.
pub const FIELD_MANAGER: &str = "kubectl-rollout-lua";
/// How long a discovery document stays fresh on disk (kubectl keeps its own for hours; plural
/// names almost never change, and a 404 refreshes it early).
const DISCOVERY_TTL: Duration = Duration::from_secs(600);
/// The most of a discovery cache file read: a group's resources are a few KB.
const MAX_CACHE_FILE: usize = 1 << 20;

/// The time limit of one request when `--request-timeout` is not given: long enough for any
/// request this tool makes to a healthy (even slow, distant) API server, short enough that a
/// server that never answers is reported while the user still waits for it.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// The most one reply may hold (its body, as read). An object is at most 1.5 MiB (etcd's limit),
/// so only a LIST of very many objects comes near it; a server or proxy that sends without end
/// is cut off here instead of filling the memory.
pub const MAX_REPLY: usize = 256 << 20;

/// From how many objects of one resource reading them is one LIST rather than a GET each.
const LIST_FROM: usize = 4;

/// kubectl's connection flags.
#[derive(Clone, Debug, Default)]
pub struct ConnectionArgs {
    pub kubeconfig: Option<PathBuf>,
    pub context: Option<String>,
    pub namespace: Option<String>,
    pub as_user: Option<String>,
    pub as_uid: Option<String>,
    pub as_groups: Vec<String>,
    /// The flags that override the kubeconfig's cluster and user (`--server`, `--token`, …).
    pub overrides: Overrides,
    /// `--request-timeout`: `None` when not given ([`DEFAULT_REQUEST_TIMEOUT`]), zero for no
    /// limit.
    pub request_timeout: Option<Duration>,
    /// Whether an exec credential plugin may use the terminal (not during shell completion).
    pub plugin_terminal: Terminal,
}

impl ConnectionArgs {
    /// The time limit of one request; `None` for none.
    pub fn request_limit(&self) -> Option<Duration> {
        self.request_timeout.or(Some(DEFAULT_REQUEST_TIMEOUT)).filter(|t| !t.is_zero())
    }
}

#[derive(Clone)]
pub struct Cluster {
    pub client: Client,
    /// The namespace commands work in: `-n`, else the context's, else `default`.
    pub namespace: String,
    /// The kubeconfig context (for records; empty with `-s` and no context).
    pub context: String,
    /// Where the cluster's settings come from, for messages.
    origin: Origin,
    /// The folder of this cluster's backups (see [`backup_folder`]).
    pub backup_folder: String,
    /// The impersonated user, when `--as` (or the kubeconfig user's `as`) gives one.
    pub user: Option<String>,
    /// Who the API server takes this client for, once asked (`Cluster::whoami`).
    whoami: Arc<OnceCell<Option<String>>>,
    /// The API server's URL, for messages.
    pub server: String,
    /// The proxy requests go through, if any, for messages.
    proxy: Option<String>,
    /// The time limit of one request (for messages); `None` for none.
    request_limit: Option<Duration>,
    discovery_dir: Option<PathBuf>,
    /// Discovery read (or being read) in this run, by `group/version`: the Rollouts that `status`
    /// reads at once wait for one request for their workloads' group, not one each.
    discovered: Arc<Mutex<HashMap<String, Discovered>>>,
    /// The `group/version`s the API server answered about in this run (not the disk cache).
    asked: Arc<Mutex<HashSet<String>>>,
    /// What the server answered to `GET /version` when that is not what a Kubernetes API server
    /// answers (`None`: it is one); asked once a run, only when discovery found nothing or a
    /// reply was not JSON (see `Cluster::check_api_server`).
    not_an_api_server: Arc<OnceCell<Option<String>>>,
    clock: ServerClock,
    /// How many of the latest requests in a row got no answer: each timed out, or its connection
    /// was refused (see `Cluster::answering`).
    unanswered: Arc<AtomicUsize>,
}

/// Where the cluster's settings come from, as messages name it: a kubeconfig context (none with
/// `-s` and no kubeconfig context), and whether `--server` replaced its server.
#[derive(Clone, Debug)]
struct Origin {
    context: String,
    server_flag: bool,
}

impl Origin {
    /// ` (context NAME)`; nothing without a context.
    fn in_context(&self) -> String {
        match self.context.is_empty() {
            true => String::new(),
            false => format!(" (context {})", self.context),
        }
    }

    /// ` of context NAME`; nothing without a context.
    fn of_context(&self) -> String {
        match self.context.is_empty() {
            true => String::new(),
            false => format!(" of context {}", self.context),
        }
    }

    /// Whose TLS and proxy settings are used: the context's cluster, or the flags'.
    fn cluster(&self) -> String {
        match self.context.is_empty() {
            true => "the cluster the connection flags name (no kubeconfig context)".into(),
            false => format!("the cluster of context {} in the kubeconfig", self.context),
        }
    }

    /// Where the server's URL is set.
    fn server(&self) -> String {
        match self.server_flag {
            true => "--server".into(),
            false => format!("server of {}", self.cluster()),
        }
    }
}

/// A group/version's resources (`None`: not served), once read.
type Discovered = Arc<OnceCell<Option<Vec<Resource>>>>;

/// The API server's clock, from the `Date` header of its latest reply and the time passed since
/// (on this host, a sleep counted: `Moment`): times compared with what other hosts wrote (a
/// claim's renewal) are judged on the one clock they share, not on this host's, which may be off.
#[derive(Clone, Default)]
struct ServerClock(Arc<Mutex<Option<(SystemTime, crate::time::Moment)>>>);

impl ServerClock {
    fn saw<B>(&self, response: &http::Response<B>) {
        let date = response.headers().get(http::header::DATE).and_then(|d| d.to_str().ok());
        if let Some(date) = date.and_then(crate::time::parse_http_date) {
            *self.0.lock().expect("not poisoned") = Some((date, crate::time::Moment::now()));
        }
    }

    fn now(&self) -> Option<SystemTime> {
        let (date, seen) = (*self.0.lock().expect("not poisoned"))?;
        Some(date + seen.elapsed())
    }
}

/// What a watch reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Watched {
    /// An object was added, changed or deleted, at `version`.
    Changed { version: String, namespace: String, name: String },
    /// Nothing changed; the watch is at this version (a bookmark).
    At(String),
    /// The version watched from is gone from the server's history (410 Expired): list again.
    Expired,
}

/// A served resource: its API coordinates and scope.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resource {
    pub group: String,
    pub version: String,
    pub kind: String,
    pub plural: String,
    pub namespaced: bool,
}

impl Resource {
    pub fn api_resource(&self) -> ApiResource {
        ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(&self.group, &self.version, &self.kind), &self.plural)
    }

    /// `group/version`, or `version` for the core group.
    pub fn api_version(&self) -> String {
        api_version(&self.group, &self.version)
    }

    /// `verb` on this resource (or its `subresource`) in `namespace`.
    pub fn permission(&self, verb: &str, subresource: Option<&str>, namespace: &str) -> Permission {
        Permission::new(verb, &self.group, &self.plural, subresource, namespace)
    }

    /// What writing `change` to an object of this resource in `namespace` needs: `get` (to
    /// read it again when a reply is lost or a write conflicts), and the verbs that send and
    /// undo the change, each on the object (a Role may grant them by name).
    pub fn write_permissions(&self, change: &Change, namespace: &str) -> Vec<Permission> {
        let verbs = std::iter::once(&"get").chain(change.verbs());
        let name = &change.key().name;
        verbs.map(|verb| self.permission(verb, change.subresource(), namespace).on(name)).collect()
    }

    /// `virtualservices.networking.istio.io`, as kubectl names resources.
    pub fn qualified(&self) -> String {
        if self.group.is_empty() { self.plural.clone() } else { format!("{}.{}", self.plural, self.group) }
    }
}

#[derive(Serialize, Deserialize)]
struct CachedResources {
    resources: Vec<Resource>,
}

/// What of an identity `user` holds (`its user has a token`), if anything.
fn credentials_held(user: &AuthInfo) -> Option<&'static str> {
    let held = [
        (user.token.is_some() || user.token_file.is_some(), "its user has a token"),
        (user.exec.is_some(), "its user has an exec credential plugin"),
        (user.auth_provider.is_some(), "its user has an auth-provider"),
        (user.username.is_some() || user.password.is_some(), "its user has a username and password"),
        (
            user.client_certificate.is_some() || user.client_certificate_data.is_some(),
            "its user has a client certificate",
        ),
    ];
    held.into_iter().find_map(|(held, what)| held.then_some(what))
}

impl Cluster {
    pub async fn connect(args: &ConnectionArgs) -> Result<Cluster, Error> {
        let overrides = &args.overrides;
        let mut kubeconfig = super::kubeconfig::read(args.kubeconfig.as_deref(), overrides.server.is_some())?;
        let context = args.context.clone().or_else(|| kubeconfig.current_context.clone()).unwrap_or_default();
        let contexts: Vec<String> = kubeconfig.contexts.iter().map(|c| c.name.clone()).collect();
        let own_server = super::kubeconfig::server_of_context(&kubeconfig, &context);
        let origin = Origin { context: context.clone(), server_flag: overrides.server.is_some() };
        let selected = overrides.apply(&mut kubeconfig, &context, args.context.is_some())?;
        super::kubeconfig::check_named_files(&kubeconfig, &selected, overrides)?;
        let Selected { cluster: cluster_name, user } = selected;
        let proxy_url = super::kubeconfig::proxy_url(&kubeconfig, cluster_name.as_deref());
        let tls = super::kubeconfig::add_server_scheme(&mut kubeconfig, cluster_name.as_deref());
        super::kubeconfig::check_server(&kubeconfig, cluster_name.as_deref(), &context)?;
        // What kubectl checks of the user's credentials and the server's TLS settings, it
        // checks only where it uses them: over TLS (see below).
        if tls {
            super::kubeconfig::check_tokens(&kubeconfig, &user)?;
            super::kubeconfig::check_insecure(&kubeconfig, cluster_name.as_deref(), &context)?;
        }
        if let Some(warning) = super::kubeconfig::missing_user(&kubeconfig, &user, &context) {
            crate::stderr::line(&warning);
        }
        // The entries selected, which may be ones the flags made (a user for --token where the
        // context names none).
        let selected = Selected { cluster: cluster_name, user: user.clone() };
        let mut config = super::kubeconfig::config_of(&kubeconfig, args.context.as_deref(), &selected)
            .map_err(|e| super::kubeconfig::context_error(&contexts, &context, args.context.is_some(), e))?;
        // A CA that holds no PEM certificate would make an empty trust store: every server would
        // then be refused as signed by an unknown authority.
        if config.root_cert.as_ref().is_some_and(Vec::is_empty) {
            return Err(Error::Input(format!(
                "the certificate-authority (or certificate-authority-data) of {} holds no PEM certificate (kubectl refuses it too: unable to load root certificates)",
                origin.cluster()
            )));
        }
        config.proxy_url = super::proxy::proxy_for(&config.cluster_url, proxy_url.as_deref(), &ProxyEnv::read())
            .map_err(|why| Error::Input(format!("connecting to {}: {why}", origin.cluster())))?;
        // A plain-HTTP server (kubectl proxy, a local test server) never does TLS, unless through
        // an https:// proxy; an empty root store spares loading the system's certificates, which
        // costs more than the request.
        let tls_to_the_proxy = config.proxy_url.as_ref().is_some_and(|p| p.scheme_str() == Some("https"));
        if config.cluster_url.scheme_str() == Some("http") && config.root_cert.is_none() && !tls_to_the_proxy {
            config.root_cert = Some(Vec::new());
        }
        if let Some(user) = &args.as_user {
            config.auth_info.impersonate = Some(user.clone());
        }
        if let Some(uid) = &args.as_uid {
            config.auth_info.impersonate_uid = Some(uid.clone());
        }
        if !args.as_groups.is_empty() {
            config.auth_info.impersonate_groups = Some(args.as_groups.clone());
        }
        super::kubeconfig::check_impersonation(&config.auth_info, &user)?;
        // As kubectl (clientcmd): a user's credentials go to an https:// server only; to a
        // plain-HTTP one (kubectl proxy, a port-forward, a mistyped URL) they would cross the
        // network readable. Whom to impersonate goes either way (kubectl proxy passes it on).
        if !tls {
            if let Some(held) = credentials_held(&config.auth_info) {
                crate::stderr::line(&format!(
                    "warning: the server{} is plain HTTP ({}): the user's credentials are not sent to it ({held}), as kubectl sends none over HTTP; use an https:// server",
                    origin.of_context(),
                    config.cluster_url
                ));
            }
            let user = std::mem::take(&mut config.auth_info);
            config.auth_info = AuthInfo {
                impersonate: user.impersonate,
                impersonate_uid: user.impersonate_uid,
                impersonate_groups: user.impersonate_groups,
                impersonate_user_extra: user.impersonate_user_extra,
                ..Default::default()
            };
        }
        super::kubeconfig::complete_basic_auth(&mut config.auth_info);
        super::kubeconfig::check_auth_provider(&config.auth_info, &user)?;
        // The limit is one deadline per request (super::deadline), not kube's timeouts: its
        // read timeout starts again whenever data arrives, so a trickling reply never hit it.
        let request_limit = args.request_limit();
        config.connect_timeout = None;
        config.read_timeout = None;
        config.write_timeout = None;
        // Retries are ours (see super::retry): kube's retried for minutes, without a word.
        config.default_retry = false;
        let mut plugin_token = None;
        if let Some(exec) = exec_plugin_to_run(&mut config.auth_info) {
            let (request_timeout, terminal) = (args.request_timeout, args.plugin_terminal);
            match super::exec_plugin::run(&exec, request_timeout, terminal).await? {
                Credential::Token { token, expires } => {
                    plugin_token = Some(PluginToken::new(exec, request_timeout, terminal, token, expires));
                }
                Credential::Certificate { certificate, key } => {
                    // The kubeconfig's form: base64 of the PEM text.
                    config.auth_info.client_certificate_data = Some(BASE64.encode(certificate));
                    config.auth_info.client_key_data = Some(BASE64.encode(key).into());
                }
            }
        }
        // kube would send the file's token untrimmed, and a token beside it instead. client-go
        // sends the file's, and the token beside it only while the file cannot be read.
        let token_file = match super::kubeconfig::token_file(&config.auth_info) {
            Some(path) => match TokenFile::read(Path::new(path), &user) {
                Ok(file) => Some(Arc::new(file)),
                Err(_) if config.auth_info.token.is_some() => None,
                Err(e) => return Err(e),
            },
            None => None,
        };
        if token_file.is_some() {
            config.auth_info.token_file = None;
            config.auth_info.token = None;
        }
        let namespace = args.namespace.clone().unwrap_or_else(|| config.default_namespace.clone());
        let server = config.cluster_url.to_string();
        let backup_folder = match overrides.server.is_some() || overrides.cluster.is_some() {
            true => backup_folder(&context, own_server.as_deref(), &config.cluster_url),
            false => context.clone(),
        };
        let user = config.auth_info.impersonate.clone();
        let proxy = config.proxy_url.as_ref().map(Uri::to_string);
        let discovery_dir = files::xdg_dir("XDG_CACHE_HOME", ".cache")
            .map(|home| home.join("kubectl-rollout-lua/discovery").join(cache_key(&config.cluster_url)));
        let connecting =
            |e: kube::Error| Error::Input(format!("connecting to the cluster: {}", client_setup_failure(&e)));
        // The retry policy needs a service it can clone; kube's stack is boxed, so a buffer
        // (as kube's own Client puts in front of it) makes it one.
        let (clock, unanswered) = (ServerClock::default(), Arc::new(AtomicUsize::new(0)));
        let noting_the_date = {
            let (clock, unanswered) = (clock.clone(), unanswered.clone());
            move |response| {
                clock.saw(&response);
                unanswered.store(0, Ordering::Relaxed);
                response
            }
        };
        // The API server's warnings (a deprecated version, an admission webhook's), each said
        // once, as kubectl says them.
        let saying_the_warnings = {
            let said = Arc::new(Mutex::new(HashSet::new()));
            move |response: http::Response<_>| {
                for warning in server_warnings(response.headers()) {
                    if said.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(warning.clone()) {
                        crate::stderr::line(&format!("Warning: {warning}"));
                    }
                }
                response
            }
        };
        // The platform as Go names it (GOOS/GOARCH), as kubectl's says it.
        let arch = match std::env::consts::ARCH {
            "x86_64" => "amd64",
            "aarch64" => "arm64",
            "x86" => "386",
            other => other,
        };
        let user_agent = http::HeaderValue::from_str(&format!(
            "kubectl-rollout-lua/v{} ({}/{arch})",
            env!("CARGO_PKG_VERSION"),
            std::env::consts::OS
        ))
        .expect("a version and a platform are header text");
        let builder = ClientBuilder::try_from(config)
            .map_err(connecting)?
            // Each attempt, as sent (inside the retries).
            .with_layer(&tower::util::option_layer(super::request_log::layer(&server)))
            // Each reply's body is cut off past MAX_REPLY, counted as it is read (a chunked
            // reply says no length up front).
            .with_layer(&MapResponseLayer::new(|response: http::Response<_>| {
                response.map(|body| Limited::new(body, MAX_REPLY))
            }))
            .with_layer(&MapResponseLayer::new(noting_the_date))
            .with_layer(&MapResponseLayer::new(saying_the_warnings))
            // Named as kubectl names itself (`kubectl/v1.32.4 (linux/amd64) …`): audit logs
            // can tell this tool apart.
            .with_layer(&MapRequestLayer::new(move |mut request: http::Request<kube::client::Body>| {
                request.headers_mut().insert(http::header::USER_AGENT, user_agent.clone());
                request
            }))
            .with_layer(&BufferLayer::new(REQUESTS_IN_FLIGHT))
            .with_layer(&RetryLayer::new(Retries::default()))
            // Around the retries, as kubectl's limit is: a request ends within it, retries and all.
            .with_layer(&DeadlineLayer(request_limit))
            // A token from an exec plugin is put on each request here, and renewed as it expires
            // (a plugin that takes long is bounded by its own limit, not the request's).
            .with_layer(&tower::util::option_layer(plugin_token.map(Authenticate)))
            .with_layer(&tower::util::option_layer(token_file.map(|file| {
                MapRequestLayer::new(move |mut request: http::Request<kube::client::Body>| {
                    request.headers_mut().insert(http::header::AUTHORIZATION, file.header());
                    request
                })
            })));
        let client = builder.build();
        Ok(Cluster {
            client,
            namespace,
            context,
            origin,
            backup_folder,
            user,
            whoami: Default::default(),
            server,
            proxy,
            request_limit,
            discovery_dir,
            discovered: Default::default(),
            asked: Default::default(),
            not_an_api_server: Default::default(),
            clock,
            unanswered,
        })
    }

    /// Whether the API server is taken to answer: not once two requests in a row got no answer
    /// (each timed out, or its connection was refused), until one is answered (any answer, an
    /// error too). One alone may have been slow (a webhook), the server answering the next.
    pub fn answering(&self) -> bool {
        self.unanswered.load(Ordering::Relaxed) < 2
    }

    /// Now on the API server's clock (see `ServerClock`), or on this host's before any reply
    /// named its date.
    pub fn server_now(&self) -> SystemTime {
        self.clock.now().unwrap_or_else(SystemTime::now)
    }

    /// The resources served at `group/version`, from the disk cache when fresh (with `refresh`,
    /// from the API server, once a run: asked already, its answer stands); `None` when the API
    /// server does not serve that version.
    pub async fn resources(&self, group: &str, version: &str, refresh: bool) -> Result<Option<Vec<Resource>>, Error> {
        let api_version = api_version(group, version);
        // Both name a folder of the discovery cache and a path of the request.
        if !is_group(group) || !is_version(version) {
            return Err(not_an_api_version(&api_version));
        }
        if refresh && !self.asked.lock().expect("not poisoned").contains(&api_version) {
            let found = self.discover(group, version, &api_version, true).await?;
            let known = Arc::new(OnceCell::new_with(Some(found.clone())));
            self.discovered.lock().expect("not poisoned").insert(api_version, known);
            return Ok(found);
        }
        let known = Arc::clone(self.discovered.lock().expect("not poisoned").entry(api_version.clone()).or_default());
        known.get_or_try_init(|| self.discover(group, version, &api_version, false)).await.cloned()
    }

    async fn discover(
        &self,
        group: &str,
        version: &str,
        api_version: &str,
        refresh: bool,
    ) -> Result<Option<Vec<Resource>>, Error> {
        let cache = self
            .discovery_dir
            .as_ref()
            .map(|d| d.join(if group.is_empty() { CORE_FOLDER } else { group }).join(format!("{version}.json")));
        if !refresh && let Some(cached) = cache.as_ref().and_then(|path| read_fresh(path)) {
            return Ok(Some(cached.resources));
        }
        // The core group is served under /api, the others under /apis.
        let listed = match group.is_empty() {
            true => self.client.list_core_api_resources(version).await,
            false => self.client.list_api_group_resources(api_version).await,
        };
        // Answered (served or not): this run's answer, which a refresh need not ask again.
        let answered = || self.asked.lock().expect("not poisoned").insert(api_version.to_string());
        let list = match listed {
            Ok(list) => {
                answered();
                list
            }
            Err(kube::Error::Api(status)) if status.code == 404 => {
                self.check_api_server().await?;
                answered();
                return Ok(None);
            }
            Err(e) => {
                if matches!(e, kube::Error::SerdeError(_)) {
                    self.check_api_server().await?;
                }
                return Err(self.failure(&format!("discovering {api_version}"), e));
            }
        };
        let resources: Vec<Resource> = list
            .resources
            .into_iter()
            .filter(|r| !r.name.contains('/'))
            .map(|r| Resource {
                group: group.into(),
                version: version.into(),
                kind: r.kind,
                plural: r.name,
                namespaced: r.namespaced,
            })
            .collect();
        if let Some(path) = cache {
            // The cache is an optimisation: failing to write it is not an error. Written whole, so
            // that a run reading it meanwhile never sees half of it, and whatever was there (even
            // a FIFO, which an open to write would wait on) is replaced.
            let bytes = serde_json::to_vec(&CachedResources { resources: resources.clone() }).unwrap_or_default();
            let _ = std::fs::create_dir_all(path.parent().unwrap_or(&path))
                .and_then(|_| files::write_whole(&path, &bytes, Existing::Replace, files::ORDINARY));
        }
        Ok(Some(resources))
    }

    /// The versions the API server serves of `group` (`GET /apis/<group>`), the preferred
    /// first; `None` when it serves none.
    pub async fn served_versions(&self, group: &str) -> Result<Option<Vec<String>>, Error> {
        if group.is_empty() {
            return Ok(Some(vec!["v1".into()]));
        }
        if !is_group(group) {
            return Err(not_an_api_version(group));
        }
        let request =
            http::Request::get(format!("/apis/{group}")).body(Vec::new()).map_err(|e| Error::Input(e.to_string()))?;
        match self.client.request::<k8s_openapi::apimachinery::pkg::apis::meta::v1::APIGroup>(request).await {
            Ok(api_group) => {
                let preferred = api_group.preferred_version.map(|v| v.version);
                let mut versions: Vec<String> = api_group.versions.into_iter().map(|v| v.version).collect();
                versions.sort_by_key(|v| Some(v) != preferred.as_ref());
                Ok(Some(versions))
            }
            Err(kube::Error::Api(status)) if status.code == 404 => {
                self.check_api_server().await?;
                Ok(None)
            }
            Err(e) => Err(self.failure(&format!("discovering {group}"), e)),
        }
    }

    /// An error saying what came back when the server does not answer `GET /version` as a
    /// Kubernetes API server does (with its version, or a Status when it refuses): a web page
    /// or a wrong path in the kubeconfig's server answers discovery with a 404 too, which would
    /// otherwise be taken for a group it does not serve.
    async fn check_api_server(&self) -> Result<(), Error> {
        let found = self.not_an_api_server.get_or_try_init(|| self.ask_version()).await?;
        match found {
            None => Ok(()),
            Some(answer) => Err(Error::Input(format!(
                "the server at {} does not answer as a Kubernetes API server (GET /version: {answer}): check {}",
                self.server,
                self.origin.server()
            ))),
        }
    }

    /// `GET /version`: `None` when the answer is a Kubernetes API server's, else what it was.
    async fn ask_version(&self) -> Result<Option<String>, Error> {
        let doing = "asking the server its version (GET /version)";
        let request = http::Request::get("/version")
            .body(kube::client::Body::empty())
            .map_err(|e| Error::Input(e.to_string()))?;
        let response = self.client.send(request).await.map_err(|e| self.failure(doing, e))?;
        let status = response.status();
        let content_type = response.headers().get(http::header::CONTENT_TYPE).cloned();
        let body = http_body_util::BodyExt::collect(response.into_body())
            .await
            .map_err(|e| self.failure(doing, e))?
            .to_bytes();
        let answer: Value = serde_json::from_slice(&body).unwrap_or_default();
        if answer["gitVersion"].is_string() || answer["kind"] == "Status" {
            return Ok(None);
        }
        let content_type = content_type.as_ref().and_then(|t| t.to_str().ok()).unwrap_or("no content type");
        Ok(Some(format!("HTTP {status}, {content_type}: {}", start_of(&body))))
    }

    /// The resource for `kind` at `group/version` (targeted discovery of that group/version only).
    /// A kind the disk cache's list lacks is looked for in a fresh one: it may be served since
    /// (a CRD added to a group, or one that began to serve that version), as kubectl's
    /// discovery looks again for a kind it does not find.
    pub async fn resource(
        &self,
        group: &str,
        version: &str,
        kind: &str,
        refresh: bool,
    ) -> Result<Option<Resource>, Error> {
        let find = |all: Option<Vec<Resource>>| all.and_then(|all| all.into_iter().find(|r| r.kind == kind));
        match find(self.resources(group, version, refresh).await?) {
            None => Ok(find(self.resources(group, version, true).await?)),
            found => Ok(found),
        }
    }

    /// The resource's API in `namespace`; every namespace when it is `""`.
    fn api(&self, resource: &Resource, namespace: &str) -> Api<DynamicObject> {
        if resource.namespaced && !namespace.is_empty() {
            Api::namespaced_with(self.client.clone(), namespace, &resource.api_resource())
        } else {
            Api::all_with(self.client.clone(), &resource.api_resource())
        }
    }

    /// GET an object; `None` when it does not exist.
    pub async fn get(&self, resource: &Resource, namespace: &str, name: &str) -> Result<Option<Value>, Error> {
        path_segment("namespace", namespace)?;
        path_segment("name", name)?;
        let doing = || format!("reading {} {namespace}/{name}", resource.qualified());
        let scope = resource.namespaced.then_some(namespace);
        let path = <DynamicObject as kube::Resource>::url_path(&resource.api_resource(), scope);
        let request = kube::core::Request::new(path)
            .get(name, &Default::default())
            .map_err(|e| Error::Input(format!("{}: {e}", doing())))?;
        // Read as plain JSON: the commands only need the object as JSON.
        match self.client.request::<Value>(request).await {
            Ok(object) => Ok(Some(object)),
            // A web server's 404 page is no answer that the object is missing.
            Err(kube::Error::Api(status)) if status.code == 404 && status.reason != KUBE_NOT_A_STATUS => Ok(None),
            Err(e) => Err(self.failure_checked(&doing(), e).await),
        }
    }

    /// The named objects of one resource in `namespace` (None for a missing one), concurrently:
    /// one LIST when there are many of them (fewer requests and connections, the same single
    /// round trip), a GET each when there are few or listing is forbidden.
    pub async fn get_many(
        &self,
        resource: &Resource,
        namespace: &str,
        names: &[&str],
    ) -> Result<Vec<Option<Value>>, Error> {
        if names.len() >= LIST_FROM {
            path_segment("namespace", namespace)?;
            let scope = resource.namespaced.then_some(namespace);
            let path = <DynamicObject as kube::Resource>::url_path(&resource.api_resource(), scope);
            let doing = || format!("listing {} in {namespace}", resource.qualified());
            let request = kube::core::Request::new(path)
                .list(&ListParams::default())
                .map_err(|e| Error::Input(format!("{}: {e}", doing())))?;
            match self.client.request::<Value>(request).await {
                Ok(list) => return Ok(pick(list, resource, names)),
                Err(kube::Error::Api(status)) if status.code == 403 => {}
                Err(e) => return Err(self.failure(&doing(), e)),
            }
        }
        futures::future::try_join_all(names.iter().map(|name| self.get(resource, namespace, name))).await
    }

    /// The objects of `resource` in `namespace` (`""`: in every namespace) that `selector`
    /// selects, each with its apiVersion and kind (a list's items come without them).
    pub async fn list(&self, resource: &Resource, namespace: &str, selector: &str) -> Result<Vec<Value>, Error> {
        path_segment("namespace", namespace)?;
        let scope = if namespace.is_empty() { "every namespace".to_string() } else { namespace.to_string() };
        let list = self
            .api(resource, namespace)
            .list(&ListParams::default().labels(selector))
            .await
            .map_err(|e| self.failure(&format!("listing {} in {scope}", resource.qualified()), e))?;
        Ok(list.items.into_iter().map(|item| typed(to_value(item), resource)).collect())
    }

    /// The resourceVersion of the objects of `resource` in `namespace` (`""`: every namespace)
    /// that `selector` picks, as a LIST gives it: where a watch of them starts.
    pub async fn list_version(&self, resource: &Resource, namespace: &str, selector: &str) -> Result<String, Error> {
        path_segment("namespace", namespace)?;
        let list = self
            .api(resource, namespace)
            .list_metadata(&ListParams::default().labels(selector).limit(1))
            .await
            .map_err(|e| self.failure(&format!("listing {}", resource.qualified()), e))?;
        Ok(list.metadata.resource_version.unwrap_or_default())
    }

    /// Watches the objects of `resource` in `namespace` (`""`: every namespace) that the label
    /// and field selectors pick, from `version` on: what the watch reports, until the server
    /// ends it (it is asked to after `timeout`) or the connection breaks (an `Err` saying why).
    pub async fn watch(
        &self,
        resource: &Resource,
        namespace: &str,
        (labels, fields): (&str, &str),
        version: &str,
        timeout: Duration,
    ) -> Result<futures::stream::BoxStream<'static, Result<Watched, String>>, Error> {
        use futures::StreamExt;
        use kube::api::{WatchEvent, WatchParams};
        let mut params = WatchParams::default().timeout(timeout.as_secs().clamp(1, 290) as u32);
        if !labels.is_empty() {
            params = params.labels(labels);
        }
        if !fields.is_empty() {
            params = params.fields(fields);
        }
        path_segment("namespace", namespace)?;
        let events = self
            .api(resource, namespace)
            .watch(&params, version)
            .await
            .map_err(|e| self.failure(&format!("watching {}", resource.qualified()), e))?;
        let (origin, proxy) = (self.origin.clone(), self.proxy.clone());
        let changed = |object: DynamicObject| Watched::Changed {
            version: object.metadata.resource_version.unwrap_or_default(),
            namespace: object.metadata.namespace.unwrap_or_default(),
            name: object.metadata.name.unwrap_or_default(),
        };
        Ok(events
            .map(move |event| match event {
                Ok(WatchEvent::Added(o) | WatchEvent::Modified(o) | WatchEvent::Deleted(o)) => Ok(changed(o)),
                Ok(WatchEvent::Bookmark(bookmark)) => Ok(Watched::At(bookmark.metadata.resource_version)),
                Ok(WatchEvent::Error(status)) if status.code == 410 => Ok(Watched::Expired),
                Ok(WatchEvent::Error(status)) | Err(kube::Error::Api(status)) => {
                    Err(format!("{} ({} {})", status.message, status.code, status.reason))
                }
                Err(e) => Err(describe_no_answer(&e, &origin, proxy.as_deref())),
            })
            .boxed())
    }

    /// The time limit of one request; `None` for none.
    pub fn request_limit(&self) -> Option<Duration> {
        self.request_limit
    }

    /// Sends a change's request (`change::Request`, preconditions included) for the object
    /// `key` of `resource`; returns the object as the server stored it (None after a delete, unless
    /// finalizers hold the object: then it is the object, being deleted).
    /// With `dry_run`, admission judges it and nothing is stored.
    pub async fn send(
        &self,
        resource: &Resource,
        key: &ObjectKey,
        request: &Request,
        dry_run: bool,
    ) -> Result<Option<Value>, Error> {
        path_segment("namespace", &key.namespace)?;
        path_segment("name", &key.name)?;
        let api = self.api(resource, &key.namespace);
        let name = key.name.as_str();
        let post = PostParams { dry_run, field_manager: Some(FIELD_MANAGER.into()) };
        let patch = PatchParams { dry_run, field_manager: Some(FIELD_MANAGER.into()), ..Default::default() };
        let dynamic =
            |body: &Value| serde_json::from_value::<DynamicObject>(body.clone()).map_err(kube::Error::SerdeError);
        let stored = |object: DynamicObject| Some(to_value(object));
        let (doing, sent) = match request {
            Request::Create { body } => {
                ("creating", async { api.create(&post, &dynamic(body)?).await }.await.map(stored))
            }
            Request::Replace { body } => {
                ("updating", async { api.replace(name, &post, &dynamic(body)?).await }.await.map(stored))
            }
            Request::MergePatch { subresource: Some("status"), body } => {
                ("patching the status of", api.patch_status(name, &patch, &Patch::Merge(body)).await.map(stored))
            }
            Request::MergePatch { body, .. } => {
                ("patching", api.patch(name, &patch, &Patch::Merge(body)).await.map(stored))
            }
            Request::Delete { uid, resource_version } => {
                let params = DeleteParams {
                    dry_run,
                    preconditions: Some(Preconditions { uid: uid.clone(), resource_version: resource_version.clone() }),
                    ..Default::default()
                };
                // An object with finalizers is only marked, and comes back: being deleted.
                let deleted = api.delete(name, &params).await;
                ("deleting", deleted.map(|deleted| deleted.left().map(to_value).filter(being_deleted)))
            }
        };
        sent.map_err(|e| self.failure(&format!("{doing} {key}"), e))
    }

    /// Whether the user (or the impersonated one) may `verb` the resource in `namespace`.
    pub async fn can_i(&self, permission: &Permission) -> Result<bool, Error> {
        let review = SelfSubjectAccessReview {
            spec: SelfSubjectAccessReviewSpec {
                resource_attributes: Some(ResourceAttributes {
                    namespace: Some(permission.namespace.clone()),
                    verb: Some(permission.verb.clone()),
                    group: Some(permission.group.clone()),
                    resource: Some(permission.resource.clone()),
                    subresource: permission.subresource.clone(),
                    name: permission.name.clone(),
                    ..Default::default()
                }),
                ..Default::default()
            },
            ..Default::default()
        };
        let api: Api<SelfSubjectAccessReview> = Api::all(self.client.clone());
        let answer = match api.create(&PostParams::default(), &review).await {
            Ok(answer) => answer,
            Err(e) => {
                return Err(self
                    .failure_checked("asking the API server what you may do (SelfSubjectAccessReview)", e)
                    .await);
            }
        };
        Ok(answer.status.is_some_and(|s| s.allowed))
    }

    /// Who the API server takes this client for: the impersonated user, else the one a
    /// SelfSubjectReview names (what `kubectl auth whoami` asks; asked once a run). None when the
    /// review fails (not served before Kubernetes 1.28, forbidden, timed out): a refusal's Role
    /// is all that asks, and it does with a placeholder.
    pub async fn whoami(&self) -> Option<String> {
        if let Some(user) = &self.user {
            return Some(user.clone());
        }
        let review = async {
            let api: Api<SelfSubjectReview> = Api::all(self.client.clone());
            let review = api.create(&PostParams::default(), &SelfSubjectReview::default()).await.ok()?;
            review.status?.user_info?.username.filter(|name| !name.is_empty())
        };
        self.whoami.get_or_init(|| review).await.clone()
    }

    /// [`Self::failure`], unless the reply was an error that is no Kubernetes Status and the
    /// server turns out not to be an API server (a web server at the kubeconfig's URL): then
    /// that, naming the server and the context.
    async fn failure_checked(&self, doing: &str, error: kube::Error) -> Error {
        let foreign = matches!(&error, kube::Error::Api(status) if status.reason == KUBE_NOT_A_STATUS);
        if foreign && let Err(not_one) = self.check_api_server().await {
            return not_one;
        }
        self.failure(doing, error)
    }

    /// An API failure naming what was being done; one that never reached an answer names the
    /// server too, and one that timed out the limit.
    fn failure(&self, doing: &str, error: kube::Error) -> Error {
        let failure = match error {
            kube::Error::Api(status) => {
                let message = match status.code {
                    // As kubectl words it, with what to do.
                    401 => format!(
                        "you must be logged in to the server: it refused the credentials{}; log in again or renew them",
                        self.origin.of_context()
                    ),
                    _ => status.message.clone(),
                };
                let failure = match status.reason.as_str() {
                    // kube's Status for a reply whose body is not one: the body whole as the
                    // message, which may be a long web page.
                    KUBE_NOT_A_STATUS => ApiFailure {
                        code: Some(status.code),
                        reason: NOT_A_STATUS.into(),
                        message: format!("the reply is {}", start_of(status.message.as_bytes())),
                    },
                    _ => ApiFailure { code: Some(status.code), reason: status.reason.clone(), message },
                };
                return Error::Api { doing: doing.to_string(), failure };
            }
            other if find_cause::<LengthLimitError>(&other, |_| true).is_some() => ApiFailure {
                code: None,
                reason: TOO_LARGE.into(),
                message: format!(
                    "the reply passed {} MiB, the limit of one reply (an object is at most 1.5 MiB; only a list \
                     of very many objects comes near it)",
                    MAX_REPLY >> 20
                ),
            },
            kube::Error::SerdeError(e) => ApiFailure {
                code: None,
                reason: NOT_JSON.into(),
                message: format!("the reply is not the JSON a Kubernetes API server sends ({e})"),
            },
            other if timed_out(&other) => {
                self.unanswered.fetch_add(1, Ordering::Relaxed);
                let limit = self.request_limit.map(crate::time::seconds).unwrap_or_default();
                ApiFailure {
                    code: None,
                    reason: TIMED_OUT.into(),
                    // Short: a report may name several requests that timed out.
                    message: format!("timed out, no answer within {limit} (--request-timeout)"),
                }
            }
            other
                if find_cause::<std::io::Error>(&other, |e| e.kind() == std::io::ErrorKind::ConnectionRefused)
                    .is_some() =>
            {
                self.unanswered.fetch_add(1, Ordering::Relaxed);
                ApiFailure {
                    code: None,
                    reason: CONNECTION_REFUSED.into(),
                    message: describe_no_answer(&other, &self.origin, self.proxy.as_deref()),
                }
            }
            other => ApiFailure {
                code: None,
                reason: "no answer".into(),
                message: tls_problem(&other, &self.origin)
                    .unwrap_or_else(|| describe_no_answer(&other, &self.origin, self.proxy.as_deref())),
            },
        };
        // A request that never got an answer names the server it was sent to.
        let through = self.proxy.as_ref().map(|proxy| format!(" through the proxy {proxy}")).unwrap_or_default();
        Error::Api { doing: format!("{doing} at {}{through}", self.server), failure }
    }
}

/// The objects named `names` (in that order, `None` for a missing one) among the items of a LIST
/// of `resource`, each with its `apiVersion` and `kind`: a real API server leaves them out of
/// the items of built-in resources (it puts them on the list only).
fn pick(list: Value, resource: &Resource, names: &[&str]) -> Vec<Option<Value>> {
    let Value::Object(mut list) = list else { return vec![None; names.len()] };
    let Some(Value::Array(items)) = list.remove("items") else { return vec![None; names.len()] };
    let mut positions: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, name) in names.iter().enumerate() {
        positions.entry(name).or_default().push(i);
    }
    let mut found = vec![None; names.len()];
    for item in items {
        let Some(at) = item["metadata"]["name"].as_str().and_then(|name| positions.remove(name)) else { continue };
        let item = typed(item, resource);
        let (last, others) = at.split_last().expect("at least one position per name");
        for &i in others {
            found[i] = Some(item.clone());
        }
        found[*last] = Some(item);
    }
    found
}

/// The reason kube gives the Status it makes of an error reply that is not a Status.
const KUBE_NOT_A_STATUS: &str = "Failed to parse error data";

/// The most of a reply's body a message shows.
const SHOWN_OF_A_REPLY: usize = 120;

/// The start of a reply's body for a message: quoted and escaped (a web page's line ends, a
/// binary reply), at most `SHOWN_OF_A_REPLY` bytes, `…` after it when there was more.
fn start_of(body: &[u8]) -> String {
    if body.is_empty() {
        return "an empty body".into();
    }
    let text = String::from_utf8_lossy(&body[..body.len().min(SHOWN_OF_A_REPLY)]);
    // A character cut at the limit shows as U+FFFD, which is right: it was cut.
    let more = if body.len() > SHOWN_OF_A_REPLY { "…" } else { "" };
    format!("{text:?}{more}")
}

/// How many requests may wait for the client at once (the commands make a few dozen at most).
const REQUESTS_IN_FLIGHT: usize = 1024;

/// The exec credential plugin kube would run for these credentials (none when the kubeconfig
/// gives a password, a token or a token file, which kube prefers), taken out so that kube
/// does not run it again.
fn exec_plugin_to_run(auth: &mut kube::config::AuthInfo) -> Option<kube::config::ExecConfig> {
    if auth.username.is_some() || auth.token.is_some() || auth.token_file.is_some() {
        return None;
    }
    auth.exec.take()
}

/// Whether a request failed for lack of an answer in time (connecting, sending or waiting).
fn timed_out(error: &kube::Error) -> bool {
    find_cause::<std::io::Error>(error, |e| e.kind() == std::io::ErrorKind::TimedOut).is_some()
}

/// What the TLS library refused, somewhere in `error`'s causes, in words: the server's
/// certificate, or a server that answered in plain HTTP.
fn tls_problem(error: &(dyn std::error::Error + 'static), origin: &Origin) -> Option<String> {
    use rustls::{Error as Refused, InvalidMessage};
    let refused = find_cause::<Refused>(error, |e| {
        matches!(e, Refused::InvalidCertificate(_) | Refused::InvalidMessage(InvalidMessage::InvalidContentType))
    })?;
    Some(match refused {
        Refused::InvalidCertificate(problem) => certificate_problem(problem, origin),
        // Its first bytes (`HTTP/1.1 400`) are no TLS record.
        _ => format!(
            "the server answered in plain HTTP (http: server gave HTTP response to HTTPS client): use http:// in {}, or check the port",
            origin.server()
        ),
    })
}

/// What is wrong with the server's certificate and what to check, naming the kubeconfig's fields
/// (rustls's own text names its types: `UnknownIssuer`, `IpAddress(127.0.0.1)`).
fn certificate_problem(problem: &rustls::CertificateError, origin: &Origin) -> String {
    use rustls::CertificateError as Problem;
    let cluster = origin.cluster();
    match problem {
        Problem::UnknownIssuer | Problem::BadSignature => format!(
            "the server's certificate is not signed by an authority the kubeconfig trusts (x509: certificate signed by unknown authority): check certificate-authority or certificate-authority-data of {cluster}"
        ),
        Problem::NotValidForName => {
            format!(
                "the server's certificate is not valid for the server's name: check server, or tls-server-name, of {cluster}"
            )
        }
        Problem::NotValidForNameContext { expected, presented } => {
            // `IpAddress(127.0.0.1)`, `DnsName("api.example.com")`: the name inside.
            let names: Vec<&str> = presented
                .iter()
                .map(|name| name.split_once('(').map_or(name.as_str(), |(_, inside)| inside.trim_end_matches(')')))
                .map(|name| name.trim_matches('"'))
                .collect();
            format!(
                "the server's certificate is not valid for {} (it is for {}): use one of those in server, or set tls-server-name, of {cluster}",
                expected.to_str(),
                names.join(", ")
            )
        }
        Problem::Expired | Problem::ExpiredContext { .. } => {
            "the server's certificate has expired (or this machine's clock is wrong)".into()
        }
        Problem::NotValidYet | Problem::NotValidYetContext { .. } => {
            "the server's certificate is not valid yet (or this machine's clock is wrong)".into()
        }
        // webpki's, said before the issuer is looked at: kubectl (Go) accepts a CA certificate
        // as the server's own when it is the trusted CA itself, and refuses another as unknown.
        Problem::Other(other) if format!("{other:?}").contains("CaUsedAsEndEntity") => format!(
            "the server presents a CA certificate (basicConstraints CA:TRUE) as its own, which this tool's TLS library refuses: if it is the certificate-authority of {cluster} itself (kubectl accepts that), serve a certificate signed by that CA; if not, the server is not one the kubeconfig trusts (kubectl says: x509: certificate signed by unknown authority): check server and certificate-authority"
        ),
        other => format!("the server's certificate was refused: {other}"),
    }
}

/// The discovery cache folder of a server: its host, port and path (two clusters behind one
/// proxy differ by path only), as one file name, like kubectl's own discovery cache.
fn cache_key(url: &http::Uri) -> String {
    let authority = url.authority().map(|a| a.as_str()).unwrap_or_default();
    let path = url.path().trim_end_matches('/');
    let key: String = format!("{authority}{path}")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '_' })
        .collect();
    // Never `.`, `..` or nothing: the folder must be a child of the cache.
    if key.chars().all(|c| c == '.') { format!("_{key}") } else { key }
}

/// A list item with the apiVersion and kind of its resource, which lists leave out.
fn typed(mut item: Value, resource: &Resource) -> Value {
    if let Some(object) = item.as_object_mut() {
        for (field, value) in [("apiVersion", resource.api_resource().api_version), ("kind", resource.kind.clone())] {
            if object.get(field).and_then(Value::as_str).is_none_or(str::is_empty) {
                object.insert(field.into(), Value::String(value));
            }
        }
    }
    item
}

/// Refuses a namespace or name that is no path segment of its own (`..`, `a/b`, `a?x`, `a#x`):
/// kube puts them into a request's path as they are, so the request would reach another URL,
/// another object. client-go refuses `.`, `..`, `/` and `%` (`IsValidPathSegmentName`) and
/// escapes the rest; no Kubernetes object's name or namespace holds any of them.
fn path_segment(what: &str, value: &str) -> Result<(), Error> {
    let breaks = |c: char| matches!(c, '/' | '%' | '?' | '#') || c.is_whitespace() || c.is_control();
    if value != "." && value != ".." && !value.chars().any(breaks) {
        return Ok(());
    }
    Err(Error::Input(format!(
        "{value:?} is no Kubernetes {what}: a {what} is not `.` or `..` and holds no `/`, `%`, `?`, `#`, whitespace or control character"
    )))
}

fn to_value(object: DynamicObject) -> Value {
    serde_json::to_value(object).unwrap_or(Value::Null)
}

/// The discovery cache's folder for the core group (other groups have their name).
const CORE_FOLDER: &str = "core";

/// `group/version`, or `version` for the core group.
fn api_version(group: &str, version: &str) -> String {
    if group.is_empty() { version.to_string() } else { format!("{group}/{version}") }
}

/// An API group as Kubernetes names them: empty (the core group) or a DNS subdomain, lowercase
/// letters, digits and `-` in labels joined by dots. Nothing else may name a folder of the
/// discovery cache (`../..` would lead out of it) or a path of a request.
fn is_group(group: &str) -> bool {
    let label = |label: &str| {
        !label.is_empty()
            && label.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !label.starts_with('-')
            && !label.ends_with('-')
    };
    group.is_empty() || (group.len() <= 253 && group.split('.').all(label))
}

/// An API version as Kubernetes names them: lowercase letters and digits (`v1`, `v1beta1`).
fn is_version(version: &str) -> bool {
    !version.is_empty() && version.len() <= 63 && version.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
}

fn not_an_api_version(api_version: &str) -> Error {
    Error::Input(format!(
        "{api_version:?} is no API group and version: a group is a DNS subdomain (lowercase letters, digits, '-' and '.'), a version lowercase letters and digits"
    ))
}

/// A cache file written within `DISCOVERY_TTL`; anything else (stale, not a regular file, past
/// `MAX_CACHE_FILE`, not what this tool writes) is discovered again.
fn read_fresh(path: &std::path::Path) -> Option<CachedResources> {
    let metadata = std::fs::metadata(path).ok().filter(|m| m.is_file())?;
    if SystemTime::now().duration_since(metadata.modified().ok()?).ok()? > DISCOVERY_TTL {
        return None;
    }
    let limit = super::files::Limit { bytes: MAX_CACHE_FILE, input: "a discovery cache file" };
    serde_json::from_slice(&super::files::read_file(path, limit).ok()?).ok()
}

/// The folder of a cluster's backups when flags (`--server`, `--cluster`) point the context
/// elsewhere: the context's name, and when `server` is not the context's `own`, that server's
/// `host:port` too (`ctx@host:6443`), so that `restore` never takes one cluster's backups for
/// another's. (Without those flags it is the context's name.)
fn backup_folder(context: &str, own: Option<&str>, server: &Uri) -> String {
    let place = |uri: &Uri| (uri.authority().map(|a| a.to_string()), uri.path().trim_end_matches('/').to_string());
    match own.map(str::parse::<Uri>) {
        Some(Ok(own)) if place(&own) == place(server) => context.to_string(),
        _ => format!("{context}@{}", server.authority().map_or(server.to_string(), |a| a.to_string())),
    }
}

/// The texts of a reply's `Warning` headers as client-go reads them: code 299, any agent, a
/// quoted text (`299 - "networking.istio.io/v1alpha3 VirtualService is deprecated"`), and
/// nothing else (another code, or a header that does not parse, is passed over).
fn server_warnings(headers: &http::HeaderMap) -> Vec<String> {
    let quoted = |text: &str| -> Option<String> {
        let mut chars = text.strip_prefix('"')?.chars();
        let mut out = String::new();
        loop {
            match chars.next()? {
                '"' => return Some(out),
                '\\' => out.push(chars.next()?),
                c => out.push(c),
            }
        }
    };
    headers
        .get_all(http::header::WARNING)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .filter_map(|value| {
            let (code, rest) = value.split_once(' ')?;
            let (_agent, text) = rest.split_once(' ')?;
            (code == "299").then(|| quoted(text)).flatten()
        })
        .collect()
}

/// Why the client could not be made, in words: a client certificate or key that does not read
/// (or a key that is missing, or not the certificate's) is named by its kubeconfig fields, and
/// the bytes rustls quotes (`[67, 69, …]`) left out.
fn client_setup_failure(error: &kube::Error) -> String {
    const FIELDS: &str = "client-certificate(-data), client-key(-data) in the kubeconfig";
    let text = error.to_string();
    if let Some((_, why)) = text.split_once("identity PEM ") {
        let why = why.split_once(": [").map_or(why, |(why, _)| why);
        return format!("the client certificate and key of the context's user ({FIELDS}) do not read: the PEM {why}");
    }
    if text.ends_with("failed to load client key: no base64 data or file") {
        return format!(
            "the context's user has a client certificate and no client key ({FIELDS}); kubectl refuses it too (client-key-data or client-key must be specified)"
        );
    }
    if text.ends_with("KeyMismatch") {
        return format!("the client key of the context's user is not the key of its client certificate ({FIELDS})");
    }
    text
}

/// A request that got no answer, in words, as kubectl's: a refused connection with what to
/// check, another failure to connect or a connection that failed with its cause. What kube and
/// hyper wrap the cause in (`ServiceError: client error (Connect): tcp connect error: …`) is left
/// out: hyper-util's client error says only which of the two failed (`client error (Connect)`,
/// `client error (SendRequest)`), and what is below it is why.
fn describe_no_answer(error: &kube::Error, origin: &Origin, proxy: Option<&str>) -> String {
    let context = origin.in_context();
    let refused = find_cause::<std::io::Error>(error, |e| e.kind() == std::io::ErrorKind::ConnectionRefused);
    if let Some(refused) = refused {
        let code = refused.raw_os_error().map(|code| format!(" (os error {code})")).unwrap_or_default();
        // Through a proxy, the connection refused is the proxy's.
        return match proxy {
            Some(proxy) => format!(
                "the connection to the proxy was refused{code}: is the proxy {proxy} running, and is this its right host and port? (proxy-url of {}, or HTTPS_PROXY/HTTP_PROXY)",
                origin.cluster()
            ),
            None => format!(
                "the connection to the server was refused{code}: is the server running, and is this the right host and port?{context}"
            ),
        };
    }
    let mut causes: Vec<String> = Vec::new();
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(cause) = source {
        causes.push(cause.to_string());
        source = cause.source();
    }
    // hyper-util keeps no more of a proxy's answer to CONNECT than these words.
    let tunnel = causes.iter().find_map(|c| c.strip_prefix("tunnel error: "));
    if let (Some(proxy), Some(why @ ("unsuccessful" | "proxy authorization required"))) = (proxy, tunnel) {
        return match why {
            "unsuccessful" => format!(
                "the proxy {proxy} did not open a connection to the server: it answered CONNECT with an error (403 from a proxy that does not allow this host or port, 502 or 503 from one that cannot reach it){context}"
            ),
            _ => format!(
                "the proxy {proxy} asks for credentials (407 Proxy Authentication Required): give them in its URL, http://USER:PASSWORD@HOST:PORT{context}"
            ),
        };
    }
    let Some(client) = causes.iter().position(|c| c.starts_with("client error (")) else { return joined(&causes) };
    let what = match causes[client].as_str() {
        "client error (Connect)" => "cannot connect to the server",
        _ => "the connection to the server failed",
    };
    match &causes[client + 1..] {
        [] => format!("{what}{context}"),
        why => format!("{what}{context}: {}", joined(why)),
    }
}

/// An error's text and its causes', each left out when the text so far holds it already (an
/// error that shows its cause: kube's `ServiceError: {0}`).
fn joined(causes: &[String]) -> String {
    let mut text = String::new();
    for cause in causes {
        if text.is_empty() {
            text.clone_from(cause);
        } else if !text.contains(cause.as_str()) {
            text.push_str(": ");
            text.push_str(cause);
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn context(name: &str) -> Origin {
        Origin { context: name.into(), server_flag: false }
    }

    #[test]
    fn a_name_or_namespace_that_is_no_path_segment_is_refused() {
        for fine in ["demo", "rollout-lua.demo", "a.b-c", "", "a:b"] {
            assert!(path_segment("name", fine).is_ok(), "{fine}");
        }
        for broken in [".", "..", "a/b", "../x", "a%2F", "a?dryRun=All", "a#b", "a b", "a\tb", "a\u{7f}"] {
            assert!(path_segment("name", broken).is_err(), "{broken}");
        }
        assert_eq!(
            path_segment("namespace", "a#b").unwrap_err().to_string(),
            "\"a#b\" is no Kubernetes namespace: a namespace is not `.` or `..` and holds no `/`, `%`, `?`, `#`, whitespace or control character"
        );
    }

    #[test]
    fn only_api_groups_and_versions_as_kubernetes_names_them_reach_the_cache_and_the_server() {
        for group in ["", "apps", "networking.istio.io", "gateway.networking.k8s.io", "x-1.example.com"] {
            assert!(is_group(group), "{group}");
        }
        for group in ["..", "../../tmp/x", "a/b", ".a", "a.", "a..b", "-a", "A.io", "a_b", "a b"] {
            assert!(!is_group(group), "{group}");
        }
        assert!(is_version("v1") && is_version("v1beta1"));
        for version in ["", "..", "v1/x", "V1", "v1.0"] {
            assert!(!is_version(version), "{version}");
        }
        assert_eq!(
            not_an_api_version("../x/v1").to_string(),
            "\"../x/v1\" is no API group and version: a group is a DNS subdomain (lowercase letters, digits, '-' and '.'), a version lowercase letters and digits"
        );
    }

    fn resource(group: &str, kind: &str, plural: &str) -> Resource {
        Resource {
            group: group.into(),
            version: "v1".into(),
            kind: kind.into(),
            plural: plural.into(),
            namespaced: true,
        }
    }

    /// An error of `text` caused by `source`, as hyper-util's and its connector's are.
    #[derive(Debug)]
    struct Layer(&'static str, Option<Box<dyn std::error::Error + Send + Sync>>);

    impl std::fmt::Display for Layer {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }

    impl std::error::Error for Layer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.1.as_deref().map(|e| e as &(dyn std::error::Error + 'static))
        }
    }

    /// kube's error for a request hyper-util's client failed (`client`) for `why`, which
    /// `cause` explains.
    fn no_answer(client: &'static str, why: &'static str, cause: std::io::Error) -> kube::Error {
        kube::Error::Service(Box::new(Layer(client, Some(Box::new(Layer(why, Some(Box::new(cause))))))))
    }

    #[test]
    fn backups_of_a_context_pointed_at_another_server_go_apart() {
        let uri = |text: &str| text.parse::<Uri>().unwrap();
        let own = Some("https://kube.example:6443");
        assert_eq!(backup_folder("ctx", own, &uri("https://kube.example:6443/")), "ctx");
        assert_eq!(backup_folder("ctx", own, &uri("https://other.example:6443")), "ctx@other.example:6443");
        // A context with no server of its own (none, or no kubeconfig at all: `-s` alone).
        assert_eq!(backup_folder("", None, &uri("https://10.0.0.1:6443")), "@10.0.0.1:6443");
    }

    #[test]
    fn server_warnings_are_read_as_client_go_reads_them() {
        let mut headers = http::HeaderMap::new();
        for value in [
            r#"299 - "networking.istio.io/v1alpha3 VirtualService is deprecated; use networking.istio.io/v1""#,
            r#"299 - "a \"quoted\" word" "Sat, 05 Dec 2026 10:00:00 GMT""#,
            r#"199 - "another code""#,
            "299 - unquoted",
            r#"299 - "never closed"#,
        ] {
            headers.append(http::header::WARNING, value.parse().unwrap());
        }
        assert_eq!(
            server_warnings(&headers),
            [
                "networking.istio.io/v1alpha3 VirtualService is deprecated; use networking.istio.io/v1",
                r#"a "quoted" word"#
            ]
        );
    }

    #[test]
    fn messages_name_where_the_settings_are() {
        assert_eq!(context("kind").server(), "server of the cluster of context kind in the kubeconfig");
        let server_flag = Origin { context: "kind".into(), server_flag: true };
        assert_eq!(server_flag.server(), "--server");
        assert_eq!(server_flag.in_context(), " (context kind)");
        let flags_alone = Origin { context: String::new(), server_flag: true };
        assert_eq!(flags_alone.in_context(), "");
        assert_eq!((server_flag.of_context(), flags_alone.of_context()), (" of context kind".into(), String::new()));
        assert_eq!(flags_alone.cluster(), "the cluster the connection flags name (no kubeconfig context)");
    }

    #[test]
    fn a_request_without_an_answer_says_why_without_the_clients_internals() {
        // As an operator trial (P2) saw it: `ServiceError: client error (Connect): tcp connect
        // error: Connection refused (os error 111)`.
        let refused = no_answer("client error (Connect)", "tcp connect error", std::io::Error::from_raw_os_error(111));
        assert!(refused.to_string().starts_with("ServiceError: client error (Connect)"), "{refused}");
        assert_eq!(
            describe_no_answer(&refused, &context("dead"), None),
            "the connection to the server was refused (os error 111): is the server running, and is this the right host and port? (context dead)"
        );
        // Through a proxy, it is the proxy that refused.
        assert_eq!(
            describe_no_answer(&refused, &context("dead"), Some("http://127.0.0.1:9/")),
            "the connection to the proxy was refused (os error 111): is the proxy http://127.0.0.1:9/ running, and is this its right host and port? (proxy-url of the cluster of context dead in the kubeconfig, or HTTPS_PROXY/HTTP_PROXY)"
        );
        let lookup = std::io::Error::other("failed to lookup address information: Name or service not known");
        assert_eq!(
            describe_no_answer(&no_answer("client error (Connect)", "dns error", lookup), &context("kind"), None),
            "cannot connect to the server (context kind): dns error: failed to lookup address information: Name or service not known"
        );
        let reset = no_answer("client error (SendRequest)", "connection error", std::io::Error::from_raw_os_error(104));
        assert_eq!(
            describe_no_answer(&reset, &context("kind"), None),
            "the connection to the server failed (context kind): connection error: Connection reset by peer (os error 104)"
        );
        // A proxy that would not open a tunnel: hyper-util keeps only that it refused.
        let tunnel =
            |why| kube::Error::Service(Box::new(Layer("client error (Connect)", Some(Box::new(Layer(why, None))))));
        let proxy = Some("http://127.0.0.1:3128/");
        assert_eq!(
            describe_no_answer(&tunnel("tunnel error: unsuccessful"), &context("kind"), proxy),
            "the proxy http://127.0.0.1:3128/ did not open a connection to the server: it answered CONNECT with an error (403 from a proxy that does not allow this host or port, 502 or 503 from one that cannot reach it) (context kind)"
        );
        assert_eq!(
            describe_no_answer(&tunnel("tunnel error: proxy authorization required"), &context("kind"), proxy),
            "the proxy http://127.0.0.1:3128/ asks for credentials (407 Proxy Authentication Required): give them in its URL, http://USER:PASSWORD@HOST:PORT (context kind)"
        );
        assert_eq!(
            describe_no_answer(&tunnel("tunnel error: unexpected end of file"), &context("kind"), proxy),
            "cannot connect to the server (context kind): tunnel error: unexpected end of file"
        );
        // `-s` without a kubeconfig context: no context to name; the flags are the settings.
        let flags = Origin { context: String::new(), server_flag: true };
        assert_eq!(
            describe_no_answer(&refused, &flags, None),
            "the connection to the server was refused (os error 111): is the server running, and is this the right host and port?"
        );
        assert!(describe_no_answer(&refused, &flags, proxy).ends_with(
            "(proxy-url of the cluster the connection flags name (no kubeconfig context), or HTTPS_PROXY/HTTP_PROXY)"
        ));
        assert_eq!(
            describe_no_answer(&reset, &flags, None),
            "the connection to the server failed: connection error: Connection reset by peer (os error 104)"
        );
        // Without hyper-util's client error, every cause, each once.
        let other = kube::Error::Service(Box::new(Layer("no token", Some(Box::new(std::io::Error::other("expired"))))));
        assert_eq!(describe_no_answer(&other, &context("kind"), None), "ServiceError: no token: expired");
    }

    #[test]
    fn a_refused_certificate_is_told_in_words_naming_the_kubeconfig_field() {
        use rustls::CertificateError as Problem;
        let unknown = certificate_problem(&Problem::UnknownIssuer, &context("kind"));
        assert!(unknown.starts_with("the server's certificate is not signed by an authority the kubeconfig trusts (x509: certificate signed by unknown authority): check certificate-authority or certificate-authority-data of the cluster of context kind in the kubeconfig"), "{unknown}");
        let expected = rustls::pki_types::ServerName::try_from("localhost").unwrap();
        let presented = vec!["IpAddress(127.0.0.1)".to_string(), "DnsName(\"api.example.com\")".to_string()];
        assert_eq!(
            certificate_problem(&Problem::NotValidForNameContext { expected, presented }, &context("kind")),
            "the server's certificate is not valid for localhost (it is for 127.0.0.1, api.example.com): use one of those in server, or set tls-server-name, of the cluster of context kind in the kubeconfig"
        );
        assert!(
            certificate_problem(&Problem::Expired, &context("kind"))
                .contains("has expired (or this machine's clock is wrong)")
        );
        assert!(certificate_problem(&Problem::NotValidYet, &context("kind")).contains("is not valid yet"));
        #[derive(Debug)]
        struct CaUsedAsEndEntity;
        impl std::fmt::Display for CaUsedAsEndEntity {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "CA used as end entity")
            }
        }
        impl std::error::Error for CaUsedAsEndEntity {}
        let ca = Problem::Other(rustls::OtherError(std::sync::Arc::new(CaUsedAsEndEntity)));
        assert!(
            certificate_problem(&ca, &context("kind"))
                .contains("presents a CA certificate (basicConstraints CA:TRUE) as its own")
        );
        assert_eq!(
            certificate_problem(&Problem::Revoked, &context("kind")),
            "the server's certificate was refused: Revoked"
        );
    }

    #[test]
    fn the_start_of_a_reply_is_shown_quoted_and_bounded() {
        assert_eq!(start_of(b"404 page not found\n"), r#""404 page not found\n""#);
        assert_eq!(start_of(b""), "an empty body");
        let page = format!("<html>{}</html>", "x".repeat(200));
        let shown = start_of(page.as_bytes());
        assert!(shown.starts_with("\"<html>xxx") && shown.ends_with("x\"…"), "{shown}");
        assert_eq!(shown.chars().filter(|c| *c == 'x').count(), SHOWN_OF_A_REPLY - "<html>".len());
        assert_eq!(
            start_of("é".repeat(SHOWN_OF_A_REPLY).as_bytes()).chars().filter(|c| *c == 'é').count(),
            SHOWN_OF_A_REPLY / 2
        );
    }

    #[test]
    fn listed_items_get_their_api_version_and_kind() {
        // A real API server leaves apiVersion and kind out of the items of built-in resources.
        let list = json!({"apiVersion": "v1", "kind": "ServiceList", "items": [
            {"metadata": {"name": "a"}, "spec": {"n": 1}},
            {"metadata": {"name": "b"}},
            {"metadata": {"name": "c"}},
        ]});
        let found = pick(list, &resource("", "Service", "services"), &["c", "missing", "a", "c"]);
        assert_eq!(
            found,
            [
                Some(json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "c"}})),
                None,
                Some(json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "a"}, "spec": {"n": 1}})),
                Some(json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "c"}})),
            ]
        );
        let list = json!({"items": [{"metadata": {"name": "web"}}]});
        let found = pick(list, &resource("apps", "Deployment", "deployments"), &["web"]);
        assert_eq!(found[0].as_ref().unwrap()["apiVersion"], "apps/v1");
        assert_eq!(found[0].as_ref().unwrap()["kind"], "Deployment");
    }

    #[test]
    fn listed_items_keep_the_api_version_and_kind_they_have() {
        let item =
            json!({"apiVersion": "networking.istio.io/v1beta1", "kind": "VirtualService", "metadata": {"name": "vs"}});
        let list = json!({"items": [item.clone()]});
        let found = pick(list, &resource("networking.istio.io", "VirtualService", "virtualservices"), &["vs", "x"]);
        assert_eq!(found, [Some(item), None]);
        assert_eq!(pick(json!({"kind": "Status"}), &resource("", "Service", "services"), &["a"]), [None]);
    }

    #[tokio::test]
    async fn a_reply_past_its_size_limit_is_told_apart_from_one_that_timed_out() {
        use http_body_util::{BodyExt, Full};
        let read = |bytes: &'static [u8]| Limited::new(Full::new(bytes::Bytes::from_static(bytes)), 3).collect();
        assert!(read(b"abc").await.is_ok());
        let too_large = kube::Error::Service(read(b"abcd").await.unwrap_err());
        assert!(find_cause::<LengthLimitError>(&too_large, |_| true).is_some() && !timed_out(&too_large));
        let late = std::io::Error::new(std::io::ErrorKind::TimedOut, "the request's time limit passed");
        let late = kube::Error::Service(Box::new(late));
        assert!(timed_out(&late) && find_cause::<LengthLimitError>(&late, |_| true).is_none());
    }

    #[test]
    fn discovery_cache_key_is_host_port_and_path() {
        let key = |url: &str| cache_key(&url.parse().unwrap());
        assert_eq!(key("https://10.0.0.1:6443"), "10.0.0.1_6443");
        assert_eq!(key("https://10.0.0.1:6443/"), "10.0.0.1_6443");
        assert_eq!(key("https://proxy.example.com/clusters/a"), "proxy.example.com_clusters_a");
        assert_ne!(key("https://proxy.example.com/clusters/a"), key("https://proxy.example.com/clusters/b"));
        assert_eq!(key("http://[::1]:8001/k8s/c%201/"), "___1__8001_k8s_c_201");
        assert_eq!(key("https://user@host:1/x~y"), "user_host_1_x_y");
    }
}
