//! What an owner (a Rollout or a TrafficRouting) routes, worked out once: its identity, its
//! services, the providers of its `trafficRoutings[0]` in the controller's order, and the
//! objects each provider reads and writes. Reading, planning, `status`, `record` and `restore`
//! all ask this value instead of deriving the objects themselves.

use super::{ObjectRef, Permission, Rollout, TrafficRoutingCr, api_group};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::Arc;

/// The version Ingresses are read and written at (the controller's `networking.k8s.io/v1`).
pub const INGRESS_API_VERSION: &str = "networking.k8s.io/v1";

/// The version the controller reads and writes HTTPRoutes at (gateway-api v0.8.1's types).
pub const HTTP_ROUTE_API_VERSION: &str = "gateway.networking.k8s.io/v1beta1";

/// The canary Ingress the controller makes next to a stable one: the name is fixed, not
/// configurable.
pub fn canary_ingress_name(ingress: &str) -> String {
    format!("{ingress}-canary")
}

/// Which object: API group, kind, namespace and name. The version is not part of it: the API
/// server serves an object at every version of its kind.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectKey {
    pub group: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
}

impl ObjectKey {
    pub fn new(group: &str, kind: &str, namespace: &str, name: &str) -> ObjectKey {
        ObjectKey { group: group.into(), kind: kind.into(), namespace: namespace.into(), name: name.into() }
    }

    /// The object a ref names in `namespace`.
    pub fn of_ref(reference: &ObjectRef, namespace: &str) -> ObjectKey {
        ObjectKey::new(reference.group(), &reference.kind, namespace, &reference.name)
    }

    /// An object's own key, from its apiVersion, kind and name; `namespace` is where it is.
    pub fn of_object(object: &Value, namespace: &str) -> ObjectKey {
        let field = |value: &Value| value.as_str().unwrap_or_default().to_string();
        ObjectKey {
            group: api_group(object["apiVersion"].as_str().unwrap_or_default()).to_string(),
            kind: field(&object["kind"]),
            namespace: namespace.to_string(),
            name: field(&object["metadata"]["name"]),
        }
    }
}

/// `VirtualService shop/demo`.
impl fmt::Display for ObjectKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}/{}", self.kind, self.namespace, self.name)
    }
}

/// Objects by key: what a plan reads.
#[derive(Clone, Debug, Default)]
pub struct ObjectIndex {
    /// Shared with the plans made from them: an object as read is held once.
    objects: BTreeMap<ObjectKey, Arc<Value>>,
    /// Objects looked for in a cluster and not found. Among files nothing is known to be
    /// absent: an object may just not be in them.
    absent: BTreeSet<ObjectKey>,
    /// Objects a cluster could not be read: the failure, and, for a refusal (403), the
    /// permission that would allow the read.
    unread: BTreeMap<ObjectKey, (String, Option<Permission>)>,
}

impl ObjectIndex {
    /// Adds (or replaces) an object found in `namespace`.
    pub fn insert(&mut self, namespace: &str, object: impl Into<Arc<Value>>) {
        let object = object.into();
        let key = ObjectKey::of_object(&object, namespace);
        self.absent.remove(&key);
        self.objects.insert(key, object);
    }

    /// Notes that `key` was looked for and does not exist.
    pub fn insert_absent(&mut self, key: ObjectKey) {
        self.objects.remove(&key);
        self.absent.insert(key);
    }

    /// Notes that reading `key` failed with `failure`; refused, the permission `needed` for it.
    pub fn insert_unread(&mut self, key: ObjectKey, failure: String, needed: Option<Permission>) {
        self.unread.insert(key, (failure, needed));
    }

    pub fn get(&self, key: &ObjectKey) -> Option<&Arc<Value>> {
        self.objects.get(key)
    }

    /// Why reading `key` failed, and what would allow it when it was refused, when it failed.
    pub fn unread(&self, key: &ObjectKey) -> Option<(&str, Option<&Permission>)> {
        self.unread.get(key).map(|(failure, needed)| (failure.as_str(), needed.as_ref()))
    }

    /// Whether `key` is known not to exist (it was looked for in a cluster).
    pub fn is_absent(&self, key: &ObjectKey) -> bool {
        self.absent.contains(key)
    }

