//! Planning: walks an owner's stages and its routing's providers (`providers/`), in the
//! controller's order, and collects for each gateway object the object the controller would
//! write at a stage, the changes that get it there, and warnings.

use crate::data::{self, Data};
use crate::error::Error;
use crate::lua::{Limits, Printed};
use crate::model::{
    self, ObjectIndex, ObjectKey, Owner, Provider, Rollout, Routing, RoutingAction, Stage, StageRouting, StrategyKind,
    TrafficRoutingCr, WeightSplit,
};
use crate::providers::{self, Context, ObjectPlan, custom, gateway, ingress};
use crate::scripts::{self, ResolvedScript, ScriptCatalog, ScriptKey};
use serde_json::Value;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// The pod label the built-in DestinationRule script's `canary` subset selects.
const CANARY_SUBSET_LABEL: (&str, &str) = ("istio.service.tag", "gray");

#[derive(Clone, Debug)]
pub struct StagePlan {
    pub stage: Option<Stage>,
    /// `step 2/4`, `final (…)`, or `TrafficRouting strategy`.
    pub label: String,
    /// What the stage asks of the gateway.
    pub description: String,
    /// What the controller routes at the stage (the traffic split or the matches, or why not).
    pub routing: String,
    /// A partition step the controller does not route (its replicas reach the workload's): the
    /// objects keep the routing of the step before, which is what is planned (at a release's
    /// current step: the objects as they are).
    pub unrouted: bool,
    pub objects: Vec<ObjectPlan>,
}

impl StagePlan {
    /// How the plan names `object`, one of this stage's: its kind and key, and whose routing
    /// plans it where both the Rollout's own and its TrafficRouting's do (a contested object,
    /// planned twice: the two diffs are told apart).
    pub fn object_name(&self, object: &ObjectPlan) -> String {
        match self.objects.iter().any(|other| other.key == object.key && other.owner != object.owner) {
            true => format!("{}, routed by {}", object.describe(), object.owner),
            false => object.describe(),
        }
    }

    /// Each object of the stage once, and whether it changes (a contested object planned twice
    /// changes if either plan changes it).
    pub fn objects_changed(&self) -> Vec<(&ObjectKey, bool)> {
        let mut objects: Vec<(&ObjectKey, bool)> = Vec::with_capacity(self.objects.len());
        for object in &self.objects {
            match objects.iter_mut().find(|(key, _)| *key == &object.key) {
                Some((_, changed)) => *changed |= object.changed(),
                None => objects.push((&object.key, object.changed())),
            }
        }
        objects
    }
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
    /// A preview: what the next release of a Rollout not in one would write first, which the
    /// controller writes only once a release starts; its changes are not pending.
    pub preview: bool,
    /// The owners whose stable Service is known not to exist where a stage routes: the
    /// controller waits for it there, writing nothing (a warning says so).
    pub waiting_for_stable_service: Vec<Owner>,
}

impl RoutingPlan {
    /// A plan of no stage, `why` said under the owner.
    fn nothing_planned(owner: String, why: String, warnings: Vec<String>) -> RoutingPlan {
        RoutingPlan {
            owner,
            notes: vec![why],
            stages: Vec::new(),
            warnings,
            preview: false,
            waiting_for_stable_service: Vec::new(),
        }
    }

    pub fn changed(&self) -> bool {
        self.stages.iter().flat_map(|s| &s.objects).any(ObjectPlan::changed)
    }

    /// Why a planned object must not be written, if one must not.
    pub fn unwritable(&self) -> Option<&str> {
        self.stages.iter().flat_map(|s| &s.objects).find_map(|o| o.unwritable.as_deref())
    }
}

/// The objects earlier stages left, by key, with the label of the stage that left each.
#[derive(Default)]
struct Carried {
    /// Where the stage before left each object a stage starts from (null: it left none, a canary
    /// Ingress deleted or not made).
    left: BTreeMap<ObjectKey, (Arc<Value>, String)>,
    /// Where the last stage that routed it left a custom ref not carried yet: a restore puts back
    /// the original that stage stored.
    routed: BTreeMap<ObjectKey, (Arc<Value>, String)>,
}

/// The objects planned for each action so far, of one routing.
type Alike = Vec<(RoutingAction, Vec<ObjectPlan>)>;

pub struct Planner<'a> {
    objects: &'a ObjectIndex,
    /// Whether a stage starts from where the stage before left an HTTPRoute or a canary Ingress
    /// (as a release goes through them) or from the objects as read (to tell which stage they
    /// are at).
    carry: bool,
    /// Whether the plans keep each script's input (`ObjectPlan::obj`): only `plan --show-obj`
    /// shows it, and a large object's obj is megabytes.
    keep_objs: bool,
    scripts: &'a ScriptCatalog,
    limits: Limits,
    /// Scripts resolved so far: each is compiled and hashed once per plan.
    resolved: RefCell<BTreeMap<ScriptKey, ResolvedScript>>,
    /// What the scripts printed, until the caller takes it (`printed`).
    printed: Printed,
}

