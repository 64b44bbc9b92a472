//! Ingress traffic routing as the controller does it (docs/controller-semantics.md §5): next to
//! the stable Ingress it creates a canary Ingress `<name>-canary` whose annotations a Lua script
//! per class rewrites at every step, and deletes it when the release ends. Pure: the caller
//! reads the objects and resolves the script.

pub mod testcase;

use super::{Action, Changed, Context, ObjectPlan};
use crate::change::{self, Change, being_deleted};
use crate::error::Error;
use crate::gojson;
use crate::lua::{self, EvalOptions, Evaluated, Limits, Printed, Script, ScriptError};
use crate::model::{
    INGRESS_API_VERSION, ObjectIndex, ObjectKey, ObjectRef, Owner, OwnerKind, RouteStrategy, Routing, RoutingAction,
    TrafficRoutingRef, canary_ingress_name, header_changes, without_empty_lists,
};
use crate::scripts::{self, ResolvedScript};
use serde_json::{Map, Value, json};
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// An Ingress's annotations, as the controller holds them (`map[string]string`).
pub type Annotations = BTreeMap<String, String>;

/// The annotation key ALB orders forwarding rules by; the built-in aliyun-alb script writes "1".
pub const ALB_ORDER: &str = "alb.ingress.kubernetes.io/order";
const ALB_CANARY: &str = "alb.ingress.kubernetes.io/canary";

/// One `ingress` ref of a Rollout or TrafficRouting, with what planning it needs.
#[derive(Clone, Debug)]
pub struct IngressRoute<'a> {
    /// The stable Ingress, in the owner's namespace.
    pub ingress: &'a str,
    /// `classType`, defaulted to `nginx`.
    pub class_type: &'a str,
    pub stable_service: &'a str,
    /// `<stable>-canary`, or the stable Service itself for a TrafficRouting or with
    /// `disableGenerateCanaryService`.
    pub canary_service: &'a str,
    /// The owner of the canary Ingress, which goes in its namespace.
    pub owner: &'a Owner,
    pub script: &'a Script,
    /// Whether `script` is the built-in one of its class: the warnings about the built-in
    /// scripts' quirks apply only then.
    pub builtin: bool,
    pub limits: Limits,
    /// Where what the script prints goes.
    pub printed: &'a Printed,
}

impl IngressRoute<'_> {
    fn namespace(&self) -> &str {
        &self.owner.namespace
    }

    /// The canary Ingress.
    pub fn canary_key(&self) -> ObjectKey {
        canary_key_in(self.namespace(), self.ingress)
    }

    fn source(&self) -> CanarySource<'_> {
        CanarySource {
            owner: self.owner,
            ingress: self.ingress,
            stable_service: self.stable_service,
            canary_service: self.canary_service,
        }
    }
}

/// What the controller makes the canary Ingress from, besides the stable Ingress: whose it is,
/// the stable Ingress's name, and the Services its paths go from and to.
#[derive(Clone, Copy, Debug)]
pub struct CanarySource<'a> {
    pub owner: &'a Owner,
    pub ingress: &'a str,
    pub stable_service: &'a str,
    pub canary_service: &'a str,
}

impl<'a> CanarySource<'a> {
    /// The canary Ingress of `routing`'s stable Ingress `ingress`.
    pub fn of(routing: &'a Routing, ingress: &'a str) -> CanarySource<'a> {
        CanarySource {
            owner: &routing.owner,
            ingress,
            stable_service: &routing.stable_service,
            canary_service: &routing.canary_service,
        }
    }
}

/// The canary Ingress of `routing`'s stable Ingress `ingress`.
pub fn canary_key(routing: &Routing, ingress: &str) -> ObjectKey {
    canary_key_in(&routing.owner.namespace, ingress)
}

/// The canary Ingress of stable Ingress `ingress`, as a ref.
pub fn canary_reference(ingress: &str) -> ObjectRef {
    ObjectRef { api_version: INGRESS_API_VERSION.into(), kind: "Ingress".into(), name: canary_ingress_name(ingress) }
}

fn canary_key_in(namespace: &str, ingress: &str) -> ObjectKey {
    ObjectKey::new("networking.k8s.io", "Ingress", namespace, &canary_ingress_name(ingress))
}

/// One stage of one Ingress ref.
#[derive(Clone, Debug, PartialEq)]
pub struct StagePlan {
    /// The controller's writes, in order (one `Keep` when there are none): a POST of the
    /// canary Ingress (made at weight 0), a merge patch of its annotations (a stage that creates
    /// it also patches it, as the controller's next reconcile does), or its deletion.
    pub changes: Vec<Change>,
    /// The canary Ingress once the controller has converged on the stage; `None` when there is
    /// none. Shared with `changes`.
    pub canary: Option<Arc<Value>>,
    /// The script's `obj` for the stage's own run (after a creation, on the new canary's
    /// annotations); `None` when no script runs.
    pub obj: Option<Value>,
    pub warnings: Vec<String>,
}

impl StagePlan {
    /// A stage that writes nothing to the canary Ingress `key` (`canary`, `None` when absent).
    fn kept(key: &ObjectKey, canary: Option<&Arc<Value>>, warnings: Vec<String>) -> StagePlan {
        StagePlan {
            changes: vec![Change::Keep {
                key: key.clone(),
                object: canary.cloned().unwrap_or_else(|| Arc::new(Value::Null)),
            }],
            canary: canary.cloned(),
            obj: None,
            warnings,
        }
    }
}

/// The script's `obj` (docs/controller-semantics.md §5.2): `annotations` (absent when there are
/// none), `weight` as a string ("-1" without traffic), `matches` and `requestHeaderModifier` when
/// the strategy has them, `canaryService`. There is no `stableService`.
pub fn lua_obj(annotations: &Annotations, strategy: &RouteStrategy, canary_service: &str) -> Value {
    let mut obj = Map::new();
    if !annotations.is_empty() {
        obj.insert("annotations".into(), string_map_value(annotations));
    }
    obj.insert("weight".into(), strategy.weights().0.to_string().into());
    if let Some(matches) = &strategy.matches {
        obj.insert("matches".into(), Value::Array(without_empty_lists(matches)));
    }
    obj.insert("canaryService".into(), canary_service.into());
    if let Some(modifier) = &strategy.request_header_modifier {
        obj.insert("requestHeaderModifier".into(), modifier.clone());
    }
    Value::Object(obj)
}

/// The script's encoded result decoded as Go's `json.Unmarshal` into a `map[string]string`:
/// null is no annotations, a null element becomes "", any other non-string is an error.
pub fn decode_annotations(encoded: Value) -> Result<Annotations, String> {
    let mut annotations = Annotations::new();
    gojson::unmarshal_string_map(&mut annotations, encoded, "Go value")?;
    Ok(annotations)
}

/// Runs an Ingress script on `obj` and returns the annotations the controller reads back.
pub fn evaluate(
    script: &Script,
    obj: &Value,
    limits: &Limits,
    printed: &Printed,
) -> Result<Evaluated<Annotations>, ScriptError> {
    let evaluated =
        lua::evaluate(script, Cow::Borrowed(obj), limits, EvalOptions::CONTROLLER, printed, lua::Values::default())?;
    evaluated.try_map(|output| decode_annotations(output).map_err(|message| ScriptError::output(script, message)))
}

/// Annotations as compact JSON with sorted keys, `null` for none: how `eval --ingress` and the
/// controller's encoder print them.
pub fn annotations_json(annotations: &Annotations) -> String {
    match annotations.is_empty() {
        true => "null".into(),
        false => gojson::to_string(&string_map_value(annotations)),
    }
}

fn string_map_value(map: &Annotations) -> Value {
    Value::Object(map.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect())
}

/// The annotations of an object (its string entries).
pub fn annotations_of(object: &Value) -> Annotations {
    crate::data::string_map(&object["metadata"]["annotations"])
}

fn set_annotations(object: &mut Value, annotations: &Annotations) {
    let metadata = object["metadata"].as_object_mut().expect("an Ingress has metadata");
    match annotations.is_empty() {
        true => metadata.remove("annotations"),
        false => metadata.insert("annotations".into(), string_map_value(annotations)),
    };
}

/// A TLS entry as Go's typed copy writes it: `hosts` and `secretName` only, each left out when
/// empty (omitempty).
fn go_tls(tls: &Value) -> Value {
    let mut kept = Map::new();
    if let Some(hosts) = tls.get("hosts").filter(|h| h.as_array().is_some_and(|h| !h.is_empty())) {
        kept.insert("hosts".into(), hosts.clone());
    }
    if let Some(secret) = tls.get("secretName").filter(|s| s.as_str().is_some_and(|s| !s.is_empty())) {
        kept.insert("secretName".into(), secret.clone());
    }
    Value::Object(kept)
}

/// A path's service backend as Go's typed copy writes it, to Service `name`: the port's `name`
/// and `number` each left out when empty (omitempty), nothing else kept.
fn go_service_backend(name: &str, service: &Value) -> Value {
    let mut port = Map::new();
    for (field, empty) in [("name", json!("")), ("number", json!(0))] {
        if let Some(value) = service["port"].get(field).filter(|v| !v.is_null() && **v != empty) {
            port.insert(field.into(), value.clone());
        }
    }
    json!({"name": name, "port": port})
}

/// The canary Ingress the controller creates from the stable one (docs/controller-semantics.md
/// §5.3), with the stable annotations (the script rewrites them next). The paths kept are those
/// whose backend is the stable Service, pointed at the canary Service; rules left without a path
/// are dropped; TLS and the class are copied, the default backend is not. A rule without `http` or
/// a path without a Service backend is an error: the controller's reconcile panics on them.
pub fn canary_ingress(source: &CanarySource, stable: &Value) -> Result<Value, String> {
    let namespace = &source.owner.namespace;
    let what = format!("Ingress {namespace}/{}", source.ingress);
    // A file may hold an older form (`serviceName`/`servicePort` backends); the API server
    // serves every Ingress as v1, which the controller reads.
    if let Some(version) = stable["apiVersion"].as_str().filter(|v| *v != INGRESS_API_VERSION) {
        return Err(format!(
            "{what} is {version}: the controller reads Ingresses as {INGRESS_API_VERSION}, as the API server serves them (its other versions are gone since Kubernetes 1.22): give the file that form, as `kubectl get ingress -o yaml` shows it"
        ));
    }
    let mut rules = Vec::new();
    for (i, rule) in stable["spec"]["rules"].as_array().into_iter().flatten().enumerate() {
        let Some(http) = rule.get("http").filter(|h| h.is_object()) else {
            return Err(format!(
                "{what}: spec.rules[{i}] has no http; the controller fails on such a rule (it reads the paths of every rule): give it http.paths"
            ));
        };
        let mut paths = Vec::new();
        for (j, path) in http["paths"].as_array().into_iter().flatten().enumerate() {
            let Some(service) = path["backend"].get("service").filter(|s| s.is_object()) else {
                return Err(format!(
                    "{what}: spec.rules[{i}].http.paths[{j}] has no service backend; the controller fails on a resource backend (it reads the service name of every path)"
                ));
            };
            if service["name"] != source.stable_service {
                continue;
            }
            // As Go's typed copy writes them: an empty `path` is left out (omitempty).
            let mut kept = Map::new();
            for field in ["path", "pathType"] {
                let left_out = |v: &Value| v.is_null() || (field == "path" && v == "");
                if let Some(value) = path.get(field).filter(|v| !left_out(v)) {
                    kept.insert(field.into(), value.clone());
                }
            }
            kept.insert("backend".into(), json!({"service": go_service_backend(source.canary_service, service)}));
            paths.push(Value::Object(kept));
        }
        if !paths.is_empty() {
            let mut kept = Map::new();
            if let Some(host) = rule["host"].as_str().filter(|h| !h.is_empty()) {
                kept.insert("host".into(), host.into());
            }
            kept.insert("http".into(), json!({"paths": paths}));
            rules.push(Value::Object(kept));
        }
    }
    let mut spec = Map::new();
    if let Some(class) = stable["spec"].get("ingressClassName").filter(|c| !c.is_null()) {
        spec.insert("ingressClassName".into(), class.clone());
    }
    if let Some(tls) = stable["spec"]["tls"].as_array().filter(|t| !t.is_empty()) {
        spec.insert("tls".into(), tls.iter().map(go_tls).collect());
    }
    // Kubernetes' validation refuses an Ingress with neither rules nor a defaultBackend (which
    // the controller does not copy), so its create fails on every reconcile.
    if rules.is_empty() {
        return Err(format!(
            "{what}: none of its paths routes to Service {} (its defaultBackend is not copied), so the canary Ingress would have no rules; the API server refuses that (\"either `defaultBackend` or `rules` must be specified\"), and the controller's step fails until a path routes to {}",
            source.stable_service, source.stable_service
        ));
    }
    spec.insert("rules".into(), Value::Array(rules));
    let mut metadata = Map::new();
    metadata.insert("name".into(), canary_ingress_name(source.ingress).into());
    metadata.insert("namespace".into(), namespace.as_str().into());
    for field in ["labels", "annotations"] {
        if let Some(map) = stable["metadata"][field].as_object().filter(|m| !m.is_empty()) {
            metadata.insert(field.into(), Value::Object(map.clone()));
        }
    }
    metadata.insert("ownerReferences".into(), json!([source.owner.reference()]));
    Ok(json!({"apiVersion": INGRESS_API_VERSION, "kind": "Ingress", "metadata": metadata, "spec": spec}))
}

/// The merge patch the controller sends (docs/controller-semantics.md §5.4):
/// `{"metadata":{"annotations":{…}}}` with every added or changed key and every removed key as
/// null, keys sorted; `{"metadata":{"annotations":null}}` when none is left (the result decodes
/// to a nil map, which Go encodes as null).
pub fn annotations_patch(before: &Annotations, after: &Annotations) -> Value {
    if after.is_empty() {
        return json!({"metadata": {"annotations": null}});
    }
    let mut diff = Map::new();
    for (key, value) in after {
        if before.get(key) != Some(value) {
            diff.insert(key.clone(), value.clone().into());
        }
    }
    for key in before.keys().filter(|k| !after.contains_key(*k)) {
        diff.insert(key.clone(), Value::Null);
    }
    json!({"metadata": {"annotations": diff}})
}

