//! Providers: each turns (routing, what the controller does at a stage, the live objects) into
//! an `ObjectPlan` per object: the object the controller would write, the writes that get it
//! there (`change::Change`), and warnings. The controller runs them in a fixed order (custom
//! refs, then ingress, then gateway) and the first error stops it; `plan::Planner` calls them
//! so.

pub mod case;
pub mod custom;
pub mod gateway;
pub mod ingress;

use crate::change::Change;
use crate::data;
use crate::error::Error;
use crate::lua::{Limits, Printed};
use crate::model::{
    self, ObjectIndex, ObjectKey, ObjectRef, Owner, OwnerKind, Path, Provider, Routing, RoutingAction, Stage,
    WeightSplit,
};
use crate::scripts::{self, ResolvedScript, ScriptKey, ScriptSource};
use serde_json::Value;
use std::sync::{Arc, OnceLock};

/// What planning an object needs besides the objects: the owner's routing, what the controller
/// does at the stage, the stage's label, the limits, where what scripts print goes, and whether
/// to keep a custom ref's obj.
pub struct Context<'a> {
    pub routing: &'a Routing,
    pub action: &'a RoutingAction,
    /// The stage's label, for messages.
    pub stage: &'a str,
    pub limits: &'a Limits,
    pub printed: &'a Printed,
    /// Whether a custom ref's plan keeps its script's input (`ObjectPlan::obj`).
    pub keep_obj: bool,
    /// Whether this is the first stage planned of the routing, whose plans `status` places the
    /// objects by: only there is a canary Ingress as read compared with the one the controller
    /// creates (`ObjectPlan::after_first_write`), a script run more.
    pub first: bool,
}

/// The gateway object `key` a stage starts from (`found`; `where_` says who routes through it,
/// `field` where: the ref's field within `owner`'s routing entry).
/// Missing at a stage the controller leaves alone, where it reads nothing and so misses nothing,
/// or restores, which skips it, it is null, with a warning; missing where it routes it is an
/// error, which names another namespace holding one of its kind and name (among files, most
/// often a manifest without a namespace).
fn starting_object(
    found: Option<&Arc<Value>>,
    action: &RoutingAction,
    key: &ObjectKey,
    objects: &ObjectIndex,
    where_: &str,
    (owner, field): (OwnerKind, Path),
) -> Result<(Arc<Value>, Option<String>), Error> {
    let namespace = &key.namespace;
    match (found, action) {
        (Some(object), _) => Ok((Arc::clone(object), None)),
        (None, RoutingAction::Leave) => Ok((
            Arc::new(Value::Null),
            Some(format!(
                "{key}: there is no such object in namespace {namespace}: the controller writes nothing here, but a step that routes it fails"
            )),
        )),
        // The controller's restore skips an object it does not find (§3.4, B.6).
        (None, RoutingAction::Restore) => Ok((
            Arc::new(Value::Null),
            Some(format!(
                "{key}: there is no such object in namespace {namespace}: the controller's restore skips it, but a step that routes it fails"
            )),
        )),
        (None, _) => {
            let elsewhere = match objects.namespaces_elsewhere(key).next() {
                Some(other) => format!(
                    " (one was read in namespace {other}: a manifest without metadata.namespace is put in -n's namespace, else in default)"
                ),
                None => String::new(),
            };
            let message = format!("{where_}, but there is no such object in namespace {namespace}{elsewhere}");
            Err(Error::Missing { owner, field, message })
        }
    }
}

/// Which provider writes an object of a routing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProviderKind {
    /// A custom ref: any kind but an Ingress or an HTTPRoute.
    Custom,
    /// A canary Ingress.
    Ingress,
    /// An HTTPRoute.
    Gateway,
}

impl ProviderKind {
    /// The provider that writes an object of `key`'s kind.
    pub fn of(key: &ObjectKey) -> ProviderKind {
        match (key.group.as_str(), key.kind.as_str()) {
            ("networking.k8s.io", "Ingress") => ProviderKind::Ingress,
            (model::http_route::GROUP, model::http_route::KIND) => ProviderKind::Gateway,
            _ => ProviderKind::Custom,
        }
    }
}