impl<'a> Planner<'a> {
    pub fn new(objects: &'a ObjectIndex, scripts: &'a ScriptCatalog, limits: Limits) -> Planner<'a> {
        Planner {
            objects,
            carry: true,
            keep_objs: false,
            scripts,
            limits,
            resolved: RefCell::default(),
            printed: Printed::default(),
        }
    }

    /// Keeps each script's input in the plans (`ObjectPlan::obj`), for `plan --show-obj`.
    pub fn keeping_objs(self) -> Planner<'a> {
        Planner { keep_objs: true, ..self }
    }

    /// Plans every stage from the objects as read, as the controller would from them now: to
    /// place an object (`status`, `restore`'s check for edits), not to follow a release.
    pub fn each_stage_from_the_objects_read(self) -> Planner<'a> {
        Planner { carry: false, ..self }
    }

    /// What the scripts printed since the last call, for the command-line edge to show: taken
    /// after each plan, whether it succeeded or failed.
    pub fn printed(&self) -> Vec<u8> {
        self.printed.take()
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
        let mut warnings: Vec<String> = rollout.warnings.iter().map(ToString::to_string).collect();
        // `plan -f` refuses these.
        warnings.extend(rollout.rejection_warnings());
        let own = Routing::of_rollout(rollout, namespace).filter(|r| !r.providers.is_empty());
        if own.is_none() && cr.is_none() {
            // A release without a gateway (batches of pods only) is the controller's too: nothing
            // to plan, and an approval is an approval all the same.
            if rollout.traffic_routing.is_none() {
                let why = format!(
                    "no traffic routing (no trafficRoutings, no {} annotation): the controller routes no traffic for it, so there is nothing to plan",
                    model::TRAFFIC_ROUTING_ANNOTATION
                );
                return Ok(RoutingPlan::nothing_planned(owner, why, warnings));
            }
            let notes: String = warnings.iter().map(|w| format!("; {w}")).collect();
            return Err(Error::Input(format!(
                "{owner} has no traffic routing to plan: its trafficRoutings[0] has no ingress, gateway or customNetworkRefs{notes}"
            )));
        }
        let cr_routing = cr.map(|cr| Routing::of_traffic_routing(cr, namespace));
        let (label, value) = CANARY_SUBSET_LABEL;
        let pods_labelled = rollout.enable_extra_workload_for_canary
            && rollout.canary_pod_labels.get(label).is_some_and(|v| v == value);
        if !pods_labelled {
            let unlabelled = format!(
                "traffic goes to the DestinationRule subset canary, which selects pods labelled {label}={value}; canary pods get that label only from patchPodTemplateMetadata.labels with enableExtraWorkloadForCanary"
            );
            if own.as_ref().is_some_and(routes_to_canary_subset) {
                warnings.push(unlabelled.clone());
            }
            if let Some(cr) = cr.filter(|_| cr_routing.as_ref().is_some_and(routes_to_canary_subset)) {
                warnings.push(format!(
                    "TrafficRouting {}: {unlabelled} (a TrafficRouting routes to the stable Service itself, so always to the subset)",
                    cr.name
                ));
            }
        }
        // The controller's PatchStableService answers "retry" when no canary Service is generated,
        // and blue-green calls it before a routing step 1 without canary's guard (by code reading).
        if own.is_some()
            && rollout.kind == StrategyKind::BlueGreen
            && rollout.disable_generate_canary_service
            && rollout.steps.first().is_some_and(|step| step.strategy.routes_traffic())
        {
            warnings.push("blue-green with disableGenerateCanaryService and traffic or matches at step 1: before that step the controller patches the stable Service, which it answers with \"retry\" when no canary Service is generated, so by a reading of its code the release never reaches step 1 and no step is routed (not seen at runtime; the plan shows each step as it would route)".into());
        }
        // Its final route of all traffic to the new version calls EnsureRoutes alone, which makes
        // no canary Service (C.2), and a last step without traffic or matches deleted it.
        if let Some(routing) = own.as_ref().filter(|r| r.canary_service != r.stable_service)
            && stages.contains(&Stage::BlueGreenFinal)
            && rollout.steps.last().is_some_and(|step| !step.strategy.routes_traffic())
        {
            warnings.push(format!(
                "the last step has neither traffic nor matches, so the controller deletes the canary Service {} there (as it restores the original routing), and its final route of all traffic to the new version does not make it again: requests to the routed objects fail until it restores the original routing; give the last step traffic or matches",
                routing.canary_service
            ));
        }
        // Placing objects (status, restore), the steps are planned all the same: a disabled
        // Rollout's objects may still carry a step's routing until the controller restores them.
        if let Some(why) = rollout.not_run().filter(|_| self.carry) {
            return Ok(RoutingPlan::nothing_planned(owner, why, warnings));
        }
        // Only a status says that no release is in progress (files often have none).
        if rollout.status.phase.is_some()
            && let Some(routing) = own.as_ref().filter(|r| !r.releasing)
        {
            warnings.extend(leftover_originals(self.objects, routing));
        }
        let workload = rollout.workload.as_ref();
        let workload_replicas = workload
            .and_then(|w| self.objects.get(&ObjectKey::of_ref(w, namespace)))
            .and_then(|workload| model::workload_replicas(workload));
        if let Some(w) = workload.filter(|_| workload_replicas.is_none() && rollout.is_real_partition())
            && own.is_some()
            && rollout.steps.iter().any(|s| s.strategy.routes_traffic())
        {
            let assumed = "the plan assumes only a step of 100% (or more) of its replicas reaches them; the controller does not route a partition step whose replicas reach the workload's";
            let key = ObjectKey::of_ref(w, namespace);
            let unknown = if self.objects.get(&key).is_some() {
                "has no replica count the controller reads"
            } else if self.objects.is_absent(&key) {
                "does not exist"
            } else {
                "is not known (not among the files, or not readable)"
            };
            warnings.push(match self.objects.unread(&key) {
                Some((failure, needed)) => {
                    model::unread_warning(&format!("read its workload {key}"), &failure, assumed, needed)
                }
                None => format!("its workload {} {} {unknown}, so {assumed}", w.kind, w.name),
            });
        }
        let routing = own;
        let cr_done =
            cr.zip(cr_routing).map(|(cr, cr_routing)| (cr, cr_routing, cr.routing_for(rollout.release_started())));
        // Placing objects, a TrafficRouting's are judged against the routing it writes while held,
        // whatever it does now (restores, or leaves them): what it wrote is nobody's edit.
        let cr_placing = cr.map(|cr| cr.routing().action).filter(|_| !self.carry);
        // Objects both the Rollout's own routing and its TrafficRouting's plan.
        let mut contested = BTreeSet::new();
        let mut plans = Vec::with_capacity(stages.len());
        let mut carried = Carried::default();
        // Planned from the objects read, a stage routed as an earlier one plans as it did: each
        // distinct action is planned once (the CRD lets a Rollout have thousands of steps).
        let (mut own_alike, mut cr_alike) = (Alike::default(), Alike::default());
        let mut without_weights = providers::WithoutWeights::default();
        // The stage a release in progress is at: its objects as read are the gateway's there.
        let current = rollout.current_stage().filter(|_| routing.as_ref().is_some_and(|r| r.releasing));
        // The stage the controller routes now (none while a release ends: it restores instead):
        // a held TrafficRouting's at every reconcile, the Rollout's own until the step's routing
        // is done.
        let at_now =
            rollout.current_stage().filter(|_| rollout.release_started() && model::Ending::of(rollout).is_none());
        let own_now = at_now.filter(|_| rollout.routes_current_step_now());
        // Whether a stage planned routes (the controller waits for the stable Service there).
        let mut routes = false;
        for &stage in stages {
            let mut done = rollout.routing_at(stage, workload_replicas);
            // The controller writes nothing at a stage it does not route, whatever the objects
            // hold: at the current stage (`approve`, `plan` of it) they are left alone. Any other
            // such stage is planned as the stage whose routing it keeps, which is what the
            // gateway holds there (and how placing objects tells it).
            if self.carry && done.unrouted() && Some(stage) == current {
                done.action = RoutingAction::Leave;
            }
            routes |= matches!(done.action, RoutingAction::Route(_));
            let mut objects = Vec::new();
            let label = rollout.stage_label(stage);
            // An object missing where the controller routes it now fails the step there and
            // then, which placing the objects reports as the error it is.
            if let Some(routing) = &routing {
                let now = Some(stage) == own_now && !done.unrouted();
                objects.extend(self.plan_objects_once(
                    &mut own_alike,
                    routing,
                    &done.action,
                    &label,
                    &mut carried,
                    now,
                )?);
            }
            let own_count = objects.len();
            let own = routing.as_ref().map(|routing| {
                without_weights.note(Some(stage), routing, &objects, &done.action);
                (&done, providers::weight_split(routing, &objects))
            });
            let mut by_cr = None;
            if let Some((cr, cr_routing, cr_done)) = &cr_done {
                let routes_now = matches!(cr_done.action, RoutingAction::Route(_)) && Some(stage) == at_now;
                objects.extend(self.plan_objects_once(
                    &mut cr_alike,
                    cr_routing,
                    cr_placing.as_ref().unwrap_or(&cr_done.action),
                    &label,
                    &mut carried,
                    routes_now,
                )?);
                let (own_objects, cr_objects) = objects.split_at_mut(own_count);
                without_weights.note(Some(stage), cr_routing, cr_objects, &cr_done.action);
                by_cr = Some(describe_traffic_routing(cr, cr_done, &providers::weight_split(cr_routing, cr_objects)));
                for object in own_objects {
                    if let Some(theirs) = cr_objects.iter_mut().find(|o| o.key == object.key) {
                        let note = contested_note(&object.key, rollout, namespace, cr);
                        object.notes.push(note.clone());
                        theirs.notes.push(note);
                        contested.insert(object.key.clone());
                    }
                }
            }
            let (description, routed) =
                describe_stage(rollout, stage, own.as_ref().map(|(done, split)| (*done, split)), by_cr);
            // (A Rollout routed by its TrafficRouting alone is routed at every step.)
            let unrouted = done.unrouted() && routing.is_some();
            plans.push(StagePlan { stage: Some(stage), label, description, routing: routed, unrouted, objects });
        }
        warnings.extend(without_weights.warnings());
        let named_twice = routing.iter().chain(cr_done.as_ref().map(|(_, r, _)| r)).filter_map(|r| r.named_twice());
        warnings.extend(named_twice.map(named_twice_warning));
        let cr_routes = cr_done.as_ref().filter(|(_, _, done)| matches!(done.action, RoutingAction::Route(_)));
        let routed = routing.as_ref().filter(|_| routes).into_iter().chain(cr_routes.map(|(_, r, _)| r));
        let mut waiting_for_stable_service = Vec::new();
        for routing in routed {
            let Some(missing) = providers::missing_stable_service(routing, self.objects) else { continue };
            waiting_for_stable_service.push(routing.owner.clone());
            if !warnings.contains(&missing) {
                warnings.push(missing);
            }
        }
        if let Some(cr) = cr {
            warnings.extend(contested.iter().map(|key| contested_note(key, rollout, namespace, cr)));
            warnings.extend(cr.warnings.iter().map(|w| format!("TrafficRouting {}: {w}", cr.name)));
        }
        Ok(RoutingPlan {
            owner,
            notes: Vec::new(),
            stages: plans,
            warnings,
            preview: false,
            waiting_for_stable_service,
        })
    }

    /// Plans a TrafficRouting on its own: its strategy through its refs.
    pub fn plan_traffic_routing(&self, cr: &TrafficRoutingCr, namespace: &str) -> Result<RoutingPlan, Error> {
        let routing = Routing::of_traffic_routing(cr, namespace);
        let label = "TrafficRouting strategy".to_string();
        let done = cr.routing();
        let objects = self.plan_objects(&routing, &done.action, &label, &mut Carried::default(), true, true)?;
        let mut without_weights = providers::WithoutWeights::default();
        without_weights.note(None, &routing, &objects, &done.action);
        let description = done.describe(&cr.strategy, &providers::weight_split(&routing, &objects));
        let stage =
            StagePlan { stage: None, label, routing: description.clone(), description, unrouted: false, objects };
        let mut warnings: Vec<String> = cr.warnings.iter().map(ToString::to_string).collect();
        warnings.extend(without_weights.warnings());
        warnings.extend(routing.named_twice().map(named_twice_warning));
        let missing = providers::missing_stable_service(&routing, self.objects)
            .filter(|_| matches!(done.action, RoutingAction::Route(_)));
        let waiting_for_stable_service = missing.iter().map(|_| routing.owner.clone()).collect();
        warnings.extend(missing);
        // The Rollouts that would put the label on their canary pods are not known here.
        let (label, value) = CANARY_SUBSET_LABEL;
        let notes = routes_to_canary_subset(&routing).then(|| format!(
            "traffic goes to the DestinationRule subset canary, which selects pods labelled {label}={value}: each Rollout routed through this TrafficRouting must give its canary pods that label (patchPodTemplateMetadata.labels with enableExtraWorkloadForCanary), or that traffic finds no pods; no such Rollout is in the input to check"
        ));
        Ok(RoutingPlan {
            owner: routing.owner.to_string(),
            notes: notes.into_iter().collect(),
            stages: vec![stage],
            warnings,
            preview: false,
            waiting_for_stable_service,
        })
    }

    /// As `plan_objects`, but when each stage is planned from the objects read, an action
    /// planned before (in `alike`) gives what it gave then.
    fn plan_objects_once(
        &self,
        alike: &mut Alike,
        routing: &Routing,
        action: &RoutingAction,
        stage: &str,
        carried: &mut Carried,
        now: bool,
    ) -> Result<Vec<ObjectPlan>, Error> {
        if self.carry {
            return self.plan_objects(routing, action, stage, carried, now, true);
        }
        // An alike stage may have placed a missing object as not found: the stage the
        // controller routes now is planned afresh, to fail on it.
        if let Some((_, objects)) = alike.iter().find(|(planned, _)| planned == action).filter(|_| !now) {
            return Ok(objects.clone());
        }
        let objects = self.plan_objects(routing, action, stage, carried, now, alike.is_empty())?;
        alike.push((action.clone(), objects.clone()));
        Ok(objects)
    }

    /// The objects of every provider of `routing` at one stage, in the controller's order;
    /// the first error stops the plan. An HTTPRoute and a canary Ingress, and a custom ref once
    /// a stage restored it, are planned from where the stage before left them (`carried`) unless
    /// the planner plans each stage from the objects as read. `first`: the routing's first stage
    /// planned (see `Context::first`).
    fn plan_objects(
        &self,
        routing: &Routing,
        action: &RoutingAction,
        stage: &str,
        carried: &mut Carried,
        now: bool,
        first: bool,
    ) -> Result<Vec<ObjectPlan>, Error> {
        let (limits, printed, keep_obj) = (&self.limits, &self.printed, self.keep_objs);
        let context = Context { routing, action, stage, limits, printed, keep_obj, first };
        let mut objects = Vec::new();
        for provider in &routing.providers {
            let plan = match provider {
                Provider::Custom(refs) => {
                    for (index, reference) in refs.iter().enumerate() {
                        let key = ObjectKey::of_ref(reference, &routing.owner.namespace);
                        // A script works from the stored original whatever the stage before wrote,
                        // so a custom ref's routed stages start from the object as read, until one
                        // restores the original: the controller stores a fresh one at the next
                        // stage that routes, and a restore after that finds none. A restore puts
                        // back what the last routed stage stored.
                        let carrying = carried.left.contains_key(&key);
                        let after = match action {
                            RoutingAction::Restore => carried.left.get(&key).or_else(|| carried.routed.get(&key)),
                            _ => carried.left.get(&key),
                        };
                        let after = after.map(|(object, label)| (Arc::clone(object), label.clone()));
                        let resolve = || self.resolved(scripts::key_of(reference), || self.scripts.resolve(reference));
                        let plan = custom::plan_object(&context, self.objects, (index, reference), after, resolve);
                        let plan = self.placed_if_missing(plan, reference, routing, now)?;
                        let left = (Arc::clone(&plan.planned), stage.to_string());
                        if self.carry && (carrying || matches!(plan.action, providers::Action::Restore)) {
                            carried.left.insert(key, left);
                        } else if self.carry && matches!(action, RoutingAction::Route(_)) {
                            carried.routed.insert(key, left);
                        }
                        objects.push(plan.noting_deletion());
                    }
                    continue;
                }
                Provider::Ingress { name, class_type } => {
                    let key = ingress::canary_key(routing, name);
                    let (current, after) = self.starting_point(carried, &key);
                    let resolve =
                        || self.resolved(scripts::ingress_key(class_type), || self.scripts.resolve_ingress(class_type));
                    let plan = ingress::plan_object(&context, self.objects, name, class_type, current, after, resolve);
                    self.placed_if_missing(plan, &ingress::canary_reference(name), routing, now)?
                }
                Provider::Gateway { http_route } => {
                    let route = gateway::GatewayRoute::of(routing, http_route);
                    let (current, after) = self.starting_point(carried, &route.key());
                    let plan = gateway::plan_object(self.objects, routing, http_route, action, current, after);
                    self.placed_if_missing(plan, &route.reference(&Value::Null), routing, now)?
                }
            };
            // A write the API server refuses leaves the object as it was.
            if self.carry && plan.unwritable.is_none() {
                carried.left.insert(plan.key.clone(), (Arc::clone(&plan.planned), stage.to_string()));
            }
            objects.push(plan.noting_deletion());
        }
        // The controller stores every custom ref's original, then runs each one's script: one
        // that fails stops the step before any object's routing is written and before the Ingress
        // and Gateway API providers run (docs/controller-semantics.md §3.4).
        if let Some(stuck) = objects.iter().find(|o| o.controller_sticks.is_some()).map(|o| o.key.clone()) {
            for other in objects.iter_mut().filter(|o| o.key != stuck && o.writes().next().is_some()) {
                other.warnings.push(format!(
                    "{}: the controller writes none of this step's routing here: its own script fails on {stuck} (see there), which stops the step before any object's routing is written",
                    other.key
                ));
            }
        }
        Ok(objects)
    }

    /// `plan` of the object `reference` names, or, placing the objects as read (`status`), its
    /// plan as not found when it is missing where a stage the controller does not run `now`
    /// routes it: that stage would fail, but where the other objects stand is still told.
    fn placed_if_missing(
        &self,
        plan: Result<ObjectPlan, Error>,
        reference: &model::ObjectRef,
        routing: &Routing,
        now: bool,
    ) -> Result<ObjectPlan, Error> {
        match plan {
            Err(Error::Missing { message, .. }) if !self.carry && !now => {
                Ok(ObjectPlan::not_found(reference, &routing.owner, message))
            }
            plan => plan,
        }
    }

    /// The object `key` as a stage starts from it: as the stage before left it (with that
    /// stage's label), else as read; None when there is none.
    fn starting_point<'b>(&'b self, carried: &'b Carried, key: &ObjectKey) -> (Option<&'b Arc<Value>>, Option<String>) {
        match carried.left.get(key) {
            Some((object, label)) => (Some(object).filter(|o| !o.is_null()), Some(label.clone())),
            None => (self.objects.get(key), None),
        }
    }
}