/// What the controller converges to for one stage, from the canary Ingress as it is (`canary`,
/// `None` when absent) and the stable Ingress it is built from when it must be created.
///
/// - `Leave`: nothing is written (a TrafficRouting without traffic or matches).
/// - `Restore` (no traffic, no matches: the controller's finalise): the canary Ingress is
///   deleted, unless it is absent or being deleted already (docs/controller-semantics.md §5.5).
/// - `Route` without a canary Ingress and with a weight of 0: nothing is created.
/// - `Route` without a canary Ingress: it is created (the script run at weight "0" without
///   matches on the stable annotations), then patched as below.
/// - `Route`: the script runs on its current annotations with the step's weight, matches and
///   header modifier, and a different result is merge-patched.
pub fn plan_stage(
    route: &IngressRoute,
    stable: Option<&Value>,
    canary: Option<&Arc<Value>>,
    action: &RoutingAction,
) -> Result<StagePlan, Error> {
    let key = route.canary_key();
    let keep = |canary, warnings| StagePlan::kept(&key, canary, warnings);
    let strategy = match action {
        RoutingAction::Leave => return Ok(keep(canary, Vec::new())),
        RoutingAction::Restore => {
            return Ok(match canary.filter(|c| !being_deleted(c)) {
                Some(canary) => StagePlan {
                    changes: vec![Change::Delete { key: key.clone(), before: Arc::clone(canary) }],
                    canary: None,
                    obj: None,
                    warnings: held_by_finalizers(&key, canary).into_iter().collect(),
                },
                None => keep(canary, Vec::new()),
            });
        }
        RoutingAction::Route(strategy) => strategy,
    };
    // What makes the built-in script fail, said with its error; what it ignores, as warnings.
    let mut failures = Vec::new();
    let mut warnings = Vec::new();
    if route.builtin {
        failures.extend(headerless_match(route.class_type, strategy));
        failures.extend(modifier_without_set(route.class_type, strategy));
        warnings.extend(ignored_conditions(route.class_type, strategy));
        warnings.extend(ignored_header_modifier(route.class_type, strategy));
        warnings.extend(weight_beside_matches(route.class_type, strategy));
    }
    let mut changes = Vec::new();
    let current = match canary {
        Some(canary) => Arc::clone(canary),
        None if strategy.traffic.is_some() && strategy.weights().0 == 0 => {
            if strategy.matches.as_ref().is_some_and(|m| !m.is_empty()) {
                let traffic = strategy.traffic.as_deref().unwrap_or_default();
                warnings.push(matches_reach_nothing(
                    &format!("at weight 0 (traffic {traffic}) the controller creates no canary Ingress"),
                    "leave traffic out for matches alone",
                ));
            }
            return Ok(keep(None, warnings));
        }
        None => {
            let stable = stable.ok_or_else(|| Error::Missing {
                owner: route.owner.kind,
                field: TrafficRoutingRef::ingress_field(),
                message: format!(
                    "Ingress {}/{} not found: the canary Ingress is built from it",
                    route.namespace(),
                    route.ingress
                ),
            })?;
            let created = Arc::new(created_canary(route, stable, &mut warnings)?);
            changes.push(Change::Create { key: key.clone(), object: Arc::clone(&created) });
            created
        }
    };
    let before = annotations_of(&current);
    if route.builtin {
        failures.extend(mse_without_annotations(route.class_type, &before));
    }
    // The controller creates the canary Ingress in a pass of its own, and runs the step after:
    // a step whose run fails leaves the creation done.
    failures.extend(changes.iter().filter(|c| matches!(c, Change::Create { .. })).map(|c| {
        format!("the controller creates {} first, at weight 0 (that run has no matches), and it stays", c.key())
    }));
    let obj = lua_obj(&before, strategy, route.canary_service);
    let first = run_script(route, &obj, &failures, &mut warnings)?;
    let after = settled(route, strategy, &before, first, &mut warnings)?;
    // Read from the result, so that a script of the class's own with the same quirks is warned too.
    warnings.extend(leftover_routing(route.class_type, strategy, &after));
    warnings.extend(canary_routes_nothing(route.class_type, strategy, &after));
    warnings.extend(value_beside_pattern(route.class_type, &after));
    warnings.extend(joined_header_update(strategy, &after));
    warnings.extend(not_a_canary(route.class_type, &key, &after));
    if after == before {
        if changes.is_empty() {
            changes.push(Change::Keep { key, object: Arc::clone(&current) });
        }
        return Ok(StagePlan { changes, canary: Some(current), obj: Some(obj), warnings });
    }
    let mut updated = Value::clone(&current);
    set_annotations(&mut updated, &after);
    let patch = annotations_patch(&before, &after);
    changes.push(Change::MergePatch { key, subresource: None, before: current, patch });
    Ok(StagePlan { changes, canary: Some(Arc::new(updated)), obj: Some(obj), warnings })
}

/// The canary Ingress as the controller creates it from `stable`: the script's annotations at
/// weight 0 with no matches or header modifier (so a step's own failure points do not apply to
/// this pass); a failure says why the controller's script fails too, where that is known.
fn created_canary(route: &IngressRoute, stable: &Value, warnings: &mut Vec<String>) -> Result<Value, Error> {
    let mut created = canary_ingress(&route.source(), stable).map_err(Error::Input)?;
    let annotations = annotations_of(&created);
    let mut failures = Vec::new();
    if route.builtin {
        failures.extend(mse_without_annotations(route.class_type, &annotations));
    }
    let creation = RouteStrategy { traffic: Some("0%".into()), ..RouteStrategy::default() };
    let obj = lua_obj(&annotations, &creation, route.canary_service);
    let result = run_script(route, &obj, &failures, warnings)?;
    set_annotations(&mut created, &result);
    Ok(created)
}

/// Whether `canary` (as read) has the annotations the controller creates it with and no others:
/// where its create leaves it before a step's patch (the controller's first pass, or a run cut
/// short between the two), which routes nothing to the canary yet, not someone's edit. The
/// script runs once more for it, its prints not shown again.
fn at_creation(route: &IngressRoute, stable: &Value, canary: &Value) -> bool {
    let quiet = IngressRoute { printed: &Printed::default(), ..*route };
    created_canary(&quiet, stable, &mut Vec::new())
        .is_ok_and(|created| annotations_of(&created) == annotations_of(canary))
}

/// The hazard of deleting a canary Ingress with finalizers (an AWS or GKE ingress controller
/// puts one on every Ingress it serves): the DELETE marks it, and the controller's next traffic
/// step patches it as it terminates (A.3 reads no deletionTimestamp), counts as done, and routes
/// nothing once it goes. The plan takes the finalizers as removed at once.
fn held_by_finalizers(key: &ObjectKey, canary: &Value) -> Option<String> {
    let finalizers = change::finalizers(canary);
    (!finalizers.is_empty()).then(|| {
        format!(
            "{key} has finalizers ({finalizers}): the DELETE only marks it, and it stays until they are removed; a traffic step the controller runs before that patches the terminating Ingress and counts as done, and its routing goes with the Ingress (the plan takes them as removed at once)"
        )
    })
}

/// How many patches of one stage the plan follows, each run of the script on the annotations the
/// last one wrote (as the controller's next reconcile runs it), before it calls the step one that
/// never completes.
const SETTLING_PATCHES: usize = 8;

/// The annotations the controller settles on at a step whose script gave `first` on the
/// canary's annotations `before`: each reconcile runs the script again on what the last one
/// wrote, and patches until the result is what the canary has (A.3). A script that reads the
/// annotations it writes settles after more patches, or never (warned of, with its last write).
fn settled(
    route: &IngressRoute,
    strategy: &RouteStrategy,
    before: &Annotations,
    first: Annotations,
    warnings: &mut Vec<String>,
) -> Result<Annotations, Error> {
    let (mut written, mut result) = (before.clone(), first);
    let mut patches = 0;
    while result != written && patches < SETTLING_PATCHES {
        written = result;
        patches += 1;
        let again =
            format!("run again on the annotations its run {patches} wrote, as the controller's next reconcile runs it");
        let obj = lua_obj(&written, strategy, route.canary_service);
        // Its warnings are the first run's.
        result = run_script(route, &obj, &[again], &mut Vec::new())?;
    }
    let script = &route.script.name;
    match patches {
        0 | 1 => {}
        _ if result == written => warnings.push(format!(
            "script {script}: run on the annotations it wrote, it gives others: the controller patches the canary Ingress {patches} times at this stage before its result stays (the plan shows where it settles)"
        )),
        _ => warnings.push(format!(
            "script {script}: run on the annotations it wrote, it gives others every time (followed for {SETTLING_PATCHES} patches): the controller patches the canary Ingress at every reconcile, and the step never completes; the plan shows its last write"
        )),
    }
    Ok(written)
}

/// Plans actions in order, each stage from the canary Ingress the previous one left:
/// annotations carry over from step to step as in the controller. A failure comes with the
/// index of its stage, for the caller to name it.
pub fn plan_stages(
    route: &IngressRoute,
    stable: Option<&Value>,
    canary: Option<&Arc<Value>>,
    actions: &[RoutingAction],
) -> Result<Vec<StagePlan>, (usize, Error)> {
    let mut current = canary.cloned();
    let mut plans = Vec::with_capacity(actions.len());
    for (i, action) in actions.iter().enumerate() {
        let plan = plan_stage(route, stable, current.as_ref(), action).map_err(|e| (i, e))?;
        current = plan.canary.clone();
        plans.push(plan);
    }
    Ok(plans)
}

/// Runs the route's script on `obj`; a failure carries the `explanations` of why the
/// controller's script fails too.
fn run_script(
    route: &IngressRoute,
    obj: &Value,
    explanations: &[String],
    warnings: &mut Vec<String>,
) -> Result<Annotations, Error> {
    let Evaluated { output, work } =
        evaluate(route.script, obj, &route.limits, route.printed).map_err(|e| match explanations {
            [] => Error::Script(e),
            _ => Error::Input(format!("{e} ({})", explanations.join("; "))),
        })?;
    let controller = lua::controller_warnings(route.script, work);
    warnings.extend(controller.iter().map(|w| format!("script {}: {w}", route.script.name)));
    Ok(output)
}

/// Why a stage that patches the canary Ingress as read may not happen, when the stable Ingress
/// `ingress` is missing (in the cluster, or among the files): the controller reads it when a
/// release starts (Initialize, docs/ingress-gateway-semantics.md A.2) and fails without it. None
/// when its read was refused (that is said where it was).
fn stable_missing(objects: &ObjectIndex, namespace: &str, ingress: &str) -> Option<String> {
    let key = ObjectKey::new("networking.k8s.io", "Ingress", namespace, ingress);
    let missing = match (objects.is_absent(&key), objects.unread(&key)) {
        (true, _) => "does not exist",
        (false, None) => "is not among the files",
        (false, Some(_)) => return None,
    };
    Some(format!(
        "Ingress {namespace}/{ingress}, the stable Ingress, {missing}: the controller reads it when a release starts (its Initialize) and fails there without it, so a release not started yet routes nothing; one in progress goes on patching the canary Ingress"
    ))
}

/// Who routes through which Ingress, to lead a message about it (its class's missing script).
pub fn routes_through(owner: &Owner, ingress: &str) -> String {
    format!("{owner} routes through Ingress {ingress}")
}

/// Plans the canary Ingress of the routing's `ingress` ref (stable Ingress `ingress`, class
/// `class_type`) at one stage, for the planner: from `current` (None: there is none), which is
/// the canary as read or, `after` a stage, as that stage left it. `objects` holds the stable
/// Ingress, the canary Service (known absent in a cluster) and the other Ingresses (the
/// aliyun-alb order check). The script is resolved at every stage but one left alone, as the
/// controller resolves it for every operation (an unknown class fails even a finalise).
pub fn plan_object(
    context: &Context,
    objects: &ObjectIndex,
    ingress: &str,
    class_type: &str,
    current: Option<&Arc<Value>>,
    after: Option<String>,
    resolve: impl FnOnce() -> Result<ResolvedScript, String>,
) -> Result<ObjectPlan, Error> {
    let routing = context.routing;
    let owner = &routing.owner;
    let key = canary_key(routing, ingress);
    let stable =
        objects.get(&ObjectKey::new("networking.k8s.io", "Ingress", &owner.namespace, ingress)).map(Arc::as_ref);
    let builtin = |script: &ResolvedScript| super::runs_builtin(script, &scripts::ingress_key(class_type));
    let source = CanarySource::of(routing, ingress);
    let foreign_canary = current.and_then(|canary| foreign_canary(&source, canary));
    let (stage, script, after_first_write) = match context.action {
        // At a stage it leaves alone the controller builds no provider, so reads no script.
        RoutingAction::Leave => (StagePlan::kept(&key, current, Vec::new()), None, false),
        action => {
            let script = resolve().map_err(|e| Error::Input(format!("{}: {e}", routes_through(owner, ingress))))?;
            let route = IngressRoute {
                ingress,
                class_type,
                stable_service: &routing.stable_service,
                canary_service: &routing.canary_service,
                owner,
                script: &script.script,
                builtin: builtin(&script),
                limits: *context.limits,
                printed: context.printed,
            };
            let stage = plan_stage(&route, stable, current, action)
                .map_err(|e| e.prefixed(&format!("{owner}, {}", context.stage)))?;
            // Only the canary as read (one a stage made or patched is that stage's), once.
            let at_creation = match (after.is_none() && context.first, stable, current) {
                (true, Some(stable), Some(canary)) if foreign_canary.is_none() => at_creation(&route, stable, canary),
                _ => false,
            };
            (stage, Some(script), at_creation)
        }
    };
    let mut warnings = stage.warnings;
    if let (None, Some(_), None, RoutingAction::Route(_)) = (stable, current, &after, context.action) {
        warnings.extend(stable_missing(objects, &owner.namespace, ingress));
    }
    warnings.extend(foreign_canary.iter().map(|why| {
        format!("{why}: the controller patches its annotations as if it were, and deletes it when the release ends")
    }));
    // Only the controller's canary as read: one this plan made or patched has the spec it was
    // made with, and someone else's is not made from the stable Ingress at all.
    let spec_note = current
        .filter(|_| after.is_none() && foreign_canary.is_none())
        .zip(stable)
        .and_then(|(canary, stable)| canary_spec_differs(&source, stable, canary));
    warnings.extend(spec_note.clone());
    if let RoutingAction::Route(_) = context.action {
        // Said where the plan starts from the canary as read, or where a stage makes it: once
        // per plan but for a canary deleted and made again.
        let first = after.is_none() || current.is_none();
        if let Some(planned) =
            stage.canary.as_ref().filter(|_| routing.canary_service == routing.stable_service && first)
        {
            let builtin = script.as_ref().is_some_and(builtin);
            let annotations = annotations_of(planned);
            warnings.extend(canary_on_stable_service(
                class_type,
                builtin,
                &annotations,
                &routing.stable_service,
                owner.kind,
            ));
        }
        // No canary Ingress (weight 0 makes none): nothing routes to the canary Service.
        if stage.canary.is_some() {
            warnings.extend(super::canary_service_warning(routing, objects, &key));
        }
    }
    let ingresses = || objects.of_kind("networking.k8s.io", "Ingress", &owner.namespace);
    if let Some(planned) = &stage.canary {
        warnings.extend(alb_order_clash_with_read(class_type, "gets", planned, ingresses()));
    }
    // `status` says so of the canary as read (the plan warns of the planned one).
    let order_note = current
        .filter(|_| after.is_none())
        .and_then(|canary| alb_order_clash_with_read(class_type, "has", canary, ingresses()));
    let action = match script.filter(|_| stage.obj.is_some()) {
        Some(script) => Action::Lua(script),
        None if stage.changes.iter().any(|c| matches!(c, Change::Delete { .. })) => Action::Delete,
        None => Action::Keep(kept_because(context.action, current.is_some())),
    };
    Ok(ObjectPlan {
        reference: canary_reference(ingress),
        untouched: current.is_none(),
        current: current.cloned().unwrap_or_else(|| Arc::new(Value::Null)),
        after,
        planned: stage.canary.unwrap_or_else(|| Arc::new(Value::Null)),
        key,
        owner: context.routing.owner.clone(),
        action,
        obj: stage.obj.map(Arc::new),
        warnings,
        unwritable: None,
        degenerate_original: None,
        canary_in_original: None,
        controller_sticks: None,
        after_first_write,
        foreign_canary,
        strands_stable: None,
        notes: after_first_write
            .then(|| CREATED_UNPATCHED.to_string())
            .into_iter()
            .chain(spec_note)
            .chain(order_note)
            .collect(),
        changes: stage.changes,
        changed: Changed::default(),
    })
}