/// What routes to the canary Service in `key`, an object of a routing, as the warning of a
/// missing canary Service says it.
fn routes_to_canary(key: &ObjectKey) -> String {
    match ProviderKind::of(key) {
        ProviderKind::Ingress => "the canary Ingress".into(),
        ProviderKind::Gateway => "the HTTPRoute's canary backendRef".into(),
        ProviderKind::Custom => key.to_string(),
    }
}

/// The warning that canary Service `service`, which `key` (an object of the routing) routes
/// to, does not exist: requests sent to it fail. The controller creates the Service itself when
/// a step routes traffic, before it writes any provider (`generated`); when the canary Service
/// is the stable one (a TrafficRouting, or `disableGenerateCanaryService`) it waits for it
/// instead, and routes nothing (docs/controller-semantics.md §3.5).
pub fn missing_canary_service(service: &str, generated: bool, key: &ObjectKey) -> String {
    let routes = routes_to_canary(key);
    match generated {
        true => format!(
            "Service {service} does not exist: {routes} routes to it; the controller creates it at a step that routes, before it writes any routing (to every provider; not for a blue-green release's final route to the new version), but without the controller the canary traffic fails"
        ),
        false => format!(
            "Service {service} does not exist: the controller waits for it and writes nothing until it does, and {routes} routes to it"
        ),
    }
}

/// [`missing_canary_service`] for a stage of `routing` that routes to its canary Service
/// through `key`, when that Service is known not to exist (looked for in a cluster: among files
/// nothing is known to be absent). Not when the stable Service is missing too: the controller
/// then creates nothing, which [`missing_stable_service`] says.
pub fn canary_service_warning(routing: &Routing, objects: &ObjectIndex, key: &ObjectKey) -> Option<String> {
    let absent = |name: &str| objects.is_absent(&ObjectKey::new("", "Service", &routing.owner.namespace, name));
    let generated = routing.canary_service != routing.stable_service;
    (absent(&routing.canary_service) && !absent(&routing.stable_service))
        .then(|| missing_canary_service(&routing.canary_service, generated, key))
}

/// The warning that `routing`'s stable Service is known not to exist, for a plan with a stage
/// that routes: at such a step the controller reads it first and waits while it is missing,
/// writing nothing (ingress-gateway-semantics C.2, DoTrafficRouting).
pub fn missing_stable_service(routing: &Routing, objects: &ObjectIndex) -> Option<String> {
    let service = ObjectKey::new("", "Service", &routing.owner.namespace, &routing.stable_service);
    objects.is_absent(&service).then(|| match routing.owner.kind {
        OwnerKind::Rollout => format!(
            "Service {} does not exist: it is the stable Service (trafficRoutings[0].service), which the controller waits for at every step with traffic or matches, writing nothing there (no canary Service, no routing) until it does",
            routing.stable_service
        ),
        // DoTrafficRouting waits for it (C.2).
        OwnerKind::TrafficRouting => format!(
            "Service {} does not exist: it is TrafficRouting {}'s stable Service (objectRef[0].service), which its controller waits for, routing nothing until it does",
            routing.stable_service, routing.owner.name
        ),
    })
}

/// Whether `script`, filed under `key` (a kind's, or an Ingress class's), is the built-in script
/// of that key: built in, or given (`--script`, `--lua-dir`, the ConfigMap) with the built-in's
/// text, as `record --dir` copies it. It runs the same, so it is warned of the same.
pub fn runs_builtin(script: &ResolvedScript, key: &ScriptKey) -> bool {
    if matches!(script.source, ScriptSource::BuiltIn { .. }) {
        return true;
    }
    scripts::builtin_code(key).is_some_and(|code| scripts::sha256_hex(code) == script.sha256)
}