/// What a stage does, in words: the description (for a step, its replicas and pause around
/// the routing) and the routing alone. `own` is what the controller does with the Rollout's own
/// objects there (None: it has none); `by_cr` what its TrafficRouting does
/// ([`describe_traffic_routing`]). The description is the plan's, and `status`'s when the
/// objects cannot be placed.
pub fn describe_stage(
    rollout: &Rollout,
    stage: Stage,
    own: Option<(&StageRouting, &WeightSplit)>,
    by_cr: Option<String>,
) -> (String, String) {
    let strategy = rollout.strategy_at(stage);
    let (replicas, own, pause) = match stage {
        Stage::Step(i) => {
            let (replicas, pause) = rollout.describe_step(i);
            (Some(replicas), own.map(|(own, split)| own.describe(&strategy, split)), Some(pause))
        }
        // The route of all traffic to the new version is the Rollout's own routing's: one routed
        // by its TrafficRouting alone keeps that routing's there.
        Stage::BlueGreenFinal => (None, own.map(|(_, split)| strategy.describe_split(split)), None),
    };
    let joined = |parts: [Option<String>; 4]| parts.into_iter().flatten().collect::<Vec<_>>().join(", ");
    let description = joined([replicas, own.clone(), pause, by_cr.clone()]);
    (description, joined([own, by_cr, None, None]))
}

/// What a TrafficRouting does at every step of a Rollout routed through it (`done`, its
/// `routing_for` that Rollout): `TrafficRouting NAME: <its strategy>`, its weights said as
/// `split` has them.
pub fn describe_traffic_routing(cr: &TrafficRoutingCr, done: &StageRouting, split: &WeightSplit) -> String {
    format!("TrafficRouting {}: {}", cr.name, done.describe(&cr.strategy, split))
}

/// Whether `routing` sends canary traffic to the DestinationRule subset `canary`: the built-in
/// scripts do when the canary Service is the stable one (a TrafficRouting, or
/// `disableGenerateCanaryService`; docs/controller-semantics.md §2, §3.2).
fn routes_to_canary_subset(routing: &Routing) -> bool {
    routing.canary_service == routing.stable_service
        && routing.custom_refs().iter().any(|r| r.kind == "DestinationRule")
}

/// The warning of an object a routing's custom refs name twice (`Routing::named_twice`).
fn named_twice_warning(named: String) -> String {
    format!(
        "{named}: a step is planned, and written, once for each, the second putting its original back between the step's routed writes; name it once (approve refuses it)"
    )
}

/// A stored original that differs from its object, while the owner of `routing` has no release in
/// progress: a leftover of an earlier release (aborted, or its routing put back by hand), which
/// the controller's next release routes from all the same (docs/controller-semantics.md §3.4),
/// undoing what changed since.
fn leftover_originals(objects: &ObjectIndex, routing: &Routing) -> Vec<String> {
    routing.custom_refs().iter().filter_map(|reference| {
        let key = ObjectKey::of_ref(reference, &routing.owner.namespace);
        let object = objects.get(&key)?;
        data::stored_original(object)?;
        // One that does not parse is warned of where it is read.
        let original = Data::original_of(object).ok()?;
        let mut now = Data::of_object(object);
        now.annotations.remove(data::ORIGINAL_SPEC_ANNOTATION);
        (now.stored_and_read_back() != original).then(|| {
            format!(
                "{key} holds a stored original (annotation {}) that differs from it, although {} has no release in progress: a leftover of an earlier release, which the controller's next release routes from all the same, undoing what changed since (the diff of the first routed step shows it): if what changed is that release's routing, left behind (`status` shows the object at a step), `restore` puts the original back; remove the annotation only if those changes are to stay",
                data::ORIGINAL_SPEC_ANNOTATION,
                routing.owner
            )
        })
    })
    .collect()
}

/// openkruise/rollouts#128 between plans (the provider checks each planned canary Ingress
/// against the Ingresses read): warns at each stage where a plan's canary Ingress gets the ALB
/// order that another canary Ingress, one not among `objects` (not made yet), gets at a stage of
/// its plan: made by Rollouts planned together (`plan -f`, an approve of several), the two clash
/// while both releases run. `routings` are the plans' routings, for each canary's class.
/// Returns the indices of the plans warned.
pub fn warn_alb_orders_between(
    plans: &mut [&mut RoutingPlan],
    objects: &ObjectIndex,
    routings: &[Routing],
) -> BTreeSet<usize> {
    let class_types: BTreeMap<ObjectKey, &str> = routings
        .iter()
        .flat_map(|routing| {
            routing.providers.iter().filter_map(move |provider| match provider {
                Provider::Ingress { name, class_type } => {
                    Some((ingress::canary_key(routing, name), class_type.as_str()))
                }
                _ => None,
            })
        })
        .collect();
    // Where a plan's canary Ingresses are (stage, object), with their class.
    let canaries = |plan: &RoutingPlan| -> Vec<(usize, usize, &str)> {
        let mut found = Vec::new();
        for (s, stage) in plan.stages.iter().enumerate() {
            for (o, object) in stage.objects.iter().enumerate() {
                if let Some(class_type) = class_types.get(&object.key) {
                    found.push((s, o, *class_type));
                }
            }
        }
        found
    };
    // Each canary Ingress not made yet, at the first stage that gives it each order.
    let mut unmade: Vec<(&ObjectKey, &Value, &str, &str)> = Vec::new();
    for plan in plans.iter() {
        for (s, o, _) in canaries(plan) {
            let (stage, object) = (&plan.stages[s], &plan.stages[s].objects[o]);
            let order = &object.planned["metadata"]["annotations"][ingress::ALB_ORDER];
            let known = unmade.iter().any(|(key, made, ..)| {
                *key == &object.key && &made["metadata"]["annotations"][ingress::ALB_ORDER] == order
            });
            if order.is_string() && objects.get(&object.key).is_none() && !known {
                unmade.push((&object.key, &object.planned, &plan.owner, &stage.label));
            }
        }
    }
    let mut warnings = Vec::new();
    for (p, plan) in plans.iter().enumerate() {
        for (s, o, class_type) in canaries(plan) {
            let planned = &plan.stages[s].objects[o].planned;
            let clash = unmade.iter().find_map(|(_, twin, owner, stage)| {
                let order = ingress::shared_alb_order(class_type, planned, twin)?;
                let twin_has =
                    format!("gets too at {stage} of {owner} (not made yet: they clash while both releases run)");
                Some(ingress::alb_order_clash(class_type, "gets", order, twin, &twin_has))
            });
            warnings.extend(clash.map(|warning| (p, s, o, warning)));
        }
    }
    let mut warned = BTreeSet::new();
    for (p, s, o, warning) in warnings {
        plans[p].stages[s].objects[o].warnings.push(warning);
        warned.insert(p);
    }
    warned
}

