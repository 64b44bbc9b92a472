//! Planning: walks an owner's stages and its routing's providers (`providers/`), in the
//! controller's order, and collects for each gateway object the object the controller would
//! write at a stage, the changes that get it there, and warnings.

use crate::change::Change;
use crate::data;
use crate::error::Error;
use crate::lua::Limits;
use crate::model::{
    self, ObjectIndex, ObjectKey, ObjectRef, Provider, Rollout, Routing, RoutingAction, Stage, TrafficRoutingCr,
};
use crate::providers::{custom, gateway};
use crate::scripts::{self, ResolvedScript, ScriptCatalog, ScriptKey};
use serde_json::Value;
use std::cell::RefCell;
use std::collections::BTreeMap;

/// The pod label the built-in DestinationRule script's `canary` subset selects.
const CANARY_SUBSET_LABEL: (&str, &str) = ("istio.service.tag", "gray");

/// What the controller does to an object at a stage.
#[derive(Clone, Debug)]
pub enum Action {
    /// Runs the script and writes its result.
    Lua(ResolvedScript),
    /// No traffic and no matches: restores the stored original (the annotation goes away).
    Restore,
    /// Gateway API: the controller rewrites the HTTPRoute's rules in Go (said how: weight mode,
    /// match mode or its restore).
    Rules(String),
    /// The controller writes nothing to the object: left alone, for this reason.
    Keep(&'static str),
}

#[derive(Clone, Debug)]
pub struct ObjectPlan {
    pub reference: ObjectRef,
    pub key: ObjectKey,
    pub namespace: String,
    pub current: Value,
    pub planned: Value,
    pub action: Action,
    /// The script's input (`obj`), when a script runs.
    pub obj: Option<Value>,
    pub warnings: Vec<String>,
    /// Why this tool must not write `planned` although the controller would (it works from a
    /// stored original that does not decode, and the result loses the original).
    pub unwritable: Option<String>,
    /// The stored original, when it decodes but holds nothing (no spec, or an empty one):
    /// writing from it wipes the object, so `approve` and `restore` refuse it without `--force`.
    pub degenerate_original: Option<String>,
    /// The writes from `current` to `planned`, in order (one `Keep` when there are none).
    pub changes: Vec<Change>,
    /// Whether `current` shows no sign of a release: a custom ref without a stored original, an
    /// HTTPRoute without a backendRef to the canary Service (what `status` calls `original`).
    pub untouched: bool,
    /// The stage whose result `current` is, when the plan starts from where an earlier stage
    /// left the object (an HTTPRoute's rules carry over); None: the object as read.
    pub after: Option<String>,
    /// Whether `planned` routes differently from `current`: asked for by every rendering and
    /// count, and comparing encodes both specs, so it is worked out once, where the plan is made
    /// (nothing changes `current` or `planned` afterwards).
    changed: bool,
}

/// What an `ObjectPlan` is made of, as a provider works it out.
pub struct Planned {
    pub reference: ObjectRef,
    pub key: ObjectKey,
    pub current: Value,
    pub planned: Value,
    pub action: Action,
    pub obj: Option<Value>,
    pub warnings: Vec<String>,
    pub unwritable: Option<String>,
    pub degenerate_original: Option<String>,
    pub changes: Vec<Change>,
    pub untouched: bool,
    pub after: Option<String>,
}

impl ObjectPlan {
    pub fn new(planned: Planned) -> ObjectPlan {
        ObjectPlan {
            namespace: planned.key.namespace.clone(),
            changed: !data::same_routing(&planned.current, &planned.planned),
            reference: planned.reference,
            key: planned.key,
            current: planned.current,
            planned: planned.planned,
            action: planned.action,
            obj: planned.obj,
            warnings: planned.warnings,
            unwritable: planned.unwritable,
            degenerate_original: planned.degenerate_original,
            changes: planned.changes,
            untouched: planned.untouched,
            after: planned.after,
        }
    }

    /// `VirtualService shop/demo`.
    pub fn describe(&self) -> String {
        self.key.to_string()
    }

    pub fn changed(&self) -> bool {
        self.changed
    }

    /// The `action` of `plan -o json`: the last change's (`create`, `replace`, `patch`,
    /// `delete`, `keep`).
    pub fn action_name(&self) -> &'static str {
        self.changes.last().map_or("keep", Change::action)
    }

    /// The changes that write something.
    pub fn writes(&self) -> impl Iterator<Item = &Change> {
        self.changes.iter().filter(|c| c.writes())
    }
}

