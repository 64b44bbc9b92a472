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
use crate::providers::custom;
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
        // Only custom refs are planned so far; the controller routes the others in Go.
        let others: Vec<&str> = routing
            .iter()
            .flat_map(|r| &r.providers)
            .filter(|p| !matches!(p, Provider::Custom(_)))
            .map(Provider::name)
            .collect();
        let own = routing.filter(|r| !r.custom_refs().is_empty());
        if own.is_none() && cr.is_none() {
            let why = match &rollout.traffic_routing {
                None => format!("it has no trafficRoutings and no {} annotation", model::TRAFFIC_ROUTING_ANNOTATION),
                Some(_) => format!(
                    "its trafficRoutings use only {} (routed by the controller in Go, not Lua)",
                    others.join(" and ")
                ),
            };
            let notes: String = warnings.iter().map(|w| format!("; {w}")).collect();
            return Err(Error::Input(format!("{owner} has no Lua traffic routing to plan: {why}{notes}")));
        }
        if own.is_some() && !others.is_empty() {
            warnings
                .push(format!("its {} routing is done by the controller in Go and is not shown", others.join(" and ")));
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
        for &stage in stages {
            let strategy = rollout.strategy_at(stage);
            let done = rollout.routing_at(stage, workload_replicas);
            let mut objects = Vec::new();
            let label = rollout.stage_label(stage);
            if let Some(routing) = &routing {
                objects.extend(self.plan_objects(routing, &done.action, &label)?);
            }
            if let Some((_, cr_routing, cr_done)) = &cr_done {
                objects.extend(self.plan_objects(cr_routing, &cr_done.action, &label)?);
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
        let objects = self.plan_objects(&routing, &done.action, &label)?;
        let description = done.describe(&cr.strategy);
        let stage = StagePlan { stage: None, label, routing: description.clone(), description, objects };
        let warnings = cr.warnings.clone();
        Ok(RoutingPlan { owner: routing.owner.to_string(), notes: Vec::new(), stages: vec![stage], warnings })
    }

    /// The objects of every provider of `routing` at one stage, in the controller's order;
    /// the first error stops the plan. Only custom refs are planned so far: an Ingress or
    /// Gateway API provider is named in a warning of the owner's plan.
    fn plan_objects(&self, routing: &Routing, action: &RoutingAction, stage: &str) -> Result<Vec<ObjectPlan>, Error> {
        let context = custom::Context { routing, action, stage, limits: &self.limits };
        let mut objects = Vec::new();
        for provider in &routing.providers {
            if let Provider::Custom(refs) = provider {
                for reference in refs {
                    objects.push(custom::plan_object(&context, self.objects, reference, || self.resolve(reference))?);
                }
            }
        }
        Ok(objects)
    }
}
