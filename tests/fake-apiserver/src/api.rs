//! Request handling, independent of the HTTP plumbing: routing, authorization, fault
//! injection, CRUD, patches, dry runs and admission.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use serde_json::{Value, json};

use crate::discovery::Discovery;
use crate::faults::{Faults, RequestInfo};
use crate::log::{LoggedRequest, SSAR_PATH, SSR_PATH};
use crate::rbac::{Attributes, Rule, denied};
use crate::resource::ApiResourceDef;
use crate::selector::Selector;
use crate::status::{ApiError, delete_success};
use crate::store::{Event, ObjectKey, Store, carry_over_identity, skeleton};

/// The most bytes the API server admits in an object's annotations, keys and values
/// (`TotalAnnotationSizeLimitB`).
const ANNOTATIONS_LIMIT: usize = 256 << 10;

/// What a validating admission hook sees. Hooks run for create, update and patch
/// (including dry runs and status writes), after the server has computed the object it
/// would store.
#[derive(Debug)]
pub struct AdmissionRequest<'a> {
    /// The authorization verb: `create`, `update` or `patch`.
    pub verb: &'a str,
    pub group: &'a str,
    pub version: &'a str,
    pub plural: &'a str,
    /// `Some("status")` for writes to the status subresource.
    pub subresource: Option<&'a str>,
    /// `""` for cluster-scoped resources.
    pub namespace: &'a str,
    pub name: &'a str,
    pub dry_run: bool,
    /// The object as it would be stored.
    pub object: &'a Value,
    /// The stored object being replaced, if any.
    pub old_object: Option<&'a Value>,
}

/// A validating admission hook: `Err(message)` rejects the request.
pub(crate) type AdmissionHook = Arc<dyn Fn(&AdmissionRequest) -> Result<(), String> + Send + Sync>;

/// A mutating admission hook: changes an object of the named resource (plural) before it is
/// validated and stored.
pub(crate) type MutatingHook = Arc<dyn Fn(&str, &mut Value) + Send + Sync>;

/// Called with every logged request, after its response is ready.
pub(crate) type RequestObserver = Arc<dyn Fn(&LoggedRequest) + Send + Sync>;

/// Settings fixed when the server starts.
pub(crate) struct Config {
    pub resources: Vec<ApiResourceDef>,
    pub preferred: BTreeMap<String, String>,
    pub rules: Vec<Rule>,
    /// With [`crate::Builder::grant`]: what is allowed (nothing else is).
    pub grants: Option<Vec<Rule>>,
    /// `(webhook name, hook)`, run in order.
    pub webhooks: Vec<(String, AdmissionHook)>,
    /// Mutating hooks, run in order before the validating ones.
    pub mutations: Vec<MutatingHook>,
    pub on_request: Option<RequestObserver>,
    /// `host:port`, for `/api`'s serverAddressByClientCIDRs.
    pub address: String,
    /// With [`crate::Builder::expiring_tokens`]: how long a `fake-token-<unix seconds>` bearer
    /// token is accepted after the time it names.
    pub token_validity: Option<Duration>,
    /// How far the server's clock (its replies' `Date`) is ahead of the host's (behind: negative).
    pub clock_offset: Duration,
    pub clock_behind: bool,
    /// With [`crate::Builder::enforce_owner_references`].
    pub enforce_owner_references: bool,
    /// Who requests come from when they impersonate nobody ([`crate::Builder::user`]).
    pub user: String,
    /// Whether `authentication.k8s.io/v1` selfsubjectreviews are served (from Kubernetes 1.28 on;
    /// [`crate::Builder::without_self_subject_reviews`]).
    pub self_subject_reviews: bool,
}

/// Everything requests and the test change.
pub(crate) struct State {
    pub store: Store,
    pub faults: Faults,
    pub log: Vec<LoggedRequest>,
    /// Counts `FakeHandle::drop_watches`: a watch open across a change of it is cut off.
    pub watch_drops: u64,
}

/// A request with its body read, in the form the handler needs.
#[derive(Clone)]
pub(crate) struct ApiRequest {
    pub method: String,
    pub path: String,
    pub query: String,
    pub params: Vec<(String, String)>,
    pub content_type: Option<String>,
    pub authorization: Option<String>,
    pub impersonate_user: Option<String>,
    pub impersonate_uid: Option<String>,
    pub impersonate_groups: Vec<String>,
    pub user_agent: Option<String>,
    pub body: Bytes,
}

impl ApiRequest {
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    /// The media type without parameters, lower-cased.
    fn media_type(&self) -> Option<String> {
        self.content_type.as_ref().map(|c| c.split(';').next().unwrap_or_default().trim().to_ascii_lowercase())
    }

    /// The user the request acts as: the impersonated one, else the authenticated one.
    fn user<'a>(&'a self, config: &'a Config) -> &'a str {
        self.impersonate_user.as_deref().unwrap_or(&config.user)
    }
}

/// A response ready to send.
#[derive(Clone)]
pub(crate) struct Reply {
    pub status: u16,
    pub body: Vec<u8>,
    /// The `Retry-After` header, in seconds.
    pub retry_after: Option<u64>,
    /// A watch, whose events follow `body` for as long as it lasts.
    pub watch: Option<Box<Watch>>,
    /// The texts of the reply's `Warning` headers.
    pub warnings: Vec<String>,
}