/// The key the script that plans `object`, an object of `routing`, is filed under: its kind's
/// for a custom ref, its class's for a canary Ingress; None for an HTTPRoute, which no script
/// plans.
fn script_key(routing: &Routing, object: &ObjectPlan) -> Option<ScriptKey> {
    match ProviderKind::of(&object.key) {
        ProviderKind::Custom => Some(scripts::key_of(&object.reference)),
        ProviderKind::Ingress => routing.providers.iter().find_map(|provider| match provider {
            Provider::Ingress { name, class_type } if ingress::canary_key(routing, name) == object.key => {
                Some(scripts::ingress_key(class_type))
            }
            _ => None,
        }),
        ProviderKind::Gateway => None,
    }
}

/// The objects whose script is not the built-in one and gets no weight at a step with matches
/// and no traffic, with those steps (None: a TrafficRouting planned alone, by its strategy): a
/// custom ref's gets `canaryWeight` -1 and `stableWeight` 101 (the built-in one treats it as
/// 100/0), a canary Ingress's `weight` "-1" (the built-in ones then write no weight annotation).
/// Warned of once per plan, not at each such step.
#[derive(Debug, Default)]
pub struct WithoutWeights(Vec<(ObjectRef, ProviderKind, Vec<Option<Stage>>)>);

impl WithoutWeights {
    /// Notes the objects of `routing` among `objects`, planned at `stage` as the controller routes
    /// it (`action`), whose script gets no weight there.
    pub fn note(&mut self, stage: Option<Stage>, routing: &Routing, objects: &[ObjectPlan], action: &RoutingAction) {
        let RoutingAction::Route(strategy) = action else { return };
        if strategy.traffic.is_some() || strategy.matches.as_ref().is_none_or(Vec::is_empty) {
            return;
        }
        for object in objects {
            let Action::Lua(script) = &object.action else { continue };
            let Some(key) = script_key(routing, object) else { continue };
            if runs_builtin(script, &key) {
                continue;
            }
            match self.0.iter_mut().find(|(reference, ..)| *reference == object.reference) {
                Some((.., stages)) if !stages.contains(&stage) => stages.push(stage),
                Some(_) => {}
                None => self.0.push((object.reference.clone(), ProviderKind::of(&object.key), vec![stage])),
            }
        }
    }

    pub fn warnings(self) -> Vec<String> {
        self.0
            .into_iter()
            .map(|(reference, kind, stages)| {
                let steps: Vec<String> = stages.iter().flatten().map(Stage::number).collect();
                let have = match steps.as_slice() {
                    [] => "the TrafficRouting's strategy has".to_string(),
                    [_] => format!("{} has", model::steps_named(&steps)),
                    _ => format!("{} have", model::steps_named(&steps)),
                };
                let gets = match kind {
                    ProviderKind::Ingress => "the script gets weight \"-1\" there: the built-in scripts then write no weight annotation; one that writes obj.weight as it is gives the canary Ingress a weight of \"-1\"",
                    _ => "the script gets canaryWeight -1 and stableWeight 101 there",
                };
                format!("{reference}: {have} matches and no traffic, so {gets}")
            })
            .collect()
    }
}

/// Whether a stage's weights split the traffic between canary and stable pods through
/// `objects`, the objects of `routing` planned at that stage: with canary = stable an HTTPRoute
/// weighs its one backendRef (docs/ingress-gateway-semantics.md B.7), and a canary Ingress
/// routes to the stable Service, over every pod of it unless its gateway tells pods apart (mse
/// with a pod subset: `ingress::balances_over_every_pod`); a custom ref's script decides (the
/// built-in VirtualService script routes to the subset canary).
pub fn weight_split(routing: &Routing, objects: &[ObjectPlan]) -> WeightSplit {
    if routing.canary_service != routing.stable_service {
        return WeightSplit::Split;
    }
    let not_split = |object: &ObjectPlan| {
        let reference = &object.reference;
        routing.providers.iter().filter(|provider| provider.writes(&reference.kind, &reference.name)).any(|provider| {
            match provider {
                Provider::Gateway { .. } => true,
                Provider::Ingress { class_type, .. } => matches!(&object.action, Action::Lua(script)
                    if ingress::balances_over_every_pod(
                        class_type,
                        runs_builtin(script, &scripts::ingress_key(class_type)),
                        &ingress::annotations_of(&object.planned),
                    ) == Some(true)),
                Provider::Custom(_) => false,
            }
        })
    };
    let unsplit: Vec<String> = objects.iter().filter(|o| not_split(o)).map(ObjectPlan::describe).collect();
    match (unsplit.len(), objects.len()) {
        (0, _) => WeightSplit::Split,
        (some, all) if some == all => WeightSplit::NotSplit,
        _ => WeightSplit::NotSplitThrough(unsplit),
    }
}

