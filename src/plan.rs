//! Planning: for each gateway object a Rollout (or TrafficRouting) routes through, the object
//! the controller would write at a stage, computed from the stored original as the controller
//! does, and whether it differs from the object as it is now.

use crate::data::{self, Data};
use crate::error::Error;
use crate::lua::{self, EvalOptions, Limits, OrderDependence};
use crate::model::{self, ObjectRef, Rollout, RouteStrategy, RoutingAction, Stage, TrafficRoutingCr};
use crate::scripts::{self, ResolvedScript, ScriptCatalog, ScriptKey, ScriptSource};
use serde_json::Value;
use std::cell::RefCell;
use std::collections::BTreeMap;

/// The pod label the built-in DestinationRule script's `canary` subset selects.
const CANARY_SUBSET_LABEL: (&str, &str) = ("istio.service.tag", "gray");

/// Gateway objects by (group, kind, namespace, name); the version is ignored, as the API server
/// serves an object at every version of its kind.
#[derive(Clone, Debug, Default)]
pub struct ObjectIndex {
    objects: BTreeMap<(String, String, String, String), Value>,
}

impl ObjectIndex {
    pub fn insert(&mut self, namespace: &str, object: Value) {
        let api_version = object["apiVersion"].as_str().unwrap_or_default();
        let group = model::api_group(api_version).to_string();
        let kind = object["kind"].as_str().unwrap_or_default().to_string();
        let name = object["metadata"]["name"].as_str().unwrap_or_default().to_string();
        self.objects.insert((group, kind, namespace.to_string(), name), object);
    }

    pub fn get(&self, reference: &ObjectRef, namespace: &str) -> Option<&Value> {
        self.objects.get(&(reference.group().into(), reference.kind.clone(), namespace.into(), reference.name.clone()))
    }
}

/// What the controller does to an object at a stage.
#[derive(Clone, Debug)]
pub enum Action {
    /// Runs the script and writes its result.
    Lua(ResolvedScript),
    /// No traffic and no matches: restores the stored original (the annotation goes away).
    Restore,
    /// The controller writes nothing to the object: left alone, for this reason.
    Keep(&'static str),
}

#[derive(Clone, Debug)]
pub struct ObjectPlan {
    pub reference: ObjectRef,
    pub namespace: String,
    pub current: Value,
    pub planned: Value,
    pub action: Action,
    pub warnings: Vec<String>,
    /// Why this tool must not write `planned` although the controller would (it works from a
    /// stored original that does not decode, and the result loses the original).
    pub unwritable: Option<String>,
    /// Whether `planned` routes differently from `current`: asked for by every rendering and
    /// count, and comparing encodes both specs, so it is worked out once, where the plan is made
    /// (nothing changes `current` or `planned` afterwards).
    changed: bool,
}

impl ObjectPlan {
    /// `VirtualService shop/demo`.
    pub fn describe(&self) -> String {
        format!("{} {}/{}", self.reference.kind, self.namespace, self.reference.name)
    }

    pub fn changed(&self) -> bool {
        self.changed
    }
}

#[derive(Clone, Debug)]
pub struct StagePlan {
    pub stage: Option<Stage>,
    /// `step 2/4`, `final (…)`, or `TrafficRouting strategy`.
    pub label: String,
    /// What the stage asks of the gateway.
    pub description: String,
    pub objects: Vec<ObjectPlan>,
}

/// The plan of one Rollout (or of a TrafficRouting no Rollout in the input names).
#[derive(Clone, Debug)]
pub struct RoutingPlan {
    /// `Rollout ns/name` or `TrafficRouting ns/name`.
    pub owner: String,
    /// Facts shown under the owner (a Rollout's phase and step in the cluster).
    pub notes: Vec<String>,
    pub stages: Vec<StagePlan>,
    pub warnings: Vec<String>,
}

impl RoutingPlan {
    pub fn changed(&self) -> bool {
        self.stages.iter().flat_map(|s| &s.objects).any(ObjectPlan::changed)
    }

    /// Why a planned object must not be written, if one must not.
    pub fn unwritable(&self) -> Option<&str> {
        self.stages.iter().flat_map(|s| &s.objects).find_map(|o| o.unwritable.as_deref())
    }
}

/// The routing an owner applies: its refs, services, and the strategy per stage.
struct Routing<'a> {
    owner: String,
    namespace: &'a str,
    refs: &'a [ObjectRef],
    stable: &'a str,
    canary: String,
}

pub struct Planner<'a> {
    objects: &'a ObjectIndex,
    scripts: &'a ScriptCatalog,
    limits: Limits,
    /// Scripts resolved so far: each is compiled and hashed once per plan.
    resolved: RefCell<BTreeMap<ScriptKey, ResolvedScript>>,
}