impl Reply {
    fn json(status: u16, body: &Value) -> Self {
        Self { status, body: body.to_string().into_bytes(), retry_after: None, watch: None, warnings: Vec::new() }
    }
}

/// A watch: the changes to the objects it selects after a resourceVersion, streamed one JSON
/// event per line until its `timeoutSeconds` pass (or the test drops it).
#[derive(Clone)]
pub(crate) struct Watch {
    def: ApiResourceDef,
    namespace: Option<String>,
    labels: Selector,
    fields: Selector,
    /// The resourceVersion whose later changes are sent.
    pub after: u64,
    pub timeout: Option<std::time::Duration>,
}

impl Watch {
    /// The event lines of `events` this watch selects.
    pub(crate) fn lines<'a>(
        &'a self,
        events: impl Iterator<Item = &'a Event> + 'a,
    ) -> impl Iterator<Item = Vec<u8>> + 'a {
        events
            .filter(|e| e.key.group == self.def.group && e.key.plural == self.def.plural)
            .filter(|e| self.namespace.as_deref().is_none_or(|ns| e.key.namespace == ns))
            .filter(|e| self.labels.matches_labels(&e.object) && self.fields.matches_fields(&e.object))
            .map(|e| event_line(e.kind, &as_served(&self.def, e.object.clone())))
    }
}

/// `{"type": kind, "object": object}` and a newline: one event of a watch.
fn event_line(kind: &str, object: &Value) -> Vec<u8> {
    format!("{}\n", json!({ "type": kind, "object": object })).into_bytes()
}

impl From<ApiError> for Reply {
    fn from(e: ApiError) -> Self {
        Self { retry_after: e.retry_after, ..Self::json(e.code, &e.body) }
    }
}

/// Serves one request against the store. Never blocks: faults and latency are the caller's.
pub(crate) fn handle(config: &Config, store: &mut Store, req: &ApiRequest) -> Reply {
    let route = Route::parse(config, &req.path);
    let warning = match &route {
        Route::Resource(target) => target.def.deprecation_warning.clone(),
        _ => None,
    };
    let mut ctx = Context { config, store, req };
    let mut reply = ctx.serve(route).unwrap_or_else(Reply::from);
    reply.warnings.extend(warning);
    reply
}

/// What fault injection matches a request on.
pub(crate) fn request_info<'a>(config: &Config, req: &'a ApiRequest) -> RequestInfo<'a> {
    let attributes = match Route::parse(config, &req.path) {
        Route::Resource(target) => target.attributes(config, req),
        Route::SelfSubjectReview => Some(self_subject_review_attributes(config, req)),
        _ => None,
    };
    RequestInfo { method: &req.method, path: &req.path, attributes }
}

/// The 409 an injected conflict answers with: about the requested object when there is one.
pub(crate) fn injected_conflict(config: &Config, req: &ApiRequest) -> Reply {
    let error = match Route::parse(config, &req.path) {
        Route::Resource(target) => {
            let name = target.name.clone().unwrap_or_else(|| {
                // A create names its object in the body.
                serde_json::from_slice::<Value>(&req.body)
                    .ok()
                    .and_then(|b| b["metadata"]["name"].as_str().map(str::to_owned))
                    .unwrap_or_default()
            });
            ApiError::modified(&target.def, &name)
        }
        _ => ApiError::injected(409, None),
    };
    error.into()
}

enum Route {
    Version,
    CoreVersions,
    Groups,
    Group(String),
    ResourceList { group: String, version: String },
    SelfSubjectAccessReview,
    SelfSubjectReview,
    Resource(Target),
    Unknown,
}

/// A request for objects of one served resource.
struct Target {
    def: ApiResourceDef,
    namespace: Option<String>,
    name: Option<String>,
    /// The request is for the status subresource.
    status: bool,
}

impl Target {
    fn namespace(&self) -> &str {
        self.namespace.as_deref().unwrap_or_default()
    }

    fn name(&self) -> &str {
        self.name.as_deref().unwrap_or_default()
    }

    fn key(&self, name: &str) -> ObjectKey {
        ObjectKey::new(&self.def.group, &self.def.plural, self.namespace(), name)
    }

    fn subresource(&self) -> Option<&'static str> {
        self.status.then_some("status")
    }

    /// The authorization verb of `req` on this target; `None` for a method the resource
    /// does not allow.
    fn verb(&self, req: &ApiRequest) -> Option<&'static str> {
        let named = self.name.is_some();
        Some(match (req.method.as_str(), named) {
            ("GET", false) if matches!(req.param("watch"), Some("true" | "1")) => "watch",
            ("GET", false) => "list",
            ("GET", true) => "get",
            ("POST", false) if self.namespace.is_some() || !self.def.namespaced => "create",
            ("PUT", true) => "update",
            ("PATCH", true) => "patch",
            ("DELETE", true) if !self.status => "delete",
            _ => return None,
        })
    }

    /// What the authorizer sees of `req`; `None` for a method the resource does not allow.
    fn attributes(&self, config: &Config, req: &ApiRequest) -> Option<Attributes> {
        Some(Attributes {
            user: req.user(config).to_owned(),
            verb: self.verb(req)?.into(),
            group: self.def.group.clone(),
            resource: self.def.plural.clone(),
            subresource: self.subresource().unwrap_or_default().into(),
            namespace: self.namespace().into(),
            name: self.name().into(),
        })
    }
}