#[derive(Clone, Debug)]
pub struct StagePlan {
    pub stage: Option<Stage>,
    /// `step 2/4`, `final (…)`, or `TrafficRouting strategy`.
    pub label: String,
    /// What the stage asks of the gateway.
    pub description: String,
    /// What the controller routes at the stage (the traffic split or the matches, or why not).
    pub routing: String,
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

/// The objects earlier stages left, by key, with the label of the stage that left each.
type Carried = BTreeMap<ObjectKey, (Value, String)>;

pub struct Planner<'a> {
    objects: &'a ObjectIndex,
    /// Whether a stage starts from where the stage before left an HTTPRoute (as a release goes
    /// through them) or from the route as read (to tell which stage it is at).
    carry: bool,
    scripts: &'a ScriptCatalog,
    limits: Limits,
    /// Scripts resolved so far: each is compiled and hashed once per plan.
    resolved: RefCell<BTreeMap<ScriptKey, ResolvedScript>>,
}

impl<'a> Planner<'a> {
    pub fn new(objects: &'a ObjectIndex, scripts: &'a ScriptCatalog, limits: Limits) -> Planner<'a> {
        Planner { objects, carry: true, scripts, limits, resolved: RefCell::default() }
    }

    /// Plans every stage from the objects as read, as the controller would from them now: to
    /// place an object (`status`, `restore`'s check for edits), not to follow a release.
    pub fn each_stage_from_the_objects_read(self) -> Planner<'a> {
        Planner { carry: false, ..self }
    }

    pub fn resolve(&self, reference: &ObjectRef) -> Result<ResolvedScript, String> {
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
        let routing = Routing::of_rollout(rollout, namespace);
        // The providers not planned yet (the controller routes them in Go).
        let others: Vec<&str> =
            routing.iter().flat_map(|r| &r.providers).filter(|p| !planned(p)).map(Provider::name).collect();
        let own = routing.filter(|r| r.providers.iter().any(planned));
        if own.is_none() && cr.is_none() {
            let why = match &rollout.traffic_routing {
                None => format!("it has no trafficRoutings and no {} annotation", model::TRAFFIC_ROUTING_ANNOTATION),
                Some(_) => {
                    format!("its trafficRoutings use only {}, which this tool does not plan yet", others.join(" and "))
                }
            };
            let notes: String = warnings.iter().map(|w| format!("; {w}")).collect();
            return Err(Error::Input(format!("{owner} has no traffic routing to plan: {why}{notes}")));
        }
        if own.is_some() && !others.is_empty() {
            warnings.push(format!("its {} routing is not shown: this tool does not plan it yet", others.join(" and ")));
        }
        let (label, value) = CANARY_SUBSET_LABEL;
        let pods_labelled = rollout.enable_extra_workload_for_canary
            && rollout.canary_pod_labels.get(label).is_some_and(|v| v == value);
        if let Some(r) = own.as_ref().filter(|_| rollout.disable_generate_canary_service && !pods_labelled)
            && r.custom_refs().iter().any(|r| r.kind == "DestinationRule")
        {
            warnings.push(format!(
                "traffic goes to the DestinationRule subset canary, which selects pods labelled {label}={value}; canary pods get that label only from patchPodTemplateMetadata.labels with enableExtraWorkloadForCanary"
            ));
        }
        if let Some(why) = rollout.not_run() {
            return Ok(RoutingPlan { owner, notes: vec![why], stages: Vec::new(), warnings });
        }
        let workload = rollout.workload.as_ref();
        let workload_replicas = workload
            .and_then(|w| self.objects.get(&ObjectKey::of_ref(w, namespace)))
            .and_then(model::workload_replicas);
        if let Some(w) = workload.filter(|_| workload_replicas.is_none() && rollout.is_real_partition())
            && own.is_some()
            && rollout.steps.iter().any(|s| s.strategy.routes_traffic())
        {
            warnings.push(format!(
                "its workload {} {} is not known (not among the files, or not readable), so the plan assumes its replicas are above every step's; the controller does not route a partition step whose replicas reach the workload's",
                w.kind, w.name
            ));
        }
        let routing = own;
        let cr_done = cr.map(|cr| (cr, Routing::of_traffic_routing(cr, namespace), cr.routing()));
        let mut plans = Vec::with_capacity(stages.len());
        let mut carried = Carried::new();
        for &stage in stages {
            let strategy = rollout.strategy_at(stage);
            let done = rollout.routing_at(stage, workload_replicas);
            let mut objects = Vec::new();
            let label = rollout.stage_label(stage);
            if let Some(routing) = &routing {
                objects.extend(self.plan_objects(routing, &done.action, &label, &mut carried)?);
            }
            if let Some((_, cr_routing, cr_done)) = &cr_done {
                objects.extend(self.plan_objects(cr_routing, &cr_done.action, &label, &mut carried)?);
            }
            // What is routed (the Rollout's own objects, its TrafficRouting's), and around it,
            // for a step, its replicas and pause.
            let own = match stage {
                Stage::Step(_) => routing.as_ref().map(|_| done.describe(&strategy)),
                Stage::BlueGreenFinal => Some(strategy.describe()),
            };
            let by_cr = cr_done
                .as_ref()
                .map(|(cr, _, cr_done)| format!("TrafficRouting {}: {}", cr.name, cr_done.describe(&cr.strategy)));
            let (replicas, pause) = match stage {
                Stage::Step(i) => {
                    let (replicas, pause) = rollout.describe_step(i);
                    (Some(replicas), Some(pause))
                }
                Stage::BlueGreenFinal => (None, None),
            };
            let joined = |parts: [Option<String>; 4]| parts.into_iter().flatten().collect::<Vec<_>>().join(", ");
            let description = joined([replicas, own.clone(), pause, by_cr.clone()]);
            let routed = joined([own, by_cr, None, None]);
            plans.push(StagePlan { stage: Some(stage), label, description, routing: routed, objects });
        }
        if let Some(cr) = cr {
            warnings.extend(cr.warnings.iter().map(|w| format!("TrafficRouting {}: {w}", cr.name)));
        }
        Ok(RoutingPlan { owner, notes: Vec::new(), stages: plans, warnings })
    }

    /// Plans a TrafficRouting on its own: its strategy through its refs.
    pub fn plan_traffic_routing(&self, cr: &TrafficRoutingCr, namespace: &str) -> Result<RoutingPlan, Error> {
        let routing = Routing::of_traffic_routing(cr, namespace);
        let label = "TrafficRouting strategy".to_string();
        let done = cr.routing();
        let objects = self.plan_objects(&routing, &done.action, &label, &mut Carried::new())?;
        let description = done.describe(&cr.strategy);
        let stage = StagePlan { stage: None, label, routing: description.clone(), description, objects };
        let warnings = cr.warnings.clone();
        Ok(RoutingPlan { owner: routing.owner.to_string(), notes: Vec::new(), stages: vec![stage], warnings })
    }

    /// The objects of every provider of `routing` at one stage, in the controller's order;
    /// the first error stops the plan. An HTTPRoute is planned from where the stage before
    /// left it (`carried`) unless the planner plans each stage from the objects as read.
    fn plan_objects(
        &self,
        routing: &Routing,
        action: &RoutingAction,
        stage: &str,
        carried: &mut Carried,
    ) -> Result<Vec<ObjectPlan>, Error> {
        let context = custom::Context { routing, action, stage, limits: &self.limits };
        let mut objects = Vec::new();
        for provider in &routing.providers {
            match provider {
                Provider::Custom(refs) => {
                    for reference in refs {
                        objects
                            .push(custom::plan_object(&context, self.objects, reference, || self.resolve(reference))?);
                    }
                }
                Provider::Gateway { http_route } => {
                    let key = gateway::GatewayRoute::of(routing, http_route).key();
                    let (current, after) = match carried.get(&key) {
                        Some((route, label)) => (Some(route), Some(label.clone())),
                        None => (self.objects.get(&key), None),
                    };
                    let plan = gateway::plan_object(routing, http_route, action, current, after)?;
                    if self.carry {
                        carried.insert(key, (plan.planned.clone(), stage.to_string()));
                    }
                    objects.push(plan);
                }
                Provider::Ingress { .. } => {}
            }
        }
        Ok(objects)
    }
}