/// What `status` says of a canary Ingress as the controller creates it (`at_creation`).
const CREATED_UNPATCHED: &str = "made at weight 0, as the controller creates it, and not patched since (the controller's first pass, or a run cut short between its create and its patch): it sends nothing to the canary yet";

/// Why a stage writes nothing to the canary Ingress when no script runs.
fn kept_because(action: &RoutingAction, exists: bool) -> &'static str {
    match (action, exists) {
        (RoutingAction::Leave, _) => "the controller writes nothing here: left alone",
        (RoutingAction::Restore, false) => "no canary Ingress, nothing to delete",
        (RoutingAction::Restore, true) => "being deleted already",
        (RoutingAction::Route(_), _) => "weight 0 and no canary Ingress: the controller creates none",
    }
}

/// The classes whose built-in scripts read the nginx annotation keys, and mse's query keys.
fn builtin_reads_queries(class_type: &str) -> bool {
    class_type == "mse"
}

fn is_builtin_class(class_type: &str) -> bool {
    matches!(class_type, "nginx" | "higress" | "aliyun-alb" | "mse")
}

/// What a match is keyed by in the class's built-in script: the only conditions it writes.
fn keyed_by(class_type: &str) -> &'static str {
    match builtin_reads_queries(class_type) {
        true => "header or query parameter",
        false => "header",
    }
}

/// What the built-in script of a class ignores in the step's matches. Of a match it writes a
/// key for (its first header; with mse its first query parameter too), the other headers, the
/// path, and the query parameters (mse: after the first one): the canary gets more than the
/// match describes. A match it writes no key for is skipped whole by nginx and mse, so the
/// requests it describes are not sent to the canary but by the step's weight, as any request
/// (higress and aliyun-alb fail on it: `headerless_match`).
pub fn ignored_conditions(class_type: &str, strategy: &RouteStrategy) -> Vec<String> {
    if !is_builtin_class(class_type) {
        return Vec::new();
    }
    let reads_queries = builtin_reads_queries(class_type);
    let mut warnings = Vec::new();
    for (i, m) in strategy.matches.iter().flatten().enumerate() {
        let names = |field: &str, skip: usize| -> Vec<String> {
            m[field]
                .as_array()
                .into_iter()
                .flatten()
                .skip(skip)
                .map(|h| format!("\"{}\"", h["name"].as_str().unwrap_or("")))
                .collect()
        };
        let path = m["path"]["value"].as_str().map(|path| format!("path {path}"));
        let keyed = !names("headers", 0).is_empty() || (reads_queries && !names("queryParams", 0).is_empty());
        if !keyed {
            if matches!(class_type, "nginx" | "mse") {
                warnings.push(skipped_match(class_type, i, path, &names("queryParams", 0), strategy));
            }
            continue;
        }
        let mut ignored = Vec::new();
        let headers = names("headers", 1);
        if !headers.is_empty() {
            ignored.push(format!("header {} (only a match's first header is used)", headers.join(", ")));
        }
        ignored.extend(path);
        let queries = names("queryParams", if reads_queries { 1 } else { 0 });
        if !queries.is_empty() {
            let why = if reads_queries { " (only a match's first one is used)" } else { "" };
            ignored.push(format!("query parameter {}{why}", queries.join(", ")));
        }
        if !ignored.is_empty() {
            warnings.push(format!(
                "matches[{i}]: the {class_type} Ingress script ignores {}, so the canary gets more traffic than the match describes",
                ignored.join(" and ")
            ));
        }
    }
    warnings
}

/// `matches[i]`, which has no condition the nginx or mse script writes a key for (it had `path`
/// and the query parameters `queries`, or nothing): the script skips it.
fn skipped_match(
    class_type: &str,
    i: usize,
    path: Option<String>,
    queries: &[String],
    strategy: &RouteStrategy,
) -> String {
    let queries = (!queries.is_empty()).then(|| format!("query parameter {}", queries.join(", ")));
    let had: Vec<String> = path.into_iter().chain(queries).collect();
    let what = match had.is_empty() {
        true => "has no condition".to_string(),
        false => format!("has {} but no {}", had.join(" and "), keyed_by(class_type)),
    };
    let (weight, _) = strategy.weights();
    let fate = match weight > 0 {
        true => format!("reach the canary only through the step's traffic {weight}%, as any other request does"),
        false => "are not sent to the canary".to_string(),
    };
    format!("matches[{i}] {what}: the {class_type} Ingress script skips it, so the requests it describes {fate}")
}

/// A step whose matches route no request to the new version: `why`, and `fix`.
fn matches_reach_nothing(why: &str, fix: &str) -> String {
    format!("the step's matches are not applied: {why}, so no request reaches the new version, matched or not; {fix}")
}

/// A step with matches after which the canary Ingress of a built-in class (its annotations, the
/// script's result) has neither a weight above 0 nor a match key its gateway reads: the
/// gateway sends it no request (the nginx and mse scripts skip a match they write no key for).
pub fn canary_routes_nothing(class_type: &str, strategy: &RouteStrategy, annotations: &Annotations) -> Option<String> {
    let prefix = routing_prefix(class_type)?;
    let matched = strategy.matches.as_ref().is_some_and(|m| !m.is_empty());
    let weighted = annotations.get(&format!("{prefix}canary-weight")).is_some_and(|weight| weight != "0");
    let keyed = annotations.keys().any(|key| match_key(class_type, key).is_some());
    (matched && !weighted && !keyed).then(|| {
        matches_reach_nothing(
            &format!("the canary Ingress is left with no weight and no match key the {class_type} gateway reads"),
            &format!("give a match a {}", keyed_by(class_type)),
        )
    })
}

/// What the built-in script of a class ignores of the step's requestHeaderModifier, so the
/// heading's request headers are not all applied: nginx, higress and aliyun-alb never read it,
/// mse writes only its `set` headers.
pub fn ignored_header_modifier(class_type: &str, strategy: &RouteStrategy) -> Option<String> {
    let modifier = strategy.request_header_modifier.as_ref()?;
    match class_type {
        "nginx" | "higress" | "aliyun-alb" => Some(format!(
            "the {class_type} Ingress script ignores requestHeaderModifier: requests to the canary are not modified"
        )),
        "mse" => {
            let ignored = header_changes(modifier, &["add", "remove"]);
            let are = if ignored.len() == 1 { "is" } else { "are" };
            (!ignored.is_empty()).then(|| {
                format!(
                    "the {class_type} Ingress script writes only requestHeaderModifier.set: {} {are} not applied to requests to the canary",
                    ignored.join(", ")
                )
            })
        }
        _ => None,
    }
}

/// A step with matches and a weight: the built-in scripts write both, so the canary also gets
/// that share of the requests the matches leave out (the API says matches take precedence).
pub fn weight_beside_matches(class_type: &str, strategy: &RouteStrategy) -> Option<String> {
    let (weight, _) = strategy.weights();
    let matched = strategy.matches.as_ref().is_some_and(|m| !m.is_empty());
    (is_builtin_class(class_type) && matched && weight > 0).then(|| {
        format!(
            "the step has matches and traffic {weight}%: the {class_type} Ingress script writes the weight as well as the matches, so {weight}% of the requests that do not match go to the canary too"
        )
    })
}

/// higress and aliyun-alb: the built-in script reads the first header of every match and fails
/// on a match without one.
pub fn headerless_match(class_type: &str, strategy: &RouteStrategy) -> Option<String> {
    if !matches!(class_type, "higress" | "aliyun-alb") {
        return None;
    }
    let i = strategy.matches.iter().flatten().position(|m| m["headers"].as_array().is_none_or(Vec::is_empty))?;
    Some(format!(
        "matches[{i}] has no header: the controller's {class_type} script fails on it (it reads the first header of every match) and the step never finishes"
    ))
}

/// mse: the built-in script has no fallback for an Ingress without annotations
/// (openkruise/rollouts#228).
pub fn mse_without_annotations(class_type: &str, annotations: &Annotations) -> Option<String> {
    (class_type == "mse" && annotations.is_empty()).then(|| {
        "the Ingress has no annotations: the controller's mse script fails on it (openkruise/rollouts#228); give the stable Ingress an annotation".to_string()
    })
}

/// mse: a requestHeaderModifier without `set` makes the built-in script fail.
pub fn modifier_without_set(class_type: &str, strategy: &RouteStrategy) -> Option<String> {
    let modifier = strategy.request_header_modifier.as_ref()?;
    (class_type == "mse" && modifier.get("set").is_none()).then(|| {
        "requestHeaderModifier has no set: the controller's mse script fails on it (it only writes the set headers)"
            .to_string()
    })
}

/// With canary = stable (a TrafficRouting, or `disableGenerateCanaryService`) the canary
/// Ingress's backends are the stable Service `service` itself (docs/controller-semantics.md
/// §5.3): the nginx, aliyun-alb and higress gateways pick the canary Ingress by its annotations
/// and then balance over every pod of that Service, so the requests a step matches or weighs
/// reach stable and canary pods alike. mse is the tag-based gateway this is made for, when the
/// canary Ingress (its `annotations`) names a pod subset; with a script or a class of one's own,
/// what the gateway does cannot be told, and it is said so.
pub fn canary_on_stable_service(
    class_type: &str,
    builtin: bool,
    annotations: &Annotations,
    service: &str,
    owner: OwnerKind,
) -> Option<String> {
    let balances = balances_over_every_pod(class_type, builtin, annotations);
    if balances == Some(false) {
        return None;
    }
    let what = format!(
        "the canary Ingress routes to Service {service} itself (canary = stable: {})",
        owner.why_canary_is_stable()
    );
    let how = match balances.is_some() {
        true if class_type == "mse" => format!(
            "without {MSE_SERVICE_SUBSET} on it (the {class_type} script sets it to gray only when the stable Ingress has it), the {class_type} gateway balances the requests it sends there (those the step matches or weighs)"
        ),
        true => {
            format!("the {class_type} gateway balances the requests it sends there (those the step matches or weighs)")
        }
        false => format!(
            "with a script of its own for class {class_type}, whether that gateway sends the requests the step matches or weighs to the canary pods alone cannot be told here: one that picks pods by Service alone balances them"
        ),
    };
    let instead = match owner {
        OwnerKind::TrafficRouting => "a Rollout's own trafficRoutings",
        OwnerKind::Rollout => "trafficRoutings without disableGenerateCanaryService",
    };
    Some(format!(
        "{what}: {how} over every pod of {service}, stable and canary alike, so the canary pods get no more of them than their number gives them; only a gateway that tells pods apart by tag sends them to the canary pods (mse, whose script points the canary Ingress at the pod subset gray when the stable Ingress has the annotation {MSE_SERVICE_SUBSET}), and {instead} route to the Service {service}-canary, which selects the canary pods alone"
    ))
}

/// With canary = stable, whether the gateway of `class_type` balances the requests it sends to
/// the canary Ingress (with `annotations`) over every pod of the Service, stable and canary
/// alike (`builtin`: run by the class's built-in script). mse sends them to the pod subset the
/// canary names by `mse.ingress.kubernetes.io/service-subset` (false): the built-in script sets
/// it to `gray` when the stable Ingress, which the canary's annotations are copied from, has it.
/// Without it, mse, and nginx, aliyun-alb and higress, with their built-in scripts, balance them
/// (true); with a script of one's own it cannot be told (None).
pub fn balances_over_every_pod(class_type: &str, builtin: bool, annotations: &Annotations) -> Option<bool> {
    match class_type {
        "mse" if annotations.contains_key(MSE_SERVICE_SUBSET) => Some(false),
        _ => (builtin && is_builtin_class(class_type)).then_some(true),
    }
}

/// openkruise/rollouts#128: ALB needs each forwarding rule's order to be unique among the
/// Ingresses of its class, and the built-in aliyun-alb script gives every canary Ingress order
/// "1". The order `canary` carries when `other`, another Ingress of its class and namespace,
/// carries it too: a canary Ingress or not, the stable Ingress included (upstream writes "1" so
/// that the canary's rules come before the stable ones, which that defeats). An Ingress without
/// the annotation has ALB's default order and is not compared. None for a class other than
/// `aliyun-alb` (`class_type`).
pub fn shared_alb_order<'v>(class_type: &str, canary: &'v Value, other: &Value) -> Option<&'v str> {
    // Only ALB reads the annotation: on another class's Ingress (copied from the stable one) it
    // means nothing.
    if class_type != "aliyun-alb" {
        return None;
    }
    let order = canary["metadata"]["annotations"][ALB_ORDER].as_str()?;
    let (meta, other_meta) = (&canary["metadata"], &other["metadata"]);
    let shared = other_meta["name"] != meta["name"]
        && other_meta["namespace"] == meta["namespace"]
        && ingress_class(other) == ingress_class(canary)
        && other_meta["annotations"][ALB_ORDER] == order;
    shared.then_some(order)
}

/// The order clash `shared_alb_order` finds, said: the canary Ingress `canary_has` (`gets`
/// planned, `has` as read) `order`, which `twin` `twin_has` too; and the fix. One script writes
/// every canary Ingress of a class, so the order has to come from each Ingress: another
/// constant clashes again at the next release.
pub fn alb_order_clash(class_type: &str, canary_has: &str, order: &str, twin: &Value, twin_has: &str) -> String {
    let name = format!(
        "{}/{}",
        twin["metadata"]["namespace"].as_str().unwrap_or_default(),
        twin["metadata"]["name"].as_str().unwrap_or_default()
    );
    let script = format!(
        "give the class a script that takes each canary's order from an annotation of its stable Ingress (docs/script-authors-guide.md §10 has one), under the key {} of the ConfigMap {}",
        crate::scripts::ingress_configmap_key(class_type),
        crate::scripts::CONFIGMAP_NAME,
    );
    let (what, fix) = match twin["metadata"]["annotations"][ALB_CANARY] == "true" {
        true => (
            "canary Ingress",
            format!(
                "one script writes the order of every canary Ingress of the class, so another constant clashes again at the next release: {script}"
            ),
        ),
        false => ("Ingress", format!("give Ingress {name} another order, or {script}")),
    };
    format!(
        "the canary Ingress {canary_has} {ALB_ORDER}: {order:?}, which {what} {name} of the same class {twin_has}; ALB needs each forwarding rule's order to be unique among the Ingresses of its class (openkruise/rollouts#128): {fix}"
    )
}

/// The clash of `canary` with the first of `others` (Ingresses read) that shares its ALB order.
fn alb_order_clash_with_read<'v>(
    class_type: &str,
    canary_has: &str,
    canary: &Value,
    others: impl IntoIterator<Item = &'v Value>,
) -> Option<String> {
    let (order, twin) =
        others.into_iter().find_map(|other| Some((shared_alb_order(class_type, canary, other)?, other)))?;
    Some(alb_order_clash(class_type, canary_has, order, twin, "has too"))
}