impl<'a> Planner<'a> {
    pub fn new(objects: &'a ObjectIndex, scripts: &'a ScriptCatalog, limits: Limits) -> Planner<'a> {
        Planner { objects, scripts, limits, resolved: RefCell::default() }
    }

    fn resolve(&self, reference: &ObjectRef) -> Result<ResolvedScript, String> {
        let key = scripts::key_of(reference);
        if let Some(known) = self.resolved.borrow().get(&key) {
            return Ok(known.clone());
        }
        let script = self.scripts.resolve(reference)?;
        self.resolved.borrow_mut().insert(key, script.clone());
        Ok(script)
    }

    /// Plans `stages` of a Rollout; `cr` is the TrafficRouting its annotation names, if any.
    pub fn plan_rollout(
        &self,
        rollout: &Rollout,
        namespace: &str,
        cr: Option<&TrafficRoutingCr>,
        stages: &[Stage],
    ) -> Result<RoutingPlan, Error> {
        let owner = format!("Rollout {namespace}/{}", rollout.name);
        let mut warnings = rollout.warnings.clone();
        // `plan -f` refuses these; a Rollout in a cluster was admitted, perhaps by an older webhook.
        warnings.extend(rollout.rejections.iter().map(|r| format!("{r} (the controller's webhook rejects this now)")));
        let own = rollout.traffic_routing.as_ref().filter(|r| !r.custom_network_refs.is_empty());
        if own.is_none() && cr.is_none() {
            let why = match &rollout.traffic_routing {
                None => format!("it has no trafficRoutings and no {} annotation", model::TRAFFIC_ROUTING_ANNOTATION),
                Some(r) => format!(
                    "its trafficRoutings use only {} (routed by the controller in Go, not Lua)",
                    r.other_providers.join(" and ")
                ),
            };
            let notes: String = warnings.iter().map(|w| format!("; {w}")).collect();
            return Err(Error::Input(format!("{owner} has no Lua traffic routing to plan: {why}{notes}")));
        }
        if let Some(r) = own.filter(|r| !r.other_providers.is_empty()) {
            warnings.push(format!(
                "its {} routing is done by the controller in Go and is not shown",
                r.other_providers.join(" and ")
            ));
        }
        let (label, value) = CANARY_SUBSET_LABEL;
        let pods_labelled = rollout.enable_extra_workload_for_canary
            && rollout.canary_pod_labels.get(label).is_some_and(|v| v == value);
        if let Some(r) = own.filter(|_| rollout.disable_generate_canary_service && !pods_labelled)
            && r.custom_network_refs.iter().any(|r| r.kind == "DestinationRule")
        {
            warnings.push(format!(
                "traffic goes to the DestinationRule subset canary, which selects pods labelled {label}={value}; canary pods get that label only from patchPodTemplateMetadata.labels with enableExtraWorkloadForCanary"
            ));
        }
        if let Some(why) = rollout.not_run() {
            return Ok(RoutingPlan { owner, notes: vec![why], stages: Vec::new(), warnings });
        }
        let workload = rollout.workload.as_ref();
        let workload_replicas =
            workload.and_then(|w| self.objects.get(w, namespace)).and_then(model::workload_replicas);
        if let Some(w) = workload.filter(|_| workload_replicas.is_none() && rollout.is_real_partition())
            && own.is_some()
            && rollout.steps.iter().any(|s| s.strategy.routes_traffic())
        {
            warnings.push(format!(
                "its workload {} {} is not known (not among the files, or not readable), so the plan assumes its replicas are above every step's; the controller does not route a partition step whose replicas reach the workload's",
                w.kind, w.name
            ));
        }
        let routing = own.map(|r| Routing {
            owner: owner.clone(),
            namespace,
            refs: &r.custom_network_refs,
            stable: &r.service,
            canary: if rollout.disable_generate_canary_service {
                r.service.clone()
            } else {
                format!("{}-canary", r.service)
            },
        });
        let cr_done = cr.map(|cr| (cr, cr.routing()));
        let mut plans = Vec::with_capacity(stages.len());
        for &stage in stages {
            let strategy = rollout.strategy_at(stage);
            let done = rollout.routing_at(stage, workload_replicas);
            let mut objects = Vec::new();
            let label = rollout.stage_label(stage);
            if let Some(routing) = &routing {
                objects.extend(self.plan_objects(routing, &done.action, &label)?);
            }
            if let Some((cr, cr_done)) = &cr_done {
                objects.extend(self.plan_objects(&cr_routing(cr, namespace), &cr_done.action, &label)?);
            }
            let mut parts = Vec::new();
            if let Stage::Step(i) = stage {
                let (replicas, pause) = rollout.describe_step(i);
                parts.push(replicas);
                if routing.is_some() {
                    parts.push(done.describe(&strategy));
                }
                parts.push(pause);
            } else {
                parts.push(strategy.describe());
            }
            if let Some((cr, cr_done)) = &cr_done {
                parts.push(format!("TrafficRouting {}: {}", cr.name, cr_done.describe(&cr.strategy)));
            }
            let description = parts.join(", ");
            plans.push(StagePlan { stage: Some(stage), label, description, objects });
        }
        if let Some(cr) = cr {
            warnings.extend(cr.warnings.iter().map(|w| format!("TrafficRouting {}: {w}", cr.name)));
        }
        Ok(RoutingPlan { owner, notes: Vec::new(), stages: plans, warnings })
    }

    /// Plans a TrafficRouting on its own: its strategy through its refs.
    pub fn plan_traffic_routing(&self, cr: &TrafficRoutingCr, namespace: &str) -> Result<RoutingPlan, Error> {
        let routing = cr_routing(cr, namespace);
        let label = "TrafficRouting strategy".to_string();
        let done = cr.routing();
        let objects = self.plan_objects(&routing, &done.action, &label)?;
        let stage = StagePlan { stage: None, label, description: done.describe(&cr.strategy), objects };
        let warnings = cr.warnings.clone();
        Ok(RoutingPlan { owner: routing.owner, notes: Vec::new(), stages: vec![stage], warnings })
    }

    fn plan_objects(&self, routing: &Routing, action: &RoutingAction, stage: &str) -> Result<Vec<ObjectPlan>, Error> {
        routing.refs.iter().map(|reference| self.plan_object(routing, reference, action, stage)).collect()
    }

    fn plan_object(
        &self,
        routing: &Routing,
        reference: &ObjectRef,
        action: &RoutingAction,
        stage: &str,
    ) -> Result<ObjectPlan, Error> {
        let context = format!("{} routes through {reference} ({})", routing.owner, reference.api_version);
        let current = self
            .objects
            .get(reference, routing.namespace)
            .ok_or_else(|| {
                Error::Input(format!("{context}, but there is no such object in namespace {}", routing.namespace))
            })?
            .clone();
        let stored = data::stored_original(&current);
        let (original, unreadable) = Data::original_as_the_controller_reads_it(&current);
        let mut warnings = Vec::new();
        let (planned, action) = match action {
            RoutingAction::Leave => (current.clone(), Action::Keep("the controller writes nothing here: left alone")),
            RoutingAction::Restore => match stored {
                Some(_) => (original.apply_to(&current, None), Action::Restore),
                None => (current.clone(), Action::Keep("original routing, nothing stored: left alone")),
            },
            RoutingAction::Route(strategy) => {
                let script = self.resolve(reference).map_err(|e| Error::Input(format!("{context}: {e}")))?;
                let obj = model::lua_data(&original, strategy, routing.stable, &routing.canary);
                let result = lua::evaluate(&script.script, &obj, &self.limits, EvalOptions::CONTROLLER)
                    .map_err(|e| Error::Input(format!("{}, {stage}, {reference}: {e}", routing.owner)))?;
                // The built-in scripts' independence from pairs() order is checked by their test cases
                // (`test` flags any dependence); other scripts are checked on every plan.
                let order = match script.source {
                    ScriptSource::BuiltIn { .. } => None,
                    _ => lua::order_dependence(&script.script, &obj, &self.limits, EvalOptions::CONTROLLER, &result),
                };
                match order {
                    Some(OrderDependence::InputMaps) => warnings.push(format!(
                        "{reference}: the script's output depends on the order pairs() walks the input maps, which is random in the controller: it would rewrite the object on every pass and the step would never finish"
                    )),
                    Some(OrderDependence::ScriptTables) => warnings.push(format!(
                        "{reference}: the script's output depends on the order pairs() walks tables it builds; gopher-lua walks them in insertion order, this tool in hash order, so the controller may write something else"
                    )),
                    None => {}
                }
                let stored = stored.map_or_else(|| original.to_go_json(), str::to_string);
                let planned = result.apply_to(&current, Some(&stored));
                warnings.extend(routing_warnings(reference, &script, &original, &planned, strategy));
                (planned, Action::Lua(script))
            }
        };
        let unwritable = unreadable.filter(|_| !matches!(action, Action::Keep(_))).map(|error| {
            let works_from = if original == Data::default() {
                "nothing (no spec, labels or annotations)"
            } else {
                "the part that decodes"
            };
            let does = match (&action, original == Data::default()) {
                (Action::Restore, true) => "restores that: it wipes the object's spec, labels and annotations",
                (Action::Restore, _) => "restores that, as shown",
                _ => "runs the script on that, as shown",
            };
            format!(
                "{reference}: its annotation {} does not parse ({error}); the controller ignores that, works from {works_from} and {does}; approve and restore write nothing until the annotation is fixed",
                data::ORIGINAL_SPEC_ANNOTATION
            )
        });
        warnings.extend(unwritable.clone());
        Ok(ObjectPlan {
            reference: reference.clone(),
            namespace: routing.namespace.to_string(),
            changed: !data::same_routing(&current, &planned),
            current,
            planned,
            action,
            warnings,
            unwritable,
        })
    }
}