/// What the controller does to an object at a stage.
#[derive(Clone, Debug)]
pub enum Action {
    /// Runs the script and writes its result.
    Lua(ResolvedScript),
    /// No traffic and no matches: restores the stored original (the annotation goes away).
    Restore,
    /// No traffic and no matches: the controller's finalise deletes the object (a canary
    /// Ingress).
    Delete,
    /// Gateway API: the controller rewrites the HTTPRoute's rules in Go (said how: weight mode
    /// or match mode).
    Rules(String),
    /// Gateway API, no traffic and no matches: the controller's restore of the HTTPRoute's
    /// rules (said how).
    RestoreRules(String),
    /// The controller writes nothing to the object: left alone, for this reason.
    Keep(&'static str),
}

/// Why [`ObjectPlan::not_found`] writes nothing.
const MISSING_WHERE_ROUTED: &str = "not found: a step that routes it fails";

#[derive(Clone, Debug)]
pub struct ObjectPlan {
    pub reference: ObjectRef,
    pub key: ObjectKey,
    /// Whose routing plans it: a Rollout's own, or the TrafficRouting's it names.
    pub owner: Owner,
    /// The object as it is (null: it does not exist, a canary Ingress not made yet), shared
    /// with the objects read (or the plan of the stage before) and with `changes`.
    pub current: Arc<Value>,
    /// The object as the controller leaves it at the stage (null: there is none), shared with
    /// `changes`.
    pub planned: Arc<Value>,
    pub action: Action,
    /// The script's input (`obj`), when a script runs; a custom ref's only when the planner keeps
    /// them (`Planner::keeping_objs`).
    pub obj: Option<Arc<Value>>,
    pub warnings: Vec<String>,
    /// Why this tool must not write `planned` although the controller would (it works from a
    /// stored original that does not decode, and the result loses the original), or would try
    /// (the API server refuses its annotations).
    pub unwritable: Option<String>,
    /// The stored original, when it decodes but holds nothing (no spec, or an empty one):
    /// writing from it wipes the object, so `approve` and `restore` refuse it without `--force`.
    pub degenerate_original: Option<String>,
    /// What of the canary a custom ref without a stored original routes to already (`the
    /// canary Service NAME`, `the canary subset of Service NAME`): the controller would store
    /// that routing as its original, so `approve` refuses to write it without `--force`.
    pub canary_in_original: Option<String>,
    /// Why the controller would stick at this step on this object where this tool's write would
    /// not fail (its own script fails where the built-in one does not), so `approve` refuses to
    /// write it without `--force`.
    pub controller_sticks: Option<String>,
    /// Where the first of the two writes that route it leaves it, before a step's routing is
    /// written (the controller's first pass, or a run cut short after that write), so at its
    /// original and not edited by someone: a custom ref whose original is stored and whose spec,
    /// labels and annotations are that original's; a canary Ingress with the annotations it is
    /// created with.
    pub after_first_write: bool,
    /// A canary Ingress as read that this owner did not make (someone else's Ingress of that
    /// name), said why: `approve` refuses to write it without `--force`.
    pub foreign_canary: Option<String>,
    /// A write that leaves the stable Service without a rule (an HTTPRoute's, said why):
    /// `approve` refuses it without `--force`, as the requests it served no longer reach it.
    pub strands_stable: Option<String>,
    /// What `status` says of the object besides its position: a canary Ingress whose spec is not
    /// the one the stable Ingress makes now (a warning too), or whose ALB order another Ingress of
    /// its class has (the plan warns of the planned canary's order instead).
    pub notes: Vec<String>,
    /// The writes from `current` to `planned`, in order (one `Keep` when there are none).
    pub changes: Vec<Change>,
    /// Whether `current` shows no sign of a release (what `status` calls `original`, or
    /// `absent`): a custom ref without a stored original, an HTTPRoute without a backendRef to
    /// the canary Service, a canary Ingress that does not exist (`current` is null).
    pub untouched: bool,
    /// The stage whose result `current` is, when the plan starts from where an earlier stage
    /// left the object (an HTTPRoute's rules and a canary Ingress's annotations carry over);
    /// None: the object as read.
    pub after: Option<String>,
    /// Made `Changed::default()`: see [`ObjectPlan::changed`].
    pub changed: Changed,
}

/// Whether an object plan's `planned` routes differently from its `current`: asked for by
/// every rendering and count, and comparing encodes both specs, so it is worked out once, when
/// first asked (nothing changes `current` or `planned` once the plan is made).
#[derive(Clone, Debug, Default)]
pub struct Changed(OnceLock<bool>);

impl ObjectPlan {
    /// The plan of an object that does not exist at a stage that routes it, when placing the
    /// objects (`status`): that stage fails at the controller (`missing` says so, as `plan`'s
    /// error does), but the object is still placed, as absent, and the others with it.
    pub fn not_found(reference: &ObjectRef, owner: &Owner, missing: String) -> ObjectPlan {
        let key = ObjectKey::of_ref(reference, &owner.namespace);
        let nothing = Arc::new(Value::Null);
        ObjectPlan {
            reference: reference.clone(),
            changes: vec![Change::Keep { key: key.clone(), object: Arc::clone(&nothing) }],
            key,
            owner: owner.clone(),
            current: Arc::clone(&nothing),
            planned: nothing,
            action: Action::Keep(MISSING_WHERE_ROUTED),
            obj: None,
            warnings: Vec::new(),
            unwritable: None,
            degenerate_original: None,
            canary_in_original: None,
            controller_sticks: None,
            after_first_write: false,
            foreign_canary: None,
            strands_stable: None,
            notes: vec![format!("{missing}: a step that routes it fails at the controller (its restore skips it)")],
            untouched: true,
            after: None,
            changed: Changed::default(),
        }
    }