/// `spec.ingressClassName`, else the `kubernetes.io/ingress.class` annotation.
fn ingress_class(ingress: &Value) -> Option<&str> {
    ingress["spec"]["ingressClassName"]
        .as_str()
        .or_else(|| ingress["metadata"]["annotations"]["kubernetes.io/ingress.class"].as_str())
}

/// Someone else's Ingress named `<name>-canary`: `canary` (as read) is not controlled by the
/// owner (a Rollout made again since has another uid; an owner read from a file without a uid
/// is known by its kind and name). Says so, whose it is, and where it routes when that is not
/// the canary Service. The controller patches it all the same, and deletes it when the release
/// ends (docs/controller-semantics.md §5.4, §5.5).
pub fn foreign_canary(source: &CanarySource, canary: &Value) -> Option<String> {
    let owner = source.owner;
    let controller =
        canary["metadata"]["ownerReferences"].as_array().into_iter().flatten().find(|r| r["controller"] == true);
    let whose = match controller {
        None => "it has no controller owner".to_string(),
        Some(reference) => {
            let ours = owner.reference();
            let field = |name: &str| reference[name].as_str().unwrap_or_default();
            let same = crate::model::api_group(field("apiVersion")) == "rollouts.kruise.io"
                && reference["kind"] == ours["kind"]
                && reference["name"] == ours["name"]
                && (owner.uid.is_empty() || reference["uid"] == ours["uid"]);
            if same {
                return None;
            }
            match reference["name"] == ours["name"] && reference["kind"] == ours["kind"] {
                true => format!(
                    "its controller owner is another {} {} (uid {})",
                    field("kind"),
                    field("name"),
                    field("uid")
                ),
                false => format!("its controller owner is {} {}", field("kind"), field("name")),
            }
        }
    };
    let services: BTreeSet<&str> =
        backend_services(canary).into_iter().filter(|name| *name != source.canary_service).collect();
    let backends = match services.is_empty() {
        true => String::new(),
        false => format!(
            "; it routes to Service {}, not to the canary Service {}",
            services.into_iter().collect::<Vec<_>>().join(", "),
            source.canary_service,
        ),
    };
    Some(format!(
        "Ingress {}/{} is not {owner}'s canary Ingress ({whose}{backends})",
        owner.namespace,
        canary_ingress_name(source.ingress),
    ))
}

/// The Services an Ingress's rules and default backend route to.
pub fn backend_services(ingress: &Value) -> BTreeSet<&str> {
    let rules = ingress["spec"]["rules"].as_array().into_iter().flatten();
    let paths = rules.flat_map(|rule| rule["http"]["paths"].as_array().into_iter().flatten());
    let backends = paths.map(|path| &path["backend"]).chain(ingress["spec"].get("defaultBackend"));
    backends.filter_map(|backend| backend["service"]["name"].as_str()).collect()
}

/// A canary Ingress (as read) whose spec is not the one the controller would make from
/// `stable` now. The controller never updates a canary's spec after creating it (§5.4), so this
/// is no proof of an edit: the stable Ingress may have changed since.
pub fn canary_spec_differs(source: &CanarySource, stable: &Value, canary: &Value) -> Option<String> {
    let built = canary_ingress(source, stable).ok()?;
    let spec = |object: &Value| object.get("spec").filter(|s| !s.is_null()).cloned().unwrap_or_else(|| json!({}));
    (spec(&built) != spec(canary)).then(|| {
        format!(
            "the spec of Ingress {namespace}/{} differs from the one the controller makes from Ingress {namespace}/{} now: edited by hand, or the stable Ingress changed since the canary was made (the controller never updates it)",
            canary_ingress_name(source.ingress),
            source.ingress,
            namespace = source.owner.namespace,
        )
    })
}

/// The prefix of the canary annotations the gateway of a built-in class reads: ingress-nginx's
/// (nginx, higress, and mse, whose script writes its query keys under it too) or ALB's; none for
/// another class.
fn routing_prefix(class_type: &str) -> Option<&'static str> {
    match class_type {
        "nginx" | "higress" | "mse" => Some("nginx.ingress.kubernetes.io/"),
        "aliyun-alb" => Some("alb.ingress.kubernetes.io/"),
        _ => None,
    }
}

/// The annotations (after a prefix) that send matching requests to the canary.
const MATCH_KEYS: [&str; 7] = [
    "canary-by-cookie",
    "canary-by-header",
    "canary-by-header-value",
    "canary-by-header-pattern",
    "canary-by-query",
    "canary-by-query-value",
    "canary-by-query-pattern",
];

/// mse's pod subset of a canary Ingress, which the built-in script sets to `gray` when present.
pub const MSE_SERVICE_SUBSET: &str = "mse.ingress.kubernetes.io/service-subset";

/// mse's header update, which the built-in script writes from `requestHeaderModifier.set`.
pub const MSE_HEADER_UPDATE: &str = "mse.ingress.kubernetes.io/request-header-control-update";

/// The match key of an annotation key that the class's gateway reads (`canary-by-header` of
/// `nginx.ingress.kubernetes.io/canary-by-header`; the query keys only with mse).
fn match_key(class_type: &str, key: &str) -> Option<&'static str> {
    let rest = key.strip_prefix(routing_prefix(class_type)?)?;
    let read = |k: &&str| builtin_reads_queries(class_type) || !k.starts_with("canary-by-query");
    MATCH_KEYS.iter().copied().filter(read).find(|k| *k == rest)
}

/// What the step's matches write, as (match key, value), the way the built-in scripts read a
/// match: its first header (a header named `canary-by-cookie` is the cookie), its first query
/// parameter, a value or a pattern by `type`.
fn called_for(strategy: &RouteStrategy) -> BTreeSet<(&'static str, String)> {
    let mut wanted = BTreeSet::new();
    for m in strategy.matches.iter().flatten() {
        let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
        let regex = |c: &Value| c["type"] == "RegularExpression";
        if let Some(header) = m["headers"].as_array().and_then(|h| h.first()) {
            if header["name"] == "canary-by-cookie" {
                wanted.insert(("canary-by-cookie", text(&header["value"])));
            } else {
                wanted.insert(("canary-by-header", text(&header["name"])));
                let key = if regex(header) { "canary-by-header-pattern" } else { "canary-by-header-value" };
                wanted.insert((key, text(&header["value"])));
            }
        }
        if let Some(query) = m["queryParams"].as_array().and_then(|q| q.first()) {
            wanted.insert(("canary-by-query", text(&query["name"])));
            let key = if regex(query) { "canary-by-query-pattern" } else { "canary-by-query-value" };
            wanted.insert((key, text(&query["value"])));
        }
    }
    wanted
}

/// Read from the script's result (`annotations`, the canary's after the step), for a built-in
/// class (whatever script it has): the match keys its gateway reads that the step does not call
/// for (left by an earlier step or copied from the stable Ingress: the mse script never clears
/// the nginx-prefixed query keys it writes), and, with mse, a header update the step has no
/// `requestHeaderModifier` for.
pub fn leftover_routing(class_type: &str, strategy: &RouteStrategy, annotations: &Annotations) -> Vec<String> {
    let wanted = called_for(strategy);
    let left: Vec<String> = annotations
        .iter()
        .filter(|(key, value)| match_key(class_type, key).is_some_and(|k| !wanted.contains(&(k, value.to_string()))))
        .map(|(key, value)| format!("{key}: {value:?}"))
        .collect();
    let mut warnings = Vec::new();
    if !left.is_empty() {
        warnings.push(format!(
            "the canary Ingress keeps {}, which this step's matches do not call for (left by an earlier step, or copied from the stable Ingress; the {class_type} script does not clear them): requests that match them still go to the canary",
            left.join(", ")
        ));
    }
    if class_type == "mse"
        && strategy.request_header_modifier.is_none()
        && let Some(update) = annotations.get(MSE_HEADER_UPDATE)
    {
        warnings.push(format!(
            "the canary Ingress keeps {MSE_HEADER_UPDATE}: {update:?}, although this step has no requestHeaderModifier (the {class_type} script leaves it as an earlier step wrote it): requests to the canary still get those headers"
        ));
    }
    warnings
}

/// A canary Ingress of a built-in class whose annotations (the script's result) lack the mark
/// its gateway reads (`nginx.ingress.kubernetes.io/canary: "true"`, or ALB's): the gateway then
/// takes it as an ordinary Ingress for the stable Ingress's hosts and paths.
fn not_a_canary(class_type: &str, canary: &ObjectKey, annotations: &Annotations) -> Option<String> {
    let mark = format!("{}canary", routing_prefix(class_type)?);
    // The gateways read it with Go's strconv.ParseBool.
    let marked =
        annotations.get(&mark).is_some_and(|v| matches!(v.as_str(), "1" | "t" | "T" | "true" | "TRUE" | "True"));
    (!marked).then(|| {
        format!(
            "Ingress {}/{} is left without {mark}: \"true\" (the script's result does not set it): the {class_type} gateway takes it as an ordinary Ingress for the stable Ingress's hosts and paths, not as a canary, whatever the weight",
            canary.namespace, canary.name
        )
    })
}

/// A value key and a pattern key of one kind side by side in the script's result: the built-in
/// scripts clear them once per step, so two matches of different types (or an earlier step)
/// leave both, for the one name the last match wrote.
pub fn value_beside_pattern(class_type: &str, annotations: &Annotations) -> Vec<String> {
    let mut warnings = Vec::new();
    let Some(prefix) = routing_prefix(class_type) else { return warnings };
    let kinds: &[&str] = if builtin_reads_queries(class_type) { &["header", "query"] } else { &["header"] };
    for what in kinds {
        let get = |suffix: &str| annotations.get(&format!("{prefix}canary-by-{what}{suffix}"));
        if let (Some(value), Some(pattern)) = (get("-value"), get("-pattern")) {
            let name = get("").map(|n| format!(" {n:?}")).unwrap_or_default();
            warnings.push(format!(
                "the canary Ingress gets both {prefix}canary-by-{what}-value: {value:?} and {prefix}canary-by-{what}-pattern: {pattern:?}, for the one {what}{name} the last match names: they come from different matches (or an earlier step), so at least one of them is not routed as written"
            ));
        }
    }
    warnings
}

