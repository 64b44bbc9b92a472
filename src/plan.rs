//! Planning: walks an owner's stages and its routing's providers (`providers/`), in the
//! controller's order, and collects for each gateway object the object the controller would
//! write at a stage, the changes that get it there, and warnings.

use crate::error::Error;
use crate::lua::Limits;
use crate::model::{self, ObjectIndex, ObjectKey, Provider, Rollout, Routing, RoutingAction, Stage, TrafficRoutingCr};
use crate::providers::{Carried, Context, ObjectPlan, custom, ingress};
use crate::scripts::{self, ResolvedScript, ScriptCatalog, ScriptKey};
use std::cell::RefCell;
use std::collections::BTreeMap;

/// The pod label the built-in DestinationRule script's `canary` subset selects.
const CANARY_SUBSET_LABEL: (&str, &str) = ("istio.service.tag", "gray");

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

/// Whether the planner plans a provider (the Gateway API one is not wired in yet).
fn planned(provider: &Provider) -> bool {
    matches!(provider, Provider::Custom(_) | Provider::Ingress { .. })
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

    /// The script under `key`, resolved by `resolve` the first time it is asked for.
    fn resolved(
        &self,
        key: ScriptKey,
        resolve: impl FnOnce() -> Result<ResolvedScript, String>,
    ) -> Result<ResolvedScript, String> {
        if let Some(known) = self.resolved.borrow().get(&key) {
            return Ok(known.clone());
        }
        let script = resolve()?;
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
        let others: Vec<&str> =
            routing.iter().flat_map(|r| &r.providers).filter(|p| !planned(p)).map(Provider::name).collect();
        let own = routing.filter(|r| r.providers.iter().any(planned));
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
            if let Some((cr, _, cr_done)) = &cr_done {
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
        let routing = Routing::of_traffic_routing(cr, namespace);
        let label = "TrafficRouting strategy".to_string();
        let done = cr.routing();
        let objects = self.plan_objects(&routing, &done.action, &label, &mut Carried::new())?;
        let stage = StagePlan { stage: None, label, description: done.describe(&cr.strategy), objects };
        let warnings = cr.warnings.clone();
        Ok(RoutingPlan { owner: routing.owner.to_string(), notes: Vec::new(), stages: vec![stage], warnings })
    }

    /// The objects of every provider of `routing` at one stage, in the controller's order;
    /// the first error stops the plan. A Gateway API provider is not planned yet: it is named
    /// in a warning of the owner's plan. `carried` holds what the stages before left.
    fn plan_objects(
        &self,
        routing: &Routing,
        action: &RoutingAction,
        stage: &str,
        carried: &mut Carried,
    ) -> Result<Vec<ObjectPlan>, Error> {
        let context = Context { routing, action, stage, limits: &self.limits };
        let mut objects = Vec::new();
        for provider in &routing.providers {
            match provider {
                Provider::Custom(refs) => {
                    for reference in refs {
                        let resolve = || self.resolved(scripts::key_of(reference), || self.scripts.resolve(reference));
                        objects.push(custom::plan_object(&context, self.objects, reference, resolve)?);
                    }
                }
                Provider::Ingress { name, class_type } => {
                    let resolve =
                        || self.resolved(scripts::ingress_key(class_type), || self.scripts.resolve_ingress(class_type));
                    objects.push(ingress::plan_object(&context, self.objects, carried, name, class_type, resolve)?);
                }
                Provider::Gateway { .. } => {}
            }
        }
        Ok(objects)
    }
}
