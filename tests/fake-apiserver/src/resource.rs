//! Resource types the fake server serves, and presets for the ones the plugin touches.

use std::cmp::Ordering;

use serde_json::{Value, json};

/// One served group/version/kind, as a CRD version or a built-in type would register it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiResourceDef {
    /// API group; `""` for the core group (`/api/v1`).
    pub group: String,
    pub version: String,
    pub kind: String,
    /// Lower-case plural used in URLs (`rollouts`).
    pub plural: String,
    pub singular: String,
    pub namespaced: bool,
    /// Serve `<plural>/status`; writes to the main resource then leave `.status` alone.
    pub status_subresource: bool,
    pub short_names: Vec<String>,
    /// A custom resource (CRD): no strategic merge patch. Defaults to a non-core group.
    pub custom: bool,
    /// `metadata.generation` is set on create and moves on with every change outside
    /// metadata (and status, when it is a subresource). Defaults to `custom`.
    pub tracks_generation: bool,
    /// A PUT without `metadata.resourceVersion` is accepted (most built-in types); custom
    /// resources refuse it. Defaults to `!custom`.
    pub unconditional_update: bool,
    /// Defaults the API server fills in on every write.
    pub defaults: Defaults,
    /// A deprecated version's warning (a CRD version's `deprecationWarning`): every reply for
    /// the resource carries it in a `Warning: 299 - "…"` header.
    pub deprecation_warning: Option<String>,
}

/// The defaults the API server gives objects of a kind, as its defaulting functions or a CRD's
/// schema `default`s do.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Defaults {
    #[default]
    None,
    /// `networking.k8s.io/v1` Ingress: `status.loadBalancer: {}`.
    Ingress,
    /// Gateway API HTTPRoute's schema defaults: parentRefs' group and kind, a catch-all rule
    /// and match (`PathPrefix /`), header and query matches `Exact`, backendRefs' group,
    /// kind and weight.
    HttpRoute,
}

impl ApiResourceDef {
    /// A namespaced resource without status subresource or short names; `singular` is the
    /// lower-cased kind. Adjust the public fields for anything else.
    pub fn new(group: &str, version: &str, kind: &str, plural: &str) -> Self {
        Self {
            group: group.to_owned(),
            version: version.to_owned(),
            kind: kind.to_owned(),
            plural: plural.to_owned(),
            singular: kind.to_lowercase(),
            namespaced: true,
            status_subresource: false,
            short_names: Vec::new(),
            custom: !group.is_empty(),
            tracks_generation: !group.is_empty(),
            unconditional_update: group.is_empty(),
            defaults: Defaults::None,
            deprecation_warning: None,
        }
    }

    /// The resource with a deprecated version's warning (see `deprecation_warning`).
    pub fn deprecated(mut self, warning: &str) -> Self {
        self.deprecation_warning = Some(warning.into());
        self
    }

    /// `group/version`, or just `version` for the core group.
    pub fn api_version(&self) -> String {
        group_version(&self.group, &self.version)
    }

    /// `plural.group` (`rollouts.rollouts.kruise.io`), the form API error messages use.
    pub(crate) fn qualified_plural(&self) -> String {
        if self.group.is_empty() { self.plural.clone() } else { format!("{}.{}", self.plural, self.group) }
    }

    /// `Kind.group` (`Rollout.rollouts.kruise.io`), the form validation errors use.
    pub(crate) fn qualified_kind(&self) -> String {
        if self.group.is_empty() { self.kind.clone() } else { format!("{}.{}", self.kind, self.group) }
    }

    fn with_status(mut self) -> Self {
        self.status_subresource = true;
        self
    }

    fn with_short_names(mut self, names: &[&str]) -> Self {
        self.short_names = names.iter().map(|n| (*n).to_owned()).collect();
        self
    }

    /// A type built into kube-apiserver (strategic merge patch served).
    fn built_in(mut self, tracks_generation: bool, unconditional_update: bool) -> Self {
        self.custom = false;
        self.tracks_generation = tracks_generation;
        self.unconditional_update = unconditional_update;
        self
    }