/// mse's header update when `set` has more than one header and the result joins them with no
/// separator (`gray bluex y z`), as the built-in script does.
pub fn joined_header_update(strategy: &RouteStrategy, annotations: &Annotations) -> Option<String> {
    let set = strategy.request_header_modifier.as_ref()?["set"].as_array().filter(|set| set.len() > 1)?;
    let update = annotations.get(MSE_HEADER_UPDATE)?;
    let joined: String = set
        .iter()
        .map(|h| format!("{} {}", h["name"].as_str().unwrap_or_default(), h["value"].as_str().unwrap_or_default()))
        .collect();
    (*update == joined).then(|| {
        format!(
            "requestHeaderModifier.set has {} headers, which the script writes into {MSE_HEADER_UPDATE} with no separator between them: {update:?}; they run into one another (set one header per step, or give the class a script that separates them)",
            set.len()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::StageRouting;
    use crate::scripts::builtin_ingress;

    #[test]
    fn a_missing_stable_ingress_is_said_as_the_read_found_it() {
        let key = ObjectKey::new("networking.k8s.io", "Ingress", "shop", "web");
        let said = |objects: &ObjectIndex| stable_missing(objects, "shop", "web");
        let among_files = said(&ObjectIndex::default()).unwrap();
        assert!(among_files.starts_with("Ingress shop/web, the stable Ingress, is not among the files: the controller reads it when a release starts"), "{among_files}");
        let mut cluster = ObjectIndex::default();
        cluster.insert_absent(key.clone());
        assert!(said(&cluster).unwrap().starts_with("Ingress shop/web, the stable Ingress, does not exist: "));
        // A refused read is said where it was refused.
        let mut refused = ObjectIndex::default();
        let needed = crate::model::Permission::new("get", "networking.k8s.io", "ingresses", None, "shop");
        refused.insert_unread(key, "forbidden".into(), Some(needed));
        assert_eq!(said(&refused), None);
    }

    fn key() -> ObjectKey {
        ObjectKey::new("networking.k8s.io", "Ingress", "shop", "web-canary")
    }

    fn owner() -> Owner {
        Owner { kind: OwnerKind::Rollout, namespace: "shop".into(), name: "demo".into(), uid: "u-1".into() }
    }

    fn script(class_type: &str) -> Script {
        let builtin = builtin_ingress(class_type).unwrap();
        Script::new(builtin.path(), builtin.code)
    }

    fn route<'a>(class_type: &'a str, owner: &'a Owner, script: &'a Script) -> IngressRoute<'a> {
        IngressRoute {
            ingress: "web",
            class_type,
            stable_service: "web",
            canary_service: "web-canary",
            owner,
            script,
            builtin: true,
            limits: Limits::default(),
            printed: Box::leak(Box::default()),
        }
    }

    fn stable() -> Value {
        json!({
            "apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
            "metadata": {"name": "web", "namespace": "shop", "uid": "s-1", "resourceVersion": "9",
                         "labels": {"app": "web"}, "annotations": {"kubernetes.io/ingress.class": "nginx"}},
            "spec": {
                "ingressClassName": "nginx",
                "defaultBackend": {"service": {"name": "web", "port": {"number": 80}}},
                "tls": [{"hosts": ["other.example.com"], "secretName": "tls"}],
                "rules": [
                    {"host": "web.example.com", "http": {"paths": [
                        {"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "web", "port": {"number": 80}}}},
                        {"path": "/api", "pathType": "Prefix", "backend": {"service": {"name": "api", "port": {"name": "http"}}}}
                    ]}},
                    {"host": "api.example.com", "http": {"paths": [
                        {"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "api", "port": {"number": 80}}}}
                    ]}},
                    {"http": {"paths": [
                        {"pathType": "ImplementationSpecific", "backend": {"service": {"name": "web", "port": {"name": "http"}}}}
                    ]}}
                ]
            }
        })
    }

    fn strategy(traffic: Option<&str>, matches: Option<Value>) -> RouteStrategy {
        RouteStrategy {
            traffic: traffic.map(str::to_string),
            matches: matches.map(|m| m.as_array().unwrap().clone()),
            request_header_modifier: None,
        }
    }

    /// What the controller does at a stage of a Rollout with this strategy.
    fn stage(traffic: Option<&str>, matches: Option<Value>) -> RoutingAction {
        StageRouting::of(strategy(traffic, matches)).action
    }

    fn header(name: &str, value: &str, kind: &str) -> Value {
        json!({"headers": [{"type": kind, "name": name, "value": value}]})
    }

    fn map(entries: &[(&str, &str)]) -> Annotations {
        entries.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn builds_the_canary_ingress_from_the_stable_one() {
        let (owner, script) = (owner(), script("nginx"));
        let canary = canary_ingress(&route("nginx", &owner, &script).source(), &stable()).unwrap();
        assert_eq!(
            canary,
            json!({
                "apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
                "metadata": {
                    "name": "web-canary", "namespace": "shop", "labels": {"app": "web"},
                    "annotations": {"kubernetes.io/ingress.class": "nginx"},
                    "ownerReferences": [{"apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout", "name": "demo",
                                         "uid": "u-1", "controller": true, "blockOwnerDeletion": true}]
                },
                "spec": {
                    "ingressClassName": "nginx",
                    "tls": [{"hosts": ["other.example.com"], "secretName": "tls"}],
                    "rules": [
                        {"host": "web.example.com", "http": {"paths": [
                            {"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "web-canary", "port": {"number": 80}}}}
                        ]}},
                        {"http": {"paths": [
                            {"pathType": "ImplementationSpecific", "backend": {"service": {"name": "web-canary", "port": {"name": "http"}}}}
                        ]}}
                    ]
                }
            })
        );
    }

    #[test]
    fn a_traffic_routing_owns_a_canary_ingress_on_the_stable_service() {
        let owner =
            Owner { kind: OwnerKind::TrafficRouting, namespace: "shop".into(), name: "tr".into(), uid: String::new() };
        let script = script("nginx");
        let route = IngressRoute { canary_service: "web", ..route("nginx", &owner, &script) };
        let canary = Arc::new(canary_ingress(&route.source(), &stable()).unwrap());
        assert_eq!(canary["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]["name"], "web");
        assert_eq!(canary["metadata"]["ownerReferences"][0]["apiVersion"], "rollouts.kruise.io/v1alpha1");
        assert_eq!(canary["metadata"]["ownerReferences"][0]["kind"], "TrafficRouting");
        // Its strategy without traffic or matches leaves the canary Ingress alone.
        let plan = plan_stage(&route, None, Some(&canary), &RoutingAction::Leave).unwrap();
        assert_eq!(
            (plan.changes, plan.canary),
            (vec![Change::Keep { key: key(), object: canary.clone() }], Some(canary))
        );
    }

    #[test]
    fn rules_the_controller_would_panic_on_are_errors() {
        let (owner, script) = (owner(), script("nginx"));
        let route = route("nginx", &owner, &script);
        let mut no_http = stable();
        no_http["spec"]["rules"][1] = json!({"host": "x"});
        let err = canary_ingress(&route.source(), &no_http).unwrap_err();
        assert!(err.starts_with("Ingress shop/web: spec.rules[1] has no http;"), "{err}");
        let mut resource = stable();
        resource["spec"]["rules"][0]["http"]["paths"][1]["backend"] =
            json!({"resource": {"apiGroup": "k8s.example.com", "kind": "StorageBucket", "name": "static"}});
        let err = canary_ingress(&route.source(), &resource).unwrap_err();
        assert!(err.starts_with("Ingress shop/web: spec.rules[0].http.paths[1] has no service backend;"), "{err}");
        let plan = plan_stage(&route, Some(&resource), None, &stage(Some("20%"), None));
        assert!(matches!(plan, Err(Error::Input(e)) if e.contains("has no service backend")));
    }

    #[test]
    fn a_canary_ingress_leaves_out_the_empty_fields_gos_typed_copy_leaves_out() {
        let (owner, script) = (owner(), script("nginx"));
        let route = route("nginx", &owner, &script);
        let mut empty = stable();
        empty["spec"]["rules"][0]["http"]["paths"][0]["path"] = json!("");
        // A helper's review: a port's empty name was copied as it was.
        empty["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"] =
            json!({"name": "web", "port": {"name": "", "number": 80}, "extra": 1});
        empty["spec"]["tls"] = json!([{"hosts": [], "secretName": ""}, {"hosts": ["a.example.com"], "extra": 1}]);
        let canary = canary_ingress(&route.source(), &empty).unwrap();
        assert_eq!(
            canary["spec"]["rules"][0]["http"]["paths"][0],
            json!({"pathType": "Prefix", "backend": {"service": {"name": "web-canary", "port": {"number": 80}}}})
        );
        assert_eq!(canary["spec"]["tls"], json!([{}, {"hosts": ["a.example.com"]}]));
    }

    #[test]
    fn an_ingress_of_another_version_than_v1_is_an_error_saying_what_is_read() {
        let (owner, script) = (owner(), script("nginx"));
        let route = route("nginx", &owner, &script);
        let mut old = stable();
        old["apiVersion"] = json!("networking.k8s.io/v1beta1");
        let err = canary_ingress(&route.source(), &old).unwrap_err();
        assert!(
            err.starts_with(
                "Ingress shop/web is networking.k8s.io/v1beta1: the controller reads Ingresses as networking.k8s.io/v1"
            ),
            "{err}"
        );
    }

    #[test]
    fn a_canary_ingress_without_rules_is_an_error_as_the_api_server_refuses_it() {
        let (owner, script) = (owner(), script("nginx"));
        let route = route("nginx", &owner, &script);
        let mut elsewhere = stable();
        for rule in elsewhere["spec"]["rules"].as_array_mut().unwrap() {
            for path in rule["http"]["paths"].as_array_mut().unwrap() {
                path["backend"]["service"]["name"] = json!("other");
            }
        }
        let err = canary_ingress(&route.source(), &elsewhere).unwrap_err();
        assert!(err.starts_with("Ingress shop/web: none of its paths routes to Service web"), "{err}");
        assert!(err.contains("the controller's step fails until a path routes to web"), "{err}");
        let plan = plan_stage(&route, Some(&elsewhere), None, &stage(Some("20%"), None));
        assert!(matches!(plan, Err(Error::Input(e)) if e.contains("would have no rules")));
        // One path to the stable Service is enough.
        let mut one = elsewhere.clone();
        one["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]["name"] = json!("web");
        assert_eq!(canary_ingress(&route.source(), &one).unwrap()["spec"]["rules"].as_array().unwrap().len(), 1);
    }

    #[test]
    fn obj_has_the_controllers_keys_and_omissions() {
        let none = lua_obj(&Annotations::new(), &strategy(None, None), "web-canary");
        assert_eq!(none, json!({"weight": "-1", "canaryService": "web-canary"}));
        // A match's empty list is left out, as Go's encoding leaves it out.
        let mut full = strategy(Some("30%"), Some(json!([{"headers": []}])));
        full.request_header_modifier = Some(json!({"set": [{"name": "x", "value": "y"}]}));
        let obj = lua_obj(&map(&[("a", "b")]), &full, "c");
        assert_eq!(
            obj,
            json!({"annotations": {"a": "b"}, "weight": "30", "matches": [{}], "canaryService": "c",
                   "requestHeaderModifier": {"set": [{"name": "x", "value": "y"}]}})
        );
        assert_eq!(lua_obj(&Annotations::new(), &strategy(Some("5"), None), "c")["weight"], "0", "unparsable is 0");
    }

    #[test]
    fn results_decode_as_gos_string_map() {
        assert_eq!(decode_annotations(Value::Null).unwrap(), Annotations::new());
        assert_eq!(decode_annotations(json!({"a": "1", "b": null})).unwrap(), map(&[("a", "1"), ("b", "")]));
        assert_eq!(
            decode_annotations(json!({"a": 1, "b": "x"})).unwrap_err(),
            "json: cannot unmarshal number into Go value of type string"
        );
        assert!(decode_annotations(json!({"a": true})).is_err());
        assert!(decode_annotations(json!({"a": ["x"]})).is_err());
        assert_eq!(
            decode_annotations(json!(["a"])).unwrap_err(),
            "json: cannot unmarshal array into Go value of type map[string]string"
        );
        assert_eq!(annotations_json(&Annotations::new()), "null");
        assert_eq!(annotations_json(&map(&[("b", "<"), ("a", "1")])), r#"{"a":"1","b":"\u003c"}"#);
    }

    #[test]
    fn script_output_must_be_a_table_of_strings() {
        let obj = json!({"weight": "0", "canaryService": "c"});
        let run = |code: &str| {
            evaluate(&Script::new("s.lua", code), &obj, &Limits::default(), &Printed::default()).map(|e| e.output)
        };
        assert_eq!(run("return {}").unwrap(), Annotations::new());
        assert_eq!(run("return 1, {a = 'b'}").unwrap(), map(&[("a", "b")]));
        let err = run("return {a = 'b'}, nil").unwrap_err();
        assert_eq!(err.to_string(), "script s.lua: expect table output from Lua script, not nil");
        let err = run("return {a = 1}").unwrap_err();
        assert_eq!(
            (err.kind, err.message.as_str()),
            (crate::lua::ScriptErrorKind::Output, "json: cannot unmarshal number into Go value of type string")
        );
    }

    #[test]
    fn a_result_without_the_canary_mark_is_warned_of() {
        let owner = owner();
        let (keeps, drops) = (Script::new("keeps", "return obj.annotations"), Script::new("drops", "return {}"));
        // The built-in script sets the mark; the stable Ingress's annotations do not have it.
        let built_in = script("nginx");
        let plan =
            plan_stage(&route("nginx", &owner, &built_in), Some(&stable()), None, &stage(Some("20%"), None)).unwrap();
        assert!(
            !plan.warnings.iter().any(|w| w.contains("without nginx.ingress.kubernetes.io/canary")),
            "{:?}",
            plan.warnings
        );
        let plan =
            plan_stage(&route("nginx", &owner, &keeps), Some(&stable()), None, &stage(Some("20%"), None)).unwrap();
        assert_eq!(
            plan.warnings,
            [
                "Ingress shop/web-canary is left without nginx.ingress.kubernetes.io/canary: \"true\" (the script's result does not set it): the nginx gateway takes it as an ordinary Ingress for the stable Ingress's hosts and paths, not as a canary, whatever the weight"
            ]
        );
        // Removing every annotation of an existing canary: one null for all of them.
        let made = plan_stage(&route("nginx", &owner, &built_in), Some(&stable()), None, &stage(Some("20%"), None));
        let canary = made.unwrap().canary.unwrap();
        let plan =
            plan_stage(&route("nginx", &owner, &drops), Some(&stable()), Some(&canary), &stage(Some("20%"), None));
        let plan = plan.unwrap();
        let [Change::MergePatch { patch, .. }] = plan.changes.as_slice() else { panic!("{:?}", plan.changes) };
        assert_eq!(patch, &json!({"metadata": {"annotations": null}}));
        assert!(plan.warnings.iter().any(|w| w.contains("left without nginx.ingress.kubernetes.io/canary")));
        // ALB's mark, and a class whose gateway the plugin does not know: no word.
        assert!(not_a_canary("aliyun-alb", &canary_key_in("shop", "web"), &map(&[(ALB_CANARY, "True")])).is_none());
        assert!(not_a_canary("aliyun-alb", &canary_key_in("shop", "web"), &map(&[(ALB_CANARY, "yes")])).is_some());
        assert!(not_a_canary("traefik", &canary_key_in("shop", "web"), &Annotations::new()).is_none());
    }

    #[test]
    fn the_merge_patch_lists_changed_keys_and_nulls_removed_ones() {
        let before = map(&[("keep", "1"), ("change", "a"), ("drop", "x")]);
        let after = map(&[("keep", "1"), ("change", "b"), ("add", "y")]);
        let patch = annotations_patch(&before, &after);
        assert_eq!(patch, json!({"metadata": {"annotations": {"add": "y", "change": "b", "drop": null}}}));
        assert_eq!(gojson::to_string(&patch), r#"{"metadata":{"annotations":{"add":"y","change":"b","drop":null}}}"#);
        // None left: the nil map Go decodes the result into is encoded as null.
        assert_eq!(annotations_patch(&before, &Annotations::new()), json!({"metadata": {"annotations": null}}));
        assert_eq!(
            crate::change::merge_patch(
                &json!({"metadata": {"name": "c", "annotations": {"drop": "x"}}}),
                &annotations_patch(&before, &Annotations::new())
            ),
            json!({"metadata": {"name": "c"}})
        );
    }

    #[test]
    fn first_use_creates_at_weight_zero_then_patches() {
        let (owner, script) = (owner(), script("nginx"));
        let route = route("nginx", &owner, &script);
        let plan = plan_stage(&route, Some(&stable()), None, &stage(Some("20%"), None)).unwrap();
        let [Change::Create { object: created, .. }, Change::MergePatch { before, patch, subresource: None, .. }] =
            plan.changes.as_slice()
        else {
            panic!("{:?}", plan.changes)
        };
        assert_eq!(
            annotations_of(created),
            map(&[
                ("kubernetes.io/ingress.class", "nginx"),
                ("nginx.ingress.kubernetes.io/canary", "true"),
                ("nginx.ingress.kubernetes.io/canary-weight", "0")
            ])
        );
        assert!(Arc::ptr_eq(before, created), "the patch is of the canary Ingress made, held once");
        assert_eq!(patch, &json!({"metadata": {"annotations": {"nginx.ingress.kubernetes.io/canary-weight": "20"}}}));
        assert_eq!(plan.canary, plan.changes[1].after());
        assert_eq!(
            plan.obj.as_ref().unwrap()["annotations"],
            json!(annotations_of(created)),
            "the step runs on the made canary"
        );
        assert!(plan.warnings.is_empty(), "{:?}", plan.warnings);
        // Converged: the same step again changes nothing.
        let again = plan_stage(&route, Some(&stable()), plan.canary.as_ref(), &stage(Some("20%"), None)).unwrap();
        assert_eq!(again.changes, vec![Change::Keep { key: key(), object: plan.canary.unwrap() }]);
    }

    #[test]
    fn a_script_that_reads_what_it_wrote_is_followed_until_it_settles() {
        let owner = owner();
        let plan = |code: &str| {
            let script = Script::new("mine.lua", code);
            let route = IngressRoute { builtin: false, ..route("nginx", &owner, &script) };
            let canary = Arc::new(
                json!({"metadata": {"annotations": {"current": "5", "nginx.ingress.kubernetes.io/canary": "true"}}}),
            );
            plan_stage(&route, None, Some(&canary), &stage(Some("20%"), None)).unwrap()
        };
        let patched = |plan: &StagePlan| match plan.changes.as_slice() {
            [Change::MergePatch { patch, .. }] => patch["metadata"]["annotations"].clone(),
            other => panic!("{other:?}"),
        };
        // The previous weight is copied from the one the first patch wrote: a second patch.
        let previous = plan("local a = obj.annotations a.previous = a.current a.current = obj.weight return a");
        assert_eq!(patched(&previous), json!({"current": "20", "previous": "20"}));
        assert_eq!(
            previous.warnings,
            [
                "script mine.lua: run on the annotations it wrote, it gives others: the controller patches the canary Ingress 2 times at this stage before its result stays (the plan shows where it settles)"
            ]
        );
        // Settled at once: no warning.
        let idempotent = plan("local a = obj.annotations a.current = obj.weight return a");
        assert_eq!((patched(&idempotent), idempotent.warnings), (json!({"current": "20"}), Vec::<String>::new()));
        // Never settles: the last write followed, and the step said never to complete.
        let growing = plan("local a = obj.annotations a.current = a.current .. '+' return a");
        assert_eq!(patched(&growing), json!({"current": format!("5{}", "+".repeat(SETTLING_PATCHES))}));
        assert_eq!(
            growing.warnings,
            [
                "script mine.lua: run on the annotations it wrote, it gives others every time (followed for 8 patches): the controller patches the canary Ingress at every reconcile, and the step never completes; the plan shows its last write"
            ]
        );
        // A later run that fails fails the plan, saying which run.
        let script = Script::new(
            "mine.lua",
            "if obj.annotations.current == '20' then error('boom') end local a = obj.annotations a.current = obj.weight return a",
        );
        let route = IngressRoute { builtin: false, ..route("nginx", &owner, &script) };
        let canary = Arc::new(
            json!({"metadata": {"annotations": {"current": "5", "nginx.ingress.kubernetes.io/canary": "true"}}}),
        );
        let error = plan_stage(&route, None, Some(&canary), &stage(Some("20%"), None)).unwrap_err().to_string();
        assert!(
            error.contains("boom")
                && error.contains(
                    "(run again on the annotations its run 1 wrote, as the controller's next reconcile runs it)"
                ),
            "{error}"
        );
    }

    #[test]
    fn weight_zero_creates_nothing_and_a_step_without_traffic_deletes() {
        let (owner, script) = (owner(), script("nginx"));
        let route = route("nginx", &owner, &script);
        let absent = vec![Change::Keep { key: key(), object: Value::Null.into() }];
        let zero = plan_stage(&route, Some(&stable()), None, &stage(Some("0%"), None)).unwrap();
        assert_eq!((&zero.changes, zero.canary, zero.obj), (&absent, None, None));
        let created = plan_stage(&route, Some(&stable()), None, &stage(Some("10%"), None)).unwrap().canary.unwrap();
        let replicas_only = plan_stage(&route, Some(&stable()), Some(&created), &stage(None, None)).unwrap();
        assert_eq!(
            (replicas_only.changes, replicas_only.canary),
            (vec![Change::Delete { key: key(), before: created.clone() }], None)
        );
        assert!(replicas_only.warnings.is_empty(), "{:?}", replicas_only.warnings);
        // One with finalizers outlives its DELETE: said.
        let mut held = Value::clone(&created);
        held["metadata"]["finalizers"] = json!(["ingress.k8s.aws/resources", "other/x"]);
        let deleted = plan_stage(&route, None, Some(&Arc::new(held)), &RoutingAction::Restore).unwrap();
        assert_eq!(
            deleted.warnings,
            [
                "Ingress shop/web-canary has finalizers (ingress.k8s.aws/resources, other/x): the DELETE only marks it, and it stays until they are removed; a traffic step the controller runs before that patches the terminating Ingress and counts as done, and its routing goes with the Ingress (the plan takes them as removed at once)"
            ]
        );
        let nothing = plan_stage(&route, Some(&stable()), None, &stage(None, Some(json!([])))).unwrap();
        assert_eq!(nothing.changes, absent);
        // One the API server is deleting already is left to it
        // (docs/controller-semantics.md §5.5).
        let mut deleting = Value::clone(&created);
        deleting["metadata"]["deletionTimestamp"] = json!("2026-11-22T03:00:00Z");
        let deleting = Arc::new(deleting);
        let again = plan_stage(&route, None, Some(&deleting), &RoutingAction::Restore).unwrap();
        assert_eq!(again.changes, vec![Change::Keep { key: key(), object: deleting }]);
        assert!(plan_stage(&route, None, None, &stage(Some("10%"), None)).is_err(), "the stable Ingress is needed");
    }

    #[test]
    fn annotations_carry_over_from_step_to_step() {
        let (owner, script) = (owner(), script("mse"));
        let route = route("mse", &owner, &script);
        let query = json!([{"queryParams": [{"type": "Exact", "name": "user", "value": "beta"}]}]);
        let plans =
            plan_stages(&route, Some(&stable()), None, &[stage(None, Some(query)), stage(Some("50%"), None)]).unwrap();
        let last = annotations_of(plans[1].canary.as_ref().unwrap());
        // mse clears the mse-prefixed query keys but wrote nginx-prefixed ones: they stay.
        assert_eq!(last.get("nginx.ingress.kubernetes.io/canary-by-query").map(String::as_str), Some("user"));
        assert_eq!(last.get("nginx.ingress.kubernetes.io/canary-weight").map(String::as_str), Some("50"));
        let [Change::MergePatch { patch, .. }] = plans[1].changes.as_slice() else { panic!("{:?}", plans[1].changes) };
        assert_eq!(patch, &json!({"metadata": {"annotations": {"nginx.ingress.kubernetes.io/canary-weight": "50"}}}));
    }

    #[test]
    fn warns_about_what_the_built_in_scripts_ignore() {
        let matches = json!([
            {"headers": [{"type": "Exact", "name": "a", "value": "1"}, {"type": "Exact", "name": "b", "value": "2"}],
             "path": {"type": "PathPrefix", "value": "/pc"}},
            {"queryParams": [{"type": "Exact", "name": "q", "value": "1"}, {"type": "Exact", "name": "r", "value": "2"}]}
        ]);
        let step = strategy(None, Some(matches));
        // A match the script writes its first header of gets more than it describes; nginx
        // skips one without a header, so what it describes gets nothing.
        assert_eq!(
            ignored_conditions("nginx", &step),
            vec![
                "matches[0]: the nginx Ingress script ignores header \"b\" (only a match's first header is used) and path /pc, so the canary gets more traffic than the match describes",
                "matches[1] has query parameter \"q\", \"r\" but no header: the nginx Ingress script skips it, so the requests it describes are not sent to the canary",
            ]
        );
        // mse writes a match's first query parameter too.
        assert_eq!(
            ignored_conditions("mse", &step)[1],
            "matches[1]: the mse Ingress script ignores query parameter \"r\" (only a match's first one is used), so the canary gets more traffic than the match describes"
        );
        assert!(ignored_conditions("traefik", &step).is_empty());
        assert!(ignored_conditions("nginx", &strategy(None, Some(json!([header("a", "1", "Exact")])))).is_empty());
    }

    #[test]
    fn a_match_the_script_writes_no_key_for_is_said_to_send_nothing_to_the_canary() {
        let keyless = json!([{"path": {"type": "PathPrefix", "value": "/beta"}}, {}]);
        assert_eq!(
            ignored_conditions("mse", &strategy(None, Some(keyless.clone()))),
            [
                "matches[0] has path /beta but no header or query parameter: the mse Ingress script skips it, so the requests it describes are not sent to the canary",
                "matches[1] has no condition: the mse Ingress script skips it, so the requests it describes are not sent to the canary",
            ]
        );
        let both = json!([{"path": {"value": "/foo"}, "queryParams": [{"type": "Exact", "name": "q", "value": "1"}]}]);
        assert_eq!(
            ignored_conditions("nginx", &strategy(Some("10%"), Some(both))),
            [
                "matches[0] has path /foo and query parameter \"q\" but no header: the nginx Ingress script skips it, so the requests it describes reach the canary only through the step's traffic 10%, as any other request does"
            ]
        );
        // higress and aliyun-alb fail on it instead (headerless_match).
        for class in ["higress", "aliyun-alb"] {
            assert!(ignored_conditions(class, &strategy(None, Some(keyless.clone()))).is_empty(), "{class}");
        }
    }

    #[test]
    fn a_step_whose_matches_leave_the_canary_without_a_route_is_warned_of() {
        let nothing = "the step's matches are not applied: the canary Ingress is left with no weight and no match key the nginx gateway reads, so no request reaches the new version, matched or not; give a match a header";
        let canary =
            |entries: &[(&str, &str)]| map(&[&[("nginx.ingress.kubernetes.io/canary", "true")], entries].concat());
        let keyless = || Some(json!([{"path": {"value": "/beta"}}]));
        assert_eq!(canary_routes_nothing("nginx", &strategy(None, keyless()), &canary(&[])).as_deref(), Some(nothing));
        let zero = canary(&[("nginx.ingress.kubernetes.io/canary-weight", "0")]);
        assert_eq!(canary_routes_nothing("nginx", &strategy(Some("0%"), keyless()), &zero).as_deref(), Some(nothing));
        assert!(
            canary_routes_nothing("mse", &strategy(None, keyless()), &canary(&[]))
                .unwrap()
                .ends_with("give a match a header or query parameter")
        );
        // A weight, a match key (a step's own or left from an earlier one), no matches at all,
        // or a class whose gateway's keys are not known: nothing to say.
        let weighted = canary(&[("nginx.ingress.kubernetes.io/canary-weight", "10")]);
        assert_eq!(canary_routes_nothing("nginx", &strategy(Some("10%"), keyless()), &weighted), None);
        let keyed = canary(&[("nginx.ingress.kubernetes.io/canary-by-query", "user")]);
        assert_eq!(canary_routes_nothing("mse", &strategy(None, keyless()), &keyed), None);
        assert_eq!(
            canary_routes_nothing("nginx", &strategy(None, keyless()), &keyed),
            Some(nothing.into()),
            "nginx reads no query key"
        );
        assert_eq!(canary_routes_nothing("nginx", &strategy(Some("0%"), None), &zero), None);
        assert_eq!(canary_routes_nothing("traefik", &strategy(None, keyless()), &canary(&[])), None);
        // In the plan, read from the script's result.
        let (owner, nginx) = (owner(), script("nginx"));
        let route = route("nginx", &owner, &nginx);
        let warned = |action: &RoutingAction| plan_stage(&route, Some(&stable()), None, action).unwrap().warnings;
        assert!(warned(&stage(None, keyless())).iter().any(|w| w == nothing), "{:?}", warned(&stage(None, keyless())));
        let headed = stage(None, Some(json!([{"path": {"value": "/beta"}}, header("a", "1", "Exact")])));
        assert!(!warned(&headed).iter().any(|w| w == nothing), "{:?}", warned(&headed));
    }

    #[test]
    fn warns_that_a_header_modifier_is_ignored_but_by_mse() {
        let mut modified = strategy(Some("5%"), None);
        modified.request_header_modifier = Some(json!({"set": [{"name": "gray", "value": "blue"}]}));
        for class in ["nginx", "higress", "aliyun-alb"] {
            assert_eq!(
                ignored_header_modifier(class, &modified).unwrap(),
                format!(
                    "the {class} Ingress script ignores requestHeaderModifier: requests to the canary are not modified"
                )
            );
        }
        // mse writes its set headers; a class of its own may.
        assert_eq!(ignored_header_modifier("mse", &modified), None);
        assert_eq!(ignored_header_modifier("traefik", &modified), None);
        assert_eq!(ignored_header_modifier("nginx", &strategy(Some("5%"), None)), None);
        warned_for_the_built_in_script_only("nginx", modified, "ignores requestHeaderModifier");
    }

    #[test]
    fn warns_that_the_mse_script_ignores_added_and_removed_headers() {
        let mut modified = strategy(Some("10%"), None);
        modified.request_header_modifier = Some(json!({
            "set": [{"name": "x-mse-tag", "value": "gray"}],
            "add": [{"name": "x-env", "value": "canary"}],
            "remove": ["x-debug", "x-trace"]
        }));
        assert_eq!(
            ignored_header_modifier("mse", &modified).as_deref(),
            Some(
                "the mse Ingress script writes only requestHeaderModifier.set: add x-env=canary, remove x-debug, remove x-trace are not applied to requests to the canary"
            )
        );
        modified.request_header_modifier = Some(json!({"set": [{"name": "a", "value": "1"}], "remove": ["b"]}));
        assert_eq!(
            ignored_header_modifier("mse", &modified).as_deref(),
            Some(
                "the mse Ingress script writes only requestHeaderModifier.set: remove b is not applied to requests to the canary"
            )
        );
        warned_for_the_built_in_script_only("mse", modified, "remove b is not applied");
    }

    /// In the plan of a step of `strategy` through `class`, a warning holding `warning` comes
    /// with the built-in script, and none with a script of one's own.
    fn warned_for_the_built_in_script_only(class: &str, strategy: RouteStrategy, warning: &str) {
        let (owner, builtin) = (owner(), script(class));
        let route = route(class, &owner, &builtin);
        let step = RoutingAction::Route(strategy);
        let warnings = plan_stage(&route, Some(&stable()), None, &step).unwrap().warnings;
        assert!(warnings.iter().any(|w| w.contains(warning)), "{warnings:?}");
        let custom = IngressRoute { builtin: false, ..route };
        assert!(plan_stage(&custom, Some(&stable()), None, &step).unwrap().warnings.is_empty());
    }

    #[test]
    fn warns_that_a_weight_beside_matches_is_written_too() {
        let matched = || Some(json!([header("a", "1", "Exact")]));
        assert_eq!(
            weight_beside_matches("nginx", &strategy(Some("10%"), matched())).as_deref(),
            Some(
                "the step has matches and traffic 10%: the nginx Ingress script writes the weight as well as the matches, so 10% of the requests that do not match go to the canary too"
            )
        );
        assert!(weight_beside_matches("aliyun-alb", &strategy(Some("10%"), matched())).is_some());
        // No share of the rest: no traffic, 0%, no matches, a class with a script of its own.
        assert_eq!(weight_beside_matches("nginx", &strategy(None, matched())), None);
        assert_eq!(weight_beside_matches("nginx", &strategy(Some("0%"), matched())), None);
        assert_eq!(weight_beside_matches("nginx", &strategy(Some("10%"), Some(json!([])))), None);
        assert_eq!(weight_beside_matches("nginx", &strategy(Some("10%"), None)), None);
        assert_eq!(weight_beside_matches("traefik", &strategy(Some("10%"), matched())), None);
    }

    #[test]
    fn warns_where_the_built_in_scripts_fail() {
        let headerless = strategy(None, Some(json!([header("a", "1", "Exact"), {"path": {"value": "/"}}])));
        for class in ["higress", "aliyun-alb"] {
            let warning = headerless_match(class, &headerless).unwrap();
            assert!(warning.starts_with(&format!("matches[1] has no header: the controller's {class} script fails")));
        }
        assert_eq!(headerless_match("nginx", &headerless), None);
        assert_eq!(headerless_match("aliyun-alb", &strategy(Some("5%"), None)), None);
        assert!(mse_without_annotations("mse", &Annotations::new()).unwrap().contains("#228"));
        assert_eq!(mse_without_annotations("mse", &map(&[("a", "b")])), None);
        assert_eq!(mse_without_annotations("nginx", &Annotations::new()), None);
        let mut remove_only = strategy(Some("5%"), None);
        remove_only.request_header_modifier = Some(json!({"remove": ["x"]}));
        assert!(modifier_without_set("mse", &remove_only).is_some());
        assert_eq!(modifier_without_set("nginx", &remove_only), None);
        assert_eq!(modifier_without_set("mse", &strategy(Some("5%"), None)), None);
    }

    #[test]
    fn a_failure_a_warning_explains_carries_it() {
        let (owner, alb, mse) = (owner(), script("aliyun-alb"), script("mse"));
        let alb_route = route("aliyun-alb", &owner, &alb);
        let step = stage(None, Some(json!([{"path": {"type": "PathPrefix", "value": "/"}}])));
        let Err(Error::Input(message)) = plan_stage(&alb_route, Some(&stable()), None, &step) else { panic!() };
        assert!(message.starts_with("script lua_configuration/trafficrouting_ingress/aliyun-alb.lua:"), "{message}");
        let headerless = "matches[0] has no header: the controller's aliyun-alb script fails on it (it reads the first header of every match) and the step never finishes";
        // The canary Ingress is created in a pass of its own, which has no matches.
        let created =
            "the controller creates Ingress shop/web-canary first, at weight 0 (that run has no matches), and it stays";
        assert!(message.ends_with(&format!("({headerless}; {created})")), "{message}");
        // A canary Ingress there already: the step's run alone.
        let canary = plan_stage(&alb_route, Some(&stable()), None, &stage(Some("5%"), None)).unwrap().canary.unwrap();
        let Err(Error::Input(message)) = plan_stage(&alb_route, Some(&stable()), Some(&canary), &step) else {
            panic!()
        };
        assert!(message.ends_with(&format!("({headerless})")), "{message}");
        // A script of one's own that fails at the step's run only.
        let failing =
            Script::new("mine.lua", "if obj.matches then error('no matches here') end return obj.annotations");
        let mine = IngressRoute { script: &failing, builtin: false, ..alb_route.clone() };
        let Err(Error::Input(message)) = plan_stage(&mine, Some(&stable()), None, &step) else { panic!() };
        assert_eq!(message, format!("script mine.lua:1: no matches here ({created})"));
        let mse_route = route("mse", &owner, &mse);
        let mut bare = stable();
        bare["metadata"].as_object_mut().unwrap().remove("annotations");
        let Err(Error::Input(message)) = plan_stage(&mse_route, Some(&bare), None, &stage(Some("5%"), None)) else {
            panic!()
        };
        assert!(message.contains("attempt to index") && message.contains("#228"), "{message}");
        assert!(!message.contains("creates"), "the creation's own run fails: {message}");
        // Someone else's script for the class: the built-in's quirks are not its own.
        let custom = Script::new("mine.lua", "return {['a'] = 'b', ['alb.ingress.kubernetes.io/canary'] = 'true'}");
        let mine = IngressRoute { script: &custom, builtin: false, ..alb_route };
        // Only what its result says: it routes nothing to the canary.
        let warnings = plan_stage(&mine, Some(&stable()), None, &step).unwrap().warnings;
        assert_eq!(
            warnings,
            [matches_reach_nothing(
                "the canary Ingress is left with no weight and no match key the aliyun-alb gateway reads",
                "give a match a header"
            )]
        );
    }

    /// mse's step 1 of the audit's fixture (s26-providers #4): a header update setting two
    /// headers, matches of two query types; then a weight step.
    fn mse_release() -> (RoutingAction, RoutingAction) {
        let mut matched = strategy(
            None,
            Some(json!([
                {"headers": [{"type": "Exact", "name": "a", "value": "1"}],
                 "queryParams": [{"type": "RegularExpression", "name": "q", "value": "v.*"}]},
                {"queryParams": [{"type": "Exact", "name": "q2", "value": "2"}]}
            ])),
        );
        matched.request_header_modifier =
            Some(json!({"set": [{"name": "gray", "value": "blue"}, {"name": "x", "value": "y z"}]}));
        (StageRouting::of(matched).action, stage(Some("40%"), None))
    }

    #[test]
    fn warns_of_what_the_mse_script_leaves_and_joins() {
        let (owner, script) = (owner(), script("mse"));
        let route = route("mse", &owner, &script);
        let (matched, weighted) = mse_release();
        let plans = plan_stages(&route, Some(&stable()), None, &[matched, weighted]).unwrap();
        // The annotations the oracle's -ingress gives for these objs (checked by hand against
        // the controller's engine, and by tests/differential_ingress.rs for the script).
        let step1 = annotations_of(plans[0].canary.as_ref().unwrap());
        assert_eq!(step1[MSE_HEADER_UPDATE], "gray bluex y z");
        assert_eq!(
            plans[0].warnings,
            vec![
                "the canary Ingress gets both nginx.ingress.kubernetes.io/canary-by-query-value: \"2\" and nginx.ingress.kubernetes.io/canary-by-query-pattern: \"v.*\", for the one query \"q2\" the last match names: they come from different matches (or an earlier step), so at least one of them is not routed as written",
                "requestHeaderModifier.set has 2 headers, which the script writes into mse.ingress.kubernetes.io/request-header-control-update with no separator between them: \"gray bluex y z\"; they run into one another (set one header per step, or give the class a script that separates them)",
            ]
        );
        // At 40%, the query keys and the header update of step 1 are still there.
        let step2 = &plans[1].warnings;
        assert_eq!(
            step2[0],
            "the canary Ingress keeps nginx.ingress.kubernetes.io/canary-by-query: \"q2\", nginx.ingress.kubernetes.io/canary-by-query-pattern: \"v.*\", nginx.ingress.kubernetes.io/canary-by-query-value: \"2\", which this step's matches do not call for (left by an earlier step, or copied from the stable Ingress; the mse script does not clear them): requests that match them still go to the canary"
        );
        assert_eq!(
            step2[1],
            "the canary Ingress keeps mse.ingress.kubernetes.io/request-header-control-update: \"gray bluex y z\", although this step has no requestHeaderModifier (the mse script leaves it as an earlier step wrote it): requests to the canary still get those headers"
        );
        assert!(step2[2].starts_with("the canary Ingress gets both nginx.ingress.kubernetes.io/canary-by-query-value"));
        assert_eq!(step2.len(), 3, "{step2:?}");
    }

    #[test]
    fn warns_from_the_result_not_the_class_script() {
        let (matched, weighted) = mse_release();
        let (RoutingAction::Route(matched), RoutingAction::Route(weighted)) = (matched, weighted) else { panic!() };
        // A script of the class's own that writes what the built-in one writes is warned too.
        let left = map(&[("nginx.ingress.kubernetes.io/canary-by-query", "q2"), (MSE_HEADER_UPDATE, "gray blue")]);
        assert_eq!(leftover_routing("mse", &weighted, &left).len(), 2);
        assert!(joined_header_update(&matched, &map(&[(MSE_HEADER_UPDATE, "gray bluex y z")])).is_some());
        // One that separates the headers, or keeps only what the step calls for, is not.
        assert_eq!(joined_header_update(&matched, &map(&[(MSE_HEADER_UPDATE, "gray blue\nx y z")])), None);
        let called = map(&[
            ("nginx.ingress.kubernetes.io/canary-by-header", "a"),
            ("nginx.ingress.kubernetes.io/canary-by-header-value", "1"),
            ("nginx.ingress.kubernetes.io/canary-by-query", "q2"),
            ("nginx.ingress.kubernetes.io/canary-by-query-value", "2"),
            (MSE_HEADER_UPDATE, "gray bluex y z"),
        ]);
        assert!(leftover_routing("mse", &matched, &called).is_empty());
        assert!(value_beside_pattern("mse", &called).is_empty());
        // A value the step's match gives under the other type is not called for.
        let pattern = map(&[("nginx.ingress.kubernetes.io/canary-by-header-pattern", "1")]);
        assert_eq!(leftover_routing("mse", &matched, &pattern).len(), 1);
        // Keys the class's gateway does not read: query keys with nginx, nginx keys with ALB.
        let queries = map(&[("nginx.ingress.kubernetes.io/canary-by-query", "q2")]);
        assert!(leftover_routing("nginx", &weighted, &queries).is_empty());
        assert!(leftover_routing("aliyun-alb", &weighted, &queries).is_empty());
        let alb = map(&[("alb.ingress.kubernetes.io/canary-by-header", "a")]);
        assert_eq!(leftover_routing("aliyun-alb", &weighted, &alb).len(), 1);
        assert!(leftover_routing("nginx", &weighted, &alb).is_empty());
        assert!(leftover_routing("nginx", &weighted, &map(&[(MSE_HEADER_UPDATE, "gray blue")])).is_empty());
        // A class whose gateway reads none of these keys.
        assert!(leftover_routing("traefik", &weighted, &left).is_empty());
        assert!(
            value_beside_pattern(
                "traefik",
                &map(&[
                    ("nginx.ingress.kubernetes.io/canary-by-header-value", "1"),
                    ("nginx.ingress.kubernetes.io/canary-by-header-pattern", "x")
                ])
            )
            .is_empty()
        );
        // One header set: nothing runs together.
        let mut one = matched.clone();
        one.request_header_modifier = Some(json!({"set": [{"name": "gray", "value": "blue"}]}));
        assert_eq!(joined_header_update(&one, &map(&[(MSE_HEADER_UPDATE, "gray blue")])), None);
    }

    #[test]
    fn nginx_clears_what_an_earlier_step_matched() {
        let (owner, script) = (owner(), script("nginx"));
        let route = route("nginx", &owner, &script);
        let actions = [
            stage(None, Some(json!([header("a", "1", "Exact")]))),
            stage(Some("30%"), None),
            stage(None, Some(json!([header("a", "1", "Exact"), header("b", "x.*", "RegularExpression")]))),
        ];
        let plans = plan_stages(&route, Some(&stable()), None, &actions).unwrap();
        assert!(plans[0].warnings.is_empty() && plans[1].warnings.is_empty(), "{plans:?}");
        // Two types in one step: the value of a beside the pattern of b.
        assert_eq!(
            plans[2].warnings,
            vec![
                "the canary Ingress gets both nginx.ingress.kubernetes.io/canary-by-header-value: \"1\" and nginx.ingress.kubernetes.io/canary-by-header-pattern: \"x.*\", for the one header \"b\" the last match names: they come from different matches (or an earlier step), so at least one of them is not routed as written"
            ]
        );
    }

    #[test]
    fn someone_elses_canary_ingress_is_named_with_its_owner_and_backends() {
        let (owner, script) = (owner(), script("nginx"));
        let route = route("nginx", &owner, &script);
        let source = route.source();
        let ours = canary_ingress(&source, &stable()).unwrap();
        assert_eq!(foreign_canary(&source, &ours), None);
        let mut bobs = ours.clone();
        bobs["metadata"].as_object_mut().unwrap().remove("ownerReferences");
        bobs["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]["name"] = json!("bob");
        assert_eq!(
            foreign_canary(&source, &bobs).unwrap(),
            "Ingress shop/web-canary is not Rollout shop/demo's canary Ingress (it has no controller owner; it routes to Service bob, not to the canary Service web-canary)"
        );
        let mut others = ours.clone();
        others["metadata"]["ownerReferences"][0]["name"] = json!("other");
        assert_eq!(
            foreign_canary(&source, &others).unwrap(),
            "Ingress shop/web-canary is not Rollout shop/demo's canary Ingress (its controller owner is Rollout other)"
        );
        let mut again = ours.clone();
        again["metadata"]["ownerReferences"][0]["uid"] = json!("u-0");
        assert!(foreign_canary(&source, &again).unwrap().contains("another Rollout demo (uid u-0)"));
        // An owner read from a file without a uid is known by its kind and name.
        let fileborne = Owner { uid: String::new(), ..owner.clone() };
        let from_file = IngressRoute { owner: &fileborne, ..route.clone() };
        assert_eq!(foreign_canary(&from_file.source(), &again), None);
        let mut not_controller = ours.clone();
        not_controller["metadata"]["ownerReferences"][0]["controller"] = json!(false);
        assert!(foreign_canary(&source, &not_controller).unwrap().contains("(it has no controller owner)"));
    }

    #[test]
    fn a_canary_spec_other_than_the_stable_ingress_makes_is_noted() {
        let (owner, script) = (owner(), script("nginx"));
        let route = route("nginx", &owner, &script);
        let source = route.source();
        let canary = canary_ingress(&source, &stable()).unwrap();
        assert_eq!(canary_spec_differs(&source, &stable(), &canary), None);
        // Only the spec counts: annotations are the script's.
        let mut annotated = canary.clone();
        annotated["metadata"]["annotations"]["nginx.ingress.kubernetes.io/canary-weight"] = json!("30");
        assert_eq!(canary_spec_differs(&source, &stable(), &annotated), None);
        let mut edited = canary.clone();
        edited["spec"]["rules"].as_array_mut().unwrap().push(json!({"host": "evil.example.com"}));
        assert_eq!(
            canary_spec_differs(&source, &stable(), &edited).unwrap(),
            "the spec of Ingress shop/web-canary differs from the one the controller makes from Ingress shop/web now: edited by hand, or the stable Ingress changed since the canary was made (the controller never updates it)"
        );
        let mut changed = stable();
        changed["spec"]["tls"] = json!([]);
        assert!(canary_spec_differs(&source, &changed, &canary).is_some(), "the stable Ingress changed");
    }

    #[test]
    fn warns_when_another_alb_ingress_of_the_class_has_the_same_order() {
        let (owner, script) = (owner(), script("aliyun-alb"));
        let route = route("aliyun-alb", &owner, &script);
        let planned = plan_stage(&route, Some(&stable()), None, &stage(Some("10%"), None)).unwrap().canary.unwrap();
        let other = |name: &str, order: &str, class: &str| {
            json!({"metadata": {"namespace": "shop", "name": name,
                   "annotations": {ALB_CANARY: "true", ALB_ORDER: order}}, "spec": {"ingressClassName": class}})
        };
        let clash =
            |others: &[&Value]| alb_order_clash_with_read("aliyun-alb", "gets", &planned, others.iter().copied());
        let script_fix = "give the class a script that takes each canary's order from an annotation of its stable Ingress (docs/script-authors-guide.md §10 has one), under the key lua.traffic.routing.ingress.aliyun-alb of the ConfigMap kruise-rollout-configuration";
        assert_eq!(
            clash(&[&other("cart-canary", "1", "nginx")]).unwrap(),
            format!(
                "the canary Ingress gets alb.ingress.kubernetes.io/order: \"1\", which canary Ingress shop/cart-canary of the same class has too; ALB needs each forwarding rule's order to be unique among the Ingresses of its class (openkruise/rollouts#128): one script writes the order of every canary Ingress of the class, so another constant clashes again at the next release: {script_fix}"
            )
        );
        assert_eq!(clash(&[&other("cart-canary", "2", "nginx")]), None);
        assert_eq!(clash(&[&other("cart-canary", "1", "alb")]), None, "another ALB");
        assert_eq!(clash(&[&planned]), None, "itself");
        let mut elsewhere = other("cart-canary", "1", "nginx");
        elsewhere["metadata"]["namespace"] = json!("cart");
        assert_eq!(clash(&[&elsewhere]), None, "another namespace");
        // Every forwarding rule of the class counts, an ordinary Ingress's too: the stable
        // Ingress's own (the canary's rules are meant to come first), another one's.
        let mut not_canary = other("legacy", "1", "nginx");
        not_canary["metadata"]["annotations"].as_object_mut().unwrap().remove(ALB_CANARY);
        assert_eq!(
            clash(&[&not_canary]).unwrap(),
            format!(
                "the canary Ingress gets alb.ingress.kubernetes.io/order: \"1\", which Ingress shop/legacy of the same class has too; ALB needs each forwarding rule's order to be unique among the Ingresses of its class (openkruise/rollouts#128): give Ingress shop/legacy another order, or {script_fix}"
            )
        );
        let mut ordered = stable();
        ordered["metadata"]["annotations"][ALB_ORDER] = json!("1");
        assert!(clash(&[&ordered]).unwrap().contains("which Ingress shop/web of the same class has too"));
        // Another class's Ingress that got the annotation copied from its stable Ingress (a
        // helper's review: higress was told of ALB's rule).
        assert_eq!(alb_order_clash_with_read("higress", "gets", &planned, [&not_canary]), None);
        let mut unordered = not_canary.clone();
        unordered["metadata"]["annotations"].as_object_mut().unwrap().remove(ALB_ORDER);
        assert_eq!(clash(&[&unordered]), None, "ALB's default order is not compared");
        // A script that takes the order from the stable Ingress makes the warning go away.
        let custom = Script::new(
            "order.lua",
            "local a = obj.annotations or {} a['alb.ingress.kubernetes.io/canary'] = 'true' a['alb.ingress.kubernetes.io/order'] = a['example.com/canary-order'] or '1' return a",
        );
        let route = IngressRoute { script: &custom, builtin: false, ..route };
        let mut stable_7 = stable();
        stable_7["metadata"]["annotations"]["example.com/canary-order"] = json!("7");
        let planned = plan_stage(&route, Some(&stable_7), None, &stage(Some("10%"), None)).unwrap().canary.unwrap();
        assert_eq!(planned["metadata"]["annotations"][ALB_ORDER], "7");
        let others = [other("cart-canary", "1", "nginx")];
        assert_eq!(alb_order_clash_with_read("aliyun-alb", "gets", &planned, &others), None);
    }

    /// What the planner hands the provider: a Rollout `demo` routing through Ingress `web`.
    fn planning(action: &RoutingAction, objects: &ObjectIndex, current: Option<&Arc<Value>>) -> ObjectPlan {
        planning_class("aliyun-alb", action, objects, current).unwrap()
    }

    /// `planning` with another class, its script resolved as the built-in catalog does.
    fn planning_class(
        class_type: &str,
        action: &RoutingAction,
        objects: &ObjectIndex,
        current: Option<&Arc<Value>>,
    ) -> Result<ObjectPlan, Error> {
        planning_routing(&routing(owner(), "web-canary", class_type), action, objects, current, None)
    }

    /// `owner`'s routing through Ingress `web` of `class_type`, to canary Service `canary_service`.
    fn routing(owner: Owner, canary_service: &str, class_type: &str) -> Routing {
        Routing {
            owner,
            stable_service: "web".into(),
            canary_service: canary_service.into(),
            providers: vec![crate::model::Provider::Ingress { name: "web".into(), class_type: class_type.into() }],
            releasing: false,
        }
    }

    /// The planner's hook for `routing`'s Ingress, at a stage that starts from `current`: as read,
    /// or as the stage `after` left it.
    fn planning_routing(
        routing: &Routing,
        action: &RoutingAction,
        objects: &ObjectIndex,
        current: Option<&Arc<Value>>,
        after: Option<&str>,
    ) -> Result<ObjectPlan, Error> {
        let crate::model::Provider::Ingress { class_type, .. } = &routing.providers[0] else { unreachable!() };
        let context = Context {
            routing,
            action,
            stage: "step 1/2",
            limits: &Limits::default(),
            printed: &Printed::default(),
            keep_obj: true,
            first: true,
        };
        let resolve = || crate::scripts::ScriptCatalog::default().resolve_ingress(class_type);
        plan_object(&context, objects, "web", class_type, current, after.map(str::to_string), resolve)
    }

    #[test]
    fn a_canary_ingress_on_the_stable_service_is_said_to_reach_every_pod() {
        let none = Annotations::new();
        let nginx = canary_on_stable_service("nginx", true, &none, "web", OwnerKind::TrafficRouting).unwrap();
        assert_eq!(
            nginx,
            "the canary Ingress routes to Service web itself (canary = stable: a TrafficRouting routes to the stable Service itself): the nginx gateway balances the requests it sends there (those the step matches or weighs) over every pod of web, stable and canary alike, so the canary pods get no more of them than their number gives them; only a gateway that tells pods apart by tag sends them to the canary pods (mse, whose script points the canary Ingress at the pod subset gray when the stable Ingress has the annotation mse.ingress.kubernetes.io/service-subset), and a Rollout's own trafficRoutings route to the Service web-canary, which selects the canary pods alone"
        );
        let rollout = canary_on_stable_service("higress", true, &none, "web", OwnerKind::Rollout).unwrap();
        assert!(rollout.starts_with("the canary Ingress routes to Service web itself (canary = stable: disableGenerateCanaryService): the higress gateway balances"), "{rollout}");
        assert!(rollout.ends_with("and trafficRoutings without disableGenerateCanaryService route to the Service web-canary, which selects the canary pods alone"), "{rollout}");
        // mse is the gateway this is made for, with a pod subset.
        let subset = map(&[(MSE_SERVICE_SUBSET, "gray")]);
        assert_eq!(canary_on_stable_service("mse", true, &subset, "web", OwnerKind::TrafficRouting), None);
        assert_eq!(canary_on_stable_service("mse", false, &subset, "web", OwnerKind::TrafficRouting), None);
        // Without one the mse gateway balances too.
        let unset = canary_on_stable_service("mse", true, &none, "web", OwnerKind::Rollout).unwrap();
        assert!(unset.starts_with("the canary Ingress routes to Service web itself (canary = stable: disableGenerateCanaryService): without mse.ingress.kubernetes.io/service-subset on it (the mse script sets it to gray only when the stable Ingress has it), the mse gateway balances the requests it sends there (those the step matches or weighs) over every pod of web"), "{unset}");
        // What the step line says of the weights follows the same reading.
        assert_eq!(balances_over_every_pod("nginx", true, &none), Some(true));
        assert_eq!(balances_over_every_pod("mse", true, &subset), Some(false));
        assert_eq!(balances_over_every_pod("mse", false, &subset), Some(false));
        assert_eq!(balances_over_every_pod("mse", true, &none), Some(true));
        assert_eq!(balances_over_every_pod("mse", false, &none), None);
        assert_eq!(balances_over_every_pod("nginx", false, &none), None);
        assert_eq!(balances_over_every_pod("traefik", true, &none), None);
        // With a script of one's own, what the gateway does is not known.
        for (class_type, builtin) in [("traefik", false), ("nginx", false), ("mse", false)] {
            let own = canary_on_stable_service(class_type, builtin, &none, "web", OwnerKind::TrafficRouting).unwrap();
            assert!(
                own.contains(&format!("): with a script of its own for class {class_type}, whether that gateway sends the requests the step matches or weighs to the canary pods alone cannot be told here: one that picks pods by Service alone balances them over every pod of web")),
                "{own}"
            );
        }
    }

    #[test]
    fn the_planners_hook_says_once_that_the_canary_ingress_routes_to_the_stable_service() {
        let mut objects = ObjectIndex::default();
        objects.insert("shop", stable());
        let traffic_routing = Owner { kind: OwnerKind::TrafficRouting, ..owner() };
        let said = |plan: &ObjectPlan| {
            plan.warnings.iter().filter(|w| w.starts_with("the canary Ingress routes to Service web itself")).count()
        };
        let matched = stage(None, Some(json!([header("x-canary", "true", "Exact")])));
        for class_type in ["nginx", "aliyun-alb", "higress", "mse"] {
            let routing = routing(traffic_routing.clone(), "web", class_type);
            let plan = |current, after| planning_routing(&routing, &matched, &objects, current, after).unwrap();
            // Where the plan starts from the canary Ingress as read, or makes it.
            let made = plan(None, None);
            assert_eq!(said(&made), 1, "{class_type}: {:?}", made.warnings);
            assert_eq!(said(&plan(Some(&made.planned), None)), 1, "{class_type}");
            assert_eq!(said(&plan(None, Some("step 1/3"))), 1, "{class_type}: made again");
            // Not at the stages after, which carry it on.
            assert_eq!(said(&plan(Some(&made.planned), Some("step 1/3"))), 0, "{class_type}");
            // Nor where no canary Ingress is left.
            let deleted = planning_routing(&routing, &RoutingAction::Restore, &objects, Some(&made.planned), None);
            assert_eq!(said(&deleted.unwrap()), 0, "{class_type}");
        }
        // A canary Service of its own: nothing to say.
        let own = planning_routing(&routing(owner(), "web-canary", "nginx"), &matched, &objects, None, None).unwrap();
        assert_eq!(said(&own), 0, "{:?}", own.warnings);
        // Nor with mse when the stable Ingress has a pod subset, which the canary copies.
        let mut subset = stable();
        subset["metadata"]["annotations"][MSE_SERVICE_SUBSET] = json!("");
        objects.insert("shop", subset);
        let mse = planning_routing(&routing(traffic_routing, "web", "mse"), &matched, &objects, None, None).unwrap();
        assert_eq!(said(&mse), 0, "{:?}", mse.warnings);
    }

    #[test]
    fn the_planners_hook_marks_someone_elses_canary_and_notes_a_changed_spec() {
        let mut objects = ObjectIndex::default();
        objects.insert("shop", stable());
        let routed = stage(Some("10%"), None);
        let made = planning(&routed, &objects, None).planned;
        let read = planning(&routed, &objects, Some(&made));
        assert_eq!((read.foreign_canary, read.notes), (None, Vec::new()));
        let mut edited = Value::clone(&made);
        edited["spec"]["tls"] = json!([]);
        let edited = Arc::new(edited);
        let noted = planning(&routed, &objects, Some(&edited));
        assert!(noted.notes[0].starts_with("the spec of Ingress shop/web-canary differs"), "{:?}", noted.notes);
        assert!(noted.warnings.contains(&noted.notes[0]));
        let mut bobs = Value::clone(&edited);
        bobs["metadata"].as_object_mut().unwrap().remove("ownerReferences");
        let bobs = planning(&routed, &objects, Some(&Arc::new(bobs)));
        let why = bobs.foreign_canary.clone().unwrap();
        assert!(why.starts_with("Ingress shop/web-canary is not Rollout shop/demo's canary Ingress"), "{why}");
        assert!(bobs.notes.is_empty(), "someone else's Ingress is not made from the stable one");
        assert_eq!(
            bobs.warnings[0],
            format!(
                "{why}: the controller patches its annotations as if it were, and deletes it when the release ends"
            )
        );
    }

    #[test]
    fn a_missing_stable_ingress_is_named_by_its_ref() {
        let error = planning_class("nginx", &stage(Some("10%"), None), &ObjectIndex::default(), None).unwrap_err();
        assert_eq!(
            error.to_string(),
            "Rollout shop/demo, step 1/2: Ingress shop/web not found: the canary Ingress is built from it"
        );
        let Error::Missing { owner, field, .. } = error else { panic!("{error:?}") };
        assert_eq!((owner, field.to_string()), (OwnerKind::Rollout, "ingress.name".into()));
    }

    #[test]
    fn a_class_without_a_script_names_the_owner_and_the_ingress() {
        let err = planning_class("traefik", &stage(Some("10%"), None), &ObjectIndex::default(), None).unwrap_err();
        let err = err.to_string();
        assert!(
            err.starts_with(
                "Rollout shop/demo routes through Ingress web: no Lua script for Ingress class \"traefik\""
            ),
            "{err}"
        );
        // A stage the controller leaves alone builds no provider, so reads no script.
        let left = planning_class("traefik", &RoutingAction::Leave, &ObjectIndex::default(), None).unwrap();
        assert!(matches!(left.action, Action::Keep("the controller writes nothing here: left alone")));
        assert!(!left.changed() && left.warnings.is_empty());
    }

    #[test]
    fn the_planners_hook_says_what_is_done_and_warns_from_what_was_read() {
        let mut objects = ObjectIndex::default();
        objects.insert("shop", stable());
        let routed = stage(Some("10%"), None);
        let made = planning(&routed, &objects, None);
        assert_eq!(made.key, key());
        assert!(made.untouched && made.current.is_null() && made.after.is_none());
        assert!(matches!(&made.action, Action::Lua(s) if s.source.to_string().ends_with("aliyun-alb.lua")));
        assert_eq!(made.action_name(), "create");
        assert!(made.warnings.is_empty(), "nothing known to be missing: {:?}", made.warnings);
        // A cluster read found no canary Service, and another canary Ingress has order 1.
        objects.insert_absent(ObjectKey::new("", "Service", "shop", "web-canary"));
        objects.insert(
            "shop",
            json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
                   "metadata": {"name": "cart-canary", "namespace": "shop", "annotations": {ALB_CANARY: "true", ALB_ORDER: "1"}},
                   "spec": {"ingressClassName": "nginx"}}),
        );
        let warned = planning(&routed, &objects, None);
        assert!(warned.warnings[0].starts_with("Service web-canary does not exist"), "{:?}", warned.warnings);
        // At weight 0 no canary Ingress is made, and nothing routes to the Service.
        let none = planning(&stage(Some("0%"), None), &objects, None);
        assert!(none.planned.is_null() && none.warnings.is_empty(), "{:?}", none.warnings);
        assert!(
            warned.warnings[1].contains("canary Ingress shop/cart-canary of the same class"),
            "{:?}",
            warned.warnings
        );
        // The canary as read is noted for `status`; the plan warns of the planned one.
        assert!(warned.notes.is_empty(), "{:?}", warned.notes);
        let read = planning(&routed, &objects, Some(&made.planned));
        assert_eq!(read.notes.len(), 1, "{:?}", read.notes);
        assert!(
            read.notes[0].starts_with(
                "the canary Ingress has alb.ingress.kubernetes.io/order: \"1\", which canary Ingress shop/cart-canary of the same class has too;"
            ),
            "{:?}",
            read.notes
        );
        assert!(read.warnings.iter().any(|w| w.starts_with("the canary Ingress gets alb.ingress.kubernetes.io/order")));
        // Deleted at a finalise; nothing to delete, or left alone, is said why.
        let deleted = planning(&RoutingAction::Restore, &objects, Some(&made.planned));
        assert!(matches!(deleted.action, Action::Delete) && deleted.planned.is_null() && !deleted.untouched);
        assert!(deleted.warnings.is_empty(), "no canary Service warning when nothing routes");
        let absent = planning(&RoutingAction::Restore, &objects, None);
        assert!(matches!(absent.action, Action::Keep("no canary Ingress, nothing to delete")), "{:?}", absent.action);
        let zero = planning(&stage(Some("0%"), None), &objects, None);
        assert!(matches!(zero.action, Action::Keep(why) if why.starts_with("weight 0 and no canary Ingress")));
        assert!(!zero.changed());
        assert!(!zero.warnings.iter().any(|w| w.contains("matches")), "{:?}", zero.warnings);
        // Matches beside that weight 0 are lost with it.
        let header = json!([{"headers": [{"name": "x", "value": "1"}]}]);
        let matched = planning(&stage(Some("0%"), Some(header)), &objects, None);
        assert!(matches!(matched.action, Action::Keep(why) if why.starts_with("weight 0 and no canary Ingress")));
        assert!(
            matched
                .warnings
                .iter()
                .any(|w| w.starts_with("the step's matches are not applied: at weight 0 (traffic 0%)")),
            "{:?}",
            matched.warnings
        );
        let left = planning(&RoutingAction::Leave, &objects, Some(&made.planned));
        assert!(matches!(left.action, Action::Keep("the controller writes nothing here: left alone")));
    }
}