    /// Whether this is the plan of an object missing at a stage that routes it
    /// ([`ObjectPlan::not_found`]).
    pub fn missing_where_routed(&self) -> bool {
        matches!(self.action, Action::Keep(why) if why == MISSING_WHERE_ROUTED)
    }

    /// `VirtualService shop/demo`.
    pub fn describe(&self) -> String {
        self.key.to_string()
    }

    pub fn changed(&self) -> bool {
        *self.changed.0.get_or_init(|| !data::same_routing(&self.current, &self.planned))
    }

    /// The `action` of `plan -o json`: the first write's (`create`, `replace`, `patch`,
    /// `delete`), or `keep`.
    pub fn action_name(&self) -> &'static str {
        self.writes().next().map_or("keep", Change::action)
    }

    /// The changes that write something.
    pub fn writes(&self) -> impl Iterator<Item = &Change> {
        self.changes.iter().filter(|c| c.writes())
    }

    /// The plan, told that the object as read is being deleted (a deletionTimestamp, its
    /// finalizers holding it), which no provider of the controller reads: a step writes it all
    /// the same and counts as done, and what it writes goes with the object. A note for
    /// `status`; a warning at each stage whose plan writes it (a delete warns of its own), which
    /// the rendering merges into one line naming the stages.
    pub fn noting_deletion(mut self) -> ObjectPlan {
        if !crate::change::being_deleted(&self.current) {
            return self;
        }
        let held = match crate::change::finalizers(&self.current) {
            finalizers if finalizers.is_empty() => String::new(),
            finalizers => format!(", held by its finalizers: {finalizers}"),
        };
        let key = &self.key;
        self.notes.push(format!("{key} is being deleted (it has a deletionTimestamp{held}): its routing goes with it"));
        if self.writes().any(|change| !matches!(change, Change::Delete { .. })) {
            self.warnings.push(format!(
                "{key} is being deleted (it has a deletionTimestamp{held}): the controller writes it all the same (it reads no deletionTimestamp) and counts the step done, and the routing written goes with the object"
            ));
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Owner, OwnerKind, Provider};

    fn key(group: &str, kind: &str, name: &str) -> ObjectKey {
        ObjectKey::new(group, kind, "shop", name)
    }

    #[test]
    fn an_object_being_deleted_is_noted_and_a_write_to_it_warned_of_once() {
        let reference = ObjectRef {
            api_version: "networking.istio.io/v1beta1".into(),
            kind: "VirtualService".into(),
            name: "web".into(),
        };
        let owner =
            Owner { kind: OwnerKind::Rollout, namespace: "shop".into(), name: "web".into(), uid: String::new() };
        let plan = |current: Value, write: bool| {
            let mut plan = ObjectPlan::not_found(&reference, &owner, String::new());
            plan.notes.clear();
            let (current, key) = (Arc::new(current), plan.key.clone());
            plan.changes = vec![match write {
                true => Change::Replace { key, before: Arc::clone(&current), after: Arc::clone(&current) },
                false => Change::Keep { key, object: Arc::clone(&current) },
            }];
            plan.current = current;
            plan
        };
        let deleting =
            serde_json::json!({"metadata": {"deletionTimestamp": "2026-12-04T00:00:00Z", "finalizers": ["a", "b"]}});
        let written = plan(deleting.clone(), true).noting_deletion();
        let said =
            "VirtualService shop/web is being deleted (it has a deletionTimestamp, held by its finalizers: a, b)";
        assert_eq!(written.notes, vec![format!("{said}: its routing goes with it")]);
        assert_eq!(written.warnings.len(), 1);
        assert!(written.warnings[0].starts_with(&format!("{said}: the controller writes it all the same")));
        // Left as it is: noted, no warning.
        let kept = plan(deleting.clone(), false).noting_deletion();
        assert_eq!((kept.notes.len(), kept.warnings.len()), (1, 0));
        // Without finalizers; and where a stage before left it (a later step's plan of it).
        let bare = plan(serde_json::json!({"metadata": {"deletionTimestamp": "t"}}), false).noting_deletion();
        assert_eq!(
            bare.notes,
            vec!["VirtualService shop/web is being deleted (it has a deletionTimestamp): its routing goes with it"]
        );
        let mut carried = plan(deleting, true);
        carried.after = Some("step 1/3".into());
        let carried = carried.noting_deletion();
        assert_eq!((carried.notes.len(), carried.warnings.len()), (1, 1));
        let alive = plan(serde_json::json!({"metadata": {}}), true).noting_deletion();
        assert_eq!((alive.notes.len(), alive.warnings.len()), (0, 0));
    }

    #[test]
    fn a_missing_canary_service_is_said_with_what_routes_to_it() {
        let ingress = missing_canary_service("web-canary", true, &key("networking.k8s.io", "Ingress", "web-canary"));
        assert_eq!(
            ingress,
            "Service web-canary does not exist: the canary Ingress routes to it; the controller creates it at a step that routes, before it writes any routing (to every provider; not for a blue-green release's final route to the new version), but without the controller the canary traffic fails"
        );
        let route =
            missing_canary_service("web-canary", true, &key(model::http_route::GROUP, model::http_route::KIND, "web"));
        assert!(route.starts_with("Service web-canary does not exist: the HTTPRoute's canary backendRef routes to it; the controller creates it"), "{route}");
        let custom = missing_canary_service("web-canary", true, &key("networking.istio.io", "VirtualService", "web"));
        assert!(
            custom.starts_with(
                "Service web-canary does not exist: VirtualService shop/web routes to it; the controller creates it"
            ),
            "{custom}"
        );
        let waited_for = missing_canary_service("web", false, &key("networking.k8s.io", "Ingress", "web-canary"));
        assert_eq!(
            waited_for,
            "Service web does not exist: the controller waits for it and writes nothing until it does, and the canary Ingress routes to it"
        );
    }

    #[test]
    fn only_a_canary_service_looked_for_and_not_found_is_missing() {
        let owner =
            Owner { kind: OwnerKind::Rollout, namespace: "shop".into(), name: "web".into(), uid: String::new() };
        let http_route = "web".to_string();
        let routing = Routing {
            owner,
            stable_service: "web".into(),
            canary_service: "web-canary".into(),
            providers: vec![Provider::Gateway { http_route }],
            releasing: true,
        };
        let route = key(model::http_route::GROUP, model::http_route::KIND, "web");
        let mut objects = ObjectIndex::default();
        assert_eq!(canary_service_warning(&routing, &objects, &route), None, "not looked for (files)");
        objects.insert_absent(key("", "Service", "web-canary"));
        let warning = canary_service_warning(&routing, &objects, &route).unwrap();
        assert!(warning.starts_with("Service web-canary does not exist: the HTTPRoute's"), "{warning}");
        objects.insert(
            "shop",
            serde_json::json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web-canary"}}),
        );
        assert_eq!(canary_service_warning(&routing, &objects, &route), None, "found");
        // The stable Service missing too: the controller makes no canary Service.
        let mut objects = ObjectIndex::default();
        objects.insert_absent(key("", "Service", "web-canary"));
        objects.insert_absent(key("", "Service", "web"));
        assert_eq!(canary_service_warning(&routing, &objects, &route), None, "the stable Service is missing");
        assert_eq!(
            missing_stable_service(&routing, &objects).unwrap(),
            "Service web does not exist: it is the stable Service (trafficRoutings[0].service), which the controller waits for at every step with traffic or matches, writing nothing there (no canary Service, no routing) until it does"
        );
        // A TrafficRouting's: named by its own field.
        let owner = Owner { kind: OwnerKind::TrafficRouting, name: "tr".into(), ..routing.owner.clone() };
        let traffic_routing = Routing { owner, ..routing.clone() };
        assert_eq!(
            missing_stable_service(&traffic_routing, &objects).unwrap(),
            "Service web does not exist: it is TrafficRouting tr's stable Service (objectRef[0].service), which its controller waits for, routing nothing until it does"
        );
    }

    #[test]
    fn a_script_with_the_builtins_text_runs_as_the_builtin() {
        // An operator trial (P2): a `record --dir` copy of the built-in got the warnings the
        // built-in does not (canaryWeight -1 at a matches-only step).
        let key = scripts::key_of(&ObjectRef {
            api_version: "networking.istio.io/v1beta1".into(),
            kind: "VirtualService".into(),
            name: "web".into(),
        });
        let builtin = scripts::builtin(&key).unwrap();
        let script = |source: ScriptSource, code: &str| ResolvedScript {
            source,
            script: crate::lua::Script::new("s", code),
            sha256: scripts::sha256_hex(code),
        };
        let copy = || ScriptSource::LuaDir { path: "rec/vs.lua".into() };
        assert!(runs_builtin(&script(ScriptSource::BuiltIn { path: builtin.path() }, builtin.code), &key));
        assert!(runs_builtin(&script(copy(), builtin.code), &key));
        assert!(!runs_builtin(&script(copy(), &format!("{}\n-- mine\n", builtin.code)), &key));
        // The built-in of another kind is another script.
        let rule = ("networking.istio.io".to_string(), "DestinationRule".to_string());
        assert!(!runs_builtin(&script(copy(), builtin.code), &rule));
        // An Ingress class's too: a copy of its built-in is it, and not another class's.
        let nginx = scripts::builtin_ingress("nginx").unwrap();
        assert!(runs_builtin(&script(copy(), nginx.code), &scripts::ingress_key("nginx")));
        assert!(!runs_builtin(&script(copy(), nginx.code), &scripts::ingress_key("higress")));
        assert!(!runs_builtin(&script(copy(), nginx.code), &scripts::ingress_key("traefik")));
    }
}