/// What is said of an object that a Rollout's own routing and its TrafficRouting `cr` both
/// plan: the controller reconciles the two independently (docs/controller-semantics.md §2), and
/// each rewrites the object from the stored original whenever it differs from its own result
/// (§3.4), so neither is ever done.
fn contested_note(key: &ObjectKey, rollout: &Rollout, namespace: &str, cr: &TrafficRoutingCr) -> String {
    format!(
        "{key} is routed both by Rollout {namespace}/{}'s own trafficRoutings and by TrafficRouting {namespace}/{} (annotation {}), which the controller reconciles independently: each rewrites it to its own routing on every pass, so it flaps and the Rollout never gets past StepTrafficRouting; approve refuses it: route it through one of them only",
        rollout.name,
        cr.name,
        model::TRAFFIC_ROUTING_ANNOTATION
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::change::Change;
    use crate::model::{ObjectRef, Permission};
    use crate::providers::Action;
    use crate::status::{self, Position};
    use serde_json::json;

    #[test]
    fn a_leftover_stored_original_is_warned_of_only_outside_a_release_and_when_it_differs() {
        let rollout = |phase: Option<&str>| {
            let mut object = json!({
                "apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout",
                "metadata": {"name": "web", "namespace": "shop"},
                "spec": {"strategy": {"canary": {"steps": [{"replicas": 1, "traffic": "20%"}],
                    "trafficRoutings": [{"service": "web", "customNetworkRefs": [
                        {"apiVersion": "networking.istio.io/v1beta1", "kind": "VirtualService", "name": "web"}]}]}}}
            });
            if let Some(phase) = phase {
                object["status"] = json!({"phase": phase});
            }
            Rollout::from_object(&object).unwrap()
        };
        let vs = |hosts: &str| {
            json!({"apiVersion": "networking.istio.io/v1beta1", "kind": "VirtualService",
                   "metadata": {"name": "web", "namespace": "shop", "annotations": {
                       (data::ORIGINAL_SPEC_ANNOTATION): r#"{"spec":{"hosts":["old.example.com"],"http":[{"route":[{"destination":{"host":"web"}}]}]}}"#}},
                   "spec": {"hosts": [hosts], "http": [{"route": [{"destination": {"host": "web"}}]}]}})
        };
        let catalog = ScriptCatalog::default();
        let warned = |rollout: Rollout, object: Value| {
            let mut objects = ObjectIndex::default();
            objects.insert("shop", object);
            let plan = Planner::new(&objects, &catalog, Limits::default()).plan_rollout(
                &rollout,
                "shop",
                None,
                &rollout.stages(),
            );
            plan.unwrap()
                .warnings
                .into_iter()
                .filter(|w| w.contains("a leftover of an earlier release"))
                .collect::<Vec<_>>()
        };
        let leftover = warned(rollout(Some("Healthy")), vs("new.example.com"));
        assert_eq!(leftover.len(), 1, "{leftover:?}");
        assert!(leftover[0].starts_with("VirtualService shop/web holds a stored original (annotation rollouts.kruise.io/original-spec-configuration) that differs from it, although Rollout shop/web has no release in progress"), "{leftover:?}");
        // In a release it is the release's own; without a status nothing is known (a manifest
        // from git planned with objects exported mid-release, as the guide's examples are); the
        // same as the object, it undoes nothing.
        assert!(warned(rollout(Some("Progressing")), vs("new.example.com")).is_empty());
        assert!(warned(rollout(None), vs("new.example.com")).is_empty());
        assert!(warned(rollout(Some("Healthy")), vs("old.example.com")).is_empty());
    }

    #[test]
    fn a_ref_the_controllers_own_script_fails_on_stops_the_whole_steps_routing() {
        let rollout = Rollout::from_object(&json!({
            "apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout",
            "metadata": {"name": "web", "namespace": "shop"},
            "spec": {"strategy": {"canary": {"steps": [{"replicas": 1, "traffic": "20%"}],
                "trafficRoutings": [{"service": "web", "customNetworkRefs": [
                    {"apiVersion": "networking.istio.io/v1beta1", "kind": "VirtualService", "name": "web"},
                    {"apiVersion": "networking.istio.io/v1beta1", "kind": "DestinationRule", "name": "web"}]}]}}}
        }))
        .unwrap();
        let catalog = ScriptCatalog::default();
        let warnings = |subsets: Option<Value>| {
            let mut objects = ObjectIndex::default();
            objects.insert(
                "shop",
                json!({"apiVersion": "networking.istio.io/v1beta1", "kind": "VirtualService",
                "metadata": {"name": "web", "namespace": "shop"},
                "spec": {"hosts": ["web"], "http": [{"route": [{"destination": {"host": "web"}}]}]}}),
            );
            let mut rule = json!({"apiVersion": "networking.istio.io/v1beta1", "kind": "DestinationRule",
                "metadata": {"name": "web", "namespace": "shop"}, "spec": {"host": "web"}});
            if let Some(subsets) = subsets {
                rule["spec"]["subsets"] = subsets;
            }
            objects.insert("shop", rule);
            let planner = Planner::new(&objects, &catalog, Limits::default());
            let plan = planner.plan_rollout(&rollout, "shop", None, &rollout.stages()).unwrap();
            plan.stages[0].objects.iter().map(|o| (o.key.to_string(), o.warnings.clone())).collect::<Vec<_>>()
        };
        let stopped = "the controller writes none of this step's routing here: its own script fails on DestinationRule shop/web (see there)";
        let planned = warnings(None);
        assert!(
            planned[0].1.iter().any(|w| w.starts_with(&format!("VirtualService shop/web: {stopped}"))),
            "{planned:?}"
        );
        assert!(!planned[1].1.iter().any(|w| w.contains(stopped)), "{planned:?}");
        // Where the controller's script runs, nothing is said.
        let planned = warnings(Some(json!([])));
        assert!(!planned.iter().flat_map(|(_, w)| w).any(|w| w.contains("writes none")), "{planned:?}");
    }

    #[test]
    fn a_custom_ref_is_planned_from_its_restore_on_and_stored_afresh() {
        // Steps: traffic, replicas only (a restore), traffic, replicas only again.
        let rollout = Rollout::from_object(&json!({
            "apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout",
            "metadata": {"name": "web", "namespace": "shop"},
            "spec": {"strategy": {"canary": {
                "steps": [{"replicas": 1, "traffic": "20%"}, {"replicas": 2}, {"replicas": 3, "traffic": "50%"}, {"replicas": 4}],
                "trafficRoutings": [{"service": "web", "customNetworkRefs": [
                    {"apiVersion": "networking.istio.io/v1beta1", "kind": "VirtualService", "name": "web"}]}]}}}
        }))
        .unwrap();
        // A stored original written by hand: valid, but not as Go writes it.
        let hand_written = r#"{"spec": {"http": [{"route": [{"destination": {"host": "web"}}]}], "hosts": ["web"]}, "annotations": {"n": "a&b"}}"#;
        let mut read = ObjectIndex::default();
        read.insert("shop", json!({"apiVersion": "networking.istio.io/v1beta1", "kind": "VirtualService",
            "metadata": {"name": "web", "namespace": "shop", "annotations": {(data::ORIGINAL_SPEC_ANNOTATION): hand_written}},
            "spec": {"hosts": ["web"], "http": [{"route": [{"destination": {"host": "web"}}]}]}}));
        let catalog = ScriptCatalog::default();
        let plan = Planner::new(&read, &catalog, Limits::default())
            .plan_rollout(&rollout, "shop", None, &rollout.stages())
            .unwrap();
        let objects: Vec<&ObjectPlan> = plan.stages.iter().map(|s| &s.objects[0]).collect();
        let stored = |o: &ObjectPlan| o.planned["metadata"]["annotations"][data::ORIGINAL_SPEC_ANNOTATION].clone();
        // The routed step starts from the object as read, with its stored original, and the
        // restore from where that step left it (a custom review: a restore after a routed step
        // was planned from the object as read, which offline has nothing stored).
        assert_eq!((objects[0].after.as_deref(), stored(objects[0])), (None, json!(hand_written)));
        assert_eq!(objects[1].after.as_deref(), Some(plan.stages[0].label.as_str()));
        assert_eq!(objects[1].current, objects[0].planned);
        assert!(matches!(objects[1].action, Action::Restore));
        // After it, from the restored object, whose original the controller stores afresh, as Go
        // writes it.
        assert_eq!(objects[2].after.as_deref(), Some(plan.stages[1].label.as_str()));
        assert_eq!(objects[2].current, objects[1].planned);
        assert_eq!(
            stored(objects[2]),
            json!(
                r#"{"spec":{"hosts":["web"],"http":[{"route":[{"destination":{"host":"web"}}]}]},"annotations":{"n":"a\u0026b"}}"#
            )
        );
        assert!(matches!(objects[2].action, Action::Lua(_)));
        // The next restore restores from that one.
        assert_eq!(objects[3].after.as_deref(), Some(plan.stages[2].label.as_str()));
        assert!(matches!(objects[3].action, Action::Restore));
        assert_eq!(objects[3].planned["metadata"]["annotations"], json!({"n": "a&b"}));
        // Placing objects, every stage is planned from the objects as read.
        let placing = Planner::new(&read, &catalog, Limits::default()).each_stage_from_the_objects_read();
        let plan = placing.plan_rollout(&rollout, "shop", None, &rollout.stages()).unwrap();
        let step3 = &plan.stages[2].objects[0];
        assert_eq!((step3.after.as_deref(), stored(step3)), (None, json!(hand_written)));
    }

    #[test]
    fn canary_ingresses_planned_together_with_one_alb_order_are_warned_of_in_each_plan() {
        // Rollouts shop and cart, each through an aliyun-alb Ingress of class alb, and other,
        // whose Ingress is of another class.
        let app = |name: &str, class: &str| {
            let rollout = Rollout::from_object(&json!({
                "apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout",
                "metadata": {"name": name, "namespace": "demo"},
                "spec": {"strategy": {"canary": {
                    "steps": [{"replicas": 1, "traffic": "20%"}, {"replicas": "100%"}],
                    "trafficRoutings": [{"service": name, "ingress": {"classType": "aliyun-alb", "name": name}}]}}}
            }))
            .unwrap();
            let ingress = json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
                "metadata": {"name": name, "namespace": "demo"},
                "spec": {"ingressClassName": class, "rules": [{"http": {"paths": [
                    {"path": "/", "pathType": "Prefix", "backend": {"service": {"name": name, "port": {"number": 80}}}}]}}]}});
            (rollout, ingress)
        };
        let apps = [app("shop", "alb"), app("cart", "alb"), app("other", "alb-internal")];
        let mut objects = ObjectIndex::default();
        for (_, ingress) in &apps {
            objects.insert("demo", ingress.clone());
        }
        let catalog = ScriptCatalog::default();
        let planner = Planner::new(&objects, &catalog, Limits::default());
        let mut plans: Vec<RoutingPlan> = apps
            .iter()
            .map(|(rollout, _)| planner.plan_rollout(rollout, "demo", None, &rollout.stages()).unwrap())
            .collect();
        let routings: Vec<Routing> = apps.iter().filter_map(|(r, _)| Routing::of_rollout(r, "demo")).collect();
        let clashes = |plans: &[RoutingPlan]| -> Vec<Vec<String>> {
            plans
                .iter()
                .map(|plan| {
                    plan.stages
                        .iter()
                        .flat_map(|s| &s.objects)
                        .flat_map(|o| &o.warnings)
                        .filter(|w| w.contains("openkruise/rollouts#128"))
                        .cloned()
                        .collect()
                })
                .collect()
        };
        assert!(clashes(&plans).iter().all(Vec::is_empty), "each against the Ingresses read: none");
        let warned = warn_alb_orders_between(&mut plans.iter_mut().collect::<Vec<_>>(), &objects, &routings);
        assert_eq!(warned, BTreeSet::from([0, 1]));
        let [shop, cart, other] = clashes(&plans).try_into().unwrap();
        assert_eq!(shop.len(), 1, "step 1 only: step 2 deletes the canary: {shop:?}");
        assert!(shop[0].starts_with("the canary Ingress gets alb.ingress.kubernetes.io/order: \"1\", which canary Ingress demo/cart-canary of the same class gets too at step 1/2 of Rollout demo/cart (not made yet: they clash while both releases run); ALB needs"), "{shop:?}");
        assert!(
            cart[0].contains(
                "canary Ingress demo/shop-canary of the same class gets too at step 1/2 of Rollout demo/shop"
            )
        );
        assert!(other.is_empty(), "another class: {other:?}");
        // A canary that exists already (cart's) is checked against as read, by the provider;
        // the other (shop's, not made yet) against the plans.
        let mut made = plans[1].stages[0].objects[0].planned.as_ref().clone();
        made["metadata"]["annotations"]["alb.ingress.kubernetes.io/order"] = json!("1");
        objects.insert("demo", made);
        let planner = Planner::new(&objects, &catalog, Limits::default());
        let mut plans: Vec<RoutingPlan> = apps[..2]
            .iter()
            .map(|(rollout, _)| planner.plan_rollout(rollout, "demo", None, &rollout.stages()).unwrap())
            .collect();
        assert_eq!(warn_alb_orders_between(&mut plans.iter_mut().collect::<Vec<_>>(), &objects, &routings), [1].into());
        let [shop, cart] = clashes(&plans).try_into().unwrap();
        assert_eq!(shop.len(), 1, "{shop:?}");
        assert!(shop[0].contains("which canary Ingress demo/cart-canary of the same class has too;"), "{shop:?}");
        assert_eq!(cart.len(), 1, "{cart:?}");
        assert!(cart[0].contains("which canary Ingress demo/shop-canary of the same class gets too at step 1/2"));
    }

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

    /// A Rollout `shop/store` of `steps` routing through a custom ref, Thing `store` (spec
    /// `{weight: 0}`), whose script is `script`.
    fn routing_a_thing(steps: Value, script: &str) -> (Rollout, ObjectIndex, ScriptCatalog) {
        let rollout = Rollout::from_object(&json!({
            "apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout",
            "metadata": {"name": "store", "namespace": "shop"},
            "spec": {"strategy": {"canary": {
                "steps": steps,
                "trafficRoutings": [{"service": "store", "customNetworkRefs": [
                    {"apiVersion": "example.com/v1", "kind": "Thing", "name": "store"}]}]
            }}}
        }))
        .unwrap();
        let mut objects = ObjectIndex::default();
        objects.insert(
            "shop",
            json!({"apiVersion": "example.com/v1", "kind": "Thing",
            "metadata": {"name": "store", "namespace": "shop"}, "spec": {"weight": 0}}),
        );
        let catalog = ScriptCatalog {
            overrides: [(("example.com".into(), "Thing".into()), ("thing.lua".into(), script.into()))].into(),
            ..Default::default()
        };
        (rollout, objects, catalog)
    }

    /// Rollout shop/web with `steps`, through Ingress `web` of class nginx.
    fn through_nginx(steps: Value) -> Rollout {
        Rollout::from_object(&json!({
            "apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout",
            "metadata": {"name": "web", "namespace": "shop"},
            "spec": {"strategy": {"canary": {
                "steps": steps,
                "trafficRoutings": [{"service": "web", "ingress": {"name": "web", "classType": "nginx"}}]
            }}}
        }))
        .unwrap()
    }

    #[test]
    fn a_canary_ingress_as_the_controller_creates_it_is_at_the_original_and_an_edit_of_it_drifted() {
        // An online trial: a run stopped between its create and its patch left the canary at
        // weight "0", shown drifted, and `restore` refused it as someone's edit.
        let rollout = through_nginx(json!([{"replicas": 1, "traffic": "20%"}, {"replicas": 2, "traffic": "50%"}]));
        let stable = json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
            "metadata": {"name": "web", "namespace": "shop"},
            "spec": {"rules": [{"http": {"paths": [
                {"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "web", "port": {"number": 80}}}}]}}]}});
        let catalog = ScriptCatalog::default();
        let mut objects = ObjectIndex::default();
        objects.insert("shop", stable);
        let plan =
            Planner::new(&objects, &catalog, Limits::default()).plan_rollout(&rollout, "shop", None, &rollout.stages());
        let created = plan.unwrap().stages[0].objects[0]
            .changes
            .iter()
            .find_map(|c| match c {
                Change::Create { object, .. } => Some(Value::clone(object)),
                _ => None,
            })
            .expect("step 1 creates the canary Ingress");
        let placed = |canary: Value| {
            let mut objects = objects.clone();
            objects.insert("shop", canary);
            let placing = Planner::new(&objects, &catalog, Limits::default()).each_stage_from_the_objects_read();
            status::positions(&placing.plan_rollout(&rollout, "shop", None, &rollout.stages()).unwrap()).remove(0)
        };
        let view = placed(created.clone());
        assert_eq!((view.name.as_str(), &view.position), ("web-canary", &Position::Original));
        // Compared at the first stage planned only, whose plans place it: the same every stage.
        let mut read = objects.clone();
        read.insert("shop", created.clone());
        let placing = Planner::new(&read, &catalog, Limits::default()).each_stage_from_the_objects_read();
        let plan = placing.plan_rollout(&rollout, "shop", None, &rollout.stages()).unwrap();
        let compared: Vec<bool> = plan.stages.iter().map(|s| s.objects[0].after_first_write).collect();
        assert_eq!(compared, [true, false], "{:?}", plan.stages.iter().map(|s| &s.label).collect::<Vec<_>>());
        assert!(
            view.notes.iter().any(|n| n.starts_with("made at weight 0, as the controller creates it")),
            "{:?}",
            view.notes
        );
        let weight = "nginx.ingress.kubernetes.io/canary-weight";
        for (edit, value) in [(weight, "7"), ("example.com/owner", "ops")] {
            let mut edited = created.clone();
            edited["metadata"]["annotations"][edit] = json!(value);
            let view = placed(edited);
            assert!(matches!(view.position, Position::Drifted { .. }), "{edit}: {:?}", view.position);
            assert!(!view.notes.iter().any(|n| n.starts_with("made at weight 0")), "{:?}", view.notes);
        }
        let mut at_step_1 = created;
        at_step_1["metadata"]["annotations"][weight] = json!("20");
        assert_eq!(placed(at_step_1).position, Position::AtStep { steps: vec![Stage::Step(1)] });
    }

    #[test]
    fn a_canary_ingress_whose_stable_ingress_is_missing_fails_the_plan_but_is_placed_as_absent() {
        let rollout = through_nginx(json!([{"replicas": 1, "traffic": "20%"}]));
        let (objects, catalog) = (ObjectIndex::default(), ScriptCatalog::default());
        let failed = Planner::new(&objects, &catalog, Limits::default())
            .plan_rollout(&rollout, "shop", None, &rollout.stages())
            .unwrap_err();
        assert!(matches!(failed, Error::Missing { .. }), "{failed:?}");
        let placed = Planner::new(&objects, &catalog, Limits::default())
            .each_stage_from_the_objects_read()
            .plan_rollout(&rollout, "shop", None, &rollout.stages())
            .unwrap();
        let views = status::positions(&placed);
        assert_eq!((views.len(), views[0].name.as_str(), &views[0].position), (1, "web-canary", &Position::Absent));
        assert!(views[0].notes[0].contains("Ingress shop/web not found: the canary Ingress is built from it"));
    }

    #[test]
    fn an_object_missing_where_a_stage_routes_it_fails_the_plan_but_is_placed_as_absent() {
        let steps = json!([{"replicas": 1, "traffic": "20%"}, {"replicas": 2}]);
        let (rollout, _, catalog) = routing_a_thing(steps, "return {spec = {weight = obj.canaryWeight}}");
        let objects = ObjectIndex::default();
        let planner = Planner::new(&objects, &catalog, Limits::default());
        let failed = planner.plan_rollout(&rollout, "shop", None, &rollout.stages()).unwrap_err();
        assert!(matches!(failed, Error::Missing { .. }), "{failed:?}");
        let placing = Planner::new(&objects, &catalog, Limits::default()).each_stage_from_the_objects_read();
        let placed = placing.plan_rollout(&rollout, "shop", None, &rollout.stages()).unwrap();
        let views = status::positions(&placed);
        assert_eq!((views.len(), &views[0].position), (1, &Position::Absent));
        assert!(views[0].notes[0].ends_with("but there is no such object in namespace shop: a step that routes it fails at the controller (its restore skips it)"), "{:?}", views[0].notes);
        assert!(placed.stages.iter().flat_map(|s| &s.objects).all(|o| o.writes().next().is_none()), "nothing to write");
        // Where the controller routes it now, the step fails there and then: an error placing too.
        let at = |step: i64, state: &str| {
            let mut rollout = rollout.clone();
            rollout.status.phase = Some("Progressing".into());
            rollout.status.current_step_index = Some(step);
            rollout.status.current_step_state = Some(state.into());
            placing.plan_rollout(&rollout, "shop", None, &rollout.stages())
        };
        assert!(matches!(at(1, "StepTrafficRouting"), Err(Error::Missing { .. })), "step 1 routes it now");
        assert!(matches!(at(1, "StepUpgrade"), Err(Error::Missing { .. })), "and once its pods are ready");
        // Its routing done (the object deleted since), the next step that routes it fails.
        assert_eq!(status::positions(&at(1, "StepPaused").unwrap())[0].position, Position::Absent);
        assert_eq!(
            status::positions(&at(2, "StepTrafficRouting").unwrap())[0].position,
            Position::Absent,
            "step 2 restores"
        );
    }

    #[test]
    fn the_final_stage_of_a_rollout_routed_by_its_traffic_routing_alone_says_that_routing_only() {
        let rollout = Rollout::from_object(&json!({
            "apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout",
            "metadata": {"name": "web", "namespace": "shop", "annotations": {"rollouts.kruise.io/trafficrouting": "tr"}},
            "spec": {"strategy": {"blueGreen": {"steps": [{"replicas": "100%", "traffic": "50%"}]}}}
        }))
        .unwrap();
        let by_cr = "TrafficRouting tr: matches [header x=1]".to_string();
        let (description, routing) = describe_stage(&rollout, Stage::BlueGreenFinal, None, Some(by_cr.clone()));
        assert_eq!((description.as_str(), routing.as_str()), (by_cr.as_str(), by_cr.as_str()), "no 100% of its own");
        let own = StageRouting::of(rollout.strategy_at(Stage::BlueGreenFinal));
        let (description, _) = describe_stage(&rollout, Stage::BlueGreenFinal, Some((&own, &WeightSplit::Split)), None);
        assert!(description.contains("100%"), "{description}");
        // With canary = stable its 100% splits nothing (a helper's review: "canary 100 / stable 0").
        let (description, _) =
            describe_stage(&rollout, Stage::BlueGreenFinal, Some((&own, &WeightSplit::NotSplit)), None);
        assert_eq!(description, "traffic 100% (canary = stable Service: not split)");
    }

    #[test]
    fn a_script_that_gets_no_weights_is_warned_of_once_naming_the_steps() {
        // An operator trial: "canaryWeight -1" was said at every matches-only step.
        let matches = json!([{"headers": [{"name": "x", "value": "1"}]}]);
        let steps = json!([{"replicas": 1, "matches": matches}, {"replicas": 2, "traffic": "30%"},
                           {"replicas": 3, "matches": matches}, {"replicas": "100%"}]);
        let (rollout, objects, catalog) = routing_a_thing(steps, "return {spec = {weight = obj.canaryWeight}}");
        let plan =
            Planner::new(&objects, &catalog, Limits::default()).plan_rollout(&rollout, "shop", None, &rollout.stages());
        let plan = plan.unwrap();
        let said = |w: &&String| w.contains("canaryWeight -1");
        assert_eq!(
            plan.warnings.iter().filter(said).collect::<Vec<_>>(),
            [
                "Thing/store: steps 1, 3 have matches and no traffic, so the script gets canaryWeight -1 and stableWeight 101 there"
            ]
        );
        assert!(!plan.stages.iter().flat_map(|s| &s.objects).flat_map(|o| &o.warnings).any(|w| said(&w)));
        // One step of them is said as one; the steps planned alone (approve) are those named.
        let plan = Planner::new(&objects, &catalog, Limits::default())
            .plan_rollout(&rollout, "shop", None, &[Stage::Step(3)])
            .unwrap();
        assert!(plan.warnings.iter().any(|w| w.starts_with("Thing/store: step 3 has matches")), "{:?}", plan.warnings);
    }

    #[test]
    fn an_ingress_script_of_ones_own_that_gets_weight_minus_one_is_warned_of_once_naming_the_steps() {
        let matches = json!([{"headers": [{"name": "x", "value": "1"}]}]);
        let rollout = |class_type: &str| {
            Rollout::from_object(&json!({
                "apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout",
                "metadata": {"name": "store", "namespace": "shop"},
                "spec": {"strategy": {"canary": {
                    "steps": [{"replicas": 1, "matches": matches}, {"replicas": 2, "traffic": "30%"},
                              {"replicas": 3, "matches": matches}],
                    "trafficRoutings": [{"service": "store", "ingress": {"name": "store", "classType": class_type}}]
                }}}
            }))
            .unwrap()
        };
        let mut objects = ObjectIndex::default();
        objects.insert(
            "shop",
            json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "store", "namespace": "shop"},
                   "spec": {"rules": [{"http": {"paths": [{"path": "/", "pathType": "Prefix",
                       "backend": {"service": {"name": "store", "port": {"number": 80}}}}]}}]}}),
        );
        let warned = |class_type: &str, script: Option<&str>| {
            let overrides = script.map(|code| (scripts::ingress_key(class_type), ("s.lua".into(), code.into())));
            let catalog = ScriptCatalog { overrides: overrides.into_iter().collect(), ..Default::default() };
            let rollout = rollout(class_type);
            let plan = Planner::new(&objects, &catalog, Limits::default()).plan_rollout(
                &rollout,
                "shop",
                None,
                &rollout.stages(),
            );
            let said = |w: &&String| w.contains("\"-1\"");
            plan.unwrap().warnings.iter().filter(said).cloned().collect::<Vec<_>>()
        };
        let own = "local a = obj.annotations or {} a['example.com/weight'] = obj.weight return a";
        assert_eq!(
            warned("traefik", Some(own)),
            [
                "Ingress/store-canary: steps 1, 3 have matches and no traffic, so the script gets weight \"-1\" there: the built-in scripts then write no weight annotation; one that writes obj.weight as it is gives the canary Ingress a weight of \"-1\""
            ]
        );
        assert_eq!(warned("nginx", Some(own)).len(), 1, "one's own script for a built-in class");
        // The built-in script, or a copy of it, skips the weight then.
        assert_eq!(warned("nginx", None), Vec::<String>::new());
        let copy = scripts::builtin_code(&scripts::ingress_key("nginx")).unwrap();
        assert_eq!(warned("nginx", Some(copy)), Vec::<String>::new());
    }

    #[test]
    fn planned_from_the_objects_read_a_stage_routed_as_an_earlier_one_is_not_planned_again() {
        let steps = json!([{"replicas": 1, "traffic": "20%"}, {"replicas": 2, "traffic": "30%"},
                           {"replicas": 3, "traffic": "20%"}]);
        let script = "print(obj.canaryWeight) return {spec = {weight = obj.canaryWeight}}";
        let (rollout, objects, catalog) = routing_a_thing(steps, script);
        let run = |from_read: bool| {
            let planner = Planner::new(&objects, &catalog, Limits::default());
            let planner = if from_read { planner.each_stage_from_the_objects_read() } else { planner };
            let plan = planner.plan_rollout(&rollout, "shop", None, &rollout.stages()).unwrap();
            (plan, String::from_utf8(planner.printed()).unwrap())
        };
        let (placed, printed) = run(true);
        assert_eq!(printed.lines().filter(|l| l.contains("20")).count(), 1, "{printed}");
        assert_eq!(printed.lines().filter(|l| l.contains("30")).count(), 1, "{printed}");
        let [one, _, three] = placed.stages.as_slice() else { panic!("{placed:?}") };
        assert_eq!((&three.objects[0].planned, &three.label), (&one.objects[0].planned, &"step 3/3".to_string()));
        assert_eq!(three.objects[0].planned["spec"]["weight"], json!(20));
        // Carried from stage to stage, every stage is planned.
        assert_eq!(run(false).1.lines().filter(|l| l.contains("20")).count(), 2);
    }

    #[test]
    fn a_restore_after_a_routed_step_puts_back_what_that_step_stored() {
        let steps = json!([{"replicas": 1, "traffic": "20%"}, {"replicas": 2}]);
        let (rollout, objects, catalog) = routing_a_thing(steps, "return {spec = {weight = obj.canaryWeight}}");
        let planner = Planner::new(&objects, &catalog, Limits::default());
        let plan = planner.plan_rollout(&rollout, "shop", None, &rollout.stages()).unwrap();
        let [routed, restored] = plan.stages.as_slice() else { panic!("{plan:?}") };
        let restore = &restored.objects[0];
        assert!(matches!(restore.action, Action::Restore), "{:?}", restore.action);
        assert_eq!(restore.current, routed.objects[0].planned);
        assert_eq!(restore.planned.as_ref(), objects.get(&restore.key).unwrap().as_ref(), "the object as it was");
        assert!(restore.changed());
    }

    #[test]
    fn a_missing_stable_service_is_warned_of_once_where_a_stage_routes() {
        let said = |plan: &RoutingPlan| {
            let missing = |w: &&String| w.starts_with("Service store does not exist: it is the stable Service");
            let objects = plan.stages.iter().flat_map(|s| &s.objects).flat_map(|o| &o.warnings);
            let counts =
                (plan.warnings.iter().filter(missing).count(), objects.filter(|w| w.starts_with("Service ")).count());
            // Who waits for it, for `status`'s notes.
            let waiting: Vec<String> = plan.waiting_for_stable_service.iter().map(ToString::to_string).collect();
            assert_eq!(waiting, (counts.0 == 1).then(|| plan.owner.clone()).into_iter().collect::<Vec<_>>());
            counts
        };
        let mut objects = ObjectIndex::default();
        objects.insert("shop", route());
        assert_eq!(said(&plan(&objects, false)), (0, 0), "not looked for (files)");
        objects.insert_absent(ObjectKey::new("", "Service", "shop", "store"));
        objects.insert_absent(ObjectKey::new("", "Service", "shop", "store-canary"));
        // Once for the Rollout, and no object's warning says the canary Service is made.
        assert_eq!(said(&plan(&objects, false)), (1, 0));
        // No stage that routes: nothing waits for it.
        let (rollout, mut objects, catalog) = routing_a_thing(json!([{"replicas": 1}]), "return obj.data");
        objects.insert_absent(ObjectKey::new("", "Service", "shop", "store"));
        let planner = Planner::new(&objects, &catalog, Limits::default());
        let plan = planner.plan_rollout(&rollout, "shop", None, &rollout.stages()).unwrap();
        assert_eq!(said(&plan), (0, 0), "{:?}", plan.warnings);
    }

    #[test]
    fn a_workload_unknown_absent_uncounted_or_refused_is_warned_of_as_such() {
        let mut rollout = rollout();
        rollout.workload =
            Some(ObjectRef { api_version: "apps/v1".into(), kind: "Deployment".into(), name: "store".into() });
        let warnings = |objects: &ObjectIndex| {
            let catalog = ScriptCatalog::default();
            let planner = Planner::new(objects, &catalog, Limits::default());
            planner.plan_rollout(&rollout, "shop", None, &rollout.stages()).unwrap().warnings
        };
        let mut objects = ObjectIndex::default();
        objects.insert("shop", route());
        let unknown = warnings(&objects);
        assert!(
            unknown.iter().any(|w| w.starts_with(
                "its workload Deployment store is not known (not among the files, or not readable), so the plan assumes"
            )),
            "{unknown:?}"
        );
        let key = ObjectKey::of_ref(rollout.workload.as_ref().unwrap(), "shop");
        let mut looked_for = objects.clone();
        looked_for.insert_absent(key.clone());
        let absent = warnings(&looked_for);
        assert!(absent.iter().any(|w| w.starts_with("its workload Deployment store does not exist, so")), "{absent:?}");
        let mut uncounted = objects.clone();
        uncounted.insert(
            "shop",
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "store"}, "spec": {"replicas": "two"}}),
        );
        let uncounted = warnings(&uncounted);
        assert!(
            uncounted
                .iter()
                .any(|w| w.starts_with("its workload Deployment store has no replica count the controller reads, so")),
            "{uncounted:?}"
        );
        let needed = Permission::new("get", "apps", "deployments", None, "shop").on("store");
        objects.insert_unread(key, "forbidden (403 Forbidden)".into(), Some(needed));
        let refused = warnings(&objects);
        assert!(refused.iter().any(|w| w.starts_with("cannot read its workload Deployment shop/store (forbidden (403 Forbidden)): the plan assumes only a step of 100%") && w.ends_with("; to allow that read, grant get deployments named store (API group apps) in namespace shop")), "{refused:?}");
        assert!(!refused.iter().any(|w| w.contains("not among the files")), "{refused:?}");
    }

    #[test]
    fn a_stage_the_controller_does_not_route_leaves_the_objects_as_they_are_when_current() {
        // Step 2 reaches the workload's replicas (100%) in a partition release: not routed.
        let steps = json!([{"replicas": 1, "traffic": "20%"}, {"replicas": "100%", "traffic": "50%"}]);
        let (rollout, objects, catalog) = routing_a_thing(steps, "return {spec = {weight = obj.canaryWeight}}");
        let mut at_step_2 = rollout.clone();
        at_step_2.status.phase = Some("Progressing".into());
        at_step_2.status.current_step_index = Some(2);
        let planner = || Planner::new(&objects, &catalog, Limits::default());
        let step_2 = |planner: Planner, rollout: &Rollout, stages: &[Stage]| {
            let plan = planner.plan_rollout(rollout, "shop", None, stages).unwrap();
            let stage = plan.stages.into_iter().find(|s| s.stage == Some(Stage::Step(2))).unwrap();
            assert!(stage.unrouted && stage.description.contains("keeps step 1's routing"), "{stage:?}");
            stage.objects.into_iter().next().unwrap()
        };
        // Not yet reached, it holds what step 1 leaves, planned alone or after step 1.
        for stages in [&[Stage::Step(2)][..], &rollout.stages()] {
            assert_eq!(step_2(planner(), &rollout, stages).planned["spec"]["weight"], json!(20));
        }
        // The current step: the object stays as read (here never routed), alone or not: the
        // controller writes nothing there, whatever it holds.
        for stages in [&[Stage::Step(2)][..], &rollout.stages()] {
            let object = step_2(planner(), &at_step_2, stages);
            assert_eq!(object.planned["spec"]["weight"], json!(0));
            assert!(matches!(object.action, Action::Keep(_)), "{:?}", object.action);
            assert_eq!(object.writes().count(), 0);
        }
        // Placing objects, it is planned as step 1, whose routing it keeps.
        let placed = step_2(planner().each_stage_from_the_objects_read(), &at_step_2, &rollout.stages());
        assert_eq!(placed.planned["spec"]["weight"], json!(20));
    }

    #[test]
    fn an_httproute_at_a_current_step_the_controller_does_not_route_is_left_as_read() {
        // Step 2 at 100% of the replicas, the release's current step: the route stays as read
        // (here never routed), though step 1 would have matched a header.
        let mut at_step_2 = rollout_at_100_percent();
        at_step_2.status.phase = Some("Progressing".into());
        at_step_2.status.current_step_index = Some(2);
        let mut objects = ObjectIndex::default();
        objects.insert("shop", route());
        let catalog = ScriptCatalog::default();
        let planner = Planner::new(&objects, &catalog, Limits::default());
        let plan = planner.plan_rollout(&at_step_2, "shop", None, &[Stage::Step(2)]).unwrap();
        let object = &plan.stages[0].objects[0];
        assert!(plan.stages[0].unrouted);
        assert_eq!(*object.planned, route());
        assert_eq!(object.writes().count(), 0);
        // Not current, it holds step 1's match.
        let ahead = planner.plan_rollout(&rollout_at_100_percent(), "shop", None, &[Stage::Step(2)]).unwrap();
        assert!(ahead.stages[0].objects[0].planned["spec"]["rules"].to_string().contains("\"x\""));
    }

    /// `rollout()` with step 2 at 100% of the replicas: a partition step the controller does
    /// not route, whatever the workload's size.
    fn rollout_at_100_percent() -> Rollout {
        let mut rollout = rollout();
        rollout.steps[1].replicas = Some(json!("100%"));
        rollout
    }

    #[test]
    fn a_custom_refs_obj_is_kept_only_for_a_planner_that_keeps_them() {
        let steps = json!([{"replicas": 1, "traffic": "20%"}]);
        let (rollout, objects, catalog) = routing_a_thing(steps, "return {spec = {weight = obj.canaryWeight}}");
        let obj_of = |planner: Planner| {
            let plan = planner.plan_rollout(&rollout, "shop", None, &rollout.stages()).unwrap();
            assert_eq!(plan.stages[0].objects[0].planned["spec"]["weight"], json!(20));
            plan.stages[0].objects[0].obj.clone()
        };
        assert_eq!(obj_of(Planner::new(&objects, &catalog, Limits::default())), None);
        let kept = obj_of(Planner::new(&objects, &catalog, Limits::default()).keeping_objs()).unwrap();
        assert_eq!((&kept["canaryWeight"], &kept["data"]["spec"]), (&json!(20), &json!({"weight": 0})));
    }

    /// The warnings of a plan of blue-green Rollout `store` (through HTTPRoute `store`) with
    /// `steps` and disableGenerateCanaryService `disable`, at `stages` (None: every stage).
    fn blue_green_warnings(disable: bool, steps: Value, stages: Option<&[Stage]>) -> Vec<String> {
        let rollout = Rollout::from_object(&json!({
            "apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout",
            "metadata": {"name": "store", "namespace": "shop"},
            "spec": {"strategy": {"blueGreen": {
                "disableGenerateCanaryService": disable,
                "steps": steps,
                "trafficRoutings": [{"service": "store", "gateway": {"httpRouteName": "store"}}]
            }}}
        }))
        .unwrap();
        let mut objects = ObjectIndex::default();
        objects.insert("shop", route());
        let catalog = ScriptCatalog::default();
        let planner = Planner::new(&objects, &catalog, Limits::default());
        planner.plan_rollout(&rollout, "shop", None, stages.unwrap_or(&rollout.stages())).unwrap().warnings
    }

    #[test]
    fn blue_green_without_a_canary_service_routing_at_step_1_is_warned_of_and_only_then() {
        let warned = |disable: bool, first_step: Value| {
            let steps = json!([first_step, {"replicas": "100%", "traffic": "50%"}]);
            blue_green_warnings(disable, steps, None)
                .iter()
                .any(|w| w.contains("never reaches step 1 and no step is routed"))
        };
        assert!(warned(true, json!({"replicas": "100%", "traffic": "0%"})));
        assert!(warned(true, json!({"replicas": "100%", "matches": [{"headers": [{"name": "x", "value": "1"}]}]})));
        assert!(!warned(true, json!({"replicas": "100%"})), "step 1 routes nothing");
        assert!(!warned(false, json!({"replicas": "100%", "traffic": "0%"})), "a canary Service is generated");
    }

    #[test]
    fn a_blue_green_final_route_after_a_last_step_without_traffic_is_warned_of() {
        let deleted = "the last step has neither traffic nor matches, so the controller deletes the canary Service store-canary there";
        let warned = |disable: bool, last_step: Value, stages: &[Stage]| {
            let steps = json!([{"replicas": "100%", "traffic": "50%"}, last_step]);
            blue_green_warnings(disable, steps, Some(stages)).iter().any(|w| w.starts_with(deleted))
        };
        let every = [Stage::Step(1), Stage::Step(2), Stage::BlueGreenFinal];
        assert!(warned(false, json!({"replicas": "100%"}), &every));
        assert!(!warned(false, json!({"replicas": "100%", "traffic": "100%"}), &every), "it routes");
        assert!(!warned(true, json!({"replicas": "100%"}), &every), "no canary Service is generated");
        assert!(!warned(false, json!({"replicas": "100%"}), &[Stage::Step(1)]), "the final route is not planned");
    }

    #[test]
    fn an_httproute_carries_from_stage_to_stage_unless_each_is_planned_from_the_route_read() {
        let mut objects = ObjectIndex::default();
        objects.insert("shop", route());
        let carried = plan(&objects, false);
        let [step1, step2, ..] = carried.stages.as_slice() else { panic!("{carried:?}") };
        let (first, second) = (&step1.objects[0], &step2.objects[0]);
        assert_eq!((Value::clone(&first.current), first.after.clone()), (route(), None));
        assert_eq!(second.current, first.planned, "step 2 starts where step 1 left the route");
        assert_eq!(second.after.as_deref(), Some(step1.label.as_str()));
        // Step 2 keeps step 1's header rule and weights the stable rule.
        assert_eq!(second.planned["spec"]["rules"].as_array().unwrap().len(), 2);
        let [Change::Replace { before, after, .. }] = second.changes.as_slice() else { panic!("{:?}", second.changes) };
        assert_eq!((before, after), (&first.planned, &second.planned));
        assert!(first.untouched && !second.untouched);
        assert!(matches!(&first.action, Action::Rules(how) if how.contains("match mode")), "{:?}", first.action);

        let from_read = plan(&objects, true);
        assert!(from_read.stages.iter().all(|s| *s.objects[0].current == route() && s.objects[0].after.is_none()));
        assert_eq!(status::positions(&from_read)[0].position, Position::Original);
        // A route at step 1: step 1's plan writes nothing to it, step 2's does.
        let mut at_step_1 = ObjectIndex::default();
        at_step_1.insert("shop", first.planned.clone());
        let placed = plan(&at_step_1, true);
        assert_eq!(status::positions(&placed)[0].position, Position::AtStep { steps: vec![Stage::Step(1)] });
        // Edited: at no step, and not untouched.
        let mut edited = Value::clone(&first.planned);
        edited["spec"]["rules"][1]["backendRefs"][0]["port"] = json!(8080);
        let mut drifted = ObjectIndex::default();
        drifted.insert("shop", edited);
        assert_eq!(
            status::positions(&plan(&drifted, true))[0].position,
            Position::Drifted { nearest: Some(Stage::Step(1)) }
        );
        // Edited as step 2 left it: nearest to step 2.
        let mut edited = Value::clone(&second.planned);
        edited["spec"]["rules"][0]["backendRefs"][0]["weight"] = json!(70);
        drifted.insert("shop", edited);
        assert_eq!(
            status::positions(&plan(&drifted, true))[0].position,
            Position::Drifted { nearest: Some(Stage::Step(2)) }
        );
    }

    #[test]
    fn an_httproute_a_step_leaves_as_it_is_is_at_that_step_though_it_has_no_canary_backend_ref() {
        let catalog = ScriptCatalog::default();
        let positions = |rollout: &Rollout, route: Value| {
            let mut objects = ObjectIndex::default();
            objects.insert("shop", route);
            let planner = Planner::new(&objects, &catalog, Limits::default()).each_stage_from_the_objects_read();
            status::positions(&planner.plan_rollout(rollout, "shop", None, &rollout.stages()).unwrap())[0]
                .position
                .clone()
        };
        let with_rules = |rules: Value| {
            let mut route = route();
            route["spec"]["rules"] = rules;
            route
        };
        // Canary = stable: step 2's weight is on the stable backendRef itself.
        let mut object = json!({
            "apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout", "metadata": {"name": "store", "namespace": "shop"},
            "spec": {"strategy": {"canary": {
                "disableGenerateCanaryService": true,
                "steps": [{"replicas": 1, "matches": [{"headers": [{"type": "Exact", "name": "x", "value": "1"}]}]},
                          {"replicas": 2, "traffic": "20%"}],
                "trafficRoutings": [{"service": "store", "gateway": {"httpRouteName": "store"}}]
            }}}
        });
        let same = Rollout::from_object(&object).unwrap();
        let weighted =
            with_rules(json!([{"backendRefs": [{"kind": "Service", "name": "store", "port": 80, "weight": 20}]}]));
        assert_eq!(positions(&same, weighted), Position::AtStep { steps: vec![Stage::Step(2)] });
        assert_eq!(positions(&same, route()), Position::Original, "nothing tells an edit from the original");
        // A match step after a weight step dropped the weighted rule: the redirect is left.
        object["spec"]["strategy"]["canary"]["disableGenerateCanaryService"] = json!(false);
        let redirect_only =
            with_rules(json!([{"filters": [{"type": "RequestRedirect", "requestRedirect": {"statusCode": 301}}]}]));
        let steps = vec![Stage::Step(1), Stage::Step(2)];
        assert_eq!(positions(&Rollout::from_object(&object).unwrap(), redirect_only), Position::AtStep { steps });
    }

    #[test]
    fn an_ingress_then_a_gateway_each_carried_from_stage_to_stage() {
        let mut object = json!({
            "apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout", "metadata": {"name": "store", "namespace": "shop"},
            "spec": {"strategy": {"canary": {
                "steps": [{"replicas": 1, "matches": [{"headers": [{"type": "Exact", "name": "x", "value": "1"}]}]},
                          {"replicas": 2, "traffic": "20%"}],
                "trafficRoutings": [{"service": "store", "gateway": {"httpRouteName": "store"}, "ingress": {"name": "store"}}]
            }}}
        });
        let mut objects = ObjectIndex::default();
        objects.insert("shop", route());
        objects.insert("shop", json!({
            "apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "store", "namespace": "shop"},
            "spec": {"rules": [{"http": {"paths": [{"path": "/", "pathType": "Prefix",
                     "backend": {"service": {"name": "store", "port": {"number": 80}}}}]}}]}
        }));
        let catalog = ScriptCatalog::default();
        let rollout = Rollout::from_object(&object).unwrap();
        let plan = |objects: &ObjectIndex, from_read: bool| {
            let planner = Planner::new(objects, &catalog, Limits::default());
            let planner = if from_read { planner.each_stage_from_the_objects_read() } else { planner };
            planner.plan_rollout(&rollout, "shop", None, &rollout.stages()).unwrap()
        };
        let carried = plan(&objects, false);
        let [step1, step2] = carried.stages.as_slice() else { panic!("{carried:?}") };
        let kinds: Vec<String> = step1.objects.iter().map(ObjectPlan::describe).collect();
        assert_eq!(kinds, ["Ingress shop/store-canary", "HTTPRoute shop/store"], "the controller's order");
        let (made, patched) = (&step1.objects[0], &step2.objects[0]);
        let actions: Vec<&str> = made.changes.iter().map(Change::action).collect();
        assert_eq!(actions, ["create", "patch"]);
        assert!(made.current.is_null() && made.untouched);
        assert_eq!((&patched.current, patched.after.as_deref()), (&made.planned, Some(step1.label.as_str())));
        assert_eq!(patched.planned["metadata"]["annotations"]["nginx.ingress.kubernetes.io/canary-weight"], "20");

        // Placed from the objects read: absent, then at step 1 once it is as step 1 leaves it.
        let placed = status::positions(&plan(&objects, true));
        assert_eq!((&placed[0].name, &placed[0].position), (&"store-canary".to_string(), &Position::Absent));
        objects.insert("shop", made.planned.clone());
        let placed = status::positions(&plan(&objects, true));
        assert_eq!(placed[0].position, Position::AtStep { steps: vec![Stage::Step(1)] });
        // Someone changed an annotation the script writes: at no step.
        let mut edited = Value::clone(&made.planned);
        edited["metadata"]["annotations"]["nginx.ingress.kubernetes.io/canary-by-header-value"] = json!("2");
        objects.insert("shop", edited);
        assert_eq!(
            status::positions(&plan(&objects, true))[0].position,
            Position::Drifted { nearest: Some(Stage::Step(1)) }
        );
        objects.insert("shop", made.planned.clone());

        // A trafficRoutings entry with nothing to route through has nothing to plan.
        object["spec"]["strategy"]["canary"]["trafficRoutings"] = json!([{"service": "store"}]);
        let rollout = Rollout::from_object(&object).unwrap();
        let planner = Planner::new(&objects, &catalog, Limits::default());
        let error = planner.plan_rollout(&rollout, "shop", None, &rollout.stages()).unwrap_err();
        assert!(
            error.to_string().contains(
                "has no traffic routing to plan: its trafficRoutings[0] has no ingress, gateway or customNetworkRefs"
            ),
            "{error}"
        );
    }
}