    /// Fills in what the API server defaults in `object` (a whole object of this kind).
    pub(crate) fn apply_defaults(&self, object: &mut Value) {
        match self.defaults {
            Defaults::None => {}
            Defaults::Ingress => {
                if !object["status"]["loadBalancer"].is_object() {
                    object["status"]["loadBalancer"] = json!({});
                }
            }
            Defaults::HttpRoute => default_http_route(&mut object["spec"]),
        }
    }
}

/// The `default`s of the HTTPRoute CRD's schema (Gateway API v1.x standard channel).
fn default_http_route(spec: &mut Value) {
    if !spec.is_object() {
        return;
    }
    for parent in items(spec, "parentRefs") {
        default_field(parent, "group", json!("gateway.networking.k8s.io"));
        default_field(parent, "kind", json!("Gateway"));
    }
    let catch_all = json!({ "path": { "type": "PathPrefix", "value": "/" } });
    default_field(spec, "rules", json!([{ "matches": [catch_all.clone()] }]));
    for rule in items(spec, "rules") {
        default_field(rule, "matches", json!([catch_all.clone()]));
        for m in items(rule, "matches") {
            default_field(m, "path", json!({}));
            default_field(&mut m["path"], "type", json!("PathPrefix"));
            default_field(&mut m["path"], "value", json!("/"));
            for list in ["headers", "queryParams"] {
                for h in items(m, list) {
                    default_field(h, "type", json!("Exact"));
                }
            }
        }
        for backend in items(rule, "backendRefs") {
            default_field(backend, "group", json!(""));
            default_field(backend, "kind", json!("Service"));
            default_field(backend, "weight", json!(1));
        }
    }
}

/// The elements of an array field (none when it is absent or not an array; indexing a
/// `Value` mutably would insert a null).
fn items<'a>(object: &'a mut Value, field: &str) -> impl Iterator<Item = &'a mut Value> {
    object.get_mut(field).and_then(Value::as_array_mut).into_iter().flatten()
}

/// Sets `object[field]` when `object` is an object without it (a schema default applies to
/// absent fields only).
fn default_field(object: &mut Value, field: &str, value: Value) {
    if let Some(map) = object.as_object_mut() {
        map.entry(field).or_insert(value);
    }
}

pub(crate) fn group_version(group: &str, version: &str) -> String {
    if group.is_empty() { version.to_owned() } else { format!("{group}/{version}") }
}

/// `rollouts.kruise.io` Rollout (`v1alpha1` or `v1beta1`), with status subresource.
pub fn rollouts(version: &str) -> ApiResourceDef {
    ApiResourceDef::new("rollouts.kruise.io", version, "Rollout", "rollouts").with_status()
}

/// `rollouts.kruise.io/v1alpha1` TrafficRouting, with status subresource.
pub fn trafficroutings() -> ApiResourceDef {
    ApiResourceDef::new("rollouts.kruise.io", "v1alpha1", "TrafficRouting", "trafficroutings").with_status()
}

/// `networking.istio.io` VirtualService (`v1alpha3`, `v1beta1` or `v1`), short name `vs`.
pub fn virtualservices(version: &str) -> ApiResourceDef {
    ApiResourceDef::new("networking.istio.io", version, "VirtualService", "virtualservices")
        .with_status()
        .with_short_names(&["vs"])
}

/// `networking.istio.io` DestinationRule (`v1alpha3`, `v1beta1` or `v1`), short name `dr`.
pub fn destinationrules(version: &str) -> ApiResourceDef {
    ApiResourceDef::new("networking.istio.io", version, "DestinationRule", "destinationrules")
        .with_status()
        .with_short_names(&["dr"])
}

/// Core `v1` ConfigMap, short name `cm`.
pub fn configmaps() -> ApiResourceDef {
    ApiResourceDef::new("", "v1", "ConfigMap", "configmaps").with_short_names(&["cm"])
}

/// `coordination.k8s.io/v1` Lease (built in; no status, no generation, updates need a
/// resourceVersion).
pub fn leases() -> ApiResourceDef {
    ApiResourceDef::new("coordination.k8s.io", "v1", "Lease", "leases").built_in(false, false)
}