/// Whether this tool plans a provider yet (Ingress routing is being wired in).
fn planned(provider: &Provider) -> bool {
    matches!(provider, Provider::Custom(_) | Provider::Gateway { .. })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::{self, Position};
    use serde_json::json;

    fn rollout() -> Rollout {
        Rollout::from_object(&json!({
            "apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout",
            "metadata": {"name": "store", "namespace": "shop"},
            "spec": {"strategy": {"canary": {
                "steps": [{"replicas": 1, "matches": [{"headers": [{"type": "Exact", "name": "x", "value": "1"}]}]},
                          {"replicas": 2, "traffic": "20%"}],
                "trafficRoutings": [{"service": "store", "gateway": {"httpRouteName": "store"}}]
            }}}
        }))
        .unwrap()
    }

    fn route() -> Value {
        json!({
            "apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
            "metadata": {"name": "store", "namespace": "shop", "resourceVersion": "5"},
            "spec": {"rules": [{"backendRefs": [{"kind": "Service", "name": "store", "port": 80, "weight": 1}]}]}
        })
    }

    fn plan(objects: &ObjectIndex, from_read: bool) -> RoutingPlan {
        let catalog = ScriptCatalog::default();
        let planner = Planner::new(objects, &catalog, Limits::default());
        let planner = if from_read { planner.each_stage_from_the_objects_read() } else { planner };
        let rollout = rollout();
        planner.plan_rollout(&rollout, "shop", None, &rollout.stages()).unwrap()
    }

    #[test]
    fn an_httproute_carries_from_stage_to_stage_unless_each_is_planned_from_the_route_read() {
        let mut objects = ObjectIndex::default();
        objects.insert("shop", route());
        let carried = plan(&objects, false);
        let [step1, step2, ..] = carried.stages.as_slice() else { panic!("{carried:?}") };
        let (first, second) = (&step1.objects[0], &step2.objects[0]);
        assert_eq!((first.current.clone(), first.after.clone()), (route(), None));
        assert_eq!(second.current, first.planned, "step 2 starts where step 1 left the route");
        assert_eq!(second.after.as_deref(), Some(step1.label.as_str()));
        // Step 2 keeps step 1's header rule and weights the stable rule.
        assert_eq!(second.planned["spec"]["rules"].as_array().unwrap().len(), 2);
        let [Change::Replace { before, after, .. }] = second.changes.as_slice() else { panic!("{:?}", second.changes) };
        assert_eq!((before, after), (&first.planned, &second.planned));
        assert!(first.untouched && !second.untouched);
        assert!(matches!(&first.action, Action::Rules(how) if how.contains("match mode")), "{:?}", first.action);

        let from_read = plan(&objects, true);
        assert!(from_read.stages.iter().all(|s| s.objects[0].current == route() && s.objects[0].after.is_none()));
        assert_eq!(status::positions(&from_read)[0].position, Position::Original);
        // A route at step 1: step 1's plan writes nothing to it, step 2's does.
        let mut at_step_1 = ObjectIndex::default();
        at_step_1.insert("shop", first.planned.clone());
        let placed = plan(&at_step_1, true);
        assert_eq!(status::positions(&placed)[0].position, Position::AtStep { steps: vec![Stage::Step(1)] });
        // Edited: at no step, and not untouched.
        let mut edited = first.planned.clone();
        edited["spec"]["rules"][1]["backendRefs"][0]["port"] = json!(8080);
        let mut drifted = ObjectIndex::default();
        drifted.insert("shop", edited);
        assert_eq!(status::positions(&plan(&drifted, true))[0].position, Position::Drifted);
    }

    #[test]
    fn a_rollout_with_only_ingress_routing_has_nothing_to_plan_yet() {
        let mut object = json!({
            "apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout", "metadata": {"name": "web"},
            "spec": {"strategy": {"canary": {"steps": [{"replicas": 1, "traffic": "20%"}],
                "trafficRoutings": [{"service": "web", "ingress": {"name": "web"}}]}}}
        });
        let catalog = ScriptCatalog::default();
        let objects = ObjectIndex::default();
        let planner = Planner::new(&objects, &catalog, Limits::default());
        let rollout = Rollout::from_object(&object).unwrap();
        let error = planner.plan_rollout(&rollout, "shop", None, &rollout.stages()).unwrap_err();
        assert!(error.to_string().contains("its trafficRoutings use only ingress, which this tool does not plan yet"));
        // With a gateway too, the ingress is named in a warning and the route is planned.
        object["spec"]["strategy"]["canary"]["trafficRoutings"][0]["gateway"] = json!({"httpRouteName": "store"});
        let rollout = Rollout::from_object(&object).unwrap();
        let mut objects = ObjectIndex::default();
        objects.insert("shop", route());
        let planner = Planner::new(&objects, &catalog, Limits::default());
        let plan = planner.plan_rollout(&rollout, "shop", None, &rollout.stages()).unwrap();
        assert_eq!(plan.warnings, ["its ingress routing is not shown: this tool does not plan it yet"]);
        assert_eq!(plan.stages[0].objects[0].describe(), "HTTPRoute shop/store");
    }
}