impl Route {
    fn parse(config: &Config, path: &str) -> Self {
        let resources = &config.resources;
        let segments: Vec<String> = path.split('/').filter(|s| !s.is_empty()).map(percent_decode).collect();
        let s: Vec<&str> = segments.iter().map(String::as_str).collect();
        match s.as_slice() {
            ["version"] => Self::Version,
            ["api"] => Self::CoreVersions,
            ["apis"] => Self::Groups,
            ["apis", group] => Self::Group((*group).to_owned()),
            ["api", version] => Self::resource_list("", version),
            ["apis", group, version] => Self::resource_list(group, version),
            _ if path == SSAR_PATH => Self::SelfSubjectAccessReview,
            _ if path == SSR_PATH && config.self_subject_reviews => Self::SelfSubjectReview,
            ["api", version, rest @ ..] => Self::target(resources, "", version, rest),
            ["apis", group, version, rest @ ..] => Self::target(resources, group, version, rest),
            _ => Self::Unknown,
        }
    }

    fn resource_list(group: &str, version: &str) -> Self {
        Self::ResourceList { group: group.to_owned(), version: version.to_owned() }
    }

    fn target(resources: &[ApiResourceDef], group: &str, version: &str, rest: &[&str]) -> Self {
        let (namespace, rest) = match rest {
            ["namespaces", namespace, rest @ ..] if !rest.is_empty() => (Some(*namespace), rest),
            _ => (None, rest),
        };
        let (plural, name, subresource) = match rest {
            [plural] => (*plural, None, None),
            [plural, name] => (*plural, Some(*name), None),
            [plural, name, sub] => (*plural, Some(*name), Some(*sub)),
            _ => return Self::Unknown,
        };
        let Some(def) = resources.iter().find(|d| d.group == group && d.version == version && d.plural == plural)
        else {
            return Self::Unknown;
        };
        let status = match subresource {
            None => false,
            Some("status") if def.status_subresource => true,
            Some(_) => return Self::Unknown,
        };
        // Namespaced objects are only addressed inside their namespace (a namespace-less
        // path is the all-namespaces list); cluster-scoped ones never are.
        let scope_ok = if def.namespaced { namespace.is_some() || name.is_none() } else { namespace.is_none() };
        if !scope_ok {
            return Self::Unknown;
        }
        Self::Resource(Target {
            def: def.clone(),
            namespace: namespace.map(str::to_owned),
            name: name.map(str::to_owned),
            status,
        })
    }
}

struct Context<'a> {
    config: &'a Config,
    store: &'a mut Store,
    req: &'a ApiRequest,
}

/// How a PATCH body is interpreted, from its Content-Type.
#[derive(Clone, Copy, PartialEq, Eq)]
enum PatchKind {
    Json,
    Merge,
    Apply,
}