    /// The namespaces other than `key`'s that hold an object of its kind and name.
    pub fn namespaces_elsewhere<'a>(&'a self, key: &'a ObjectKey) -> impl Iterator<Item = &'a str> {
        self.objects
            .keys()
            .filter(move |k| {
                k.group == key.group && k.kind == key.kind && k.name == key.name && k.namespace != key.namespace
            })
            .map(|k| k.namespace.as_str())
    }

    /// The objects of a kind in a namespace.
    pub fn of_kind<'a>(&'a self, group: &'a str, kind: &'a str, namespace: &'a str) -> impl Iterator<Item = &'a Value> {
        self.objects
            .iter()
            .filter(move |(k, _)| k.group == group && k.kind == kind && k.namespace == namespace)
            .map(|(_, object)| &**object)
    }
}

/// The kind of owner whose routing this is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OwnerKind {
    Rollout,
    TrafficRouting,
}

impl OwnerKind {
    /// Why the canary Service is the stable one, when it is (docs/controller-semantics.md §3.2),
    /// for warnings about what follows.
    pub fn why_canary_is_stable(self) -> &'static str {
        match self {
            OwnerKind::Rollout => "disableGenerateCanaryService",
            OwnerKind::TrafficRouting => "a TrafficRouting routes to the stable Service itself",
        }
    }
}

/// Who routes: what the controller names as the owner of the objects it creates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Owner {
    pub kind: OwnerKind,
    pub namespace: String,
    pub name: String,
    /// For the owner reference of objects the controller creates (a canary Ingress); empty
    /// when the owner was read from a file without one.
    pub uid: String,
}

impl Owner {
    /// The one owner reference the controller gives the objects it creates for this owner (a
    /// canary Ingress): a controller reference.
    pub fn reference(&self) -> Value {
        let (api_version, kind) = match self.kind {
            OwnerKind::Rollout => ("rollouts.kruise.io/v1beta1", "Rollout"),
            OwnerKind::TrafficRouting => ("rollouts.kruise.io/v1alpha1", "TrafficRouting"),
        };
        serde_json::json!({"apiVersion": api_version, "kind": kind, "name": self.name, "uid": self.uid,
                           "controller": true, "blockOwnerDeletion": true})
    }
}

/// `Rollout` or `TrafficRouting`.
impl fmt::Display for OwnerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            OwnerKind::Rollout => "Rollout",
            OwnerKind::TrafficRouting => "TrafficRouting",
        })
    }
}

/// `Rollout shop/demo`.
impl fmt::Display for Owner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}/{}", self.kind, self.namespace, self.name)
    }
}

/// One way the controller routes traffic, in the order it runs them.
#[derive(Clone, Debug, PartialEq)]
pub enum Provider {
    /// `customNetworkRefs`: one Lua script per object, run on its stored original.
    Custom(Vec<ObjectRef>),
    /// `ingress`: a canary Ingress next to the stable one, annotated by the class's Lua script.
    Ingress { name: String, class_type: String },
    /// `gateway`: the HTTPRoute's rules, rewritten in Go.
    Gateway { http_route: String },
}

impl Provider {
    /// The objects this provider reads (in the owner's namespace), at the version the
    /// controller reads them; the objects it writes are among them. An Ingress provider reads
    /// the stable Ingress and writes the canary Ingress. (This tool reads an HTTPRoute at `v1`
    /// when the API server serves it: `source::live`.)
    pub fn refs(&self) -> Vec<ObjectRef> {
        let at = |api_version: &str, kind: &str, name: String| ObjectRef {
            api_version: api_version.into(),
            kind: kind.into(),
            name,
        };
        match self {
            Provider::Custom(refs) => refs.clone(),
            Provider::Ingress { name, .. } => vec![
                at(INGRESS_API_VERSION, "Ingress", name.clone()),
                at(INGRESS_API_VERSION, "Ingress", canary_ingress_name(name)),
            ],
            Provider::Gateway { http_route } => {
                vec![at(HTTP_ROUTE_API_VERSION, super::http_route::KIND, http_route.clone())]
            }
        }
    }

    /// Whether this provider writes the object `kind`/`name` (in the owner's namespace): one of
    /// its custom refs, its canary Ingress (never the stable one) or its HTTPRoute.
    pub fn writes(&self, kind: &str, name: &str) -> bool {
        match self {
            Provider::Custom(refs) => refs.iter().any(|r| r.kind == kind && r.name == name),
            Provider::Ingress { name: ingress, .. } => kind == "Ingress" && name == canary_ingress_name(ingress),
            Provider::Gateway { http_route } => kind == super::http_route::KIND && name == http_route,
        }
    }