fn cr_routing<'a>(cr: &'a TrafficRoutingCr, namespace: &'a str) -> Routing<'a> {
    // A TrafficRouting never generates a canary Service: canary and stable are the same name.
    Routing {
        owner: format!("TrafficRouting {namespace}/{}", cr.name),
        namespace,
        refs: &cr.traffic_routing.custom_network_refs,
        stable: &cr.traffic_routing.service,
        canary: cr.traffic_routing.service.clone(),
    }
}

/// The path of the first null inside a value.
fn first_null(value: &Value, path: &str) -> Option<String> {
    match value {
        Value::Null => Some(path.to_string()),
        Value::Array(items) => items.iter().enumerate().find_map(|(i, v)| first_null(v, &format!("{path}[{i}]"))),
        Value::Object(map) => map.iter().find_map(|(k, v)| first_null(v, &format!("{path}.{k}"))),
        _ => None,
    }
}

/// The rough edges of weight routing worth a warning (docs/controller-semantics.md §4.6): weights
/// that do not add up to 100 after flooring, and a rule sent to the canary twice.
fn routing_warnings(
    reference: &ObjectRef,
    script: &ResolvedScript,
    original: &Data,
    planned: &Value,
    strategy: &RouteStrategy,
) -> Vec<String> {
    let mut warnings = Vec::new();
    // Returned labels and annotations replace the object's: a script that forgets them wipes them.
    if !original.labels.is_empty() && planned["metadata"].get("labels").is_none() {
        warnings.push(format!(
            "{reference}: the script returns no labels, so the controller removes all the object's labels"
        ));
    }
    let kept_annotations = planned["metadata"]["annotations"]
        .as_object()
        .is_some_and(|a| a.keys().any(|k| k != data::ORIGINAL_SPEC_ANNOTATION));
    if !original.annotations.is_empty() && !kept_annotations {
        warnings.push(format!(
            "{reference}: the script returns no annotations, so the controller removes the object's annotations"
        ));
    }
    if let Some(path) = planned.get("spec").and_then(|spec| first_null(spec, "spec")) {
        warnings.push(format!(
            "{reference}: the result has null at {path} (an empty Lua table encodes as null); if the API server drops it, the controller finds a difference on every pass and the step never finishes"
        ));
    }
    // The built-in scripts ignore weights on the matches path; a custom script may not.
    let builtin = matches!(script.source, ScriptSource::BuiltIn { .. });
    if !builtin && strategy.traffic.is_none() && strategy.matches.as_ref().is_some_and(|m| !m.is_empty()) {
        warnings.push(format!(
            "{reference}: this step has matches and no traffic, so the script gets canaryWeight -1 and stableWeight 101"
        ));
    }
    if builtin
        && reference.kind == "DestinationRule"
        && original.spec.as_ref().is_none_or(|s| s.get("subsets").is_none_or(Value::is_null))
    {
        warnings.push(format!(
            "{reference}: the controller's own DestinationRule script fails on an object without spec.subsets (bad argument #1 to insert); this tool's built-in script creates the list, but a controller would stick at this step: add subsets: [] to the object"
        ));
    }
    if reference.kind != "VirtualService" {
        return warnings;
    }
    for protocol in ["http", "tcp", "tls"] {
        for (i, rule) in planned["spec"][protocol].as_array().into_iter().flatten().enumerate() {
            let routes = rule["route"].as_array().map(Vec::as_slice).unwrap_or_default();
            let weights: Vec<i64> = routes.iter().filter_map(|r| r["weight"].as_i64()).collect();
            if weights.len() == routes.len() && routes.len() > 1 {
                let total: i64 = weights.iter().sum();
                if total != 100 {
                    warnings.push(format!("{reference}: spec.{protocol}[{i}] route weights add up to {total}, not 100 (the script floors each weight)"));
                }
            }
            let canary_routes = routes.iter().filter(|r| r["destination"]["subset"] == "canary").count();
            if canary_routes > 1 {
                warnings.push(format!("{reference}: spec.{protocol}[{i}] routes to the canary {canary_routes} times (a rule with two stable-host routes is processed twice by the script)"));
            }
        }
    }
    warnings
}