impl Context<'_> {
    /// With expiring tokens, a request must carry `Bearer fake-token-<unix seconds>` issued no
    /// longer than the validity ago (a 401 otherwise, as for an expired EKS token).
    fn authenticate(&self) -> Result<(), ApiError> {
        let Some(validity) = self.config.token_validity else { return Ok(()) };
        let issued = self.req.authorization.as_deref().and_then(|header| header.strip_prefix("Bearer fake-token-"));
        let issued =
            issued.and_then(|seconds| seconds.parse::<u64>().ok()).map(|s| UNIX_EPOCH + Duration::from_secs(s));
        match issued {
            Some(issued) if SystemTime::now() <= issued + validity => Ok(()),
            _ => Err(ApiError::unauthorized()),
        }
    }

    fn serve(&mut self, route: Route) -> Result<Reply, ApiError> {
        self.authenticate()?;
        self.authorize_impersonation()?;
        let discovery = Discovery { resources: &self.config.resources, preferred: &self.config.preferred };
        let document = match route {
            Route::Resource(target) => return self.serve_resource(&target),
            Route::SelfSubjectAccessReview => return self.self_subject_access_review(),
            Route::SelfSubjectReview => return self.self_subject_review(),
            Route::Unknown => return Err(ApiError::unknown_path()),
            Route::Version => Some(Discovery::version()),
            Route::CoreVersions => Some(Discovery::core_versions(&self.config.address)),
            Route::Groups => Some(discovery.group_list()),
            Route::Group(group) => discovery.group_document(&group),
            Route::ResourceList { group, version } => discovery.resource_list(&group, &version),
        };
        if self.req.method != "GET" {
            return Err(ApiError::method_not_allowed());
        }
        document.map(|d| Reply::json(200, &d)).ok_or_else(ApiError::unknown_path)
    }

    /// `Impersonate-User` needs the `impersonate` verb on `users` for the real user.
    fn authorize_impersonation(&self) -> Result<(), ApiError> {
        let Some(user) = &self.req.impersonate_user else {
            return Ok(());
        };
        let attributes = Attributes {
            user: self.config.user.clone(),
            verb: "impersonate".into(),
            resource: "users".into(),
            name: user.clone(),
            ..Attributes::default()
        };
        if denied(&self.config.rules, self.config.grants.as_deref(), &attributes) {
            return Err(ApiError::forbidden("", "users", user, &attributes.forbidden_message()));
        }
        Ok(())
    }

    fn serve_resource(&mut self, t: &Target) -> Result<Reply, ApiError> {
        let attributes = t.attributes(self.config, self.req).ok_or_else(ApiError::method_not_allowed)?;
        if denied(&self.config.rules, self.config.grants.as_deref(), &attributes) {
            return Err(ApiError::forbidden(&t.def.group, &t.def.plural, t.name(), &attributes.forbidden_message()));
        }
        match attributes.verb.as_str() {
            "get" => self.get(t),
            "list" => self.list(t, false),
            "watch" => self.list(t, true),
            "create" => self.create(t),
            "update" => self.update(t),
            "patch" => self.patch(t),
            _ => self.delete(t),
        }
    }

    fn get(&self, t: &Target) -> Result<Reply, ApiError> {
        let object = self.store.get_key(&t.key(t.name())).ok_or_else(|| ApiError::not_found(&t.def, t.name()))?;
        Ok(Reply::json(200, &as_served(&t.def, object.clone())))
    }

    /// LIST (with label/field selectors and `limit`/`continue` paging) or WATCH: from a
    /// `resourceVersion`, the changes after it; without one (or `0`), an ADDED event per
    /// current object, then the changes. A resourceVersion older than the last compaction gets
    /// an ERROR event (410 Expired), as the apiserver sends.
    fn list(&self, t: &Target, watch: bool) -> Result<Reply, ApiError> {
        let labels = self.selector("labelSelector", Selector::parse_labels)?;
        let fields = self.selector("fieldSelector", Selector::parse_fields)?;
        let mut items: Vec<Value> = self
            .store
            .list(&t.def.group, &t.def.plural)
            .into_iter()
            .filter(|o| t.namespace.is_none() || o["metadata"]["namespace"] == t.namespace())
            .filter(|o| labels.matches_labels(o) && fields.matches_fields(o))
            .map(|o| as_served(&t.def, o))
            .collect();
        if watch {
            let current: u64 = self.store.resource_version().parse().unwrap_or_default();
            let version = self.req.param("resourceVersion").filter(|v| !v.is_empty() && *v != "0");
            let after = match version {
                Some(v) => {
                    v.parse::<u64>().map_err(|_| ApiError::bad_request(format!("invalid resourceVersion {v:?}")))?
                }
                None => current,
            };
            if after < self.store.compacted() {
                let expired = json!({
                    "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                    "message": format!("too old resource version: {after} ({})", self.store.compacted()),
                    "reason": "Expired", "code": 410,
                });
                return Ok(Reply { body: event_line("ERROR", &expired), ..Reply::json(200, &Value::Null) });
            }
            let body = match version {
                Some(_) => Vec::new(),
                None => items.iter().flat_map(|object| event_line("ADDED", object)).collect(),
            };
            let timeout =
                self.req.param("timeoutSeconds").and_then(|t| t.parse().ok()).map(std::time::Duration::from_secs);
            let watch = Watch { def: t.def.clone(), namespace: t.namespace.clone(), labels, fields, after, timeout };
            return Ok(Reply { body, watch: Some(Box::new(watch)), ..Reply::json(200, &Value::Null) });
        }
        let mut metadata = json!({ "resourceVersion": self.store.resource_version() });
        if let Some((namespace, name)) = self.req.param("continue").and_then(|c| c.split_once('/')) {
            items.retain(|o| position(o) > (namespace, name));
        }
        let limit = self.req.param("limit").and_then(|l| l.parse::<usize>().ok());
        if let Some(limit) = limit.filter(|&l| l > 0 && l < items.len()) {
            let remaining = items.len() - limit;
            items.truncate(limit);
            let (namespace, name) = position(&items[limit - 1]);
            metadata["continue"] = format!("{namespace}/{name}").into();
            metadata["remainingItemCount"] = remaining.into();
        }
        Ok(Reply::json(
            200,
            &json!({
                "apiVersion": t.def.api_version(),
                "kind": format!("{}List", t.def.kind),
                "metadata": metadata,
                "items": items,
            }),
        ))
    }

    fn selector(&self, param: &str, parse: fn(&str) -> Result<Selector, String>) -> Result<Selector, ApiError> {
        self.req.param(param).map(parse).transpose().map(Option::unwrap_or_default).map_err(ApiError::bad_request)
    }

    fn create(&mut self, t: &Target) -> Result<Reply, ApiError> {
        let def = &t.def;
        let mut object = self.body_object()?;
        let body_namespace = object["metadata"]["namespace"].as_str().unwrap_or_default();
        if def.namespaced && !body_namespace.is_empty() && body_namespace != t.namespace() {
            return Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
        let name = match (
            object["metadata"]["name"].as_str().filter(|n| !n.is_empty()),
            object["metadata"]["generateName"].as_str().filter(|n| !n.is_empty()),
        ) {
            (Some(name), _) => name.to_owned(),
            (None, Some(prefix)) => self.store.generate_name(prefix),
            (None, None) => {
                return Err(ApiError::invalid(
                    def,
                    "",
                    "metadata.name",
                    "Required value: name or generateName is required",
                ));
            }
        };
        if !object["metadata"]["resourceVersion"].as_str().unwrap_or_default().is_empty() {
            return Err(ApiError::internal_unknown("resourceVersion should not be set on objects to be created"));
        }
        self.prepare_new(t, &mut object, &name);
        self.mutate(t, &mut object);
        self.admit("create", t, &object, None)?;
        if self.store.get_key(&t.key(&name)).is_some() {
            return Err(ApiError::already_exists(def, &name));
        }
        self.persist(t, &name, None, object, 201)
    }

    fn update(&mut self, t: &Target) -> Result<Reply, ApiError> {
        let def = &t.def;
        let object = self.body_object()?;
        check_name(&object, t.name(), t.namespace())?;
        let old = self.stored(t)?;
        match object["metadata"]["resourceVersion"].as_str().unwrap_or_default() {
            // Custom resources (and a few built-in types) refuse unconditional updates.
            "" if !def.unconditional_update => {
                return Err(ApiError::invalid(
                    def,
                    t.name(),
                    "metadata.resourceVersion",
                    "Invalid value: 0x0: must be specified for an update",
                ));
            }
            "" => {}
            rv if rv != old["metadata"]["resourceVersion"] => {
                return Err(ApiError::modified(def, t.name()));
            }
            _ => {}
        }
        let mut candidate = updated_object(t, &old, object);
        no_new_finalizers_while_deleted(t, &old, &candidate)?;
        self.mutate(t, &mut candidate);
        self.admit("update", t, &candidate, Some(&old))?;
        self.persist(t, t.name(), Some(&old), candidate, 200)
    }

    fn patch(&mut self, t: &Target) -> Result<Reply, ApiError> {
        let kind = self.patch_kind(&t.def)?;
        self.validate_patch_options(kind)?;
        let old = self.store.get_key(&t.key(t.name())).cloned();
        let base = match &old {
            Some(old) => old.clone(),
            // Server-side apply creates missing objects.
            None if kind == PatchKind::Apply && !t.status => skeleton(&t.def, t.namespace(), t.name()),
            None => return Err(ApiError::not_found(&t.def, t.name())),
        };
        let mut patched = as_served(&t.def, base);
        self.apply_patch(kind, &mut patched)?;
        if !patched.is_object() {
            return Err(ApiError::bad_request("the patched object is not a JSON object"));
        }
        check_name(&patched, t.name(), t.namespace())?;
        let Some(old) = old else {
            let mut object = patched;
            self.prepare_new(t, &mut object, t.name());
            self.mutate(t, &mut object);
            self.admit("patch", t, &object, None)?;
            return self.persist(t, t.name(), None, object, 201);
        };
        // A resourceVersion inside the patch is a precondition, as with PUT.
        let patched_rv = patched["metadata"]["resourceVersion"].as_str().unwrap_or_default();
        if !patched_rv.is_empty() && patched_rv != old["metadata"]["resourceVersion"] {
            return Err(ApiError::modified(&t.def, t.name()));
        }
        let mut candidate = updated_object(t, &old, patched);
        no_new_finalizers_while_deleted(t, &old, &candidate)?;
        self.mutate(t, &mut candidate);
        self.admit("patch", t, &candidate, Some(&old))?;
        self.persist(t, t.name(), Some(&old), candidate, 200)
    }

    fn delete(&mut self, t: &Target) -> Result<Reply, ApiError> {
        let old = self.stored(t)?;
        let options: Value = if self.req.body.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&self.req.body)
                .map_err(|e| ApiError::bad_request(format!("invalid DeleteOptions: {e}")))?
        };
        for (field, label) in [("resourceVersion", "ResourceVersion"), ("uid", "UID")] {
            let (wanted, actual) = (&options["preconditions"][field], &old["metadata"][field]);
            if !wanted.is_null() && wanted != actual {
                let cause = format!(
                    "Precondition failed: {label} in precondition: {}, {label} in object meta: {}",
                    wanted.as_str().unwrap_or_default(),
                    actual.as_str().unwrap_or_default()
                );
                return Err(ApiError::conflict(&t.def, t.name(), &cause));
            }
        }
        let body_dry_run = options["dryRun"].as_array().is_some_and(|d| d.iter().any(|v| v == "All"));
        let dry_run = self.dry_run()? || body_dry_run;
        // An object with finalizers is only marked: it stays, being deleted, until they are
        // removed; the reply is the object.
        if has_finalizers(&old) {
            if old["metadata"]["deletionTimestamp"].is_string() {
                return Ok(Reply::json(200, &as_served(&t.def, old)));
            }
            // Marked as the apiserver marks it: the time, a grace period of 0, and (for a type
            // with generations) the next generation.
            let mut marked = old;
            marked["metadata"]["deletionTimestamp"] = crate::store::now_rfc3339().into();
            marked["metadata"]["deletionGracePeriodSeconds"] = 0.into();
            if t.def.tracks_generation {
                let generation = marked["metadata"]["generation"].as_i64().unwrap_or(0);
                marked["metadata"]["generation"] = (generation + 1).into();
            }
            let marked = if dry_run { marked } else { self.store.commit(t.key(t.name()), marked) };
            return Ok(Reply::json(200, &as_served(&t.def, marked)));
        }
        if !dry_run {
            self.store.remove(&t.key(t.name()));
        }
        Ok(Reply::json(200, &delete_success(&t.def, t.name(), &old["metadata"]["uid"])))
    }

    /// Answers from the deny rules and grants, for the impersonated user when there is one.
    fn self_subject_access_review(&self) -> Result<Reply, ApiError> {
        if self.req.method != "POST" {
            return Err(ApiError::method_not_allowed());
        }
        let mut review = self.body_object()?;
        let attrs = &review["spec"]["resourceAttributes"];
        let field = |name: &str| attrs[name].as_str().unwrap_or_default().to_owned();
        // Non-resource requests (`nonResourceAttributes`) are never denied.
        let allowed = attrs.is_null()
            || !denied(
                &self.config.rules,
                self.config.grants.as_deref(),
                &Attributes {
                    user: self.req.user(self.config).to_owned(),
                    verb: field("verb"),
                    group: field("group"),
                    resource: field("resource"),
                    subresource: field("subresource"),
                    namespace: field("namespace"),
                    name: field("name"),
                },
            );
        review["apiVersion"] = "authorization.k8s.io/v1".into();
        review["kind"] = "SelfSubjectAccessReview".into();
        review["metadata"] = json!({ "creationTimestamp": null });
        review["status"] = json!({ "allowed": allowed });
        Ok(Reply::json(201, &review))
    }

    /// Says who the request comes from (`kubectl auth whoami`): the impersonated user, else the
    /// authenticated one. As RBAC's `system:basic-user` lets everyone ask, only deny rules
    /// deny it, not the want of a grant.
    fn self_subject_review(&self) -> Result<Reply, ApiError> {
        if self.req.method != "POST" {
            return Err(ApiError::method_not_allowed());
        }
        let attributes = self_subject_review_attributes(self.config, self.req);
        if denied(&self.config.rules, None, &attributes) {
            let message = attributes.forbidden_message();
            return Err(ApiError::forbidden(&attributes.group, &attributes.resource, "", &message));
        }
        let groups = match self.req.impersonate_user {
            Some(_) => json!(self.req.impersonate_groups),
            None => json!(["system:authenticated"]),
        };
        Ok(Reply::json(
            201,
            &json!({
                "apiVersion": "authentication.k8s.io/v1",
                "kind": "SelfSubjectReview",
                "metadata": { "creationTimestamp": null },
                "status": { "userInfo": { "username": attributes.user, "groups": groups } },
            }),
        ))
    }

    fn stored(&self, t: &Target) -> Result<Value, ApiError> {
        self.store.get_key(&t.key(t.name())).cloned().ok_or_else(|| ApiError::not_found(&t.def, t.name()))
    }

    /// Turns a client's object into a new object: type and identity fields set by the
    /// server, status dropped when it is a subresource (as the CRD registry does).
    fn prepare_new(&mut self, t: &Target, object: &mut Value, name: &str) {
        let def = &t.def;
        object["apiVersion"] = def.api_version().into();
        object["kind"] = def.kind.clone().into();
        let metadata = &mut object["metadata"];
        metadata["name"] = name.into();
        if let Some(metadata) = metadata.as_object_mut() {
            metadata.remove("resourceVersion");
            metadata.remove("deletionTimestamp");
            if def.namespaced {
                metadata.insert("namespace".into(), t.namespace().into());
            } else {
                metadata.remove("namespace");
            }
        }
        if def.status_subresource
            && let Some(map) = object.as_object_mut()
        {
            map.remove("status");
        }
        self.store.stamp_new(def, object);
    }

    /// Defaulting, then mutating admission (the main resource only, as webhooks registered
    /// without subresources).
    fn mutate(&self, t: &Target, object: &mut Value) {
        t.def.apply_defaults(object);
        if !t.status {
            self.config.mutations.iter().for_each(|hook| hook(&t.def.plural, object));
        }
    }

    fn admit(&self, verb: &str, t: &Target, object: &Value, old_object: Option<&Value>) -> Result<(), ApiError> {
        let name = object["metadata"]["name"].as_str().unwrap_or_default();
        let request = AdmissionRequest {
            verb,
            group: &t.def.group,
            version: &t.def.version,
            plural: &t.def.plural,
            subresource: t.subresource(),
            namespace: t.namespace(),
            name,
            dry_run: self.dry_run()?,
            object,
            old_object,
        };
        if self.config.enforce_owner_references {
            self.admit_owner_references(t, name, object, old_object)?;
        }
        // The object's own validation, as the API server's (ValidateAnnotationsSize).
        let annotations = object["metadata"]["annotations"].as_object().into_iter().flatten();
        let size: usize = annotations.map(|(key, value)| key.len() + value.as_str().map_or(0, str::len)).sum();
        if size > ANNOTATIONS_LIMIT {
            let detail = format!("Too long: must have at most {ANNOTATIONS_LIMIT} bytes");
            return Err(ApiError::invalid(&t.def, name, "metadata.annotations", &detail));
        }
        for (webhook, hook) in &self.config.webhooks {
            hook(&request).map_err(|msg| ApiError::admission_denied(&t.def, name, webhook, &msg))?;
        }
        Ok(())
    }

    /// The OwnerReferencesPermissionEnforcement admission plugin: an owner reference that newly
    /// blocks its owner's deletion needs `update` on the owner's `finalizers` (its message word
    /// for word, as OpenShift users see it).
    fn admit_owner_references(
        &self,
        t: &Target,
        name: &str,
        object: &Value,
        old_object: Option<&Value>,
    ) -> Result<(), ApiError> {
        let blocking = |o: Option<&Value>| -> Vec<Value> {
            let references = o.and_then(|o| o["metadata"]["ownerReferences"].as_array()).into_iter().flatten();
            references.filter(|r| r["blockOwnerDeletion"] == true).cloned().collect()
        };
        let old = blocking(old_object);
        for reference in blocking(Some(object)).iter().filter(|r| !old.contains(r)) {
            let owner = self
                .config
                .resources
                .iter()
                .find(|d| reference["apiVersion"] == d.api_version() && reference["kind"] == d.kind.as_str());
            let allowed = owner.is_some_and(|def| {
                let attributes = Attributes {
                    user: self.req.user(self.config).to_owned(),
                    verb: "update".into(),
                    group: def.group.clone(),
                    resource: def.plural.clone(),
                    subresource: "finalizers".into(),
                    namespace: t.namespace().to_owned(),
                    name: reference["name"].as_str().unwrap_or_default().to_owned(),
                };
                !denied(&self.config.rules, self.config.grants.as_deref(), &attributes)
            });
            if !allowed {
                let message = "cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on: , <nil>";
                return Err(ApiError::forbidden(&t.def.group, &t.def.plural, name, message));
            }
        }
        Ok(())
    }

    /// Stores `candidate` unless it is a dry run or changes nothing (the apiserver skips
    /// no-op writes, keeping the resourceVersion), and answers with the resulting object.
    fn persist(
        &mut self,
        t: &Target,
        name: &str,
        old: Option<&Value>,
        candidate: Value,
        status: u16,
    ) -> Result<Reply, ApiError> {
        if let Some(old) = old
            && same_content(old, &candidate)
        {
            return Ok(Reply::json(status, &as_served(&t.def, old.clone())));
        }
        let result = match self.dry_run()? {
            true => candidate,
            // The last finalizer of an object being deleted removed: it goes.
            false if candidate["metadata"]["deletionTimestamp"].is_string() && !has_finalizers(&candidate) => {
                self.store.remove(&t.key(name));
                candidate
            }
            false => self.store.commit(t.key(name), candidate),
        };
        Ok(Reply::json(status, &as_served(&t.def, result)))
    }

    /// `dryRun=All`; any other value is refused rather than ignored, so a typo never
    /// persists.
    fn dry_run(&self) -> Result<bool, ApiError> {
        match self.req.param("dryRun") {
            None => Ok(false),
            Some("All") => Ok(true),
            Some(other) => {
                Err(ApiError::bad_request(format!("Invalid dryRun value {other:?}: only \"All\" is supported")))
            }
        }
    }

    /// The JSON (or YAML) object in a create, update or review body.
    fn body_object(&self) -> Result<Value, ApiError> {
        let body = &self.req.body;
        let value: Value = match self.req.media_type().as_deref() {
            None | Some("application/json") => serde_json::from_slice(body)
                .map_err(|e| ApiError::bad_request(format!("unable to decode request body: {e}")))?,
            Some("application/yaml") => serde_saphyr::from_slice(body)
                .map_err(|e| ApiError::bad_request(format!("unable to decode request body: {e}")))?,
            Some(_) => {
                return Err(ApiError::unsupported_media_type(&["application/json", "application/yaml"]));
            }
        };
        if value.is_object() { Ok(value) } else { Err(ApiError::bad_request("the request body is not a JSON object")) }
    }

    fn patch_kind(&self, def: &ApiResourceDef) -> Result<PatchKind, ApiError> {
        // Custom resources have no strategic merge patch. For the core types served here
        // (ConfigMap) a strategic merge patch behaves as a JSON merge patch.
        let mut accepted = vec!["application/json-patch+json", "application/merge-patch+json"];
        if !def.custom {
            accepted.push("application/strategic-merge-patch+json");
        }
        accepted.push("application/apply-patch+yaml");
        match self.req.media_type().as_deref() {
            Some("application/json-patch+json") => Ok(PatchKind::Json),
            Some("application/merge-patch+json") => Ok(PatchKind::Merge),
            Some("application/strategic-merge-patch+json") if !def.custom => Ok(PatchKind::Merge),
            Some("application/apply-patch+yaml") => Ok(PatchKind::Apply),
            _ => Err(ApiError::unsupported_media_type(&accepted)),
        }
    }

    /// `ValidatePatchOptions`: apply needs a field manager, and only apply may force.
    fn validate_patch_options(&self, kind: PatchKind) -> Result<(), ApiError> {
        let field_manager = self.req.param("fieldManager").unwrap_or_default();
        let forced = self.req.param("force") == Some("true");
        let (field, detail) = match kind {
            PatchKind::Apply if field_manager.is_empty() => {
                ("fieldManager", "Required value: is required for apply patch")
            }
            PatchKind::Json | PatchKind::Merge if forced => {
                ("force", "Forbidden: may not be specified for non-apply patch")
            }
            _ => return Ok(()),
        };
        let options = ApiResourceDef::new("meta.k8s.io", "v1", "PatchOptions", "patchoptions");
        Err(ApiError::invalid(&options, "", field, detail))
    }

    fn apply_patch(&self, kind: PatchKind, object: &mut Value) -> Result<(), ApiError> {
        let body = &self.req.body;
        let decode_error = |e: &dyn std::fmt::Display| ApiError::bad_request(format!("unable to decode patch: {e}"));
        match kind {
            PatchKind::Merge => {
                let patch: Value = serde_json::from_slice(body).map_err(|e| decode_error(&e))?;
                json_patch::merge(object, &patch);
            }
            PatchKind::Json => {
                let patch: json_patch::Patch = serde_json::from_slice(body).map_err(|e| decode_error(&e))?;
                json_patch::patch(object, &patch).map_err(|_| ApiError::patch_failed())?;
            }
            // Approximation: server-side apply merges the applied configuration without
            // tracking field ownership. kube sends JSON, which is YAML too.
            PatchKind::Apply => {
                let patch: Value = serde_json::from_slice(body)
                    .or_else(|_| serde_saphyr::from_slice(body))
                    .map_err(|e| decode_error(&e))?;
                json_patch::merge(object, &patch);
            }
        }
        Ok(())
    }
}