    /// The keys of `refs` in `namespace`.
    pub fn objects(&self, namespace: &str) -> Vec<ObjectKey> {
        self.refs().iter().map(|r| ObjectKey::of_ref(r, namespace)).collect()
    }
}

/// The routing of one owner: `trafficRoutings[0]` of a Rollout (the controller reads only the
/// first entry), or `objectRef[0]` of a TrafficRouting.
#[derive(Clone, Debug, PartialEq)]
pub struct Routing {
    pub owner: Owner,
    pub stable_service: String,
    pub canary_service: String,
    /// In the controller's order: custom refs, ingress, gateway (only those configured).
    pub providers: Vec<Provider>,
    /// Whether the owner has a release in progress, as its status says: the controller routes
    /// and restores the objects only then. What tells an HTTPRoute routed to the stable
    /// Service itself (canary = stable) from one no release touched.
    pub releasing: bool,
}

impl Routing {
    /// A Rollout's own routing; None when it has no `trafficRoutings`.
    pub fn of_rollout(rollout: &Rollout, namespace: &str) -> Option<Routing> {
        let routing = rollout.traffic_routing.as_ref()?;
        let owner = Owner {
            kind: OwnerKind::Rollout,
            namespace: namespace.into(),
            name: rollout.name.clone(),
            uid: rollout.uid.clone(),
        };
        // The controller makes `<service>-canary` unless told not to
        // (docs/controller-semantics.md §3.2).
        let canary_service = if rollout.disable_generate_canary_service {
            routing.service.clone()
        } else {
            format!("{}-canary", routing.service)
        };
        Some(Routing::new(owner, routing, canary_service, rollout.releasing()))
    }

    /// A TrafficRouting's routing: it never generates a canary Service, so canary and stable
    /// are the same name.
    pub fn of_traffic_routing(cr: &TrafficRoutingCr, namespace: &str) -> Routing {
        let owner = Owner {
            kind: OwnerKind::TrafficRouting,
            namespace: namespace.into(),
            name: cr.name.clone(),
            uid: cr.uid.clone(),
        };
        // It routes while a Rollout holds it, and restores when it finalises (§2).
        let releasing = !cr.progressing_finalizers.is_empty()
            || cr.being_deleted()
            || matches!(cr.phase.as_deref(), Some("Progressing" | "Finalizing"));
        Routing::new(owner, &cr.traffic_routing, cr.traffic_routing.service.clone(), releasing)
    }

    fn new(owner: Owner, routing: &super::TrafficRoutingRef, canary_service: String, releasing: bool) -> Routing {
        let mut providers = Vec::new();
        if !routing.custom_network_refs.is_empty() {
            providers.push(Provider::Custom(routing.custom_network_refs.clone()));
        }
        if let Some(ingress) = &routing.ingress {
            providers.push(Provider::Ingress { name: ingress.name.clone(), class_type: ingress.class_type.clone() });
        }
        if let Some(http_route) = &routing.gateway {
            providers.push(Provider::Gateway { http_route: http_route.clone() });
        }
        Routing { owner, stable_service: routing.service.clone(), canary_service, providers, releasing }
    }

    /// The first object the custom refs name twice (under one apiVersion or two), said. This
    /// tool plans and writes an object once for each name, so the second naming's store of the
    /// original would put it back between the step's routed writes.
    pub fn named_twice(&self) -> Option<String> {
        let refs = self.custom_refs();
        let keys: Vec<ObjectKey> = refs.iter().map(|r| ObjectKey::of_ref(r, &self.owner.namespace)).collect();
        keys.iter().enumerate().find_map(|(later, key)| {
            let first = keys[..later].iter().position(|k| k == key)?;
            Some(format!(
                "{key} is named twice among the customNetworkRefs of {} (as {} and as {})",
                self.owner, refs[first].api_version, refs[later].api_version
            ))
        })
    }

    /// The custom refs (empty when there are none).
    pub fn custom_refs(&self) -> &[ObjectRef] {
        self.providers
            .iter()
            .find_map(|p| match p {
                Provider::Custom(refs) => Some(refs.as_slice()),
                _ => None,
            })
            .unwrap_or_default()
    }

    /// The HTTPRoute of the `gateway` ref, if there is one.
    pub fn http_route(&self) -> Option<&str> {
        self.providers.iter().find_map(|p| match p {
            Provider::Gateway { http_route } => Some(http_route.as_str()),
            _ => None,
        })
    }