/// `networking.k8s.io/v1` Ingress (built in; status subresource, generation tracked,
/// `status.loadBalancer: {}` defaulted), short name `ing`.
pub fn ingresses() -> ApiResourceDef {
    let mut def = ApiResourceDef::new("networking.k8s.io", "v1", "Ingress", "ingresses")
        .with_status()
        .with_short_names(&["ing"])
        .built_in(true, true);
    def.defaults = Defaults::Ingress;
    def
}

/// `gateway.networking.k8s.io` HTTPRoute (`v1` or `v1beta1`; serve both to see one stored
/// object at both versions), a custom resource with status subresource and the CRD's
/// defaults.
pub fn httproutes(version: &str) -> ApiResourceDef {
    let mut def = ApiResourceDef::new("gateway.networking.k8s.io", version, "HTTPRoute", "httproutes").with_status();
    def.defaults = Defaults::HttpRoute;
    def
}

/// `apps/v1` Deployment (built in; status subresource, generation tracked), short name
/// `deploy`: the workload a Rollout's partition steps are measured against.
pub fn deployments() -> ApiResourceDef {
    ApiResourceDef::new("apps", "v1", "Deployment", "deployments")
        .with_status()
        .with_short_names(&["deploy"])
        .built_in(true, true)
}

/// HTTPRoutes at `v1` and `v1beta1`, Ingresses and Leases: what the other routing kinds and
/// the claim on a Rollout need, to serve next to [`kruise_and_istio`].
pub fn gateway_ingress_and_leases() -> Vec<ApiResourceDef> {
    vec![httproutes("v1"), httproutes("v1beta1"), ingresses(), leases()]
}

/// Core `v1` Service, short name `svc`: the canary Service a step routes to.
pub fn services() -> ApiResourceDef {
    ApiResourceDef::new("", "v1", "Service", "services").with_short_names(&["svc"])
}

/// Every kind the plugin reads or writes: [`kruise_and_istio`], [`gateway_ingress_and_leases`],
/// [`services`] and [`deployments`]. What the `fake-apiserver` binary serves.
pub fn plugin_kinds() -> Vec<ApiResourceDef> {
    let mut kinds = kruise_and_istio();
    kinds.extend(gateway_ingress_and_leases());
    kinds.push(services());
    kinds.push(deployments());
    kinds
}

/// Rollouts (v1alpha1 and v1beta1), TrafficRoutings, VirtualServices and DestinationRules
/// (v1alpha3 and v1beta1) and ConfigMaps: what a cluster with Kruise Rollout and Istio serves.
pub fn kruise_and_istio() -> Vec<ApiResourceDef> {
    vec![
        rollouts("v1beta1"),
        rollouts("v1alpha1"),
        trafficroutings(),
        virtualservices("v1beta1"),
        virtualservices("v1alpha3"),
        destinationrules("v1beta1"),
        destinationrules("v1alpha3"),
        configmaps(),
    ]
}

/// Orders versions the way the API server lists them in discovery (most preferred first):
/// GA before beta before alpha, higher numbers first, unparsable versions last by name.
/// This is `version.CompareKubeAwareVersionStrings`.
pub(crate) fn kube_version_order(a: &str, b: &str) -> Ordering {
    match (parse_kube_version(a), parse_kube_version(b)) {
        (Some(x), Some(y)) => y.cmp(&x),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => a.cmp(b),
    }
}

/// `(stability, major, minor)` where stability is 2 for GA, 1 for beta, 0 for alpha.
fn parse_kube_version(v: &str) -> Option<(u8, u32, u32)> {
    let rest = v.strip_prefix('v')?;
    let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
    let major = rest[..digits].parse().ok()?;
    let suffix = &rest[digits..];
    if suffix.is_empty() {
        return Some((2, major, 0));
    }
    let (stability, minor) = if let Some(n) = suffix.strip_prefix("beta") {
        (1, n)
    } else if let Some(n) = suffix.strip_prefix("alpha") {
        (0, n)
    } else {
        return None;
    };
    Some((stability, major, minor.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_sort_like_kube() {
        let mut versions = vec!["v1alpha1", "foo", "v1", "v2beta1", "v1beta2", "v1alpha3", "v2"];
        versions.sort_by(|a, b| kube_version_order(a, b));
        assert_eq!(versions, ["v2", "v1", "v2beta1", "v1beta2", "v1alpha3", "v1alpha1", "foo"]);
    }
}