/// The replacement for `old` that an update or patch produces, following the registry's
/// rules: identity fields are kept; a status write changes only `.status`, and a main
/// write leaves `.status` alone when status is a subresource.
fn updated_object(t: &Target, old: &Value, mut new: Value) -> Value {
    let def = &t.def;
    let mut result = if t.status {
        let mut result = old.clone();
        set_or_remove(&mut result, "status", new.get_mut("status").map(Value::take));
        result
    } else {
        if def.status_subresource {
            set_or_remove(&mut new, "status", old.get("status").cloned());
        }
        new["metadata"]["name"] = t.name().into();
        if def.namespaced {
            new["metadata"]["namespace"] = t.namespace().into();
        }
        carry_over_identity(def, old, &mut new);
        // Set by a delete only (`Store::put`, the tests' own hand, may set them).
        for field in ["deletionTimestamp", "deletionGracePeriodSeconds"] {
            if let Some(metadata) = new["metadata"].as_object_mut() {
                match old["metadata"].get(field) {
                    Some(kept) => metadata.insert(field.into(), kept.clone()),
                    None => metadata.remove(field),
                };
            }
        }
        new
    };
    result["apiVersion"] = def.api_version().into();
    result["kind"] = def.kind.clone().into();
    result["metadata"]["resourceVersion"] = old["metadata"]["resourceVersion"].clone();
    result
}