    /// Every object the routing reads, in provider order.
    pub fn objects(&self) -> Vec<ObjectKey> {
        self.providers.iter().flat_map(|p| p.objects(&self.owner.namespace)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rollout(routing: Value, disable_canary_service: bool) -> Rollout {
        Rollout::from_object(&json!({
            "apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout",
            "metadata": {"name": "demo", "namespace": "shop", "uid": "u-1"},
            "spec": {
                "workloadRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "demo"},
                "strategy": {"canary": {
                    "disableGenerateCanaryService": disable_canary_service,
                    "steps": [{"traffic": "10%"}],
                    "trafficRoutings": [routing],
                }},
            },
        }))
        .unwrap()
    }

    #[test]
    fn providers_come_in_the_controllers_order() {
        let r = rollout(
            json!({"service": "web", "gateway": {"httpRouteName": "route"}, "ingress": {"name": "web"},
                   "customNetworkRefs": [{"apiVersion": "networking.istio.io/v1beta1", "kind": "VirtualService", "name": "vs"}]}),
            false,
        );
        let routing = Routing::of_rollout(&r, "shop").unwrap();
        assert_eq!(routing.owner.to_string(), "Rollout shop/demo");
        assert_eq!(routing.owner.uid, "u-1");
        assert_eq!((routing.stable_service.as_str(), routing.canary_service.as_str()), ("web", "web-canary"));
        assert!(matches!(routing.providers[0], Provider::Custom(_)));
        assert_eq!(routing.providers[1], Provider::Ingress { name: "web".into(), class_type: "nginx".into() });
        assert_eq!(routing.providers[2], Provider::Gateway { http_route: "route".into() });
        assert_eq!(routing.providers.len(), 3);
        assert_eq!(
            routing.objects().iter().map(ToString::to_string).collect::<Vec<_>>(),
            ["VirtualService shop/vs", "Ingress shop/web", "Ingress shop/web-canary", "HTTPRoute shop/route"]
        );
        assert_eq!(routing.custom_refs().len(), 1);
        assert_eq!(routing.http_route(), Some("route"));
        // What each writes: never the stable Ingress, and only by kind and name.
        let writers = |kind: &str, name: &str| -> Vec<usize> {
            (0..3).filter(|&i| routing.providers[i].writes(kind, name)).collect()
        };
        assert_eq!(writers("VirtualService", "vs"), [0]);
        assert_eq!(writers("DestinationRule", "vs"), [] as [usize; 0]);
        assert_eq!(writers("Ingress", "web-canary"), [1]);
        assert_eq!(writers("Ingress", "web"), [] as [usize; 0]);
        assert_eq!(writers("HTTPRoute", "route"), [2]);
        assert_eq!(writers("HTTPRoute", "web"), [] as [usize; 0]);
    }

    #[test]
    fn an_object_named_twice_among_the_custom_refs_is_found() {
        let refs = |versions: &[&str], kinds: &[&str]| {
            let refs: Vec<Value> = versions
                .iter()
                .zip(kinds)
                .map(|(version, kind)| json!({"apiVersion": format!("networking.istio.io/{version}"), "kind": kind, "name": "vs"}))
                .collect();
            Routing::of_rollout(&rollout(json!({"service": "web", "customNetworkRefs": refs}), false), "shop")
                .unwrap()
                .named_twice()
        };
        assert_eq!(
            refs(&["v1beta1", "v1", "v1alpha3"], &["VirtualService", "DestinationRule", "VirtualService"]).as_deref(),
            Some(
                "VirtualService shop/vs is named twice among the customNetworkRefs of Rollout shop/demo (as networking.istio.io/v1beta1 and as networking.istio.io/v1alpha3)"
            )
        );
        assert!(refs(&["v1", "v1"], &["VirtualService", "VirtualService"]).is_some(), "the same apiVersion too");
        assert_eq!(refs(&["v1", "v1"], &["VirtualService", "DestinationRule"]), None, "two kinds of one name");
    }

    #[test]
    fn the_canary_service_is_the_stable_one_when_none_is_generated() {
        let r = rollout(json!({"service": "web", "ingress": {"name": "web", "classType": "higress"}}), true);
        let routing = Routing::of_rollout(&r, "shop").unwrap();
        assert_eq!(routing.canary_service, "web");
        assert!(routing.custom_refs().is_empty());
        assert_eq!(routing.http_route(), None);
        assert_eq!(routing.providers, [Provider::Ingress { name: "web".into(), class_type: "higress".into() }]);
    }

    #[test]
    fn a_routing_knows_whether_its_owner_has_a_release_in_progress() {
        let mut r = rollout(json!({"service": "web", "gateway": {"httpRouteName": "route"}}), true);
        for (phase, releasing) in [
            (None, false),
            (Some("Healthy"), false),
            (Some("Disabled"), false),
            (Some("Progressing"), true),
            (Some("Disabling"), true),
            (Some("Terminating"), true),
        ] {
            r.status.phase = phase.map(str::to_string);
            assert_eq!(Routing::of_rollout(&r, "shop").unwrap().releasing, releasing, "{phase:?}");
        }
        let cr = |status: Value, finalizers: Value| {
            TrafficRoutingCr::from_object(&json!({
                "apiVersion": "rollouts.kruise.io/v1alpha1", "kind": "TrafficRouting",
                "metadata": {"name": "tr", "finalizers": finalizers},
                "spec": {"objectRef": [{"service": "web", "gateway": {"httpRouteName": "route"}}], "strategy": {"weight": 10}},
                "status": status
            }))
            .unwrap()
        };
        let releasing = |cr: TrafficRoutingCr| Routing::of_traffic_routing(&cr, "shop").releasing;
        assert!(!releasing(cr(json!({"phase": "Healthy"}), json!(["rollouts.kruise.io/trafficrouting"]))));
        assert!(releasing(cr(json!({"phase": "Healthy"}), json!(["progressing.rollouts.kruise.io/demo"]))));
        assert!(releasing(cr(json!({"phase": "Finalizing"}), json!([]))));
    }

    #[test]
    fn one_key_whatever_the_version() {
        let vs = |version: &str| json!({"apiVersion": format!("networking.istio.io/{version}"), "kind": "VirtualService", "metadata": {"name": "web"}});
        assert_eq!(ObjectKey::of_object(&vs("v1"), "shop"), ObjectKey::of_object(&vs("v1beta1"), "shop"));
        let reference = ObjectRef {
            api_version: "networking.istio.io/v1alpha3".into(),
            kind: "VirtualService".into(),
            name: "web".into(),
        };
        assert_eq!(ObjectKey::of_ref(&reference, "shop"), ObjectKey::of_object(&vs("v1"), "shop"));
        assert_ne!(ObjectKey::of_object(&vs("v1"), "shop"), ObjectKey::of_object(&vs("v1"), "other"));
        let mut index = ObjectIndex::default();
        index.insert("shop", vs("v1"));
        assert!(index.get(&ObjectKey::of_ref(&reference, "shop")).is_some());
        assert!(index.get(&ObjectKey::of_ref(&reference, "other")).is_none());
    }

    #[test]
    fn an_index_knows_what_was_looked_for_and_not_found() {
        let ingress =
            |name: &str| json!({"apiVersion": INGRESS_API_VERSION, "kind": "Ingress", "metadata": {"name": name}});
        let mut index = ObjectIndex::default();
        index.insert("shop", ingress("web"));
        index.insert("shop", ingress("cart-canary"));
        index.insert("other", ingress("api"));
        let canary = ObjectKey::new("networking.k8s.io", "Ingress", "shop", "web-canary");
        assert!(!index.is_absent(&canary), "not looked for: unknown");
        index.insert_absent(canary.clone());
        assert!(index.is_absent(&canary) && index.get(&canary).is_none());
        index.insert("shop", ingress("web-canary"));
        assert!(!index.is_absent(&canary) && index.get(&canary).is_some());
        let names: Vec<&Value> =
            index.of_kind("networking.k8s.io", "Ingress", "shop").map(|i| &i["metadata"]["name"]).collect();
        assert_eq!(names, ["cart-canary", "web", "web-canary"]);
    }

    #[test]
    fn the_owner_reference_names_the_owner_as_controller() {
        let owner =
            Owner { kind: OwnerKind::TrafficRouting, namespace: "shop".into(), name: "tr".into(), uid: "u-2".into() };
        assert_eq!(
            owner.reference(),
            json!({"apiVersion": "rollouts.kruise.io/v1alpha1", "kind": "TrafficRouting", "name": "tr", "uid": "u-2",
                   "controller": true, "blockOwnerDeletion": true})
        );
    }
}