/// The apiserver's refusal of a finalizer added to an object being deleted.
fn no_new_finalizers_while_deleted(t: &Target, old: &Value, new: &Value) -> Result<(), ApiError> {
    let names = |object: &Value| object["metadata"]["finalizers"].as_array().cloned().unwrap_or_default();
    let (before, after) = (names(old), names(new));
    if old["metadata"]["deletionTimestamp"].is_string() && after.iter().any(|f| !before.contains(f)) {
        return Err(ApiError::invalid(
            &t.def,
            t.name(),
            "metadata.finalizers",
            "Forbidden: no new finalizers can be added if the object is being deleted",
        ));
    }
    Ok(())
}

fn has_finalizers(object: &Value) -> bool {
    object["metadata"]["finalizers"].as_array().is_some_and(|finalizers| !finalizers.is_empty())
}

fn set_or_remove(object: &mut Value, field: &str, value: Option<Value>) {
    match (value, object.as_object_mut()) {
        (Some(value), Some(map)) => {
            map.insert(field.into(), value);
        }
        (None, Some(map)) => {
            map.remove(field);
        }
        (_, None) => {}
    }
}

/// Equal apart from `apiVersion` (storage is shared by all versions of a group).
fn same_content(a: &Value, b: &Value) -> bool {
    let strip = |v: &Value| {
        let mut v = v.clone();
        set_or_remove(&mut v, "apiVersion", None);
        v
    };
    strip(a) == strip(b)
}

/// `checkName`: the body's name must equal the URL's, and its namespace, when set, too.
fn check_name(object: &Value, name: &str, namespace: &str) -> Result<(), ApiError> {
    let body_name = object["metadata"]["name"].as_str().unwrap_or_default();
    if body_name != name {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({body_name}) does not match the name on the URL ({name})"
        )));
    }
    let body_namespace = object["metadata"]["namespace"].as_str().unwrap_or_default();
    if !namespace.is_empty() && !body_namespace.is_empty() && body_namespace != namespace {
        return Err(ApiError::bad_request(format!(
            "the namespace of the object ({body_namespace}) does not match the namespace on the URL ({namespace})"
        )));
    }
    Ok(())
}

/// The object as served at the request's version (no schema conversion, as for CRDs
/// with `conversion: None`).
fn as_served(def: &ApiResourceDef, mut object: Value) -> Value {
    object["apiVersion"] = def.api_version().into();
    object["kind"] = def.kind.clone().into();
    object
}

/// Where an object sits in list order; `continue` tokens are `namespace/name` of the last
/// item returned (names cannot contain `/`).
fn position(object: &Value) -> (&str, &str) {
    let metadata = &object["metadata"];
    (metadata["namespace"].as_str().unwrap_or_default(), metadata["name"].as_str().unwrap_or_default())
}

/// Decodes `%XX` escapes; invalid escapes are kept as they are.
/// A SelfSubjectReview as the authorizer sees it: a create of the cluster-scoped
/// `selfsubjectreviews`, so that a deny rule (or a fault's) can match it.
fn self_subject_review_attributes(config: &Config, req: &ApiRequest) -> Attributes {
    Attributes {
        user: req.user(config).to_owned(),
        verb: "create".into(),
        group: "authentication.k8s.io".into(),
        resource: "selfsubjectreviews".into(),
        ..Attributes::default()
    }
}

pub(crate) fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Splits a query string into decoded pairs (`+` is a space).
pub(crate) fn parse_query(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            let decode = |s: &str| percent_decode(&s.replace('+', " "));
            (decode(key), decode(value))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_decoding() {
        assert_eq!(
            parse_query("labelSelector=app%3Dweb%2Ctier+in+(a%2Cb)&dryRun=All&&watch"),
            vec![
                ("labelSelector".into(), "app=web,tier in (a,b)".into()),
                ("dryRun".into(), "All".into()),
                ("watch".into(), String::new()),
            ]
        );
        assert_eq!(percent_decode("100%"), "100%");
    }
}
